/*
 * lines.h - the lines of a text file, string or stream, without copying or
 * allocating per line: what the trace readers (goal.c, ti.c) read from.
 *
 * A regular file is memory-mapped and its lines are handed out in place;
 * the part already read is released from the process as reading moves on,
 * so the resident memory stays a few MB whatever the file's size.  A
 * string is read in place.  Anything else (a pipe, a terminal, a stream
 * opened by the caller) is read in chunks into one buffer that only grows
 * for a line longer than it.
 *
 * A line is handed out without its '\n' and is valid until the next call on
 * the same reader; it may hold any byte, NUL included.  No function prints
 * or exits; failures are codes with errno left as the system set it, so
 * that each reader words its own message (they name the file and line).
 */
#ifndef CS_LINES_H
#define CS_LINES_H

#include <stddef.h>
#include <stdio.h>

typedef struct cs_lines cs_lines_t;

/* One line: s[0 .. len) without the '\n'; nl = 1 if a '\n' ended it (0 for
 * a last line without one). */
typedef struct cs_line {
    const char *s;
    size_t len;
    int nl;
} cs_line_t;

/* Opens the file at path.  CS_ERR_IO (errno set) if it cannot be opened or
 * mapped; *out is NULL then. */
int cs_lines_open_file(const char *path, cs_lines_t **out);

/* Reads from an open stream, from its current position on; f stays the
 * caller's (not closed by cs_lines_free). */
cs_lines_t *cs_lines_open_stream(FILE *f);

/* Reads text[0 .. n) in place; text must outlive the reader. */
cs_lines_t *cs_lines_open_string(const char *text, size_t n);

/* The next line into *line: 1, or 0 at the end of the text, or -1 (errno
 * set) when a stream reports a read error. */
int cs_lines_next(cs_lines_t *l, cs_line_t *line);

/* Back to where the reader started.  CS_ERR_IO (errno set) for a stream
 * that cannot seek (a pipe). */
int cs_lines_rewind(cs_lines_t *l);

/* Whether s[0 .. n) may hold a control byte (below 0x20, tab and CR
 * included, or 0x7f): 0 means certainly not, so that readers look for the
 * exact byte only in the rare lines that have one.  Eight bytes at a time. */
int cs_lines_maybe_control(const char *s, size_t n);

/* Unmaps / frees; closes the file only if cs_lines_open_file opened it.
 * Accepts NULL. */
void cs_lines_free(cs_lines_t *l);

#endif
