/* The energy objective: a measurement's value is the joules one launch takes, the metric
 * "energy_j" that the GPU worker measures with NVML's energy counter around a batch of launches
 * (or a recording carries). */
#include <tforge/sdk/objective.h>

static double joules(const tforge_measurement *m)
{
    return tforge_sdk_objective_metric(m, "energy_j");
}

TFORGE_SDK_OBJECTIVE("energy", "energy", "J",
                     "energy: joules per launch (energy_j, from NVML's energy counter)", joules,
                     "no energy_j measured (NVML absent, or the kernel too short to measure)");
