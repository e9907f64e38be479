/* The tuning loop: baselines first, then the strategy's proposals, evaluated in batches, every
 * evaluation committed to the store before the strategy hears of it; a new best must beat the
 * incumbent by more than the measured noise, and the final top few are re-timed interleaved
 * with the baseline before the winner is named. */
#ifndef TFORGE_ENGINE_TUNE_H
#define TFORGE_ENGINE_TUNE_H

#include "evaluate.h"
#include "registry.h"
#include "store.h"

typedef struct tforge_tune_eval {
    char *config;         /* JSON object text */
    int baseline;         /* 1 for the task's baselines */
    tforge_result result;
    double best;          /* the incumbent's value after this evaluation (NAN before any) */
    double elapsed_s;     /* since the start */
} tforge_tune_eval;

typedef struct tforge_tune_outcome {
    tforge_tune_eval *evals;
    size_t n_evals, n_resumed;
    int64_t run_id;
    /* after the final interleaved re-timing; -1 when nothing could be timed */
    long best, baseline;  /* indexes into evals */
    double best_ms, baseline_ms, speedup;
    unsigned restarts;
    double seconds;
} tforge_tune_outcome;

#define TFORGE_TUNE_OPTIONS_VERSION 1
typedef struct tforge_tune_options {
    unsigned version;
    const char *strategy;
    const char *const *strategy_options; /* "key=value", NULL-terminated; may be NULL */
    uint64_t seed;
    uint32_t budget;         /* candidates, baselines not counted */
    double time_limit_s;     /* 0: none */
    uint32_t batch;          /* candidates asked at once */
    uint32_t final_top, final_rounds; /* re-timing at the end */
    tforge_store *store;     /* may be NULL */
    const char *settings_json, *environment_json; /* for the store's run row */
    int resume;              /* continue the stored run with the same settings */
    int progress;            /* a live line on standard error */
} tforge_tune_options;
#define TFORGE_TUNE_OPTIONS_INIT                                                                  \
    {TFORGE_TUNE_OPTIONS_VERSION, "random", NULL, 1, 50, 0, 4, 3, 5, NULL, "{}", "{}", 0, 0}

int tforge_tune_run(tforge_tune_outcome *out, const tforge_registry *registry,
                    const tforge_task *task, tforge_evaluator *evaluator,
                    const tforge_tune_options *options);
void tforge_tune_outcome_dispose(tforge_tune_outcome *outcome);

#endif
