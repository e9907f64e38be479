#include "pool.h"

#include "digest.h"
#include "file.h"
#include "profile.h"
#include "rpc.h"
#include "tforge/error.h"
#include "tforge/log.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MAX_COMPILE_WORKERS = 256 };

/* A compile asked for: queued, then taken by a compile worker, then answered. */
enum { QUEUED, COMPILING, COMPILED };
typedef struct compile_entry {
    char *key;            /* the variant's digest and the config: what a compile depends on */
    pool_job job;         /* what is compiled, the queue's own copy: its request is written when
                             a compile worker takes it, knowing what that worker holds */
    int state;            /* QUEUED, COMPILING, COMPILED */
    int taken;            /* a pool_run has used its result (freed when that run ends) */
    tforge_measurement m; /* when COMPILED: status, message, compile_ms and the resources */
} compile_entry;

/* The variant a compile worker was sent last and keeps, and which process of it was sent it (a
 * process started since holds nothing): a request of that variant again names only its digest,
 * as for the runner. */
typedef struct held {
    char digest[TFORGE_DIGEST_SIZE];
    unsigned generation;
} held;

struct pool {
    const tforge_task *task;
    tforge_backend_args o;
    pool_mode mode;
    tforge_worker **compilers; /* NULL for POOL_CHECK */
    held *compilers_hold;      /* each compile worker's variant, under qlock */
    tforge_worker *runner;     /* checks and times; NULL for POOL_COMPILE */
    size_t n_also; /* the check shapes a compile also builds for: the GPU runs them */
    char *kernel_text; /* the kernel file as it is, and its digest (a candidate that rewrites
                          nothing is that variant) */
    size_t kernel_size;
    char kernel_digest[TFORGE_DIGEST_SIZE];
    char runner_has[TFORGE_DIGEST_SIZE]; /* the variant the runner was sent last and keeps: a
                                            request of it again names only its digest */
    unsigned restarts;
    int said_refused; /* counters refused: said once, then the profiles' notes say it */
    int said_no_energy; /* no energy measured: said once */
    /* The launch check of a model's proposals (check_launched): each proposal's verdict by its
     * digest, once; `no_launch_check` set (and said) when no profiler here counts launches. */
    struct launch_verdict {
        char digest[TFORGE_DIGEST_SIZE];
        int launched;
    } *launch_verdicts;
    size_t n_launch_verdicts;
    int no_launch_check;
    uint64_t checks; /* every check draws inputs from a seed of its own */
    /* A worker's TaskError: the task itself is broken (its reference, inputs or launch
     * expressions), not the candidate; the batch ends as the task's error. Set by either the
     * compile thread or the runner, so under `lock`. */
    pthread_mutex_t lock;
    char task_error[1024];
    /* The compile queue (below) and the thread that serves it: entries, restarts and quit are
     * under qlock; compiled_cv is signalled as each compile ends, `wake` (a pipe) wakes the
     * thread for new requests and for quitting. */
    pthread_t compiler;
    int compiler_running, wake[2], quit;
    pthread_mutex_t qlock;
    pthread_cond_t compiled_cv;
    compile_entry **queue;
    size_t n_queue, cap_queue;
};

static void *compile_thread(void *arg);
static void wake_compiler(pool *e);

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
    pthread_mutex_init(&e->qlock, NULL);
    pthread_cond_init(&e->compiled_cv, NULL);
    e->wake[0] = e->wake[1] = -1;
    if (e->o.compile_workers < 1)
        e->o.compile_workers = 1;
    if (e->o.compile_workers > MAX_COMPILE_WORKERS)
        e->o.compile_workers = MAX_COMPILE_WORKERS;
    int rc = 0;
    const tforge_task *t = o->task;
    const char *kernel_file = t->ir ? t->ir->path : t->source;
    if (tforge_file_read(&e->kernel_text, &e->kernel_size, kernel_file))
        rc = tforge_error_set(TFORGE_EINPUT, "%s: cannot read the kernel's file %s", t->path,
                              kernel_file);
    else
        tforge_digest_text(e->kernel_digest, e->kernel_text, e->kernel_size);
    if (!rc && mode != POOL_CHECK) {
        e->n_also = mode == POOL_CUDA ? e->task->n_check : 0;
        e->compilers = calloc(e->o.compile_workers, sizeof *e->compilers);
        e->compilers_hold = calloc(e->o.compile_workers, sizeof *e->compilers_hold);
        if (!e->compilers || !e->compilers_hold)
            rc = tforge_error_set(TFORGE_ENOMEM, "out of memory");
        for (unsigned i = 0; !rc && i < e->o.compile_workers; i++)
            rc = start_worker(&e->compilers[i], "compile", 0);
        if (!rc && pipe(e->wake))
            rc = tforge_error_set(TFORGE_ERROR, "backend: cannot make the compile queue's pipe");
        if (!rc && pthread_create(&e->compiler, NULL, compile_thread, e))
            rc = tforge_error_set(TFORGE_ERROR, "backend: cannot start the compile thread");
        e->compiler_running = rc == 0;
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
    if (e->compiler_running) {
        pthread_mutex_lock(&e->qlock);
        e->quit = 1;
        pthread_mutex_unlock(&e->qlock);
        wake_compiler(e);
        pthread_join(e->compiler, NULL);
    }
    for (size_t i = 0; i < e->n_queue; i++) { /* compiles asked for ahead and never run */
        free(e->queue[i]->key);
        pool_job_free(&e->queue[i]->job);
        free(e->queue[i]);
    }
    free(e->queue);
    for (int i = 0; i < 2; i++)
        if (e->wake[i] >= 0)
            close(e->wake[i]);
    for (unsigned i = 0; e->compilers && i < e->o.compile_workers; i++)
        tforge_worker_free(e->compilers[i]);
    free(e->compilers);
    free(e->compilers_hold);
    tforge_worker_free(e->runner);
    free(e->kernel_text);
    free(e->launch_verdicts);
    pthread_mutex_destroy(&e->lock);
    pthread_mutex_destroy(&e->qlock);
    pthread_cond_destroy(&e->compiled_cv);
    free(e);
}

unsigned pool_restarts(const void *state)
{
    pool *e = (pool *)state;
    pthread_mutex_lock(&e->qlock);
    unsigned n = e->restarts;
    pthread_mutex_unlock(&e->qlock);
    return n;
}

int pool_retime_untimed(void *state, const tforge_candidate *candidate, uint64_t seed,
                        tforge_measurement *out)
{
    (void)state, (void)candidate, (void)seed, (void)out;
    return 0;
}

/* The candidate's variant made and its identity set (pool_identify, the one place a variant is
 * made). */
int pool_identify(void *state, tforge_candidate *c)
{
    const pool *p = state;
    char *text = NULL;
    if (!c->source && c->point &&
        tforge_task_variant(&text, p->task, c->point, c->without ? c->without - 1 : SIZE_MAX)) {
        /* the transforms' edits do not compose here: a failed candidate, learnt by the search */
        c->unmade = strdup(tforge_error_last()->message);
        return c->unmade ? 0 : tforge_error_set(TFORGE_ENOMEM, "out of memory");
    }
    int as_is = !text && !c->source; /* it rewrites nothing: the kernel file as it is */
    if (!text && !(text = strdup(c->source ? c->source : p->kernel_text)))
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    if (as_is)
        memcpy(c->digest, p->kernel_digest, sizeof c->digest);
    else
        tforge_digest_text(c->digest, text, strlen(text));
    c->variant = text;
    return 0;
}

int pool_job_of(pool_job *out, const pool *p, const tforge_candidate *c, tforge_measurement *m)
{
    *out = (pool_job){NULL, NULL, "", 0};
    tforge_candidate mine = *c; /* identified here when it was not */
    int here = !c->variant && !c->unmade;
    if (here) {
        mine.variant = mine.unmade = NULL;
        int rc = pool_identify((void *)p, &mine);
        if (rc)
            return rc;
    }
    int rc = 0;
    if (mine.unmade) {
        m->status = TFORGE_STATUS_COMPILE;
        snprintf(m->message, sizeof m->message, "%s", mine.unmade);
        rc = 1;
    } else {
        rc = c->config ? ((out->config = strdup(c->config)) ? 0 : TFORGE_ENOMEM)
                       : tforge_task_config(&out->config, p->task, c->point);
        /* the kernel file as it is goes by its path, not as text */
        int as_is = !c->source && strcmp(mine.digest, p->kernel_digest) == 0;
        if (!rc && !as_is && !(out->variant = strdup(mine.variant)))
            rc = TFORGE_ENOMEM;
        memcpy(out->digest, mine.digest, sizeof out->digest);
        out->proposal = c->source != NULL || tforge_task_variant_level(p->task, c->point) > 0;
        if (rc) {
            pool_job_free(out);
            rc = tforge_error_set(TFORGE_ENOMEM, "out of memory");
        }
    }
    if (here)
        tforge_candidate_forget(&mine);
    return rc;
}

void pool_job_free(pool_job *job)
{
    free(job->config);
    free(job->variant);
    *job = (pool_job){NULL, NULL, "", 0};
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

/* The job as worker `w` runs it, at `shape`: a variant's text is left out where `w` is the
 * runner and has it (runner_has), its digest names it. */
static tforge_rpc_candidate candidate_of(const pool *e, const pool_job *job, const char *shape,
                                         const tforge_worker *w)
{
    int held = job->variant && w && w == e->runner && strcmp(e->runner_has, job->digest) == 0;
    return (tforge_rpc_candidate){e->task->path, job->config, shape, held ? NULL : job->variant,
                                  job->variant ? job->digest : NULL, e->task->dtype};
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
static const cJSON *answer(pool *e, tforge_measurement *r, const tforge_rpc_reply *reply,
                           int *fatal)
{
    *fatal = 0;
    if (!reply->doc || reply->kind) {
        if (tforge_rpc_raised(reply, "TaskError")) {
            pthread_mutex_lock(&e->lock);
            if (!e->task_error[0])
                snprintf(e->task_error, sizeof e->task_error, "%s", reply->error);
            pthread_mutex_unlock(&e->lock);
        }
        char raised[sizeof r->message];
        r->status = TFORGE_STATUS_RUNTIME;
        snprintf(r->message, sizeof r->message, "worker: %s",
                 reply->kind ? tforge_rpc_error_text(reply, raised, sizeof raised)
                             : "an answer that is not JSON");
        return NULL;
    }
    tforge_rpc_verdict v = tforge_rpc_verdict_of(reply);
    *fatal = v.fatal;
    r->status = v.status ? status_of(v.status) : TFORGE_STATUS_RUNTIME;
    if (r->status != TFORGE_STATUS_OK) {
        snprintf(r->message, sizeof r->message, "%s", v.message ? v.message : "failed");
        return NULL;
    }
    return reply->result;
}

static double number(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* A worker replaced after a crash or a hang (either thread). */
static void count_restart(pool *e)
{
    pthread_mutex_lock(&e->qlock);
    e->restarts++;
    pthread_mutex_unlock(&e->qlock);
}

/* A call that may crash or hang: those become the candidate's status, and the worker is
 * replaced. Returns the result object (owned by `reply`, disposed by the caller) when the
 * candidate passed; `request` is taken (NULL: out of memory, the error set). */
static const cJSON *call(pool *e, tforge_worker *w, char *request, const pool_job *job,
                         int timeout_ms, tforge_measurement *r, tforge_rpc_reply *reply)
{
    memset(reply, 0, sizeof *reply);
    if (w == e->runner) /* what it keeps, unless it is replaced below */
        snprintf(e->runner_has, sizeof e->runner_has, "%s", job->variant ? job->digest : "");
    int rc = request ? tforge_rpc_call(reply, w, request, timeout_ms) : TFORGE_ENOMEM;
    free(request);
    if (rc) {
        if (w == e->runner)
            e->runner_has[0] = '\0';
        r->status = TFORGE_STATUS_RUNTIME;
        snprintf(r->message, sizeof r->message, "%s", tforge_error_last()->message);
        return NULL;
    }
    if (reply->call != TFORGE_CALL_OK) {
        count_restart(e);
        if (w == e->runner)
            e->runner_has[0] = '\0';
        r->status = reply->call == TFORGE_CALL_TIMEOUT ? TFORGE_STATUS_TIMEOUT
                                                       : TFORGE_STATUS_RUNTIME;
        snprintf(r->message, sizeof r->message, "the worker %.200s", reply->detail);
        return NULL;
    }
    int fatal;
    const cJSON *result = answer(e, r, reply, &fatal);
    if (fatal) { /* a lost CUDA context poisons every later launch in that process */
        tforge_worker_kill(w, NULL, 0);
        count_restart(e);
        if (w == e->runner)
            e->runner_has[0] = '\0';
    }
    return result;
}

/* ---- the compile queue ----
 * A thread of the pool's own serves the queue for the pool's whole life: each idle compile worker
 * takes the oldest queued request. Compiles asked for ahead (pool_prepare: the next batch, while
 * the runner still checks and times this one) and those of the batch being run share it, so the
 * runner waits for a compile only when nothing compiled is left to run. */

/* Under qlock: the entry whose key is `key`, or NULL. */
static compile_entry *find_entry(const pool *e, const char *key)
{
    for (size_t i = 0; i < e->n_queue; i++)
        if (strcmp(e->queue[i]->key, key) == 0)
            return e->queue[i];
    return NULL;
}

/* Under qlock: the job's compile entry, queued unless it is there already; NULL when out of
 * memory. Keyed by the variant's digest and the config, so that a variant's text is compared
 * once. */
static compile_entry *compile_of(pool *e, const pool_job *job)
{
    size_t size = sizeof job->digest + strlen(job->config) + 1;
    char *key = malloc(size);
    if (!key)
        return NULL;
    snprintf(key, size, "%s %s", job->digest, job->config);
    compile_entry *c = find_entry(e, key);
    if (c) {
        free(key);
        return c;
    }
    c = calloc(1, sizeof *c);
    if (c && e->n_queue == e->cap_queue) {
        compile_entry **grown = realloc(e->queue, (e->cap_queue * 2 + 8) * sizeof *grown);
        if (grown) {
            e->queue = grown;
            e->cap_queue = e->cap_queue * 2 + 8;
        }
    }
    if (c) {
        c->job = (pool_job){strdup(job->config), job->variant ? strdup(job->variant) : NULL, "",
                            job->proposal};
        memcpy(c->job.digest, job->digest, sizeof c->job.digest);
    }
    if (!c || e->n_queue == e->cap_queue || !c->job.config || (job->variant && !c->job.variant)) {
        if (c)
            pool_job_free(&c->job);
        free(c);
        free(key);
        return NULL;
    }
    c->key = key;
    tforge_measurement_init(&c->m);
    e->queue[e->n_queue++] = c;
    return c;
}

/* The compile request of `job` for compile worker `w`: the variant's text left out where `w`
 * holds it (its digest names it), which it holds from then on. NULL when out of memory. */
static char *compile_request(pool *e, unsigned w, const pool_job *job)
{
    held *h = &e->compilers_hold[w];
    tforge_worker *worker = e->compilers[w];
    pthread_mutex_lock(&e->qlock);
    /* a process that is gone is started again by the send, holding nothing */
    int holds = job->variant && tforge_worker_pid(worker) != 0 &&
                h->generation == tforge_worker_generation(worker) &&
                strcmp(h->digest, job->digest) == 0;
    pthread_mutex_unlock(&e->qlock);
    tforge_rpc_candidate c = {e->task->path, job->config, e->task->tune_shapes[e->o.shape],
                              holds ? NULL : job->variant, job->variant ? job->digest : NULL,
                              e->task->dtype};
    return tforge_rpc_compile(&c, (const char *const *)e->task->check_shapes, e->n_also);
}

/* Compile worker `w` was sent `job` (sent: 0) or not. */
static void compile_sent(pool *e, unsigned w, const pool_job *job, int sent)
{
    held *h = &e->compilers_hold[w];
    pthread_mutex_lock(&e->qlock);
    snprintf(h->digest, sizeof h->digest, "%s", sent == 0 && job->variant ? job->digest : "");
    h->generation = tforge_worker_generation(e->compilers[w]);
    pthread_mutex_unlock(&e->qlock);
}

static void wake_compiler(pool *e)
{
    ssize_t written = write(e->wake[1], "", 1); /* a full pipe is awake enough */
    (void)written;
}

int pool_prepare(void *state, const tforge_candidate *candidates, size_t n)
{
    pool *e = state;
    int rc = 0;
    for (size_t i = 0; !rc && i < n; i++) {
        tforge_measurement failed;
        pool_job job;
        if ((rc = pool_job_of(&job, e, &candidates[i], &failed)) == 1) {
            rc = 0; /* its variant fails: pool_run says so again, with nothing to compile */
            continue;
        }
        if (rc)
            break;
        pthread_mutex_lock(&e->qlock);
        if (!compile_of(e, &job))
            rc = tforge_error_set(TFORGE_ENOMEM, "out of memory");
        pthread_mutex_unlock(&e->qlock);
        pool_job_free(&job);
    }
    wake_compiler(e);
    return rc;
}

/* A compile worker's answer (or its end) into `r`. */
static void compiled(pool *e, tforge_worker *w, tforge_call_status how, const char *response,
                     const char *detail, tforge_measurement *r)
{
    double started = tforge_worker_call_start_ms(w);
    r->compile_ms = started > 0 ? tforge_worker_now_ms() - started : 0;
    if (how != TFORGE_CALL_OK) {
        count_restart(e);
        r->status = how == TFORGE_CALL_TIMEOUT ? TFORGE_STATUS_TIMEOUT : TFORGE_STATUS_RUNTIME;
        snprintf(r->message, sizeof r->message, "compile worker %s", detail);
        return;
    }
    tforge_rpc_reply reply;
    int fatal;
    tforge_rpc_read(&reply, how, response, detail);
    tforge_rpc_compiled c = tforge_rpc_compiled_of(&reply);
    /* all three or none, as the report shows */
    if (answer(e, r, &reply, &fatal) && !isnan(c.registers) && !isnan(c.spill_stores) &&
        !isnan(c.shared_bytes)) {
        tforge_measurement_set_metric(r, "registers", c.registers);
        tforge_measurement_set_metric(r, "spill_stores", c.spill_stores);
        tforge_measurement_set_metric(r, "shared_bytes", c.shared_bytes);
    }
    tforge_rpc_reply_dispose(&reply);
}

/* The entry in a worker's slot is compiled (or failed to be): its result, the waiters told, the
 * slot freed. */
static void settle(pool *e, compile_entry **slot, const tforge_measurement *r)
{
    pthread_mutex_lock(&e->qlock);
    (*slot)->m = *r;
    (*slot)->state = COMPILED;
    pthread_cond_broadcast(&e->compiled_cv);
    pthread_mutex_unlock(&e->qlock);
    *slot = NULL;
}

static void *compile_thread(void *arg)
{
    pool *e = arg;
    unsigned W = e->o.compile_workers;
    compile_entry *slot[MAX_COMPILE_WORKERS] = {NULL};
    struct pollfd fds[MAX_COMPILE_WORKERS + 1];
    int timeout = e->o.compile_timeout_ms;
    for (;;) {
        pthread_mutex_lock(&e->qlock);
        int quit = e->quit;
        size_t next = 0;
        for (unsigned w = 0; w < W && !quit; w++) {
            while (next < e->n_queue && e->queue[next]->state != QUEUED)
                next++;
            if (!slot[w] && next < e->n_queue) {
                slot[w] = e->queue[next];
                slot[w]->state = COMPILING;
            }
        }
        pthread_mutex_unlock(&e->qlock);
        if (quit)
            break;
        fds[0] = (struct pollfd){e->wake[0], POLLIN, 0};
        unsigned n_fds = 1;
        double wait = -1, now = tforge_worker_now_ms();
        for (unsigned w = 0; w < W; w++) {
            if (!slot[w])
                continue;
            /* A request is sent once; an entry still COMPILING in its slot was sent before. */
            int sent = 0;
            if (!tforge_worker_busy(e->compilers[w])) {
                char *request = compile_request(e, w, &slot[w]->job);
                sent = request ? tforge_worker_send(e->compilers[w], request) : -1;
                compile_sent(e, w, &slot[w]->job, sent);
                free(request);
            }
            if (sent != 0) {
                tforge_measurement r;
                tforge_measurement_init(&r);
                r.status = TFORGE_STATUS_RUNTIME;
                snprintf(r.message, sizeof r.message, "could not reach a compile worker");
                settle(e, &slot[w], &r);
                continue;
            }
            fds[n_fds++] = (struct pollfd){tforge_worker_fd(e->compilers[w]), POLLIN, 0};
            double left = tforge_worker_deadline_ms(e->compilers[w], timeout) - now;
            if (isfinite(left) && (wait < 0 || left < wait))
                wait = left > 0 ? left : 0;
        }
        poll(fds, n_fds, wait < 0 ? -1 : (int)wait + 1);
        if (fds[0].revents & POLLIN) {
            char drain[64];
            ssize_t got = read(e->wake[0], drain, sizeof drain);
            (void)got;
        }
        for (unsigned w = 0; w < W; w++) {
            if (!slot[w])
                continue;
            char *response = NULL, detail[200] = "";
            tforge_call_status how = TFORGE_CALL_OK;
            int complete;
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
            tforge_measurement r;
            tforge_measurement_init(&r);
            compiled(e, e->compilers[w], how, response, detail, &r);
            free(response);
            settle(e, &slot[w], &r);
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
        tforge_rpc_candidate c = candidate_of(e, job, shape, e->runner);
        tforge_rpc_reply reply;
        const cJSON *ok = call(e, e->runner, tforge_rpc_run_check(&c, ++e->checks, job->proposal), job,
                               e->o.check_timeout_ms, r, &reply);
        tforge_rpc_reply_dispose(&reply);
        if (!ok)
            return 0;
    }
    return 1;
}

void pool_time(pool *e, const pool_job *job, tforge_measurement *r)
{
    tforge_rpc_candidate c = candidate_of(e, job, e->task->tune_shapes[e->o.shape], e->runner);
    tforge_rpc_reply reply;
    /* the energy batch costs the GPU a window of the counter's updates per candidate: run it
     * only for an objective that reads it (latency, the default, does not) */
    int energy = e->o.objective &&
                 strcmp(tforge_costmodel_objective(e->o.objective), "latency") != 0;
    if (call(e, e->runner, tforge_rpc_time(&c, energy), job, e->o.time_timeout_ms, r, &reply)) {
        tforge_rpc_timed t = tforge_rpc_timed_of(&reply);
        r->median_ms = t.median_ms;
        r->min_ms = t.min_ms;
        r->spread = t.spread;
        r->repeats = (uint32_t)t.n;
        const char *names[] = {"energy_j", "power_w", "sm_clock_mhz"};
        const double values[] = {t.energy_j, t.power_w, t.sm_clock_mhz};
        for (int i = 0; i < 3; i++)
            if (!isnan(values[i]) && tforge_measurement_set_metric(r, names[i], values[i]))
                tforge_log(TFORGE_LOG_WARN, "time: %s not kept: %s", names[i],
                           tforge_error_last()->message);
        if (t.energy_note && !e->said_no_energy) { /* once: the rest are alike */
            e->said_no_energy = 1;
            tforge_log(TFORGE_LOG_WARN, "energy not measured (%s): going on with latency",
                       t.energy_note);
        }
    }
    tforge_rpc_reply_dispose(&reply);
}

/* ---- the launch check: a model's proposal must launch the kernel it rewrites ----
 * A proposal could return a cached output or compute with torch; fresh inputs and poisoned
 * outputs catch most of that, and the profiler's record closes it: the first timed candidate of
 * each proposal is profiled once more with the kernel's launches counted (`kernel_launches`). */

static void fail_unlaunched(const pool *e, tforge_measurement *r)
{
    r->status = TFORGE_STATUS_RUNTIME;
    snprintf(r->message, sizeof r->message, "the profiler saw no launch of %s while it was timed",
             e->task->kernel);
}

static void no_launch_check(pool *e, const char *why)
{
    e->no_launch_check = 1;
    tforge_log(TFORGE_LOG_WARN, "the launch check of the model's proposals is not available "
               "(%s): they are trusted on their checks alone", why);
}

/* After `job` (a proposal) passed its checks and its timing: its verdict, found once. */
static void check_launched(pool *e, const pool_job *job, tforge_measurement *r)
{
    for (size_t i = 0; i < e->n_launch_verdicts; i++)
        if (strcmp(e->launch_verdicts[i].digest, job->digest) == 0) {
            if (!e->launch_verdicts[i].launched)
                fail_unlaunched(e, r);
            return;
        }
    if (e->no_launch_check)
        return;
    /* only a profiler asked for counts launches in the interpreter (the tests'); on a GPU the
     * default one (cupti) does */
    if (e->mode != POOL_CUDA && !e->o.profiler) {
        no_launch_check(e, "no GPU, and no profiler named");
        return;
    }
    struct launch_verdict *more =
        realloc(e->launch_verdicts, (e->n_launch_verdicts + 1) * sizeof *more);
    if (!more) {
        no_launch_check(e, "out of memory");
        return;
    }
    e->launch_verdicts = more;
    tforge_rpc_candidate c = candidate_of(e, job, e->task->tune_shapes[e->o.shape], e->runner);
    tforge_measurement failed;
    tforge_measurement_init(&failed);
    tforge_rpc_reply reply;
    const cJSON *answer =
        call(e, e->runner,
             tforge_rpc_profile_launches(&c, e->o.profiler ? e->o.profiler : "cupti",
                                         e->o.profiler_options, e->task->kernel),
             job, e->o.time_timeout_ms, &failed, &reply);
    if (!answer) { /* it failed when run once more: that is its measurement */
        r->status = failed.status;
        snprintf(r->message, sizeof r->message, "profiled for its launches: %.200s",
                 failed.message);
        tforge_rpc_reply_dispose(&reply);
        return;
    }
    const cJSON *counters = cJSON_GetObjectItemCaseSensitive(answer, "counters");
    const cJSON *note = cJSON_GetObjectItemCaseSensitive(answer, "note");
    double launches = number(cJSON_GetObjectItemCaseSensitive(answer, "metrics"),
                             "kernel_launches");
    int ok = cJSON_IsString(counters) && strcmp(counters->valuestring, "ok") == 0;
    if (!ok || isnan(launches)) {
        char why[300];
        snprintf(why, sizeof why, "%s", !ok && cJSON_IsString(note) && note->valuestring[0]
                                            ? note->valuestring
                                            : "the profiler does not count kernel_launches");
        no_launch_check(e, why);
    } else {
        struct launch_verdict *v = &e->launch_verdicts[e->n_launch_verdicts++];
        snprintf(v->digest, sizeof v->digest, "%s", job->digest);
        v->launched = launches > 0;
        if (!v->launched)
            fail_unlaunched(e, r);
    }
    tforge_rpc_reply_dispose(&reply);
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
    tforge_rpc_candidate c = candidate_of(e, &job, e->task->tune_shapes[e->o.shape], w);
    if (rc == 0 && w != e->runner) /* the compile worker is sent this variant, and keeps it */
        compile_sent(e, 0, &job, 0);
    tforge_rpc_reply reply = {0};
    const cJSON *answer =
        rc == 0 ? call(e, w,
                       tforge_rpc_profile(&c, counters, e->o.profiler ? e->o.profiler : "cupti",
                                          e->o.profiler_options),
                       &job, e->o.time_timeout_ms, &r, &reply)
                : NULL;
    if (rc == 0)
        pool_job_free(&job);
    if (answer) {
        rc = profile_of(e, answer, measured, out);
    } else { /* the launch's facts are unknown: the static metrics that need none */
        out->counters = counters ? TFORGE_COUNTERS_FAILED : TFORGE_COUNTERS_NONE;
        snprintf(out->note, sizeof out->note, "the profile failed: %.200s", r.message);
        rc = tforge_profile_add_static(out, tforge_device_h200(), measured, NAN, NAN, NAN, NAN);
    }
    tforge_rpc_reply_dispose(&reply);
    return rc ? rc : pool_task_error(e);
}

int pool_run(pool *e, const pool_job *jobs, size_t n, tforge_measurement *results)
{
    if (n == 0)
        return 0;
    double start = tforge_worker_now_ms();
    size_t busy = n < e->o.compile_workers ? n : e->o.compile_workers;
    compile_entry **entry = calloc(n, sizeof *entry);
    unsigned char *ran = calloc(n, 1);
    int rc = entry && ran ? 0 : TFORGE_ENOMEM;
    pthread_mutex_lock(&e->qlock);
    for (size_t i = 0; !rc && i < n; i++) /* its compiles, queued unless asked for ahead */
        if (jobs[i].config && !(entry[i] = compile_of(e, &jobs[i])))
            rc = TFORGE_ENOMEM;
    pthread_mutex_unlock(&e->qlock);
    if (rc) {
        free(entry);
        free(ran);
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    }
    wake_compiler(e);
    for (size_t k = 0; k < n; k++) {
        size_t i = 0;
        pthread_mutex_lock(&e->qlock);
        for (;;) { /* the first candidate compiled and not yet run, in proposal order */
            for (i = 0; i < n && (ran[i] || (entry[i] && entry[i]->state != COMPILED)); i++)
                ;
            if (i < n)
                break;
            pthread_cond_wait(&e->compiled_cv, &e->qlock);
        }
        if (entry[i]) {
            entry[i]->taken = 1;
            results[i] = entry[i]->m;
        }
        pthread_mutex_unlock(&e->qlock);
        ran[i] = 1;
        tforge_measurement *r = &results[i];
        double t0 = tforge_worker_now_ms();
        if (r->status == TFORGE_STATUS_OK && jobs[i].config && e->runner &&
            pool_check(e, &jobs[i], r)) {
            if (e->mode == POOL_CUDA)
                pool_time(e, &jobs[i], r);
            if (jobs[i].proposal && r->status == TFORGE_STATUS_OK)
                check_launched(e, &jobs[i], r);
        }
        if (e->runner) /* how long the GPU (or the interpreter) was busy with it */
            tforge_measurement_set_metric(r, "runner_ms", tforge_worker_now_ms() - t0);
        /* the batch's compile time is shared by the workers it kept busy: each candidate is
         * charged its part of it */
        r->wall_ms = (tforge_worker_now_ms() - t0) + r->compile_ms / (double)busy;
    }
    pthread_mutex_lock(&e->qlock); /* the entries this batch used are done with */
    size_t kept = 0;
    for (size_t q = 0; q < e->n_queue; q++)
        if (e->queue[q]->taken) {
            free(e->queue[q]->key);
            pool_job_free(&e->queue[q]->job);
            free(e->queue[q]);
        } else {
            e->queue[kept++] = e->queue[q];
        }
    e->n_queue = kept;
    pthread_mutex_unlock(&e->qlock);
    free(entry);
    free(ran);
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
