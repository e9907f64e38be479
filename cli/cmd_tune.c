/* `tforge tune TASK.json`: the main job. Parses the arguments into the session's options
 * (engine/session/), runs it, and prints what it tells. */
#include "cli.h"
#include "forge.h"
#include "registry.h"
#include "session.h"
#include "strategy.h"
#include "tforge/error.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char help[] =
    "usage: tforge tune TASK.json [options]\n\n"
    "Tunes the Triton kernel a task file describes (engine/task/TASK.md): evaluates its baseline,\n"
    "then the candidates a search strategy proposes, each compiled, checked against the\n"
    "reference on fresh inputs and timed; names the fastest correct one after re-timing the\n"
    "best few interleaved with the baseline.\n\n"
    "  --backend B        auto (default): cuda when a GPU is visible; without one, the embedded\n"
    "                     default: replay times recorded on an H200 for this task, when the\n"
    "                     product ships them (<prefix>/share/tforge/h200/<task folder>_<shape>\n"
    "                     _H200.json.gz), with every candidate checked in the interpreter; else\n"
    "                     interpret. It says which it chose.\n"
    "                     cuda: compile ahead on the CPU cores, check and time on the GPU\n"
    "                     interpret: compile for sm_90 and check in Triton's interpreter on the\n"
    "                     CPU; correctness only, no timing claims\n"
    "                     replay:FILE: times recorded in a tuning space (Kernel Tuner cache or\n"
    "                     T4 file) instead of a GPU; add --check to check candidates in the\n"
    "                     interpreter as well\n"
    "                     compile: compile only (for the GPU there is, else sm_90): which\n"
    "                     candidates build, their registers, spills and shared memory\n"
    "  --strategy ID      search strategy: forge (default with the cuda backend: bo steered by\n"
    "                     the profile of the baseline and of each new incumbent, counters\n"
    "                     included where the GPU allows; the labels' favoured moves from\n"
    "                     the incumbent come first, whole batches while they improve it,\n"
    "                     a quarter at least), bo (default otherwise: no profile), rules\n"
    "                     (the heuristics alone, no model), or any strategy plugin\n"
    "                     (`tforge plugins`)\n"
    "  --heuristic ID     the heuristic plugin that turns a profile into labels and a prior\n"
    "                     for forge and rules (default bottleneck; one named must be there,\n"
    "                     whatever the strategy)\n"
    "  --patience N       stop after N candidates without a new incumbent (default: never)\n"
    "  --sol-stop P       stop once the incumbent runs at P% of its speed of light (default\n"
    "                     95; 0: never): the task's bytes and flops over the device's\n"
    "                     measured peaks (on the GPU measured once, a few seconds, and kept\n"
    "                     in $XDG_CACHE_HOME/tforge/devices/); candidates whose bound cannot\n"
    "                     beat the incumbent are not run. report.md and result.json give\n"
    "                     the baseline's and the winner's share of it\n"
    "  --device FILE      the device file of those peaks (default: the GPU's; a replayed\n"
    "                     recording's device.json beside it)\n"
    "  --objective ID     the cost model minimised: latency (default; the median time),\n"
    "                     energy (joules per launch, NVML), edp (energy x delay), or any\n"
    "                     cost model plugin (`tforge plugins`)\n"
    "  --no-counters      profile forge's and rules' incumbents by static metrics alone\n"
    "  --profile-all      profile every candidate that ran correctly too (any strategy), as\n"
    "                     its batch is told, kept in the store: `tforge store export` then\n"
    "                     writes a recording with the counters, for `tforge replay`\n"
    "  --profiler-option K=V  an option of the GPU's profiler (cupti; `tforge plugins\n"
    "                     --options`), repeatable: refuse=1 runs as if counters were refused\n"
    "  --transforms IDS   source transforms whose parameters join the space: all (default,\n"
    "                     every transform plugin that applies; none with the replay backend,\n"
    "                     whose recordings hold no rewrites unless made with them: name them),\n"
    "                     none, or ID,ID (`tforge plugins`)\n"
    "  --transform-option ID.K=V  an option of transform ID (repeatable): ID one that\n"
    "                     --transforms keeps, K one it publishes (`tforge plugins --options`)\n"
    "  --constraint EXPR  a constraint over any dimension of the space, the transforms'\n"
    "                     parameters included (`tforge transform` names them), in the task's\n"
    "                     constraint language (repeatable): \"split_k <= 4\", \"not tma_subtile\"\n"
    "  --llm ID           ask the language model plugin ID (`tforge plugins`) for a rewrite\n"
    "                     of the kernel when the incumbent stalls (--patience, default 10;\n"
    "                     forge asks only where the incumbent's labels name a bottleneck\n"
    "                     that no move left addresses, and goes on searching otherwise);\n"
    "                     each accepted one is a level of the `variant` dimension, its knobs\n"
    "                     re-tuned; every request is kept in the results folder's store\n"
    "  --llm-option K=V   an option of the model's plugin (repeatable)\n"
    "  --llm-budget N     ask the model at most N times a run (default 3)\n"
    "  --llm-replay       the model's answers from the results folder's store only: no model\n"
    "                     is asked (with --llm, its plugin only names the model)\n"
    "  --option K=V       a setting of the strategy (repeatable)\n"
    "  --budget N         candidates to evaluate, baselines not counted (default 50)\n"
    "  --time T           stop the search after T (90s, 5m, 1h) even if the budget is not\n"
    "                     spent; it counts from the first proposal, after the baselines are\n"
    "                     measured and profiled, and one batch always runs\n"
    "  --seed S           the strategy's seed (default 1)\n"
    "  --batch Q          candidates proposed and compiled at once (default: the compile\n"
    "                     workers, at most 4)\n"
    "  --compile-workers N  compile processes (default: the CPU cores; at most 256)\n"
    "  --no-lookahead     propose each batch only once the last one is told (default: the\n"
    "                     next batch is proposed and its compiles started while this one\n"
    "                     is checked and timed, so that the GPU does not wait for them)\n"
    "  --shape I|all      which of the task's tuning shapes (default 0); all: each in turn,\n"
    "                     into DIR/shape-I/, with a summary per shape and overall in DIR\n"
    "  --dtype NAME       the dtype the task's floating inputs are made in: one of the task's\n"
    "                     \"dtypes\" (default its first; a task without them keeps its own)\n"
    "  --out DIR          where the results go (default tforge-out/<kernel>): best_config.py,\n"
    "                     best_variant.py, result.json, report.md, convergence.svg, tforge.db\n"
    "  --resume           continue the run with the same settings stored in DIR/tforge.db\n"
    "  --timeout S        seconds a candidate may take to compile, check or time before it is\n"
    "                     killed and recorded as timed out (default 60, 600, 120)\n"
    "  --json             the result as JSON on standard output\n"
    "  --plugin-dir DIR, -v, -q\n\n"
    "An option that takes one value may be given once (or again with the same value).\n\n"
    "exit status: 0 tuned, 1 the work failed, 2 bad usage or a bad task file.\n";

enum { OPT_BACKEND = 1, OPT_STRATEGY, OPT_OPTION, OPT_BUDGET, OPT_TIME, OPT_SEED, OPT_BATCH,
       OPT_WORKERS, OPT_SHAPE, OPT_OUT, OPT_RESUME, OPT_CHECK, OPT_TIMEOUT, OPT_TRANSFORMS,
       OPT_TRANSFORM_OPTION, OPT_CONSTRAINT, OPT_HEURISTIC, OPT_PATIENCE, OPT_NO_COUNTERS,
       OPT_SOL_STOP, OPT_DEVICE, OPT_OBJECTIVE, OPT_PROFILER_OPTION, OPT_PROFILE_ALL, OPT_LLM,
       OPT_LLM_OPTION, OPT_LLM_BUDGET, OPT_LLM_REPLAY, OPT_NO_LOOKAHEAD, OPT_DTYPE };


/* The session's options and the lists they point to. */
typedef struct args {
    tforge_tune_options o;
    const char *options[65]; /* NULL-terminated: at most 64 are taken */
    size_t n_options;
    const char *profiler_options[65];
    size_t n_profiler_options;
    const char *transform_options[65];
    size_t n_transform_options;
    const char *constraints[65];
    size_t n_constraints;
    const char *llm_options[65];
    size_t n_llm_options;
    int heuristic_given; /* --heuristic named: checked whatever the strategy */
} args;

enum { MAX_COMPILE_WORKERS = 256 };

static int parse_uint(const cli_command *c, const char *name, const char *text, uint32_t *out,
                      uint32_t min)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(text, &end, 10);
    if (!*text || *end || errno || v < min || v > 100000000ul)
        return cli_usage_error(c, "%s expects an integer from %u to 100000000, not '%s'", name,
                               min, text);
    *out = (uint32_t)v;
    return 0;
}

static int parse_seed(const cli_command *c, const char *text, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (!*text || *end || errno || text[0] == '-')
        return cli_usage_error(c, "--seed expects an integer from 0 to %llu, not '%s'",
                               (unsigned long long)UINT64_MAX, text);
    *out = v;
    return 0;
}

static int parse_duration(const cli_command *c, const char *text, double *out)
{
    char *end;
    double v = strtod(text, &end);
    double unit = strcmp(end, "s") == 0 || !*end ? 1 : strcmp(end, "m") == 0 ? 60
                : strcmp(end, "h") == 0 ? 3600 : 0;
    if (end == text || unit == 0 || !(v > 0))
        return cli_usage_error(c, "--time expects a duration such as 90s, 5m or 1h, not '%s'",
                               text);
    *out = v * unit;
    return 0;
}

static int parse(const cli_command *c, int argc, char **argv, args *s, cli_common *common)
{
    static const struct option options[] = {
        {"backend", required_argument, NULL, OPT_BACKEND},
        {"strategy", required_argument, NULL, OPT_STRATEGY},
        {"option", required_argument, NULL, OPT_OPTION},
        {"budget", required_argument, NULL, OPT_BUDGET},
        {"time", required_argument, NULL, OPT_TIME},
        {"seed", required_argument, NULL, OPT_SEED},
        {"batch", required_argument, NULL, OPT_BATCH},
        {"compile-workers", required_argument, NULL, OPT_WORKERS},
        {"shape", required_argument, NULL, OPT_SHAPE},
        {"dtype", required_argument, NULL, OPT_DTYPE},
        {"out", required_argument, NULL, OPT_OUT},
        {"resume", no_argument, NULL, OPT_RESUME},
        {"check", no_argument, NULL, OPT_CHECK},
        {"timeout", required_argument, NULL, OPT_TIMEOUT},
        {"transforms", required_argument, NULL, OPT_TRANSFORMS},
        {"transform-option", required_argument, NULL, OPT_TRANSFORM_OPTION},
        {"constraint", required_argument, NULL, OPT_CONSTRAINT},
        {"heuristic", required_argument, NULL, OPT_HEURISTIC},
        {"patience", required_argument, NULL, OPT_PATIENCE},
        {"objective", required_argument, NULL, OPT_OBJECTIVE},
        {"no-counters", no_argument, NULL, OPT_NO_COUNTERS},
        {"no-lookahead", no_argument, NULL, OPT_NO_LOOKAHEAD},
        {"profile-all", no_argument, NULL, OPT_PROFILE_ALL},
        {"profiler-option", required_argument, NULL, OPT_PROFILER_OPTION},
        {"sol-stop", required_argument, NULL, OPT_SOL_STOP},
        {"device", required_argument, NULL, OPT_DEVICE},
        {"llm", required_argument, NULL, OPT_LLM},
        {"llm-option", required_argument, NULL, OPT_LLM_OPTION},
        {"llm-budget", required_argument, NULL, OPT_LLM_BUDGET},
        {"llm-replay", no_argument, NULL, OPT_LLM_REPLAY},
        CLI_COMMON_LONG_OPTIONS,
        {0, 0, 0, 0}};
    *s = (args){.o = TFORGE_TUNE_OPTIONS_INIT};
    tforge_tune_options *o = &s->o;
    uint32_t shape = 0;
    int all_shapes = 0;
    const char *given[OPT_DTYPE + 1] = {0}; /* each single-valued option's first value */
    /* no '+': options may follow the task file */
    for (int opt, at = -1; (opt = getopt_long(argc, argv, "hvq", options, &at)) != -1; at = -1) {
        int rc = 0;
        if (at >= 0 && opt <= OPT_NO_LOOKAHEAD && options[at].has_arg && opt != OPT_OPTION &&
            opt != OPT_PROFILER_OPTION && opt != OPT_TRANSFORM_OPTION && opt != OPT_CONSTRAINT &&
            opt != OPT_LLM_OPTION && (rc = cli_once(c, &given[opt], options[at].name, optarg)))
            return rc;
        switch (opt) {
        case OPT_BACKEND: o->backend = optarg; break;
        case OPT_STRATEGY: o->strategy = optarg; break;
        case OPT_OPTION:
            if (!strchr(optarg, '='))
                return cli_usage_error(c, "--option expects KEY=VALUE, not '%s'", optarg);
            if (s->n_options == 64)
                return cli_usage_error(c, "too many --option settings (at most 64)");
            s->options[s->n_options++] = optarg;
            break;
        case OPT_BUDGET: rc = parse_uint(c, "--budget", optarg, &o->budget, 1); break;
        case OPT_TIME: rc = parse_duration(c, optarg, &o->time_limit_s); break;
        case OPT_SEED: rc = parse_seed(c, optarg, &o->seed); break;
        case OPT_BATCH: rc = parse_uint(c, "--batch", optarg, &o->batch, 1); break;
        case OPT_WORKERS: /* each a Python process: a typo must not start thousands */
            rc = parse_uint(c, "--compile-workers", optarg, &o->compile_workers, 1);
            if (!rc && o->compile_workers > MAX_COMPILE_WORKERS)
                rc = cli_usage_error(c, "--compile-workers expects an integer from 1 to %d, "
                                     "not '%s'", MAX_COMPILE_WORKERS, optarg);
            break;
        case OPT_SHAPE:
            if (strcmp(optarg, "all") == 0)
                all_shapes = 1;
            else
                rc = parse_uint(c, "--shape", optarg, &shape, 0);
            break;
        case OPT_DTYPE: o->dtype = optarg; break;
        case OPT_OUT:
            o->out = optarg;
            rc = cli_path(c, "--out", optarg);
            break;
        case OPT_RESUME: o->resume = 1; break;
        case OPT_CHECK: o->check = 1; break;
        case OPT_TIMEOUT: rc = parse_uint(c, "--timeout", optarg, &o->timeout_s, 1); break;
        case OPT_TRANSFORMS: o->transforms = optarg; break;
        case OPT_HEURISTIC:
            o->heuristic = optarg;
            s->heuristic_given = 1;
            break;
        case OPT_PATIENCE: rc = parse_uint(c, "--patience", optarg, &o->patience, 1); break;
        case OPT_SOL_STOP: {
            uint32_t percent = 0;
            rc = parse_uint(c, "--sol-stop", optarg, &percent, 0);
            if (!rc && percent > 100)
                rc = cli_usage_error(c, "--sol-stop expects a percent from 0 to 100, not '%s'",
                                     optarg);
            o->sol_stop = percent;
            break;
        }
        case OPT_DEVICE:
            o->device_file = optarg;
            rc = cli_path(c, "--device", optarg);
            break;
        case OPT_OBJECTIVE: o->objective = optarg; break;
        case OPT_NO_COUNTERS: o->counters = 0; break;
        case OPT_NO_LOOKAHEAD: o->lookahead = 0; break;
        case OPT_PROFILE_ALL: o->profile_all = 1; break;
        case OPT_PROFILER_OPTION:
            if (!strchr(optarg, '='))
                return cli_usage_error(c, "--profiler-option expects KEY=VALUE, not '%s'",
                                       optarg);
            if (s->n_profiler_options == 64)
                return cli_usage_error(c, "too many --profiler-option settings (at most 64)");
            s->profiler_options[s->n_profiler_options++] = optarg;
            break;
        case OPT_TRANSFORM_OPTION:
            if (!strchr(optarg, '=') || !strchr(optarg, '.'))
                return cli_usage_error(c, "--transform-option expects ID.KEY=VALUE, not '%s'",
                                       optarg);
            if (s->n_transform_options == 64)
                return cli_usage_error(c, "too many --transform-option settings (at most 64)");
            s->transform_options[s->n_transform_options++] = optarg;
            break;
        case OPT_LLM: o->llm = optarg; break;
        case OPT_LLM_OPTION:
            if (!strchr(optarg, '='))
                return cli_usage_error(c, "--llm-option expects KEY=VALUE, not '%s'", optarg);
            if (s->n_llm_options == 64)
                return cli_usage_error(c, "too many --llm-option settings (at most 64)");
            s->llm_options[s->n_llm_options++] = optarg;
            break;
        case OPT_LLM_BUDGET:
            rc = parse_uint(c, "--llm-budget", optarg, &o->llm_budget, 1);
            break;
        case OPT_LLM_REPLAY: o->llm_replay = 1; break;
        case OPT_CONSTRAINT:
            if (s->n_constraints == 64)
                return cli_usage_error(c, "too many --constraint settings (at most 64)");
            s->constraints[s->n_constraints++] = optarg;
            break;
        default:
            rc = cli_common_option(c, common, opt, optarg, argv);
        }
        if (rc)
            return rc;
    }
    if (optind != argc - 1)
        return cli_usage_error(c, optind >= argc ? "the task file is missing"
                                                 : "one task file, not several");
    o->task = argv[optind];
    o->shape = all_shapes ? TFORGE_TUNE_ALL_SHAPES : (long)shape;
    o->strategy_options = s->options;
    o->profiler_options = s->profiler_options;
    o->transform_options = s->transform_options;
    o->constraints = s->constraints;
    o->llm_options = s->llm_options;
    if (s->n_llm_options && !o->llm)
        return cli_usage_error(c, "--llm-option needs --llm ID");
    if (given[OPT_LLM_BUDGET] && !o->llm && !o->llm_replay)
        return cli_usage_error(c, "--llm-budget needs --llm ID or --llm-replay");
    const char *replay_file;
    const tforge_backend_type *backend = tforge_tune_backend(o->backend, &replay_file);
    if (!backend)
        return cli_usage_error(c, "--backend expects auto, cuda, interpret, compile or "
                                  "replay:FILE, not '%s'",
                               o->backend);
    if (o->check && backend != &tforge_backend_replay)
        return cli_usage_error(c, "--check goes with --backend replay:FILE");
    return 0;
}

/* The strategy asked for (forge and rules: their plugin and the heuristic too), or bo, which
 * either default runs, with the options given. */
static int check_strategy(const tforge_tune_options *o, const tforge_registry *reg)
{
    int steered;
    const char *plugin = tforge_forge_plugin(o->strategy ? o->strategy : "bo", &steered);
    int rc = tforge_strategy_check(reg, plugin, o->strategy_options);
    if (!rc && steered && !tforge_registry_find(reg, TFORGE_HEURISTIC_INTERFACE_ID, o->heuristic))
        rc = tforge_error_set(TFORGE_ENOTFOUND, "--strategy %s is steered by a heuristic, and "
                              "there is no heuristic plugin %s (see `tforge plugins`)",
                              o->strategy, o->heuristic);
    return rc;
}

/* What the printing needs besides the event, and the exit status so far. */
typedef struct printer {
    const cli_command *command;
    const cli_common *common;
    int exit_code; /* the last failure's */
} printer;

static void print_result(const tforge_tune_outcome *outcome, const tforge_tune_shape *r, int json)
{
    if (json) {
        puts(r->result_json ? r->result_json : "{}");
        return;
    }
    const tforge_backend_type *type = r->backend_type;
    printf("%s: %zu evaluations in %.1f s (%s backend%s)\n", outcome->kernel, r->n_evals,
           r->seconds, r->backend,
           type == &tforge_backend_interpret ? ": correctness only, no timing"
           : type == &tforge_backend_compile ? ": compiled only, neither run nor timed"
           : type == &tforge_backend_replay && r->check
               ? ": times recorded on a GPU, replayed; candidates checked in the interpreter"
           : type == &tforge_backend_replay ? ": times recorded on a GPU, replayed"
                                            : "");
    if (r->best_config && !isnan(r->speedup))
        printf("baseline %.4g %s -> best %.4g %s: %.2fx\nbest %s\n", r->baseline_ms, r->unit,
               r->best_ms, r->unit, r->speedup, r->best_config);
    if (r->rewrites)
        printf("rewrites %s (best_variant.py, best_variant.diff)\n", r->rewrites);
    printf("%zu of %zu evaluations ok; results in %s/\n", r->n_ok, r->n_evals, r->dir);
    if (!isnan(r->busy))
        printf("%s busy %.0f%% of the wall time after the first batch\n",
               type == &tforge_backend_cuda ? "GPU" : "checker", 100 * r->busy);
    const tforge_tune_seconds *t = &r->split;
    printf("seconds: task %.1f, setup %.1f, baselines %.1f, profile %.1f, search %.1f, "
           "candidates %.1f, final re-timing %.1f, winner %.1f; compile times summed %.1f "
           "(they overlap the rest)\n",
           t->load_task, t->setup, t->baselines, t->profile, t->search, t->candidates,
           t->final_retiming, t->winner, t->compile_summed);
}

/* --shape all: one line a shape and the geometric mean of the speedups (summary.json's). */
static void print_summary(const tforge_tune_outcome *o, int json)
{
    if (json) {
        if (o->summary_json)
            puts(o->summary_json);
        return;
    }
    const char *unit = "ms"; /* the objective's, one for every shape; a failed shape has none */
    for (size_t i = 0; i < o->n_shapes; i++)
        if (o->shapes[i].unit[0])
            unit = o->shapes[i].unit;
    char baseline[32], best[32];
    snprintf(baseline, sizeof baseline, "baseline %s", unit);
    snprintf(best, sizeof best, "best %s", unit);
    printf("\n%-4s %-40s %12s %12s %8s\n", "", "shape", baseline, best, "speedup");
    for (size_t i = 0; i < o->n_shapes; i++) {
        const tforge_tune_shape *r = &o->shapes[i];
        printf("%-4zu %-40s %12.4g %12.4g %7.2fx%s\n", r->shape, r->shape_json, r->baseline_ms,
               r->best_ms, r->speedup, r->rc == 0 ? "" : "  (failed)");
    }
    if (o->n_speedups)
        printf("geometric mean speedup over %zu shape(s): %.2fx\n", o->n_speedups,
               o->geomean_speedup);
}

static void on_event(void *user, const tforge_tune_event *e)
{
    printer *p = user;
    int quiet = p->common->verbosity < 0 || p->common->json;
    switch (e->kind) {
    case TFORGE_TUNE_BACKEND_CHOSEN:
        if (strcmp(e->backend, "cuda") == 0)
            fprintf(stderr, "tforge tune: a GPU is visible: tuning on it\n");
        else if (e->replay_file)
            fprintf(stderr, "tforge tune: no GPU here: the embedded default, times recorded on "
                            "an H200 (%s), every candidate checked in Triton's CPU interpreter\n",
                    e->replay_file);
        else
            fprintf(stderr, "tforge tune: no GPU and no recorded space: checking candidates in "
                            "Triton's CPU interpreter, without timing\n");
        break;
    case TFORGE_TUNE_SHAPE_BEGIN:
        if (!p->common->json)
            printf("%sshape %zu: %s\n", e->result->shape ? "\n" : "", e->result->shape,
                   e->result->shape_json);
        break;
    case TFORGE_TUNE_ABLATING:
        if (!quiet)
            fprintf(stderr, "tforge: what each of the winner's transforms is worth (each left "
                            "out, checked, re-timed interleaved)\n");
        break;
    case TFORGE_TUNE_SHAPE_DONE: print_result(e->outcome, e->result, p->common->json); break;
    case TFORGE_TUNE_FAILED: p->exit_code = cli_fail(p->command); break;
    case TFORGE_TUNE_SUMMARY: print_summary(e->outcome, p->common->json); break;
    }
}

static int run(const cli_command *command, int argc, char **argv)
{
    args a;
    cli_common common = {0};
    int rc = parse(command, argc, argv, &a, &common);
    if (rc)
        return rc < 0 ? TFORGE_EXIT_OK : rc;
    tforge_registry *reg = NULL;
    printer p = {command, &common, TFORGE_EXIT_OK};
    /* the plugins named and their options before anything is started or stored */
    if (cli_load_plugins(&common, &reg) || check_strategy(&a.o, reg) ||
        cli_check_plugins(reg, a.o.transforms, a.transform_options, "--transform-option",
                          a.heuristic_given ? a.o.heuristic : NULL) ||
        cli_check_profiler_options(reg, a.profiler_options)) {
        p.exit_code = cli_fail(command);
    } else {
        tforge_tune_outcome outcome;
        a.o.registry = reg;
        a.o.progress = isatty(2) && common.verbosity >= 0;
        a.o.on_event = on_event;
        a.o.user = &p;
        tforge_tune_run(&a.o, &outcome); /* each failure told to on_event */
        tforge_tune_outcome_dispose(&outcome);
    }
    tforge_registry_free(reg);
    return p.exit_code;
}

const cli_command cli_cmd_tune = {"tune", "tune a Triton kernel described by a task file", help,
                                  run};
