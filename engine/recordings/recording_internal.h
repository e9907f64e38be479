/* What the files of this folder share and nothing outside includes (recording.h is the door):
 * the entry's timing fields, the JSON fields every format reads and writes (fields.c), and the
 * file reader and writer (files.c), with each format's reader (kernel_tuner.c, t4.c). */
#ifndef TFORGE_ENGINE_RECORDING_INTERNAL_H
#define TFORGE_ENGINE_RECORDING_INTERNAL_H

#include "recording.h"

#include "tforge/error.h"

#include <cjson/cJSON.h>
#include <zlib.h>

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LEVELS 65535u /* levels are tforge_level (uint16_t) */
#define N_STATUSES 6

/* The entry fields that are neither parameters nor metrics, with their T4 names. */
typedef struct timing_field {
    const char *kt;
    const char *t4;
    size_t offset;
} timing_field;
extern const timing_field recording_timing_fields[];
#define N_TIMING 5u /* fields.c checks it */

static inline double *timing(tforge_recording_entry *entry, size_t i)
{
    return (double *)((char *)entry + recording_timing_fields[i].offset);
}

static inline double timing_of(const tforge_recording_entry *entry, size_t i)
{
    return *(const double *)((const char *)entry + recording_timing_fields[i].offset);
}

static inline char *dup_string(const char *s)
{
    return s ? strdup(s) : NULL;
}

static inline int nomem(void)
{
    return tforge_error_set(TFORGE_ENOMEM, "recording: out of memory");
}

#define DURATION "a finite number >= 0"

/* recording.c: replaces the string in `slot` by a copy of `value`. */
int recording_replace_string(char **slot, const char *value);

/* ---- fields.c: JSON values and the fields every format shares ---- */

cJSON *recording_number_json(double value);
cJSON *recording_numbers_json(const double *values, uint32_t n);
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
int recording_field_error(const char *file, const cJSON *found, const char *expected,
                          const char *field_format, ...);
long recording_find_level(const tforge_recording_param *param, const cJSON *value);
long recording_find_param(const tforge_recording *rec, const char *name);
int recording_is_duration(const cJSON *item);
int recording_read_numbers(double **out, uint32_t *n_out, const cJSON *array, double scale,
                           const char *file, const char *field);
int recording_add_param_json(tforge_recording *rec, const char *name, const cJSON *values,
                             const cJSON *texts, const char *file, const char *field,
                             const char *texts_field);
int recording_read_string_field(char **slot, const cJSON *root, const char *name, int required,
                                const char *file);
int recording_read_problem_size(tforge_recording *rec, const cJSON *item, const char *file,
                                const char *field);
int recording_fit_metrics(double **metrics, uint32_t *have, uint32_t want);
int recording_set_metric(tforge_recording *rec, double **metrics, uint32_t *have,
                         const char *name, double value);
int recording_read_configuration(const tforge_recording *rec, tforge_level *levels,
                                 const cJSON *config, const char *file, const char *field);
cJSON *recording_values_json(const tforge_recording_param *param);
cJSON *recording_config_object(const tforge_recording *rec, const tforge_level *levels);
cJSON *recording_space_object(const tforge_recording *rec);
void recording_add_item(cJSON *object, const char *name, cJSON *item, int *failed);
void recording_add_number(cJSON *object, const char *name, double value, int *failed);
cJSON *recording_problem_size_json(const tforge_recording *rec);
int recording_print_json(char **out, cJSON *item);
int recording_is_json_number(const char *s);

/* ---- files.c: reading and writing files; each format's reader ---- */

/* Writing goes to "<path>.tmp" first, so that a crash never leaves a half-written file. */
typedef struct recording_writer {
    const char *path;
    char *tmp;
    gzFile file;
    int failed;
} recording_writer;

int recording_writer_open(recording_writer *w, const char *path);
void recording_put(recording_writer *w, const char *text);
void recording_put_json(recording_writer *w, cJSON *item);
int recording_writer_close(recording_writer *w, int rc);

int recording_read_kt(tforge_recording *rec, const cJSON *root,
                      const char *file); /* kernel_tuner.c */
int recording_read_t4(tforge_recording *rec, const cJSON *root, const char *file); /* t4.c */

#endif
