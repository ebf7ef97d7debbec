/*
 * cmd_merge.c - `collsim merge SHARD...`: the N shard files of a run made
 * with --shard I/N joined into that run's outputs, byte for byte those of
 * the run without --shard (docs/cluster.md).  The shards are read and
 * checked (shard.h: one run, each shard once, none missing), then the
 * command line they kept runs again with its points' records taken from
 * the shards instead of run: every output is written by the command's own
 * code, so a merge cannot drift from the serial run.  --csv, --json, --plot
 * and --markdown given to merge replace the command's own.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/app.h"
#include "app/par.h"
#include "app/shard.h"

#define MERGE_MAX_EXTRA 16

static void merge_help(void)
{
    printf("Usage: collsim merge [OPTIONS] SHARD...\n"
           "\n"
           "Joins the shard files of a run made with --shard I/N (every shard, each once)\n"
           "into the outputs of that run, byte-identical to the run without --shard: the\n"
           "command line the shards kept runs again, its points read from the shards.\n"
           "Refuses shards of different runs (another command line, other input files),\n"
           "a shard given twice, a missing one, or one cut short, naming the file.\n"
           "Input files the command names must be where they were (their contents are\n"
           "checked against the shards').\n"
           "\n"
           "      --csv FILE         write the CSV to FILE instead of the command's --csv\n"
           "  -j, --json FILE        the JSON document to FILE\n"
           "      --plot FILE        the plot (or chart) to FILE\n"
           "      --markdown FILE    (compare) the Markdown table to FILE\n"
           "      --quiet            no \"wrote FILE\" on standard error\n"
           "  -h, --help             show this help and exit\n"
           "\n"
           "Example (docs/cluster.md):\n"
           "  for i in 1 2 3; do collsim sweep ... --csv s.csv --shard $i/3; done\n"
           "  collsim merge shard-*-of-3.shard\n"
           "\n"
           "Exit status: that of the command (0 ok); 2 for shards that do not fit.\n");
}

int cs_app_cmd_merge(int argc, char **argv)
{
    enum { OPT_CSV = 256, OPT_PLOT, OPT_MARKDOWN, OPT_QUIET };
    static const struct option longopts[] = {
        {"csv", required_argument, NULL, OPT_CSV},
        {"json", required_argument, NULL, 'j'},
        {"plot", required_argument, NULL, OPT_PLOT},
        {"markdown", required_argument, NULL, OPT_MARKDOWN},
        {"quiet", no_argument, NULL, OPT_QUIET},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *extra[MERGE_MAX_EXTRA];
    int nextra = 0, c;
    while ((c = getopt_long(argc, argv, ":j:h", longopts, NULL)) != -1) {
        const char *name = NULL;
        switch (c) {
        case OPT_CSV: name = "--csv"; break;
        case 'j': name = "--json"; break;
        case OPT_PLOT: name = "--plot"; break;
        case OPT_MARKDOWN: name = "--markdown"; break;
        case OPT_QUIET: extra[nextra++] = "--quiet"; break;
        case 'h': merge_help(); exit(0);
        default: cs_app_getopt_error("merge", c, argv, longopts);
        }
        if (name) {
            if (nextra + 2 > MERGE_MAX_EXTRA)
                cs_app_usage_error("merge", "too many output options");
            extra[nextra++] = name;
            extra[nextra++] = optarg;
        }
        if (nextra + 2 > MERGE_MAX_EXTRA)
            cs_app_usage_error("merge", "too many output options");
    }
    if (optind >= argc)
        cs_app_usage_error("merge", "missing SHARD files (the files of --shard I/N runs)");
    cs_shard_set_t *set = NULL;
    cs_error_t err = {0};
    int rc = cs_shard_set_read((const char *const *)argv + optind, argc - optind, &set, &err);
    if (rc != CS_OK) {
        cs_app_report(&err);
        return rc == CS_ERR_PARSE || rc == CS_ERR_IO ? rc : CS_ERR_USAGE;
    }
    int sargc;
    char **sargv = cs_shard_set_argv(set, &sargc);
    /* the command's words, then merge's outputs (getopt: the last one wins) */
    char **av = cs_malloc((size_t)(sargc + nextra + 1) * sizeof *av);
    for (int i = 0; i < sargc; i++)
        av[i] = sargv[i];
    for (int i = 0; i < nextra; i++)
        av[sargc + i] = (char *)extra[i];
    int ac = sargc + nextra;
    av[ac] = NULL;
    optind = 0; /* the command's getopt starts afresh */
    if (!strcmp(av[0], "sweep"))
        rc = cs_app_sweep_main(ac, av, set);
    else if (!strcmp(av[0], "compare"))
        rc = cs_app_compare_main(ac, av, set);
    else if (!strcmp(av[0], "replay"))
        rc = cs_app_replay_main(ac, av, set);
    else {
        cs_error_set(&err, CS_ERR_PARSE, "%s: shards of an unknown command '%s'",
                     argv[optind], av[0]);
        rc = cs_app_report(&err);
    }
    free(av);
    cs_shard_set_free(set);
    return rc;
}
