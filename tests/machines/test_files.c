/*
 * test_files.c - spec keys that name files (issue 29): every machine type
 * declares them in its table (machines/machine.h, file_keys), a spec whose
 * files come from a request (cs_machine_new_in) reads only those files and
 * writes none, and core/source.h's named files refuse names that are paths.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/source.h"
#include "machines/machine.h"

static int in_keys(const cs_machine_type_t *t, const char *key)
{
    for (int i = 0; t->keys[i]; i++)
        if (!strcmp(t->keys[i], key))
            return 1;
    return 0;
}

/* The walk the service relies on: whatever the type, a key that names a
 * file is refused unless it names one of the request's files, and a key
 * that writes one always. */
Test(files, every_type_refuses_its_file_keys)
{
    int n, seen = 0;
    const cs_machine_type_t *const *types = cs_machine_types(&n);
    cs_files_t *fs = cs_files_new();
    cs_error_t err;
    cr_assert_eq(cs_files_add(fs, "given.txt", "x", 1, &err), CS_OK);
    for (int i = 0; i < n; i++) {
        const cs_machine_type_t *t = types[i];
        for (const cs_filekey_t *k = t->file_keys; k && k->key; k++, seen++) {
            char spec[256];
            const char *key = NULL;
            cr_assert(in_keys(t, k->key), "%s: file key '%s' is not one of its keys", t->name,
                      k->key);
            cr_assert_eq(cs_machine_file_key(t, k->key), (int)k->mode);
            snprintf(spec, sizeof spec, "%s:%s=/etc/passwd", t->name, k->key);
            cr_assert_eq(cs_machine_check_files(spec, fs, &key, &err), CS_ERR_USAGE, "%s", spec);
            cr_assert_str_eq(key, k->key);
            cr_assert(strstr(err.msg, k->key), "%s", err.msg);
            /* the same with the file given: a read key passes this check
             * (the spec may still lack keys the type needs), a write key not */
            snprintf(spec, sizeof spec, "%s:%s=given.txt", t->name, k->key);
            int rc = cs_machine_check_files(spec, fs, &key, &err);
            cr_assert_eq(rc, k->mode == CS_FILEKEY_WRITE ? CS_ERR_USAGE : CS_OK, "%s: %s", spec,
                         err.msg);
            /* and a spec building the machine refuses it too */
            cs_machine_t *m = NULL;
            snprintf(spec, sizeof spec, "%s:%s=/etc/passwd", t->name, k->key);
            cr_assert_neq(cs_machine_new_in(spec, &(cs_machine_env_t){fs, 0}, &m, &err), CS_OK,
                          "%s", spec);
            cr_assert_null(m);
        }
        /* a key that is no file key passes whatever its value */
        cr_assert_eq(cs_machine_file_key(t, "no-such-key"), 0);
    }
    cr_assert_geq(seen, 3, "net:file, groq:schedule, groq:dump at least");
    cs_files_free(fs);
}

Test(files, a_network_from_an_inline_file)
{
    const char *text = "switch s\na s 100Gbps\nb s 100Gbps\nc s 100Gbps\n";
    const char *bad = "switch s\na s 100Gbps\nb s fast\n";
    cs_files_t *fs = cs_files_new();
    cs_machine_t *m = NULL;
    cs_error_t err;
    cr_assert_eq(cs_files_add(fs, "three.edges", text, strlen(text), &err), CS_OK);
    cr_assert_eq(cs_files_add(fs, "bad.edges", bad, strlen(bad), &err), CS_OK);
    cs_machine_env_t env = {fs, 0};
    cr_assert_eq(cs_machine_new_in("net:file=three.edges", &env, &m, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(cs_machine_nodes(m), 3);
    cr_assert(strstr(m->spec, "file=three.edges"), "%s", m->spec);
    cs_machine_free(m);
    /* an error in the file names the request's name and line, nothing else */
    cr_assert_neq(cs_machine_new_in("net:file=bad.edges", &env, &m, &err), CS_OK);
    cr_assert(!strncmp(err.msg, "bad.edges:3:", 12), "%s", err.msg);
    /* the CLI's spelling of a path does not reach the file system */
    cr_assert_eq(cs_machine_new_in("net:file=/etc/hosts", &env, &m, &err), CS_ERR_USAGE);
    cr_assert(strstr(err.msg, "none of the request's files"), "%s", err.msg);
    cs_files_free(fs);
}

/* The node limit of the service (--max-nodes) counts what each type builds:
 * its example machine is built under a limit of exactly its node count,
 * and refused, before anything is built for it, one node below. */
Test(files, every_type_counts_its_nodes_before_building)
{
    int n;
    const cs_machine_type_t *const *types = cs_machine_types(&n);
    for (int i = 0; i < n; i++) {
        const cs_machine_type_t *t = types[i];
        cs_machine_t *m = NULL;
        cs_error_t err;
        cr_assert_eq(cs_machine_new(t->example, &m, &err), CS_OK, "%s: %s", t->example, err.msg);
        int64_t nodes = cs_topo_nodes(m->topo);
        cs_machine_free(m);
        cs_machine_env_t exact = {NULL, nodes}, below = {NULL, nodes - 1};
        cr_assert_eq(cs_machine_new_in(t->example, &exact, &m, &err), CS_OK, "%s: %s",
                     t->example, err.msg);
        cs_machine_free(m);
        m = NULL;
        cr_assert_eq(cs_machine_new_in(t->example, &below, &m, &err), CS_ERR_RANGE, "%s",
                     t->example);
        cr_assert_null(m);
        cr_assert(strstr(err.msg, "--max-nodes"), "%s", err.msg);
    }
}

Test(files, names_are_plain_names)
{
    static const char *const bad[] = {"", "..", ".hidden", "a/b", "/etc/passwd", "a b",
                                      "x\\y", "caf\xc3\xa9", NULL};
    static const char *const good[] = {"fattree.xml", "a", "net-1_2.graphml", "A.B.C", NULL};
    cs_error_t err;
    char longname[CS_FILES_NAME_MAX + 2];
    for (int i = 0; bad[i]; i++)
        cr_assert_eq(cs_files_check_name(bad[i], &err), CS_ERR_USAGE, "'%s'", bad[i]);
    for (int i = 0; good[i]; i++)
        cr_assert_eq(cs_files_check_name(good[i], &err), CS_OK, "'%s': %s", good[i], err.msg);
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    cr_assert_eq(cs_files_check_name(longname, &err), CS_ERR_USAGE);
    cs_files_t *fs = cs_files_new();
    cr_assert_eq(cs_files_add(fs, "a", "1", 1, &err), CS_OK);
    cr_assert_eq(cs_files_add(fs, "a", "2", 1, &err), CS_ERR_USAGE);
    cr_assert(strstr(err.msg, "twice"), "%s", err.msg);
    for (int i = 1; i < CS_FILES_MAX; i++) {
        char name[16];
        snprintf(name, sizeof name, "f%d", i);
        cr_assert_eq(cs_files_add(fs, name, "", 0, &err), CS_OK);
    }
    cr_assert_eq(cs_files_add(fs, "one-more", "", 0, &err), CS_ERR_USAGE);
    cr_assert_eq(cs_files_count(fs), CS_FILES_MAX);
    cr_assert_str_eq(cs_files_find(fs, "a")->data, "1");
    cs_files_free(fs);
}

Test(files, a_directory_is_said_to_be_one)
{
    cs_lines_t *l;
    FILE *f;
    cs_error_t err;
    cs_source_t dir = {.name = "/tmp"};
    cr_assert_eq(cs_source_lines(&dir, &l, &err), CS_ERR_IO);
    cr_assert(strstr(err.msg, "directory"), "%s", err.msg);
    cr_assert_eq(cs_source_fopen(&dir, &f, &err), CS_ERR_IO);
    cr_assert(strstr(err.msg, "directory"), "%s", err.msg);
    /* bytes in memory, empty ones too, read as they are */
    cs_source_t mem = {.name = "m", .data = "ab\ncd", .len = 5}, none = {.name = "e", .data = ""};
    char buf[8] = "";
    cr_assert_eq(cs_source_fopen(&mem, &f, &err), CS_OK);
    cr_assert_eq(fread(buf, 1, sizeof buf, f), 5);
    cr_assert_str_eq(buf, "ab\ncd");
    fclose(f);
    cr_assert_eq(cs_source_fopen(&none, &f, &err), CS_OK);
    cr_assert_eq(fgetc(f), EOF);
    fclose(f);
}
