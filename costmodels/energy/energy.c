/* The energy objective: a measurement's value is the joules one launch takes, the metric
 * "energy_j" that the GPU worker measures with NVML's energy counter around a batch of launches
 * (or a recording carries). */
#include <tforge/plugin/costmodel.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#define ID "energy"

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
    return "energy";
}

static const char *unit(void *state)
{
    (void)state;
    return "J";
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
    m->value = metric(m, "energy_j");
    if (isnan(m->value))
        snprintf(m->message, sizeof m->message,
                 "energy: no energy_j measured (NVML absent, or the batch too short)");
    return 0;
}

static void destroy(void *state)
{
    (void)state;
}

static const tforge_costmodel_interface energy_interface = {
    sizeof energy_interface, create, objective, unit, score, NULL, destroy};

static const tforge_plugin_descriptor descriptor = {
    .id = ID,
    .version = "1.0.0",
    .description = "energy: joules per launch (energy_j, from NVML's energy counter)",
    .interface_id = TFORGE_COSTMODEL_INTERFACE_ID,
    .interface = &energy_interface};

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
