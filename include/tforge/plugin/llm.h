/* Interface "tforge.llm/1" (frozen): a language-model backend, the transport between the host and
 * a model. The host writes the prompt (engine/llm/: the template, the kernel, its profile, the
 * failures of earlier proposals), stores every request and answer by the request's digest (so a
 * run replays without the model) and treats each answer as data: extracted, checked against an
 * import allow-list, then compiled and verified like any candidate before it is timed. A plugin
 * only carries messages to a model and its answers back (plugins/llm/openai: the
 * OpenAI-compatible chat-completions protocol). Credentials are the plugin's business: it reads
 * them from the environment and never logs, stores or returns them. */
#ifndef TFORGE_PLUGIN_LLM_H
#define TFORGE_PLUGIN_LLM_H

#include "plugin.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TFORGE_LLM_INTERFACE_ID "tforge.llm/1"

/* One request: a conversation of two messages and how many answers are wanted. Everything is
 * lent for the call. */
typedef struct tforge_llm_request {
    uint32_t struct_size;
    const char *system;   /* the system message (the rules of the answer) */
    const char *user;     /* the user message (the kernel, its profile, what was tried) */
    uint32_t answers;     /* answers wanted, >= 1 (the protocol's `n`, or parallel requests) */
    uint64_t seed;        /* asked of the model where it honours one; the plugin's option wins */
} tforge_llm_request;

/* One answer, or why there is none. A plain value; its texts are owned by the plugin until its
 * next call on the same state. */
typedef struct tforge_llm_answer {
    const char *text;   /* the model's message content, NUL-terminated; NULL when it failed */
    const char *error;  /* NULL, or why there is no text, one line: "HTTP 429, 3 tries",
                           "timed out after 60 s", "malformed JSON: ...", "no content" */
    uint64_t prompt_tokens;     /* as the endpoint reported them, 0 when it did not */
    uint64_t completion_tokens;
    double seconds;             /* wall time of the request(s) behind this answer */
} tforge_llm_answer;

typedef struct tforge_llm_interface {
    uint32_t struct_size;
    /* The head every kind's create shares (plugin.h); options carry the endpoint, the model, the
     * name of the environment variable holding the key, timeout, retries and sampling. */
    int (*create)(void **state, const tforge_host *host, const tforge_options_view *options);
    /* Asks the model. Sets `*out` to `*n` answers (1 <= *n <= request->answers) and returns 0;
     * an answer that failed says why in its `error`, which is a clean outcome, not an error of
     * the call. Returns a negative code only when nothing could be asked at all (the plugin is
     * misconfigured: no endpoint, the key's variable unset), with a one-line reason in
     * `*out[0].error` when *n is 1. */
    int (*complete)(void *state, const tforge_llm_request *request,
                    const tforge_llm_answer **out, uint32_t *n);
    /* The model's name for the report and the request's digest (the option, or what the
     * endpoint reports); owned by the plugin. */
    const char *(*model)(void *state);
    void (*destroy)(void *state);
} tforge_llm_interface;

#ifdef __cplusplus
}
#endif
#endif
