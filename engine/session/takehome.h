/* The winner, re-run as the user runs it: best_variant.py and best_config.py imported in a
 * fresh worker process and launched through the file's own entry point; a winner whose files
 * fail is refused and the next candidate named. */
#ifndef TFORGE_ENGINE_SESSION_TAKEHOME_H
#define TFORGE_ENGINE_SESSION_TAKEHOME_H

#include "loop.h"
#include "task.h"

#include <cjson/cJSON.h>

typedef struct tforge_takehome {
    int gpu;            /* run on the GPU (else in Triton's interpreter) */
    int timeout_ms;
    char *hook;         /* the winner's launch hook (Python), NULL: none needed */
    size_t hook_at;     /* its byte offset in best_variant.py's kernel text */
    char *dropped;      /* "maxnreg, num_stages": what the file's launch does not pass, or NULL */
    char *report;       /* report.md's lines, or NULL before the first verdict */
    cJSON *result;      /* result.json's "take_home": {verified, refused, ...} */
    long first_best;    /* the winner the search named */
} tforge_takehome;

/* Before the files are written: the launch hook of the current winner (o->best), whose
 * rewritten kernel file is `variant` (NULL: the file as it is). */
int tforge_takehome_hook(tforge_takehome *th, const tforge_task *task,
                         const tforge_loop_outcome *o, const char *variant);

/* After the files are written into `dir`: runs them as the user does. Returns 0 when the winner
 * passed (or there is none), 1 when it was refused and `o` names the next candidate to try (its
 * files to be written and run again), negative on an engine error. The verdicts accumulate in
 * th->result and th->report. */
int tforge_takehome_verify(tforge_takehome *th, const char *dir, const tforge_task *task,
                           tforge_loop_outcome *o, char *const *rewrites);

void tforge_takehome_dispose(tforge_takehome *th);

#endif
