/* The one typed door to the worker's Python (rpc.h): every request's JSON is written here. */
#include "rpc.h"

#include "tforge/error.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the methods, and the fields each may send ---- */

#define FIELDS(...) ((const char *const[]){__VA_ARGS__, NULL})
#define NONE ((const char *const[]){NULL})
static const tforge_rpc_method methods[] = {
    {"tforge_worker", "load_task", FIELDS("path"), NONE},
    {"tforge_worker", "environment", NONE, NONE},
    {"tforge_worker", "compile", FIELDS("task", "config", "shape"),
     FIELDS("variant", "digest", "dtype", "also")},
    {"tforge_worker", "run_check", FIELDS("task", "config", "shape", "seed"),
     FIELDS("variant", "digest", "dtype", "both_orders")},
    {"tforge_worker", "time", FIELDS("task", "config", "shape"),
     FIELDS("variant", "digest", "dtype", "energy")},
    {"tforge_worker", "profile",
     FIELDS("task", "config", "shape", "counters", "profiler", "options"),
     FIELDS("variant", "digest", "dtype", "launches_of")},
    {"tforge_worker.worker", "device", NONE, NONE},
    {"tforge_worker.worker", "check_task", FIELDS("path"), FIELDS("config", "variant")},
    {"tforge_worker.analyze", "analyze", FIELDS("path"), FIELDS("kernel")},
    {"tforge_worker.capture", "capture", FIELDS("argv", "out", "check"),
     FIELDS("kernel", "reference")},
    {"tforge_worker.capture", "init", FIELDS("path", "out", "check"),
     FIELDS("kernel", "reference")},
    {"tforge_worker.variants", "unified_diff", FIELDS("path", "text"), NONE},
    {"tforge_worker.takehome", "launch_hook", FIELDS("task", "config"), FIELDS("text")},
    {"tforge_worker.takehome", "verify", FIELDS("out", "task", "config", "shape"),
     FIELDS("dtype")},
    {"tforge_worker.peaks", "cached", NONE, NONE},
    {"tforge_worker.proposal", "check_answer", FIELDS("answer", "kernel", "source"), NONE},
};
#undef FIELDS
#undef NONE
enum { N_METHODS = sizeof methods / sizeof methods[0] };

const tforge_rpc_method *tforge_rpc_methods(size_t *n)
{
    *n = N_METHODS;
    return methods;
}

static const tforge_rpc_method *method_of(const char *module, const char *function)
{
    for (size_t i = 0; i < N_METHODS; i++)
        if (strcmp(methods[i].module, module) == 0 && strcmp(methods[i].function, function) == 0)
            return &methods[i];
    return NULL;
}

static int listed(const char *const *names, const char *name)
{
    for (; *names; names++)
        if (strcmp(*names, name) == 0)
            return 1;
    return 0;
}

/* 0 when `args` carries every field `m` always sends and none it does not list. */
static int check_fields(const tforge_rpc_method *m, const cJSON *args)
{
    for (const cJSON *a = args->child; a; a = a->next)
        if (!listed(m->always, a->string) && !listed(m->sometimes, a->string))
            return tforge_error_set(TFORGE_ERROR, "worker request %s.%s: field '%s' is not one "
                                    "of the method's (rpc.c's table)", m->module, m->function,
                                    a->string);
    for (const char *const *f = m->always; *f; f++)
        if (!cJSON_GetObjectItemCaseSensitive(args, *f))
            return tforge_error_set(TFORGE_ERROR, "worker request %s.%s: field '%s' is missing "
                                    "(or not JSON)", m->module, m->function, *f);
    return 0;
}

/* {"module": M, "function": F, "args": ARGS}, `args` taken; NULL with the error set. */
static char *request(const char *module, const char *function, cJSON *args)
{
    const tforge_rpc_method *m = method_of(module, function);
    char *text = NULL;
    if (!m)
        tforge_error_set(TFORGE_ERROR, "worker request %s.%s: not a method of rpc.c's table",
                         module, function);
    else if (!args)
        tforge_error_set(TFORGE_ENOMEM, "out of memory");
    else if (!check_fields(m, args)) {
        cJSON *r = cJSON_CreateObject();
        if (r && cJSON_AddStringToObject(r, "module", module) &&
            cJSON_AddStringToObject(r, "function", function) &&
            cJSON_AddItemToObject(r, "args", args)) {
            args = NULL;
            text = cJSON_PrintUnformatted(r);
        }
        cJSON_Delete(r);
        if (!text)
            tforge_error_set(TFORGE_ENOMEM, "out of memory");
    }
    cJSON_Delete(args);
    return text;
}

/* The field `name` of `args` from JSON text; a text that is not JSON leaves it out, and the
 * method's check says so when the field is one it needs. */
static void add_json(cJSON *args, const char *name, const char *json)
{
    cJSON *v = json ? cJSON_Parse(json) : NULL;
    if (v)
        cJSON_AddItemToObject(args, name, v);
}

static void add_string(cJSON *args, const char *name, const char *text)
{
    if (text)
        cJSON_AddStringToObject(args, name, text);
}

/* ---- the requests, one an entry point ---- */

char *tforge_rpc_load_task(const char *path)
{
    cJSON *args = cJSON_CreateObject();
    add_string(args, "path", path);
    return request("tforge_worker", "load_task", args);
}

char *tforge_rpc_environment(void)
{
    return request("tforge_worker", "environment", cJSON_CreateObject());
}

static cJSON *candidate_args(const tforge_rpc_candidate *c)
{
    cJSON *args = cJSON_CreateObject();
    add_string(args, "task", c->task);
    add_json(args, "config", c->config);
    add_string(args, "variant", c->variant);
    add_string(args, "digest", c->digest);
    add_json(args, "shape", c->shape);
    add_string(args, "dtype", c->dtype);
    return args;
}

char *tforge_rpc_compile(const tforge_rpc_candidate *c, const char *const *also, size_t n_also)
{
    cJSON *args = candidate_args(c);
    cJSON *shapes = n_also ? cJSON_AddArrayToObject(args, "also") : NULL;
    for (size_t s = 0; shapes && s < n_also; s++)
        cJSON_AddItemToArray(shapes, cJSON_Parse(also[s]));
    return request("tforge_worker", "compile", args);
}

char *tforge_rpc_run_check(const tforge_rpc_candidate *c, uint64_t seed, int both_orders)
{
    cJSON *args = candidate_args(c);
    cJSON_AddNumberToObject(args, "seed", (double)seed);
    if (both_orders)
        cJSON_AddTrueToObject(args, "both_orders");
    return request("tforge_worker", "run_check", args);
}

char *tforge_rpc_time(const tforge_rpc_candidate *c, int energy)
{
    cJSON *args = candidate_args(c);
    if (!energy)
        cJSON_AddFalseToObject(args, "energy");
    return request("tforge_worker", "time", args);
}

static cJSON *profile_args(const tforge_rpc_candidate *c, int counters, const char *profiler,
                           const char *const *options)
{
    cJSON *args = candidate_args(c);
    cJSON_AddBoolToObject(args, "counters", counters);
    add_string(args, "profiler", profiler);
    cJSON *o = cJSON_AddObjectToObject(args, "options");
    for (const char *const *kv = options; o && kv && *kv; kv++) {
        const char *eq = strchr(*kv, '=');
        char key[128];
        if (!eq || (size_t)(eq - *kv) >= sizeof key)
            continue; /* the caller checked them against the plugin's table */
        snprintf(key, sizeof key, "%.*s", (int)(eq - *kv), *kv);
        cJSON_AddStringToObject(o, key, eq + 1);
    }
    return args;
}

char *tforge_rpc_profile(const tforge_rpc_candidate *c, int counters, const char *profiler,
                         const char *const *options)
{
    return request("tforge_worker", "profile", profile_args(c, counters, profiler, options));
}

char *tforge_rpc_profile_launches(const tforge_rpc_candidate *c, const char *profiler,
                                  const char *const *options, const char *kernel)
{
    cJSON *args = profile_args(c, 1, profiler, options);
    add_string(args, "launches_of", kernel);
    return request("tforge_worker", "profile", args);
}

char *tforge_rpc_device(void)
{
    return request("tforge_worker.worker", "device", cJSON_CreateObject());
}

char *tforge_rpc_peaks(void)
{
    return request("tforge_worker.peaks", "cached", cJSON_CreateObject());
}

char *tforge_rpc_check_task(const char *path, const char *config, const char *variant)
{
    cJSON *args = cJSON_CreateObject();
    add_string(args, "path", path);
    add_json(args, "config", config);
    add_string(args, "variant", variant);
    return request("tforge_worker.worker", "check_task", args);
}

char *tforge_rpc_analyze(const char *path, const char *kernel)
{
    cJSON *args = cJSON_CreateObject();
    add_string(args, "path", path);
    add_string(args, "kernel", kernel);
    return request("tforge_worker.analyze", "analyze", args);
}

static cJSON *capture_args(const tforge_rpc_capture_options *o)
{
    cJSON *args = cJSON_CreateObject();
    add_string(args, "out", o->out);
    add_string(args, "kernel", o->kernel);
    add_string(args, "reference", o->reference);
    cJSON_AddBoolToObject(args, "check", o->check);
    return args;
}

char *tforge_rpc_capture(const char *const *argv, size_t argc, const tforge_rpc_capture_options *o)
{
    cJSON *args = capture_args(o), *command = cJSON_AddArrayToObject(args, "argv");
    for (size_t i = 0; command && i < argc; i++)
        cJSON_AddItemToArray(command, cJSON_CreateString(argv[i]));
    return request("tforge_worker.capture", "capture", args);
}

char *tforge_rpc_init(const char *path, const tforge_rpc_capture_options *o)
{
    cJSON *args = capture_args(o);
    add_string(args, "path", path);
    return request("tforge_worker.capture", "init", args);
}

char *tforge_rpc_unified_diff(const char *path, const char *text)
{
    cJSON *args = cJSON_CreateObject();
    add_string(args, "path", path);
    add_string(args, "text", text);
    return request("tforge_worker.variants", "unified_diff", args);
}

char *tforge_rpc_launch_hook(const char *task, const char *config, const char *text)
{
    cJSON *args = cJSON_CreateObject();
    add_string(args, "task", task);
    add_json(args, "config", config);
    add_string(args, "text", text);
    return request("tforge_worker.takehome", "launch_hook", args);
}

char *tforge_rpc_verify(const char *out, const char *task, const char *config, const char *shape,
                        const char *dtype)
{
    cJSON *args = cJSON_CreateObject();
    add_string(args, "out", out);
    add_string(args, "task", task);
    add_json(args, "config", config);
    add_json(args, "shape", shape);
    add_string(args, "dtype", dtype);
    return request("tforge_worker.takehome", "verify", args);
}

char *tforge_rpc_check_answer(const char *answer, const char *kernel, const char *source)
{
    cJSON *args = cJSON_CreateObject();
    add_string(args, "answer", answer);
    add_string(args, "kernel", kernel);
    add_string(args, "source", source);
    return request("tforge_worker.proposal", "check_answer", args);
}

/* ---- replies ---- */

void tforge_rpc_read(tforge_rpc_reply *out, tforge_call_status how, const char *response,
                     const char *detail)
{
    memset(out, 0, sizeof *out);
    out->call = how;
    if (how != TFORGE_CALL_OK) {
        snprintf(out->detail, sizeof out->detail, "%s", detail ? detail : "");
        return;
    }
    if (!response || !(out->doc = cJSON_Parse(response)))
        return; /* no response: doc stays NULL */
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(out->doc, "ok"))) {
        out->result = cJSON_GetObjectItemCaseSensitive(out->doc, "result");
        return;
    }
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(out->doc, "kind");
    const cJSON *error = cJSON_GetObjectItemCaseSensitive(out->doc, "error");
    out->kind = cJSON_IsString(kind) ? kind->valuestring : "?";
    out->error = cJSON_IsString(error) ? error->valuestring : "?";
}

int tforge_rpc_call(tforge_rpc_reply *out, tforge_worker *worker, const char *request,
                    int timeout_ms)
{
    char *response = NULL, detail[256] = "";
    tforge_call_status how = TFORGE_CALL_OK;
    memset(out, 0, sizeof *out);
    int rc = tforge_worker_call(worker, request, timeout_ms, &response, &how, detail,
                                sizeof detail);
    if (!rc)
        tforge_rpc_read(out, how, response, detail);
    free(response);
    return rc;
}

int tforge_rpc_raised(const tforge_rpc_reply *reply, const char *kind)
{
    return reply->kind && strcmp(reply->kind, kind) == 0;
}

const char *tforge_rpc_error_text(const tforge_rpc_reply *reply, char *buffer, size_t size)
{
    snprintf(buffer, size, "%s: %s", reply->kind ? reply->kind : "?",
             reply->error ? reply->error : "?");
    return buffer;
}

void tforge_rpc_reply_dispose(tforge_rpc_reply *reply)
{
    cJSON_Delete(reply->doc);
    memset(reply, 0, sizeof *reply);
}

cJSON *tforge_rpc_result(tforge_rpc_reply *r, const char *what, const char *function)
{
    cJSON *result = NULL;
    char text[2048];
    if (r->call != TFORGE_CALL_OK)
        tforge_error_set(TFORGE_ERROR, "%s: the worker %s", what, r->detail);
    else if (!r->doc)
        tforge_error_set(TFORGE_ERROR, "%s: the worker's answer is not JSON", what);
    else if (tforge_rpc_raised(r, "ValueError") || tforge_rpc_raised(r, "TaskError"))
        tforge_error_set(TFORGE_EINPUT, "%s", r->error);
    else if (r->kind)
        tforge_error_set(TFORGE_ERROR, "%s: %s failed: %s", what, function,
                         tforge_rpc_error_text(r, text, sizeof text));
    else if (!(result = cJSON_DetachItemFromObject(r->doc, "result")))
        tforge_error_set(TFORGE_ERROR, "%s: the worker's answer has no result", what);
    return result;
}

cJSON *tforge_rpc_fresh(const char *what, char *request, const char *const *env, int timeout_ms)
{
    if (!request)
        return NULL;
    cJSON *sent = cJSON_Parse(request);
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(sent, "function");
    tforge_worker_options options = TFORGE_WORKER_OPTIONS_INIT;
    options.name = cJSON_IsString(f) ? f->valuestring : "worker";
    options.env = env;
    tforge_worker *worker = NULL;
    tforge_rpc_reply r = {0};
    cJSON *result = NULL;
    if (!tforge_worker_start(&worker, &options) &&
        !tforge_rpc_call(&r, worker, request, timeout_ms))
        result = tforge_rpc_result(&r, what, options.name);
    tforge_rpc_reply_dispose(&r);
    tforge_worker_free(worker);
    cJSON_Delete(sent);
    free(request);
    return result;
}

char *tforge_rpc_fresh_text(const char *what, char *request, const char *const *env,
                            int timeout_ms)
{
    cJSON *result = tforge_rpc_fresh(what, request, env, timeout_ms);
    char *text = NULL;
    if (result && !cJSON_IsString(result))
        tforge_error_set(TFORGE_ERROR, "%s: the worker's answer is not text", what);
    else if (result && !(text = strdup(result->valuestring)))
        tforge_error_set(TFORGE_ENOMEM, "out of memory");
    cJSON_Delete(result);
    return text;
}

char *tforge_rpc_fresh_json(const char *what, char *request, const char *const *env,
                            int timeout_ms)
{
    cJSON *result = tforge_rpc_fresh(what, request, env, timeout_ms);
    char *text = result ? cJSON_PrintUnformatted(result) : NULL;
    if (result && !text)
        tforge_error_set(TFORGE_ENOMEM, "out of memory");
    cJSON_Delete(result);
    return text;
}

/* ---- the candidate entry points' answers ---- */

static const char *string_of(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double number_of(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

tforge_rpc_verdict tforge_rpc_verdict_of(const tforge_rpc_reply *reply)
{
    const cJSON *r = reply->result;
    return (tforge_rpc_verdict){string_of(r, "status"), string_of(r, "message"),
                                cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "fatal"))};
}

tforge_rpc_compiled tforge_rpc_compiled_of(const tforge_rpc_reply *reply)
{
    const cJSON *r = reply->result;
    return (tforge_rpc_compiled){number_of(r, "registers"), number_of(r, "spill_stores"),
                                 number_of(r, "shared_bytes")};
}

tforge_rpc_timed tforge_rpc_timed_of(const tforge_rpc_reply *reply)
{
    const cJSON *r = reply->result;
    return (tforge_rpc_timed){number_of(r, "median_ms"), number_of(r, "min_ms"),
                              number_of(r, "spread"), number_of(r, "n"),
                              number_of(r, "energy_j"), number_of(r, "power_w"),
                              number_of(r, "sm_clock_mhz"), string_of(r, "energy_note")};
}
