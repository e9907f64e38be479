/* `tforge profile TASK.json`: one candidate evaluated on the best backend there is (cuda on a
 * GPU, else the interpreter), profiled (static metrics always, counters on the GPU) and
 * classified by a heuristic plugin; the metrics, then the labels with their evidence. */
#include "backend.h"
#include "cli.h"
#include "forge.h"
#include "labels.h"
#include "profile.h"
#include "registry.h"
#include "task.h"
#include "tforge/error.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char profile_help[] =
    "usage: tforge profile TASK.json [--set NAME=VALUE]... [--transforms IDS] [--shape N]\n"
    "                      [--no-counters] [--heuristic ID] [--profiler-option KEY=VALUE]...\n"
    "                      [--json]\n\n"
    "Evaluates one candidate of the task (its first baseline; with --set, that baseline with the\n"
    "parameters set: the task's own or the source transforms') at tuning shape N (default 0), on\n"
    "the GPU if there is one, else in Triton's CPU interpreter, and profiles it: the static\n"
    "metrics (registers, spills, shared memory, occupancy by the device's rules, waves, the\n"
    "roofline position from the task's cost) always; the hardware counters of the GPU worker's\n"
    "profiler (cupti) on a GPU. Then the heuristic plugin (default bottleneck) labels it: each\n"
    "label with its confidence, its evidence and the rule with its thresholds.\n\n"
    "  --set NAME=VALUE       a parameter of the space at a value (`tforge transform` lists the\n"
    "                         transforms' parameters)\n"
    "  --transforms IDS       only these transforms (comma-separated; default all, with --set)\n"
    "  --shape N              the tuning shape (an index into the task's tune shapes)\n"
    "  --no-counters          static metrics only, even on a GPU\n"
    "  --heuristic ID         the heuristic plugin that labels the profile\n"
    "  --profiler-option K=V  an option of the profiler (`tforge plugins --options`): set=full\n"
    "                         for every counter (more replay passes), refuse=1 to see the path\n"
    "                         where the device refuses counters\n"
    "  --json                 one object: the candidate, the backend, the profile, the labels\n\n"
    "exit status: 0 profiled, 1 the candidate failed or could not be profiled, 2 bad usage or a\n"
    "bad task file.\n";

#define MAX_SETS 64

typedef struct profile_args {
    cli_common common;
    const char *transforms, *heuristic;
    const char *sets[MAX_SETS + 1], *profiler_options[MAX_SETS + 1];
    size_t n_sets, n_profiler_options, shape;
    int no_counters;
} profile_args;

/* The operand's index, or a negative exit status to return (-1 - status). */
static int parse(const cli_command *c, int argc, char **argv, profile_args *a)
{
    enum { OPT_SET = 1, OPT_TRANSFORMS, OPT_SHAPE, OPT_NO_COUNTERS, OPT_HEURISTIC,
           OPT_PROFILER_OPTION };
    static const struct option options[] = {
        {"set", required_argument, NULL, OPT_SET},
        {"transforms", required_argument, NULL, OPT_TRANSFORMS},
        {"shape", required_argument, NULL, OPT_SHAPE},
        {"no-counters", no_argument, NULL, OPT_NO_COUNTERS},
        {"heuristic", required_argument, NULL, OPT_HEURISTIC},
        {"profiler-option", required_argument, NULL, OPT_PROFILER_OPTION},
        CLI_COMMON_LONG_OPTIONS,
        {0, 0, 0, 0}};
    for (int opt; (opt = getopt_long(argc, argv, "hvq", options, NULL)) != -1;) {
        char *end = NULL;
        switch (opt) {
        case OPT_SET:
        case OPT_PROFILER_OPTION: {
            size_t *n = opt == OPT_SET ? &a->n_sets : &a->n_profiler_options;
            if (*n == MAX_SETS)
                return -1 - cli_usage_error(c, "at most %d --set and --profiler-option each",
                                            MAX_SETS);
            if (!strchr(optarg, '='))
                return -1 - cli_usage_error(c, "%s %s: expected NAME=VALUE",
                                            opt == OPT_SET ? "--set" : "--profiler-option",
                                            optarg);
            (opt == OPT_SET ? a->sets : a->profiler_options)[(*n)++] = optarg;
            continue;
        }
        case OPT_TRANSFORMS: a->transforms = optarg; continue;
        case OPT_HEURISTIC: a->heuristic = optarg; continue;
        case OPT_NO_COUNTERS: a->no_counters = 1; continue;
        case OPT_SHAPE:
            a->shape = (size_t)strtoul(optarg, &end, 10);
            if (!*optarg || *end || optarg[0] == '-')
                return -1 - cli_usage_error(c, "--shape expects an index (0, 1, ...), not '%s'",
                                            optarg);
            continue;
        default: break;
        }
        int rc = cli_common_option(c, &a->common, opt, optarg, argv);
        if (rc)
            return -1 - (rc < 0 ? TFORGE_EXIT_OK : rc);
    }
    return optind;
}

/* Everything one profile holds, released by close_run. */
typedef struct run {
    tforge_registry *registry;
    tforge_worker *worker;
    tforge_task *task;
    tforge_backend backend;
    tforge_forge *forge;
    tforge_level *point;
    char *config, *ids_text;
    const char *ids[MAX_SETS + 1];
} run;

static void close_run(run *r)
{
    tforge_forge_free(r->forge);
    tforge_backend_close(&r->backend);
    free(r->point);
    free(r->config);
    tforge_task_free(r->task);
    tforge_worker_free(r->worker);
    tforge_registry_free(r->registry);
    free(r->ids_text);
}

/* The task loaded at its shape, its transforms opened when asked, the candidate built. */
static int open_candidate(const cli_command *c, const profile_args *a, const char *path,
                          const char *const *env, run *r)
{
    tforge_worker_options wo = TFORGE_WORKER_OPTIONS_INIT;
    wo.name = "task";
    wo.env = env;
    if (cli_load_plugins(&a->common, &r->registry) ||
        cli_check_plugins(r->registry, a->transforms, NULL, NULL, a->heuristic) ||
        cli_check_profiler_options(r->registry, a->profiler_options) ||
        tforge_worker_start(&r->worker, &wo) ||
        tforge_task_load(&r->task, r->worker, path, 600000))
        return cli_fail(c);
    if (a->shape >= r->task->n_tune)
        return cli_usage_error(c, "--shape %zu: the task has %zu tuning shape(s)", a->shape,
                               r->task->n_tune);
    if (tforge_task_select(r->task, a->shape))
        return cli_fail(c);
    size_t n_ids = 0;
    r->ids_text = a->transforms ? strdup(a->transforms) : NULL;
    for (char *save = NULL, *id = r->ids_text ? strtok_r(r->ids_text, ",", &save) : NULL;
         id && n_ids < MAX_SETS; id = strtok_r(NULL, ",", &save))
        r->ids[n_ids++] = id;
    if ((a->n_sets || a->transforms) &&
        tforge_task_use_transforms(r->task, r->registry, n_ids ? r->ids : NULL, NULL))
        return cli_fail(c);
    if (!(r->point = calloc(tforge_space_dims(r->task->space) + 1, sizeof *r->point))) {
        tforge_error_set(TFORGE_ENOMEM, "out of memory");
        return cli_fail(c);
    }
    int status = cli_set_candidate(c, r->task, a->sets, a->n_sets, 1, r->point, &r->config);
    if (status)
        return status;
    if (!r->config && !(r->config = strdup(r->task->baselines[0]))) {
        tforge_error_set(TFORGE_ENOMEM, "out of memory");
        return cli_fail(c);
    }
    /* nothing set: the point is the baseline's, mapped when the task loaded; a baseline outside
     * the space is profiled as the task gives it */
    if (!a->n_sets && !tforge_task_baseline_point(r->task, 0)) {
        free(r->point);
        r->point = NULL;
    }
    return TFORGE_EXIT_OK;
}

static void add_metrics(cJSON *o, const tforge_profile *p, int counters)
{
    for (uint32_t i = 0; i < p->n_metrics; i++)
        if (tforge_profile_counter_name(p->metrics[i].name) == counters)
            cJSON_AddNumberToObject(o, p->metrics[i].name, p->metrics[i].value);
}

static const char *counters_state(uint32_t state)
{
    static const char *const names[] = {"none", "ok", "refused", "failed"};
    return state < 4 ? names[state] : "?";
}

static void print_metrics(const tforge_profile *p, int counters)
{
    for (uint32_t i = 0; i < p->n_metrics; i++)
        if (tforge_profile_counter_name(p->metrics[i].name) == counters)
            printf("    %-28s %.6g\n", p->metrics[i].name, p->metrics[i].value);
}

static void print_text(const char *path, const run *r, const char *where,
                       const tforge_measurement *m, const tforge_profile *p,
                       const tforge_forge_profile *labelled, const char *heuristic_note)
{
    printf("%s: %s at %s on the %s backend (%s): %s%s%s\n", path, r->config,
           r->task->tune_shapes[r->task->shape], r->backend.type->name, where,
           tforge_status_name(m->status), m->status == TFORGE_STATUS_OK ? "" : ": ",
           m->status == TFORGE_STATUS_OK ? "" : m->message);
    if (!isnan(m->median_ms))
        printf("  median %.6g ms\n", m->median_ms);
    printf("  static metrics:\n");
    print_metrics(p, 0);
    printf("  counters: %s%s%s\n", counters_state(p->counters), p->note[0] ? ": " : "", p->note);
    print_metrics(p, 1);
    if (!labelled) {
        printf("  labels: none (%s)\n", heuristic_note);
        return;
    }
    printf("  labels (heuristic %s)%s\n", tforge_forge_heuristic(r->forge),
           labelled->n_labels ? ":" : ": none (no rule fired on the metrics there are)");
    for (size_t i = 0; i < labelled->n_labels; i++) {
        const tforge_forge_label *l = &labelled->labels[i];
        printf("    %-16s %.2f  %s\n      rule: %s\n", l->label, l->confidence, l->evidence,
               l->rule);
    }
}

static void print_json(const char *path, const run *r, const char *where,
                       const tforge_measurement *m, const tforge_profile *p,
                       const tforge_forge_profile *labelled, const char *heuristic_note)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "task", path);
    cJSON_AddItemToObject(o, "shape", cJSON_Parse(r->task->tune_shapes[r->task->shape]));
    cJSON_AddItemToObject(o, "config", cJSON_Parse(r->config));
    cJSON_AddStringToObject(o, "backend", r->backend.type->name);
    cJSON_AddStringToObject(o, "where", where);
    cJSON_AddStringToObject(o, "status", tforge_status_name(m->status));
    cJSON_AddStringToObject(o, "message", m->message);
    if (!isnan(m->median_ms))
        cJSON_AddNumberToObject(o, "median_ms", m->median_ms);
    cJSON_AddStringToObject(o, "counters", counters_state(p->counters));
    cJSON_AddStringToObject(o, "note", p->note);
    add_metrics(cJSON_AddObjectToObject(o, "static"), p, 0);
    add_metrics(cJSON_AddObjectToObject(o, "counter_metrics"), p, 1);
    if (labelled)
        cJSON_AddStringToObject(o, "heuristic", tforge_forge_heuristic(r->forge));
    else
        cJSON_AddNullToObject(o, "heuristic");
    cJSON_AddStringToObject(o, "heuristic_note", labelled ? "" : heuristic_note);
    cJSON_AddItemToObject(o, "labels", tforge_report_labels(r->forge, labelled, NULL));
    char *text = cJSON_Print(o);
    if (text)
        puts(text);
    free(text);
    cJSON_Delete(o);
}

static int run_profile(const cli_command *c, int argc, char **argv)
{
    profile_args a = {0};
    int first = parse(c, argc, argv, &a);
    if (first < 0)
        return -1 - first;
    if (first != argc - 1)
        return cli_usage_error(c, first >= argc ? "TASK.json is required"
                                                : "one TASK.json, not several");
    const char *path = argv[first];
    const char *const *env = cli_kernel_env();
    int gpu = strcmp(env[0], "TRITON_INTERPRET=0") == 0;
    run r = {0};
    int status = open_candidate(c, &a, path, env, &r);
    if (status)
        goto done;
    tforge_backend_args args = TFORGE_BACKEND_ARGS_INIT;
    args.task = r.task;
    args.space = r.task->space;
    args.compile_workers = 1;
    args.shape = a.shape;
    args.profiler_options = a.n_profiler_options ? a.profiler_options : NULL;
    const tforge_backend_type *type = gpu ? &tforge_backend_cuda : &tforge_backend_interpret;
    const char *where = gpu ? "the GPU" : "no GPU: Triton's CPU interpreter, no counters";
    tforge_measurement m;
    tforge_candidate candidate = {.point = r.point, .config = r.config};
    if (tforge_backend_open(&r.backend, type, &args) ||
        tforge_backend_evaluate(&r.backend, &candidate, 1, &m)) {
        status = cli_fail(c);
        goto done;
    }
    /* the heuristic through the profile-guided loop's own classification */
    tforge_forge_options fo = TFORGE_FORGE_OPTIONS_INIT;
    fo.heuristic = a.heuristic;
    fo.counters = !a.no_counters;
    char heuristic_note[512] = "";
    int rc = tforge_forge_open(&r.forge, r.registry, r.task->space, &r.backend, &fo);
    if (rc == TFORGE_ENOTFOUND && !a.heuristic) {
        snprintf(heuristic_note, sizeof heuristic_note, "%s", tforge_error_last()->message);
        r.forge = NULL;
        rc = 0;
    }
    if (rc) {
        status = cli_fail(c);
        goto done;
    }
    tforge_profile p;
    const tforge_forge_profile *labelled = NULL;
    tforge_loop_eval eval = {0};
    eval.point = r.point;
    eval.config = r.config;
    eval.baseline = a.n_sets == 0;
    eval.m = m;
    tforge_loop_outcome outcome = {0};
    outcome.evals = &eval;
    outcome.n_evals = 1;
    if (r.forge)
        rc = tforge_forge_profile_eval(r.forge, &outcome, 0, &labelled);
    else
        rc = tforge_backend_profile(&r.backend, &candidate, &m, !a.no_counters, &p);
    if (rc) {
        status = cli_fail(c);
        goto done;
    }
    if (labelled)
        p = labelled->profile;
    if (a.common.json)
        print_json(path, &r, where, &m, &p, labelled, heuristic_note);
    else
        print_text(path, &r, where, &m, &p, labelled, heuristic_note);
    status = m.status == TFORGE_STATUS_OK ? TFORGE_EXIT_OK : TFORGE_EXIT_FAILED;
done:
    close_run(&r);
    return status;
}

const cli_command cli_cmd_profile = {"profile", "profile one candidate: metrics and bottlenecks",
                                     profile_help, run_profile};
