/* The worker processes behind the cuda, interpret and compile backends (and replay's checks):
 * a pool of compile workers serving a queue of compiles from a thread of its own (a batch's,
 * and the next batch's asked for ahead), and one runner that checks (and, on a GPU, times) each
 * candidate as soon as its compile has finished. */
#ifndef TFORGE_ENGINE_BACKENDS_POOL_H
#define TFORGE_ENGINE_BACKENDS_POOL_H

#include "backend.h"
#include "digest.h"

typedef struct pool pool;

typedef enum pool_mode {
    POOL_CUDA,      /* compile, check on the GPU (tuning shape too), time */
    POOL_INTERPRET, /* compile for sm_90, check in the interpreter */
    POOL_COMPILE,   /* compile only */
    POOL_CHECK      /* no compiling: a runner that checks in the interpreter (replay --check) */
} pool_mode;

int pool_open(pool **out, const tforge_backend_args *args, pool_mode mode);
/* Also the type tables' close (`state` is a pool); NULL is allowed. */
void pool_close(void *state);

/* What the worker is sent for a candidate: its config text (its own, or its point's), its
 * variant's source (NULL when it is the kernel file as it is, which the worker reads itself) and
 * that source's digest; the caller frees the texts. Taken from the candidate's identity, or, for
 * a candidate not identified, from one made here and dropped. A variant the transforms cannot
 * compose fails the candidate: 1 with `m` holding the failure (status compile, the reason).
 * A model's proposal (a source of the candidate's own, or a level of the task's `variant`) is
 * checked in both orders. */
typedef struct pool_job {
    char *config, *variant;
    char digest[TFORGE_DIGEST_SIZE];
    int proposal;
} pool_job;
int pool_job_of(pool_job *out, const pool *p, const tforge_candidate *candidate,
                tforge_measurement *m);
void pool_job_free(pool_job *job);

/* Compiles every job (a NULL config: failed already, skipped), then checks (and times) each one
 * that compiled. */
int pool_run(pool *p, const pool_job *jobs, size_t n, tforge_measurement *out);
/* Checks one job on every check shape with fresh inputs; 1 when it passed (else `m` holds the
 * failure). */
int pool_check(pool *p, const pool_job *job, tforge_measurement *m);
/* Times one job on the GPU worker into `m`. */
void pool_time(pool *p, const pool_job *job, tforge_measurement *m);
/* The type-table functions the pool's backends share (`state` is a pool): evaluate makes each
 * candidate's job and runs pool_run; retime_untimed leaves the measurement untimed (for the
 * backends that time nothing). */
int pool_evaluate(void *state, const tforge_candidate *candidates, size_t n,
                  tforge_measurement *out);
/* Queues the candidates' compiles now, for a pool_run of them later (the backends' prepare); a
 * candidate whose variant fails is left for that run to report. */
int pool_prepare(void *state, const tforge_candidate *candidates, size_t n);
int pool_retime_untimed(void *state, const tforge_candidate *candidate, uint64_t seed,
                        tforge_measurement *out);
unsigned pool_restarts(const void *state);
/* The backends' identify, the one place a candidate's variant is made: its digest and its
 * source (the kernel file's when it rewrites nothing), or why the transforms cannot make it. */
int pool_identify(void *state, tforge_candidate *candidate);
/* The profile op: the worker's `profile` request for the candidate (the runner's, else a compile
 * worker's), counters only on POOL_CUDA and when asked, then the static metrics over the
 * device's limits the worker sent (the H200's without a GPU). */
int pool_profile(void *state, const tforge_candidate *candidate,
                 const tforge_measurement *measured, int counters, tforge_profile *out);

/* TFORGE_EINPUT with the worker's message when a worker raised a TaskError (the task itself is
 * broken: its reference, inputs or launch expressions), else 0. pool_run checks it itself. */
int pool_task_error(pool *p);

#endif
