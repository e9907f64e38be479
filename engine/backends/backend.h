/* Backends: what evaluates candidates for the loop. Each is a const type table in a file of its
 * own (as GSL's minimisers are), and the caller runs the loop:
 *   cuda       compile ahead in a pool of CPU workers, then check and time on the GPU worker
 *   interpret  compile for sm_90 in the pool (resources, spills), check in Triton's interpreter
 *              on the CPU; no timing, so no value
 *   compile    compile only (for the GPU there is, else sm_90): which candidates build, with
 *              what registers, spills and shared memory, and how fast the pool compiles
 *   replay     the measurement recorded for the candidate in a recorded space; optionally
 *              checked in the interpreter as well
 * A candidate that fails (does not compile, crashes, hangs, computes wrong) is a measurement with
 * a status, never an error of the backend; an error means the backend cannot answer honestly
 * (a replayed candidate the recording lacks, a lost worker pool). Profiles (static metrics,
 * and counters where there are any) are asked for separately, for the candidates worth it. A
 * timed backend measures (times, and the metrics it has: energy, power, clocks); the objective, a
 * cost model (costmodel.h), scores each of its measurements here, before the loop sees it. */
#ifndef TFORGE_ENGINE_BACKEND_H
#define TFORGE_ENGINE_BACKEND_H

#include "costmodel.h"
#include "digest.h"
#include "recording.h"
#include "replay.h"
#include "task.h"
#include "tforge/measurement.h"
#include "tforge/plugin/profile.h"
#include "tforge/space.h"

#include <stddef.h>
#include <stdint.h>

/* What is evaluated: a point of the loop's space, or one of the task's own configs (a
 * baseline), which may lie outside the space and so travels as the task's text. A baseline
 * inside the space has both. Its identity is its point (or config) and the digest of its
 * variant's source: the transforms' rewrite of the kernel file at its point, the file as it is,
 * or a source no transform made (a model's proposal). */
typedef struct tforge_candidate {
    const tforge_level *point; /* the space's dims levels, or NULL */
    const char *config;        /* the task's JSON object text, or NULL (then from the point) */
    unsigned without;          /* 0, or 1 + a transform left out of the point's variant (the
                                  report's what-each-transform-is-worth) */
    const char *source;        /* the variant's source when no transform made it, else NULL */
    /* Its identity, set by tforge_backend_identify, where its variant is made once: the digest
     * of its variant's source and that source (the kernel file as it is, the transforms'
     * rewrite, or `source`; allocated), or, when the transforms' edits do not compose, why
     * (allocated; a failed candidate, digest ""). All empty before, and where the backend knows
     * no sources (a replay). A backend evaluates an identified candidate as it is identified;
     * tforge_candidate_forget frees the texts. */
    char digest[TFORGE_DIGEST_SIZE];
    char *variant;
    char *unmade;
} tforge_candidate;

#define TFORGE_BACKEND_ARGS_VERSION 2
typedef struct tforge_backend_args {
    unsigned version;
    const tforge_task *task;           /* NULL only for replay without checks (the lab) */
    const tforge_space *space;         /* the space the points are of */
    const tforge_recording *recording; /* replay: the recorded space */
    const tforge_replay *replay;       /* replay: its index, when the caller has one open */
    int check;                         /* replay: also check every candidate in the interpreter */
    int noise;                         /* replay: values drawn from the recorded runs */
    uint64_t noise_seed;
    unsigned compile_workers;
    size_t shape; /* index into the task's tune shapes */
    int compile_timeout_ms, check_timeout_ms, time_timeout_ms;
    /* cuda: the GPU worker's profiler plugin for counters (NULL: "cupti") and its options,
     * "KEY=VALUE" texts, NULL-terminated (NULL: its defaults) */
    const char *profiler;
    const char *const *profiler_options;
    /* since 2: the objective that scores a timed backend's measurements (lent, outlives the
     * backend). NULL: none, the backend's value stands (a replay's recorded objective, a test's
     * fake); the cuda backend's measurements then have none */
    tforge_costmodel *objective;
} tforge_backend_args;
#define TFORGE_BACKEND_ARGS_INIT                                                                  \
    {TFORGE_BACKEND_ARGS_VERSION, NULL, NULL, NULL, NULL, 0, 0, 0, 4, 0, 60000, 600000, 120000,  \
     NULL, NULL, NULL}

typedef struct tforge_backend_type {
    const char *name;
    int timed; /* 1 when it times: the objective scores its measurements */
    /* Everything `args` points to outlives the state. */
    int (*open)(void **state, const tforge_backend_args *args);
    /* Evaluates `n` candidates into `out` (compiled in parallel where the backend compiles). */
    int (*evaluate)(void *state, const tforge_candidate *candidates, size_t n,
                    tforge_measurement *out);
    /* Times one candidate again; `seed` draws a recorded run where the backend replays. */
    int (*retime)(void *state, const tforge_candidate *candidate, uint64_t seed,
                  tforge_measurement *out);
    /* Profiles one candidate (evaluated before, `measured` its measurement) into `out`: the
     * static metrics always (profile.h: the compile's resources, the device's rules, the grid,
     * the task's bytes and flops), the counters too when `counters` is set and the backend has
     * them (a profiler on the GPU, or a recording's). NULL for a backend that cannot profile. */
    int (*profile)(void *state, const tforge_candidate *candidate,
                   const tforge_measurement *measured, int counters, tforge_profile *out);
    /* Worker processes replaced after a crash or a hang. */
    unsigned (*restarts)(const void *state);
    void (*close)(void *state);
    /* Optional (NULL where nothing is done ahead): starts compiling candidates that an evaluate
     * will ask for soon (the loop's next batch, proposed while this one runs), so that the GPU
     * need not wait for their compiles. Never evaluated, they cost only compile time. */
    int (*prepare)(void *state, const tforge_candidate *candidates, size_t n);
    /* Optional (NULL where candidates have no source: replay): makes the candidate's variant and
     * sets its identity (the digest and the source, or why it cannot be made). */
    int (*identify)(void *state, tforge_candidate *candidate);
} tforge_backend_type;

extern const tforge_backend_type tforge_backend_cuda;
extern const tforge_backend_type tforge_backend_interpret;
extern const tforge_backend_type tforge_backend_compile;
extern const tforge_backend_type tforge_backend_replay;

/* Whether `objective` scores the recording at all: 0 once a configuration that ran has a value;
 * else TFORGE_EINPUT saying what the objective misses (its own words: "no energy_j measured")
 * and what the recording holds, rather than a replay whose every value is NAN. The replay
 * backend asks it when opened with an objective. */
int tforge_replay_check_objective(const tforge_replay *replay, tforge_costmodel *objective);

/* The shipped type of that name, or NULL. */
const tforge_backend_type *tforge_backend_find(const char *name);

/* Where an open backend's evaluations run instead of its own evaluate: a sweep's other MPI
 * ranks, each with a backend of the same task, shape and settings. The candidates come
 * identified; identify, prepare, retime and profile stay with the backend here (so a winner is
 * re-timed with its baseline on one device). */
typedef struct tforge_backend_elsewhere {
    /* [loop thread] NULL: evaluate here; `space` is the one the points are of */
    int (*evaluate)(void *context, const tforge_space *space, const tforge_candidate *candidates,
                    size_t n, tforge_measurement *out);
    void *context;
    const tforge_space *space; /* set by whoever opens the backend */
} tforge_backend_elsewhere;

/* An open backend: its type, its state, the objective that scores its measurements, and where
 * it evaluates (zero: here). */
typedef struct tforge_backend {
    const tforge_backend_type *type;
    void *state;
    tforge_costmodel *objective; /* lent; NULL: none */
    tforge_backend_elsewhere elsewhere;
} tforge_backend;

int tforge_backend_open(tforge_backend *out, const tforge_backend_type *type,
                        const tforge_backend_args *args);
int tforge_backend_evaluate(tforge_backend *backend, const tforge_candidate *candidates, size_t n,
                            tforge_measurement *out);
int tforge_backend_retime(tforge_backend *backend, const tforge_candidate *candidate,
                          uint64_t seed, tforge_measurement *out);
/* TFORGE_ENOTFOUND (nothing set) when the backend cannot profile. */
int tforge_backend_profile(tforge_backend *backend, const tforge_candidate *candidate,
                           const tforge_measurement *measured, int counters, tforge_profile *out);
unsigned tforge_backend_restarts(const tforge_backend *backend);
/* Asks the backend to start work ahead (its compiles) where it does any; 0 otherwise. */
int tforge_backend_prepare(tforge_backend *backend, const tforge_candidate *candidates, size_t n);
/* The candidate's identity (its fields digest, variant and unmade), over whatever it had; all
 * empty where the backend knows no sources. */
int tforge_backend_identify(tforge_backend *backend, tforge_candidate *candidate);
/* Frees the texts of the candidate's identity and empties it. */
void tforge_candidate_forget(tforge_candidate *candidate);
/* A backend never opened (type NULL) is allowed. */
void tforge_backend_close(tforge_backend *backend);

#endif
