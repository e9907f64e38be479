/* A cost model plugin ("tforge.costmodel/1"), instantiated: the objective a tune or a replay
 * minimises. Its `score` turns each measurement of a timed backend into the value the loop
 * compares and the strategy is told (backend.h hands it every one). */
#ifndef TFORGE_ENGINE_COSTMODEL_H
#define TFORGE_ENGINE_COSTMODEL_H

#include "registry.h"
#include "tforge/plugin/costmodel.h"

typedef struct tforge_costmodel tforge_costmodel;

/* The model `id` of the registry, created (it takes no options); id NULL opens the engine's
 * built-in default, latency (the median time in ms), which needs no registry. Errors name the
 * model: unknown id, one that only predicts, or refused to start. */
int tforge_costmodel_open(tforge_costmodel **out, const tforge_registry *registry, const char *id);
/* Sets m->value from the rest of `m` (see tforge_costmodel_interface.score). */
int tforge_costmodel_score(tforge_costmodel *model, tforge_measurement *m);
/* The factory's id ("latency"), the objective's name and its unit, for documents and reports. */
const char *tforge_costmodel_id(const tforge_costmodel *model);
const char *tforge_costmodel_objective(const tforge_costmodel *model);
const char *tforge_costmodel_unit(const tforge_costmodel *model);
/* NULL is allowed. */
void tforge_costmodel_close(tforge_costmodel *model);

#endif
