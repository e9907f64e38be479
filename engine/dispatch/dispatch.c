/* The tuned shapes of one task read, the decision tree fitted to them, its choices checked. */
#include "dispatch.h"

#include "file.h"
#include "recording.h"
#include "tforge/error.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A config unmeasured at a shape counts as this many times the shape's winner: worse than any
 * config measured there that ran, so the leaves prefer configs whose times are known. */
#define UNKNOWN_RATIO 4.0
/* A split must lower the leaves' summed log time over their winners by more than this (1%). */
#define SPLIT_GAIN 0.00995

static char *dup_text(const char *s)
{
    char *d = s ? strdup(s) : NULL;
    if (s && !d)
        tforge_error_set(TFORGE_ENOMEM, "out of memory");
    return d;
}

static int grow(void **items, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t cap2 = *cap ? *cap * 2 : 8;
    while (cap2 < need)
        cap2 *= 2;
    void *p = realloc(*items, cap2 * size);
    if (!p)
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    *items = p;
    *cap = cap2;
    return 0;
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static int parse_file(cJSON **out, const char *path)
{
    char *text = NULL;
    size_t size = 0;
    int rc = tforge_file_read(&text, &size, path);
    if (rc)
        return rc;
    *out = cJSON_ParseWithLength(text, size);
    free(text);
    if (!*out)
        return tforge_error_set(TFORGE_EINPUT, "%s: expected a JSON document", path);
    return 0;
}

static int note(tforge_dispatch_set *set, const char *path, const char *why)
{
    char **p = realloc(set->notes, (set->n_notes + 1) * sizeof *p);
    if (!p)
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    set->notes = p;
    size_t size = strlen(path) + strlen(why) + 3;
    if (!(p[set->n_notes] = malloc(size)))
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    snprintf(p[set->n_notes++], size, "%s: %s", path, why);
    return 0;
}

/* A config as compact JSON with its keys in the set's order (the first winner's, then new ones
 * as met): the same config from a history, a recording or a winner is the same text. */
static char *canonical(tforge_dispatch_set *set, const cJSON *config)
{
    for (const cJSON *v = config->child; v; v = v->next) {
        size_t k = 0;
        while (k < set->n_keys && strcmp(set->key_order[k], v->string) != 0)
            k++;
        if (k < set->n_keys)
            continue;
        char **p = realloc(set->key_order, (set->n_keys + 1) * sizeof *p);
        if (!p || !(p[set->n_keys] = dup_text(v->string))) {
            if (p)
                set->key_order = p;
            tforge_error_set(TFORGE_ENOMEM, "out of memory");
            return NULL;
        }
        set->key_order = p;
        set->n_keys++;
    }
    cJSON *o = cJSON_CreateObject();
    for (size_t k = 0; o && k < set->n_keys; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(config, set->key_order[k]);
        if (v)
            cJSON_AddItemToObject(o, set->key_order[k], cJSON_Duplicate(v, 1));
    }
    char *text = o ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    if (!text)
        tforge_error_set(TFORGE_ENOMEM, "out of memory");
    return text;
}

/* The index of a config, added (every shape's time of it unknown) when new; -1 on error. */
static long config_index(tforge_dispatch_set *set, const cJSON *config)
{
    char *text = canonical(set, config);
    if (!text)
        return -1;
    for (size_t i = 0; i < set->n_configs; i++)
        if (strcmp(set->configs[i], text) == 0) {
            free(text);
            return (long)i;
        }
    if (grow((void **)&set->configs, &set->cap_configs, set->n_configs + 1, sizeof(char *))) {
        free(text);
        return -1;
    }
    /* the time matrix keeps a row a shape, a column a config: widened as configs come */
    if (set->n_configs + 1 > set->cap_ms_configs) {
        size_t cap = set->cap_ms_configs ? set->cap_ms_configs * 2 : 64;
        double *ms = malloc((set->cap_shapes ? set->cap_shapes : 1) * cap * sizeof *ms);
        if (!ms) {
            free(text);
            return tforge_error_set(TFORGE_ENOMEM, "out of memory"), -1;
        }
        for (size_t s = 0; s < set->cap_shapes; s++)
            for (size_t c = 0; c < cap; c++)
                ms[s * cap + c] = c < set->n_configs && s < set->n_shapes
                                      ? set->ms[s * set->cap_ms_configs + c]
                                      : NAN;
        free(set->ms);
        set->ms = ms;
        set->cap_ms_configs = cap;
    }
    unsigned char *launchable = realloc(set->launchable, set->cap_configs);
    if (!launchable) {
        free(text);
        return tforge_error_set(TFORGE_ENOMEM, "out of memory"), -1;
    }
    set->launchable = launchable;
    launchable[set->n_configs] = 0;
    set->configs[set->n_configs] = text;
    return (long)set->n_configs++;
}

static double *time_at(const tforge_dispatch_set *set, size_t shape, size_t config)
{
    return &set->ms[shape * set->cap_ms_configs + config];
}

double tforge_dispatch_ms(const tforge_dispatch_set *set, size_t shape, size_t config)
{
    return *time_at(set, shape, config);
}

/* A new shape row, its times unknown. */
static tforge_dispatch_shape *add_shape(tforge_dispatch_set *set)
{
    if (set->n_shapes == set->cap_shapes) {
        size_t cap = set->cap_shapes ? set->cap_shapes * 2 : 8;
        tforge_dispatch_shape *p = realloc(set->shapes, cap * sizeof *p);
        double *ms = malloc(cap * (set->cap_ms_configs ? set->cap_ms_configs : 1) * sizeof *ms);
        if (p)
            set->shapes = p;
        if (!p || !ms) {
            free(ms);
            tforge_error_set(TFORGE_ENOMEM, "out of memory");
            return NULL;
        }
        for (size_t i = 0; i < cap * set->cap_ms_configs; i++)
            ms[i] = i < set->n_shapes * set->cap_ms_configs ? set->ms[i] : NAN;
        free(set->ms);
        set->ms = ms;
        set->cap_shapes = cap;
    }
    tforge_dispatch_shape *s = &set->shapes[set->n_shapes++];
    *s = (tforge_dispatch_shape){0};
    return s;
}

/* A time measured for a config at a shape: the fastest kept where several measured it (a
 * history and a recording), a failure only where nothing ran. */
static void record_time(tforge_dispatch_set *set, size_t shape, size_t config, double ms)
{
    double *t = time_at(set, shape, config);
    if (isnan(*t) || ms < *t)
        *t = ms;
}

/* The shape's symbols and sizes into the set's order (the first shape read sets it). */
static int read_values(tforge_dispatch_set *set, tforge_dispatch_shape *s, const cJSON *values,
                       const char *path, const char *field)
{
    if (!cJSON_IsObject(values) || !values->child)
        return tforge_error_set(TFORGE_EINPUT, "%s: %s: expected the tuned shape's sizes "
                                "({\"M\": 4096, ...})", path, field);
    size_t n = (size_t)cJSON_GetArraySize(values);
    if (!set->symbols) {
        if (!(set->symbols = calloc(n, sizeof *set->symbols)))
            return tforge_error_set(TFORGE_ENOMEM, "out of memory");
        size_t k = 0;
        for (const cJSON *v = values->child; v; v = v->next)
            if (!(set->symbols[k++] = dup_text(v->string)))
                return TFORGE_ENOMEM;
        set->n_symbols = n;
    }
    if (!(s->values = calloc(set->n_symbols, sizeof *s->values)))
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    for (size_t k = 0; k < set->n_symbols; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(values, set->symbols[k]);
        if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < 0)
            return tforge_error_set(TFORGE_EINPUT, "%s: %s.%s: expected the size of the shape "
                                    "symbol %s (the other results have it), got %s", path, field,
                                    set->symbols[k], set->symbols[k], v ? "a non-integer" : "none");
        s->values[k] = (long long)v->valuedouble;
    }
    if (n != set->n_symbols)
        return tforge_error_set(TFORGE_EINPUT, "%s: %s: expected the symbols of the other results "
                                "(%zu), got %zu", path, field, set->n_symbols, n);
    return 0;
}

/* The configs a recording measured at this shape: the replayed space's every time. */
static int read_recording(tforge_dispatch_set *set, size_t shape, const char *file,
                          const char *path, int launchable)
{
    tforge_recording *rec = NULL;
    int rc = tforge_recording_read(&rec, file);
    if (rc) {
        char why[1200];
        snprintf(why, sizeof why, "recording: %s; its times are not used",
                 tforge_error_last()->message);
        tforge_recording_free(rec);
        return note(set, path, why);
    }
    if (strcmp(rec->objective, "time") != 0) {
        tforge_recording_free(rec);
        return note(set, path, "recording: its objective is not time; not used");
    }
    for (size_t e = 0; !rc && e < rec->n_entries; e++) {
        const tforge_recording_entry *entry = &rec->entries[e];
        char *json = NULL;
        if ((rc = tforge_recording_config_json(&json, rec, entry->levels)))
            break;
        cJSON *config = cJSON_Parse(json);
        free(json);
        long c = config ? config_index(set, config) : -1;
        cJSON_Delete(config);
        if (c < 0) {
            rc = TFORGE_ENOMEM;
            break;
        }
        set->launchable[c] |= launchable;
        record_time(set, shape, (size_t)c,
                    entry->status == TFORGE_STATUS_OK && isfinite(entry->time) ? entry->time
                                                                                : INFINITY);
    }
    tforge_recording_free(rec);
    return rc;
}

/* One result.json: its task, shape, winner and every time it holds. `listed` gives the shape
 * (index and sizes) where the results folder lists it and result.json does not. */
static int read_result(tforge_dispatch_set *set, const char *path, const cJSON *listed_values,
                       long listed_index, const char *task_filter)
{
    cJSON *doc = NULL;
    int rc = parse_file(&doc, path);
    if (rc)
        return rc;
    const cJSON *task = cJSON_GetObjectItemCaseSensitive(doc, "task");
    const cJSON *kernel = cJSON_GetObjectItemCaseSensitive(doc, "kernel");
    const cJSON *best = cJSON_GetObjectItemCaseSensitive(doc, "best");
    const cJSON *config = cJSON_GetObjectItemCaseSensitive(best, "config");
    const cJSON *ms = cJSON_GetObjectItemCaseSensitive(best, "ms");
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(doc, "shape");
    const cJSON *index = cJSON_GetObjectItemCaseSensitive(shape, "index");
    const cJSON *values = cJSON_GetObjectItemCaseSensitive(shape, "values");
    if (!cJSON_IsString(task) || !cJSON_IsString(kernel)) {
        rc = tforge_error_set(TFORGE_EINPUT, "%s: %s: expected the task's path (a tforge tune "
                              "result.json)", path, cJSON_IsString(task) ? "kernel" : "task");
        goto cleanup;
    }
    if (task_filter && !strstr(task->valuestring, task_filter))
        goto cleanup;
    if (!set->task) {
        if (!(set->task = dup_text(task->valuestring)) ||
            !(set->kernel = dup_text(kernel->valuestring))) {
            rc = TFORGE_ENOMEM;
            goto cleanup;
        }
    } else if (strcmp(set->task, task->valuestring) != 0) {
        rc = tforge_error_set(TFORGE_EINPUT, "%s: task: expected the task of the other results "
                              "(%s), got %s (one dispatch a task: --task NAME picks one)", path,
                              set->task, task->valuestring);
        goto cleanup;
    }
    if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(doc, "timed"))) {
        rc = note(set, path, "not timed (the interpreter)");
        goto cleanup;
    }
    if (!cJSON_IsObject(config) || !cJSON_IsNumber(ms)) {
        rc = note(set, path, "best: no winner was timed");
        goto cleanup;
    }
    if (!values && !listed_values) {
        rc = tforge_error_set(TFORGE_EINPUT, "%s: shape: expected the tuned shape ({\"index\": "
                              "I, \"values\": {...}}, written by tforge tune) or a results folder "
                              "that lists it", path);
        goto cleanup;
    }
    tforge_dispatch_shape *s = add_shape(set);
    if (!s || !(s->result = dup_text(path))) {
        rc = TFORGE_ENOMEM;
        goto cleanup;
    }
    size_t row = set->n_shapes - 1;
    s->index = cJSON_IsNumber(index) ? (size_t)index->valuedouble : (size_t)listed_index;
    if ((rc = read_values(set, s, values ? values : listed_values, path,
                          values ? "shape.values" : "shape")))
        goto cleanup;
    for (size_t i = 0; i < row; i++)
        if (set->shapes[i].index == s->index) {
            rc = tforge_error_set(TFORGE_EINPUT, "%s: shape.index: shape %zu of the task is "
                                  "also in %s", path, s->index, set->shapes[i].result);
            goto cleanup;
        }
    long w = config_index(set, config);
    if (w < 0) {
        rc = TFORGE_ENOMEM;
        goto cleanup;
    }
    s = &set->shapes[row];
    s->winner = (size_t)w;
    set->launchable[w] = 1;
    /* a config of a run whose transforms applied may rewrite the source, and only a winner's
     * rewritten file is kept (best_variant.py): the others are times, not choices */
    const cJSON *applied = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(doc, "transforms"), "apply");
    int rewrites_source = cJSON_GetArraySize(applied) > 0;
    s->winner_ms = ms->valuedouble;
    const cJSON *history = cJSON_GetObjectItemCaseSensitive(doc, "history");
    for (const cJSON *e = history ? history->child : NULL; e; e = e->next) {
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(e, "config");
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(e, "ms");
        const cJSON *status = cJSON_GetObjectItemCaseSensitive(e, "status");
        if (!cJSON_IsObject(c))
            continue;
        long k = config_index(set, c);
        if (k < 0) {
            rc = TFORGE_ENOMEM;
            goto cleanup;
        }
        int ok = cJSON_IsString(status) && strcmp(status->valuestring, "ok") == 0;
        set->launchable[k] |= !rewrites_source;
        record_time(set, row, (size_t)k, ok && cJSON_IsNumber(t) ? t->valuedouble : INFINITY);
    }
    record_time(set, row, (size_t)w, ms->valuedouble);
    const cJSON *recording = cJSON_GetObjectItemCaseSensitive(doc, "recording");
    if (cJSON_IsString(recording) &&
        (rc = read_recording(set, row, recording->valuestring, path, !rewrites_source)))
        goto cleanup;
    /* the winner rewrites the kernel's source: its best_variant.py is what launches it */
    const cJSON *rewrites = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(doc, "transforms"), "winner");
    if (cJSON_IsString(rewrites) && rewrites->valuestring[0]) {
        size_t size = strlen(path) + 32;
        char *variant = malloc(size);
        if (!variant) {
            rc = tforge_error_set(TFORGE_ENOMEM, "out of memory");
            goto cleanup;
        }
        snprintf(variant, size, "%s", path);
        char *slash = strrchr(variant, '/');
        snprintf(slash ? slash + 1 : variant, size - (size_t)(slash ? slash + 1 - variant : 0),
                 "best_variant.py");
        set->shapes[row].variant = variant;
        if (!exists(variant))
            rc = tforge_error_set(TFORGE_EINPUT, "%s: transforms.winner: the winner rewrites the "
                                  "source, but %s is not there", path, variant);
    }
cleanup:
    cJSON_Delete(doc);
    return rc;
}

/* A results folder: a sweep's (sweep.json lists its results), tune --shape all's (summary.json
 * and shape-<i>/), or one tune's (result.json). */
static int read_dir(tforge_dispatch_set *set, const char *dir, const char *task_filter)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/sweep.json", dir);
    if (exists(path)) {
        cJSON *doc = NULL;
        int rc = parse_file(&doc, path);
        const cJSON *entries = cJSON_IsArray(doc) ? doc
                               : cJSON_GetObjectItemCaseSensitive(doc, "entries");
        if (!rc && !cJSON_IsArray(entries))
            rc = tforge_error_set(TFORGE_EINPUT, "%s: entries: expected the list of the sweep's "
                                  "(task, shape) results", path);
        size_t at = 0;
        for (const cJSON *e = entries ? entries->child : NULL; !rc && e; e = e->next, at++) {
            const cJSON *result = cJSON_GetObjectItemCaseSensitive(e, "result");
            if (!cJSON_IsString(result)) {
                rc = tforge_error_set(TFORGE_EINPUT, "%s: entries[%zu].result: expected the "
                                      "path of its result.json", path, at);
                break;
            }
            char file[4200];
            snprintf(file, sizeof file, "%s%s%s", result->valuestring[0] == '/' ? "" : dir,
                     result->valuestring[0] == '/' ? "" : "/", result->valuestring);
            if (!exists(file)) {
                rc = note(set, file, "listed by sweep.json, not there (not finished)");
                continue;
            }
            const cJSON *shape = cJSON_GetObjectItemCaseSensitive(e, "shape");
            rc = read_result(set, file, cJSON_GetObjectItemCaseSensitive(e, "values"),
                             cJSON_IsNumber(shape) ? (long)shape->valuedouble : -1, task_filter);
        }
        cJSON_Delete(doc);
        return rc;
    }
    snprintf(path, sizeof path, "%s/summary.json", dir);
    if (exists(path)) {
        cJSON *doc = NULL;
        int rc = parse_file(&doc, path);
        const cJSON *shapes = cJSON_GetObjectItemCaseSensitive(doc, "shapes");
        if (!rc && !cJSON_IsArray(shapes))
            rc = tforge_error_set(TFORGE_EINPUT, "%s: shapes: expected the list of tuned shapes",
                                  path);
        long i = 0;
        for (const cJSON *e = shapes ? shapes->child : NULL; !rc && e; e = e->next, i++) {
            char file[4200];
            snprintf(file, sizeof file, "%s/shape-%ld/result.json", dir, i);
            if (!exists(file)) {
                rc = note(set, file, "not there");
                continue;
            }
            rc = read_result(set, file, cJSON_GetObjectItemCaseSensitive(e, "shape"), i,
                             task_filter);
        }
        cJSON_Delete(doc);
        return rc;
    }
    snprintf(path, sizeof path, "%s/result.json", dir);
    if (exists(path))
        return read_result(set, path, NULL, -1, task_filter);
    return tforge_error_set(TFORGE_EINPUT, "%s: expected a results folder (sweep.json, "
                            "summary.json or result.json in it)", dir);
}

int tforge_dispatch_read(tforge_dispatch_set **out, const char *const *paths, size_t n,
                         const char *task_filter)
{
    tforge_dispatch_set *set = calloc(1, sizeof *set);
    if (!set)
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    int rc = 0;
    for (size_t i = 0; !rc && i < n; i++)
        rc = is_dir(paths[i]) ? read_dir(set, paths[i], task_filter)
                              : read_result(set, paths[i], NULL, -1, task_filter);
    if (!rc && !set->n_shapes)
        rc = tforge_error_set(TFORGE_EINPUT, "%s%s: no timed result of a tuned shape%s%s",
                              n ? paths[0] : "(no path)", n > 1 ? " ..." : "",
                              task_filter ? " of a task matching " : "",
                              task_filter ? task_filter : "");
    if (rc) {
        tforge_dispatch_free(set);
        return rc;
    }
    *out = set;
    return 0;
}

void tforge_dispatch_free(tforge_dispatch_set *set)
{
    if (!set)
        return;
    for (size_t i = 0; i < set->n_shapes; i++) {
        free(set->shapes[i].result);
        free(set->shapes[i].values);
        free(set->shapes[i].variant);
    }
    for (size_t i = 0; i < set->n_symbols; i++)
        free(set->symbols[i]);
    for (size_t i = 0; i < set->n_configs; i++)
        free(set->configs[i]);
    for (size_t i = 0; i < set->n_keys; i++)
        free(set->key_order[i]);
    for (size_t i = 0; i < set->n_notes; i++)
        free(set->notes[i]);
    free(set->notes);
    free(set->key_order);
    free(set->configs);
    free(set->launchable);
    free(set->symbols);
    free(set->shapes);
    free(set->ms);
    free(set->nodes);
    free(set->task);
    free(set->kernel);
    free(set);
}

static int by_index(const void *a, const void *b)
{
    const tforge_dispatch_shape *x = *(tforge_dispatch_shape *const *)a;
    const tforge_dispatch_shape *y = *(tforge_dispatch_shape *const *)b;
    return (x->index > y->index) - (x->index < y->index);
}

int tforge_dispatch_hold_out(tforge_dispatch_set *set, const size_t *indices, size_t n_indices,
                             size_t k)
{
    for (size_t i = 0; i < n_indices; i++) {
        size_t s = 0;
        while (s < set->n_shapes && set->shapes[s].index != indices[i])
            s++;
        if (s == set->n_shapes)
            return tforge_error_set(TFORGE_EINPUT, "--holdout-shapes: shape %zu of %s is not "
                                    "among the timed results read", indices[i], set->task);
        set->shapes[s].held_out = 1;
    }
    if (!n_indices && k) {
        if (k >= set->n_shapes)
            return tforge_error_set(TFORGE_EINPUT, "--holdout %zu: expected fewer than the %zu "
                                    "shapes read (the fit needs one at least)", k, set->n_shapes);
        /* spread over the middle, in index order: a shape between fitted ones, not past them */
        tforge_dispatch_shape **order = malloc(set->n_shapes * sizeof *order);
        if (!order)
            return tforge_error_set(TFORGE_ENOMEM, "out of memory");
        for (size_t s = 0; s < set->n_shapes; s++)
            order[s] = &set->shapes[s];
        qsort(order, set->n_shapes, sizeof *order, by_index);
        for (size_t j = 0; j < k; j++)
            order[(j + 1) * set->n_shapes / (k + 1)]->held_out = 1;
        free(order);
    }
    size_t fitted = 0;
    for (size_t s = 0; s < set->n_shapes; s++)
        fitted += !set->shapes[s].held_out;
    if (!fitted)
        return tforge_error_set(TFORGE_EINPUT, "--holdout-shapes: every shape read is held out; "
                                "the fit needs one at least");
    return 0;
}

/* log(time / winner) of a config at a shape: what a leaf sums. */
static double log_ratio(const tforge_dispatch_set *set, size_t s, size_t c)
{
    double t = *time_at(set, s, c);
    if (isnan(t))
        return log(UNKNOWN_RATIO);
    return isinf(t) ? INFINITY : log(t / set->shapes[s].winner_ms);
}

/* The config best across `shapes` (the least summed log ratio; the first of equals, winners
 * having come first) and that sum. */
static size_t best_config(const tforge_dispatch_set *set, const size_t *shapes, size_t n,
                          double *cost)
{
    size_t best = set->shapes[shapes[0]].winner;
    double best_cost = INFINITY;
    for (size_t c = 0; c < set->n_configs; c++) {
        if (!set->launchable[c])
            continue;
        double sum = 0;
        for (size_t i = 0; i < n && sum < best_cost; i++)
            sum += log_ratio(set, shapes[i], c);
        if (sum < best_cost - 1e-12) {
            best_cost = sum;
            best = c;
        }
    }
    *cost = best_cost;
    return best;
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

/* Grows the tree at `shapes`: a leaf, or the split over one symbol that lowers the summed log
 * ratio most (at the geometric middle of two neighbouring sizes), then both sides. Returns the
 * node's index, or -1 out of memory. */
static long grow_node(tforge_dispatch_set *set, size_t *shapes, size_t n, size_t depth,
                      size_t max_depth, size_t *scratch, long long *sizes)
{
    double cost;
    size_t config = best_config(set, shapes, n, &cost);
    int best_symbol = -1;
    long long best_threshold = 0;
    double best_cost = cost - SPLIT_GAIN;
    for (size_t k = 0; depth < max_depth && k < set->n_symbols; k++) {
        for (size_t i = 0; i < n; i++)
            sizes[i] = set->shapes[shapes[i]].values[k];
        qsort(sizes, n, sizeof *sizes, cmp_ll);
        for (size_t i = 0; i + 1 < n; i++) {
            if (sizes[i] == sizes[i + 1])
                continue;
            long long t = (long long)floor(sqrt((double)sizes[i] * (double)sizes[i + 1]));
            if (t < sizes[i] || t >= sizes[i + 1])
                t = sizes[i];
            size_t nl = 0, nr = n;
            for (size_t j = 0; j < n; j++)
                if (set->shapes[shapes[j]].values[k] <= t)
                    scratch[nl++] = shapes[j];
                else
                    scratch[--nr] = shapes[j];
            double cl, cr;
            best_config(set, scratch, nl, &cl);
            best_config(set, scratch + nl, n - nl, &cr);
            if (cl + cr < best_cost) {
                best_cost = cl + cr;
                best_symbol = (int)k;
                best_threshold = t;
            }
        }
    }
    size_t at = set->n_nodes++;
    set->nodes[at] = (tforge_dispatch_node){.symbol = best_symbol, .threshold = best_threshold,
                                            .config = config, .n_shapes = n};
    if (best_symbol < 0) {
        double worst = 0;
        for (size_t i = 0; i < n; i++)
            worst = fmax(worst, exp(log_ratio(set, shapes[i], config)));
        set->nodes[at].worst = worst;
        return (long)at;
    }
    /* the shapes reordered in place: the left side first */
    size_t nl = 0;
    for (size_t j = 0; j < n; j++)
        if (set->shapes[shapes[j]].values[best_symbol] <= best_threshold)
            scratch[nl++] = shapes[j];
    size_t nr = nl;
    for (size_t j = 0; j < n; j++)
        if (set->shapes[shapes[j]].values[best_symbol] > best_threshold)
            scratch[nr++] = shapes[j];
    memcpy(shapes, scratch, n * sizeof *shapes);
    long left = grow_node(set, shapes, nl, depth + 1, max_depth, scratch, sizes);
    long right = left < 0 ? -1
                          : grow_node(set, shapes + nl, n - nl, depth + 1, max_depth, scratch,
                                      sizes);
    if (right < 0)
        return -1;
    set->nodes[at].left = (size_t)left;
    set->nodes[at].right = (size_t)right;
    return (long)at;
}

int tforge_dispatch_fit(tforge_dispatch_set *set, size_t max_depth)
{
    free(set->nodes);
    set->nodes = NULL;
    set->n_nodes = 0;
    size_t *shapes = malloc(set->n_shapes * sizeof *shapes);
    size_t *scratch = malloc(set->n_shapes * sizeof *scratch);
    long long *sizes = malloc(set->n_shapes * sizeof *sizes);
    size_t n = 0;
    for (size_t s = 0; shapes && s < set->n_shapes; s++)
        if (!set->shapes[s].held_out)
            shapes[n++] = s;
    /* nodes are few (a leaf a fitted shape at most): reserved once, so indices stay put */
    set->nodes = calloc(2 * n + 1, sizeof *set->nodes);
    int rc = shapes && scratch && sizes && set->nodes &&
                     grow_node(set, shapes, n, 0, max_depth, scratch, sizes) >= 0
                 ? 0
                 : tforge_error_set(TFORGE_ENOMEM, "out of memory");
    free(shapes);
    free(scratch);
    free(sizes);
    return rc;
}

size_t tforge_dispatch_choose(const tforge_dispatch_set *set, const long long *values)
{
    size_t at = 0;
    while (set->nodes[at].symbol >= 0)
        at = values[set->nodes[at].symbol] <= set->nodes[at].threshold ? set->nodes[at].left
                                                                       : set->nodes[at].right;
    return set->nodes[at].config;
}

char *tforge_dispatch_table(const tforge_dispatch_set *set, double *worst_held_out)
{
    size_t longest = 0;
    for (size_t c = 0; c < set->n_configs; c++)
        longest = strlen(set->configs[c]) > longest ? strlen(set->configs[c]) : longest;
    size_t cap = 512 + set->n_shapes * (1200 + longest), used = 0;
    char *text = malloc(cap);
    if (!text)
        return NULL;
    *worst_held_out = NAN;
    used += (size_t)snprintf(text + used, cap - used,
                             "| shape | sizes | use | choice | choice ms | own winner ms | "
                             "ratio |\n|---|---|---|---|---|---|---|\n");
    for (int pass = 1; pass >= 0; pass--) /* the held-out shapes first: they are the test */
        for (size_t s = 0; s < set->n_shapes; s++) {
            const tforge_dispatch_shape *x = &set->shapes[s];
            if (x->held_out != pass)
                continue;
            char sizes[1024];
            size_t n = 0;
            for (size_t k = 0; k < set->n_symbols && n < sizeof sizes; k++)
                n += (size_t)snprintf(sizes + n, sizeof sizes - n, "%s%s=%lld", k ? " " : "",
                                      set->symbols[k], x->values[k]);
            size_t c = tforge_dispatch_choose(set, x->values);
            double t = *time_at(set, s, c), ratio = t / x->winner_ms;
            if (pass) /* a choice never measured there cannot pass */
                *worst_held_out = !isfinite(t)             ? INFINITY
                                  : isnan(*worst_held_out) ? ratio
                                                           : fmax(*worst_held_out, ratio);
            char ms[32] = "not measured", r[32] = "-";
            if (isinf(t))
                snprintf(ms, sizeof ms, "failed");
            else if (!isnan(t))
                snprintf(ms, sizeof ms, "%.4g", t), snprintf(r, sizeof r, "%.3fx", ratio);
            used += (size_t)snprintf(text + used, cap - used, "| %zu | %s | %s | `%s` | %s | "
                                     "%.4g | %s |\n", x->index, sizes,
                                     pass ? "held out" : "fitted", set->configs[c], ms,
                                     x->winner_ms, r);
        }
    return text;
}
