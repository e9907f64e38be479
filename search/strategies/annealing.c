/* "annealing": simulated annealing over the neighbourhood graph (one level up or down an
 * ordinal dimension, any other level of a categorical or boolean one), on log(value) so that a
 * move is judged by its ratio. The chain draws a uniformly random valid neighbour: one never seen
 * is proposed and waited for; one already measured is judged at once, at no cost, since no point
 * is proposed twice. Metropolis acceptance at temperature T, which is multiplied by `cooling`
 * after every measured move. Failures are infinitely bad, so never accepted. The chain restarts
 * from another random point, with T back at t0, when T falls below t_min, after `patience`
 * decisions in a row that did not move, or after `patience` draws in a row that found only
 * points already seen.
 *
 * A batch holds the chain's move and, while that is being measured, unseen neighbours of the
 * chain's point (those it would try next if the move is rejected), or of a random neighbour of
 * it, then random points, which become later starts.
 *
 * Options: t0 (0.1: a move 10% slower is first taken with probability 1/e), t_min (0.001),
 * cooling (by default such that T falls from t0 to t_min over the host's budget, or 0.995 when
 * the budget is unknown), patience (50). */
#include "tforge/sdk/strategy.h"

#include <float.h>

typedef struct annealing_state {
    tforge_sdk_strat_base base;
    double t0, t_min, cooling, patience;
    double temperature;
    uint32_t current;   /* the chain's point, TFORGE_SDK_STRAT_NONE before a start */
    uint32_t candidate; /* the move it waits for, TFORGE_SDK_STRAT_NONE when none */
    uint32_t stayed;    /* decisions in a row that did not move */
    uint32_t idle;      /* draws in a row that found only seen points */
    tforge_level *move, *hop; /* a move being looked at; a neighbour on the way to one */
} annealing_state;

enum { STEP_MOVE, STEP_LOOKAHEAD, STEP_FILL };

static double log_value(double value)
{
    return log(value > DBL_MIN ? value : DBL_MIN);
}

/* Judges the move to `id` (measured); 1 when the chain should restart. */
static int annealing_decide(annealing_state *s, uint32_t id)
{
    const tforge_sdk_strat_archive *a = &s->base.archive;
    double delta = log_value(a->values[id]) - log_value(a->values[s->current]);
    if (delta <= 0 || tforge_rng_uniform(&s->base.rng) < exp(-delta / s->temperature)) {
        s->current = id;
        s->stayed = 0;
    } else {
        s->stayed++;
    }
    return s->stayed >= s->patience || s->temperature < s->t_min;
}

/* A uniformly random valid move from `from` into `out`; with `unseen`, only among points never
 * seen. 0 when there is none. */
static int annealing_draw(annealing_state *s, const tforge_level *from, int unseen,
                          tforge_level *out)
{
    tforge_sdk_strat_base *b = &s->base;
    uint32_t moves = tforge_sdk_strat_move_count(b, 1), chosen = 0, n = 0;
    for (uint32_t i = 0; i < moves; i++)
        if (tforge_sdk_strat_move(b, from, 1, i, out) &&
            (!unseen || tforge_sdk_strat_find(&b->archive, out) == TFORGE_SDK_STRAT_NONE) &&
            tforge_rng_below(&b->rng, ++n) == 0)
            chosen = i;
    return n && tforge_sdk_strat_move(b, from, 1, chosen, out);
}

/* While the chain's move is being measured: an unseen neighbour of the chain's point, or failing
 * that of a random neighbour of it, where the chain is likely to look next. */
static int annealing_lookahead(annealing_state *s)
{
    const tforge_level *x = tforge_sdk_strat_point(&s->base.archive, s->current);
    return annealing_draw(s, x, 1, s->move) ||
           (annealing_draw(s, x, 0, s->hop) && annealing_draw(s, s->hop, 1, s->move));
}

/* Runs the chain as far as the known results allow: STEP_MOVE with its next move in `s->move`,
 * STEP_LOOKAHEAD with another unseen neighbour there while the move is being measured, or
 * STEP_FILL when it waits for results or for a start. */
static int annealing_step(annealing_state *s)
{
    tforge_sdk_strat_base *b = &s->base;
    const tforge_sdk_strat_archive *a = &b->archive;
    for (;;) {
        if (s->current == TFORGE_SDK_STRAT_NONE) {
            if ((s->current = tforge_sdk_strat_take_seed(b)) == TFORGE_SDK_STRAT_NONE)
                return STEP_FILL;
            s->temperature = s->t0;
            s->candidate = TFORGE_SDK_STRAT_NONE;
            s->stayed = s->idle = 0;
        }
        if (s->candidate != TFORGE_SDK_STRAT_NONE) {
            if (a->states[s->candidate] == TFORGE_SDK_STRAT_PENDING)
                return annealing_lookahead(s) ? STEP_LOOKAHEAD : STEP_FILL;
            int restart = annealing_decide(s, s->candidate);
            s->temperature *= s->cooling;
            s->candidate = TFORGE_SDK_STRAT_NONE;
            if (restart)
                s->current = TFORGE_SDK_STRAT_NONE;
            continue;
        }
        if (!annealing_draw(s, tforge_sdk_strat_point(a, s->current), 0, s->move)) {
            s->current = TFORGE_SDK_STRAT_NONE; /* no valid neighbour at all */
            continue;
        }
        uint32_t id = tforge_sdk_strat_find(a, s->move);
        if (id == TFORGE_SDK_STRAT_NONE) {
            s->idle = 0;
            return STEP_MOVE;
        }
        if (a->states[id] == TFORGE_SDK_STRAT_PENDING) {
            s->candidate = id; /* a lookahead point: wait for it as if proposed now */
            continue;
        }
        if (annealing_decide(s, id) || ++s->idle >= s->patience)
            s->current = TFORGE_SDK_STRAT_NONE;
    }
}

static int annealing_ask(void *state, uint32_t q, tforge_level *out, uint32_t *n_out)
{
    annealing_state *s = state;
    int rc = tforge_sdk_strat_begin_ask(&s->base, q, out, n_out);
    while (rc == 0 && !s->base.done && *n_out < q) {
        int step = annealing_step(s);
        if (step == STEP_MOVE)
            rc = tforge_sdk_strat_propose(&s->base, s->move, out, n_out, &s->candidate);
        else if (step == STEP_LOOKAHEAD)
            rc = tforge_sdk_strat_propose(&s->base, s->move, out, n_out, NULL);
        else
            rc = tforge_sdk_strat_propose_fresh(&s->base, out, n_out, 1);
    }
    return tforge_sdk_strat_end_ask(&s->base, rc, q, *n_out);
}

static int annealing_tell(void *state, const tforge_observation *observations, uint32_t n)
{
    return tforge_sdk_strat_tell(state, observations, n, 1);
}

static void annealing_destroy(void *state)
{
    annealing_state *s = state;
    if (s) {
        free(s->move);
        free(s->hop);
    }
    tforge_sdk_strat_destroy(state);
}

static const tforge_option_spec annealing_options[] = {
    {"t0", TFORGE_OPTION_NUMBER, "0.1", 1e-9, 1e9, NULL, "starting temperature, on log(value)"},
    {"t_min", TFORGE_OPTION_NUMBER, "0.001", 1e-12, 1e9, NULL, "final temperature"},
    {"cooling", TFORGE_OPTION_NUMBER, "", 0.5, 1, NULL,
     "factor a step (default: from t0 to t_min over the budget told, 0.995 without one)"},
    {"patience", TFORGE_OPTION_INTEGER, "50", 1, 1e9, NULL,
     "steps without improvement before a restart"},
};
#define N_OPTIONS (sizeof annealing_options / sizeof *annealing_options)

static int annealing_create(void **state, const tforge_host *host,
                            const tforge_options_view *options, const tforge_strategy_input *input)
{
    int rc = tforge_sdk_strat_create(state, sizeof(annealing_state), "annealing", host, input);
    if (rc)
        return rc;
    annealing_state *s = *state;
    s->cooling = NAN; /* derived below unless given */
    s->current = s->candidate = TFORGE_SDK_STRAT_NONE;
    double *const targets[N_OPTIONS] = {&s->t0, &s->t_min, &s->cooling, &s->patience};
    if ((rc = tforge_sdk_strat_parse_options(&s->base, options, annealing_options, N_OPTIONS,
                                             targets)))
        goto fail;
    if (s->t_min > s->t0) {
        rc = tforge_sdk_strat_error(&s->base, TFORGE_PLUGIN_EINPUT, "t_min (%g) is above t0 (%g)",
                                    s->t_min, s->t0);
        goto fail;
    }
    if (isnan(s->cooling))
        s->cooling = input->budget ? pow(s->t_min / s->t0, 1.0 / input->budget) : 0.995;
    if (!(s->move = malloc(s->base.dims * sizeof *s->move)) ||
        !(s->hop = malloc(s->base.dims * sizeof *s->hop))) {
        rc = tforge_sdk_strat_error(&s->base, TFORGE_PLUGIN_ENOMEM, "out of memory");
        goto fail;
    }
    return 0;
fail:
    annealing_destroy(s);
    *state = NULL;
    return rc;
}

TFORGE_SDK_STRAT_PLUGIN(
    "annealing", "Simulated annealing over neighbouring levels, with restarts",
    annealing_options, N_OPTIONS, annealing_create, annealing_ask, annealing_tell,
    annealing_destroy);
