/* The types every kind of plugin shares: points and their levels, how an evaluation ended, the
 * read-only view of a space and what its dimensions change, what a strategy is told, and one
 * measurement. Part of ABI 1; the layouts below never change, the tables only grow at the end.
 *
 * A point is a vector of level indices, one per dimension: level l of dimension d is the l-th
 * value of that parameter's list (ranges and booleans are lists too). */
#ifndef TFORGE_PLUGIN_TYPES_H
#define TFORGE_PLUGIN_TYPES_H

#include "rng.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef uint16_t tforge_level;

#define TFORGE_NO_INDEX UINT64_MAX

typedef enum tforge_dim_kind {
    TFORGE_DIM_ORDINAL = 0,     /* ordered numeric values (ranges, powers of two, lists) */
    TFORGE_DIM_CATEGORICAL = 1, /* unordered values, strings included */
    TFORGE_DIM_BOOLEAN = 2      /* levels 0 (false) and 1 (true) */
} tforge_dim_kind;

/* What a dimension changes in the kernel, so that a heuristic, a report or a strategy reads what
 * a dimension is from the dimension, never from its name. A closed list (ABI 1.3): a new effect
 * is a new minor. Transform plugins declare the effect of each parameter (transform.h); the host
 * gives the task's own knobs theirs where it makes them. */
typedef enum tforge_dim_effect {
    TFORGE_EFFECT_UNKNOWN = 0,         /* undeclared (a plugin before ABI 1.3), or none below */
    TFORGE_EFFECT_TILE = 1,            /* a block size of the kernel's tiling (BLOCK_M) */
    TFORGE_EFFECT_TILE_CONTIGUOUS = 2, /* a tile along the operands' contiguous axis (BLOCK_N,
                                          BLOCK_K of a row-major GEMM, a 1-D BLOCK_SIZE): wider
                                          loads */
    TFORGE_EFFECT_WARPS = 3,           /* warps per program (num_warps) */
    TFORGE_EFFECT_STAGES = 4,          /* the launch's pipeline depth for every loop (num_stages) */
    TFORGE_EFFECT_PIPELINE_STAGES = 5, /* the pipeline depth of one loop (tl.range's num_stages) */
    TFORGE_EFFECT_UNROLL = 6,          /* a loop's unroll factor */
    TFORGE_EFFECT_FLATTEN = 7,         /* a loop nest flattened into one loop */
    TFORGE_EFFECT_ACC_BUFFERS = 8,     /* a dot's accumulator kept in one buffer */
    TFORGE_EFFECT_REGISTER_CAP = 9,    /* registers per thread capped (maxnreg) */
    TFORGE_EFFECT_CLUSTER = 10,        /* programs per thread-block cluster (num_ctas) */
    TFORGE_EFFECT_PROGRAMS = 11,       /* how many programs run (persistent scheduling) */
    TFORGE_EFFECT_SWIZZLE = 12,        /* the order programs take tiles in (GROUP_M) */
    TFORGE_EFFECT_SPLIT_K = 13,        /* a GEMM's K split over more programs */
    TFORGE_EFFECT_EVICTION = 14,       /* a load's cache eviction hint */
    TFORGE_EFFECT_TMA = 15,            /* loads or stores through tensor descriptors (TMA) */
    TFORGE_EFFECT_PRECISION = 16,      /* a dot's input precision */
    TFORGE_EFFECT_MASK = 17,           /* masks taken off the iterations that need none */
    TFORGE_EFFECT_FOLD = 18            /* a multiply folded away: fewer instructions, same work */
} tforge_dim_effect;
#define TFORGE_EFFECT_COUNT 19

/* The one spelling of each effect, in tforge_dim_effect order. */
#define TFORGE_EFFECT_NAMES                                                                       \
    {"unknown", "tile", "tile-contiguous", "warps", "stages", "pipeline-stages", "unroll",       \
     "flatten", "acc-buffers", "register-cap", "cluster", "programs", "swizzle", "split-k",       \
     "eviction", "tma", "precision", "mask", "fold"}

/* The owner of the dimensions that are the task's own knobs (its parameters and launch options);
 * a transform's dimensions are owned by the transform's id. */
#define TFORGE_DIM_OWNER_KNOB "knob"

/* How an evaluation ended. Only TFORGE_STATUS_OK carries a value. */
typedef enum tforge_status {
    TFORGE_STATUS_OK = 0,
    TFORGE_STATUS_COMPILE = 1,   /* did not compile, or out of resources at compile time */
    TFORGE_STATUS_RUNTIME = 2,   /* crashed or failed to launch */
    TFORGE_STATUS_TIMEOUT = 3,   /* never finished */
    TFORGE_STATUS_WRONG = 4,     /* ran, computed a wrong answer */
    TFORGE_STATUS_CONSTRAINT = 5 /* refused by a known constraint before it ran */
} tforge_status;
#define TFORGE_STATUS_COUNT 6

/* The one spelling of each status, in tforge_status order: what the store, the worker protocol,
 * reports and recordings write. */
#define TFORGE_STATUS_NAMES {"ok", "compile", "runtime", "timeout", "wrong", "constraint"}

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
    /* since 1.3 (check struct_size): what a dimension is. Its owner, the transform's id or
     * TFORGE_DIM_OWNER_KNOB; and its effect, a tforge_dim_effect. */
    const char *(*owner)(void *context, uint32_t dim);
    uint32_t (*effect)(void *context, uint32_t dim);
} tforge_space_view;

/* One evaluated point, as told to the strategy. Pointers are valid only during the call. */
typedef struct tforge_observation {
    const tforge_level *point; /* dims entries */
    uint32_t status;           /* a tforge_status */
    double value;              /* the objective, lower is better (time in ms); when status is OK */
    double spread;             /* relative noise of `value` (IQR / median), 0 when unknown */
} tforge_observation;

/* A named number a measurement carries beyond its timing: registers, spill stores, shared
 * memory, a profiler's counters, a cost model's energy. */
#define TFORGE_METRIC_NAME_SIZE 32
#define TFORGE_MEASUREMENT_METRICS 16
typedef struct tforge_metric {
    char name[TFORGE_METRIC_NAME_SIZE]; /* an identifier, NUL-terminated */
    double value;
} tforge_metric;

/* One evaluation of one candidate, as every part of the engine sees it (backends, the loop, the
 * store, replay, cost models). A plain value: copy it freely, nothing inside is owned. Numbers
 * that were not measured are NAN. */
typedef struct tforge_measurement {
    uint32_t status;   /* a tforge_status */
    uint32_t repeats;  /* timed runs behind the median */
    double value;      /* the objective's value, lower is better (ms unless a cost model says
                          otherwise); NAN unless status is OK and the backend times */
    double median_ms;  /* median kernel time */
    double min_ms;
    double spread;     /* relative noise: IQR / median, 0 when unknown */
    double compile_ms; /* compile time of this candidate */
    double wall_ms;    /* wall time charged to this evaluation (recorded cost, for replay) */
    uint32_t n_metrics;
    tforge_metric metrics[TFORGE_MEASUREMENT_METRICS];
    char message[256]; /* why it failed, "" when it did not */
} tforge_measurement;

#ifdef __cplusplus
}
#endif
#endif
