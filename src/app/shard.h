/*
 * shard.h - shard files: one slice of a command's points (`collsim sweep
 * ... --shard I/N`) and `collsim merge`, which joins the N slices into
 * exactly the outputs of the serial run (docs/cluster.md).
 *
 * A shard file is the line "collsim-shard 1" and one record (rec.h) with
 * the fields: command, version, identity (a hash of the command line and
 * the input files it names, so that merge refuses a shard of another run),
 * shard, of, points (all of the run's, not the slice's), arg (one per word
 * of the command line, --shard and the like taken out), then for each
 * point of the slice "index" (0-based, in the serial order) followed by
 * "record" (the point's record).
 */
#ifndef CS_APP_SHARD_H
#define CS_APP_SHARD_H

#include "app/par.h"
#include "app/rec.h"

#define CS_SHARD_MAGIC "collsim-shard 1\n"

/* The identity of a command line (argv[0] the command): 16 hex digits of
 * a 64-bit FNV-1a over the collsim version, the words, and the bytes of
 * every regular file a word names (the word itself, or a part of it
 * between '=', ':', ',' and ';': "net:file=x.graphml"), output options'
 * files (--csv, --json, --plot, --markdown, --heatmaps) excepted. */
void cs_shard_identity(const char *cmd, int argc, char **argv, char out[17]);

/* Writes par's shard (recs[i] for the points of the slice, NULL for the
 * others) to par->shard_file, whole or absent. */
int cs_shard_write(const cs_par_t *par, int npoints, cs_rec_t *const *recs, cs_error_t *err);

/* The shards of one run, read and checked: every file a shard of the same
 * run (identity, command, N, points), each shard once, none missing, each
 * whole.  CS_ERR_PARSE (or CS_ERR_IO) naming the file at fault. */
int cs_shard_set_read(const char *const *paths, int n, cs_shard_set_t **out, cs_error_t *err);
void cs_shard_set_free(cs_shard_set_t *s);
/* The command line the shards ran (argv[0] the command, NULL-terminated). */
char **cs_shard_set_argv(const cs_shard_set_t *s, int *argc);
/* Whether par (the command line re-read by the merge) is the shards' run:
 * its identity (input files changed since?) and its point count;
 * CS_ERR_USAGE saying which. */
int cs_shard_set_check(const cs_shard_set_t *s, const cs_par_t *par, int npoints,
                       cs_error_t *err);
/* Hands every point's record to ops->take in order, after the check. */
int cs_shard_set_take(const cs_shard_set_t *s, const cs_par_t *par, int npoints,
                      const cs_par_ops_t *ops, cs_error_t *err);

#endif
