/* A tune's model: asked at a stall, its accepted proposals added as levels of `variant`. */
#include "llm_grow.h"

#include "file.h"
#include "store.h"
#include "tforge/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tforge_llm_grow_open(tforge_llm_grow *g, tforge_task *task, const char *prompt_path,
                         uint32_t budget, uint64_t seed, int timeout_ms)
{
    memset(g, 0, sizeof *g);
    g->task = task;
    g->budget = budget;
    g->seed = seed;
    g->timeout_ms = timeout_ms;
    int rc = tforge_prompt_load(&g->prompt, prompt_path);
    return rc ? rc : tforge_task_declare_variant(task);
}

/* Whether `digest` is a level of the task's `variant` already. */
static int is_level(const tforge_task *t, const char *digest)
{
    for (size_t i = 0; i < t->n_proposals; i++)
        if (strcmp(t->proposal_digests[i], digest) == 0)
            return 1;
    return 0;
}

/* The first `variant` label among the stored run's evaluations from `from` on that this run's
 * space has not got (the stored run grew here), into `digest`; 0 when there is none. Keys are
 * the space's texts in dimension order, comma-separated. */
static int stored_level(const tforge_llm_grow *g, size_t from, char digest[TFORGE_DIGEST_SIZE])
{
    int d = tforge_space_find(g->task->space, TFORGE_TASK_VARIANT);
    for (size_t i = from; d >= 0 && g->history && i < g->history->n; i++) {
        const char *field = g->history->keys[i];
        for (int k = 0; k < d && field; k++)
            if ((field = strchr(field, ',')))
                field++;
        size_t len = field ? strcspn(field, ",@") : 0;
        if (!field || len == 0 || len >= TFORGE_DIGEST_SIZE || strncmp(field, "fnv1a64:", 8))
            continue;
        memcpy(digest, field, len);
        digest[len] = '\0';
        if (!is_level(g->task, digest))
            return 1;
    }
    return 0;
}

static int keep(tforge_llm_grow *g, const tforge_llm_proposed *p)
{
    tforge_llm_proposed *more = realloc(g->proposed, (g->n_proposed + 1) * sizeof *more);
    if (!more)
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    g->proposed = more;
    g->proposed[g->n_proposed++] = *p;
    return 0;
}

/* The level the stored run grew by, its source read from the store. */
static int take_stored(tforge_llm_grow *g, const char *digest, size_t at)
{
    char *source = NULL;
    tforge_llm_proposed p = {.state = TFORGE_PROPOSAL_ACCEPTED, .at = at, .stored = 1,
                             .incumbent = -1};
    int rc = tforge_store_source(&source, g->store, digest);
    if (rc)
        return tforge_error_prefix("resume: the proposal %s the stored run evaluated", digest);
    rc = tforge_task_add_proposal(g->task, source, &p.level);
    free(source);
    memcpy(p.digest, digest, sizeof p.digest);
    if (!rc && !(p.diagnosis = strdup("")))
        rc = tforge_error_set(TFORGE_ENOMEM, "out of memory");
    if (!rc)
        rc = keep(g, &p);
    g->asked++; /* the stored run asked for it: its budget spent as there */
    return rc;
}

/* The earlier proposals as the prompt tells them. */
static tforge_prompt_proposal *earlier(const tforge_llm_grow *g)
{
    tforge_prompt_proposal *list = calloc(g->n_proposed + 1, sizeof *list);
    for (size_t i = 0; list && i < g->n_proposed; i++) {
        const tforge_llm_proposed *p = &g->proposed[i];
        list[i].status = p->state == TFORGE_PROPOSAL_ACCEPTED ? "accepted"
                         : p->state == TFORGE_PROPOSAL_REFUSED ? "refused"
                                                               : "no answer";
        list[i].reason = p->reason ? p->reason : "";
        list[i].max_error = NAN;
        list[i].slower_pct = NAN;
    }
    return list;
}

/* The incumbent's profile and labels as forge took them, for the prompt (`labels` holds room
 * for them, freed by the caller); nothing without forge or a profile. */
static int incumbent_profile(tforge_prompt_profile *now, tforge_prompt_label **labels,
                             const tforge_llm_grow *g, long incumbent)
{
    *labels = NULL;
    const tforge_forge_profile *p =
        g->forge && incumbent >= 0 ? tforge_forge_find(g->forge, (size_t)incumbent) : NULL;
    if (!p)
        return 0;
    now->profile = &p->profile;
    if (p->n_labels && !(*labels = calloc(p->n_labels, sizeof **labels)))
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    for (size_t i = 0; i < p->n_labels; i++)
        (*labels)[i] = (tforge_prompt_label){p->labels[i].label, p->labels[i].evidence,
                                             p->labels[i].confidence};
    now->labels = *labels;
    now->n_labels = p->n_labels;
    return 0;
}

/* Asks the model once (`because`: forge's words for why, or NULL); each accepted answer becomes
 * a level. */
static int ask(tforge_llm_grow *g, const tforge_loop_outcome *out, long incumbent,
               const char *because, int *grew)
{
    const tforge_task *t = g->task;
    char *source = NULL, *system = NULL, *user = NULL;
    size_t size = 0;
    tforge_proposal *answers = NULL;
    size_t n = 0;
    tforge_prompt_profile now = {"the incumbent", NAN, NULL, NULL, 0};
    tforge_prompt_label *labels = NULL;
    if (incumbent >= 0)
        now.time_ms = out->evals[incumbent].m.value;
    tforge_prompt_proposal *told = earlier(g);
    int rc = told ? incumbent_profile(&now, &labels, g, incumbent)
                  : tforge_error_set(TFORGE_ENOMEM, "out of memory");
    if (!rc)
        rc = tforge_file_read(&source, &size, t->source);
    if (!rc) {
        tforge_prompt_facts facts = {.path = t->source, .kernel = t->kernel, .source = source,
                                     .profiles = &now, .n_profiles = 1, .proposals = told,
                                     .n_proposals = g->n_proposed};
        rc = tforge_prompt_render(&system, &user, &g->prompt, &facts);
    }
    if (!rc) {
        tforge_proposal_request r = {g->llm, g->llm_state, system, user, 1, g->seed + g->asked,
                                     t->kernel, source, NULL, g->timeout_ms};
        rc = tforge_proposal_ask(&answers, &n, &r);
    }
    g->asked++;
    for (size_t i = 0; !rc && i < n; i++) {
        tforge_proposal *a = &answers[i];
        tforge_llm_proposed p = {.state = a->state, .at = out->n_evals, .incumbent = incumbent};
        if (a->state == TFORGE_PROPOSAL_ACCEPTED &&
            ((rc = tforge_task_add_proposal(g->task, a->source, &p.level)) ||
             (g->store && (rc = tforge_store_keep_source(g->store, a->digest, a->source)))))
            break;
        *grew |= a->state == TFORGE_PROPOSAL_ACCEPTED;
        memcpy(p.digest, a->digest, sizeof p.digest);
        p.diagnosis = tforge_proposal_diagnosis(a);
        if (!p.diagnosis || (a->reason && !(p.reason = strdup(a->reason))) ||
            (because && !(p.because = strdup(because)))) {
            free(p.diagnosis);
            free(p.reason);
            rc = tforge_error_set(TFORGE_ENOMEM, "out of memory");
        } else if ((rc = keep(g, &p))) {
            free(p.diagnosis);
            free(p.reason);
            free(p.because);
        }
    }
    tforge_proposals_free(answers, n);
    free(labels);
    free(told);
    free(source);
    free(system);
    free(user);
    return rc;
}

static int grow(void *context, const tforge_loop_outcome *out, long incumbent,
                const tforge_space **space, int *go_on)
{
    tforge_llm_grow *g = context;
    *space = NULL;
    char digest[TFORGE_DIGEST_SIZE], because[sizeof g->why_not];
    int rc = 0, grew = 0, named = -1;
    /* under forge, only a bottleneck that no open move addresses is the model's: else forge's
     * moves go on (a resumed run decides alike, so that it grows where the stored run did) */
    if (g->forge && incumbent >= 0 &&
        (rc = tforge_forge_unaddressed(&named, because, sizeof because, g->forge, out,
                                       (size_t)incumbent)))
        return rc;
    if (g->forge && named < 0) {
        snprintf(g->why_not, sizeof g->why_not, "%s", incumbent >= 0 ? because : "no incumbent");
        g->not_asked++;
        *go_on = 1;
        return 0;
    }
    if (g->history && g->history->n > out->n_evals) { /* resumed: the stored run went on */
        if (stored_level(g, out->n_evals, digest) && !(rc = take_stored(g, digest, out->n_evals)))
            *space = g->task->space;
        return rc;
    }
    while (!rc && !grew && g->asked < g->budget)
        rc = ask(g, out, incumbent, g->forge ? because : NULL, &grew);
    if (!rc && grew)
        *space = g->task->space;
    return rc;
}

const tforge_loop_grow *tforge_llm_grow_hook(tforge_llm_grow *g, tforge_store *store,
                                             const tforge_run_history *history,
                                             const tforge_llm_interface *llm, void *llm_state,
                                             tforge_forge *forge)
{
    g->store = store;
    g->forge = forge;
    g->history = history;
    g->llm = llm;
    g->llm_state = llm_state;
    g->hook = (tforge_loop_grow){g, grow};
    return &g->hook;
}

void tforge_llm_grow_close(tforge_llm_grow *g)
{
    for (size_t i = 0; i < g->n_proposed; i++) {
        free(g->proposed[i].reason);
        free(g->proposed[i].diagnosis);
        free(g->proposed[i].diff);
        free(g->proposed[i].because);
    }
    free(g->proposed);
    tforge_prompt_dispose(&g->prompt);
    memset(g, 0, sizeof *g);
}
