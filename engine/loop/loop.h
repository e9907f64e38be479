/* The one loop: ask -> evaluate -> record -> tell, for `tune`, `replay` (the strategy lab) and,
 * later, MPI ranks. Baselines first (told to the strategy when they lie in the space), then the
 * strategy's proposals in batches, every evaluation committed to the store before the strategy
 * hears of it; a run resumed from the store is told its stored evaluations again instead of
 * evaluating them, and must propose the same points. A new best must beat the incumbent by more
 * than the measured noise, and the final top few are re-timed in interleaved rounds with the
 * best baseline before the winner is named. A steer (the profile-guided loop) hears of each
 * batch and each new incumbent between a tell and the next ask; patience ends the search early. A companion
 * strategy may propose first, for a share of each batch that grows while it leads (forge's rule
 * moves). */
#ifndef TFORGE_ENGINE_LOOP_H
#define TFORGE_ENGINE_LOOP_H

#include "backend.h"
#include "recording.h"
#include "registry.h"
#include "store.h"
#include "strategy.h"

/* What a stored run had evaluated, in order (tforge_run_open fills it). */
typedef struct tforge_run_history {
    size_t n, cap;
    char **keys;
    tforge_measurement *measurements;
} tforge_run_history;
void tforge_run_history_dispose(tforge_run_history *history);

/* Where a run is recorded: the store, the run, and the description of its space (recording
 * parameter p is dimension p, value l its level l; stored with the run, so that it exports as a
 * recording). */
typedef struct tforge_run_record {
    tforge_store *store;
    int64_t run_id;
    const tforge_recording *space;
    /* May be NULL: what a stored row holds beyond the measurement (a replayed entry's individual
     * runs, so that an exported run keeps them), as a JSON object text it allocates (NULL for
     * nothing); the row's metrics column then holds it. */
    int (*extras)(void *context, const tforge_candidate *candidate, char **json);
    void *extras_context;
} tforge_run_record;

/* A candidate's key in the store and (when `params` is not NULL) its parameters as a JSON
 * object text, both allocated: the space's texts of its point (tforge_space_key, _json), else a
 * baseline's own config text; "KEY@DIGEST" for a candidate with a source of its own
 * (`own_digest`, else NULL), which the same point's variant is not. */
int tforge_loop_key(char **key, char **params, const tforge_space *space,
                    const tforge_level *point, const char *config, const char *own_digest);

/* Opens the stored run that `like` describes (source, strategy, settings, seed, budget, space,
 * environment) and reads what it had evaluated into `history`:
 *   TFORGE_RUN_EXACT  the latest run with the same source, strategy, settings, seed and budget,
 *                     else a new one (the lab: each seed of each strategy is a run of its own)
 *   TFORGE_RUN_RESUME the latest run of the same source; refused, naming the setting, when any of
 *                     those differ; a new one when there is none
 *   TFORGE_RUN_NEW    always a new run */
typedef enum tforge_run_mode {
    TFORGE_RUN_NEW,
    TFORGE_RUN_EXACT,
    TFORGE_RUN_RESUME
} tforge_run_mode;
int tforge_run_open(int64_t *run_id, tforge_run_history *history, tforge_store *store,
                    const tforge_store_run *like, tforge_run_mode mode);

/* The first key whose values differ between two settings documents (JSON objects; NULL reads as
 * {}): the stored one's keys in their order, then those only `now_json` has. Fills `key` and
 * both values as a refusal shows them (a string as itself, anything else as JSON, a missing key
 * as "(none)"; `was` and `now` hold `size` bytes each). 1 when a key differs, 0 when none does,
 * -1 when either is not a JSON object. */
int tforge_run_settings_difference(char *key, size_t key_size, char *was, char *now,
                                   size_t size, const char *was_json, const char *now_json);

typedef struct tforge_loop_eval {
    tforge_level *point;  /* owned; NULL for a baseline outside the space */
    char *config;         /* owned; a baseline's task text, else NULL (a caller may set it for
                             its reports: it is freed with the outcome) */
    char digest[TFORGE_DIGEST_SIZE]; /* its variant source's digest, "" where unknown */
    char *source;         /* owned; its source when no transform made it, else NULL */
    int baseline;         /* 1 for the task's baselines */
    int resumed;          /* 1 when taken from the stored run */
    tforge_measurement m;
    double best;          /* the incumbent after this evaluation (noise rule; NAN before any) */
    double best_plain;    /* the plain minimum of the candidates' ok values so far */
    double elapsed_s;     /* since the start */
    int incumbent;        /* 1 when it became the incumbent (see tforge_loop_steer) */
    double lower;         /* its speed-of-light bound (tforge_loop_bound), NAN when unknown */
    int pruned;           /* 1 when its bound could not beat the incumbent: it was not run */
    int suspect;          /* 1 when it was timed under its bound twice (tforge_loop_bound) */
} tforge_loop_eval;

/* Where the loop's wall time went, each second in one phase: the baselines' evaluation, the
 * steer (profiling and classifying incumbents), the strategies (proposing, being told), the
 * candidates' evaluation (waiting for compiles, checking, timing), the final re-timing.
 * compile_s sums the evaluations' compile times (as the backend reports them: the replay
 * backend's are recorded ones): with lookahead they overlap the rest. */
typedef struct tforge_loop_seconds {
    double baselines_s, steer_s, search_s, candidates_s, final_s, compile_s;
} tforge_loop_seconds;

typedef struct tforge_loop_outcome {
    tforge_loop_eval *evals;
    size_t n_evals, n_resumed, cap;
    /* after the final interleaved re-timing; -1 when nothing could be timed */
    long best, baseline; /* indexes into evals */
    double best_ms, baseline_ms, speedup;
    unsigned restarts;
    double seconds;
    tforge_loop_seconds split;
    int64_t run_id; /* the stored run, 0 when nothing is stored */
    size_t n_pruned;  /* candidates this run did not run: their bound could not win */
    size_t n_suspect; /* candidates timed under their bound twice: never trusted */
    int sol_stopped;  /* 1 when the search stopped at the speed of light (stop_percent) */
} tforge_loop_outcome;
void tforge_loop_outcome_dispose(tforge_loop_outcome *outcome);

/* What steers the search (the profile-guided loop, forge.h): told of each batch once it is
 * told to the strategies (the baselines first), then of the incumbent once the baselines are
 * told and again each time it changes, before the next ask; it may hand the strategy a prior.
 * The incumbent is the evaluation that beat every earlier one by more than the noise of both
 * (the best baseline until a candidate beats it; on an untimed backend the first that ran
 * correctly). Either callback may be NULL; an error from one ends the loop. */
typedef struct tforge_loop_steer {
    void *context;
    /* `incumbent` indexes out->evals; `strategies` are the loop's (the strategy, then its
     * companion if there is one). */
    int (*incumbent)(void *context, tforge_strategy *const *strategies, size_t n_strategies,
                     const tforge_loop_outcome *out, size_t incumbent);
    /* The batch: out->evals[first .. first + n), resumed ones included (their `resumed` set). */
    int (*evaluated)(void *context, const tforge_loop_outcome *out, size_t first, size_t n);
    /* The space grew (tforge_loop_grow): `space` is the one the points are of from now on (the
     * old one may be freed), told before the strategies reopened over it hear of anything. */
    int (*grown)(void *context, const tforge_space *space);
} tforge_loop_steer;

/* The speed-of-light bound on candidates (the roofline cost model over the device's measured
 * peaks, engine/profile/sol.h), in the objective's unit. A candidate whose bound cannot beat the
 * incumbent by more than `margin` (tforge_sol_prunes) is not run: it is recorded and told to the
 * strategies as refused by a constraint, with a message giving both, and counted; baselines and
 * a resumed run's evaluations are never pruned. The search stops once the incumbent reaches
 * `stop_percent` of its own bound's speed (tforge_sol_percent; 0: never).
 * A candidate measured faster than its bound by more than `margin` is impossible (a kernel that
 * skipped work the check did not look at, returned a cached output, or a lying timer): it is
 * re-timed once, and the re-timed value kept if it is no longer under; still under, it is never
 * trusted: status wrong, with a message giving the bound and both times and the metrics
 * TFORGE_LOOP_SUSPECT_MS (the time first measured), TFORGE_LOOP_SUSPECT_BOUND and
 * TFORGE_LOOP_SUSPECT_RETIMED_MS, which mark it in the store too (a resumed run's `suspect` is
 * read from them); so it is never the incumbent nor the winner, and the strategies learn it as a
 * failure. Baselines are not checked: the user's own kernel under its bound says the device
 * file is wrong, not the kernel. */
#define TFORGE_LOOP_SUSPECT_MS "suspect_ms"
#define TFORGE_LOOP_SUSPECT_BOUND "suspect_bound"
#define TFORGE_LOOP_SUSPECT_RETIMED_MS "suspect_retimed_ms"

typedef struct tforge_loop_bound {
    void *context;
    /* The candidate's lower bound, NAN where unknown. [loop-thread] */
    double (*lower)(void *context, const tforge_candidate *candidate);
    double margin;
    double stop_percent;
} tforge_loop_bound;

/* The space grows during the run (a model's proposal, a new level of the task's `variant`):
 * asked when patience is reached with budget left, instead of stopping. It sets `*space` to the
 * space grown (the same dimensions, every earlier point at the same levels: a categorical
 * dimension with a level more), or to NULL to let the search end; or, leaving `*space` NULL,
 * sets `*go_on` to let the search go on as it is, the count towards patience started again (not
 * now: forge's moves still address the incumbent's bottleneck). A strategy that has nothing
 * left to propose is a stall too (there `go_on` ends the search: nothing is left to go on with). The space the loop ran over
 * may be freed by then: the loop uses only the new one. The strategies are then opened again
 * over it (the rest of the budget theirs), told every evaluation so far (none evaluated again),
 * the count towards patience starts again and the search goes on: first with the incumbent's
 * point at the new level (where it is valid), on its own, then with the strategies' proposals. A resumed run grows where the
 * stored one did, so that it proposes the same points. */
typedef struct tforge_loop_grow {
    void *context;
    /* `incumbent` indexes out->evals, -1 when there is none. */
    int (*grow)(void *context, const tforge_loop_outcome *out, long incumbent,
                const tforge_space **space, int *go_on);
} tforge_loop_grow;

#define TFORGE_LOOP_OPTIONS_VERSION 5
typedef struct tforge_loop_options {
    unsigned version;
    const char *strategy;
    const char *const *strategy_options; /* "key=value", NULL-terminated; may be NULL */
    uint64_t seed;
    uint32_t budget;       /* candidates, baselines not counted */
    double time_limit_s;   /* the search's: from the first proposal, after the baselines were
                              measured and profiled (at least one batch runs); 0: none */
    uint32_t batch;        /* candidates asked at once */
    uint32_t final_top, final_rounds; /* re-timing at the end; 0 rounds: none */
    const tforge_candidate *baselines; /* evaluated first; may be NULL */
    size_t n_baselines;
    const tforge_run_record *record;      /* NULL: nothing is stored */
    const tforge_run_history *history;    /* a resumed run's evaluations; may be NULL */
    int progress;          /* a live line on standard error */
    const tforge_loop_steer *steer; /* NULL: nothing steers */
    uint32_t patience;     /* stop after this many candidates without a new incumbent; 0: never */
    /* A second strategy that proposes first in each batch (forge: rules' moves among bo's),
     * the strategy the rest: the whole batch at the start and after each batch in which one of
     * its points became the incumbent; its share halves after each batch in which none did,
     * down to `companion_share`. It may answer fewer, or none, without ending the search. Both
     * are told every result, and the steer hands both its prior. NULL: none. */
    const char *companion;
    const char *const *companion_options;
    double companion_share;
    /* 1: each batch's successor is proposed, and handed to the backend's prepare (its compiles
     * start), before the batch is evaluated, so that the GPU need not wait for the compilers;
     * the strategies then hear of each batch one proposal later. The proposals still depend
     * only on what was told, so a resumed run proposes the same points. */
    int lookahead;
    const tforge_loop_bound *bound; /* NULL: no bound (nothing pruned, no stop at it) */
    const tforge_loop_grow *grow;   /* NULL: patience ends the search */
} tforge_loop_options;
#define TFORGE_LOOP_OPTIONS_INIT                                                                  \
    {TFORGE_LOOP_OPTIONS_VERSION, "random", NULL, 1, 50, 0, 1, 3, 5, NULL, 0, NULL, NULL, 0,      \
     NULL, 0, NULL, NULL, 0, 0, NULL, NULL}

/* Runs the loop over `space` with `backend`. A strategy that proposes an invalid or an already
 * evaluated point is an error that names it; so is a failed final re-timing. */
int tforge_loop_run(tforge_loop_outcome *out, const tforge_registry *registry,
                    const tforge_space *space, tforge_backend *backend,
                    const tforge_loop_options *options);

#endif
