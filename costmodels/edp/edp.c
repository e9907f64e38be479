/* The energy-delay product: joules per launch times its median time in seconds (J*s), which
 * weighs speed and energy alike (a kernel twice as fast for the same power halves both). */
#include <tforge/sdk/objective.h>

static double energy_delay(const tforge_measurement *m)
{
    return tforge_sdk_objective_metric(m, "energy_j") * m->median_ms / 1e3;
}

TFORGE_SDK_OBJECTIVE("edp", "energy-delay", "J*s",
                     "energy-delay: joules per launch times the median time in s (J*s)",
                     energy_delay, "no energy_j or no time measured");
