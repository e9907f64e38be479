/* The interpret backend: compiled for sm_90 in the pool (resources, spills), checked in Triton's
 * interpreter on the CPU; nothing is timed, so measurements carry no value. */
#include "pool.h"

static int open_interpret(void **state, const tforge_backend_args *args)
{
    return pool_open((pool **)state, args, POOL_INTERPRET);
}

const tforge_backend_type tforge_backend_interpret = {
    "interpret", 0, open_interpret, pool_evaluate, pool_retime_untimed, pool_profile, pool_restarts,
    pool_close, pool_prepare, pool_identify};
