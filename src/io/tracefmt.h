/*
 * tracefmt.h - the table of trace formats (DESIGN.md, "Formats from other
 * tools"): every format a replay reads (GOAL, SimGrid TI, Chakra ET) is one
 * row: its name, how it is told from the input (sniff), and its reader,
 * behind one set of options and one summary of what the trace held.  The
 * replay (api/replay.c) and every front end above it see formats only
 * through this table, so that a new trace format is one reader file and
 * one row.
 */
#ifndef CS_IO_TRACEFMT_H
#define CS_IO_TRACEFMT_H

#include <stddef.h>
#include <stdint.h>

#include "coll/coll.h"
#include "core/error.h"
#include "core/program.h"

/* Everything a reader may take; each format reads the fields it knows. */
typedef struct cs_trace_opts {
    double flops_per_second;                  /* TI compute, Chakra num_ops */
    const cs_coll_algo_t *algo[CS_COLL_NKINDS]; /* collectives' algorithms (NULL: default) */
    cs_spec_t *algo_opts[CS_COLL_NKINDS];
    int64_t unit;                             /* the machine's packet size */
    /* called once P is known, before collectives are expanded (ti.h) */
    int (*prepare)(void *ctx, int P, const cs_coll_hints_t **hints, cs_error_t *err);
    void *prepare_ctx;
    int max_ranks;                            /* > 0: the machine's nodes */
    int skip_unknown;                         /* Chakra: skip unknown nodes / attributes */
    const char *comm_group;                   /* Chakra: ASTRA-sim's comm-group JSON */
} cs_trace_opts_t;

#define CS_TRACE_MAX_COUNTS 16

/* What a trace held, for the summary. */
typedef struct cs_trace_info {
    int files;
    int64_t records;                 /* TI action lines, Chakra nodes (0 for GOAL) */
    int64_t calls[CS_COLL_NKINDS];   /* collective calls, counted once per call */
    int64_t coll_ops;                /* ops the collectives expanded into */
    /* the format's own counts ("COMP_NODE", "skipped unknown nodes"), in order */
    int ncounts;
    struct {
        const char *name;
        int64_t value;
    } counts[CS_TRACE_MAX_COUNTS];
} cs_trace_info_t;

typedef struct cs_trace_format {
    const char *name;        /* --format NAME */
    const char *records;     /* what info.records counts ("actions"), NULL: none */
    int expands_collectives; /* takes --algo-for */
    /* *yes = 1 when path is of this format; NULL: the fallback of auto */
    int (*sniff)(const char *path, int *yes, cs_error_t *err);
    /* reads path; *out is finalized; info is zeroed by the caller */
    int (*read)(const char *path, const cs_trace_opts_t *o, cs_program_t **out,
                cs_trace_info_t *info, cs_error_t *err);
} cs_trace_format_t;

/* The row named `name`, or NULL. */
const cs_trace_format_t *cs_trace_format_find(const char *name);
/* The formats' names, joined by ", " ("goal, ti, chakra"), into buf. */
void cs_trace_format_names(char *buf, size_t len);
/* The format of path by the rows' sniffers in table order (the fallback
 * last).  Errors: a sniffer's (a file that cannot be read). */
int cs_trace_format_sniff(const char *path, const cs_trace_format_t **out, cs_error_t *err);

#endif
