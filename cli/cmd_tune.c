/* `tforge tune TASK.json`: the main job. */
#include "cli.h"
#include "clock.h"
#include "digest.h"
#include "install.h"
#include "ablation.h"
#include "forge.h"
#include "profile.h"
#include "backend.h"
#include "loop.h"
#include "tune_report.h"
#include "tune_takehome.h"
#include "recording.h"
#include "registry.h"
#include "replay.h"
#include "strategy.h"
#include "store.h"
#include "task.h"
#include "tforge/error.h"
#include "tforge/log.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
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
    "                     for forge and rules (default bottleneck)\n"
    "  --patience N       stop after N candidates without a new incumbent (default: never)\n"
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
    "  --transform-option ID.K=V  an option of transform ID (repeatable)\n"
    "  --option K=V       a setting of the strategy (repeatable)\n"
    "  --budget N         candidates to evaluate, baselines not counted (default 50)\n"
    "  --time T           stop the search after T (90s, 5m, 1h) even if the budget is not\n"
    "                     spent; it counts from the first proposal, after the baselines are\n"
    "                     measured and profiled, and one batch always runs\n"
    "  --seed S           the strategy's seed (default 1)\n"
    "  --batch Q          candidates proposed and compiled at once (default: the compile\n"
    "                     workers, at most 4)\n"
    "  --compile-workers N  compile processes (default: the CPU cores)\n"
    "  --no-lookahead     propose each batch only once the last one is told (default: the\n"
    "                     next batch is proposed and its compiles started while this one\n"
    "                     is checked and timed, so that the GPU does not wait for them)\n"
    "  --shape I|all      which of the task's tuning shapes (default 0); all: each in turn,\n"
    "                     into DIR/shape-I/, with a summary per shape and overall in DIR\n"
    "  --out DIR          where the results go (default tforge-out/<kernel>): best_config.py,\n"
    "                     best_variant.py, result.json, report.md, convergence.svg, tforge.db\n"
    "  --resume           continue the run with the same settings stored in DIR/tforge.db\n"
    "  --timeout S        seconds a candidate may take to compile, check or time before it is\n"
    "                     killed and recorded as timed out (default 60, 600, 120)\n"
    "  --json             the result as JSON on standard output\n"
    "  --plugin-dir DIR, -v, -q\n\n"
    "exit status: 0 tuned, 1 the work failed, 2 bad usage or a bad task file.\n";

enum { OPT_BACKEND = 1, OPT_STRATEGY, OPT_OPTION, OPT_BUDGET, OPT_TIME, OPT_SEED, OPT_BATCH,
       OPT_WORKERS, OPT_SHAPE, OPT_OUT, OPT_RESUME, OPT_CHECK, OPT_TIMEOUT, OPT_TRANSFORMS,
       OPT_TRANSFORM_OPTION, OPT_HEURISTIC, OPT_PATIENCE, OPT_NO_COUNTERS,
       OPT_PROFILER_OPTION, OPT_PROFILE_ALL, OPT_NO_LOOKAHEAD };

typedef struct settings {
    const char *task, *backend_text, *strategy, *out, *replay_file;
    const char *heuristic; /* steers forge and rules */
    const char *profiler_options[65]; /* NULL-terminated */
    size_t n_profiler_options;
    int no_counters;
    int lookahead; /* the loop's: on unless --no-lookahead, where the backend compiles */
    int profile_all; /* profile every correct candidate, not only the incumbents */
    const char *options[65]; /* NULL-terminated: at most 64 are taken */
    size_t n_options;
    char unchanged_tail[40]; /* the option hold_rewrites adds */
    const char *transforms; /* "all", "none" or ID,ID */
    const char *transform_options[65];
    size_t n_transform_options;
    const tforge_backend_type *backend;
    uint32_t budget, batch, workers, shape, timeout, patience;
    int all_shapes;
    uint64_t seed;
    double time_limit;
    int resume, check;
    double load_s; /* seconds spent loading the task (its worker, the analysis, the space) */
} settings;

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

static int timeout_ms(uint32_t seconds)
{
    return seconds > INT_MAX / 1000 ? INT_MAX : (int)seconds * 1000;
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

static int parse(const cli_command *c, int argc, char **argv, settings *s, cli_common *common)
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
        {"out", required_argument, NULL, OPT_OUT},
        {"resume", no_argument, NULL, OPT_RESUME},
        {"check", no_argument, NULL, OPT_CHECK},
        {"timeout", required_argument, NULL, OPT_TIMEOUT},
        {"transforms", required_argument, NULL, OPT_TRANSFORMS},
        {"transform-option", required_argument, NULL, OPT_TRANSFORM_OPTION},
        {"heuristic", required_argument, NULL, OPT_HEURISTIC},
        {"patience", required_argument, NULL, OPT_PATIENCE},
        {"no-counters", no_argument, NULL, OPT_NO_COUNTERS},
        {"no-lookahead", no_argument, NULL, OPT_NO_LOOKAHEAD},
        {"profile-all", no_argument, NULL, OPT_PROFILE_ALL},
        {"profiler-option", required_argument, NULL, OPT_PROFILER_OPTION},
        CLI_COMMON_LONG_OPTIONS,
        {0, 0, 0, 0}};
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    /* strategy NULL: forge or bo, once the backend is known */
    *s = (settings){.backend_text = "auto", .heuristic = "bottleneck", .transforms = "all",
                    .budget = 50, .lookahead = 1,
                    .seed = 1,
                    .workers = cores > 0 ? (uint32_t)cores : 1};
    /* no '+': options may follow the task file */
    for (int opt; (opt = getopt_long(argc, argv, "hvq", options, NULL)) != -1;) {
        int rc = 0;
        switch (opt) {
        case OPT_BACKEND: s->backend_text = optarg; break;
        case OPT_STRATEGY: s->strategy = optarg; break;
        case OPT_OPTION:
            if (!strchr(optarg, '='))
                return cli_usage_error(c, "--option expects KEY=VALUE, not '%s'", optarg);
            if (s->n_options == 64)
                return cli_usage_error(c, "too many --option settings (at most 64)");
            s->options[s->n_options++] = optarg;
            break;
        case OPT_BUDGET: rc = parse_uint(c, "--budget", optarg, &s->budget, 1); break;
        case OPT_TIME: rc = parse_duration(c, optarg, &s->time_limit); break;
        case OPT_SEED: rc = parse_seed(c, optarg, &s->seed); break;
        case OPT_BATCH: rc = parse_uint(c, "--batch", optarg, &s->batch, 1); break;
        case OPT_WORKERS: rc = parse_uint(c, "--compile-workers", optarg, &s->workers, 1); break;
        case OPT_SHAPE:
            if (strcmp(optarg, "all") == 0)
                s->all_shapes = 1;
            else
                rc = parse_uint(c, "--shape", optarg, &s->shape, 0);
            break;
        case OPT_OUT: s->out = optarg; break;
        case OPT_RESUME: s->resume = 1; break;
        case OPT_CHECK: s->check = 1; break;
        case OPT_TIMEOUT: rc = parse_uint(c, "--timeout", optarg, &s->timeout, 1); break;
        case OPT_TRANSFORMS: s->transforms = optarg; break;
        case OPT_HEURISTIC: s->heuristic = optarg; break;
        case OPT_PATIENCE: rc = parse_uint(c, "--patience", optarg, &s->patience, 1); break;
        case OPT_NO_COUNTERS: s->no_counters = 1; break;
        case OPT_NO_LOOKAHEAD: s->lookahead = 0; break;
        case OPT_PROFILE_ALL: s->profile_all = 1; break;
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
        default:
            rc = cli_common_option(c, common, opt, optarg, argv);
        }
        if (rc)
            return rc;
    }
    if (optind != argc - 1)
        return cli_usage_error(c, optind >= argc ? "the task file is missing"
                                                 : "one task file, not several");
    s->task = argv[optind];
    if (strcmp(s->backend_text, "auto") == 0)
        s->backend = &tforge_backend_cuda; /* decided once the worker has looked for a GPU */
    else if (strncmp(s->backend_text, "replay:", 7) == 0 && s->backend_text[7])
        s->backend = &tforge_backend_replay, s->replay_file = s->backend_text + 7;
    else if (strcmp(s->backend_text, "replay") != 0)
        s->backend = tforge_backend_find(s->backend_text);
    if (!s->backend)
        return cli_usage_error(c, "--backend expects auto, cuda, interpret, compile or "
                                  "replay:FILE, not '%s'",
                               s->backend_text);
    if (s->check && s->backend != &tforge_backend_replay)
        return cli_usage_error(c, "--check goes with --backend replay:FILE");
    return 0;
}

/* --backend auto: a GPU if there is one, else the recorded H200 space of an example task. */
static void choose_backend(settings *s, const tforge_task *t, int have_gpu, char *file,
                           size_t size)
{
    if (strcmp(s->backend_text, "auto") != 0)
        return;
    if (have_gpu) {
        s->backend_text = "cuda";
        fprintf(stderr, "tforge tune: a GPU is visible: tuning on it\n");
        return;
    }
    char dir[1024], data[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", t->path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    const char *name = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
    if (tforge_install_dir(data, sizeof data, TFORGE_DATA_RELDIR))
        data[0] = '\0';
    snprintf(file, size, "%s/h200/%s_%u_H200.json.gz", data, name, s->shape);
    if (access(file, R_OK) == 0) {
        s->backend = &tforge_backend_replay;
        s->backend_text = "replay";
        s->replay_file = file;
        s->check = 1;
        fprintf(stderr, "tforge tune: no GPU here: the embedded default, times recorded on an "
                        "H200 (%s), every candidate checked in Triton's CPU interpreter\n", file);
    } else {
        s->backend = &tforge_backend_interpret;
        s->backend_text = "interpret";
        fprintf(stderr, "tforge tune: no GPU and no recorded space: checking candidates in "
                        "Triton's CPU interpreter, without timing\n");
    }
}

/* Asks a worker for the versions, GPU, driver and clocks: recorded with the run. */
static char *environment(tforge_worker *w, const settings *s)
{
    char *response = NULL, detail[200];
    tforge_call_status how;
    cJSON *env = NULL;
    if (tforge_worker_call(w, "{\"module\": \"tforge_worker\", \"function\": \"environment\"}",
                           120000, &response, &how, detail, sizeof detail) == 0 &&
        how == TFORGE_CALL_OK) {
        cJSON *doc = cJSON_Parse(response);
        env = cJSON_DetachItemFromObject(doc, "result");
        cJSON_Delete(doc);
    }
    free(response);
    if (!cJSON_IsObject(env)) {
        cJSON_Delete(env);
        env = cJSON_CreateObject();
    }
    cJSON_AddStringToObject(env, "backend", s->backend_text);
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    cJSON_AddStringToObject(env, "engine_host", host);
    char *text = cJSON_PrintUnformatted(env);
    cJSON_Delete(env);
    return text;
}

static char *settings_json(const settings *s)
{
    cJSON *o = cJSON_CreateObject(), *opts = cJSON_AddArrayToObject(o, "options");
    for (size_t i = 0; i < s->n_options; i++)
        cJSON_AddItemToArray(opts, cJSON_CreateString(s->options[i]));
    cJSON_AddStringToObject(o, "backend", s->backend_text);
    cJSON_AddNumberToObject(o, "shape", s->shape);
    cJSON_AddNumberToObject(o, "batch", s->batch);
    cJSON_AddBoolToObject(o, "lookahead", s->lookahead);
    cJSON_AddBoolToObject(o, "check", s->check);
    cJSON_AddStringToObject(o, "transforms", s->transforms);
    cJSON *topts = cJSON_AddArrayToObject(o, "transform_options");
    for (size_t i = 0; i < s->n_transform_options; i++)
        cJSON_AddItemToArray(topts, cJSON_CreateString(s->transform_options[i]));
    int steered;
    tforge_forge_plugin(s->strategy, &steered);
    if (steered) { /* only where they matter, so that runs stored before them still resume */
        cJSON_AddStringToObject(o, "heuristic", s->heuristic);
        cJSON_AddBoolToObject(o, "counters", !s->no_counters);
        cJSON *popts = cJSON_AddArrayToObject(o, "profiler_options");
        for (size_t i = 0; i < s->n_profiler_options; i++)
            cJSON_AddItemToArray(popts, cJSON_CreateString(s->profiler_options[i]));
    }
    if (s->patience)
        cJSON_AddNumberToObject(o, "patience", s->patience);
    char *text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return text;
}

/* `triton.Config({...}, num_warps=..., num_stages=...)` from a config's JSON text. */
/* What the report says of the backend's numbers. */
static const char *backend_note(const settings *s)
{
    return s->backend == &tforge_backend_interpret
               ? " (Triton's interpreter on the CPU: correctness only, no timing claims)"
           : s->backend == &tforge_backend_replay ? " (times recorded on a GPU, replayed)"
                                                  : "";
}

static cJSON *result_json(const settings *s, const tforge_registry *reg, const tforge_task *t,
                          const tforge_loop_outcome *o, const char *dir)
{
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "task", t->path);
    cJSON_AddStringToObject(r, "kernel", t->kernel);
    cJSON_AddStringToObject(r, "backend", s->backend_text);
    cJSON_AddBoolToObject(r, "timed", s->backend->timed);
    cJSON_AddStringToObject(r, "strategy", s->strategy);
    int steered;
    const char *id = tforge_forge_plugin(s->strategy, &steered);
    const tforge_plugin_record *plugin =
        tforge_registry_find(reg, TFORGE_STRATEGY_INTERFACE_ID, id);
    cJSON_AddStringToObject(r, "strategy_version", plugin ? plugin->descriptor->version : "?");
    cJSON_AddItemToObject(r, "strategy_options", cli_strategy_options(reg, id, s->options));
    cJSON_AddNumberToObject(r, "seed", (double)s->seed);
    cJSON_AddNumberToObject(r, "evaluations", (double)o->n_evals);
    cJSON_AddNumberToObject(r, "resumed", (double)o->n_resumed);
    cJSON_AddNumberToObject(r, "workers_replaced", o->restarts);
    cJSON_AddNumberToObject(r, "seconds", o->seconds);
    cJSON_AddNumberToObject(r, "run_id", (double)o->run_id);
    cJSON_AddStringToObject(r, "out", dir);
    cJSON *base = cJSON_AddObjectToObject(r, "baseline"), *best = cJSON_AddObjectToObject(r, "best");
    if (o->baseline >= 0) {
        cJSON_AddItemToObject(base, "config", cJSON_Parse(o->evals[o->baseline].config));
        if (!isnan(o->baseline_ms))
            cJSON_AddNumberToObject(base, "ms", o->baseline_ms);
    }
    if (o->best >= 0) {
        cJSON_AddItemToObject(best, "config", cJSON_Parse(o->evals[o->best].config));
        cJSON_AddNumberToObject(best, "ms", o->best_ms);
        if (!isnan(o->speedup))
            cJSON_AddNumberToObject(r, "speedup", o->speedup);
    }
    cJSON *list = cJSON_AddArrayToObject(r, "history");
    for (size_t i = 0; i < o->n_evals; i++) {
        const tforge_measurement *x = &o->evals[i].m;
        cJSON *e = cJSON_CreateObject();
        cJSON_AddItemToObject(e, "config", cJSON_Parse(o->evals[i].config));
        cJSON_AddBoolToObject(e, "baseline", o->evals[i].baseline);
        cJSON_AddStringToObject(e, "status", tforge_status_name(x->status));
        if (!isnan(x->value))
            cJSON_AddNumberToObject(e, "ms", x->value);
        if (x->message[0])
            cJSON_AddStringToObject(e, "message", x->message);
        cJSON_AddItemToArray(list, e);
    }
    return r;
}

/* result.json's "profile": every profile taken (the baseline's, each new incumbent's, the
 * winner's), its metrics, labels with their evidence, and what each label's prior moved. */
static void add_profile_results(cJSON *r, const tforge_forge *forge, const tforge_task *t,
                                const tforge_loop_outcome *o, int counters)
{
    cJSON *x = cJSON_AddObjectToObject(r, "profile");
    cJSON_AddStringToObject(x, "heuristic", tforge_forge_heuristic(forge));
    cJSON_AddBoolToObject(x, "counters_asked", counters);
    cJSON *list = cJSON_AddArrayToObject(x, "profiles");
    for (size_t i = 0; i < tforge_forge_count(forge); i++) {
        const tforge_forge_profile *p = tforge_forge_at(forge, i);
        const tforge_loop_eval *e = &o->evals[p->eval];
        cJSON *one = cJSON_CreateObject();
        cJSON_AddNumberToObject(one, "evaluation", (double)p->eval);
        cJSON_AddItemToObject(one, "config", cJSON_Parse(e->config ? e->config : "null"));
        cJSON_AddBoolToObject(one, "baseline", e->baseline);
        cJSON_AddBoolToObject(one, "winner", (long)p->eval == o->best);
        cJSON_AddBoolToObject(one, "steered", p->steered);
        if (p->note[0])
            cJSON_AddStringToObject(one, "note", p->note);
        char *text = tforge_profile_to_json(&p->profile);
        cJSON *metrics = text ? cJSON_Parse(text) : NULL;
        free(text);
        cJSON_AddItemToObject(one, "profile", metrics ? metrics : cJSON_CreateNull());
        cJSON *labels = cJSON_AddArrayToObject(one, "labels");
        for (size_t k = 0; k < p->n_labels; k++) {
            const tforge_forge_label *l = &p->labels[k];
            cJSON *label = cJSON_CreateObject();
            cJSON_AddStringToObject(label, "label", l->label);
            cJSON_AddNumberToObject(label, "confidence", l->confidence);
            cJSON_AddStringToObject(label, "evidence", l->evidence);
            cJSON_AddStringToObject(label, "rule", l->rule);
            cJSON *moves = cJSON_AddArrayToObject(label, "moves");
            for (size_t m = 0; m < l->n_moves; m++) {
                cJSON *move = cJSON_CreateObject();
                cJSON_AddStringToObject(move, "dimension",
                                        tforge_space_name(t->space, l->moves[m].dim));
                cJSON_AddStringToObject(move, "family",
                                        tforge_forge_family(forge, l->moves[m].dim));
                cJSON_AddStringToObject(move, "way", tforge_forge_way_name(l->moves[m].way));
                cJSON_AddItemToArray(moves, move);
            }
            cJSON_AddItemToArray(labels, label);
        }
        cJSON_AddItemToArray(list, one);
    }
}

/* One tune at a time in a results folder: two would overwrite each other's files. The lock is
 * the process's, so a killed run leaves nothing held. Returns the descriptor to keep open. */
static int lock_dir(int *fd, const char *dir)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/.tforge.lock", dir);
    *fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (*fd < 0)
        return tforge_error_set(TFORGE_EIO, "cannot create %s: %s", path, strerror(errno));
    if (flock(*fd, LOCK_EX | LOCK_NB) != 0)
        return tforge_error_set(TFORGE_EINPUT, "%s is in use by another tforge tune (two runs "
                                "would overwrite each other's results): wait for it, or give "
                                "another --out", dir);
    return 0;
}

static int make_dir(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s", dir);
    for (char *p = path + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(path, 0777);
            *p = '/';
        }
    if (mkdir(path, 0777) && errno != EEXIST)
        return tforge_error_set(TFORGE_EIO, "cannot create %s: %s", dir, strerror(errno));
    return 0;
}

static int any_ok(const tforge_loop_outcome *o)
{
    for (size_t i = 0; i < o->n_evals; i++)
        if (o->evals[i].m.status == TFORGE_STATUS_OK)
            return 1;
    return 0;
}

/* The task's baselines as candidates: each its own text, with its point where it lies in the
 * space (then the strategy is told of it). */
static int task_baselines(tforge_candidate **out, tforge_level **points, const tforge_task *t)
{
    uint32_t dims = tforge_space_dims(t->space);
    *out = calloc(t->n_baseline + 1, sizeof **out);
    *points = malloc((t->n_baseline + 1) * dims * sizeof **points);
    if (!*out || !*points)
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    for (size_t b = 0; b < t->n_baseline; b++) {
        tforge_level *p = *points + b * dims;
        (*out)[b].config = t->baselines[b];
        (*out)[b].point = tforge_task_point(p, t, t->baselines[b]) == 0 ? p : NULL;
    }
    tforge_error_clear(); /* a baseline outside the space is no error */
    return 0;
}

/* Every evaluation's config text, for the reports: the baselines have theirs already. */
static int name_configs(tforge_loop_outcome *o, const tforge_task *t)
{
    for (size_t i = 0; i < o->n_evals; i++)
        if (!o->evals[i].config && tforge_task_config(&o->evals[i].config, t, o->evals[i].point))
            return TFORGE_ENOMEM;
    return 0;
}

/* Begins the run in the store, or resumes the stored one with --resume (refused when its
 * settings differ). The run's space is stored with it, so that it can be exported. */
static int open_run(tforge_run_record *record, tforge_run_history *history, tforge_store *store,
                    const tforge_task *t, const settings *s, const char *settings_text,
                    const char *environment_text, tforge_recording **described)
{
    char *space = NULL;
    int rc = tforge_recording_describe_space(described, t->space, NULL, t->kernel);
    if (!rc)
        rc = tforge_recording_space_json(&space, *described);
    tforge_store_run like = {0};
    like.source = t->path;
    like.space_json = space;
    like.strategy = (char *)s->strategy;
    like.settings_json = (char *)settings_text;
    like.seed = s->seed;
    like.budget = s->budget;
    like.environment_json = (char *)environment_text;
    char inputs[16384] = "";
    size_t used = 0;
    for (size_t i = 0; !rc && i < t->n_files; i++)
        rc = tforge_digest_append(inputs, sizeof inputs, &used, t->files[i]);
    if (!rc && s->replay_file)
        rc = tforge_digest_append(inputs, sizeof inputs, &used, s->replay_file);
    like.inputs = inputs;
    *record = (tforge_run_record){store, 0, *described, NULL, NULL};
    if (!rc)
        rc = tforge_run_open(&record->run_id, history, store, &like,
                             s->resume ? TFORGE_RUN_RESUME : TFORGE_RUN_NEW);
    free(space);
    return rc;
}

/* The first failure among the baselines (or, with `baselines_only` 0, among all evaluations)
 * as "status: message", for the message of a run that tuned nothing. */
static void first_failure(char *out, size_t size, const tforge_loop_outcome *o,
                          int baselines_only)
{
    snprintf(out, size, "none recorded");
    for (size_t i = 0; i < o->n_evals; i++)
        if (o->evals[i].m.status != TFORGE_STATUS_OK &&
            (!baselines_only || o->evals[i].baseline)) {
            snprintf(out, size, "%s %s: %s", o->evals[i].config,
                     tforge_status_name(o->evals[i].m.status),
                     o->evals[i].m.message[0] ? o->evals[i].m.message : "(no message)");
            return;
        }
}

static int baseline_ok(const tforge_loop_outcome *o)
{
    int any = 0;
    for (size_t i = 0; i < o->n_evals; i++)
        if (o->evals[i].baseline) {
            if (o->evals[i].m.status == TFORGE_STATUS_OK)
                return 1;
            any = 1;
        }
    return !any;
}

/* What one shape's run gave, for the summary of --shape all. */
typedef struct shape_outcome {
    int exit_code;
    double baseline_ms, best_ms, speedup;
} shape_outcome;

/* Tunes the task's selected shape into `dir`. */
/* What the winner's rewrites are: every evaluation's rewrite parameters, the winner's variant,
 * its diff, and what each of its transforms is worth. */
typedef struct won {
    char **rewrites;
    char *variant, *diff;
    tforge_ablation *ablation;
    size_t n_ablation;
} won;

static void won_dispose(won *w, size_t n_evals)
{
    for (size_t i = 0; w->rewrites && i < n_evals; i++)
        free(w->rewrites[i]);
    free(w->rewrites);
    free(w->variant);
    free(w->diff);
    free(w->ablation);
}

/* The unified diff from the kernel's file to `variant` (the worker's difflib). */
static char *diff_of(const char *path, const char *variant)
{
    cJSON *args = cJSON_CreateObject();
    cJSON_AddStringToObject(args, "path", path);
    cJSON_AddStringToObject(args, "text", variant);
    char *json = cJSON_PrintUnformatted(args), *out = NULL;
    cJSON_Delete(args);
    char *result = json ? cli_worker_request(path, "tforge_worker.variants", "unified_diff", json,
                                             NULL, 60000)
                        : NULL;
    cJSON *doc = result ? cJSON_Parse(result) : NULL;
    if (cJSON_IsString(doc))
        out = strdup(doc->valuestring);
    cJSON_Delete(doc);
    free(result);
    free(json);
    return out;
}

static int winner_variant(won *w, tforge_backend *b, const tforge_task *t,
                          const tforge_loop_outcome *o, const cli_common *common, int ablate)
{
    if (!(w->rewrites = calloc(o->n_evals + 1, sizeof *w->rewrites)))
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    for (size_t i = 0; i < o->n_evals; i++)
        if (tforge_task_rewrites(&w->rewrites[i], t, o->evals[i].point))
            return TFORGE_ENOMEM;
    const tforge_level *point = o->best >= 0 ? o->evals[o->best].point : NULL;
    if (!point || tforge_task_variant(&w->variant, t, point, SIZE_MAX) || !w->variant)
        return 0;
    if (!(w->diff = diff_of(t->ir->path, w->variant)))
        return TFORGE_ERROR;
    if (!ablate)
        return 0;
    if (common->verbosity >= 0 && !common->json)
        fprintf(stderr, "tforge: what each of the winner's transforms is worth (each left out, "
                        "checked, re-timed interleaved)\n");
    return tforge_ablate(&w->ablation, &w->n_ablation, b, t, point, 5);
}

/* Where a tune's wall time went: result.json's "seconds_split", and one line on the terminal. */
typedef struct seconds_split {
    double load, setup, winner;
    const tforge_loop_seconds *loop;
} seconds_split;

static void add_seconds_split(cJSON *r, const seconds_split *t)
{
    cJSON *o = cJSON_AddObjectToObject(r, "seconds_split");
    const struct {
        const char *name;
        double value;
    } phases[] = {{"load_task", t->load},           {"setup", t->setup},
                  {"baselines", t->loop->baselines_s}, {"profile", t->loop->steer_s},
                  {"search", t->loop->search_s},    {"candidates", t->loop->candidates_s},
                  {"final_retiming", t->loop->final_s}, {"winner", t->winner},
                  {"compile_summed", t->loop->compile_s}};
    for (size_t i = 0; i < sizeof phases / sizeof *phases; i++)
        cJSON_AddNumberToObject(o, phases[i].name, phases[i].value);
}

static void print_seconds_split(const seconds_split *t)
{
    const tforge_loop_seconds *l = t->loop;
    printf("seconds: task %.1f, setup %.1f, baselines %.1f, profile %.1f, search %.1f, "
           "candidates %.1f, final re-timing %.1f, winner %.1f; compile times summed %.1f "
           "(they overlap the rest)\n",
           t->load, t->setup, l->baselines_s, l->steer_s, l->search_s, l->candidates_s,
           l->final_s, t->winner, l->compile_s);
}

/* The runner's busy share of the wall time after the first batch (the GPU's, on cuda: how much
 * it waited for the compilers), NAN when the run had no second batch. */
static double runner_busy(const tforge_loop_outcome *o, size_t first)
{
    if (o->n_evals <= first + 1)
        return NAN;
    double busy = 0, wall = o->evals[o->n_evals - 1].elapsed_s - o->evals[first].elapsed_s;
    int runner = 0; /* the compile backend has none */
    for (size_t i = first + 1; i < o->n_evals; i++)
        for (uint32_t k = 0; k < o->evals[i].m.n_metrics; k++)
            if (strcmp(o->evals[i].m.metrics[k].name, "runner_ms") == 0) {
                busy += o->evals[i].m.metrics[k].value / 1e3;
                runner = 1;
            }
    return runner && wall > 0 ? busy / wall : NAN;
}

/* result.json's "transforms": those that apply, the winner's rewrites, each one's worth. */
static void add_transform_results(cJSON *r, const tforge_task *t, const tforge_loop_outcome *o,
                                  const won *w)
{
    cJSON *x = cJSON_AddObjectToObject(r, "transforms");
    cJSON *applied = cJSON_AddArrayToObject(x, "apply");
    for (size_t i = 0; i < tforge_transforms_count(t->transforms); i++)
        cJSON_AddItemToArray(applied, cJSON_CreateString(tforge_transforms_id(t->transforms, i)));
    const char *rewrites = o->best >= 0 ? w->rewrites[o->best] : NULL;
    if (rewrites)
        cJSON_AddStringToObject(x, "winner", rewrites);
    else
        cJSON_AddNullToObject(x, "winner");
    cJSON *worth = cJSON_AddArrayToObject(x, "worth");
    for (size_t k = 0; k < w->n_ablation; k++) {
        const tforge_ablation *a = &w->ablation[k];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "without", tforge_transforms_id(t->transforms, a->transform));
        cJSON_AddStringToObject(e, "status", tforge_status_name(a->m.status));
        if (!isnan(a->with_ms) && !isnan(a->without_ms)) {
            cJSON_AddNumberToObject(e, "winner_ms", a->with_ms);
            cJSON_AddNumberToObject(e, "without_ms", a->without_ms);
        }
        cJSON_AddItemToArray(worth, e);
    }
}

/* Opens the transforms --transforms names on the task (once: every shape's space then has
 * their parameters) and says which apply. */
static int use_transforms(const settings *s, const tforge_registry *reg, tforge_task *task)
{
    if (task->transforms || strcmp(s->transforms, "none") == 0)
        return 0;
    cli_transform_ids list;
    int all = strcmp(s->transforms, "all") == 0;
    int rc = cli_transform_ids_split(&list, s->transforms);
    if (!rc)
        rc = tforge_task_use_transforms(task, reg, all ? NULL : list.ids,
                                        s->n_transform_options ? s->transform_options : NULL);
    cli_transform_ids_free(&list);
    for (size_t i = 0; !rc && i < tforge_transforms_count(task->transforms); i++)
        tforge_log(TFORGE_LOG_INFO, "transform %s: %s", tforge_transforms_id(task->transforms, i),
                   tforge_transforms_describe(task->transforms, i));
    return rc;
}

/* bo's initial design holds the transforms' parameters (the space's last dimensions) at level
 * 0, the source unchanged, unless the user set `unchanged_tail`: random rewrites on random
 * knobs taught the model little (experiments/NOTES.md, session 15); the model and the rule
 * moves bring the rewrites in from the points it measured. */
static void hold_rewrites(settings *s, const tforge_task *task, const char *plugin)
{
    if (!task->transforms || strcmp(plugin, "bo") != 0 || s->n_options == 64)
        return;
    for (size_t i = 0; i < s->n_options; i++)
        if (strncmp(s->options[i], "unchanged_tail=", 15) == 0)
            return;
    uint32_t dims = tforge_space_dims(task->space), tail = 0;
    size_t transform;
    uint32_t param;
    while (tail < dims && tforge_transforms_find(task->transforms,
                                                 tforge_space_name(task->space, dims - 1 - tail),
                                                 &transform, &param) == 0)
        tail++;
    if (!tail)
        return;
    snprintf(s->unchanged_tail, sizeof s->unchanged_tail, "unchanged_tail=%u", tail);
    s->options[s->n_options++] = s->unchanged_tail;
    s->options[s->n_options] = NULL;
}

/* forge on a GPU (the cuda backend) when its heuristic is there, else bo. */
static const char *default_strategy(const settings *s, const tforge_registry *reg)
{
    if (s->backend != &tforge_backend_cuda)
        return "bo";
    if (tforge_registry_find(reg, TFORGE_HEURISTIC_INTERFACE_ID, s->heuristic))
        return "forge";
    tforge_log(TFORGE_LOG_WARN, "no heuristic plugin %s: tuning with bo, unsteered by profiles",
               s->heuristic);
    return "bo";
}

/* Writes every file of the results folder, the take-home verdict so far included; returns
 * result.json's document, or NULL with the error set. */
static cJSON *write_results(const settings *s, const tforge_registry *reg, const tforge_task *task,
                            const tforge_loop_outcome *o, const won *w, const tforge_forge *forge,
                            int counters, double busy, const seconds_split *split,
                            const cli_takehome *th, const char *dir)
{
    cJSON *result = result_json(s, reg, task, o, dir);
    add_seconds_split(result, split);
    if (!isnan(busy))
        cJSON_AddNumberToObject(result, "runner_busy_after_first_batch", busy);
    if (task->transforms)
        add_transform_results(result, task, o, w);
    if (forge)
        add_profile_results(result, forge, task, o, counters);
    if (th->result)
        cJSON_AddItemToObject(result, "take_home", cJSON_Duplicate(th->result, 1));
    char *result_text = cJSON_Print(result);
    tforge_report_tune report = {s->task,      s->backend_text, backend_note(s), s->strategy,
                                 s->seed,      task->kernel,    task->path,      task->source,
                                 o,            result_text,     task->transforms, w->rewrites,
                                 w->variant,   w->diff,         w->ablation,     w->n_ablation,
                                 forge,        task->space,     th->hook,        th->hook_at,
                                 th->dropped,  th->report};
    int rc = tforge_report_write_tune(dir, &report);
    free(result_text);
    if (rc) {
        cJSON_Delete(result);
        return NULL;
    }
    return result;
}

static int tune_shape(shape_outcome *so, const cli_command *command, settings s,
                      const cli_common *common, tforge_registry *reg, tforge_task *task,
                      const char *env, const char *dir)
{
    tforge_recording *rec = NULL;
    tforge_recording *described = NULL;
    tforge_backend backend = {0};
    tforge_candidate *baselines = NULL;
    tforge_level *baseline_points = NULL;
    tforge_run_history history = {0};
    tforge_store *store = NULL;
    tforge_loop_outcome outcome = {0};
    tforge_forge *forge = NULL;
    const char **families = NULL;
    won won = {0};
    cli_takehome th = {0};
    char *set = NULL, db[4200];
    cJSON *result = NULL;
    int exit_code = TFORGE_EXIT_OK, lock = -1;

    char recorded[4096];
    choose_backend(&s, task, strstr(env, "\"gpu\"") != NULL, recorded, sizeof recorded);
    if (!s.strategy)
        s.strategy = default_strategy(&s, reg);
    int steered;
    const char *strategy_plugin = tforge_forge_plugin(s.strategy, &steered);
    /* Batches trade evaluations for wall time: bo's replayed score on the H200 matmul space at
     * 20 evaluations fell from 0.92 (one at a time) to 0.91 in fours and 0.82 in sixteens. */
    if (!s.batch)
        s.batch = s.backend == &tforge_backend_replay ? 1 : s.workers < 4 ? s.workers : 4;
    s.lookahead = s.lookahead && s.backend->prepare; /* nothing to start ahead otherwise */
    /* a recording holds rewrites only when it was made with them: named transforms alone */
    if ((s.backend != &tforge_backend_replay || strcmp(s.transforms, "all") != 0) &&
        use_transforms(&s, reg, task))
        goto failed;
    hold_rewrites(&s, task, strategy_plugin);
    if (!(set = settings_json(&s)))
        goto failed;
    snprintf(db, sizeof db, "%s/tforge.db", dir);
    if (s.replay_file && tforge_recording_read(&rec, s.replay_file))
        goto failed;
    tforge_backend_args args = TFORGE_BACKEND_ARGS_INIT;
    args.task = task;
    args.space = task->space;
    args.recording = rec;
    args.check = s.check;
    args.noise_seed = s.seed;
    args.compile_workers = s.workers;
    args.shape = s.shape;
    args.profiler_options = s.n_profiler_options ? s.profiler_options : NULL;
    if (s.timeout)
        args.compile_timeout_ms = args.check_timeout_ms = args.time_timeout_ms =
            timeout_ms(s.timeout);
    tforge_run_record record = {NULL, 0, NULL, NULL, NULL};
    double setup_start = tforge_clock_s(), loop_end = 0;
    seconds_split split = {s.load_s, 0, 0, &outcome.split};
    if (make_dir(dir) || lock_dir(&lock, dir) || tforge_store_open(&store, db) ||
        open_run(&record, &history, store, task, &s, set, env, &described) ||
        tforge_backend_open(&backend, s.backend, &args) ||
        task_baselines(&baselines, &baseline_points, task))
        goto failed;
    tforge_forge_options fo = TFORGE_FORGE_OPTIONS_INIT;
    fo.heuristic = s.heuristic;
    fo.record = &record;
    fo.counters = !s.no_counters;
    fo.steer = steered;
    fo.profile_all = s.profile_all;
    if ((steered || s.profile_all) &&
        (tforge_forge_families(&families, task->space, task->transforms) ||
         (fo.families = families, tforge_forge_open(&forge, reg, task->space, &backend, &fo))))
        goto failed;
    tforge_loop_options lo = TFORGE_LOOP_OPTIONS_INIT;
    lo.strategy = strategy_plugin;
    tforge_forge_companion(&lo, s.strategy);
    lo.strategy_options = s.options;
    lo.steer = forge ? tforge_forge_steer(forge) : NULL;
    lo.patience = s.patience;
    lo.seed = s.seed;
    lo.budget = s.budget;
    lo.time_limit_s = s.time_limit;
    lo.batch = s.batch;
    lo.lookahead = s.lookahead;
    lo.baselines = baselines;
    lo.n_baselines = task->n_baseline;
    lo.record = &record;
    lo.history = &history;
    lo.progress = isatty(2) && common->verbosity >= 0;
    if (!s.backend->timed)
        lo.final_rounds = 0; /* nothing to re-time */
    split.setup = tforge_clock_s() - setup_start;
    if (tforge_loop_run(&outcome, reg, task->space, &backend, &lo) ||
        name_configs(&outcome, task))
        goto failed;
    loop_end = tforge_clock_s();
    /* the winner's profile for the report, when it was never an incumbent profiled */
    if (forge && outcome.best >= 0 &&
        tforge_forge_profile_eval(forge, &outcome, (size_t)outcome.best, NULL))
        goto failed;
    /* the first batch: the baselines and the first proposals (they wait for their compile) */
    double busy = runner_busy(&outcome, task->n_baseline + s.batch - 1);
    /* the winner, re-run as the user runs it: its files written, imported in a fresh worker and
     * launched through their own entry point; refused, and the next candidate's written, when
     * they fail; written once more with the verdict */
    th.gpu = s.backend == &tforge_backend_cuda;
    th.timeout_ms = s.timeout ? timeout_ms(s.timeout) : 600000;
    for (int pass = 0, verdict = 1; verdict == 1; pass++) {
        if (pass) { /* a refused winner's: the next one's variant and files in their place */
            won_dispose(&won, outcome.n_evals);
            won = (struct won){0};
        }
        cJSON_Delete(result);
        result = NULL;
        if ((task->transforms &&
             winner_variant(&won, &backend, task, &outcome, common, pass == 0)) ||
            cli_takehome_hook(&th, task, &outcome, won.variant) ||
            !(result = write_results(&s, reg, task, &outcome, &won, forge, fo.counters, busy,
                                     &split, &th, dir)) ||
            (verdict = cli_takehome_verify(&th, dir, task, &outcome, won.rewrites)) < 0)
            goto failed;
    }
    cJSON_Delete(result); /* once more, with the verdict and the seconds it took */
    split.winner = tforge_clock_s() - loop_end;
    if (!(result = write_results(&s, reg, task, &outcome, &won, forge, fo.counters, busy, &split,
                                 &th, dir)))
        goto failed;
    if (common->json) {
        char *text = cJSON_Print(result);
        puts(text ? text : "{}");
        free(text);
    } else {
        printf("%s: %zu evaluations in %.1f s (%s backend%s)\n", task->kernel, outcome.n_evals,
               outcome.seconds, s.backend_text,
               s.backend == &tforge_backend_interpret ? ": correctness only, no timing"
               : s.backend == &tforge_backend_compile ? ": compiled only, neither run nor timed"
               : s.backend == &tforge_backend_replay && s.check
                   ? ": times recorded on a GPU, replayed; candidates checked in the interpreter"
               : s.backend == &tforge_backend_replay ? ": times recorded on a GPU, replayed"
                                                     : "");
        if (outcome.best >= 0 && !isnan(outcome.speedup))
            printf("baseline %.4g ms -> best %.4g ms: %.2fx\nbest %s\n", outcome.baseline_ms,
                   outcome.best_ms, outcome.speedup, outcome.evals[outcome.best].config);
        if (outcome.best >= 0 && won.variant)
            printf("rewrites %s (best_variant.py, best_variant.diff)\n",
                   won.rewrites[outcome.best]);
        size_t ok = 0;
        for (size_t i = 0; i < outcome.n_evals; i++)
            ok += outcome.evals[i].m.status == TFORGE_STATUS_OK;
        printf("%zu of %zu evaluations ok; results in %s/\n", ok, outcome.n_evals, dir);
        if (!isnan(busy))
            printf("%s busy %.0f%% of the wall time after the first batch\n",
                   s.backend == &tforge_backend_cuda ? "GPU" : "checker", 100 * busy);
        print_seconds_split(&split);
    }
    so->baseline_ms = outcome.baseline_ms;
    so->best_ms = outcome.best_ms;
    so->speedup = outcome.speedup;
    /* the results are written (they say why each failed), but the run did not do its work */
    char why[1400];
    if (!any_ok(&outcome)) {
        first_failure(why, sizeof why, &outcome, 0);
        tforge_error_set(TFORGE_ERROR, "%s: no evaluation ran correctly (%zu tried); the first "
                         "failure: %s; see %s/report.md", task->path, outcome.n_evals, why, dir);
        goto failed;
    }
    if (!baseline_ok(&outcome)) {
        first_failure(why, sizeof why, &outcome, 1);
        tforge_error_set(TFORGE_ERROR, "%s: the baseline failed, so nothing was measured against "
                         "it: %s; see %s/report.md", task->path, why, dir);
        goto failed;
    }
    goto cleanup;
failed:
    exit_code = cli_fail(command);
cleanup:
    so->exit_code = exit_code;
    cJSON_Delete(result);
    cli_takehome_dispose(&th);
    won_dispose(&won, outcome.n_evals);
    tforge_forge_free(forge);
    free(families);
    tforge_loop_outcome_dispose(&outcome);
    tforge_backend_close(&backend);
    tforge_run_history_dispose(&history);
    tforge_recording_free(described);
    free(baselines);
    free(baseline_points);
    tforge_store_close(store);
    if (lock >= 0)
        close(lock);
    tforge_recording_free(rec);
    free(set);
    return exit_code;
}

/* --shape all: one line a shape and the geometric mean of the speedups, also as summary.json. */
static int write_summary(const char *dir, const tforge_task *task, const shape_outcome *so,
                         int json)
{
    cJSON *o = cJSON_CreateObject(), *shapes = cJSON_AddArrayToObject(o, "shapes");
    double log_sum = 0;
    size_t n = 0;
    if (!json)
        printf("\n%-4s %-40s %12s %12s %8s\n", "", "shape", "baseline ms", "best ms", "speedup");
    for (size_t i = 0; i < task->n_tune; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddItemToObject(e, "shape", cJSON_Parse(task->tune_shapes[i]));
        cJSON_AddBoolToObject(e, "ok", so[i].exit_code == TFORGE_EXIT_OK);
        if (!isnan(so[i].speedup) && so[i].speedup > 0) {
            cJSON_AddNumberToObject(e, "baseline_ms", so[i].baseline_ms);
            cJSON_AddNumberToObject(e, "best_ms", so[i].best_ms);
            cJSON_AddNumberToObject(e, "speedup", so[i].speedup);
            log_sum += log(so[i].speedup);
            n++;
        }
        cJSON_AddItemToArray(shapes, e);
        if (!json)
            printf("%-4zu %-40s %12.4g %12.4g %7.2fx%s\n", i, task->tune_shapes[i],
                   so[i].baseline_ms, so[i].best_ms, so[i].speedup,
                   so[i].exit_code == TFORGE_EXIT_OK ? "" : "  (failed)");
    }
    if (n)
        cJSON_AddNumberToObject(o, "geomean_speedup", exp(log_sum / (double)n));
    if (!json && n)
        printf("geometric mean speedup over %zu shape(s): %.2fx\n", n, exp(log_sum / (double)n));
    char path[4200], *text = cJSON_Print(o);
    snprintf(path, sizeof path, "%s/summary.json", dir);
    FILE *f = text ? fopen(path, "w") : NULL;
    int rc = f && fputs(text, f) >= 0 ? 0 : -1;
    if (f && fclose(f))
        rc = -1;
    if (json && text)
        puts(text);
    free(text);
    cJSON_Delete(o);
    return rc ? tforge_error_set(TFORGE_EIO, "%s: cannot write it", path) : 0;
}

/* The strategy asked for (forge and rules: their plugin and the heuristic too), or bo, which
 * either default runs, with the options given. */
static int check_strategy(const settings *s, const tforge_registry *reg)
{
    int steered;
    const char *plugin = tforge_forge_plugin(s->strategy ? s->strategy : "bo", &steered);
    int rc = tforge_strategy_check(reg, plugin, s->options);
    if (!rc && steered &&
        !tforge_registry_find(reg, TFORGE_HEURISTIC_INTERFACE_ID, s->heuristic))
        rc = tforge_error_set(TFORGE_ENOTFOUND, "--strategy %s is steered by a heuristic, and "
                              "there is no heuristic plugin %s (see `tforge plugins`)",
                              s->strategy, s->heuristic);
    return rc;
}

static int run(const cli_command *command, int argc, char **argv)
{
    settings s;
    cli_common common = {0};
    int rc = parse(command, argc, argv, &s, &common);
    if (rc)
        return rc < 0 ? TFORGE_EXIT_OK : rc;
    tforge_registry *reg = NULL;
    tforge_worker *loader = NULL;
    tforge_task *task = NULL;
    shape_outcome *outcomes = NULL;
    char *env = NULL, dir[4096];
    int exit_code = TFORGE_EXIT_OK;

    static const char *const interpreting[] = {"TRITON_INTERPRET=1", NULL};
    static const char *const compiling[] = {"TRITON_INTERPRET=0", NULL};
    tforge_worker_options wo = TFORGE_WORKER_OPTIONS_INIT;
    wo.name = "task";
    wo.env = s.backend == &tforge_backend_cuda ? compiling : interpreting;
    /* the strategy and its options before anything is started or stored */
    double load_start = tforge_clock_s();
    if (cli_load_plugins(&common, &reg) || check_strategy(&s, reg) ||
        tforge_worker_start(&loader, &wo) ||
        tforge_task_load(&task, loader, s.task, s.timeout ? timeout_ms(s.timeout) : 300000))
        goto failed;
    s.load_s = tforge_clock_s() - load_start;
    if (s.shape >= task->n_tune) {
        tforge_error_set(TFORGE_EINPUT, "--shape %u: the task has %zu tuning shapes", s.shape,
                         task->n_tune);
        goto failed;
    }
    for (size_t i = 0; i < task->n_dropped; i++)
        tforge_log(TFORGE_LOG_INFO, "%s", task->dropped[i]);
    for (size_t i = 0; i < task->n_warnings; i++)
        tforge_log(TFORGE_LOG_WARN, "%s", task->warnings[i]);
    if (!(env = environment(loader, &s)))
        goto failed;
    tforge_worker_free(loader);
    loader = NULL;
    if (s.out)
        snprintf(dir, sizeof dir, "%s", s.out);
    else
        snprintf(dir, sizeof dir, "tforge-out/%s", task->kernel);
    if (!s.all_shapes) {
        shape_outcome so;
        exit_code = tforge_task_select(task, s.shape)
                        ? cli_fail(command)
                        : tune_shape(&so, command, s, &common, reg, task, env, dir);
        goto cleanup;
    }
    if (!(outcomes = calloc(task->n_tune, sizeof *outcomes)) || make_dir(dir)) {
        if (!outcomes)
            tforge_error_set(TFORGE_ENOMEM, "out of memory");
        goto failed;
    }
    for (size_t i = 0; i < task->n_tune; i++) {
        char sub[4200];
        snprintf(sub, sizeof sub, "%s/shape-%zu", dir, i);
        s.shape = (uint32_t)i;
        if (!common.json)
            printf("%sshape %zu: %s\n", i ? "\n" : "", i, task->tune_shapes[i]);
        outcomes[i].speedup = NAN;
        outcomes[i].exit_code = tforge_task_select(task, i)
                                    ? cli_fail(command)
                                    : tune_shape(&outcomes[i], command, s, &common, reg, task,
                                                 env, sub);
        if (outcomes[i].exit_code == TFORGE_EXIT_USAGE) { /* the task is wrong: stop */
            exit_code = TFORGE_EXIT_USAGE;
            goto cleanup;
        }
        if (outcomes[i].exit_code)
            exit_code = TFORGE_EXIT_FAILED;
    }
    if (write_summary(dir, task, outcomes, common.json))
        goto failed;
    goto cleanup;
failed:
    exit_code = cli_fail(command);
cleanup:
    free(outcomes);
    tforge_task_free(task);
    tforge_worker_free(loader);
    tforge_registry_free(reg);
    free(env);
    return exit_code;
}

const cli_command cli_cmd_tune = {"tune", "tune a Triton kernel described by a task file", help,
                                  run};
