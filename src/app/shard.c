/*
 * shard.c - shard files and the checks of `collsim merge` (shard.h,
 * docs/cluster.md): a scheduler's job array runs `--shard I/N` for I = 1..N
 * wherever it likes, and merge hands the records back to the command in
 * the serial order, so its outputs are the serial run's byte for byte.
 * What a merge refuses, it refuses naming the file: a shard of another run
 * (another command line, other input files, another collsim), one given
 * twice, one missing, one cut short.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "app/shard.h"
#include "core/hash.h"
#include "core/outfile.h"
#include "io/result_json.h" /* COLLSIM_VERSION */

#define SHARD_MAX_BYTES ((size_t)1 << 32) /* 4 GiB: far above any sweep's rows */

/* ---- identity ----------------------------------------------------------------- */

/* A word with its length, so that ("ab", "c") and ("a", "bc") differ. */
static uint64_t fnv_word(uint64_t h, const char *s, size_t n)
{
    uint64_t len = n;
    h = cs_fnv1a64(h, &len, sizeof len);
    return cs_fnv1a64(h, s, n);
}

/* Adds the bytes of `path` when it names a regular file. */
static uint64_t identity_file(uint64_t h, const char *path, size_t n)
{
    char name[4096], buf[65536];
    struct stat st;
    if (n == 0 || n >= sizeof name)
        return h;
    memcpy(name, path, n);
    name[n] = '\0';
    if (stat(name, &st) != 0 || !S_ISREG(st.st_mode))
        return h;
    FILE *f = fopen(name, "rb");
    if (!f)
        return h;
    h = fnv_word(h, name, n);
    size_t r;
    while ((r = fread(buf, 1, sizeof buf, f)) > 0)
        h = cs_fnv1a64(h, buf, r);
    fclose(f);
    return h;
}

/* Whether word is an output option (its file no input; merge may write
 * elsewhere) or --quiet (merge may add it): no part of a run's identity.
 * *takes_next: the value is the next word. */
static int identity_output(const char *w, int *takes_next)
{
    static const struct {
        const char *name;
        int value;
    } outs[] = {{"--csv", 1}, {"--json", 1}, {"-j", 1}, {"--plot", 1}, {"--markdown", 1},
                {"--heatmaps", 1}, {"--quiet", 0}};
    *takes_next = 0;
    for (size_t i = 0; i < sizeof outs / sizeof outs[0]; i++) {
        size_t n = strlen(outs[i].name);
        if (strncmp(w, outs[i].name, n))
            continue;
        if (w[n] == '\0') {
            *takes_next = outs[i].value;
            return 1;
        }
        /* "--csv=F", and the short "-jF" */
        if (outs[i].value && (w[n] == '=' || outs[i].name[1] != '-'))
            return 1;
    }
    return 0;
}

void cs_shard_identity(const char *cmd, int argc, char **argv, char out[17])
{
    uint64_t h = CS_FNV1A64_INIT;
    int skip = 0;
    h = fnv_word(h, COLLSIM_VERSION, strlen(COLLSIM_VERSION));
    h = fnv_word(h, cmd, strlen(cmd));
    for (int i = 1; i < argc; i++) {
        const char *w = argv[i];
        int next;
        /* outputs are no part of the run: merge may write them elsewhere */
        if (skip) {
            skip = 0;
            continue;
        }
        if (identity_output(w, &next)) {
            skip = next;
            continue;
        }
        h = fnv_word(h, w, strlen(w));
        /* the word, and its parts between separators */
        h = identity_file(h, w, strlen(w));
        for (const char *p = w; *p;) {
            size_t n = strcspn(p, "=:,;");
            if (n < strlen(w))
                h = identity_file(h, p, n);
            p += n;
            if (*p)
                p++;
        }
    }
    snprintf(out, 17, "%016" PRIx64, h);
}

/* ---- writing ------------------------------------------------------------------------ */

int cs_shard_write(const cs_par_t *par, int npoints, cs_rec_t *const *recs, cs_error_t *err)
{
    cs_rec_t *r = cs_rec_new();
    cs_outfile_t *o;
    size_t len;
    int rc;
    cs_rec_put_str(r, "command", par->cmd);
    cs_rec_put_str(r, "version", COLLSIM_VERSION);
    cs_rec_put_str(r, "identity", par->identity);
    cs_rec_put_int(r, "shard", par->shard);
    cs_rec_put_int(r, "of", par->nshards);
    cs_rec_put_int(r, "points", npoints);
    for (int i = 0; i < par->argc; i++)
        cs_rec_put_str(r, "arg", par->argv[i]);
    for (int i = 0; i < npoints; i++)
        if (recs[i]) {
            const char *b = cs_rec_bytes(recs[i], &len);
            cs_rec_put_int(r, "index", i);
            cs_rec_put(r, "record", b, len);
        }
    if ((rc = cs_outfile_open("--shard-file", par->shard_file, &o, err)) == CS_OK) {
        FILE *f = cs_outfile_stream(o);
        const char *b = cs_rec_bytes(r, &len);
        fputs(CS_SHARD_MAGIC, f);
        fwrite(b, 1, len, f);
        rc = cs_outfile_commit(o, err);
    }
    cs_rec_free(r);
    return rc;
}

/* ---- reading ------------------------------------------------------------------------ */

typedef struct shard_file {
    const char *path;
    char command[32], identity[17], version[32];
    int64_t shard, of, points;
} shard_file_t;

struct cs_shard_set {
    char command[32], identity[17];
    int64_t of, points;
    int argc;
    char **argv;       /* from the first file */
    cs_rec_t **recs;   /* [points] */
};

void cs_shard_set_free(cs_shard_set_t *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->argc; i++)
        free(s->argv[i]);
    free(s->argv);
    for (int64_t i = 0; s->recs && i < s->points; i++)
        cs_rec_free(s->recs[i]);
    free(s->recs);
    free(s);
}

char **cs_shard_set_argv(const cs_shard_set_t *s, int *argc)
{
    *argc = s->argc;
    return s->argv;
}

/* The points of slice `shard` of `of` among `points`. */
static int64_t shard_count(int64_t shard, int64_t of, int64_t points)
{
    return points >= shard ? (points - shard) / of + 1 : 0;
}

static int shard_read_one(const char *path, shard_file_t *sf, cs_shard_set_t *s, int first,
                          const int *seen, cs_error_t *err)
{
    FILE *f = fopen(path, "rb");
    struct stat st;
    char *buf = NULL;
    cs_rec_t *r = NULL;
    int rc = CS_OK;
    size_t ml = strlen(CS_SHARD_MAGIC);
    memset(sf, 0, sizeof *sf);
    sf->path = path;
    if (!f)
        return cs_error_set(err, CS_ERR_IO, "%s: %s", path, strerror(errno));
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(f);
        return cs_error_set(err, CS_ERR_IO, "%s: not a regular file", path);
    }
    if ((size_t)st.st_size > SHARD_MAX_BYTES) {
        fclose(f);
        return cs_error_set(err, CS_ERR_PARSE, "%s: %lld bytes, more than a shard holds (4 GiB)",
                            path, (long long)st.st_size);
    }
    size_t n = (size_t)st.st_size;
    buf = cs_malloc(n + 1);
    if (fread(buf, 1, n, f) != n)
        rc = cs_error_set(err, CS_ERR_IO, "%s: read error", path);
    fclose(f);
    if (rc == CS_OK && (n < ml || memcmp(buf, CS_SHARD_MAGIC, ml) != 0))
        rc = cs_error_set(err, CS_ERR_PARSE, "%s: not a collsim shard file (no '%.*s' line)",
                          path, (int)ml - 1, CS_SHARD_MAGIC);
    if (rc == CS_OK && cs_rec_parse(buf + ml, n - ml, &r, err) != CS_OK) {
        rc = CS_ERR_PARSE;
        cs_error_prefix(err, "%s: cut short or damaged", path);
    }
    free(buf);
    if (rc)
        return rc;
    cs_rec_copy(r, "command", sf->command, sizeof sf->command);
    cs_rec_copy(r, "identity", sf->identity, sizeof sf->identity);
    cs_rec_copy(r, "version", sf->version, sizeof sf->version);
    sf->shard = cs_rec_int(r, "shard", -1);
    sf->of = cs_rec_int(r, "of", -1);
    sf->points = cs_rec_int(r, "points", -1);
    if (!sf->command[0] || strlen(sf->identity) != 16 || sf->of < 1 || sf->of > 1000000 ||
        sf->shard < 1 || sf->shard > sf->of || sf->points < 0 || sf->points > 100000000) {
        cs_rec_free(r);
        return cs_error_set(err, CS_ERR_PARSE, "%s: a shard header without a valid command, "
                            "identity, shard, of or points field", path);
    }
    if (first) {
        snprintf(s->command, sizeof s->command, "%s", sf->command);
        snprintf(s->identity, sizeof s->identity, "%s", sf->identity);
        s->of = sf->of;
        s->points = sf->points;
        s->recs = cs_calloc((size_t)(s->points > 0 ? s->points : 1), sizeof *s->recs);
    } else if (strcmp(sf->identity, s->identity) || strcmp(sf->command, s->command) ||
               sf->of != s->of || sf->points != s->points) {
        cs_rec_free(r);
        return CS_ERR_RANGE; /* the caller names both files */
    }
    if (seen && seen[sf->shard - 1]) {
        cs_rec_free(r);
        return CS_ERR_USAGE; /* the caller names both files */
    }
    /* the fields in order: the words of the command, then the points */
    char key[CS_REC_KEY_MAX + 1];
    const char *val;
    size_t pos = 0, len;
    int64_t index = -1, got = 0;
    while (rc == CS_OK && cs_rec_next(r, &pos, key, &val, &len)) {
        if (!strcmp(key, "arg") && first) {
            s->argv = cs_realloc(s->argv, (size_t)(s->argc + 2) * sizeof *s->argv);
            s->argv[s->argc] = cs_malloc(len + 1);
            memcpy(s->argv[s->argc], val, len);
            s->argv[s->argc][len] = '\0';
            s->argv[++s->argc] = NULL;
        } else if (!strcmp(key, "index")) {
            char b[24], *end;
            if (len == 0 || len >= sizeof b) {
                rc = cs_error_set(err, CS_ERR_PARSE, "%s: a point index of %zu bytes", path, len);
                break;
            }
            memcpy(b, val, len);
            b[len] = '\0';
            index = strtoll(b, &end, 10);
            if (*end || index < 0 || index >= s->points || index % s->of != sf->shard - 1)
                rc = cs_error_set(err, CS_ERR_PARSE, "%s: point %s is not one of shard "
                                  "%lld/%lld's (%lld points)", path, b, (long long)sf->shard,
                                  (long long)s->of, (long long)s->points);
            else if (s->recs[index])
                rc = cs_error_set(err, CS_ERR_PARSE, "%s: point %lld twice", path,
                                  (long long)index + 1);
        } else if (!strcmp(key, "record")) {
            if (index < 0) {
                rc = cs_error_set(err, CS_ERR_PARSE, "%s: a record without its index", path);
                break;
            }
            if (cs_rec_parse(val, len, &s->recs[index], err) != CS_OK) {
                cs_error_prefix(err, "%s: point %lld", path, (long long)index + 1);
                rc = CS_ERR_PARSE;
            }
            index = -1;
            got++;
        }
    }
    cs_rec_free(r);
    if (rc == CS_OK && first && s->argc < 1)
        rc = cs_error_set(err, CS_ERR_PARSE, "%s: no command line (arg fields)", path);
    int64_t want = shard_count(sf->shard, s->of, s->points);
    if (rc == CS_OK && got != want)
        rc = cs_error_set(err, CS_ERR_PARSE, "%s: shard %lld/%lld holds %lld of its %lld points "
                          "(cut short?)", path, (long long)sf->shard, (long long)s->of,
                          (long long)got, (long long)want);
    return rc;
}

int cs_shard_set_read(const char *const *paths, int n, cs_shard_set_t **out, cs_error_t *err)
{
    cs_shard_set_t *s = cs_calloc(1, sizeof *s);
    shard_file_t first, sf;
    int *seen = NULL, rc = CS_OK;
    const char **who = NULL; /* which file had shard i */
    *out = NULL;
    for (int i = 0; rc == CS_OK && i < n; i++) {
        if (i == 0) {
            /* the first file sets the run: its N sizes the table */
            if ((rc = shard_read_one(paths[0], &first, s, 1, NULL, err)) == CS_OK) {
                seen = cs_calloc((size_t)s->of, sizeof *seen);
                who = cs_calloc((size_t)s->of, sizeof *who);
                seen[first.shard - 1] = 1;
                who[first.shard - 1] = paths[0];
            }
            continue;
        }
        rc = shard_read_one(paths[i], &sf, s, 0, seen, err);
        if (rc == CS_ERR_RANGE) {
            const char *what = strcmp(sf.identity, s->identity) ? "another run"
                               : strcmp(sf.command, s->command) ? "another command"
                                                                : "another split";
            rc = cs_error_set(err, CS_ERR_USAGE,
                              "%s: a shard of %s (%s, identity %s, shard %lld/%lld, %lld "
                              "point%s) than %s (%s, identity %s, %lld shard%s, %lld point%s): "
                              "not merged", paths[i], what, sf.command, sf.identity,
                              (long long)sf.shard, (long long)sf.of, (long long)sf.points,
                              sf.points == 1 ? "" : "s", paths[0], s->command, s->identity,
                              (long long)s->of, s->of == 1 ? "" : "s", (long long)s->points,
                              s->points == 1 ? "" : "s");
            if (strcmp(sf.version, first.version))
                cs_error_prefix(err, "written by collsim %s and %s", sf.version, first.version);
        } else if (rc == CS_ERR_USAGE) {
            rc = cs_error_set(err, CS_ERR_USAGE, "%s and %s are both shard %lld/%lld: give "
                              "each shard once", who[sf.shard - 1], paths[i],
                              (long long)sf.shard, (long long)s->of);
        } else if (rc == CS_OK) {
            seen[sf.shard - 1] = 1;
            who[sf.shard - 1] = paths[i];
        }
    }
    if (rc == CS_OK && n == 0)
        rc = cs_error_set(err, CS_ERR_USAGE, "no shard files given");
    if (rc == CS_OK) {
        char missing[256] = "";
        int nm = 0;
        for (int64_t i = 0; i < s->of; i++)
            if (!seen[i]) {
                size_t l = strlen(missing);
                if (nm++ < 8)
                    snprintf(missing + l, sizeof missing - l, "%s%lld/%lld", l ? ", " : "",
                             (long long)i + 1, (long long)s->of);
            }
        if (nm)
            rc = cs_error_set(err, CS_ERR_USAGE, "%d of %lld shards missing: %s%s (the run of "
                              "%s; give every shard of it)", nm, (long long)s->of, missing,
                              nm > 8 ? ", ..." : "", paths[0]);
    }
    free(seen);
    free(who);
    if (rc) {
        cs_shard_set_free(s);
        return rc;
    }
    *out = s;
    return CS_OK;
}

int cs_shard_set_check(const cs_shard_set_t *s, const cs_par_t *par, int npoints,
                       cs_error_t *err)
{
    if (strcmp(par->identity, s->identity) != 0)
        return cs_error_set(err, CS_ERR_USAGE,
                            "the shards' run (identity %s) is not this command line's (%s): "
                            "an input file it names changed since the shards ran",
                            s->identity, par->identity);
    if (npoints != s->points)
        return cs_error_set(err, CS_ERR_USAGE, "the shards hold %lld points, the command line "
                            "makes %d", (long long)s->points, npoints);
    return CS_OK;
}

int cs_shard_set_take(const cs_shard_set_t *s, const cs_par_t *par, int npoints,
                      const cs_par_ops_t *ops, cs_error_t *err)
{
    int rc = cs_shard_set_check(s, par, npoints, err);
    if (rc != CS_OK)
        return rc;
    for (int i = 0; i < npoints; i++) {
        int rc = ops->take(ops->ctx, i, s->recs[i], err);
        if (rc != CS_OK)
            return rc;
    }
    return CS_OK;
}
