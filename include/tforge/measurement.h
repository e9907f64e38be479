/* One measurement (tforge_measurement, in the plugin ABI's types.h) and its statuses: the
 * helpers the engine's parts share, so that statuses are spelled in one place. */
#ifndef TFORGE_MEASUREMENT_H
#define TFORGE_MEASUREMENT_H

#include "plugin/types.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Status OK, every number NAN but repeats (0) and spread (0), no metrics, no message. */
void tforge_measurement_init(tforge_measurement *m);

/* A failed measurement: the status and a printf-formatted message (truncated to fit). */
void tforge_measurement_fail(tforge_measurement *m, tforge_status status, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* 1 when `name` can name a metric: an identifier shorter than TFORGE_METRIC_NAME_SIZE. */
int tforge_metric_name_ok(const char *name);

/* A table of named metrics (a measurement's, a profile's): sets (or adds) `name` among the
 * `*n` of `table` (room for `cap`, `holder` names the table's kind in the error); the rules of
 * tforge_measurement_set_metric. */
int tforge_metrics_set(tforge_metric *table, uint32_t *n, uint32_t cap, const char *holder,
                       const char *name, double value);
/* The value of `name` among the `n` of `table`, or NAN when absent. */
double tforge_metrics_get(const tforge_metric *table, uint32_t n, const char *name);

/* Sets (or adds) a metric; TFORGE_EINPUT for a name that is not an identifier or too long,
 * TFORGE_ERROR when the table is full. A NAN value removes nothing and adds nothing. */
int tforge_measurement_set_metric(tforge_measurement *m, const char *name, double value);
/* The metric's value, or NAN when absent. */
double tforge_measurement_metric(const tforge_measurement *m, const char *name);

/* The metrics as a JSON object text, {"registers": 32, ...}, into `buf`; "" when there are none
 * (or they do not fit). Returns the length written. */
size_t tforge_measurement_metrics_json(const tforge_measurement *m, char *buf, size_t size);

/* "ok", "compile" ...; "?" for a number that is no status. */
const char *tforge_status_name(uint32_t status);
/* The status of a name; TFORGE_ENOTFOUND (nothing set) for a name that is none. */
int tforge_status_parse(uint32_t *out, const char *name);

#ifdef __cplusplus
}
#endif
#endif
