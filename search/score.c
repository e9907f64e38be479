/* The autotuning methodology's score: random search's exact expectation, cut-offs, standardised
 * curves and per-budget statistics over seeds. Definitions in include/tforge/score.h. */
#include "tforge/score.h"

#include "tforge/error.h"
#include "tforge/plugin/strategy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Quantile q of n sorted values, interpolating linearly between order statistics. */
static double quantile(const double *sorted, size_t n, double q)
{
    double h = (double)(n - 1) * q;
    size_t lo = (size_t)h;
    if (lo + 1 >= n)
        return sorted[n - 1];
    return sorted[lo] + (h - (double)lo) * (sorted[lo + 1] - sorted[lo]);
}

int tforge_score_space_init(tforge_score_space *space, const double *values,
                            const uint32_t *statuses, size_t n)
{
    if (!space || !values)
        return tforge_error_set(TFORGE_EINPUT, "score space: space and values must not be NULL");
    memset(space, 0, sizeof *space);
    size_t n_ok = 0;
    for (size_t i = 0; i < n; i++) {
        if (statuses && statuses[i] != TFORGE_STATUS_OK)
            continue;
        if (!isfinite(values[i]))
            return tforge_error_set(TFORGE_EINPUT,
                                    "score space: configuration %zu is ok but its value is not "
                                    "finite (%g)",
                                    i, values[i]);
        n_ok++;
    }
    if (n_ok == 0)
        return tforge_error_set(TFORGE_EINPUT,
                                "score space: none of the %zu configurations is ok; a score needs "
                                "at least one value",
                                n);
    double *sorted = malloc(n_ok * sizeof *sorted);
    if (!sorted)
        return tforge_error_set(TFORGE_ENOMEM, "score space: %zu values", n_ok);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!statuses || statuses[i] == TFORGE_STATUS_OK)
            sorted[k++] = values[i];
    qsort(sorted, n_ok, sizeof *sorted, compare_doubles);
    space->n = n;
    space->n_ok = n_ok;
    space->sorted = sorted;
    space->optimum = sorted[0];
    space->median = quantile(sorted, n_ok, 0.5);
    /* The ceiling (score.h): one absurd value must not scale every tolerance and budget. The
     * median is below it, so some value is too. */
    double gap = space->median - space->optimum;
    space->ceiling = gap > 0 ? space->median + TFORGE_SCORE_CEILING_GAPS * gap : INFINITY;
    size_t below = n_ok;
    while (sorted[below - 1] > space->ceiling)
        below--;
    for (size_t i = below; i < n_ok; i++)
        sorted[i] = sorted[below - 1];
    space->worst = sorted[n_ok - 1];
    return 0;
}

void tforge_score_space_dispose(tforge_score_space *space)
{
    if (!space)
        return;
    free(space->sorted);
    memset(space, 0, sizeof *space);
}

/* f_rand(b), 1 <= b <= n: v_1 + sum_i (v_{i+1} - v_i) q_i with q_i = C(N-i, b) / C(N, b), the
 * chance that none of the i best ok configurations is drawn. */
static double expected_best(const tforge_score_space *space, size_t b)
{
    const double *v = space->sorted;
    size_t m = space->n_ok, n = space->n;
    double scale = fmax(fabs(v[0]), fabs(v[m - 1]));
    double tolerance = 1e-17 * scale;
    double e = v[0], q = 1.0;
    for (size_t i = 1; i < m; i++) {
        if (n - i + 1 <= b) /* i > N - b: the i best cannot all be missed */
            break;
        q *= (double)(n - b - i + 1) / (double)(n - i + 1);
        e += (v[i] - v[i - 1]) * q;
        if (q * (v[m - 1] - v[i]) <= tolerance)
            break;
    }
    return e;
}

static int check_space(const tforge_score_space *space, const char *who)
{
    if (!space || !space->sorted || space->n_ok == 0 || space->n < space->n_ok)
        return tforge_error_set(TFORGE_EINPUT, "%s: the space is not prepared (call "
                                               "tforge_score_space_init first)",
                                who);
    return 0;
}

int tforge_score_random_curve(double *out, const tforge_score_space *space, size_t budget)
{
    int rc = check_space(space, "score random curve");
    if (rc < 0)
        return rc;
    if (!out || budget == 0 || budget > space->n)
        return tforge_error_set(TFORGE_EINPUT,
                                "score random curve: budget %zu must be in 1..%zu (the space's "
                                "size: draws are without replacement)",
                                budget, space->n);
    for (size_t b = 1; b <= budget; b++)
        out[b - 1] = expected_best(space, b);
    return 0;
}

/* Tolerance for "random search has reached a value": rounding in f_rand, not a real margin. */
static double reach_tolerance(const tforge_score_space *space)
{
    return 1e-12 * (space->worst - space->optimum);
}

/* Smallest b in 1..n with f_rand(b) <= target; f_rand never increases with b and f_rand(n) is the
 * optimum, so a bisection finds it. */
static size_t budget_to_reach(const tforge_score_space *space, double target)
{
    size_t lo = 1, hi = space->n;
    target += reach_tolerance(space);
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (expected_best(space, mid) <= target)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

static const tforge_score_options default_options = TFORGE_SCORE_OPTIONS_INIT;

static int check_options(const tforge_score_options *options, const char *who)
{
    if (options->version != TFORGE_SCORE_OPTIONS_VERSION)
        return tforge_error_set(TFORGE_EINPUT, "%s: options version %u, expected %u", who,
                                options->version, TFORGE_SCORE_OPTIONS_VERSION);
    if (!(options->cutoff_start >= 0.0 && options->cutoff_start < options->cutoff_end &&
          options->cutoff_end < 1.0))
        return tforge_error_set(TFORGE_EINPUT,
                                "%s: cut-offs %g and %g must satisfy 0 <= start < end < 1", who,
                                options->cutoff_start, options->cutoff_end);
    if (options->center != TFORGE_SCORE_CENTER_MEAN &&
        options->center != TFORGE_SCORE_CENTER_MEDIAN)
        return tforge_error_set(TFORGE_EINPUT, "%s: center %u is neither mean (0) nor median (1)",
                                who, options->center);
    return 0;
}

int tforge_score_cutoffs(size_t *start, size_t *end, const tforge_score_space *space,
                         const tforge_score_options *options)
{
    if (!options)
        options = &default_options;
    int rc = check_space(space, "score cut-offs");
    if (rc < 0 || (rc = check_options(options, "score cut-offs")) < 0)
        return rc;
    if (!start || !end)
        return tforge_error_set(TFORGE_EINPUT, "score cut-offs: start and end must not be NULL");
    double gap = space->median - space->optimum;
    if (!(gap > reach_tolerance(space)))
        return tforge_error_set(TFORGE_EINPUT,
                                "score cut-offs: the median of the ok values is the optimum "
                                "(%g): random search needs no budget to approach it",
                                space->optimum);
    *start = budget_to_reach(space, space->optimum + (1.0 - options->cutoff_start) * gap);
    *end = budget_to_reach(space, space->optimum + (1.0 - options->cutoff_end) * gap);
    return 0;
}

int tforge_score_curve(double *out, const double *center, const double *random, size_t budget,
                       const tforge_score_space *space)
{
    int rc = check_space(space, "score curve");
    if (rc < 0)
        return rc;
    if (!out || !center || !random)
        return tforge_error_set(TFORGE_EINPUT, "score curve: out, center and random must not be "
                                               "NULL");
    double tolerance = reach_tolerance(space);
    for (size_t i = 0; i < budget; i++) {
        double gain = space->optimum - random[i]; /* negative unless random holds the optimum */
        out[i] = gain < -tolerance ? (center[i] - random[i]) / gain : NAN;
    }
    return 0;
}

void tforge_score_stats_dispose(tforge_score_stats *stats)
{
    if (!stats)
        return;
    free(stats->mean); /* one block holds every array */
    memset(stats, 0, sizeof *stats);
}

/* A best-so-far trace is NaN, then finite and never increasing. */
static int check_trace(const double *trace, size_t budget, size_t seed)
{
    size_t b = 0;
    while (b < budget && isnan(trace[b]))
        b++;
    for (; b < budget; b++) {
        if (!isfinite(trace[b]))
            return tforge_error_set(TFORGE_EINPUT,
                                    "score summary: seed %zu, budget %zu: %g after an ok value "
                                    "(a best-so-far is NaN only before its first ok value)",
                                    seed, b + 1, trace[b]);
        if (b > 0 && trace[b] > trace[b - 1])
            return tforge_error_set(TFORGE_EINPUT,
                                    "score summary: seed %zu, budget %zu: %g rose from %g (pass "
                                    "best-so-far values, not raw ones)",
                                    seed, b + 1, trace[b], trace[b - 1]);
    }
    return 0;
}

int tforge_score_summary(tforge_score_stats *out, const double *traces, size_t seeds,
                         size_t budget, const tforge_score_space *space,
                         const tforge_score_options *options)
{
    if (!options)
        options = &default_options;
    double *column = NULL, *block = NULL;
    int rc = check_space(space, "score summary");
    if (rc < 0 || (rc = check_options(options, "score summary")) < 0)
        return rc;
    if (!out || !traces || seeds == 0)
        return tforge_error_set(TFORGE_EINPUT,
                                "score summary: out and traces must not be NULL, seeds >= 1");
    memset(out, 0, sizeof *out);
    if (budget == 0 || budget > space->n)
        return tforge_error_set(TFORGE_EINPUT,
                                "score summary: budget %zu must be in 1..%zu (the space's size)",
                                budget, space->n);
    size_t start, end;
    if ((rc = tforge_score_cutoffs(&start, &end, space, options)) < 0)
        return rc;
    if (budget < end)
        return tforge_error_set(TFORGE_EINPUT,
                                "score summary: traces of %zu evaluations end before the %g "
                                "cut-off at budget %zu; run at least %zu evaluations",
                                budget, options->cutoff_end, end, end);
    for (size_t k = 0; k < seeds; k++)
        if ((rc = check_trace(traces + k * budget, budget, k)) < 0)
            return rc;

    column = malloc(seeds * sizeof *column);
    block = malloc(6 * budget * sizeof *block);
    if (!column || !block) {
        rc = tforge_error_set(TFORGE_ENOMEM, "score summary: %zu seeds x %zu budgets", seeds,
                              budget);
        goto cleanup;
    }
    out->seeds = seeds;
    out->budget = budget;
    out->cutoff_start = start;
    out->cutoff_end = end;
    out->mean = block;
    out->median = block + budget;
    out->q25 = block + 2 * budget;
    out->q75 = block + 3 * budget;
    out->random = block + 4 * budget;
    out->standardised = block + 5 * budget;
    block = NULL;

    for (size_t b = 0; b < budget; b++) {
        double sum = 0.0;
        for (size_t k = 0; k < seeds; k++) {
            double x = traces[k * budget + b];
            /* the rule for runs with no ok value yet, and the ceiling */
            column[k] = isnan(x) || x > space->ceiling ? space->worst : x;
            sum += column[k];
        }
        qsort(column, seeds, sizeof *column, compare_doubles);
        out->mean[b] = sum / (double)seeds;
        out->median[b] = quantile(column, seeds, 0.5);
        out->q25[b] = quantile(column, seeds, 0.25);
        out->q75[b] = quantile(column, seeds, 0.75);
    }
    /* `column` still holds the sorted bests at the last budget. */
    size_t within = 0;
    for (size_t k = 0; k < seeds; k++)
        within += column[k] <= 1.05 * space->optimum;
    int positive = space->optimum > 0.0;
    out->p_within_5pct = positive ? (double)within / (double)seeds : NAN;
    out->median_best_over_opt = positive ? out->median[budget - 1] / space->optimum : NAN;

    tforge_score_random_curve(out->random, space, budget);
    const double *center = options->center == TFORGE_SCORE_CENTER_MEDIAN ? out->median : out->mean;
    tforge_score_curve(out->standardised, center, out->random, budget, space);
    double total = 0.0;
    size_t counted = 0;
    for (size_t b = start; b <= end; b++)
        if (!isnan(out->standardised[b - 1])) {
            total += out->standardised[b - 1];
            counted++;
        }
    if (counted == 0) {
        rc = tforge_error_set(TFORGE_EINPUT,
                              "score summary: the standardised curve is undefined on every "
                              "budget %zu..%zu (random search already holds the optimum)",
                              start, end);
        tforge_score_stats_dispose(out);
        goto cleanup;
    }
    out->score = total / (double)counted;
    rc = 0;

cleanup:
    free(column);
    free(block);
    return rc;
}
