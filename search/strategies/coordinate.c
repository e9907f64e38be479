/* "coordinate": coordinate descent in the manner of PyTorch Inductor's coordinate-descent tuner.
 * From a start point it measures, along every dimension, the neighbours `radius` levels down and
 * up (every other level of a categorical or boolean dimension); once all are known it moves to
 * the best of them if that beats the incumbent by more than the relative `threshold`, and stops
 * at a point no neighbour improves. It then restarts from another random point, so the budget is
 * never idle. Starts are random points (and points the host told unasked, such as a baseline):
 * the best measured one not yet used.
 *
 * Unlike Inductor, which takes the first improvement dimension by dimension, it polls the whole
 * neighbourhood before moving, which is what a batch can evaluate at once. A batch holds the
 * incumbent's unproposed neighbours; when they are all proposed and some are still being
 * measured, the rest of the batch is random points, which become later starts.
 *
 * Options: radius (1; 2 gives the wider search Inductor offers through its search radius),
 * threshold (0.001, Inductor's). */
#include "tforge/sdk/strategy.h"

typedef struct coordinate_state {
    tforge_sdk_strat_base base;
    double radius, threshold;
    uint32_t current;   /* the incumbent, TFORGE_SDK_STRAT_NONE between descents */
    tforge_level *move; /* the neighbour being looked at */
} coordinate_state;

enum { STEP_PROPOSE, STEP_FILL };

/* Advances the descent as far as the known results allow: STEP_PROPOSE with a neighbour never
 * seen in `s->move`, or STEP_FILL when it waits for results or for a start. */
static int coordinate_step(coordinate_state *s)
{
    tforge_sdk_strat_base *b = &s->base;
    const tforge_sdk_strat_archive *a = &b->archive;
    uint32_t radius = (uint32_t)s->radius, moves = tforge_sdk_strat_move_count(b, radius);
    for (;;) {
        if (s->current == TFORGE_SDK_STRAT_NONE &&
            (s->current = tforge_sdk_strat_take_seed(b)) == TFORGE_SDK_STRAT_NONE)
            return STEP_FILL;
        const tforge_level *x = tforge_sdk_strat_point(a, s->current);
        uint32_t best = TFORGE_SDK_STRAT_NONE;
        int waiting = 0;
        for (uint32_t i = 0; i < moves; i++) {
            if (!tforge_sdk_strat_move(b, x, radius, i, s->move))
                continue;
            uint32_t id = tforge_sdk_strat_find(a, s->move);
            if (id == TFORGE_SDK_STRAT_NONE)
                return STEP_PROPOSE;
            if (a->states[id] == TFORGE_SDK_STRAT_PENDING)
                waiting = 1;
            else if (best == TFORGE_SDK_STRAT_NONE || a->values[id] < a->values[best])
                best = id;
        }
        if (waiting)
            return STEP_FILL;
        double incumbent = a->values[s->current];
        if (best != TFORGE_SDK_STRAT_NONE &&
            a->values[best] < incumbent - s->threshold * fabs(incumbent))
            s->current = best;
        else
            s->current = TFORGE_SDK_STRAT_NONE; /* a local minimum: restart */
    }
}

static int coordinate_ask(void *state, uint32_t q, tforge_level *out, uint32_t *n_out)
{
    coordinate_state *s = state;
    int rc = tforge_sdk_strat_begin_ask(&s->base, q, out, n_out);
    while (rc == 0 && !s->base.done && *n_out < q) {
        if (coordinate_step(s) == STEP_PROPOSE)
            rc = tforge_sdk_strat_propose(&s->base, s->move, out, n_out, NULL);
        else
            rc = tforge_sdk_strat_propose_fresh(&s->base, out, n_out, 1);
    }
    return tforge_sdk_strat_end_ask(&s->base, rc, q, *n_out);
}

static int coordinate_tell(void *state, const tforge_observation *observations, uint32_t n)
{
    return tforge_sdk_strat_tell(state, observations, n, 1);
}

static void coordinate_destroy(void *state)
{
    coordinate_state *s = state;
    if (s)
        free(s->move);
    tforge_sdk_strat_destroy(state);
}

static const tforge_option_spec coordinate_options[] = {
    {"radius", TFORGE_OPTION_INTEGER, "1", 1, 16, NULL, "levels a move may go up or down"},
    {"threshold", TFORGE_OPTION_NUMBER, "0.001", 0, 1, NULL,
     "relative improvement a move must bring to be taken"},
};
#define N_OPTIONS (sizeof coordinate_options / sizeof *coordinate_options)

static int coordinate_create(void **state, const tforge_host *host,
                             const tforge_options_view *options, const tforge_strategy_input *input)
{
    int rc = tforge_sdk_strat_create(state, sizeof(coordinate_state), "coordinate", host, input);
    if (rc)
        return rc;
    coordinate_state *s = *state;
    s->current = TFORGE_SDK_STRAT_NONE;
    double *const targets[N_OPTIONS] = {&s->radius, &s->threshold};
    if ((rc = tforge_sdk_strat_parse_options(&s->base, options, coordinate_options, N_OPTIONS,
                                             targets)) == 0 &&
                   !(s->move = malloc(s->base.dims * sizeof *s->move)))
        rc = tforge_sdk_strat_error(&s->base, TFORGE_PLUGIN_ENOMEM, "out of memory");
    if (rc) {
        coordinate_destroy(s);
        *state = NULL;
    }
    return rc;
}

TFORGE_SDK_STRAT_PLUGIN(
    "coordinate", "Coordinate descent with random restarts (Inductor-style)",
    coordinate_options, N_OPTIONS, coordinate_create, coordinate_ask, coordinate_tell,
    coordinate_destroy);
