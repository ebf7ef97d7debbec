/*
 * par.c - the points of a command run in this process, in worker processes
 * (--jobs N), over MPI (mpi.c) or one slice into a shard file (shard.c);
 * par.h says what each gives the command.
 *
 * --jobs: fork + pipes rather than threads.  A worker is a copy of the
 * process made after the command line was read, so it knows the points
 * already; it gets a point's number on its task pipe, runs it, and sends
 * the record back (rec.h) on its result pipe, a 4-byte point number and a
 * 4-byte length first.  One point at a time per worker, handed out as
 * workers come free (points differ in cost by orders of magnitude, a
 * static split would leave a worker idle); the parent keeps the records
 * that come early until the ones before them arrive, and gives them to the
 * command's take in the serial order.  Processes rather than threads so
 * that a crash or an out-of-memory kill costs one worker (named in the
 * error) and so that the same records serve the pipes, MPI and the shard
 * files.  A signal stops the workers (SIGKILL: they hold no output; the
 * parent's outputs are whole-or-absent files it does not commit).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "app/mpi.h"
#include "app/par.h"
#include "app/shard.h"

#define PAR_MAX_JOBS 256
#define PAR_MAX_RECORD (256u << 20) /* a point's record: a CSV row and a JSON run */

/* ---- options ----------------------------------------------------------------- */

/* "--name" or "--name=V" at argv[i]: 1 with *val (NULL for "--name"), else 0. */
static int par_opt(char *arg, const char *name, const char **val)
{
    size_t n = strlen(name);
    if (strncmp(arg, "--", 2) || strncmp(arg + 2, name, n))
        return 0;
    if (arg[2 + n] == '\0') {
        *val = NULL;
        return 1;
    }
    if (arg[2 + n] == '=') {
        *val = arg + 3 + n;
        return 1;
    }
    return 0;
}

static long par_number(const char *cmd, const char *opt, const char *text, long lo, long hi)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (!*text || *end || errno || v < lo || v > hi)
        cs_app_usage_error(cmd, "%s '%s': need a whole number from %ld to %ld", opt, text, lo,
                           hi);
    return v;
}

void cs_par_args(const char *cmd, int *argc, char **argv, int flags, cs_par_t *par)
{
    int out = 1, n = *argc;
    memset(par, 0, sizeof *par);
    par->jobs = 1;
    par->cmd = cmd;
    for (int i = 1; i < n; i++) {
        const char *val;
        int which = -1;
        static const char *const names[] = {"jobs", "shard-file", "shard", "mpi"};
        if (!strcmp(argv[i], "--")) { /* operands from here on */
            while (i < n)
                argv[out++] = argv[i++];
            break;
        }
        for (int k = 0; k < 4 && which < 0; k++)
            if (par_opt(argv[i], names[k], &val))
                which = k;
        if (which < 0) {
            argv[out++] = argv[i];
            continue;
        }
        if (which == 3) {
            if (val)
                cs_app_usage_error(cmd, "--mpi takes no value");
            par->mpi = 1;
            continue;
        }
        if (!val) {
            if (i + 1 >= n)
                cs_app_usage_error(cmd, "option '--%s' requires an argument", names[which]);
            val = argv[++i];
        }
        if (which == 0) {
            par->jobs = (int)par_number(cmd, "--jobs", val, 0, PAR_MAX_JOBS);
            if (par->jobs == 0) { /* one per core */
                long nc = sysconf(_SC_NPROCESSORS_ONLN);
                par->jobs = nc < 1 ? 1 : nc > PAR_MAX_JOBS ? PAR_MAX_JOBS : (int)nc;
            }
        } else if (which == 1) {
            par->shard_file = val;
        } else {
            char *slash = strchr(val, '/'), head[32];
            size_t hl = slash ? (size_t)(slash - val) : 0;
            if (!slash || hl == 0 || hl >= sizeof head)
                cs_app_usage_error(cmd, "--shard '%s': give I/N, the I-th of N slices (1/4)", val);
            memcpy(head, val, hl);
            head[hl] = '\0';
            par->nshards = (int)par_number(cmd, "--shard N", slash + 1, 1, 1000000);
            par->shard = (int)par_number(cmd, "--shard I", head, 1, par->nshards);
        }
    }
    argv[out] = NULL;
    *argc = out;
    if (par->nshards && !(flags & CS_PAR_SHARD))
        cs_app_usage_error(cmd, "--shard: '%s' cannot be split into shards", cmd);
    if (par->shard_file && !par->nshards)
        cs_app_usage_error(cmd, "--shard-file names the file of a --shard run: add --shard I/N");
    if (par->mpi && par->nshards)
        cs_app_usage_error(cmd, "--mpi and --shard: give one (an MPI job runs every point)");
    if (par->mpi && par->jobs > 1)
        cs_app_usage_error(cmd, "--mpi and --jobs: give one (one process per rank)");
    if (par->nshards && !par->shard_file) {
        snprintf(par->shard_default, sizeof par->shard_default, "shard-%d-of-%d.shard",
                 par->shard, par->nshards);
        par->shard_file = par->shard_default;
    }
    /* a copy of the word list: the command's getopt permutes argv (operands
     * last), and the shard file keeps the words as typed */
    par->argc = out;
    par->argv = cs_malloc((size_t)(out + 1) * sizeof *par->argv);
    memcpy(par->argv, argv, (size_t)(out + 1) * sizeof *par->argv);
    /* only a shard needs it: it reads every input file the words name */
    if (par->nshards)
        cs_shard_identity(cmd, par->argc, par->argv, par->identity);
    if (par->mpi) {
#if CS_HAVE_MPI
        cs_error_t err;
        if (cs_mpi_init(&par->rank, &par->size, &err) != CS_OK)
            cs_app_usage_error(cmd, "--mpi: %s", err.msg);
#else
        cs_app_usage_error(cmd, "--mpi: this collsim was built without MPI (install "
                                "libopenmpi-dev and rebuild: meson setup -Dmpi=enabled)");
#endif
    }
}

void cs_par_destroy(cs_par_t *par)
{
    free(par->argv);
    par->argv = NULL;
#if CS_HAVE_MPI
    /* rank 0 that never handed out the points (an output it could not
     * open, a merge check): the other ranks wait for work and would wait
     * in MPI_Finalize's fence for ever; told to stop first */
    if (par->mpi && par->rank == 0 && !par->mpi_done)
        cs_mpi_release(par->size);
    if (par->mpi)
        cs_mpi_finalize();
#endif
    par->mpi = 0;
}

void cs_par_help(FILE *f, int flags)
{
    fprintf(f,
            "\n"
            "Where the points run (docs/cluster.md; outputs byte-identical to a serial run):\n"
            "      --jobs N           N worker processes on this machine (0: one per core;\n"
            "                         default 1, this process)\n");
    if (flags & CS_PAR_SHARD)
        fprintf(f,
                "      --shard I/N        run only the I-th of N slices of the points and write\n"
                "                         their results to a shard file; 'collsim merge' joins\n"
                "                         the N shards into this command's outputs\n"
                "      --shard-file FILE  the shard file (default shard-I-of-N.shard)\n");
    fprintf(f, "      --mpi              spread the points over the ranks of an MPI job\n"
               "                         (mpirun -n K collsim ... --mpi); rank 0 writes%s\n",
#if CS_HAVE_MPI
            ""
#else
            " (not in this build)"
#endif
    );
}

int cs_par_writes(const cs_par_t *par)
{
    return !par->nshards && !(par->mpi && par->rank != 0);
}

/* ---- in this process ------------------------------------------------------------ */

static int par_serial(const cs_par_ops_t *ops, const int *list, int n, cs_par_sink_fn sink,
                      void *sctx, cs_error_t *err)
{
    for (int k = 0; k < n; k++) {
        int rc = sink(sctx, list[k], ops->run(ops->ctx, list[k], 0), err);
        if (rc != CS_OK)
            return rc;
    }
    return CS_OK;
}

/* ---- worker processes ------------------------------------------------------------ */

typedef struct par_worker {
    pid_t pid;
    int to, from; /* task pipe (write end), result pipe (read end) */
    int busy;     /* a point is out */
    int points;   /* records it sent */
    double cpu;   /* its user + system seconds, once reaped */
} par_worker_t;

static int par_write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Sends point position k to a worker: 0, or -1 when the worker is gone.
 * SIGPIPE is blocked for this write only (and a pending one taken back), so
 * that a dead worker is a status here while the command's own writes keep
 * the serial run's behaviour (`collsim sweep --csv - | head` ends by
 * SIGPIPE as it always did). */
static int par_send(int fd, int32_t k)
{
    sigset_t pipe_set, old;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    sigprocmask(SIG_BLOCK, &pipe_set, &old);
    int r = par_write_all(fd, &k, sizeof k);
    if (r) {
        struct timespec none = {0, 0};
        sigtimedwait(&pipe_set, NULL, &none);
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    return r;
}

/* 0 with n bytes, 1 at end of file before any, -1 on an error or a short read */
static int par_read_all(int fd, void *buf, size_t n)
{
    char *p = buf;
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, p + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return got == 0 && r == 0 ? 1 : -1;
        got += (size_t)r;
    }
    return 0;
}

/* A worker: points' positions in list on fd `in`, records on `out`, until
 * -1 or the end of the pipe.  Never returns. */
static void par_worker_loop(const cs_par_ops_t *ops, const int *list, int n, int in, int out)
{
    int32_t k;
    while (par_read_all(in, &k, sizeof k) == 0 && k >= 0 && k < n) {
        cs_rec_t *rec = ops->run(ops->ctx, list[k], 1);
        size_t len;
        const char *b = cs_rec_bytes(rec, &len);
        uint32_t head[2] = {(uint32_t)k, (uint32_t)len};
        if (len > PAR_MAX_RECORD || par_write_all(out, head, sizeof head) ||
            par_write_all(out, b, len))
            _exit(1);
        cs_rec_free(rec);
    }
    _exit(0); /* no atexit handlers, no stdio buffers of the parent flushed twice */
}

/* Why worker w ended: "exit status 1", "killed by signal 9". */
static void par_reap(par_worker_t *w, char *why, size_t len)
{
    int st = 0;
    struct rusage ru;
    snprintf(why, len, "ended");
    if (w->pid > 0 && wait4(w->pid, &st, 0, &ru) == w->pid) {
        w->cpu = (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
                 (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
        if (WIFSIGNALED(st))
            snprintf(why, len, "killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
        else if (WIFEXITED(st))
            snprintf(why, len, "exit status %d", WEXITSTATUS(st));
    }
    w->pid = 0;
}

static void par_progress(cs_app_progress_t *p, int done, int n, int nw)
{
    char detail[96];
    if (!p)
        return;
    snprintf(detail, sizeof detail, "%d/%d points done, %d worker%s", done, n, nw,
             nw == 1 ? "" : "s");
    cs_app_progress_show(p, (double)done / n, detail);
}

static int par_pool(const cs_par_ops_t *ops, int jobs, const int *list, const int *order,
                    int n, cs_par_sink_fn sink, void *sctx, cs_app_progress_t *progress,
                    cs_error_t *err)
{
    int nw = jobs < n ? jobs : n, rc = CS_OK, next = 0, taken = 0, done = 0;
    par_worker_t *w = cs_calloc((size_t)nw, sizeof *w);
    cs_rec_t **got = cs_calloc((size_t)n, sizeof *got);
    int *owner = cs_malloc((size_t)nw * sizeof *owner); /* the point each has */
    struct pollfd *pfd = cs_malloc((size_t)nw * sizeof *pfd);
    fflush(NULL); /* nothing buffered is written twice by a child */
    for (int i = 0; i < nw; i++)
        w[i].to = w[i].from = -1; /* not started: nothing to close */
    for (int i = 0; i < nw; i++) {
        int task[2], res[2];
        if (pipe(task) || (pipe(res) && (close(task[0]), close(task[1]), 1))) {
            rc = cs_error_set(err, CS_ERR_IO, "--jobs: cannot make a pipe: %s", strerror(errno));
            break;
        }
        pid_t pid = fork();
        if (pid < 0) {
            rc = cs_error_set(err, CS_ERR_IO, "--jobs: cannot start worker %d: %s", i + 1,
                              strerror(errno));
            close(task[0]), close(task[1]), close(res[0]), close(res[1]);
            break;
        }
        if (pid == 0) {
#ifdef __linux__
            prctl(PR_SET_PDEATHSIG, SIGKILL); /* no orphan runs on if the parent dies */
#endif
            for (int j = 0; j < i; j++) /* the other workers' pipes are not ours */
                close(w[j].to), close(w[j].from);
            close(task[1]);
            close(res[0]);
            par_worker_loop(ops, list, n, task[0], res[1]);
        }
        close(task[0]);
        close(res[1]);
        w[i].pid = pid;
        w[i].to = task[1];
        w[i].from = res[0];
    }
    /* every worker a point to start with */
    for (int i = 0; rc == CS_OK && i < nw; i++) {
        int32_t k = order[next++];
        owner[i] = k;
        w[i].busy = 1;
        if (par_send(w[i].to, k))
            rc = cs_error_set(err, CS_ERR_IO, "--jobs: worker %d (pid %d) takes no work",
                              i + 1, (int)w[i].pid);
    }
    while (rc == CS_OK && taken < n) {
        if ((rc = cs_app_check_interrupt(err)))
            break;
        int np = 0;
        for (int i = 0; i < nw; i++) {
            pfd[i].fd = w[i].busy ? w[i].from : -1; /* -1: poll skips it */
            pfd[i].events = POLLIN;
            pfd[i].revents = 0;
            np += w[i].busy;
        }
        if (np == 0) { /* cannot happen: a point not taken is out or in got */
            rc = cs_error_set(err, CS_ERR_INTERNAL, "--jobs: no worker busy, %d points left",
                              n - taken);
            break;
        }
        if (poll(pfd, (nfds_t)nw, 100) < 0 && errno != EINTR) {
            rc = cs_error_set(err, CS_ERR_IO, "--jobs: poll: %s", strerror(errno));
            break;
        }
        for (int i = 0; rc == CS_OK && i < nw; i++) {
            if (!w[i].busy || !(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            uint32_t head[2];
            char *buf = NULL, why[96];
            cs_rec_t *rec = NULL;
            cs_error_t e;
            int r = par_read_all(w[i].from, head, sizeof head);
            if (r == 0 && (head[0] != (uint32_t)owner[i] || head[1] > PAR_MAX_RECORD))
                r = -1;
            if (r == 0) {
                buf = cs_malloc(head[1] + 1u);
                r = par_read_all(w[i].from, buf, head[1]) < 0 ? -1 : 0;
            }
            if (r == 0 && cs_rec_parse(buf, head[1], &rec, &e) != CS_OK)
                r = -1;
            free(buf);
            if (r != 0) {
                close(w[i].to), close(w[i].from);
                w[i].to = w[i].from = -1;
                w[i].busy = 0;
                par_reap(&w[i], why, sizeof why);
                rc = cs_error_set(err, CS_ERR_RUNTIME,
                                  "--jobs: worker %d %s without the result of point %d of %d",
                                  i + 1, why, list[owner[i]] + 1, n);
                break;
            }
            got[owner[i]] = rec;
            w[i].busy = 0;
            w[i].points++;
            done++;
            if (next < n) {
                int32_t k = order[next++];
                owner[i] = k;
                w[i].busy = 1;
                if (par_send(w[i].to, k))
                    rc = cs_error_set(err, CS_ERR_IO, "--jobs: worker %d takes no work", i + 1);
            }
        }
        /* the serial order: as far as the records are there */
        while (rc == CS_OK && taken < n && got[taken]) {
            rc = sink(sctx, list[taken], got[taken], err);
            got[taken++] = NULL;
        }
        par_progress(progress, done, n, nw);
    }
    /* a worker still busy is stopped (interrupted, or its point is no
     * longer wanted); an idle one is told there is no more work */
    for (int i = 0; i < nw; i++) {
        char why[96];
        if (w[i].pid > 0 && w[i].busy)
            kill(w[i].pid, SIGKILL);
        else if (w[i].to >= 0)
            par_send(w[i].to, -1);
        if (w[i].to >= 0)
            close(w[i].to), close(w[i].from);
        par_reap(&w[i], why, sizeof why);
    }
    /* how the work fell on the workers (unless --quiet): the balance that
     * bounds the speed-up, whatever else the machine runs meanwhile */
    if (rc == CS_OK && progress && progress->on && !progress->quiet) {
        char line[512];
        size_t at = 0;
        for (int i = 0; i < nw && at < sizeof line - 64; i++)
            at += (size_t)snprintf(line + at, sizeof line - at, "%s%.2f s (%d)",
                                   i ? " + " : "", w[i].cpu, w[i].points);
        cs_app_progress_done(progress);
        fprintf(stderr, "collsim: %s: %d points on %d workers, CPU seconds (points): %s\n",
                progress->what, n, nw, line);
    }
    for (int k = 0; k < n; k++)
        cs_rec_free(got[k]);
    free(got);
    free(owner);
    free(pfd);
    free(w);
    return rc;
}

/* ---- where the records go ---------------------------------------------------------- */

/* The command writes: take, in order. */
static int par_take(void *ctx, int i, cs_rec_t *rec, cs_error_t *err)
{
    const cs_par_ops_t *ops = ctx;
    int rc = ops->take(ops->ctx, i, rec, err);
    cs_rec_free(rec);
    return rc;
}

/* A shard run: kept for the shard file; a failure ends it when the
 * command stops at one. */
typedef struct par_keep {
    const cs_par_ops_t *ops;
    cs_rec_t **recs;
} par_keep_t;

static int par_keep(void *ctx, int i, cs_rec_t *rec, cs_error_t *err)
{
    par_keep_t *k = ctx;
    int rc = (int)cs_rec_int(rec, "rc", CS_ERR_INTERNAL);
    if (rc != CS_OK && k->ops->stop_on_failure) {
        char msg[CS_ERROR_MSG_MAX];
        cs_rec_copy(rec, "err", msg, sizeof msg);
        cs_rec_free(rec);
        return cs_error_set(err, rc, "point %d: %s", i + 1, msg);
    }
    k->recs[i] = rec;
    return CS_OK;
}

/* The order in which points are handed out (positions in list): the
 * costliest first when the command estimates costs (the longest-processing-
 * time rule: the last point to start is then a short one, and no worker
 * waits long for the others at the end), else the serial order. */
typedef struct par_cost {
    double cost;
    int k;
} par_cost_t;

static int par_cost_cmp(const void *a, const void *b)
{
    const par_cost_t *x = a, *y = b;
    if (x->cost != y->cost)
        return x->cost > y->cost ? -1 : 1;
    return (x->k > y->k) - (x->k < y->k);
}

static int *par_order(const cs_par_ops_t *ops, const int *list, int n)
{
    int *order = cs_malloc((size_t)(n > 0 ? n : 1) * sizeof *order);
    if (!ops->cost) {
        for (int k = 0; k < n; k++)
            order[k] = k;
        return order;
    }
    par_cost_t *c = cs_malloc((size_t)(n > 0 ? n : 1) * sizeof *c);
    for (int k = 0; k < n; k++)
        c[k] = (par_cost_t){ops->cost(ops->ctx, list[k]), k};
    qsort(c, (size_t)n, sizeof *c, par_cost_cmp);
    for (int k = 0; k < n; k++)
        order[k] = c[k].k;
    free(c);
    return order;
}

static int par_source(cs_par_t *par, const cs_par_ops_t *ops, const int *list, int n,
                      cs_par_sink_fn sink, void *sctx, cs_app_progress_t *progress,
                      cs_error_t *err)
{
    int rc;
    if (!(par->mpi || (par->jobs > 1 && n > 1)))
        return par_serial(ops, list, n, sink, sctx, err);
    int *order = par_order(ops, list, n);
#if CS_HAVE_MPI
    if (par->mpi) {
        rc = par->rank == 0
                 ? cs_mpi_master(ops, list, order, n, sink, sctx, progress, par->size, err)
                 : cs_mpi_serve(ops, list, n, err);
        par->mpi_done = 1;
    } else
#endif
        rc = par_pool(ops, par->jobs, list, order, n, sink, sctx, progress, err);
    free(order);
    return rc;
}

void cs_par_set_merged(cs_par_t *par, const cs_shard_set_t *merged)
{
    par->merged = merged;
    if (merged)
        cs_shard_identity(par->cmd, par->argc, par->argv, par->identity);
}

int cs_par_check(const cs_par_t *par, int npoints, cs_error_t *err)
{
    return par->merged ? cs_shard_set_check(par->merged, par, npoints, err) : CS_OK;
}

int cs_par_run(cs_par_t *par, const cs_par_ops_t *ops, int npoints,
               cs_app_progress_t *progress, cs_error_t *err)
{
    int rc = CS_OK, n = 0;
    if (par->merged)
        return cs_shard_set_take(par->merged, par, npoints, ops, err);
    int *list = cs_malloc((size_t)(npoints > 0 ? npoints : 1) * sizeof *list);
    /* a shard: every N-th point from the I-th, so that each slice gets its
     * share of the small and the large sizes */
    for (int i = 0; i < npoints; i++)
        if (!par->nshards || i % par->nshards == par->shard - 1)
            list[n++] = i;
    if (!par->nshards) {
        rc = par_source(par, ops, list, n, par_take, (void *)ops, progress, err);
    } else {
        par_keep_t keep = {ops, cs_calloc((size_t)(npoints > 0 ? npoints : 1), sizeof(cs_rec_t *))};
        rc = par_source(par, ops, list, n, par_keep, &keep, progress, err);
        if (rc == CS_OK)
            rc = cs_shard_write(par, npoints, keep.recs, err);
        if (rc == CS_OK && progress) { /* said once here for every command */
            cs_app_progress_done(progress);
            cs_app_wrote(progress, par->shard_file, "shard");
        }
        for (int i = 0; i < npoints; i++)
            cs_rec_free(keep.recs[i]);
        free(keep.recs);
    }
    free(list);
    return rc;
}
