/* Kernel Tuner caches, read and written (the format is described in recording.h). */
#include "recording_internal.h"

#include "tforge/log.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kt_failures[] = {
    [TFORGE_STATUS_COMPILE] = "CompilationFailedConfig",
    [TFORGE_STATUS_RUNTIME] = "RuntimeFailedConfig",
    [TFORGE_STATUS_CONSTRAINT] = "InvalidConfig",
};

/* The length of the JSON number at the start of `s`, or 0. */
static size_t json_number_length(const char *s)
{
    size_t n = 0;
    while (s[n] && strchr("0123456789+-.eE", s[n]))
        n++;
    char number[64];
    if (n == 0 || n >= sizeof number)
        return 0;
    memcpy(number, s, n);
    number[n] = '\0';
    return recording_is_json_number(number) ? n : 0;
}

/* A key that differs from the values' texts only where a number is printed another way
 * ("1.0" for 1) teaches the texts: Kernel Tuner's keys are what Python printed. The key is
 * matched from the left, so that strings may hold commas. */
static int match_key(tforge_recording *rec, const tforge_level *levels, const char *key,
                     const char *file)
{
    const char *at = key;
    for (uint32_t p = 0; p < rec->n_params; p++) {
        tforge_recording_param *param = &rec->params[p];
        const char *text = param->texts[levels[p]];
        size_t n = strlen(text);
        if (p > 0 && *at++ != ',')
            goto mismatch;
        if (strncmp(at, text, n) != 0 || (at[n] != ',' && at[n] != '\0')) {
            double number = param->numbers[levels[p]];
            n = isnan(number) ? 0 : json_number_length(at);
            if (n == 0 || (at[n] != ',' && at[n] != '\0') || strtod(at, NULL) != number)
                goto mismatch;
            char *learnt = strndup(at, n);
            if (!learnt)
                return nomem();
            free(param->texts[levels[p]]);
            param->texts[levels[p]] = learnt;
        }
        at += n;
    }
    if (*at == '\0')
        return 0;
mismatch:;
    char *expected;
    int rc = tforge_recording_key(&expected, rec, levels);
    if (rc < 0)
        return rc;
    rc = tforge_error_set(TFORGE_EINPUT,
                          "%s: cache[\"%.200s\"]: expected the key \"%.200s\" for the entry's "
                          "values",
                          file, key, expected);
    free(expected);
    return rc;
}

static int read_kt_entry(tforge_recording *rec, const cJSON *item, tforge_level *levels,
                         unsigned char *seen, double **metrics, uint32_t *have,
                         const char *file)
{
    const char *key = item->string;
    if (!cJSON_IsObject(item))
        return recording_field_error(file, item, "an object", "cache[\"%.200s\"]", key);
    tforge_recording_entry entry = {.levels = levels, .status = TFORGE_STATUS_OK, .time = NAN};
    for (size_t i = 0; i < N_TIMING; i++)
        *timing(&entry, i) = NAN;
    for (uint32_t m = 0; m < *have; m++)
        (*metrics)[m] = NAN;
    memset(seen, 0, rec->n_params);
    int has_time = 0, rc = 0;

    for (const cJSON *field = item->child; field && rc == 0; field = field->next) {
        const char *name = field->string;
        long p = recording_find_param(rec, name);
        if ((p >= 0 && seen[p]) || (p < 0 && strcmp(name, "time") == 0 && has_time)) {
            rc = recording_field_error(file, field, "each field once", "cache[\"%.200s\"].%s",
                                       key, name);
        } else if (p >= 0) {
            long level = recording_find_level(&rec->params[p], field);
            if (level < 0)
                rc = recording_field_error(file, field, "one of the values in tune_params",
                                           "cache[\"%.200s\"].%s", key, name);
            levels[p] = (tforge_level)(level < 0 ? 0 : level);
            seen[p] = 1;
        } else if (strcmp(name, "time") == 0) {
            has_time = 1;
            if (recording_is_duration(field)) {
                entry.time = field->valuedouble;
                continue;
            }
            int status = -1;
            for (int s = 0; s < N_STATUSES && cJSON_IsString(field); s++)
                if (kt_failures[s] && strcmp(field->valuestring, kt_failures[s]) == 0)
                    status = s;
            if (cJSON_IsString(field) && strcmp(field->valuestring, "ErrorConfig") == 0)
                status = TFORGE_STATUS_RUNTIME; /* Kernel Tuner's failure of no known kind */
            if (status < 0)
                rc = recording_field_error(file, field,
                                           DURATION ", \"CompilationFailedConfig\", "
                                           "\"RuntimeFailedConfig\", \"InvalidConfig\" or "
                                           "\"ErrorConfig\"",
                                           "cache[\"%.200s\"].time", key);
            entry.status = (tforge_status)(status < 0 ? 0 : status);
        } else if (strcmp(name, "times") == 0) {
            char at[256];
            snprintf(at, sizeof at, "cache[\"%.200s\"].times", key);
            free(entry.times);
            rc = recording_read_numbers(&entry.times, &entry.n_times, field, 1.0, file, at);
        } else if (strcmp(name, "timestamp") == 0) {
            if (!cJSON_IsString(field))
                rc = recording_field_error(file, field, "a string",
                                           "cache[\"%.200s\"].timestamp", key);
            entry.timestamp = field->valuestring;
        } else if (strcmp(name, "spread") == 0) {
            if (!cJSON_IsNumber(field) || !(field->valuedouble >= 0))
                rc = recording_field_error(file, field, "a number >= 0",
                                           "cache[\"%.200s\"].spread", key);
            else
                entry.spread = field->valuedouble;
        } else {
            size_t t = 0;
            while (t < N_TIMING && strcmp(name, recording_timing_fields[t].kt) != 0)
                t++;
            if (t < N_TIMING) {
                if (!recording_is_duration(field))
                    rc = recording_field_error(file, field, DURATION, "cache[\"%.200s\"].%s",
                                               key, name);
                else
                    *timing(&entry, t) = field->valuedouble;
            } else if (cJSON_IsNumber(field)) {
                rc = recording_set_metric(rec, metrics, have, name, field->valuedouble);
            }
        }
    }
    for (uint32_t p = 0; p < rec->n_params && rc == 0; p++)
        if (!seen[p])
            rc = recording_field_error(file, NULL, "a value", "cache[\"%.200s\"].%s",
                                       key, rec->params[p].name);
    if (rc == 0 && !has_time)
        rc = recording_field_error(file, NULL, "a number or a failure string",
                                   "cache[\"%.200s\"].time",
                                   key);
    if (rc == 0)
        rc = match_key(rec, levels, key, file);
    if (rc == 0) {
        entry.metrics = *metrics;
        rc = tforge_recording_add_entry(rec, &entry);
    }
    free(entry.times);
    return rc;
}

int recording_read_kt(tforge_recording *rec, const cJSON *root, const char *file)
{
    int rc = recording_read_string_field(&rec->device_name, root, "device_name", 1, file);
    if (!rc)
        rc = recording_read_string_field(&rec->kernel_name, root, "kernel_name", 1, file);
    if (!rc)
        rc = recording_read_string_field(&rec->objective, root, "objective", 0, file);
    if (!rc)
        rc = recording_read_problem_size(
            rec, cJSON_GetObjectItemCaseSensitive(root, "problem_size"), file, "problem_size");
    if (rc < 0)
        return rc;

    const cJSON *keys = cJSON_GetObjectItemCaseSensitive(root, "tune_params_keys");
    const cJSON *values = cJSON_GetObjectItemCaseSensitive(root, "tune_params");
    const cJSON *cache = cJSON_GetObjectItemCaseSensitive(root, "cache");
    if (!cJSON_IsArray(keys))
        return recording_field_error(file, keys, "an array of parameter names", "tune_params_keys");
    if (!cJSON_IsObject(values))
        return recording_field_error(file, values, "an object of value lists", "tune_params");
    if (!cJSON_IsObject(cache))
        return recording_field_error(file, cache, "an object of entries", "cache");
    int i = 0;
    for (const cJSON *name = keys->child; name; name = name->next, i++) {
        if (!cJSON_IsString(name))
            return recording_field_error(file, name, "a string", "tune_params_keys[%d]", i);
        rc = recording_add_param_json(
            rec, name->valuestring, cJSON_GetObjectItemCaseSensitive(values, name->valuestring),
            NULL, file, "tune_params[\"%s\"]", "");
        if (rc < 0)
            return rc;
    }

    tforge_level *levels = malloc((rec->n_params ? rec->n_params : 1) * sizeof *levels);
    unsigned char *seen = malloc(rec->n_params ? rec->n_params : 1);
    double *metrics = NULL;
    uint32_t have = 0;
    if (!levels || !seen)
        rc = nomem();
    for (const cJSON *item = cache->child; item && rc == 0; item = item->next)
        rc = read_kt_entry(rec, item, levels, seen, &metrics, &have, file);
    free(levels);
    free(seen);
    free(metrics);
    return rc;
}

static cJSON *kt_entry(const tforge_recording *rec, const tforge_recording_entry *entry,
                       int *lossy)
{
    int failed = 0;
    cJSON *object = recording_config_object(rec, entry->levels);
    if (!object)
        return NULL;
    if (entry->status == TFORGE_STATUS_OK) {
        recording_add_number(object, "time", entry->time, &failed);
    } else {
        const char *failure = kt_failures[entry->status];
        if (!failure) {
            failure = kt_failures[TFORGE_STATUS_RUNTIME];
            *lossy = 1;
        }
        recording_add_item(object, "time", cJSON_CreateString(failure), &failed);
    }
    if (entry->n_times)
        recording_add_item(object, "times", recording_numbers_json(entry->times, entry->n_times),
                           &failed);
    if (entry->spread > 0)
        recording_add_number(object, "spread", entry->spread, &failed);
    /* Kernel Tuner's order: the three times it requires, the metrics, the last two. */
    for (size_t t = 0; t < 3; t++)
        recording_add_item(
            object, recording_timing_fields[t].kt,
            recording_number_json(isnan(timing_of(entry, t)) ? 0 : timing_of(entry, t)), &failed);
    for (uint32_t m = 0; m < rec->n_metrics; m++)
        recording_add_number(object, rec->metric_names[m], entry->metrics[m], &failed);
    for (size_t t = 3; t < N_TIMING; t++)
        recording_add_item(
            object, recording_timing_fields[t].kt,
            recording_number_json(isnan(timing_of(entry, t)) ? 0 : timing_of(entry, t)), &failed);
    if (entry->timestamp)
        recording_add_item(object, "timestamp", cJSON_CreateString(entry->timestamp), &failed);
    if (failed) {
        cJSON_Delete(object);
        return NULL;
    }
    return object;
}

int tforge_recording_write_kt(const tforge_recording *rec, const char *path)
{
    recording_writer w;
    int rc = recording_writer_open(&w, path), failed = 0, lossy = 0;
    if (rc < 0)
        return rc;
    /* The header through cJSON without its last brace; then one entry a line, as Kernel Tuner
     * appends them, and an end ("}\n}") that Kernel Tuner reopens for appending. */
    cJSON *header = cJSON_CreateObject(), *keys = cJSON_CreateArray();
    if (!header || !keys)
        failed = 1;
    recording_add_item(header, "device_name", cJSON_CreateString(rec->device_name), &failed);
    recording_add_item(header, "kernel_name", cJSON_CreateString(rec->kernel_name), &failed);
    if (rec->problem_size)
        recording_add_item(header, "problem_size", recording_problem_size_json(rec), &failed);
    for (uint32_t p = 0; keys && p < rec->n_params; p++)
        if (!cJSON_AddItemToArray(keys, cJSON_CreateString(rec->params[p].name)))
            failed = 1;
    recording_add_item(header, "tune_params_keys", keys, &failed);
    recording_add_item(header, "tune_params", recording_space_object(rec), &failed);
    recording_add_item(header, "objective", cJSON_CreateString(rec->objective), &failed);
    char *text = failed ? NULL : cJSON_PrintUnformatted(header);
    cJSON_Delete(header);
    if (!text) {
        rc = nomem();
        goto cleanup;
    }
    text[strlen(text) - 1] = '\0';
    recording_put(&w, text);
    free(text);
    recording_put(&w, ",\n\"cache\": {");
    for (size_t i = 0; i < rec->n_entries && rc == 0; i++) {
        char *key;
        rc = tforge_recording_key(&key, rec, rec->entries[i].levels);
        if (rc < 0)
            break;
        cJSON *entry = kt_entry(rec, &rec->entries[i], &lossy);
        recording_put(&w, i > 0 ? ",\n" : "\n");
        recording_put_json(&w, cJSON_CreateString(key));
        recording_put(&w, ": ");
        recording_put_json(&w, entry);
        free(key);
    }
    recording_put(&w, "}\n}\n");
    if (lossy)
        tforge_log(TFORGE_LOG_WARN,
                   "%s: Kernel Tuner has no failure string for timeouts and wrong results; "
                   "wrote them as RuntimeFailedConfig",
                   path);
cleanup:
    return recording_writer_close(&w, rc);
}
