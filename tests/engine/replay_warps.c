/* The replay backend's profile reads a candidate's warps (for the static metrics that need them,
 * occupancy) from the dimension whose effect is warps, whatever it is called. */
#include "backend.h"
#include "profile.h"
#include "recording.h"

#include "tforge/space.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

static void the_warps_are_the_dimension_whose_effect_is_warps(void **state)
{
    (void)state;
    tforge_recording *rec;
    assert_int_equal(tforge_recording_new(&rec), 0);
    const char *texts[] = {"4", "8"};
    const double numbers[] = {4, 8};
    assert_int_equal(tforge_recording_add_param(rec, "warps", 2, texts, numbers), 0);
    tforge_level levels[2][1] = {{0}, {1}};
    for (int i = 0; i < 2; i++) {
        tforge_recording_entry e = {.levels = levels[i], .status = TFORGE_STATUS_OK,
                                    .time = 1.0 + i};
        assert_int_equal(tforge_recording_add_entry(rec, &e), 0);
    }

    tforge_space *space;
    assert_int_equal(tforge_space_new(&space), 0);
    assert_int_equal(tforge_space_add_values(space, "warps", numbers, 2), 0);
    assert_int_equal(tforge_space_describe(space, 0, TFORGE_DIM_OWNER_KNOB, TFORGE_DIM_KNOB,
                                           TFORGE_EFFECT_WARPS),
                     0);
    assert_int_equal(tforge_space_build(space, NULL), 0);

    tforge_backend_args args = TFORGE_BACKEND_ARGS_INIT;
    args.space = space;
    args.recording = rec;
    tforge_backend backend;
    assert_int_equal(tforge_backend_open(&backend, &tforge_backend_replay, &args), 0);
    tforge_candidate c = {.point = levels[1]};
    tforge_profile p;
    assert_int_equal(tforge_backend_profile(&backend, &c, NULL, 0, &p), 0);
    assert_true(tforge_profile_get(&p, "num_warps") == 8);
    tforge_backend_close(&backend);
    tforge_space_free(space);
    tforge_recording_free(rec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_warps_are_the_dimension_whose_effect_is_warps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
