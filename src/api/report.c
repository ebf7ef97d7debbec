/*
 * report.c - the reports of a run (report.h): the summary's lines, the
 * busiest channels, the JSON result and CSV fields, each written to the
 * FILE the caller gives.  Shared by `collsim run` and `collsim replay` (the
 * summary), compare (the busiest channel) and sweep and compare (CSV).
 */
#include <stdio.h>
#include <string.h>

#include "api/report.h"
#include "core/units.h"
#include "engine/net.h"
#include "io/result_json.h"

#define REPORT_TOP_CHANNELS 5

void cs_report_machine(FILE *f, const cs_machine_t *m, const cs_exec_result_t *r,
                       cs_net_mode_t mode, cs_queue_kind_t queue)
{
    /* in the machine's own words, the figures' (cs_machine_count_text):
     * nodes that hold no rank (a LogGP hub, a network's switches) said
     * apart, since "65 nodes" for 64 ranks read as an off-by-one */
    char count[80];
    fprintf(f, "machine   %s (%s, %d channels)\n", m->spec,
            cs_machine_count_text(m, count, sizeof count), cs_topo_channels(m->topo));
    fprintf(f, "mode      %s (queue %s)\n",
            r->net ? cs_net_engine_name(r->net) : cs_net_mode_name(mode),
            cs_queue_kind_name(queue));
}

void cs_report_protocol(FILE *f, const cs_machine_t *m, const cs_exec_result_t *r)
{
    static const char *const wire[CS_PROTO_COUNT] = {"", "1x data", "2x data",
                                                     "128 bytes a 120 of data"};
    for (int k = 1; k < CS_PROTO_COUNT; k++) {
        char lat[32];
        if (!r->proto_messages[k])
            continue;
        cs_units_format_seconds((double)r->proto_lat[k] * m->tick_seconds, lat, sizeof lat);
        fprintf(f, "protocol  %s, %lld messages (wire %s, +%s a message)\n",
                cs_proto_name((cs_proto_t)k), (long long)r->proto_messages[k], wire[k], lat);
    }
}

/* messages, finish, events and the machine's own lines */
void cs_report_result(FILE *f, const cs_machine_t *m, const cs_exec_result_t *r)
{
    char buf[64];
    fprintf(f, "messages  %lld\n", (long long)r->messages);
    cs_report_protocol(f, m, r);
    cs_units_format_seconds((double)r->finish * m->tick_seconds, buf, sizeof buf);
    fprintf(f, "finish    %lld ticks = %s\n", (long long)r->finish, buf);
    fprintf(f, "events    %llu\n", (unsigned long long)r->events);
    cs_machine_report(m, r->net, f);
}

int cs_report_bandwidth_of(const cs_machine_t *m, const cs_request_coll_t *c,
                           const cs_exec_result_t *r, cs_bandwidth_t *out)
{
    const cs_coll_args_t *ca = &c->args;
    if (!cs_bandwidth_defined(ca->kind))
        return 0;
    /* a benchmark loop's bandwidths are those of its average iteration,
     * nccl-tests' (timed loop / iterations); one call's, of its finish */
    double ticks = c->loop ? c->loop->avg_ticks : (double)r->finish;
    cs_bandwidth_of(ca->kind, ca->P, ca->bytes, ticks * m->tick_seconds, out);
    return 1;
}

void cs_report_bandwidth(FILE *f, const cs_machine_t *m, const cs_request_coll_t *c,
                         const cs_exec_result_t *r)
{
    cs_bandwidth_t bw;
    char size[32], t[32];
    if (!cs_report_bandwidth_of(m, c, r, &bw)) {
        fprintf(f, "bandwidth none: a %s moves no data (docs/bandwidth.md)\n",
                cs_coll_name(c->args.kind));
        return;
    }
    if (bw.seconds <= 0 || bw.size_bytes <= 0) {
        fprintf(f, "bandwidth none: the run %s (docs/bandwidth.md)\n",
                bw.size_bytes <= 0 ? "moves no bytes" : "takes no time");
        return;
    }
    cs_units_format_bytes((int64_t)bw.size_bytes, size, sizeof size);
    cs_units_format_seconds(bw.seconds, t, sizeof t);
    /* GB/s of 10^9 bytes, as nccl-tests prints them; the size S is
     * nccl-tests' (bytes x ranks for the per-rank-block collectives) */
    fprintf(f, "algbw     %.4g GB/s (S = %s in %s)\n", bw.algbw / 1e9, size, t);
    fprintf(f, "busbw     %.4g GB/s (algbw x %s = %.4g, n = %d ranks; docs/bandwidth.md)\n",
            bw.busbw / 1e9, cs_bandwidth_formula(c->args.kind), bw.factor, c->args.P);
}

void cs_report_wall(FILE *f, const cs_exec_result_t *r, int with_timing)
{
    if (with_timing) {
        double rate = r->wall_seconds > 0 ? (double)r->events / r->wall_seconds : 0.0;
        fprintf(f, "wall      %.6f s (%.3f M events/s)\n", r->wall_seconds, rate / 1e6);
    } else {
        fprintf(f, "wall      not shown (--no-timing)\n");
    }
}

/* the busiest channels */
void cs_report_channels(FILE *f, const cs_machine_t *m, const cs_exec_result_t *r)
{
    const cs_topo_t *t = m->topo;
    char buf[64];
    int top[REPORT_TOP_CHANNELS];

    int n = cs_net_busiest_channels(r->net, top, REPORT_TOP_CHANNELS);
    if (n == 0) {
        fprintf(f, "channels  none carried traffic\n");
        return;
    }
    fprintf(f, "busiest channels:\n");
    fprintf(f, "  %-17s %12s %8s %7s\n", "src -> dst", "bytes", "busy", "peak k");
    for (int i = 0; i < n; i++) {
        const cs_chan_stats_t *s = cs_net_chan_stats(r->net, top[i]);
        char link[40];
        snprintf(link, sizeof link, "%d -> %d", cs_topo_channel_src(t, top[i]),
                 cs_topo_channel_dst(t, top[i]));
        cs_units_format_bytes(s->bytes, buf, sizeof buf);
        double busy = r->finish > 0 ? 100.0 * (double)s->busy / (double)r->finish : 0.0;
        fprintf(f, "  %-17s %12s %7.1f%% %7d\n", link, buf, busy, (int)s->peak_k);
    }
}

void cs_report_program(FILE *f, const char *name, const cs_program_t *p)
{
    /* joins are the executor's device, not the algorithm's ops */
    fprintf(f, "program   %s: %d ranks, %ld ops\n", name, cs_program_nranks(p),
            (long)cs_program_nops_visible(p));
}

void cs_report_collective(FILE *f, const cs_request_coll_t *c, int validated)
{
    const cs_coll_args_t *ca = &c->args;
    char buf[64];
    cs_units_format_bytes(ca->bytes, buf, sizeof buf);
    fprintf(f, "collective %s/%s, %s %s", cs_coll_name(ca->kind), c->algo->name, buf,
            ca->kind == CS_COLL_BROADCAST || ca->kind == CS_COLL_REDUCE ||
                    ca->kind == CS_COLL_ALLREDUCE ? "vector"
            : ca->kind == CS_COLL_BARRIER ? "token"
                                          : "per rank");
    if (cs_coll_rooted(ca->kind))
        fprintf(f, ", root %d", ca->root);
    fprintf(f, ", order %s", c->order_name);
    /* an in-network algorithm's switches are ranks of its program, not
     * of the collective (issue 36) */
    int sw = cs_coll_extra_ranks(c->algo, ca);
    if (sw > 0)
        fprintf(f, "; %d ranks and %d reducing switch%s (program ranks %d..%d)", ca->P, sw,
                sw == 1 ? "" : "es", ca->P, ca->P + sw - 1);
    fprintf(f, "\n");
    if (c->has_nccl) {
        const cs_ncclpick_t *pk = &c->nccl;
        fprintf(f, "nccl      NCCL's choice: %s/%s on %d channel%s (NCCL 2.30.7 model: %d "
                "node%s, %.4g GB/s a channel inside a node, %.4g between); NCCL's estimate "
                "%.4g us\n", cs_nccl_algo_name(pk->algo), cs_proto_name(pk->proto),
                pk->nchannels, pk->nchannels == 1 ? "" : "s", pk->in.nnodes,
                pk->in.nnodes == 1 ? "" : "s", pk->in.bw_intra, pk->in.bw_inter,
                pk->estimate_us);
    }
    fprintf(f, "validation: %s\n", validated ? "ok" : "not requested (--validate)");
}

/* ticks with the machine's seconds: "1234 ticks = 1.234 us" */
static void report_ticks(FILE *f, const cs_machine_t *m, double ticks)
{
    char buf[64];
    cs_units_format_seconds(ticks * m->tick_seconds, buf, sizeof buf);
    if (ticks == (double)(int64_t)ticks)
        fprintf(f, "%lld ticks = %s", (long long)ticks, buf);
    else
        fprintf(f, "%.2f ticks = %s", ticks, buf);
}

void cs_report_loop(FILE *f, const cs_machine_t *m, const cs_request_coll_t *c)
{
    const cs_result_loop_t *lp = c ? c->loop : NULL;
    if (!lp)
        return;
    fprintf(f, "loop      %lld timed + %lld warm-up iterations back to back (%s), between: %s\n",
            (long long)lp->iterations, (long long)lp->warmup, lp->style, lp->between);
    fprintf(f, "average   ");
    report_ticks(f, m, lp->avg_ticks);
    fprintf(f, " (the timed loop's ");
    report_ticks(f, m, (double)lp->timed_ticks);
    fprintf(f, " / %lld, as nccl-tests)\n", (long long)lp->iterations);
    fprintf(f, "iteration mean ");
    report_ticks(f, m, lp->iteration_avg_ticks);
    fprintf(f, ", min %lld, max %lld ticks (first op's start to last op's end); the first "
            "iteration %lld ticks\n", (long long)lp->iteration_min_ticks,
            (long long)lp->iteration_max_ticks, (long long)lp->first_ticks);
}

void cs_report_model(FILE *f, const cs_machine_t *m, const cs_request_coll_t *c,
                     cs_tick_t simulated)
{
    cs_model_t model;
    cs_error_t e;
    if (cs_request_model(m, c, &model, &e)) {
        fprintf(f, "model     none: %s\n", e.msg);
        return;
    }
    for (int i = 0; i < model.nforms; i++) {
        const cs_model_form_t *mf = &model.form[i];
        char secs[64] = "";
        if (model.show_seconds) {
            memcpy(secs, " = ", 4);
            cs_units_format_seconds(mf->seconds, secs + 3, sizeof secs - 3);
        }
        fprintf(f, "%s%.2f %s%s (%s); simulated - model = %+.2f (%+.2f%%)\n",
                i ? "          " : "model     ", mf->ticks, model.unit, secs, mf->name,
                (double)simulated - mf->ticks,
                mf->ticks > 0 ? 100.0 * ((double)simulated - mf->ticks) / mf->ticks : 0.0);
    }
}

void cs_report_nccl_estimate(FILE *f, const cs_machine_t *m, const cs_request_coll_t *c,
                             cs_tick_t simulated)
{
    cs_ncclpick_t pk;
    cs_error_t e;
    if (!c->has_nccl && (!c->algo || cs_ncclpick_algo_of(c->algo->name) < 0))
        return;
    if (cs_request_nccl_estimate(m, c, &pk, &e)) {
        fprintf(f, "nccl      none: %s\n", e.msg);
        return;
    }
    double sim_us = (double)simulated * m->tick_seconds * 1e6;
    fprintf(f, "nccl      %.4g us NCCL's estimate (%s/%s, %d channel%s); simulated - NCCL = "
            "%+.4g us (%+.2f%%)\n", pk.estimate_us, cs_nccl_algo_name(pk.algo),
            cs_proto_name(pk.proto), pk.nchannels, pk.nchannels == 1 ? "" : "s",
            sim_us - pk.estimate_us,
            pk.estimate_us > 0 ? 100.0 * (sim_us - pk.estimate_us) / pk.estimate_us : 0.0);
}

int cs_report_nccl_of(const cs_machine_t *m, const cs_request_coll_t *c, int predict,
                      cs_result_nccl_t *out)
{
    cs_ncclpick_t pk;
    cs_error_t e;
    if (!c || (!c->has_nccl && !predict))
        return 0;
    if (cs_request_nccl_estimate(m, c, &pk, &e))
        return 0;
    *out = (cs_result_nccl_t){pk.chosen, cs_nccl_algo_name(pk.algo), c->algo->name,
                              cs_proto_name(pk.proto), pk.nchannels, pk.in.nnodes,
                              pk.in.bw_intra, pk.in.bw_inter, pk.estimate_us * 1e-6, 0, {{0}}};
    for (int a = 0; a < CS_NCCL_NALGOS; a++)
        for (int p = 0; p < CS_NCCL_NPROTOS; p++)
            if (pk.out.time[a][p] >= 0 && out->nentries < (int)(sizeof out->entries /
                                                                sizeof out->entries[0]))
                out->entries[out->nentries++] = (struct cs_result_nccl_entry){
                    cs_nccl_algo_name((cs_nccl_algo_t)a), cs_proto_name(cs_nccl_proto_of(p)),
                    pk.out.lat[a][p], pk.out.bw[a][p], pk.out.time[a][p]};
    return 1;
}

int cs_report_json(FILE *f, int with_timing, const cs_machine_t *m, const cs_program_t *p,
                   const cs_exec_result_t *r, int validated, int predict,
                   const cs_request_coll_t *c, cs_error_t *err)
{
    cs_model_t model;
    cs_error_t e;
    cs_bandwidth_t bw;
    cs_result_info_t info = {.with_timing = with_timing, .validated = validated,
                             .predict = predict, .loop = c ? c->loop : NULL};
    cs_result_nccl_t nccl;
    if (c && cs_report_bandwidth_of(m, c, r, &bw))
        info.bandwidth = &bw;
    if (cs_report_nccl_of(m, c, predict, &nccl))
        info.nccl = &nccl;
    if (predict && !c)
        info.model_none = "not a collective (--predict models --coll runs)";
    else if (predict && cs_request_model(m, c, &model, &e))
        info.model_none = e.msg;
    else if (predict)
        info.model = &model;
    return cs_result_write_json_info(f, m, p, r, &info, err);
}

