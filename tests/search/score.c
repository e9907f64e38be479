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

#define NaN ((double)NAN)

/* cmocka has no double comparison: |a - b| <= tolerance, with both values in the message. */
#define assert_close(a, b, tolerance)                                                             \
    do {                                                                                          \
        double a_ = (a), b_ = (b), t_ = (tolerance);                                              \
        if (!(fabs(a_ - b_) <= t_))                                                               \
            fail_msg("%s = %.17g, expected %.17g within %g", #a, a_, b_, t_);                     \
    } while (0)

/* The best-so-far of a random search that drew `order`, with the worst ok value standing in
 * before the first ok one (the header's rule). */
static void best_so_far(double *out, const size_t *order, size_t budget, const double *values,
                        const uint32_t *statuses, double worst)
{
    double best = worst;
    for (size_t b = 0; b < budget; b++) {
        size_t c = order[b];
        if (statuses[c] == TFORGE_STATUS_OK && values[c] < best)
            best = values[c];
        out[b] = best;
    }
}

/* Next permutation in lexicographic order; 0 after the last. */
static int next_permutation(size_t *p, size_t n)
{
    size_t i = n - 1;
    while (i > 0 && p[i - 1] >= p[i])
        i--;
    if (i == 0)
        return 0;
    size_t j = n - 1;
    while (p[j] <= p[i - 1])
        j--;
    size_t t = p[i - 1];
    p[i - 1] = p[j];
    p[j] = t;
    for (size_t a = i, z = n - 1; a < z; a++, z--) {
        t = p[a];
        p[a] = p[z];
        p[z] = t;
    }
    return 1;
}

/* Averages the best-so-far over all n! orders and compares with the analytic curve. */
static void check_against_enumeration(const double *values, const uint32_t *statuses, size_t n)
{
    tforge_score_space space;
    assert_int_equal(tforge_score_space_init(&space, values, statuses, n), 0);
    double exact[8], sum[8] = {0}, trace[8];
    size_t order[8];
    assert_int_equal(tforge_score_random_curve(exact, &space, n), 0);
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    double count = 0;
    do {
        best_so_far(trace, order, n, values, statuses, space.worst);
        for (size_t b = 0; b < n; b++)
            sum[b] += trace[b];
        count++;
    } while (next_permutation(order, n));
    for (size_t b = 0; b < n; b++)
        assert_close(exact[b], sum[b] / count, 1e-12 * (1 + fabs(exact[b])));
    assert_close(exact[n - 1], space.optimum, 0);
    tforge_score_space_dispose(&space);
}

static void random_curve_matches_enumeration(void **state)
{
    (void)state;
    const uint32_t OK = TFORGE_STATUS_OK, C = TFORGE_STATUS_COMPILE, R = TFORGE_STATUS_RUNTIME;
    /* failures, ties, a full space of 8 */
    const double v1[] = {3, 1, 4, 1, 5, 9, 2, 6};
    const uint32_t s1[] = {OK, OK, C, OK, OK, R, OK, OK};
    check_against_enumeration(v1, s1, 8);
    /* one ok configuration among failures */
    const double v2[] = {0, 0, 7.5, 0, 0, 0, 0};
    const uint32_t s2[] = {C, R, OK, C, TFORGE_STATUS_TIMEOUT, TFORGE_STATUS_WRONG, C};
    check_against_enumeration(v2, s2, 7);
    /* no failures, negative values */
    const double v3[] = {-2.5, 0.5, -1, 3, 0.25};
    const uint32_t s3[] = {OK, OK, OK, OK, OK};
    check_against_enumeration(v3, s3, 5);
    /* a constant space and a single configuration */
    const double v4[] = {2, 2, 2, 2};
    check_against_enumeration(v4, s3, 4);
    check_against_enumeration(v3, s3, 1);
}

/* Random search drawn for real: each budget's mean is within 5 standard errors of the analytic
 * expectation. */
static void random_curve_matches_monte_carlo(void **state)
{
    (void)state;
    enum { N = 3000, B = 300, TRIALS = 20000 };
    static double values[N], sum[B], sum2[B], exact[B], trace[B];
    static uint32_t statuses[N];
    static size_t order[N];
    tforge_rng rng;
    tforge_rng_seed(&rng, 20240601);
    for (size_t i = 0; i < N; i++) {
        statuses[i] = tforge_rng_uniform(&rng) < 0.4 ? TFORGE_STATUS_COMPILE : TFORGE_STATUS_OK;
        double u = tforge_rng_uniform(&rng); /* heavy-tailed times: 1 / (1 - u)^0.7 ms */
        values[i] = pow(1.0 - u, -0.7);
        order[i] = i;
    }
    tforge_score_space space;
    assert_int_equal(tforge_score_space_init(&space, values, statuses, N), 0);
    assert_true(space.n_ok > 1500 && space.n_ok < 2100);
    assert_int_equal(tforge_score_random_curve(exact, &space, B), 0);
    for (int t = 0; t < TRIALS; t++) {
        /* A partial Fisher-Yates shuffle: the first B entries are a uniform draw without
         * replacement, whatever the array's order before. */
        for (size_t b = 0; b < B; b++) {
            size_t j = b + tforge_rng_below(&rng, N - b);
            size_t tmp = order[b];
            order[b] = order[j];
            order[j] = tmp;
        }
        best_so_far(trace, order, B, values, statuses, space.worst);
        for (size_t b = 0; b < B; b++) {
            sum[b] += trace[b];
            sum2[b] += trace[b] * trace[b];
        }
    }
    for (size_t b = 0; b < B; b++) {
        double mean = sum[b] / TRIALS;
        double var = (sum2[b] / TRIALS - mean * mean) * TRIALS / (TRIALS - 1);
        double se = sqrt(fmax(var, 0.0) / TRIALS);
        assert_close(exact[b], mean, 5 * se + 1e-12);
        if (b > 0)
            assert_true(exact[b] <= exact[b - 1]);
    }
    tforge_score_space_dispose(&space);
}

/* Distinct values 1..N without failures: E[min of b draws] = (N + 1) / (b + 1) exactly. */
static void random_curve_is_accurate_on_a_large_space(void **state)
{
    (void)state;
    enum { N = 200000 };
    double *values = malloc(N * sizeof *values), *curve = malloc(N * sizeof *curve);
    assert_non_null(values);
    assert_non_null(curve);
    for (size_t i = 0; i < N; i++)
        values[i] = (double)(N - i); /* unsorted on purpose */
    tforge_score_space space;
    assert_int_equal(tforge_score_space_init(&space, values, NULL, N), 0);
    assert_close(space.median, (N + 1) / 2.0, 0);
    assert_int_equal(tforge_score_random_curve(curve, &space, N), 0);
    double worst = 0;
    for (size_t b = 1; b <= N; b++) {
        double expected = (N + 1.0) / (b + 1.0);
        worst = fmax(worst, fabs(curve[b - 1] - expected) / expected);
    }
    assert_true(worst < 1e-10);
    tforge_score_space_dispose(&space);
    free(values);
    free(curve);
}

static void cutoffs_on_hand_computed_spaces(void **state)
{
    (void)state;
    /* Values 1..4, no failures: f_rand = 2.5, 5/3, 1.25, 1; median 2.5. Targets: p = 0.5 ->
     * 1.75 (budget 2), 0.8 -> 1.3 (3), 0.9 -> 1.15 (4), 0.96 -> 1.06 (4). */
    const double v[] = {4, 2, 1, 3, 0, 0};
    tforge_score_space space;
    size_t start, end;
    assert_int_equal(tforge_score_space_init(&space, v, NULL, 4), 0);
    assert_int_equal(tforge_score_cutoffs(&start, &end, &space, NULL), 0);
    assert_int_equal(start, 2);
    assert_int_equal(end, 4);
    tforge_score_options options = TFORGE_SCORE_OPTIONS_INIT;
    options.cutoff_start = 0.8;
    options.cutoff_end = 0.9;
    assert_int_equal(tforge_score_cutoffs(&start, &end, &space, &options), 0);
    assert_int_equal(start, 3);
    assert_int_equal(end, 4);
    tforge_score_space_dispose(&space);

    /* The same values among 6 with two failures: f_rand = 3, 34/15, 1.75, 1.4, 7/6, 1. The 50%
     * target 1.75 is met exactly at budget 3 (rounding must not push it to 4); 1.06 at 6. */
    const uint32_t s[] = {TFORGE_STATUS_OK, TFORGE_STATUS_OK, TFORGE_STATUS_OK,
                          TFORGE_STATUS_OK, TFORGE_STATUS_RUNTIME, TFORGE_STATUS_COMPILE};
    assert_int_equal(tforge_score_space_init(&space, v, s, 6), 0);
    double curve[6];
    assert_int_equal(tforge_score_random_curve(curve, &space, 6), 0);
    assert_close(curve[0], 3.0, 1e-14);
    assert_close(curve[1], 34.0 / 15, 1e-14);
    assert_close(curve[4], 7.0 / 6, 1e-14);
    assert_int_equal(tforge_score_cutoffs(&start, &end, &space, NULL), 0);
    assert_int_equal(start, 3);
    assert_int_equal(end, 6);
    tforge_score_space_dispose(&space);

    /* More than half of the values are the optimum: no cut-offs. */
    const double flat[] = {1, 1, 1, 5};
    assert_int_equal(tforge_score_space_init(&space, flat, NULL, 4), 0);
    assert_int_equal(tforge_score_cutoffs(&start, &end, &space, NULL), TFORGE_EINPUT);
    assert_non_null(strstr(tforge_error_last()->message, "median"));
    /* A cut-off of 1 would end where random search surely holds the optimum. */
    options.cutoff_end = 1.0;
    assert_int_equal(tforge_score_cutoffs(&start, &end, &space, &options), TFORGE_EINPUT);
    assert_non_null(strstr(tforge_error_last()->message, "end < 1"));
    tforge_score_space_dispose(&space);
}

/* The 6-configuration space above: scored budgets 3..6, and s is undefined at 6, where random
 * search surely holds the optimum, so the score averages budgets 3, 4 and 5. */
static void setup_small_space(tforge_score_space *space)
{
    const double v[] = {4, 2, 1, 3, 0, 0};
    const uint32_t s[] = {TFORGE_STATUS_OK, TFORGE_STATUS_OK, TFORGE_STATUS_OK,
                          TFORGE_STATUS_OK, TFORGE_STATUS_RUNTIME, TFORGE_STATUS_COMPILE};
    assert_int_equal(tforge_score_space_init(space, v, s, 6), 0);
}

static void score_of_perfect_random_and_worse_strategies(void **state)
{
    (void)state;
    tforge_score_space space;
    setup_small_space(&space);
    tforge_score_stats stats;

    const double perfect[] = {1, 1, 1, 1, 1, 1};
    assert_int_equal(tforge_score_summary(&stats, perfect, 1, 6, &space, NULL), 0);
    assert_int_equal(stats.cutoff_start, 3);
    assert_int_equal(stats.cutoff_end, 6);
    assert_close(stats.score, 1.0, 1e-12);
    assert_true(isnan(stats.standardised[5]));
    tforge_score_stats_dispose(&stats);

    double random[6];
    assert_int_equal(tforge_score_random_curve(random, &space, 6), 0);
    assert_int_equal(tforge_score_summary(&stats, random, 1, 6, &space, NULL), 0);
    assert_close(stats.score, 0.0, 1e-12);
    tforge_score_stats_dispose(&stats);

    /* Holds the worst value until the last budget: s = (4 - f)/(1 - f) = -3, -6.5, -17. */
    const double worse[] = {NaN, 4, 4, 4, 4, 1};
    assert_int_equal(tforge_score_summary(&stats, worse, 1, 6, &space, NULL), 0);
    assert_close(stats.score, -26.5 / 3, 1e-9);
    assert_close(stats.standardised[2], -3.0, 1e-12);
    tforge_score_stats_dispose(&stats);

    /* The curve function alone agrees. */
    double s[6];
    assert_int_equal(tforge_score_curve(s, worse, random, 6, &space), 0);
    assert_true(isnan(s[0])); /* NaN in, NaN out */
    assert_close(s[4], -17.0, 1e-9);
    tforge_score_space_dispose(&space);
}

/* Random search run for real scores 0 up to its sampling error. With the mean as the center the
 * score is linear in the traces, so it is the mean of the seeds' own scores: check both. */
static void sampled_random_search_scores_zero(void **state)
{
    (void)state;
    enum { N = 500, B = 200, K = 400 };
    static double values[N], traces[K * B];
    static uint32_t statuses[N];
    static size_t order[N];
    tforge_rng rng;
    tforge_rng_seed(&rng, 7);
    for (size_t i = 0; i < N; i++) {
        statuses[i] = tforge_rng_uniform(&rng) < 0.25 ? TFORGE_STATUS_RUNTIME : TFORGE_STATUS_OK;
        values[i] = 1.0 + 9.0 * tforge_rng_uniform(&rng) * tforge_rng_uniform(&rng);
        order[i] = i;
    }
    tforge_score_space space;
    assert_int_equal(tforge_score_space_init(&space, values, statuses, N), 0);
    double sum = 0, sum2 = 0;
    for (size_t k = 0; k < K; k++) {
        for (size_t b = 0; b < B; b++) {
            size_t j = b + tforge_rng_below(&rng, N - b);
            size_t tmp = order[b];
            order[b] = order[j];
            order[j] = tmp;
        }
        double *trace = traces + k * B;
        best_so_far(trace, order, B, values, statuses, space.worst);
        for (size_t b = 0; b < B && statuses[order[b]] != TFORGE_STATUS_OK; b++)
            trace[b] = NaN; /* as measured: nothing before the first ok value */
        tforge_score_stats one;
        assert_int_equal(tforge_score_summary(&one, trace, 1, B, &space, NULL), 0);
        sum += one.score;
        sum2 += one.score * one.score;
        tforge_score_stats_dispose(&one);
    }
    tforge_score_stats all;
    assert_int_equal(tforge_score_summary(&all, traces, K, B, &space, NULL), 0);
    double mean = sum / K, se = sqrt((sum2 / K - mean * mean) / (K - 1));
    assert_close(all.score, mean, 1e-9);
    assert_true(fabs(all.score) < 5 * se);
    assert_true(se < 0.2); /* the check above means something */
    assert_true(all.cutoff_start < all.cutoff_end);
    tforge_score_stats_dispose(&all);
    tforge_score_space_dispose(&space);
}

static void summary_statistics_on_hand_made_traces(void **state)
{
    (void)state;
    /* ok values 1, 1.04, 1.2, 2, 3 and one failure: median 1.2; f_rand = 1.873, 1.317, 1.092,
     * 1.024, 1.0067, 1, so the cut-offs are budgets 3 (target 1.1) and 5 (target 1.008). */
    const double v[] = {2.0, 1.04, 0, 1.2, 3.0, 1.0};
    const uint32_t s[] = {TFORGE_STATUS_OK, TFORGE_STATUS_OK, TFORGE_STATUS_COMPILE,
                          TFORGE_STATUS_OK, TFORGE_STATUS_OK, TFORGE_STATUS_OK};
    tforge_score_space space;
    assert_int_equal(tforge_score_space_init(&space, v, s, 6), 0);
    assert_close(space.median, 1.2, 0);
    const double traces[] = {
        NaN, NaN, 2.0, 1.2, 1.04, 1.04, /* ends within 5% */
        3, 3, 3, 1, 1, 1,               /* ends at the optimum */
        NaN, NaN, NaN, NaN, NaN, NaN,   /* never ok: counts as the worst, 3 */
        1.2, 1.2, 1.2, 1.2, 1.2, 1.2,   /* ends 20% above */
    };
    tforge_score_stats stats;
    assert_int_equal(tforge_score_summary(&stats, traces, 4, 6, &space, NULL), 0);
    assert_int_equal(stats.cutoff_start, 3);
    assert_int_equal(stats.cutoff_end, 5);
    assert_close(stats.p_within_5pct, 0.5, 0);
    assert_close(stats.median_best_over_opt, (1.04 + 1.2) / 2, 1e-15);
    /* budget 1: {3, 3, 3, 1.2} */
    assert_close(stats.mean[0], 2.55, 1e-15);
    assert_close(stats.median[0], 3.0, 0);
    assert_close(stats.q25[0], 2.55, 1e-15);
    assert_close(stats.q75[0], 3.0, 0);
    /* budget 4: {1.2, 1, 3, 1.2} */
    assert_close(stats.mean[3], 1.6, 1e-15);
    assert_close(stats.median[3], 1.2, 0);
    assert_close(stats.q25[3], 1.15, 1e-15);
    assert_close(stats.q75[3], 1.65, 1e-15);
    /* The median as center changes the score, not the statistics. */
    double mean_score = stats.score;
    tforge_score_stats_dispose(&stats);
    tforge_score_options options = TFORGE_SCORE_OPTIONS_INIT;
    options.center = TFORGE_SCORE_CENTER_MEDIAN;
    assert_int_equal(tforge_score_summary(&stats, traces, 4, 6, &space, &options), 0);
    assert_true(stats.score != mean_score);
    /* budget 3: median {2, 3, 3, 1.2} = 2.5; s = (2.5 - 1.092) / (1 - 1.092) */
    assert_close(stats.standardised[2], (2.5 - 1.092) / (1 - 1.092), 1e-9);
    tforge_score_stats_dispose(&stats);
    tforge_score_space_dispose(&space);
}

static void bad_inputs_are_refused_with_a_reason(void **state)
{
    (void)state;
    const double v[] = {2.0, NaN, 1.0, 3.0};
    const uint32_t ok[] = {0, 0, 0, 0}, failed[] = {1, 1, 1, 1}, one_bad[] = {0, 1, 0, 0};
    tforge_score_space space;
    assert_int_equal(tforge_score_space_init(&space, v, ok, 4), TFORGE_EINPUT);
    assert_non_null(strstr(tforge_error_last()->message, "configuration 1"));
    assert_int_equal(tforge_score_space_init(&space, v, failed, 4), TFORGE_EINPUT);
    assert_int_equal(tforge_score_space_init(&space, v, one_bad, 4), 0);
    double curve[5];
    assert_int_equal(tforge_score_random_curve(curve, &space, 5), TFORGE_EINPUT);
    assert_int_equal(tforge_score_random_curve(curve, &space, 0), TFORGE_EINPUT);

    tforge_score_stats stats;
    const double gap[] = {NaN, 2, NaN, 1};
    assert_int_equal(tforge_score_summary(&stats, gap, 1, 4, &space, NULL), TFORGE_EINPUT);
    assert_non_null(strstr(tforge_error_last()->message, "seed 0, budget 3"));
    const double rising[] = {3, 1, 2, 1};
    assert_int_equal(tforge_score_summary(&stats, rising, 1, 4, &space, NULL), TFORGE_EINPUT);
    assert_non_null(strstr(tforge_error_last()->message, "rose"));
    const double short_trace[] = {3, 1};
    assert_int_equal(tforge_score_summary(&stats, short_trace, 1, 2, &space, NULL),
                     TFORGE_EINPUT);
    assert_non_null(strstr(tforge_error_last()->message, "run at least"));
    tforge_score_options options = TFORGE_SCORE_OPTIONS_INIT;
    options.version = 99;
    assert_int_equal(tforge_score_summary(&stats, rising, 1, 4, &space, &options), TFORGE_EINPUT);
    options.version = TFORGE_SCORE_OPTIONS_VERSION;
    options.center = 7;
    assert_int_equal(tforge_score_summary(&stats, rising, 1, 4, &space, &options), TFORGE_EINPUT);
    tforge_score_space_dispose(&space);
    tforge_score_space_dispose(NULL);
    tforge_score_stats_dispose(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_curve_matches_enumeration),
        cmocka_unit_test(random_curve_matches_monte_carlo),
        cmocka_unit_test(random_curve_is_accurate_on_a_large_space),
        cmocka_unit_test(cutoffs_on_hand_computed_spaces),
        cmocka_unit_test(score_of_perfect_random_and_worse_strategies),
        cmocka_unit_test(sampled_random_search_scores_zero),
        cmocka_unit_test(summary_statistics_on_hand_made_traces),
        cmocka_unit_test(bad_inputs_are_refused_with_a_reason),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
