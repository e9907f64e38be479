#include "replay.h"

#include "knob.h"
#include "tforge/error.h"
#include "tforge/measurement.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tforge_replay {
    const tforge_recording *rec;
    tforge_space *space;
    /* recording level -> space level, per parameter (the space sorts numeric values) */
    tforge_level **level_map;
    size_t *entry_of; /* enumerated space index -> recording entry */
    uint64_t *index_of_entry; /* and back */
    double *spread;   /* per entry: IQR / median of its individual runs, 0 when unknown */
    /* The objective replayed: per entry its value to minimise and its status (an entry without
     * a value of that metric is a failure for it). */
    char objective[128];
    int higher;
    double *value;
    tforge_status *status;
};

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* IQR over median of the individual runs, the noise the search is told about; without four
 * runs, the spread recorded as measured (0 when unknown). */
static double relative_spread(const tforge_recording_entry *e)
{
    if (e->n_times < 4)
        return e->spread;
    double *t = malloc(e->n_times * sizeof *t);
    if (!t)
        return 0.0;
    memcpy(t, e->times, e->n_times * sizeof *t);
    qsort(t, e->n_times, sizeof *t, compare_doubles);
    size_t n = e->n_times;
    double median = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
    double spread = median > 0 ? (t[(3 * n) / 4] - t[n / 4]) / median : 0.0;
    free(t);
    return spread;
}

static int build_space(tforge_replay *r)
{
    const tforge_recording *rec = r->rec;
    int rc = tforge_space_new(&r->space);
    if (rc)
        return rc;
    r->level_map = calloc(rec->n_params, sizeof *r->level_map);
    if (!r->level_map)
        return tforge_error_set(TFORGE_ENOMEM, "out of memory building the replay space");
    for (uint32_t p = 0; p < rec->n_params; p++) {
        const tforge_recording_param *param = &rec->params[p];
        rc = param->all_numeric
                 ? tforge_space_add_values(r->space, param->name, param->numbers, param->n_values)
                 : tforge_space_add_categorical(r->space, param->name,
                                                (const char *const *)param->texts,
                                                param->n_values);
        if (!rc)
            rc = tforge_knob_describe(r->space, p);
        if (rc)
            return rc;
        if (!(r->level_map[p] = malloc(param->n_values * sizeof **r->level_map)))
            return tforge_error_set(TFORGE_ENOMEM, "out of memory building the replay space");
        for (uint32_t l = 0; l < param->n_values; l++) {
            uint32_t found = l;
            if (param->all_numeric)
                for (uint32_t s = 0; s < param->n_values; s++)
                    if (tforge_space_value(r->space, p, s) == param->numbers[l])
                        found = s;
            r->level_map[p][l] = (tforge_level)found;
        }
        if (param->all_numeric) { /* the recording's own texts ("1.0"), so that keys are its own */
            const char **texts = malloc(param->n_values * sizeof *texts);
            if (!texts)
                return tforge_error_set(TFORGE_ENOMEM, "out of memory building the replay space");
            for (uint32_t l = 0; l < param->n_values; l++)
                texts[r->level_map[p][l]] = param->texts[l];
            rc = tforge_space_set_texts(r->space, p, texts);
            free(texts);
            if (rc)
                return rc;
        }
    }
    return 0;
}

int tforge_replay_open(tforge_replay **out, const tforge_recording *rec)
{
    int rc = 0;
    tforge_level *points = NULL;
    tforge_replay *r = calloc(1, sizeof *r);
    if (!r)
        return tforge_error_set(TFORGE_ENOMEM, "out of memory opening a replay");
    r->rec = rec;
    if (rec->n_entries == 0) {
        rc = tforge_error_set(TFORGE_EINPUT, "the recording has no configurations to replay");
        goto cleanup;
    }
    if ((rc = build_space(r)))
        goto cleanup;
    size_t dims = rec->n_params;
    points = malloc(rec->n_entries * dims * sizeof *points);
    if (!points) {
        rc = tforge_error_set(TFORGE_ENOMEM, "out of memory opening a replay");
        goto cleanup;
    }
    for (size_t i = 0; i < rec->n_entries; i++)
        for (size_t d = 0; d < dims; d++)
            points[i * dims + d] = r->level_map[d][rec->entries[i].levels[d]];
    if ((rc = tforge_space_restrict(r->space, points, rec->n_entries)) ||
        (rc = tforge_space_build(r->space, NULL)))
        goto cleanup;
    uint64_t count = tforge_space_count(r->space);
    r->entry_of = malloc(count * sizeof *r->entry_of);
    r->spread = malloc(rec->n_entries * sizeof *r->spread);
    r->index_of_entry = malloc(rec->n_entries * sizeof *r->index_of_entry);
    r->value = malloc(rec->n_entries * sizeof *r->value);
    r->status = malloc(rec->n_entries * sizeof *r->status);
    if (!r->entry_of || !r->spread || !r->index_of_entry || !r->value || !r->status) {
        rc = tforge_error_set(TFORGE_ENOMEM, "out of memory opening a replay");
        goto cleanup;
    }
    for (size_t i = 0; i < rec->n_entries; i++) {
        r->index_of_entry[i] = tforge_space_index_of(r->space, points + i * dims);
        r->entry_of[r->index_of_entry[i]] = i;
        r->spread[i] = relative_spread(&rec->entries[i]);
        r->value[i] = rec->entries[i].time;
        r->status[i] = rec->entries[i].status;
    }
    snprintf(r->objective, sizeof r->objective, "time");
    *out = r;
    r = NULL;
cleanup:
    free(points);
    tforge_replay_free(r);
    return rc;
}

void tforge_replay_free(tforge_replay *r)
{
    if (!r)
        return;
    if (r->level_map)
        for (uint32_t p = 0; p < r->rec->n_params; p++)
            free(r->level_map[p]);
    free(r->level_map);
    free(r->entry_of);
    free(r->index_of_entry);
    free(r->spread);
    free(r->value);
    free(r->status);
    tforge_space_free(r->space);
    free(r);
}

const tforge_space *tforge_replay_space(const tforge_replay *r)
{
    return r->space;
}

const tforge_recording *tforge_replay_recording(const tforge_replay *r)
{
    return r->rec;
}

const tforge_recording_entry *tforge_replay_entry(const tforge_replay *r, uint64_t index)
{
    return &r->rec->entries[r->entry_of[index]];
}

uint64_t tforge_replay_index_of_levels(const tforge_replay *r, const tforge_level *levels)
{
    enum { ON_STACK = 64 };
    tforge_level stack[ON_STACK] = {0};
    uint32_t dims = r->rec->n_params;
    tforge_level *point = dims <= ON_STACK ? stack : malloc(dims * sizeof *point);
    if (!point)
        return TFORGE_NO_INDEX;
    for (uint32_t d = 0; d < dims; d++)
        point[d] = r->level_map[d][levels[d]];
    uint64_t index = tforge_space_index_of(r->space, point);
    if (point != stack)
        free(point);
    return index;
}

/* A recorded field's name as a measurement names it: Kernel Tuner's NVML observer records the
 * joules a launch and the mean power as nvml_energy and nvml_power, which the GPU worker measures
 * as energy_j and power_w; every other name is its own. */
static const char *measured_name(const char *recorded)
{
    static const char *const names[][2] = {{"nvml_energy", "energy_j"}, {"nvml_power", "power_w"}};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(recorded, names[i][0]) == 0)
            return names[i][1];
    return recorded;
}

void tforge_replay_answer(tforge_measurement *out, const tforge_replay *r, uint64_t index,
                          tforge_rng *noise)
{
    size_t i = r->entry_of[index];
    const tforge_recording_entry *e = &r->rec->entries[i];
    out->status = r->status[i];
    out->value = r->value[i];
    out->median_ms = e->time;
    if (noise && out->status == TFORGE_STATUS_OK && e->n_times > 0) /* time objectives only */
        out->value = out->median_ms = e->times[tforge_rng_below(noise, e->n_times)];
    out->spread = r->spread[i];
    out->repeats = e->n_times;
    out->compile_ms = e->compile_time;
    double compile = isnan(e->compile_time) ? 0.0 : e->compile_time;
    double bench = e->benchmark_time;
    if (isnan(bench)) {
        bench = 0.0;
        for (uint32_t k = 0; k < e->n_times; k++)
            bench += e->times[k];
    }
    out->wall_ms = compile + bench;
    /* what else was measured (energy, power, counters), for the objective to score: as many as
     * a measurement holds, in the recording's order, under the names a measurement gives them */
    for (uint32_t m = 0; m < r->rec->n_metrics && out->n_metrics < TFORGE_MEASUREMENT_METRICS; m++)
        if (!isnan(e->metrics[m]) &&
            tforge_measurement_set_metric(out, measured_name(r->rec->metric_names[m]),
                                          e->metrics[m]))
            tforge_error_clear(); /* a name that is not an identifier is simply not a metric */
}

int tforge_recording_describe_space(tforge_recording **out, const tforge_space *space,
                                    const tforge_recording *like, const char *kernel_name)
{
    tforge_recording *rec = NULL;
    uint32_t dims = tforge_space_dims(space);
    int rc = tforge_recording_new(&rec);
    if (!rc)
        rc = tforge_recording_set_info(rec, like ? like->device_name : "", kernel_name,
                                       like ? like->problem_size : NULL,
                                       like ? like->objective : NULL);
    for (uint32_t d = 0; !rc && d < dims; d++) {
        uint32_t n = tforge_space_levels(space, d);
        const char **texts = malloc(n * sizeof *texts);
        double *numbers = malloc(n * sizeof *numbers);
        rc = texts && numbers ? 0 : tforge_error_set(TFORGE_ENOMEM, "out of memory");
        for (uint32_t l = 0; !rc && l < n; l++) {
            texts[l] = tforge_space_text(space, d, l);
            numbers[l] = tforge_space_value(space, d, l);
        }
        if (!rc)
            rc = tforge_recording_add_param(rec, tforge_space_name(space, d), n, texts,
                                            tforge_space_kind(space, d) == TFORGE_DIM_ORDINAL
                                                ? numbers
                                                : NULL);
        free(texts);
        free(numbers);
    }
    if (rc) {
        tforge_recording_free(rec);
        return rc;
    }
    *out = rec;
    return 0;
}

int tforge_replay_objective_higher(const char *name)
{
    static const char *const rates[] = {"/s", "/J", "FLOP", "flop", "ops", "throughput"};
    for (size_t i = 0; i < sizeof rates / sizeof *rates; i++)
        if (strstr(name, rates[i]))
            return 1;
    return 0;
}

int tforge_replay_set_objective(tforge_replay *r, const char *name, int higher)
{
    const tforge_recording *rec = r->rec;
    long metric = -1;
    if (strcmp(name, "time") != 0) {
        for (uint32_t m = 0; m < rec->n_metrics && metric < 0; m++)
            if (strcmp(rec->metric_names[m], name) == 0)
                metric = m;
        if (metric < 0) {
            char known[512] = "time";
            size_t used = strlen(known);
            for (uint32_t m = 0; m < rec->n_metrics && used < sizeof known; m++)
                used += (size_t)snprintf(known + used, sizeof known - used, ", %s",
                                         rec->metric_names[m]);
            return tforge_error_set(TFORGE_EINPUT, "objective %s: the recording has no such "
                                    "metric (it has %s)", name, known);
        }
    }
    if (higher < 0)
        higher = tforge_replay_objective_higher(name);
    for (size_t i = 0; i < rec->n_entries; i++) {
        const tforge_recording_entry *e = &rec->entries[i];
        double v = metric < 0 ? e->time : e->metrics[metric];
        tforge_status st = e->status;
        if (st == TFORGE_STATUS_OK && !isfinite(v))
            st = TFORGE_STATUS_RUNTIME; /* ran, but the objective was not measured */
        if (st == TFORGE_STATUS_OK && higher && !(v > 0)) {
            char *key = NULL;
            tforge_recording_key(&key, rec, e->levels);
            int rc = tforge_error_set(TFORGE_EINPUT, "objective %s: configuration %s has %g; a "
                                      "higher-is-better objective is replayed as its inverse "
                                      "and must be > 0", name, key ? key : "?", v);
            free(key);
            return rc;
        }
        r->status[i] = st;
        r->value[i] = st != TFORGE_STATUS_OK ? NAN : higher ? 1.0 / v : v;
    }
    snprintf(r->objective, sizeof r->objective, "%s", name);
    r->higher = higher;
    return 0;
}

const char *tforge_replay_objective(const tforge_replay *r, int *higher)
{
    if (higher)
        *higher = r->higher;
    return r->objective;
}

double tforge_replay_value(const tforge_replay *r, size_t entry, uint32_t *status)
{
    if (status)
        *status = r->status[entry];
    return r->value[entry];
}
