#include "recording.h"

#include "tforge/error.h"
#include "tforge/space.h"
#include "tforge/log.h"

#include <cjson/cJSON.h>
#include <zlib.h>

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SPACE_FORMAT "tforge.recording/1"
#define MAX_LEVELS 65535u /* levels are tforge_level (uint16_t) */

static const char *const kt_failures[] = {
    [TFORGE_STATUS_COMPILE] = "CompilationFailedConfig",
    [TFORGE_STATUS_RUNTIME] = "RuntimeFailedConfig",
    [TFORGE_STATUS_CONSTRAINT] = "InvalidConfig",
};
static const char *const t4_invalidity[] = {
    [TFORGE_STATUS_OK] = "correct",       [TFORGE_STATUS_COMPILE] = "compile",
    [TFORGE_STATUS_RUNTIME] = "runtime",  [TFORGE_STATUS_TIMEOUT] = "timeout",
    [TFORGE_STATUS_WRONG] = "correctness", [TFORGE_STATUS_CONSTRAINT] = "constraints",
};
#define N_STATUSES 6

/* The entry fields that are neither parameters nor metrics, with their T4 names. */
typedef struct timing_field {
    const char *kt;
    const char *t4;
    size_t offset;
} timing_field;
static const timing_field timing_fields[] = {
    {"compile_time", "compilation_time", offsetof(tforge_recording_entry, compile_time)},
    {"verification_time", "validation", offsetof(tforge_recording_entry, verification_time)},
    {"benchmark_time", "benchmark", offsetof(tforge_recording_entry, benchmark_time)},
    {"strategy_time", "search_algorithm", offsetof(tforge_recording_entry, strategy_time)},
    {"framework_time", "framework", offsetof(tforge_recording_entry, framework_time)},
};
#define N_TIMING (sizeof timing_fields / sizeof *timing_fields)

static double *timing(tforge_recording_entry *entry, size_t i)
{
    return (double *)((char *)entry + timing_fields[i].offset);
}

static double timing_of(const tforge_recording_entry *entry, size_t i)
{
    return *(const double *)((const char *)entry + timing_fields[i].offset);
}

static char *dup_string(const char *s)
{
    return s ? strdup(s) : NULL;
}

static int nomem(void)
{
    return tforge_error_set(TFORGE_ENOMEM, "recording: out of memory");
}

/* ---- building a recording ---- */

int tforge_recording_new(tforge_recording **out)
{
    *out = NULL;
    tforge_recording *rec = calloc(1, sizeof *rec);
    if (!rec)
        return nomem();
    rec->device_name = strdup("");
    rec->kernel_name = strdup("");
    rec->objective = strdup("time");
    if (!rec->device_name || !rec->kernel_name || !rec->objective) {
        tforge_recording_free(rec);
        return nomem();
    }
    *out = rec;
    return 0;
}

static void entry_dispose(tforge_recording_entry *entry)
{
    free(entry->levels);
    free(entry->times);
    free(entry->metrics);
    free(entry->timestamp);
}

static void param_dispose(tforge_recording_param *param)
{
    for (uint32_t i = 0; i < param->n_values; i++)
        free(param->texts[i]);
    free(param->texts);
    free(param->numbers);
    free(param->name);
}

void tforge_recording_free(tforge_recording *rec)
{
    if (!rec)
        return;
    for (size_t i = 0; i < rec->n_entries; i++)
        entry_dispose(&rec->entries[i]);
    free(rec->entries);
    for (uint32_t p = 0; p < rec->n_params; p++)
        param_dispose(&rec->params[p]);
    free(rec->params);
    for (uint32_t m = 0; m < rec->n_metrics; m++)
        free(rec->metric_names[m]);
    free(rec->metric_names);
    free(rec->device_name);
    free(rec->kernel_name);
    free(rec->problem_size);
    free(rec->objective);
    free(rec);
}

static int replace_string(char **slot, const char *value)
{
    char *copy = dup_string(value);
    if (value && !copy)
        return nomem();
    free(*slot);
    *slot = copy;
    return 0;
}

int tforge_recording_set_info(tforge_recording *rec, const char *device_name,
                              const char *kernel_name, const char *problem_size,
                              const char *objective)
{
    char *compact = NULL;
    if (problem_size) {
        cJSON *parsed = cJSON_Parse(problem_size);
        if (!parsed)
            return tforge_error_set(TFORGE_EINPUT, "problem_size: expected JSON text, found '%s'",
                                    problem_size);
        compact = cJSON_PrintUnformatted(parsed);
        cJSON_Delete(parsed);
        if (!compact)
            return nomem();
    }
    int rc = replace_string(&rec->device_name, device_name ? device_name : "");
    if (!rc)
        rc = replace_string(&rec->kernel_name, kernel_name ? kernel_name : "");
    if (!rc)
        rc = replace_string(&rec->objective, objective ? objective : "time");
    if (!rc)
        rc = replace_string(&rec->problem_size, compact);
    free(compact);
    return rc;
}

/* The JSON number grammar, so that a number's text can be written into JSON as it is. */
static int is_json_number(const char *s)
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

/* cJSON prints doubles only approximately (15 digits within an epsilon): numbers go out as
 * their exact shortest text instead. */
static cJSON *number_json(double value)
{
    char text[40];
    if (!isfinite(value))
        return cJSON_CreateNull();
    tforge_space_number_text(text, sizeof text, value);
    return cJSON_CreateRaw(text);
}

static cJSON *numbers_json(const double *values, uint32_t n)
{
    cJSON *array = cJSON_CreateArray();
    for (uint32_t i = 0; array && i < n; i++)
        if (!cJSON_AddItemToArray(array, number_json(values[i]))) {
            cJSON_Delete(array);
            return NULL;
        }
    return array;
}

int tforge_recording_add_param(tforge_recording *rec, const char *name, uint32_t n_values,
                               const char *const *texts, const double *numbers)
{
    if (rec->n_entries > 0)
        return tforge_error_set(TFORGE_EINPUT, "parameter '%s': added after the first entry", name);
    if (n_values == 0 || n_values > MAX_LEVELS)
        return tforge_error_set(TFORGE_EINPUT, "parameter '%s': expected 1 to %u values, found %u",
                                name, MAX_LEVELS, n_values);
    for (uint32_t p = 0; p < rec->n_params; p++)
        if (strcmp(rec->params[p].name, name) == 0)
            return tforge_error_set(TFORGE_EINPUT, "parameter '%s': named twice", name);
    for (uint32_t i = 0; numbers && i < n_values; i++)
        if (!isnan(numbers[i]) &&
            (!is_json_number(texts[i]) || strtod(texts[i], NULL) != numbers[i]))
            return tforge_error_set(TFORGE_EINPUT,
                                    "parameter '%s': value %u: expected the text of %.17g, "
                                    "found '%s'",
                                    name, i, numbers[i], texts[i]);

    tforge_recording_param *params = realloc(rec->params, (rec->n_params + 1) * sizeof *params);
    if (!params)
        return nomem();
    rec->params = params;
    tforge_recording_param *param = &params[rec->n_params];
    memset(param, 0, sizeof *param);
    param->name = strdup(name);
    param->texts = calloc(n_values, sizeof *param->texts);
    param->numbers = malloc(n_values * sizeof *param->numbers);
    if (!param->name || !param->texts || !param->numbers)
        goto fail;
    param->all_numeric = 1;
    for (uint32_t i = 0; i < n_values; i++, param->n_values++) {
        param->texts[i] = strdup(texts[i]);
        if (!param->texts[i])
            goto fail;
        param->numbers[i] = numbers ? numbers[i] : NAN;
        if (isnan(param->numbers[i]))
            param->all_numeric = 0;
    }
    rec->n_params++;
    return 0;
fail:
    param_dispose(param);
    return nomem();
}

int tforge_recording_metric(uint32_t *index, tforge_recording *rec, const char *name)
{
    for (uint32_t m = 0; m < rec->n_metrics; m++)
        if (strcmp(rec->metric_names[m], name) == 0) {
            *index = m;
            return 0;
        }
    uint32_t n = rec->n_metrics + 1;
    char **names = realloc(rec->metric_names, n * sizeof *names);
    if (!names)
        return nomem();
    rec->metric_names = names;
    /* Every entry gets a slot first, so that a failure leaves the recording consistent. */
    for (size_t i = 0; i < rec->n_entries; i++) {
        double *metrics = realloc(rec->entries[i].metrics, n * sizeof *metrics);
        if (!metrics)
            return nomem();
        metrics[n - 1] = NAN;
        rec->entries[i].metrics = metrics;
    }
    names[n - 1] = strdup(name);
    if (!names[n - 1])
        return nomem();
    rec->n_metrics = n;
    *index = n - 1;
    return 0;
}

int tforge_recording_add_entry(tforge_recording *rec, const tforge_recording_entry *entry)
{
    for (uint32_t p = 0; p < rec->n_params; p++)
        if (entry->levels[p] >= rec->params[p].n_values)
            return tforge_error_set(TFORGE_EINPUT, "entry %zu: %s: level %u of %u values",
                                    rec->n_entries, rec->params[p].name,
                                    (unsigned)entry->levels[p], rec->params[p].n_values);
    if ((unsigned)entry->status >= N_STATUSES)
        return tforge_error_set(TFORGE_EINPUT, "entry %zu: unknown status %d", rec->n_entries,
                                (int)entry->status);
    /* What a recording holds, its files can say: every writer's output reads back. */
    if (entry->status == TFORGE_STATUS_OK && !(isfinite(entry->time) && entry->time >= 0))
        return tforge_error_set(TFORGE_EINPUT, "entry %zu: ran correctly but its time is %g, not "
                                "a finite number >= 0", rec->n_entries, entry->time);
    for (uint32_t t = 0; t < entry->n_times; t++)
        if (!(isfinite(entry->times[t]) && entry->times[t] >= 0))
            return tforge_error_set(TFORGE_EINPUT, "entry %zu: times[%u] is %g, not a finite "
                                    "number >= 0", rec->n_entries, t, entry->times[t]);
    if (rec->n_entries == rec->cap_entries) {
        size_t cap = rec->cap_entries ? 2 * rec->cap_entries : 64;
        tforge_recording_entry *entries = realloc(rec->entries, cap * sizeof *entries);
        if (!entries)
            return nomem();
        rec->entries = entries;
        rec->cap_entries = cap;
    }
    tforge_recording_entry copy = *entry;
    copy.levels = malloc((rec->n_params ? rec->n_params : 1) * sizeof *copy.levels);
    copy.times = entry->n_times ? malloc(entry->n_times * sizeof *copy.times) : NULL;
    copy.metrics = rec->n_metrics ? malloc(rec->n_metrics * sizeof *copy.metrics) : NULL;
    copy.timestamp = dup_string(entry->timestamp);
    if (!copy.levels || (entry->n_times && !copy.times) || (rec->n_metrics && !copy.metrics) ||
        (entry->timestamp && !copy.timestamp)) {
        entry_dispose(&copy);
        return nomem();
    }
    memcpy(copy.levels, entry->levels, rec->n_params * sizeof *copy.levels);
    if (entry->n_times)
        memcpy(copy.times, entry->times, entry->n_times * sizeof *copy.times);
    for (uint32_t m = 0; m < rec->n_metrics; m++)
        copy.metrics[m] = entry->metrics ? entry->metrics[m] : NAN;
    rec->entries[rec->n_entries++] = copy;
    return 0;
}

int tforge_recording_key(char **out, const tforge_recording *rec, const tforge_level *levels)
{
    *out = NULL;
    size_t len = 1;
    for (uint32_t p = 0; p < rec->n_params; p++)
        len += strlen(rec->params[p].texts[levels[p]]) + 1;
    char *key = malloc(len);
    if (!key)
        return nomem();
    char *at = key;
    *at = '\0';
    for (uint32_t p = 0; p < rec->n_params; p++) {
        const char *text = rec->params[p].texts[levels[p]];
        size_t n = strlen(text);
        if (p > 0)
            *at++ = ',';
        memcpy(at, text, n + 1);
        at += n;
    }
    *out = key;
    return 0;
}

/* ---- messages about fields ---- */

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
static int field_error(const char *file, const cJSON *found, const char *expected,
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
static long find_level(const tforge_recording_param *param, const cJSON *value)
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

static long find_param(const tforge_recording *rec, const char *name)
{
    for (uint32_t p = 0; p < rec->n_params; p++)
        if (strcmp(rec->params[p].name, name) == 0)
            return p;
    return -1;
}

/* A time or a size as recorded: a number, finite (1e400 reads as infinity) and not negative. */
static int is_duration(const cJSON *item)
{
    return cJSON_IsNumber(item) && isfinite(item->valuedouble) && item->valuedouble >= 0;
}

#define DURATION "a finite number >= 0"

/* Reads a JSON array of durations into a new array (NULL when empty), scaled by `scale`. */
static int read_numbers(double **out, uint32_t *n_out, const cJSON *array, double scale,
                        const char *file, const char *field)
{
    *out = NULL;
    *n_out = 0;
    if (!cJSON_IsArray(array))
        return field_error(file, array, "an array of numbers", "%s", field);
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
            if (is_duration(part))
                sum += part->valuedouble;
            else
                nested = 0;
        if (!nested && !is_duration(item)) {
            free(values);
            return field_error(file, item, DURATION " (or an array of them: a run of several "
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
static int add_param_json(tforge_recording *rec, const char *name, const cJSON *values,
                          const cJSON *texts, const char *file, const char *field,
                          const char *texts_field)
{
    int n = cJSON_GetArraySize(values);
    char at[400], texts_at[400];
    snprintf(at, sizeof at, field, name);
    snprintf(texts_at, sizeof texts_at, texts_field, name);
    if (!cJSON_IsArray(values) || n == 0 || (unsigned)n > MAX_LEVELS)
        return field_error(file, values, "a non-empty array of values", "%s", at);
    if (texts && (!cJSON_IsArray(texts) || cJSON_GetArraySize(texts) != n))
        return field_error(file, texts, "an array of texts as long as its values", "%s",
                           texts_at);
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
            rc = field_error(file, value, "a number, a string or a boolean", "%s[%d]", at, i);
            goto cleanup;
        }
        if (text) {
            if (!cJSON_IsString(text)) {
                rc = field_error(file, text, "a string", "%s[%d]", texts_at, i);
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

/* ---- files ---- */

/* The largest recording read, uncompressed: the biggest public caches are tens of MB, and a
 * compressed file may grow without bound (a gzip bomb, /dev/zero). */
#define MAX_RECORDING_BYTES ((size_t)1 << 30)

/* Where the first byte that is not white space is not '{', the reader stops at once. */
static int starts_like_json(const char *buf, size_t len, const char *path)
{
    size_t i = 0;
    while (i < len && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\n' || buf[i] == '\r'))
        i++;
    if (i == len || buf[i] == '{')
        return 0;
    return tforge_error_set(TFORGE_EINPUT, "%s: expected a JSON object (a Kernel Tuner cache or "
                            "T4 results), found the byte 0x%02x", path, (unsigned char)buf[i]);
}

static int read_all(char **out, size_t *len_out, const char *path)
{
    *out = NULL;
    *len_out = 0;
    errno = 0;
    gzFile file = gzopen(path, "rb");
    if (!file)
        return tforge_error_set(errno == ENOENT ? TFORGE_ENOTFOUND : TFORGE_EIO,
                                "%s: cannot open: %s", path, errno ? strerror(errno) : "no memory");
    gzbuffer(file, 1u << 17);
    size_t cap = 1u << 20, len = 0;
    char *buf = malloc(cap + 1);
    int rc = 0;
    if (!buf) {
        rc = nomem();
        goto cleanup;
    }
    for (;;) {
        if (cap - len < (1u << 16)) {
            char *bigger = realloc(buf, 2 * cap + 1);
            if (!bigger) {
                rc = nomem();
                goto cleanup;
            }
            buf = bigger;
            cap *= 2;
        }
        size_t want = cap - len < INT_MAX ? cap - len : INT_MAX;
        int got = gzread(file, buf + len, (unsigned)want);
        if (got < 0) {
            int code;
            const char *why = gzerror(file, &code);
            rc = tforge_error_set(TFORGE_EIO, "%s: cannot read: %s", path, why);
            goto cleanup;
        }
        if (got == 0)
            break;
        if (len == 0 && (rc = starts_like_json(buf, (size_t)got, path)))
            goto cleanup;
        len += (size_t)got;
        if (len > MAX_RECORDING_BYTES) {
            rc = tforge_error_set(TFORGE_EINPUT, "%s: larger than %zu MB uncompressed: not a "
                                  "recording this engine reads", path, MAX_RECORDING_BYTES >> 20);
            goto cleanup;
        }
    }
    buf[len] = '\0';
    *out = buf;
    *len_out = len;
    buf = NULL;
cleanup:
    free(buf);
    gzclose_r(file);
    return rc;
}

/* Where a file that ends early can be closed: what is open at its end, and the end of the last
 * complete element two levels down (an entry of the cache, a result of the results). */
typedef struct json_end {
    int unterminated; /* the text ends inside a string or with brackets open */
    int in_string;
    size_t depth;
    char open[64];
    size_t cut;       /* after the last element that closed back to depth 2; 0 when none */
    char cut_open[2];
} json_end;

static void scan_end(json_end *end, const char *text, size_t len)
{
    memset(end, 0, sizeof *end);
    int escaped = 0;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (end->in_string) {
            if (escaped)
                escaped = 0;
            else if (c == '\\')
                escaped = 1;
            else if (c == '"')
                end->in_string = 0;
        } else if (c == '"') {
            end->in_string = 1;
        } else if (c == '{' || c == '[') {
            if (end->depth == sizeof end->open)
                return; /* too deep to be ours: leave it to the parser's message */
            end->open[end->depth++] = c;
        } else if ((c == '}' || c == ']') && end->depth > 0) {
            if (--end->depth == 2) {
                end->cut = i + 1;
                memcpy(end->cut_open, end->open, 2);
            }
        }
    }
    end->unterminated = end->in_string || end->depth > 0;
}

/* Copies text[0, len) with trailing spaces and one trailing comma removed, then the closing
 * brackets for `open` (innermost last). */
static char *closed_copy(const char *text, size_t len, const char *open, size_t depth)
{
    while (len > 0 && strchr(" \t\r\n", text[len - 1]))
        len--;
    if (len > 0 && text[len - 1] == ',')
        len--;
    char *copy = malloc(len + depth + 1);
    if (!copy)
        return NULL;
    memcpy(copy, text, len);
    for (size_t i = 0; i < depth; i++)
        copy[len + i] = open[depth - 1 - i] == '{' ? '}' : ']';
    copy[len + depth] = '\0';
    return copy;
}

static cJSON *parse_closed(const char *text, size_t len, const char *open, size_t depth)
{
    char *copy = closed_copy(text, len, open, depth);
    if (!copy)
        return NULL;
    cJSON *root = cJSON_Parse(copy);
    free(copy);
    return root;
}

/* Parses a whole file; one that ends early, as Kernel Tuner leaves a cache it is still
 * appending to, is closed after its last complete entry, with a warning. */
static int parse_file(cJSON **out, const char *path)
{
    *out = NULL;
    char *text;
    size_t len;
    int rc = read_all(&text, &len, path);
    if (rc < 0)
        return rc;
    const char *error_at = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len + 1, &error_at, 1); /* with its NUL */
    if (!root) {
        json_end end;
        scan_end(&end, text, len);
        if (end.unterminated && !end.in_string && end.depth <= 2) {
            root = parse_closed(text, len, end.open, end.depth);
            if (root)
                tforge_log(TFORGE_LOG_WARN,
                           "%s: the file ends before its closing brackets (Kernel Tuner may "
                           "still be writing it); read it as if closed",
                           path);
        }
        if (!root && end.unterminated && end.cut > 0) {
            root = parse_closed(text, end.cut, end.cut_open, 2);
            if (root)
                tforge_log(TFORGE_LOG_WARN,
                           "%s: the file ends inside an entry (Kernel Tuner may still be "
                           "writing it); dropped that entry and read the rest as if closed",
                           path);
        }
    }
    if (!root) {
        size_t at = error_at ? (size_t)(error_at - text) : 0, line = 1, column = 1;
        for (size_t i = 0; i < at && i < len; i++, column++)
            if (text[i] == '\n') {
                line++;
                column = 0;
            }
        rc = tforge_error_set(TFORGE_EINPUT, "%s: not valid JSON at line %zu, column %zu", path,
                              line, column);
    }
    free(text);
    *out = root;
    return rc;
}

/* Writing goes to "<path>.tmp" first, so that a crash never leaves a half-written file. */
typedef struct writer {
    const char *path;
    char *tmp;
    gzFile file;
    int failed;
} writer;

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int writer_open(writer *w, const char *path)
{
    memset(w, 0, sizeof *w);
    w->path = path;
    size_t n = strlen(path) + 5;
    w->tmp = malloc(n);
    if (!w->tmp)
        return nomem();
    snprintf(w->tmp, n, "%s.tmp", path);
    errno = 0;
    w->file = gzopen(w->tmp, ends_with(path, ".gz") ? "wb6" : "wbT");
    if (!w->file) {
        int rc = tforge_error_set(TFORGE_EIO, "%s: cannot write: %s", w->tmp,
                                  errno ? strerror(errno) : "no memory");
        free(w->tmp);
        w->tmp = NULL;
        return rc;
    }
    return 0;
}

static void put(writer *w, const char *text)
{
    size_t n = strlen(text);
    if (!w->failed && n > 0 && gzwrite(w->file, text, (unsigned)n) != (int)n)
        w->failed = 1;
}

/* Prints a JSON item compactly into the file; `item` is deleted. */
static void put_json(writer *w, cJSON *item)
{
    char *text = item ? cJSON_PrintUnformatted(item) : NULL;
    if (!text)
        w->failed = 1;
    else
        put(w, text);
    free(text);
    cJSON_Delete(item);
}

static int writer_close(writer *w, int rc)
{
    if (w->file) {
        int closed = gzclose_w(w->file);
        if (rc == 0 && (w->failed || closed != Z_OK))
            rc = tforge_error_set(TFORGE_EIO, "%s: writing failed (disk full?)", w->tmp);
        if (rc == 0 && rename(w->tmp, w->path) != 0)
            rc = tforge_error_set(TFORGE_EIO, "%s: cannot rename to %s: %s", w->tmp, w->path,
                                  strerror(errno));
        if (rc < 0)
            unlink(w->tmp);
    }
    free(w->tmp);
    return rc;
}

/* ---- Kernel Tuner cache: reading ---- */

static int read_string_field(char **slot, const cJSON *root, const char *name, int required,
                             const char *file)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, name);
    if (!item && !required)
        return 0;
    if (!cJSON_IsString(item))
        return field_error(file, item, "a string", "%s", name);
    return replace_string(slot, item->valuestring);
}

static int read_problem_size(tforge_recording *rec, const cJSON *item, const char *file,
                             const char *field)
{
    if (!item)
        return 0;
    int ok = is_duration(item) || cJSON_IsString(item);
    if (cJSON_IsArray(item)) {
        ok = 1;
        for (const cJSON *d = item->child; d; d = d->next)
            ok = ok && is_duration(d);
    }
    if (!ok)
        return field_error(file, item, "an array of sizes (finite numbers >= 0), a size or a "
                           "string", "%s", field);
    char *text = cJSON_PrintUnformatted(item);
    if (!text)
        return nomem();
    free(rec->problem_size);
    rec->problem_size = text;
    return 0;
}

/* Grows a metrics buffer to the recording's metric count, new slots NAN. */
static int fit_metrics(double **metrics, uint32_t *have, uint32_t want)
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

static int set_metric(tforge_recording *rec, double **metrics, uint32_t *have, const char *name,
                      double value)
{
    uint32_t index;
    int rc = tforge_recording_metric(&index, rec, name);
    if (!rc)
        rc = fit_metrics(metrics, have, rec->n_metrics);
    if (!rc)
        (*metrics)[index] = value;
    return rc;
}

/* The length of the JSON number at the start of `s`, or 0. */
static size_t json_number_length(const char *s)
{
    size_t n = 0;
    while (s[n] && strchr("0123456789+-.eE", s[n]))
        n++;
    char number[64];
    if (n == 0 || n >= sizeof number)
        return 0;
    memcpy(number, s, n);
    number[n] = '\0';
    return is_json_number(number) ? n : 0;
}

/* A key that differs from the values' texts only where a number is printed another way
 * ("1.0" for 1) teaches the texts: Kernel Tuner's keys are what Python printed. The key is
 * matched from the left, so that strings may hold commas. */
static int match_key(tforge_recording *rec, const tforge_level *levels, const char *key,
                     const char *file)
{
    const char *at = key;
    for (uint32_t p = 0; p < rec->n_params; p++) {
        tforge_recording_param *param = &rec->params[p];
        const char *text = param->texts[levels[p]];
        size_t n = strlen(text);
        if (p > 0 && *at++ != ',')
            goto mismatch;
        if (strncmp(at, text, n) != 0 || (at[n] != ',' && at[n] != '\0')) {
            double number = param->numbers[levels[p]];
            n = isnan(number) ? 0 : json_number_length(at);
            if (n == 0 || (at[n] != ',' && at[n] != '\0') || strtod(at, NULL) != number)
                goto mismatch;
            char *learnt = strndup(at, n);
            if (!learnt)
                return nomem();
            free(param->texts[levels[p]]);
            param->texts[levels[p]] = learnt;
        }
        at += n;
    }
    if (*at == '\0')
        return 0;
mismatch:;
    char *expected;
    int rc = tforge_recording_key(&expected, rec, levels);
    if (rc < 0)
        return rc;
    rc = tforge_error_set(TFORGE_EINPUT,
                          "%s: cache[\"%.200s\"]: expected the key \"%.200s\" for the entry's "
                          "values",
                          file, key, expected);
    free(expected);
    return rc;
}

static int read_kt_entry(tforge_recording *rec, const cJSON *item, tforge_level *levels,
                         unsigned char *seen, double **metrics, uint32_t *have,
                         const char *file)
{
    const char *key = item->string;
    if (!cJSON_IsObject(item))
        return field_error(file, item, "an object", "cache[\"%.200s\"]", key);
    tforge_recording_entry entry = {.levels = levels, .status = TFORGE_STATUS_OK, .time = NAN};
    for (size_t i = 0; i < N_TIMING; i++)
        *timing(&entry, i) = NAN;
    for (uint32_t m = 0; m < *have; m++)
        (*metrics)[m] = NAN;
    memset(seen, 0, rec->n_params);
    int has_time = 0, rc = 0;

    for (const cJSON *field = item->child; field && rc == 0; field = field->next) {
        const char *name = field->string;
        long p = find_param(rec, name);
        if ((p >= 0 && seen[p]) || (p < 0 && strcmp(name, "time") == 0 && has_time)) {
            rc = field_error(file, field, "each field once", "cache[\"%.200s\"].%s", key, name);
        } else if (p >= 0) {
            long level = find_level(&rec->params[p], field);
            if (level < 0)
                rc = field_error(file, field, "one of the values in tune_params",
                                 "cache[\"%.200s\"].%s", key, name);
            levels[p] = (tforge_level)(level < 0 ? 0 : level);
            seen[p] = 1;
        } else if (strcmp(name, "time") == 0) {
            has_time = 1;
            if (is_duration(field)) {
                entry.time = field->valuedouble;
                continue;
            }
            int status = -1;
            for (int s = 0; s < N_STATUSES && cJSON_IsString(field); s++)
                if (kt_failures[s] && strcmp(field->valuestring, kt_failures[s]) == 0)
                    status = s;
            if (cJSON_IsString(field) && strcmp(field->valuestring, "ErrorConfig") == 0)
                status = TFORGE_STATUS_RUNTIME; /* Kernel Tuner's failure of no known kind */
            if (status < 0)
                rc = field_error(file, field,
                                 DURATION ", \"CompilationFailedConfig\", "
                                 "\"RuntimeFailedConfig\", \"InvalidConfig\" or \"ErrorConfig\"",
                                 "cache[\"%.200s\"].time", key);
            entry.status = (tforge_status)(status < 0 ? 0 : status);
        } else if (strcmp(name, "times") == 0) {
            char at[256];
            snprintf(at, sizeof at, "cache[\"%.200s\"].times", key);
            free(entry.times);
            rc = read_numbers(&entry.times, &entry.n_times, field, 1.0, file, at);
        } else if (strcmp(name, "timestamp") == 0) {
            if (!cJSON_IsString(field))
                rc = field_error(file, field, "a string", "cache[\"%.200s\"].timestamp", key);
            entry.timestamp = field->valuestring;
        } else if (strcmp(name, "spread") == 0) {
            if (!cJSON_IsNumber(field) || !(field->valuedouble >= 0))
                rc = field_error(file, field, "a number >= 0", "cache[\"%.200s\"].spread", key);
            else
                entry.spread = field->valuedouble;
        } else {
            size_t t = 0;
            while (t < N_TIMING && strcmp(name, timing_fields[t].kt) != 0)
                t++;
            if (t < N_TIMING) {
                if (!is_duration(field))
                    rc = field_error(file, field, DURATION, "cache[\"%.200s\"].%s", key, name);
                else
                    *timing(&entry, t) = field->valuedouble;
            } else if (cJSON_IsNumber(field)) {
                rc = set_metric(rec, metrics, have, name, field->valuedouble);
            }
        }
    }
    for (uint32_t p = 0; p < rec->n_params && rc == 0; p++)
        if (!seen[p])
            rc = field_error(file, NULL, "a value", "cache[\"%.200s\"].%s", key,
                             rec->params[p].name);
    if (rc == 0 && !has_time)
        rc = field_error(file, NULL, "a number or a failure string", "cache[\"%.200s\"].time",
                         key);
    if (rc == 0)
        rc = match_key(rec, levels, key, file);
    if (rc == 0) {
        entry.metrics = *metrics;
        rc = tforge_recording_add_entry(rec, &entry);
    }
    free(entry.times);
    return rc;
}

static int read_kt(tforge_recording *rec, const cJSON *root, const char *file)
{
    int rc = read_string_field(&rec->device_name, root, "device_name", 1, file);
    if (!rc)
        rc = read_string_field(&rec->kernel_name, root, "kernel_name", 1, file);
    if (!rc)
        rc = read_string_field(&rec->objective, root, "objective", 0, file);
    if (!rc)
        rc = read_problem_size(rec, cJSON_GetObjectItemCaseSensitive(root, "problem_size"), file,
                               "problem_size");
    if (rc < 0)
        return rc;

    const cJSON *keys = cJSON_GetObjectItemCaseSensitive(root, "tune_params_keys");
    const cJSON *values = cJSON_GetObjectItemCaseSensitive(root, "tune_params");
    const cJSON *cache = cJSON_GetObjectItemCaseSensitive(root, "cache");
    if (!cJSON_IsArray(keys))
        return field_error(file, keys, "an array of parameter names", "tune_params_keys");
    if (!cJSON_IsObject(values))
        return field_error(file, values, "an object of value lists", "tune_params");
    if (!cJSON_IsObject(cache))
        return field_error(file, cache, "an object of entries", "cache");
    int i = 0;
    for (const cJSON *name = keys->child; name; name = name->next, i++) {
        if (!cJSON_IsString(name))
            return field_error(file, name, "a string", "tune_params_keys[%d]", i);
        rc = add_param_json(rec, name->valuestring,
                            cJSON_GetObjectItemCaseSensitive(values, name->valuestring), NULL,
                            file, "tune_params[\"%s\"]", "");
        if (rc < 0)
            return rc;
    }

    tforge_level *levels = malloc((rec->n_params ? rec->n_params : 1) * sizeof *levels);
    unsigned char *seen = malloc(rec->n_params ? rec->n_params : 1);
    double *metrics = NULL;
    uint32_t have = 0;
    if (!levels || !seen)
        rc = nomem();
    for (const cJSON *item = cache->child; item && rc == 0; item = item->next)
        rc = read_kt_entry(rec, item, levels, seen, &metrics, &have, file);
    free(levels);
    free(seen);
    free(metrics);
    return rc;
}

/* ---- T4 results: reading ---- */

static int t4_time_scale(double *scale, const cJSON *metadata, const char *file)
{
    static const struct {
        const char *name;
        double to_ms;
    } units[] = {{"milliseconds", 1.0}, {"miliseconds", 1.0}, /* Kernel Tuner's spelling */
                 {"seconds", 1e3},      {"microseconds", 1e-3}, {"nanoseconds", 1e-6}};
    *scale = 1.0;
    const cJSON *unit = cJSON_GetObjectItemCaseSensitive(metadata, "timeunit");
    if (!unit)
        return 0;
    for (size_t i = 0; cJSON_IsString(unit) && i < sizeof units / sizeof *units; i++)
        if (strcmp(unit->valuestring, units[i].name) == 0) {
            *scale = units[i].to_ms;
            return 0;
        }
    return field_error(file, unit, "\"nanoseconds\", \"microseconds\", \"milliseconds\" or "
                       "\"seconds\"", "metadata.timeunit");
}

/* Without the space in the metadata: parameters named in the first configuration's order, each
 * one's values as seen, sorted when all are numbers. */
static int compare_numbers(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int t4_derive_params(tforge_recording *rec, const cJSON *results, const char *file)
{
    const cJSON *first = results->child ? cJSON_GetObjectItemCaseSensitive(results->child,
                                                                           "configuration")
                                        : NULL;
    if (!first)
        return 0; /* no results, or the first one's error is reported when reading it */
    int rc = 0;
    for (const cJSON *param = first->child; param && rc == 0; param = param->next) {
        if (!cJSON_IsNumber(param) && !cJSON_IsString(param))
            return field_error(file, param, "a number or a string",
                               "results[0].configuration.%s", param->string);
        cJSON *seen = cJSON_CreateArray();
        if (!seen)
            return nomem();
        int all_numeric = 1, n = 0;
        for (const cJSON *r = results->child; r; r = r->next) {
            const cJSON *config = cJSON_GetObjectItemCaseSensitive(r, "configuration");
            const cJSON *value = cJSON_GetObjectItemCaseSensitive(config, param->string);
            if (!cJSON_IsNumber(value) && !cJSON_IsString(value))
                continue; /* reported when reading that result */
            int known = 0;
            for (const cJSON *s = seen->child; s && !known; s = s->next)
                known = cJSON_IsNumber(value)
                            ? cJSON_IsNumber(s) && s->valuedouble == value->valuedouble
                            : cJSON_IsString(s) && strcmp(s->valuestring, value->valuestring) == 0;
            if (!known) {
                cJSON_AddItemToArray(seen, cJSON_Duplicate(value, 0));
                all_numeric = all_numeric && cJSON_IsNumber(value);
                n++;
            }
        }
        if (all_numeric && n > 1) {
            double *sorted = malloc((size_t)n * sizeof *sorted);
            if (!sorted) {
                cJSON_Delete(seen);
                return nomem();
            }
            int i = 0;
            for (const cJSON *s = seen->child; s; s = s->next)
                sorted[i++] = s->valuedouble;
            qsort(sorted, (size_t)n, sizeof *sorted, compare_numbers);
            cJSON_Delete(seen);
            seen = cJSON_CreateDoubleArray(sorted, n);
            free(sorted);
            if (!seen)
                return nomem();
        }
        rc = add_param_json(rec, param->string, seen, NULL, file, "results[].configuration.%s",
                            "");
        cJSON_Delete(seen);
    }
    return rc;
}

static int t4_status(tforge_status *status, const cJSON *result, int index, const char *file)
{
    const cJSON *invalidity = cJSON_GetObjectItemCaseSensitive(result, "invalidity");
    const cJSON *correctness = cJSON_GetObjectItemCaseSensitive(result, "correctness");
    int found = -1;
    for (int s = 0; s < N_STATUSES && cJSON_IsString(invalidity); s++)
        if (strcmp(invalidity->valuestring, t4_invalidity[s]) == 0)
            found = s;
    if (found < 0)
        return field_error(file, invalidity,
                           "\"correct\", \"compile\", \"runtime\", \"timeout\", \"correctness\" "
                           "or \"constraints\"",
                           "results[%d].invalidity", index);
    if (correctness && !cJSON_IsNumber(correctness))
        return field_error(file, correctness, "0 or 1", "results[%d].correctness", index);
    if (found == TFORGE_STATUS_OK && correctness && correctness->valuedouble == 0)
        found = TFORGE_STATUS_WRONG;
    *status = (tforge_status)found;
    return 0;
}

static int t4_times(tforge_recording_entry *entry, const cJSON *times, double scale, int index,
                    const char *file)
{
    if (!times)
        return 0;
    if (!cJSON_IsObject(times))
        return field_error(file, times, "an object", "results[%d].times", index);
    for (const cJSON *field = times->child; field; field = field->next) {
        const char *name = field->string;
        if (strcmp(name, "runtimes") == 0) {
            char at[64];
            snprintf(at, sizeof at, "results[%d].times.runtimes", index);
            free(entry->times);
            int rc = read_numbers(&entry->times, &entry->n_times, field, scale, file, at);
            if (rc < 0)
                return rc;
            continue;
        }
        size_t t = 0;
        while (t < N_TIMING && strcmp(name, timing_fields[t].t4) != 0)
            t++;
        if (t == N_TIMING && strcmp(name, "compilation") == 0)
            t = 0; /* Kernel Tuner's name for compilation_time */
        if (t == N_TIMING)
            continue; /* data, kernel_overhead ...: nothing of ours */
        if (!is_duration(field))
            return field_error(file, field, DURATION, "results[%d].times.%s", index, name);
        *timing(entry, t) = field->valuedouble * scale;
    }
    return 0;
}

static int t4_measurements(tforge_recording *rec, tforge_recording_entry *entry, double **metrics,
                           uint32_t *have, const cJSON *list, double scale, int index,
                           const char *file)
{
    if (!list)
        return 0;
    if (!cJSON_IsArray(list))
        return field_error(file, list, "an array", "results[%d].measurements", index);
    int i = 0;
    for (const cJSON *m = list->child; m; m = m->next, i++) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(m, "name");
        const cJSON *value = cJSON_GetObjectItemCaseSensitive(m, "value");
        if (!cJSON_IsString(name))
            return field_error(file, name, "a string", "results[%d].measurements[%d].name", index,
                               i);
        if (strcmp(name->valuestring, "time") == 0) {
            if (entry->status != TFORGE_STATUS_OK)
                continue; /* Kernel Tuner writes the failure string here */
            if (!is_duration(value))
                return field_error(file, value, DURATION,
                                   "results[%d].measurements[%d].value", index, i);
            entry->time = value->valuedouble * scale;
        } else if (cJSON_IsNumber(value)) {
            int rc = set_metric(rec, metrics, have, name->valuestring, value->valuedouble);
            if (rc < 0)
                return rc;
        }
    }
    if (entry->status == TFORGE_STATUS_OK && isnan(entry->time))
        return field_error(file, NULL, "a measurement named \"time\" for a correct result",
                           "results[%d].measurements", index);
    return 0;
}

/* A configuration object {name: value}; `field` names it in messages. */
static int read_configuration(const tforge_recording *rec, tforge_level *levels,
                              const cJSON *config, const char *file, const char *field)
{
    if (!cJSON_IsObject(config))
        return field_error(file, config, "an object", "%s", field);
    if (cJSON_GetArraySize(config) != (int)rec->n_params)
        for (const cJSON *value = config->child; value; value = value->next)
            if (find_param(rec, value->string) < 0)
                return field_error(file, value, "a known parameter", "%s.%s", field,
                                   value->string);
    for (uint32_t p = 0; p < rec->n_params; p++) {
        const cJSON *value = cJSON_GetObjectItemCaseSensitive(config, rec->params[p].name);
        long level = find_level(&rec->params[p], value);
        if (level < 0)
            return field_error(file, value, "one of the parameter's values", "%s.%s", field,
                               rec->params[p].name);
        levels[p] = (tforge_level)level;
    }
    return 0;
}

static int read_t4_result(tforge_recording *rec, const cJSON *result, int index,
                          tforge_level *levels, double **metrics, uint32_t *have, double scale,
                          const char *file)
{
    if (!cJSON_IsObject(result))
        return field_error(file, result, "an object", "results[%d]", index);
    tforge_recording_entry entry = {.levels = levels, .time = NAN};
    for (size_t i = 0; i < N_TIMING; i++)
        *timing(&entry, i) = NAN;
    for (uint32_t m = 0; m < *have; m++)
        (*metrics)[m] = NAN;
    const cJSON *timestamp = cJSON_GetObjectItemCaseSensitive(result, "timestamp");
    char field[48];
    snprintf(field, sizeof field, "results[%d].configuration", index);
    int rc = read_configuration(rec, levels,
                                cJSON_GetObjectItemCaseSensitive(result, "configuration"), file,
                                field);
    if (!rc)
        rc = t4_status(&entry.status, result, index, file);
    if (!rc)
        rc = t4_times(&entry, cJSON_GetObjectItemCaseSensitive(result, "times"), scale, index,
                      file);
    if (!rc)
        rc = t4_measurements(rec, &entry, metrics, have,
                             cJSON_GetObjectItemCaseSensitive(result, "measurements"), scale,
                             index, file);
    if (!rc && timestamp && !cJSON_IsString(timestamp))
        rc = field_error(file, timestamp, "a string", "results[%d].timestamp", index);
    if (!rc) {
        entry.timestamp = timestamp ? timestamp->valuestring : NULL;
        entry.metrics = *metrics;
        rc = tforge_recording_add_entry(rec, &entry);
    }
    free(entry.times);
    return rc;
}

static int read_t4(tforge_recording *rec, const cJSON *root, const char *file)
{
    const cJSON *version = cJSON_GetObjectItemCaseSensitive(root, "schema_version");
    const cJSON *metadata = cJSON_GetObjectItemCaseSensitive(root, "metadata");
    const cJSON *results = cJSON_GetObjectItemCaseSensitive(root, "results");
    if (version && (!cJSON_IsString(version) || strncmp(version->valuestring, "1.", 2) != 0))
        return field_error(file, version, "a 1.x.y version", "schema_version");
    if (metadata && !cJSON_IsObject(metadata))
        return field_error(file, metadata, "an object", "metadata");
    if (!cJSON_IsArray(results))
        return field_error(file, results, "an array of results", "results");
    double scale;
    int rc = t4_time_scale(&scale, metadata, file);
    if (!rc)
        rc = read_string_field(&rec->device_name, metadata, "device", 0, file);
    if (!rc)
        rc = read_string_field(&rec->kernel_name, metadata, "kernel_name", 0, file);
    if (!rc)
        rc = read_string_field(&rec->objective, metadata, "objective", 0, file);
    if (!rc)
        rc = read_problem_size(rec, cJSON_GetObjectItemCaseSensitive(metadata, "problem_size"),
                               file, "metadata.problem_size");
    if (rc < 0)
        return rc;

    const cJSON *space = cJSON_GetObjectItemCaseSensitive(metadata, "tune_params");
    if (space) {
        if (!cJSON_IsObject(space))
            return field_error(file, space, "an object of value lists", "metadata.tune_params");
        const cJSON *texts = cJSON_GetObjectItemCaseSensitive(metadata, "tune_params_texts");
        for (const cJSON *param = space->child; param && rc == 0; param = param->next)
            rc = add_param_json(rec, param->string, param,
                                cJSON_GetObjectItemCaseSensitive(texts, param->string), file,
                                "metadata.tune_params[\"%s\"]",
                                "metadata.tune_params_texts[\"%s\"]");
    } else {
        rc = t4_derive_params(rec, results, file);
    }

    tforge_level *levels = malloc((rec->n_params ? rec->n_params : 1) * sizeof *levels);
    double *metrics = NULL;
    uint32_t have = 0;
    if (!levels && rc == 0)
        rc = nomem();
    int index = 0;
    for (const cJSON *result = results->child; result && rc == 0; result = result->next)
        rc = read_t4_result(rec, result, index++, levels, &metrics, &have, scale, file);
    free(levels);
    free(metrics);
    return rc;
}

int tforge_recording_read(tforge_recording **out, const char *path)
{
    *out = NULL;
    cJSON *root = NULL;
    tforge_recording *rec = NULL;
    int rc = parse_file(&root, path);
    if (rc < 0)
        goto cleanup;
    rc = tforge_recording_new(&rec);
    if (rc < 0)
        goto cleanup;
    if (cJSON_IsObject(root) && cJSON_GetObjectItemCaseSensitive(root, "cache"))
        rc = read_kt(rec, root, path);
    else if (cJSON_IsObject(root) && cJSON_GetObjectItemCaseSensitive(root, "results"))
        rc = read_t4(rec, root, path);
    else
        rc = tforge_error_set(TFORGE_EINPUT,
                              "%s: expected a Kernel Tuner cache (an object with \"cache\") or "
                              "T4 results (an object with \"results\")",
                              path);
    if (rc < 0)
        goto cleanup;
    *out = rec;
    rec = NULL;
cleanup:
    tforge_recording_free(rec);
    cJSON_Delete(root);
    return rc;
}

/* ---- writing ---- */

static cJSON *value_json(const tforge_recording_param *param, uint32_t level)
{
    /* A number goes out as its text, so that 1.0 stays 1.0 */
    return isnan(param->numbers[level]) ? cJSON_CreateString(param->texts[level])
                                        : cJSON_CreateRaw(param->texts[level]);
}

static cJSON *values_json(const tforge_recording_param *param)
{
    cJSON *array = cJSON_CreateArray();
    for (uint32_t l = 0; array && l < param->n_values; l++)
        if (!cJSON_AddItemToArray(array, value_json(param, l))) {
            cJSON_Delete(array);
            return NULL;
        }
    return array;
}

static cJSON *config_object(const tforge_recording *rec, const tforge_level *levels)
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

static cJSON *space_object(const tforge_recording *rec)
{
    cJSON *object = cJSON_CreateObject();
    for (uint32_t p = 0; object && p < rec->n_params; p++)
        if (!cJSON_AddItemToObject(object, rec->params[p].name, values_json(&rec->params[p]))) {
            cJSON_Delete(object);
            return NULL;
        }
    return object;
}

static void add_item(cJSON *object, const char *name, cJSON *item, int *failed)
{
    if (!item || !cJSON_AddItemToObject(object, name, item)) {
        cJSON_Delete(item);
        *failed = 1;
    }
}

/* The texts of the parameters whose numbers Python would print otherwise (1.0): JSON numbers
 * do not say. */
static cJSON *texts_object(const tforge_recording *rec)
{
    cJSON *object = cJSON_CreateObject();
    for (uint32_t p = 0; object && p < rec->n_params; p++) {
        const tforge_recording_param *param = &rec->params[p];
        int plain = 1;
        for (uint32_t l = 0; l < param->n_values && plain; l++) {
            char text[40];
            tforge_space_number_text(text, sizeof text, param->numbers[l]);
            plain = isnan(param->numbers[l]) || strcmp(text, param->texts[l]) == 0;
        }
        if (!plain && !cJSON_AddItemToObject(object, param->name,
                                             cJSON_CreateStringArray(
                                                 (const char *const *)param->texts,
                                                 (int)param->n_values))) {
            cJSON_Delete(object);
            return NULL;
        }
    }
    return object;
}

/* Adds a number, or nothing for NAN; `failed` collects allocation failures. */
static void add_number(cJSON *object, const char *name, double value, int *failed)
{
    if (!isnan(value))
        add_item(object, name, number_json(value), failed);
}

static cJSON *problem_size_json(const tforge_recording *rec)
{
    return rec->problem_size ? cJSON_Parse(rec->problem_size) : NULL;
}

static cJSON *kt_entry(const tforge_recording *rec, const tforge_recording_entry *entry,
                       int *lossy)
{
    int failed = 0;
    cJSON *object = config_object(rec, entry->levels);
    if (!object)
        return NULL;
    if (entry->status == TFORGE_STATUS_OK) {
        add_number(object, "time", entry->time, &failed);
    } else {
        const char *failure = kt_failures[entry->status];
        if (!failure) {
            failure = kt_failures[TFORGE_STATUS_RUNTIME];
            *lossy = 1;
        }
        add_item(object, "time", cJSON_CreateString(failure), &failed);
    }
    if (entry->n_times)
        add_item(object, "times", numbers_json(entry->times, entry->n_times),
                 &failed);
    if (entry->spread > 0)
        add_number(object, "spread", entry->spread, &failed);
    /* Kernel Tuner's order: the three times it requires, the metrics, the last two. */
    for (size_t t = 0; t < 3; t++)
        add_item(object, timing_fields[t].kt,
                 number_json(isnan(timing_of(entry, t)) ? 0 : timing_of(entry, t)),
                 &failed);
    for (uint32_t m = 0; m < rec->n_metrics; m++)
        add_number(object, rec->metric_names[m], entry->metrics[m], &failed);
    for (size_t t = 3; t < N_TIMING; t++)
        add_item(object, timing_fields[t].kt,
                 number_json(isnan(timing_of(entry, t)) ? 0 : timing_of(entry, t)),
                 &failed);
    if (entry->timestamp)
        add_item(object, "timestamp", cJSON_CreateString(entry->timestamp), &failed);
    if (failed) {
        cJSON_Delete(object);
        return NULL;
    }
    return object;
}

int tforge_recording_write_kt(const tforge_recording *rec, const char *path)
{
    writer w;
    int rc = writer_open(&w, path), failed = 0, lossy = 0;
    if (rc < 0)
        return rc;
    /* The header through cJSON without its last brace; then one entry a line, as Kernel Tuner
     * appends them, and an end ("}\n}") that Kernel Tuner reopens for appending. */
    cJSON *header = cJSON_CreateObject(), *keys = cJSON_CreateArray();
    if (!header || !keys)
        failed = 1;
    add_item(header, "device_name", cJSON_CreateString(rec->device_name), &failed);
    add_item(header, "kernel_name", cJSON_CreateString(rec->kernel_name), &failed);
    if (rec->problem_size)
        add_item(header, "problem_size", problem_size_json(rec), &failed);
    for (uint32_t p = 0; keys && p < rec->n_params; p++)
        if (!cJSON_AddItemToArray(keys, cJSON_CreateString(rec->params[p].name)))
            failed = 1;
    add_item(header, "tune_params_keys", keys, &failed);
    add_item(header, "tune_params", space_object(rec), &failed);
    add_item(header, "objective", cJSON_CreateString(rec->objective), &failed);
    char *text = failed ? NULL : cJSON_PrintUnformatted(header);
    cJSON_Delete(header);
    if (!text) {
        rc = nomem();
        goto cleanup;
    }
    text[strlen(text) - 1] = '\0';
    put(&w, text);
    free(text);
    put(&w, ",\n\"cache\": {");
    for (size_t i = 0; i < rec->n_entries && rc == 0; i++) {
        char *key;
        rc = tforge_recording_key(&key, rec, rec->entries[i].levels);
        if (rc < 0)
            break;
        cJSON *entry = kt_entry(rec, &rec->entries[i], &lossy);
        put(&w, i > 0 ? ",\n" : "\n");
        put_json(&w, cJSON_CreateString(key));
        put(&w, ": ");
        put_json(&w, entry);
        free(key);
    }
    put(&w, "}\n}\n");
    if (lossy)
        tforge_log(TFORGE_LOG_WARN,
                   "%s: Kernel Tuner has no failure string for timeouts and wrong results; "
                   "wrote them as RuntimeFailedConfig",
                   path);
cleanup:
    return writer_close(&w, rc);
}

static cJSON *t4_result(const tforge_recording *rec, const tforge_recording_entry *entry)
{
    int failed = 0;
    cJSON *result = cJSON_CreateObject(), *times = cJSON_CreateObject(),
          *measurements = cJSON_CreateArray(), *objectives = cJSON_CreateArray();
    if (!result || !times || !measurements || !objectives) {
        cJSON_Delete(result);
        cJSON_Delete(times);
        cJSON_Delete(measurements);
        cJSON_Delete(objectives);
        return NULL;
    }
    if (entry->timestamp)
        add_item(result, "timestamp", cJSON_CreateString(entry->timestamp), &failed);
    add_item(result, "configuration", config_object(rec, entry->levels), &failed);
    if (!cJSON_AddItemToArray(objectives, cJSON_CreateString(rec->objective)))
        failed = 1;
    add_item(result, "objectives", objectives, &failed);
    for (size_t t = 0; t < N_TIMING; t++)
        add_number(times, timing_fields[t].t4, timing_of(entry, t), &failed);
    if (entry->n_times)
        add_item(times, "runtimes", numbers_json(entry->times, entry->n_times),
                 &failed);
    add_item(result, "times", times, &failed);
    add_item(result, "invalidity", cJSON_CreateString(t4_invalidity[entry->status]), &failed);
    add_item(result, "correctness", number_json(entry->status == TFORGE_STATUS_OK),
             &failed);
    /* The objective time first (for ok entries only), then the metrics. */
    for (uint32_t m = 0; m <= rec->n_metrics; m++) {
        int is_time = m == 0;
        double value = is_time ? entry->time : entry->metrics[m - 1];
        if (isnan(value) || (is_time && entry->status != TFORGE_STATUS_OK))
            continue;
        cJSON *measurement = cJSON_CreateObject();
        add_item(measurement, "name",
                 cJSON_CreateString(is_time ? "time" : rec->metric_names[m - 1]), &failed);
        add_item(measurement, "value", number_json(value), &failed);
        add_item(measurement, "unit", cJSON_CreateString(is_time ? "ms" : ""), &failed);
        if (!measurement || !cJSON_AddItemToArray(measurements, measurement))
            failed = 1;
    }
    add_item(result, "measurements", measurements, &failed);
    if (failed) {
        cJSON_Delete(result);
        return NULL;
    }
    return result;
}

int tforge_recording_write_t4(const tforge_recording *rec, const char *path)
{
    writer w;
    int rc = writer_open(&w, path), failed = 0;
    if (rc < 0)
        return rc;
    cJSON *metadata = cJSON_CreateObject();
    if (!metadata)
        failed = 1;
    add_item(metadata, "timeunit", cJSON_CreateString("milliseconds"), &failed);
    add_item(metadata, "device", cJSON_CreateString(rec->device_name), &failed);
    add_item(metadata, "kernel_name", cJSON_CreateString(rec->kernel_name), &failed);
    if (rec->problem_size)
        add_item(metadata, "problem_size", problem_size_json(rec), &failed);
    add_item(metadata, "objective", cJSON_CreateString(rec->objective), &failed);
    add_item(metadata, "tune_params", space_object(rec), &failed);
    cJSON *texts = texts_object(rec);
    if (texts && texts->child)
        add_item(metadata, "tune_params_texts", texts, &failed);
    else
        cJSON_Delete(texts);
    if (failed) {
        cJSON_Delete(metadata);
        rc = nomem();
        goto cleanup;
    }
    put(&w, "{\"schema_version\": \"1.0.0\",\n\"metadata\": ");
    put_json(&w, metadata);
    put(&w, ",\n\"results\": [");
    for (size_t i = 0; i < rec->n_entries; i++) {
        put(&w, i > 0 ? ",\n" : "\n");
        put_json(&w, t4_result(rec, &rec->entries[i]));
    }
    put(&w, "]}\n");
cleanup:
    return writer_close(&w, rc);
}

/* ---- comparing ---- */

static int same_number(double a, double b)
{
    return (isnan(a) && isnan(b)) || a == b;
}

static int same_string(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int differ(char *why, size_t size, const char *format, ...)
{
    if (why && size > 0) {
        va_list args;
        va_start(args, format);
        vsnprintf(why, size, format, args);
        va_end(args);
    }
    return 1;
}

static int diff_entry(char *why, size_t size, const tforge_recording *rec, size_t i,
                      const tforge_recording_entry *x, const tforge_recording_entry *y)
{
    for (uint32_t p = 0; p < rec->n_params; p++)
        if (x->levels[p] != y->levels[p])
            return differ(why, size, "entry %zu: %s: level %u != %u", i, rec->params[p].name,
                          (unsigned)x->levels[p], (unsigned)y->levels[p]);
    if (x->status != y->status)
        return differ(why, size, "entry %zu: status %d != %d", i, (int)x->status,
                      (int)y->status);
    if (!same_number(x->time, y->time))
        return differ(why, size, "entry %zu: time %.17g != %.17g", i, x->time, y->time);
    if (x->n_times != y->n_times)
        return differ(why, size, "entry %zu: %u times != %u", i, x->n_times, y->n_times);
    for (uint32_t t = 0; t < x->n_times; t++)
        if (!same_number(x->times[t], y->times[t]))
            return differ(why, size, "entry %zu: times[%u] %.17g != %.17g", i, t, x->times[t],
                          y->times[t]);
    if (!same_number(x->spread, y->spread))
        return differ(why, size, "entry %zu: spread %.17g != %.17g", i, x->spread, y->spread);
    for (size_t t = 0; t < N_TIMING; t++)
        if (!same_number(timing_of(x, t), timing_of(y, t)))
            return differ(why, size, "entry %zu: %s %.17g != %.17g", i, timing_fields[t].kt,
                          timing_of(x, t), timing_of(y, t));
    for (uint32_t m = 0; m < rec->n_metrics; m++)
        if (!same_number(x->metrics[m], y->metrics[m]))
            return differ(why, size, "entry %zu: %s %.17g != %.17g", i, rec->metric_names[m],
                          x->metrics[m], y->metrics[m]);
    if (!same_string(x->timestamp, y->timestamp))
        return differ(why, size, "entry %zu: timestamp %s != %s", i,
                      x->timestamp ? x->timestamp : "(none)",
                      y->timestamp ? y->timestamp : "(none)");
    return 0;
}

int tforge_recording_diff(char *why, size_t why_size, const tforge_recording *a,
                          const tforge_recording *b)
{
    const char *names[] = {"device_name", "kernel_name", "problem_size", "objective"};
    const char *as[] = {a->device_name, a->kernel_name, a->problem_size, a->objective};
    const char *bs[] = {b->device_name, b->kernel_name, b->problem_size, b->objective};
    for (size_t i = 0; i < 4; i++)
        if (!same_string(as[i], bs[i]))
            return differ(why, why_size, "%s: %s != %s", names[i], as[i] ? as[i] : "(none)",
                          bs[i] ? bs[i] : "(none)");
    if (a->n_params != b->n_params)
        return differ(why, why_size, "%u parameters != %u", a->n_params, b->n_params);
    for (uint32_t p = 0; p < a->n_params; p++) {
        const tforge_recording_param *x = &a->params[p], *y = &b->params[p];
        if (strcmp(x->name, y->name) != 0 || x->n_values != y->n_values ||
            x->all_numeric != y->all_numeric)
            return differ(why, why_size, "parameter %u: %s (%u values) != %s (%u values)", p,
                          x->name, x->n_values, y->name, y->n_values);
        for (uint32_t l = 0; l < x->n_values; l++)
            if (strcmp(x->texts[l], y->texts[l]) != 0 || !same_number(x->numbers[l], y->numbers[l]))
                return differ(why, why_size, "parameter %s: value %u: %s != %s", x->name, l,
                              x->texts[l], y->texts[l]);
    }
    if (a->n_metrics != b->n_metrics)
        return differ(why, why_size, "%u metrics != %u", a->n_metrics, b->n_metrics);
    for (uint32_t m = 0; m < a->n_metrics; m++)
        if (strcmp(a->metric_names[m], b->metric_names[m]) != 0)
            return differ(why, why_size, "metric %u: %s != %s", m, a->metric_names[m],
                          b->metric_names[m]);
    if (a->n_entries != b->n_entries)
        return differ(why, why_size, "%zu entries != %zu", a->n_entries, b->n_entries);
    for (size_t i = 0; i < a->n_entries; i++)
        if (diff_entry(why, why_size, a, i, &a->entries[i], &b->entries[i]))
            return 1;
    return 0;
}

/* ---- the JSON texts the store keeps ---- */

static int print_json(char **out, cJSON *item)
{
    *out = item ? cJSON_PrintUnformatted(item) : NULL;
    cJSON_Delete(item);
    return *out ? 0 : nomem();
}

int tforge_recording_space_json(char **out, const tforge_recording *rec)
{
    int failed = 0;
    cJSON *space = cJSON_CreateObject(), *params = cJSON_CreateArray(),
          *metrics = cJSON_CreateArray();
    if (!space || !params || !metrics)
        failed = 1;
    add_item(space, "format", cJSON_CreateString(SPACE_FORMAT), &failed);
    add_item(space, "device_name", cJSON_CreateString(rec->device_name), &failed);
    add_item(space, "kernel_name", cJSON_CreateString(rec->kernel_name), &failed);
    if (rec->problem_size)
        add_item(space, "problem_size", problem_size_json(rec), &failed);
    add_item(space, "objective", cJSON_CreateString(rec->objective), &failed);
    for (uint32_t p = 0; params && p < rec->n_params; p++) {
        const tforge_recording_param *param = &rec->params[p];
        cJSON *object = cJSON_CreateObject();
        add_item(object, "name", cJSON_CreateString(param->name), &failed);
        add_item(object, "values", values_json(param), &failed);
        add_item(object, "texts",
                 cJSON_CreateStringArray((const char *const *)param->texts, (int)param->n_values),
                 &failed);
        if (!object || !cJSON_AddItemToArray(params, object))
            failed = 1;
    }
    add_item(space, "params", params, &failed);
    for (uint32_t m = 0; metrics && m < rec->n_metrics; m++)
        if (!cJSON_AddItemToArray(metrics, cJSON_CreateString(rec->metric_names[m])))
            failed = 1;
    add_item(space, "metrics", metrics, &failed);
    if (failed) {
        cJSON_Delete(space);
        *out = NULL;
        return nomem();
    }
    return print_json(out, space);
}

int tforge_recording_from_space_json(tforge_recording **out, const char *json, const char *where)
{
    *out = NULL;
    tforge_recording *rec = NULL;
    cJSON *space = json ? cJSON_Parse(json) : NULL;
    const cJSON *format = cJSON_GetObjectItemCaseSensitive(space, "format");
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(space, "params");
    const cJSON *metrics = cJSON_GetObjectItemCaseSensitive(space, "metrics");
    int rc = 0;
    if (!cJSON_IsString(format) || strcmp(format->valuestring, SPACE_FORMAT) != 0) {
        rc = field_error(where, format, "\"" SPACE_FORMAT "\" (a recorded space)", "space.format");
        goto cleanup;
    }
    if (!cJSON_IsArray(params) || (metrics && !cJSON_IsArray(metrics))) {
        rc = field_error(where, cJSON_IsArray(params) ? metrics : params, "an array",
                         cJSON_IsArray(params) ? "space.metrics" : "space.params");
        goto cleanup;
    }
    rc = tforge_recording_new(&rec);
    if (!rc)
        rc = read_string_field(&rec->device_name, space, "device_name", 1, where);
    if (!rc)
        rc = read_string_field(&rec->kernel_name, space, "kernel_name", 1, where);
    if (!rc)
        rc = read_string_field(&rec->objective, space, "objective", 0, where);
    if (!rc)
        rc = read_problem_size(rec, cJSON_GetObjectItemCaseSensitive(space, "problem_size"),
                               where, "space.problem_size");
    int i = 0;
    for (const cJSON *param = params->child; param && rc == 0; param = param->next, i++) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(param, "name");
        if (!cJSON_IsString(name))
            rc = field_error(where, name, "a string", "space.params[%d].name", i);
        else
            rc = add_param_json(rec, name->valuestring,
                                cJSON_GetObjectItemCaseSensitive(param, "values"),
                                cJSON_GetObjectItemCaseSensitive(param, "texts"), where,
                                "space.params[\"%s\"].values", "space.params[\"%s\"].texts");
    }
    i = 0;
    for (const cJSON *name = metrics ? metrics->child : NULL; name && rc == 0;
         name = name->next, i++) {
        uint32_t index;
        if (!cJSON_IsString(name))
            rc = field_error(where, name, "a string", "space.metrics[%d]", i);
        else
            rc = tforge_recording_metric(&index, rec, name->valuestring);
    }
    if (rc < 0)
        goto cleanup;
    *out = rec;
    rec = NULL;
cleanup:
    tforge_recording_free(rec);
    cJSON_Delete(space);
    return rc;
}

int tforge_recording_config_json(char **out, const tforge_recording *rec,
                                 const tforge_level *levels)
{
    return print_json(out, config_object(rec, levels));
}

int tforge_recording_config_levels(tforge_level *out, const tforge_recording *rec,
                                   const char *json, const char *where)
{
    cJSON *config = json ? cJSON_Parse(json) : NULL;
    int rc = read_configuration(rec, out, config, where, "configuration");
    cJSON_Delete(config);
    return rc;
}

int tforge_recording_extras_json(char **out, const tforge_recording *rec,
                                 const tforge_recording_entry *entry)
{
    *out = NULL;
    int failed = 0;
    cJSON *extras = cJSON_CreateObject();
    if (!extras)
        return nomem();
    if (entry->n_times)
        add_item(extras, "times", numbers_json(entry->times, entry->n_times),
                 &failed);
    for (size_t t = 1; t < N_TIMING; t++) /* compile_time has a column of its own */
        add_number(extras, timing_fields[t].kt, timing_of(entry, t), &failed);
    for (uint32_t m = 0; m < rec->n_metrics; m++)
        add_number(extras, rec->metric_names[m], entry->metrics[m], &failed);
    if (failed || !extras->child) {
        cJSON_Delete(extras);
        return failed ? nomem() : 0;
    }
    return print_json(out, extras);
}

/* Whether a metric called `name` would repeat a field an entry has already: a parameter, the
 * time, its spread, or one of the timing fields (a profile's `num_warps`, say, where num_warps
 * is tuned). */
static int entry_field(const tforge_recording *rec, const char *name)
{
    if (find_param(rec, name) >= 0)
        return 1;
    for (size_t t = 0; t < N_TIMING; t++)
        if (strcmp(timing_fields[t].kt, name) == 0)
            return 1;
    return strcmp(name, "time") == 0 || strcmp(name, "timestamp") == 0 ||
           strcmp(name, "spread") == 0;
}

int tforge_recording_extras_read(tforge_recording_entry *entry, tforge_recording *rec,
                                 const char *json, const char *where)
{
    entry->times = NULL;
    entry->n_times = 0;
    entry->metrics = NULL;
    for (size_t t = 1; t < N_TIMING; t++)
        *timing(entry, t) = NAN;
    uint32_t have = 0;
    int rc = fit_metrics(&entry->metrics, &have, rec->n_metrics);
    if (rc < 0 || !json)
        return rc;
    cJSON *extras = cJSON_Parse(json);
    if (!cJSON_IsObject(extras))
        rc = field_error(where, extras, "an object", "metrics");
    for (const cJSON *field = extras ? extras->child : NULL; field && rc == 0;
         field = field->next) {
        size_t t = 1;
        while (t < N_TIMING && strcmp(field->string, timing_fields[t].kt) != 0)
            t++;
        if (strcmp(field->string, "times") == 0)
            rc = read_numbers(&entry->times, &entry->n_times, field, 1.0, where, "metrics.times");
        else if (t < N_TIMING && !cJSON_IsNumber(field))
            rc = field_error(where, field, "a number", "metrics.%s", field->string);
        else if (t < N_TIMING)
            *timing(entry, t) = field->valuedouble;
        else if (cJSON_IsNumber(field) && !entry_field(rec, field->string))
            rc = set_metric(rec, &entry->metrics, &have, field->string, field->valuedouble);
    }
    cJSON_Delete(extras);
    return rc;
}
