/* A cost model built outside the tree against the installed kit: energy x delay squared (J*s^2),
 * which leans further toward speed than energy-delay. It reads what the GPU worker measures:
 * joules per launch (the metric "energy_j") and the median time. */
#include <tforge/sdk/objective.h>

static double ed2p(const tforge_measurement *m)
{
    double seconds = m->median_ms / 1e3;
    return tforge_sdk_objective_metric(m, "energy_j") * seconds * seconds;
}

TFORGE_SDK_OBJECTIVE("ed2p", "energy-delay-squared", "J*s^2",
                     "energy x delay squared (J*s^2): an out-of-tree example", ed2p,
                     "no energy_j or no time measured");
