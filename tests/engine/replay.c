/* The replay backend and the strategy lab, on a space recorded on an H200 (in the repository). */
#include "lab.h"
#include "replay.h"
#include "tforge/error.h"
#include "tforge/log.h"
#include "tforge/score.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

extern const tforge_plugin_module tforge_static_random;
extern const tforge_plugin_module tforge_static_annealing;

typedef struct fixture {
    tforge_recording *rec;
    tforge_replay *replay;
    tforge_registry *reg;
} fixture;

static int setup(void **state)
{
    static fixture f;
    if (tforge_recording_read(&f.rec, RECORDED_SPACE) || tforge_replay_open(&f.replay, f.rec) ||
        tforge_registry_new(&f.reg) ||
        tforge_registry_add_static(f.reg, &tforge_static_random, "builtin:random") ||
        tforge_registry_add_static(f.reg, &tforge_static_annealing, "builtin:annealing"))
        return -1;
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    tforge_registry_free(f->reg);
    tforge_replay_free(f->replay);
    tforge_recording_free(f->rec);
    return 0;
}

static void answers_every_recorded_point_and_refuses_others(void **state)
{
    fixture *f = *state;
    const tforge_space *space = tforge_replay_space(f->replay);
    assert_int_equal(tforge_space_count(space), f->rec->n_entries);
    tforge_level point[16];
    for (uint64_t i = 0; i < tforge_space_count(space); i++) {
        assert_int_equal(tforge_space_point(point, space, i), 0);
        tforge_replay_result r;
        assert_int_equal(tforge_replay_evaluate(&r, f->replay, point, NULL), 0);
        const tforge_recording_entry *e = tforge_replay_entry(f->replay, i);
        assert_int_equal(r.status, e->status);
        if (e->status == TFORGE_STATUS_OK)
            assert_true(r.value == e->time);
        assert_true(r.charged_ms >= e->compile_time);
        assert_int_equal(tforge_replay_find_key(f->replay, tforge_replay_key(f->replay, i)), i);
    }
    /* noise: every value drawn is one of the recorded runs */
    tforge_rng rng;
    tforge_rng_seed(&rng, 3);
    assert_int_equal(tforge_space_point(point, space, 7), 0);
    const tforge_recording_entry *e = tforge_replay_entry(f->replay, 7);
    for (int k = 0; k < 50; k++) {
        tforge_replay_result r;
        assert_int_equal(tforge_replay_evaluate(&r, f->replay, point, &rng), 0);
        int found = 0;
        for (uint32_t t = 0; t < e->n_times; t++)
            found |= r.value == e->times[t];
        assert_true(found);
    }
    /* a point of the raw product that was never recorded (matmul: 960 raw, 768 recorded) */
    int refused = 0;
    for (uint32_t d = 0; d < tforge_space_dims(space); d++)
        point[d] = (tforge_level)(tforge_space_levels(space, d) - 1);
    tforge_replay_result r;
    if (tforge_space_index_of(space, point) == TFORGE_NO_INDEX) {
        assert_int_equal(tforge_replay_evaluate(&r, f->replay, point, NULL), TFORGE_ENOTFOUND);
        assert_non_null(strstr(tforge_error_last()->message, "is not in the recording"));
        refused = 1;
    }
    assert_true(refused);
    assert_int_equal(tforge_replay_find_key(f->replay, "no,such,key"), TFORGE_NO_INDEX);
}

/* Random search run through the lab against the exact expectation: at every budget the mean of
 * K seeds must lie within 5 standard errors of it (a false alarm below 1e-6 per budget under the
 * normal approximation; the budgets are few and correlated). */
static void random_search_matches_its_expectation(void **state)
{
    fixture *f = *state;
    enum { K = 300, B = 40 };
    double *best = malloc(sizeof(double) * K * B);
    for (int k = 0; k < K; k++) {
        tforge_lab_run_options o = TFORGE_LAB_RUN_OPTIONS_INIT;
        o.strategy = "random";
        o.seed = 1000 + (uint64_t)k;
        o.budget = B;
        uint32_t n;
        assert_int_equal(tforge_lab_run(best + k * B, NULL, &n, f->reg, f->replay, &o), 0);
        assert_int_equal(n, B);
    }
    double *values = malloc(f->rec->n_entries * sizeof *values);
    uint32_t *statuses = malloc(f->rec->n_entries * sizeof *statuses);
    for (size_t i = 0; i < f->rec->n_entries; i++) {
        values[i] = f->rec->entries[i].time;
        statuses[i] = f->rec->entries[i].status;
    }
    tforge_score_space space;
    assert_int_equal(tforge_score_space_init(&space, values, statuses, f->rec->n_entries), 0);
    double expected[B];
    assert_int_equal(tforge_score_random_curve(expected, &space, B), 0);
    for (int b = 0; b < B; b++) {
        double sum = 0, sq = 0;
        for (int k = 0; k < K; k++) {
            double v = isnan(best[k * B + b]) ? space.worst : best[k * B + b];
            sum += v;
            sq += v * v;
        }
        double mean = sum / K, sd = sqrt((sq - K * mean * mean) / (K - 1));
        double se = sd / sqrt(K);
        if (fabs(mean - expected[b]) > 5 * se + 1e-12)
            fail_msg("budget %d: mean %.6g, expected %.6g, 5 SE %.3g", b + 1, mean, expected[b],
                     5 * se);
    }
    tforge_score_space_dispose(&space);
    free(values);
    free(statuses);
    free(best);
}

typedef struct eval_log {
    tforge_lab_eval evals[64];
    uint32_t n, stop_at; /* the run is interrupted once n reaches stop_at */
} eval_log;

static int keep(void *context, uint32_t sequence, const tforge_lab_eval *e)
{
    eval_log *log = context;
    assert_int_equal(sequence, log->n);
    log->evals[log->n++] = *e;
    return log->n == log->stop_at ? TFORGE_ERROR : 0;
}

/* A run resumed from its first evaluations ends exactly as the run that was never interrupted,
 * evaluating only what was missing; a stored prefix the strategy would not propose is refused. */
static void resumed_runs_end_as_uninterrupted_ones(void **state)
{
    fixture *f = *state;
    enum { B = 60, CUT = 25 };
    tforge_lab_run_options o = TFORGE_LAB_RUN_OPTIONS_INIT;
    o.strategy = "annealing";
    o.seed = 11;
    o.budget = B;
    double whole[B], again[B];
    uint32_t n;
    assert_int_equal(tforge_lab_run(whole, NULL, &n, f->reg, f->replay, &o), 0);
    assert_int_equal(tforge_lab_run(again, NULL, &n, f->reg, f->replay, &o), 0);
    assert_memory_equal(whole, again, sizeof whole);

    eval_log first = {.stop_at = CUT}, rest = {0};
    o.sink = keep;
    o.sink_context = &first;
    double partial[B];
    assert_int_equal(tforge_lab_run(partial, NULL, &n, f->reg, f->replay, &o), TFORGE_ERROR);
    assert_int_equal(first.n, CUT);

    o.done = first.evals;
    o.n_done = first.n;
    o.sink_context = &rest;
    rest.n = CUT; /* the sink sees the sequence numbers of the whole run */
    double resumed[B];
    assert_int_equal(tforge_lab_run(resumed, NULL, &n, f->reg, f->replay, &o), 0);
    assert_int_equal(rest.n, B);
    assert_memory_equal(resumed, whole, sizeof whole);

    first.evals[3].index = first.evals[4].index;
    rest.n = CUT;
    assert_int_equal(tforge_lab_run(resumed, NULL, &n, f->reg, f->replay, &o), TFORGE_EINPUT);
    assert_non_null(strstr(tforge_error_last()->message, "settings differ"));
}

int main(void)
{
    tforge_log_set_level(TFORGE_LOG_ERROR);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(answers_every_recorded_point_and_refuses_others),
        cmocka_unit_test(random_search_matches_its_expectation),
        cmocka_unit_test(resumed_runs_end_as_uninterrupted_ones),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
