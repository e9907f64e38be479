#include "file.h"

#include "tforge/error.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tforge_file_read(char **text, size_t *size, const char *path)
{
    *text = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return tforge_error_set(errno == ENOENT ? TFORGE_ENOTFOUND : TFORGE_EIO, "%s: %s", path,
                                strerror(errno));
    /* A folder opens too, and measures LONG_MAX. */
    long n = -1;
    int whole = fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && n < LONG_MAX &&
                fseek(f, 0, SEEK_SET) == 0 && (*text = malloc((size_t)n + 1)) &&
                fread(*text, 1, (size_t)n, f) == (size_t)n;
    fclose(f);
    if (!whole) {
        free(*text);
        *text = NULL;
        return tforge_error_set(TFORGE_EIO, "%s: cannot read it", path);
    }
    (*text)[n] = '\0';
    *size = (size_t)n;
    return 0;
}
