/* A tune's speed-of-light bound: the roofline cost model (costmodels/roofline) over the
 * device's measured peaks (a device file, engine/profile/sol.h) and the task's bytes and flops
 * at the tuned shape (the launch's facts, from a fresh worker). What the loop prunes and stops
 * with (tforge_loop_bound), and what the results say of the baseline and the winner. */
#ifndef TFORGE_ENGINE_SOL_BOUND_H
#define TFORGE_ENGINE_SOL_BOUND_H

#include "loop.h"
#include "sol.h"
#include "task.h"

typedef struct tforge_sol_bound {
    tforge_device_file device;
    const tforge_costmodel_interface *model;
    void *state;
    double lower;     /* the task's bound at the shape, in ms; NAN when there is none */
    char note[512];   /* where the bound came from, or why there is none */
    tforge_loop_bound loop;
} tforge_sol_bound;

/* Opens the bound over the device file at `device_path` (NULL: none, and the note says so) for
 * the task's selected shape, its facts asked of a fresh worker (`gpu`: on the GPU, else in the
 * interpreter) for its first baseline's launch. No device file, a task with neither bytes nor
 * flops, or no roofline plugin leave no bound (lower NAN, the note says why); a device file
 * that cannot be read is an error (TFORGE_EINPUT naming it and the field). */
int tforge_sol_bound_open(tforge_sol_bound *out, const tforge_registry *registry,
                          const char *device_path, const tforge_task *task, int gpu,
                          double margin, double stop_percent, int timeout_ms);

/* The loop's view, or NULL when there is no bound. */
const tforge_loop_bound *tforge_sol_bound_loop(const tforge_sol_bound *b);

void tforge_sol_bound_close(tforge_sol_bound *b);

#endif
