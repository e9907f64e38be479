/* A task (engine/task/TASK.md) as the engine holds it: loaded and validated by a worker's Python,
 * its space built here. Shapes and configs stay JSON object texts: they travel back to
 * Python. */
#ifndef TFORGE_ENGINE_TASK_H
#define TFORGE_ENGINE_TASK_H

#include "tforge/space.h"
#include "worker.h"

#include <stddef.h>

typedef struct tforge_task {
    char *path;            /* the task file, absolute */
    char *kernel;          /* the kernel's name */
    char *source;          /* the kernel file, absolute */
    char *baseline_from;   /* "task", "autotune", "wrapper" or "defaults" */
    size_t n_tune, n_check, n_baseline, n_files;
    char **files;          /* every file the task reads: itself, the kernel, the reference's
                              and inputs' modules (their digests tell a stale stored run) */
    char **tune_shapes;    /* {"M": 4096, ...} */
    char **check_shapes;
    size_t n_plans, n_dropped, n_warnings;
    char **dropped;        /* "FILE:LINE-END: dropped KIND (binds a, b)": what the import filter
                              left out of every file it loaded */
    char **warnings;       /* what the results may get wrong here (interpreter gaps) */
    char **plans;          /* per tuning shape (n_plans == n_tune): {"baseline": [...], "space": {...}} */
    size_t shape;          /* the tuning shape selected (0 after loading) */
    char **baselines;      /* the selected shape's configs: {"BLOCK_M": 32, "num_warps": 4} */
    tforge_space *space;   /* the selected shape's space, built */
} tforge_task;

/* Asks `worker` to load and validate the task file, then builds its space. Errors that the
 * validator found come back as TFORGE_EINPUT with its message (every bad field, by JSON path). */
int tforge_task_load(tforge_task **out, tforge_worker *worker, const char *path,
                     int timeout_ms);
void tforge_task_free(tforge_task *task);

/* Selects tuning shape `shape`: its baselines and its space (constraints over shape symbols take
 * its sizes) replace the current ones. */
int tforge_task_select(tforge_task *task, size_t shape);

/* The config of a point, as a JSON object text the caller frees. */
int tforge_task_config(char **out, const tforge_task *task, const tforge_level *point);

/* The point of a config (every space parameter present, at one of its values); TFORGE_ENOTFOUND
 * when it is outside the space. */
int tforge_task_point(tforge_level *out, const tforge_task *task, const char *config);

#endif
