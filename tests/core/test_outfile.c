/*
 * test_outfile.c - whole-or-absent output files and folders (core/outfile.h):
 * the target appears only on commit, an abort leaves the old file (or
 * nothing) and no temporary, /dev/full fails with the path named.
 */
#include "core/outfile.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[PATH_MAX];

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/collsim-outfile-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

/* Number of entries in d other than . and .. */
static int entries(const char *d)
{
    DIR *h = opendir(d);
    struct dirent *e;
    int n = 0;
    cr_assert_not_null(h);
    while ((e = readdir(h)))
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(h);
    return n;
}

static void teardown(void)
{
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(outfile, .init = setup, .fini = teardown);

Test(outfile, appears_only_on_commit)
{
    char path[PATH_MAX + 16];
    cs_outfile_t *o;
    cs_error_t err;
    snprintf(path, sizeof path, "%s/a.csv", dir);
    cr_assert_eq(cs_outfile_open("--csv", path, &o, &err), CS_OK);
    fputs("x,y\n", cs_outfile_stream(o));
    cr_assert_eq(cs_outfile_check(o, &err), CS_OK);
    cr_assert_neq(access(path, F_OK), 0, "the target exists before commit");
    cr_assert_eq(entries(dir), 1); /* the temporary */
    cr_assert_eq(cs_outfile_commit(o, &err), CS_OK);
    cr_assert_eq(access(path, F_OK), 0);
    cr_assert_eq(entries(dir), 1); /* the target only */
}

Test(outfile, abort_keeps_the_old_file)
{
    char path[PATH_MAX + 16], buf[16] = {0};
    cs_outfile_t *o;
    cs_error_t err;
    snprintf(path, sizeof path, "%s/b.txt", dir);
    cr_assert_eq(cs_outfile_save(NULL, path, "old", 3, &err), CS_OK);
    cr_assert_eq(cs_outfile_open(NULL, path, &o, &err), CS_OK);
    fputs("new and half", cs_outfile_stream(o));
    cs_outfile_abort(o);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    cr_assert_eq(fread(buf, 1, sizeof buf - 1, f), 3u);
    fclose(f);
    cr_assert_str_eq(buf, "old");
    cr_assert_eq(entries(dir), 1);
}

Test(outfile, dev_full_fails_naming_the_path)
{
    cs_outfile_t *o;
    cs_error_t err;
    if (access("/dev/full", W_OK) != 0)
        cr_skip_test("no /dev/full");
    cr_assert_eq(cs_outfile_open("--csv", "/dev/full", &o, &err), CS_OK);
    fputs("a row\n", cs_outfile_stream(o));
    cr_assert_eq(cs_outfile_check(o, &err), CS_ERR_IO);
    cr_assert_not_null(strstr(err.msg, "--csv /dev/full"), "%s", err.msg);
    cr_assert_eq(cs_outfile_commit(o, &err), CS_ERR_IO);
}

Test(outfile, folder_whole_or_absent)
{
    char path[PATH_MAX + 16], file[PATH_MAX + 64];
    cs_outdir_t *d;
    cs_error_t err;
    snprintf(path, sizeof path, "%s/frames", dir);
    cr_assert_eq(cs_outdir_open("--frames", path, &d, &err), CS_OK);
    snprintf(file, sizeof file, "%s/f1.png", cs_outdir_path(d));
    cr_assert_eq(cs_outfile_save(NULL, file, "png", 3, &err), CS_OK);
    cr_assert_neq(access(path, F_OK), 0, "the folder exists before commit");
    cs_outdir_abort(d);
    cr_assert_eq(entries(dir), 0, "an aborted folder left something");

    cr_assert_eq(cs_outdir_open("--frames", path, &d, &err), CS_OK);
    snprintf(file, sizeof file, "%s/f1.png", cs_outdir_path(d));
    cr_assert_eq(cs_outfile_save(NULL, file, "png", 3, &err), CS_OK);
    cr_assert_eq(cs_outdir_commit(d, &err), CS_OK);
    snprintf(file, sizeof file, "%s/f1.png", path);
    cr_assert_eq(access(file, F_OK), 0);
    cr_assert_eq(entries(dir), 1);

    /* into an existing folder with a file of its own: both are kept */
    cr_assert_eq(cs_outdir_open("--frames", path, &d, &err), CS_OK);
    snprintf(file, sizeof file, "%s/f2.png", cs_outdir_path(d));
    cr_assert_eq(cs_outfile_save(NULL, file, "png", 3, &err), CS_OK);
    cr_assert_eq(cs_outdir_commit(d, &err), CS_OK);
    cr_assert_eq(entries(path), 2);
    cr_assert_eq(entries(dir), 1);
}
