/* Search strategies, interface "tforge.strategy/1": ask for points of a space, tell what they
 * measured. The host runs the loop (as GSL's minimisers do); the strategy only proposes.
 *
 * A point is a vector of level indices, one per dimension: level l of dimension d is the l-th
 * value of that parameter's list (ranges and booleans are lists too). */
#ifndef TFORGE_PLUGIN_STRATEGY_H
#define TFORGE_PLUGIN_STRATEGY_H

#include "plugin.h"
#include "rng.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TFORGE_STRATEGY_INTERFACE_ID "tforge.strategy/1"

typedef uint16_t tforge_level;

#define TFORGE_NO_INDEX UINT64_MAX

typedef enum tforge_dim_kind {
    TFORGE_DIM_ORDINAL = 0,     /* ordered numeric values (ranges, powers of two, lists) */
    TFORGE_DIM_CATEGORICAL = 1, /* unordered values, strings included */
    TFORGE_DIM_BOOLEAN = 2      /* levels 0 (false) and 1 (true) */
} tforge_dim_kind;

/* How an evaluation ended. Only TFORGE_STATUS_OK carries a value. */
typedef enum tforge_status {
    TFORGE_STATUS_OK = 0,
    TFORGE_STATUS_COMPILE = 1,   /* did not compile, or out of resources at compile time */
    TFORGE_STATUS_RUNTIME = 2,   /* crashed or failed to launch */
    TFORGE_STATUS_TIMEOUT = 3,   /* never finished */
    TFORGE_STATUS_WRONG = 4,     /* ran, computed a wrong answer */
    TFORGE_STATUS_CONSTRAINT = 5 /* refused by a known constraint before it ran */
} tforge_status;

/* A read-only view of a space, lent by the host for the strategy's whole life. Every function
 * takes `context` first; none allocates for the caller. Grows only at the end. */
typedef struct tforge_space_view {
    uint32_t struct_size;
    void *context;
    uint32_t (*dims)(void *context);
    uint32_t (*levels)(void *context, uint32_t dim);          /* >= 1 */
    uint32_t (*kind)(void *context, uint32_t dim);            /* a tforge_dim_kind */
    const char *(*name)(void *context, uint32_t dim);
    /* The numeric value of an ordinal or boolean level; for a categorical, the level itself. */
    double (*value)(void *context, uint32_t dim, uint32_t level);
    /* Valid points enumerated, in a fixed order; 0 when the space is too large to enumerate. */
    uint64_t (*count)(void *context);
    /* Copies valid point `index` (< count) into `out` (dims entries). */
    void (*point)(void *context, uint64_t index, tforge_level *out);
    /* Index of a valid enumerated point, or TFORGE_NO_INDEX (invalid, or not enumerated). */
    uint64_t (*index_of)(void *context, const tforge_level *point);
    /* 1 when the point satisfies every known constraint, else 0. */
    int (*is_valid)(void *context, const tforge_level *point);
    /* A valid point drawn uniformly with `rng` into `out`; 0, or a negative code when none could
     * be found. */
    int (*sample)(void *context, tforge_rng *rng, tforge_level *out);
} tforge_space_view;

/* One evaluated point, as told to the strategy. Pointers are valid only during the call. */
typedef struct tforge_observation {
    const tforge_level *point; /* dims entries */
    uint32_t status;           /* a tforge_status */
    double value;              /* the objective, lower is better (time in ms); when status is OK */
    double spread;             /* relative noise of `value` (IQR / median), 0 when unknown */
} tforge_observation;

/* What a strategy is created with; everything it points to outlives the strategy. */
typedef struct tforge_strategy_args {
    uint32_t struct_size;
    const tforge_host *host;
    const tforge_space_view *space;
    uint64_t seed;    /* every random choice comes from this */
    uint32_t budget;  /* evaluations the host intends to spend, 0 when unknown */
    uint32_t n_options;
    const char *const *option_keys; /* string-named settings, "temperature" = "0.5" */
    const char *const *option_values;
} tforge_strategy_args;

typedef struct tforge_strategy_interface {
    uint32_t struct_size;
    /* Creates the state. Unknown or malformed options are errors (host->error names them). */
    int (*create)(void **state, const tforge_strategy_args *args);
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
} tforge_strategy_interface;

#ifdef __cplusplus
}
#endif
#endif
