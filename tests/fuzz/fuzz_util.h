/*
 * fuzz_util.h - what the libFuzzer targets of tests/fuzz share (header
 * only): the input as a file the parsers open by path, as the command line
 * does, and as a NUL-terminated string.
 *
 * The file is tmp/collsim-fuzz-XXXXXX/input, made once per process (and
 * removed at exit) and rewritten per input.  It is a real folder, not a
 * memfd's /proc/self/fd/N: a TI index names its rank files relative to its
 * own folder, and "10" or "1" there opened the fuzzer's own descriptors, a
 * pipe among them, whose read blocked the unit for 60 s (session 8's
 * campaign).  Here such names find nothing.
 */
#ifndef CS_FUZZ_UTIL_H
#define CS_FUZZ_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "machines/machine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The path of a file holding data[0 .. size); the same path every call. */
static char fuzz_dir[4096], fuzz_path[4096 + 8];

static inline void fuzz_file_cleanup(void)
{
    unlink(fuzz_path);
    rmdir(fuzz_dir);
}

static inline const char *fuzz_file(const uint8_t *data, size_t size)
{
    static int fd = -1;
    if (fd < 0) {
        const char *tmp = getenv("TMPDIR");
        snprintf(fuzz_dir, sizeof fuzz_dir, "%s/collsim-fuzz-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(fuzz_dir)) {
            perror("mkdtemp");
            abort();
        }
        snprintf(fuzz_path, sizeof fuzz_path, "%s/input", fuzz_dir);
        fd = open(fuzz_path, O_RDWR | O_CREAT | O_TRUNC, 0600);
        if (fd < 0) {
            perror(fuzz_path);
            abort();
        }
        atexit(fuzz_file_cleanup);
    }
    if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size) {
        perror("fuzz_file");
        abort();
    }
    return fuzz_path;
}

/* data as a NUL-terminated string (malloc'd; bytes after a NUL are unseen
 * by the parser, as on a command line). */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        abort();
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* Whether every run of decimal digits in s is at most `max` and their
 * product at most `max_product`, skipping runs followed by a unit letter
 * other than 'x' (100Gbps, 2us: not counts; 8x8 is): the targets that
 * build machines skip larger ones, whose size (up to the documented
 * 67108863 nodes) is a legitimate request and not a parser's fault. */
static inline int fuzz_small_numbers(const char *s, long max, long max_product)
{
    long product = 1;
    while (*s) {
        if (*s < '0' || *s > '9') {
            s++;
            continue;
        }
        long v = 0;
        int big = 0;
        for (; *s >= '0' && *s <= '9'; s++)
            if (!big && (v = v * 10 + (*s - '0')) > max)
                big = 1;
        int unit = (*s >= 'a' && *s <= 'z' && *s != 'x') || (*s >= 'A' && *s <= 'Z');
        if (unit)
            continue;
        if (big || (v > 1 && (product *= v) > max_product))
            return 0;
    }
    return 1;
}

/* The 16-node LogGP machine the targets that place ranks resolve against
 * (order files, rank maps); aborts if it cannot be made. */
static inline cs_machine_t *fuzz_loggp16(void)
{
    cs_machine_t *m = NULL;
    cs_error_t err = {0};
    if (cs_machine_new("loggp:p=16", &m, &err) != CS_OK) {
        fprintf(stderr, "%s\n", err.msg);
        abort();
    }
    return m;
}

#endif
