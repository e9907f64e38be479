/* T4 results files, read and written (the format is described in recording.h). */
#include "recording_internal.h"

#include "tforge/log.h"
#include "tforge/space.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const t4_invalidity[] = {
    [TFORGE_STATUS_OK] = "correct",       [TFORGE_STATUS_COMPILE] = "compile",
    [TFORGE_STATUS_RUNTIME] = "runtime",  [TFORGE_STATUS_TIMEOUT] = "timeout",
    [TFORGE_STATUS_WRONG] = "correctness", [TFORGE_STATUS_CONSTRAINT] = "constraints",
};

/* The texts of the parameters whose numbers Python would print otherwise (1.0): JSON numbers
 * do not say. */
static cJSON *texts_object(const tforge_recording *rec)
{
    cJSON *object = cJSON_CreateObject();
    for (uint32_t p = 0; object && p < rec->n_params; p++) {
        const tforge_recording_param *param = &rec->params[p];
        int plain = 1;
        for (uint32_t l = 0; l < param->n_values && plain; l++) {
            char text[40];
            tforge_space_number_text(text, sizeof text, param->numbers[l]);
            plain = isnan(param->numbers[l]) || strcmp(text, param->texts[l]) == 0;
        }
        if (!plain && !cJSON_AddItemToObject(object, param->name,
                                             cJSON_CreateStringArray(
                                                 (const char *const *)param->texts,
                                                 (int)param->n_values))) {
            cJSON_Delete(object);
            return NULL;
        }
    }
    return object;
}

static int t4_time_scale(double *scale, const cJSON *metadata, const char *file)
{
    static const struct {
        const char *name;
        double to_ms;
    } units[] = {{"milliseconds", 1.0}, {"miliseconds", 1.0}, /* Kernel Tuner's spelling */
                 {"seconds", 1e3},      {"microseconds", 1e-3}, {"nanoseconds", 1e-6}};
    *scale = 1.0;
    const cJSON *unit = cJSON_GetObjectItemCaseSensitive(metadata, "timeunit");
    if (!unit)
        return 0;
    for (size_t i = 0; cJSON_IsString(unit) && i < sizeof units / sizeof *units; i++)
        if (strcmp(unit->valuestring, units[i].name) == 0) {
            *scale = units[i].to_ms;
            return 0;
        }
    return recording_field_error(file, unit,
                                 "\"nanoseconds\", \"microseconds\", \"milliseconds\" or "
                                 "\"seconds\"", "metadata.timeunit");
}

/* Without the space in the metadata: parameters named in the first configuration's order, each
 * one's values as seen, sorted when all are numbers. */
static int compare_numbers(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int t4_derive_params(tforge_recording *rec, const cJSON *results, const char *file)
{
    const cJSON *first = results->child ? cJSON_GetObjectItemCaseSensitive(results->child,
                                                                           "configuration")
                                        : NULL;
    if (!first)
        return 0; /* no results, or the first one's error is reported when reading it */
    int rc = 0;
    for (const cJSON *param = first->child; param && rc == 0; param = param->next) {
        if (!cJSON_IsNumber(param) && !cJSON_IsString(param))
            return recording_field_error(file, param, "a number or a string",
                                         "results[0].configuration.%s", param->string);
        cJSON *seen = cJSON_CreateArray();
        if (!seen)
            return nomem();
        int all_numeric = 1, n = 0;
        for (const cJSON *r = results->child; r; r = r->next) {
            const cJSON *config = cJSON_GetObjectItemCaseSensitive(r, "configuration");
            const cJSON *value = cJSON_GetObjectItemCaseSensitive(config, param->string);
            if (!cJSON_IsNumber(value) && !cJSON_IsString(value))
                continue; /* reported when reading that result */
            int known = 0;
            for (const cJSON *s = seen->child; s && !known; s = s->next)
                known = cJSON_IsNumber(value)
                            ? cJSON_IsNumber(s) && s->valuedouble == value->valuedouble
                            : cJSON_IsString(s) && strcmp(s->valuestring, value->valuestring) == 0;
            if (!known) {
                cJSON_AddItemToArray(seen, cJSON_Duplicate(value, 0));
                all_numeric = all_numeric && cJSON_IsNumber(value);
                n++;
            }
        }
        if (all_numeric && n > 1) {
            double *sorted = malloc((size_t)n * sizeof *sorted);
            if (!sorted) {
                cJSON_Delete(seen);
                return nomem();
            }
            int i = 0;
            for (const cJSON *s = seen->child; s; s = s->next)
                sorted[i++] = s->valuedouble;
            qsort(sorted, (size_t)n, sizeof *sorted, compare_numbers);
            cJSON_Delete(seen);
            seen = cJSON_CreateDoubleArray(sorted, n);
            free(sorted);
            if (!seen)
                return nomem();
        }
        rc = recording_add_param_json(rec, param->string, seen, NULL, file,
                                      "results[].configuration.%s",
                                      "");
        cJSON_Delete(seen);
    }
    return rc;
}

static int t4_status(tforge_status *status, const cJSON *result, int index, const char *file)
{
    const cJSON *invalidity = cJSON_GetObjectItemCaseSensitive(result, "invalidity");
    const cJSON *correctness = cJSON_GetObjectItemCaseSensitive(result, "correctness");
    int found = -1;
    for (int s = 0; s < N_STATUSES && cJSON_IsString(invalidity); s++)
        if (strcmp(invalidity->valuestring, t4_invalidity[s]) == 0)
            found = s;
    if (found < 0)
        return recording_field_error(file, invalidity,
                                     "\"correct\", \"compile\", \"runtime\", \"timeout\", "
                                     "\"correctness\" or \"constraints\"",
                                     "results[%d].invalidity", index);
    if (correctness && !cJSON_IsNumber(correctness))
        return recording_field_error(file, correctness, "0 or 1", "results[%d].correctness", index);
    if (found == TFORGE_STATUS_OK && correctness && correctness->valuedouble == 0)
        found = TFORGE_STATUS_WRONG;
    *status = (tforge_status)found;
    return 0;
}

static int t4_times(tforge_recording_entry *entry, const cJSON *times, double scale, int index,
                    const char *file)
{
    if (!times)
        return 0;
    if (!cJSON_IsObject(times))
        return recording_field_error(file, times, "an object", "results[%d].times", index);
    for (const cJSON *field = times->child; field; field = field->next) {
        const char *name = field->string;
        if (strcmp(name, "runtimes") == 0) {
            char at[64];
            snprintf(at, sizeof at, "results[%d].times.runtimes", index);
            free(entry->times);
            int rc = recording_read_numbers(&entry->times, &entry->n_times, field, scale, file, at);
            if (rc < 0)
                return rc;
            continue;
        }
        size_t t = 0;
        while (t < N_TIMING && strcmp(name, recording_timing_fields[t].t4) != 0)
            t++;
        if (t == N_TIMING && strcmp(name, "compilation") == 0)
            t = 0; /* Kernel Tuner's name for compilation_time */
        if (t == N_TIMING)
            continue; /* data, kernel_overhead ...: nothing of ours */
        if (!recording_is_duration(field))
            return recording_field_error(file, field, DURATION, "results[%d].times.%s",
                                         index, name);
        *timing(entry, t) = field->valuedouble * scale;
    }
    return 0;
}

static int t4_measurements(tforge_recording *rec, tforge_recording_entry *entry, double **metrics,
                           uint32_t *have, const cJSON *list, double scale, int index,
                           const char *file)
{
    if (!list)
        return 0;
    if (!cJSON_IsArray(list))
        return recording_field_error(file, list, "an array", "results[%d].measurements", index);
    int i = 0;
    for (const cJSON *m = list->child; m; m = m->next, i++) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(m, "name");
        const cJSON *value = cJSON_GetObjectItemCaseSensitive(m, "value");
        if (!cJSON_IsString(name))
            return recording_field_error(file, name, "a string",
                                         "results[%d].measurements[%d].name", index,
                                         i);
        if (strcmp(name->valuestring, "time") == 0) {
            if (entry->status != TFORGE_STATUS_OK)
                continue; /* Kernel Tuner writes the failure string here */
            if (!recording_is_duration(value))
                return recording_field_error(file, value, DURATION,
                                             "results[%d].measurements[%d].value", index, i);
            entry->time = value->valuedouble * scale;
        } else if (cJSON_IsNumber(value)) {
            int rc = recording_set_metric(rec, metrics, have,
                                          name->valuestring, value->valuedouble);
            if (rc < 0)
                return rc;
        }
    }
    if (entry->status == TFORGE_STATUS_OK && isnan(entry->time))
        return recording_field_error(file, NULL,
                                     "a measurement named \"time\" for a correct result",
                                     "results[%d].measurements", index);
    return 0;
}

static int read_t4_result(tforge_recording *rec, const cJSON *result, int index,
                          tforge_level *levels, double **metrics, uint32_t *have, double scale,
                          const char *file)
{
    if (!cJSON_IsObject(result))
        return recording_field_error(file, result, "an object", "results[%d]", index);
    tforge_recording_entry entry = {.levels = levels, .time = NAN};
    for (size_t i = 0; i < N_TIMING; i++)
        *timing(&entry, i) = NAN;
    for (uint32_t m = 0; m < *have; m++)
        (*metrics)[m] = NAN;
    const cJSON *timestamp = cJSON_GetObjectItemCaseSensitive(result, "timestamp");
    char field[48];
    snprintf(field, sizeof field, "results[%d].configuration", index);
    int rc = recording_read_configuration(
        rec, levels, cJSON_GetObjectItemCaseSensitive(result, "configuration"), file, field);
    if (!rc)
        rc = t4_status(&entry.status, result, index, file);
    if (!rc)
        rc = t4_times(&entry, cJSON_GetObjectItemCaseSensitive(result, "times"), scale, index,
                      file);
    if (!rc)
        rc = t4_measurements(rec, &entry, metrics, have,
                             cJSON_GetObjectItemCaseSensitive(result, "measurements"), scale,
                             index, file);
    if (!rc && timestamp && !cJSON_IsString(timestamp))
        rc = recording_field_error(file, timestamp, "a string", "results[%d].timestamp", index);
    if (!rc) {
        entry.timestamp = timestamp ? timestamp->valuestring : NULL;
        entry.metrics = *metrics;
        rc = tforge_recording_add_entry(rec, &entry);
    }
    free(entry.times);
    return rc;
}

int recording_read_t4(tforge_recording *rec, const cJSON *root, const char *file)
{
    const cJSON *version = cJSON_GetObjectItemCaseSensitive(root, "schema_version");
    const cJSON *metadata = cJSON_GetObjectItemCaseSensitive(root, "metadata");
    const cJSON *results = cJSON_GetObjectItemCaseSensitive(root, "results");
    if (version && (!cJSON_IsString(version) || strncmp(version->valuestring, "1.", 2) != 0))
        return recording_field_error(file, version, "a 1.x.y version", "schema_version");
    if (metadata && !cJSON_IsObject(metadata))
        return recording_field_error(file, metadata, "an object", "metadata");
    if (!cJSON_IsArray(results))
        return recording_field_error(file, results, "an array of results", "results");
    double scale;
    int rc = t4_time_scale(&scale, metadata, file);
    if (!rc)
        rc = recording_read_string_field(&rec->device_name, metadata, "device", 0, file);
    if (!rc)
        rc = recording_read_string_field(&rec->kernel_name, metadata, "kernel_name", 0, file);
    if (!rc)
        rc = recording_read_string_field(&rec->objective, metadata, "objective", 0, file);
    if (!rc)
        rc = recording_read_problem_size(
            rec, cJSON_GetObjectItemCaseSensitive(metadata, "problem_size"), file,
            "metadata.problem_size");
    if (rc < 0)
        return rc;

    const cJSON *space = cJSON_GetObjectItemCaseSensitive(metadata, "tune_params");
    if (space) {
        if (!cJSON_IsObject(space))
            return recording_field_error(file, space, "an object of value lists",
                                         "metadata.tune_params");
        const cJSON *texts = cJSON_GetObjectItemCaseSensitive(metadata, "tune_params_texts");
        for (const cJSON *param = space->child; param && rc == 0; param = param->next)
            rc = recording_add_param_json(
                rec, param->string, param, cJSON_GetObjectItemCaseSensitive(texts, param->string),
                file, "metadata.tune_params[\"%s\"]", "metadata.tune_params_texts[\"%s\"]");
    } else {
        rc = t4_derive_params(rec, results, file);
    }

    tforge_level *levels = malloc((rec->n_params ? rec->n_params : 1) * sizeof *levels);
    double *metrics = NULL;
    uint32_t have = 0;
    if (!levels && rc == 0)
        rc = nomem();
    int index = 0;
    for (const cJSON *result = results->child; result && rc == 0; result = result->next)
        rc = read_t4_result(rec, result, index++, levels, &metrics, &have, scale, file);
    free(levels);
    free(metrics);
    return rc;
}

static cJSON *t4_result(const tforge_recording *rec, const tforge_recording_entry *entry)
{
    int failed = 0;
    cJSON *result = cJSON_CreateObject(), *times = cJSON_CreateObject(),
          *measurements = cJSON_CreateArray(), *objectives = cJSON_CreateArray();
    if (!result || !times || !measurements || !objectives) {
        cJSON_Delete(result);
        cJSON_Delete(times);
        cJSON_Delete(measurements);
        cJSON_Delete(objectives);
        return NULL;
    }
    if (entry->timestamp)
        recording_add_item(result, "timestamp", cJSON_CreateString(entry->timestamp), &failed);
    recording_add_item(result, "configuration", recording_config_object(rec, entry->levels),
                       &failed);
    if (!cJSON_AddItemToArray(objectives, cJSON_CreateString(rec->objective)))
        failed = 1;
    recording_add_item(result, "objectives", objectives, &failed);
    for (size_t t = 0; t < N_TIMING; t++)
        recording_add_number(times, recording_timing_fields[t].t4, timing_of(entry, t), &failed);
    if (entry->n_times)
        recording_add_item(times, "runtimes", recording_numbers_json(entry->times, entry->n_times),
                           &failed);
    recording_add_item(result, "times", times, &failed);
    recording_add_item(result, "invalidity", cJSON_CreateString(t4_invalidity[entry->status]),
                       &failed);
    recording_add_item(result, "correctness",
                       recording_number_json(entry->status == TFORGE_STATUS_OK),
                       &failed);
    /* The objective time first (for ok entries only), then the metrics. */
    for (uint32_t m = 0; m <= rec->n_metrics; m++) {
        int is_time = m == 0;
        double value = is_time ? entry->time : entry->metrics[m - 1];
        if (isnan(value) || (is_time && entry->status != TFORGE_STATUS_OK))
            continue;
        cJSON *measurement = cJSON_CreateObject();
        recording_add_item(measurement, "name",
                           cJSON_CreateString(is_time ? "time" : rec->metric_names[m - 1]),
                           &failed);
        recording_add_item(measurement, "value", recording_number_json(value), &failed);
        recording_add_item(measurement, "unit", cJSON_CreateString(is_time ? "ms" : ""), &failed);
        if (!measurement || !cJSON_AddItemToArray(measurements, measurement))
            failed = 1;
    }
    recording_add_item(result, "measurements", measurements, &failed);
    if (failed) {
        cJSON_Delete(result);
        return NULL;
    }
    return result;
}

int tforge_recording_write_t4(const tforge_recording *rec, const char *path)
{
    recording_writer w;
    int rc = recording_writer_open(&w, path), failed = 0;
    if (rc < 0)
        return rc;
    cJSON *metadata = cJSON_CreateObject();
    if (!metadata)
        failed = 1;
    recording_add_item(metadata, "timeunit", cJSON_CreateString("milliseconds"), &failed);
    recording_add_item(metadata, "device", cJSON_CreateString(rec->device_name), &failed);
    recording_add_item(metadata, "kernel_name", cJSON_CreateString(rec->kernel_name), &failed);
    if (rec->problem_size)
        recording_add_item(metadata, "problem_size", recording_problem_size_json(rec), &failed);
    recording_add_item(metadata, "objective", cJSON_CreateString(rec->objective), &failed);
    recording_add_item(metadata, "tune_params", recording_space_object(rec), &failed);
    cJSON *texts = texts_object(rec);
    if (texts && texts->child)
        recording_add_item(metadata, "tune_params_texts", texts, &failed);
    else
        cJSON_Delete(texts);
    if (failed) {
        cJSON_Delete(metadata);
        rc = nomem();
        goto cleanup;
    }
    recording_put(&w, "{\"schema_version\": \"1.0.0\",\n\"metadata\": ");
    recording_put_json(&w, metadata);
    recording_put(&w, ",\n\"results\": [");
    for (size_t i = 0; i < rec->n_entries; i++) {
        recording_put(&w, i > 0 ? ",\n" : "\n");
        recording_put_json(&w, t4_result(rec, &rec->entries[i]));
    }
    recording_put(&w, "]}\n");
cleanup:
    return recording_writer_close(&w, rc);
}
