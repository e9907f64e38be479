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
    char *config = NULL;
    int rc = pool_config(&config, state, candidate);
    if (rc)
        return rc;
    pool_time(state, config, out);
    free(config);
    return pool_task_error(state);
}

const tforge_backend_type tforge_backend_cuda = {"cuda", 1, open_cuda, pool_evaluate, retime,
                                                  pool_restarts, pool_close};
