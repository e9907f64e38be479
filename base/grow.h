/* Growing arrays by doubling: the one helper the engine's lists share. Internal to the build. */
#ifndef TFORGE_BASE_GROW_H
#define TFORGE_BASE_GROW_H

#include "tforge/error.h"

#include <stddef.h>
#include <stdlib.h>

/* Makes room for item `n` in `*items` (capacity `*cap` items of `size` bytes), doubling from 8.
 * Returns 0, or TFORGE_ENOMEM with `what` in the message (the array is left as it was). */
static inline int tforge_grow(void **items, size_t *cap, size_t n, size_t size, const char *what)
{
    if (n < *cap)
        return 0;
    size_t next = *cap ? *cap * 2 : 8;
    void *bigger = realloc(*items, next * size);
    if (!bigger)
        return tforge_error_set(TFORGE_ENOMEM, "out of memory (%s)", what);
    *items = bigger;
    *cap = next;
    return 0;
}

#endif
