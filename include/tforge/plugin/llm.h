/* DRAFT, interface "tforge.llm/1" (not frozen: issue 16 fills it in, as the paper's optional
 * model beside the rules). An LLM backend proposes whole rewritten kernels from the source, the
 * profile and the bottleneck labels; each proposal is data, not trusted code: the host verifies
 * it (compiled, checked against the reference on fresh inputs) before it is timed. */
#ifndef TFORGE_PLUGIN_LLM_H
#define TFORGE_PLUGIN_LLM_H

#include "plugin.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TFORGE_LLM_INTERFACE_ID "tforge.llm/1"

typedef struct tforge_llm_request {
    uint32_t struct_size;
    const char *source;         /* the kernel file's text */
    const char *kernel;         /* the kernel's name */
    const char *profile;        /* a readable summary of the metrics and labels */
    uint32_t max_proposals;
} tforge_llm_request;

typedef struct tforge_llm_interface {
    uint32_t struct_size;
    /* The head every kind's create shares (plugin.h); the requests bring the rest. */
    int (*create)(void **state, const tforge_host *host, const tforge_options_view *options);
    /* Up to request->max_proposals sources into `*out` (`*n` of them, NUL-terminated texts owned
     * by the plugin until its next call). */
    int (*propose)(void *state, const tforge_llm_request *request, const char *const **out,
                   uint32_t *n);
    void (*destroy)(void *state);
} tforge_llm_interface;

#ifdef __cplusplus
}
#endif
#endif
