/* Evaluating candidates: the backends behind `tforge tune`.
 *   cuda       compile ahead in a pool of CPU workers, then check and time on the GPU worker
 *   interpret  compile for sm_90 in the pool (resources, spills), check in Triton's interpreter
 *              on the CPU; no timing, so no value
 *   replay     the value recorded for the config in a recorded space; optionally checked in the
 *              interpreter as well
 *   compile    compile only (for the GPU there is, else sm_90): which candidates build, with
 *              what registers, spills and shared memory, and how fast the pool compiles
 * A candidate that fails (does not compile, crashes, hangs, computes wrong) is a result with a
 * status, never an error of the evaluator. */
#ifndef TFORGE_ENGINE_EVALUATE_H
#define TFORGE_ENGINE_EVALUATE_H

#include "recording.h"
#include "task.h"

typedef enum tforge_backend {
    TFORGE_BACKEND_CUDA = 0,
    TFORGE_BACKEND_INTERPRET = 1,
    TFORGE_BACKEND_REPLAY = 2,
    TFORGE_BACKEND_COMPILE = 3
} tforge_backend;

typedef struct tforge_result {
    tforge_status status;
    double value;        /* ms, median; NAN without timing */
    double min, spread;  /* ms; IQR / median */
    uint32_t repeats;
    double compile_ms;
    double wall_ms;      /* what the evaluation cost (recorded cost, for replay) */
    char message[256];   /* why it failed */
    char metrics[256];   /* JSON object text: registers, spills, shared memory ... or "" */
} tforge_result;

#define TFORGE_EVALUATOR_OPTIONS_VERSION 1
typedef struct tforge_evaluator_options {
    unsigned version;
    tforge_backend backend;
    const tforge_recording *recording; /* replay: the recorded space */
    int check;            /* replay: also check every candidate in the interpreter */
    unsigned compile_workers;
    size_t shape;         /* index into the task's tune shapes */
    int compile_timeout_ms, check_timeout_ms, time_timeout_ms;
} tforge_evaluator_options;
#define TFORGE_EVALUATOR_OPTIONS_INIT                                                             \
    {TFORGE_EVALUATOR_OPTIONS_VERSION, TFORGE_BACKEND_CUDA, NULL, 0, 4, 0, 300000, 600000, 120000}

typedef struct tforge_evaluator tforge_evaluator;

/* `task` and the options' recording must outlive the evaluator. */
int tforge_evaluator_open(tforge_evaluator **out, const tforge_task *task,
                          const tforge_evaluator_options *options);
/* Evaluates `n` configs (JSON texts): compiled in parallel, then checked and timed one by one. */
int tforge_evaluator_run(tforge_evaluator *evaluator, const char *const *configs, size_t n,
                         tforge_result *results);
/* Times one config again (cuda: measured; replay: one recorded run drawn with the seed). */
int tforge_evaluator_retime(tforge_evaluator *evaluator, const char *config, uint64_t seed,
                            tforge_result *result);
/* How many worker processes were replaced after a crash or a hang. */
unsigned tforge_evaluator_restarts(const tforge_evaluator *evaluator);
void tforge_evaluator_close(tforge_evaluator *evaluator);

const char *tforge_backend_name(tforge_backend backend);

#endif
