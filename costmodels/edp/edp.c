/* The energy-delay product: joules per launch times its median time in seconds (J*s), which
 * weighs speed and energy alike (a kernel twice as fast for the same power halves both). */
#include <tforge/plugin/costmodel.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#define ID "edp"

static int create(void **state, const tforge_host *host, const tforge_options_view *options)
{
    (void)host;
    (void)options;
    *state = NULL;
    return 0;
}

static const char *objective(void *state)
{
    (void)state;
    return "energy-delay";
}

static const char *unit(void *state)
{
    (void)state;
    return "J*s";
}

static double metric(const tforge_measurement *m, const char *name)
{
    for (uint32_t i = 0; i < m->n_metrics && i < TFORGE_MEASUREMENT_METRICS; i++)
        if (strcmp(m->metrics[i].name, name) == 0)
            return m->metrics[i].value;
    return NAN;
}

static int score(void *state, tforge_measurement *m)
{
    (void)state;
    if (m->status != TFORGE_STATUS_OK)
        return 0;
    double joules = metric(m, "energy_j");
    m->value = joules * m->median_ms / 1e3;
    if (isnan(m->value))
        snprintf(m->message, sizeof m->message, "energy-delay: %s",
                 isnan(joules) ? "no energy_j measured (NVML absent, or the batch too short)"
                               : "no time measured");
    return 0;
}

static void destroy(void *state)
{
    (void)state;
}

static const tforge_costmodel_interface edp_interface = {
    sizeof edp_interface, create, objective, unit, score, NULL, destroy};

static const tforge_plugin_descriptor descriptor = {
    .id = ID,
    .version = "1.0.0",
    .description = "energy-delay: joules per launch times the median time in s (J*s)",
    .interface_id = TFORGE_COSTMODEL_INTERFACE_ID,
    .interface = &edp_interface};

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
