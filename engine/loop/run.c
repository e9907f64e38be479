/* Runs in the store: found again, refused when they are not the same run, and read back. */
#include "loop.h"

#include "digest.h"
#include "grow.h"
#include "tforge/log.h"
#include "tforge/error.h"

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

/* Refuses to resume `stored` as `like`, naming the first setting that differs. */
static int compare_runs(const tforge_store_run *stored, const tforge_store_run *like)
{
    char seeds[2][24], budgets[2][24];
    snprintf(seeds[0], sizeof seeds[0], "%llu", (unsigned long long)stored->seed);
    snprintf(seeds[1], sizeof seeds[1], "%llu", (unsigned long long)like->seed);
    snprintf(budgets[0], sizeof budgets[0], "%u", stored->budget);
    snprintf(budgets[1], sizeof budgets[1], "%u", like->budget);
    const struct {
        const char *what, *was, *now, *was_shown, *now_shown;
    } settings[] = {
        {"strategy", stored->strategy, like->strategy, stored->strategy, like->strategy},
        {"seed", seeds[0], seeds[1], seeds[0], seeds[1]},
        {"budget", budgets[0], budgets[1], budgets[0], budgets[1]},
        {"settings", stored->settings_json, like->settings_json, stored->settings_json,
         like->settings_json},
        {"space", stored->space_json, like->space_json, "(another space)",
         "(this task's space)"},
    };
    for (size_t i = 0; i < sizeof settings / sizeof *settings; i++)
        if (!same_text(settings[i].was, settings[i].now))
            return tforge_error_set(TFORGE_EINPUT, "--resume: the stored run %lld of %s has %s "
                                    "%s, this run asks for %s: run without --resume to start a "
                                    "new run, or with the stored run's settings",
                                    (long long)stored->id, stored->source, settings[i].what,
                                    settings[i].was_shown ? settings[i].was_shown : "(none)",
                                    settings[i].now_shown ? settings[i].now_shown : "(none)");
    return 0;
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
