/* The JSON texts the store keeps for a recording (its space, an entry's extras), so that JSON
 * stays at this edge. */
#include "recording_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define SPACE_FORMAT "tforge.recording/1"

int tforge_recording_space_json(char **out, const tforge_recording *rec)
{
    int failed = 0;
    cJSON *space = cJSON_CreateObject(), *params = cJSON_CreateArray(),
          *metrics = cJSON_CreateArray();
    if (!space || !params || !metrics)
        failed = 1;
    recording_add_item(space, "format", cJSON_CreateString(SPACE_FORMAT), &failed);
    recording_add_item(space, "device_name", cJSON_CreateString(rec->device_name), &failed);
    recording_add_item(space, "kernel_name", cJSON_CreateString(rec->kernel_name), &failed);
    if (rec->problem_size)
        recording_add_item(space, "problem_size", recording_problem_size_json(rec), &failed);
    recording_add_item(space, "objective", cJSON_CreateString(rec->objective), &failed);
    for (uint32_t p = 0; params && p < rec->n_params; p++) {
        const tforge_recording_param *param = &rec->params[p];
        cJSON *object = cJSON_CreateObject();
        recording_add_item(object, "name", cJSON_CreateString(param->name), &failed);
        recording_add_item(object, "values", recording_values_json(param), &failed);
        recording_add_item(object, "texts",
                           cJSON_CreateStringArray((const char *const *)param->texts,
                                                   (int)param->n_values),
                           &failed);
        if (!object || !cJSON_AddItemToArray(params, object))
            failed = 1;
    }
    recording_add_item(space, "params", params, &failed);
    for (uint32_t m = 0; metrics && m < rec->n_metrics; m++)
        if (!cJSON_AddItemToArray(metrics, cJSON_CreateString(rec->metric_names[m])))
            failed = 1;
    recording_add_item(space, "metrics", metrics, &failed);
    if (failed) {
        cJSON_Delete(space);
        *out = NULL;
        return nomem();
    }
    return recording_print_json(out, space);
}

int tforge_recording_from_space_json(tforge_recording **out, const char *json, const char *where)
{
    *out = NULL;
    tforge_recording *rec = NULL;
    cJSON *space = json ? cJSON_Parse(json) : NULL;
    const cJSON *format = cJSON_GetObjectItemCaseSensitive(space, "format");
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(space, "params");
    const cJSON *metrics = cJSON_GetObjectItemCaseSensitive(space, "metrics");
    int rc = 0;
    if (!cJSON_IsString(format) || strcmp(format->valuestring, SPACE_FORMAT) != 0) {
        rc = recording_field_error(where, format, "\"" SPACE_FORMAT "\" (a recorded space)",
                                   "space.format");
        goto cleanup;
    }
    if (!cJSON_IsArray(params) || (metrics && !cJSON_IsArray(metrics))) {
        rc = recording_field_error(where, cJSON_IsArray(params) ? metrics : params, "an array",
                                   cJSON_IsArray(params) ? "space.metrics" : "space.params");
        goto cleanup;
    }
    rc = tforge_recording_new(&rec);
    if (!rc)
        rc = recording_read_string_field(&rec->device_name, space, "device_name", 1, where);
    if (!rc)
        rc = recording_read_string_field(&rec->kernel_name, space, "kernel_name", 1, where);
    if (!rc)
        rc = recording_read_string_field(&rec->objective, space, "objective", 0, where);
    if (!rc)
        rc = recording_read_problem_size(
            rec, cJSON_GetObjectItemCaseSensitive(space, "problem_size"), where,
            "space.problem_size");
    int i = 0;
    for (const cJSON *param = params->child; param && rc == 0; param = param->next, i++) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(param, "name");
        if (!cJSON_IsString(name))
            rc = recording_field_error(where, name, "a string", "space.params[%d].name", i);
        else
            rc = recording_add_param_json(rec, name->valuestring,
                                          cJSON_GetObjectItemCaseSensitive(param, "values"),
                                          cJSON_GetObjectItemCaseSensitive(param, "texts"), where,
                                          "space.params[\"%s\"].values",
                                          "space.params[\"%s\"].texts");
    }
    i = 0;
    for (const cJSON *name = metrics ? metrics->child : NULL; name && rc == 0;
         name = name->next, i++) {
        uint32_t index;
        if (!cJSON_IsString(name))
            rc = recording_field_error(where, name, "a string", "space.metrics[%d]", i);
        else
            rc = tforge_recording_metric(&index, rec, name->valuestring);
    }
    if (rc < 0)
        goto cleanup;
    *out = rec;
    rec = NULL;
cleanup:
    tforge_recording_free(rec);
    cJSON_Delete(space);
    return rc;
}

int tforge_recording_extras_json(char **out, const tforge_recording *rec,
                                 const tforge_recording_entry *entry)
{
    *out = NULL;
    int failed = 0;
    cJSON *extras = cJSON_CreateObject();
    if (!extras)
        return nomem();
    if (entry->n_times)
        recording_add_item(extras, "times", recording_numbers_json(entry->times, entry->n_times),
                           &failed);
    for (size_t t = 1; t < N_TIMING; t++) /* compile_time has a column of its own */
        recording_add_number(extras, recording_timing_fields[t].kt, timing_of(entry, t), &failed);
    for (uint32_t m = 0; m < rec->n_metrics; m++)
        recording_add_number(extras, rec->metric_names[m], entry->metrics[m], &failed);
    if (failed || !extras->child) {
        cJSON_Delete(extras);
        return failed ? nomem() : 0;
    }
    return recording_print_json(out, extras);
}

/* Whether a metric called `name` would repeat a field an entry has already: a parameter, the
 * time, its spread, or one of the timing fields (a profile's `num_warps`, say, where num_warps
 * is tuned). */
static int entry_field(const tforge_recording *rec, const char *name)
{
    if (recording_find_param(rec, name) >= 0)
        return 1;
    for (size_t t = 0; t < N_TIMING; t++)
        if (strcmp(recording_timing_fields[t].kt, name) == 0)
            return 1;
    return strcmp(name, "time") == 0 || strcmp(name, "timestamp") == 0 ||
           strcmp(name, "spread") == 0;
}

int tforge_recording_extras_read(tforge_recording_entry *entry, tforge_recording *rec,
                                 const char *json, const char *where)
{
    entry->times = NULL;
    entry->n_times = 0;
    entry->metrics = NULL;
    for (size_t t = 1; t < N_TIMING; t++)
        *timing(entry, t) = NAN;
    uint32_t have = 0;
    int rc = recording_fit_metrics(&entry->metrics, &have, rec->n_metrics);
    if (rc < 0 || !json)
        return rc;
    cJSON *extras = cJSON_Parse(json);
    if (!cJSON_IsObject(extras))
        rc = recording_field_error(where, extras, "an object", "metrics");
    for (const cJSON *field = extras ? extras->child : NULL; field && rc == 0;
         field = field->next) {
        size_t t = 1;
        while (t < N_TIMING && strcmp(field->string, recording_timing_fields[t].kt) != 0)
            t++;
        if (strcmp(field->string, "times") == 0)
            rc = recording_read_numbers(&entry->times, &entry->n_times, field, 1.0, where,
                                        "metrics.times");
        else if (t < N_TIMING && !cJSON_IsNumber(field))
            rc = recording_field_error(where, field, "a number", "metrics.%s", field->string);
        else if (t < N_TIMING)
            *timing(entry, t) = field->valuedouble;
        else if (cJSON_IsNumber(field) && !entry_field(rec, field->string))
            rc = recording_set_metric(rec, &entry->metrics, &have,
                                      field->string, field->valuedouble);
    }
    cJSON_Delete(extras);
    return rc;
}
