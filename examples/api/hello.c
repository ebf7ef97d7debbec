/*
 * hello.c - the smallest program on libcollsim (docs/api-c.md): one
 * allreduce of 1 MiB on two machines, their finish times in seconds, then
 * an error as the library reports it.
 *
 *   cc hello.c $(pkg-config --cflags --libs collsim) -o hello && ./hello
 */
#include <collsim/collsim.h>

#include <stdio.h>

/* Runs allreduce/ring of 1 MiB on machine `spec`; prints its time. */
static int allreduce_on(const char *spec)
{
    collsim_request *r = collsim_request_new();
    collsim_result *res = NULL;
    collsim_error err;
    int rc;
    if (!r)
        return COLLSIM_ERR_OOM;
    if ((rc = collsim_request_set(r, "machine", spec, &err)) == COLLSIM_OK &&
        (rc = collsim_request_set(r, "coll", "allreduce", &err)) == COLLSIM_OK &&
        (rc = collsim_request_set(r, "algo", "ring", &err)) == COLLSIM_OK &&
        (rc = collsim_request_set(r, "bytes", "1MiB", &err)) == COLLSIM_OK &&
        (rc = collsim_request_set(r, "validate", "1", &err)) == COLLSIM_OK)
        rc = collsim_run(r, &res, &err);
    if (rc == COLLSIM_OK)
        printf("%-28s %.9f s (%lld ticks, validated %d)\n", spec, collsim_result_seconds(res),
               (long long)collsim_result_ticks(res), collsim_result_validated(res));
    else
        printf("%-28s error %s: %s\n", spec, collsim_status_name(rc), err.message);
    collsim_result_free(res);
    collsim_request_free(r);
    return rc;
}

int main(void)
{
    int bad = 0;
    printf("libcollsim %s\n", collsim_version());
    bad |= allreduce_on("alphabeta:topo=ring,p=8") != COLLSIM_OK;
    bad |= allreduce_on("cerebras:rows=4,cols=4") != COLLSIM_OK;
    /* an error: the message names the spec key */
    if (allreduce_on("alphabeta:topo=ring,p=8,alfa=2us") != COLLSIM_ERR_USAGE)
        bad = 1;
    return bad;
}
