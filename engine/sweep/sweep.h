/* A sweep: many tune sessions, one a (task, shape) of a manifest (manifest.h), into one folder:
 * DIR/<name>/shape-<i>/ holds what `tforge tune` writes, DIR/sweep.json lists every (task,
 * shape) with its status and its result. Rank 0 runs the sessions, each on a thread of its own
 * (their strategies propose there, and their stores are written there); each session's
 * backend evaluates elsewhere (backend.h): its batches are cut into jobs, one candidate each,
 * which go to whichever evaluating rank is idle (rank 0's own evaluator thread among them
 * unless told otherwise), and each rank evaluates with its own backend of that task and shape
 * (tforge_tune_evaluator) and sends the measurements back. Identities, the final re-timing and
 * the winner's profile stay with the session's own backend on rank 0: a winner is re-timed with
 * its baseline on one device. Alone (no transport) the one evaluator is rank 0's. */
#ifndef TFORGE_ENGINE_SWEEP_H
#define TFORGE_ENGINE_SWEEP_H

#include "registry.h"

#include <stddef.h>

/* How rank 0 and the others exchange texts (MPI: mpi.c). [rank 0's main thread] for send and
 * poll, [the rank's main thread] for receive and reply. */
typedef struct tforge_sweep_transport {
    int rank, ranks;
    void *context;
    int (*send)(void *context, int to, const char *text);  /* rank 0: a job, or NULL: stop */
    /* rank 0: 1 with `*from` and `*text` (allocated) when a result has come, else 0 at once */
    int (*poll)(void *context, int *from, char **text);
    int (*receive)(void *context, char **text); /* rank > 0: the next job; NULL: stop */
    int (*reply)(void *context, const char *text);
} tforge_sweep_transport;

#define TFORGE_SWEEP_OPTIONS_VERSION 1
typedef struct tforge_sweep_options {
    unsigned version;
    const char *manifest;
    const tforge_registry *registry;
    const char *out;     /* NULL: the manifest's "out", else tforge-sweep */
    int resume;          /* continue the sweep in the folder: what is done stays done */
    int progress;        /* a live line on standard error */
    int rank0_evaluates; /* rank 0 evaluates too */
    const tforge_sweep_transport *transport; /* NULL: alone */
} tforge_sweep_options;
#define TFORGE_SWEEP_OPTIONS_INIT {TFORGE_SWEEP_OPTIONS_VERSION, NULL, NULL, NULL, 0, 0, 1, NULL}

typedef struct tforge_sweep_outcome {
    char *dir;
    size_t n, done, failed;   /* (task, shape)s: all, tuned, failed */
    size_t evaluations;       /* evaluated in this run (not taken from the stores) */
    double seconds;           /* the whole run */
    double evaluating_seconds; /* from the first job sent to the last result back */
} tforge_sweep_outcome;
void tforge_sweep_outcome_dispose(tforge_sweep_outcome *outcome);

/* Rank 0 (or alone): runs the sweep. 0 when every (task, shape) tuned; TFORGE_EINPUT for a
 * manifest refused (nothing run) or a folder holding a sweep without `resume`; else the last
 * failure's code. With a transport, every other rank is told to stop before it returns. */
int tforge_sweep_run(const tforge_sweep_options *options, tforge_sweep_outcome *out);

/* Every other rank: evaluates the jobs rank 0 sends until it says stop. */
int tforge_sweep_serve(const tforge_sweep_transport *transport, const tforge_registry *registry);

/* MPI's transport (NULL where the engine was built without MPI, with the error set): MPI
 * initialised, this rank's GPU chosen (CUDA_VISIBLE_DEVICES from the local rank, unless set);
 * tforge_sweep_mpi_end finalises it. */
const tforge_sweep_transport *tforge_sweep_mpi(int *argc, char ***argv);
void tforge_sweep_mpi_end(void);

#endif
