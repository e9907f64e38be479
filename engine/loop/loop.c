#include "loop.h"
#include "sol.h"

#include "clock.h"
#include "grow.h"
#include "strategy.h"
#include "tforge/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


void tforge_loop_outcome_dispose(tforge_loop_outcome *o)
{
    for (size_t i = 0; o->evals && i < o->n_evals; i++) {
        free(o->evals[i].point);
        free(o->evals[i].config);
        free(o->evals[i].source);
    }
    free(o->evals);
    memset(o, 0, sizeof *o);
}

/* ---- the points evaluated so far: an open-addressing set of level vectors ---- */

typedef struct seen_set {
    uint32_t dims;
    size_t n, cap;       /* cap is a power of two, kept at most half full */
    tforge_level *slots; /* cap x dims */
    unsigned char *used;
} seen_set;

static uint64_t hash_point(const tforge_level *p, uint32_t dims)
{
    uint64_t h = 1469598103934665603ull;
    for (uint32_t d = 0; d < dims; d++)
        h = (h ^ p[d]) * 1099511628211ull;
    return h;
}

static size_t seen_slot(const seen_set *s, const tforge_level *p)
{
    size_t i = (size_t)hash_point(p, s->dims) & (s->cap - 1);
    while (s->used[i] && memcmp(s->slots + i * s->dims, p, s->dims * sizeof *p) != 0)
        i = (i + 1) & (s->cap - 1);
    return i;
}

static int seen_has(const seen_set *s, const tforge_level *p)
{
    return s->cap && s->used[seen_slot(s, p)];
}

static int seen_add(seen_set *s, const tforge_level *p)
{
    if (2 * (s->n + 1) > s->cap) {
        seen_set bigger = {s->dims, 0, s->cap ? 2 * s->cap : 64, NULL, NULL};
        bigger.slots = malloc(bigger.cap * s->dims * sizeof *bigger.slots);
        bigger.used = calloc(bigger.cap, 1);
        if (!bigger.slots || !bigger.used) {
            free(bigger.slots);
            free(bigger.used);
            return tforge_error_set(TFORGE_ENOMEM, "out of memory");
        }
        for (size_t i = 0; i < s->cap; i++)
            if (s->used[i]) {
                size_t j = seen_slot(&bigger, s->slots + i * s->dims);
                memcpy(bigger.slots + j * s->dims, s->slots + i * s->dims,
                       s->dims * sizeof *s->slots);
                bigger.used[j] = 1;
                bigger.n++;
            }
        free(s->slots);
        free(s->used);
        *s = bigger;
    }
    size_t i = seen_slot(s, p);
    if (!s->used[i]) {
        memcpy(s->slots + i * s->dims, p, s->dims * sizeof *p);
        s->used[i] = 1;
        s->n++;
    }
    return 0;
}

/* ---- the loop ---- */

typedef struct loop {
    const tforge_space *space; /* the grow hook may replace it */
    const tforge_registry *registry;
    tforge_space_view view; /* the strategies' view of the space: it lives as long as they do */
    tforge_backend *backend;
    const tforge_loop_options *o;
    tforge_loop_outcome *out;
    tforge_strategy *strategy;
    tforge_strategy *companion; /* NULL: none */
    double lead, owed; /* the companion's share of a batch now, and the fraction it is owed */
    seen_set seen;
    uint32_t dims;
    double start, best, best_noise, best_plain;
    double search_start; /* the first proposal: --time counts from here */
    /* the incumbent for the steer and patience: baselines included */
    long incumbent;
    double incumbent_noise;
    int incumbent_changed;   /* since the steer was last told */
    uint32_t since_incumbent; /* candidates evaluated since it last changed */
    tforge_level *first;      /* after the space grew: the incumbent at the new level, to be
                                 evaluated before the strategy is asked; NULL: none */
} loop;

int tforge_loop_key(char **key, char **params, const tforge_space *space,
                    const tforge_level *point, const char *config, const char *own_digest)
{
    *key = NULL;
    if (params)
        *params = NULL;
    int rc = 0;
    if (point) {
        rc = tforge_space_key(key, space, point);
        if (!rc && params)
            rc = tforge_space_json(params, space, point, NULL);
    } else if (!config) {
        return tforge_error_set(TFORGE_ERROR, "a candidate with neither point nor config");
    } else if (!(*key = strdup(config)) || (params && !(*params = strdup(config)))) {
        rc = tforge_error_set(TFORGE_ENOMEM, "out of memory");
    }
    if (!rc && own_digest) { /* the same point with a source of its own is another candidate */
        size_t size = strlen(*key) + strlen(own_digest) + 2;
        char *both = malloc(size);
        if (both)
            snprintf(both, size, "%s@%s", *key, own_digest);
        free(*key);
        *key = both;
        rc = both ? 0 : tforge_error_set(TFORGE_ENOMEM, "out of memory");
    }
    if (rc) {
        free(*key);
        *key = NULL;
        if (params) {
            free(*params);
            *params = NULL;
        }
    }
    return rc;
}

/* The digest that makes a candidate's key its own: that of a source no transform made. */
static const char *own_digest(const tforge_candidate *c)
{
    return c->source && c->digest[0] ? c->digest : NULL;
}

static int record(loop *l, const tforge_candidate *c, const tforge_measurement *m)
{
    const tforge_run_record *r = l->o->record;
    if (!r)
        return 0;
    char *key, *params, *extras = NULL;
    int rc = tforge_loop_key(&key, &params, l->space, c->point, c->config, own_digest(c));
    if (!rc && r->extras)
        rc = r->extras(r->extras_context, c, &extras);
    if (!rc) {
        tforge_store_measurement row = {0};
        row.key = key;
        row.params_json = params;
        row.digest = c->digest[0] ? c->digest : NULL;
        row.source = c->variant;
        row.m = *m;
        row.metrics_json = extras;
        rc = tforge_store_record(NULL, r->store, r->run_id, &row);
    }
    free(key);
    free(params);
    free(extras);
    return rc;
}

static int append(loop *l, const tforge_candidate *c, int baseline, int resumed,
                  const tforge_measurement *m)
{
    tforge_loop_outcome *out = l->out;
    if (tforge_grow((void **)&out->evals, &out->cap, out->n_evals, sizeof *out->evals,
                    "the tuning history"))
        return TFORGE_ENOMEM;
    tforge_loop_eval *e = &out->evals[out->n_evals];
    memset(e, 0, sizeof *e);
    if (c->point && !(e->point = malloc(l->dims * sizeof *e->point)))
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    if (c->point)
        memcpy(e->point, c->point, l->dims * sizeof *e->point);
    memcpy(e->digest, c->digest, sizeof e->digest);
    if ((c->config && !(e->config = strdup(c->config))) ||
        (c->source && !(e->source = strdup(c->source)))) {
        free(e->point);
        free(e->config);
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    }
    out->n_evals++;
    if (!baseline && m->status == TFORGE_STATUS_OK && !isnan(m->value)) {
        /* A new best must beat the incumbent by more than the noise of both measurements. */
        double noise = isnan(m->spread) ? 0.0 : m->spread;
        if (isnan(l->best) || m->value < l->best * (1.0 - fmax(noise, l->best_noise))) {
            l->best = m->value;
            l->best_noise = noise;
        }
        if (!(m->value >= l->best_plain))
            l->best_plain = m->value;
    }
    if (m->status == TFORGE_STATUS_OK) {
        double noise = isnan(m->spread) ? 0.0 : m->spread;
        const tforge_measurement *held = l->incumbent >= 0 ? &out->evals[l->incumbent].m : NULL;
        /* the noise rule again; an untimed backend's first correct one, then none */
        if (!held || (!isnan(m->value) && (isnan(held->value) ||
                      m->value < held->value * (1.0 - fmax(noise, l->incumbent_noise))))) {
            l->incumbent = (long)out->n_evals - 1;
            l->incumbent_noise = noise;
            l->incumbent_changed = 1;
            e->incumbent = 1;
            if (!baseline)
                l->since_incumbent = 0;
        }
    }
    l->since_incumbent += !baseline && !e->incumbent;
    e->suspect = !isnan(tforge_measurement_metric(m, TFORGE_LOOP_SUSPECT_MS));
    out->n_suspect += (size_t)e->suspect;
    e->baseline = baseline;
    e->resumed = resumed;
    e->m = *m;
    e->best = l->best;
    e->best_plain = l->best_plain;
    e->elapsed_s = tforge_clock_s() - l->start;
    out->n_resumed += (size_t)resumed;
    return 0;
}

/* Each candidate's identity, from the backend: its variant is made here, once (evaluate,
 * prepare and the store take it from the candidate). */
static int identify(loop *l, tforge_candidate *c, size_t n)
{
    int rc = 0;
    for (size_t i = 0; !rc && i < n; i++)
        rc = tforge_backend_identify(l->backend, &c[i]);
    return rc;
}

static void forget(tforge_candidate *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        tforge_candidate_forget(&c[i]);
}

/* The incumbent's value, NAN when there is none yet (or on an untimed backend). */
static double incumbent_value(const loop *l)
{
    return l->incumbent >= 0 ? l->out->evals[l->incumbent].m.value : NAN;
}

/* Whether a new candidate is pruned by its bound (tforge_loop_bound); if so `m` says why. */
static int prune(const loop *l, double lower, tforge_measurement *m)
{
    const tforge_loop_bound *b = l->o->bound;
    double incumbent = incumbent_value(l);
    if (!b || !tforge_sol_prunes(lower, incumbent, b->margin))
        return 0;
    tforge_measurement_init(m);
    m->status = TFORGE_STATUS_CONSTRAINT;
    snprintf(m->message, sizeof m->message, "pruned: its speed-of-light bound %.4g cannot beat "
             "the incumbent's %.4g by more than %g%%", lower, incumbent, 100 * b->margin);
    return 1;
}

/* A candidate timed under its bound (tforge_loop_bound): re-timed once; still under, `m`
 * becomes a failure that says so and marks it. */
static int distrust(loop *l, const tforge_candidate *c, double lower, tforge_measurement *m)
{
    const tforge_loop_bound *b = l->o->bound;
    double floor = lower * (1.0 - (b ? b->margin : 0));
    if (!b || m->status != TFORGE_STATUS_OK || !isfinite(lower) || !(m->value < floor))
        return 0;
    tforge_measurement again;
    tforge_measurement_init(&again);
    int rc = tforge_backend_retime(l->backend, c, l->o->seed * 7919u + l->out->n_evals, &again);
    if (rc)
        return tforge_error_prefix("re-timing a candidate faster than its speed-of-light bound");
    if (again.status == TFORGE_STATUS_OK && !(again.value < floor)) { /* the first was a fluke */
        m->value = again.value;
        m->median_ms = again.median_ms;
        m->min_ms = again.min_ms;
        m->spread = again.spread;
        return 0;
    }
    double first = m->value, retimed = again.status == TFORGE_STATUS_OK ? again.value : NAN;
    tforge_measurement_fail(m, TFORGE_STATUS_WRONG, "suspect: faster than its speed-of-light "
                            "bound %.4g: measured %.4g, re-timed %.4g (%s); never trusted",
                            lower, first, retimed, tforge_status_name(again.status));
    m->value = NAN;
    /* the mark first: a full table keeps it rather than the times */
    tforge_measurement_set_metric(m, TFORGE_LOOP_SUSPECT_MS, first);
    tforge_measurement_set_metric(m, TFORGE_LOOP_SUSPECT_BOUND, lower);
    tforge_measurement_set_metric(m, TFORGE_LOOP_SUSPECT_RETIMED_MS, retimed);
    tforge_error_clear();
    return 0;
}

/* Evaluates a batch of identified candidates (or takes its first part from the resumed run;
 * prunes new candidates that cannot win; distrusts those faster than their bound), records and
 * appends it. */
static int evaluate(loop *l, const tforge_candidate *c, size_t n, int baseline)
{
    if (n == 0)
        return 0;
    const tforge_run_history *h = l->o->history;
    const tforge_loop_bound *bound = l->o->bound;
    tforge_measurement *m = calloc(n, sizeof *m), *run_m = calloc(n, sizeof *run_m);
    tforge_candidate *run = calloc(n, sizeof *run); /* lent copies of those that run */
    size_t *run_at = calloc(n, sizeof *run_at);
    double *lower = calloc(n, sizeof *lower);
    unsigned char *pruned = calloc(n, 1);
    int rc = m && run_m && run && run_at && lower && pruned
                 ? 0 : tforge_error_set(TFORGE_ENOMEM, "out of memory");
    size_t first = l->out->n_evals, from_store = 0, n_run = 0;
    for (size_t i = 0; !rc && i < n; i++)
        lower[i] = bound ? bound->lower(bound->context, &c[i]) : NAN;
    while (!rc && h && from_store < n && first + from_store < h->n) {
        char *key;
        if ((rc = tforge_loop_key(&key, NULL, l->space, c[from_store].point,
                                  c[from_store].config, own_digest(&c[from_store]))))
            break;
        if (strcmp(key, h->keys[first + from_store]) != 0)
            rc = tforge_error_set(TFORGE_EINPUT, "resume: evaluation %zu of the stored run is %s, "
                                  "this run proposes %s: its settings differ",
                                  first + from_store + 1, h->keys[first + from_store], key);
        else
            m[from_store] = h->measurements[first + from_store];
        free(key);
        from_store += rc == 0;
    }
    for (size_t i = from_store; !rc && i < n; i++) {
        pruned[i] = !baseline && prune(l, lower[i], &m[i]);
        if (!pruned[i]) {
            run[n_run] = c[i];
            run_at[n_run++] = i;
        }
    }
    double began = tforge_clock_s();
    if (!rc && n_run)
        rc = tforge_backend_evaluate(l->backend, run, n_run, run_m);
    *(baseline ? &l->out->split.baselines_s : &l->out->split.candidates_s) += tforge_clock_s() - began;
    for (size_t k = 0; !rc && k < n_run; k++) {
        m[run_at[k]] = run_m[k];
        l->out->split.compile_s += isnan(run_m[k].compile_ms) ? 0 : run_m[k].compile_ms / 1e3;
        if (!baseline)
            rc = distrust(l, &run[k], lower[run_at[k]], &m[run_at[k]]);
    }
    for (size_t i = 0; !rc && i < n; i++) {
        rc = append(l, &c[i], baseline, i < from_store, &m[i]);
        if (!rc) {
            l->out->evals[l->out->n_evals - 1].lower = lower[i];
            l->out->evals[l->out->n_evals - 1].pruned = pruned[i];
            l->out->n_pruned += pruned[i];
        }
        if (!rc && i >= from_store)
            rc = record(l, &c[i], &m[i]);
    }
    free(m);
    free(run_m);
    free(run);
    free(run_at);
    free(lower);
    free(pruned);
    return rc;
}

/* Whether the incumbent has reached the bound's stop_percent of its own speed of light. */
static int at_speed_of_light(const loop *l)
{
    const tforge_loop_bound *b = l->o->bound;
    if (!b || b->stop_percent <= 0 || l->incumbent < 0)
        return 0;
    const tforge_loop_eval *e = &l->out->evals[l->incumbent];
    return tforge_sol_percent(e->lower, e->m.value) >= b->stop_percent;
}

static tforge_observation observe(const tforge_level *point, const tforge_measurement *m)
{
    tforge_observation o = {point, m->status, m->value, isnan(m->spread) ? 0.0 : m->spread};
    if (m->status == TFORGE_STATUS_OK && isnan(m->value))
        o.value = 1.0; /* an untimed backend: every good candidate alike */
    return o;
}

/* A proposal must be valid and new: anything else is the strategy's error, named. */
static int check_proposal(const loop *l, const tforge_level *p, const char *proposer)
{
    for (uint32_t d = 0; d < l->dims; d++)
        if (p[d] >= tforge_space_levels(l->space, d))
            return tforge_error_set(TFORGE_ERROR, "strategy %s proposed an invalid point: "
                                    "dimension %s has no level %u (it has %u)",
                                    proposer, tforge_space_name(l->space, d), p[d],
                                    tforge_space_levels(l->space, d));
    int valid = tforge_space_is_valid(l->space, p), again = valid && seen_has(&l->seen, p);
    if (valid && !again)
        return 0;
    char *text = NULL;
    tforge_space_format(&text, l->space, p, NULL);
    int rc = tforge_error_set(TFORGE_ERROR, "strategy %s proposed %s point %s", proposer,
                              valid ? "an already seen" : "an invalid (constraint-breaking)",
                              text ? text : "?");
    free(text);
    return rc;
}

/* Tells the steer of the batch evaluated from `first` on, then of a new incumbent. */
static int steer(loop *l, size_t first)
{
    const tforge_loop_steer *st = l->o->steer;
    double began = tforge_clock_s();
    int rc = st && st->evaluated && l->out->n_evals > first
                 ? st->evaluated(st->context, l->out, first, l->out->n_evals - first)
                 : 0;
    if (!rc && st && st->incumbent && l->incumbent_changed) {
        l->incumbent_changed = 0;
        tforge_strategy *const both[2] = {l->strategy, l->companion};
        rc = st->incumbent(st->context, both, l->companion ? 2 : 1, l->out, (size_t)l->incumbent);
    }
    l->out->split.steer_s += tforge_clock_s() - began;
    return rc;
}

/* Tells the strategy and the companion. */
static int tell(loop *l, const tforge_observation *told, uint32_t n)
{
    double began = tforge_clock_s();
    int rc = tforge_strategy_tell(l->strategy, told, n);
    if (!rc && l->companion)
        rc = tforge_strategy_tell(l->companion, told, n);
    l->out->split.search_s += tforge_clock_s() - began;
    return rc;
}

/* Whether `p` is one of the first `n` points of `points`. */
static int among(const tforge_level *points, uint32_t n, const tforge_level *p, uint32_t dims)
{
    for (uint32_t i = 0; i < n; i++)
        if (memcmp(points + (size_t)i * dims, p, dims * sizeof *p) == 0)
            return 1;
    return 0;
}

/* Up to `want` proposals into `points`: the companion's share first (`*from_companion` of them),
 * then the strategy's, less any point the other one proposed in this batch too or in the batch
 * still untold (`untold`, `n_untold`: proposed ahead of this one): it is evaluated once, and both
 * are told its result. Each is checked valid and new. */
static int propose(loop *l, uint32_t want, tforge_level *points, uint32_t *got,
                   uint32_t *from_companion, const tforge_level *untold, uint32_t n_untold)
{
    uint32_t asked = 0, from_strategy = 0, kept = 0;
    int rc = 0;
    *got = *from_companion = 0;
    if (l->companion) {
        /* its share of this batch; what it had nothing for is not made up later */
        l->owed += l->lead * want;
        uint32_t ask = (uint32_t)floor(l->owed + 1e-9);
        ask = ask > want ? want : ask;
        l->owed -= ask;
        if (ask && (rc = tforge_strategy_ask(l->companion, ask, points, &asked)))
            return rc;
    }
    for (uint32_t i = 0; !rc && i < asked; i++) {
        const tforge_level *p = points + (size_t)i * l->dims;
        if (among(untold, n_untold, p, l->dims))
            continue;
        if (!(rc = check_proposal(l, p, l->o->companion)))
            rc = seen_add(&l->seen, p);
        memmove(points + (size_t)kept++ * l->dims, p, l->dims * sizeof *p);
    }
    *from_companion = kept;
    tforge_level *rest = points + (size_t)kept * l->dims;
    if (!rc && want > kept)
        rc = tforge_strategy_ask(l->strategy, want - kept, rest, &from_strategy);
    if (rc)
        return rc;
    for (uint32_t i = 0; !rc && i < from_strategy; i++) {
        const tforge_level *p = rest + (size_t)i * l->dims;
        if (among(points, *from_companion, p, l->dims) || among(untold, n_untold, p, l->dims))
            continue;
        if (!(rc = check_proposal(l, p, l->o->strategy)))
            rc = seen_add(&l->seen, p);
        memmove(points + (size_t)kept++ * l->dims, p, l->dims * sizeof *p);
    }
    *got = kept;
    return rc;
}

/* The companion keeps the whole batch while it leads (one of its `n` points, from evaluation
 * `first` on, became the incumbent); after a batch in which none did its share halves, down to
 * companion_share. */
static void follow_lead(loop *l, size_t first, uint32_t n)
{
    int led = 0;
    for (uint32_t i = 0; i < n; i++)
        led |= l->out->evals[first + i].incumbent;
    if (n)
        l->lead = led ? 1.0 : fmax(l->lead / 2, l->o->companion_share);
}

static int baselines(loop *l)
{
    const tforge_loop_options *o = l->o;
    tforge_candidate *c = malloc((o->n_baselines + 1) * sizeof *c);
    tforge_observation *told = malloc((o->n_baselines + 1) * sizeof *told);
    int rc = c && told ? 0 : tforge_error_set(TFORGE_ENOMEM, "out of memory");
    size_t n = rc ? 0 : o->n_baselines;
    for (size_t b = 0; b < n; b++) { /* copies, identified here */
        c[b] = o->baselines[b];
        c[b].variant = c[b].unmade = NULL;
    }
    if (!rc)
        rc = identify(l, c, n);
    if (!rc)
        rc = evaluate(l, c, n, 1);
    forget(c, n);
    free(c);
    uint32_t n_told = 0;
    tforge_loop_outcome *out = l->out;
    for (size_t b = 0; !rc && b < o->n_baselines; b++) {
        const tforge_measurement *m = &out->evals[b].m;
        if (m->status == TFORGE_STATUS_OK &&
            (out->baseline < 0 || m->value < out->evals[out->baseline].m.value))
            out->baseline = (long)b;
        const tforge_level *p = out->evals[b].point;
        if (p && tforge_space_is_valid(l->space, p) && !seen_has(&l->seen, p)) {
            told[n_told++] = observe(p, m);
            rc = seen_add(&l->seen, p);
        }
    }
    if (!rc && n_told)
        rc = tell(l, told, n_told);
    if (!rc)
        rc = steer(l, 0);
    free(told);
    return rc;
}

static void progress(const loop *l, uint32_t n, uint32_t budget)
{
    if (!l->o->progress)
        return;
    double elapsed = tforge_clock_s() - l->start, eta = n ? elapsed / n * (budget - n) : 0;
    double base = l->out->baseline >= 0 ? l->out->evals[l->out->baseline].m.value : NAN;
    fprintf(stderr, "\r  %u/%u evaluated  best %.4g ms", n, budget, l->best);
    if (!isnan(base) && !isnan(l->best))
        fprintf(stderr, " (%.2fx the baseline)", base / l->best);
    fprintf(stderr, "  elapsed %d:%02d  eta %d:%02d   ", (int)elapsed / 60, (int)elapsed % 60,
            (int)eta / 60, (int)eta % 60);
    fflush(stderr);
}

/* A batch proposed: its points and candidates, and how many of them the companion proposed. */
typedef struct proposal {
    tforge_level *points;
    tforge_candidate *c;
    uint32_t got, companions;
} proposal;

/* Proposes up to `want` candidates into `p` (none of those of `untold`, the batch proposed before
 * and not yet told, or NULL), then asks the backend to start on those that the resumed run does
 * not hold (the batch's first evaluation will be evaluation `at`). */
static int propose_batch(loop *l, uint32_t want, proposal *p, const proposal *untold, size_t at)
{
    double began = tforge_clock_s();
    int rc = 0;
    if (l->first && !untold) { /* the grown level at the incumbent's knobs, on its own */
        memcpy(p->points, l->first, l->dims * sizeof *l->first);
        p->got = 1;
        p->companions = 0;
        free(l->first);
        l->first = NULL;
        rc = seen_add(&l->seen, p->points);
    } else {
        rc = propose(l, want, p->points, &p->got, &p->companions, untold ? untold->points : NULL,
                     untold ? untold->got : 0);
    }
    l->out->split.search_s += tforge_clock_s() - began;
    for (uint32_t i = 0; i < p->got; i++)
        p->c[i] = (tforge_candidate){.point = p->points + (size_t)i * l->dims};
    if (!rc)
        rc = identify(l, p->c, p->got);
    size_t stored = l->o->history ? l->o->history->n : 0, skip = stored > at ? stored - at : 0;
    if (!rc && l->o->lookahead && skip < p->got)
        rc = tforge_backend_prepare(l->backend, p->c + skip, p->got - skip);
    return rc;
}

/* Opens the strategy (and the companion) over the loop's space, `budget` candidates theirs. */
static int open_strategies(loop *l, uint32_t budget)
{
    const tforge_loop_options *o = l->o;
    l->view = tforge_space_get_view(l->space);
    int rc = tforge_strategy_open(&l->strategy, l->registry, o->strategy, &l->view, o->seed,
                                  budget, o->strategy_options);
    if (!rc && o->companion)
        rc = tforge_strategy_open(&l->companion, l->registry, o->companion, &l->view,
                                  o->seed * 2654435761u + 1, budget, o->companion_options);
    return rc;
}

/* The incumbent's point with the dimension that gained a level (levels `before` had, per
 * dimension) at its new last level, into l->first, when it is valid and new: the new level is
 * first measured where the search stands. */
static int first_at_new_level(loop *l, const uint32_t *before)
{
    if (l->incumbent < 0 || !l->out->evals[l->incumbent].point)
        return 0;
    tforge_level *p = malloc(l->dims * sizeof *p);
    if (!p)
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    memcpy(p, l->out->evals[l->incumbent].point, l->dims * sizeof *p);
    int grew = 0;
    for (uint32_t d = 0; d < l->dims; d++)
        if (tforge_space_levels(l->space, d) > before[d]) {
            p[d] = tforge_space_levels(l->space, d) - 1;
            grew = 1;
        }
    if (grew && tforge_space_is_valid(l->space, p) && !seen_has(&l->seen, p))
        l->first = p;
    else
        free(p);
    return 0;
}

/* Asks the grow hook for a larger space; when it gives one, the strategies start again over it
 * and are told every evaluation so far, in order (a point once: the seen set is made again). */
static int grow(loop *l, uint32_t budget, int *grown, int *go_on)
{
    const tforge_space *space = NULL;
    *go_on = 0;
    uint32_t *before = malloc(l->dims * sizeof *before); /* read now: the hook may free it */
    if (!before)
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    for (uint32_t d = 0; d < l->dims; d++)
        before[d] = tforge_space_levels(l->space, d);
    double began = tforge_clock_s();
    int rc = l->o->grow->grow(l->o->grow->context, l->out, l->incumbent, &space, go_on);
    l->out->split.steer_s += tforge_clock_s() - began;
    *grown = !rc && space;
    *go_on = !rc && !space && *go_on;
    if (*go_on)
        l->since_incumbent = 0;
    if (*grown && tforge_space_dims(space) != l->dims)
        rc = tforge_error_set(TFORGE_ERROR, "the space grew from %u dimensions to %u: it may "
                              "only gain levels", l->dims, tforge_space_dims(space));
    if (rc || !*grown) {
        free(before);
        return rc;
    }
    l->space = space;
    const tforge_loop_steer *st = l->o->steer;
    if (st && st->grown && (rc = st->grown(st->context, space))) {
        free(before);
        return rc;
    }
    tforge_strategy_close(l->strategy);
    tforge_strategy_close(l->companion);
    l->strategy = l->companion = NULL;
    free(l->seen.slots);
    free(l->seen.used);
    l->seen = (seen_set){.dims = l->dims};
    tforge_loop_outcome *out = l->out;
    tforge_observation *told = malloc((out->n_evals + 1) * sizeof *told);
    uint32_t n_told = 0;
    rc = told ? open_strategies(l, budget) : tforge_error_set(TFORGE_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < out->n_evals; i++) {
        const tforge_level *p = out->evals[i].point;
        if (p && tforge_space_is_valid(space, p) && !seen_has(&l->seen, p)) {
            told[n_told++] = observe(p, &out->evals[i].m);
            rc = seen_add(&l->seen, p);
        }
    }
    if (!rc && n_told)
        rc = tell(l, told, n_told);
    free(told);
    l->since_incumbent = 0;
    l->lead = 1.0;
    l->owed = 0;
    l->incumbent_changed = l->incumbent >= 0; /* the new strategies hear of it */
    if (!rc)
        rc = first_at_new_level(l, before);
    free(before);
    return rc ? rc : steer(l, out->n_evals);
}

static int candidates_loop(loop *l)
{
    const tforge_loop_options *o = l->o;
    uint32_t batch = o->batch ? o->batch : 1, n = 0, proposed = 0;
    /* the batch being evaluated and, with lookahead, the next one */
    proposal now = {0}, next = {0};
    now.points = malloc((size_t)batch * l->dims * sizeof *now.points);
    next.points = malloc((size_t)batch * l->dims * sizeof *next.points);
    now.c = malloc(batch * sizeof *now.c);
    next.c = malloc(batch * sizeof *next.c);
    tforge_observation *told = malloc(batch * sizeof *told);
    int rc = now.points && next.points && now.c && next.c && told
                 ? 0
                 : tforge_error_set(TFORGE_ENOMEM, "out of memory");
    l->search_start = tforge_clock_s();
    while (!rc && n < o->budget &&
           (o->time_limit_s <= 0 || n == 0 || tforge_clock_s() - l->search_start < o->time_limit_s)) {
        if (o->patience && l->since_incumbent >= o->patience) {
            int grown = 0, go_on = 0;
            if (!o->grow || (rc = grow(l, o->budget - n, &grown, &go_on)) || !(grown || go_on))
                break;
            if (grown && proposed > n) { /* the batch proposed ahead was the old space's */
                forget(now.c, now.got);
                now.got = 0;
                proposed = n;
            }
        }
        if ((l->out->sol_stopped = at_speed_of_light(l)))
            break;
        size_t before = l->out->n_evals;
        if (proposed == n) { /* nothing proposed ahead */
            uint32_t want = o->budget - n < batch ? o->budget - n : batch;
            if ((rc = propose_batch(l, want, &now, NULL, before)))
                break;
            proposed += now.got;
        }
        if (now.got == 0) { /* the strategy has nothing left: a stall too */
            int grown = 0, go_on = 0;
            if (o->grow && !(rc = grow(l, o->budget - n, &grown, &go_on)) && grown)
                continue;
            break;
        }
        if (o->lookahead && proposed < o->budget) {
            uint32_t want = o->budget - proposed < batch ? o->budget - proposed : batch;
            if ((rc = propose_batch(l, want, &next, &now, before + now.got)))
                break;
            proposed += next.got;
        }
        rc = evaluate(l, now.c, now.got, 0);
        forget(now.c, now.got);
        if (rc)
            break;
        for (uint32_t i = 0; i < now.got; i++)
            told[i] = observe(now.c[i].point, &l->out->evals[before + i].m);
        follow_lead(l, before, now.companions);
        if ((rc = tell(l, told, now.got)) || (rc = steer(l, before)))
            break;
        n += now.got;
        progress(l, n, o->budget);
        if (proposed > n) { /* the batch proposed ahead is next */
            proposal t = now;
            now = next;
            next = t;
        }
    }
    if (o->progress)
        fputc('\n', stderr);
    if (now.c && next.c) { /* what an error left identified and unevaluated */
        forget(now.c, now.got);
        forget(next.c, next.got);
    }
    free(now.points);
    free(next.points);
    free(now.c);
    free(next.c);
    free(told);
    return rc;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The top candidates by value, best first, into `pick`; how many. */
static size_t top_candidates(const tforge_loop_outcome *out, long *pick, size_t top)
{
    size_t k = 0;
    for (size_t rank = 0; rank < top; rank++) {
        long best = -1;
        for (size_t i = 0; i < out->n_evals; i++) {
            const tforge_measurement *m = &out->evals[i].m;
            int taken = 0;
            for (size_t j = 0; j < k; j++)
                taken |= pick[j] == (long)i;
            if (!out->evals[i].baseline && m->status == TFORGE_STATUS_OK && !isnan(m->value) &&
                !taken && (best < 0 || m->value < out->evals[best].m.value))
                best = (long)i;
        }
        if (best >= 0)
            pick[k++] = best;
    }
    return k;
}

/* Re-times the top candidates and the best baseline in interleaved rounds, so that drift of the
 * clock or the machine hits them all alike, each round starting one entry later (so that no
 * entry always follows the same one), and names the winner by the medians (the baseline when no
 * candidate is faster). */
static int final_choice(loop *l)
{
    tforge_loop_outcome *out = l->out;
    enum { MAX_TOP = 16 };
    long pick[MAX_TOP + 1];
    size_t k = top_candidates(out, pick, l->o->final_top < MAX_TOP ? l->o->final_top : MAX_TOP);
    out->best = k ? pick[0] : -1;
    out->best_ms = k ? out->evals[pick[0]].m.value : NAN;
    out->baseline_ms = out->baseline >= 0 ? out->evals[out->baseline].m.value : NAN;
    uint32_t rounds = l->o->final_rounds;
    if (k == 0 || rounds == 0)
        return 0;
    size_t n_cand = k;
    if (out->baseline >= 0 && !isnan(out->baseline_ms))
        pick[k++] = out->baseline;
    double *times = malloc((size_t)k * rounds * sizeof *times);
    if (!times)
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    int rc = 0;
    for (uint32_t r = 0; !rc && r < rounds; r++)
        for (size_t i = 0; !rc && i < k; i++) {
            size_t c = (i + r) % k;
            const tforge_loop_eval *e = &out->evals[pick[c]];
            tforge_candidate candidate = {.point = e->point, .config = e->config,
                                          .source = e->source};
            tforge_measurement again;
            rc = tforge_backend_retime(l->backend, &candidate, l->o->seed * 1000003u + r * 31u + c,
                                       &again);
            times[c * rounds + r] = again.status == TFORGE_STATUS_OK ? again.value : NAN;
        }
    if (rc) {
        free(times);
        return tforge_error_prefix("the final re-timing failed");
    }
    double best = NAN;
    for (size_t c = 0; c < k; c++) {
        double *t = times + c * rounds;
        qsort(t, rounds, sizeof *t, compare_doubles); /* NAN sorts last */
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
    /* no candidate beat the baseline in the re-timing: the baseline stays the winner, so a tune
     * never names anything slower than what it started from */
    if (out->baseline >= 0 && !isnan(out->baseline_ms) && !(best < out->baseline_ms)) {
        out->best = out->baseline;
        out->best_ms = out->baseline_ms;
    }
    free(times);
    return 0;
}

int tforge_loop_run(tforge_loop_outcome *out, const tforge_registry *registry,
                    const tforge_space *space, tforge_backend *backend,
                    const tforge_loop_options *o)
{
    memset(out, 0, sizeof *out);
    out->best = out->baseline = -1;
    if (o->version != TFORGE_LOOP_OPTIONS_VERSION)
        return tforge_error_set(TFORGE_EINPUT, "loop: options of version %u, expected %u",
                                o->version, TFORGE_LOOP_OPTIONS_VERSION);
    loop l = {.space = space, .registry = registry, .backend = backend, .o = o, .out = out,
              .dims = tforge_space_dims(space), .start = tforge_clock_s(), .best = NAN,
              .best_noise = 0.0, .best_plain = NAN, .incumbent = -1, .lead = 1.0};
    l.seen.dims = l.dims;
    int rc = open_strategies(&l, o->budget);
    if (!rc)
        rc = baselines(&l);
    if (!rc)
        rc = candidates_loop(&l);
    double final_start = tforge_clock_s();
    if (!rc)
        rc = final_choice(&l);
    out->split.final_s = tforge_clock_s() - final_start;
    out->speedup = out->baseline_ms / out->best_ms;
    out->restarts = tforge_backend_restarts(backend);
    out->seconds = tforge_clock_s() - l.start;
    out->run_id = o->record ? o->record->run_id : 0;
    tforge_strategy_close(l.strategy);
    tforge_strategy_close(l.companion);
    free(l.first);
    free(l.seen.slots);
    free(l.seen.used);
    return rc;
}
