/* A recorded tuning space: every measured configuration of one kernel on one device, as the
 * autotuning community shares them. Independent of any search code; the replay backend serves
 * its entries and the store imports and exports it.
 *
 * The one door to this folder: its files (one a format or job, recording_internal.h what they
 * share) are included by nothing else, and cJSON and zlib are used in this folder only.
 *
 * Files read and written here:
 *
 * Kernel Tuner cache (`.json`, or gzip-compressed `.json.gz`; the name decides when writing):
 *   device_name, kernel_name, problem_size, tune_params_keys (parameter order), tune_params (the
 *   values of each), objective, cache. Each cache entry is keyed by its values joined with
 *   commas in tune_params_keys order, as Python's str() prints them, and holds the parameter
 *   values, `time` (ms, or "CompilationFailedConfig" / "RuntimeFailedConfig" / "InvalidConfig";
 *   "ErrorConfig", a failure of no known kind, reads as a runtime failure),
 *   `times`, `compile_time`, `verification_time`, `benchmark_time`, `strategy_time`,
 *   `framework_time`, `timestamp`, and tforge's own `spread` (the runs' IQR over their median,
 *   for an entry measured without its individual runs kept; T4 files have no field for it);
 *   every other numeric field (GFLOP/s, GB/s ...) is kept as a named metric, other
 *   non-numeric fields are dropped. A file that Kernel Tuner left open
 *   (it appends entries while tuning, so the closing brackets may be missing or the last entry
 *   cut short) is repaired, with a warning. Writing gives each entry its own line, ends the
 *   file so that Kernel Tuner can append to it, and writes the five timing fields Kernel Tuner
 *   requires as 0 where they are absent. Statuses Kernel Tuner has no string for are written
 *   as "RuntimeFailedConfig" (timeout, wrong), with a warning.
 *
 * T4 results (the open autotuning results schema, version 1.0.0, as written by Kernel Tuner and
 * read by its autotuning_methodology):
 *   results[i].configuration {name: value}   -> entry levels
 *   results[i].invalidity                    -> status: "correct" ok, "compile", "runtime",
 *                                               "timeout", "correctness" wrong, "constraints"
 *                                               (and "correct" with correctness 0 reads wrong)
 *   results[i].measurements[name == "time"]  -> time (read for "correct" results only)
 *   results[i].measurements[other, numeric]  -> named metrics
 *   results[i].times.runtimes                -> times
 *   results[i].times.compilation_time        -> compile_time (Kernel Tuner writes "compilation":
 *                                               read too)
 *   results[i].times.benchmark / framework / search_algorithm / validation
 *                                            -> benchmark / framework / strategy /
 *                                               verification time
 *   results[i].timestamp                     -> timestamp
 *   metadata.timeunit                        -> times are scaled to ms when reading
 *   metadata.device                          -> device_name
 *   metadata.kernel_name, problem_size, objective, tune_params (name: [values] in order),
 *   tune_params_texts (name: [texts], where a number's text is not the plain one: "1.0")
 *                                            -> the same fields; extensions of ours, since T4
 *                                               has no place for the space itself. Without
 *                                               tune_params the parameters are named in the
 *                                               order of the first configuration, and each one's
 *                                               values are those seen, sorted when all numeric.
 *   Written: correctness is 1 for ok entries, else 0; objectives is [objective].
 *   JSON numbers do not tell 1 from 1.0: without texts, a value reads as the integer or the
 *   float Python most likely printed (1, 0.5); in a Kernel Tuner cache the keys tell.
 *
 * Every malformed field is an error that names the file, the field (`cache["16,1"].time`) and
 * what was expected. */
#ifndef TFORGE_ENGINE_RECORDING_H
#define TFORGE_ENGINE_RECORDING_H

#include "tforge/plugin/strategy.h"

#include <stddef.h>
#include <stdint.h>

/* One tuning parameter and its values, in their declared order (levels index this list). */
typedef struct tforge_recording_param {
    char *name;
    uint32_t n_values;
    char **texts;     /* each value as Python's str() prints it: the text in cache keys */
    double *numbers;  /* each value as a number; NAN marks a string value */
    int all_numeric;  /* 1 when no value is a string */
} tforge_recording_param;

/* One measured configuration. Times are in milliseconds; NAN marks a field the source lacks. */
typedef struct tforge_recording_entry {
    tforge_level *levels;  /* n_params level indices into the params' value lists */
    tforge_status status;
    double time;           /* the objective time as recorded (Kernel Tuner: the mean of times);
                              NAN unless status is TFORGE_STATUS_OK */
    uint32_t n_times;
    double *times;         /* the individual runs */
    double spread;         /* their IQR / median as measured where the runs were not kept
                            * (a tforge store's export), 0 when unknown */
    double compile_time;
    double benchmark_time;
    double framework_time;
    double verification_time;
    double strategy_time;
    double *metrics;       /* n_metrics values in metric_names order, NAN where absent */
    char *timestamp;       /* as recorded, NULL when absent */
} tforge_recording_entry;

/* Everything is owned by the recording; add through the functions below so that it stays
 * consistent (every entry has n_params levels and n_metrics metrics). */
typedef struct tforge_recording {
    char *device_name;   /* "" when unknown */
    char *kernel_name;   /* "" when unknown */
    char *problem_size;  /* compact JSON text (array of integers, integer or string), or NULL */
    char *objective;     /* "time" unless the source names another */
    uint32_t n_params;
    tforge_recording_param *params;
    uint32_t n_metrics;
    char **metric_names;
    size_t n_entries;
    tforge_recording_entry *entries;
    size_t cap_entries;
} tforge_recording;

/* An empty recording: no parameters, no entries, objective "time". */
int tforge_recording_new(tforge_recording **out);
/* NULL is allowed. */
void tforge_recording_free(tforge_recording *rec);

/* Copies the strings; `problem_size` (JSON text or NULL) must parse and is kept compact; a NULL
 * `objective` means "time". */
int tforge_recording_set_info(tforge_recording *rec, const char *device_name,
                              const char *kernel_name, const char *problem_size,
                              const char *objective);

/* Appends a parameter; only before the first entry. `texts` are the values as cache keys print
 * them; `numbers` (NULL: all strings) gives each value's number, NAN for a string. */
int tforge_recording_add_param(tforge_recording *rec, const char *name, uint32_t n_values,
                               const char *const *texts, const double *numbers);

/* The index of a named metric, appended (NAN in every existing entry) when new. */
int tforge_recording_metric(uint32_t *index, tforge_recording *rec, const char *name);

/* Appends a copy of `entry`: its levels (n_params), times (n_times), metrics (n_metrics, or
 * NULL for none) and timestamp. Levels are checked against the value lists. */
int tforge_recording_add_entry(tforge_recording *rec, const tforge_recording_entry *entry);

/* The Kernel Tuner key of a point, "v1,v2,...", allocated; the caller frees it. */
int tforge_recording_key(char **out, const tforge_recording *rec, const tforge_level *levels);

/* Reads a Kernel Tuner cache or a T4 results file, plain or gzip-compressed; which one is
 * decided by the content (a top-level "cache" or "results"). Only a regular file is opened (a
 * FIFO or a directory is refused before anything waits on it), and a configuration recorded
 * twice is refused. */
int tforge_recording_read(tforge_recording **out, const char *path);
/* The same, for a recorded space to replay or to store: what both need is checked here, once,
 * so that the store keeps nothing that replay refuses: at least one configuration, and an
 * objective that is time or a metric the configurations record. */
int tforge_recording_read_space(tforge_recording **out, const char *path);

/* Writes through a temporary file renamed into place; a name ending in ".gz" is compressed. */
int tforge_recording_write_kt(const tforge_recording *rec, const char *path);
int tforge_recording_write_t4(const tforge_recording *rec, const char *path);

/* 0 when equal in every field (numbers bit for bit, NANs equal); 1 otherwise, with the first
 * difference described in `why` (may be NULL). */
int tforge_recording_diff(char *why, size_t why_size, const tforge_recording *a,
                          const tforge_recording *b);

/* ---- the JSON texts the store keeps for a recording, so that JSON stays at this edge ----
 * `where` names the source in error messages ("run 3"). */

/* The space: {"format": "tforge.recording/1", "device_name", "kernel_name", "problem_size",
 * "objective", "params": [{"name", "values": [...], "texts": [...]}], "metrics": [names]}. An
 * engine that describes its runs' spaces this way can export them as recordings. */
int tforge_recording_space_json(char **out, const tforge_recording *rec);
int tforge_recording_from_space_json(tforge_recording **out, const char *json, const char *where);

/* A configuration: {"name": value, ...} in parameter order. */
int tforge_recording_config_json(char **out, const tforge_recording *rec,
                                 const tforge_level *levels);
int tforge_recording_config_levels(tforge_level *out, const tforge_recording *rec,
                                   const char *json, const char *where);

/* What an entry holds beyond the store's columns: {"times": [...], "benchmark_time",
 * "framework_time", "verification_time", "strategy_time", metric: value ...}; `*out` is NULL
 * when there is nothing. Reading sets those fields of `entry` and allocates `entry->times`
 * and `entry->metrics` (rec->n_metrics values once it returns; the caller frees both); an
 * unknown numeric key becomes a new metric of `rec`, unless it names a field the entry has
 * already (a parameter, the time, a timing field); other keys are ignored. */
int tforge_recording_extras_json(char **out, const tforge_recording *rec,
                                 const tforge_recording_entry *entry);
int tforge_recording_extras_read(tforge_recording_entry *entry, tforge_recording *rec,
                                 const char *json, const char *where);

#endif
