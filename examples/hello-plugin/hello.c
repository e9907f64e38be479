/* A complete out-of-tree strategy, written against the installed kit only: the plugin headers and
 * the strategy SDK (<tforge/sdk/strategy.h>), nothing copied. "hello" walks greedily: it proposes
 * the unseen neighbours of the best point measured so far, and a fresh random point when there
 * is none (or, with probability `explore`, anyway). Build it with the Makefile beside it. */
#define TFORGE_SDK_STRAT_VERSION "1.0.0"
#include <tforge/sdk/strategy.h>

typedef struct hello {
    tforge_sdk_strat_base base; /* first: the SDK's seen-point archive, draws, rng and space */
    double explore;
    uint32_t best;   /* archive id of the best point measured, or TFORGE_SDK_STRAT_NONE */
    tforge_level *move;
} hello;

static const tforge_option_spec hello_options[] = {
    {"explore", TFORGE_OPTION_NUMBER, "0.1", 0, 1, NULL,
     "chance of a fresh random point instead of a neighbour of the best"},
};

static void hello_destroy(void *state)
{
    hello *h = state;
    if (h)
        free(h->move);
    tforge_sdk_strat_destroy(state);
}

static int hello_create(void **state, const tforge_host *host, const tforge_options_view *options,
                        const tforge_strategy_input *input)
{
    int rc = tforge_sdk_strat_create(state, sizeof(hello), "hello", host, input);
    if (rc)
        return rc;
    hello *h = *state;
    h->best = TFORGE_SDK_STRAT_NONE;
    double *const targets[] = {&h->explore};
    if ((rc = tforge_sdk_strat_parse_options(&h->base, options, hello_options, 1, targets)) == 0 &&
        !(h->move = malloc(h->base.dims * sizeof *h->move)))
        rc = tforge_sdk_strat_error(&h->base, TFORGE_PLUGIN_ENOMEM, "out of memory");
    if (rc) {
        hello_destroy(h);
        *state = NULL;
    }
    return rc;
}

/* An unseen valid neighbour of the best point into h->move: 1, or 0 when it has none. */
static int unseen_neighbour(hello *h)
{
    tforge_sdk_strat_base *b = &h->base;
    if (h->best == TFORGE_SDK_STRAT_NONE)
        return 0;
    const tforge_level *from = tforge_sdk_strat_point(&b->archive, h->best);
    for (uint32_t i = 0; i < tforge_sdk_strat_move_count(b, 1); i++)
        if (tforge_sdk_strat_move(b, from, 1, i, h->move) &&
            tforge_sdk_strat_find(&b->archive, h->move) == TFORGE_SDK_STRAT_NONE)
            return 1;
    return 0;
}

static int hello_ask(void *state, uint32_t q, tforge_level *out, uint32_t *n_out)
{
    hello *h = state;
    tforge_sdk_strat_base *b = &h->base;
    int rc = tforge_sdk_strat_begin_ask(b, q, out, n_out);
    while (rc == 0 && !b->done && *n_out < q) {
        if (tforge_rng_uniform(&b->rng) >= h->explore && unseen_neighbour(h))
            rc = tforge_sdk_strat_propose(b, h->move, out, n_out, NULL);
        else
            rc = tforge_sdk_strat_propose_fresh(b, out, n_out, 0);
    }
    return tforge_sdk_strat_end_ask(b, rc, q, *n_out);
}

static int hello_tell(void *state, const tforge_observation *observations, uint32_t n)
{
    hello *h = state;
    int rc = tforge_sdk_strat_tell(&h->base, observations, n, 0);
    for (uint32_t i = 0; rc == 0 && i < n; i++) {
        const tforge_observation *o = &observations[i];
        uint32_t id = tforge_sdk_strat_find(&h->base.archive, o->point);
        if (o->status == TFORGE_STATUS_OK && id != TFORGE_SDK_STRAT_NONE &&
            (h->best == TFORGE_SDK_STRAT_NONE || o->value < h->base.archive.values[h->best]))
            h->best = id;
    }
    return rc;
}

TFORGE_SDK_STRAT_PLUGIN("hello", "greedy neighbour walk (an out-of-tree example)", hello_options, 1,
                        hello_create, hello_ask, hello_tell, hello_destroy);
