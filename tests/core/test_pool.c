/*
 * test_pool.c - the record pool (core/pool.h): records come back zeroed,
 * freed ones are reused last-freed first, append never reuses, and
 * indices survive growth.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "core/pool.h"

typedef struct rec {
    int64_t a, b;
} rec_t;

Test(pool, reuse_append_and_growth)
{
    cs_pool_t p;
    cs_pool_init(&p, sizeof(rec_t));
    enum { N = 1000 }; /* several growths past the first 256 */
    for (int32_t i = 0; i < N; i++) {
        cr_assert_eq(cs_pool_get(&p), i);
        ((rec_t *)cs_pool_at(&p, i))->a = i;
        ((rec_t *)cs_pool_at(&p, i))->b = -i;
    }
    for (int32_t i = 0; i < N; i++)
        cr_assert(((rec_t *)cs_pool_at(&p, i))->a == i && ((rec_t *)cs_pool_at(&p, i))->b == -i);
    cs_pool_put(&p, 7);
    cs_pool_put(&p, 500);
    cr_assert_eq(cs_pool_append(&p), N, "append takes a new slot even with free ones");
    cr_assert_eq(cs_pool_get(&p), 500, "the last freed comes back first");
    rec_t *r = cs_pool_at(&p, 500);
    cr_assert(r->a == 0 && r->b == 0, "a reused record is zeroed");
    cr_assert_eq(cs_pool_get(&p), 7);
    cr_assert_eq(cs_pool_get(&p), N + 1, "no free slot left: a new one");
    cr_assert_eq(p.used, N + 2);
    cs_pool_free(&p);
}
