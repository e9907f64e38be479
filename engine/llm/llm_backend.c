#include "llm_backend.h"

#include "tforge/error.h"

#include <stdlib.h>
#include <string.h>

#define MAX_OPTIONS 64

int tforge_llm_backend_open(tforge_llm_backend *out, const tforge_registry *registry,
                            const char *id, const char *const *options, size_t n_options)
{
    memset(out, 0, sizeof *out);
    if (n_options > MAX_OPTIONS)
        return tforge_error_set(TFORGE_EINPUT, "--llm-option: at most %d", MAX_OPTIONS);
    const tforge_plugin_record *record = tforge_registry_find(registry, TFORGE_LLM_INTERFACE_ID,
                                                              id);
    if (!record && tforge_error_last()->code == TFORGE_ENOTFOUND)
        return tforge_error_set(TFORGE_EINPUT, "--llm %s: no such model plugin (`tforge plugins` "
                                "lists those there are; openai is built where libcurl is)", id);
    if (!record)
        return tforge_error_last()->code; /* one of another revision: the message says which */
    /* "KEY=VALUE" split into copies: the keys' texts end at the '=' */
    char *copies[MAX_OPTIONS] = {0};
    const char *keys[MAX_OPTIONS], *values[MAX_OPTIONS];
    int rc = 0;
    for (size_t i = 0; i < n_options && !rc; i++) {
        const char *eq = strchr(options[i], '=');
        if (!eq || eq == options[i])
            rc = tforge_error_set(TFORGE_EINPUT, "--llm-option '%s': expected KEY=VALUE",
                                  options[i]);
        else if (!(copies[i] = strdup(options[i])))
            rc = tforge_error_set(TFORGE_ENOMEM, "out of memory");
        else {
            copies[i][eq - options[i]] = '\0';
            keys[i] = copies[i];
            values[i] = copies[i] + (eq - options[i]) + 1;
        }
    }
    if (!rc)
        rc = tforge_plugin_check_options(record, keys, values, (uint32_t)n_options);
    const tforge_llm_interface *iface =
        rc ? NULL : tforge_plugin_interface(record, TFORGE_LLM_INTERFACE_ID);
    if (!rc && !iface)
        rc = tforge_error_set(TFORGE_EINPUT, "--llm %s does not speak %s", id,
                              TFORGE_LLM_INTERFACE_ID);
    if (!rc) {
        tforge_options_view view = {sizeof view, (uint32_t)n_options, keys, values};
        tforge_error_clear();
        rc = iface->create(&out->state, tforge_registry_host(), &view);
        if (rc && !tforge_error_last()->message[0])
            tforge_error_set(rc, "--llm %s refused to start (no reason given)", id);
        if (rc)
            out->state = NULL;
    }
    for (size_t i = 0; i < n_options; i++)
        free(copies[i]);
    if (rc)
        return rc;
    out->record = record;
    out->interface = iface;
    return 0;
}

void tforge_llm_backend_close(tforge_llm_backend *backend)
{
    if (backend->interface && backend->state)
        backend->interface->destroy(backend->state);
    memset(backend, 0, sizeof *backend);
}
