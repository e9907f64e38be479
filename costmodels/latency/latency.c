/* The latency objective (the default): a measurement's value is its median time in ms. */
#include <tforge/sdk/objective.h>

static double median_ms(const tforge_measurement *m)
{
    return m->median_ms;
}

TFORGE_SDK_OBJECTIVE("latency", "latency", "ms",
                     "latency: the median kernel time in ms (the default objective)", median_ms,
                     "no time was measured");
