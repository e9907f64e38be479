/* The host's door to a language model: a "tforge.llm/1" interface and state of its own that
 * wraps a plugin's (a decorator), so that whoever asks cannot tell the two apart. Each request
 * is known by its digest (the model, the system and user messages, the answers asked for and the
 * seed) and the how-manieth time it was asked; the door stores it with its answers, failures
 * among them, in the run's store, committed at once. In replay, the answers come from the store
 * alone: the plugin is never asked (it may be absent), and a request the store does not hold is
 * answered with the error "not in the store (--llm-replay)". The door sums what asking cost.
 * A door serves one thread at a time, as its store does. */
#ifndef TFORGE_ENGINE_LLM_DOOR_H
#define TFORGE_ENGINE_LLM_DOOR_H

#include "digest.h"
#include "store.h"
#include "tforge/plugin/llm.h"

#include <stdint.h>

typedef struct tforge_llm_door tforge_llm_door;

/* What the model was asked and what it cost, for the report. */
typedef struct tforge_llm_usage {
    uint64_t requests;          /* requests answered (through complete) */
    uint64_t replayed;          /* of them, served from the store */
    uint64_t answers;           /* answers given */
    uint64_t failed;            /* of them, without text (their error says why) */
    uint64_t prompt_tokens;     /* as the endpoint reported them */
    uint64_t completion_tokens;
    double seconds;             /* the wall time of asking; as recorded, for those replayed */
} tforge_llm_usage;

/* The answer a replay gives to a request the store does not hold. */
#define TFORGE_LLM_NOT_STORED "not in the store (--llm-replay)"

/* Opens a door on `plugin` and its state (lent: the door never destroys them; close the door
 * first). `store` (lent; NULL: nothing kept) keeps every request. With `replay`, answers come
 * from the store only; `plugin`, when given, only names the model (its model()), else the model
 * is the one of the store's latest request. */
int tforge_llm_door_open(tforge_llm_door **out, tforge_store *store,
                         const tforge_llm_interface *plugin, void *plugin_state, int replay);

/* The door as an interface and state, to hand to whatever asks the model. Its create refuses
 * (a door is opened here); its destroy closes the door. */
void tforge_llm_door_interface(tforge_llm_door *door, const tforge_llm_interface **interface,
                               void **state);

tforge_llm_usage tforge_llm_door_usage(const tforge_llm_door *door);

/* The digest a request is stored by ("fnv1a64:" and 16 hex digits: base/digest.h), over the
 * model, the messages, the answers asked for and the seed, each field length-prefixed so that
 * no two requests share a text. */
int tforge_llm_request_digest(char out[TFORGE_DIGEST_SIZE], const char *model,
                              const tforge_llm_request *request);

/* NULL is allowed. */
void tforge_llm_door_close(tforge_llm_door *door);

#endif
