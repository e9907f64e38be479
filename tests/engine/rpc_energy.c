/* time's answer read with what its observers saw (energy.py): joules per launch, mean power and
 * the SM clock, or the note saying why there is no energy. */
#include "rpc.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

static void the_energy_of_a_timed_batch_is_read(void **state)
{
    (void)state;
    tforge_rpc_reply r;
    tforge_rpc_read(&r, TFORGE_CALL_OK,
                    "{\"ok\": true, \"result\": {\"status\": \"ok\", \"median_ms\": 0.25, "
                    "\"n\": 40, \"energy_j\": 0.075, \"power_w\": 300.5, "
                    "\"sm_clock_mhz\": 1980}}",
                    "");
    tforge_rpc_timed t = tforge_rpc_timed_of(&r);
    assert_true(t.median_ms == 0.25 && t.energy_j == 0.075 && t.power_w == 300.5);
    assert_true(t.sm_clock_mhz == 1980);
    assert_null(t.energy_note);
    tforge_rpc_reply_dispose(&r);

    tforge_rpc_read(&r, TFORGE_CALL_OK,
                    "{\"ok\": true, \"result\": {\"status\": \"ok\", \"median_ms\": 0.002, "
                    "\"n\": 1000, \"energy_note\": \"the kernel is too short to measure\"}}",
                    "");
    t = tforge_rpc_timed_of(&r);
    assert_true(isnan(t.energy_j) && isnan(t.power_w) && isnan(t.sm_clock_mhz));
    assert_string_equal(t.energy_note, "the kernel is too short to measure");
    tforge_rpc_reply_dispose(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_energy_of_a_timed_batch_is_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
