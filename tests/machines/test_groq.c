/*
 * test_groq.c - the Groq Dragonfly machine (placeholder).
 */
#include <criterion/criterion.h>

#include "../coll/harness.h"
#include "machines/groq.h"

Test(groq, builds)
{
    cs_machine_t *m;
    cs_error_t err;
    cr_assert_eq(cs_machine_new("groq:nodes=1", &m, &err), CS_OK, "%s", err.msg);
    cs_machine_free(m);
}
