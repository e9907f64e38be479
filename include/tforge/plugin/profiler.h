/* DRAFT, interface "tforge.profiler/0" (not frozen: issue 16 fills it in, with a CUPTI profiler
 * in C inside the GPU worker: the Range Profiler and the Profiler Host API for counters, the
 * Activity API for exact kernel durations). A profiler collects metrics of one kernel launch
 * range; the host adds them to the candidate's measurement (tforge_measurement.metrics), where
 * heuristics and cost models read them. */
#ifndef TFORGE_PLUGIN_PROFILER_H
#define TFORGE_PLUGIN_PROFILER_H

#include "plugin.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TFORGE_PROFILER_INTERFACE_ID "tforge.profiler/0"

typedef struct tforge_profiler_args {
    uint32_t struct_size;
    const tforge_host *host;
    int device;                    /* the CUDA device ordinal */
    uint32_t n_metrics;            /* metric names wanted ("sm__throughput.avg.pct_of_peak..."), */
    const char *const *metrics;    /* NULL for the profiler's default set */
} tforge_profiler_args;

typedef struct tforge_profiler_interface {
    uint32_t struct_size;
    int (*create)(void **state, const tforge_profiler_args *args);
    /* Replay passes the metric set needs (1 is best: single-pass sets are preferred). */
    uint32_t (*passes)(void *state);
    /* Around the launches of one candidate, `pass` of passes(). */
    int (*begin)(void *state, uint32_t pass);
    int (*end)(void *state, uint32_t pass);
    /* The metrics of the range, added to `out` (their names shortened to identifiers). */
    int (*collect)(void *state, tforge_measurement *out);
    void (*destroy)(void *state);
} tforge_profiler_interface;

#ifdef __cplusplus
}
#endif
#endif
