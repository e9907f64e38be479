/* Files: read whole (plain or gzip, a Kernel Tuner cache left open repaired), the format told
 * by the content, and written through a temporary file. */
#include "recording_internal.h"
#include "file.h"

#include "tforge/log.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The largest recording read, uncompressed: the biggest public caches are tens of MB, and a
 * compressed file may grow without bound (a gzip bomb). */
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

/* Opens a regular file for reading. Opened without blocking and told by its descriptor, so that
 * a FIFO, a device or a directory is refused before anything waits on it (and a file swapped in
 * after a check cannot be read instead); reads then block as usual. */
static int open_regular(gzFile *out, const char *path)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return tforge_error_set(errno == ENOENT ? TFORGE_ENOTFOUND : TFORGE_EIO,
                                "%s: cannot open: %s", path, strerror(errno));
    const char *instead = tforge_file_not_regular(fd);
    int rc = 0;
    if (instead)
        rc = tforge_error_set(TFORGE_EINPUT, "%s: not a regular file (%s): expected a Kernel "
                              "Tuner cache or T4 results", path, instead);
    else if (!(*out = gzdopen(fd, "rb")))
        rc = nomem();
    if (rc < 0)
        close(fd);
    return rc;
}

static int read_all(char **out, size_t *len_out, const char *path)
{
    *out = NULL;
    *len_out = 0;
    gzFile file;
    int rc = open_regular(&file, path);
    if (rc < 0)
        return rc;
    gzbuffer(file, 1u << 17);
    size_t cap = 1u << 20, len = 0;
    char *buf = malloc(cap + 1);
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

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

int recording_writer_open(recording_writer *w, const char *path)
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

void recording_put(recording_writer *w, const char *text)
{
    size_t n = strlen(text);
    if (!w->failed && n > 0 && gzwrite(w->file, text, (unsigned)n) != (int)n)
        w->failed = 1;
}

/* Prints a JSON item compactly into the file; `item` is deleted. */
void recording_put_json(recording_writer *w, cJSON *item)
{
    char *text = item ? cJSON_PrintUnformatted(item) : NULL;
    if (!text)
        w->failed = 1;
    else
        recording_put(w, text);
    free(text);
    cJSON_Delete(item);
}

int recording_writer_close(recording_writer *w, int rc)
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

/* An entry's levels, to sort entries by configuration. */
typedef struct entry_ref {
    const tforge_level *levels;
    uint32_t n_params;
    size_t index;
} entry_ref;

static int compare_refs(const void *a, const void *b)
{
    const entry_ref *x = a, *y = b;
    int c = memcmp(x->levels, y->levels, x->n_params * sizeof *x->levels);
    return c ? c : (x->index > y->index) - (x->index < y->index);
}

/* A configuration recorded twice is refused: a space holds each point once, and which of the two
 * values it has would be the reader's guess. Names the file and the configuration (as `field`
 * of its entries: `cache["16,1"]`, or the two results of a T4 file). */
static int check_unique(const tforge_recording *rec, const char *path, int t4)
{
    if (rec->n_entries < 2)
        return 0;
    entry_ref *refs = malloc(rec->n_entries * sizeof *refs);
    if (!refs)
        return nomem();
    for (size_t i = 0; i < rec->n_entries; i++)
        refs[i] = (entry_ref){rec->entries[i].levels, rec->n_params, i};
    qsort(refs, rec->n_entries, sizeof *refs, compare_refs);
    int rc = 0;
    for (size_t i = 1; i < rec->n_entries && rc == 0; i++) {
        if (memcmp(refs[i - 1].levels, refs[i].levels, rec->n_params * sizeof *refs->levels))
            continue;
        char *key = NULL;
        if ((rc = tforge_recording_key(&key, rec, refs[i].levels)) < 0)
            break;
        rc = t4 ? tforge_error_set(TFORGE_EINPUT, "%s: results[%zu] and results[%zu]: the same "
                                   "configuration (%s) recorded twice; expected each once", path,
                                   refs[i - 1].index, refs[i].index, key)
                : tforge_error_set(TFORGE_EINPUT, "%s: cache[\"%.200s\"]: recorded twice; "
                                   "expected each key once", path, key);
        free(key);
    }
    free(refs);
    return rc;
}

/* What a recorded space needs to be replayed or stored, beyond a well-formed file: a
 * configuration at least, and an objective its configurations measure. */
static int check_space(const tforge_recording *rec, const char *path, int t4)
{
    if (rec->n_entries == 0)
        return tforge_error_set(TFORGE_EINPUT, "%s: %s: no configuration recorded; expected one "
                                "at least", path, t4 ? "results" : "cache");
    if (strcmp(rec->objective, "time") == 0)
        return 0;
    char known[512] = "time";
    size_t used = strlen(known);
    for (uint32_t m = 0; m < rec->n_metrics; m++) {
        if (strcmp(rec->metric_names[m], rec->objective) == 0)
            return 0;
        if (used < sizeof known)
            used += (size_t)snprintf(known + used, sizeof known - used, ", %s",
                                     rec->metric_names[m]);
    }
    return tforge_error_set(TFORGE_EINPUT, "%s: %s: \"%.200s\" is measured by no configuration; "
                            "expected time or a metric recorded (%s)", path,
                            t4 ? "metadata.objective" : "objective", rec->objective, known);
}

static int read_recording(tforge_recording **out, const char *path, int space_needed)
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
    int t4 = 0;
    if (cJSON_IsObject(root) && cJSON_GetObjectItemCaseSensitive(root, "cache")) {
        rc = recording_read_kt(rec, root, path);
    } else if (cJSON_IsObject(root) && cJSON_GetObjectItemCaseSensitive(root, "results")) {
        rc = recording_read_t4(rec, root, path);
        t4 = 1;
    } else {
        rc = tforge_error_set(TFORGE_EINPUT,
                              "%s: expected a Kernel Tuner cache (an object with \"cache\") or "
                              "T4 results (an object with \"results\")",
                              path);
    }
    if (rc == 0)
        rc = check_unique(rec, path, t4);
    if (rc == 0 && space_needed)
        rc = check_space(rec, path, t4);
    if (rc < 0)
        goto cleanup;
    *out = rec;
    rec = NULL;
cleanup:
    tforge_recording_free(rec);
    cJSON_Delete(root);
    return rc;
}

int tforge_recording_read(tforge_recording **out, const char *path)
{
    return read_recording(out, path, 0);
}

int tforge_recording_read_space(tforge_recording **out, const char *path)
{
    return read_recording(out, path, 1);
}
