/* The loop's speed-of-light bound (tforge_loop_bound), with a fake backend over a 6 x 6 bowl:
 * candidates whose bound cannot beat the incumbent are not run (refused by a constraint, with
 * both numbers, counted), baselines never are, and the search stops once the incumbent reaches
 * stop_percent of its bound. */
#include "backend.h"
#include "loop.h"
#include "tforge/error.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

extern const tforge_plugin_module tforge_static_exhaustive;

enum { SIDE = 6, POINTS = SIDE * SIDE };

/* A bowl with its floor at (2, 3): 1 ms there. */
static double fake_ms(const tforge_level *p)
{
    return 1.0 + 0.25 * ((p[0] - 2.0) * (p[0] - 2.0) + (p[1] - 3.0) * (p[1] - 3.0));
}

#include "support/fake_timed.h"
#include "support/fake_loop.h"

/* Row 5's bound is 10 ms, beyond every value of the bowl; the rest 0.5 ms, under all. */
static double row5_cannot_win(void *context, const tforge_candidate *c)
{
    (void)context;
    return c->point && c->point[0] == 5 ? 10.0 : 0.5;
}

/* Every candidate's bound 0.96 ms: the floor (1 ms) is at 96% of it. */
static double flat(void *context, const tforge_candidate *c)
{
    (void)context;
    (void)c;
    return 0.96;
}

typedef struct fixture {
    tforge_space *space;
    tforge_registry *reg;
} fixture;

static int setup(void **state)
{
    static fixture f;
    double values[SIDE];
    for (int i = 0; i < SIDE; i++)
        values[i] = 16 << i;
    if (tforge_space_new(&f.space) || tforge_space_add_values(f.space, "BLOCK_M", values, SIDE) ||
        tforge_space_add_values(f.space, "BLOCK_N", values, SIDE) ||
        tforge_space_build(f.space, NULL) || tforge_registry_new(&f.reg) ||
        tforge_registry_add_static(f.reg, &tforge_static_exhaustive, "builtin:exhaustive"))
        return -1;
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    tforge_registry_free(f->reg);
    tforge_space_free(f->space);
    return 0;
}

static tforge_loop_options exhaustive(const tforge_loop_bound *bound)
{
    tforge_loop_options o = TFORGE_LOOP_OPTIONS_INIT;
    o.strategy = "exhaustive";
    o.budget = POINTS;
    o.batch = 4;
    o.final_rounds = 0;
    o.bound = bound;
    return o;
}

static void what_cannot_win_is_not_run(void **state)
{
    fixture *f = *state;
    tforge_loop_bound bound = {NULL, row5_cannot_win, 0.05, 0};
    tforge_loop_options o = exhaustive(&bound);
    tforge_loop_outcome out;
    run(&out, f->reg, f->space, &o);
    assert_int_equal(out.n_evals, POINTS); /* every point proposed and told */
    assert_int_equal(out.n_pruned, SIDE);
    assert_int_equal(evaluated, POINTS - SIDE);
    for (size_t i = 0; i < out.n_evals; i++) {
        const tforge_loop_eval *e = &out.evals[i];
        assert_int_equal(e->pruned, e->point[0] == 5);
        assert_float_equal(e->lower, row5_cannot_win(NULL, &(tforge_candidate){.point = e->point}),
                           1e-12);
        if (e->pruned) {
            assert_int_equal(e->m.status, TFORGE_STATUS_CONSTRAINT);
            assert_non_null(strstr(e->m.message, "pruned: its speed-of-light bound 10"));
        } else {
            assert_int_equal(e->m.status, TFORGE_STATUS_OK);
        }
    }
    assert_int_equal(out.evals[out.best].point[0], 2); /* the optimum ran and won */
    assert_int_equal(out.evals[out.best].point[1], 3);
    assert_false(out.sol_stopped);
    tforge_loop_outcome_dispose(&out);

    /* no bound: everything runs */
    o.bound = NULL;
    run(&out, f->reg, f->space, &o);
    assert_int_equal(out.n_pruned, 0);
    assert_int_equal(evaluated, POINTS);
    assert_true(isnan(out.evals[0].lower));
    tforge_loop_outcome_dispose(&out);
}

/* A baseline whose bound cannot win still runs: it is what the user has. */
static void baselines_are_never_pruned(void **state)
{
    fixture *f = *state;
    tforge_level row5[2] = {5, 0}, floor[2] = {2, 3};
    tforge_candidate baselines[2] = {{.point = floor, .config = "{\"BLOCK_M\": 64}"},
                                     {.point = row5, .config = "{\"BLOCK_M\": 512}"}};
    tforge_loop_bound bound = {NULL, row5_cannot_win, 0.05, 0};
    tforge_loop_options o = exhaustive(&bound);
    o.baselines = baselines;
    o.n_baselines = 2;
    tforge_loop_outcome out;
    run(&out, f->reg, f->space, &o);
    assert_int_equal(out.evals[1].m.status, TFORGE_STATUS_OK);
    assert_false(out.evals[1].pruned);
    assert_int_equal(out.n_pruned, SIDE - 1); /* row 5 but the baseline's point */
    tforge_loop_outcome_dispose(&out);
}

/* In the exhaustive order the floor (2, 3) is the 16th point: at 96% of its bound, the search
 * stops after its batch (the 4th of 4); at 97% it never does. */
static void stops_at_the_speed_of_light(void **state)
{
    fixture *f = *state;
    tforge_loop_bound bound = {NULL, flat, 0.05, 95};
    tforge_loop_options o = exhaustive(&bound);
    tforge_loop_outcome out;
    run(&out, f->reg, f->space, &o);
    assert_true(out.sol_stopped);
    assert_int_equal(out.n_evals, 16);
    assert_int_equal(out.evals[out.best].point[0], 2);
    assert_int_equal(out.evals[out.best].point[1], 3);
    tforge_loop_outcome_dispose(&out);

    bound.stop_percent = 97;
    run(&out, f->reg, f->space, &o);
    assert_false(out.sol_stopped);
    assert_int_equal(out.n_evals, POINTS);
    tforge_loop_outcome_dispose(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(what_cannot_win_is_not_run),
        cmocka_unit_test(baselines_are_never_pruned),
        cmocka_unit_test(stops_at_the_speed_of_light),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
