/* The speed-of-light cost model ("tforge.costmodel/1", id "roofline"): what a candidate cannot
 * beat, from the task's bytes and flops at the tuning shape and the device's measured peaks,
 * and a guess of where it lands, from its waves over the device's SMs. Predict only: the
 * objective it speaks for is latency, in ms. README.md gives the model and why each part of the
 * bound is safe. */
#include <tforge/plugin/costmodel.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ID "roofline"

static const tforge_option_spec options[] = {
    {"efficiency", TFORGE_OPTION_NUMBER, "0.8", 0.05, 1, NULL,
     "the share of the measured peaks a tuned kernel reaches, for the estimate (not the bound)"},
    {"spread", TFORGE_OPTION_NUMBER, "0.5", 0, 10, NULL,
     "the estimate's sigma as a share of the estimate"},
};
enum { N_OPTIONS = sizeof options / sizeof *options };

typedef struct roofline_state {
    const tforge_host *host;
    double efficiency;
    double spread;
} roofline_state;

static int fail(const tforge_host *host, int code, const char *format, ...)
{
    char message[256];
    int n = snprintf(message, sizeof message, ID ": ");
    va_list args;
    va_start(args, format);
    vsnprintf(message + n, sizeof message - (size_t)n, format, args);
    va_end(args);
    return host && host->error ? host->error(host, code, message) : code;
}

static int create(void **state, const tforge_host *host, const tforge_options_view *given)
{
    double values[N_OPTIONS] = {0.8, 0.5};
    for (uint32_t i = 0; given && i < given->count; i++) {
        uint32_t o = 0;
        while (o < N_OPTIONS && strcmp(given->keys[i], options[o].name) != 0)
            o++;
        if (o == N_OPTIONS)
            return fail(host, TFORGE_PLUGIN_EINPUT, "unknown option '%s' (it takes efficiency, "
                        "spread)", given->keys[i]);
        char *end = NULL;
        double v = strtod(given->values[i], &end);
        if (end == given->values[i] || *end || !(v >= options[o].min && v <= options[o].max))
            return fail(host, TFORGE_PLUGIN_EINPUT, "option %s=%s: expected a number in "
                        "[%g, %g]", options[o].name, given->values[i], options[o].min,
                        options[o].max);
        values[o] = v;
    }
    roofline_state *s = calloc(1, sizeof *s);
    if (!s)
        return fail(host, TFORGE_PLUGIN_ENOMEM, "out of memory");
    s->host = host;
    s->efficiency = values[0];
    s->spread = values[1];
    *state = s;
    return 0;
}

static void destroy(void *state)
{
    free(state);
}

static const char *objective(void *state)
{
    (void)state;
    return "latency";
}

static const char *unit(void *state)
{
    (void)state;
    return "ms";
}

static int known(double x)
{
    return isfinite(x) && x > 0;
}

/* Programs one SM holds at once: the least of what its threads, registers and shared memory
 * allow (without the allocation units, so never fewer than the hardware holds); 0 when one
 * program does not fit; UINT32_MAX when nothing limits it. */
static uint32_t programs_per_sm(const tforge_costmodel_candidate *c)
{
    const tforge_costmodel_device *d = c->device;
    uint64_t threads = (uint64_t)(c->warps ? c->warps : 1) * 32;
    uint64_t least = UINT32_MAX;
    if (d->max_threads_per_sm)
        least = d->max_threads_per_sm / threads;
    if (d->registers_per_sm && c->registers) {
        uint64_t by_registers = d->registers_per_sm / (threads * c->registers);
        least = by_registers < least ? by_registers : least;
    }
    if (d->shared_bytes_per_sm && c->shared_bytes) {
        uint64_t by_shared = d->shared_bytes_per_sm / c->shared_bytes;
        least = by_shared < least ? by_shared : least;
    }
    return (uint32_t)least;
}

/* The share of the device's slots the grid keeps busy on average: a grid of whole waves 1, the
 * last wave's idle slots counted against it; below one wave, the share of SMs given a program
 * (an SM's one program is taken to draw its SM's share: the estimate, never the bound). */
static double busy_share(const tforge_costmodel_candidate *c, uint32_t per_sm)
{
    uint32_t sms = c->device->sms;
    if (!c->programs || !sms || per_sm == UINT32_MAX)
        return 1;
    double waves = (double)c->programs / ((double)per_sm * sms);
    if (waves >= 1)
        return waves / ceil(waves);
    return c->programs >= sms ? 1 : (double)c->programs / sms;
}

static int predict(void *state, const tforge_costmodel_candidate *c,
                   tforge_costmodel_prediction *out)
{
    roofline_state *s = state;
    const tforge_costmodel_device *d = c ? c->device : NULL;
    if (!c || !d)
        return fail(s->host, TFORGE_PLUGIN_EINPUT, "predict needs a candidate and its device");
    double peak = c->uses_tensor_cores ? d->flops_per_s : d->flops_per_s_fp32;
    int by_bytes = known(c->bytes) && known(d->dram_bytes_per_s);
    int by_flops = known(c->flops) && known(peak);
    if (!by_bytes && !by_flops)
        return fail(s->host, TFORGE_PLUGIN_EINPUT, "neither the bytes (%g) over the device's "
                    "DRAM bandwidth (%g B/s) nor the flops (%g) over its %s peak (%g flop/s) "
                    "are known", c->bytes, d->dram_bytes_per_s, c->flops,
                    c->uses_tensor_cores ? "tensor-core" : "fp32", peak);
    double memory_s = by_bytes ? c->bytes / d->dram_bytes_per_s : 0;
    double compute_s = by_flops ? c->flops / peak : 0;
    /* An SM's arithmetic is its share of the peak: a grid smaller than the SMs leaves the rest
     * idle. DRAM has no such safe share (one SM may draw more than 1/SMs of it). */
    double compute_floor_s = compute_s;
    if (d->sms && c->programs && c->programs < d->sms)
        compute_floor_s *= (double)d->sms / (double)c->programs;
    out->lower = 1e3 * fmax(memory_s, compute_floor_s);
    uint32_t per_sm = programs_per_sm(c);
    if (per_sm == 0) { /* it cannot launch: no time it could reach */
        out->estimate = INFINITY;
        out->sigma = NAN;
        return 0;
    }
    double estimate = 1e3 * fmax(memory_s, compute_s) / busy_share(c, per_sm) / s->efficiency;
    out->estimate = fmax(estimate, out->lower);
    out->sigma = s->spread * out->estimate;
    return 0;
}

static const tforge_costmodel_interface roofline_interface = {
    sizeof roofline_interface, create, objective, unit, NULL, predict, destroy};

static const tforge_plugin_descriptor descriptor = {
    .id = ID,
    .version = "1.0.0",
    .description = "speed of light: the task's bytes and flops over the device's measured peaks "
                   "(a safe lower bound), waves and tail from occupancy (the estimate)",
    .interface_id = TFORGE_COSTMODEL_INTERFACE_ID,
    .interface = &roofline_interface,
    .options = options,
    .n_options = N_OPTIONS};

static uint32_t count(void)
{
    return 1;
}

static const tforge_plugin_descriptor *get(uint32_t index)
{
    return index == 0 ? &descriptor : NULL;
}

TFORGE_PLUGIN_EXPORT const tforge_plugin_module TFORGE_PLUGIN_ENTRY_NAME = {
    TFORGE_PLUGIN_ABI_VERSION_INIT, ID, NULL, NULL, count, get};
