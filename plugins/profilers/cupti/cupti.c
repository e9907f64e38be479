/* The `cupti` profiler ("tforge.profiler/2"): hardware counters of one candidate's launches by
 * CUPTI's Range Profiler (CUDA 13 removed the Event and Metric APIs), its metrics scheduled and
 * evaluated by the Profiler Host API, and each launch's exact duration from the Activity API.
 *
 * Automatic ranges, one a kernel, replayed by the host (user replay): begin(pass) starts the
 * profiler, the host launches the candidate and synchronises, end(pass) stops it; one more pass
 * after the counters' takes the launches' durations from the Activity API alone (CUPTI times a
 * kernel by instrumenting its code, which the counters would count: on the H200 8 more
 * instructions a warp, 1.36x Nsight Compute's on a vector add of 131072 blocks); collect
 * decodes the counters, keeps the range of the candidate's longest kernel (a user range around
 * the launch would spread each kernel's throughput over the host's launch and synchronisation
 * time as well: measured, sm_pct 0.6 where Nsight Compute says 50), and turns Nsight Compute's
 * metrics into the names of profile.h through one table.
 * The CUDA driver is opened with dlopen, so the module loads (and `tforge plugins` lists it) on
 * a machine without one; `chip=GH100` plans a set with the Host API alone, without a device, so
 * its pass count can be asked anywhere. With `kernel=NAME` the timing pass also counts the
 * launches of kernels of that name (`kernel_launches`): the host's proof that a model's
 * proposal launched the kernel it rewrites. */
#include <tforge/plugin/profiler.h>

#include <cupti_activity.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SET_CORE = 1, SET_FULL = 2, BOTH = SET_CORE | SET_FULL };

/* profile.h's counter names from Nsight Compute's metrics: value = (metric - minus) / per *
 * scale, where `minus` and `per` are optional. A metric whose `per` is 0 (no requests, no
 * active warps) is left out: no evidence, not a zero. */
typedef struct counter_metric {
    const char *name, *metric, *minus, *per;
    double scale;
    unsigned sets;
} counter_metric;

#define STALL(name, reason)                                                                       \
    {name, "smsp__warps_issue_stalled_" reason ".sum", NULL, "smsp__warps_active.sum", 1,       \
     SET_FULL}
#define INST(name, pipe, minus)                                                                   \
    {name, "sm__inst_executed_pipe_" pipe ".sum", minus, "sm__inst_executed.sum", 1, SET_FULL}

static const counter_metric counter_metrics[] = {
    /* Nsight Compute's Speed Of Light section and its occupancy (Achieved Occupancy) */
    {"sm_pct", "sm__throughput.avg.pct_of_peak_sustained_elapsed", NULL, NULL, 1, BOTH},
    {"dram_pct", "dram__throughput.avg.pct_of_peak_sustained_elapsed", NULL, NULL, 1, BOTH},
    {"dram_bytes", "dram__bytes.sum", NULL, NULL, 1, BOTH},
    {"dram_read_bytes", "dram__bytes_read.sum", NULL, NULL, 1, BOTH},
    {"dram_write_bytes", "dram__bytes_write.sum", NULL, NULL, 1, BOTH},
    {"l2_pct", "lts__throughput.avg.pct_of_peak_sustained_elapsed", NULL, NULL, 1, BOTH},
    {"sm_clock_ghz", "sm__cycles_elapsed.avg.per_second", NULL, NULL, 1e-9, BOTH},
    {"instructions", "sm__inst_executed.sum", NULL, NULL, 1, BOTH},
    {"occupancy_achieved", "sm__warps_active.avg.pct_of_peak_sustained_active", NULL, NULL, 0.01,
     BOTH},
    {"issue_pct", "smsp__issue_active.avg.pct_of_peak_sustained_active", NULL, NULL, 1, BOTH},
    /* warp states: the share of active warp cycles stalled for each reason */
    STALL("stall_long_scoreboard", "long_scoreboard"),
    STALL("stall_short_scoreboard", "short_scoreboard"),
    STALL("stall_barrier", "barrier"),
    STALL("stall_mio_throttle", "mio_throttle"),
    STALL("stall_lg_throttle", "lg_throttle"),
    STALL("stall_math_pipe", "math_pipe_throttle"),
    STALL("stall_not_selected", "not_selected"),
    STALL("stall_wait", "wait"),
    STALL("stall_dispatch", "dispatch_stall"),
    STALL("stall_membar", "membar"),
    STALL("stall_branch", "branch_resolving"),
    /* instruction mix by the pipe that executed the warp instruction: fp32 is the FMA pipe less
     * its fp16 part (it also runs integer multiply-adds), int the ALU pipe */
    INST("inst_fp32", "fma", "sm__inst_executed_pipe_fma_type_fp16.sum"),
    INST("inst_fp16", "fma_type_fp16", NULL),
    INST("inst_tensor", "tensor", NULL),
    INST("inst_int", "alu", NULL),
    INST("inst_memory", "lsu", NULL),
    INST("inst_control", "cbu", NULL),
    /* Memory Workload Analysis: coalescing of global loads, shared-memory bank conflicts */
    {"l2_sectors_per_request", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", NULL,
     "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", 1, SET_FULL},
    {"smem_conflicts_per_request", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum", NULL,
     "sm__sass_inst_executed_op_shared.sum", 1, SET_FULL},
};
#define N_COUNTER_METRICS (sizeof counter_metrics / sizeof *counter_metrics)
/* every Nsight metric a set evaluates, at most three a row */
#define MAX_NSIGHT_METRICS (3 * N_COUNTER_METRICS)
#define MAX_PASSES 64
#define MAX_RANGES 16 /* kernels a candidate's launch may run */
#define DURATION_METRIC "gpu__time_duration.sum"

static const tforge_option_spec cupti_options[] = {
    {"set", TFORGE_OPTION_CHOICE, "core", 0, 0, "core|full",
     "core: SM, DRAM and L2 throughput, achieved occupancy, issue slots; full: also warp "
     "stalls, instruction mix, coalescing and bank conflicts (more replay passes)"},
    {"refuse", TFORGE_OPTION_INTEGER, "0", 0, 1, NULL,
     "1: refuse counters at create, as a device that forbids them does (tests that path)"},
    {"chip", TFORGE_OPTION_CHOICE, "", 0, 0,
     "GV100|GV11B|TU102|TU104|TU106|TU116|TU117|GA100|GA102|GA103|GA104|GA106|GA107|GA10B|"
     "GH100|AD102|AD103|AD104|AD106|AD107|GB100|GB102|GB110|GB10B|GB202|GB203|GB205|GB206|"
     "GB207|GB20B",
     "plan only, without a device: the Host API for this chip (the H200 is GH100); passes() "
     "answers, begin fails"},
    {"kernel", TFORGE_OPTION_TEXT, "", 0, 0, NULL,
     "a kernel's name: the timing pass counts its launches as kernel_launches (the host sets it "
     "to check that a model's proposal launches the kernel)"},
};
#define N_OPTIONS (sizeof cupti_options / sizeof *cupti_options)

/* The CUDA driver's few functions this module needs, found at run time. */
typedef int (*cu_init_fn)(unsigned);
typedef int (*cu_device_get_fn)(CUdevice *, int);
typedef int (*cu_ctx_retain_fn)(CUcontext *, CUdevice);
typedef int (*cu_ctx_release_fn)(CUdevice);

typedef struct cupti_state {
    const tforge_host *host;
    unsigned set;
    int plan_only;
    void *driver;
    cu_ctx_release_fn release_context;
    CUdevice device;
    CUcontext context; /* the device's primary context (torch's), retained */
    int profiler_initialized;
    CUpti_RangeProfiler_Object *range_profiler;
    CUpti_Profiler_Host_Object *host_object;
    const char *names[MAX_NSIGHT_METRICS]; /* the Nsight metrics evaluated */
    size_t n_names;
    uint8_t *config_image, *counter_data;
    size_t config_size, counter_data_size;
    uint32_t counter_passes; /* the set's, as the Host API plans them; then the timing pass */
    int stopped_all; /* the last counter pass's end() said every pass was submitted */
    uint64_t timing_start, timing_end; /* the timing pass's window, CUPTI timestamps, ns */
    uint32_t passes_run;
    int said_no_activity;
    int activity_on;   /* the timing pass's kernel activity was enabled: launches were seen */
    char kernel[256];  /* option kernel: the name whose launches are counted, or "" */
} cupti_state;

static int fail(cupti_state *s, int code, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(cupti_state *s, int code, const char *format, ...)
{
    char message[512];
    va_list ap;
    va_start(ap, format);
    vsnprintf(message, sizeof message, format, ap);
    va_end(ap);
    return s->host->error(s->host, code, message);
}

static const char *cupti_text(CUptiResult rc)
{
    const char *text = NULL;
    return cuptiGetResultString(rc, &text) == CUPTI_SUCCESS && text ? text : "CUPTI_ERROR_?";
}

/* A CUPTI call that failed: the plugin's error, naming the call and CUPTI's code. */
static int cupti_fail(cupti_state *s, const char *call, CUptiResult rc)
{
    return fail(s, TFORGE_PLUGIN_ERROR, "cupti: %s: %s", call, cupti_text(rc));
}

/* Whether `rc` is the device or the driver refusing counters (not a failure of ours). */
static int is_refusal(CUptiResult rc)
{
    switch (rc) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_NOT_SUPPORTED:
        return 1;
    default:
        return 0;
    }
}

static int refuse(cupti_state *s, const char *call, CUptiResult rc)
{
    fail(s, TFORGE_PLUGIN_ERROR, "%s (%s): hardware counters refused on this device",
         cupti_text(rc), call);
    return TFORGE_PROFILER_REFUSED;
}

/* ---- kernel durations from the Activity API ----
 * CUPTI hands completed buffers to a callback of its own thread, process-wide: the durations
 * land in one list under a lock, and collect keeps those inside a pass's window. */
enum { ACTIVITY_BUFFER = 1 << 20, MAX_LAUNCHES = 4096 };
static pthread_mutex_t launches_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t launch_start[MAX_LAUNCHES], launch_end[MAX_LAUNCHES];
static unsigned char launch_named[MAX_LAUNCHES]; /* of the kernel named launch_wanted */
static char launch_wanted[256];
static size_t n_launches;
static int activity_registered;

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = aligned_alloc(8, ACTIVITY_BUFFER);
    *size = *buffer ? ACTIVITY_BUFFER : 0;
    *max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream, uint8_t *buffer,
                                      size_t size, size_t valid)
{
    (void)context, (void)stream, (void)size;
    CUpti_Activity *record = NULL;
    pthread_mutex_lock(&launches_lock);
    while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS)
        if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && n_launches < MAX_LAUNCHES) {
            const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)record;
            launch_start[n_launches] = k->start;
            launch_end[n_launches] = k->end;
            launch_named[n_launches++] =
                launch_wanted[0] && k->name && strcmp(k->name, launch_wanted) == 0;
        }
    pthread_mutex_unlock(&launches_lock);
    free(buffer);
}

/* The kernel time inside the timing pass's window (the candidate's launches of that pass,
 * summed), in ms; NAN when no launch was recorded. */
static double timing_pass_ms(const cupti_state *s)
{
    double ns = 0;
    int any = 0;
    pthread_mutex_lock(&launches_lock);
    for (size_t i = 0; i < n_launches; i++)
        if (launch_start[i] >= s->timing_start && launch_end[i] <= s->timing_end) {
            ns += (double)(launch_end[i] - launch_start[i]);
            any = 1;
        }
    pthread_mutex_unlock(&launches_lock);
    return any ? ns / 1e6 : NAN;
}

/* The launches of the kernel named by option `kernel` inside the timing pass's window. */
static double timing_pass_launches(const cupti_state *s)
{
    double n = 0;
    pthread_mutex_lock(&launches_lock);
    for (size_t i = 0; i < n_launches; i++)
        n += launch_named[i] && launch_start[i] >= s->timing_start &&
             launch_end[i] <= s->timing_end;
    pthread_mutex_unlock(&launches_lock);
    return n;
}

/* ---- the metric set ---- */

static void add_name(cupti_state *s, const char *name)
{
    if (!name)
        return;
    for (size_t i = 0; i < s->n_names; i++)
        if (strcmp(s->names[i], name) == 0)
            return;
    s->names[s->n_names++] = name;
}

static size_t name_index(const cupti_state *s, const char *name)
{
    for (size_t i = 0; i < s->n_names; i++)
        if (strcmp(s->names[i], name) == 0)
            return i;
    return SIZE_MAX;
}

/* The Host API on `chip`: the set's metrics scheduled into a config image, and its passes. */
static int plan(cupti_state *s, const char *chip, const uint8_t *availability)
{
    add_name(s, DURATION_METRIC); /* which range is the candidate's longest kernel */
    for (size_t i = 0; i < N_COUNTER_METRICS; i++)
        if (counter_metrics[i].sets & s->set) {
            add_name(s, counter_metrics[i].metric);
            add_name(s, counter_metrics[i].minus);
            add_name(s, counter_metrics[i].per);
        }
    CUpti_Profiler_Host_Initialize_Params init = {
        .structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
    init.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    init.pChipName = chip;
    init.pCounterAvailabilityImage = availability;
    CUptiResult rc = cuptiProfilerHostInitialize(&init);
    if (rc)
        return fail(s, TFORGE_PLUGIN_EINPUT, "cupti: the Host API does not take chip '%s': %s",
                    chip, cupti_text(rc));
    s->host_object = init.pHostObject;
    CUpti_Profiler_Host_ConfigAddMetrics_Params add = {
        .structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
    add.pHostObject = s->host_object;
    add.ppMetricNames = s->names;
    add.numMetrics = s->n_names;
    if ((rc = cuptiProfilerHostConfigAddMetrics(&add)))
        return fail(s, TFORGE_PLUGIN_ERROR, "cupti: chip %s does not schedule the %s set's "
                    "metrics: %s", chip, s->set == SET_CORE ? "core" : "full", cupti_text(rc));
    CUpti_Profiler_Host_GetConfigImageSize_Params size = {
        .structSize = CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
    size.pHostObject = s->host_object;
    if ((rc = cuptiProfilerHostGetConfigImageSize(&size)))
        return cupti_fail(s, "cuptiProfilerHostGetConfigImageSize", rc);
    if (!(s->config_image = malloc(size.configImageSize)))
        return fail(s, TFORGE_PLUGIN_ENOMEM, "cupti: out of memory");
    s->config_size = size.configImageSize;
    CUpti_Profiler_Host_GetConfigImage_Params image = {
        .structSize = CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
    image.pHostObject = s->host_object;
    image.configImageSize = s->config_size;
    image.pConfigImage = s->config_image;
    if ((rc = cuptiProfilerHostGetConfigImage(&image)))
        return cupti_fail(s, "cuptiProfilerHostGetConfigImage", rc);
    CUpti_Profiler_Host_GetNumOfPasses_Params passes = {
        .structSize = CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
    passes.configImageSize = s->config_size;
    passes.pConfigImage = s->config_image;
    if ((rc = cuptiProfilerHostGetNumOfPasses(&passes)))
        return cupti_fail(s, "cuptiProfilerHostGetNumOfPasses", rc);
    if (passes.numOfPasses < 1 || passes.numOfPasses > MAX_PASSES)
        return fail(s, TFORGE_PLUGIN_ERROR, "cupti: the set needs %zu passes (1 to %d taken)",
                    passes.numOfPasses, MAX_PASSES);
    s->counter_passes = (uint32_t)passes.numOfPasses;
    return 0;
}

/* ---- the device ---- */

static int open_context(cupti_state *s, int ordinal)
{
    s->driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!s->driver)
        return fail(s, TFORGE_PLUGIN_ERROR, "cupti: no CUDA driver: %s", dlerror());
    cu_init_fn cu_init = (cu_init_fn)dlsym(s->driver, "cuInit");
    cu_device_get_fn device_get = (cu_device_get_fn)dlsym(s->driver, "cuDeviceGet");
    cu_ctx_retain_fn retain = (cu_ctx_retain_fn)dlsym(s->driver, "cuDevicePrimaryCtxRetain");
    s->release_context = (cu_ctx_release_fn)dlsym(s->driver, "cuDevicePrimaryCtxRelease_v2");
    if (!cu_init || !device_get || !retain || !s->release_context)
        return fail(s, TFORGE_PLUGIN_ERROR, "cupti: the CUDA driver lacks cuInit, cuDeviceGet or "
                    "the primary context calls");
    int rc = cu_init(0);
    if (!rc)
        rc = device_get(&s->device, ordinal);
    if (!rc)
        rc = retain(&s->context, s->device);
    if (rc) {
        s->context = NULL;
        return fail(s, TFORGE_PLUGIN_ERROR, "cupti: CUDA device %d: driver error %d", ordinal,
                    rc);
    }
    return 0;
}

/* Why the device refuses range profiling, from CUPTI's own support check; NULL if it does not. */
static const char *unsupported_because(const CUpti_Profiler_DeviceSupported_Params *p)
{
    if (p->isSupported == CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
        return NULL;
    return p->architecture != CUPTI_PROFILER_CONFIGURATION_SUPPORTED ? "its architecture"
           : p->vGpu != CUPTI_PROFILER_CONFIGURATION_SUPPORTED       ? "a virtualised GPU (vGPU)"
           : p->confidentialCompute != CUPTI_PROFILER_CONFIGURATION_SUPPORTED
               ? "confidential computing"
           : p->cmp != CUPTI_PROFILER_CONFIGURATION_SUPPORTED ? "a crypto-mining processor"
           : p->wsl != CUPTI_PROFILER_CONFIGURATION_SUPPORTED ? "WSL"
           : p->sli != CUPTI_PROFILER_CONFIGURATION_SUPPORTED ? "SLI"
                                                              : "the driver's configuration";
}

/* The range profiler is enabled only for a round: between rounds the context's launches (the
 * timing of other candidates) run without it. */
static CUptiResult enable_range_profiler(cupti_state *s)
{
    CUpti_RangeProfiler_Enable_Params enable = {
        .structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
    enable.ctx = s->context;
    CUptiResult rc = cuptiRangeProfilerEnable(&enable);
    s->range_profiler = rc ? NULL : enable.pRangeProfilerObject;
    return rc;
}

static void disable_range_profiler(cupti_state *s)
{
    if (!s->range_profiler)
        return;
    CUpti_RangeProfiler_Disable_Params disable = {
        .structSize = CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
    disable.pRangeProfilerObject = s->range_profiler;
    cuptiRangeProfilerDisable(&disable);
    s->range_profiler = NULL;
}

/* The counter data for the set, sized by the range profiler object just enabled: an object
 * knows the metrics only from this call, and initialising counter data on an object that was
 * never asked (one enabled afresh for a new round) crashes inside CUPTI 13. */
static int size_counter_data(cupti_state *s)
{
    CUpti_RangeProfiler_GetCounterDataSize_Params size = {
        .structSize = CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
    size.pRangeProfilerObject = s->range_profiler;
    size.pMetricNames = s->names;
    size.numMetrics = s->n_names;
    size.maxNumOfRanges = MAX_RANGES;
    size.maxNumRangeTreeNodes = MAX_RANGES;
    CUptiResult rc = cuptiRangeProfilerGetCounterDataSize(&size);
    if (rc)
        return cupti_fail(s, "cuptiRangeProfilerGetCounterDataSize", rc);
    if (size.counterDataSize != s->counter_data_size) {
        uint8_t *data = realloc(s->counter_data, size.counterDataSize);
        if (!data)
            return fail(s, TFORGE_PLUGIN_ENOMEM, "cupti: out of memory");
        s->counter_data = data;
        s->counter_data_size = size.counterDataSize;
    }
    return 0;
}

/* The range profiler on the device's context, and the set planned for its chip with the
 * counters the device makes available. */
static int open_device(cupti_state *s, int ordinal)
{
    int rc = open_context(s, ordinal);
    if (rc)
        return rc;
    CUpti_Profiler_Initialize_Params init = {
        .structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
    CUptiResult crc = cuptiProfilerInitialize(&init);
    if (crc)
        return is_refusal(crc) ? refuse(s, "cuptiProfilerInitialize", crc)
                               : cupti_fail(s, "cuptiProfilerInitialize", crc);
    s->profiler_initialized = 1;
    CUpti_Profiler_DeviceSupported_Params supported = {
        .structSize = CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE};
    supported.cuDevice = s->device;
    supported.api = CUPTI_PROFILER_RANGE_PROFILING;
    if ((crc = cuptiProfilerDeviceSupported(&supported)))
        return cupti_fail(s, "cuptiProfilerDeviceSupported", crc);
    const char *why = unsupported_because(&supported);
    if (why) {
        fail(s, TFORGE_PLUGIN_ERROR, "CUPTI_ERROR_NOT_SUPPORTED: range profiling is not "
             "supported on this device (%s)", why);
        return TFORGE_PROFILER_REFUSED;
    }
    if ((crc = enable_range_profiler(s)))
        return is_refusal(crc) ? refuse(s, "cuptiRangeProfilerEnable", crc)
                               : cupti_fail(s, "cuptiRangeProfilerEnable", crc);
    CUpti_Device_GetChipName_Params chip = {
        .structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE};
    chip.deviceIndex = (size_t)ordinal;
    if ((crc = cuptiDeviceGetChipName(&chip)))
        return cupti_fail(s, "cuptiDeviceGetChipName", crc);
    CUpti_Profiler_GetCounterAvailability_Params available = {
        .structSize = CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
    available.ctx = s->context;
    if ((crc = cuptiProfilerGetCounterAvailability(&available)))
        return is_refusal(crc) ? refuse(s, "cuptiProfilerGetCounterAvailability", crc)
                               : cupti_fail(s, "cuptiProfilerGetCounterAvailability", crc);
    uint8_t *image = malloc(available.counterAvailabilityImageSize);
    if (!image)
        return fail(s, TFORGE_PLUGIN_ENOMEM, "cupti: out of memory");
    available.pCounterAvailabilityImage = image;
    crc = cuptiProfilerGetCounterAvailability(&available);
    rc = crc ? cupti_fail(s, "cuptiProfilerGetCounterAvailability", crc)
             : plan(s, chip.pChipName, image);
    free(image);
    if (rc)
        return rc;
    disable_range_profiler(s);
    if (!activity_registered) {
        if ((crc = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed)))
            return cupti_fail(s, "cuptiActivityRegisterCallbacks", crc);
        activity_registered = 1;
    }
    return 0;
}

static void cupti_destroy(void *state)
{
    cupti_state *s = state;
    if (!s)
        return;
    disable_range_profiler(s);
    if (s->host_object) {
        CUpti_Profiler_Host_Deinitialize_Params deinit = {
            .structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
        deinit.pHostObject = s->host_object;
        cuptiProfilerHostDeinitialize(&deinit);
    }
    if (s->profiler_initialized) {
        CUpti_Profiler_DeInitialize_Params deinit = {
            .structSize = CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE};
        cuptiProfilerDeInitialize(&deinit);
    }
    if (s->context)
        s->release_context(s->device);
    if (s->driver)
        dlclose(s->driver);
    free(s->config_image);
    free(s->counter_data);
    free(s);
}

static const char *option(const tforge_options_view *given, const char *key,
                          const char *fallback)
{
    for (uint32_t i = 0; given && i < given->count; i++)
        if (strcmp(given->keys[i], key) == 0)
            return given->values[i];
    return fallback;
}

static int cupti_create(void **state, const tforge_host *host, const tforge_options_view *given,
                        const tforge_profiler_input *input)
{
    *state = NULL;
    cupti_state *s = calloc(1, sizeof *s);
    if (!s)
        return host->error(host, TFORGE_PLUGIN_ENOMEM, "cupti: out of memory");
    s->host = host;
    int rc = 0;
    for (uint32_t i = 0; given && i < given->count && !rc; i++) {
        size_t k = 0;
        while (k < N_OPTIONS && strcmp(cupti_options[k].name, given->keys[i]) != 0)
            k++;
        if (k == N_OPTIONS)
            rc = fail(s, TFORGE_PLUGIN_EINPUT, "cupti: unknown option '%s' (set, refuse, chip, "
                      "kernel)",
                      given->keys[i]);
    }
    const char *set = option(given, "set", "core"), *refused = option(given, "refuse", "0");
    const char *chip = option(given, "chip", "");
    snprintf(s->kernel, sizeof s->kernel, "%s", option(given, "kernel", ""));
    if (!rc && strcmp(set, "core") != 0 && strcmp(set, "full") != 0)
        rc = fail(s, TFORGE_PLUGIN_EINPUT, "cupti: option set: expected core or full, not '%s'",
                  set);
    if (!rc && strcmp(refused, "0") != 0 && strcmp(refused, "1") != 0)
        rc = fail(s, TFORGE_PLUGIN_EINPUT, "cupti: option refuse: expected 0 or 1, not '%s'",
                  refused);
    if (!rc && input->n_metrics)
        rc = fail(s, TFORGE_PLUGIN_EINPUT, "cupti: takes its sets (option set), not a list of "
                  "metrics");
    s->set = strcmp(set, "full") == 0 ? SET_FULL : SET_CORE;
    s->plan_only = chip[0] != '\0';
    if (!rc && strcmp(refused, "1") == 0) {
        fail(s, TFORGE_PLUGIN_ERROR, "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (simulated by option "
             "refuse=1): hardware counters refused");
        rc = TFORGE_PROFILER_REFUSED;
    }
    if (!rc)
        rc = s->plan_only ? plan(s, chip, NULL) : open_device(s, input->device);
    if (rc) {
        cupti_destroy(s);
        return rc;
    }
    *state = s;
    return 0;
}

/* The counters' passes, then one for the launches' durations. */
static uint32_t cupti_passes(void *state)
{
    return ((cupti_state *)state)->counter_passes + 1;
}

/* A round starts at pass 0: the range profiler enabled (afresh, whatever an interrupted round
 * left, kernel activity too: its instrumentation must not reach the counters), fresh counter
 * data, the config set. */
static int start_round(cupti_state *s)
{
    disable_range_profiler(s);
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    CUptiResult enabled = enable_range_profiler(s);
    if (enabled)
        return cupti_fail(s, "cuptiRangeProfilerEnable", enabled);
    int sized = size_counter_data(s);
    if (sized)
        return sized;
    CUpti_RangeProfiler_CounterDataImage_Initialize_Params init = {
        .structSize = CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
    init.pRangeProfilerObject = s->range_profiler;
    init.counterDataSize = s->counter_data_size;
    init.pCounterData = s->counter_data;
    CUptiResult rc = cuptiRangeProfilerCounterDataImageInitialize(&init);
    if (rc)
        return cupti_fail(s, "cuptiRangeProfilerCounterDataImageInitialize", rc);
    CUpti_RangeProfiler_SetConfig_Params config = {
        .structSize = CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
    config.pRangeProfilerObject = s->range_profiler;
    config.configSize = s->config_size;
    config.pConfig = s->config_image;
    config.counterDataImageSize = s->counter_data_size;
    config.pCounterDataImage = s->counter_data;
    config.range = CUPTI_AutoRange;
    config.replayMode = CUPTI_UserReplay;
    config.maxRangesPerPass = MAX_RANGES;
    config.numNestingLevels = 1;
    config.minNestingLevel = 1;
    config.passIndex = 0;
    config.targetNestingLevel = 1;
    if ((rc = cuptiRangeProfilerSetConfig(&config)))
        return cupti_fail(s, "cuptiRangeProfilerSetConfig", rc);
    s->passes_run = 0;
    s->stopped_all = 0;
    return 0;
}

/* The timing pass: kernel activity on, the range profiler off. Without activity records the
 * counters still come, and kernel_ms from the longest range's duration: said once. */
static void start_timing(cupti_state *s)
{
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); /* an earlier round's, dropped */
    pthread_mutex_lock(&launches_lock);
    n_launches = 0;
    snprintf(launch_wanted, sizeof launch_wanted, "%s", s->kernel);
    pthread_mutex_unlock(&launches_lock);
    CUptiResult rc = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    s->activity_on = rc == CUPTI_SUCCESS;
    if (rc && !s->said_no_activity) {
        char message[256];
        snprintf(message, sizeof message, "cupti: kernel_ms from the counters: "
                 "cuptiActivityEnable(CONCURRENT_KERNEL): %s", cupti_text(rc));
        s->host->log(s->host, TFORGE_PLUGIN_LOG_WARN, message);
        s->said_no_activity = 1;
    }
    cuptiGetTimestamp(&s->timing_start);
}

static int cupti_begin(void *state, uint32_t pass)
{
    cupti_state *s = state;
    if (s->plan_only)
        return fail(s, TFORGE_PLUGIN_EINPUT, "cupti: created with chip= to plan only: no device "
                    "to profile");
    /* pass 0 starts a round afresh, whatever an interrupted one left */
    if (pass > s->counter_passes || (pass != 0 && pass != s->passes_run))
        return fail(s, TFORGE_PLUGIN_EINPUT, "cupti: begin(%u): expected pass %u of %u", pass,
                    s->passes_run, s->counter_passes + 1);
    if (pass == s->counter_passes) {
        start_timing(s);
        return 0;
    }
    int rc = pass == 0 ? start_round(s) : 0;
    if (rc)
        return rc;
    CUpti_RangeProfiler_Start_Params start = {
        .structSize = CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
    start.pRangeProfilerObject = s->range_profiler;
    CUptiResult crc = cuptiRangeProfilerStart(&start);
    if (crc)
        return cupti_fail(s, "cuptiRangeProfilerStart", crc);
    return 0;
}

static int cupti_end(void *state, uint32_t pass)
{
    cupti_state *s = state;
    if (s->plan_only || pass != s->passes_run)
        return fail(s, TFORGE_PLUGIN_EINPUT, "cupti: end(%u) without its begin", pass);
    if (pass == s->counter_passes) {
        cuptiGetTimestamp(&s->timing_end);
        cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
        cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
        s->passes_run++;
        return 0;
    }
    CUptiResult rc;
    CUpti_RangeProfiler_Stop_Params stop = {
        .structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
    stop.pRangeProfilerObject = s->range_profiler;
    if ((rc = cuptiRangeProfilerStop(&stop)))
        return cupti_fail(s, "cuptiRangeProfilerStop", rc);
    s->passes_run++;
    s->stopped_all = stop.isAllPassSubmitted;
    return 0;
}

static int add_metric(cupti_state *s, tforge_profile *out, const char *name, double value)
{
    if (out->n_metrics == TFORGE_PROFILE_METRICS)
        return fail(s, TFORGE_PLUGIN_ERROR, "cupti: the profile is full (%d metrics)",
                    TFORGE_PROFILE_METRICS);
    tforge_metric *m = &out->metrics[out->n_metrics++];
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "%s", name);
    m->value = value;
    return 0;
}

/* The round's counters as a failure of this candidate: the profile says why, the host goes on. */
static int failed_round(tforge_profile *out, const char *call, CUptiResult rc)
{
    out->counters = TFORGE_COUNTERS_FAILED;
    snprintf(out->note, sizeof out->note, "cupti: %s: %s", call, cupti_text(rc));
    return 0;
}

static int cupti_collect(void *state, tforge_profile *out)
{
    cupti_state *s = state;
    if (s->plan_only)
        return fail(s, TFORGE_PLUGIN_EINPUT, "cupti: created with chip= to plan only: nothing "
                    "to collect");
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL); /* an interrupted round's */
    uint32_t passes = s->counter_passes + 1;
    if (s->passes_run != passes || !s->stopped_all) {
        out->counters = TFORGE_COUNTERS_FAILED;
        snprintf(out->note, sizeof out->note, "cupti: %u of %u passes ran%s", s->passes_run,
                 passes, s->passes_run == passes ? ", CUPTI wants more" : "");
        s->passes_run = 0;
        disable_range_profiler(s);
        return 0;
    }
    s->passes_run = 0;
    double kernel_ms = timing_pass_ms(s);
    CUpti_RangeProfiler_DecodeData_Params decode = {
        .structSize = CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
    decode.pRangeProfilerObject = s->range_profiler;
    CUptiResult rc = cuptiRangeProfilerDecodeData(&decode);
    disable_range_profiler(s); /* the counter data holds the round now */
    if (rc)
        return failed_round(out, "cuptiRangeProfilerDecodeData", rc);
    CUpti_RangeProfiler_GetCounterDataInfo_Params info = {
        .structSize = CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
    info.pCounterDataImage = s->counter_data;
    info.counterDataImageSize = s->counter_data_size;
    if ((rc = cuptiRangeProfilerGetCounterDataInfo(&info)))
        return failed_round(out, "cuptiRangeProfilerGetCounterDataInfo", rc);
    if (info.numTotalRanges < 1) {
        out->counters = TFORGE_COUNTERS_FAILED;
        snprintf(out->note, sizeof out->note, "cupti: no range was recorded (%zu dropped): did "
                 "the candidate launch a kernel?", decode.numOfRangeDropped);
        return 0;
    }
    double values[MAX_NSIGHT_METRICS], range_values[MAX_NSIGHT_METRICS], longest = -1;
    size_t duration = name_index(s, DURATION_METRIC);
    for (size_t r = 0; r < info.numTotalRanges; r++) {
        CUpti_Profiler_Host_EvaluateToGpuValues_Params eval = {
            .structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
        eval.pHostObject = s->host_object;
        eval.pCounterDataImage = s->counter_data;
        eval.counterDataImageSize = s->counter_data_size;
        eval.rangeIndex = r;
        eval.ppMetricNames = s->names;
        eval.numMetrics = s->n_names;
        eval.pMetricValues = range_values;
        if ((rc = cuptiProfilerHostEvaluateToGpuValues(&eval)))
            return failed_round(out, "cuptiProfilerHostEvaluateToGpuValues", rc);
        if (range_values[duration] > longest) {
            longest = range_values[duration];
            memcpy(values, range_values, s->n_names * sizeof *values);
        }
    }
    /* the activity records' duration when CUPTI delivered them, else the counters' own */
    if (isnan(kernel_ms) && longest > 0)
        kernel_ms = longest / 1e6;
    int err = isnan(kernel_ms) ? 0 : add_metric(s, out, "kernel_ms", kernel_ms);
    /* counted only where the activity records could have shown a launch: absent, never 0,
     * without them */
    if (!err && s->kernel[0] && s->activity_on)
        err = add_metric(s, out, "kernel_launches", timing_pass_launches(s));
    for (size_t i = 0; i < N_COUNTER_METRICS && !err; i++) {
        const counter_metric *m = &counter_metrics[i];
        if (!(m->sets & s->set))
            continue;
        double v = values[name_index(s, m->metric)];
        if (m->minus)
            v -= values[name_index(s, m->minus)];
        if (m->per) {
            double per = values[name_index(s, m->per)];
            if (!(per > 0))
                continue; /* nothing to share out: no evidence either way */
            v /= per;
        }
        if (isfinite(v))
            err = add_metric(s, out, m->name, v * m->scale);
    }
    if (err)
        return err;
    out->counters = TFORGE_COUNTERS_OK;
    out->note[0] = '\0';
    return 0;
}

static const tforge_profiler_interface cupti_interface = {
    sizeof cupti_interface, cupti_create, cupti_passes, cupti_begin,
    cupti_end,              cupti_collect, cupti_destroy};

static const tforge_plugin_descriptor cupti_descriptor = {
    .id = "cupti",
    .version = "1.0.0",
    .description = "CUPTI Range Profiler counters (Nsight Compute's metrics) and Activity API "
                   "kernel times",
    .interface_id = TFORGE_PROFILER_INTERFACE_ID,
    .interface = &cupti_interface,
    .options = cupti_options,
    .n_options = N_OPTIONS};

static uint32_t cupti_count(void)
{
    return 1;
}

static const tforge_plugin_descriptor *cupti_get(uint32_t index)
{
    return index == 0 ? &cupti_descriptor : NULL;
}

TFORGE_PLUGIN_EXPORT const tforge_plugin_module TFORGE_PLUGIN_ENTRY_NAME = {
    TFORGE_PLUGIN_ABI_VERSION_INIT, "cupti", NULL, NULL, cupti_count, cupti_get};
