/* What each transform of a winner is worth: the winner's variant with one transform taken out
 * at a time, each verified as any candidate is, then re-timed interleaved with the winner. */
#ifndef TFORGE_ENGINE_ABLATION_H
#define TFORGE_ENGINE_ABLATION_H

#include "backend.h"

typedef struct tforge_ablation {
    size_t transform;    /* its index in the task's transforms */
    tforge_measurement m; /* the variant without it: checked; timed when the backend times */
    double with_ms, without_ms; /* medians of the interleaved rounds; NAN when not timed */
} tforge_ablation;

/* One entry per transform active at `point` (none when the point rewrites nothing) into `*out`
 * (the caller frees it), `*n` of them; `rounds` interleaved re-timings when the backend times. */
int tforge_ablate(tforge_ablation **out, size_t *n, tforge_backend *backend,
                  const tforge_task *task, const tforge_level *point, unsigned rounds);

#endif
