/* "exhaustive": every valid point of an enumerated space, in enumeration order, skipping points
 * the host told without their being proposed. A batch is the next q points. */
#include "tforge/sdk/strategy.h"

typedef struct exhaustive_state {
    tforge_sdk_strat_base base;
    uint64_t next; /* the next enumeration index to look at */
} exhaustive_state;

static int exhaustive_create(void **state, const tforge_host *host,
                             const tforge_options_view *options, const tforge_strategy_input *input)
{
    int rc = tforge_sdk_strat_create(state, sizeof(exhaustive_state), "exhaustive", host, input);
    if (rc)
        return rc;
    tforge_sdk_strat_base *b = *state;
    if ((rc = tforge_sdk_strat_parse_options(b, options, NULL, 0, NULL)) == 0 && b->count == 0)
        rc = tforge_sdk_strat_error(b, TFORGE_PLUGIN_EINPUT,
                                    "the space is too large to enumerate (count 0); "
                                                     "use 'random' or a local strategy");
    if (rc) {
        tforge_sdk_strat_destroy(b);
        *state = NULL;
    }
    return rc;
}

static int exhaustive_ask(void *state, uint32_t q, tforge_level *out, uint32_t *n_out)
{
    exhaustive_state *s = state;
    tforge_sdk_strat_base *b = &s->base;
    int rc = tforge_sdk_strat_begin_ask(b, q, out, n_out);
    while (rc == 0 && !b->done && *n_out < q && s->next < b->count) {
        b->space->point(b->context, s->next++, b->draw);
        if (tforge_sdk_strat_find(&b->archive, b->draw) == TFORGE_SDK_STRAT_NONE)
            rc = tforge_sdk_strat_propose(b, b->draw, out, n_out, NULL);
    }
    return tforge_sdk_strat_end_ask(b, rc, q, *n_out);
}

static int exhaustive_tell(void *state, const tforge_observation *observations, uint32_t n)
{
    return tforge_sdk_strat_tell(state, observations, n, 0);
}

static void exhaustive_destroy(void *state)
{
    tforge_sdk_strat_destroy(state);
}

TFORGE_SDK_STRAT_PLUGIN("exhaustive", "Every valid point of an enumerated space, in order", NULL, 0,
                        exhaustive_create, exhaustive_ask, exhaustive_tell, exhaustive_destroy);
