/* Bottleneck heuristics, interface "tforge.heuristic/2": a profile (profile.h) turned into
 * labels with their evidence, and labels into a prior over the space's levels, which the host
 * hands to the strategy (tforge_strategy_interface.set_level_prior): profiling steers the search
 * instead of replacing it, and a wrong label fades as observations come (piBO).
 *
 * The labels every part agrees on: "memory-bound", "compute-bound", "latency-bound",
 * "low-occupancy", "register-spills", "tail-effect" (a partial last wave), "uncoalesced",
 * "smem-conflicts", "launch-bound". A heuristic may add its own. */
#ifndef TFORGE_PLUGIN_HEURISTIC_H
#define TFORGE_PLUGIN_HEURISTIC_H

#include "plugin.h"
#include "profile.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TFORGE_HEURISTIC_INTERFACE_ID "tforge.heuristic/2"

typedef struct tforge_bottleneck {
    const char *label;    /* "memory-bound", "low-occupancy" ... */
    double confidence;    /* 0 to 1 */
    const char *evidence; /* the metrics and their values: "dram_pct 87.1, sm_pct 23.0" */
    const char *rule;     /* the rule with the thresholds it used: "dram_pct >= 60 > sm_pct" */
} tforge_bottleneck;

/* What a heuristic is created with besides the host and its options; everything it points to
 * outlives it. Of tforge.heuristic/2 (ABI 1.3). */
typedef struct tforge_heuristic_input {
    uint32_t struct_size;
    const tforge_space_view *space;
    /* One per dimension: the transform id whose parameter it is ("persistent", "eviction"), or
     * "" for the task's own knobs (tiles, num_warps, num_stages). Since ABI 1.3 the space view
     * says this and more (owner and effect of each dimension): read those; a heuristic finds
     * no role from a dimension's name. */
    const char *const *families;
} tforge_heuristic_input;

typedef struct tforge_heuristic_interface {
    uint32_t struct_size;
    /* Unknown or malformed options are errors (host->error names them). */
    int (*create)(void **state, const tforge_host *host, const tforge_options_view *options,
                  const tforge_heuristic_input *input);
    /* Labels for `profile`: `*n` of them into `*out` (strongest first), valid until the next
     * call. A label needs its evidence: absent metrics give no label, never a guess. */
    int (*classify)(void *state, const tforge_profile *profile, const tforge_bottleneck **out,
                    uint32_t *n);
    /* The prior the labels favour, as one natural-log weight per level of every dimension,
     * dimension by dimension (`n` == the sum of the levels of all dims); 0 is neutral, only
     * differences within a dimension matter. `at` is the point the labels were measured at
     * (the incumbent): directions ("smaller tiles") are relative to it. */
    int (*prior)(void *state, const tforge_bottleneck *labels, uint32_t n_labels,
                 const tforge_level *at, double *log_weight, uint64_t n);
    void (*destroy)(void *state);
} tforge_heuristic_interface;

#ifdef __cplusplus
}
#endif
#endif
