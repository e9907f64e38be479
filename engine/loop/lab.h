/* The strategy lab: one strategy with one seed on a recorded space, as the tuning loop would run
 * it against a GPU: the loop over the replay backend, stored and resumed when given a store;
 * forge and rules steered by the replay backend's profiles (the recorded metrics). */
#ifndef TFORGE_ENGINE_LAB_H
#define TFORGE_ENGINE_LAB_H

#include "loop.h"

#define TFORGE_LAB_RUN_OPTIONS_VERSION 5
typedef struct tforge_lab_run_options {
    unsigned version;
    const char *strategy;        /* plugin id, or forge / rules: steered by the profile (forge.h) */
    const char *const *options;  /* "key=value", NULL-terminated, may be NULL */
    uint64_t seed;
    uint32_t budget;             /* evaluations */
    uint32_t batch;              /* points asked at once, >= 1 */
    int noise;                   /* draw values from the recorded individual runs */
    /* With a store, each evaluation is recorded in the run of these settings (source, strategy,
     * settings, seed, budget), which is resumed when it is there already. */
    tforge_store *store;
    const char *source;          /* the recording's file */
    const char *settings_json;   /* what else tells runs apart: options, batch, noise */
    /* since 3: the heuristic that steers forge and rules (NULL: bottleneck), with its options
     * ("key=value", NULL-terminated, may be NULL); patience (0: none, see loop.h) */
    const char *heuristic;
    const char *const *heuristic_options;
    uint32_t patience;
    /* since 4: each batch proposed before the one before it is told, as tune's compile-ahead
     * proposes (loop.h), so that what that lag costs a strategy can be measured */
    int lookahead;
    /* since 5: the objective that scores each replayed measurement (a cost model, lent); NULL:
     * the replay's own objective (time, or the recorded metric it was set to) */
    tforge_costmodel *objective;
} tforge_lab_run_options;
#define TFORGE_LAB_RUN_OPTIONS_INIT {TFORGE_LAB_RUN_OPTIONS_VERSION, "random", NULL, 1, 100, 1, \
                                     0, NULL, NULL, NULL, NULL, NULL, 0, 0, NULL}

/* Runs to the budget (or until the strategy has nothing left). Fills best[b] with the best value
 * after b + 1 evaluations (NaN before the first OK one; the last best repeated after an early
 * end) and, if not NULL, charged[b] with the cumulative charged time in ms. `*n_evals` is how
 * many evaluations were made. A strategy that proposes an invalid or an already evaluated point
 * is an error that names it. */
int tforge_lab_run(double *best, double *charged, uint32_t *n_evals, const tforge_registry *reg,
                   const tforge_replay *replay, const tforge_lab_run_options *options);

#endif
