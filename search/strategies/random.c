/* "random": uniform random search without replacement. On an enumerated space it walks a lazily
 * shuffled permutation of the valid points, so it proposes every one exactly once; otherwise it
 * samples and skips points already seen. A batch is q such points. */
#include "tforge/sdk/strategy.h"

static int random_create(void **state, const tforge_host *host,
                         const tforge_options_view *options, const tforge_strategy_input *input)
{
    int rc = tforge_sdk_strat_create(state, sizeof(tforge_sdk_strat_base), "random", host, input);
    if (rc == 0 && (rc = tforge_sdk_strat_parse_options(*state, options, NULL, 0, NULL))) {
        tforge_sdk_strat_destroy(*state);
        *state = NULL;
    }
    return rc;
}

static int random_ask(void *state, uint32_t q, tforge_level *out, uint32_t *n_out)
{
    tforge_sdk_strat_base *b = state;
    int rc = tforge_sdk_strat_begin_ask(b, q, out, n_out);
    while (rc == 0 && !b->done && *n_out < q)
        rc = tforge_sdk_strat_propose_fresh(b, out, n_out, 0);
    return tforge_sdk_strat_end_ask(b, rc, q, *n_out);
}

static int random_tell(void *state, const tforge_observation *observations, uint32_t n)
{
    return tforge_sdk_strat_tell(state, observations, n, 0);
}

static void random_destroy(void *state)
{
    tforge_sdk_strat_destroy(state);
}

TFORGE_SDK_STRAT_PLUGIN("random", "Uniform random search without replacement", NULL, 0,
                        random_create,
                        random_ask, random_tell, random_destroy);
