/* The strategy lab: runs one strategy with one seed against a replayed space, evaluation by
 * evaluation, as the tuning loop would against a GPU. */
#ifndef TFORGE_ENGINE_LAB_H
#define TFORGE_ENGINE_LAB_H

#include "registry.h"
#include "replay.h"

/* One evaluation, in the order made. */
typedef struct tforge_lab_eval {
    uint64_t index; /* the point, as an index of the replay's enumerated space */
    tforge_status status;
    double value;      /* ms, when status is OK */
    double spread;     /* relative spread of the recorded runs */
    double charged_ms; /* recorded compile + benchmark time */
} tforge_lab_eval;

/* Called after each evaluation (to store it); a nonzero return stops the run with that code. */
typedef int (*tforge_lab_sink)(void *context, uint32_t sequence, const tforge_lab_eval *eval);

typedef struct tforge_lab_run_options {
    unsigned version;
    const char *strategy;        /* plugin id */
    const char *const *options;  /* "key=value", NULL-terminated, may be NULL */
    uint64_t seed;
    uint32_t budget;             /* evaluations */
    uint32_t batch;              /* points asked at once, >= 1 */
    int noise;                   /* draw values from the recorded individual runs */
    /* Evaluations already made by an earlier, interrupted run with the same settings: they are
     * told again instead of evaluated, and must be what the strategy proposes again. */
    const tforge_lab_eval *done;
    uint32_t n_done;
    tforge_lab_sink sink;        /* may be NULL */
    void *sink_context;
} tforge_lab_run_options;
#define TFORGE_LAB_RUN_OPTIONS_VERSION 1
#define TFORGE_LAB_RUN_OPTIONS_INIT {TFORGE_LAB_RUN_OPTIONS_VERSION, "random", NULL, 1, 100, 1, \
                                     0, NULL, 0, NULL, NULL}

/* Runs to the budget (or until the strategy has nothing left). Fills best[b] with the best value
 * after b + 1 evaluations (NaN before the first OK one; the last best repeated after an early
 * end) and, if not NULL, charged[b] with the cumulative charged time in ms. `*n_evals` is how
 * many evaluations were made. A strategy that proposes an invalid or an already evaluated point
 * is an error that names it. */
int tforge_lab_run(double *best, double *charged, uint32_t *n_evals, const tforge_registry *reg,
                   const tforge_replay *replay, const tforge_lab_run_options *options);

#endif
