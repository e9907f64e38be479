/* The recording in memory: built, checked and freed; numbers printed as Python prints them. */
#include "recording_internal.h"

#include "tforge/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tforge_recording_new(tforge_recording **out)
{
    *out = NULL;
    tforge_recording *rec = calloc(1, sizeof *rec);
    if (!rec)
        return nomem();
    rec->device_name = strdup("");
    rec->kernel_name = strdup("");
    rec->objective = strdup("time");
    if (!rec->device_name || !rec->kernel_name || !rec->objective) {
        tforge_recording_free(rec);
        return nomem();
    }
    *out = rec;
    return 0;
}

static void entry_dispose(tforge_recording_entry *entry)
{
    free(entry->levels);
    free(entry->times);
    free(entry->metrics);
    free(entry->timestamp);
}

static void param_dispose(tforge_recording_param *param)
{
    for (uint32_t i = 0; i < param->n_values; i++)
        free(param->texts[i]);
    free(param->texts);
    free(param->numbers);
    free(param->name);
}

void tforge_recording_free(tforge_recording *rec)
{
    if (!rec)
        return;
    for (size_t i = 0; i < rec->n_entries; i++)
        entry_dispose(&rec->entries[i]);
    free(rec->entries);
    for (uint32_t p = 0; p < rec->n_params; p++)
        param_dispose(&rec->params[p]);
    free(rec->params);
    for (uint32_t m = 0; m < rec->n_metrics; m++)
        free(rec->metric_names[m]);
    free(rec->metric_names);
    free(rec->device_name);
    free(rec->kernel_name);
    free(rec->problem_size);
    free(rec->objective);
    free(rec);
}

int recording_replace_string(char **slot, const char *value)
{
    char *copy = dup_string(value);
    if (value && !copy)
        return nomem();
    free(*slot);
    *slot = copy;
    return 0;
}

int tforge_recording_set_info(tforge_recording *rec, const char *device_name,
                              const char *kernel_name, const char *problem_size,
                              const char *objective)
{
    char *compact = NULL;
    if (problem_size) {
        cJSON *parsed = cJSON_Parse(problem_size);
        if (!parsed)
            return tforge_error_set(TFORGE_EINPUT, "problem_size: expected JSON text, found '%s'",
                                    problem_size);
        compact = cJSON_PrintUnformatted(parsed);
        cJSON_Delete(parsed);
        if (!compact)
            return nomem();
    }
    int rc = recording_replace_string(&rec->device_name, device_name ? device_name : "");
    if (!rc)
        rc = recording_replace_string(&rec->kernel_name, kernel_name ? kernel_name : "");
    if (!rc)
        rc = recording_replace_string(&rec->objective, objective ? objective : "time");
    if (!rc)
        rc = recording_replace_string(&rec->problem_size, compact);
    free(compact);
    return rc;
}

int tforge_recording_add_param(tforge_recording *rec, const char *name, uint32_t n_values,
                               const char *const *texts, const double *numbers)
{
    if (rec->n_entries > 0)
        return tforge_error_set(TFORGE_EINPUT, "parameter '%s': added after the first entry", name);
    if (n_values == 0 || n_values > MAX_LEVELS)
        return tforge_error_set(TFORGE_EINPUT, "parameter '%s': expected 1 to %u values, found %u",
                                name, MAX_LEVELS, n_values);
    for (uint32_t p = 0; p < rec->n_params; p++)
        if (strcmp(rec->params[p].name, name) == 0)
            return tforge_error_set(TFORGE_EINPUT, "parameter '%s': named twice", name);
    for (uint32_t i = 0; numbers && i < n_values; i++)
        if (!isnan(numbers[i]) &&
            (!recording_is_json_number(texts[i]) || strtod(texts[i], NULL) != numbers[i]))
            return tforge_error_set(TFORGE_EINPUT,
                                    "parameter '%s': value %u: expected the text of %.17g, "
                                    "found '%s'",
                                    name, i, numbers[i], texts[i]);

    tforge_recording_param *params = realloc(rec->params, (rec->n_params + 1) * sizeof *params);
    if (!params)
        return nomem();
    rec->params = params;
    tforge_recording_param *param = &params[rec->n_params];
    memset(param, 0, sizeof *param);
    param->name = strdup(name);
    param->texts = calloc(n_values, sizeof *param->texts);
    param->numbers = malloc(n_values * sizeof *param->numbers);
    if (!param->name || !param->texts || !param->numbers)
        goto fail;
    param->all_numeric = 1;
    for (uint32_t i = 0; i < n_values; i++, param->n_values++) {
        param->texts[i] = strdup(texts[i]);
        if (!param->texts[i])
            goto fail;
        param->numbers[i] = numbers ? numbers[i] : NAN;
        if (isnan(param->numbers[i]))
            param->all_numeric = 0;
    }
    rec->n_params++;
    return 0;
fail:
    param_dispose(param);
    return nomem();
}

int tforge_recording_metric(uint32_t *index, tforge_recording *rec, const char *name)
{
    for (uint32_t m = 0; m < rec->n_metrics; m++)
        if (strcmp(rec->metric_names[m], name) == 0) {
            *index = m;
            return 0;
        }
    uint32_t n = rec->n_metrics + 1;
    char **names = realloc(rec->metric_names, n * sizeof *names);
    if (!names)
        return nomem();
    rec->metric_names = names;
    /* Every entry gets a slot first, so that a failure leaves the recording consistent. */
    for (size_t i = 0; i < rec->n_entries; i++) {
        double *metrics = realloc(rec->entries[i].metrics, n * sizeof *metrics);
        if (!metrics)
            return nomem();
        metrics[n - 1] = NAN;
        rec->entries[i].metrics = metrics;
    }
    names[n - 1] = strdup(name);
    if (!names[n - 1])
        return nomem();
    rec->n_metrics = n;
    *index = n - 1;
    return 0;
}

int tforge_recording_add_entry(tforge_recording *rec, const tforge_recording_entry *entry)
{
    for (uint32_t p = 0; p < rec->n_params; p++)
        if (entry->levels[p] >= rec->params[p].n_values)
            return tforge_error_set(TFORGE_EINPUT, "entry %zu: %s: level %u of %u values",
                                    rec->n_entries, rec->params[p].name,
                                    (unsigned)entry->levels[p], rec->params[p].n_values);
    if ((unsigned)entry->status >= N_STATUSES)
        return tforge_error_set(TFORGE_EINPUT, "entry %zu: unknown status %d", rec->n_entries,
                                (int)entry->status);
    /* What a recording holds, its files can say: every writer's output reads back. */
    if (entry->status == TFORGE_STATUS_OK && !(isfinite(entry->time) && entry->time >= 0))
        return tforge_error_set(TFORGE_EINPUT, "entry %zu: ran correctly but its time is %g, not "
                                "a finite number >= 0", rec->n_entries, entry->time);
    for (uint32_t t = 0; t < entry->n_times; t++)
        if (!(isfinite(entry->times[t]) && entry->times[t] >= 0))
            return tforge_error_set(TFORGE_EINPUT, "entry %zu: times[%u] is %g, not a finite "
                                    "number >= 0", rec->n_entries, t, entry->times[t]);
    if (rec->n_entries == rec->cap_entries) {
        size_t cap = rec->cap_entries ? 2 * rec->cap_entries : 64;
        tforge_recording_entry *entries = realloc(rec->entries, cap * sizeof *entries);
        if (!entries)
            return nomem();
        rec->entries = entries;
        rec->cap_entries = cap;
    }
    tforge_recording_entry copy = *entry;
    copy.levels = malloc((rec->n_params ? rec->n_params : 1) * sizeof *copy.levels);
    copy.times = entry->n_times ? malloc(entry->n_times * sizeof *copy.times) : NULL;
    copy.metrics = rec->n_metrics ? malloc(rec->n_metrics * sizeof *copy.metrics) : NULL;
    copy.timestamp = dup_string(entry->timestamp);
    if (!copy.levels || (entry->n_times && !copy.times) || (rec->n_metrics && !copy.metrics) ||
        (entry->timestamp && !copy.timestamp)) {
        entry_dispose(&copy);
        return nomem();
    }
    memcpy(copy.levels, entry->levels, rec->n_params * sizeof *copy.levels);
    if (entry->n_times)
        memcpy(copy.times, entry->times, entry->n_times * sizeof *copy.times);
    for (uint32_t m = 0; m < rec->n_metrics; m++)
        copy.metrics[m] = entry->metrics ? entry->metrics[m] : NAN;
    rec->entries[rec->n_entries++] = copy;
    return 0;
}
