/* Worker processes: the engine's side. A worker is a child process (the tforge executable run
 * as `tforge __worker`) that embeds CPython and answers requests over a pair of pipes. A worker
 * that crashes, hangs or exits is killed and reaped; the call reports how it ended and the next
 * call starts a fresh process. Nothing a candidate does can take the engine down, and nothing
 * outlives it: a worker gets SIGKILL when the engine ends, however it ends, and its keeper then
 * kills what the worker started (its process group). Starting the first worker makes SIGINT,
 * SIGTERM and SIGHUP (where they would have ended the engine) kill every worker's group first.
 *
 * A new process first sends an empty frame once its interpreter is up and the modules named in
 * TFORGE_WORKER_PRELOAD (comma-separated) are imported; call timeouts count from then.
 * Protocol: each message is a frame, a 4-byte little-endian length then that many bytes of JSON.
 * Request  {"module": "tforge_worker", "function": "run_check", "args": {...}}
 * Response {"ok": true, "result": ...} or {"ok": false, "kind": "TaskError", "error": "...",
 * "traceback": "..."}: what was raised, its class's name and its message apart. rpc.h writes the
 * engine's requests and reads their responses. */
#ifndef TFORGE_ENGINE_WORKER_H
#define TFORGE_ENGINE_WORKER_H

#include <stddef.h>
#include <sys/types.h>

typedef struct tforge_worker tforge_worker;

typedef enum tforge_call_status {
    TFORGE_CALL_OK = 0,      /* a response frame came back (it may say ok: false) */
    TFORGE_CALL_CRASHED = 1, /* the process died before answering (signal or exit) */
    TFORGE_CALL_TIMEOUT = 2  /* no answer in time: the process was killed */
} tforge_call_status;

#define TFORGE_WORKER_OPTIONS_VERSION 1
typedef struct tforge_worker_options {
    unsigned version;        /* TFORGE_WORKER_OPTIONS_VERSION */
    const char *executable;  /* the tforge executable; NULL: this process's own */
    const char *name;        /* for messages: "compile-3", "gpu-0" */
    const char *const *env;  /* extra "KEY=VALUE" entries, NULL-terminated; may be NULL */
} tforge_worker_options;
#define TFORGE_WORKER_OPTIONS_INIT {TFORGE_WORKER_OPTIONS_VERSION, NULL, "worker", NULL}

/* Starts the process. The options' strings must outlive the worker. */
int tforge_worker_start(tforge_worker **out, const tforge_worker_options *options);

/* Sends one request and waits at most `timeout_ms` (<= 0: forever) for its response, which is
 * returned NUL-terminated in `*response` (the caller frees it) when `*status` is OK. When the
 * process died or timed out, `*response` is NULL, `*detail` (if not NULL) describes how
 * ("killed by signal 11 (Segmentation fault)"), and the worker restarts on the next call.
 * Returns a negative code only for an engine-side failure (out of memory, cannot fork). */
int tforge_worker_call(tforge_worker *worker, const char *request, int timeout_ms,
                       char **response, tforge_call_status *status, char *detail,
                       size_t detail_size);

/* Asynchronous use, for pools: send, then wait on tforge_worker_fd() with poll(2) and collect. */
int tforge_worker_send(tforge_worker *worker, const char *request);
int tforge_worker_fd(const tforge_worker *worker);
/* Reads what is available without blocking: returns 1 with `*response` set when a whole frame
 * has arrived, 0 when more is to come, and 1 with `*status` CRASHED when the process is gone. */
int tforge_worker_collect(tforge_worker *worker, char **response, tforge_call_status *status,
                          char *detail, size_t detail_size);
/* Kills a worker (the next call restarts it); `*detail` says how it ended. */
void tforge_worker_kill(tforge_worker *worker, char *detail, size_t detail_size);
/* The pending call's time starts when it is sent, or when a new process has said it is ready if
 * that is later: a slow start is never a candidate's timeout. Times are CLOCK_MONOTONIC ms. */
double tforge_worker_now_ms(void);
/* When the pending call is overdue: its start + timeout_ms (<= 0: never), or, while the process
 * is still starting, its spawn + the start-up limit. */
double tforge_worker_deadline_ms(const tforge_worker *worker, int timeout_ms);
/* When the pending (or last) call's time began; 0 while the process is still starting. */
double tforge_worker_call_start_ms(const tforge_worker *worker);
/* Kills an overdue worker; `*detail` says whether it answered too late or never started. */
void tforge_worker_expire(tforge_worker *worker, int timeout_ms, char *detail,
                          size_t detail_size);
int tforge_worker_busy(const tforge_worker *worker);

pid_t tforge_worker_pid(const tforge_worker *worker);
/* How many processes this worker has started (1 + restarts). */
unsigned tforge_worker_generation(const tforge_worker *worker);

/* Closes the pipes, gives the process a moment to exit, then kills it. NULL is allowed. */
void tforge_worker_free(tforge_worker *worker);

/* The child's side: runs the request loop on fds 3 (requests) and 4 (responses) until the
 * engine closes the pipe. Returns the process exit status. */
int tforge_worker_child_main(void);

#endif
