/* Level priors (set_level_prior, ABI 1.2) on a space recorded on an H200 (the matmul, 768
 * points, six dimensions): bo's piBO term and the `rules` strategy, each with a prior that
 * favours the optimum's levels, one that favours the worst point's, and none; and on a space too
 * large to enumerate, where bo scores its pool and local searches by the same term. */
#include "replay.h"
#include "tforge/plugin/strategy.h"

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

typedef struct fixture {
    tforge_recording *rec;
    tforge_replay *replay;
    const tforge_space *space;
    tforge_space_view view;
    uint32_t dims;
    uint64_t count, optimum, worst;
    uint32_t n_levels;
    double *good, *wrong, *zero; /* level priors */
} fixture;

static fixture f;

/* Weights that fall by 0.75 a level away from `target`'s level in every dimension. */
static void towards(double *w, const tforge_level *target)
{
    for (uint32_t d = 0, at = 0; d < f.dims; d++)
        for (uint32_t l = 0; l < tforge_space_levels(f.space, d); l++)
            w[at++] = -0.75 * fabs((double)l - (double)target[d]);
}

static int setup(void **state)
{
    (void)state;
    if (tforge_recording_read(&f.rec, RECORDED_SPACE) || tforge_replay_open(&f.replay, f.rec))
        return -1;
    f.space = tforge_replay_space(f.replay);
    f.view = tforge_space_get_view(f.space);
    f.dims = tforge_space_dims(f.space);
    f.count = tforge_space_count(f.space);
    double best = INFINITY, worst = -INFINITY;
    for (uint64_t i = 0; i < f.count; i++) { /* by space index, as the strategies see it */
        tforge_measurement m;
        tforge_measurement_init(&m);
        tforge_replay_answer(&m, f.replay, i, NULL);
        double v = m.value;
        if (m.status != TFORGE_STATUS_OK)
            continue;
        if (v < best)
            best = v, f.optimum = i;
        if (v > worst)
            worst = v, f.worst = i;
    }
    for (uint32_t d = 0; d < f.dims; d++)
        f.n_levels += tforge_space_levels(f.space, d);
    f.good = malloc(f.n_levels * sizeof *f.good);
    f.wrong = malloc(f.n_levels * sizeof *f.wrong);
    f.zero = calloc(f.n_levels, sizeof *f.zero);
    tforge_level *p = malloc(f.dims * sizeof *p);
    if (!f.good || !f.wrong || !f.zero || !p)
        return -1;
    tforge_space_point(p, f.space, f.optimum);
    towards(f.good, p);
    tforge_space_point(p, f.space, f.worst);
    towards(f.wrong, p);
    free(p);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    free(f.good);
    free(f.wrong);
    free(f.zero);
    tforge_replay_free(f.replay);
    tforge_recording_free(f.rec);
    return 0;
}

static const tforge_strategy_interface *strategy(const tforge_plugin_module *module)
{
    if (module->init)
        assert_int_equal(module->init(NULL, NULL), 0);
    const tforge_strategy_interface *it = module->get(0)->interface;
    assert_non_null(it->set_level_prior);
    return it;
}

typedef struct run_result {
    uint32_t evals, to_optimum; /* evaluations made; at which the optimum came, 0: never */
    uint64_t hash;              /* of the proposals, in order */
} run_result;

/* One run of `budget` evaluations, one at a time; the prior (may be NULL) is set before the
 * first ask and, with `again`, replaced by `again` after `switch_at` evaluations. Every proposal
 * must be valid and new. */
static run_result run(const tforge_plugin_module *module, uint64_t seed, uint32_t budget,
                      const double *prior, const double *again, uint32_t switch_at)
{
    const tforge_strategy_interface *it = strategy(module);
    tforge_options_view options = {sizeof options, 0, NULL, NULL};
    tforge_strategy_input input = {sizeof input, &f.view, seed, budget, NULL};
    void *s;
    assert_int_equal(it->create(&s, NULL, &options, &input), 0);
    if (prior)
        assert_int_equal(it->set_level_prior(s, prior, f.n_levels), 0);
    uint8_t *seen = calloc(f.count, 1);
    tforge_level *p = malloc(f.dims * sizeof *p);
    run_result r = {0, 0, 1469598103934665603ull};
    while (r.evals < budget) {
        if (again && r.evals == switch_at)
            assert_int_equal(it->set_level_prior(s, again, f.n_levels), 0);
        uint32_t n = 0;
        assert_int_equal(it->ask(s, 1, p, &n), 0);
        if (n == 0)
            break;
        uint64_t index = tforge_space_index_of(f.space, p);
        assert_true(index != TFORGE_NO_INDEX);
        assert_false(seen[index]);
        seen[index] = 1;
        r.hash = (r.hash ^ index) * 1099511628211ull;
        r.evals++;
        if (index == f.optimum && !r.to_optimum)
            r.to_optimum = r.evals;
        tforge_measurement m;
        tforge_measurement_init(&m);
        tforge_replay_answer(&m, f.replay, index, NULL);
        tforge_observation o = {p, m.status, m.value, m.spread};
        assert_int_equal(it->tell(s, &o, 1), 0);
    }
    free(p);
    free(seen);
    it->destroy(s);
    return r;
}

static int compare_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

enum { SEEDS = 9 };

/* The median over seeds 1..SEEDS of the evaluations to the optimum (a run that never gets there
 * counts as budget + 1). */
static uint32_t median_to_optimum(const tforge_plugin_module *module, uint32_t budget,
                                  const double *prior, uint32_t *worst)
{
    uint32_t to[SEEDS];
    for (uint64_t seed = 1; seed <= SEEDS; seed++) {
        run_result r = run(module, seed, budget, prior, NULL, 0);
        to[seed - 1] = r.to_optimum ? r.to_optimum : budget + 1;
    }
    qsort(to, SEEDS, sizeof *to, compare_u32);
    if (worst)
        *worst = to[SEEDS - 1];
    return to[SEEDS / 2];
}

static void bo_prior_helps_and_cannot_trap(void **state)
{
    (void)state;
    uint32_t worst_plain, worst_good, worst_wrong;
    uint32_t plain = median_to_optimum(&tforge_static_bo, 200, NULL, &worst_plain);
    uint32_t good = median_to_optimum(&tforge_static_bo, 200, f.good, &worst_good);
    uint32_t wrong = median_to_optimum(&tforge_static_bo, 200, f.wrong, &worst_wrong);
    print_message("bo to the optimum, median (worst) of %d seeds: no prior %u (%u), good %u (%u), "
                  "wrong %u (%u)\n", SEEDS, plain, worst_plain, good, worst_good, wrong,
                  worst_wrong);
    assert_true(good < plain);
    assert_true(worst_wrong <= 200); /* the decay: every seed gets there within the budget */
}

static void bo_zero_prior_is_no_prior(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 3; seed++) {
        run_result none = run(&tforge_static_bo, seed, 40, NULL, NULL, 0);
        run_result zero = run(&tforge_static_bo, seed, 40, f.zero, NULL, 0);
        run_result removed = run(&tforge_static_bo, seed, 40, f.good, f.zero, 20);
        run_result good = run(&tforge_static_bo, seed, 40, f.good, NULL, 0);
        assert_true(none.hash == zero.hash);
        assert_true(good.hash != none.hash); /* the prior does change the proposals */
        assert_true(removed.hash != good.hash); /* replaced between asks */
    }
}

static void level_priors_are_checked(void **state)
{
    (void)state;
    const tforge_plugin_module *modules[] = {&tforge_static_bo, &tforge_static_rules};
    for (int k = 0; k < 2; k++) {
        const tforge_strategy_interface *it = strategy(modules[k]);
        tforge_options_view options = {sizeof options, 0, NULL, NULL};
        tforge_strategy_input input = {sizeof input, &f.view, 1, 10, NULL};
        void *s;
        assert_int_equal(it->create(&s, NULL, &options, &input), 0);
        assert_int_equal(it->set_level_prior(s, f.good, f.n_levels - 1), TFORGE_PLUGIN_EINPUT);
        assert_int_equal(it->set_level_prior(s, NULL, f.n_levels), TFORGE_PLUGIN_EINPUT);
        double *w = malloc(f.n_levels * sizeof *w);
        memcpy(w, f.good, f.n_levels * sizeof *w);
        w[3] = NAN;
        assert_int_equal(it->set_level_prior(s, w, f.n_levels), TFORGE_PLUGIN_EINPUT);
        w[3] = INFINITY;
        assert_int_equal(it->set_level_prior(s, w, f.n_levels), TFORGE_PLUGIN_EINPUT);
        w[3] = -INFINITY; /* a level ruled out is allowed */
        assert_int_equal(it->set_level_prior(s, w, f.n_levels), 0);
        free(w);
        it->destroy(s);
    }
}

static void rules_follows_the_prior(void **state)
{
    (void)state;
    uint32_t worst_plain, worst_good, worst_wrong;
    uint32_t plain = median_to_optimum(&tforge_static_rules, 400, NULL, &worst_plain);
    uint32_t good = median_to_optimum(&tforge_static_rules, 400, f.good, &worst_good);
    uint32_t wrong = median_to_optimum(&tforge_static_rules, 400, f.wrong, &worst_wrong);
    print_message("rules to the optimum, median (worst) of %d seeds: no prior %u (%u), good %u "
                  "(%u), wrong %u (%u)\n", SEEDS, plain, worst_plain, good, worst_good, wrong,
                  worst_wrong);
    /* A prior that points at the optimum climbs to it: a few steps per dimension. */
    assert_true(good <= 30 && good < plain);
    /* A wrong one is left behind: the walk and its restarts go on. */
    assert_true(wrong <= 400);
}

static void rules_is_deterministic_and_re_ranks(void **state)
{
    (void)state;
    run_result a = run(&tforge_static_rules, 7, 60, f.good, NULL, 0);
    run_result b = run(&tforge_static_rules, 7, 60, f.good, NULL, 0);
    run_result c = run(&tforge_static_rules, 8, 60, f.good, NULL, 0);
    assert_true(a.hash == b.hash);
    assert_true(a.hash != c.hash); /* the first point and the ties come from the seed */
    /* a new prior between asks: the proposals after it differ */
    run_result switched = run(&tforge_static_rules, 7, 60, f.good, f.wrong, 10);
    assert_true(switched.hash != a.hash);
    /* without a prior, the walk alone; all zeros is no prior */
    run_result none = run(&tforge_static_rules, 7, 60, NULL, NULL, 0);
    run_result zero = run(&tforge_static_rules, 7, 60, f.zero, NULL, 0);
    assert_true(none.hash == zero.hash && none.hash != a.hash);
    /* to exhaustion: every recorded point once, then nothing more */
    run_result all = run(&tforge_static_rules, 3, 100000, f.good, NULL, 0);
    assert_int_equal(all.evals, f.count);
}

/* 10^8 raw points over 8 dimensions of 10 levels, above the enumeration limit; a bowl with its
 * optimum 1 at (2, 3, 4, 5, 6, 2, 3, 4). */
enum { WIDE = 8 };
static const int wide_optimum[WIDE] = {2, 3, 4, 5, 6, 2, 3, 4};

static double wide_bowl(const tforge_level *x)
{
    double sum = 0;
    for (int d = 0; d < WIDE; d++)
        sum += (1 + d % 3) * (x[d] - wide_optimum[d]) * (x[d] - wide_optimum[d]);
    return 1.0 + 0.01 * sum;
}

/* bo's best in 40 evaluations on the wide space, with a level prior (NULL: none); the hash of
 * its proposals into *hash. */
static double wide_run(const tforge_plugin_module *module, uint64_t seed, const double *prior,
                       uint64_t *hash)
{
    tforge_space *space;
    assert_int_equal(tforge_space_new(&space), 0);
    for (int d = 0; d < WIDE; d++) {
        char name[8];
        snprintf(name, sizeof name, "x%d", d);
        assert_int_equal(tforge_space_add_range(space, name, 0, 9, 1), 0);
    }
    assert_int_equal(tforge_space_build(space, NULL), 0);
    assert_int_equal(tforge_space_count(space), 0);
    tforge_space_view view = tforge_space_get_view(space);
    const tforge_strategy_interface *it = strategy(module);
    tforge_options_view options = {sizeof options, 0, NULL, NULL};
    tforge_strategy_input input = {sizeof input, &view, seed, 40, NULL};
    void *s;
    assert_int_equal(it->create(&s, NULL, &options, &input), 0);
    if (prior)
        assert_int_equal(it->set_level_prior(s, prior, WIDE * 10), 0);
    double best = INFINITY;
    *hash = 1469598103934665603ull;
    for (int i = 0; i < 40; i++) {
        tforge_level p[WIDE];
        uint32_t n = 0;
        assert_int_equal(it->ask(s, 1, p, &n), 0);
        assert_int_equal(n, 1);
        assert_true(tforge_space_is_valid(space, p));
        for (int d = 0; d < WIDE; d++)
            *hash = (*hash ^ p[d]) * 1099511628211ull;
        tforge_observation o = {p, TFORGE_STATUS_OK, wide_bowl(p), 0.01};
        best = fmin(best, o.value);
        assert_int_equal(it->tell(s, &o, 1), 0);
    }
    it->destroy(s);
    tforge_space_free(space);
    return best;
}

static void level_priors_on_a_space_too_large_to_enumerate(void **state)
{
    (void)state;
    double good[WIDE * 10];
    for (int d = 0; d < WIDE; d++)
        for (int l = 0; l < 10; l++)
            good[d * 10 + l] = -0.75 * fabs((double)(l - wide_optimum[d]));
    const tforge_plugin_module *modules[] = {&tforge_static_bo, &tforge_static_rules};
    for (int k = 0; k < 2; k++) {
        double plain = 0, helped = 0;
        for (uint64_t seed = 1; seed <= 3; seed++) {
            uint64_t h_plain, h_good;
            plain += wide_run(modules[k], seed, NULL, &h_plain);
            helped += wide_run(modules[k], seed, good, &h_good);
            assert_true(h_plain != h_good);
        }
        print_message("%s, best of 40 on 10^8 points (sum of 3 seeds): no prior %.4f, good %.4f\n",
                      k ? "rules" : "bo", plain, helped);
        assert_true(helped < plain);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(level_priors_are_checked),
        cmocka_unit_test(bo_zero_prior_is_no_prior),
        cmocka_unit_test(bo_prior_helps_and_cannot_trap),
        cmocka_unit_test(rules_follows_the_prior),
        cmocka_unit_test(rules_is_deterministic_and_re_ranks),
        cmocka_unit_test(level_priors_on_a_space_too_large_to_enumerate),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
