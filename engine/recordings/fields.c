/* The JSON fields every format shares: values and configurations in and out, and errors that
 * name the file, the field and what was expected. */
#include "recording_internal.h"

#include "tforge/space.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The entry fields that are neither parameters nor metrics, with their T4 names. */
const timing_field recording_timing_fields[] = {
    {"compile_time", "compilation_time", offsetof(tforge_recording_entry, compile_time)},
    {"verification_time", "validation", offsetof(tforge_recording_entry, verification_time)},
    {"benchmark_time", "benchmark", offsetof(tforge_recording_entry, benchmark_time)},
    {"strategy_time", "search_algorithm", offsetof(tforge_recording_entry, strategy_time)},
    {"framework_time", "framework", offsetof(tforge_recording_entry, framework_time)},
};
_Static_assert(sizeof recording_timing_fields / sizeof *recording_timing_fields == N_TIMING,
               "N_TIMING");

/* cJSON prints doubles only approximately (15 digits within an epsilon): numbers go out as
 * their exact shortest text instead. */
cJSON *recording_number_json(double value)
{
    char text[40];
    if (!isfinite(value))
        return cJSON_CreateNull();
    tforge_space_number_text(text, sizeof text, value);
    return cJSON_CreateRaw(text);
}

cJSON *recording_numbers_json(const double *values, uint32_t n)
{
    cJSON *array = cJSON_CreateArray();
    for (uint32_t i = 0; array && i < n; i++)
        if (!cJSON_AddItemToArray(array, recording_number_json(values[i]))) {
            cJSON_Delete(array);
            return NULL;
        }
    return array;
}

static void describe(char *buf, size_t size, const cJSON *found)
{
    if (!found)
        snprintf(buf, size, "nothing");
    else if (cJSON_IsString(found))
        snprintf(buf, size, "\"%.60s\"", found->valuestring);
    else if (cJSON_IsNumber(found))
        snprintf(buf, size, "%.17g", found->valuedouble);
    else if (cJSON_IsBool(found))
        snprintf(buf, size, "%s", cJSON_IsTrue(found) ? "true" : "false");
    else if (cJSON_IsNull(found))
        snprintf(buf, size, "null");
    else if (cJSON_IsArray(found))
        snprintf(buf, size, "an array");
    else
        snprintf(buf, size, "an object");
}

/* "<file>: <field>: expected <what>, found <found>"; the field is formatted only on failure. */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
int recording_field_error(const char *file, const cJSON *found, const char *expected,
                          const char *field_format, ...)
{
    char field[400], seen[96];
    va_list args;
    va_start(args, field_format);
    vsnprintf(field, sizeof field, field_format, args);
    va_end(args);
    describe(seen, sizeof seen, found);
    return tforge_error_set(TFORGE_EINPUT, "%s: %s: expected %s, found %s", file, field, expected,
                            seen);
}

/* The level of a parameter value given as JSON, or -1. */
long recording_find_level(const tforge_recording_param *param, const cJSON *value)
{
    if (cJSON_IsNumber(value)) {
        for (uint32_t l = 0; l < param->n_values; l++)
            if (param->numbers[l] == value->valuedouble)
                return l;
    } else if (cJSON_IsString(value) || cJSON_IsBool(value)) {
        /* a boolean is the value Python prints as True or False */
        const char *text = cJSON_IsString(value) ? value->valuestring
                           : cJSON_IsTrue(value) ? "True"
                                                 : "False";
        for (uint32_t l = 0; l < param->n_values; l++)
            if (isnan(param->numbers[l]) && strcmp(param->texts[l], text) == 0)
                return l;
    }
    return -1;
}

long recording_find_param(const tforge_recording *rec, const char *name)
{
    for (uint32_t p = 0; p < rec->n_params; p++)
        if (strcmp(rec->params[p].name, name) == 0)
            return p;
    return -1;
}

/* A time or a size as recorded: a number, finite (1e400 reads as infinity) and not negative. */
int recording_is_duration(const cJSON *item)
{
    return cJSON_IsNumber(item) && isfinite(item->valuedouble) && item->valuedouble >= 0;
}

/* Reads a JSON array of durations into a new array (NULL when empty), scaled by `scale`. */
int recording_read_numbers(double **out, uint32_t *n_out, const cJSON *array, double scale,
                           const char *file, const char *field)
{
    *out = NULL;
    *n_out = 0;
    if (!cJSON_IsArray(array))
        return recording_field_error(file, array, "an array of numbers", "%s", field);
    int n = cJSON_GetArraySize(array);
    if (n == 0)
        return 0;
    double *values = malloc((size_t)n * sizeof *values);
    if (!values)
        return nomem();
    int i = 0;
    for (const cJSON *item = array->child; item; item = item->next, i++) {
        /* A run of several kernels (a Kernel Tuner cache may hold [x, y] per run): the run's
         * time is their sum. */
        double sum = 0;
        int nested = cJSON_IsArray(item) && item->child;
        for (const cJSON *part = nested ? item->child : NULL; part && nested; part = part->next)
            if (recording_is_duration(part))
                sum += part->valuedouble;
            else
                nested = 0;
        if (!nested && !recording_is_duration(item)) {
            free(values);
            return recording_field_error(file, item,
                                         DURATION " (or an array of them: a run of several "
                                         "kernels)", "%s[%d]", field, i);
        }
        values[i] = (nested ? sum : item->valuedouble) * scale;
    }
    *out = values;
    *n_out = (uint32_t)n;
    return 0;
}

/* A parameter's values from a JSON array of numbers and strings, and their texts from an array
 * of strings (NULL: as Python prints the values). `field` and `texts_field` name the arrays,
 * with a %s for the parameter's name. */
int recording_add_param_json(tforge_recording *rec, const char *name, const cJSON *values,
                             const cJSON *texts, const char *file, const char *field,
                             const char *texts_field)
{
    int n = cJSON_GetArraySize(values);
    char at[400], texts_at[400];
    snprintf(at, sizeof at, field, name);
    snprintf(texts_at, sizeof texts_at, texts_field, name);
    if (!cJSON_IsArray(values) || n == 0 || (unsigned)n > MAX_LEVELS)
        return recording_field_error(file, values, "a non-empty array of values", "%s", at);
    if (texts && (!cJSON_IsArray(texts) || cJSON_GetArraySize(texts) != n))
        return recording_field_error(file, texts, "an array of texts as long as its values",
                                     "%s", texts_at);
    char **strings = calloc((size_t)n, sizeof *strings);
    double *numbers = malloc((size_t)n * sizeof *numbers);
    int rc = 0, i = 0;
    if (!strings || !numbers) {
        rc = nomem();
        goto cleanup;
    }
    const cJSON *text = texts ? texts->child : NULL;
    for (const cJSON *value = values->child; value; value = value->next, i++) {
        char buf[32];
        if (cJSON_IsNumber(value)) {
            numbers[i] = value->valuedouble;
            tforge_space_number_text(buf, sizeof buf, value->valuedouble);
        } else if (cJSON_IsString(value)) {
            numbers[i] = NAN;
        } else if (cJSON_IsBool(value)) { /* a categorical level named as Python prints it */
            numbers[i] = NAN;
            snprintf(buf, sizeof buf, "%s", cJSON_IsTrue(value) ? "True" : "False");
        } else {
            rc = recording_field_error(file, value, "a number, a string or a boolean", "%s[%d]",
                                       at, i);
            goto cleanup;
        }
        if (text) {
            if (!cJSON_IsString(text)) {
                rc = recording_field_error(file, text, "a string", "%s[%d]", texts_at, i);
                goto cleanup;
            }
            strings[i] = strdup(text->valuestring);
            text = text->next;
        } else {
            strings[i] = strdup(cJSON_IsString(value) ? value->valuestring : buf);
        }
        if (!strings[i]) {
            rc = nomem();
            goto cleanup;
        }
    }
    rc = tforge_recording_add_param(rec, name, (uint32_t)n, (const char *const *)strings, numbers);
    if (rc < 0)
        rc = tforge_error_prefix("%s", file);
cleanup:
    for (int j = 0; strings && j < n; j++)
        free(strings[j]);
    free(strings);
    free(numbers);
    return rc;
}

int recording_read_string_field(char **slot, const cJSON *root, const char *name, int required,
                                const char *file)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, name);
    if (!item && !required)
        return 0;
    if (!cJSON_IsString(item))
        return recording_field_error(file, item, "a string", "%s", name);
    return recording_replace_string(slot, item->valuestring);
}

int recording_read_problem_size(tforge_recording *rec, const cJSON *item, const char *file,
                                const char *field)
{
    if (!item)
        return 0;
    int ok = recording_is_duration(item) || cJSON_IsString(item);
    if (cJSON_IsArray(item)) {
        ok = 1;
        for (const cJSON *d = item->child; d; d = d->next)
            ok = ok && recording_is_duration(d);
    }
    if (!ok)
        return recording_field_error(file, item,
                                     "an array of sizes (finite numbers >= 0), a size or a "
                                     "string", "%s", field);
    char *text = cJSON_PrintUnformatted(item);
    if (!text)
        return nomem();
    free(rec->problem_size);
    rec->problem_size = text;
    return 0;
}

/* Grows a metrics buffer to the recording's metric count, new slots NAN. */
int recording_fit_metrics(double **metrics, uint32_t *have, uint32_t want)
{
    if (*have >= want)
        return 0;
    double *grown = realloc(*metrics, want * sizeof *grown);
    if (!grown)
        return nomem();
    for (uint32_t m = *have; m < want; m++)
        grown[m] = NAN;
    *metrics = grown;
    *have = want;
    return 0;
}

int recording_set_metric(tforge_recording *rec, double **metrics, uint32_t *have, const char *name,
                         double value)
{
    uint32_t index;
    int rc = tforge_recording_metric(&index, rec, name);
    if (!rc)
        rc = recording_fit_metrics(metrics, have, rec->n_metrics);
    if (!rc)
        (*metrics)[index] = value;
    return rc;
}

/* A configuration object {name: value}; `field` names it in messages. */
int recording_read_configuration(const tforge_recording *rec, tforge_level *levels,
                                 const cJSON *config, const char *file, const char *field)
{
    if (!cJSON_IsObject(config))
        return recording_field_error(file, config, "an object", "%s", field);
    if (cJSON_GetArraySize(config) != (int)rec->n_params)
        for (const cJSON *value = config->child; value; value = value->next)
            if (recording_find_param(rec, value->string) < 0)
                return recording_field_error(file, value, "a known parameter", "%s.%s",
                                             field, value->string);
    for (uint32_t p = 0; p < rec->n_params; p++) {
        const cJSON *value = cJSON_GetObjectItemCaseSensitive(config, rec->params[p].name);
        long level = recording_find_level(&rec->params[p], value);
        if (level < 0)
            return recording_field_error(file, value, "one of the parameter's values", "%s.%s",
                                         field,
                                         rec->params[p].name);
        levels[p] = (tforge_level)level;
    }
    return 0;
}

static cJSON *value_json(const tforge_recording_param *param, uint32_t level)
{
    /* A number goes out as its text, so that 1.0 stays 1.0 */
    return isnan(param->numbers[level]) ? cJSON_CreateString(param->texts[level])
                                        : cJSON_CreateRaw(param->texts[level]);
}

cJSON *recording_values_json(const tforge_recording_param *param)
{
    cJSON *array = cJSON_CreateArray();
    for (uint32_t l = 0; array && l < param->n_values; l++)
        if (!cJSON_AddItemToArray(array, value_json(param, l))) {
            cJSON_Delete(array);
            return NULL;
        }
    return array;
}

cJSON *recording_config_object(const tforge_recording *rec, const tforge_level *levels)
{
    cJSON *object = cJSON_CreateObject();
    for (uint32_t p = 0; object && p < rec->n_params; p++)
        if (!cJSON_AddItemToObject(object, rec->params[p].name,
                                   value_json(&rec->params[p], levels[p]))) {
            cJSON_Delete(object);
            return NULL;
        }
    return object;
}

cJSON *recording_space_object(const tforge_recording *rec)
{
    cJSON *object = cJSON_CreateObject();
    for (uint32_t p = 0; object && p < rec->n_params; p++)
        if (!cJSON_AddItemToObject(object, rec->params[p].name,
                                   recording_values_json(&rec->params[p]))) {
            cJSON_Delete(object);
            return NULL;
        }
    return object;
}

void recording_add_item(cJSON *object, const char *name, cJSON *item, int *failed)
{
    if (!item || !cJSON_AddItemToObject(object, name, item)) {
        cJSON_Delete(item);
        *failed = 1;
    }
}

/* Adds a number, or nothing for NAN; `failed` collects allocation failures. */
void recording_add_number(cJSON *object, const char *name, double value, int *failed)
{
    if (!isnan(value))
        recording_add_item(object, name, recording_number_json(value), failed);
}

cJSON *recording_problem_size_json(const tforge_recording *rec)
{
    return rec->problem_size ? cJSON_Parse(rec->problem_size) : NULL;
}

int recording_print_json(char **out, cJSON *item)
{
    *out = item ? cJSON_PrintUnformatted(item) : NULL;
    cJSON_Delete(item);
    return *out ? 0 : nomem();
}

/* The JSON number grammar, so that a number's text can be written into JSON as it is. */
int recording_is_json_number(const char *s)
{
    if (*s == '-')
        s++;
    if (*s == '0')
        s++;
    else if (*s >= '1' && *s <= '9')
        while (*s >= '0' && *s <= '9')
            s++;
    else
        return 0;
    if (*s == '.') {
        s++;
        if (!(*s >= '0' && *s <= '9'))
            return 0;
        while (*s >= '0' && *s <= '9')
            s++;
    }
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-')
            s++;
        if (!(*s >= '0' && *s <= '9'))
            return 0;
        while (*s >= '0' && *s <= '9')
            s++;
    }
    return *s == '\0';
}
