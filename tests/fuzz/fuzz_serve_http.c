/*
 * fuzz_serve_http.c - libFuzzer target: raw bytes as an HTTP request to
 * `collsim serve`'s routes (src/app/serve_http.c) through libevent's evhttp,
 * as the server sets it up (limits, methods), on a loopback listener made
 * once, which answers to "Host: x" (as --allow-host x).  No worker runs
 * jobs (--jobs 0 here): a POST queues at most a few and the rest are
 * refused, so every input is cheap; figures and results answer 409.  Each input is written on a new connection and the loop runs
 * without blocking until the connection has gone quiet.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/thread.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "fuzz_util.h"
#include "app/serve.h"

static struct event_base *base;
static struct sockaddr_in where;

static void fuzz_serve_setup(void)
{
    static cs_serve_t *s;
    static char tmp[] = "/tmp/collsim-fuzz-serve-XXXXXX";
    cs_serve_limits_t lim = {.jobs = 0, .max_queue = 4, .max_ranks = 4096,
                             .max_nodes = 1 << 20, .max_seconds = 1, .grace = 1,
                             .max_body = 4096, .keep = 1, .cache_jobs = 4,
                             .cache_bytes = 1 << 20};
    cs_error_t err;
    evthread_use_pthreads();
    base = event_base_new();
    struct evhttp *http = evhttp_new(base);
    if (!base || !http || !mkdtemp(tmp) || cs_serve_new(&lim, base, tmp, &s, &err))
        abort();
    evhttp_set_max_body_size(http, (ev_ssize_t)(lim.max_body + CS_SERVE_BODY_SLACK));
    evhttp_set_max_headers_size(http, 16384);
    evhttp_set_timeout(http, 1);
    evhttp_set_allowed_methods(http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD |
                                         EVHTTP_REQ_DELETE | EVHTTP_REQ_PUT |
                                         EVHTTP_REQ_PATCH | EVHTTP_REQ_OPTIONS);
    struct evhttp_bound_socket *sock = evhttp_bind_socket_with_handle(http, "127.0.0.1", 0);
    socklen_t sl = sizeof where;
    if (!sock || getsockname(evhttp_bound_socket_get_fd(sock), (struct sockaddr *)&where, &sl))
        abort();
    /* the corpus's requests say "Host: x" (and Origin http://x) to reach
     * the routes; any other Host, Origin or Content-Type is refused before
     * them, which the fuzzer reaches too */
    static const char *const allow[] = {"x"};
    cs_serve_site_t site = {"127.0.0.1", ntohs(where.sin_port), allow, 1};
    if (!cs_serve_http_new(http, s, &lim, &site, fopen("/dev/null", "w")))
        abort();
}

/* Runs the loop without blocking and reads what the server answered, until
 * nothing moves for a few rounds; returns 1 when the server closed. */
static int fuzz_serve_pump(int fd)
{
    char buf[4096];
    int idle = 0, closed = 0;
    while (idle < 4 && !closed) {
        int moved = 0;
        event_base_loop(base, EVLOOP_NONBLOCK);
        ssize_t n = -1;
        while (fd >= 0 && (n = recv(fd, buf, sizeof buf, MSG_DONTWAIT)) != 0) {
            if (n < 0) {
                if (errno != EAGAIN && errno != EWOULDBLOCK)
                    closed = 1;
                break;
            }
            moved = 1;
        }
        if (n == 0)
            closed = 1;
        idle = moved ? 0 : idle + 1;
    }
    return closed;
}

/* A new connection to the server.  Each input's connection ends in
 * TIME_WAIT on this side (it sends the first FIN), and a campaign makes
 * 2,500 a second: after 3.6 M of them one connect failed and the harness
 * aborted (the input alone passes; 12,000 sockets sat in TIME_WAIT after
 * 20,000 runs, so most likely no local port was free: EADDRNOTAVAIL).  Such
 * a connect (or EADDRINUSE: a 4-tuple still in TIME_WAIT) is retried once
 * the kernel can reuse a port; another failure says its errno and aborts. */
static int fuzz_serve_connect(void)
{
    static unsigned n;
    for (int tries = 0; tries < 300; tries++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0)
            abort();
        /* Once most inputs were refused before the routes (a Host other
         * than "x"), a campaign made 4,000-8,000 connections a second and
         * ran out of ports within 30 s, retries included.  Each connection
         * now comes from one of 250 loopback addresses in turn
         * (127.0.0.2-251, all of 127/8 is loopback), each with its own
         * ports: a port comes back after 250 times as many connections. */
        struct sockaddr_in from = {.sin_family = AF_INET};
        from.sin_addr.s_addr = htonl(0x7f000002u + n++ % 250);
        int one = 1;
        setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
        if (bind(fd, (struct sockaddr *)&from, sizeof from) == 0 &&
            connect(fd, (struct sockaddr *)&where, sizeof where) == 0)
            return fd;
        int e = errno;
        close(fd);
        /* EINTR: libFuzzer's timer signal (-timeout, every second) can
         * land in connect; a 30-minute campaign stopped on it after 277,000
         * runs.  The socket is dropped and a new one tried. */
        if (e != EADDRNOTAVAIL && e != EAGAIN && e != EADDRINUSE && e != EINTR) {
            fprintf(stderr, "fuzz_serve_http: connect: %s\n", strerror(e));
            abort();
        }
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!base)
        fuzz_serve_setup();
    int fd = fuzz_serve_connect();
    /* the kernel's buffers hold the few KB -max_len allows */
    for (size_t off = 0; off < size;) {
        ssize_t n = send(fd, data + off, size - off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
            break; /* the server closed (a refused request) */
        if (n <= 0) {
            fuzz_serve_pump(-1);
            continue;
        }
        off += (size_t)n;
    }
    shutdown(fd, SHUT_WR);
    fuzz_serve_pump(fd);
    close(fd);
    /* let evhttp see the close and free the connection */
    fuzz_serve_pump(-1);
    return 0;
}
