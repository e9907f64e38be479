/* The winner, re-run as the user runs it (takehome.h). The worker side is
 * tforge_worker/takehome.py: each request runs in a fresh worker process, so that the files are
 * imported the way a user's own process imports them. */
#include "takehome.h"

#include "rpc.h"
#include "tforge/error.h"
#include "tforge/log.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_REFUSED = 4 }; /* candidates refused before the baseline is named */

static const char *const interpreting[] = {"TRITON_INTERPRET=1", NULL};
static const char *const compiling[] = {"TRITON_INTERPRET=0", NULL};

/* `request` (taken) in a fresh worker; the parsed result, or NULL with the error set. */
static cJSON *request(const tforge_takehome *th, const char *what, char *request)
{
    return tforge_rpc_fresh(what, request, th->gpu ? compiling : interpreting, th->timeout_ms);
}

int tforge_takehome_hook(tforge_takehome *th, const tforge_task *task,
                         const tforge_loop_outcome *o, const char *variant)
{
    free(th->hook);
    th->hook = NULL;
    if (o->best < 0)
        return 0;
    cJSON *doc = request(th, "the winner's launch hook",
                         tforge_rpc_launch_hook(task->path, o->evals[o->best].config, variant));
    if (!doc)
        return tforge_error_last()->code;
    const cJSON *text = cJSON_GetObjectItemCaseSensitive(doc, "text"),
                *at = cJSON_GetObjectItemCaseSensitive(doc, "at");
    int rc = 0;
    if (!cJSON_IsString(text) || !cJSON_IsNumber(at) || at->valuedouble < 0)
        rc = tforge_error_set(TFORGE_ERROR, "the winner's launch hook: expected {text, at} "
                                            "from the worker");
    else if (text->valuestring[0] && !(th->hook = strdup(text->valuestring)))
        rc = tforge_error_set(TFORGE_ENOMEM, "out of memory");
    th->hook_at = rc ? 0 : (size_t)at->valuedouble;
    cJSON_Delete(doc);
    return rc;
}

/* Appends printf-style text to th->report. */
static void say(tforge_takehome *th, const char *format, ...)
{
    char line[2048];
    va_list ap;
    va_start(ap, format);
    vsnprintf(line, sizeof line, format, ap);
    va_end(ap);
    size_t had = th->report ? strlen(th->report) : 0;
    char *grown = realloc(th->report, had + strlen(line) + 1);
    if (!grown)
        return;
    memcpy(grown + had, line, strlen(line) + 1);
    th->report = grown;
}

static int was_refused(const cJSON *refused, long i)
{
    for (const cJSON *r = refused->child; r; r = r->next)
        if ((long)cJSON_GetObjectItemCaseSensitive(r, "evaluation")->valuedouble == i + 1)
            return 1;
    return 0;
}

/* The candidate to name after a refusal: the fastest correct one not refused that beat the
 * baseline's median, or the baseline once none is left or MAX_REFUSED are refused; -1 when the
 * baseline itself was refused. */
static long next_candidate(const cJSON *refused, const tforge_loop_outcome *o)
{
    double bar = o->baseline >= 0 ? o->evals[o->baseline].m.value : INFINITY;
    long next = -1;
    for (size_t i = 0; cJSON_GetArraySize(refused) < MAX_REFUSED && i < o->n_evals; i++) {
        const tforge_loop_eval *e = &o->evals[i];
        if (!e->baseline && e->m.status == TFORGE_STATUS_OK && e->m.value < bar &&
            !was_refused(refused, (long)i) && (next < 0 || e->m.value < o->evals[next].m.value))
            next = (long)i;
    }
    if (next >= 0 || o->baseline < 0 || was_refused(refused, o->baseline))
        return next;
    return o->baseline;
}

int tforge_takehome_verify(tforge_takehome *th, const char *dir, const tforge_task *task,
                           tforge_loop_outcome *o, char *const *rewrites)
{
    if (o->best < 0)
        return 0;
    if (!th->result) {
        th->result = cJSON_CreateObject();
        cJSON_AddItemToObject(th->result, "refused", cJSON_CreateArray());
        th->first_best = o->best;
    }
    const tforge_loop_eval *e = &o->evals[o->best];
    cJSON *verdict = request(th, "the take-home files",
                             tforge_rpc_verify(dir, task->path, e->config, task->check_shapes[0],
                                               task->dtype));
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(verdict, "status"),
                *message = cJSON_GetObjectItemCaseSensitive(verdict, "message"),
                *dropped = cJSON_GetObjectItemCaseSensitive(verdict, "dropped");
    /* a worker that crashed, timed out or raised on them is a verdict too */
    const char *why = cJSON_IsString(message) ? message->valuestring
                                              : tforge_error_last()->message;
    const char *state = cJSON_IsString(status) ? status->valuestring : "error";
    const char *how = rewrites && rewrites[o->best] ? rewrites[o->best] : NULL;
    cJSON *refused = cJSON_GetObjectItemCaseSensitive(th->result, "refused");
    int rc = 0;
    if (strcmp(state, "ok") != 0) {
        cJSON *r = cJSON_CreateObject();
        cJSON_AddNumberToObject(r, "evaluation", (double)o->best + 1);
        cJSON_AddItemToObject(r, "config", cJSON_Parse(e->config));
        if (how)
            cJSON_AddStringToObject(r, "rewrites", how);
        cJSON_AddStringToObject(r, "status", state);
        cJSON_AddStringToObject(r, "reason", why);
        cJSON_AddItemToArray(refused, r);
        say(th, "- refused evaluation %ld, `%s`%s%s%s: %s: %s\n", o->best + 1, e->config,
            how ? " (rewrites " : "", how ? how : "", how ? ")" : "", state, why);
        long next = next_candidate(refused, o);
        tforge_log(TFORGE_LOG_WARN, "the winner's best_variant.py fails as you would run it "
                   "(%s: %.300s): %s", state, why,
                   next < 0 ? "no other candidate is left to name" : "naming the next one");
        if (next >= 0) {
            o->best = next;
            o->best_ms = next == o->baseline ? o->baseline_ms : o->evals[next].m.value;
            o->speedup = o->baseline_ms / o->best_ms;
            rc = 1;
        }
    }
    if (rc == 0) {
        int verified = strcmp(state, "ok") == 0;
        cJSON_AddBoolToObject(th->result, "verified", verified);
        cJSON_AddNumberToObject(th->result, "evaluation", (double)o->best + 1);
        cJSON_AddStringToObject(th->result, "shape", task->check_shapes[0]);
        say(th, "%sbest_variant.py and best_config.py imported in a fresh process and launched "
                "through the file's own entry point with the config of evaluation %ld at the "
                "check shape `%s`, compared with the reference: %s.\n",
            th->report ? "\n" : "", o->best + 1, task->check_shapes[0],
            verified ? "ok" : "failed (above), and no other candidate is left to name");
        if (o->best != th->first_best && verified)
            say(th, "The search's winner (evaluation %ld) was refused: %s.\n", th->first_best + 1,
                o->best == o->baseline ? "the baseline is named instead"
                                       : "this one is named instead; its time is the search's "
                                         "median (the final re-timing was the refused one's)");
        free(th->dropped);
        th->dropped = NULL;
        size_t len = 0;
        for (const cJSON *d = cJSON_IsArray(dropped) ? dropped->child : NULL; d; d = d->next)
            len += cJSON_IsString(d) ? strlen(d->valuestring) + 2 : 0;
        if (len && (th->dropped = calloc(len, 1))) {
            for (const cJSON *d = dropped->child; d; d = d->next)
                if (cJSON_IsString(d))
                    strcat(strcat(th->dropped, d->valuestring), d->next ? ", " : "");
            cJSON_AddItemToObject(th->result, "dropped", cJSON_Duplicate(dropped, 1));
            say(th, "\nThe file's own launch does not pass %s to the kernel: the tune ran (and "
                    "timed) the winner without them, whatever its config says.\n", th->dropped);
        }
    }
    cJSON_Delete(verdict);
    return rc;
}

void tforge_takehome_dispose(tforge_takehome *th)
{
    free(th->hook);
    free(th->dropped);
    free(th->report);
    cJSON_Delete(th->result);
}
