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
    /* nodes that hold no rank (a LogGP hub, a network's switches) are said
     * apart: "65 nodes" for 64 ranks read as an off-by-one */
    int nodes = cs_topo_nodes(m->topo), hosts = cs_machine_nodes(m);
    if (hosts > 0 && hosts < nodes)
        fprintf(f, "machine   %s (%d nodes for ranks + %d other%s, %d channels)\n", m->spec, hosts,
                nodes - hosts, nodes - hosts == 1 ? "" : "s", cs_topo_channels(m->topo));
    else
        fprintf(f, "machine   %s (%d nodes, %d channels)\n", m->spec, nodes,
                cs_topo_channels(m->topo));
    fprintf(f, "mode      %s (queue %s)\n",
            r->net ? cs_net_engine_name(r->net) : cs_net_mode_name(mode),
            cs_queue_kind_name(queue));
}

/* messages, finish, events and the machine's own lines */
void cs_report_result(FILE *f, const cs_machine_t *m, const cs_exec_result_t *r)
{
    char buf[64];
    fprintf(f, "messages  %lld\n", (long long)r->messages);
    cs_units_format_seconds((double)r->finish * m->tick_seconds, buf, sizeof buf);
    fprintf(f, "finish    %lld ticks = %s\n", (long long)r->finish, buf);
    fprintf(f, "events    %llu\n", (unsigned long long)r->events);
    cs_machine_report(m, r->net, f);
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
    fprintf(f, "program   %s: %d ranks, %ld ops\n", name, cs_program_nranks(p),
            (long)cs_program_nops(p));
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
    fprintf(f, ", order %s\n", c->order_name);
    fprintf(f, "validation: %s\n", validated ? "ok" : "not requested (--validate)");
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

int cs_report_json(FILE *f, int with_timing, const cs_machine_t *m, const cs_program_t *p,
                   const cs_exec_result_t *r, int validated, int predict,
                   const cs_request_coll_t *c, cs_error_t *err)
{
    cs_model_t model;
    cs_error_t e;
    cs_result_info_t info = {.with_timing = with_timing, .validated = validated,
                             .predict = predict};
    if (predict && !c)
        info.model_none = "not a collective (--predict models --coll runs)";
    else if (predict && cs_request_model(m, c, &model, &e))
        info.model_none = e.msg;
    else if (predict)
        info.model = &model;
    return cs_result_write_json_info(f, m, p, r, &info, err);
}

void cs_report_csv_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}
