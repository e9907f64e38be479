/* "pattern": a compass (generalised pattern) search over level indices, after Hooke and Jeeves.
 * Around the incumbent it polls, along each ordinal dimension, the points `step` levels down and
 * up (clamped to the grid), every other level of a categorical or boolean dimension, and, after
 * a successful move, the pattern point that repeats that move. Once the whole poll is known it
 * moves to the best point if it beats the incumbent by more than the relative `threshold`;
 * otherwise it halves the steps, and when steps of one level fail too it restarts from another
 * random point. Starts are chosen as in "coordinate": the best measured random (or told) point
 * not yet used.
 *
 * A batch holds the poll's unproposed points; when they are all proposed and some are still
 * being measured, the rest of the batch is random points, which become later starts.
 *
 * Options: step (the first step as a fraction of each dimension's levels, 0.25),
 * threshold (0.001). */
#include "tforge/sdk/strategy.h"

typedef struct pattern_state {
    tforge_sdk_strat_base base;
    double step_fraction, threshold;
    uint32_t current;   /* the incumbent, TFORGE_SDK_STRAT_NONE between searches */
    uint32_t previous;  /* where the last move came from; TFORGE_SDK_STRAT_NONE after a failed
                         * poll */
    uint32_t *step;     /* per dimension, in levels */
    tforge_level *poll; /* the poll point being looked at */
} pattern_state;

enum { STEP_PROPOSE, STEP_FILL };

static tforge_level clamp_level(int64_t level, uint32_t levels)
{
    return (tforge_level)(level < 0 ? 0 : level >= levels ? levels - 1 : level);
}

static uint32_t pattern_poll_count(const pattern_state *s)
{
    const tforge_sdk_strat_base *b = &s->base;
    uint32_t n = 1; /* the pattern point */
    for (uint32_t d = 0; d < b->dims; d++)
        n += b->ordered[d] ? 2 : b->levels[d] - 1;
    return n;
}

/* Writes poll point `index` around `x` into `s->poll`: 1 when it is a valid point other than x. */
static int pattern_poll_point(pattern_state *s, const tforge_level *x, uint32_t index)
{
    const tforge_sdk_strat_base *b = &s->base;
    tforge_level *out = s->poll;
    memcpy(out, x, b->dims * sizeof *out);
    if (index == 0) {
        if (s->previous == TFORGE_SDK_STRAT_NONE)
            return 0;
        const tforge_level *from = tforge_sdk_strat_point(&b->archive, s->previous);
        int moved = 0;
        for (uint32_t d = 0; d < b->dims; d++)
            if (b->ordered[d]) {
                out[d] = clamp_level(2 * (int64_t)x[d] - from[d], b->levels[d]);
                moved |= out[d] != x[d];
            }
        return moved && b->space->is_valid(b->context, out);
    }
    index--;
    uint32_t d = 0;
    for (;; d++) {
        uint32_t n = b->ordered[d] ? 2 : b->levels[d] - 1;
        if (index < n)
            break;
        index -= n;
    }
    if (b->ordered[d]) {
        int64_t step = index ? s->step[d] : -(int64_t)s->step[d];
        out[d] = clamp_level(x[d] + step, b->levels[d]);
        if (out[d] == x[d])
            return 0;
    } else {
        out[d] = (tforge_level)(index < x[d] ? index : index + 1);
    }
    return b->space->is_valid(b->context, out);
}

static void pattern_reset_steps(pattern_state *s)
{
    const tforge_sdk_strat_base *b = &s->base;
    for (uint32_t d = 0; d < b->dims; d++) {
        double step = floor(s->step_fraction * (b->levels[d] - 1) + 0.5);
        s->step[d] = step < 1 ? 1 : (uint32_t)step;
    }
}

/* Halves every step; 0 when they were all one level already. */
static int pattern_shrink(pattern_state *s)
{
    int shrunk = 0;
    for (uint32_t d = 0; d < s->base.dims; d++)
        if (s->step[d] > 1) {
            s->step[d] /= 2;
            shrunk = 1;
        }
    return shrunk;
}

/* As coordinate_step: STEP_PROPOSE with a poll point never seen in `s->poll`, or STEP_FILL. */
static int pattern_step(pattern_state *s)
{
    tforge_sdk_strat_base *b = &s->base;
    const tforge_sdk_strat_archive *a = &b->archive;
    uint32_t polls = pattern_poll_count(s);
    for (;;) {
        if (s->current == TFORGE_SDK_STRAT_NONE) {
            if ((s->current = tforge_sdk_strat_take_seed(b)) == TFORGE_SDK_STRAT_NONE)
                return STEP_FILL;
            s->previous = TFORGE_SDK_STRAT_NONE;
            pattern_reset_steps(s);
        }
        const tforge_level *x = tforge_sdk_strat_point(a, s->current);
        uint32_t best = TFORGE_SDK_STRAT_NONE;
        int waiting = 0;
        for (uint32_t i = 0; i < polls; i++) {
            if (!pattern_poll_point(s, x, i))
                continue;
            uint32_t id = tforge_sdk_strat_find(a, s->poll);
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
            a->values[best] < incumbent - s->threshold * fabs(incumbent)) {
            s->previous = s->current;
            s->current = best;
        } else {
            s->previous = TFORGE_SDK_STRAT_NONE;
            if (!pattern_shrink(s))
                s->current = TFORGE_SDK_STRAT_NONE; /* converged: restart */
        }
    }
}

static int pattern_ask(void *state, uint32_t q, tforge_level *out, uint32_t *n_out)
{
    pattern_state *s = state;
    int rc = tforge_sdk_strat_begin_ask(&s->base, q, out, n_out);
    while (rc == 0 && !s->base.done && *n_out < q) {
        if (pattern_step(s) == STEP_PROPOSE)
            rc = tforge_sdk_strat_propose(&s->base, s->poll, out, n_out, NULL);
        else
            rc = tforge_sdk_strat_propose_fresh(&s->base, out, n_out, 1);
    }
    return tforge_sdk_strat_end_ask(&s->base, rc, q, *n_out);
}

static int pattern_tell(void *state, const tforge_observation *observations, uint32_t n)
{
    return tforge_sdk_strat_tell(state, observations, n, 1);
}

static void pattern_destroy(void *state)
{
    pattern_state *s = state;
    if (s) {
        free(s->step);
        free(s->poll);
    }
    tforge_sdk_strat_destroy(state);
}

static const tforge_option_spec pattern_options[] = {
    {"step", TFORGE_OPTION_NUMBER, "0.25", 0, 1, NULL,
     "the first step, as a fraction of each dimension's levels"},
    {"threshold", TFORGE_OPTION_NUMBER, "0.001", 0, 1, NULL,
     "relative improvement a poll must bring to move"},
};
#define N_OPTIONS (sizeof pattern_options / sizeof *pattern_options)

static int pattern_create(void **state, const tforge_host *host,
                          const tforge_options_view *options, const tforge_strategy_input *input)
{
    int rc = tforge_sdk_strat_create(state, sizeof(pattern_state), "pattern", host, input);
    if (rc)
        return rc;
    pattern_state *s = *state;
    s->current = s->previous = TFORGE_SDK_STRAT_NONE;
    double *const targets[N_OPTIONS] = {&s->step_fraction, &s->threshold};
    if ((rc = tforge_sdk_strat_parse_options(&s->base, options, pattern_options, N_OPTIONS,
                                             targets)) == 0 &&
        (!(s->step = malloc(s->base.dims * sizeof *s->step)) ||
         !(s->poll = malloc(s->base.dims * sizeof *s->poll))))
        rc = tforge_sdk_strat_error(&s->base, TFORGE_PLUGIN_ENOMEM, "out of memory");
    if (rc) {
        pattern_destroy(s);
        *state = NULL;
    }
    return rc;
}

TFORGE_SDK_STRAT_PLUGIN("pattern", "Compass pattern search with step halving and restarts",
                        pattern_options, N_OPTIONS, pattern_create, pattern_ask, pattern_tell,
                        pattern_destroy);
