/* The loop's space grown during a run (tforge_loop_grow), as a model's accepted proposal grows
 * the task's `variant`: with a fake backend whose times depend on the variant's level, the
 * search that stalls over the file's level gains a level, which is first measured at the
 * incumbent's knobs; its strategy starts again over the new space told every earlier evaluation
 * (none evaluated again), and the proposal's points win;
 * a run resumed from the first one's evaluations grows at the same place and proposes the same
 * points, evaluating none. */
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

enum { BLOCKS = 6 };

/* The file's level: 2 ms at BLOCK level 1, slower around it; the proposal (level 1): half. */
static double fake_ms(const tforge_level *p)
{
    double file = 2.0 + 0.1 * fabs(p[0] - 1.0);
    return p[1] == 1 ? file / 2 : file;
}

#include "support/fake_timed.h"
#include "support/fake_loop.h"

/* BLOCK (BLOCKS values) and `variant` with `levels` levels: "file", then "p1". */
static tforge_space *space_of(uint32_t levels)
{
    static const char *labels[] = {"file", "p1"};
    double values[BLOCKS];
    for (int i = 0; i < BLOCKS; i++)
        values[i] = 16 << i;
    tforge_space *s = NULL;
    if (tforge_space_new(&s) || tforge_space_add_values(s, "BLOCK", values, BLOCKS) ||
        tforge_space_add_categorical(s, "variant", labels, levels) || tforge_space_build(s, NULL))
        fail_msg("space: %s", tforge_error_last()->message);
    return s;
}

/* The grow hook: the space with the proposal, once; then no more. */
typedef struct grower {
    tforge_space *grown;
    unsigned asked;
    size_t asked_at;   /* the evaluations there were when it was first asked */
    long incumbent;    /* the incumbent it was first told */
} grower;

static int grow_once(void *context, const tforge_loop_outcome *out, long incumbent,
                     const tforge_space **space, int *go_on)
{
    (void)go_on;
    grower *g = context;
    if (g->asked++ == 0) {
        g->asked_at = out->n_evals;
        g->incumbent = incumbent;
        *space = g->grown;
    }
    return 0;
}

static char *key_of(const tforge_space *space, const tforge_loop_eval *e)
{
    char *key = NULL;
    assert_int_equal(tforge_loop_key(&key, NULL, space, e->point, e->config, NULL), 0);
    return key;
}

static void a_stalled_search_grows_and_the_proposal_wins(void **state)
{
    (void)state;
    tforge_registry *reg = NULL;
    assert_int_equal(tforge_registry_new(&reg), 0);
    assert_int_equal(tforge_registry_add_static(reg, &tforge_static_exhaustive,
                                                "builtin:exhaustive"), 0);
    tforge_space *file_only = space_of(1);
    tforge_loop_options o = TFORGE_LOOP_OPTIONS_INIT;
    o.strategy = "exhaustive";
    o.budget = 2 * BLOCKS;
    o.batch = 1;
    o.final_rounds = 0;
    o.patience = 3;

    /* without the hook, patience ends the search over the file: BLOCK 0, 1 (the incumbent from
     * then on), 2, 3, 4 */
    tforge_loop_outcome plain;
    run(&plain, reg, file_only, &o);
    assert_int_equal(plain.n_evals, 5);
    assert_int_equal(plain.evals[plain.best].point[1], 0);
    tforge_loop_outcome_dispose(&plain);

    grower g = {.grown = space_of(2)};
    tforge_loop_grow hook = {&g, grow_once};
    o.grow = &hook;
    tforge_loop_outcome out;
    run(&out, reg, file_only, &o);
    assert_int_equal(g.asked_at, 5); /* asked where the plain run stopped */
    assert_int_equal(g.incumbent, 1);
    assert_int_equal(g.asked, 2); /* and again at the next stall, which ends the search */
    /* the new level first at the incumbent's knobs (BLOCK 1), then the strategy over the grown
     * space proposed only the proposal's points it had not been told, BLOCK 0 first, until
     * BLOCK 1 there had been the incumbent for 3 more */
    static const tforge_level after[] = {1, 0, 2, 3};
    assert_int_equal(out.n_evals, 5 + 4);
    assert_int_equal(evaluated, out.n_evals); /* none evaluated twice */
    for (size_t i = 5; i < out.n_evals; i++) {
        assert_int_equal(out.evals[i].point[0], after[i - 5]);
        assert_int_equal(out.evals[i].point[1], 1);
    }
    assert_int_equal(out.best, 5);
    assert_int_equal(out.evals[out.best].point[0], 1);
    assert_int_equal(out.evals[out.best].point[1], 1);
    assert_float_equal(out.best_ms, 1.0, 1e-12);

    /* resumed from those evaluations (keys of the grown space: the file's are the same in
     * both), growing at the same place, it proposes the same points and evaluates none */
    tforge_run_history history = {0};
    history.n = history.cap = out.n_evals;
    history.keys = calloc(out.n_evals, sizeof *history.keys);
    history.measurements = calloc(out.n_evals, sizeof *history.measurements);
    assert_non_null(history.keys);
    assert_non_null(history.measurements);
    for (size_t i = 0; i < out.n_evals; i++) {
        history.keys[i] = key_of(g.grown, &out.evals[i]);
        history.measurements[i] = out.evals[i].m;
    }
    grower again = {.grown = g.grown};
    hook.context = &again;
    o.history = &history;
    tforge_loop_outcome resumed;
    run(&resumed, reg, file_only, &o);
    assert_int_equal(evaluated, 0);
    assert_int_equal(again.asked_at, 5);
    assert_int_equal(resumed.n_evals, out.n_evals);
    assert_int_equal(resumed.n_resumed, out.n_evals);
    for (size_t i = 0; i < out.n_evals; i++) {
        char *key = key_of(g.grown, &resumed.evals[i]);
        assert_string_equal(key, history.keys[i]);
        free(key);
    }
    assert_int_equal(resumed.best, out.best);

    tforge_run_history_dispose(&history);
    tforge_loop_outcome_dispose(&resumed);
    tforge_loop_outcome_dispose(&out);
    tforge_space_free(g.grown);
    tforge_space_free(file_only);
    tforge_registry_free(reg);
}

/* A hook that answers a space of other dimensions ends the loop with an error naming both. */
static void a_space_of_other_dimensions_is_refused(void **state)
{
    (void)state;
    tforge_registry *reg = NULL;
    assert_int_equal(tforge_registry_new(&reg), 0);
    assert_int_equal(tforge_registry_add_static(reg, &tforge_static_exhaustive,
                                                "builtin:exhaustive"), 0);
    tforge_space *file_only = space_of(1), *other = NULL;
    double values[2] = {1, 2};
    assert_int_equal(tforge_space_new(&other), 0);
    assert_int_equal(tforge_space_add_values(other, "X", values, 2), 0);
    assert_int_equal(tforge_space_build(other, NULL), 0);
    grower g = {.grown = other};
    tforge_loop_grow hook = {&g, grow_once};
    tforge_loop_options o = TFORGE_LOOP_OPTIONS_INIT;
    o.strategy = "exhaustive";
    o.budget = 2 * BLOCKS;
    o.final_rounds = 0;
    o.patience = 3;
    o.grow = &hook;
    tforge_backend backend;
    tforge_backend_args args = TFORGE_BACKEND_ARGS_INIT;
    args.space = file_only;
    assert_int_equal(tforge_backend_open(&backend, &fake_type, &args), 0);
    tforge_loop_outcome out;
    assert_int_equal(tforge_loop_run(&out, reg, file_only, &backend, &o), TFORGE_ERROR);
    assert_non_null(strstr(tforge_error_last()->message, "from 2 dimensions to 1"));
    tforge_backend_close(&backend);
    tforge_loop_outcome_dispose(&out);
    tforge_space_free(other);
    tforge_space_free(file_only);
    tforge_registry_free(reg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_stalled_search_grows_and_the_proposal_wins),
        cmocka_unit_test(a_space_of_other_dimensions_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
