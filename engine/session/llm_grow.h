/* A tune's model (tune --llm): the loop's grow hook (loop.h) that asks the model for a rewrite
 * of the kernel when the incumbent stalls, at most `budget` times a run (under forge, only where
 * the incumbent's labels also name a bottleneck that no open move addresses, and the model is
 * shown that profile; otherwise the search goes on), and adds each accepted
 * proposal as the next level of the task's `variant` (tforge_task_add_proposal), so that the
 * search goes on over the grown space and re-tunes the proposal's knobs; its source is kept in
 * the store by its digest as it is accepted. A strategy with nothing left to propose is a stall
 * too. A refused answer, or
 * none, is kept with its reason and told in the next prompt. A resumed run does not ask where
 * the stored run grew: it adds the level the stored evaluations name, its source read from the
 * store by digest, so that it proposes the same points. */
#ifndef TFORGE_ENGINE_LLM_GROW_H
#define TFORGE_ENGINE_LLM_GROW_H

#include "forge.h"
#include "loop.h"
#include "prompt.h"
#include "proposal.h"
#include "task.h"

/* One answer and what became of it, for the report. Strings owned. */
typedef struct tforge_llm_proposed {
    tforge_proposal_state state;
    char *reason;    /* refused or no answer: why; else NULL */
    char *diagnosis; /* the model's words before its code ("" when none) */
    char digest[TFORGE_DIGEST_SIZE]; /* accepted: its source's; else "" */
    uint32_t level;  /* accepted: its level of `variant`; else 0 */
    size_t at;       /* the evaluations there were when it was asked for (or taken) */
    long incumbent;  /* the evaluation that was the incumbent then, -1 when none */
    char *because;   /* under forge: the label that made it ask (tforge_forge_unaddressed's
                        words); else NULL */
    int stored;      /* 1: taken from the stored run on resume, the model not asked */
    char *diff;      /* accepted: its unified diff against the file, once the caller made it */
} tforge_llm_proposed;

typedef struct tforge_llm_grow {
    tforge_task *task;                  /* lent; its space grows */
    tforge_store *store;                /* lent: the proposals' sources by digest */
    const tforge_run_history *history;  /* lent; the stored run's evaluations, or NULL */
    const tforge_llm_interface *llm;    /* lent with its state: the door */
    void *llm_state;
    tforge_forge *forge;                /* lent, or NULL: asked at a stall alone (bo) */
    char why_not[512];                  /* under forge: why it last did not ask, "" else */
    uint32_t not_asked;                 /* under forge: stalls left to forge's moves */
    tforge_prompt prompt;
    uint32_t budget, asked;
    uint64_t seed;
    int timeout_ms;                     /* each answer's check */
    tforge_llm_proposed *proposed;
    size_t n_proposed;
    tforge_loop_grow hook;
} tforge_llm_grow;

/* Loads the prompt template (`prompt_path`, NULL: the installed one) and declares the task's
 * `variant` (tforge_task_declare_variant): do it before the run's space is described. */
int tforge_llm_grow_open(tforge_llm_grow *grow, tforge_task *task, const char *prompt_path,
                         uint32_t budget, uint64_t seed, int timeout_ms);

/* The hook for the loop's options, once the store, the history and the door are there.
 * `forge` (lent, may be NULL): the profile-guided loop's steer, whose labels decide when to ask
 * and whose incumbent's profile the model is shown. */
const tforge_loop_grow *tforge_llm_grow_hook(tforge_llm_grow *grow, tforge_store *store,
                                             const tforge_run_history *history,
                                             const tforge_llm_interface *llm, void *llm_state,
                                             tforge_forge *forge);

/* Zeroed is allowed. */
void tforge_llm_grow_close(tforge_llm_grow *grow);

#endif
