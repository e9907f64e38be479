/* A model asked to rewrite the kernel, and each answer checked before anything of it runs: its
 * code block extracted, parsed and held against the allow-lists in a fresh worker
 * (tforge_worker.proposal.check_answer), so that an answer is data, never code the engine runs
 * unchecked. The model is reached through a "tforge.llm/1" interface and its state alone
 * (a plugin, or the host's door that stores and replays requests). An answer that is refused,
 * or that never came, is a proposal with its reason, never an error. */
#ifndef TFORGE_ENGINE_LLM_PROPOSAL_H
#define TFORGE_ENGINE_LLM_PROPOSAL_H

#include "digest.h"
#include "tforge/plugin/llm.h"

#include <stddef.h>
#include <stdint.h>

typedef enum tforge_proposal_state {
    TFORGE_PROPOSAL_NO_ANSWER = 0, /* the model gave none: `reason` is the transport's error */
    TFORGE_PROPOSAL_REFUSED = 1,   /* the answer broke a rule: `reason` says which */
    TFORGE_PROPOSAL_ACCEPTED = 2   /* `source` is to be verified and timed as a candidate */
} tforge_proposal_state;

/* One answer and what became of it; the texts are owned (tforge_proposals_free). */
typedef struct tforge_proposal {
    tforge_proposal_state state;
    char *reason;  /* why there is no proposal; NULL when accepted */
    char *answer;  /* the model's whole message; NULL when there was none */
    char *source;  /* accepted: the proposal's kernel file; else NULL */
    char digest[TFORGE_DIGEST_SIZE]; /* accepted: the digest of `source`; else "" */
    uint64_t prompt_tokens, completion_tokens;
    double seconds;
} tforge_proposal;

typedef struct tforge_proposal_request {
    const tforge_llm_interface *llm; /* with its state; both lent */
    void *llm_state;
    const char *system, *user;       /* the rendered prompt (prompt.h) */
    uint32_t answers;                /* >= 1 */
    uint64_t seed;
    const char *kernel, *source;     /* the kernel's name and its file's text */
    const char *const *worker_env;   /* the checking worker's "KEY=VALUE" entries, or NULL */
    int timeout_ms;                  /* for each answer's check */
} tforge_proposal_request;

/* Asks the model and checks each answer: `*out` holds `*n` proposals (free them with
 * tforge_proposals_free). A model that could not be asked at all (the plugin misconfigured) is
 * TFORGE_EINPUT with its reason; a checking worker that fails is TFORGE_ERROR. */
int tforge_proposal_ask(tforge_proposal **out, size_t *n, const tforge_proposal_request *r);
void tforge_proposals_free(tforge_proposal *proposals, size_t n);

/* The model's diagnosis: what its answer says before the code block (malloc'd, trimmed; "" when
 * nothing), or NULL when out of memory. */
char *tforge_proposal_diagnosis(const tforge_proposal *proposal);

#endif
