/*
 * fuzz_util.h - what the libFuzzer targets of tests/fuzz share (header
 * only): the input as a file the parsers open by path, as the command line
 * does, and as a NUL-terminated string.
 *
 * The file is a memfd opened once per process and rewritten per input; its
 * path /proc/self/fd/N opens as a regular file, so the readers take the
 * same memory-mapped path (core/lines.c) as for a file on disk, and nothing
 * is left in the file system.
 */
#ifndef CS_FUZZ_UTIL_H
#define CS_FUZZ_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "machines/machine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The path of a file holding data[0 .. size); the same path every call. */
static inline const char *fuzz_file(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("collsim-fuzz", 0);
        if (fd < 0) {
            perror("memfd_create");
            abort();
        }
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size) {
        perror("fuzz_file");
        abort();
    }
    return path;
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
