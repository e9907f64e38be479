/* The workers' framing, shared by both ends (worker.c, pyworker.c): a 4-byte little-endian length,
 * then that many bytes. Internal to the engine. */
#ifndef TFORGE_ENGINE_FRAME_H
#define TFORGE_ENGINE_FRAME_H

#include <errno.h>
#include <stddef.h>
#include <unistd.h>

/* Reads exactly n bytes (blocking); -1 on end of file or error. */
static inline int tforge_frame_read_all(int fd, void *data, size_t n)
{
    char *p = data;
    while (n > 0) {
        ssize_t k = read(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

static inline int tforge_frame_write_all(int fd, const void *data, size_t n)
{
    const char *p = data;
    while (n > 0) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

static inline size_t tforge_frame_length(const unsigned char h[4])
{
    return (size_t)h[0] | (size_t)h[1] << 8 | (size_t)h[2] << 16 | (size_t)h[3] << 24;
}

/* Writes one frame of n bytes; -1 when the other end is gone. */
static inline int tforge_frame_write(int fd, const char *text, size_t n)
{
    unsigned char h[4] = {(unsigned char)n, (unsigned char)(n >> 8), (unsigned char)(n >> 16),
                          (unsigned char)(n >> 24)};
    return tforge_frame_write_all(fd, h, 4) || tforge_frame_write_all(fd, text, n) ? -1 : 0;
}

#endif
