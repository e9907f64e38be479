/* Profiles as values (tforge_profile, include/tforge/plugin/profile.h): metrics set and read by
 * name, the static metrics derived from a compiled candidate and the device's limits (occupancy
 * by the CUDA occupancy calculator's rules, waves, the roofline position), and the JSON form the
 * store, result.json and the GPU worker exchange. The rules are in README.md. */
#ifndef TFORGE_ENGINE_PROFILE_H
#define TFORGE_ENGINE_PROFILE_H

#include "tforge/plugin/profile.h"
#include "tforge/plugin/types.h"

/* The device's limits that occupancy, waves and the roofline need. A peak that is not known is
 * NAN, and the shares over it are then absent. */
typedef struct tforge_device_limits {
    char name[64];
    unsigned sms, max_warps_per_sm, max_blocks_per_sm, max_threads_per_block;
    unsigned regs_per_sm, regs_per_block;
    unsigned reg_alloc_unit;         /* registers: a warp's allocation is a multiple of this */
    unsigned reg_sub_partitions;     /* register file partitions: warps are placed per partition */
    unsigned max_regs_per_thread;
    unsigned smem_per_sm, smem_per_block_optin, smem_reserved_per_block; /* bytes */
    unsigned smem_alloc_unit;        /* bytes: a block's allocation is a multiple of this */
    double dram_gbs, fp16_tflops, fp32_tflops; /* peaks (dense fp16 on the tensor cores) */
} tforge_device_limits;

/* The NVIDIA H200 SXM (sm_90): the embedded default (replay, no GPU). Sources in README.md. */
const tforge_device_limits *tforge_device_h200(void);

/* Limits from a worker's JSON object of torch's device properties (name, major, minor,
 * multi_processor_count, regs_per_multiprocessor, shared_memory_per_multiprocessor,
 * shared_memory_per_block_optin, max_threads_per_multi_processor), the rest from the sm_90
 * table (only sm_90 is known). The peaks are the H200's when the name says H200; optional
 * fields dram_gbs, fp16_tflops, fp32_tflops give them otherwise (else NAN). TFORGE_EINPUT
 * naming the field for a missing or mistyped one, or another architecture. */
int tforge_device_limits_from_json(tforge_device_limits *out, const char *json_text);

/* No metrics, counters NONE, note "". */
void tforge_profile_init(tforge_profile *p);
/* Sets (or replaces) a metric, as tforge_measurement_set_metric: TFORGE_EINPUT for a name that
 * is not an identifier or too long, TFORGE_ERROR when the table is full; NAN sets nothing. */
int tforge_profile_set(tforge_profile *p, const char *name, double value);
/* The metric's value, or NAN when absent. */
double tforge_profile_get(const tforge_profile *p, const char *name);

/* Whether `name` is one of profile.h's names (stall_* and inst_* by their prefix), and whether
 * it is a counter's (a profiler's) rather than a static metric. */
int tforge_profile_known_name(const char *name);
int tforge_profile_counter_name(const char *name);

/* Adds the static metrics of profile.h that the inputs allow; an absent input (NAN, or a
 * metric neither `m` nor `p` has) leaves the metrics derived from it absent. From `m`:
 * registers, spill_stores, spill_loads, shared_bytes (its metrics, else those `p` already has,
 * as a recording's) and time_ms (its median_ms); given:
 * num_warps, grid_blocks, bytes, flops. Derived: blocks_per_sm, occupancy_theoretical and
 * occupancy_limiter (registers, shared_bytes, num_warps), waves and last_wave_fill (and
 * grid_blocks), intensity (flops, bytes), dram_share (bytes, time), flops_share (flops, time).
 * `m` may be NULL. Returns 0, or TFORGE_ERROR when the profile's table is full. */
int tforge_profile_add_static(tforge_profile *p, const tforge_device_limits *d,
                              const tforge_measurement *m, double num_warps, double grid_blocks,
                              double bytes, double flops);

/* {"counters": "ok", "note": "", "metrics": {"registers": 128, ...}}; malloc'd (free it), NULL
 * when out of memory. */
char *tforge_profile_to_json(const tforge_profile *p);
/* The same text back; `where` names its source in errors ("the store, run 3"). TFORGE_EINPUT
 * naming the field for anything malformed; `p` is untouched then. */
int tforge_profile_from_json(tforge_profile *p, const char *json_text, const char *where);

#endif
