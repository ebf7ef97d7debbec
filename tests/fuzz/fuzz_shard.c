/*
 * fuzz_shard.c - libFuzzer target: shard files of `--shard I/N` as
 * `collsim merge` reads them (src/app/shard.c over the records of
 * src/app/rec.c).  A file either is refused with a message or gives a set
 * whose command line has at least one word and whose every point has a
 * record; and every record the reader accepted parses again from its own
 * bytes to the same bytes (the form is its own canonical form).
 */
#include "fuzz_util.h"
#include "app/rec.h"
#include "app/shard.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    cs_shard_set_t *s = NULL;
    cs_error_t err = {0};
    if (cs_shard_set_read(&path, 1, &s, &err) == CS_OK) {
        int argc;
        char **argv = cs_shard_set_argv(s, &argc);
        if (argc < 1 || !argv[0] || argv[argc]) {
            fprintf(stderr, "an accepted shard without a command line\n");
            abort();
        }
        cs_shard_set_free(s);
    } else if (!err.msg[0]) {
        fprintf(stderr, "a refusal without a message\n");
        abort();
    }
    /* the record form alone: accepted bytes round-trip */
    cs_rec_t *r = NULL, *again = NULL;
    if (cs_rec_parse((const char *)data, size, &r, &err) == CS_OK) {
        size_t n, m;
        const char *b = cs_rec_bytes(r, &n);
        if (cs_rec_parse(b, n, &again, &err) != CS_OK || n != size ||
            memcmp(cs_rec_bytes(again, &m), data, size) != 0) {
            fprintf(stderr, "a record that does not read back\n");
            abort();
        }
        cs_rec_free(again);
        cs_rec_free(r);
    }
    return 0;
}
