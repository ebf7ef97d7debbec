/*
 * lines.h - the lines of a text file, string or stream, without copying or
 * allocating per line: what every line-oriented reader reads from (GOAL,
 * TI traces, edge lists, Groq schedules, replay's map files).  In core so
 * that the readers of every layer share it and its line limit.
 *
 * A regular file is memory-mapped and its lines are handed out in place;
 * the part already read is released from the process as reading moves on,
 * so the resident memory stays a few MB whatever the file's size.  A
 * string is read in place.  Anything else (a pipe, a terminal, a stream
 * opened by the caller) is read in chunks into one buffer that only grows
 * for a line longer than it.
 *
 * A line is handed out without its '\n' and is valid until the next call on
 * the same reader; it may hold any byte, NUL included.  A line has at most
 * CS_LINES_MAX bytes (without its '\n'): a longer one (say /dev/zero, one
 * endless line) is an error found after reading at most that much more, so
 * a stream's buffer stays under 2 * CS_LINES_MAX whatever the input.  No
 * function prints or exits; failures are codes (errno as the system set
 * it), which cs_lines_error words with the file and line.
 */
#ifndef CS_LINES_H
#define CS_LINES_H

#include <stddef.h>
#include <stdio.h>

#include "core/error.h"

typedef struct cs_lines cs_lines_t;

/* The longest line any reader accepts, in bytes (docs: goal.md, replay.md,
 * networks.md, groq.md). */
#define CS_LINES_MAX ((size_t)1 << 20)

/* cs_lines_next's result for a line longer than CS_LINES_MAX. */
#define CS_LINES_TOO_LONG (-2)
/* cs_lines_next_copy's result for a line that holds a NUL byte. */
#define CS_LINES_NUL (-3)

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
 * set) when a stream reports a read error, or CS_LINES_TOO_LONG. */
int cs_lines_next(cs_lines_t *l, cs_line_t *line);

/* The next line as a NUL-terminated string in *buf (grown as needed, the
 * caller frees it; *cap its size), without its '\n', for readers that cut
 * their lines up in place: results as cs_lines_next, and CS_LINES_NUL for
 * a line that holds a NUL byte, which the string could not show (it would
 * end there and the rest of the line go unread, issue 29): a text format
 * has none, so the caller reports it as cs_lines_error does. */
int cs_lines_next_copy(cs_lines_t *l, char **buf, size_t *cap);

/* The error for a negative result `got` of cs_lines_next(_copy) on the
 * file `name` after `line` lines were read: CS_ERR_PARSE "NAME:LINE+1: line
 * longer than N bytes" or "NAME:LINE+1: a NUL byte ...", or CS_ERR_IO
 * "NAME: read error after line LINE: ...". */
int cs_lines_error(int got, const char *name, long line, cs_error_t *err);

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
