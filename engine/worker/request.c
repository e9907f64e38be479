/* One request to a fresh worker process (request.h). */
#include "request.h"

#include "worker.h"
#include "tforge/error.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

char *tforge_worker_request(const char *what, const char *module, const char *function,
                            const char *args, const char *const *env, int timeout_ms)
{
    tforge_worker_options options = TFORGE_WORKER_OPTIONS_INIT;
    options.name = function;
    options.env = env;
    cJSON *request = cJSON_CreateObject();
    cJSON_AddStringToObject(request, "module", module);
    cJSON_AddStringToObject(request, "function", function);
    cJSON_AddItemToObject(request, "args", args ? cJSON_Parse(args) : cJSON_CreateObject());
    char *text = cJSON_PrintUnformatted(request), *response = NULL, *result = NULL,
         detail[256] = "";
    cJSON_Delete(request);
    tforge_worker *worker = NULL;
    tforge_call_status status = TFORGE_CALL_OK;
    cJSON *doc = NULL;
    if (!text) {
        tforge_error_set(TFORGE_ENOMEM, "out of memory");
        goto cleanup;
    }
    if (tforge_worker_start(&worker, &options) ||
        tforge_worker_call(worker, text, timeout_ms, &response, &status, detail, sizeof detail))
        goto cleanup;
    if (status != TFORGE_CALL_OK) {
        tforge_error_set(TFORGE_ERROR, "%s: the worker %s", what, detail);
        goto cleanup;
    }
    if (!(doc = cJSON_Parse(response))) {
        tforge_error_set(TFORGE_ERROR, "%s: the worker's answer is not JSON", what);
        goto cleanup;
    }
    if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(doc, "ok"))) {
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(doc, "error");
        const char *message = cJSON_IsString(e) ? e->valuestring : "?";
        static const char *const input_errors[] = {"ValueError: ", "TaskError: "};
        for (int i = 0; i < 2; i++)
            if (strncmp(message, input_errors[i], strlen(input_errors[i])) == 0) {
                tforge_error_set(TFORGE_EINPUT, "%s", message + strlen(input_errors[i]));
                goto cleanup;
            }
        tforge_error_set(TFORGE_ERROR, "%s: %s failed: %s", what, function, message);
        goto cleanup;
    }
    if (!(result = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(doc, "result"))))
        tforge_error_set(TFORGE_ENOMEM, "out of memory");
cleanup:
    cJSON_Delete(doc);
    free(response);
    free(text);
    tforge_worker_free(worker);
    return result;
}
