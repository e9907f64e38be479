/* The loop run over the timed fake backend (fake_timed.h, included before this) and a space:
 * `evaluated` counts from zero for each run; a failed run fails the test with its error. */
#ifndef TFORGE_TESTS_FAKE_LOOP_H
#define TFORGE_TESTS_FAKE_LOOP_H

#include "backend.h"
#include "loop.h"
#include "tforge/error.h"

static void run(tforge_loop_outcome *out, tforge_registry *reg, const tforge_space *space,
                const tforge_loop_options *o)
{
    tforge_backend backend;
    tforge_backend_args args = TFORGE_BACKEND_ARGS_INIT;
    args.space = space;
    assert_int_equal(tforge_backend_open(&backend, &fake_type, &args), 0);
    evaluated = 0;
    int rc = tforge_loop_run(out, reg, space, &backend, o);
    if (rc)
        fail_msg("loop: %s", tforge_error_last()->message);
    tforge_backend_close(&backend);
}

#endif
