/* Content digests of input files, so that a resumed run can tell that what it measured has
 * changed since (FNV-1a, 64 bits: change detection, not security). */
#ifndef TFORGE_BASE_DIGEST_H
#define TFORGE_BASE_DIGEST_H

#include <stddef.h>

/* "fnv1a64:" and 16 hex digits, NUL-terminated. */
#define TFORGE_DIGEST_SIZE 25

/* The digest of `n` bytes of `text` into `out`: a candidate's variant source is known by it (the
 * same digest as its file's line below, for a kernel file as it is). */
void tforge_digest_text(char out[TFORGE_DIGEST_SIZE], const char *text, size_t n);

/* Appends "fnv1a64:<16 hex digits>  <path>\n" for the file at `path` to `buf` (of `size`,
 * NUL-terminated, holding `*used` bytes); TFORGE_EIO naming the file when it cannot be read,
 * TFORGE_ERROR when the line does not fit. */
int tforge_digest_append(char *buf, size_t size, size_t *used, const char *path);

/* The first path whose line differs between two such lists (or that only one holds), copied to
 * `path`; 0 when they are equal, 1 otherwise. */
int tforge_digest_differs(char *path, size_t size, const char *a, const char *b);

#endif
