#include "file.h"

#include "tforge/error.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *tforge_file_not_regular(int fd)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return strerror(errno);
    if (!S_ISREG(st.st_mode))
        return S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO"
                                                                           : "a device or socket";
    return fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) == 0 ? NULL : strerror(errno);
}

int tforge_file_read(char **text, size_t *size, const char *path)
{
    *text = NULL;
    /* Opened without waiting and told by its descriptor: a FIFO would wait for a writer for
     * good, and a folder opens too. Reads then block as usual. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return tforge_error_set(errno == ENOENT ? TFORGE_ENOTFOUND : TFORGE_EIO, "%s: %s", path,
                                strerror(errno));
    const char *instead = tforge_file_not_regular(fd);
    FILE *f = instead ? NULL : fdopen(fd, "rb");
    if (!f) {
        close(fd);
        return instead ? tforge_error_set(TFORGE_EIO, "%s: not a regular file (%s)", path, instead)
                       : tforge_error_set(TFORGE_EIO, "%s: %s", path, strerror(errno));
    }
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
