/*
 * outfile.c - whole-or-absent output files and folders (see outfile.h).
 *
 * The temporary lives in the target's folder so that rename(2) stays on one
 * file system and is atomic (POSIX rename: "If newpath already exists, it
 * will be atomically replaced").  No fsync: the promise is about what other
 * processes and a later run see, not about a power cut.
 */
#include "core/outfile.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct cs_outfile {
    FILE *f;
    char *path; /* the target */
    char *tmp;  /* the temporary, NULL when writing directly */
    char *what; /* option or key for messages, may be NULL */
};

struct cs_outdir {
    char *path, *tmp, *what;
};

/* "what path" or "path", for messages. */
static int io_fail(const char *what, const char *path, const char *doing, int e,
                   cs_error_t *err)
{
    return cs_error_set(err, CS_ERR_IO, "%s%s%s: %s: %s", what ? what : "", what ? " " : "",
                        path, doing, strerror(e ? e : EIO));
}

/* "DIR/.NAME.tmp.PID" for path "DIR/NAME" (or ".NAME.tmp.PID"). */
static char *temp_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
    size_t n = strlen(path) + 40;
    char *t = cs_malloc(n);
    snprintf(t, n, "%.*s.%s.tmp.%ld", (int)dirlen, path, slash ? slash + 1 : path,
             (long)getpid());
    return t;
}

static char *dup_or_null(const char *s) { return s ? cs_strdup(s) : NULL; }

static void outfile_free(cs_outfile_t *o)
{
    free(o->path);
    free(o->tmp);
    free(o->what);
    free(o);
}

int cs_outfile_open(const char *what, const char *path, cs_outfile_t **out, cs_error_t *err)
{
    struct stat st;
    *out = NULL;
    if (!path || !*path)
        return cs_error_set(err, CS_ERR_IO, "%s%san empty file name", what ? what : "",
                            what ? ": " : "");
    cs_outfile_t *o = cs_calloc(1, sizeof *o);
    o->path = cs_strdup(path);
    o->what = dup_or_null(what);
    /* an existing non-regular target (a device, a FIFO) cannot be replaced
     * by a rename: write it directly */
    int direct = stat(path, &st) == 0 && !S_ISREG(st.st_mode);
    if (direct && S_ISDIR(st.st_mode)) {
        outfile_free(o);
        return cs_error_set(err, CS_ERR_IO, "%s%s%s: is a folder, not a file", what ? what : "",
                            what ? " " : "", path);
    }
    if (!direct)
        o->tmp = temp_name(path);
    o->f = fopen(direct ? path : o->tmp, "w");
    if (!o->f) {
        int e = errno;
        io_fail(what, path, "cannot open for writing", e, err);
        outfile_free(o);
        return CS_ERR_IO;
    }
    *out = o;
    return CS_OK;
}

FILE *cs_outfile_stream(cs_outfile_t *o) { return o->f; }

int cs_outfile_check(cs_outfile_t *o, cs_error_t *err)
{
    errno = 0;
    if (fflush(o->f) != 0 || ferror(o->f))
        return io_fail(o->what, o->path, "error while writing", errno, err);
    return CS_OK;
}

int cs_outfile_commit(cs_outfile_t *o, cs_error_t *err)
{
    if (!o)
        return CS_OK;
    int rc = cs_outfile_check(o, err);
    errno = 0;
    if (fclose(o->f) != 0 && rc == CS_OK)
        rc = io_fail(o->what, o->path, "error while writing", errno, err);
    o->f = NULL;
    if (rc == CS_OK && o->tmp && rename(o->tmp, o->path) != 0)
        rc = io_fail(o->what, o->path, "cannot replace it", errno, err);
    if (rc != CS_OK && o->tmp)
        unlink(o->tmp);
    outfile_free(o);
    return rc;
}

void cs_outfile_abort(cs_outfile_t *o)
{
    if (!o)
        return;
    if (o->f)
        fclose(o->f);
    if (o->tmp)
        unlink(o->tmp);
    outfile_free(o);
}

int cs_outfile_save(const char *what, const char *path, const void *data, size_t len,
                    cs_error_t *err)
{
    cs_outfile_t *o;
    int rc = cs_outfile_open(what, path, &o, err);
    if (rc)
        return rc;
    if (len && fwrite(data, 1, len, o->f) != len) {
        rc = io_fail(what, path, "error while writing", errno, err);
        cs_outfile_abort(o);
        return rc;
    }
    return cs_outfile_commit(o, err);
}

int cs_outfile_check_writable(const char *what, const char *path, cs_error_t *err)
{
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (access(path, F_OK) == 0) {
        if (access(path, W_OK) != 0)
            return io_fail(what, path, "cannot write", errno, err);
        return CS_OK;
    }
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else
        snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    if (access(dir, W_OK) != 0) {
        int e = errno;
        return cs_error_set(err, CS_ERR_IO, "%s%s%s: cannot create it in %s: %s",
                            what ? what : "", what ? " " : "", path, dir, strerror(e));
    }
    return CS_OK;
}

/* ---- folders ------------------------------------------------------------ */

static void outdir_free(cs_outdir_t *d)
{
    free(d->path);
    free(d->tmp);
    free(d->what);
    free(d);
}

int cs_outdir_open(const char *what, const char *path, cs_outdir_t **out, cs_error_t *err)
{
    struct stat st;
    *out = NULL;
    if (stat(path, &st) == 0 && !S_ISDIR(st.st_mode))
        return cs_error_set(err, CS_ERR_IO, "%s%s%s: not a folder", what ? what : "",
                            what ? " " : "", path);
    cs_outdir_t *d = cs_calloc(1, sizeof *d);
    /* "DIR/" names the folder DIR */
    d->path = cs_strdup(path);
    for (size_t n = strlen(d->path); n > 1 && d->path[n - 1] == '/'; n--)
        d->path[n - 1] = '\0';
    d->what = dup_or_null(what);
    d->tmp = temp_name(d->path);
    if (mkdir(d->tmp, 0777) != 0) {
        int e = errno;
        io_fail(what, path, "cannot create the folder", e, err);
        outdir_free(d);
        return CS_ERR_IO;
    }
    *out = d;
    return CS_OK;
}

const char *cs_outdir_path(const cs_outdir_t *d) { return d->tmp; }

/* Calls fn(d, name) for each entry of the temporary folder but . and ..;
 * stops at the first non-zero return. */
static int outdir_each(cs_outdir_t *d, int (*fn)(cs_outdir_t *d, const char *name))
{
    DIR *dir = opendir(d->tmp);
    struct dirent *e;
    int rc = 0;
    if (!dir)
        return -1;
    while (rc == 0 && (e = readdir(dir)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            rc = fn(d, e->d_name);
    closedir(dir);
    return rc;
}

/* d->tmp + "/" + name, or d->path + "/" + name. */
static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = cs_malloc(n);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static int remove_entry(cs_outdir_t *d, const char *name)
{
    char *p = join(d->tmp, name);
    unlink(p);
    free(p);
    return 0;
}

static int move_entry(cs_outdir_t *d, const char *name)
{
    char *from = join(d->tmp, name), *to = join(d->path, name);
    int rc = rename(from, to) != 0 ? errno : 0;
    free(from);
    free(to);
    return rc;
}

int cs_outdir_commit(cs_outdir_t *d, cs_error_t *err)
{
    if (!d)
        return CS_OK;
    if (rename(d->tmp, d->path) == 0) {
        outdir_free(d);
        return CS_OK;
    }
    /* the target is a folder with files in it already: keep them, move the
     * new ones in (each rename whole) */
    int e = errno, rc = CS_OK;
    if (e == ENOTEMPTY || e == EEXIST) {
        if ((e = outdir_each(d, move_entry)) != 0)
            rc = io_fail(d->what, d->path, "cannot move the files into it", e > 0 ? e : errno,
                         err);
    } else {
        rc = io_fail(d->what, d->path, "cannot create the folder", e, err);
    }
    cs_outdir_abort(d);
    return rc;
}

void cs_outdir_abort(cs_outdir_t *d)
{
    if (!d)
        return;
    outdir_each(d, remove_entry);
    rmdir(d->tmp);
    outdir_free(d);
}
