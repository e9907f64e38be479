/* The latency objective (the default): a measurement's value is its median time in ms. */
#include <tforge/plugin/costmodel.h>

#include <math.h>
#include <stdio.h>

#define ID "latency"

static int create(void **state, const tforge_host *host, const tforge_options_view *options)
{
    (void)host;
    (void)options;
    *state = NULL; /* nothing to keep */
    return 0;
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

static int score(void *state, tforge_measurement *m)
{
    (void)state;
    if (m->status != TFORGE_STATUS_OK)
        return 0;
    m->value = m->median_ms;
    if (isnan(m->median_ms))
        snprintf(m->message, sizeof m->message, "latency: no time was measured");
    return 0;
}

static void destroy(void *state)
{
    (void)state;
}

static const tforge_costmodel_interface latency_interface = {
    sizeof latency_interface, create, objective, unit, score, NULL, destroy};

static const tforge_plugin_descriptor descriptor = {
    .id = ID,
    .version = "1.0.0",
    .description = "latency: the median kernel time in ms (the default objective)",
    .interface_id = TFORGE_COSTMODEL_INTERFACE_ID,
    .interface = &latency_interface};

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
