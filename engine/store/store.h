/* The results store: one SQLite file holding tuning runs and every evaluation they made.
 *
 * Durability: WAL journal, synchronous=NORMAL, one transaction per recorded evaluation. A
 * process killed at any moment loses at most the evaluation it was recording; a resumed run
 * lists what is there (in sequence order) and tells it again to its strategy. Several processes
 * may open the same file; writers wait for each other (busy timeout). A store object serves
 * one thread at a time, and is not carried across fork().
 *
 * Schema, version 5 (PRAGMA user_version; a newer file is refused, an older one upgraded):
 *   runs            id, created (UTC, ISO 8601), source (task or file), space (JSON), strategy,
 *                   settings (JSON), seed, budget, environment (JSON: GPU, driver, clocks,
 *                   versions, host; written as given, never interpreted), inputs (digests
 *                   of the input files), writer and heartbeat (the lease of its one writer)
 *   configurations  id, run_id, key (the point's values "v1,v2,..." in the run's space, as a
 *                   Kernel Tuner cache keys them), params (JSON); unique per run and key
 *   measurements    id, run_id, configuration_id, seq (1, 2, ... per run), status (one of
 *                   TFORGE_STATUS_NAMES), median, min, spread,
 *                   repeats, compile_ms, wall_ms, metrics (JSON), timestamp
 *   profiles        each candidate profiled (the baseline, each new incumbent) after a measurement
 *   sources         each variant's source text once, by its digest
 *   llm_requests    id, digest (of the request: engine/llm/door.h), occurrence (0, 1, ... for
 *                   the same request asked again), model, system, user, answers asked, seed,
 *                   seconds (the wall time of asking), timestamp; unique per digest and
 *                   occurrence
 *   llm_answers     request_id, idx, text or error (exactly one), prompt_tokens,
 *                   completion_tokens, seconds
 * JSON columns are checked with json_valid(). SQLite is used in store.c only. */
#ifndef TFORGE_ENGINE_STORE_H
#define TFORGE_ENGINE_STORE_H

#include "recording.h"
#include "tforge/measurement.h"
#include "tforge/plugin/llm.h"

#include <stdint.h>

typedef struct tforge_store tforge_store;

/* A run. Strings may be NULL where noted; those filled by tforge_store_find_run are owned by
 * the struct until tforge_store_run_dispose. */
typedef struct tforge_store_run {
    int64_t id;             /* set by the store */
    char *created;          /* set by the store */
    char *source;           /* the task or file tuned; required */
    char *space_json;       /* the space description, or NULL */
    char *strategy;         /* the strategy's id, or NULL */
    char *settings_json;    /* the strategy's settings, or NULL */
    uint64_t seed;
    uint32_t budget;
    char *environment_json; /* or NULL */
    char *inputs;           /* digests of the run's input files (base/digest.h's lines), or NULL */
} tforge_store_run;

/* One evaluation as the store keeps it: the configuration's key and parameters, and the
 * measurement. To record one, fill key, params_json and m (ids and `sequence` are ignored).
 * Columns: median <- m.value (the objective; a recording's time as recorded), min <- m.min_ms,
 * spread, repeats, compile_ms, wall_ms; metrics <- metrics_json when given (an imported
 * recording's extras), else m's metrics. Reading back fills m (median_ms = value) and its
 * numeric metrics. Strings read back are valid only during the visit. */
typedef struct tforge_store_measurement {
    int64_t id;
    int64_t configuration_id;
    int64_t sequence;
    const char *key;          /* derived from the point's levels (or a baseline's own text) */
    const char *params_json;  /* the configuration, {"name": value}; kept from its first sight */
    const char *digest;       /* its variant source's digest, or NULL; kept from its first sight */
    const char *source;       /* when recording: that source's text, kept once by digest (or
                                 NULL: kept already, or unknown); never set when read back */
    tforge_measurement m;
    const char *metrics_json; /* or NULL */
    const char *timestamp;    /* UTC, ISO 8601; NULL when recording means now */
} tforge_store_measurement;

/* Returns 0 to go on; anything else stops the walk and is returned. */
typedef int (*tforge_store_visit)(void *context, const tforge_store_measurement *measurement);

/* Opens or creates the file and its schema. */
int tforge_store_open(tforge_store **out, const char *path);
/* Opens a store that exists, to read it (an export): creates no file. A missing file is
 * TFORGE_ENOTFOUND, one that is not a regular file or not a tforge store TFORGE_EINPUT, both
 * naming it. Read-only, except that a store of an older schema version is first upgraded in
 * place, as tforge_store_open does. Runs cannot be begun, claimed or recorded in it. */
int tforge_store_open_existing(tforge_store **out, const char *path);
/* Ends the leases this process holds (tforge_store_claim). NULL is allowed. */
void tforge_store_close(tforge_store *store);

/* Starts a run; `run->id` and `run->created` are ignored. */
int tforge_store_begin_run(int64_t *run_id, tforge_store *store, const tforge_store_run *run);
/* Fills `run` (TFORGE_ENOTFOUND when there is none); free its strings with _dispose. */
int tforge_store_find_run(tforge_store_run *run, tforge_store *store, int64_t run_id);
void tforge_store_run_dispose(tforge_store_run *run);
/* The latest run with the same source, strategy, settings, seed and budget as `like` (the rest
 * is not compared): how an interrupted run is found again. TFORGE_ENOTFOUND when none. */
int tforge_store_find_run_like(int64_t *run_id, tforge_store *store,
                               const tforge_store_run *like);
/* The latest run of `source`, whatever its settings. TFORGE_ENOTFOUND when none. */
int tforge_store_find_latest(int64_t *run_id, tforge_store *store, const char *source);

/* One writer per run: claim makes this process the run's writer (a lease in its row, renewed by
 * every record, released when the store is closed or lapsing with its process) and refuses,
 * naming the holder, a run another live process writes. A run nobody claimed may be recorded
 * freely; one claimed by another live process may not. */
int tforge_store_claim(tforge_store *store, int64_t run_id);

/* Records one evaluation in one transaction: its configuration is created on first sight, the
 * measurement gets the run's next sequence number (returned in `sequence`, which may be NULL). */
int tforge_store_record(int64_t *sequence, tforge_store *store, int64_t run_id,
                        const tforge_store_measurement *measurement);

/* Keeps `text`, a variant's source, by its `digest` (once: kept already, nothing changes), in a
 * transaction of its own: a model's proposal, kept as it is accepted, so that a resumed run
 * finds it whatever was evaluated of it. */
int tforge_store_keep_source(tforge_store *store, const char *digest, const char *text);

/* The text of the variant source of `digest`, allocated (the caller frees it);
 * TFORGE_ENOTFOUND when the store has none. */
int tforge_store_source(char **text, tforge_store *store, const char *digest);

/* Visits a run's measurements in sequence order. */
int tforge_store_each_measurement(tforge_store *store, int64_t run_id, tforge_store_visit visit,
                                  void *context);
int tforge_store_count(int64_t *count, tforge_store *store, int64_t run_id);

/* A profile of one configuration (include/tforge/plugin/profile.h), as the store keeps it: JSON
 * texts, so that the store needs no profile code. To record one, fill key, params_json (the
 * configuration, created on first sight), counters (a tforge_counters_state), note,
 * metrics_json ({"sm_pct": 41.2, ...}) and labels_json (the heuristic's labels as an array, or
 * NULL); it follows the run's latest measurement (`sequence`, set when read back). Strings read
 * back are valid only during the visit. */
typedef struct tforge_store_profile {
    const char *key;
    const char *params_json;
    int64_t sequence;
    uint32_t counters;
    const char *note;
    const char *metrics_json;
    const char *labels_json;
} tforge_store_profile;
typedef int (*tforge_store_profile_visit)(void *context, const tforge_store_profile *profile);

/* Records a profile in one transaction (the run's writer only, as tforge_store_record). */
int tforge_store_record_profile(tforge_store *store, int64_t run_id,
                                const tforge_store_profile *profile);
/* Visits a run's profiles in the order recorded. */
int tforge_store_each_profile(tforge_store *store, int64_t run_id,
                              tforge_store_profile_visit visit, void *context);

/* One request asked of a language model and its answers, as the store keeps them (not tied to
 * a run: a replay serves any run's requests). Recording copies everything; read back, the
 * strings and answers are owned by the struct until tforge_store_llm_dispose. */
typedef struct tforge_store_llm_exchange {
    const char *digest;   /* the request's digest */
    uint32_t occurrence;  /* 0 the first time this request was asked, 1 the second, ... */
    const char *model;
    const char *system;   /* or NULL */
    const char *user;
    uint32_t asked;       /* answers asked for */
    uint64_t seed;
    double seconds;       /* the wall time of asking */
    uint32_t n;           /* answers given */
    const tforge_llm_answer *answers;
} tforge_store_llm_exchange;

/* Records one exchange in one transaction, committed at once; one of the same digest and
 * occurrence recorded before is replaced (a live run asked it again). */
int tforge_store_record_llm(tforge_store *store, const tforge_store_llm_exchange *exchange);
/* The exchange of `digest` asked for the `occurrence`th time (0 first), or TFORGE_ENOTFOUND. */
int tforge_store_find_llm(tforge_store_llm_exchange *exchange, tforge_store *store,
                          const char *digest, uint32_t occurrence);
void tforge_store_llm_dispose(tforge_store_llm_exchange *exchange);
/* The model of the latest request recorded (the caller frees it), or TFORGE_ENOTFOUND. */
int tforge_store_llm_latest_model(char **model, tforge_store *store);

/* Imports a recording as a new run, in one transaction. `run` gives source, strategy, settings,
 * seed, budget and environment (NULL: source is the kernel name, strategy "import"); the space
 * is always the recording's (tforge_recording_space_json). Entry i becomes measurement i + 1:
 * time -> median, min and spread from its times, repeats = n_times, compile_time -> compile_ms,
 * the sum of its times -> wall_ms, the rest -> metrics (tforge_recording_extras_json). */
int tforge_store_import(int64_t *run_id, tforge_store *store, const tforge_recording *rec,
                        const tforge_store_run *run);

/* Exports a run whose space is a recorded space description; the inverse of the import. An
 * entry's metrics include those of its configuration's latest profile (counters and static
 * metrics under profile.h's names), so that a replay can profile it again. */
int tforge_store_export(tforge_recording **out, tforge_store *store, int64_t run_id);

#endif
