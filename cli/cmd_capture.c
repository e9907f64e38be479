/* `tforge capture -- COMMAND...`, `tforge init FILE.py` and `tforge check TASK.json`: from a
 * user's own code to tasks that pass, without writing a launcher. */
#include "backend.h"
#include "cli.h"
#include "registry.h"
#include "rpc.h"
#include "task.h"
#include "tforge/error.h"
#include "worker.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char capture_help[] =
    "usage: tforge capture [--out DIR] [--kernel K] [--reference MODULE:FUNCTION] [--json]\n"
    "                      -- python SCRIPT.py ARGS...   (or: -- python -m MODULE ARGS...)\n\n"
    "Runs your own code once (on the GPU if there is one, else in Triton's CPU interpreter) and\n"
    "records every launch of every Triton kernel: arguments, grid, constexprs, launch options,\n"
    "and the function of your code that launched it. Writes one task per kernel and shape,\n"
    "DIR/<kernel>_<i>/task.json: launched through that function (decorated or not) when it\n"
    "takes tensors, plain values and config objects of its module (the config injected into its\n"
    "kernel's launch, in the slots it passes), else the kernel itself with the recorded grid;\n"
    "the recorded config as the baseline; the space inferred by `tforge analyze`;\n"
    "the reference is FUNCTION if given, else the kernel's own output with the recorded config.\n"
    "Each task is then checked once at a small shape and the result reported. The tasks are\n"
    "ordinary task files (engine/task/TASK.md): read and edit them.\n\n"
    "  --out DIR          where the tasks go (default tforge-tasks)\n"
    "  --kernel K         only launches of the jit function K\n"
    "  --reference M:F    the function computing the expected outputs from the inputs\n"
    "  --timeout S        stop the script after S seconds (default 1800)\n"
    "  --json             the capture's report as JSON\n\n"
    "For each task it prints what it inferred and why (the launcher and where it is, the grid,\n"
    "what is tuned and what is fixed, with the kernel's line, the check shape), so that a wrong\n"
    "guess shows at once; --json gives them as `explain`: [{what, why, line}].\n\n"
    "Without a GPU, the script runs with a stand-in device (engine/task/TASK.md): its GPU\n"
    "queries are answered as an H200's, tensors it makes on \"cuda\" are made on the CPU, and\n"
    "benchmarks (do_bench, an autotuner's) run each config once.\n\n"
    "exit status: 0 every task written passed its check, 1 none was captured, a check failed or\n"
    "the script met what Triton's CPU interpreter cannot run (an interpreter gap, named with\n"
    "the line of your code: the same script captures on a GPU), 2 bad usage or a script that\n"
    "cannot be run.\n";

static const char init_help[] =
    "usage: tforge init FILE.py [--out DIR] [--kernel K] [--reference M:F] [--json]\n\n"
    "`tforge capture` on the file's own demo: runs its `if __name__ == \"__main__\":` block or,\n"
    "without one, its test_* functions that take no arguments, and writes a task for every\n"
    "kernel launch they make (see `tforge capture --help`).\n\n"
    "exit status: as for capture.\n";

static const char check_help[] =
    "usage: tforge check TASK.json [--transforms IDS] [--set NAME=VALUE]...\n"
    "                    [--transform-option ID.K=V]... [--timeout S] [--json]\n\n"
    "Validates a task file (every malformed field named) and runs its baseline once at the\n"
    "first check shape against the reference: on the GPU if there is one, else in Triton's CPU\n"
    "interpreter. Prints the status and, when it failed, why. With --set, the kernel is the\n"
    "variant the source transforms make at those parameters (`tforge transform` lists them;\n"
    "--transforms IDS: only these), launched with the baseline's config.\n\n"
    "Each phase is bounded as tune bounds it: loading the task (its files imported) 300 s,\n"
    "the check (inputs_fn, the reference and the kernel run once) 600 s; a phase that takes\n"
    "longer is killed and named.\n"
    "  --timeout S        seconds each phase may take instead\n\n"
    "exit status: 0 the baseline passed, 1 it failed (a check that hangs too), 2 a bad task\n"
    "file or parameter (a task whose files hang at import too, as tune says).\n";

typedef struct capture_args {
    const char *out, *kernel, *reference;
    int timeout_s;
    cli_common common;
    /* check only: a variant of the kernel */
    const char *transforms;
    const char *sets[65], *transform_options[65];
    size_t n_sets, n_transform_options;
} capture_args;

/* The options before the file or the `--`; returns the index of the first operand, or a
 * negative exit status to return (-1 - status). */
static int parse_options(const cli_command *c, int argc, char **argv, capture_args *a,
                         int stop_at_operand)
{
    enum { OPT_OUT = 1, OPT_KERNEL, OPT_REFERENCE, OPT_TIMEOUT, OPT_TRANSFORMS, OPT_SET,
           OPT_TRANSFORM_OPTION };
    static const struct option all[] = {{"out", required_argument, NULL, OPT_OUT},
                                        {"kernel", required_argument, NULL, OPT_KERNEL},
                                        {"reference", required_argument, NULL, OPT_REFERENCE},
                                        {"timeout", required_argument, NULL, OPT_TIMEOUT},
                                        CLI_COMMON_LONG_OPTIONS,
                                        {"transforms", required_argument, NULL, OPT_TRANSFORMS},
                                        {"set", required_argument, NULL, OPT_SET},
                                        {"transform-option", required_argument, NULL,
                                         OPT_TRANSFORM_OPTION},
                                        {0, 0, 0, 0}};
    /* the variant's options are check's alone: capture and init end the table before them */
    static struct option options[sizeof all / sizeof *all];
    size_t n_common = 4 + sizeof((struct option[]){CLI_COMMON_LONG_OPTIONS}) /
                              sizeof(struct option);
    memcpy(options, all, sizeof all);
    if (c != &cli_cmd_check)
        memset(&options[n_common], 0, sizeof options - n_common * sizeof *options);
    a->out = "tforge-tasks";
    a->timeout_s = c == &cli_cmd_check ? 0 : 1800; /* check: 0, tune's bound for each phase */
    /* capture: everything after the first operand (the user's command) is left alone */
    const char *shorts = stop_at_operand ? "+hvq" : "hvq";
    for (int opt; (opt = getopt_long(argc, argv, shorts, options, NULL)) != -1;) {
        char *end = NULL;
        switch (opt) {
        case OPT_OUT: a->out = optarg; continue;
        case OPT_KERNEL: a->kernel = optarg; continue;
        case OPT_REFERENCE: a->reference = optarg; continue;
        case OPT_TRANSFORMS: a->transforms = optarg; continue;
        case OPT_SET:
        case OPT_TRANSFORM_OPTION: {
            size_t *n = opt == OPT_SET ? &a->n_sets : &a->n_transform_options;
            if (*n == 64)
                return -1 - cli_usage_error(c, "at most 64 --set and --transform-option each");
            (opt == OPT_SET ? a->sets : a->transform_options)[(*n)++] = optarg;
            continue;
        }
        case OPT_TIMEOUT:
            a->timeout_s = (int)strtol(optarg, &end, 10);
            if (*end || a->timeout_s < 1 || a->timeout_s > 86400)
                return -1 - cli_usage_error(c, "--timeout expects seconds from 1 to 86400, "
                                               "not '%s'", optarg);
            continue;
        default: break;
        }
        int rc = cli_common_option(c, &a->common, opt, optarg, argv);
        if (rc)
            return -1 - (rc < 0 ? TFORGE_EXIT_OK : rc);
    }
    return optind;
}

static const char *text_of(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* One task's check in `w`: its status and message into the task's report `t`. A check that
 * crashes or hangs (a kernel reading out of bounds) fails that task alone; the worker restarts
 * for the next. */
static int check_one(tforge_worker *w, cJSON *t, int timeout_ms)
{
    char *request = tforge_rpc_check_task(text_of(t, "task"), NULL, NULL);
    tforge_rpc_reply reply;
    int rc = request ? tforge_rpc_call(&reply, w, request, timeout_ms) : tforge_error_last()->code;
    free(request);
    if (rc)
        return rc;
    char message[512] = "";
    const char *status = "runtime";
    if (reply.call != TFORGE_CALL_OK) {
        snprintf(message, sizeof message, "the check's worker %s", reply.detail);
    } else if (!reply.result) { /* it raised, or answered no response */
        status = "task";
        if (reply.kind)
            tforge_rpc_error_text(&reply, message, sizeof message);
    } else {
        status = text_of(reply.result, "status");
        snprintf(message, sizeof message, "%s", text_of(reply.result, "message"));
    }
    cJSON_ReplaceItemInObject(t, "check", cJSON_CreateString(status));
    cJSON_DeleteItemFromObject(t, "check_message");
    if (strcmp(status, "ok") != 0 || message[0]) /* an ok one may say what it compared */
        cJSON_AddStringToObject(t, "check_message", message);
    tforge_rpc_reply_dispose(&reply);
    return 0;
}

/* Checks every task the capture wrote, one worker for them all (the capture's own process ran
 * the user's script: a crash there would lose the whole report). */
static int check_tasks(const capture_args *a, cJSON *doc)
{
    tforge_worker_options options = TFORGE_WORKER_OPTIONS_INIT;
    options.name = "check_task";
    options.env = cli_kernel_env();
    tforge_worker *w = NULL;
    int rc = tforge_worker_start(&w, &options);
    cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(doc, "tasks"))
        if (!rc)
            rc = check_one(w, t, a->timeout_s * 1000);
    tforge_worker_free(w);
    return rc;
}

/* What capture inferred for a task and why: one item a line, its reason and source line
 * under it. */
static void print_explain(const cJSON *items)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, items)
    {
        const char *line = text_of(e, "line");
        printf("  - %s%s%s%s\n      %s\n", text_of(e, "what"), line[0] ? " (" : "", line,
               line[0] ? ")" : "", text_of(e, "why"));
    }
}

/* Prints the capture's report; returns the exit status it means. */
static int report(const cli_command *c, const char *result, int json)
{
    cJSON *doc = cJSON_Parse(result);
    const cJSON *tasks = cJSON_GetObjectItemCaseSensitive(doc, "tasks");
    int n = cJSON_GetArraySize(tasks), passed = 0;
    if (json)
        puts(result);
    const cJSON *t;
    cJSON_ArrayForEach(t, tasks)
    {
        int ok = strcmp(text_of(t, "check"), "ok") == 0;
        passed += ok;
        if (json)
            continue;
        char *shape = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(t, "shape"));
        char *base = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(t, "baseline"));
        const cJSON *params = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(t, "space"), "params");
        printf("%s\n  kernel %s at %s, launched by %s\n  baseline %s; %d tunable parameter(s)\n"
               "  check: %s%s%s\n",
               text_of(t, "task"), text_of(t, "kernel"), shape ? shape : "?",
               text_of(t, "launch"), base ? base : "?", cJSON_GetArraySize(params),
               text_of(t, "check"), *text_of(t, "check_message") ? ": " : "",
               text_of(t, "check_message"));
        print_explain(cJSON_GetObjectItemCaseSensitive(t, "explain"));
        const cJSON *note;
        cJSON_ArrayForEach(note, cJSON_GetObjectItemCaseSensitive(t, "notes"))
            if (cJSON_IsString(note))
                printf("  note: %s\n", note->valuestring);
        free(shape);
        free(base);
    }
    const cJSON *launches = cJSON_GetObjectItemCaseSensitive(doc, "launches");
    const char *error = text_of(doc, "error");
    if (!json)
        printf("%d launch(es) recorded, %d task(s) written, %d passed their check\n",
               cJSON_IsNumber(launches) ? launches->valueint : 0, n, passed);
    int gap = strcmp(text_of(doc, "error_kind"), "interpreter_gap") == 0;
    if (gap) {
        const char *at = text_of(doc, "error_at");
        fprintf(stderr,
                "tforge %s: interpreter gap%s%s: %s\n"
                "  a limit of Triton's CPU interpreter, not of your code: the same script "
                "captures on a GPU\n  (the script's error: %s)\n",
                c->name, at[0] ? " at " : "", at, text_of(doc, "gap"), error);
    } else if (error[0]) {
        fprintf(stderr, "tforge %s: the script failed: %s\n", c->name, error);
    }
    int status = !gap && n && passed == n ? TFORGE_EXIT_OK : TFORGE_EXIT_FAILED;
    if (!n)
        fprintf(stderr, "tforge %s: no Triton kernel launch was recorded%s\n", c->name,
                error[0] ? " before the script failed" : "");
    cJSON_Delete(doc);
    return status;
}

/* What `request` (taken) returned, as JSON text, in a worker that runs kernels where they can
 * run; NULL with the error set when the call failed. */
static char *call(const capture_args *a, const char *what, char *request)
{
    return tforge_rpc_fresh_json(what, request, cli_kernel_env(), a->timeout_s * 1000);
}

/* capture, or init when `argv[first]` is the one FILE.py. */
static int run_capture_or_init(const cli_command *c, int argc, char **argv, int is_init)
{
    capture_args a = {0};
    int first = parse_options(c, argc, argv, &a, !is_init);
    if (first < 0)
        return -1 - first;
    if (first >= argc)
        return cli_usage_error(c, is_init ? "FILE.py is required"
                                          : "the command to run is missing: tforge capture -- "
                                            "python SCRIPT.py ARGS...");
    if (is_init && first != argc - 1)
        return cli_usage_error(c, "one FILE.py, not several");
    /* checked below, each in a worker that may crash */
    tforge_rpc_capture_options options = {a.out, a.kernel, a.reference, 0};
    char *result = call(&a, argv[first],
                        is_init ? tforge_rpc_init(argv[first], &options)
                                : tforge_rpc_capture((const char *const *)argv + first,
                                                     (size_t)(argc - first), &options));
    if (!result)
        return cli_fail(c);
    cJSON *doc = cJSON_Parse(result);
    free(result);
    if (!doc || check_tasks(&a, doc)) {
        cJSON_Delete(doc);
        return cli_fail(c);
    }
    result = cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    int status = result ? report(c, result, a.common.json) : cli_fail(c);
    free(result);
    return status;
}

static int run_capture(const cli_command *c, int argc, char **argv)
{
    return run_capture_or_init(c, argc, argv, 0);
}

static int run_init(const cli_command *c, int argc, char **argv)
{
    return run_capture_or_init(c, argc, argv, 1);
}

int cli_set_candidate(const cli_command *c, const tforge_task *task, const char *const *sets,
                      size_t n_sets, int knobs, tforge_level *point, char **config)
{
    *config = NULL;
    uint32_t dims = tforge_space_dims(task->space);
    tforge_level *given = calloc(dims + 1, sizeof *given);
    if (!given) {
        tforge_error_set(TFORGE_ENOMEM, "out of memory");
        return cli_fail(c);
    }
    for (size_t i = 0; i < n_sets; i++) {
        char name[128];
        size_t len = strcspn(sets[i], "=");
        snprintf(name, sizeof name, "%.*s", (int)len, sets[i]);
        size_t transform;
        uint32_t param;
        if (!knobs && tforge_transforms_find(task->transforms, name, &transform, &param)) {
            free(given);
            return cli_usage_error(c, "--set %s: '%s' is no transform's parameter here (`tforge "
                                   "transform` lists them; the check runs the baseline's "
                                   "config)", sets[i], name);
        }
    }
    int status = cli_transform_point(given, c, task->space, sets, n_sets);
    /* the parameters not set stay at the baseline's levels (level 0 outside the space) */
    const tforge_level *baseline = tforge_task_baseline_point(task, 0);
    if (baseline)
        memcpy(point, baseline, dims * sizeof *point);
    else
        memset(point, 0, dims * sizeof *point);
    for (size_t i = 0; !status && i < n_sets; i++) {
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)strcspn(sets[i], "="), sets[i]);
        int d = tforge_space_find(task->space, name);
        point[d] = given[d];
    }
    free(given);
    if (status)
        return status;
    /* the launch options set (and with `knobs` the task's parameters set) join the baseline's
     * config (else the worker takes the baseline of the check shape itself) */
    char *launch = NULL;
    cJSON *cfg = cJSON_Parse(task->baselines[0]), *extra = NULL;
    if (!tforge_task_config(&launch, task, point))
        extra = cJSON_Parse(launch);
    int added = 0;
    for (cJSON *v = extra ? extra->child : NULL; v; v = v->next) {
        size_t transform;
        uint32_t param;
        int named = 0;
        for (size_t i = 0; knobs && i < n_sets && !named; i++)
            named = strncmp(sets[i], v->string, strlen(v->string)) == 0 &&
                    sets[i][strlen(v->string)] == '=';
        if (named || !tforge_transforms_find(task->transforms, v->string, &transform, &param)) {
            cJSON_DeleteItemFromObjectCaseSensitive(cfg, v->string);
            cJSON_AddItemToObject(cfg, v->string, cJSON_Duplicate(v, 1));
            added = 1;
        }
    }
    *config = added ? cJSON_PrintUnformatted(cfg) : NULL;
    cJSON_Delete(cfg);
    cJSON_Delete(extra);
    free(launch);
    return TFORGE_EXIT_OK;
}

/* check's bound on a phase: --timeout S for each, else tune's own for that phase. */
static int phase_ms(const capture_args *a, int tune_ms)
{
    return a->timeout_s ? a->timeout_s * 1000 : tune_ms;
}

/* check: the task loaded as tune loads it and every tuning shape's space built as tune builds
 * it, so that check refuses what tune would; the worker that loaded it into `*loaded` (the
 * caller frees it). With --set (or --transforms), the baseline's config (with any launch option
 * set) and the kernel file's variant at the transforms' parameters set, into `*config` and
 * `*variant` (NULL when nothing is rewritten). 0, or the exit status to return. */
static int prepare_check(const cli_command *c, const capture_args *a, const char *path,
                         tforge_worker **loaded, char **config, char **variant)
{
    tforge_registry *registry = NULL;
    tforge_worker *worker = NULL;
    tforge_task *task = NULL;
    tforge_level *point = NULL;
    tforge_transform_ids ids;
    tforge_worker_options wo = TFORGE_WORKER_OPTIONS_INIT;
    /* the worker's own imports (torch, Triton) before the clock starts, as the pool's */
    const char *env[] = {cli_kernel_env()[0], "TFORGE_WORKER_PRELOAD=tforge_worker", NULL};
    wo.name = "check_task";
    wo.env = env;
    int status = TFORGE_EXIT_OK, variant_asked = a->n_sets || a->transforms;
    if (tforge_transform_ids_split(&ids, a->transforms) ||
        cli_load_plugins(&a->common, &registry) ||
        cli_check_plugins(registry, a->transforms, a->transform_options, "--transform-option",
                          NULL) ||
        tforge_worker_start(&worker, &wo) ||
        tforge_task_load(&task, worker, path, phase_ms(a, TFORGE_TASK_LOAD_TIMEOUT_MS)) ||
        tforge_task_check_spaces(task)) {
        status = cli_fail(c);
        goto cleanup;
    }
    if (!variant_asked)
        goto cleanup;
    if (tforge_task_use_transforms(task, registry, ids.n ? ids.ids : NULL,
                                   a->n_transform_options ? a->transform_options : NULL) ||
        !(point = calloc(tforge_space_dims(task->space) + 1, sizeof *point))) {
        status = cli_fail(c);
        goto cleanup;
    }
    if ((status = cli_set_candidate(c, task, a->sets, a->n_sets, 0, point, config)))
        goto cleanup;
    if (tforge_task_variant(variant, task, point, SIZE_MAX))
        status = cli_fail(c);
cleanup:
    if (!status) {
        *loaded = worker;
        worker = NULL;
    }
    free(point);
    tforge_task_free(task);
    tforge_worker_free(worker);
    tforge_registry_free(registry);
    tforge_transform_ids_free(&ids);
    return status;
}

/* The baseline (or the variant) run once against the reference in the worker that loaded the
 * task, bounded as tune bounds a candidate's check: what check_task returned, as JSON text, or
 * NULL with the error set (a hang named as the check phase's). */
static char *check_run(const capture_args *a, const char *path, tforge_worker *worker,
                       const char *config, const char *variant)
{
    const tforge_backend_args tune = TFORGE_BACKEND_ARGS_INIT;
    tforge_rpc_reply reply = {0};
    char *request = tforge_rpc_check_task(path, config, variant), *text = NULL;
    cJSON *result = NULL;
    if (!request || tforge_rpc_call(&reply, worker, request, phase_ms(a, tune.check_timeout_ms)))
        goto cleanup;
    if (reply.call == TFORGE_CALL_TIMEOUT)
        tforge_error_set(TFORGE_ERROR, "%s: the check phase (inputs_fn, the reference and the "
                         "kernel run once) timed out: its worker %s (tune's bound on a "
                         "candidate's check; --timeout S sets each phase's)", path, reply.detail);
    else if ((result = tforge_rpc_result(&reply, path, "check_task")) &&
             !(text = cJSON_PrintUnformatted(result)))
        tforge_error_set(TFORGE_ENOMEM, "out of memory");
cleanup:
    cJSON_Delete(result);
    tforge_rpc_reply_dispose(&reply);
    free(request);
    return text;
}

static int run_check(const cli_command *c, int argc, char **argv)
{
    capture_args a = {0};
    int status, first = parse_options(c, argc, argv, &a, 0);
    if (first < 0)
        return -1 - first;
    if (first != argc - 1)
        return cli_usage_error(c, first >= argc ? "TASK.json is required"
                                                : "one TASK.json, not several");
    char *config = NULL, *variant = NULL;
    tforge_worker *worker = NULL;
    if ((status = prepare_check(c, &a, argv[first], &worker, &config, &variant)))
        return status;
    char *result = check_run(&a, argv[first], worker, config, variant);
    free(config);
    free(variant);
    tforge_worker_free(worker);
    if (!result)
        return cli_fail(c);
    cJSON *doc = cJSON_Parse(result);
    int ok = strcmp(text_of(doc, "status"), "ok") == 0;
    if (a.common.json) {
        puts(result);
    } else {
        char *shape = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(doc, "shape"));
        char *config = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(doc, "config"));
        printf("%s: %sbaseline %s at %s (%s): %s%s%s\n", argv[first],
               a.n_sets ? "the variant of --set with the " : "", config ? config : "?",
               shape ? shape : "?", text_of(doc, "where"), text_of(doc, "status"),
               *text_of(doc, "message") ? ": " : "", text_of(doc, "message"));
        const cJSON *w;
        cJSON_ArrayForEach(w, cJSON_GetObjectItemCaseSensitive(doc, "warnings"))
            if (cJSON_IsString(w))
                printf("warning: %s\n", w->valuestring);
        free(shape);
        free(config);
    }
    cJSON_Delete(doc);
    free(result);
    return ok ? TFORGE_EXIT_OK : TFORGE_EXIT_FAILED;
}

const cli_command cli_cmd_capture = {"capture", "record a script's Triton launches as tasks",
                                     capture_help, run_capture};
const cli_command cli_cmd_init = {"init", "tasks from a kernel file's own demo or tests",
                                  init_help, run_init};
const cli_command cli_cmd_check = {"check", "validate a task and run its baseline once",
                                   check_help, run_check};
