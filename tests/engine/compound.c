/* Compound moves (issue 36, item 2) on a synthetic rewrite space (tests/fixtures/recording/
 * compound_matmul_synthetic.json.gz, made by experiments/compound/synthetic_matmul.py: a model,
 * not a measurement): its optimum needs two rewrites (TMA, persistent programs) and four knobs
 * together, and each of those six changes alone makes the knobs' winner slower. At tune's
 * settings forge, whose rule moves include the rewrites' compound moves, reaches it within
 * tune's budget in three runs of four at least, bo (and forge before them) in one of four at
 * most. */
#include "lab.h"
#include "recording.h"
#include "replay.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

extern const tforge_plugin_module tforge_static_bo;
extern const tforge_plugin_module tforge_static_rules;
extern const tforge_plugin_module tforge_static_bottleneck;

enum { BUDGET = BUDGET_, SEEDS = SEEDS_ };

/* How many of SEEDS runs of `strategy` (with `options`) come within 1% of `optimum` within
 * BUDGET: every such point has the optimum's two rewrites and four knobs (it differs in the
 * rewrites that change little). */
static int reached(const tforge_registry *reg, const tforge_replay *replay, const char *strategy,
                   const char *const *options, double optimum)
{
    int n = 0;
    for (uint64_t seed = 1; seed <= SEEDS; seed++) {
        double best[BUDGET];
        uint32_t evals;
        tforge_lab_run_options o = TFORGE_LAB_RUN_OPTIONS_INIT;
        o.strategy = strategy;
        o.options = options;
        o.seed = seed;
        o.budget = BUDGET;
        assert_int_equal(tforge_lab_run(best, NULL, &evals, reg, replay, &o), 0);
        uint32_t at = 0;
        while (at < evals && !(best[at] <= 1.01 * optimum))
            at++;
        n += at < evals;
    }
    return n;
}

static void compound_moves_reach_the_compound_optimum(void **state)
{
    (void)state;
    tforge_recording *rec;
    tforge_replay *replay;
    tforge_registry *reg;
    assert_int_equal(tforge_recording_read(&rec, SYNTHETIC), 0);
    assert_int_equal(tforge_replay_open(&replay, rec), 0);
    assert_int_equal(tforge_registry_new(&reg), 0);
    assert_int_equal(tforge_registry_add_static(reg, &tforge_static_bo, "builtin:bo"), 0);
    assert_int_equal(tforge_registry_add_static(reg, &tforge_static_rules, "builtin:rules"), 0);
    assert_int_equal(tforge_registry_add_static(reg, &tforge_static_bottleneck,
                                                "builtin:bottleneck"), 0);
    double optimum = INFINITY;
    for (size_t i = 0; i < rec->n_entries; i++)
        if (rec->entries[i].status == TFORGE_STATUS_OK)
            optimum = fmin(optimum, rec->entries[i].time);
    /* tune's settings: bo holds the rewrites (the space's last six dimensions) at level 0 in
     * its design and for the first half of the budget (session.c's hold_rewrites) */
    static const char *const tune[] = {"unchanged_tail=6", NULL};
    int forge = reached(reg, replay, "forge", tune, optimum);
    int bo = reached(reg, replay, "bo", tune, optimum);
    printf("within 1%% of the optimum in %d evaluations, of %d seeds: forge %d, bo %d\n", BUDGET,
           SEEDS, forge, bo);
    assert_true(4 * forge >= 3 * SEEDS);
    assert_true(4 * bo <= SEEDS);
    tforge_registry_free(reg);
    tforge_replay_free(replay);
    tforge_recording_free(rec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(compound_moves_reach_the_compound_optimum),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
