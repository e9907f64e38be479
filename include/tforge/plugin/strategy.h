/* Search strategies, interface "tforge.strategy/2": ask for points of a space, tell what they
 * measured. The host runs the loop (as GSL's minimisers do); the strategy only proposes.
 * Points, statuses, the space view and observations are the shared types of types.h. */
#ifndef TFORGE_PLUGIN_STRATEGY_H
#define TFORGE_PLUGIN_STRATEGY_H

#include "plugin.h"
#include "rng.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TFORGE_STRATEGY_INTERFACE_ID "tforge.strategy/2"

/* Since 1.1: every observation told so far, in the order told (baselines and a resumed run's
 * included), kept by the host so that a strategy need not keep its own copy. */
typedef struct tforge_history_view {
    uint32_t struct_size;
    void *context;
    uint64_t (*count)(void *context);
    /* Observation `index` (< count); its point lives as long as the strategy. */
    tforge_observation (*get)(void *context, uint64_t index);
} tforge_history_view;

/* What a strategy is created with besides the host and its options; everything it points to
 * outlives the strategy. Of tforge.strategy/2 (ABI 1.3). */
typedef struct tforge_strategy_input {
    uint32_t struct_size;
    const tforge_space_view *space;
    uint64_t seed;    /* every random choice comes from this */
    uint32_t budget;  /* evaluations the host intends to spend, 0 when unknown */
    const tforge_history_view *history; /* what was told, NULL when the host keeps none */
} tforge_strategy_input;

typedef struct tforge_strategy_interface {
    uint32_t struct_size;
    /* Creates the state. Unknown or malformed options are errors (host->error names them);
     * `host` may be NULL (a strategy driven alone, by a test or a benchmark). */
    int (*create)(void **state, const tforge_host *host, const tforge_options_view *options,
                  const tforge_strategy_input *input);
    /* Proposes up to `q` distinct, valid, never-proposed points into `out` (q * dims levels) and
     * sets `*n_out`; fewer than q (0 included) means the strategy has nothing more to propose. */
    int (*ask)(void *state, uint32_t q, tforge_level *out, uint32_t *n_out);
    /* Reports evaluations of points it proposed, in any order. */
    int (*tell)(void *state, const tforge_observation *observations, uint32_t n);
    void (*destroy)(void *state);
    /* Optional (NULL for strategies that ignore priors; a host checks struct_size first): a
     * prior belief about where the good points are, as one natural-log weight per enumerated
     * point (`n` == the view's count; -inf allowed, NaN not; only differences matter). Copied
     * before the call returns; a later call replaces it. Call it before the first ask.
     * Strategies that use it should let the data overrule it (piBO's decaying exponent). */
    int (*set_prior)(void *state, const double *log_weight, uint64_t n);
    /* Since 1.2, optional: a prior as one natural-log weight per level of every dimension,
     * dimension by dimension (`n` == the sum of the view's levels), for spaces of any size: a
     * point's weight is the sum of its levels'. Copied before the call returns; it may be called
     * between asks (the profile-guided loop re-classifies each new incumbent) and replaces any
     * earlier prior of either kind; all zeros removes it. */
    int (*set_level_prior)(void *state, const double *log_weight, uint64_t n);
} tforge_strategy_interface;

#ifdef __cplusplus
}
#endif
#endif
