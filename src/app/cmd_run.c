/*
 * cmd_run.c - `collsim run`: one program on one machine, reported as a
 * short human summary or as the versioned JSON result (docs/json.md).
 *
 * The program is either a GOAL schedule (--program) or a collective built
 * by an algorithm of the suite (--coll, --algo; src/coll), placed on the
 * machine's nodes in a chosen order (--order) and optionally validated
 * (--validate, src/coll/check.c).  The algorithm sees the machine only
 * through hints in rank space (cs_machine_hints_init; DESIGN.md: algorithms
 * never see node ids).  The request itself (machine, program or
 * collective, mode, queue) is parsed, prepared, built and run by the one
 * request path of src/api (api/request.h) that every command shares, and
 * the summary and JSON come from api/report.h; this file keeps the command
 * line, the progress bar and the figures (heatmaps, frames, timelines).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/figures.h"
#include "app/app.h"
#include "coll/coll.h"
#include "engine/exec.h"
#include "engine/net.h"
#include "core/program.h"
#include "core/units.h"
#include "io/anim.h"
#include "io/heatmap.h"
#include "io/plot.h"
#include "io/timeline.h"
#include "machines/machine.h"

#define RUN_MAX_FRAMES 1000
#define RUN_DEFAULT_FRAMES 20
#define RUN_FRAME_DELAY_CS 25 /* an animation's frame: 0.25 s, 20 frames in 5 s */

/* Everything the command line says about one run. */
typedef struct run_args {
    cs_request_t req;    /* machine, program or collective, mode, queue */
    const char *json;    /* output path, "-" for stdout, NULL for the summary */
    int with_timing;     /* 0 with --no-timing */
    int quiet;           /* --quiet: no progress line, no "wrote FILE" */
    int predict;
    /* figures */
    const char *heatmap, *window, *frames, *frame_step, *timeline, *scale, *size;
    int whole;                  /* --whole */
    cs_heatmap_metric_t metric;
    cs_heatmap_style_t style; /* --scale, --size */
    int animate;              /* --frames FILE.gif: one animated file */
    int has_metric;
    int64_t timeline_limit;
} run_args_t;

static void run_help(void)
{
    char queues[256];
    cs_request_queue_names(queues, sizeof queues, ", ");
    printf("Usage: collsim run --machine SPEC --program FILE.goal [OPTIONS]\n"
           "   or: collsim run --machine SPEC --coll NAME [--algo NAME] --bytes N [OPTIONS]\n"
           "\n"
           "Runs a program or a collective on a machine and prints a summary (or writes\n"
           "JSON).\n"
           "\n"
           "  -m, --machine SPEC     machine, e.g. alphabeta:topo=ring,p=8\n"
           "                         (see 'collsim list machines')\n"
           "  -p, --program FILE     program as a GOAL schedule (text form; '-' = stdin)\n"
           "\n"
           "A collective instead of --program (see 'collsim list algorithms'):\n"
           "      --coll NAME        broadcast, reduce, allreduce, allgather, reduce-scatter,\n"
           "                         gather, scatter, barrier, alltoall\n"
           "      --algo NAME        the algorithm (default: the collective's first listed);\n"
           "                         nccl: NCCL's choice of algorithm, protocol and\n"
           "                         channels for the call, run by the suite's nccl-*\n"
           "                         algorithm (--opt nchannels=N, nvls=1, collnet=1;\n"
           "                         docs/nccl.md)\n"
           "      --bytes N          size: the whole vector for broadcast, reduce, allreduce;\n"
           "                         the per-rank block for allgather, gather, scatter,\n"
           "                         reduce-scatter, alltoall; the token for barrier\n"
           "                         (default 0); units K, KiB, MB, ...\n"
           "      --root R           root rank of broadcast, reduce, gather, scatter (default 0)\n"
           "      --ranks P          ranks (default: every node; with an order FILE, its length)\n"
           "      --order ORDER      rank i runs on the order's i-th node: natural (node ids),\n"
           "                         ring (the machine's ring order), snake (boustrophedon over\n"
           "                         the machine's grid), or a FILE with one node id per line\n"
           "      --opt KEY=VALUE    an algorithm option (repeatable)\n"
           "      --validate         check that every rank ends with the right data, every\n"
           "                         contribution exactly once (exit status 4 if not)\n"
           "      --windowed         build the program while it runs, a window of ops at a\n"
           "                         time: the same times, memory that follows the ops in\n"
           "                         flight (docs/engine.md).  The default for a collective\n"
           "                         whenever the run allows it (--validate and --timeline\n"
           "                         too); with the flag, an error where it does not (a loop)\n"
           "      --whole            build the whole program before it runs (the default\n"
           "                         with a loop, an algorithm file): the same\n"
           "                         times, memory for every op\n"
           "\n"
           "A benchmark loop (docs/loops.md): the collective back to back, as nccl-tests\n"
           "and the OSU benchmarks run it; each rank starts iteration i+1 when it is done\n"
           "with iteration i:\n"
           "      --iterations N     N timed iterations (1..%d; 'default': nccl-tests' %d)\n"
           "      --warmup W         W warm-up iterations before them (default %d, as\n"
           "                         nccl-tests)\n"
           "      --between B        none (default) or barrier[:ALGO]: the suite's barrier\n"
           "                         between iterations\n"
           "      --loop STYLE       nccl-tests (%d + %d) or osu (%d + %d up to %d bytes,\n"
           "                         %d + %d above)\n"
           "                         the summary and JSON then give the average per\n"
           "                         iteration (nccl-tests': the timed loop / N) and each\n"
           "                         iteration's mean, minimum and maximum; --validate\n"
           "                         checks every iteration\n"
           "\n"
           "      --predict          also print the machine's closed-form model of the\n"
           "                         collective beside the simulated time (cerebras, alphabeta,\n"
           "                         cns1, groq, loggp; \"none\" and why where there is none);\n"
           "                         for nccl-* and --algo nccl also NCCL's own estimate\n"
           "\n"
           "Figures (docs/figures.md):\n"
           "      --heatmap FILE     draw the links on the machine's layout (.png, .svg, .pdf)\n"
           "      --metric M         util (default), bytes, stall or k\n"
           "      --window T0:T1     only this time window (ticks, or times such as 2us;\n"
           "                         either side may be left out)\n"
           "      --scale LO:HI      fix the colour range, in the metric's units: util and\n"
           "                         stall in %% (0:50), bytes as a size (0:4MiB), k in\n"
           "                         messages (1:4); LO may be left out\n"
           "      --size SIZE        column (3.5 in wide), page (7 in) or WxH (3.5x3in,\n"
           "                         1600x1200): the figure's size, text stays readable\n"
           "      --frames DIR       one heatmap per time window: DIR/frame-0001.png, ...\n"
           "      --frames FILE.gif  the same frames as one animated GIF%s\n"
           "      --frame-step T     the windows' length (default: the run in 20 frames)\n"
           "      --timeline FILE    the run in Chrome trace event format (Perfetto)\n"
           "      --timeline-limit N at most N trace events (default %d); larger runs are\n"
           "                         sampled\n"
           "\n"
           "Output and engine:\n"
           "  -M, --mode MODE        network fidelity: packet (default) or fluid\n"
           "      --force            run a packet-mode run above the work limit (docs/limits.md)\n"
           "  -j, --json FILE        write the JSON result to FILE ('-' = stdout)\n"
           "                         instead of printing the summary\n"
           "      --no-timing        write wall_seconds and events_per_second as 0,\n"
           "                         so that repeated runs give identical output\n"
           "  -q, --queue KIND       event queue: %s (default %s)\n"
           "      --quiet            no progress line, no \"wrote FILE\" on standard error\n"
           "  -h, --help             show this help and exit\n"
           "\n"
           "Exit status: 0 ok, 2 usage or input error, 3 deadlock, 4 validation failed,\n"
           "5 model error.\n",
           CS_LOOP_MAX_ITERATIONS, CS_LOOP_NCCL_ITERATIONS, CS_LOOP_NCCL_WARMUP,
           CS_LOOP_NCCL_WARMUP, CS_LOOP_NCCL_ITERATIONS, CS_LOOP_OSU_WARMUP,
           CS_LOOP_OSU_ITERATIONS, CS_LOOP_OSU_LARGE_BYTES, CS_LOOP_OSU_WARMUP_LARGE,
           CS_LOOP_OSU_ITERATIONS_LARGE,
           cs_anim_check_path("x.gif", &(cs_error_t){0}) ? " (not in this build)" : "",
           CS_TIMELINE_MAX_EVENTS, queues, cs_queue_kind_name(CS_QUEUE_DEFAULT));
}

static void run_parse_args(int argc, char **argv, run_args_t *a)
{
    enum {
        OPT_NO_TIMING = 256, OPT_PREDICT, OPT_HEATMAP, OPT_METRIC, OPT_WINDOW, OPT_FRAMES,
        OPT_FRAME_STEP, OPT_TIMELINE, OPT_TIMELINE_LIMIT, OPT_SCALE, OPT_SIZE, OPT_QUIET,
        OPT_WHOLE
    };
    static const struct option longopts[] = {
        {"machine", required_argument, NULL, 'm'},
        {"program", required_argument, NULL, 'p'},
        {"coll", required_argument, NULL, CS_APP_OPT_COLL},
        {"algo", required_argument, NULL, CS_APP_OPT_ALGO},
        {"bytes", required_argument, NULL, CS_APP_OPT_BYTES},
        {"root", required_argument, NULL, CS_APP_OPT_ROOT},
        {"ranks", required_argument, NULL, CS_APP_OPT_RANKS},
        {"order", required_argument, NULL, CS_APP_OPT_ORDER},
        {"opt", required_argument, NULL, CS_APP_OPT_OPT},
        {"validate", no_argument, NULL, CS_APP_OPT_VALIDATE},
        {"windowed", no_argument, NULL, CS_APP_OPT_WINDOWED},
        {"whole", no_argument, NULL, OPT_WHOLE},
        {"predict", no_argument, NULL, OPT_PREDICT},
        {"iterations", required_argument, NULL, CS_APP_OPT_ITERATIONS},
        {"warmup", required_argument, NULL, CS_APP_OPT_WARMUP},
        {"between", required_argument, NULL, CS_APP_OPT_BETWEEN},
        {"loop", required_argument, NULL, CS_APP_OPT_LOOP},
        {"heatmap", required_argument, NULL, OPT_HEATMAP},
        {"metric", required_argument, NULL, OPT_METRIC},
        {"window", required_argument, NULL, OPT_WINDOW},
        {"frames", required_argument, NULL, OPT_FRAMES},
        {"frame-step", required_argument, NULL, OPT_FRAME_STEP},
        {"scale", required_argument, NULL, OPT_SCALE},
        {"size", required_argument, NULL, OPT_SIZE},
        {"timeline", required_argument, NULL, OPT_TIMELINE},
        {"timeline-limit", required_argument, NULL, OPT_TIMELINE_LIMIT},
        {"mode", required_argument, NULL, 'M'},
        {"force", no_argument, NULL, CS_APP_OPT_FORCE},
        {"json", required_argument, NULL, 'j'},
        {"no-timing", no_argument, NULL, OPT_NO_TIMING},
        {"quiet", no_argument, NULL, OPT_QUIET},
        {"queue", required_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    cs_error_t err = {0};
    int c;

    memset(a, 0, sizeof *a);
    cs_request_init(&a->req);
    a->with_timing = 1;
    while ((c = getopt_long(argc, argv, ":m:p:M:j:q:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'j': a->json = optarg; break;
        case OPT_NO_TIMING: a->with_timing = 0; break;
        case OPT_QUIET: a->quiet = 1; break;
        case OPT_PREDICT: a->predict = 1; break;
        case OPT_WHOLE: a->whole = 1; break;
        case OPT_HEATMAP: a->heatmap = optarg; break;
        case OPT_WINDOW: a->window = optarg; break;
        case OPT_FRAMES: a->frames = optarg; break;
        case OPT_FRAME_STEP: a->frame_step = optarg; break;
        case OPT_TIMELINE: a->timeline = optarg; break;
        case OPT_SCALE: a->scale = optarg; break;
        case OPT_SIZE: a->size = optarg; break;
        case OPT_METRIC:
            if (cs_heatmap_parse_metric(optarg, &a->metric, &err) != CS_OK)
                cs_app_usage_error("run", "--metric: %s", err.msg);
            a->has_metric = 1;
            break;
        case OPT_TIMELINE_LIMIT:
            if (cs_units_parse_int(optarg, &a->timeline_limit, &err) != CS_OK)
                cs_app_usage_error("run", "--timeline-limit: %s", err.msg);
            if (a->timeline_limit < 100)
                cs_app_usage_error("run", "--timeline-limit: at least 100 events, got %s",
                                   optarg);
            break;
        case 'h': run_help(); exit(0);
        default: cs_app_option("run", &a->req, c, argv, longopts);
        }
    }
    cs_app_no_operands("run", argc, argv);
    if (a->whole && a->req.windowed > 0)
        cs_app_usage_error("run", "--windowed and --whole exclude each other");
    if (a->whole && (cs_request_set(&a->req, "whole", "1", &err) != CS_OK))
        cs_app_usage_error("run", "%s", err.msg);
    const cs_request_t *r = &a->req;
    if (cs_request_check_kind(r, 1, &err) != CS_OK)
        cs_app_usage_error("run", "%s", err.msg);
    if (a->heatmap && cs_heatmap_check_path(a->heatmap, &err) != CS_OK)
        cs_app_usage_error("run", "--heatmap: %s", err.msg);
    if (!a->heatmap && !a->frames && (a->has_metric || a->window || a->scale || a->size))
        cs_app_usage_error("run", "%s needs --heatmap FILE or --frames DIR",
                           a->has_metric ? "--metric" : a->window ? "--window"
                           : a->scale ? "--scale" : "--size");
    /* the metric is known now, whatever the order of the options */
    if (cs_figures_parse_style(a->scale, a->size, a->metric, &a->style, &err) != CS_OK)
        cs_app_usage_error("run", "%s", err.msg);
    a->animate = a->frames && cs_anim_is_anim_path(a->frames);
    if (a->animate && cs_anim_check_path(a->frames, &err) != CS_OK)
        cs_app_usage_error("run", "--frames: %s; --frames DIR writes PNG frames", err.msg);
    if (a->frame_step && !a->frames)
        cs_app_usage_error("run", "--frame-step needs --frames DIR");
    if (a->frames && a->window)
        cs_app_usage_error("run", "--window and --frames exclude each other (frames cover "
                                  "the whole run)");
    if (a->timeline_limit && !a->timeline)
        cs_app_usage_error("run", "--timeline-limit needs --timeline FILE");
    if (cs_request_check_keys(r, a->timeline != NULL, &err) != CS_OK)
        cs_app_usage_error("run", "%s", err.msg);
}

/* The summary (docs/cli.md): the lines of api/report.h in their order, with
 * --predict's model beside the simulated time. */
static void run_print_summary(FILE *f, const run_args_t *a, const cs_request_run_t *run)
{
    const cs_machine_t *m = run->machine;
    const cs_program_t *p = run->program;
    const cs_exec_result_t *r = &run->result;
    const cs_request_coll_t *c = run->is_coll ? &run->coll : NULL;

    cs_report_machine(f, m, r, a->req.mode, a->req.queue);
    cs_report_program(f, a->req.program ? a->req.program : cs_program_source(p), p);
    if (c)
        cs_report_collective(f, c, run->validated);
    cs_report_result(f, m, r);
    cs_report_loop(f, m, c);
    if (c)
        cs_report_bandwidth(f, m, c, r);
    /* a loop's model is the one call's: beside the first (cold) iteration */
    if (a->predict && c) {
        cs_report_model(f, m, c, c->loop ? c->loop->first_ticks : r->finish);
        cs_report_nccl_estimate(f, m, c, c->loop ? c->loop->first_ticks : r->finish);
    }
    cs_report_wall(f, r, a->with_timing);
    cs_report_channels(f, m, r);
}

/* ---- figures: heatmaps, frames, timelines ------------------------------- */

/* What the figure options mean once the machine's clock is known. */
typedef struct run_figs {
    cs_figures_window_t win; /* --window */
    cs_tick_t step;          /* --frame-step, 0: chosen after the run */
} run_figs_t;

/* Parses --window and --frame-step, checks the output paths and sets the
 * executor's options the figures need. */
static int run_prepare_figures(const run_args_t *a, const cs_machine_t *m, run_figs_t *fg,
                               cs_exec_opts_t *opts, cs_error_t *err)
{
    int rc;
    memset(fg, 0, sizeof *fg);
    if ((rc = cs_figures_parse_window(a->window, m->tick_seconds, &fg->win, err)))
        return rc;
    if (a->frame_step) {
        if ((rc = cs_figures_parse_time(a->frame_step, m->tick_seconds, &fg->step, err))) {
            cs_error_prefix(err, "--frame-step");
            return rc;
        }
        if (fg->step < 1)
            return cs_error_set(err, CS_ERR_RANGE, "--frame-step '%s': less than one tick",
                                a->frame_step);
    }
    if (a->heatmap && (rc = cs_app_check_writable("--heatmap", a->heatmap, err)))
        return rc;
    if (a->timeline && (rc = cs_app_check_writable("--timeline", a->timeline, err)))
        return rc;
    /* the folder is made after the run, whole (core/outfile.h): here only
     * whether it can be */
    if (a->frames && !a->animate && (rc = cs_app_check_folder("--frames", a->frames, err)))
        return rc;
    if (a->animate && (rc = cs_app_check_writable("--frames", a->frames, err)))
        return rc;
    if (fg->win.has || a->frames || a->timeline) {
        /* frames get buckets of their own step, so that each frame is a
         * whole number of buckets while the run fits */
        opts->bucket_width = fg->step ? fg->step : 1;
        opts->max_buckets = cs_figures_bucket_count(m);
    }
    opts->record_messages = a->timeline != NULL;
    opts->record_op_times = a->timeline != NULL;
    return CS_OK;
}

static int run_write_heatmap(const run_args_t *a, const cs_machine_t *m, const cs_exec_result_t *r,
                             cs_heatmap_t *h, const run_figs_t *fg, const char *title,
                             FILE *say, cs_error_t *err)
{
    int whole = 1;
    int rc = cs_figures_heatmap(h, m, r, a->metric, &fg->win, &a->style, title, a->heatmap,
                                &whole, err);
    if (rc == CS_OK && say)
        fprintf(say, "heatmap   %s (%s, %s layout%s)\n", a->heatmap,
                cs_heatmap_metric_name(a->metric), cs_heatmap_layout_name(h),
                whole ? "" : ", window");
    return rc;
}

static int run_write_frames(const run_args_t *a, const cs_machine_t *m, const cs_exec_result_t *r,
                            cs_heatmap_t *h, const run_figs_t *fg, const char *title, FILE *say,
                            cs_error_t *err)
{
    int nchans = cs_topo_channels(m->topo), rc = CS_OK;
    cs_tick_t end = r->finish > 0 ? r->finish : 1;
    cs_tick_t w = cs_net_bucket_width(r->net), step = fg->step;
    if (!step) {
        /* the run in about RUN_DEFAULT_FRAMES frames of whole buckets */
        step = (end + RUN_DEFAULT_FRAMES - 1) / RUN_DEFAULT_FRAMES;
        if (w > 0)
            step = (step + w - 1) / w * w;
    }
    if ((end + step - 1) / step > RUN_MAX_FRAMES) {
        cs_tick_t more = (end + RUN_MAX_FRAMES - 1) / RUN_MAX_FRAMES;
        fprintf(stderr, "collsim: --frame-step: %lld frames would exceed %d; using a step of "
                "%lld ticks\n", (long long)((end + step - 1) / step), RUN_MAX_FRAMES,
                (long long)more);
        step = more;
    }
    int n = (int)((end + step - 1) / step);
    double vmax = 0;
    cs_outdir_t *dir = NULL;
    cs_anim_t *anim = NULL;
    cs_heatmap_style_t st = a->style;
    if (!a->animate && (rc = cs_outdir_open("--frames", a->frames, &dir, err)))
        return rc;
    /* one scale for every frame, so that colours compare across frames:
     * --scale's, or the largest value of any frame (a first pass) */
    for (int pass = st.hi > st.lo; pass < 2 && rc == CS_OK; pass++) {
        if (pass == 1 && !(st.hi > st.lo))
            st.hi = vmax; /* lo 0: the frames' own range, said by the bar */
        for (int i = 0; i < n && rc == CS_OK; i++) {
            cs_heatmap_data_t d;
            cs_tick_t t0 = (cs_tick_t)i * step, t1 = t0 + step < end ? t0 + step : end;
            rc = cs_heatmap_data_from_net(r->net, nchans, a->metric, t0, t1, 0, &d, err);
            if (rc == CS_OK && pass == 0) {
                double mx = cs_heatmap_data_max(&d);
                if (mx > vmax)
                    vmax = mx;
            } else if (rc == CS_OK) {
                char path[4096 + 32], sub[320], note[64];
                snprintf(note, sizeof note, "frame %d of %d,", i + 1, n);
                cs_figures_heatmap_subtitle(m, r->net, &d, note, sub, sizeof sub);
                if (a->animate) {
                    unsigned char *rgb = NULL;
                    int w, hh;
                    rc = cs_heatmap_render_rgb(h, &d, title, sub, &st, &rgb, &w, &hh, err);
                    if (rc == CS_OK && !anim)
                        rc = cs_anim_new(a->frames, w, hh, RUN_FRAME_DELAY_CS, &anim, err);
                    if (rc == CS_OK)
                        rc = cs_anim_add(anim, rgb, err);
                    free(rgb);
                } else {
                    snprintf(path, sizeof path, "%s/frame-%04d.png", cs_outdir_path(dir), i + 1);
                    rc = cs_heatmap_write(h, &d, title, sub, &st, path, err);
                }
            }
            cs_heatmap_data_destroy(&d);
            if (rc == CS_OK)
                rc = cs_app_check_interrupt(err);
        }
    }
    if (a->animate) {
        if (rc == CS_OK)
            rc = cs_anim_finish(anim, err);
        else
            cs_anim_free(anim);
    } else if (rc == CS_OK) {
        rc = cs_outdir_commit(dir, err);
    } else {
        cs_outdir_abort(dir);
    }
    if (rc && rc != CS_ERR_CANCELLED && !strstr(err->msg, "--frames"))
        cs_error_prefix(err, "--frames");
    else if (say) {
        char st_text[32];
        cs_units_format_seconds((double)step * m->tick_seconds, st_text, sizeof st_text);
        if (a->animate)
            fprintf(say, "frames    %s (%d frames of %s, %.2f s each; %s, %s layout)\n",
                    a->frames, n, st_text, RUN_FRAME_DELAY_CS / 100.0,
                    cs_heatmap_metric_name(a->metric), cs_heatmap_layout_name(h));
        else
            fprintf(say, "frames    %s/frame-0001.png .. frame-%04d.png (%s, %s each, %s "
                    "layout)\n", a->frames, n, cs_heatmap_metric_name(a->metric), st_text,
                    cs_heatmap_layout_name(h));
        if (w > step)
            fprintf(say, "          note: the buckets grew to %lld ticks, coarser than a frame; "
                    "frames share them in proportion\n", (long long)w);
    }
    return rc;
}

static int run_write_figures(const run_args_t *a, const cs_machine_t *m, const cs_program_t *p,
                             const cs_exec_result_t *r, const cs_request_coll_t *c,
                             const run_figs_t *fg, FILE *say, cs_error_t *err)
{
    char title[320];
    int rc = CS_OK;
    cs_figures_run_title(m, c, a->req.program, cs_program_nranks(p), title, sizeof title);
    if (a->heatmap || a->frames) {
        cs_heatmap_t *h = NULL;
        rc = cs_heatmap_new(m, &h, err);
        if (rc == CS_OK && a->heatmap)
            rc = run_write_heatmap(a, m, r, h, fg, title, say, err);
        if (rc == CS_OK && a->frames)
            rc = run_write_frames(a, m, r, h, fg, title, say, err);
        cs_heatmap_free(h);
        cs_plot_cleanup(); /* the fonts: no leak reports at exit */
    }
    if (rc == CS_OK && a->timeline) {
        cs_timeline_opts_t to = {a->timeline_limit, 0, c ? c->rank_to_node : NULL, title};
        cs_timeline_info_t info;
        rc = cs_timeline_write(a->timeline, m, p, r, &to, &info, err);
        if (rc)
            cs_error_prefix(err, "--timeline");
        else if (say) {
            fprintf(say, "timeline  %s (%lld events: %lld of %lld ops, %lld messages, %d link "
                    "counters", a->timeline, (long long)info.events, (long long)info.slices,
                    (long long)info.ops_total, (long long)info.flows, info.counters);
            if (info.rank_stride > 1)
                fprintf(say, "; sampled: every %d%s rank", info.rank_stride,
                        info.rank_stride == 2 ? "nd" : info.rank_stride == 3 ? "rd" : "th");
            if (info.truncated) {
                char t[32];
                cs_units_format_seconds((double)info.truncated_at * m->tick_seconds, t,
                                        sizeof t);
                fprintf(say, "; cut at %s", t);
            }
            fprintf(say, ")\n");
        }
    }
    return rc;
}

int cs_app_cmd_run(int argc, char **argv)
{
    run_args_t a;
    cs_error_t err = {0};
    cs_request_run_t run;
    cs_app_progress_t progress = {0};
    run_figs_t figs;
    int rc;

    cs_request_run_init(&run);
    run_parse_args(argc, argv, &a);

    rc = cs_request_prepare(&a.req, &run, &err);
    if (rc == CS_OK)
        rc = cs_request_build(&a.req, &run, &err);
    if (rc == CS_OK) {
        cs_exec_opts_t opts;
        cs_request_exec_opts(&a.req, &run, &opts);
        rc = run_prepare_figures(&a, run.machine, &figs, &opts, &err);
        if (rc == CS_OK) {
            cs_app_progress_init(&progress, a.req.coll ? cs_program_source(run.program)
                                                       : a.req.program);
            progress.quiet = a.quiet;
            cs_app_progress_attach(&progress, run.machine->tick_seconds, &opts);
            rc = cs_request_run(&run, &opts, &err);
            cs_app_progress_done(&progress);
        }
    }
    if (rc == CS_OK) {
        if (a.json)
            rc = cs_app_write_json(a.json, a.with_timing, run.machine, run.program, &run.result,
                                   run.validated, a.predict, run.is_coll ? &run.coll : NULL,
                                   &err);
        else
            run_print_summary(stdout, &a, &run);
        if (rc == CS_OK && a.json) /* no summary to name the file in */
            cs_app_wrote(&progress, a.json, "JSON result");
    }
    if (rc == CS_OK && (a.heatmap || a.frames || a.timeline))
        rc = run_write_figures(&a, run.machine, run.program, &run.result,
                               run.is_coll ? &run.coll : NULL, &figs, a.json ? NULL : stdout,
                               &err);
    if (rc == CS_OK && a.json) { /* the summary names them otherwise */
        cs_app_wrote(&progress, a.heatmap, "heatmap");
        cs_app_wrote(&progress, a.frames, "frames");
        cs_app_wrote(&progress, a.timeline, "timeline");
    }
    if (rc != CS_OK)
        cs_app_report(&err);

    cs_request_run_destroy(&run);
    return rc;
}
