/*
 * sizes.h - size lists in the syntax of `collsim sweep --bytes`:
 * comma-separated items, each N (a size with units, core/units.h) or
 * LO..HI with an optional step :xF (multiply, F > 1, default x2) or :+S
 * (add S bytes).  "4,64,1KiB", "8..1MiB:x2", "1KiB..8KiB:+1KiB".
 */
#ifndef CS_SIZES_H
#define CS_SIZES_H

#include <stdint.h>

#include "core/error.h"

/* At most this many sizes in one list (the range steps are counted before
 * they are made: a list never allocates more than this). */
#define CS_SIZES_MAX 1024

/* Parses text into sizes[0..*n) (room for CS_SIZES_MAX), ascending and
 * distinct.  CS_ERR_USAGE or CS_ERR_RANGE with a message quoting the item
 * (the caller prefixes its option). */
int cs_sizes_parse(const char *text, int64_t *sizes, int *n, cs_error_t *err);
/* The same into an allocated array (*sizes, to free; NULL on error). */
int cs_sizes_parse_alloc(const char *text, int64_t **sizes, int *n, cs_error_t *err);

#endif
