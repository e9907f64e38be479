/* Profiles as values, the static metrics of a candidate, and their JSON (see profile.h). */
#include "profile.h"

#include "tforge/error.h"
#include "tforge/measurement.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

enum { WARP_SIZE = 32 };

/* The H200 SXM. Per-SM and per-block limits: the CUDA C++ Programming Guide, "Technical
 * Specifications per Compute Capability" (9.0); the granularities: cuda_occupancy.h of the CUDA
 * toolkit (cudaOccRegAllocationGranularity 256, cudaOccSubPartitionsPerMultiprocessor 4,
 * cudaOccSMemAllocationGranularity 128 for sm_8x/sm_9x); 132 SMs and the peaks: NVIDIA's H200
 * datasheet (4.8 TB/s HBM3e, 67 TFLOPS fp32, 1979 TFLOPS fp16 tensor with sparsity, so 989.5
 * dense). */
static const tforge_device_limits h200 = {
    .name = "NVIDIA H200",
    .sms = 132,
    .max_warps_per_sm = 64,
    .max_blocks_per_sm = 32,
    .max_threads_per_block = 1024,
    .regs_per_sm = 65536,
    .regs_per_block = 65536,
    .reg_alloc_unit = 256,
    .reg_sub_partitions = 4,
    .max_regs_per_thread = 255,
    .smem_per_sm = 233472,          /* 228 KiB */
    .smem_per_block_optin = 232448, /* 227 KiB */
    .smem_reserved_per_block = 1024,
    .smem_alloc_unit = 128,
    .dram_gbs = 4800.0,
    .fp16_tflops = 989.5,
    .fp32_tflops = 67.0,
};

const tforge_device_limits *tforge_device_h200(void)
{
    return &h200;
}

/* A required non-negative integer field of the device properties. */
static int device_field(unsigned *out, const cJSON *o, const char *field)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, field);
    if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > UINT_MAX ||
        v->valuedouble != floor(v->valuedouble))
        return tforge_error_set(TFORGE_EINPUT, "device properties: field %s: expected a "
                                "non-negative integer%s", field, v ? "" : " (missing)");
    *out = (unsigned)v->valuedouble;
    return 0;
}

/* An optional positive peak; `fallback` when absent. */
static int device_peak(double *out, const cJSON *o, const char *field, double fallback)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, field);
    if (!v) {
        *out = fallback;
        return 0;
    }
    if (!cJSON_IsNumber(v) || !(v->valuedouble > 0))
        return tforge_error_set(TFORGE_EINPUT, "device properties: field %s: expected a "
                                "positive number", field);
    *out = v->valuedouble;
    return 0;
}

int tforge_device_limits_from_json(tforge_device_limits *out, const char *json_text)
{
    cJSON *o = cJSON_Parse(json_text);
    tforge_device_limits d = h200;
    unsigned major = 0, minor = 0, max_threads_per_sm = 0;
    int rc = cJSON_IsObject(o) ? 0 : tforge_error_set(TFORGE_EINPUT, "device properties: "
                                                      "expected a JSON object");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(o, "name");
    if (!rc && !cJSON_IsString(name))
        rc = tforge_error_set(TFORGE_EINPUT, "device properties: field name: expected a string");
    if (!rc)
        rc = device_field(&major, o, "major");
    if (!rc)
        rc = device_field(&minor, o, "minor");
    if (!rc && (major != 9 || minor != 0))
        rc = tforge_error_set(TFORGE_EINPUT, "device properties: sm_%u%u: only sm_90's limits "
                              "are known", major, minor);
    if (!rc)
        rc = device_field(&d.sms, o, "multi_processor_count");
    if (!rc)
        rc = device_field(&d.regs_per_sm, o, "regs_per_multiprocessor");
    if (!rc)
        rc = device_field(&d.smem_per_sm, o, "shared_memory_per_multiprocessor");
    if (!rc)
        rc = device_field(&d.smem_per_block_optin, o, "shared_memory_per_block_optin");
    if (!rc)
        rc = device_field(&max_threads_per_sm, o, "max_threads_per_multi_processor");
    if (!rc && (d.sms == 0 || max_threads_per_sm < WARP_SIZE || d.regs_per_sm == 0))
        rc = tforge_error_set(TFORGE_EINPUT, "device properties: multi_processor_count, "
                              "regs_per_multiprocessor and max_threads_per_multi_processor must "
                              "be positive");
    if (!rc) {
        snprintf(d.name, sizeof d.name, "%s", name->valuestring);
        d.max_warps_per_sm = max_threads_per_sm / WARP_SIZE;
        /* The peaks are the card's, not the architecture's: an H100 shares sm_90. */
        int is_h200 = strstr(name->valuestring, "H200") != NULL;
        rc = device_peak(&d.dram_gbs, o, "dram_gbs", is_h200 ? h200.dram_gbs : NAN);
        if (!rc)
            rc = device_peak(&d.fp16_tflops, o, "fp16_tflops", is_h200 ? h200.fp16_tflops : NAN);
        if (!rc)
            rc = device_peak(&d.fp32_tflops, o, "fp32_tflops", is_h200 ? h200.fp32_tflops : NAN);
    }
    cJSON_Delete(o);
    if (!rc)
        *out = d;
    return rc;
}

void tforge_profile_init(tforge_profile *p)
{
    memset(p, 0, sizeof *p);
    p->struct_size = sizeof *p;
    p->counters = TFORGE_COUNTERS_NONE;
}

int tforge_profile_set(tforge_profile *p, const char *name, double value)
{
    return tforge_metrics_set(p->metrics, &p->n_metrics, TFORGE_PROFILE_METRICS, "profile", name,
                              value);
}

double tforge_profile_get(const tforge_profile *p, const char *name)
{
    return tforge_metrics_get(p->metrics, p->n_metrics, name);
}

/* profile.h's names, in its order. */
static const char *const static_names[] = {
    "registers", "spill_stores", "spill_loads", "shared_bytes", "num_warps", "grid_blocks",
    "blocks_per_sm", "occupancy_theoretical", "occupancy_limiter", "waves", "last_wave_fill",
    "bytes", "flops", "intensity", "dram_share", "flops_share", "time_ms"};
static const char *const counter_names[] = {
    "kernel_ms", "kernel_launches", "sm_pct", "dram_pct", "dram_bytes", "dram_read_bytes",
    "dram_write_bytes",
    "l2_pct", "sm_clock_ghz", "instructions", "occupancy_achieved", "issue_pct",
    "l2_sectors_per_request", "smem_conflicts_per_request"};
static const char *const counter_prefixes[] = {"stall_", "inst_"};

static int listed(const char *name, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(name, names[i]) == 0)
            return 1;
    return 0;
}

int tforge_profile_counter_name(const char *name)
{
    if (listed(name, counter_names, sizeof counter_names / sizeof *counter_names))
        return 1;
    for (size_t i = 0; i < sizeof counter_prefixes / sizeof *counter_prefixes; i++) {
        size_t n = strlen(counter_prefixes[i]);
        if (strncmp(name, counter_prefixes[i], n) == 0 && name[n] && tforge_metric_name_ok(name))
            return 1;
    }
    return 0;
}

int tforge_profile_known_name(const char *name)
{
    return listed(name, static_names, sizeof static_names / sizeof *static_names) ||
           tforge_profile_counter_name(name);
}

/* ---- occupancy, by the rules of cuda_occupancy.h (README.md) ---- */

enum { LIMIT_REGISTERS = 1, LIMIT_SHARED = 2, LIMIT_WARPS = 3, LIMIT_BLOCKS = 4 };

typedef struct occupancy {
    unsigned blocks_per_sm;
    unsigned limiter; /* a LIMIT_* */
    double theoretical;
} occupancy;

static unsigned round_up(unsigned x, unsigned unit)
{
    return unit ? (x + unit - 1) / unit * unit : x;
}

static unsigned blocks_by_registers(const tforge_device_limits *d, unsigned regs, unsigned warps)
{
    if (regs == 0)
        return UINT_MAX;
    if (regs > d->max_regs_per_thread)
        return 0;
    unsigned per_warp = round_up(regs * WARP_SIZE, d->reg_alloc_unit);
    unsigned partitions = d->reg_sub_partitions ? d->reg_sub_partitions : 1;
    /* The launch check assumes every partition gets the block's warps rounded up to them. */
    if ((unsigned long long)per_warp * round_up(warps, partitions) > d->regs_per_block)
        return 0;
    unsigned warps_per_sm = (d->regs_per_sm / partitions / per_warp) * partitions;
    return warps_per_sm / warps;
}

static unsigned blocks_by_shared(const tforge_device_limits *d, double shared_bytes)
{
    if (shared_bytes > d->smem_per_block_optin)
        return 0;
    unsigned allocated = round_up((unsigned)shared_bytes + d->smem_reserved_per_block,
                                  d->smem_alloc_unit);
    return allocated ? d->smem_per_sm / allocated : UINT_MAX;
}

static occupancy occupancy_of(const tforge_device_limits *d, double regs, double shared_bytes,
                              unsigned warps)
{
    unsigned threads = warps * WARP_SIZE;
    /* In profile.h's order: the first limit of the smallest count is the limiter. */
    unsigned limit[4] = {
        blocks_by_registers(d, (unsigned)regs, warps),
        blocks_by_shared(d, shared_bytes),
        threads > d->max_threads_per_block ? 0 : d->max_warps_per_sm / warps,
        d->max_blocks_per_sm,
    };
    occupancy o = {limit[0], LIMIT_REGISTERS, 0};
    for (unsigned i = 1; i < 4; i++)
        if (limit[i] < o.blocks_per_sm) {
            o.blocks_per_sm = limit[i];
            o.limiter = i + 1;
        }
    o.theoretical = (double)o.blocks_per_sm * warps / d->max_warps_per_sm;
    return o;
}

static int known(double x)
{
    return isfinite(x);
}

int tforge_profile_add_static(tforge_profile *p, const tforge_device_limits *d,
                              const tforge_measurement *m, double num_warps, double grid_blocks,
                              double bytes, double flops)
{
    static const char *const compiled[] = {"registers", "spill_stores", "spill_loads",
                                           "shared_bytes"};
    int rc = 0;
    for (size_t i = 0; m && i < sizeof compiled / sizeof *compiled && !rc; i++) {
        double v = tforge_measurement_metric(m, compiled[i]);
        if (known(v))
            rc = tforge_profile_set(p, compiled[i], v);
    }
    double time_ms = m && known(m->median_ms) && m->median_ms > 0 ? m->median_ms : NAN;
    double regs = tforge_profile_get(p, "registers");
    double shared = tforge_profile_get(p, "shared_bytes");
    if (!(num_warps >= 1 && num_warps == floor(num_warps) &&
          num_warps * WARP_SIZE <= (double)UINT_MAX))
        num_warps = NAN;
    if (!(grid_blocks >= 1))
        grid_blocks = NAN;
    if (!rc)
        rc = tforge_profile_set(p, "time_ms", time_ms);
    if (!rc)
        rc = tforge_profile_set(p, "num_warps", num_warps);
    if (!rc)
        rc = tforge_profile_set(p, "grid_blocks", grid_blocks);
    if (!rc)
        rc = tforge_profile_set(p, "bytes", known(bytes) && bytes >= 0 ? bytes : NAN);
    if (!rc)
        rc = tforge_profile_set(p, "flops", known(flops) && flops >= 0 ? flops : NAN);

    if (!rc && known(regs) && regs >= 0 && known(shared) && shared >= 0 && known(num_warps)) {
        occupancy o = occupancy_of(d, regs, shared, (unsigned)num_warps);
        rc = tforge_profile_set(p, "blocks_per_sm", o.blocks_per_sm);
        if (!rc)
            rc = tforge_profile_set(p, "occupancy_theoretical", o.theoretical);
        if (!rc)
            rc = tforge_profile_set(p, "occupancy_limiter", o.limiter);
        double wave = (double)o.blocks_per_sm * d->sms; /* blocks resident at once */
        if (!rc && known(grid_blocks) && wave > 0) {
            double full = floor(grid_blocks / wave), rest = grid_blocks - full * wave;
            rc = tforge_profile_set(p, "waves", grid_blocks / wave);
            if (!rc) /* a grid of whole waves fills its last one */
                rc = tforge_profile_set(p, "last_wave_fill", rest > 0 ? rest / wave : 1.0);
        }
    }
    if (!rc && known(flops) && flops >= 0 && known(bytes) && bytes > 0)
        rc = tforge_profile_set(p, "intensity", flops / bytes);
    if (!rc && known(bytes) && bytes >= 0 && known(time_ms) && known(d->dram_gbs))
        rc = tforge_profile_set(p, "dram_share", bytes / (time_ms * 1e-3) / (d->dram_gbs * 1e9));
    if (!rc && known(flops) && flops >= 0 && known(time_ms) && known(d->fp16_tflops))
        rc = tforge_profile_set(p, "flops_share",
                                flops / (time_ms * 1e-3) / (d->fp16_tflops * 1e12));
    return rc;
}

/* ---- JSON ---- */

static const char *const counters_names[] = {"none", "ok", "refused", "failed"};

char *tforge_profile_to_json(const tforge_profile *p)
{
    cJSON *o = cJSON_CreateObject(), *metrics = NULL;
    int ok = o != NULL;
    ok = ok && cJSON_AddStringToObject(o, "counters", p->counters < 4
                                       ? counters_names[p->counters] : "none");
    ok = ok && cJSON_AddStringToObject(o, "note", p->note);
    ok = ok && (metrics = cJSON_AddObjectToObject(o, "metrics")) != NULL;
    for (uint32_t i = 0; ok && i < p->n_metrics && i < TFORGE_PROFILE_METRICS; i++)
        if (isfinite(p->metrics[i].value)) /* JSON has no infinities */
            ok = cJSON_AddNumberToObject(metrics, p->metrics[i].name, p->metrics[i].value) != NULL;
    char *text = ok ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    return text;
}

int tforge_profile_from_json(tforge_profile *p, const char *json_text, const char *where)
{
    tforge_profile q;
    tforge_profile_init(&q);
    cJSON *o = cJSON_Parse(json_text);
    int rc = cJSON_IsObject(o) ? 0 : tforge_error_set(TFORGE_EINPUT, "%s: a profile: expected "
                                                      "a JSON object", where);
    const cJSON *counters = cJSON_GetObjectItemCaseSensitive(o, "counters");
    const cJSON *note = cJSON_GetObjectItemCaseSensitive(o, "note");
    const cJSON *metrics = cJSON_GetObjectItemCaseSensitive(o, "metrics");
    if (!rc && counters) {
        uint32_t state = 4;
        for (uint32_t s = 0; cJSON_IsString(counters) && s < 4 && state == 4; s++)
            if (strcmp(counters->valuestring, counters_names[s]) == 0)
                state = s;
        if (state == 4)
            rc = tforge_error_set(TFORGE_EINPUT, "%s: a profile's field counters: expected "
                                  "one of none, ok, refused, failed", where);
        q.counters = state;
    }
    if (!rc && note) {
        if (!cJSON_IsString(note))
            rc = tforge_error_set(TFORGE_EINPUT, "%s: a profile's field note: expected a "
                                  "string", where);
        else
            snprintf(q.note, sizeof q.note, "%s", note->valuestring);
    }
    if (!rc && !cJSON_IsObject(metrics))
        rc = tforge_error_set(TFORGE_EINPUT, "%s: a profile's field metrics: expected an "
                              "object of numbers", where);
    for (const cJSON *m = rc ? NULL : metrics->child; m && !rc; m = m->next) {
        if (!cJSON_IsNumber(m))
            rc = tforge_error_set(TFORGE_EINPUT, "%s: a profile's metric %s: expected a "
                                  "number", where, m->string);
        else if ((rc = tforge_profile_set(&q, m->string, m->valuedouble)))
            tforge_error_prefix("%s", where);
    }
    cJSON_Delete(o);
    if (!rc)
        *p = q;
    return rc;
}
