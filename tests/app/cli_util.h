/*
 * cli_util.h - running the built `collsim` from a Criterion test (header
 * only, for the end-to-end tests of tests/app): a per-test temporary
 * directory, files in it, and run_cli, which spawns $COLLSIM (set by meson)
 * with its standard output and error captured.
 *
 * A test file includes this once and declares its suite with
 *     TestSuite(name, .init = cli_setup, .fini = cli_teardown, ...);
 */
#ifndef CS_TEST_CLI_UTIL_H
#define CS_TEST_CLI_UTIL_H

#include <criterion/criterion.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Criterion runs every test in its own process: this is per test. */
static char cli_tmpdir[PATH_MAX];

typedef struct cli_out {
    int status; /* exit status, or 128 + signal */
    char *out;  /* captured stdout (NUL-terminated) */
    char *err;  /* captured stderr */
} cli_out_t;

static void cli_setup(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(cli_tmpdir, sizeof cli_tmpdir, "%s/collsim-cli-XXXXXX", base && *base ? base : "/tmp");
    cr_assert_not_null(mkdtemp(cli_tmpdir), "mkdtemp: %s", strerror(errno));
}

/* Removes the directory with its files and subdirectories (one level). */
static void cli_rmdir(const char *dir, int depth)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char path[PATH_MAX + 256];
        struct stat st;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (depth < 2 && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
            cli_rmdir(path, depth + 1);
        else
            unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

static void cli_teardown(void) { cli_rmdir(cli_tmpdir, 0); }

static char *cli_path(const char *name)
{
    char *p = malloc(strlen(cli_tmpdir) + strlen(name) + 2);
    cr_assert_not_null(p);
    sprintf(p, "%s/%s", cli_tmpdir, name);
    return p;
}

/* The whole file, NUL-terminated; *len (if given) its size. */
static char *cli_read(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s: %s", path, strerror(errno));
    size_t cap = 4096, n = 0, got;
    char *buf = malloc(cap);
    while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (cap - n < 2)
            buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

/* Writes `text` into the test's directory and returns the path (inline: not
 * every test file that includes this header uses it). */
static inline char *cli_write(const char *name, const char *text)
{
    char *path = cli_path(name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "cannot create %s", path);
    fputs(text, f);
    fclose(f);
    return path;
}

/* Runs `collsim args...` (NULL-terminated) in the test's directory, with
 * standard input from /dev/null. */
static cli_out_t run_cli(const char *const *args)
{
    const char *bin = getenv("COLLSIM");
    cr_assert_not_null(bin, "COLLSIM is not set (run the tests through meson test)");
    const char *argv[64];
    int argc = 0;
    argv[argc++] = bin;
    for (int i = 0; args[i]; i++) {
        cr_assert_lt(argc, 63);
        argv[argc++] = args[i];
    }
    argv[argc] = NULL;
    char *out_path = cli_path(".stdout"), *err_path = cli_path(".stderr");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    char cwd[PATH_MAX];
    cr_assert_not_null(getcwd(cwd, sizeof cwd));
    cr_assert_eq(chdir(cli_tmpdir), 0);
    pid_t pid;
    int rc = posix_spawn(&pid, bin, &fa, NULL, (char *const *)argv, environ);
    cr_assert_eq(chdir(cwd), 0);
    posix_spawn_file_actions_destroy(&fa);
    cr_assert_eq(rc, 0, "posix_spawn %s: %s", bin, strerror(rc));
    int ws = 0;
    while (waitpid(pid, &ws, 0) < 0)
        cr_assert_eq(errno, EINTR, "waitpid: %s", strerror(errno));
    cli_out_t o;
    o.status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
    o.out = cli_read(out_path, NULL);
    o.err = cli_read(err_path, NULL);
    free(out_path);
    free(err_path);
    return o;
}

static void cli_out_free(cli_out_t *o)
{
    free(o->out);
    free(o->err);
}

#define RUN(...) run_cli((const char *const[]){__VA_ARGS__, NULL})

#define ASSERT_HAS(hay, needle)                                                                    \
    cr_assert_not_null(strstr((hay), (needle)), "expected \"%s\" in:\n%s", (needle), (hay))

/* Whether the file exists, is not empty, and starts with `magic` (inline:
 * not every test file that includes this header uses it). */
static inline int cli_file_starts(const char *name, const char *magic)
{
    char *path = cli_path(name);
    FILE *f = fopen(path, "rb");
    free(path);
    if (!f)
        return 0;
    char buf[16] = {0};
    size_t n = fread(buf, 1, strlen(magic), f);
    fclose(f);
    return n == strlen(magic) && !memcmp(buf, magic, n);
}

#endif
