/* Runs in the store: found again, refused when they are not the same run, and read back. */
#include "loop.h"

#include "digest.h"
#include "grow.h"
#include "tforge/log.h"
#include "tforge/error.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tforge_run_history_dispose(tforge_run_history *h)
{
    for (size_t i = 0; h->keys && i < h->n; i++)
        free(h->keys[i]);
    free(h->keys);
    free(h->measurements);
    memset(h, 0, sizeof *h);
}

static int collect(void *context, const tforge_store_measurement *row)
{
    tforge_run_history *h = context;
    size_t cap = h->cap;
    int rc = tforge_grow((void **)&h->keys, &cap, h->n, sizeof *h->keys, "resuming");
    if (!rc) {
        cap = h->cap;
        rc = tforge_grow((void **)&h->measurements, &cap, h->n, sizeof *h->measurements,
                         "resuming");
    }
    if (rc)
        return rc;
    h->cap = cap;
    if (!(h->keys[h->n] = strdup(row->key)))
        return tforge_error_set(TFORGE_ENOMEM, "out of memory resuming");
    h->measurements[h->n++] = row->m;
    return 0;
}

static int same_text(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* A settings value as a refusal shows it: a string as itself, anything else as JSON, a key the
 * document lacks as "(none)". */
static void show_value(char *out, size_t size, const cJSON *value)
{
    char *json = value && !cJSON_IsString(value) ? cJSON_PrintUnformatted(value) : NULL;
    snprintf(out, size, "%s", !value ? "(none)" : json ? json : value->valuestring);
    free(json);
}

int tforge_run_settings_difference(char *key, size_t key_size, char *was, char *now,
                                   size_t size, const char *was_json, const char *now_json)
{
    cJSON *a = cJSON_Parse(was_json ? was_json : "{}");
    cJSON *b = cJSON_Parse(now_json ? now_json : "{}");
    int found = cJSON_IsObject(a) && cJSON_IsObject(b) ? 0 : -1;
    for (int pass = 0; found == 0 && pass < 2; pass++) { /* a's keys, then those only b has */
        const cJSON *from = pass ? b : a, *other = pass ? a : b, *item;
        cJSON_ArrayForEach(item, from) {
            const cJSON *there = cJSON_GetObjectItemCaseSensitive(other, item->string);
            if (there && cJSON_Compare(item, there, 1))
                continue;
            snprintf(key, key_size, "%s", item->string);
            show_value(was, size, pass ? there : item);
            show_value(now, size, pass ? item : there);
            found = 1;
            break;
        }
    }
    cJSON_Delete(a);
    cJSON_Delete(b);
    return found;
}

/* Refuses to resume `stored` as `like`, naming the first setting that differs (a key of the
 * settings documents among them) with both its values. */
static int compare_runs(const tforge_store_run *stored, const tforge_store_run *like)
{
    char what[128] = "", was[512] = "", now[512] = "", numbers[4][24];
    snprintf(numbers[0], sizeof numbers[0], "%llu", (unsigned long long)stored->seed);
    snprintf(numbers[1], sizeof numbers[1], "%llu", (unsigned long long)like->seed);
    snprintf(numbers[2], sizeof numbers[2], "%u", stored->budget);
    snprintf(numbers[3], sizeof numbers[3], "%u", like->budget);
    const struct {
        const char *what, *was, *now;
    } plain[] = {{"strategy", stored->strategy, like->strategy},
                 {"seed", numbers[0], numbers[1]},
                 {"budget", numbers[2], numbers[3]}};
    for (size_t i = 0; !what[0] && i < sizeof plain / sizeof *plain; i++)
        if (!same_text(plain[i].was, plain[i].now)) {
            snprintf(what, sizeof what, "%s", plain[i].what);
            snprintf(was, sizeof was, "%s", plain[i].was ? plain[i].was : "(none)");
            snprintf(now, sizeof now, "%s", plain[i].now ? plain[i].now : "(none)");
        }
    if (!what[0] && tforge_run_settings_difference(what, sizeof what, was, now, sizeof was,
                                                   stored->settings_json,
                                                   like->settings_json) < 0) {
        snprintf(what, sizeof what, "settings"); /* not ours to read key by key: as they are */
        snprintf(was, sizeof was, "%s", stored->settings_json ? stored->settings_json : "(none)");
        snprintf(now, sizeof now, "%s", like->settings_json ? like->settings_json : "(none)");
    }
    if (!what[0] && !same_text(stored->space_json, like->space_json)) {
        snprintf(what, sizeof what, "space");
        snprintf(was, sizeof was, "(another space)");
        snprintf(now, sizeof now, "(this task's space)");
    }
    if (!what[0])
        return 0;
    return tforge_error_set(TFORGE_EINPUT, "--resume: the stored run %lld of %s has %s %s, this "
                            "run asks for %s: run without --resume to start a new run, or with "
                            "the stored run's settings",
                            (long long)stored->id, stored->source, what, was, now);
}

/* Whether the stored run measured the same inputs: TFORGE_EINPUT naming the file that changed
 * (resume), or TFORGE_ENOTFOUND after saying so (the lab: its runs then start afresh). */
static int compare_inputs(const tforge_store_run *stored, const tforge_store_run *like,
                          tforge_run_mode mode)
{
    char changed[1024];
    if (!tforge_digest_differs(changed, sizeof changed, stored->inputs ? stored->inputs : "",
                               like->inputs ? like->inputs : ""))
        return 0;
    if (mode == TFORGE_RUN_RESUME)
        return tforge_error_set(TFORGE_EINPUT, "--resume: %s changed since the stored run %lld "
                                "measured it: its results are stale; run without --resume to "
                                "start a new run", changed, (long long)stored->id);
    tforge_log(TFORGE_LOG_WARN, "%s changed since the stored run %lld: starting a new run",
               changed, (long long)stored->id);
    return TFORGE_ENOTFOUND;
}

int tforge_run_open(int64_t *run_id, tforge_run_history *history, tforge_store *store,
                    const tforge_store_run *like, tforge_run_mode mode)
{
    memset(history, 0, sizeof *history);
    int rc = TFORGE_ENOTFOUND;
    if (mode == TFORGE_RUN_EXACT)
        rc = tforge_store_find_run_like(run_id, store, like);
    else if (mode == TFORGE_RUN_RESUME)
        rc = tforge_store_find_latest(run_id, store, like->source);
    if (rc == 0) {
        tforge_store_run stored;
        if ((rc = tforge_store_find_run(&stored, store, *run_id)) == 0) {
            rc = mode == TFORGE_RUN_RESUME ? compare_runs(&stored, like) : 0;
            if (!rc)
                rc = compare_inputs(&stored, like, mode);
            tforge_store_run_dispose(&stored);
        }
    }
    if (rc == 0)
        rc = tforge_store_claim(store, *run_id);
    if (rc == 0)
        rc = tforge_store_each_measurement(store, *run_id, collect, history);
    else if (rc == TFORGE_ENOTFOUND) {
        tforge_error_clear();
        rc = tforge_store_begin_run(run_id, store, like);
        if (rc == 0)
            rc = tforge_store_claim(store, *run_id);
    }
    if (rc)
        tforge_run_history_dispose(history);
    return rc;
}
