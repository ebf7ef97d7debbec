/*
 * fuzz_goal.c - libFuzzer target: GOAL schedules (io/goal.c), read from a
 * file as `collsim run --program` does; a program read is written back and
 * must read again (the writer's round trip, io/goal.h).
 */
#include "fuzz_util.h"
#include "io/goal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cs_program_t *p = NULL, *q = NULL;
    cs_error_t err = {0};
    if (cs_goal_read_file(fuzz_file(data, size), &p, &err) != CS_OK)
        return 0;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f || cs_goal_write(p, f, &err) != CS_OK || fclose(f) != 0) {
        fprintf(stderr, "goal write failed: %s\n", err.msg);
        abort();
    }
    if (cs_goal_read_string(text, "<written>", &q, &err) != CS_OK) {
        fprintf(stderr, "written GOAL does not read back: %s\n%s\n", err.msg, text);
        abort();
    }
    free(text);
    cs_program_free(q);
    cs_program_free(p);
    return 0;
}
