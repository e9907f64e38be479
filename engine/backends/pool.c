#include "pool.h"

#include "profile.h"
#include "tforge/error.h"
#include "tforge/log.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_COMPILE_WORKERS = 256 };

struct pool {
    const tforge_task *task;
    tforge_backend_args o;
    pool_mode mode;
    tforge_worker **compilers; /* NULL for POOL_CHECK */
    tforge_worker *runner;     /* checks and times; NULL for POOL_COMPILE */
    char *also; /* the compile requests' {"also": [check shapes]}, or NULL */
    unsigned restarts;
    int said_refused; /* counters refused: said once, then the profiles' notes say it */
    uint64_t checks; /* every check draws inputs from a seed of its own */
    /* A worker's TaskError: the task itself is broken (its reference, inputs or launch
     * expressions), not the candidate; the batch ends as the task's error. Set by either the
     * compile thread or the runner, so under `lock`. */
    pthread_mutex_t lock;
    char task_error[1024];
};

static int start_worker(tforge_worker **out, const char *name, int interpret)
{
    /* Compilers must never interpret: under TRITON_INTERPRET nothing can be compiled. */
    static const char *const interpreting[] = {"TRITON_INTERPRET=1",
                                               "TFORGE_WORKER_PRELOAD=tforge_worker", NULL};
    static const char *const compiling[] = {"TRITON_INTERPRET=0",
                                            "TFORGE_WORKER_PRELOAD=tforge_worker", NULL};
    tforge_worker_options options = TFORGE_WORKER_OPTIONS_INIT;
    options.name = name;
    options.env = interpret ? interpreting : compiling;
    return tforge_worker_start(out, &options);
}

/* {"also": [check shapes]} where the GPU worker will run compiled kernels at them, else NULL. */
static char *check_shapes(const pool *e)
{
    if (e->mode != POOL_CUDA || !e->task->n_check)
        return NULL;
    cJSON *o = cJSON_CreateObject(), *shapes = cJSON_AddArrayToObject(o, "also");
    for (size_t s = 0; s < e->task->n_check; s++)
        cJSON_AddItemToArray(shapes, cJSON_Parse(e->task->check_shapes[s]));
    char *text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return text;
}

int pool_open(pool **out, const tforge_backend_args *o, pool_mode mode)
{
    if (!o->task || o->shape >= o->task->n_tune)
        return tforge_error_set(TFORGE_EINPUT, "backend: no task, or shape %zu of %zu", o->shape,
                                o->task ? o->task->n_tune : 0);
    pool *e = calloc(1, sizeof *e);
    if (!e)
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    e->task = o->task;
    e->o = *o;
    e->mode = mode;
    pthread_mutex_init(&e->lock, NULL);
    if (e->o.compile_workers < 1)
        e->o.compile_workers = 1;
    if (e->o.compile_workers > MAX_COMPILE_WORKERS)
        e->o.compile_workers = MAX_COMPILE_WORKERS;
    int rc = 0;
    if (mode != POOL_CHECK) {
        e->also = check_shapes(e);
        e->compilers = calloc(e->o.compile_workers, sizeof *e->compilers);
        if (!e->compilers)
            rc = tforge_error_set(TFORGE_ENOMEM, "out of memory");
        for (unsigned i = 0; !rc && i < e->o.compile_workers; i++)
            rc = start_worker(&e->compilers[i], "compile", 0);
    }
    if (!rc && mode != POOL_COMPILE)
        rc = start_worker(&e->runner, mode == POOL_CUDA ? "gpu" : "interpret", mode != POOL_CUDA);
    if (rc) {
        pool_close(e);
        return rc;
    }
    *out = e;
    return 0;
}

void pool_close(void *state)
{
    pool *e = state;
    if (!e)
        return;
    for (unsigned i = 0; e->compilers && i < e->o.compile_workers; i++)
        tforge_worker_free(e->compilers[i]);
    free(e->compilers);
    free(e->also);
    tforge_worker_free(e->runner);
    pthread_mutex_destroy(&e->lock);
    free(e);
}

unsigned pool_restarts(const void *state)
{
    return ((const pool *)state)->restarts;
}

int pool_retime_untimed(void *state, const tforge_candidate *candidate, uint64_t seed,
                        tforge_measurement *out)
{
    (void)state, (void)candidate, (void)seed, (void)out;
    return 0;
}

int pool_job_of(pool_job *out, const pool *p, const tforge_candidate *c, tforge_measurement *m)
{
    *out = (pool_job){NULL, NULL};
    int rc = c->config ? ((out->config = strdup(c->config)) ? 0 : TFORGE_ENOMEM)
                       : tforge_task_config(&out->config, p->task, c->point);
    if (rc)
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    if (!c->point)
        return 0;
    if (tforge_task_variant(&out->variant, p->task, c->point,
                            c->without ? c->without - 1 : SIZE_MAX)) {
        /* the transforms' edits do not compose here: a failed candidate, learnt by the search */
        m->status = TFORGE_STATUS_COMPILE;
        snprintf(m->message, sizeof m->message, "%s", tforge_error_last()->message);
        pool_job_free(out);
        return 1;
    }
    return 0;
}

void pool_job_free(pool_job *job)
{
    free(job->config);
    free(job->variant);
    *job = (pool_job){NULL, NULL};
}

int pool_evaluate(void *state, const tforge_candidate *candidates, size_t n,
                  tforge_measurement *out)
{
    pool *p = state;
    pool_job *jobs = calloc(n + 1, sizeof *jobs);
    int rc = jobs ? 0 : tforge_error_set(TFORGE_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < n; i++)
        if ((rc = pool_job_of(&jobs[i], p, &candidates[i], &out[i])) == 1)
            rc = 0;
    if (!rc)
        rc = pool_run(p, jobs, n, out);
    for (size_t i = 0; jobs && i < n; i++)
        pool_job_free(&jobs[i]);
    free(jobs);
    return rc;
}

/* {"module": "tforge_worker", "function": F, "args": {"task": path, "config": C, "shape": S,
 *  "variant": V}} */
static char *request(const pool *e, const char *function, const pool_job *job,
                     const char *shape, const char *extra)
{
    cJSON *r = cJSON_CreateObject(), *args = cJSON_AddObjectToObject(r, "args");
    cJSON_AddStringToObject(r, "module", "tforge_worker");
    cJSON_AddStringToObject(r, "function", function);
    cJSON_AddStringToObject(args, "task", e->task->path);
    cJSON_AddItemToObject(args, "config", cJSON_Parse(job->config));
    if (job->variant)
        cJSON_AddStringToObject(args, "variant", job->variant);
    cJSON_AddItemToObject(args, "shape", cJSON_Parse(shape));
    cJSON *more = extra ? cJSON_Parse(extra) : NULL;
    for (cJSON *m = more ? more->child : NULL; m; m = m->next)
        cJSON_AddItemToObject(args, m->string, cJSON_Duplicate(m, 1));
    cJSON_Delete(more);
    char *text = cJSON_PrintUnformatted(r);
    cJSON_Delete(r);
    return text;
}

static tforge_status status_of(const char *s)
{
    uint32_t status;
    /* "unsupported" and anything unknown (or a status no worker reports) */
    if (tforge_status_parse(&status, s) || status == TFORGE_STATUS_CONSTRAINT)
        return TFORGE_STATUS_RUNTIME;
    return (tforge_status)status;
}

/* Reads a worker's answer into `r` (status, message) and returns the result object, or NULL
 * when the candidate failed. `*fatal` is set when the worker's CUDA context is gone. */
static cJSON *answer(pool *e, tforge_measurement *r, const char *response, cJSON **doc,
                     int *fatal)
{
    *fatal = 0;
    *doc = cJSON_Parse(response);
    const cJSON *ok = cJSON_GetObjectItemCaseSensitive(*doc, "ok");
    if (!cJSON_IsTrue(ok)) {
        const cJSON *err = cJSON_GetObjectItemCaseSensitive(*doc, "error");
        static const char prefix[] = "TaskError: ";
        if (cJSON_IsString(err) && strncmp(err->valuestring, prefix, sizeof prefix - 1) == 0) {
            pthread_mutex_lock(&e->lock);
            if (!e->task_error[0])
                snprintf(e->task_error, sizeof e->task_error, "%s",
                         err->valuestring + sizeof prefix - 1);
            pthread_mutex_unlock(&e->lock);
        }
        r->status = TFORGE_STATUS_RUNTIME;
        snprintf(r->message, sizeof r->message, "worker: %s",
                 cJSON_IsString(err) ? err->valuestring : "an answer that is not JSON");
        return NULL;
    }
    cJSON *result = cJSON_GetObjectItemCaseSensitive(*doc, "result");
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(result, "status");
    const cJSON *message = cJSON_GetObjectItemCaseSensitive(result, "message");
    *fatal = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(result, "fatal"));
    r->status = cJSON_IsString(status) ? status_of(status->valuestring) : TFORGE_STATUS_RUNTIME;
    if (r->status != TFORGE_STATUS_OK) {
        snprintf(r->message, sizeof r->message, "%s",
                 cJSON_IsString(message) ? message->valuestring : "failed");
        return NULL;
    }
    return result;
}

static double number(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* A call that may crash or hang: those become the candidate's status, and the worker is
 * replaced. Returns the result object (owned by *doc) when the candidate passed. */
static cJSON *call(pool *e, tforge_worker *w, const char *req, int timeout_ms,
                   tforge_measurement *r, cJSON **doc)
{
    char *response = NULL, detail[200] = "";
    tforge_call_status how;
    *doc = NULL;
    if (tforge_worker_call(w, req, timeout_ms, &response, &how, detail, sizeof detail)) {
        r->status = TFORGE_STATUS_RUNTIME;
        snprintf(r->message, sizeof r->message, "%s", tforge_error_last()->message);
        return NULL;
    }
    if (how != TFORGE_CALL_OK) {
        e->restarts++;
        r->status = how == TFORGE_CALL_TIMEOUT ? TFORGE_STATUS_TIMEOUT : TFORGE_STATUS_RUNTIME;
        snprintf(r->message, sizeof r->message, "the worker %s", detail);
        return NULL;
    }
    int fatal;
    cJSON *result = answer(e, r, response, doc, &fatal);
    free(response);
    if (fatal) { /* a lost CUDA context poisons every later launch in that process */
        tforge_worker_kill(w, NULL, 0);
        e->restarts++;
    }
    return result;
}

/* A batch in flight: the compile pool works through it in a thread of its own while the GPU
 * worker checks and times each candidate as soon as its compile has finished, so the GPU waits
 * only for a batch's first compile. */
typedef struct batch {
    pool *e;
    const pool_job *jobs;
    size_t n;
    tforge_measurement *results;
    pthread_mutex_t lock;
    pthread_cond_t compiled_cv;
    unsigned char *compiled; /* per candidate: its compile has finished (under `lock`) */
    unsigned restarts;       /* compile workers replaced (read after the thread ends) */
} batch;

static void mark_compiled(batch *b, size_t i)
{
    pthread_mutex_lock(&b->lock);
    b->compiled[i] = 1;
    pthread_cond_signal(&b->compiled_cv);
    pthread_mutex_unlock(&b->lock);
}

/* Compiles every config on the pool, each worker taking the next config as it finishes. */
static void *compile_all(void *arg)
{
    batch *b = arg;
    pool *e = b->e;
    const pool_job *jobs = b->jobs;
    tforge_measurement *results = b->results;
    size_t n = b->n;
    unsigned W = e->o.compile_workers;
    size_t slot[MAX_COMPILE_WORKERS];
    struct pollfd fds[MAX_COMPILE_WORKERS];
    for (unsigned w = 0; w < W; w++)
        slot[w] = SIZE_MAX;
    const char *shape = e->task->tune_shapes[e->o.shape];
    size_t next = 0, done = 0;
    while (done < n) {
        for (unsigned w = 0; w < W && next < n; w++)
            if (slot[w] == SIZE_MAX && !jobs[next].config) { /* failed before compiling */
                mark_compiled(b, next++);
                done++;
            } else if (slot[w] == SIZE_MAX) {
                char *req = request(e, "compile", &jobs[next], shape, e->also);
                if (req && tforge_worker_send(e->compilers[w], req) == 0) {
                    slot[w] = next;
                } else {
                    results[next].status = TFORGE_STATUS_RUNTIME;
                    snprintf(results[next].message, sizeof results[next].message,
                             "could not reach a compile worker");
                    mark_compiled(b, next);
                    done++;
                }
                free(req);
                next++;
            }
        unsigned n_fds = 0;
        int timeout = e->o.compile_timeout_ms;
        double wait = 1e9, now = tforge_worker_now_ms();
        for (unsigned w = 0; w < W; w++)
            if (slot[w] != SIZE_MAX) {
                fds[n_fds++] = (struct pollfd){tforge_worker_fd(e->compilers[w]), POLLIN, 0};
                double left = tforge_worker_deadline_ms(e->compilers[w], timeout) - now;
                wait = left < wait ? left : wait;
            }
        if (n_fds)
            poll(fds, n_fds, wait > 0 ? (int)wait + 1 : 0);
        for (unsigned w = 0; w < W; w++) {
            if (slot[w] == SIZE_MAX)
                continue;
            tforge_measurement *r = &results[slot[w]];
            char *response = NULL, detail[200] = "";
            tforge_call_status how = TFORGE_CALL_OK;
            int complete = 0;
            if (tforge_worker_now_ms() > tforge_worker_deadline_ms(e->compilers[w], timeout)) {
                tforge_worker_expire(e->compilers[w], timeout, detail, sizeof detail);
                how = TFORGE_CALL_TIMEOUT;
                complete = 1;
            } else {
                complete = tforge_worker_collect(e->compilers[w], &response, &how, detail,
                                                 sizeof detail) == 1;
            }
            if (!complete)
                continue;
            double started = tforge_worker_call_start_ms(e->compilers[w]);
            r->compile_ms = started > 0 ? tforge_worker_now_ms() - started : 0;
            if (how != TFORGE_CALL_OK) {
                b->restarts++;
                r->status = how == TFORGE_CALL_TIMEOUT ? TFORGE_STATUS_TIMEOUT
                                                       : TFORGE_STATUS_RUNTIME;
                snprintf(r->message, sizeof r->message, "compile worker %s", detail);
            } else {
                cJSON *doc;
                int fatal;
                const cJSON *c = answer(e, r, response, &doc, &fatal);
                static const char *const resources[] = {"registers", "spill_stores",
                                                        "shared_bytes"};
                int all = c != NULL;
                for (int m = 0; m < 3 && all; m++)
                    all = !isnan(number(c, resources[m]));
                for (int m = 0; m < 3 && all; m++) /* all three or none, as the report shows */
                    tforge_measurement_set_metric(r, resources[m], number(c, resources[m]));
                cJSON_Delete(doc);
            }
            free(response);
            mark_compiled(b, slot[w]);
            slot[w] = SIZE_MAX;
            done++;
        }
    }
    return NULL;
}

/* Checks on every check shape with fresh inputs (and, on a GPU, at the tuning shape too). */
int pool_check(pool *e, const pool_job *job, tforge_measurement *r)
{
    size_t n = e->task->n_check + (e->mode == POOL_CUDA);
    for (size_t s = 0; s < n; s++) {
        const char *shape = s < e->task->n_check ? e->task->check_shapes[s]
                                                 : e->task->tune_shapes[e->o.shape];
        char extra[64];
        snprintf(extra, sizeof extra, "{\"seed\": %llu}", (unsigned long long)++e->checks);
        char *req = request(e, "run_check", job, shape, extra);
        cJSON *doc = NULL;
        cJSON *ok = req ? call(e, e->runner, req, e->o.check_timeout_ms, r, &doc) : NULL;
        free(req);
        cJSON_Delete(doc);
        if (!ok)
            return 0;
    }
    return 1;
}

void pool_time(pool *e, const pool_job *job, tforge_measurement *r)
{
    char *req = request(e, "time", job, e->task->tune_shapes[e->o.shape], NULL);
    cJSON *doc = NULL;
    const cJSON *t = req ? call(e, e->runner, req, e->o.time_timeout_ms, r, &doc) : NULL;
    if (t) {
        r->value = r->median_ms = number(t, "median_ms");
        r->min_ms = number(t, "min_ms");
        r->spread = number(t, "spread");
        r->repeats = (uint32_t)number(t, "n");
    }
    free(req);
    cJSON_Delete(doc);
}

/* {"counters": bool, "profiler": ID, "options": {KEY: VALUE}} for the profile request. */
static char *profile_args(const pool *e, int counters)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "counters", counters);
    cJSON_AddStringToObject(o, "profiler", e->o.profiler ? e->o.profiler : "cupti");
    cJSON *options = cJSON_AddObjectToObject(o, "options");
    for (const char *const *kv = e->o.profiler_options; kv && *kv; kv++) {
        const char *eq = strchr(*kv, '=');
        char key[128];
        if (!eq || (size_t)(eq - *kv) >= sizeof key)
            continue; /* the caller checked them against the plugin's table */
        snprintf(key, sizeof key, "%.*s", (int)(eq - *kv), *kv);
        cJSON_AddStringToObject(options, key, eq + 1);
    }
    char *text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return text;
}

/* The worker's answer into `out`: its counters part, then the static metrics. */
static int profile_of(pool *e, const cJSON *answer, const tforge_measurement *measured,
                      tforge_profile *out)
{
    cJSON *part = cJSON_CreateObject();
    static const char *const fields[] = {"counters", "note", "metrics"};
    for (int i = 0; i < 3; i++) {
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(answer, fields[i]);
        if (f)
            cJSON_AddItemToObject(part, fields[i], cJSON_Duplicate(f, 1));
    }
    char *text = cJSON_PrintUnformatted(part);
    cJSON_Delete(part);
    int rc = text ? tforge_profile_from_json(out, text, "the GPU worker's profile")
                  : tforge_error_set(TFORGE_ENOMEM, "out of memory");
    free(text);
    if (rc)
        return rc;
    tforge_device_limits limits = *tforge_device_h200();
    const cJSON *device = cJSON_GetObjectItemCaseSensitive(answer, "device");
    char *device_text = device ? cJSON_PrintUnformatted(device) : NULL;
    if (device_text && tforge_device_limits_from_json(&limits, device_text)) {
        tforge_log(TFORGE_LOG_WARN, "profile: the device's limits: %s; the H200's are used",
                   tforge_error_last()->message);
        limits = *tforge_device_h200();
    }
    free(device_text);
    if (out->counters == TFORGE_COUNTERS_REFUSED && !e->said_refused) {
        e->said_refused = 1;
        tforge_log(TFORGE_LOG_WARN, "counters refused (%s): going on with timing and static "
                   "metrics", out->note);
    }
    return tforge_profile_add_static(out, &limits, measured, number(answer, "num_warps"),
                                     number(answer, "grid_blocks"), number(answer, "bytes"),
                                     number(answer, "flops"));
}

int pool_profile(void *state, const tforge_candidate *candidate,
                 const tforge_measurement *measured, int counters, tforge_profile *out)
{
    pool *e = state;
    tforge_profile_init(out);
    tforge_measurement r;
    tforge_measurement_init(&r);
    pool_job job;
    int rc = pool_job_of(&job, e, candidate, &r);
    if (rc < 0)
        return rc;
    counters = counters && e->mode == POOL_CUDA;
    tforge_worker *w = e->runner ? e->runner : e->compilers[0];
    char *extra = rc == 0 ? profile_args(e, counters) : NULL;
    char *req = extra ? request(e, "profile", &job, e->task->tune_shapes[e->o.shape], extra)
                      : NULL;
    cJSON *doc = NULL;
    const cJSON *answer = req ? call(e, w, req, e->o.time_timeout_ms, &r, &doc) : NULL;
    free(extra);
    free(req);
    if (rc == 0)
        pool_job_free(&job);
    if (answer) {
        rc = profile_of(e, answer, measured, out);
    } else { /* the launch's facts are unknown: the static metrics that need none */
        out->counters = counters ? TFORGE_COUNTERS_FAILED : TFORGE_COUNTERS_NONE;
        snprintf(out->note, sizeof out->note, "the profile failed: %.200s", r.message);
        rc = tforge_profile_add_static(out, tforge_device_h200(), measured, NAN, NAN, NAN, NAN);
    }
    cJSON_Delete(doc);
    return rc ? rc : pool_task_error(e);
}

int pool_run(pool *e, const pool_job *jobs, size_t n, tforge_measurement *results)
{
    if (n == 0)
        return 0;
    double start = tforge_worker_now_ms();
    size_t busy = n < e->o.compile_workers ? n : e->o.compile_workers;
    batch b = {e, jobs, n, results, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
               calloc(n, 2), 0};
    unsigned char *ran = b.compiled + n;
    pthread_t compiler;
    if (!b.compiled || pthread_create(&compiler, NULL, compile_all, &b)) {
        free(b.compiled);
        return tforge_error_set(TFORGE_ENOMEM, "evaluator: cannot start the compile thread");
    }
    for (size_t k = 0; k < n; k++) {
        size_t i = 0;
        pthread_mutex_lock(&b.lock);
        for (;;) { /* the first candidate compiled and not yet run, in proposal order */
            for (i = 0; i < n && !(b.compiled[i] && !ran[i]); i++)
                ;
            if (i < n)
                break;
            pthread_cond_wait(&b.compiled_cv, &b.lock);
        }
        pthread_mutex_unlock(&b.lock);
        ran[i] = 1;
        tforge_measurement *r = &results[i];
        double t0 = tforge_worker_now_ms();
        if (r->status == TFORGE_STATUS_OK && jobs[i].config && e->runner &&
            pool_check(e, &jobs[i], r) && e->mode == POOL_CUDA)
            pool_time(e, &jobs[i], r);
        if (e->runner) /* how long the GPU (or the interpreter) was busy with it */
            tforge_measurement_set_metric(r, "runner_ms", tforge_worker_now_ms() - t0);
        /* the batch's compile time is shared by the workers it kept busy: each candidate is
         * charged its part of it */
        r->wall_ms = (tforge_worker_now_ms() - t0) + r->compile_ms / (double)busy;
    }
    pthread_join(compiler, NULL);
    e->restarts += b.restarts;
    free(b.compiled);
    tforge_log(TFORGE_LOG_DEBUG, "batch of %zu evaluated in %.0f ms", n,
               tforge_worker_now_ms() - start);
    return pool_task_error(e);
}

int pool_task_error(pool *e)
{
    pthread_mutex_lock(&e->lock);
    int rc = e->task_error[0] ? tforge_error_set(TFORGE_EINPUT, "%s", e->task_error) : 0;
    pthread_mutex_unlock(&e->lock);
    return rc;
}
