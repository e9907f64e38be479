/* One absurd value in a recorded space (the score's ceiling, include/tforge/score.h): it neither
 * refuses the space nor moves its cut-offs or scores, and a refusal says what is true. */
#include "tforge/error.h"
#include "tforge/plugin/rng.h"
#include "tforge/plugin/strategy.h"
#include "tforge/score.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

enum { N = 600, SEEDS = 40, BUDGET = 60 };

/* Heavy-tailed times, 1 / (1 - u)^0.7 ms (at most a few tens of gaps above the median), a
 * `failing` fraction of them failed; returns the index of the worst ok one. */
static size_t make_space(double *values, uint32_t *statuses, double failing)
{
    tforge_rng rng;
    tforge_rng_seed(&rng, 35);
    size_t worst = N;
    for (size_t i = 0; i < N; i++) {
        statuses[i] = tforge_rng_uniform(&rng) < failing ? TFORGE_STATUS_COMPILE
                                                          : TFORGE_STATUS_OK;
        values[i] = pow(1.0 - tforge_rng_uniform(&rng), -0.7);
        if (statuses[i] == TFORGE_STATUS_OK && (worst == N || values[i] > values[worst]))
            worst = i;
    }
    return worst;
}

/* Best-so-far traces of random search (NaN before the first ok value), the same draws whatever
 * the values. */
static void random_traces(double *traces, const double *values, const uint32_t *statuses)
{
    tforge_rng rng;
    tforge_rng_seed(&rng, 7);
    size_t order[N];
    for (size_t k = 0; k < SEEDS; k++) {
        for (size_t i = 0; i < N; i++)
            order[i] = i;
        double best = NAN;
        for (size_t b = 0; b < BUDGET; b++) {
            size_t j = b + tforge_rng_below(&rng, N - b), c = order[j];
            order[j] = order[b];
            order[b] = c;
            if (statuses[c] == TFORGE_STATUS_OK && !(values[c] >= best))
                best = values[c];
            traces[k * BUDGET + b] = best;
        }
    }
}

typedef struct scored {
    size_t start, end;
    double random[BUDGET];
    double score, mean[BUDGET];
} scored;

static void score(scored *out, const double *values, const uint32_t *statuses)
{
    static double traces[SEEDS * BUDGET];
    tforge_score_space space;
    tforge_score_stats stats;
    random_traces(traces, values, statuses);
    assert_int_equal(tforge_score_space_init(&space, values, statuses, N), 0);
    assert_int_equal(tforge_score_cutoffs(&out->start, &out->end, &space, NULL), 0);
    assert_true(out->end <= BUDGET);
    assert_int_equal(tforge_score_summary(&stats, traces, SEEDS, BUDGET, &space, NULL), 0);
    memcpy(out->random, stats.random, sizeof out->random);
    memcpy(out->mean, stats.mean, sizeof out->mean);
    out->score = stats.score;
    tforge_score_stats_dispose(&stats);
    tforge_score_space_dispose(&space);
}

/* The worst time made absurd, without failures: every statistic as before (up to the rounding
 * of the sums), since random search's expectation from 2 draws on never holds the worst. */
static void the_worst_made_absurd_changes_nothing(void **state)
{
    (void)state;
    static double values[N];
    static uint32_t statuses[N];
    size_t worst = make_space(values, statuses, 0.0);
    scored clean, absurd;
    score(&clean, values, statuses);
    const double outliers[] = {1e10, 1e100, 1e300};
    for (size_t o = 0; o < 3; o++) {
        values[worst] = outliers[o];
        score(&absurd, values, statuses);
        assert_int_equal(absurd.start, clean.start);
        assert_int_equal(absurd.end, clean.end);
        assert_true(fabs(absurd.score - clean.score) <= 1e-12);
        for (size_t b = 1; b < BUDGET; b++) {
            assert_true(fabs(absurd.random[b] - clean.random[b]) <= 1e-14 * clean.random[b]);
            assert_true(absurd.mean[b] == clean.mean[b]);
        }
    }
}

/* With failures, where the worst value also stands for "nothing found yet": a configuration
 * made absurd counts as the worst of the others, so the cut-offs stay and the score moves by a
 * hair (the worst itself made absurd leaves the second worst as the worst). */
static void with_failures_the_cutoffs_stay(void **state)
{
    (void)state;
    static double values[N];
    static uint32_t statuses[N];
    size_t worst = make_space(values, statuses, 0.2);
    scored clean, absurd;
    score(&clean, values, statuses);
    size_t above = 0;
    while (statuses[above] != TFORGE_STATUS_OK || values[above] < 3.0) /* above the median */
        above++;
    const size_t made_absurd[] = {above, worst};
    for (size_t k = 0; k < 2; k++) {
        double kept = values[made_absurd[k]];
        values[made_absurd[k]] = 1e100;
        score(&absurd, values, statuses);
        values[made_absurd[k]] = kept;
        assert_int_equal(absurd.start, clean.start);
        assert_int_equal(absurd.end, clean.end);
        assert_true(fabs(absurd.score - clean.score) < 1e-3);
    }
}

/* A refusal states what is so: the median of the ok values is the optimum, whatever the worst. */
static void a_refusal_is_true(void **state)
{
    (void)state;
    const double flat[] = {1, 1, 1, 2, 1e100};
    const double spread[] = {1, 2, 3, 4, 1e100};
    tforge_score_space space;
    size_t start, end;
    assert_int_equal(tforge_score_space_init(&space, flat, NULL, 5), 0);
    assert_int_equal(tforge_score_cutoffs(&start, &end, &space, NULL), TFORGE_EINPUT);
    assert_non_null(strstr(tforge_error_last()->message, "median"));
    assert_true(space.median == space.optimum);
    tforge_score_space_dispose(&space);
    assert_int_equal(tforge_score_space_init(&space, spread, NULL, 5), 0);
    assert_int_equal(tforge_score_cutoffs(&start, &end, &space, NULL), 0);
    assert_true(space.worst == 4.0);
    assert_true(space.ceiling == 3.0 + TFORGE_SCORE_CEILING_GAPS * 2.0);
    tforge_score_space_dispose(&space);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_worst_made_absurd_changes_nothing),
        cmocka_unit_test(with_failures_the_cutoffs_stay),
        cmocka_unit_test(a_refusal_is_true),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
