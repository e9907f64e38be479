/* One request to a fresh worker process, for the callers that need a single answer (the
 * take-home check, a diff, an analysis) rather than a worker kept for many calls. */
#ifndef TFORGE_ENGINE_WORKER_REQUEST_H
#define TFORGE_ENGINE_WORKER_REQUEST_H

/* `module.function(**args)` (args: a JSON object text, or NULL). Returns the result as JSON text
 * (the caller frees it), or NULL with the error set: a ValueError or TaskError raised by the
 * function is the input's fault (TFORGE_EINPUT, its message as it is), anything else, a crash or
 * a timeout the engine's (TFORGE_ERROR, naming `what`). `env`: extra "KEY=VALUE" entries,
 * NULL-terminated, or NULL. */
char *tforge_worker_request(const char *what, const char *module, const char *function,
                            const char *args, const char *const *env, int timeout_ms);

#endif
