/* The one typed door to the worker's Python (python/tforge_worker): one function an entry point
 * of tforge_worker.ENTRY_POINTS, typed arguments in, the request's text out; this file is the only
 * one that writes a request. A request goes through worker.h (tforge_rpc_call, or send and
 * collect then tforge_rpc_read) or to a fresh worker process (tforge_rpc_fresh), and its answer
 * comes back as a tforge_rpc_reply: the value the entry point returned, or the exception it
 * raised as two fields, its kind (the class's name) and its message.
 *
 * tforge_rpc_methods() lists every method with the fields it may send; a request is refused
 * (TFORGE_ERROR) when it would carry a field its method does not list or lack one it always
 * carries, and tests/engine/rpc.c checks the list against the Python functions' signatures. */
#ifndef TFORGE_ENGINE_WORKER_RPC_H
#define TFORGE_ENGINE_WORKER_RPC_H

#include "worker.h"

#include <stddef.h>
#include <stdint.h>

struct cJSON;

/* ---- the methods ---- */

typedef struct tforge_rpc_method {
    const char *module;           /* "tforge_worker", "tforge_worker.capture" */
    const char *function;         /* "compile" */
    const char *const *always;    /* the fields every request carries, NULL-terminated */
    const char *const *sometimes; /* the fields a request may carry, NULL-terminated */
} tforge_rpc_method;

/* Every method this file sends, `*n` of them (static, never freed). */
const tforge_rpc_method *tforge_rpc_methods(size_t *n);

/* ---- requests: the text to send (the caller frees it), or NULL with the error set ---- */

/* A candidate as the worker runs it: the strings are borrowed. */
typedef struct tforge_rpc_candidate {
    const char *task;    /* the task file's path */
    const char *config;  /* JSON object text, {name: value} */
    const char *shape;   /* JSON object text, {size: value} */
    const char *variant; /* the kernel file's rewritten text; NULL: the file as it is, or the
                            variant `digest` names, which the worker was sent before */
    const char *digest;  /* the variant's digest (NULL with no variant): the worker keeps its
                            sources and kernels by it */
    const char *dtype;   /* the task's floating inputs' dtype; NULL: the inputs' own */
} tforge_rpc_candidate;

/* load_task(path): the task's normalised manifest. */
char *tforge_rpc_load_task(const char *path);
/* environment(): versions, the GPU, its driver and clocks. */
char *tforge_rpc_environment(void);
/* compile(...): the candidate built (not run), also at `also`'s shapes (JSON object texts, n_also
 * of them) where the GPU will run it. The text is also the compile's key: one candidate, one
 * text. */
char *tforge_rpc_compile(const tforge_rpc_candidate *c, const char *const *also, size_t n_also);
/* run_check(...): run once on fresh inputs drawn from `seed`, compared with the reference; with
 * `both_orders` (a model's proposal) again on other fresh inputs, the candidate run first. */
char *tforge_rpc_run_check(const tforge_rpc_candidate *c, uint64_t seed, int both_orders);
/* time(...): timed on the GPU; with `energy`, then run back to back under the observers
 * (NVML's energy counter), which costs the GPU a window of the counter's updates. */
char *tforge_rpc_time(const tforge_rpc_candidate *c, int energy);
/* profile(...): with the counters of profiler plugin `profiler` (options "KEY=VALUE",
 * NULL-terminated, may be NULL) when `counters`, and the launch's static facts. */
char *tforge_rpc_profile(const tforge_rpc_candidate *c, int counters, const char *profiler,
                         const char *const *options);
/* profile(...) with counters, the profiler also asked to count the launches of the kernel named
 * `kernel` while it profiles (its metric `kernel_launches`): a model's proposal must launch it. */
char *tforge_rpc_profile_launches(const tforge_rpc_candidate *c, const char *profiler,
                                  const char *const *options, const char *kernel);
/* worker.device(): "cuda" or "cpu". */
char *tforge_rpc_device(void);
/* peaks.cached(): the path of the GPU's device file (its peaks, measured on the first call and
 * cached by its name in the user's cache dir). */
char *tforge_rpc_peaks(void);
/* worker.check_task(path, config, variant): the task checked once; `config` (JSON object text)
 * and `variant` may be NULL (the first baseline; the file as it is). */
char *tforge_rpc_check_task(const char *path, const char *config, const char *variant);
/* analyze.analyze(path, kernel): the static analysis of a Triton file (`kernel` NULL: all). */
char *tforge_rpc_analyze(const char *path, const char *kernel);

/* capture.capture's and capture.init's options: `kernel` and `reference` may be NULL. */
typedef struct tforge_rpc_capture_options {
    const char *out, *kernel, *reference;
    int check; /* check each task in the same process */
} tforge_rpc_capture_options;
/* capture.capture(argv, ...): the user's command run with its launches recorded. */
char *tforge_rpc_capture(const char *const *argv, size_t argc,
                         const tforge_rpc_capture_options *o);
/* capture.init(path, ...): a task drafted from one Triton file. */
char *tforge_rpc_init(const char *path, const tforge_rpc_capture_options *o);

/* variants.unified_diff(path, text): the diff from the file at `path` to `text`. */
char *tforge_rpc_unified_diff(const char *path, const char *text);
/* takehome.launch_hook(task, config, text): best_variant.py's hook; `text` may be NULL. */
char *tforge_rpc_launch_hook(const char *task, const char *config, const char *text);
/* takehome.verify(out, task, config, shape, dtype): the take-home files in `out` run as the
 * user does, on inputs of the tuned dtype (NULL: the inputs' own). */
char *tforge_rpc_verify(const char *out, const char *task, const char *config,
                        const char *shape, const char *dtype);
/* proposal.check_answer(answer, kernel, source): a model's answer checked before anything of it
 * runs (its code extracted, parsed, its imports and names against the allow-lists, the kernel's
 * name and parameters kept): {status: ok|refused, source, reason}. */
char *tforge_rpc_check_answer(const char *answer, const char *kernel, const char *source);

/* ---- replies ---- */

typedef struct tforge_rpc_reply {
    tforge_call_status call; /* TFORGE_CALL_OK: an answer came back */
    char detail[256];        /* when not OK: how the process ended */
    /* When OK and the entry point raised: its class's name ("TaskError", "ValueError") and its
     * message; both NULL when it returned. An answer that is no response is kind "garbled". */
    const char *kind, *error;
    struct cJSON *result; /* what it returned (NULL when it raised); owned by the reply */
    struct cJSON *doc;    /* the whole response */
} tforge_rpc_reply;

/* One request to `worker`, waiting at most `timeout_ms`. Returns 0 with `*out` filled (dispose it
 * then, whatever happened), or a negative code for an engine-side failure. */
int tforge_rpc_call(tforge_rpc_reply *out, tforge_worker *worker, const char *request,
                    int timeout_ms);
/* A reply from what tforge_worker_collect gave: `response` may be NULL when `how` is not OK; it
 * is not taken. */
void tforge_rpc_read(tforge_rpc_reply *out, tforge_call_status how, const char *response,
                    const char *detail);
/* Whether the entry point raised an exception of class `kind`. */
int tforge_rpc_raised(const tforge_rpc_reply *reply, const char *kind);
/* "kind: message", as a user is shown what was raised (`buffer` returned). */
const char *tforge_rpc_error_text(const tforge_rpc_reply *reply, char *buffer, size_t size);
void tforge_rpc_reply_dispose(tforge_rpc_reply *reply);

/* ---- what the candidate entry points returned (compile, run_check, time; profile's answer is a
 * document, read as the reply's result) ---- */

/* Every candidate answer's verdict; all zero when the entry point raised or answered nothing. */
typedef struct tforge_rpc_verdict {
    const char *status;  /* "ok", "wrong", "runtime", "compile", "unsupported"...; NULL: none */
    const char *message; /* NULL: none */
    int fatal;           /* the worker's CUDA context is probably lost: replace the process */
} tforge_rpc_verdict;
tforge_rpc_verdict tforge_rpc_verdict_of(const tforge_rpc_reply *reply);

/* compile's resources; NAN where the answer does not say. */
typedef struct tforge_rpc_compiled {
    double registers, spill_stores, shared_bytes;
} tforge_rpc_compiled;
tforge_rpc_compiled tforge_rpc_compiled_of(const tforge_rpc_reply *reply);

/* time's statistics and what its observers saw around a batch of launches (energy.py): joules
 * per launch, mean power, the SM clock; NAN where the answer does not say, and `energy_note`
 * (NULL: none) why there is no energy. */
typedef struct tforge_rpc_timed {
    double median_ms, min_ms, spread, n;
    double energy_j, power_w, sm_clock_mhz;
    const char *energy_note;
} tforge_rpc_timed;
tforge_rpc_timed tforge_rpc_timed_of(const tforge_rpc_reply *reply);

/* What the entry point `function` returned, detached from `reply` (the caller deletes it), or NULL
 * with the error set: a ValueError or TaskError is the input's fault (TFORGE_EINPUT, its message
 * as it is); anything else raised, a crash or a timeout the engine's (TFORGE_ERROR, naming
 * `what`). */
struct cJSON *tforge_rpc_result(tforge_rpc_reply *reply, const char *what, const char *function);

/* One request in a fresh worker process (started with `env`, "KEY=VALUE" entries,
 * NULL-terminated, or NULL), gone when it answers. Returns what the entry point returned (the
 * caller deletes it), or NULL with the error set as tforge_rpc_result sets it. `request` is
 * taken (freed), so a builder's result may be passed as it is (NULL: its error stands). */
struct cJSON *tforge_rpc_fresh(const char *what, char *request, const char *const *env,
                               int timeout_ms);

/* tforge_rpc_fresh for an entry point that returns text (unified_diff, device): the text (the
 * caller frees it), or NULL with the error set, naming `what`, when it is not text. */
char *tforge_rpc_fresh_text(const char *what, char *request, const char *const *env,
                            int timeout_ms);
/* tforge_rpc_fresh with what was returned printed as JSON text (the caller frees it), for a
 * document read as text (the analysis, capture's report). */
char *tforge_rpc_fresh_json(const char *what, char *request, const char *const *env,
                            int timeout_ms);

#endif
