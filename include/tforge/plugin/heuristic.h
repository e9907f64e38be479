/* DRAFT, interface "tforge.heuristic/0" (not frozen: issue 16, the profile-guided loop, fills it
 * in). A heuristic turns a profiled measurement into bottleneck labels with their evidence
 * (memory-bound, low occupancy, spills ...) and into a prior over the space, one natural-log
 * weight per enumerated point, which the host hands to the strategy (tforge_strategy_interface
 * .set_prior): profiling steers the search instead of replacing it. */
#ifndef TFORGE_PLUGIN_HEURISTIC_H
#define TFORGE_PLUGIN_HEURISTIC_H

#include "plugin.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TFORGE_HEURISTIC_INTERFACE_ID "tforge.heuristic/0"

typedef struct tforge_bottleneck {
    const char *label;    /* "memory-bound", "low-occupancy", "spills" ... */
    double confidence;    /* 0 to 1 */
    const char *evidence; /* one line naming the metrics and their values */
} tforge_bottleneck;

typedef struct tforge_heuristic_interface {
    uint32_t struct_size;
    int (*create)(void **state, const tforge_host *host, const tforge_space_view *space);
    /* Labels for `m` (a measurement with profiler metrics): `*n` of them into `*out`, valid until
     * the next call. */
    int (*classify)(void *state, const tforge_measurement *m, const tforge_bottleneck **out,
                    uint32_t *n);
    /* A log weight per enumerated point of the space (`n` == its count), given the labels. */
    int (*prior)(void *state, const tforge_bottleneck *labels, uint32_t n_labels,
                 double *log_weight, uint64_t n);
    void (*destroy)(void *state);
} tforge_heuristic_interface;

#ifdef __cplusplus
}
#endif
#endif
