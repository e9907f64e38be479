#include "costmodel.h"

#include "tforge/error.h"

#include <stdlib.h>
#include <string.h>

/* The built-in default: the latency plugin's own code, linked in (costmodels/latency), so that
 * a run without plugins on its search path still has an objective. */
extern const tforge_plugin_module tforge_static_latency;

struct tforge_costmodel {
    const tforge_plugin_descriptor *descriptor;
    const tforge_costmodel_interface *interface;
    void *state;
};

int tforge_costmodel_open(tforge_costmodel **out, const tforge_registry *registry, const char *id)
{
    *out = NULL;
    const tforge_plugin_descriptor *descriptor = NULL;
    const tforge_costmodel_interface *interface = NULL;
    if (!id) {
        descriptor = tforge_static_latency.get(0);
        interface = descriptor->interface;
    } else {
        const tforge_plugin_record *r =
            registry ? tforge_registry_find(registry, TFORGE_COSTMODEL_INTERFACE_ID, id) : NULL;
        if (!r)
            return tforge_error_set(TFORGE_ENOTFOUND, "no cost model %s (`tforge plugins` lists "
                                    "them)", id);
        descriptor = r->descriptor;
        interface = tforge_plugin_interface(r, TFORGE_COSTMODEL_INTERFACE_ID);
    }
    if (!interface || !interface->score)
        return tforge_error_set(TFORGE_EINPUT, "cost model %s scores no measurement (it only "
                                "predicts): it cannot be the objective", descriptor->id);
    tforge_costmodel *c = calloc(1, sizeof *c);
    if (!c)
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    *c = (tforge_costmodel){descriptor, interface, NULL};
    tforge_options_view none = {sizeof none, 0, NULL, NULL};
    tforge_error_clear();
    int rc = interface->create(&c->state, tforge_registry_host(), &none);
    if (rc) {
        if (!tforge_error_last()->message[0])
            tforge_error_set(rc, "cost model %s refused to start (no reason given)",
                             descriptor->id);
        free(c);
        return rc;
    }
    *out = c;
    return 0;
}

int tforge_costmodel_score(tforge_costmodel *c, tforge_measurement *m)
{
    tforge_error_clear();
    int rc = c->interface->score(c->state, m);
    return rc && !tforge_error_last()->message[0]
               ? tforge_error_set(rc, "cost model %s: score failed (no reason given)",
                                  c->descriptor->id)
               : rc;
}

const char *tforge_costmodel_id(const tforge_costmodel *c)
{
    return c->descriptor->id;
}

const char *tforge_costmodel_objective(const tforge_costmodel *c)
{
    return c->interface->objective ? c->interface->objective(c->state) : c->descriptor->id;
}

const char *tforge_costmodel_unit(const tforge_costmodel *c)
{
    return c->interface->unit ? c->interface->unit(c->state) : "";
}

void tforge_costmodel_close(tforge_costmodel *c)
{
    if (!c)
        return;
    if (c->interface->destroy)
        c->interface->destroy(c->state);
    free(c);
}
