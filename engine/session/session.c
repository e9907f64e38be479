/* A tune session (session.h): what `tforge tune` runs between its arguments and its printing. */
#include "session.h"

#include "clock.h"
#include "costmodel.h"
#include "tforge/measurement.h"
#include "digest.h"
#include "install.h"
#include "ablation.h"
#include "forge.h"
#include "profile.h"
#include "sol_bound.h"
#include "llm_backend.h"
#include "llm_grow.h"
#include "door.h"
#include "loop.h"
#include "rpc.h"
#include "labels.h"
#include "takehome.h"
#include "tune_report.h"
#include "recording.h"
#include "replay.h"
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

typedef struct settings {
    const char *task, *backend_text, *strategy, *out, *replay_file;
    const char *heuristic; /* steers forge and rules */
    const char *objective; /* the cost model's id, NULL: the built-in latency */
    const char *dtype; /* --dtype as given; once loaded, the task's (NULL: it declares none) */
    tforge_costmodel *model; /* opened for the shape running */
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
    const char *constraints[65]; /* --constraint: over any dimension, the transforms' included */
    size_t n_constraints;
    const tforge_backend_type *backend;
    uint32_t budget, batch, workers, shape, timeout, patience;
    int all_shapes;
    uint64_t seed;
    double time_limit;
    int resume, check;
    const char *device_file; /* the device's measured peaks: given, else found (device_path) */
    char device_path[PATH_MAX];
    double sol_stop;        /* percent of the speed of light that ends the search; 0: never */
    double load_s; /* seconds spent loading the task (its worker, the analysis, the space) */
    const char *llm;            /* --llm: the model's plugin, or NULL */
    const char *llm_options[65];
    size_t n_llm_options;
    uint32_t llm_budget;
    int llm_replay;
    const tforge_llm_grow *llm_grow;  /* the model's proposals and what asking cost, or NULL */
    const tforge_llm_door *llm_door;
    const tforge_tune_options *given; /* the caller's: its events */
    tforge_tune_outcome *outcome;     /* the session's so far */
    tforge_tune_shape *current;       /* the shape running, or NULL */
} settings;

/* Tells the caller of a step of the current shape. */
static void tell(const settings *s, tforge_tune_event_kind kind)
{
    tforge_tune_event e = {kind, s->outcome, s->current, NULL, NULL};
    if (s->given->on_event)
        s->given->on_event(s->given->user, &e);
}

/* A failure (of the current shape, or of the session), told: its code, that of the error set. */
static int failed(const settings *s)
{
    int rc = tforge_error_last()->code < 0 ? tforge_error_last()->code : TFORGE_ERROR;
    if (s->current)
        s->current->rc = rc;
    tell(s, TFORGE_TUNE_FAILED);
    return rc;
}

const tforge_backend_type *tforge_tune_backend(const char *text, const char **replay_file)
{
    *replay_file = NULL;
    if (strcmp(text, "auto") == 0)
        return &tforge_backend_cuda; /* decided once the worker has looked for a GPU */
    if (strncmp(text, "replay:", 7) == 0 && text[7]) {
        *replay_file = text + 7;
        return &tforge_backend_replay;
    }
    return strcmp(text, "replay") != 0 ? tforge_backend_find(text) : NULL;
}

/* The caller's lists copied, so that hold_rewrites may add to the strategy's options. */
static size_t copy_list(const char **to, const char *const *from)
{
    size_t n = 0;
    while (from && from[n] && n < 64)
        to[n] = from[n], n++;
    to[n] = NULL;
    return n;
}

/* Whether the run may grow by a model's proposals (tune --llm, or its replay). */
static int asks_model(const settings *s)
{
    return s->llm || s->llm_replay;
}

static void settings_of(settings *s, const tforge_tune_options *o)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    *s = (settings){.task = o->task, .backend_text = o->backend, .strategy = o->strategy,
                    .out = o->out, .heuristic = o->heuristic, .objective = o->objective,
                    .dtype = o->dtype,
                    .no_counters = !o->counters,
                    .lookahead = o->lookahead, .profile_all = o->profile_all,
                    .transforms = o->transforms, .budget = o->budget, .batch = o->batch,
                    .workers = o->compile_workers ? o->compile_workers
                               : cores > 0        ? (uint32_t)cores
                                                  : 1,
                    .shape = o->shape > 0 ? (uint32_t)o->shape : 0,
                    .timeout = o->timeout_s, .patience = o->patience,
                    .all_shapes = o->shape == TFORGE_TUNE_ALL_SHAPES, .seed = o->seed,
                    .time_limit = o->time_limit_s, .resume = o->resume, .check = o->check,
                    .device_file = o->device_file, .sol_stop = o->sol_stop, .given = o};
    s->backend = tforge_tune_backend(o->backend, &s->replay_file);
    if (o->backend_type)
        s->backend = o->backend_type;
    s->n_options = copy_list(s->options, o->strategy_options);
    s->n_profiler_options = copy_list(s->profiler_options, o->profiler_options);
    s->n_transform_options = copy_list(s->transform_options, o->transform_options);
    s->n_constraints = copy_list(s->constraints, o->constraints);
    s->llm = o->llm;
    s->llm_replay = o->llm_replay;
    s->llm_budget = o->llm_budget;
    s->n_llm_options = copy_list(s->llm_options, o->llm_options);
    if (asks_model(s) && !s->patience) /* a model is asked when the incumbent stalls */
        s->patience = TFORGE_TUNE_LLM_PATIENCE;
}

static int timeout_ms(uint32_t seconds)
{
    return seconds > INT_MAX / 1000 ? INT_MAX : (int)seconds * 1000;
}

static void tell_backend(const settings *s)
{
    tforge_tune_event e = {TFORGE_TUNE_BACKEND_CHOSEN, NULL, NULL, s->backend_text,
                           s->replay_file};
    if (s->given->on_event)
        s->given->on_event(s->given->user, &e);
}

/* --backend auto: a GPU if there is one, else the recorded H200 space of an example task. */
static void choose_backend(settings *s, const tforge_task *t, int have_gpu, char *file,
                           size_t size)
{
    if (strcmp(s->backend_text, "auto") != 0)
        return;
    if (have_gpu) {
        s->backend_text = "cuda";
        tell_backend(s);
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
    /* the shipped recordings were made in the inputs' own dtypes: not one a task's dtypes chose */
    if (access(file, R_OK) == 0 && !t->dtype) {
        s->backend = &tforge_backend_replay;
        s->backend_text = "replay";
        s->replay_file = file;
        s->check = 1;
    } else {
        s->backend = &tforge_backend_interpret;
        s->backend_text = "interpret";
    }
    tell_backend(s);
}

/* Asks a worker for the versions, GPU, driver and clocks: recorded with the run. */
static char *environment(tforge_worker *w, const settings *s)
{
    tforge_rpc_reply reply;
    cJSON *env = NULL;
    char *request = tforge_rpc_environment();
    if (request && tforge_rpc_call(&reply, w, request, 120000) == 0) {
        if (reply.result)
            env = cJSON_Duplicate(reply.result, 1);
        tforge_rpc_reply_dispose(&reply);
    }
    free(request);
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
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "options", cJSON_CreateStringArray(s->options, (int)s->n_options));
    cJSON_AddStringToObject(o, "backend", s->backend_text);
    cJSON_AddNumberToObject(o, "shape", s->shape);
    cJSON_AddNumberToObject(o, "batch", s->batch);
    cJSON_AddBoolToObject(o, "lookahead", s->lookahead);
    cJSON_AddBoolToObject(o, "check", s->check);
    cJSON_AddStringToObject(o, "transforms", s->transforms);
    cJSON_AddItemToObject(o, "transform_options",
                          cJSON_CreateStringArray(s->transform_options,
                                                  (int)s->n_transform_options));
    if (s->n_constraints) /* only where given, so that runs stored before them still resume */
        cJSON_AddItemToObject(o, "constraints",
                              cJSON_CreateStringArray(s->constraints, (int)s->n_constraints));
    int steered;
    tforge_forge_plugin(s->strategy, &steered);
    if (steered) { /* only where they matter, so that runs stored before them still resume */
        cJSON_AddStringToObject(o, "heuristic", s->heuristic);
        cJSON_AddBoolToObject(o, "counters", !s->no_counters);
        cJSON_AddItemToObject(o, "profiler_options",
                              cJSON_CreateStringArray(s->profiler_options,
                                                      (int)s->n_profiler_options));
    }
    if (s->patience)
        cJSON_AddNumberToObject(o, "patience", s->patience);
    if (s->device_path[0]) /* only with a bound, so that runs stored before it still resume */
        cJSON_AddNumberToObject(o, "sol_stop", s->sol_stop);
    if (s->objective) /* likewise: latency's runs stored before it still resume */
        cJSON_AddStringToObject(o, "objective", s->objective);
    if (s->dtype) /* only for a task with dtypes, so that runs stored before them still resume */
        cJSON_AddStringToObject(o, "dtype", s->dtype);
    if (asks_model(s)) { /* a replay reproduces the run with the plugin: not a setting */
        cJSON_AddStringToObject(o, "llm", s->llm ? s->llm : "(replay)");
        cJSON_AddItemToObject(o, "llm_options",
                              cJSON_CreateStringArray(s->llm_options, (int)s->n_llm_options));
        cJSON_AddNumberToObject(o, "llm_budget", s->llm_budget);
    }
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

/* An evaluation's numbers: "ms" its time, "value" the objective's (`value`, which is the time
 * when the objective is in ms), and the energy measured with it. */
static void add_measured(cJSON *o, const tforge_measurement *m, double value, int in_ms)
{
    double ms = in_ms ? value : m->median_ms;
    const char *names[] = {"energy_j", "power_w"};
    if (!isnan(ms))
        cJSON_AddNumberToObject(o, "ms", ms);
    if (!in_ms && !isnan(value))
        cJSON_AddNumberToObject(o, "value", value);
    for (int i = 0; i < 2; i++)
        if (!isnan(tforge_measurement_metric(m, names[i])))
            cJSON_AddNumberToObject(o, names[i], tforge_measurement_metric(m, names[i]));
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
    cJSON_AddStringToObject(r, "objective", tforge_costmodel_objective(s->model));
    cJSON_AddStringToObject(r, "objective_unit", tforge_costmodel_unit(s->model));
    int steered;
    const char *id = tforge_forge_plugin(s->strategy, &steered);
    const tforge_plugin_record *plugin = tforge_registry_find(reg, TFORGE_STRATEGY_INTERFACE_ID, id);
    cJSON_AddStringToObject(r, "strategy_version", plugin ? plugin->descriptor->version : "?");
    cJSON_AddItemToObject(r, "strategy_options",
                          tforge_report_strategy_options(reg, id, s->options));
    cJSON_AddNumberToObject(r, "seed", (double)s->seed);
    cJSON_AddNumberToObject(r, "evaluations", (double)o->n_evals);
    cJSON_AddNumberToObject(r, "resumed", (double)o->n_resumed);
    cJSON_AddNumberToObject(r, "workers_replaced", o->restarts);
    cJSON_AddNumberToObject(r, "seconds", o->seconds);
    cJSON_AddNumberToObject(r, "run_id", (double)o->run_id);
    cJSON_AddStringToObject(r, "out", dir);
    /* which shape, and where replayed times came from: what `tforge dispatch` reads */
    cJSON *shape = cJSON_AddObjectToObject(r, "shape");
    cJSON_AddNumberToObject(shape, "index", s->shape);
    cJSON_AddItemToObject(shape, "values", cJSON_Parse(t->tune_shapes[s->shape]));
    if (t->dtype)
        cJSON_AddStringToObject(r, "dtype", t->dtype);
    if (s->replay_file) {
        char full[PATH_MAX];
        cJSON_AddStringToObject(r, "recording",
                                realpath(s->replay_file, full) ? full : s->replay_file);
    }
    /* the final re-timing compares the objective's values: times where its unit is ms, else
     * (energy) the time is the one measured in the search */
    int in_ms = strcmp(tforge_costmodel_unit(s->model), "ms") == 0;
    cJSON *base = cJSON_AddObjectToObject(r, "baseline"), *best = cJSON_AddObjectToObject(r, "best");
    if (o->baseline >= 0) {
        cJSON_AddItemToObject(base, "config", cJSON_Parse(o->evals[o->baseline].config));
        add_measured(base, &o->evals[o->baseline].m, o->baseline_ms, in_ms);
    }
    if (o->best >= 0) {
        cJSON_AddItemToObject(best, "config", cJSON_Parse(o->evals[o->best].config));
        add_measured(best, &o->evals[o->best].m, o->best_ms, in_ms);
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
        add_measured(e, x, x->value, in_ms);
        if (x->message[0])
            cJSON_AddStringToObject(e, "message", x->message);
        if (o->evals[i].suspect)
            cJSON_AddBoolToObject(e, "suspect", 1);
        cJSON_AddItemToArray(list, e);
    }
    return r;
}

/* result.json's "speed_of_light": the bound, the baseline's and the winner's share of it, the
 * candidates pruned, whether the search stopped at it; or the note saying why there is none. */
static void add_sol_results(cJSON *r, const tforge_sol_bound *b, const settings *s,
                            const tforge_loop_outcome *o)
{
    cJSON *x = cJSON_AddObjectToObject(r, "speed_of_light");
    cJSON_AddStringToObject(x, "note", b->note);
    if (!isfinite(b->lower))
        return;
    cJSON_AddStringToObject(x, "device", b->device.name);
    cJSON_AddNumberToObject(x, "bound_ms", b->lower);
    double base = tforge_sol_percent(b->lower, o->baseline_ms);
    double best = tforge_sol_percent(b->lower, o->best_ms);
    if (isfinite(base))
        cJSON_AddNumberToObject(x, "baseline_percent", base);
    if (isfinite(best))
        cJSON_AddNumberToObject(x, "winner_percent", best);
    cJSON_AddNumberToObject(x, "pruned", (double)o->n_pruned);
    cJSON_AddNumberToObject(x, "stop_percent", s->sol_stop);
    cJSON_AddBoolToObject(x, "stopped", o->sol_stopped);
    /* timed under the bound twice: never trusted (loop.h); absent when there is none */
    cJSON *suspects = o->n_suspect ? cJSON_AddArrayToObject(x, "suspect") : NULL;
    for (size_t i = 0; i < o->n_evals; i++) {
        const tforge_loop_eval *e = &o->evals[i];
        if (!suspects || !e->suspect)
            continue;
        cJSON *one = cJSON_CreateObject();
        cJSON_AddNumberToObject(one, "evaluation", (double)i);
        cJSON_AddItemToObject(one, "config", cJSON_Parse(e->config ? e->config : "null"));
        cJSON_AddNumberToObject(one, "bound_ms",
                                tforge_measurement_metric(&e->m, TFORGE_LOOP_SUSPECT_BOUND));
        cJSON_AddNumberToObject(one, "measured_ms",
                                tforge_measurement_metric(&e->m, TFORGE_LOOP_SUSPECT_MS));
        double again = tforge_measurement_metric(&e->m, TFORGE_LOOP_SUSPECT_RETIMED_MS);
        if (isfinite(again))
            cJSON_AddNumberToObject(one, "retimed_ms", again);
        cJSON_AddItemToArray(suspects, one);
    }
}

/* report.md's line on it, into `line`. */
static void sol_line(char *line, size_t size, const tforge_sol_bound *b,
                     const tforge_loop_outcome *o)
{
    if (!isfinite(b->lower)) {
        snprintf(line, size, "Speed of light: %s.", b->note);
        return;
    }
    int n = snprintf(line, size, "Speed of light: %s. The baseline runs at %.0f%% of it, the "
                     "winner at %.0f%%; %zu candidates pruned (their bound could not win)%s.",
                     b->note, tforge_sol_percent(b->lower, o->baseline_ms),
                     tforge_sol_percent(b->lower, o->best_ms), o->n_pruned,
                     o->sol_stopped ? "; the search stopped at the bound" : "");
    if (o->n_suspect && n > 0 && (size_t)n < size)
        n += snprintf(line + n, size - (size_t)n, " **%zu suspect** (timed faster than the bound "
                      "twice, never trusted):", o->n_suspect);
    const char *sep = " ";
    for (size_t i = 0; i < o->n_evals && n > 0 && (size_t)n < size; i++)
        if (o->evals[i].suspect) {
            n += snprintf(line + n, size - (size_t)n, "%sevaluation %zu, %s, at %.4g ms", sep,
                          i, o->evals[i].config ? o->evals[i].config : "?",
                          tforge_measurement_metric(&o->evals[i].m, TFORGE_LOOP_SUSPECT_MS));
            sep = "; ";
        }
    if (o->n_suspect && n > 0 && (size_t)n < size)
        snprintf(line + n, size - (size_t)n, ".");
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
        cJSON_AddItemToObject(one, "labels", tforge_report_labels(forge, p, t->space));
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
    struct stat st;
    if (mkdir(path, 0777) && errno != EEXIST) {
        int e = errno; /* a path the user gave that cannot be a folder is bad input */
        int input = e == ENOTDIR || e == ENOENT || e == EACCES || e == EROFS || e == ENAMETOOLONG;
        return tforge_error_set(input ? TFORGE_EINPUT : TFORGE_EIO, "--out %s: cannot create "
                                "the folder: %s", dir, strerror(e));
    }
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return tforge_error_set(TFORGE_EINPUT, "--out %s: not a folder", dir);
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
static int task_baselines(tforge_candidate **out, const tforge_task *t)
{
    *out = calloc(t->n_baseline + 1, sizeof **out);
    if (!*out)
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    for (size_t b = 0; b < t->n_baseline; b++)
        (*out)[b] = (tforge_candidate){.point = tforge_task_baseline_point(t, b),
                                       .config = t->baselines[b]};
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
    return tforge_rpc_fresh_text(path, tforge_rpc_unified_diff(path, variant), NULL, 60000);
}

static int winner_variant(won *w, tforge_backend *b, const tforge_task *t,
                          const tforge_loop_outcome *o, const settings *s, int ablate)
{
    if (!(w->rewrites = calloc(o->n_evals + 1, sizeof *w->rewrites)))
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    for (size_t i = 0; i < o->n_evals; i++)
        if (tforge_task_rewrites(&w->rewrites[i], t, o->evals[i].point))
            return TFORGE_ENOMEM;
    const tforge_level *point = o->best >= 0 ? o->evals[o->best].point : NULL;
    if (!point || tforge_task_variant(&w->variant, t, point, SIZE_MAX) || !w->variant)
        return 0;
    if (!(w->diff = diff_of(t->source, w->variant)))
        return TFORGE_ERROR;
    if (!ablate || !t->transforms || tforge_task_variant_level(t, point))
        return 0; /* at a model's proposal no transform applies */
    tell(s, TFORGE_TUNE_ABLATING);
    return tforge_ablate(&w->ablation, &w->n_ablation, b, t, point, 5);
}

/* Where a tune's wall time went: result.json's "seconds_split". */
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
    tforge_transform_ids list;
    int all = strcmp(s->transforms, "all") == 0;
    int rc = tforge_transform_ids_split(&list, s->transforms);
    if (!rc)
        rc = tforge_task_use_transforms(task, reg, all ? NULL : list.ids,
                                        s->n_transform_options ? s->transform_options : NULL);
    tforge_transform_ids_free(&list);
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
    while (tail < dims && tforge_space_role(task->space, dims - 1 - tail) != TFORGE_DIM_KNOB)
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

/* Each proposal's diagnosis beside the rules' labels: in result.json's profile of the incumbent
 * it was asked at, "model_diagnosis" (the model's words, one per answer that had any). */
static void add_diagnoses(cJSON *r, const tforge_llm_grow *g)
{
    const cJSON *profile;
    cJSON *profiles = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(r, "profile"), "profiles");
    for (size_t i = 0; profiles && i < g->n_proposed; i++) {
        const tforge_llm_proposed *p = &g->proposed[i];
        if (p->incumbent < 0 || !p->diagnosis || !p->diagnosis[0])
            continue;
        cJSON_ArrayForEach(profile, profiles)
        {
            const cJSON *at = cJSON_GetObjectItemCaseSensitive(profile, "evaluation");
            if (!cJSON_IsNumber(at) || at->valuedouble != (double)p->incumbent)
                continue;
            cJSON *said = cJSON_GetObjectItemCaseSensitive(profile, "model_diagnosis");
            if (!said)
                said = cJSON_AddArrayToObject((cJSON *)profile, "model_diagnosis");
            cJSON_AddItemToArray(said, cJSON_CreateString(p->diagnosis));
        }
    }
}

/* result.json's "llm": the model, what asking it cost, the prompt's version, and each proposal
 * with its verification (the first evaluation at its level: the checks in both orders) and its
 * best re-tuned knobs. */
static void add_llm_results(cJSON *r, const settings *s, const tforge_task *t,
                            const tforge_loop_outcome *o)
{
    const tforge_llm_grow *g = s->llm_grow;
    if (!g || !s->llm_door)
        return;
    cJSON *x = cJSON_AddObjectToObject(r, "llm");
    const tforge_llm_interface *door;
    void *door_state;
    tforge_llm_door_interface((tforge_llm_door *)s->llm_door, &door, &door_state);
    cJSON_AddStringToObject(x, "model", door->model(door_state));
    cJSON_AddBoolToObject(x, "replay", s->llm_replay);
    tforge_llm_usage u = tforge_llm_door_usage(s->llm_door);
    cJSON_AddNumberToObject(x, "requests", (double)u.requests);
    cJSON_AddNumberToObject(x, "replayed", (double)u.replayed);
    cJSON_AddNumberToObject(x, "prompt_tokens", (double)u.prompt_tokens);
    cJSON_AddNumberToObject(x, "completion_tokens", (double)u.completion_tokens);
    cJSON_AddNumberToObject(x, "seconds", u.seconds);
    cJSON_AddNumberToObject(x, "budget", g->budget);
    cJSON_AddNumberToObject(x, "asked", g->asked);
    if (g->forge) { /* forge asks only for a bottleneck its moves cannot address */
        cJSON_AddNumberToObject(x, "stalls_left_to_forge", g->not_asked);
        if (g->why_not[0])
            cJSON_AddStringToObject(x, "last_not_asked", g->why_not);
    }
    cJSON *prompt = cJSON_AddObjectToObject(x, "prompt");
    cJSON_AddStringToObject(prompt, "name", g->prompt.name);
    cJSON_AddNumberToObject(prompt, "revision", g->prompt.revision);
    cJSON_AddStringToObject(prompt, "digest", g->prompt.digest);
    add_diagnoses(r, g);
    cJSON *list = cJSON_AddArrayToObject(x, "proposals");
    for (size_t i = 0; i < g->n_proposed; i++) {
        const tforge_llm_proposed *p = &g->proposed[i];
        cJSON *one = cJSON_CreateObject();
        cJSON_AddItemToArray(list, one);
        cJSON_AddStringToObject(one, "state", p->state == TFORGE_PROPOSAL_ACCEPTED ? "accepted"
                                              : p->state == TFORGE_PROPOSAL_REFUSED
                                                  ? "refused"
                                                  : "no answer");
        cJSON_AddNumberToObject(one, "asked_after", (double)p->at);
        if (p->incumbent >= 0)
            cJSON_AddNumberToObject(one, "incumbent", (double)p->incumbent);
        if (p->because)
            cJSON_AddStringToObject(one, "asked_because", p->because);
        cJSON_AddBoolToObject(one, "from_store", p->stored);
        cJSON_AddStringToObject(one, "diagnosis", p->diagnosis ? p->diagnosis : "");
        if (p->reason)
            cJSON_AddStringToObject(one, "reason", p->reason);
        if (p->state != TFORGE_PROPOSAL_ACCEPTED)
            continue;
        cJSON_AddStringToObject(one, "digest", p->digest);
        cJSON_AddNumberToObject(one, "level", p->level);
        if (p->diff)
            cJSON_AddStringToObject(one, "diff", p->diff);
        long first = -1, best = -1;
        size_t n = 0;
        for (size_t e = 0; e < o->n_evals; e++) {
            const tforge_loop_eval *ev = &o->evals[e];
            if (!ev->point || tforge_task_variant_level(t, ev->point) != p->level)
                continue;
            n++;
            first = first < 0 ? (long)e : first;
            if (ev->m.status == TFORGE_STATUS_OK &&
                (best < 0 || ev->m.value < o->evals[best].m.value))
                best = (long)e;
        }
        cJSON_AddNumberToObject(one, "evaluations", (double)n);
        if (first >= 0) {
            cJSON *v = cJSON_AddObjectToObject(one, "verification");
            cJSON_AddStringToObject(v, "status", tforge_status_name(o->evals[first].m.status));
            cJSON_AddStringToObject(v, "reason", o->evals[first].m.message);
        }
        if (best >= 0) {
            char *knobs = NULL;
            tforge_space_format(&knobs, t->space, o->evals[best].point, NULL);
            cJSON_AddStringToObject(one, "best_knobs", knobs ? knobs : "?");
            free(knobs);
            if (s->backend->timed)
                cJSON_AddNumberToObject(one, "best_ms", o->evals[best].m.value);
            cJSON_AddBoolToObject(one, "won", best == o->best);
        }
    }
}

/* A proposal's diagnosis, the model's words beside the rules' labels, as report.md says it. */
static void diagnosis_line(FILE *f, const cJSON *proposal)
{
    const char *said = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(proposal,
                                                                             "diagnosis"));
    if (said && *said)
        fprintf(f, "   The model's diagnosis: %s\n", said);
}

/* report.md's section on the model, from result.json's "llm" (so that both say the same):
 * what asking cost, then each proposal as it ended. Allocated; NULL without a model. */
static char *llm_markdown(const cJSON *llm)
{
    if (!llm)
        return NULL;
    size_t size = 0;
    char *text = NULL;
    FILE *f = open_memstream(&text, &size);
    if (!f)
        return NULL;
#define NUM(o, k) cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, k))
#define STR(o, k) cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k))
    const cJSON *prompt = cJSON_GetObjectItemCaseSensitive(llm, "prompt");
    fprintf(f, "Model `%s`%s: %.0f requests (%.0f from the store), %.0f prompt and %.0f "
            "completion tokens, %.3g s; asked %.0f of at most %.0f times. Prompt template `%s` "
            "revision %.0f (%s).\n\n",
            STR(llm, "model"), cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(llm, "replay"))
                                   ? " (replayed from the store)" : "",
            NUM(llm, "requests"), NUM(llm, "replayed"), NUM(llm, "prompt_tokens"),
            NUM(llm, "completion_tokens"), NUM(llm, "seconds"), NUM(llm, "asked"),
            NUM(llm, "budget"), STR(prompt, "name"), NUM(prompt, "revision"),
            STR(prompt, "digest"));
    if (NUM(llm, "stalls_left_to_forge") > 0)
        fprintf(f, "Not asked at %.0f stalls where forge's moves still addressed the incumbent's "
                "labels (the last: %s).\n\n", NUM(llm, "stalls_left_to_forge"),
                STR(llm, "last_not_asked"));
    const cJSON *p;
    int i = 0;
    cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(llm, "proposals"))
    {
        const char *state = STR(p, "state"), *reason = STR(p, "reason");
        fprintf(f, "%d. after %.0f evaluations", ++i, NUM(p, "asked_after"));
        if (STR(p, "asked_because"))
            fprintf(f, " (the incumbent's label %s)", STR(p, "asked_because"));
        fprintf(f, ": **%s**", state);
        if (strcmp(state, "accepted") != 0) {
            fprintf(f, ": %s\n", reason ? reason : "");
            diagnosis_line(f, p);
            continue;
        }
        fprintf(f, " as `variant` level %.0f (%s)%s", NUM(p, "level"), STR(p, "digest"),
                cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p, "from_store"))
                    ? ", taken from the stored run" : "");
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(p, "verification");
        fprintf(f, "; %.0f evaluations", NUM(p, "evaluations"));
        if (v)
            fprintf(f, ", the first %s%s%s", STR(v, "status"), *STR(v, "reason") ? ": " : "",
                    STR(v, "reason"));
        if (STR(p, "best_knobs"))
            fprintf(f, "; best knobs %s", STR(p, "best_knobs"));
        if (cJSON_GetObjectItemCaseSensitive(p, "best_ms"))
            fprintf(f, " at %.4g ms", NUM(p, "best_ms"));
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p, "won")))
            fprintf(f, ", **the winner**");
        fprintf(f, "\n");
        diagnosis_line(f, p);
        if (STR(p, "diff"))
            fprintf(f, "\n```diff\n%s```\n\n", STR(p, "diff"));
    }
#undef NUM
#undef STR
    fclose(f);
    return text;
}

/* Writes every file of the results folder, the take-home verdict so far included; returns
 * result.json's document, or NULL with the error set. */
static cJSON *write_results(const settings *s, const tforge_registry *reg, const tforge_task *task,
                            const tforge_loop_outcome *o, const won *w, const tforge_forge *forge,
                            int counters, double busy, const seconds_split *split,
                            const tforge_takehome *th, const tforge_sol_bound *sol,
                            const char *dir)
{
    cJSON *result = result_json(s, reg, task, o, dir);
    add_seconds_split(result, split);
    add_sol_results(result, sol, s, o);
    char sol_text[4096];
    sol_line(sol_text, sizeof sol_text, sol, o);
    if (!isnan(busy))
        cJSON_AddNumberToObject(result, "runner_busy_after_first_batch", busy);
    if (task->transforms)
        add_transform_results(result, task, o, w);
    if (forge)
        add_profile_results(result, forge, task, o, counters);
    if (th->result)
        cJSON_AddItemToObject(result, "take_home", cJSON_Duplicate(th->result, 1));
    add_llm_results(result, s, task, o);
    char *result_text = cJSON_Print(result);
    char *model = llm_markdown(cJSON_GetObjectItemCaseSensitive(result, "llm"));
    tforge_report_tune report = {s->task,      s->backend_text, backend_note(s), s->strategy,
                                 s->seed,      task->kernel,    task->path,      task->source,
                                 o,            result_text,     task->transforms, w->rewrites,
                                 w->variant,   w->diff,         w->ablation,     w->n_ablation,
                                 forge,        task->space,     th->hook,        th->hook_at,
                                 th->dropped,  th->report,       sol_text,
                                 tforge_costmodel_objective(s->model),
                                 tforge_costmodel_unit(s->model),
                                 model,
                                 task->warnings,
                                 task->n_warnings};
    int rc = tforge_report_write_tune(dir, &report);
    free(model);
    free(result_text);
    if (rc) {
        cJSON_Delete(result);
        return NULL;
    }
    return result;
}

/* The shape's outcome for the caller, from its results written. */
static void shape_done(tforge_tune_shape *r, const settings *s, const tforge_loop_outcome *o,
                       const won *w, double busy, const seconds_split *split,
                       const cJSON *result)
{
    r->backend = strdup(s->backend_text);
    r->backend_type = s->backend;
    r->check = s->check;
    r->result_json = cJSON_Print(result);
    r->n_evals = o->n_evals;
    for (size_t i = 0; i < o->n_evals; i++)
        r->n_ok += o->evals[i].m.status == TFORGE_STATUS_OK;
    r->seconds = o->seconds;
    r->baseline_ms = o->baseline_ms;
    r->best_ms = o->best_ms;
    r->speedup = o->speedup;
    snprintf(r->unit, sizeof r->unit, "%s", tforge_costmodel_unit(s->model));
    if (o->best >= 0) {
        r->best_config = strdup(o->evals[o->best].config);
        if (w->variant)
            r->rewrites = strdup(w->rewrites[o->best]);
    }
    r->busy = busy;
    const tforge_loop_seconds *l = split->loop;
    r->split = (tforge_tune_seconds){split->load,     split->setup,  l->baselines_s,
                                     l->steer_s,      l->search_s,   l->candidates_s,
                                     l->final_s,      split->winner, l->compile_s};
}

/* A bound within 5% of the incumbent is not pruned: about the spread of repeated medians. */
#define SOL_MARGIN 0.05

/* The device file of the device the backend's times are from: the one given; on the GPU the
 * worker's (measured there on first use); a replayed recording's `device.json` beside it. None
 * leaves the tune without a bound (the results say so); a GPU whose peaks cannot be measured
 * too, with a warning. */
static void find_device_file(settings *s)
{
    s->device_path[0] = '\0';
    if (s->device_file) {
        snprintf(s->device_path, sizeof s->device_path, "%s", s->device_file);
    } else if (s->backend == &tforge_backend_cuda) {
        static const char *const compiling[] = {"TRITON_INTERPRET=0", NULL};
        char *path = tforge_rpc_fresh_text("the device's peaks", tforge_rpc_peaks(), compiling,
                                           120000);
        if (path)
            snprintf(s->device_path, sizeof s->device_path, "%s", path);
        else
            tforge_log(TFORGE_LOG_WARN, "no speed-of-light bound: %s",
                       tforge_error_last()->message);
        free(path);
    } else if (s->backend == &tforge_backend_replay && s->replay_file) {
        char dir[PATH_MAX - 16];
        snprintf(dir, sizeof dir, "%s", s->replay_file);
        char *slash = strrchr(dir, '/');
        snprintf(s->device_path, sizeof s->device_path, "%s/device.json",
                 slash ? (*slash = '\0', dir) : ".");
        if (access(s->device_path, R_OK) != 0)
            s->device_path[0] = '\0';
    }
}

/* The shape's backend decided ("auto"), the transforms it allows opened, its recording read:
 * what a tune's shape and a sweep's rank evaluating it both do, so that a point means the same
 * variant on both. */
static int shape_backend(settings *s, const tforge_registry *reg, tforge_task *task,
                         const char *env, char *recorded, size_t size, tforge_recording **rec)
{
    choose_backend(s, task, strstr(env, "\"gpu\"") != NULL, recorded, size);
    /* a recording holds rewrites only when it was made with them: named transforms alone */
    if ((s->backend != &tforge_backend_replay || strcmp(s->transforms, "all") != 0) &&
        use_transforms(s, reg, task))
        return TFORGE_ERROR;
    if (s->n_constraints && tforge_task_add_constraints(task, s->constraints))
        return TFORGE_ERROR;
    return s->replay_file ? tforge_recording_read_space(rec, s->replay_file) : 0;
}

static tforge_backend_args backend_args(const settings *s, const tforge_task *task,
                                        const tforge_recording *rec)
{
    tforge_backend_args args = TFORGE_BACKEND_ARGS_INIT;
    args.objective = s->model;
    args.task = task;
    args.space = task->space;
    args.recording = rec;
    args.check = s->check;
    args.noise_seed = s->seed;
    args.compile_workers = s->workers;
    args.shape = s->shape;
    args.profiler_options = s->n_profiler_options ? s->profiler_options : NULL;
    if (s->timeout)
        args.compile_timeout_ms = args.check_timeout_ms = args.time_timeout_ms =
            timeout_ms(s->timeout);
    return args;
}

/* The shape's backend; a replay's refusal names its recording. */
static int open_backend(tforge_backend *out, const settings *s, const tforge_backend_args *args)
{
    int rc = tforge_backend_open(out, s->backend, args);
    return rc && s->replay_file ? tforge_error_prefix("%s", s->replay_file) : rc;
}

/* Tunes the task's selected shape into `dir`, s.current; 0, or the failure's code (told). */
static int tune_shape(settings s, const tforge_registry *reg, tforge_task *task, const char *env,
                      const char *dir)
{
    tforge_recording *rec = NULL;
    tforge_recording *described = NULL;
    tforge_backend backend = {0};
    tforge_candidate *baselines = NULL;
    tforge_run_history history = {0};
    tforge_store *store = NULL;
    tforge_loop_outcome outcome = {0};
    tforge_forge *forge = NULL;
    won won = {0};
    tforge_takehome th = {0};
    tforge_sol_bound sol = {0};
    tforge_llm_backend model = {0};
    tforge_llm_door *door = NULL;
    tforge_llm_grow llm = {0};
    char *set = NULL, db[4200];
    cJSON *result = NULL;
    int rc = 0, lock = -1;

    char recorded[4096];
    if (shape_backend(&s, reg, task, env, recorded, sizeof recorded, &rec))
        goto failed;
    if (!s.strategy)
        s.strategy = default_strategy(&s, reg);
    int steered;
    const char *strategy_plugin = tforge_forge_plugin(s.strategy, &steered);
    /* Batches trade evaluations for wall time: bo's replayed score on the H200 matmul space at
     * 20 evaluations fell from 0.92 (one at a time) to 0.91 in fours and 0.82 in sixteens. */
    if (!s.batch)
        s.batch = s.backend == &tforge_backend_replay ? 1 : s.workers < 4 ? s.workers : 4;
    s.lookahead = s.lookahead && s.backend->prepare; /* nothing to start ahead otherwise */
    if (asks_model(&s) && tforge_llm_grow_open(&llm, task, NULL, s.llm_budget, s.seed,
                                                s.timeout ? timeout_ms(s.timeout) : 120000))
        goto failed;
    hold_rewrites(&s, task, strategy_plugin);
    find_device_file(&s);
    if (!(set = settings_json(&s)))
        goto failed;
    snprintf(db, sizeof db, "%s/tforge.db", dir);
    if (tforge_costmodel_open(&s.model, reg, s.objective))
        goto failed;
    tforge_backend_args args = backend_args(&s, task, rec);
    tforge_run_record record = {NULL, 0, NULL, NULL, NULL};
    double setup_start = tforge_clock_s(), loop_end = 0;
    seconds_split split = {s.load_s, 0, 0, &outcome.split};
    if (make_dir(dir) || lock_dir(&lock, dir) || tforge_store_open(&store, db) ||
        open_run(&record, &history, store, task, &s, set, env, &described) ||
        (s.llm && tforge_llm_backend_open(&model, reg, s.llm, s.llm_options, s.n_llm_options)) ||
        (asks_model(&s) &&
         tforge_llm_door_open(&door, store, model.interface, model.state, s.llm_replay)) ||
        open_backend(&backend, &s, &args) ||
        task_baselines(&baselines, task) ||
        tforge_sol_bound_open(&sol, reg, s.device_path[0] ? s.device_path : NULL, task,
                              s.backend == &tforge_backend_cuda, SOL_MARGIN, s.sol_stop,
                              s.timeout ? timeout_ms(s.timeout) : 300000))
        goto failed;
    backend.elsewhere = s.given->elsewhere;
    backend.elsewhere.space = task->space;
    record.extras = s.given->extras;
    record.extras_context = s.given->elsewhere.context;
    tforge_forge_options fo = TFORGE_FORGE_OPTIONS_INIT;
    fo.heuristic = s.heuristic;
    fo.record = &record;
    fo.counters = !s.no_counters;
    fo.steer = steered;
    fo.profile_all = s.profile_all;
    tforge_forge_options_for(&fo, s.strategy);
    if ((steered || s.profile_all) && tforge_forge_open(&forge, reg, task->space, &backend, &fo))
        goto failed;
    tforge_loop_options lo = TFORGE_LOOP_OPTIONS_INIT;
    tforge_forge_companion_texts companion;
    lo.strategy = strategy_plugin;
    lo.strategy_options = s.options;
    tforge_forge_companion(&lo, s.strategy, &companion);
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
    lo.progress = s.given->progress;
    /* the bound is a time: it prunes and stops only what is compared in ms */
    if (strcmp(tforge_costmodel_unit(s.model), "ms") == 0)
        lo.bound = tforge_sol_bound_loop(&sol);
    if (door) {
        const tforge_llm_interface *ask;
        void *ask_state;
        tforge_llm_door_interface(door, &ask, &ask_state);
        /* a steered search asks only where its labels name what its moves cannot address */
        lo.grow = tforge_llm_grow_hook(&llm, store, &history, ask, ask_state,
                                       steered ? forge : NULL);
    }
    if (!s.backend->timed)
        lo.final_rounds = 0; /* nothing to re-time */
    split.setup = tforge_clock_s() - setup_start;
    if (tforge_loop_run(&outcome, reg, task->space, &backend, &lo) ||
        name_configs(&outcome, task))
        goto failed;
    loop_end = tforge_clock_s();
    for (size_t i = 0; i < llm.n_proposed; i++) /* each accepted proposal's diff, once */
        if (llm.proposed[i].level &&
            !(llm.proposed[i].diff = diff_of(task->source,
                                             task->proposals[llm.proposed[i].level - 1])))
            goto failed;
    s.llm_grow = door ? &llm : NULL;
    s.llm_door = door;
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
        if (((task->transforms || task->n_proposals) &&
             winner_variant(&won, &backend, task, &outcome, &s, pass == 0)) ||
            tforge_takehome_hook(&th, task, &outcome, won.variant) ||
            !(result = write_results(&s, reg, task, &outcome, &won, forge, fo.counters, busy,
                                     &split, &th, &sol, dir)) ||
            (verdict = tforge_takehome_verify(&th, dir, task, &outcome, won.rewrites)) < 0)
            goto failed;
    }
    cJSON_Delete(result); /* once more, with the verdict and the seconds it took */
    split.winner = tforge_clock_s() - loop_end;
    if (!(result = write_results(&s, reg, task, &outcome, &won, forge, fo.counters, busy, &split,
                                 &th, &sol, dir)))
        goto failed;
    shape_done(s.current, &s, &outcome, &won, busy, &split, result);
    tell(&s, TFORGE_TUNE_SHAPE_DONE);
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
    rc = failed(&s);
cleanup:
    cJSON_Delete(result);
    tforge_takehome_dispose(&th);
    won_dispose(&won, outcome.n_evals);
    tforge_forge_free(forge);
    tforge_sol_bound_close(&sol);
    tforge_llm_door_close(door);
    tforge_llm_backend_close(&model);
    tforge_llm_grow_close(&llm);
    tforge_loop_outcome_dispose(&outcome);
    tforge_backend_close(&backend);
    tforge_costmodel_close(s.model);
    tforge_run_history_dispose(&history);
    tforge_recording_free(described);
    free(baselines);
    tforge_store_close(store);
    if (lock >= 0)
        close(lock);
    tforge_recording_free(rec);
    free(set);
    return rc;
}

/* --shape all: summary.json, each shape's speedup and their geometric mean; the caller is told
 * of it before it is written. */
static int write_summary(const settings *s, const char *dir)
{
    tforge_tune_outcome *out = s->outcome;
    cJSON *o = cJSON_CreateObject(), *shapes = cJSON_AddArrayToObject(o, "shapes");
    double log_sum = 0;
    size_t n = 0;
    for (size_t i = 0; i < out->n_shapes; i++) {
        const tforge_tune_shape *r = &out->shapes[i];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddItemToObject(e, "shape", cJSON_Parse(r->shape_json));
        cJSON_AddBoolToObject(e, "ok", r->rc == 0);
        if (!isnan(r->speedup) && r->speedup > 0) {
            cJSON_AddNumberToObject(e, "baseline_ms", r->baseline_ms);
            cJSON_AddNumberToObject(e, "best_ms", r->best_ms);
            cJSON_AddNumberToObject(e, "speedup", r->speedup);
            log_sum += log(r->speedup);
            n++;
        }
        cJSON_AddItemToArray(shapes, e);
    }
    out->n_speedups = n;
    out->geomean_speedup = n ? exp(log_sum / (double)n) : NAN;
    if (n)
        cJSON_AddNumberToObject(o, "geomean_speedup", out->geomean_speedup);
    char path[4200], *text = out->summary_json = cJSON_Print(o);
    cJSON_Delete(o);
    tell(s, TFORGE_TUNE_SUMMARY);
    snprintf(path, sizeof path, "%s/summary.json", dir);
    FILE *f = text ? fopen(path, "w") : NULL;
    int rc = f && fputs(text, f) >= 0 ? 0 : -1;
    if (f && fclose(f))
        rc = -1;
    return rc ? tforge_error_set(TFORGE_EIO, "%s: cannot write it", path) : 0;
}

/* A shape about to run: its entry in the outcome, nothing tuned yet. */
static tforge_tune_shape *begin_shape(tforge_tune_outcome *out, const tforge_task *task,
                                      size_t shape, const char *dir)
{
    tforge_tune_shape *r = &out->shapes[out->n_shapes++];
    *r = (tforge_tune_shape){.shape = shape, .speedup = NAN, .busy = NAN};
    if (!(r->shape_json = strdup(task->tune_shapes[shape])) || !(r->dir = strdup(dir))) {
        tforge_error_set(TFORGE_ENOMEM, "out of memory");
        return NULL;
    }
    return r;
}

/* A shape's failure stops the session when it is the input's: the task is wrong. */
static int input_error(int rc)
{
    return rc == TFORGE_EINPUT || rc == TFORGE_ENOTFOUND || rc == TFORGE_EABI;
}

/* The task loaded by a worker (`*loader`, kept for the environment), its shape and dtype checked. */
static int load(settings *s, tforge_worker **loader, tforge_task **task,
                const char *backend_text)
{
    static const char *const interpreting[] = {"TRITON_INTERPRET=1", NULL};
    static const char *const compiling[] = {"TRITON_INTERPRET=0", NULL};
    tforge_worker_options wo = TFORGE_WORKER_OPTIONS_INIT;
    wo.name = "task";
    wo.env = s->backend == &tforge_backend_cuda ? compiling : interpreting;
    if (!s->backend)
        return tforge_error_set(TFORGE_EINPUT, "backend '%s': expected auto, cuda, interpret, "
                                "compile or replay:FILE", backend_text);
    int rc = tforge_worker_start(loader, &wo);
    if (!rc)
        rc = tforge_task_load(task, *loader, s->task,
                              s->timeout ? timeout_ms(s->timeout) : TFORGE_TASK_LOAD_TIMEOUT_MS);
    if (!rc && s->shape >= (*task)->n_tune)
        rc = tforge_error_set(TFORGE_EINPUT, "--shape %u: the task has %zu tuning shapes",
                              s->shape, (*task)->n_tune);
    if (!rc)
        rc = tforge_task_set_dtype(*task, s->dtype, "--dtype");
    if (!rc)
        s->dtype = (*task)->dtype;
    return rc;
}

int tforge_tune_run(const tforge_tune_options *options, tforge_tune_outcome *out)
{
    *out = (tforge_tune_outcome){.geomean_speedup = NAN};
    if (options->version != TFORGE_TUNE_OPTIONS_VERSION) /* its fields may lie elsewhere */
        return tforge_error_set(TFORGE_EINPUT, "tune options version %u, expected %u",
                                options->version, TFORGE_TUNE_OPTIONS_VERSION);
    settings s;
    settings_of(&s, options);
    s.outcome = out;
    const tforge_registry *reg = options->registry;
    tforge_worker *loader = NULL;
    tforge_task *task = NULL;
    char *env = NULL, dir[4096];
    int rc = 0;

    double load_start = tforge_clock_s();
    if (load(&s, &loader, &task, options->backend))
        goto failed;
    s.load_s = tforge_clock_s() - load_start;
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
    if (!(out->kernel = strdup(task->kernel)) || !(out->dir = strdup(dir)) ||
        !(out->shapes = calloc(task->n_tune, sizeof *out->shapes))) {
        tforge_error_set(TFORGE_ENOMEM, "out of memory");
        goto failed;
    }
    if (!s.all_shapes) {
        if (!(s.current = begin_shape(out, task, s.shape, dir)))
            goto failed;
        rc = tforge_task_select(task, s.shape) ? failed(&s) : tune_shape(s, reg, task, env, dir);
        goto cleanup;
    }
    if (make_dir(dir))
        goto failed;
    for (size_t i = 0; i < task->n_tune; i++) {
        char sub[4200];
        snprintf(sub, sizeof sub, "%s/shape-%zu", dir, i);
        s.shape = (uint32_t)i;
        if (!(s.current = begin_shape(out, task, i, sub)))
            goto failed;
        tell(&s, TFORGE_TUNE_SHAPE_BEGIN);
        int shape_rc = tforge_task_select(task, i) ? failed(&s)
                                                    : tune_shape(s, reg, task, env, sub);
        if (shape_rc)
            rc = shape_rc;
        if (input_error(shape_rc))
            goto cleanup;
    }
    s.current = NULL;
    if (write_summary(&s, dir))
        goto failed;
    goto cleanup;
failed:
    s.current = NULL;
    rc = failed(&s);
cleanup:
    tforge_task_free(task);
    tforge_worker_free(loader);
    free(env);
    return rc;
}

void tforge_tune_outcome_dispose(tforge_tune_outcome *o)
{
    for (size_t i = 0; i < o->n_shapes; i++) {
        tforge_tune_shape *r = &o->shapes[i];
        free(r->shape_json);
        free(r->dir);
        free(r->backend);
        free(r->result_json);
        free(r->best_config);
        free(r->rewrites);
    }
    free(o->shapes);
    free(o->kernel);
    free(o->dir);
    free(o->summary_json);
    *o = (tforge_tune_outcome){0};
}

struct tforge_tune_evaluator {
    settings s;
    tforge_task *task;
    tforge_recording *rec;
    tforge_backend backend;
    char recorded[4096], device[256];
};

int tforge_tune_evaluator_open(tforge_tune_evaluator **out, const tforge_tune_options *options)
{
    *out = NULL;
    if (options->version != TFORGE_TUNE_OPTIONS_VERSION)
        return tforge_error_set(TFORGE_EINPUT, "tune options version %u, expected %u",
                                options->version, TFORGE_TUNE_OPTIONS_VERSION);
    tforge_tune_evaluator *e = calloc(1, sizeof *e);
    if (!e)
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    settings_of(&e->s, options);
    tforge_worker *loader = NULL;
    char *env = NULL;
    int rc = load(&e->s, &loader, &e->task, options->backend);
    if (!rc && !(env = environment(loader, &e->s)))
        rc = TFORGE_ERROR;
    tforge_worker_free(loader);
    if (!rc)
        rc = tforge_task_select(e->task, e->s.shape);
    if (!rc)
        rc = shape_backend(&e->s, options->registry, e->task, env, e->recorded,
                           sizeof e->recorded, &e->rec);
    if (!rc) {
        tforge_backend_args args = backend_args(&e->s, e->task, e->rec);
        rc = open_backend(&e->backend, &e->s, &args);
    }
    cJSON *parsed = env ? cJSON_Parse(env) : NULL, *gpu = cJSON_GetObjectItem(parsed, "gpu");
    snprintf(e->device, sizeof e->device, "%s", cJSON_IsString(gpu) ? gpu->valuestring : "cpu");
    cJSON_Delete(parsed);
    free(env);
    if (rc) {
        tforge_tune_evaluator_close(e);
        return rc;
    }
    *out = e;
    return 0;
}

const tforge_space *tforge_tune_evaluator_space(const tforge_tune_evaluator *e)
{
    return e->task->space;
}

const char *tforge_tune_evaluator_device(const tforge_tune_evaluator *e)
{
    return e->device;
}

int tforge_tune_evaluator_evaluate(tforge_tune_evaluator *e, tforge_candidate *c, size_t n,
                                   tforge_measurement *out)
{
    int rc = 0;
    for (size_t i = 0; !rc && i < n; i++)
        rc = tforge_backend_identify(&e->backend, &c[i]);
    if (!rc)
        rc = tforge_backend_evaluate(&e->backend, c, n, out);
    for (size_t i = 0; i < n; i++)
        tforge_candidate_forget(&c[i]);
    return rc;
}

void tforge_tune_evaluator_close(tforge_tune_evaluator *e)
{
    if (!e)
        return;
    tforge_backend_close(&e->backend);
    tforge_recording_free(e->rec);
    tforge_task_free(e->task);
    free(e);
}
