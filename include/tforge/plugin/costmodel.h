/* Interface "tforge.costmodel/1" (frozen): the objective, and what can be known of a candidate's
 * cost before it runs. `score` turns a measurement into the objective's value (lower is better)
 * that the loop compares and the strategy is told: latency (the default, the median in ms),
 * energy (joules per launch, from the GPU worker's NVML readings), energy-delay. `predict` bounds
 * a candidate from what is known before it runs (its static metrics, the task's bytes and flops,
 * the device's measured peaks): the roofline model prunes with the bound, gives the Gaussian
 * process its prior mean, and stops a tune near it. A model may offer either or both (NULL). */
#ifndef TFORGE_PLUGIN_COSTMODEL_H
#define TFORGE_PLUGIN_COSTMODEL_H

#include "plugin.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TFORGE_COSTMODEL_INTERFACE_ID "tforge.costmodel/1"

/* The device a candidate runs on: counts from the driver, peaks measured once per device and
 * cached by the host (never a data sheet's). NAN or 0 where unknown. */
typedef struct tforge_costmodel_device {
    uint32_t struct_size;
    const char *name;            /* "NVIDIA H100 80GB HBM3" */
    uint32_t sms;
    uint32_t max_threads_per_sm;
    uint32_t registers_per_sm;
    uint32_t shared_bytes_per_sm;
    double dram_bytes_per_s;     /* measured: a streaming copy */
    double flops_per_s;          /* measured: fp16 tensor-core dots */
    double flops_per_s_fp32;     /* measured: fp32 FMA */
} tforge_costmodel_device;

/* What is known of a candidate before it runs. Lent for the call; NAN or 0 where unknown. */
typedef struct tforge_costmodel_candidate {
    uint32_t struct_size;
    double bytes;                /* DRAM bytes the task must move at the tuning shape (its cost) */
    double flops;                /* floating-point operations at the tuning shape */
    uint64_t programs;           /* the grid's size */
    uint32_t warps;
    uint32_t registers;          /* per thread, from the compile */
    uint32_t shared_bytes;       /* per program, from the compile */
    uint32_t uses_tensor_cores;  /* 1 when the kernel has a dot */
    const tforge_costmodel_device *device;
} tforge_costmodel_candidate;

/* A prediction in the objective's own unit (ms for latency, J for energy). */
typedef struct tforge_costmodel_prediction {
    double lower;     /* no candidate can do better than this: safe to prune against */
    double estimate;  /* the model's best guess */
    double sigma;     /* its uncertainty (one standard deviation), NAN when unknown */
} tforge_costmodel_prediction;

typedef struct tforge_costmodel_interface {
    uint32_t struct_size;
    /* The head every kind's create shares (plugin.h). */
    int (*create)(void **state, const tforge_host *host, const tforge_options_view *options);
    /* The objective's name and unit, for reports: "latency" "ms", "energy" "J". */
    const char *(*objective)(void *state);
    const char *(*unit)(void *state);
    /* Sets m->value from the rest of `m` (its times and metrics: "energy_j", "power_w", ...);
     * may add metrics it computed. A measurement whose status is not OK is left as it is; one
     * that lacks what the objective needs gets status OK, value NAN and a message saying what is
     * missing. NULL for a model that only predicts. */
    int (*score)(void *state, tforge_measurement *m);
    /* Bounds a candidate before it runs; returns 0, or TFORGE_PLUGIN_EINPUT when what it needs
     * is unknown (no bytes nor flops). NULL for a model that only scores. */
    int (*predict)(void *state, const tforge_costmodel_candidate *candidate,
                   tforge_costmodel_prediction *out);
    void (*destroy)(void *state);
} tforge_costmodel_interface;

#ifdef __cplusplus
}
#endif
#endif
