/* The compile backend: compiled only (for the GPU there is, else sm_90): which candidates build,
 * with what registers, spills and shared memory, and how fast the pool compiles. */
#include "pool.h"

static int open_compile(void **state, const tforge_backend_args *args)
{
    return pool_open((pool **)state, args, POOL_COMPILE);
}

const tforge_backend_type tforge_backend_compile = {
    "compile", 0, open_compile, pool_evaluate, pool_retime_untimed, pool_profile, pool_restarts,
    pool_close, NULL, pool_identify};
