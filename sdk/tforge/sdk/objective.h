/* Helpers for cost models that score (interface "tforge.costmodel/1"), the objectives: a
 * measurement's metric by name, and TFORGE_SDK_OBJECTIVE, the whole plugin around one stateless
 * score function (its create, objective, unit, destroy, descriptor and entry), so that a model
 * writes only how it scores. Header-only, C11, the plugin ABI and the C library only. */
#ifndef TFORGE_SDK_OBJECTIVE_H
#define TFORGE_SDK_OBJECTIVE_H

#include <tforge/plugin/costmodel.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The metric `name` of `m` ("energy_j"), or NAN when it has none. */
static inline double tforge_sdk_objective_metric(const tforge_measurement *m, const char *name)
{
    for (uint32_t i = 0; i < m->n_metrics && i < TFORGE_MEASUREMENT_METRICS; i++)
        if (strcmp(m->metrics[i].name, name) == 0)
            return m->metrics[i].value;
    return NAN;
}

/* A plugin of one objective whose value is SCORE(m) (a function of the measurement alone,
 * returning the value, NAN when what it needs is missing: then `MISSING` is the measurement's
 * message). Measurements that did not run correctly are left as they are. ID, OBJECTIVE, UNIT,
 * DESCRIPTION: string literals. */
#define TFORGE_SDK_OBJECTIVE(ID, OBJECTIVE, UNIT, DESCRIPTION, SCORE, MISSING)                    \
    static int tforge_sdk_objective_create(void **state, const tforge_host *host,                 \
                                           const tforge_options_view *options)                    \
    {                                                                                             \
        (void)host;                                                                               \
        (void)options;                                                                            \
        *state = NULL; /* nothing to keep */                                                      \
        return 0;                                                                                 \
    }                                                                                             \
    static const char *tforge_sdk_objective_name(void *state)                                     \
    {                                                                                             \
        (void)state;                                                                              \
        return OBJECTIVE;                                                                         \
    }                                                                                             \
    static const char *tforge_sdk_objective_unit(void *state)                                     \
    {                                                                                             \
        (void)state;                                                                              \
        return UNIT;                                                                              \
    }                                                                                             \
    static int tforge_sdk_objective_score(void *state, tforge_measurement *m)                     \
    {                                                                                             \
        (void)state;                                                                              \
        if (m->status != TFORGE_STATUS_OK)                                                        \
            return 0;                                                                             \
        m->value = SCORE(m);                                                                      \
        if (isnan(m->value))                                                                      \
            snprintf(m->message, sizeof m->message, "%s: %s", ID, MISSING);                       \
        return 0;                                                                                 \
    }                                                                                             \
    static void tforge_sdk_objective_destroy(void *state)                                         \
    {                                                                                             \
        (void)state;                                                                              \
    }                                                                                             \
    static const tforge_costmodel_interface tforge_sdk_objective_table = {                        \
        sizeof tforge_sdk_objective_table, tforge_sdk_objective_create,                           \
        tforge_sdk_objective_name,         tforge_sdk_objective_unit,                             \
        tforge_sdk_objective_score,        NULL,                                                  \
        tforge_sdk_objective_destroy};                                                            \
    static const tforge_plugin_descriptor tforge_sdk_objective_descriptor = {                     \
        .id = ID,                                                                                 \
        .version = "1.0.0",                                                                       \
        .description = DESCRIPTION,                                                               \
        .interface_id = TFORGE_COSTMODEL_INTERFACE_ID,                                            \
        .interface = &tforge_sdk_objective_table};                                                \
    static uint32_t tforge_sdk_objective_count(void)                                              \
    {                                                                                             \
        return 1;                                                                                 \
    }                                                                                             \
    static const tforge_plugin_descriptor *tforge_sdk_objective_get(uint32_t index)               \
    {                                                                                             \
        return index == 0 ? &tforge_sdk_objective_descriptor : NULL;                             \
    }                                                                                             \
    TFORGE_PLUGIN_EXPORT const tforge_plugin_module TFORGE_PLUGIN_ENTRY_NAME = {                  \
        TFORGE_PLUGIN_ABI_VERSION_INIT, ID, NULL, NULL, tforge_sdk_objective_count,               \
        tforge_sdk_objective_get}

#endif
