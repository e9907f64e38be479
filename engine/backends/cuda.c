/* The cuda backend: compiled ahead in the pool of CPU workers, then checked and timed on the GPU
 * worker; re-timing measures again. */
#include "pool.h"

#include <stdlib.h>

static int open_cuda(void **state, const tforge_backend_args *args)
{
    return pool_open((pool **)state, args, POOL_CUDA);
}

static int retime(void *state, const tforge_candidate *candidate, uint64_t seed,
                  tforge_measurement *out)
{
    (void)seed;
    pool_job job;
    int rc = pool_job_of(&job, state, candidate, out);
    if (rc)
        return rc == 1 ? 0 : rc; /* 1: the variant failed, `out` says why */
    pool_time(state, &job, out);
    pool_job_free(&job);
    return pool_task_error(state);
}

const tforge_backend_type tforge_backend_cuda = {"cuda",       1,           open_cuda,
                                                  pool_evaluate, retime,    pool_profile,
                                                  pool_restarts, pool_close, pool_prepare,
                                                  pool_identify};
