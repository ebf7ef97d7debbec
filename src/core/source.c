/*
 * source.c - a reader's input as a path or as bytes in memory, the named
 * files a request carries, and a spec's file keys resolved among them or
 * as paths (source.h, issue 29).
 */
#include "core/source.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct cs_files {
    cs_source_t f[CS_FILES_MAX];
    int n;
};

/* A directory opens and maps as nothing useful: libxml2 printed a stray
 * line and then "Document is empty", the edge-list reader read no line.
 * Said before any reader sees it. */
static int source_check_path(const char *path, cs_error_t *err)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return cs_error_set(err, CS_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    if (S_ISDIR(st.st_mode))
        return cs_error_set(err, CS_ERR_IO, "%s: cannot open: it is a directory, not a file",
                            path);
    return CS_OK;
}

int cs_source_lines(const cs_source_t *src, cs_lines_t **out, cs_error_t *err)
{
    int rc;
    *out = NULL;
    if (src->data) {
        *out = cs_lines_open_string(src->data, src->len);
        return CS_OK;
    }
    if ((rc = source_check_path(src->name, err)))
        return rc;
    if (cs_lines_open_file(src->name, out) != CS_OK)
        return cs_error_set(err, CS_ERR_IO, "%s: cannot open: %s", src->name, strerror(errno));
    return CS_OK;
}

int cs_source_fopen(const cs_source_t *src, FILE **out, cs_error_t *err)
{
    int rc;
    *out = NULL;
    if (src->data) {
        /* fmemopen of zero bytes fails on older glibc: an empty file reads
         * as one from "" */
        *out = src->len ? fmemopen((void *)src->data, src->len, "r") : fmemopen((void *)"", 1, "r");
        if (!*out)
            return cs_error_set(err, CS_ERR_OOM, "%s: out of memory", src->name);
        if (!src->len)
            (void)fgetc(*out); /* at the end */
        return CS_OK;
    }
    if ((rc = source_check_path(src->name, err)))
        return rc;
    if (!(*out = fopen(src->name, "r")))
        return cs_error_set(err, CS_ERR_IO, "%s: cannot open: %s", src->name, strerror(errno));
    return CS_OK;
}

/* ---- named files ------------------------------------------------------------- */

cs_files_t *cs_files_new(void)
{
    return cs_calloc(1, sizeof(cs_files_t));
}

void cs_files_free(cs_files_t *fs)
{
    if (!fs)
        return;
    for (int i = 0; i < fs->n; i++) {
        free((char *)fs->f[i].name);
        free((char *)fs->f[i].data);
    }
    free(fs);
}

int cs_files_check_name(const char *name, cs_error_t *err)
{
    size_t n = strlen(name);
    if (n == 0 || n > CS_FILES_NAME_MAX)
        return cs_error_set(err, CS_ERR_USAGE, "a file name has 1 to %d bytes (got %zu)",
                            CS_FILES_NAME_MAX, n);
    if (name[0] == '.')
        return cs_error_set(err, CS_ERR_USAGE, "file name \"%s\" starts with '.': a name is "
                            "a plain name, not a path", name);
    for (const char *c = name; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '.' || *c == '-' || *c == '_'))
            return cs_error_set(err, CS_ERR_USAGE, "file name \"%s\": only letters, digits, "
                                "'.', '-' and '_' (a name, not a path)", name);
    return CS_OK;
}

int cs_files_add(cs_files_t *fs, const char *name, const char *data, size_t len, cs_error_t *err)
{
    int rc;
    if ((rc = cs_files_check_name(name, err)))
        return rc;
    if (cs_files_find(fs, name))
        return cs_error_set(err, CS_ERR_USAGE, "file \"%s\" is given twice", name);
    if (fs->n == CS_FILES_MAX)
        return cs_error_set(err, CS_ERR_USAGE, "more than %d files", CS_FILES_MAX);
    char *copy = cs_malloc(len + 1);
    memcpy(copy, data, len);
    copy[len] = '\0';
    fs->f[fs->n].name = cs_strdup(name);
    fs->f[fs->n].data = copy;
    fs->f[fs->n].len = len;
    fs->n++;
    return CS_OK;
}

int cs_files_count(const cs_files_t *fs)
{
    return fs ? fs->n : 0;
}

const cs_source_t *cs_files_at(const cs_files_t *fs, int i)
{
    return &fs->f[i];
}

const cs_source_t *cs_files_find(const cs_files_t *fs, const char *name)
{
    for (int i = 0; fs && i < fs->n; i++)
        if (!strcmp(fs->f[i].name, name))
            return &fs->f[i];
    return NULL;
}

/* ---- a spec's file keys ----------------------------------------------------- */

int cs_source_from_spec(cs_spec_t *spec, const char *key, cs_source_t *out, cs_error_t *err)
{
    const char *v = cs_spec_get(spec, key);
    memset(out, 0, sizeof *out);
    if (!v)
        return CS_OK;
    if (!spec->files) {
        out->name = v;
        return CS_OK;
    }
    const cs_source_t *f = cs_files_find(spec->files, v);
    if (!f)
        return cs_error_set(err, CS_ERR_USAGE, "key '%s' names \"%s\", which is none of the "
                            "request's files: a spec here names a file of \"files\", never a "
                            "path", key, v);
    *out = *f;
    return CS_OK;
}

int cs_source_output_from_spec(cs_spec_t *spec, const char *key, const char **path,
                               cs_error_t *err)
{
    *path = cs_spec_get(spec, key);
    if (*path && spec->files) {
        *path = NULL;
        return cs_error_set(err, CS_ERR_USAGE, "key '%s' writes a file, which a request "
                            "cannot ask for", key);
    }
    return CS_OK;
}
