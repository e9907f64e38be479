/* Scoring search strategies on a recorded space, after the methodology of Willemsen,
 * Schoonhoven, Filipovič, Tørring, van Nieuwpoort and van Werkhoven, "A methodology for comparing
 * optimization algorithms for auto-tuning", Future Generation Computer Systems, 2024.
 *
 * Definitions (lower values are better; a budget b counts evaluations, failed ones included):
 *
 * Space. N configurations; m of them are ok and carry a value; the other N - m failed (status not
 * TFORGE_STATUS_OK, no value). The ok values sorted ascending are v_1 <= ... <= v_m. The optimum
 * is v_1, the worst ok value v_m, the median the median of the m ok values (the mean of the two
 * middle ones when m is even).
 *
 * Ceiling. One absurd value (a time of 1e100 in a cache) must not decide the score: the
 * tolerances below and the rule for runs with nothing found are scaled by v_m. So an ok value
 * above the ceiling, median + TFORGE_SCORE_CEILING_GAPS (median - optimum), counts as the worst
 * ok value at or below it, everywhere here (the v_i, v_m and a trace's values): the space is
 * scored as if that configuration were merely as bad as the worst of the others. Recorded spaces
 * reach a few tens of those gaps above their median (so none is changed); a space whose median
 * is its optimum has no ceiling (and no cut-offs).
 *
 * Best-so-far before the first ok value. Until a search has drawn an ok configuration it holds
 * nothing; we then count its best-so-far as the worst ok value v_m: having found nothing is as bad
 * as having found the worst working configuration, and no run is left out of the statistics (a
 * strategy that mostly fails is not flattered by averaging only its lucky runs). THE RULE FOR
 * MEASURED TRACES: a trace's best-so-far is NaN until its first ok value; every function here
 * replaces those NaN by v_m before taking means, medians or quantiles. Do the same elsewhere.
 *
 * Random search. Draws configurations uniformly without replacement. With the rule above, its
 * best-so-far after b draws is the smallest ok value drawn, or v_m when none was, and
 *     f_rand(b) = E[best after b draws] = v_1 + sum_{i=1}^{m-1} (v_{i+1} - v_i) C(N-i, b)/C(N, b),
 * since C(N-i, b) / C(N, b) is the probability that none of the i best ok configurations is among
 * the b drawn (failed configurations only enlarge N). The ratios are built by the recurrence
 * q_i = q_{i-1} (N-b-i+1) / (N-i+1), all terms positive, so the relative error stays below about
 * 2 m machine epsilons; the sum stops once its remaining tail, at most q_i (v_m - v_{i+1}), is
 * below 1e-17 of the values' scale. The cost is about min(m, 40 N / b) steps per budget.
 * (The package `autotuning_methodology` takes instead the value at the expected rank of the best
 * of b draws, b (N+1) / (b+1) counted from the worst, and its cut-offs from that rank among the
 * ok values only; here both come from the exact expected value, failures included.)
 *
 * Cut-offs. For a fraction p, the target value is t_p = optimum + (1 - p) (median - optimum): p of
 * the way from the median of the ok values to the optimum. Random search reaches the cut-off at
 * the smallest budget b with f_rand(b) <= t_p (up to 1e-12 of v_m - v_1, against rounding). The
 * methodology scores between the cut-offs p = 0.5 and p = 0.96 (its paper's evaluation; the
 * package calls them cutoff_percentile_start and cutoff_percentile).
 *
 * Standardised curve. For a strategy's central best-so-far f_alg(b) (the mean over seeds by
 * default, or the median),
 *     s(b) = (f_alg(b) - f_rand(b)) / (f_opt - f_rand(b)):
 * 1 when the strategy holds the optimum, 0 when it does as well as random search is expected to,
 * negative when worse. Undefined (NaN) where f_rand(b) is the optimum (up to 1e-12 of v_m - v_1),
 * that is where random search surely holds it already, and where f_alg(b) is NaN. Random search's
 * own mean scores 0 exactly; compare the mean of seeds with it, since f_rand is an expectation.
 *
 * Score. The mean of s(b) over the budgets b_start..b_end, both included, where s is defined (the
 * package averages the same curve over a grid of times between its two cut-offs).
 *
 * Axis. Budgets are evaluations today. Charged time will come as per-configuration costs given to
 * the space and a function taking a grid of times; the options struct grows only at its end. */
#ifndef TFORGE_SCORE_H
#define TFORGE_SCORE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A recorded space, prepared once: its ok values sorted and the statistics the score needs. */
typedef struct tforge_score_space {
    size_t n;       /* configurations, failed ones included */
    size_t n_ok;    /* configurations with a value, >= 1 */
    double optimum; /* v_1 */
    double median;  /* median of the ok values */
    double worst;   /* v_m, at most the ceiling */
    double *sorted; /* the n_ok values, ascending, those above the ceiling as v_m; owned */
    double ceiling; /* a value above it counts as v_m; INFINITY when the median is v_1 */
} tforge_score_space;

/* The ceiling's distance above the median, in gaps between median and optimum. */
#define TFORGE_SCORE_CEILING_GAPS 1000.0

/* Prepares `space` from `n` configurations: values[i] is configuration i's objective, read only
 * when statuses[i] is TFORGE_STATUS_OK. `statuses` may be NULL: then every configuration is ok. An
 * ok value must be finite; at least one configuration must be ok. */
int tforge_score_space_init(tforge_score_space *space, const double *values,
                            const uint32_t *statuses, size_t n);
/* Frees what the space owns; the struct itself is the caller's. NULL is allowed. */
void tforge_score_space_dispose(tforge_score_space *space);

typedef enum tforge_score_center {
    TFORGE_SCORE_CENTER_MEAN = 0,  /* the mean best-so-far over seeds (default) */
    TFORGE_SCORE_CENTER_MEDIAN = 1 /* the median, as the package does */
} tforge_score_center;

typedef struct tforge_score_options {
    unsigned int version;
    double cutoff_start; /* p of the first budget scored, in [0, cutoff_end); 0.5 */
    double cutoff_end;   /* p of the last budget scored, below 1; 0.96 */
    uint32_t center;     /* a tforge_score_center */
} tforge_score_options;

#define TFORGE_SCORE_OPTIONS_VERSION 1
#define TFORGE_SCORE_OPTIONS_INIT                                                                 \
    {                                                                                             \
        TFORGE_SCORE_OPTIONS_VERSION, 0.5, 0.96, TFORGE_SCORE_CENTER_MEAN                         \
    }

/* out[b - 1] = f_rand(b) for b = 1..budget; budget <= space->n. */
int tforge_score_random_curve(double *out, const tforge_score_space *space, size_t budget);

/* The budgets at which random search reaches cutoff_start and cutoff_end (`options` NULL: the
 * defaults). A space whose median is its optimum has no cut-offs (TFORGE_EINPUT). */
int tforge_score_cutoffs(size_t *start, size_t *end, const tforge_score_space *space,
                         const tforge_score_options *options);

/* out[b - 1] = s(b) from a strategy's central best-so-far `center` and random search's `random`
 * (from tforge_score_random_curve), both `budget` entries; NaN where undefined. */
int tforge_score_curve(double *out, const double *center, const double *random, size_t budget,
                       const tforge_score_space *space);

/* What tforge_score_summary finds; the arrays have `budget` entries and are owned. */
typedef struct tforge_score_stats {
    size_t seeds, budget;
    size_t cutoff_start, cutoff_end; /* the budgets scored, both included */
    double score;                    /* mean of s(b) over those budgets */
    double p_within_5pct;         /* fraction of seeds whose best at `budget` is <= 1.05 optimum */
    double median_best_over_opt;  /* median over seeds of best at `budget` / optimum */
    /* Per budget, over seeds, NaN (and a value above the ceiling) replaced by the worst ok
     * value first. Quantiles interpolate
     * linearly between order statistics (q at position (K-1) q of the K sorted values). */
    double *mean, *median, *q25, *q75;
    double *random;       /* f_rand(b) */
    double *standardised; /* s(b) of the chosen center */
} tforge_score_stats;

/* Summarises `seeds` best-so-far traces of `budget` evaluations each: traces[k * budget + b - 1]
 * is seed k's best after b evaluations, NaN before its first ok value, never increasing after it.
 * Needs budget <= space->n and budget >= the end cut-off (the error says which budget). The last
 * two ratios are NaN when the optimum is not positive. Dispose `out` after a success. */
int tforge_score_summary(tforge_score_stats *out, const double *traces, size_t seeds,
                         size_t budget, const tforge_score_space *space,
                         const tforge_score_options *options);
void tforge_score_stats_dispose(tforge_score_stats *stats);

#ifdef __cplusplus
}
#endif
#endif
