#include "tune.h"

#include "grow.h"
#include "strategy.h"
#include "tforge/error.h"
#include "tforge/log.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

void tforge_tune_outcome_dispose(tforge_tune_outcome *o)
{
    for (size_t i = 0; o->evals && i < o->n_evals; i++)
        free(o->evals[i].config);
    free(o->evals);
    memset(o, 0, sizeof *o);
}

/* What a resumed run had evaluated, in order. */
typedef struct stored {
    tforge_tune_eval *evals;
    size_t n, cap;
} stored;

static int collect(void *context, const tforge_store_measurement *m)
{
    stored *s = context;
    int rc = tforge_grow((void **)&s->evals, &s->cap, s->n, sizeof *s->evals, "resuming");
    if (rc)
        return rc;
    tforge_tune_eval *e = &s->evals[s->n];
    memset(e, 0, sizeof *e);
    if (!(e->config = strdup(m->params_json)))
        return tforge_error_set(TFORGE_ENOMEM, "out of memory resuming");
    e->result.status = m->status;
    e->result.value = m->median;
    e->result.min = m->min;
    e->result.spread = m->spread;
    e->result.repeats = m->repeats;
    e->result.compile_ms = m->compile_ms;
    e->result.wall_ms = m->wall_ms;
    snprintf(e->result.metrics, sizeof e->result.metrics, "%s",
             m->metrics_json ? m->metrics_json : "");
    s->n++;
    return 0;
}

typedef struct loop {
    const tforge_task *task;
    tforge_evaluator *evaluator;
    const tforge_tune_options *o;
    tforge_tune_outcome *out;
    size_t cap;
    stored done;
    double start, best, best_noise;
    long best_index;
} loop;

static int append(loop *l, char *config, int baseline, const tforge_result *r)
{
    if (tforge_grow((void **)&l->out->evals, &l->cap, l->out->n_evals, sizeof *l->out->evals,
                    "the tuning history")) {
        free(config);
        return TFORGE_ENOMEM;
    }
    /* A new best must beat the incumbent by more than the noise of both measurements. */
    if (!baseline && r->status == TFORGE_STATUS_OK && !isnan(r->value)) {
        double noise = isnan(r->spread) ? 0.0 : r->spread;
        if (isnan(l->best) || r->value < l->best * (1.0 - fmax(noise, l->best_noise))) {
            l->best = r->value;
            l->best_noise = noise;
            l->best_index = (long)l->out->n_evals;
        }
    }
    l->out->evals[l->out->n_evals++] =
        (tforge_tune_eval){config, baseline, *r, l->best, now_s() - l->start};
    return 0;
}

static int record(loop *l, const char *key, const tforge_tune_eval *e)
{
    if (!l->o->store)
        return 0;
    tforge_store_measurement m = {0};
    m.key = key;
    m.params_json = e->config;
    m.status = e->result.status;
    m.median = e->result.value;
    m.min = e->result.min;
    m.spread = e->result.spread;
    m.repeats = e->result.repeats;
    m.compile_ms = e->result.compile_ms;
    m.wall_ms = e->result.wall_ms;
    m.metrics_json = e->result.metrics[0] ? e->result.metrics : NULL;
    return tforge_store_record(NULL, l->o->store, l->out->run_id, &m);
}

/* Evaluates (or takes from the resumed run) a batch, records and appends it. */
static int evaluate(loop *l, char **configs, size_t n, int baseline)
{
    if (n == 0)
        return 0;
    tforge_result *results = calloc(n, sizeof *results);
    if (!results)
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    size_t first = l->out->n_evals, from_store = 0;
    int rc = 0;
    while (from_store < n && first + from_store < l->done.n) {
        const tforge_tune_eval *d = &l->done.evals[first + from_store];
        if (strcmp(d->config, configs[from_store]) != 0) {
            rc = tforge_error_set(TFORGE_EINPUT, "resume: evaluation %zu of the stored run is %s, "
                                  "this run proposes %s: its settings differ",
                                  first + from_store + 1, d->config, configs[from_store]);
            break;
        }
        results[from_store] = d->result;
        from_store++;
    }
    if (!rc && from_store < n)
        rc = tforge_evaluator_run(l->evaluator, (const char *const *)configs + from_store,
                                  n - from_store, results + from_store);
    for (size_t i = 0; i < n; i++) {
        if (rc) {
            free(configs[i]);
            continue;
        }
        rc = append(l, configs[i], baseline, &results[i]);
        if (!rc && i >= from_store)
            rc = record(l, configs[i], &l->out->evals[l->out->n_evals - 1]);
    }
    l->out->n_resumed += from_store;
    free(results);
    return rc;
}

static void progress(const loop *l, uint32_t n, uint32_t budget)
{
    if (!l->o->progress)
        return;
    double elapsed = now_s() - l->start, eta = n ? elapsed / n * (budget - n) : 0;
    double base = l->out->baseline >= 0 ? l->out->evals[l->out->baseline].result.value : NAN;
    fprintf(stderr, "\r  %u/%u evaluated  best %.4g ms", n, budget, l->best);
    if (!isnan(base) && !isnan(l->best))
        fprintf(stderr, " (%.2fx the baseline)", base / l->best);
    fprintf(stderr, "  elapsed %d:%02d  eta %d:%02d   ", (int)elapsed / 60, (int)elapsed % 60,
            (int)eta / 60, (int)eta % 60);
    fflush(stderr);
}

static int compare_medians(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Re-times the top candidates and the best baseline in interleaved rounds, so that drift of the
 * clock or the machine hits them all alike, and names the winner by the medians. */
static void final_choice(loop *l)
{
    tforge_tune_outcome *out = l->out;
    enum { MAX_TOP = 16 };
    long pick[MAX_TOP + 1];
    size_t k = 0;
    uint32_t top = l->o->final_top < MAX_TOP ? l->o->final_top : MAX_TOP;
    for (size_t rank = 0; rank < top; rank++) {
        long best = -1;
        for (size_t i = 0; i < out->n_evals; i++) {
            const tforge_result *r = &out->evals[i].result;
            int taken = 0;
            for (size_t j = 0; j < k; j++)
                taken |= pick[j] == (long)i;
            if (!out->evals[i].baseline && r->status == TFORGE_STATUS_OK && !isnan(r->value) &&
                !taken && (best < 0 || r->value < out->evals[best].result.value))
                best = (long)i;
        }
        if (best >= 0)
            pick[k++] = best;
    }
    out->best = k ? pick[0] : -1;
    out->best_ms = k ? out->evals[pick[0]].result.value : NAN;
    out->baseline_ms = out->baseline >= 0 ? out->evals[out->baseline].result.value : NAN;
    if (k == 0)
        return;
    size_t n_cand = k;
    if (out->baseline >= 0 && !isnan(out->baseline_ms))
        pick[k++] = out->baseline;
    uint32_t rounds = l->o->final_rounds;
    double *times = malloc((size_t)k * rounds * sizeof *times);
    if (!times || rounds == 0) {
        free(times);
        return;
    }
    for (uint32_t r = 0; r < rounds; r++)
        for (size_t c = 0; c < k; c++) {
            tforge_result again;
            tforge_evaluator_retime(l->evaluator, out->evals[pick[c]].config,
                                    l->o->seed * 1000003u + r * 31u + c, &again);
            times[c * rounds + r] = again.status == TFORGE_STATUS_OK ? again.value : NAN;
        }
    double best = NAN;
    for (size_t c = 0; c < k; c++) {
        double *t = times + c * rounds;
        qsort(t, rounds, sizeof *t, compare_medians); /* NAN sorts last */
        double median = t[rounds / 2];
        if (isnan(median))
            continue;
        if (c == n_cand) {
            out->baseline_ms = median;
        } else if (isnan(best) || median < best) {
            best = median;
            out->best = pick[c];
        }
    }
    out->best_ms = best;
    free(times);
}

int tforge_tune_run(tforge_tune_outcome *out, const tforge_registry *registry,
                    const tforge_task *task, tforge_evaluator *evaluator,
                    const tforge_tune_options *o)
{
    memset(out, 0, sizeof *out);
    out->best = out->baseline = -1;
    loop l = {task, evaluator, o, out, 0, {0}, now_s(), NAN, 0.0, -1};
    const tforge_space *space = task->space;
    uint32_t dims = tforge_space_dims(space), batch = o->batch ? o->batch : 1;
    tforge_space_view view = tforge_space_get_view(space);
    tforge_strategy *strategy = NULL;
    tforge_level *points = malloc((size_t)batch * dims * sizeof *points);
    tforge_level *base_points = malloc((task->n_baseline + 1) * dims * sizeof *base_points);
    char **configs = calloc(task->n_baseline > batch ? task->n_baseline : batch, sizeof *configs);
    tforge_observation *told = malloc((task->n_baseline + batch) * sizeof *told);
    int rc = points && base_points && configs && told ? 0 : TFORGE_ENOMEM;
    if (rc) {
        tforge_error_set(rc, "out of memory");
        goto cleanup;
    }
    if (o->store) {
        tforge_store_run like = {0};
        like.source = task->path;
        like.strategy = (char *)o->strategy;
        like.settings_json = (char *)o->settings_json;
        like.seed = o->seed;
        like.budget = o->budget;
        like.environment_json = (char *)o->environment_json;
        rc = o->resume ? tforge_store_find_run_like(&out->run_id, o->store, &like)
                       : TFORGE_ENOTFOUND;
        if (rc == 0)
            rc = tforge_store_each_measurement(o->store, out->run_id, collect, &l.done);
        else if (rc == TFORGE_ENOTFOUND)
            rc = tforge_store_begin_run(&out->run_id, o->store, &like);
        if (rc)
            goto cleanup;
    }
    if ((rc = tforge_strategy_open(&strategy, registry, o->strategy, &view, o->seed, o->budget,
                                   o->strategy_options)))
        goto cleanup;

    /* The baselines: what the user ships today, the numbers to beat. */
    for (size_t b = 0; b < task->n_baseline; b++)
        if (!(configs[b] = strdup(task->baselines[b]))) {
            rc = tforge_error_set(TFORGE_ENOMEM, "out of memory");
            goto cleanup;
        }
    rc = evaluate(&l, configs, task->n_baseline, 1);
    memset(configs, 0, task->n_baseline * sizeof *configs); /* owned by the outcome now */
    if (rc)
        goto cleanup;
    uint32_t n_told = 0;
    for (size_t b = 0; b < task->n_baseline; b++) {
        const tforge_result *r = &out->evals[b].result;
        if (r->status == TFORGE_STATUS_OK &&
            (out->baseline < 0 || r->value < out->evals[out->baseline].result.value))
            out->baseline = (long)b;
        tforge_level *p = base_points + (size_t)n_told * dims;
        if (tforge_task_point(p, task, out->evals[b].config) == 0) /* inside the space */
            told[n_told++] = (tforge_observation){p, r->status, r->value,
                                                  isnan(r->spread) ? 0.0 : r->spread};
    }
    tforge_error_clear();
    if (n_told && (rc = tforge_strategy_tell(strategy, told, n_told)))
        goto cleanup;

    uint32_t n = 0;
    while (n < o->budget && (o->time_limit_s <= 0 || now_s() - l.start < o->time_limit_s)) {
        uint32_t want = o->budget - n < batch ? o->budget - n : batch, got = 0;
        if ((rc = tforge_strategy_ask(strategy, want, points, &got)))
            goto cleanup;
        if (got == 0)
            break;
        for (uint32_t i = 0; i < got; i++)
            if ((rc = tforge_task_config(&configs[i], task, points + (size_t)i * dims)))
                goto cleanup;
        size_t before = out->n_evals;
        rc = evaluate(&l, configs, got, 0);
        memset(configs, 0, got * sizeof *configs); /* owned by the outcome now, or freed */
        if (rc)
            goto cleanup;
        for (uint32_t i = 0; i < got; i++) {
            const tforge_result *r = &out->evals[before + i].result;
            told[i] = (tforge_observation){points + (size_t)i * dims, r->status, r->value,
                                           isnan(r->spread) ? 0.0 : r->spread};
            if (r->status == TFORGE_STATUS_OK && isnan(r->value))
                told[i].value = 1.0; /* an untimed backend: every good candidate alike */
        }
        if ((rc = tforge_strategy_tell(strategy, told, got)))
            goto cleanup;
        n += got;
        progress(&l, n, o->budget);
    }
    if (o->progress)
        fputc('\n', stderr);
    final_choice(&l);
    out->speedup = out->baseline_ms / out->best_ms;
    out->restarts = tforge_evaluator_restarts(evaluator);
    out->seconds = now_s() - l.start;
cleanup:
    tforge_strategy_close(strategy);
    for (size_t i = 0; configs && i < (task->n_baseline > batch ? task->n_baseline : batch); i++)
        free(configs[i]);
    for (size_t i = 0; i < l.done.n; i++)
        free(l.done.evals[i].config);
    free(l.done.evals);
    free(configs);
    free(points);
    free(base_points);
    free(told);
    return rc;
}
