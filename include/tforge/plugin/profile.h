/* A profile: what is known about one candidate beyond its time, as named numbers. Part of the
 * interfaces "tforge.profiler/2" and "tforge.heuristic/2"; the layout never changes.
 *
 * Static metrics come from every compiled candidate (Triton's metadata, the device's limits, the
 * launch's grid, the task's bytes and flops); counter metrics from a profiler plugin on the GPU
 * (CUPTI), for the baseline and each new incumbent only (counters cost replay passes). A metric
 * that was not measured is absent, never zero: a heuristic whose evidence is absent says nothing.
 *
 * The names every part agrees on (a profiler may add others; percentages are 0 to 100, shares
 * and fractions 0 to 1):
 *
 *   static, from the compile and the device's rules
 *     registers, spill_stores, spill_loads, shared_bytes    per thread / per block, as compiled
 *     num_warps, grid_blocks                                the launch
 *     blocks_per_sm, occupancy_theoretical                  resident blocks, warps / max warps
 *     occupancy_limiter        1 registers, 2 shared memory, 3 warps, 4 blocks per SM
 *     waves, last_wave_fill    grid_blocks / (blocks_per_sm * SMs); the last wave's filled share
 *     bytes, flops             the launch's DRAM traffic and arithmetic (task or analysis)
 *     intensity                flops / bytes
 *     dram_share, flops_share  achieved bandwidth and arithmetic over the device's peaks, from
 *                              bytes, flops and the time
 *     time_ms                  the candidate's median time
 *   counters, from a profiler
 *     kernel_ms                the launch's duration from the activity records
 *     kernel_launches          launches of the kernel named to the profiler (cupti's option
 *                              `kernel`) it saw while it profiled
 *     sm_pct, dram_pct, l2_pct       SM, DRAM and L2 throughput, % of peak sustained
 *     dram_bytes                     bytes the kernel moved to and from DRAM (against `bytes`:
 *                                    re-reads beyond the compulsory traffic)
 *     dram_read_bytes, dram_write_bytes  the same, read and written apart
 *     sm_clock_ghz                   the SMs' clock while the kernel ran
 *     instructions                   warp instructions executed
 *     occupancy_achieved             achieved active warps / max warps per SM (share)
 *     issue_pct                      issue slots busy, % of peak
 *     stall_<reason>                 share of warp-stall samples: long_scoreboard,
 *                                    short_scoreboard, barrier, mio_throttle, lg_throttle,
 *                                    math_pipe, not_selected, wait, dispatch, membar, branch
 *     inst_<class>                   share of executed instructions: fp32, fp16, tensor, int,
 *                                    memory, control
 *     l2_sectors_per_request         global load sectors per request (4 is coalesced fp32)
 *     smem_conflicts_per_request     shared-memory bank conflicts per wavefront request */
#ifndef TFORGE_PLUGIN_PROFILE_H
#define TFORGE_PLUGIN_PROFILE_H

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TFORGE_PROFILE_METRICS 64

/* Whether counters are in the profile, and if not, why. */
typedef enum tforge_counters_state {
    TFORGE_COUNTERS_NONE = 0,    /* not asked for (no profiler, or not an incumbent) */
    TFORGE_COUNTERS_OK = 1,      /* the profiler's metrics are in */
    TFORGE_COUNTERS_REFUSED = 2, /* the device or the driver refused them; `note` says why */
    TFORGE_COUNTERS_FAILED = 3   /* the profiler failed on this candidate; `note` says why */
} tforge_counters_state;

/* A plain value: copy it freely, nothing inside is owned. */
typedef struct tforge_profile {
    uint32_t struct_size;
    uint32_t counters; /* a tforge_counters_state */
    uint32_t n_metrics;
    tforge_metric metrics[TFORGE_PROFILE_METRICS];
    char note[256]; /* why counters are missing ("CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ..."), or "" */
} tforge_profile;

#ifdef __cplusplus
}
#endif
#endif
