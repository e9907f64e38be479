/* What keeps forge's steer from costing evaluations (issue 36): the prior is handed only while
 * the measurements bear it out beyond chance (tforge_forge_borne_out, check_prior), and the rule moves do
 * not propose again a favoured level already measured next to the incumbent (rules' refute). */
#include "forge.h"
#include "loop.h"
#include "strategy.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

extern const tforge_plugin_module tforge_static_rules;
extern const tforge_plugin_module tforge_static_bottleneck;

enum { SIDE = 6, LEVELS = 2 * SIDE };

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
        tforge_registry_add_static(f.reg, &tforge_static_rules, "builtin:rules") ||
        tforge_registry_add_static(f.reg, &tforge_static_bottleneck, "builtin:bottleneck"))
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

/* A prior that favours BLOCK_M's level `level` alone. */
static void favour(double *w, uint32_t level)
{
    memset(w, 0, LEVELS * sizeof *w);
    w[level] = 1.0;
}

/* Three measured points, (0, 0) 3 ms, (1, 0) 2 ms, (2, 0) 1 ms: larger BLOCK_M is faster. */
static void measured(tforge_loop_outcome *out, tforge_level points[3][2])
{
    memset(out, 0, sizeof *out);
    static tforge_loop_eval evals[3];
    memset(evals, 0, sizeof evals);
    for (int i = 0; i < 3; i++) {
        points[i][0] = (tforge_level)i;
        points[i][1] = 0;
        evals[i].point = points[i];
        tforge_measurement_init(&evals[i].m);
        evals[i].m.status = TFORGE_STATUS_OK;
        evals[i].m.value = 3.0 - i;
    }
    out->evals = evals;
    out->n_evals = 3;
}

static void agreement_ranks_the_prior_against_the_measurements(void **state)
{
    fixture *f = *state;
    tforge_backend none = {0};
    tforge_forge_options fo = TFORGE_FORGE_OPTIONS_INIT;
    tforge_forge *forge;
    assert_int_equal(tforge_forge_open(&forge, f->reg, f->space, &none, &fo), 0);
    assert_false(fo.check_prior);
    tforge_forge_options_for(&fo, "forge");
    assert_true(fo.check_prior);
    tforge_forge_options_for(&fo, "rules");
    assert_false(fo.check_prior);
    tforge_loop_outcome out;
    tforge_level points[3][2];
    measured(&out, points);
    double w[LEVELS];
    favour(w, 2); /* the fastest point's level: every pair it separates, ranked right */
    assert_true(tforge_forge_agreement(forge, w, &out) == 1.0);
    favour(w, 0); /* the slowest's: wrong */
    assert_true(tforge_forge_agreement(forge, w, &out) == -1.0);
    favour(w, 5); /* a level not measured: no pair told apart, no evidence */
    assert_true(tforge_forge_agreement(forge, w, &out) == 0.0);
    out.evals[2].m.status = TFORGE_STATUS_RUNTIME; /* failures carry no value */
    favour(w, 2);
    assert_true(tforge_forge_agreement(forge, w, &out) == 0.0);
    tforge_forge_free(forge);
}

/* Borne out beyond chance: the agreement must exceed 1.645 standard deviations of Kendall's tau
 * between unrelated rankings (chance's one-sided 5%). Four points ranked right (1 > 0.81) are;
 * three are not (1 < 1.05; one sd, 0.64, let them steer before), nor two (one pair); nine
 * points ranked right but for 9 of their 36 pairs (agreement 0.5 > 0.44) are; nine with 11
 * pairs wrong (0.39, above one sd, 0.27: handed before) are not. */
static void a_prior_agreeing_by_chance_is_not_borne_out(void **state)
{
    fixture *f = *state;
    tforge_backend none = {0};
    tforge_forge_options fo = TFORGE_FORGE_OPTIONS_INIT;
    tforge_forge *forge;
    assert_int_equal(tforge_forge_open(&forge, f->reg, f->space, &none, &fo), 0);
    tforge_loop_outcome out;
    tforge_level points[3][2];
    measured(&out, points);
    double w[LEVELS];
    favour(w, 2);
    assert_true(tforge_forge_agreement(forge, w, &out) == 1.0);
    assert_false(tforge_forge_borne_out(forge, w, &out));
    /* a fourth point, (3, 0) at 0.5 ms: favouring its level ranks its three pairs right */
    static tforge_loop_eval four[4];
    tforge_level fourth[2] = {3, 0};
    memcpy(four, out.evals, 3 * sizeof *four);
    four[3] = four[2];
    four[3].point = fourth;
    four[3].m.value = 0.5;
    tforge_loop_eval *three = out.evals;
    out.evals = four;
    out.n_evals = 4;
    favour(w, 3);
    assert_true(tforge_forge_agreement(forge, w, &out) == 1.0);
    assert_true(tforge_forge_borne_out(forge, w, &out));
    out.evals = three;
    out.n_evals = 2; /* (0, 0) and (1, 0): one pair, ranked right by favouring level 1 */
    favour(w, 1);
    assert_true(tforge_forge_agreement(forge, w, &out) == 1.0);
    assert_false(tforge_forge_borne_out(forge, w, &out));
    /* nine points, (0, 0) ... (0, 5), (1, 0) ... (1, 2), the prior's weight 6 BLOCK_M + BLOCK_N:
     * each its own; the values by weight, highest first, a permutation with `wrong` inversions */
    static const double values[2][9] = {{1, 2, 3, 4, 8, 9, 7, 6, 5}, {1, 2, 3, 5, 9, 8, 7, 6, 4}};
    static const int wrong[2] = {9, 11};
    static tforge_loop_eval evals[9];
    static tforge_level at[9][2];
    for (uint32_t l = 0; l < SIDE; l++) {
        w[l] = 6.0 * l;
        w[SIDE + l] = l;
    }
    for (int k = 0; k < 2; k++) {
        memset(evals, 0, sizeof evals);
        for (int i = 0; i < 9; i++) {
            at[i][0] = (tforge_level)(i / 6);
            at[i][1] = (tforge_level)(i % 6);
            evals[i].point = at[i];
            tforge_measurement_init(&evals[i].m);
            evals[i].m.status = TFORGE_STATUS_OK;
            evals[i].m.value = values[k][8 - i]; /* point 8 weighs most */
        }
        out.evals = evals;
        out.n_evals = 9;
        assert_true(fabs(tforge_forge_agreement(forge, w, &out) - (36.0 - 2 * wrong[k]) / 36) <
                    1e-12);
        assert_int_equal(tforge_forge_borne_out(forge, w, &out), k == 0);
    }
    tforge_forge_free(forge);
}

/* rules with walk=0 at the incumbent (2, 3), told that (3, 3), BLOCK_M one level up, was slower:
 * with a prior for BLOCK_M level 3, its remaining favoured neighbours are (3, 2) and (3, 4), the
 * same move beside another step. refute=0 proposes one of them; refute=1 neither. */
static void refuted_moves_are_not_proposed_again(void **state)
{
    fixture *f = *state;
    const tforge_space_view view = tforge_space_get_view(f->space);
    tforge_level incumbent[2] = {2, 3}, tried[2] = {3, 3};
    const tforge_observation told[2] = {{incumbent, TFORGE_STATUS_OK, 1.0, 0.0},
                                        {tried, TFORGE_STATUS_OK, 2.0, 0.0}};
    double w[LEVELS];
    favour(w, 3);
    for (int refute = 0; refute <= 1; refute++) {
        const char *const options[] = {"walk=0", refute ? "refute=1" : "refute=0", NULL};
        tforge_strategy *rules;
        assert_int_equal(tforge_strategy_open(&rules, f->reg, "rules", &view, 1, 20, options), 0);
        assert_int_equal(tforge_strategy_set_level_prior(rules, w, LEVELS), 0);
        assert_int_equal(tforge_strategy_tell(rules, told, 2), 0);
        tforge_level got[2 * 2];
        uint32_t n = 0;
        assert_int_equal(tforge_strategy_ask(rules, 1, got, &n), 0);
        if (refute) {
            assert_int_equal(n, 0);
        } else {
            assert_int_equal(n, 1);
            assert_int_equal(got[0], 3);
            assert_true(got[1] == 2 || got[1] == 4);
        }
        tforge_strategy_close(rules);
    }
}

/* The same before anything but the incumbent is told: refute=0 fills a batch of three with
 * (3, 3), (3, 2) and (3, 4), one move three times; refute=1 asks it once. */
static void one_variant_of_a_move_a_batch(void **state)
{
    fixture *f = *state;
    const tforge_space_view view = tforge_space_get_view(f->space);
    tforge_level incumbent[2] = {2, 3};
    const tforge_observation told = {incumbent, TFORGE_STATUS_OK, 1.0, 0.0};
    double w[LEVELS];
    favour(w, 3);
    for (int refute = 0; refute <= 1; refute++) {
        const char *const options[] = {"walk=0", refute ? "refute=1" : "refute=0", NULL};
        tforge_strategy *rules;
        assert_int_equal(tforge_strategy_open(&rules, f->reg, "rules", &view, 1, 20, options), 0);
        assert_int_equal(tforge_strategy_set_level_prior(rules, w, LEVELS), 0);
        assert_int_equal(tforge_strategy_tell(rules, &told, 1), 0);
        tforge_level got[3 * 2];
        uint32_t n = 0;
        assert_int_equal(tforge_strategy_ask(rules, 3, got, &n), 0);
        assert_int_equal(n, refute ? 1 : 3);
        for (uint32_t i = 0; i < n; i++)
            assert_int_equal(got[2 * i], 3);
        tforge_strategy_close(rules);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(agreement_ranks_the_prior_against_the_measurements),
        cmocka_unit_test(a_prior_agreeing_by_chance_is_not_borne_out),
        cmocka_unit_test(refuted_moves_are_not_proposed_again),
        cmocka_unit_test(one_variant_of_a_move_a_batch),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
