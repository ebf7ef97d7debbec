/*
 * units.h - parsing of the quantities users type: durations, sizes, rates,
 * and the `name:key=value,key=value` spec strings that select machines and
 * algorithms.
 */
#ifndef CS_UNITS_H
#define CS_UNITS_H

#include <stdint.h>
#include "core/error.h"

/* Parses a duration ("1us", "2.5ns", "10ps", "3s", "1ms"; a bare number is
 * in `bare_unit_s` seconds) into seconds.  Accepts s, ms, us, ns, ps. */
int cs_units_parse_seconds(const char *text, double bare_unit_s, double *out, cs_error_t *err);

/* Parses a byte count: a non-negative number with an optional suffix "B"
 * or "b" (bytes) or K, M, G, T in either case, alone or followed by B, i or
 * iB: always powers of 1024 ("1k" = "1KB" = "1KiB" = 1024; docs/cli.md,
 * "Sizes").  Rejects overflow, negatives and fractions that are not whole
 * bytes.  cs_units_format_bytes prints what this reads back. */
int cs_units_parse_bytes(const char *text, int64_t *out, cs_error_t *err);

/* Parses a frequency ("1.1GHz", "125MHz") into Hz. */
int cs_units_parse_hz(const char *text, double *out, cs_error_t *err);

/* Parses a bandwidth into bytes per second: "100Gbps" (bits, decimal
 * prefixes), "25GB/s" or "25GBps" (bytes), "16GiB/s"; a bare number is in
 * `bare_unit` bytes per second (0: a unit is required).  Must be > 0. */
int cs_units_parse_bandwidth(const char *text, double bare_unit, double *out, cs_error_t *err);

/* Parses a non-negative integer (decimal), rejecting garbage and overflow. */
int cs_units_parse_int(const char *text, int64_t *out, cs_error_t *err);

/* Formats a duration in seconds with a readable unit ("2.048 us"). */
void cs_units_format_seconds(double s, char *buf, size_t len);
/* Formats a duration as a spec value that parses back ("1us", "0.25ns",
 * "0s"): the largest unit that keeps the number >= 1. */
const char *cs_units_spec_seconds(double s, char *buf, size_t len);
/* Formats bytes per second as a spec value that parses back ("12.5GB/s"). */
const char *cs_units_spec_bandwidth(double bytes_per_s, char *buf, size_t len);
/* Formats a byte count ("4 KiB", "1.5 MiB", "100 B"). */
void cs_units_format_bytes(int64_t bytes, char *buf, size_t len);

/* A parsed spec string "name:k1=v1,k2=v2" (the `:` part optional).
 * Keys keep their order; values are unparsed text. */
typedef struct cs_spec_kv {
    char *key;
    char *value;
    int used;   /* set by cs_spec_get*, so unknown keys can be reported */
} cs_spec_kv_t;

struct cs_files;
typedef struct cs_spec {
    char *name;
    cs_spec_kv_t *kv;
    int nkv;
    char *text; /* the whole original string, for messages */
    /* NULL: keys that name files name paths; else they name these files
     * only, and no key may ask for a file to be written (core/source.h).
     * Borrowed; cs_spec_parse leaves it NULL. */
    const struct cs_files *files;
    /* > 0: a machine of more nodes is refused before it is built
     * (cs_spec_check_nodes; `collsim serve --max-nodes`); 0: only the
     * core's own limits.  cs_spec_parse leaves it 0. */
    int64_t max_nodes;
} cs_spec_t;

/* Parses text into spec.  Errors: empty name, empty key, duplicate key,
 * missing '='.  The spec must be released with cs_spec_destroy. */
int cs_spec_parse(const char *text, cs_spec_t *spec, cs_error_t *err);
void cs_spec_destroy(cs_spec_t *spec);

/* Look-ups: return the raw value or NULL when absent, and mark it used. */
const char *cs_spec_get(cs_spec_t *spec, const char *key);
/* Typed look-ups with a default when the key is absent; parse errors name the key. */
int cs_spec_get_int(cs_spec_t *spec, const char *key, int64_t dflt, int64_t lo, int64_t hi,
                    int64_t *out, cs_error_t *err);
int cs_spec_get_seconds(cs_spec_t *spec, const char *key, double dflt, double *out, cs_error_t *err);
int cs_spec_get_bytes(cs_spec_t *spec, const char *key, int64_t dflt, int64_t *out, cs_error_t *err);
/* A bandwidth (units required, cs_units_parse_bandwidth) in bytes/s. */
int cs_spec_get_bandwidth(cs_spec_t *spec, const char *key, double dflt, double *out,
                          cs_error_t *err);
/* Chooses among `choices` (NULL-terminated); returns the index in *out. */
int cs_spec_get_choice(cs_spec_t *spec, const char *key, const char *const *choices, int dflt,
                       int *out, cs_error_t *err);

/* Whether a machine of `nodes` nodes may be built for spec (max_nodes):
 * CS_ERR_RANGE saying so otherwise.  Machine types call it once they know
 * their node count from their keys, before they allocate anything for it. */
int cs_spec_check_nodes(const cs_spec_t *spec, int64_t nodes, cs_error_t *err);

/* Before any look-up: a key not in `valid` (a NULL-terminated list) is an
 * error that lists the valid keys, so that a typo is reported before a
 * machine spends time on the keys it knows. */
int cs_spec_check_known(const cs_spec_t *spec, const char *const *valid, cs_error_t *err);
/* After all look-ups: an unknown key (as above) or a valid key that no
 * look-up used is an error. */
int cs_spec_check_unused(const cs_spec_t *spec, const char *const *valid, cs_error_t *err);

/* A duration of key `key` (seconds, >= 0) as whole ticks of `tick` seconds,
 * at most max_ticks.  The alpha-beta and LogGP machines each converted
 * their spec's times with their own copy of this; errors name the key
 * (CS_ERR_RANGE: negative, not a whole number of ticks, too large). */
int cs_spec_ticks(const char *key, double s, double tick, double max_ticks, int64_t *out,
                  cs_error_t *err);
/* Seconds per byte of key `key` (>= 0) as exactly num/den ticks per byte,
 * den a power of ten up to 10^6 (the same two machines' second copy). */
int cs_spec_tick_ratio(const char *key, double s, double tick, int64_t *num, int64_t *den,
                       cs_error_t *err);

#endif
