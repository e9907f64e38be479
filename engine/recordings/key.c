/* A point's texts: its Kernel Tuner key and its configuration as JSON, and back. */
#include "recording_internal.h"

int tforge_recording_key(char **out, const tforge_recording *rec, const tforge_level *levels)
{
    *out = NULL;
    size_t len = 1;
    for (uint32_t p = 0; p < rec->n_params; p++)
        len += strlen(rec->params[p].texts[levels[p]]) + 1;
    char *key = malloc(len);
    if (!key)
        return nomem();
    char *at = key;
    *at = '\0';
    for (uint32_t p = 0; p < rec->n_params; p++) {
        const char *text = rec->params[p].texts[levels[p]];
        size_t n = strlen(text);
        if (p > 0)
            *at++ = ',';
        memcpy(at, text, n + 1);
        at += n;
    }
    *out = key;
    return 0;
}

int tforge_recording_config_json(char **out, const tforge_recording *rec,
                                 const tforge_level *levels)
{
    return recording_print_json(out, recording_config_object(rec, levels));
}

int tforge_recording_config_levels(tforge_level *out, const tforge_recording *rec,
                                   const char *json, const char *where)
{
    cJSON *config = json ? cJSON_Parse(json) : NULL;
    int rc = recording_read_configuration(rec, out, config, where, "configuration");
    cJSON_Delete(config);
    return rc;
}
