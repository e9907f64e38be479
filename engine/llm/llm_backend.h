/* A language-model plugin ("tforge.llm/1") found in the registry by its id and created with the
 * command line's "KEY=VALUE" options, checked against those it publishes first. */
#ifndef TFORGE_ENGINE_LLM_BACKEND_H
#define TFORGE_ENGINE_LLM_BACKEND_H

#include "registry.h"
#include "tforge/plugin/llm.h"

#include <stddef.h>

typedef struct tforge_llm_backend {
    const tforge_plugin_record *record; /* the registry's: lives as long as it */
    const tforge_llm_interface *interface;
    void *state;
} tforge_llm_backend;

/* Creates the plugin `id` with `options` ("KEY=VALUE" each, as --llm-option gives them). A
 * plugin that is not there, an option it does not take or a value it refuses is TFORGE_EINPUT
 * or TFORGE_ENOTFOUND naming it. */
int tforge_llm_backend_open(tforge_llm_backend *out, const tforge_registry *registry,
                            const char *id, const char *const *options, size_t n_options);
/* Destroys the plugin's state. Zeroed or already closed is allowed. */
void tforge_llm_backend_close(tforge_llm_backend *backend);

#endif
