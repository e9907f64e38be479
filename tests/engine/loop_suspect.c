/* A candidate timed faster than its speed-of-light bound (tforge_loop_bound, issue 37 item 4),
 * with a fake timed backend over a 6 x 6 bowl whose floor (1 ms) lies above every bound
 * (0.5 ms): one point always answers an impossible 0.1 ms (a kernel that skipped its work), it
 * is re-timed once, failed as suspect with both times and the bound, never the incumbent nor the
 * winner, counted; another answers 0.2 ms only the first time (a fluke): its re-timed value is
 * kept. A run resumed from the store reads the mark back. */
#include "backend.h"
#include "loop.h"
#include "store.h"
#include "tforge/error.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

extern const tforge_plugin_module tforge_static_exhaustive;

enum { SIDE = 6, POINTS = SIDE * SIDE };

static unsigned fluke_calls; /* times the fluke's point was timed */

/* The bowl, but (4, 4) always 0.1 ms, (0, 0) 0.2 ms the first time it is timed. */
static double fake_ms(const tforge_level *p)
{
    if (p[0] == 4 && p[1] == 4)
        return 0.1;
    if (p[0] == 0 && p[1] == 0 && fluke_calls++ == 0)
        return 0.2;
    return 1.0 + 0.25 * ((p[0] - 2.0) * (p[0] - 2.0) + (p[1] - 3.0) * (p[1] - 3.0));
}

#include "support/fake_timed.h"
#include "support/fake_loop.h"
#include "support/scratch.h"

static double half_ms(void *context, const tforge_candidate *c)
{
    (void)context;
    (void)c;
    return 0.5;
}

static tforge_space *bowl(void)
{
    double values[SIDE];
    for (int i = 0; i < SIDE; i++)
        values[i] = 16 << i;
    tforge_space *s = NULL;
    if (tforge_space_new(&s) || tforge_space_add_values(s, "BLOCK_M", values, SIDE) ||
        tforge_space_add_values(s, "BLOCK_N", values, SIDE) || tforge_space_build(s, NULL))
        fail_msg("space: %s", tforge_error_last()->message);
    return s;
}

static const tforge_loop_eval *at(const tforge_loop_outcome *out, tforge_level m, tforge_level n)
{
    for (size_t i = 0; i < out->n_evals; i++)
        if (out->evals[i].point && out->evals[i].point[0] == m && out->evals[i].point[1] == n &&
            !out->evals[i].baseline)
            return &out->evals[i];
    fail_msg("no evaluation at (%u, %u)", m, n);
    return NULL;
}

static void impossible_times_are_never_trusted(void **state)
{
    (void)state;
    tforge_registry *reg = NULL;
    assert_int_equal(tforge_registry_new(&reg), 0);
    assert_int_equal(tforge_registry_add_static(reg, &tforge_static_exhaustive,
                                                "builtin:exhaustive"), 0);
    tforge_space *space = bowl();
    char dir[64], db[96];
    assert_int_equal(make_scratch(dir, sizeof dir, "suspect"), 0);
    snprintf(db, sizeof db, "%s/tforge.db", dir);
    tforge_store *store = NULL;
    assert_int_equal(tforge_store_open(&store, db), 0);
    tforge_store_run like = {.source = "bowl", .strategy = "exhaustive", .settings_json = "{}",
                             .seed = 1, .budget = POINTS};
    int64_t run_id;
    tforge_run_history history = {0};
    assert_int_equal(tforge_run_open(&run_id, &history, store, &like, TFORGE_RUN_RESUME), 0);
    tforge_run_record record = {store, run_id, NULL, NULL, NULL};

    static tforge_level corner[2] = {5, 0};
    const tforge_candidate baseline = {.point = corner, .config = "{\"baseline\": 1}"};
    tforge_loop_bound bound = {NULL, half_ms, 0.05, 0};
    tforge_loop_options o = TFORGE_LOOP_OPTIONS_INIT;
    o.strategy = "exhaustive";
    o.budget = POINTS;
    o.batch = 4;
    o.final_rounds = 3;
    o.bound = &bound;
    o.baselines = &baseline;
    o.n_baselines = 1;
    o.record = &record;
    tforge_loop_outcome out;
    fluke_calls = 0;
    run(&out, reg, space, &o);

    const tforge_loop_eval *s = at(&out, 4, 4);
    assert_int_equal(s->m.status, TFORGE_STATUS_WRONG);
    assert_true(s->suspect);
    assert_false(s->incumbent);
    assert_true(isnan(s->m.value));
    assert_non_null(strstr(s->m.message, "suspect: faster than its speed-of-light bound 0.5: "
                                         "measured 0.1, re-timed 0.1"));
    assert_float_equal(tforge_measurement_metric(&s->m, TFORGE_LOOP_SUSPECT_MS), 0.1, 1e-12);
    assert_float_equal(tforge_measurement_metric(&s->m, TFORGE_LOOP_SUSPECT_RETIMED_MS), 0.1,
                       1e-12);
    assert_float_equal(tforge_measurement_metric(&s->m, TFORGE_LOOP_SUSPECT_BOUND), 0.5, 1e-12);
    assert_int_equal(out.n_suspect, 1);
    const tforge_loop_eval *fluke = at(&out, 0, 0); /* re-timed: the bowl's 4.25 ms kept */
    assert_int_equal(fluke->m.status, TFORGE_STATUS_OK);
    assert_false(fluke->suspect);
    assert_float_equal(fluke->m.value, 4.25, 1e-12);
    /* the winner is the bowl's floor, not the impossible point */
    assert_int_equal(out.evals[out.best].point[0], 2);
    assert_int_equal(out.evals[out.best].point[1], 3);
    for (size_t i = 0; i < out.n_evals; i++)
        assert_false(out.evals[i].incumbent && out.evals[i].m.value < 0.5);
    size_t n_evals = out.n_evals;
    tforge_loop_outcome_dispose(&out);
    tforge_run_history_dispose(&history);

    /* resumed: every evaluation from the store, the mark read back from its metrics */
    assert_int_equal(tforge_run_open(&run_id, &history, store, &like, TFORGE_RUN_RESUME), 0);
    assert_int_equal(history.n, n_evals);
    o.history = &history;
    fluke_calls = 0;
    run(&out, reg, space, &o);
    assert_int_equal(out.n_resumed, n_evals);
    s = at(&out, 4, 4);
    assert_true(s->resumed);
    assert_true(s->suspect);
    assert_int_equal(out.n_suspect, 1);
    assert_int_equal(out.evals[out.best].point[0], 2);
    tforge_loop_outcome_dispose(&out);
    tforge_run_history_dispose(&history);

    tforge_store_close(store);
    assert_int_equal(remove_scratch(dir), 0);
    tforge_space_free(space);
    tforge_registry_free(reg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(impossible_times_are_never_trusted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
