/* A search strategy plugin, instantiated: found in the registry by id, created over a space
 * view with a seed and string options, then asked and told. */
#ifndef TFORGE_ENGINE_STRATEGY_H
#define TFORGE_ENGINE_STRATEGY_H

#include "registry.h"
#include "tforge/plugin/strategy.h"

typedef struct tforge_strategy tforge_strategy;

/* `options` is "key=value" text, NULL-terminated (may be NULL). `view` must outlive the
 * strategy. Errors name the strategy: unknown id, another interface, options refused. */
int tforge_strategy_open(tforge_strategy **out, const tforge_registry *registry, const char *id,
                         const tforge_space_view *view, uint64_t seed, uint32_t budget,
                         const char *const *options);
int tforge_strategy_ask(tforge_strategy *strategy, uint32_t q, tforge_level *out,
                        uint32_t *n_out);
int tforge_strategy_tell(tforge_strategy *strategy, const tforge_observation *observations,
                         uint32_t n);
const char *tforge_strategy_id(const tforge_strategy *strategy);
void tforge_strategy_close(tforge_strategy *strategy);

#endif
