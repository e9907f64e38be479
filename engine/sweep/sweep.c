/* A sweep (sweep.h): rank 0's sessions and dispatcher, and every rank's evaluator. */
#include "sweep.h"

#include "clock.h"
#include "manifest.h"
#include "session.h"
#include "tforge/error.h"
#include "tforge/measurement.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* A rank keeps the evaluators of its last few tasks open: with two, 64 simulated ranks spent
 * half their time opening tasks (experiments/NOTES.md, "sweep scaling"). */
enum { DEVICE_SIZE = 200, CACHED_EVALUATORS = 4 };

/* ---- the messages: a job (candidates of one (task, shape)) and its result ---- */

static cJSON *measurement_json(const tforge_measurement *m)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "status", tforge_status_name(m->status));
    cJSON_AddNumberToObject(o, "repeats", m->repeats);
    const struct {
        const char *name;
        double value;
    } numbers[] = {{"value", m->value},     {"median_ms", m->median_ms},
                   {"min_ms", m->min_ms},   {"spread", m->spread},
                   {"compile_ms", m->compile_ms}, {"wall_ms", m->wall_ms}};
    for (size_t i = 0; i < sizeof numbers / sizeof *numbers; i++)
        if (!isnan(numbers[i].value)) /* NAN travels as a missing key */
            cJSON_AddNumberToObject(o, numbers[i].name, numbers[i].value);
    cJSON *metrics = cJSON_AddObjectToObject(o, "metrics");
    for (uint32_t k = 0; k < m->n_metrics; k++)
        cJSON_AddNumberToObject(metrics, m->metrics[k].name, m->metrics[k].value);
    cJSON_AddStringToObject(o, "message", m->message);
    return o;
}

static double number_or_nan(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static int measurement_of(tforge_measurement *m, const cJSON *o)
{
    tforge_measurement_init(m);
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(o, "status");
    if (!cJSON_IsString(status) || tforge_status_parse(&m->status, status->valuestring))
        return tforge_error_set(TFORGE_ERROR, "sweep: a result without a status");
    double repeats = number_or_nan(o, "repeats");
    m->repeats = isnan(repeats) ? 0 : (uint32_t)repeats;
    m->value = number_or_nan(o, "value");
    m->median_ms = number_or_nan(o, "median_ms");
    m->min_ms = number_or_nan(o, "min_ms");
    m->spread = number_or_nan(o, "spread");
    m->compile_ms = number_or_nan(o, "compile_ms");
    m->wall_ms = number_or_nan(o, "wall_ms");
    const cJSON *metric;
    cJSON_ArrayForEach(metric, cJSON_GetObjectItemCaseSensitive(o, "metrics"))
        if (cJSON_IsNumber(metric))
            tforge_measurement_set_metric(m, metric->string, metric->valuedouble);
    const cJSON *message = cJSON_GetObjectItemCaseSensitive(o, "message");
    if (cJSON_IsString(message))
        snprintf(m->message, sizeof m->message, "%s", message->valuestring);
    return 0;
}

/* What a rank needs to open the evaluator of an entry: its tune's settings, from rank 0. */
static cJSON *entry_settings(const tforge_sweep_entry *e)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "task", e->task);
    cJSON_AddNumberToObject(o, "shape", (double)e->shape);
    if (e->dtype)
        cJSON_AddStringToObject(o, "dtype", e->dtype);
    cJSON_AddStringToObject(o, "backend", e->backend);
    cJSON_AddStringToObject(o, "transforms", e->transforms);
    cJSON_AddNumberToObject(o, "compile_workers", e->compile_workers);
    cJSON_AddNumberToObject(o, "timeout", e->timeout_s);
    cJSON_AddNumberToObject(o, "seed", (double)e->seed);
    cJSON_AddNumberToObject(o, "simulate", e->simulate);
    return o;
}

/* ---- every rank: the evaluators of the entries it was sent, the last few kept open ---- */

typedef struct evaluator_cache {
    const tforge_registry *registry;
    int rank;
    char host[128];
    struct {
        char *settings; /* the entry's settings' text: the key */
        tforge_tune_evaluator *evaluator;
        double simulate;
        unsigned long used;
    } slot[CACHED_EVALUATORS];
    unsigned long uses;
} evaluator_cache;

static void cache_dispose(evaluator_cache *c)
{
    for (size_t i = 0; i < CACHED_EVALUATORS; i++) {
        free(c->slot[i].settings);
        tforge_tune_evaluator_close(c->slot[i].evaluator);
    }
    memset(c->slot, 0, sizeof c->slot);
}

static int cache_get(evaluator_cache *c, const cJSON *settings, size_t *at)
{
    char *key = cJSON_PrintUnformatted(settings);
    if (!key)
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    size_t oldest = 0;
    for (size_t i = 0; i < CACHED_EVALUATORS; i++) {
        if (c->slot[i].settings && strcmp(c->slot[i].settings, key) == 0) {
            free(key);
            c->slot[i].used = ++c->uses;
            *at = i;
            return 0;
        }
        if (c->slot[i].used < c->slot[oldest].used)
            oldest = i;
    }
    free(c->slot[oldest].settings);
    tforge_tune_evaluator_close(c->slot[oldest].evaluator);
    c->slot[oldest].settings = NULL;
    c->slot[oldest].evaluator = NULL;
    const cJSON *task = cJSON_GetObjectItemCaseSensitive(settings, "task");
    const cJSON *backend = cJSON_GetObjectItemCaseSensitive(settings, "backend");
    const cJSON *transforms = cJSON_GetObjectItemCaseSensitive(settings, "transforms");
    const cJSON *dtype = cJSON_GetObjectItemCaseSensitive(settings, "dtype");
    if (!cJSON_IsString(task) || !cJSON_IsString(backend) || !cJSON_IsString(transforms)) {
        free(key);
        return tforge_error_set(TFORGE_ERROR, "sweep: a job without its entry's settings");
    }
    tforge_tune_options o = TFORGE_TUNE_OPTIONS_INIT;
    o.task = task->valuestring;
    o.registry = c->registry;
    o.backend = backend->valuestring;
    o.transforms = transforms->valuestring;
    o.shape = (long)number_or_nan(settings, "shape");
    o.dtype = cJSON_IsString(dtype) ? dtype->valuestring : NULL;
    o.compile_workers = (uint32_t)number_or_nan(settings, "compile_workers");
    o.timeout_s = (uint32_t)number_or_nan(settings, "timeout");
    o.seed = (uint64_t)number_or_nan(settings, "seed");
    int rc = tforge_tune_evaluator_open(&c->slot[oldest].evaluator, &o);
    if (rc) {
        free(key);
        return rc;
    }
    c->slot[oldest].settings = key;
    c->slot[oldest].simulate = number_or_nan(settings, "simulate");
    c->slot[oldest].used = ++c->uses;
    *at = oldest;
    return 0;
}

/* Evaluates the candidates of a job into `m`. */
static int evaluate_job(evaluator_cache *c, const cJSON *job, size_t *n, tforge_measurement **m,
                        double *simulate, const char **device)
{
    size_t at = 0;
    *n = 0;
    *m = NULL;
    int rc = cache_get(c, cJSON_GetObjectItemCaseSensitive(job, "settings"), &at);
    if (rc)
        return rc;
    tforge_tune_evaluator *e = c->slot[at].evaluator;
    *simulate = c->slot[at].simulate;
    *device = tforge_tune_evaluator_device(e);
    const tforge_space *space = tforge_tune_evaluator_space(e);
    uint32_t dims = tforge_space_dims(space);
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(job, "candidates");
    size_t count = (size_t)cJSON_GetArraySize(list);
    tforge_candidate *cand = calloc(count + 1, sizeof *cand);
    tforge_level *points = calloc(count * dims + 1, sizeof *points);
    *m = calloc(count + 1, sizeof **m);
    if (!cand || !points || !*m)
        rc = tforge_error_set(TFORGE_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < count; i++) {
        const cJSON *x = cJSON_GetArrayItem(list, (int)i);
        const cJSON *point = cJSON_GetObjectItemCaseSensitive(x, "point");
        const cJSON *config = cJSON_GetObjectItemCaseSensitive(x, "config");
        const cJSON *source = cJSON_GetObjectItemCaseSensitive(x, "source");
        if (cJSON_IsArray(point)) {
            if (cJSON_GetArraySize(point) != (int)dims)
                rc = tforge_error_set(TFORGE_ERROR, "sweep: a point of %d dimensions for a "
                                      "space of %u", cJSON_GetArraySize(point), dims);
            for (uint32_t d = 0; !rc && d < dims; d++)
                points[i * dims + d] = (tforge_level)cJSON_GetArrayItem(point, (int)d)->valuedouble;
            cand[i].point = points + i * dims;
        }
        cand[i].config = cJSON_IsString(config) ? config->valuestring : NULL;
        cand[i].source = cJSON_IsString(source) ? source->valuestring : NULL;
        cand[i].without = (unsigned)number_or_nan(x, "without");
    }
    if (!rc)
        rc = tforge_tune_evaluator_evaluate(e, cand, count, *m);
    *n = rc ? 0 : count;
    free(cand);
    free(points);
    return rc;
}

/* Serves one job's text: the result's text (allocated). */
static char *serve_one(evaluator_cache *c, const char *text)
{
    cJSON *job = cJSON_Parse(text), *result = cJSON_CreateObject();
    cJSON_AddItemToObject(result, "job", cJSON_Duplicate(cJSON_GetObjectItem(job, "job"), 1));
    size_t n = 0;
    tforge_measurement *m = NULL;
    double simulate = 0;
    const char *device = "cpu";
    int rc = job ? evaluate_job(c, job, &n, &m, &simulate, &device)
                 : tforge_error_set(TFORGE_ERROR, "sweep: a job that is not JSON");
    if (!rc && simulate > 0) { /* the recorded wall time, charged as wall time */
        double ms = 0;
        for (size_t i = 0; i < n; i++)
            ms += isnan(m[i].wall_ms) ? 0 : m[i].wall_ms * simulate;
        struct timespec t = {(time_t)(ms / 1e3), (long)(fmod(ms, 1e3) * 1e6)};
        while (nanosleep(&t, &t) && errno == EINTR) {
        }
    }
    cJSON_AddNumberToObject(result, "rc", rc);
    if (rc)
        cJSON_AddStringToObject(result, "error", tforge_error_last()->message);
    char where[DEVICE_SIZE];
    snprintf(where, sizeof where, "%s (rank %d on %s)", device, c->rank, c->host);
    cJSON_AddStringToObject(result, "device", where);
    cJSON_AddNumberToObject(result, "rank", c->rank);
    cJSON *list = cJSON_AddArrayToObject(result, "measurements");
    for (size_t i = 0; i < n; i++)
        cJSON_AddItemToArray(list, measurement_json(&m[i]));
    free(m);
    char *out = cJSON_PrintUnformatted(result);
    cJSON_Delete(result);
    cJSON_Delete(job);
    return out;
}

static void cache_init(evaluator_cache *c, const tforge_registry *registry, int rank)
{
    memset(c, 0, sizeof *c);
    c->registry = registry;
    c->rank = rank;
    gethostname(c->host, sizeof c->host - 1);
}

int tforge_sweep_serve(const tforge_sweep_transport *t, const tforge_registry *registry)
{
    evaluator_cache cache;
    cache_init(&cache, registry, t->rank);
    int rc = 0;
    for (;;) {
        char *job = NULL;
        if ((rc = t->receive(t->context, &job)) || !job)
            break;
        char *result = serve_one(&cache, job);
        free(job);
        rc = result ? t->reply(t->context, result) : tforge_error_set(TFORGE_ENOMEM, "out of memory");
        free(result);
        if (rc)
            break;
    }
    cache_dispose(&cache);
    return rc;
}

/* ---- rank 0: the sessions, each on a thread, and the dispatcher of their jobs ---- */

typedef struct sweep sweep;

/* One evaluate of a session's loop, waiting for its jobs. */
typedef struct batch {
    tforge_measurement *out;
    char (*device)[DEVICE_SIZE];
    size_t pending;
    int rc;
    char error[512];
} batch;

typedef struct job {
    struct job *next; /* in the queue */
    long id;
    size_t entry;
    char *text;
    batch *owner;
    size_t at; /* its candidate's index in the batch */
} job;

typedef enum entry_state { PENDING, RUNNING, DONE, FAILED, SKIPPED } entry_state;

typedef struct session {
    sweep *sw;
    size_t entry;
    pthread_t thread;
    entry_state state;
    int started, joined, told;
    size_t evaluated; /* candidates evaluated in this run */
    char *shape_json, error[1024];
    /* the batch evaluated last, for the store's rows: each candidate's device */
    const tforge_candidate *last;
    const tforge_measurement *last_out;
    size_t n_last;
    char (*last_device)[DEVICE_SIZE];
} session;

struct sweep {
    const tforge_sweep_options *o;
    const tforge_sweep_manifest *manifest;
    const char *dir;
    session *sessions;
    pthread_mutex_t lock;
    pthread_cond_t changed, finished; /* the dispatcher's wake-up; a batch's jobs all back */
    job *head, *tail;                 /* queued jobs */
    long next_id;
    int slots;     /* ranks (rank 0 included, idle when it does not evaluate) */
    job **running; /* per rank: the job it evaluates, or NULL */
    size_t *open; /* per rank, CACHED_EVALUATORS entries: those it has open, latest first */
    /* rank 0's own evaluator thread */
    pthread_t local;
    int local_started, local_quit;
    pthread_cond_t local_cv;
    char *local_result;
    evaluator_cache local_cache;
    double first_sent, last_back;
    size_t evaluations;
};

static const char *entry_state_name(entry_state s)
{
    static const char *const names[] = {"pending", "running", "done", "failed", "done"};
    return names[s];
}

static cJSON *candidate_json(const tforge_space *space, const tforge_candidate *c)
{
    cJSON *o = cJSON_CreateObject();
    if (c->point) {
        cJSON *p = cJSON_AddArrayToObject(o, "point");
        for (uint32_t d = 0; d < tforge_space_dims(space); d++)
            cJSON_AddItemToArray(p, cJSON_CreateNumber(c->point[d]));
    }
    if (c->config)
        cJSON_AddStringToObject(o, "config", c->config);
    if (c->source)
        cJSON_AddStringToObject(o, "source", c->source);
    cJSON_AddNumberToObject(o, "without", c->without);
    return o;
}

/* [session thread] The loop's evaluate: a job a candidate, queued; back when all are. */
static int evaluate_elsewhere(void *context, const tforge_space *space,
                              const tforge_candidate *c, size_t n, tforge_measurement *out)
{
    session *s = context;
    sweep *sw = s->sw;
    batch b = {out, calloc(n + 1, sizeof *b.device), n, 0, ""};
    job *jobs = calloc(n + 1, sizeof *jobs);
    cJSON *settings = entry_settings(&sw->manifest->entries[s->entry]);
    int rc = b.device && jobs && settings ? 0 : tforge_error_set(TFORGE_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < n; i++) {
        cJSON *msg = cJSON_CreateObject(), *list = cJSON_CreateArray();
        cJSON_AddItemToObject(msg, "settings", cJSON_Duplicate(settings, 1));
        cJSON_AddItemToArray(list, candidate_json(space, &c[i]));
        cJSON_AddItemToObject(msg, "candidates", list);
        pthread_mutex_lock(&sw->lock);
        jobs[i].id = sw->next_id++;
        pthread_mutex_unlock(&sw->lock);
        cJSON_AddNumberToObject(msg, "job", (double)jobs[i].id);
        jobs[i] = (job){NULL, jobs[i].id, s->entry, cJSON_PrintUnformatted(msg), &b, i};
        cJSON_Delete(msg);
        if (!jobs[i].text)
            rc = tforge_error_set(TFORGE_ENOMEM, "out of memory");
    }
    cJSON_Delete(settings);
    if (!rc) {
        pthread_mutex_lock(&sw->lock);
        for (size_t i = 0; i < n; i++) {
            if (sw->tail)
                sw->tail->next = &jobs[i];
            else
                sw->head = &jobs[i];
            sw->tail = &jobs[i];
        }
        pthread_cond_signal(&sw->changed);
        while (b.pending)
            pthread_cond_wait(&sw->finished, &sw->lock);
        s->evaluated += n;
        pthread_mutex_unlock(&sw->lock);
        rc = b.rc ? tforge_error_set(b.rc, "%s", b.error) : 0;
    }
    for (size_t i = 0; jobs && i < n; i++)
        free(jobs[i].text);
    free(jobs);
    free(s->last_device);
    s->last = c;
    s->last_out = out;
    s->n_last = rc ? 0 : n;
    s->last_device = b.device;
    return rc;
}

/* [session thread] A stored row's extras: its measurement's metrics (as the store keeps them
 * without extras) and the device that evaluated it. The loop records a batch right after its
 * evaluate, so the batch is the one evaluated last. */
static int device_extras(void *context, const tforge_candidate *c, char **json)
{
    session *s = context;
    *json = NULL;
    for (size_t i = 0; i < s->n_last; i++)
        if (s->last[i].point == c->point) { /* the loop evaluates copies of its candidates */
            char metrics[4096] = "{}";
            tforge_measurement_metrics_json(&s->last_out[i], metrics, sizeof metrics);
            cJSON *o = cJSON_Parse(metrics);
            if (!cJSON_IsObject(o)) {
                cJSON_Delete(o);
                o = cJSON_CreateObject();
            }
            cJSON_AddStringToObject(o, "device", s->last_device[i]);
            *json = cJSON_PrintUnformatted(o);
            cJSON_Delete(o);
            return *json ? 0 : tforge_error_set(TFORGE_ENOMEM, "out of memory");
        }
    return 0;
}

/* An entry's folder in the sweep's: NAME/shape-I, NAME/shape-I-DTYPE with a dtype. */
static const char *entry_folder(const tforge_sweep_entry *e, char *folder, size_t size)
{
    snprintf(folder, size, "%s/shape-%zu%s%s", e->name, e->shape, e->dtype ? "-" : "",
             e->dtype ? e->dtype : "");
    return folder;
}

static void *session_thread(void *arg)
{
    session *s = arg;
    sweep *sw = s->sw;
    const tforge_sweep_entry *e = &sw->manifest->entries[s->entry];
    char out[4200], folder[4096];
    snprintf(out, sizeof out, "%s/%s", sw->dir, entry_folder(e, folder, sizeof folder));
    tforge_tune_options o = TFORGE_TUNE_OPTIONS_INIT;
    o.task = e->task;
    o.dtype = e->dtype;
    o.registry = sw->o->registry;
    o.backend = e->backend;
    o.strategy = e->strategy;
    o.strategy_options = (const char *const *)e->options;
    o.transforms = e->transforms;
    o.budget = e->budget ? e->budget : UINT32_MAX;
    o.patience = e->patience;
    o.time_limit_s = e->time_s;
    o.seed = e->seed;
    o.batch = e->batch;
    o.compile_workers = e->compile_workers;
    o.timeout_s = e->timeout_s;
    o.shape = (long)e->shape;
    o.out = out;
    o.resume = sw->o->resume;
    o.elsewhere.evaluate = evaluate_elsewhere;
    o.elsewhere.context = s;
    o.extras = device_extras;
    tforge_tune_outcome outcome;
    int rc = tforge_tune_run(&o, &outcome);
    pthread_mutex_lock(&sw->lock);
    if (rc)
        snprintf(s->error, sizeof s->error, "%s", tforge_error_last()->message);
    if (outcome.n_shapes && outcome.shapes[0].shape_json)
        s->shape_json = strdup(outcome.shapes[0].shape_json);
    s->state = rc ? FAILED : DONE;
    pthread_cond_signal(&sw->changed);
    pthread_mutex_unlock(&sw->lock);
    tforge_tune_outcome_dispose(&outcome);
    free(s->last_device);
    s->last_device = NULL;
    return NULL;
}

/* [local thread] Rank 0's own evaluator: one job at a time, as another rank would. */
static void *local_thread(void *arg)
{
    sweep *sw = arg;
    pthread_mutex_lock(&sw->lock);
    while (!sw->local_quit) {
        if (!sw->running[0] || sw->local_result) {
            pthread_cond_wait(&sw->local_cv, &sw->lock);
            continue;
        }
        char *text = strdup(sw->running[0]->text);
        pthread_mutex_unlock(&sw->lock);
        char *result = text ? serve_one(&sw->local_cache, text) : NULL;
        free(text);
        pthread_mutex_lock(&sw->lock);
        sw->local_result = result ? result : strdup("{}");
        pthread_cond_signal(&sw->changed);
    }
    pthread_mutex_unlock(&sw->lock);
    return NULL;
}

/* [dispatcher, lock held] A result back from `rank`: its job's measurements delivered. */
static void deliver(sweep *sw, int rank, const char *text)
{
    job *j = sw->running[rank];
    sw->running[rank] = NULL;
    sw->last_back = tforge_clock_s();
    if (!j)
        return;
    batch *b = j->owner;
    cJSON *r = cJSON_Parse(text);
    const cJSON *m = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "measurements"), 0);
    const cJSON *device = cJSON_GetObjectItem(r, "device"), *error = cJSON_GetObjectItem(r, "error");
    int rc = (int)number_or_nan(r, "rc");
    if (!r || rc || !m || measurement_of(&b->out[j->at], m)) {
        b->rc = rc < 0 ? rc : TFORGE_ERROR;
        snprintf(b->error, sizeof b->error, "rank %d: %s", rank,
                 cJSON_IsString(error) ? error->valuestring : "a result that could not be read");
    }
    snprintf(b->device[j->at], DEVICE_SIZE, "%s", cJSON_IsString(device) ? device->valuestring : "?");
    cJSON_Delete(r);
    sw->evaluations++;
    if (--b->pending == 0)
        pthread_cond_broadcast(&sw->finished);
}

/* [dispatcher, lock held] Whether rank `r` has entry `e`'s evaluator open (as its cache keeps
 * them: the last few entries it was sent). */
static int has_open(const sweep *sw, int r, size_t e)
{
    for (size_t k = 0; k < CACHED_EVALUATORS; k++)
        if (sw->open[(size_t)r * CACHED_EVALUATORS + k] == e)
            return 1;
    return 0;
}

static void opened(sweep *sw, int r, size_t e)
{
    size_t *slots = sw->open + (size_t)r * CACHED_EVALUATORS, k = 0;
    while (k + 1 < CACHED_EVALUATORS && slots[k] != e)
        k++;
    memmove(slots + 1, slots, k * sizeof *slots); /* most recent first, the oldest dropped */
    slots[0] = e;
}

/* [dispatcher, lock held] Queued jobs to idle ranks: each takes the first job of an entry it has
 * open, else the first of an entry no rank has open, else the first (opening its entry there):
 * opening a task costs a rank seconds, so an entry's jobs stay with the ranks that have it
 * (experiments/NOTES.md, "sweep scaling"). Returns how many were sent; a send's failure in
 * `*rc`. */
static int assign(sweep *sw, int *rc)
{
    int sent = 0;
    for (int r = 0; r < sw->slots && sw->head && !*rc; r++) {
        if (sw->running[r] || (r == 0 && !sw->o->rank0_evaluates))
            continue;
        job *pick = NULL, *fresh = NULL;
        for (job *j = sw->head; j && !pick; j = j->next) {
            int anywhere = 0;
            for (int q = 0; q < sw->slots && !anywhere && !fresh; q++)
                anywhere = has_open(sw, q, j->entry);
            if (has_open(sw, r, j->entry))
                pick = j;
            else if (!anywhere && !fresh)
                fresh = j;
        }
        pick = pick ? pick : fresh ? fresh : sw->head;
        job **link = &sw->head, *before = NULL;
        while (*link != pick) {
            before = *link;
            link = &(*link)->next;
        }
        *link = pick->next;
        if (sw->tail == pick)
            sw->tail = before;
        sw->running[r] = pick;
        opened(sw, r, pick->entry);
        if (sw->first_sent == 0)
            sw->first_sent = tforge_clock_s();
        if (r == 0)
            pthread_cond_signal(&sw->local_cv);
        else
            *rc = sw->o->transport->send(sw->o->transport->context, r, pick->text);
        sent++;
    }
    return sent;
}

static char *relative_result(const tforge_sweep_entry *e)
{
    char folder[4096];
    entry_folder(e, folder, sizeof folder);
    size_t size = strlen(folder) + 16;
    char *text = malloc(size);
    if (text)
        snprintf(text, size, "%s/result.json", folder);
    return text;
}

/* [dispatcher, lock held] DIR/sweep.json, replaced whole (written aside, then renamed). */
static int write_status(sweep *sw)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "manifest", sw->manifest->path);
    cJSON_AddNumberToObject(o, "ranks", sw->slots);
    cJSON *list = cJSON_AddArrayToObject(o, "entries");
    for (size_t i = 0; i < sw->manifest->n; i++) {
        const tforge_sweep_entry *e = &sw->manifest->entries[i];
        const session *s = &sw->sessions[i];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "task", e->task);
        cJSON_AddStringToObject(x, "name", e->name);
        cJSON_AddNumberToObject(x, "shape", (double)e->shape);
        if (e->dtype)
            cJSON_AddStringToObject(x, "dtype", e->dtype);
        cJSON *values = s->shape_json ? cJSON_Parse(s->shape_json) : NULL;
        cJSON_AddItemToObject(x, "shape_values", values ? values : cJSON_CreateNull());
        cJSON_AddStringToObject(x, "status", entry_state_name(s->state));
        char *result = relative_result(e);
        cJSON_AddStringToObject(x, "result", result ? result : "");
        free(result);
        if (s->state == FAILED)
            cJSON_AddStringToObject(x, "error", s->error);
        cJSON_AddItemToArray(list, x);
    }
    char *text = cJSON_Print(o), path[4200], aside[4300];
    cJSON_Delete(o);
    snprintf(path, sizeof path, "%s/sweep.json", sw->dir);
    snprintf(aside, sizeof aside, "%s.part", path);
    FILE *f = text ? fopen(aside, "w") : NULL;
    int ok = f && fputs(text, f) >= 0;
    ok = f && fclose(f) == 0 && ok && rename(aside, path) == 0;
    free(text);
    return ok ? 0 : tforge_error_set(TFORGE_EIO, "%s: cannot write it", path);
}

/* --resume: what sweep.json says is done (and its result is there) stays done. */
static int read_status(sweep *sw)
{
    char path[4200], *text = NULL;
    snprintf(path, sizeof path, "%s/sweep.json", sw->dir);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    rewind(f);
    if (size > 0 && (text = calloc((size_t)size + 1, 1)))
        size = (long)fread(text, 1, (size_t)size, f);
    fclose(f);
    cJSON *doc = text ? cJSON_Parse(text) : NULL;
    free(text);
    const cJSON *x;
    cJSON_ArrayForEach(x, cJSON_GetObjectItem(doc, "entries"))
    {
        const cJSON *name = cJSON_GetObjectItem(x, "name"), *status = cJSON_GetObjectItem(x, "status");
        const cJSON *values = cJSON_GetObjectItem(x, "shape_values");
        const cJSON *dtype = cJSON_GetObjectItem(x, "dtype");
        double shape = number_or_nan(x, "shape");
        for (size_t i = 0; i < sw->manifest->n; i++) {
            const tforge_sweep_entry *e = &sw->manifest->entries[i];
            char result[4400], *rel = relative_result(e);
            snprintf(result, sizeof result, "%s/%s", sw->dir, rel ? rel : "");
            free(rel);
            if (cJSON_IsString(name) && !strcmp(name->valuestring, e->name) &&
                shape == (double)e->shape && cJSON_IsString(status) &&
                (e->dtype ? cJSON_IsString(dtype) && !strcmp(dtype->valuestring, e->dtype)
                          : !dtype) &&
                !strcmp(status->valuestring, "done") && access(result, R_OK) == 0) {
                sw->sessions[i].state = SKIPPED;
                sw->sessions[i].shape_json = cJSON_PrintUnformatted(values);
            }
        }
    }
    if (!doc)
        return tforge_error_set(TFORGE_EINPUT, "%s: not a sweep's status (JSON): give another "
                                "--out", path);
    cJSON_Delete(doc);
    return 0;
}

/* The live line on a terminal; elsewhere a line as each (task, shape) ends. */
static void show_progress(sweep *sw, size_t running)
{
    if (!isatty(STDERR_FILENO)) {
        for (size_t i = 0; i < sw->manifest->n; i++) {
            session *s = &sw->sessions[i];
            if ((s->state == DONE || s->state == FAILED) && !s->told) {
                s->told = 1;
                char folder[4096];
                fprintf(stderr, "sweep: %s %s (%zu evaluated)\n",
                        entry_folder(&sw->manifest->entries[i], folder, sizeof folder),
                        entry_state_name(s->state), s->evaluated);
            }
        }
        return;
    }
    size_t done = 0;
    for (size_t i = 0; i < sw->manifest->n; i++)
        done += sw->sessions[i].state >= DONE;
    fprintf(stderr, "\r\033[Ksweep: %zu/%zu done, %zu running, %zu evaluated", done,
            sw->manifest->n, running, sw->evaluations);
    for (size_t i = 0, shown = 0; i < sw->manifest->n && shown < 4; i++)
        if (sw->sessions[i].state == RUNNING) {
            const tforge_sweep_entry *e = &sw->manifest->entries[i];
            fprintf(stderr, " | %s/%zu %zu/%u", e->name, e->shape, sw->sessions[i].evaluated,
                    e->budget);
            shown++;
        }
    fflush(stderr);
}

/* The dispatcher: sessions started (as many at once as there are evaluating ranks), jobs sent
 * where ranks are idle, results delivered, sweep.json kept current. */
static int dispatch(sweep *sw)
{
    const tforge_sweep_transport *t = sw->o->transport;
    int evaluating = sw->slots - (sw->o->rank0_evaluates ? 0 : 1), rc = 0;
    size_t next = 0, running = 0, n = sw->manifest->n;
    pthread_mutex_lock(&sw->lock);
    for (;;) {
        int moved = 0;
        while (!rc && running < (size_t)evaluating && next < n) {
            session *s = &sw->sessions[next++];
            if (s->state == SKIPPED)
                continue;
            s->state = RUNNING;
            if (pthread_create(&s->thread, NULL, session_thread, s)) {
                s->state = FAILED;
                snprintf(s->error, sizeof s->error, "cannot start its thread");
                continue;
            }
            s->started = 1;
            running++;
            moved = 1;
            rc = write_status(sw);
        }
        for (size_t i = 0; i < n; i++) {
            session *s = &sw->sessions[i];
            if ((s->state == DONE || s->state == FAILED) && s->started && !s->joined) {
                pthread_mutex_unlock(&sw->lock);
                pthread_join(s->thread, NULL);
                pthread_mutex_lock(&sw->lock);
                s->joined = 1;
                running--;
                moved = 1;
                int wrote = write_status(sw);
                rc = rc ? rc : wrote;
            }
        }
        if (running == 0 && (next == n || rc))
            break;
        moved |= assign(sw, &rc);
        if (sw->local_result) {
            deliver(sw, 0, sw->local_result);
            free(sw->local_result);
            sw->local_result = NULL;
            moved = 1;
        }
        int from;
        char *text = NULL;
        while (t && !rc) {
            pthread_mutex_unlock(&sw->lock);
            int got = t->poll(t->context, &from, &text);
            pthread_mutex_lock(&sw->lock);
            if (got < 0)
                rc = got;
            if (got <= 0)
                break;
            if (from > 0 && from < sw->slots)
                deliver(sw, from, text);
            free(text);
            moved = 1;
        }
        if (rc) { /* a lost rank: the sessions cannot go on, and MPI ends the job */
            fprintf(stderr, "sweep: %s\n", tforge_error_last()->message);
            break;
        }
        if (sw->o->progress && moved)
            show_progress(sw, running);
        if (!moved) { /* wait for a session's batch or a result; ranks are polled */
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_nsec += t ? 1000000 : 50000000;
            if (until.tv_nsec >= 1000000000) {
                until.tv_sec++;
                until.tv_nsec -= 1000000000;
            }
            pthread_cond_timedwait(&sw->changed, &sw->lock, &until);
        }
    }
    if (sw->o->progress)
        show_progress(sw, running);
    pthread_mutex_unlock(&sw->lock);
    if (sw->o->progress && isatty(STDERR_FILENO))
        fputc('\n', stderr);
    return rc;
}

static int make_dirs(const char *dir)
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
    if ((mkdir(path, 0777) && errno != EEXIST) || stat(path, &st) || !S_ISDIR(st.st_mode))
        return tforge_error_set(TFORGE_EINPUT, "--out %s: cannot create the folder", dir);
    return 0;
}

static void stop_ranks(const tforge_sweep_transport *t)
{
    for (int r = 1; t && r < t->ranks; r++)
        t->send(t->context, r, NULL);
}

int tforge_sweep_run(const tforge_sweep_options *o, tforge_sweep_outcome *out)
{
    memset(out, 0, sizeof *out);
    double start = tforge_clock_s();
    const tforge_sweep_transport *t = o->transport;
    if (o->version != TFORGE_SWEEP_OPTIONS_VERSION) {
        stop_ranks(t);
        return tforge_error_set(TFORGE_EINPUT, "sweep options version %u, expected %u",
                                o->version, TFORGE_SWEEP_OPTIONS_VERSION);
    }
    tforge_sweep_manifest manifest;
    int rc = tforge_sweep_manifest_read(&manifest, o->manifest);
    if (rc) {
        stop_ranks(t);
        return rc;
    }
    sweep sw = {.o = o, .manifest = &manifest, .slots = t ? t->ranks : 1};
    sw.dir = o->out ? o->out : manifest.out ? manifest.out : "tforge-sweep";
    out->n = manifest.n;
    sw.sessions = calloc(manifest.n, sizeof *sw.sessions);
    sw.running = calloc((size_t)sw.slots, sizeof *sw.running);
    sw.open = malloc((size_t)sw.slots * CACHED_EVALUATORS * sizeof *sw.open);
    if (!sw.sessions || !sw.running || !sw.open || !(out->dir = strdup(sw.dir)))
        rc = tforge_error_set(TFORGE_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < manifest.n; i++)
        sw.sessions[i] = (session){.sw = &sw, .entry = i};
    for (size_t k = 0; !rc && k < (size_t)sw.slots * CACHED_EVALUATORS; k++)
        sw.open[k] = SIZE_MAX;
    if (!rc && !o->rank0_evaluates && sw.slots < 2)
        rc = tforge_error_set(TFORGE_EINPUT, "sweep: rank 0 does not evaluate and there is no "
                              "other rank: run it under mpirun -n 2 or more");
    char status[4200];
    snprintf(status, sizeof status, "%s/sweep.json", sw.dir);
    if (!rc && !o->resume && access(status, F_OK) == 0)
        rc = tforge_error_set(TFORGE_EINPUT, "%s holds a sweep already: give --resume to "
                              "continue it, or another --out", sw.dir);
    if (!rc)
        rc = make_dirs(sw.dir);
    if (!rc && o->resume)
        rc = read_status(&sw);
    pthread_mutex_init(&sw.lock, NULL);
    pthread_cond_init(&sw.changed, NULL);
    pthread_cond_init(&sw.finished, NULL);
    pthread_cond_init(&sw.local_cv, NULL);
    cache_init(&sw.local_cache, o->registry, 0);
    if (!rc && o->rank0_evaluates) {
        if (pthread_create(&sw.local, NULL, local_thread, &sw))
            rc = tforge_error_set(TFORGE_ERROR, "sweep: cannot start rank 0's evaluator");
        sw.local_started = rc == 0;
    }
    if (!rc)
        rc = dispatch(&sw);
    if (sw.local_started) {
        pthread_mutex_lock(&sw.lock);
        sw.local_quit = 1;
        pthread_cond_signal(&sw.local_cv);
        pthread_mutex_unlock(&sw.lock);
        pthread_join(sw.local, NULL);
    }
    stop_ranks(t);
    cache_dispose(&sw.local_cache);
    free(sw.local_result);
    int failed = 0;
    for (size_t i = 0; sw.sessions && i < manifest.n; i++) {
        session *s = &sw.sessions[i];
        out->done += s->state == DONE || s->state == SKIPPED;
        out->failed += s->state == FAILED;
        if (s->state == FAILED && !failed) {
            failed = 1;
            if (!rc)
            {
                char folder[4096];
                rc = tforge_error_set(TFORGE_ERROR, "%s: %s",
                                      entry_folder(&manifest.entries[i], folder, sizeof folder),
                                      s->error);
            }
        }
        free(s->shape_json);
    }
    out->evaluations = sw.evaluations;
    out->seconds = tforge_clock_s() - start;
    out->evaluating_seconds = sw.first_sent > 0 ? sw.last_back - sw.first_sent : 0;
    free(sw.sessions);
    free(sw.running);
    free(sw.open);
    pthread_mutex_destroy(&sw.lock);
    pthread_cond_destroy(&sw.changed);
    pthread_cond_destroy(&sw.finished);
    pthread_cond_destroy(&sw.local_cv);
    tforge_sweep_manifest_dispose(&manifest);
    return rc;
}

void tforge_sweep_outcome_dispose(tforge_sweep_outcome *o)
{
    free(o->dir);
    memset(o, 0, sizeof *o);
}
