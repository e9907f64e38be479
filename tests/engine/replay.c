/* The replay backend and the strategy lab, on a space recorded on an H200 (in the repository). */
#include "lab.h"
#include "backend.h"

#include <sqlite3.h>
#include <unistd.h>
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
    for (uint64_t i = 0; i < tforge_space_count(space); i++) {
        tforge_measurement m;
        tforge_measurement_init(&m);
        tforge_replay_answer(&m, f->replay, i, NULL);
        const tforge_recording_entry *e = tforge_replay_entry(f->replay, i);
        assert_int_equal(m.status, e->status);
        if (e->status == TFORGE_STATUS_OK)
            assert_true(m.value == e->time);
        assert_true(m.wall_ms >= e->compile_time);
        assert_int_equal(tforge_replay_index_of_levels(f->replay, e->levels), i);
    }
    /* noise: every value drawn is one of the recorded runs */
    tforge_rng rng;
    tforge_rng_seed(&rng, 3);
    const tforge_recording_entry *e = tforge_replay_entry(f->replay, 7);
    for (int k = 0; k < 50; k++) {
        tforge_measurement m;
        tforge_replay_answer(&m, f->replay, 7, &rng);
        int found = 0;
        for (uint32_t t = 0; t < e->n_times; t++)
            found |= m.value == e->times[t];
        assert_true(found);
    }
    /* a point of the raw product that was never recorded (matmul: 960 raw, 768 recorded) is
     * refused by the replay backend, by name */
    tforge_level point[16];
    for (uint32_t d = 0; d < tforge_space_dims(space); d++)
        point[d] = (tforge_level)(tforge_space_levels(space, d) - 1);
    assert_int_equal(tforge_space_index_of(space, point), TFORGE_NO_INDEX);
    tforge_backend_args args = TFORGE_BACKEND_ARGS_INIT;
    args.space = space;
    args.recording = f->rec;
    tforge_backend backend;
    assert_int_equal(tforge_backend_open(&backend, &tforge_backend_replay, &args), 0);
    tforge_candidate c = {.point = point};
    tforge_measurement m;
    assert_int_equal(tforge_backend_evaluate(&backend, &c, 1, &m), TFORGE_ENOTFOUND);
    assert_non_null(strstr(tforge_error_last()->message, "is not in the recording"));
    tforge_space_point(point, space, 7);
    assert_int_equal(tforge_backend_evaluate(&backend, &c, 1, &m), 0);
    assert_true(m.status != TFORGE_STATUS_OK || m.value == e->time);
    tforge_backend_close(&backend);
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

static void sql(const char *path, const char *statement)
{
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, statement, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
}

static void run_stored(double *best, const fixture *f, tforge_store *store,
                       tforge_lab_run_options *o, int expected)
{
    uint32_t n;
    o->store = store;
    o->source = "matmul";
    o->settings_json = "{}";
    int rc = tforge_lab_run(best, NULL, &n, f->reg, f->replay, o);
    if (rc != expected)
        fail_msg("lab run: %d (%s)", rc, tforge_error_last()->message);
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

    char path[] = "/tmp/tforge-lab-XXXXXX.db";
    close(mkstemps(path, 3));
    unlink(path);
    tforge_store *store;
    assert_int_equal(tforge_store_open(&store, path), 0);
    double stored[B], resumed[B];
    run_stored(stored, f, store, &o, 0);
    assert_memory_equal(stored, whole, sizeof whole);
    tforge_store_close(store);
    /* killed after CUT evaluations: the rest is gone */
    char cut[128];
    snprintf(cut, sizeof cut, "DELETE FROM measurements WHERE seq > %d", CUT);
    sql(path, cut);
    assert_int_equal(tforge_store_open(&store, path), 0);
    run_stored(resumed, f, store, &o, 0);
    assert_memory_equal(resumed, whole, sizeof whole);
    int64_t count;
    assert_int_equal(tforge_store_count(&count, store, 1), 0);
    assert_int_equal(count, B); /* the missing ones only, in the same run */
    tforge_store_close(store);

    /* a finished run is not driven again: its traces come from the store (as a stored value
     * changed behind its back shows) */
    double finished[B];
    sql(path, "UPDATE measurements SET median = 1e-9 WHERE seq = 1");
    assert_int_equal(tforge_store_open(&store, path), 0);
    run_stored(finished, f, store, &o, 0);
    assert_true(finished[0] == 1e-9 && finished[B - 1] == 1e-9);
    tforge_store_close(store);

    /* the stored history says the strategy proposed something else: refused */
    sql(path, cut);
    sql(path, "UPDATE measurements SET configuration_id = (SELECT configuration_id FROM "
              "measurements WHERE seq = 5) WHERE seq = 4");
    assert_int_equal(tforge_store_open(&store, path), 0);
    run_stored(resumed, f, store, &o, TFORGE_EINPUT);
    assert_non_null(strstr(tforge_error_last()->message, "settings differ"));
    tforge_store_close(store);
    unlink(path);
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
