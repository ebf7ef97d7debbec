/*
 * timeline.c - runs as Chrome trace event JSON for Perfetto (timeline.h).
 *
 * Steps: choose what fits the event budget (every rank, else every k-th
 * rank, else cut at a time), give each kept rank as many tracks as its
 * overlapping ops need (greedy interval partitioning: an op takes the
 * first track free at its start), then write metadata, slices, flows and
 * counters.  Slices are "X" (complete) events.  Flows are version-1 flow
 * events: "s" inside the send's slice and "f" with "bp":"e" inside the
 * recv's slice, both at the slice's middle, so that Perfetto binds them to
 * the enclosing slices whatever the order of events at equal times.
 * Counters ("C") carry a channel's busy share per time bucket, written
 * only when it changes.
 */
#include "io/timeline.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/outfile.h"
#include "core/units.h"
#include "io/result_json.h"

typedef struct tl_op {
    int32_t op;
    cs_tick_t start, end;
} tl_op_t;

typedef struct tl {
    FILE *f;
    const cs_machine_t *m;
    const cs_program_t *p;
    const cs_exec_result_t *r;
    double us;          /* microseconds per tick */
    int64_t events;
    int first;          /* no event written yet (no comma) */
} tl_t;

static void tl_begin_event(tl_t *t)
{
    fputs(t->first ? "\n" : ",\n", t->f);
    t->first = 0;
    t->events++;
}

static void tl_time(tl_t *t, const char *key, cs_tick_t ticks)
{
    fprintf(t->f, "\"%s\":%.6f", key, (double)ticks * t->us);
}

/* "send 1 KiB -> 6" and the like. */
static void op_name(const cs_program_t *p, int32_t id, char *buf, size_t len)
{
    const cs_op_t *o = cs_program_op(p, id);
    char b[32];
    cs_units_format_bytes(o->bytes, b, sizeof b);
    switch (o->kind) {
    case CS_OP_SEND: snprintf(buf, len, "send %s \xe2\x86\x92 %d", b, o->peer); break;
    case CS_OP_RECV:
        if (o->peer == CS_ANY)
            snprintf(buf, len, "recv %s \xe2\x86\x90 any", b);
        else
            snprintf(buf, len, "recv %s \xe2\x86\x90 %d", b, o->peer);
        break;
    case CS_OP_MCAST:
        snprintf(buf, len, "mcast %s \xe2\x86\x92 %d ranks", b, cs_program_npeers(p, o));
        break;
    default:
        if (o->bytes)
            snprintf(buf, len, "calc %s", b);
        else
            snprintf(buf, len, "calc");
        break;
    }
}

static const char *op_kind(const cs_op_t *o)
{
    static const char *const k[] = {"send", "recv", "mcast", "calc"};
    return o->kind <= CS_OP_CALC ? k[o->kind] : "op";
}

static int by_start(const void *a, const void *b)
{
    const tl_op_t *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->op < y->op ? -1 : x->op > y->op;
}

int cs_timeline_write(const char *path, const cs_machine_t *m, const cs_program_t *p,
                      const cs_exec_result_t *r, const cs_timeline_opts_t *o,
                      cs_timeline_info_t *info, cs_error_t *err)
{
    cs_timeline_info_t dummy;
    if (!r->ops)
        return cs_error_set(err, CS_ERR_INTERNAL,
                            "the timeline needs the op times (cs_exec_opts_t.record_op_times)");
    int nranks = cs_program_nranks(p);
    int32_t nops = cs_program_nops(p);
    int64_t max = o && o->max_events > 0 ? o->max_events : CS_TIMELINE_MAX_EVENTS;
    int ncount = !o || o->counters == 0 ? CS_TIMELINE_COUNTERS : o->counters < 0 ? 0 : o->counters;
    const cs_chanrec_t *rec = r->net ? cs_net_recorder(r->net) : NULL;
    int nb = cs_chanrec_count(rec);
    if (!info)
        info = &dummy;
    memset(info, 0, sizeof *info);
    info->ops_total = cs_program_nops_visible(p);
    /* Joins (core/program.h) are the executor's device, not the
     * algorithm's ops: not shown, and the ops named by their ids in the
     * program the joins stand for (cs_program_without_joins), the ids a
     * user sees in an export. */
    int32_t *shown_id = NULL;
    if (cs_program_njoins(p)) {
        shown_id = cs_malloc(((size_t)nops + 1) * sizeof *shown_id);
        for (int32_t i = 0, k = 0; i < nops; i++)
            shown_id[i] = cs_program_op(p, i)->join ? -1 : k++;
    }
    if (!rec || nb == 0)
        ncount = 0;

    /* the budget: counters first (at most a tenth of it), then slices and flows */
    int points = (nb < CS_TIMELINE_POINTS ? nb : CS_TIMELINE_POINTS) + 1;
    int64_t counter_events = (int64_t)ncount * points;
    if (counter_events > max / 10) {
        ncount = (int)((max / 10) / points);
        counter_events = (int64_t)ncount * points;
    }
    int64_t budget = max - counter_events - 2 * (int64_t)nranks - 8;
    if (budget < 16)
        budget = 16;
    int64_t *ops_of = cs_calloc((size_t)nranks + 1, sizeof *ops_of);
    int64_t done_ops = 0, flows_all = 0;
    for (int32_t i = 0; i < nops; i++)
        if (r->ops[i].start >= 0 && r->ops[i].end >= 0 && !cs_program_op(p, i)->join) {
            ops_of[cs_program_op(p, i)->rank]++;
            done_ops++;
        }
    for (int64_t i = 0; i < r->nmsgs; i++)
        flows_all += r->msgs[i].recv_op >= 0;
    int stride = 1;
    while (stride < nranks) {
        int64_t need = 0;
        for (int rk = 0; rk < nranks; rk += stride)
            need += ops_of[rk];
        /* flows between kept ranks: about a stride^2-th of them */
        need += 2 * flows_all / ((int64_t)stride * stride);
        if (need <= budget)
            break;
        stride++;
    }
    free(ops_of);

    /* the kept ops, by start time; cut when one rank alone is too much */
    tl_op_t *ops = cs_malloc(((size_t)done_ops + 1) * sizeof *ops);
    int64_t n = 0;
    for (int32_t i = 0; i < nops; i++) {
        const cs_op_t *op = cs_program_op(p, i);
        if (r->ops[i].start < 0 || r->ops[i].end < 0 || op->rank % stride || op->join)
            continue;
        ops[n++] = (tl_op_t){i, r->ops[i].start, r->ops[i].end};
    }
    qsort(ops, (size_t)n, sizeof *ops, by_start);
    uint8_t *kept = cs_calloc((size_t)nops + 1, 1);
    int64_t flows_kept = 0;
    for (int64_t i = 0; i < r->nmsgs; i++) {
        const cs_exec_msg_t *mg = &r->msgs[i];
        if (mg->recv_op >= 0 && cs_program_op(p, mg->send_op)->rank % stride == 0 &&
            cs_program_op(p, mg->recv_op)->rank % stride == 0)
            flows_kept++;
    }
    if (n + 2 * flows_kept > budget) {
        int64_t keep = budget / 3; /* every slice may carry a flow end */
        if (keep < n) {
            info->truncated = 1;
            info->truncated_at = ops[keep].start;
            n = keep;
        }
    }
    for (int64_t i = 0; i < n; i++)
        kept[ops[i].op] = 1;

    /* tracks: per rank, greedy interval partitioning */
    int32_t *lane = cs_malloc(((size_t)nops + 1) * sizeof *lane);
    int *nlanes = cs_calloc((size_t)nranks + 1, sizeof *nlanes);
    cs_tick_t **lane_end = cs_calloc((size_t)nranks + 1, sizeof *lane_end);
    int *lane_cap = cs_calloc((size_t)nranks + 1, sizeof *lane_cap);
    for (int64_t i = 0; i < n; i++) {
        int rk = cs_program_op(p, ops[i].op)->rank, l;
        for (l = 0; l < nlanes[rk] && lane_end[rk][l] > ops[i].start; l++)
            ;
        if (l == nlanes[rk]) {
            if (nlanes[rk] == lane_cap[rk]) {
                lane_cap[rk] = lane_cap[rk] ? 2 * lane_cap[rk] : 2;
                lane_end[rk] = cs_realloc(lane_end[rk], (size_t)lane_cap[rk] * sizeof **lane_end);
            }
            nlanes[rk]++;
        }
        lane_end[rk][l] = ops[i].end;
        lane[ops[i].op] = l;
    }
    int *base = cs_malloc(((size_t)nranks + 1) * sizeof *base);
    int tid = 1;
    for (int rk = 0; rk < nranks; rk++) {
        base[rk] = tid;
        tid += rk % stride == 0 ? (nlanes[rk] ? nlanes[rk] : 1) : 0;
    }

    cs_outfile_t *of = NULL;
    int rc = cs_outfile_open(NULL, path, &of, err);
    if (rc)
        goto out;
    FILE *f = cs_outfile_stream(of);
    tl_t t = {f, m, p, r, m->tick_seconds * 1e6, 0, 1};

    fputs("{\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"generator\":\"collsim\",\"machine\":", f);
    cs_json_write_string(f, m->spec);
    fputs(",\"program\":", f);
    cs_json_write_string(f, cs_program_source(p) ? cs_program_source(p) : "");
    if (o && o->title) {
        fputs(",\"title\":", f);
        cs_json_write_string(f, o->title);
    }
    fprintf(f, ",\"tick_seconds\":%.17g,\"finish_ticks\":%lld,\"ranks\":%d,\"rank_stride\":%d",
            m->tick_seconds, (long long)r->finish, nranks, stride);
    if (info->truncated)
        fprintf(f, ",\"truncated_at_us\":%.6f", (double)info->truncated_at * t.us);
    fputs("},\n\"traceEvents\":[", f);

    /* names of the processes and tracks */
    tl_begin_event(&t);
    fputs("{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":\"ranks\"}}", f);
    tl_begin_event(&t);
    fputs("{\"ph\":\"M\",\"pid\":1,\"name\":\"process_sort_index\",\"args\":{\"sort_index\":1}}",
          f);
    for (int rk = 0; rk < nranks; rk += stride) {
        int nl = nlanes[rk] ? nlanes[rk] : 1;
        int node = o && o->rank_to_node ? o->rank_to_node[rk] : rk;
        for (int l = 0; l < nl; l++) {
            char name[64];
            if (l == 0)
                snprintf(name, sizeof name, "rank %d (node %d)", rk, node);
            else
                snprintf(name, sizeof name, "rank %d (%d)", rk, l + 1);
            tl_begin_event(&t);
            fprintf(f, "{\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"name\":\"thread_name\",\"args\":"
                       "{\"name\":\"%s\"}}", base[rk] + l, name);
            tl_begin_event(&t);
            fprintf(f, "{\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"name\":\"thread_sort_index\","
                       "\"args\":{\"sort_index\":%d}}", base[rk] + l, base[rk] + l);
        }
    }

    /* slices */
    for (int64_t i = 0; i < n; i++) {
        const cs_op_t *op = cs_program_op(p, ops[i].op);
        char name[96];
        op_name(p, ops[i].op, name, sizeof name);
        tl_begin_event(&t);
        fputs("{\"ph\":\"X\",\"pid\":1,", f);
        fprintf(f, "\"tid\":%d,\"cat\":\"%s\",\"name\":", base[op->rank] + lane[ops[i].op],
                op_kind(op));
        cs_json_write_string(f, name);
        fputc(',', f);
        tl_time(&t, "ts", ops[i].start);
        fputc(',', f);
        tl_time(&t, "dur", ops[i].end - ops[i].start);
        fprintf(f, ",\"args\":{\"op\":%d,\"rank\":%d,\"bytes\":%lld",
                shown_id ? shown_id[ops[i].op] : ops[i].op, op->rank,
                (long long)op->bytes);
        if (op->kind == CS_OP_SEND || op->kind == CS_OP_RECV)
            fprintf(f, ",\"peer\":%d,\"tag\":%d", op->peer, op->tag);
        fprintf(f, ",\"start_ticks\":%lld,\"end_ticks\":%lld,\"dur_ticks\":%lld",
                (long long)ops[i].start, (long long)ops[i].end,
                (long long)(ops[i].end - ops[i].start));
        if (cs_program_label(p, ops[i].op)) {
            fputs(",\"label\":", f);
            cs_json_write_string(f, cs_program_label(p, ops[i].op));
        }
        fputs("}}", f);
    }

    /* flows: from the send's slice to the slice of the recv that took it */
    for (int64_t i = 0; i < r->nmsgs; i++) {
        const cs_exec_msg_t *mg = &r->msgs[i];
        if (mg->recv_op < 0 || !kept[mg->send_op] || !kept[mg->recv_op])
            continue;
        const cs_op_t *so = cs_program_op(p, mg->send_op), *ro = cs_program_op(p, mg->recv_op);
        cs_tick_t s_mid = r->ops[mg->send_op].start +
                          (r->ops[mg->send_op].end - r->ops[mg->send_op].start) / 2;
        cs_tick_t r_mid = r->ops[mg->recv_op].start +
                          (r->ops[mg->recv_op].end - r->ops[mg->recv_op].start) / 2;
        tl_begin_event(&t);
        fprintf(f, "{\"ph\":\"s\",\"pid\":1,\"tid\":%d,\"cat\":\"message\",\"name\":\"message\","
                   "\"id\":%lld,", base[so->rank] + lane[mg->send_op], (long long)i + 1);
        tl_time(&t, "ts", s_mid);
        fputc('}', f);
        tl_begin_event(&t);
        fprintf(f, "{\"ph\":\"f\",\"bp\":\"e\",\"pid\":1,\"tid\":%d,\"cat\":\"message\","
                   "\"name\":\"message\",\"id\":%lld,", base[ro->rank] + lane[mg->recv_op],
                (long long)i + 1);
        tl_time(&t, "ts", r_mid);
        fputc('}', f);
        info->flows++;
    }

    /* link counters */
    if (ncount > 0) {
        int *top = cs_malloc((size_t)ncount * sizeof *top);
        int nt = cs_net_busiest_channels(r->net, top, ncount);
        cs_tick_t w = cs_chanrec_width(rec);
        tl_begin_event(&t);
        fputs("{\"ph\":\"M\",\"pid\":2,\"name\":\"process_name\",\"args\":{\"name\":"
              "\"links (busiest)\"}}", f);
        tl_begin_event(&t);
        fputs("{\"ph\":\"M\",\"pid\":2,\"name\":\"process_sort_index\",\"args\":"
              "{\"sort_index\":2}}", f);
        /* at most CS_TIMELINE_POINTS points a counter: buckets in groups */
        int grp = (nb + CS_TIMELINE_POINTS - 1) / CS_TIMELINE_POINTS;
        for (int k = 0; k < nt; k++) {
            int c = top[k];
            char name[80];
            double last = -1;
            snprintf(name, sizeof name, "link %d\xe2\x86\x92%d busy %%",
                     cs_topo_channel_src(m->topo, c), cs_topo_channel_dst(m->topo, c));
            for (int b = 0; b <= nb; b += grp) {
                cs_tick_t busy = 0;
                for (int i = b; i < b + grp && i < nb; i++)
                    busy += cs_chanrec_get(rec, c, i) ? cs_chanrec_get(rec, c, i)->busy : 0;
                double v = b < nb ? 100.0 * (double)busy / ((double)w * grp) : 0;
                if (v == last)
                    continue;
                last = v;
                tl_begin_event(&t);
                fputs("{\"ph\":\"C\",\"pid\":2,\"tid\":0,\"name\":", f);
                cs_json_write_string(f, name);
                fputc(',', f);
                tl_time(&t, "ts", (cs_tick_t)b * w);
                fprintf(f, ",\"args\":{\"busy\":%.4g}}", v);
            }
        }
        info->counters = nt;
        free(top);
    }
    fputs("\n]}\n", f);
    info->events = t.events;
    info->slices = n;
    info->rank_stride = stride;
    rc = cs_outfile_commit(of, err);
out:
    for (int rk = 0; rk < nranks; rk++)
        free(lane_end[rk]);
    free(lane_end);
    free(lane_cap);
    free(nlanes);
    free(base);
    free(lane);
    free(kept);
    free(shown_id);
    free(ops);
    return rc;
}
