/*
 * result_json.c - writes the JSON result of one run (schema in docs/json.md).
 *
 * Hand-written rather than through a library because the output must be
 * byte-for-byte reproducible: keys in a fixed order, integers exact, doubles
 * in their shortest form that reads back to the same value (so 1e-09 rather
 * than 1.0000000000000001e-09), and no locale involved.  Two runs of the same
 * inputs differ only in the timing fields, which with_timing == 0 zeroes.
 */
#include "io/result_json.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/net.h"
#include "topo/topo.h"

/* Writes s as a JSON string: quotes, backslashes and control characters are
 * escaped; valid UTF-8 passes through; each byte of an invalid sequence
 * becomes U+FFFD, so the output is always valid JSON. */
static void json_string(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    if (!s) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    while (*p) {
        unsigned char c = *p;
        if (c == '"' || c == '\\') {
            fputc('\\', f);
            fputc(c, f);
            p++;
        } else if (c < 0x20) {
            switch (c) {
            case '\n': fputs("\\n", f); break;
            case '\r': fputs("\\r", f); break;
            case '\t': fputs("\\t", f); break;
            case '\b': fputs("\\b", f); break;
            case '\f': fputs("\\f", f); break;
            default: fprintf(f, "\\u%04x", c); break;
            }
            p++;
        } else if (c < 0x80) {
            fputc(c, f);
            p++;
        } else {
            /* Length of the sequence a lead byte announces, 0 if invalid. */
            int len = (c >= 0xc2 && c <= 0xdf)   ? 2
                      : (c >= 0xe0 && c <= 0xef) ? 3
                      : (c >= 0xf0 && c <= 0xf4) ? 4
                                                 : 0;
            int ok = len > 0;
            for (int i = 1; ok && i < len; i++)
                ok = (p[i] & 0xc0) == 0x80;
            /* Reject overlong forms, surrogates and code points > U+10FFFF. */
            if (ok && len == 3)
                ok = !(c == 0xe0 && p[1] < 0xa0) && !(c == 0xed && p[1] >= 0xa0);
            if (ok && len == 4)
                ok = !(c == 0xf0 && p[1] < 0x90) && !(c == 0xf4 && p[1] >= 0x90);
            if (ok) {
                fwrite(p, 1, (size_t)len, f);
                p += len;
            } else {
                fputs("\\ufffd", f);
                p++;
            }
        }
    }
    fputc('"', f);
}

void cs_json_write_string(FILE *f, const char *s) { json_string(f, s); }

/* Shortest %.Ng that round-trips; JSON has no inf/nan, so those are null. */
static void json_double(FILE *f, double v)
{
    char buf[40];
    if (!isfinite(v)) {
        fputs("null", f);
        return;
    }
    /* whole numbers as such (a model's 390 ticks, not 3.9e+02) */
    if (v == floor(v) && fabs(v) < 1e15) {
        fprintf(f, "%.0f", v);
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    fputs(buf, f);
}

static void json_key(FILE *f, const char *indent, const char *key)
{
    fputs(indent, f);
    json_string(f, key);
    fputs(": ", f);
}

static void json_kv_int(FILE *f, const char *indent, const char *key, int64_t v, int last)
{
    json_key(f, indent, key);
    fprintf(f, "%" PRId64 "%s\n", v, last ? "" : ",");
}

static void json_kv_uint(FILE *f, const char *indent, const char *key, uint64_t v, int last)
{
    json_key(f, indent, key);
    fprintf(f, "%" PRIu64 "%s\n", v, last ? "" : ",");
}

static void json_kv_double(FILE *f, const char *indent, const char *key, double v, int last)
{
    json_key(f, indent, key);
    json_double(f, v);
    fputs(last ? "\n" : ",\n", f);
}

static void json_kv_string(FILE *f, const char *indent, const char *key, const char *v, int last)
{
    json_key(f, indent, key);
    json_string(f, v);
    fputs(last ? "\n" : ",\n", f);
}

/* The protocols the run's messages used (core/proto.h; docs/json.md):
 * nothing for a run without one, so that every other result keeps its
 * exact form. */
static void json_protocol(FILE *f, const char *in1, const char *in2, const cs_exec_result_t *r,
                          double tick_seconds)
{
    int used = 0, which = 0, first = 1;
    for (int k = 1; k < CS_PROTO_COUNT; k++)
        if (r->proto_messages[k]) {
            used++;
            which = k;
        }
    if (!used)
        return;
    json_kv_string(f, in1, "protocol", used == 1 ? cs_proto_name((cs_proto_t)which) : "mixed", 0);
    json_key(f, in1, "protocols");
    fputs("{\n", f);
    for (int k = 1; k < CS_PROTO_COUNT; k++) {
        if (!r->proto_messages[k])
            continue;
        if (!first)
            fputs(",\n", f);
        first = 0;
        json_key(f, in2, cs_proto_name((cs_proto_t)k));
        fprintf(f, "{\"messages\": %" PRId64 ", \"latency_seconds\": ", r->proto_messages[k]);
        json_double(f, (double)r->proto_lat[k] * tick_seconds);
        fputs("}", f);
    }
    fprintf(f, "\n%s},\n", in1);
}

/* One closed form's fields: ticks, seconds, form (the last when `last`). */
static void json_model_form(FILE *f, const char *in, const cs_model_form_t *fo, int last)
{
    json_kv_double(f, in, "ticks", fo->ticks, 0);
    json_kv_double(f, in, "seconds", fo->seconds, 0);
    json_kv_string(f, in, "form", fo->name, last);
}

/* "model": the closed form(s) beside the simulated finish (--predict). */
static void json_model(FILE *f, const char *in1, const cs_result_info_t *info,
                       const cs_exec_result_t *r)
{
    const cs_model_t *mo = info->model;
    const char *in2 = "    ", *in3 = "      ";
    json_key(f, in1, "model");
    fputs("{\n", f);
    if (!mo) {
        json_kv_string(f, in2, "none", info->model_none ? info->model_none : "no model", 1);
        fprintf(f, "%s},\n", in1);
        return;
    }
    json_model_form(f, in2, &mo->form[0], 0);
    json_kv_string(f, in2, "unit", mo->unit, 0);
    /* a loop's model is the one call's: beside its first (cold) iteration */
    json_kv_double(f, in2, "simulated_minus_model_ticks",
                   (double)(info->loop ? info->loop->first_ticks : r->finish) - mo->form[0].ticks,
                   0);
    json_key(f, in2, "forms");
    fputs("[", f);
    for (int i = 0; i < mo->nforms; i++) {
        fprintf(f, "%s\n%s{\n", i ? "," : "", in3);
        json_model_form(f, "        ", &mo->form[i], 1);
        fprintf(f, "%s}", in3);
    }
    fprintf(f, "\n%s]\n%s},\n", in2, in1);
}

/* "bandwidth": S, t, algbw, busbw and the factor between them, as
 * nccl-tests defines them (coll/bandwidth.h); bytes and bytes per second. */
static void json_bandwidth(FILE *f, const char *in1, const cs_bandwidth_t *bw)
{
    const char *in2 = "    ";
    json_key(f, in1, "bandwidth");
    fputs("{\n", f);
    json_kv_string(f, in2, "definition", "nccl-tests", 0);
    json_kv_double(f, in2, "size_bytes", bw->size_bytes, 0);
    json_kv_double(f, in2, "seconds", bw->seconds, 0);
    json_kv_double(f, in2, "algbw_bytes_per_second", bw->algbw, 0);
    json_kv_double(f, in2, "busbw_bytes_per_second", bw->busbw, 0);
    json_kv_double(f, in2, "busbw_factor", bw->factor, 1);
    fprintf(f, "%s},\n", in1);
}

/* "loop": a benchmark loop's times (issue 32), per iteration on one line
 * each like the other arrays. */
static void json_loop(FILE *f, const char *in1, const cs_result_loop_t *lp, double tick)
{
    const char *in2 = "    ";
    json_key(f, in1, "loop");
    fputs("{\n", f);
    json_kv_int(f, in2, "iterations", lp->iterations, 0);
    json_kv_int(f, in2, "warmup", lp->warmup, 0);
    json_kv_string(f, in2, "between", lp->between, 0);
    json_kv_string(f, in2, "style", lp->style, 0);
    json_kv_double(f, in2, "avg_ticks", lp->avg_ticks, 0);
    json_kv_double(f, in2, "avg_seconds", lp->avg_ticks * tick, 0);
    json_kv_int(f, in2, "timed_ticks", lp->timed_ticks, 0);
    json_kv_double(f, in2, "timed_seconds", (double)lp->timed_ticks * tick, 0);
    json_kv_double(f, in2, "iteration_avg_ticks", lp->iteration_avg_ticks, 0);
    json_kv_double(f, in2, "iteration_avg_seconds", lp->iteration_avg_ticks * tick, 0);
    json_kv_int(f, in2, "iteration_min_ticks", lp->iteration_min_ticks, 0);
    json_kv_double(f, in2, "iteration_min_seconds", (double)lp->iteration_min_ticks * tick, 0);
    json_kv_int(f, in2, "iteration_max_ticks", lp->iteration_max_ticks, 0);
    json_kv_double(f, in2, "iteration_max_seconds", (double)lp->iteration_max_ticks * tick, 0);
    json_kv_int(f, in2, "first_ticks", lp->first_ticks, 0);
    json_key(f, in2, "per_iteration");
    fputs("[", f);
    for (int64_t i = 0; i < lp->warmup + lp->iterations; i++)
        fprintf(f, "%s\n      {\"iteration\": %" PRId64 ", \"warmup\": %s, \"start_ticks\": %" PRId64
                ", \"end_ticks\": %" PRId64 "}",
                i ? "," : "", i, i < lp->warmup ? "true" : "false", lp->start[i], lp->end[i]);
    fprintf(f, "\n%s]\n%s},\n", in2, in1);
}

static int json_chan_listed(const cs_chan_stats_t *s)
{
    return s && s->bytes > 0;
}

int cs_result_write_json(FILE *f, const cs_machine_t *m, const cs_program_t *p,
                         const cs_exec_result_t *r, int with_timing, cs_error_t *err)
{
    cs_result_info_t info = {.with_timing = with_timing};
    return cs_result_write_json_info(f, m, p, r, &info, err);
}

int cs_result_write_json_info(FILE *f, const cs_machine_t *m, const cs_program_t *p,
                              const cs_exec_result_t *r, const cs_result_info_t *info,
                              cs_error_t *err)
{
    int with_timing = info->with_timing;
    const char *in1 = "  ", *in2 = "    ";
    const cs_topo_t *t = m->topo;
    int nchan = cs_topo_channels(t);
    int64_t listed = 0;

    if (r->net)
        for (int c = 0; c < nchan; c++)
            listed += json_chan_listed(cs_net_chan_stats(r->net, c));

    fputs("{\n", f);
    json_kv_int(f, in1, "schema_version", CS_RESULT_SCHEMA_VERSION, 0);
    json_kv_string(f, in1, "collsim_version", COLLSIM_VERSION, 0);

    json_key(f, in1, "machine");
    fputs("{\n", f);
    json_kv_string(f, in2, "spec", m->spec, 0);
    json_kv_string(f, in2, "type", m->type->name, 0);
    json_kv_string(f, in2, "topology", cs_topo_name(t), 0);
    json_kv_int(f, in2, "nodes", cs_topo_nodes(t), 0);
    json_kv_int(f, in2, "channels", nchan, 0);
    if (m->type->fields) {
        cs_machine_field_t fl[CS_MACHINE_MAX_FIELDS];
        int nf = m->type->fields(m, fl, CS_MACHINE_MAX_FIELDS);
        for (int i = 0; i < nf; i++) {
            if (fl[i].text)
                json_kv_string(f, in2, fl[i].key, fl[i].text, 0);
            else
                json_kv_double(f, in2, fl[i].key, fl[i].number, 0);
        }
    }
    json_kv_double(f, in2, "tick_seconds", m->tick_seconds, 1);
    fprintf(f, "%s},\n", in1);

    json_kv_string(f, in1, "mode", r->net ? cs_net_mode_name(cs_net_mode(r->net)) : NULL, 0);

    json_key(f, in1, "program");
    fputs("{\n", f);
    json_kv_string(f, in2, "source", cs_program_source(p), 0);
    json_kv_int(f, in2, "ranks", cs_program_nranks(p), 0);
    json_kv_int(f, in2, "ops", cs_program_nops_visible(p), 1);
    fprintf(f, "%s},\n", in1);
    if (info->point_algo) {
        json_key(f, in1, "point");
        fputs("{\n", f);
        json_kv_string(f, in2, "algo", info->point_algo, 0);
        json_kv_int(f, in2, "bytes", info->point_bytes, 0);
        json_kv_int(f, in2, "ranks", info->point_ranks, 1);
        fprintf(f, "%s},\n", in1);
    }
    json_key(f, in1, "validated");
    fputs(info->validated ? "true,\n" : "false,\n", f);

    json_kv_int(f, in1, "finish_ticks", r->finish, 0);
    json_kv_double(f, in1, "finish_seconds", (double)r->finish * m->tick_seconds, 0);
    json_kv_uint(f, in1, "events", r->events, 0);
    json_kv_uint(f, in1, "queue_peak", (uint64_t)r->queue_peak, 0);
    json_kv_double(f, in1, "wall_seconds", with_timing ? r->wall_seconds : 0.0, 0);
    json_kv_double(f, in1, "events_per_second",
                   with_timing && r->wall_seconds > 0 ? (double)r->events / r->wall_seconds : 0.0,
                   0);
    json_kv_int(f, in1, "messages", r->messages, 0);
    json_protocol(f, in1, in2, r, m->tick_seconds);
    if (info->predict)
        json_model(f, in1, info, r);
    if (info->loop)
        json_loop(f, in1, info->loop, m->tick_seconds);
    if (info->bandwidth) /* after the loop, whose average it is of */
        json_bandwidth(f, in1, info->bandwidth);

    /* Arrays hold one object per line: large machines give long arrays, and
     * line-per-record keeps them greppable and diffable. */
    json_key(f, in1, "ranks");
    fputs("[", f);
    for (int i = 0; i < r->nranks; i++)
        fprintf(f, "%s\n%s{\"rank\": %d, \"finish_ticks\": %" PRId64 "}", i ? "," : "", in2, i,
                (int64_t)(r->rank_finish ? r->rank_finish[i] : 0));
    fprintf(f, "%s],\n", r->nranks > 0 ? "\n  " : "");

    json_kv_int(f, in1, "channels_listed", listed, 0);
    json_key(f, in1, "channels");
    fputs("[", f);
    int first = 1;
    for (int c = 0; r->net && c < nchan; c++) {
        const cs_chan_stats_t *s = cs_net_chan_stats(r->net, c);
        if (!json_chan_listed(s))
            continue;
        fprintf(f,
                "%s\n%s{\"id\": %d, \"src\": %d, \"dst\": %d, \"bytes\": %" PRId64
                ", \"units\": %" PRId64 ", \"busy_ticks\": %" PRId64 ", \"stall_ticks\": %" PRId64
                ", \"peak_k\": %d}",
                first ? "" : ",", in2, c, cs_topo_channel_src(t, c), cs_topo_channel_dst(t, c),
                s->bytes, s->units, (int64_t)s->busy, (int64_t)s->stall, (int)s->peak_k);
        first = 0;
    }
    fprintf(f, "%s]\n", first ? "" : "\n  ");
    fputs("}\n", f);

    if (ferror(f))
        return cs_error_set(err, CS_ERR_IO, "error while writing the JSON result");
    return CS_OK;
}
