/* A whole file read into memory: the kernel sources the engine and the command line hand to the
 * transforms, which need all of it at once. */
#ifndef TFORGE_BASE_FILE_H
#define TFORGE_BASE_FILE_H

#include <stddef.h>

/* The bytes of the file at `path` into `*text` (NUL-terminated, for the caller to free) and their
 * count into `*size`; 0, or TFORGE_ENOTFOUND (no such file) or TFORGE_EIO (anything else: a
 * folder, a FIFO or device (refused without waiting), a failed read or allocation) with a message "<path>: <why>"; `*text` is then NULL. */
int tforge_file_read(char **text, size_t *size, const char *path);

/* For a descriptor opened with O_NONBLOCK (so that opening a FIFO did not wait for a writer):
 * NULL when it is a regular file, now blocking again for its reads; else what it is instead ("a
 * directory", "a FIFO", "a device or socket", or why it could not be told), for the caller's
 * message. */
const char *tforge_file_not_regular(int fd);

#endif
