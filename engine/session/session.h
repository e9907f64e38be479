/* A tune session: everything `tforge tune` does between parsing its arguments and printing.
 * The task loaded (its worker, analysis and space), then for each tuning shape asked for: the
 * backend chosen, the transforms opened, the run begun (or resumed) in the store, the baselines
 * and the search with its lookahead, the final re-timing, the winner's profile and its
 * transforms' worth, its files re-run as the user runs them, and the results folder written
 * (result.json with its seconds split, best_config.py, best_variant.py, report.md); with every
 * shape, summary.json. The session prints nothing: what a caller shows, it learns from the
 * events. */
#ifndef TFORGE_ENGINE_SESSION_H
#define TFORGE_ENGINE_SESSION_H

#include "backend.h"
#include "registry.h"

#include <stddef.h>
#include <stdint.h>

enum { TFORGE_TUNE_ALL_SHAPES = -1 };

/* Where one shape's wall time went (result.json's "seconds_split"). */
typedef struct tforge_tune_seconds {
    double load_task, setup, baselines, profile, search, candidates, final_retiming, winner;
    double compile_summed; /* the compiles' own times summed: they overlap the rest */
} tforge_tune_seconds;

/* One shape's run. Strings are owned by the outcome. */
typedef struct tforge_tune_shape {
    size_t shape;       /* its index into the task's tuning shapes */
    char *shape_json;   /* the shape, a JSON object text */
    int rc;             /* 0, or the code it failed with */
    char *dir;          /* its results folder */
    char *backend;      /* the backend's name as chosen ("cuda", "replay:FILE", ...) */
    const tforge_backend_type *backend_type;
    int check;          /* replay: every candidate checked in the interpreter too */
    char *result_json;  /* result.json's text, NULL when the run failed before writing it */
    size_t n_evals, n_ok;
    double seconds;     /* the loop's */
    double baseline_ms, best_ms, speedup; /* 0, 0, NAN when nothing was tuned; in `unit` */
    char unit[16];      /* the objective's unit: "ms", or "J" under energy */
    char *best_config;  /* the winner's config text, NULL: none */
    char *rewrites;     /* the winner's rewrite parameters when it rewrites the kernel, or NULL */
    double busy;        /* the runner's busy share after the first batch, NAN: no second batch */
    tforge_tune_seconds split;
} tforge_tune_shape;

typedef struct tforge_tune_outcome {
    char *kernel;
    char *dir;          /* the results folder (with every shape: each in DIR/shape-I/) */
    size_t n_shapes;    /* those tuned, in order */
    tforge_tune_shape *shapes;
    char *summary_json; /* with every shape: summary.json's text, else NULL */
    size_t n_speedups;  /* with every shape: those that have a speedup, and their geometric mean */
    double geomean_speedup;
} tforge_tune_outcome;
void tforge_tune_outcome_dispose(tforge_tune_outcome *outcome);

typedef enum tforge_tune_event_kind {
    TFORGE_TUNE_BACKEND_CHOSEN, /* "auto" decided: `backend` ("cuda", "replay" with
                                   `replay_file`, or "interpret") */
    TFORGE_TUNE_SHAPE_BEGIN,    /* a shape's run starts (with every shape only) */
    TFORGE_TUNE_ABLATING,       /* the winner's transforms are each left out and re-timed */
    TFORGE_TUNE_SHAPE_DONE,     /* its results are written: `result` */
    TFORGE_TUNE_FAILED,         /* a failure, tforge_error_last() says which: a shape's
                                   (`result` set; with every shape the next one still runs)
                                   or the session's (`result` NULL) */
    TFORGE_TUNE_SUMMARY         /* with every shape, before summary.json is written: `outcome` */
} tforge_tune_event_kind;

typedef struct tforge_tune_event {
    tforge_tune_event_kind kind;
    const tforge_tune_outcome *outcome; /* so far */
    const tforge_tune_shape *result;    /* the shape it concerns, or NULL */
    const char *backend, *replay_file;  /* TFORGE_TUNE_BACKEND_CHOSEN */
} tforge_tune_event;

#define TFORGE_TUNE_OPTIONS_VERSION 4
typedef struct tforge_tune_options {
    unsigned version;
    const char *task;                  /* the task file */
    const tforge_registry *registry;   /* the plugins, loaded by the caller */
    /* "auto" (cuda where a worker sees a GPU, else the shipped recording of the task's shape
     * replayed with checks, else interpret), "cuda", "interpret", "compile", "replay:FILE" */
    const char *backend;
    const tforge_backend_type *backend_type; /* NULL: the one `backend` names; else this type,
                                                `backend` its name in the documents (tests) */
    int check;                         /* replay: check every candidate in the interpreter too */
    const char *strategy;              /* NULL: forge on cuda (bo without its heuristic), else bo */
    const char *const *strategy_options; /* "KEY=VALUE", NULL-terminated (at most 64), or NULL */
    const char *heuristic;             /* steers forge and rules */
    int counters;                      /* forge's and rules' profiles with counters */
    const char *const *profiler_options; /* "KEY=VALUE", NULL-terminated, or NULL */
    int profile_all;                   /* profile every correct candidate, not only incumbents */
    const char *transforms;            /* "all", "none" or "ID,ID" */
    const char *const *transform_options; /* "ID.KEY=VALUE", NULL-terminated, or NULL */
    const char *const *constraints;    /* more constraints over any dimension, the transforms'
                                          included ("split_k <= 4"), NULL-terminated, or NULL */
    uint32_t budget, patience;         /* patience 0: never stop early */
    double time_limit_s;               /* 0: none */
    uint64_t seed;
    uint32_t batch;                    /* 0: the compile workers, at most 4 (replay: 1) */
    uint32_t compile_workers;          /* 0: the CPU cores */
    int lookahead;                     /* propose the next batch while this one runs */
    uint32_t timeout_s;                /* a candidate's each step; 0: the backend's defaults */
    long shape;                        /* a tuning shape, or TFORGE_TUNE_ALL_SHAPES */
    const char *out;                   /* NULL: tforge-out/<kernel> */
    int resume;                        /* continue the run stored in the folder */
    int progress;                      /* the loop's progress line on stderr */
    /* [caller's thread] told of each step as it happens; may be NULL */
    void (*on_event)(void *user, const tforge_tune_event *event);
    void *user;
    /* The speed-of-light bound: the device file of the device's measured peaks (NULL: the GPU's,
     * measured once and cached; a replayed recording's device.json beside it), and the percent
     * of it at which the search stops (0: never). Candidates that cannot win are not run. */
    const char *device_file;
    double sol_stop;
    /* since 2: the cost model minimised, an id of the registry ("energy", "edp"); NULL: the
     * built-in latency */
    const char *objective;
    /* Where the candidates are evaluated (a sweep's ranks: backend.h); zero: here. */
    tforge_backend_elsewhere elsewhere;
    /* May be NULL: what each stored evaluation's row holds beyond its measurement (the device
     * it ran on), as loop.h's tforge_run_record.extras, called with elsewhere.context. */
    int (*extras)(void *context, const tforge_candidate *candidate, char **json);
    /* A language model's rewrites (engine/session/llm_grow.h): the "tforge.llm/1" plugin `llm`
     * with its "KEY=VALUE" options, asked when the incumbent stalls for `patience` candidates
     * (TFORGE_TUNE_LLM_PATIENCE when 0), at most `llm_budget` times; each request stored by its
     * digest. `llm_replay`: the answers from the store alone (`llm` NULL: no plugin at all).
     * NULL and 0: nothing changes. */
    const char *llm;
    const char *const *llm_options;
    uint32_t llm_budget;
    int llm_replay;
    /* since 4: the dtype the task's floating inputs are made in, one of its `dtypes`; NULL: its
     * first (the inputs' own where it declares none) */
    const char *dtype;
} tforge_tune_options;
#define TFORGE_TUNE_LLM_PATIENCE 10
/* Every field not named here is 0 or NULL. */
#define TFORGE_TUNE_OPTIONS_INIT                                                                  \
    {.version = TFORGE_TUNE_OPTIONS_VERSION, .backend = "auto", .heuristic = "bottleneck",        \
     .counters = 1, .transforms = "all", .budget = 50, .seed = 1, .lookahead = 1, .sol_stop = 95,  \
     .llm_budget = 3}

/* The backend type `text` names ("auto" names cuda, decided once a worker has looked for a GPU),
 * `*replay_file` the file of "replay:FILE" (else NULL); NULL for a name no backend has. */
const tforge_backend_type *tforge_tune_backend(const char *text, const char **replay_file);

/* Runs the session. `*out` is set in any case (dispose it): the shapes run so far. Returns 0
 * when every shape tuned (a run with no correct evaluation, or a failed baseline, did not),
 * else the last failure's code. Each failure is told as a TFORGE_TUNE_FAILED event, except
 * options of another version (TFORGE_EINPUT, nothing run: their callback may lie elsewhere). A
 * shape that fails for its input (TFORGE_EINPUT, TFORGE_ENOTFOUND, TFORGE_EABI) stops the
 * session: the task is wrong. */
int tforge_tune_run(const tforge_tune_options *options, tforge_tune_outcome *out);

/* What evaluates one shape's candidates as that shape's tune would (a sweep's rank): the task
 * loaded, `options->shape` selected, the transforms opened and the backend opened with the
 * arguments the tune's own has, so that a point means the same variant. Nothing is stored. */
typedef struct tforge_tune_evaluator tforge_tune_evaluator;
int tforge_tune_evaluator_open(tforge_tune_evaluator **out, const tforge_tune_options *options);
const tforge_space *tforge_tune_evaluator_space(const tforge_tune_evaluator *evaluator);
/* The GPU's name as its worker saw it, or "cpu". */
const char *tforge_tune_evaluator_device(const tforge_tune_evaluator *evaluator);
/* Identifies the candidates (their variants made here) and evaluates them into `out`. */
int tforge_tune_evaluator_evaluate(tforge_tune_evaluator *evaluator, tforge_candidate *candidates,
                                   size_t n, tforge_measurement *out);
void tforge_tune_evaluator_close(tforge_tune_evaluator *evaluator);

#endif
