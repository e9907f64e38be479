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
/* What open would refuse before running any of the plugin's code: an unknown id, another
 * interface, an option the strategy's published table lacks or a malformed value. */
int tforge_strategy_check(const tforge_registry *registry, const char *id,
                          const char *const *options);
int tforge_strategy_ask(tforge_strategy *strategy, uint32_t q, tforge_level *out,
                        uint32_t *n_out);
int tforge_strategy_tell(tforge_strategy *strategy, const tforge_observation *observations,
                         uint32_t n);
/* Whether the strategy takes a level prior: a module built for ABI 1.2 or later whose table
 * has set_level_prior. */
int tforge_strategy_takes_level_prior(const tforge_strategy *strategy);
/* Hands the strategy a level prior (one log weight per level of every dimension, `n` their
 * sum; see tforge_strategy_interface.set_level_prior); TFORGE_ENOTFOUND, naming the strategy,
 * when it takes none. May be called between asks. */
int tforge_strategy_set_level_prior(tforge_strategy *strategy, const double *log_weight,
                                    uint64_t n);
const char *tforge_strategy_id(const tforge_strategy *strategy);
/* The effective options of strategy `id` given `options` ("key=value", NULL-terminated),
 * defaults included (see tforge_plugin_effective_options); 0 when it would be refused. */
size_t tforge_strategy_effective(const tforge_registry *registry, const char *id,
                                 const char *const *options, const char **out, size_t max,
                                 char *buffer, size_t size);
void tforge_strategy_close(tforge_strategy *strategy);

#endif
