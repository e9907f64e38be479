/* A whole file read into memory: the kernel sources the engine and the command line hand to the
 * transforms, which need all of it at once. */
#ifndef TFORGE_BASE_FILE_H
#define TFORGE_BASE_FILE_H

#include <stddef.h>

/* The bytes of the file at `path` into `*text` (NUL-terminated, for the caller to free) and their
 * count into `*size`; 0, or TFORGE_ENOTFOUND (no such file) or TFORGE_EIO (anything else: a
 * folder, a FIFO or device (refused without waiting), a failed read or allocation) with a message "<path>: <why>"; `*text` is then NULL. */
int tforge_file_read(char **text, size_t *size, const char *path);

#endif
