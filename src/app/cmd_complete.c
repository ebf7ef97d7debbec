/*
 * cmd_complete.c - `collsim complete WORD...`: the words that may come next
 * on a command line, for the shell completion scripts (completion/).
 *
 * Hidden (not in `collsim --help`): the scripts call it with the words
 * typed so far, the last one being the word under the cursor, and offer
 * what it prints, one candidate a line, after keeping those that start
 * with that word.  The answers come from the registries and the commands'
 * own option tables (cs_app_command_options), so the completion never goes
 * stale.  Nothing printed (exit 0) means "complete a file name".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/app.h"
#include "api/figures.h"
#include "api/loop.h"
#include "coll/coll.h"
#include "io/benchtable.h"
#include "machines/machine.h"

/* Prints s when it starts with prefix. */
static void complete_offer(const char *prefix, const char *s)
{
    if (strncmp(s, prefix, strlen(prefix)) == 0)
        printf("%s\n", s);
}

/* A machine spec: the type's names ("alphabeta:"), then, after the colon,
 * "type:…,key=" for each key of the type not yet given. */
static void complete_spec(const char *cur)
{
    int n = 0;
    const cs_machine_type_t *const *types = cs_machine_types(&n);
    const char *colon = strchr(cur, ':');
    char buf[512];
    for (int i = 0; i < n; i++) {
        size_t len = strlen(types[i]->name);
        if (!colon) {
            snprintf(buf, sizeof buf, "%s:", types[i]->name);
            complete_offer(cur, buf);
            continue;
        }
        if ((size_t)(colon - cur) != len || strncmp(cur, types[i]->name, len) != 0)
            continue;
        /* what precedes the key being typed: up to the last ':' or ',' */
        const char *last = strrchr(cur, ',');
        size_t keep = (size_t)((last ? last : colon) - cur) + 1;
        if (keep >= sizeof buf / 2)
            continue; /* a spec longer than any shell line needs */
        memcpy(buf, cur, keep);
        for (int k = 0; types[i]->keys && types[i]->keys[k]; k++) {
            snprintf(buf + keep, sizeof buf - keep, "%s=", types[i]->keys[k]);
            complete_offer(cur, buf);
        }
    }
}

/* The collective named by a --coll among words[0..n), or -1. */
static int complete_coll(char **words, int n)
{
    for (int i = 0; i + 1 < n; i++) {
        cs_coll_kind_t k;
        cs_error_t err;
        if (strcmp(words[i], "--coll") == 0 && cs_coll_parse(words[i + 1], &k, &err) == CS_OK)
            return (int)k;
    }
    return -1;
}

int cs_app_cmd_complete(int argc, char **argv)
{
    /* argv[0] "complete", then the words after "collsim", the last being
     * the one under the cursor (possibly empty) */
    int n = argc - 1;
    char **words = argv + 1;
    const char *cur = n > 0 ? words[n - 1] : "";
    const char *prev = n > 1 ? words[n - 2] : "";
    if (n <= 1) {
        for (int i = 0; cs_app_command_name(i); i++)
            complete_offer(cur, cs_app_command_name(i));
        complete_offer(cur, "--help");
        complete_offer(cur, "--version");
        return CS_OK;
    }
    if (strcmp(prev, "--machine") == 0 || strcmp(prev, "-m") == 0 ||
        strcmp(prev, "--machines") == 0) {
        complete_spec(cur);
        return CS_OK;
    }
    if (strcmp(prev, "--coll") == 0) {
        for (int k = 0; k < CS_COLL_NKINDS; k++)
            complete_offer(cur, cs_coll_name((cs_coll_kind_t)k));
        return CS_OK;
    }
    if (strcmp(prev, "--algo") == 0 || strcmp(prev, "--algos") == 0 ||
        strcmp(prev, "--algo-for") == 0) {
        int coll = complete_coll(words, n), count = 0;
        const cs_coll_algo_t *const *all = cs_coll_algos(&count);
        for (int i = 0; i < count; i++) {
            /* each name once: several collectives share "ring" */
            int seen = 0;
            for (int j = 0; j < i && !seen; j++)
                seen = (coll < 0 || (int)all[j]->kind == coll) && !strcmp(all[j]->name, all[i]->name);
            if (!seen && (coll < 0 || (int)all[i]->kind == coll))
                complete_offer(cur, all[i]->name);
        }
        return CS_OK;
    }
    if (strcmp(prev, "--mode") == 0 || strcmp(prev, "-M") == 0) {
        complete_offer(cur, "packet");
        complete_offer(cur, "fluid");
        return CS_OK;
    }
    /* the benchmark loop's choices (api/loop.h) and bench-table's layouts */
    if (strcmp(prev, "--loop") == 0) {
        complete_offer(cur, cs_loop_style_name(CS_LOOP_STYLE_NCCL));
        complete_offer(cur, cs_loop_style_name(CS_LOOP_STYLE_OSU));
        return CS_OK;
    }
    /* sweep's and compare's plotted quantity (api/figures.h) */
    if (strcmp(prev, "--y") == 0) {
        for (int y = CS_FIGURES_Y_TIME; y <= CS_FIGURES_Y_BUSBW; y++)
            complete_offer(cur, cs_figures_y_name((cs_figures_y_t)y));
        return CS_OK;
    }
    if (strcmp(prev, "--between") == 0) {
        complete_offer(cur, "none");
        complete_offer(cur, "barrier");
        return CS_OK;
    }
    if (strcmp(words[0], "bench-table") == 0 &&
        (strcmp(prev, "--format") == 0 || strcmp(prev, "-f") == 0)) {
        for (const cs_benchtable_format_t *const *f = cs_benchtable_formats(); *f; f++)
            complete_offer(cur, (*f)->name);
        return CS_OK;
    }
    if (strcmp(words[0], "list") == 0 && cur[0] != '-') {
        complete_offer(cur, "machines");
        complete_offer(cur, "algorithms");
        return CS_OK;
    }
    if (cur[0] == '-') {
        /* the command's own table, printed by the command (and exit) */
        cs_app_command_options(words[0], cur);
        return CS_OK;
    }
    return CS_OK; /* a file name, or a value the shell cannot guess */
}
