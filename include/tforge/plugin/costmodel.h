/* DRAFT, interface "tforge.costmodel/1" (not frozen: issue 16 fills it in; latency is the
 * built-in objective, energy from NVML and an analytical roofline/occupancy model follow). A cost
 * model turns a measurement into the objective's value (lower is better) that the loop compares
 * and the strategy is told; the backends hand every measurement to it before the loop sees it. */
#ifndef TFORGE_PLUGIN_COSTMODEL_H
#define TFORGE_PLUGIN_COSTMODEL_H

#include "plugin.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TFORGE_COSTMODEL_INTERFACE_ID "tforge.costmodel/1"

typedef struct tforge_costmodel_interface {
    uint32_t struct_size;
    /* The head every kind's create shares (plugin.h); a cost model needs nothing more. */
    int (*create)(void **state, const tforge_host *host, const tforge_options_view *options);
    /* Sets m->value from the rest of `m` (its times and metrics); may add metrics it computed. A
     * measurement whose status is not OK is left as it is. */
    int (*score)(void *state, tforge_measurement *m);
    void (*destroy)(void *state);
} tforge_costmodel_interface;

#ifdef __cplusplus
}
#endif
#endif
