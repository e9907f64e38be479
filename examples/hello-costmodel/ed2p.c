/* A cost model built outside the tree against the installed kit: energy x delay squared (J*s^2),
 * which leans further toward speed than energy-delay. It reads what the GPU worker measures:
 * joules per launch (the metric "energy_j") and the median time. */
#include <tforge/plugin/costmodel.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

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
    return "energy-delay-squared";
}

static const char *unit(void *state)
{
    (void)state;
    return "J*s^2";
}

static int score(void *state, tforge_measurement *m)
{
    (void)state;
    if (m->status != TFORGE_STATUS_OK)
        return 0;
    double joules = NAN, seconds = m->median_ms / 1e3;
    for (uint32_t i = 0; i < m->n_metrics && i < TFORGE_MEASUREMENT_METRICS; i++)
        if (strcmp(m->metrics[i].name, "energy_j") == 0)
            joules = m->metrics[i].value;
    m->value = joules * seconds * seconds;
    if (isnan(m->value))
        snprintf(m->message, sizeof m->message, "ed2p: no energy_j or no time measured");
    return 0;
}

static void destroy(void *state)
{
    (void)state;
}

static const tforge_costmodel_interface ed2p_interface = {
    sizeof ed2p_interface, create, objective, unit, score, NULL, destroy};

static const tforge_plugin_descriptor descriptor = {
    .id = "ed2p",
    .version = "1.0.0",
    .description = "energy x delay squared (J*s^2): an out-of-tree example",
    .interface_id = TFORGE_COSTMODEL_INTERFACE_ID,
    .interface = &ed2p_interface};

static uint32_t count(void)
{
    return 1;
}

static const tforge_plugin_descriptor *get(uint32_t index)
{
    return index == 0 ? &descriptor : NULL;
}

TFORGE_PLUGIN_EXPORT const tforge_plugin_module TFORGE_PLUGIN_ENTRY_NAME = {
    TFORGE_PLUGIN_ABI_VERSION_INIT, "ed2p", NULL, NULL, count, get};
