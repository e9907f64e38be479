/* Profilers, interface "tforge.profiler/2": hardware counters of one kernel launch range, inside
 * the GPU worker process (where the CUDA context is). The shipped one (`cupti`) uses CUPTI's
 * Range Profiler with the Profiler Host API for counters and the Activity API for exact kernel
 * durations. The host runs the passes:
 *
 *     create(&s, host, options, &input)   once a worker, after the CUDA context exists
 *     for pass in 0 .. passes(s) - 1:
 *         begin(s, pass); <launch the candidate once, synchronise>; end(s, pass)
 *     collect(s, &profile)                the counters of those launches, by the names of
 *                                         profile.h
 *
 * Counters cost replay passes, so the host profiles the baseline and each new incumbent only.
 * Where the device or the driver refuses counters (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, a
 * virtualised GPU) create returns TFORGE_PROFILER_REFUSED and says why through host->error: the
 * host says so once and goes on with timing and static metrics. */
#ifndef TFORGE_PLUGIN_PROFILER_H
#define TFORGE_PLUGIN_PROFILER_H

#include "plugin.h"
#include "profile.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TFORGE_PROFILER_INTERFACE_ID "tforge.profiler/2"

/* create's answer when counters are refused on this device (not an error of the plugin). */
#define TFORGE_PROFILER_REFUSED 2

/* What a profiler is created with besides the host and its options, lent for the life of its
 * state. Of tforge.profiler/2 (ABI 1.3). */
typedef struct tforge_profiler_input {
    uint32_t struct_size;
    int device;                 /* the CUDA device ordinal */
    uint32_t n_metrics;         /* the profiler's own metric names wanted, */
    const char *const *metrics; /* NULL for its default set (the names of profile.h) */
} tforge_profiler_input;

typedef struct tforge_profiler_interface {
    uint32_t struct_size;
    /* 0, TFORGE_PROFILER_REFUSED, or a negative code (host->error says why). */
    int (*create)(void **state, const tforge_host *host, const tforge_options_view *options,
                  const tforge_profiler_input *input);
    /* Replay passes the metric set needs (>= 1; single-pass sets are preferred). */
    uint32_t (*passes)(void *state);
    /* Around the launches of one candidate, for `pass` < passes(). */
    int (*begin)(void *state, uint32_t pass);
    int (*end)(void *state, uint32_t pass);
    /* The metrics of the range since the first begin, added to `out`; sets out->counters. */
    int (*collect)(void *state, tforge_profile *out);
    void (*destroy)(void *state);
} tforge_profiler_interface;

#ifdef __cplusplus
}
#endif
#endif
