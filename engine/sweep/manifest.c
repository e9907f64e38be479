#include "manifest.h"

#include "file.h"
#include "tforge/error.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The settings an entry of "tasks" or "defaults" may hold. */
static const char *const settings_keys[] = {"budget", "time", "strategy", "options", "backend",
                                            "seed", "batch", "transforms", "patience",
                                            "compile_workers", "timeout", "simulate", NULL};

static char *copy(const char *text)
{
    return text ? strdup(text) : NULL;
}

/* `text` as a path read from the manifest: relative ones are taken from its folder. */
static char *resolve(const char *manifest, const char *text)
{
    const char *slash = strrchr(manifest, '/');
    if (text[0] == '/' || !slash)
        return copy(text);
    size_t dir = (size_t)(slash - manifest) + 1, size = dir + strlen(text) + 1;
    char *path = malloc(size);
    if (path)
        snprintf(path, size, "%.*s%s", (int)dir, manifest, text);
    return path;
}

static int bad(const char *path, const char *field, const char *expected)
{
    return tforge_error_set(TFORGE_EINPUT, "%s: %s: expected %s", path, field, expected);
}

static int known(const cJSON *object, const char *const *keys, const char *const *more,
                 const char *path, const char *where)
{
    for (const cJSON *item = object->child; item; item = item->next) {
        int found = 0;
        for (size_t i = 0; keys[i] && !found; i++)
            found = strcmp(item->string, keys[i]) == 0;
        for (size_t i = 0; more && more[i] && !found; i++)
            found = strcmp(item->string, more[i]) == 0;
        if (!found)
            return tforge_error_set(TFORGE_EINPUT, "%s: %s%s%s: unknown field (expected budget, "
                                    "time, strategy, options, backend, seed, batch, transforms, "
                                    "patience, compile_workers, timeout, simulate%s)", path,
                                    where, where[0] ? "." : "", item->string,
                                    more ? ", task, name, shapes, dtypes" : "");
    }
    return 0;
}

static int whole(uint64_t *out, const cJSON *v, double least, const char *path,
                 const char *field)
{
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < least ||
        v->valuedouble > 4294967295.0) {
        char expected[64];
        snprintf(expected, sizeof expected, "a whole number >= %.0f", least);
        return bad(path, field, expected);
    }
    *out = (uint64_t)v->valuedouble;
    return 0;
}

/* Applies the settings of `o` (an entry's or the defaults') to `e`. */
static int apply(tforge_sweep_entry *e, const cJSON *o, const char *path, const char *where)
{
    char field[160];
    int rc = 0;
    for (size_t k = 0; !rc && settings_keys[k]; k++) {
        const char *key = settings_keys[k];
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
        if (!v)
            continue;
        snprintf(field, sizeof field, "%s%s%s", where, where[0] ? "." : "", key);
        uint64_t n = 0;
        if (!strcmp(key, "budget") || !strcmp(key, "batch") || !strcmp(key, "compile_workers")) {
            rc = whole(&n, v, 1, path, field);
            *(!strcmp(key, "budget") ? &e->budget : !strcmp(key, "batch") ? &e->batch
                                                                           : &e->compile_workers) =
                (uint32_t)n;
        } else if (!strcmp(key, "patience") || !strcmp(key, "timeout") || !strcmp(key, "seed")) {
            rc = whole(&n, v, 0, path, field);
            if (!strcmp(key, "seed"))
                e->seed = n;
            else
                *(!strcmp(key, "patience") ? &e->patience : &e->timeout_s) = (uint32_t)n;
        } else if (!strcmp(key, "time") || !strcmp(key, "simulate")) {
            if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0) || isinf(v->valuedouble))
                rc = bad(path, field, "a number of seconds >= 0");
            else
                *(!strcmp(key, "time") ? &e->time_s : &e->simulate) = v->valuedouble;
        } else if (!strcmp(key, "options")) {
            int size = cJSON_GetArraySize(v);
            if (!cJSON_IsArray(v) || size > 64)
                rc = bad(path, field, "a list of at most 64 \"KEY=VALUE\" texts");
            char **list = rc ? NULL : calloc((size_t)size + 1, sizeof *list);
            if (!rc && !list)
                rc = tforge_error_set(TFORGE_ENOMEM, "out of memory");
            for (int i = 0; !rc && i < size; i++) {
                const cJSON *item = cJSON_GetArrayItem(v, i);
                if (!cJSON_IsString(item) || !strchr(item->valuestring, '=') ||
                    item->valuestring[0] == '=')
                    rc = bad(path, field, "a list of \"KEY=VALUE\" texts");
                else if (!(list[i] = strdup(item->valuestring)))
                    rc = tforge_error_set(TFORGE_ENOMEM, "out of memory");
            }
            for (size_t i = 0; e->options && e->options[i]; i++)
                free(e->options[i]);
            free(e->options);
            e->options = list;
        } else { /* strategy, backend, transforms: texts */
            if (!cJSON_IsString(v) || !v->valuestring[0])
                rc = bad(path, field, !strcmp(key, "backend")
                                          ? "cuda, interpret, compile or replay:FILE"
                                          : "a text");
            else if (!strcmp(key, "backend") && strcmp(v->valuestring, "cuda") &&
                     strcmp(v->valuestring, "interpret") && strcmp(v->valuestring, "compile") &&
                     (strncmp(v->valuestring, "replay:", 7) || !v->valuestring[7]))
                rc = bad(path, field, "cuda, interpret, compile or replay:FILE");
            char **slot = !strcmp(key, "strategy") ? &e->strategy
                          : !strcmp(key, "backend") ? &e->backend
                                                    : &e->transforms;
            if (!rc) {
                free(*slot);
                if (!strcmp(key, "backend") && !strncmp(v->valuestring, "replay:", 7)) {
                    char *file = resolve(path, v->valuestring + 7);
                    size_t size = file ? strlen(file) + 8 : 0;
                    *slot = file ? malloc(size) : NULL;
                    if (*slot)
                        snprintf(*slot, size, "replay:%s", file);
                    free(file);
                } else {
                    *slot = strdup(v->valuestring);
                }
                if (!*slot)
                    rc = tforge_error_set(TFORGE_ENOMEM, "out of memory");
            }
        }
    }
    return rc;
}

static void entry_dispose(tforge_sweep_entry *e)
{
    free(e->name);
    free(e->dtype);
    free(e->task);
    free(e->backend);
    free(e->strategy);
    free(e->transforms);
    for (size_t i = 0; e->options && e->options[i]; i++)
        free(e->options[i]);
    free(e->options);
    memset(e, 0, sizeof *e);
}

/* A copy of `from` (the defaults) to be completed by an entry's own settings. */
static int entry_copy(tforge_sweep_entry *to, const tforge_sweep_entry *from)
{
    *to = *from;
    to->name = to->task = to->dtype = NULL;
    to->backend = copy(from->backend);
    to->strategy = copy(from->strategy);
    to->transforms = copy(from->transforms);
    size_t n = 0;
    while (from->options && from->options[n])
        n++;
    to->options = calloc(n + 1, sizeof *to->options);
    int ok = to->options && (!from->backend || to->backend) && (!from->strategy || to->strategy) &&
             (!from->transforms || to->transforms);
    for (size_t i = 0; ok && i < n; i++)
        ok = (to->options[i] = strdup(from->options[i])) != NULL;
    return ok ? 0 : tforge_error_set(TFORGE_ENOMEM, "out of memory");
}

/* The task's name when the entry gives none: its file's folder ("task" when it has none). */
static char *name_of(const char *task)
{
    const char *end = strrchr(task, '/'), *start = end;
    while (start && start > task && start[-1] != '/')
        start--;
    if (!end || end == start)
        return strdup("task");
    return strndup(start, (size_t)(end - start));
}

static int add_entry(tforge_sweep_manifest *m, const tforge_sweep_entry *e)
{
    tforge_sweep_entry *grown = realloc(m->entries, (m->n + 1) * sizeof *grown);
    if (!grown)
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    m->entries = grown;
    m->entries[m->n++] = *e;
    return 0;
}

static int same_dtype(const char *a, const char *b)
{
    return a && b ? strcmp(a, b) == 0 : a == b;
}

/* The entry's "dtypes" (NULL: none given), each checked against the task file's own `dtypes`,
 * read here so that a sweep is refused before any tune starts (the worker checks the rest). */
static int read_dtypes(const char *path, const char *where, const cJSON *dtypes,
                       const char *task)
{
    char field[192];
    snprintf(field, sizeof field, "%s.dtypes", where);
    if (!dtypes)
        return 0;
    if (!cJSON_IsArray(dtypes) || cJSON_GetArraySize(dtypes) == 0)
        return bad(path, field, "a list of the task's dtypes ([\"float16\", \"bfloat16\"])");
    char *text = NULL;
    size_t size = 0;
    if (tforge_file_read(&text, &size, task))
        return tforge_error_set(TFORGE_EINPUT, "%s: %s: cannot read the task file %s to check "
                                "its dtypes", path, field, task);
    cJSON *doc = cJSON_Parse(text);
    free(text);
    const cJSON *allowed = cJSON_GetObjectItemCaseSensitive(doc, "dtypes");
    char listed[512] = "";
    for (const cJSON *a = cJSON_IsArray(allowed) ? allowed->child : NULL; a; a = a->next)
        if (cJSON_IsString(a))
            snprintf(listed + strlen(listed), sizeof listed - strlen(listed), "%s%s",
                     listed[0] ? ", " : "", a->valuestring);
    int rc = 0;
    for (int i = 0; !rc && i < cJSON_GetArraySize(dtypes); i++) {
        const cJSON *d = cJSON_GetArrayItem(dtypes, i);
        int found = 0;
        for (const cJSON *a = cJSON_IsArray(allowed) ? allowed->child : NULL; a && !found;
             a = a->next)
            found = cJSON_IsString(a) && cJSON_IsString(d) &&
                    strcmp(a->valuestring, d->valuestring) == 0;
        for (int j = 0; !rc && found && j < i; j++)
            found = strcmp(cJSON_GetArrayItem(dtypes, j)->valuestring, d->valuestring) != 0;
        snprintf(field, sizeof field, "%s.dtypes[%d]", where, i);
        if (!found && !listed[0])
            rc = tforge_error_set(TFORGE_EINPUT, "%s: %s: expected no dtypes: %s declares none "
                                  "(its inputs keep their own)", path, field, task);
        else if (!found)
            rc = tforge_error_set(TFORGE_EINPUT, "%s: %s: expected one of %s's dtypes (%s), "
                                  "not listed before, got %s", path, field, task, listed,
                                  cJSON_IsString(d) ? d->valuestring : "a value that is no text");
    }
    cJSON_Delete(doc);
    return rc;
}

static int read_task(tforge_sweep_manifest *m, const tforge_sweep_entry *defaults,
                     const cJSON *t, size_t index)
{
    static const char *const own[] = {"task", "name", "shapes", "dtypes", NULL};
    char where[64], field[160];
    snprintf(where, sizeof where, "tasks[%zu]", index);
    const char *path = m->path;
    if (!cJSON_IsObject(t))
        return bad(path, where, "an object with task, shapes and its settings");
    int rc = known(t, settings_keys, own, path, where);
    const cJSON *task = cJSON_GetObjectItemCaseSensitive(t, "task");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(t, "name");
    const cJSON *shapes = cJSON_GetObjectItemCaseSensitive(t, "shapes");
    const cJSON *dtypes = cJSON_GetObjectItemCaseSensitive(t, "dtypes");
    snprintf(field, sizeof field, "%s.task", where);
    if (!rc && (!cJSON_IsString(task) || !task->valuestring[0]))
        rc = bad(path, field, "the task file (a text)");
    snprintf(field, sizeof field, "%s.name", where);
    if (!rc && name && (!cJSON_IsString(name) || !name->valuestring[0] ||
                        strpbrk(name->valuestring, "/\\") || name->valuestring[0] == '.'))
        rc = bad(path, field, "a folder name (no '/', not starting with '.')");
    snprintf(field, sizeof field, "%s.shapes", where);
    if (!rc && (!cJSON_IsArray(shapes) || cJSON_GetArraySize(shapes) == 0))
        rc = bad(path, field, "a list of tuning shape indexes ([0, 1])");
    tforge_sweep_entry base = {0};
    if (!rc)
        rc = entry_copy(&base, defaults);
    if (!rc)
        rc = apply(&base, t, path, where);
    snprintf(field, sizeof field, "%s.backend", where);
    if (!rc && !base.backend)
        rc = bad(path, field, "cuda, interpret, compile or replay:FILE (here or in defaults)");
    snprintf(field, sizeof field, "%s.budget", where);
    if (!rc && !base.budget && base.time_s <= 0)
        rc = bad(path, field, "a budget or a time (here or in defaults)");
    if (!rc && (!(base.task = resolve(path, task->valuestring)) ||
                !(base.name = name ? strdup(name->valuestring) : name_of(base.task))))
        rc = tforge_error_set(TFORGE_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < m->n; i++)
        if (!strcmp(m->entries[i].name, base.name) && strcmp(m->entries[i].task, base.task)) {
            snprintf(field, sizeof field, "%s.name", where);
            rc = bad(path, field, "a name of its own (another task's folder is named so)");
        }
    if (!rc)
        rc = read_dtypes(path, where, dtypes, base.task);
    /* no "dtypes": one entry a shape, in the task's default dtype */
    int n_dtypes = dtypes ? cJSON_GetArraySize(dtypes) : 1;
    for (int s = 0; !rc && s < cJSON_GetArraySize(shapes); s++) {
        uint64_t shape;
        snprintf(field, sizeof field, "%s.shapes[%d]", where, s);
        rc = whole(&shape, cJSON_GetArrayItem(shapes, s), 0, path, field);
        for (int d = 0; !rc && d < n_dtypes; d++) {
            const char *dtype = dtypes ? cJSON_GetArrayItem(dtypes, d)->valuestring : NULL;
            for (size_t i = 0; !rc && i < m->n; i++)
                if (!strcmp(m->entries[i].name, base.name) && m->entries[i].shape == shape &&
                    same_dtype(m->entries[i].dtype, dtype))
                    rc = bad(path, field, "a shape not listed before for this task (and dtype)");
            tforge_sweep_entry e = {0};
            if (!rc)
                rc = entry_copy(&e, &base);
            if (!rc) {
                e.shape = (size_t)shape;
                e.task = strdup(base.task);
                e.name = strdup(base.name);
                e.dtype = copy(dtype);
                rc = e.task && e.name && (!dtype || e.dtype)
                         ? add_entry(m, &e)
                         : tforge_error_set(TFORGE_ENOMEM, "out of memory");
            }
            if (rc)
                entry_dispose(&e);
        }
    }
    entry_dispose(&base);
    return rc;
}

int tforge_sweep_manifest_read(tforge_sweep_manifest *m, const char *path)
{
    static const char *const top[] = {"out", "defaults", "tasks", NULL};
    memset(m, 0, sizeof *m);
    char *text = NULL;
    size_t size = 0;
    if (!(m->path = strdup(path)))
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    if (tforge_file_read(&text, &size, path))
        return tforge_error_set(TFORGE_ENOTFOUND, "%s: cannot read the sweep's manifest", path);
    cJSON *doc = cJSON_Parse(text);
    free(text);
    tforge_sweep_entry defaults = {0};
    defaults.transforms = strdup("all");
    defaults.seed = 1;
    int rc = defaults.transforms ? 0 : tforge_error_set(TFORGE_ENOMEM, "out of memory");
    if (!rc && !cJSON_IsObject(doc))
        rc = tforge_error_set(TFORGE_EINPUT, "%s: not a JSON object (expected {\"tasks\": "
                              "[...]})", path);
    for (const cJSON *item = doc ? doc->child : NULL; !rc && item; item = item->next) {
        int found = 0;
        for (size_t i = 0; top[i]; i++)
            found |= strcmp(item->string, top[i]) == 0;
        if (!found)
            rc = tforge_error_set(TFORGE_EINPUT, "%s: %s: unknown field (expected out, defaults, "
                                  "tasks)", path, item->string);
    }
    const cJSON *out = rc ? NULL : cJSON_GetObjectItemCaseSensitive(doc, "out");
    if (out && (!cJSON_IsString(out) || !out->valuestring[0]))
        rc = bad(path, "out", "the sweep's folder (a text)");
    else if (out && !(m->out = resolve(path, out->valuestring)))
        rc = tforge_error_set(TFORGE_ENOMEM, "out of memory");
    const cJSON *d = rc ? NULL : cJSON_GetObjectItemCaseSensitive(doc, "defaults");
    if (d && !cJSON_IsObject(d))
        rc = bad(path, "defaults", "an object of settings");
    else if (d && !(rc = known(d, settings_keys, NULL, path, "defaults")))
        rc = apply(&defaults, d, path, "defaults");
    const cJSON *tasks = rc ? NULL : cJSON_GetObjectItemCaseSensitive(doc, "tasks");
    if (!rc && (!cJSON_IsArray(tasks) || cJSON_GetArraySize(tasks) == 0))
        rc = bad(path, "tasks", "a list of at least one task");
    for (int i = 0; !rc && i < cJSON_GetArraySize(tasks); i++)
        rc = read_task(m, &defaults, cJSON_GetArrayItem(tasks, i), (size_t)i);
    entry_dispose(&defaults);
    cJSON_Delete(doc);
    if (rc)
        tforge_sweep_manifest_dispose(m);
    return rc;
}

void tforge_sweep_manifest_dispose(tforge_sweep_manifest *m)
{
    for (size_t i = 0; i < m->n; i++)
        entry_dispose(&m->entries[i]);
    free(m->entries);
    free(m->path);
    free(m->out);
    memset(m, 0, sizeof *m);
}
