#include "digest.h"

#include "tforge/error.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define FNV_OFFSET 1469598103934665603ull

static uint64_t fnv1a(uint64_t h, const unsigned char *bytes, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ bytes[i]) * 1099511628211ull;
    return h;
}

void tforge_digest_text(char out[TFORGE_DIGEST_SIZE], const char *text, size_t n)
{
    snprintf(out, TFORGE_DIGEST_SIZE, "fnv1a64:%016llx",
             (unsigned long long)fnv1a(FNV_OFFSET, (const unsigned char *)text, n));
}

int tforge_digest_append(char *buf, size_t size, size_t *used, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return tforge_error_set(TFORGE_EIO, "%s: cannot read: %s", path, strerror(errno));
    uint64_t h = FNV_OFFSET;
    unsigned char chunk[1 << 16];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        h = fnv1a(h, chunk, n);
    int failed = ferror(f);
    fclose(f);
    if (failed)
        return tforge_error_set(TFORGE_EIO, "%s: cannot read", path);
    int w = snprintf(buf + *used, size - *used, "fnv1a64:%016llx  %s\n", (unsigned long long)h,
                     path);
    if (w < 0 || (size_t)w >= size - *used)
        return tforge_error_set(TFORGE_ERROR, "%s: too many inputs to record", path);
    *used += (size_t)w;
    return 0;
}

/* The line of `list` for `path` (from its digest to the newline), or NULL. */
static const char *line_of(const char *list, const char *path, size_t len)
{
    for (const char *line = list; line && *line;) {
        const char *name = strstr(line, "  "), *end = strchr(line, '\n');
        if (name && end && (size_t)(end - name - 2) == len && strncmp(name + 2, path, len) == 0)
            return line;
        line = end ? end + 1 : NULL;
    }
    return NULL;
}

int tforge_digest_differs(char *path, size_t size, const char *a, const char *b)
{
    const char *lists[2][2] = {{a, b}, {b, a}};
    for (int k = 0; k < 2; k++)
        for (const char *line = lists[k][0]; line && *line;) {
            const char *name = strstr(line, "  "), *end = strchr(line, '\n');
            if (!name || !end)
                break;
            size_t len = (size_t)(end - name - 2);
            const char *other = line_of(lists[k][1], name + 2, len);
            if (!other || strncmp(other, line, (size_t)(end - line)) != 0) {
                snprintf(path, size, "%.*s", (int)len, name + 2);
                return 1;
            }
            line = end + 1;
        }
    return 0;
}
