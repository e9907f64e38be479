/* "rules": the heuristics alone, no model (the rule-engine ablation of the profile-guided loop,
 * shaped like KTT's profile-based searcher). It needs a level prior (set_level_prior, ABI 1.2):
 * from the incumbent, the best point observed so far, it proposes the untried valid neighbours
 * the prior favours, those one step away first (one dimension moved by one level, any other
 * level of a categorical one), then those two steps away (one dimension by two levels, or two
 * dimensions by one), each ring ranked by the prior's gain (the sum over the moved dimensions of
 * the new level's weight minus the current one's), ties broken by the generator. A neighbour the
 * prior does not favour (gain <= 0) is not ranked.
 *
 * With no prior, or once the ranked neighbours are all tried, it walks like a first-improvement
 * local search: it moves to the first neighbour told better than its point, trying the point's
 * untried neighbours in random order, and restarts at a random valid point when none is left
 * (stuck). The walk starts from the incumbent; with nothing told yet, from a random point. While
 * the walk's neighbours are all proposed and some are still being measured (batches), the rest of
 * a batch is random points. A new prior (the host re-classifies each new incumbent) ranks the
 * incumbent's neighbours again.
 *
 * With walk=0 it proposes the ranked neighbours alone: an ask with none to give answers fewer
 * points, or none, without ending the search (it is asked again once more is told). That is the
 * rule moves `forge` mixes into bo's batches (loop.h's companion). With refute=1 a neighbour is
 * not ranked when a level it moves to with the prior's favour was proposed already next to the
 * incumbent (that dimension at that level, the others the incumbent's but one, by one step):
 * measured, the incumbent is the best point, so that move did not pay and its variants would
 * not either; still being measured, one variant asks the question for all (a batch of variants
 * of one move asks it four times).
 *
 * With compound=1 it also proposes compound moves of the incumbent, once as many points as the
 * space has dimensions are measured (bo's initial design: by then the incumbent is the knobs'
 * winner): a rewrite moved one level together with the knobs it needs, each moved one level its
 * way (the dimensions' effects say which: TMA with larger tiles, fewer stages and more warps;
 * persistent programs with a larger GROUP_M; split-K with a smaller M tile; the other way when
 * the rewrite is taken off). Each such rewrite move and subset of its knobs is one move, those
 * that move the largest share of the knobs first, ties broken by the generator. With
 * compound_after=F they wait until F of the budget is proposed: forge passes bo's knobs_first
 * where bo holds the rewrites, so that they come around the knobs' winner, once the knobs'
 * search has found it, rather than taking its evaluations. A model that
 * learns each dimension's effect from points that differ in one or two of them finds that
 * every one of those changes alone makes the knobs' winner slower, and such an optimum is
 * reached by none of the one-dimension moves. No prior is needed: they follow the prior's
 * favoured neighbours. */
#include "tforge/sdk/strategy.h"

typedef struct rules_state {
    tforge_sdk_strat_base base;
    double *prior;     /* a log weight per level of every dimension, NULL: no prior */
    uint32_t *offset;  /* per dimension: where its levels' weights start */
    uint64_t n_levels; /* the sum of the levels */
    uint32_t current;  /* the walk's point, TFORGE_SDK_STRAT_NONE before it starts or when stuck */
    double walk;       /* 0: the ranked neighbours alone */
    double refute;     /* 1: no favoured level already proposed next to the incumbent */
    double compound;   /* 1: the rewrites' compound moves too */
    double compound_after; /* ... once this share of the budget is proposed */
    uint32_t budget;   /* the host's, 0 when unknown */
    /* per rewrite dimension r, the knobs it needs: couple[r * dims + k] is +1 when k moves up
     * as r moves up, -1 when it moves down, 0 when k is not coupled to r */
    int8_t *couple;
    tforge_level *move, *best;
    /* one-step moves of the incumbent, (dimension, level) pairs, with their gains */
    uint32_t *move_dim;
    tforge_level *move_level;
    double *move_gain;
} rules_state;

static void rules_destroy(void *state)
{
    rules_state *s = state;
    if (!s)
        return;
    free(s->prior);
    free(s->offset);
    free(s->move);
    free(s->best);
    free(s->move_dim);
    free(s->move_level);
    free(s->move_gain);
    free(s->couple);
    tforge_sdk_strat_destroy(&s->base);
}

static const tforge_option_spec rules_options[] = {
    {"walk", TFORGE_OPTION_INTEGER, "1", 0, 1, NULL,
     "0: only the prior's favoured neighbours of the incumbent, none when there are none (a "
     "companion's rule moves); 1: then the first-improvement walk"},
    {"refute", TFORGE_OPTION_INTEGER, "0", 0, 1, NULL,
     "1: a favoured level already proposed next to the incumbent (that dimension moved, the "
     "others the incumbent's but one, by one step; measured or still measured) is not "
     "proposed again"},
    {"compound", TFORGE_OPTION_INTEGER, "0", 0, 1, NULL,
     "1: also a rewrite moved together with the knobs it needs (TMA with larger tiles, fewer "
     "stages and more warps; persistent with a larger GROUP_M; split-K with a smaller M tile), "
     "from the incumbent once the initial design is measured"},
    {"compound_after", TFORGE_OPTION_NUMBER, "0", 0, 1, NULL,
     "the share of the budget proposed before the compound moves start (a staged schedule: "
     "the knobs first, then the rewrites around their winner)"},
};

#define N_RULES_OPTIONS (sizeof rules_options / sizeof *rules_options)

/* Which way a knob of effect `knob` moves as a rewrite of effect `rewrite` moves up: +1, -1 or 0
 * (not coupled). What each rewrite needs to pay: TMA's descriptors a larger tile (the copy
 * engine's fixed cost spread over more bytes), fewer stages (its shared-memory ring) and the
 * warps to use the tile; persistent programs a swizzled tile order (GROUP_M: the programs that
 * run together share operands in L2); split-K a smaller M tile (enough programs without it). */
static int coupling(uint32_t rewrite, uint32_t knob)
{
    switch (rewrite) {
    case TFORGE_EFFECT_TMA:
        return knob == TFORGE_EFFECT_TILE || knob == TFORGE_EFFECT_TILE_CONTIGUOUS ||
                       knob == TFORGE_EFFECT_WARPS
                   ? 1
                   : knob == TFORGE_EFFECT_STAGES || knob == TFORGE_EFFECT_PIPELINE_STAGES ? -1 : 0;
    case TFORGE_EFFECT_PROGRAMS:
        return knob == TFORGE_EFFECT_SWIZZLE ? 1 : 0;
    case TFORGE_EFFECT_SPLIT_K:
        return knob == TFORGE_EFFECT_TILE ? -1 : 0;
    default:
        return 0;
    }
}

/* s->couple from the view's effects (ABI 1.3; an older view has none: no compound moves). */
static int couple_dimensions(rules_state *s)
{
    const tforge_sdk_strat_base *b = &s->base;
    const tforge_space_view *v = b->space;
    if (!(s->couple = calloc((size_t)b->dims * b->dims, sizeof *s->couple)))
        return -1;
    if (v->struct_size < offsetof(tforge_space_view, effect) + sizeof v->effect || !v->effect)
        return 0;
    for (uint32_t r = 0; r < b->dims; r++)
        for (uint32_t k = 0; k < b->dims; k++)
            if (k != r)
                s->couple[(size_t)r * b->dims + k] =
                    (int8_t)coupling(v->effect(b->context, r), v->effect(b->context, k));
    return 0;
}

static int rules_create(void **state, const tforge_host *host,
                        const tforge_options_view *options, const tforge_strategy_input *input)
{
    int rc = tforge_sdk_strat_create(state, sizeof(rules_state), "rules", host, input);
    if (rc)
        return rc;
    rules_state *s = *state;
    tforge_sdk_strat_base *b = &s->base;
    s->current = TFORGE_SDK_STRAT_NONE;
    s->budget = input->budget;
    double *const targets[] = {&s->walk, &s->refute, &s->compound, &s->compound_after};
    if ((rc = tforge_sdk_strat_parse_options(b, options, rules_options, N_RULES_OPTIONS, targets)))
        goto fail;
    uint64_t moves = 0;
    s->offset = malloc(b->dims * sizeof *s->offset);
    for (uint32_t d = 0; s->offset && d < b->dims; d++) {
        s->offset[d] = (uint32_t)s->n_levels;
        s->n_levels += b->levels[d];
        moves += b->ordered[d] ? 2 : b->levels[d] - 1;
    }
    s->move = malloc(b->dims * sizeof *s->move);
    s->best = malloc(b->dims * sizeof *s->best);
    s->move_dim = malloc(moves * sizeof *s->move_dim + 1);
    s->move_level = malloc(moves * sizeof *s->move_level + 1);
    s->move_gain = malloc(moves * sizeof *s->move_gain + 1);
    if (!s->offset || !s->move || !s->best || !s->move_dim || !s->move_level || !s->move_gain ||
        (s->compound && couple_dimensions(s))) {
        rc = tforge_sdk_strat_error(b, TFORGE_PLUGIN_ENOMEM, "out of memory");
        goto fail;
    }
    return 0;
fail:
    rules_destroy(s);
    *state = NULL;
    return rc;
}

/* Replaces the prior; weights equal within every dimension (all zeros) remove it. */
static int rules_set_level_prior(void *state, const double *log_weight, uint64_t n)
{
    rules_state *s = state;
    const tforge_sdk_strat_base *b = &s->base;
    if (n != s->n_levels || !log_weight)
        return tforge_sdk_strat_error(b, TFORGE_PLUGIN_EINPUT,
                                      "a level prior needs one log weight per "
                                      "level of every dimension (%llu), got %llu",
                                      (unsigned long long)s->n_levels, (unsigned long long)n);
    int flat = 1;
    for (uint32_t d = 0; d < b->dims; d++)
        for (uint32_t l = 0; l < b->levels[d]; l++) {
            double w = log_weight[s->offset[d] + l];
            if (isnan(w) || w == INFINITY)
                return tforge_sdk_strat_error(b, TFORGE_PLUGIN_EINPUT,
                                              "level prior log weight %u of "
                                              "dimension %u is %g", l, d, w);
            flat &= w == log_weight[s->offset[d]];
        }
    double *copy = flat ? NULL : malloc(n * sizeof *copy);
    if (!flat && !copy)
        return tforge_sdk_strat_error(b, TFORGE_PLUGIN_ENOMEM, "out of memory for the prior");
    if (copy)
        memcpy(copy, log_weight, n * sizeof *copy);
    free(s->prior);
    s->prior = copy;
    return 0;
}

/* The best point measured OK (the first told among equals), or TFORGE_SDK_STRAT_NONE. */
static uint32_t incumbent(const tforge_sdk_strat_base *b)
{
    const tforge_sdk_strat_archive *a = &b->archive;
    uint32_t best = TFORGE_SDK_STRAT_NONE;
    for (uint32_t id = 0; id < a->n; id++)
        if (a->states[id] == TFORGE_SDK_STRAT_OK &&
            (best == TFORGE_SDK_STRAT_NONE || a->values[id] < a->values[best]))
            best = id;
    return best;
}

static double gain(const rules_state *s, const tforge_level *from, uint32_t d, uint32_t level)
{
    return s->prior[s->offset[d] + level] - s->prior[s->offset[d] + from[d]];
}

/* The one-step moves of `from` and their gains: the count. */
static uint32_t one_step_moves(rules_state *s, const tforge_level *from)
{
    const tforge_sdk_strat_base *b = &s->base;
    uint32_t n = 0;
    for (uint32_t d = 0; d < b->dims; d++)
        for (uint32_t l = 0; l < b->levels[d]; l++) {
            int step = b->ordered[d] ? l + 1 == from[d] || l == from[d] + 1u : l != from[d];
            if (!step)
                continue;
            s->move_dim[n] = d;
            s->move_level[n] = (tforge_level)l;
            s->move_gain[n++] = gain(s, from, d, l);
        }
    return n;
}

/* Whether `y` has level `level` in dimension `d` and, in the others, `at`'s levels but one,
 * moved by one step (any other level of a categorical one). */
static int next_to(const tforge_sdk_strat_base *b, const tforge_level *at, const tforge_level *y,
                   uint32_t d, tforge_level level)
{
    uint32_t others = 0;
    if (y[d] != level)
        return 0;
    for (uint32_t k = 0; k < b->dims; k++) {
        if (k == d || y[k] == at[k])
            continue;
        uint32_t step = y[k] > at[k] ? y[k] - at[k] : at[k] - y[k];
        if (++others > 1 || (b->ordered[k] && step > 1))
            return 0;
    }
    return 1;
}

/* refute=1: whether a level that `s->move` moves to from the incumbent `from` with the prior's
 * favour was proposed next to `from` already (measured, failed or pending). */
static int refuted(const rules_state *s, const tforge_level *from)
{
    const tforge_sdk_strat_base *b = &s->base;
    const tforge_sdk_strat_archive *a = &b->archive;
    for (uint32_t d = 0; s->refute && d < b->dims; d++) {
        if (s->move[d] == from[d] || !(gain(s, from, d, s->move[d]) > 0))
            continue;
        for (uint32_t id = 0; id < a->n; id++)
            if (next_to(b, from, tforge_sdk_strat_point(a, id), d, s->move[d]))
                return 1;
    }
    return 0;
}

/* Keeps `s->move` as the best candidate so far when it is untried, valid, favoured, not refuted
 * and ranks above the one kept (the generator breaks ties: the k-th equal one replaces it with
 * chance 1/k, so each of them is kept alike). */
static void consider(rules_state *s, const tforge_level *from, double g, double *best_g,
                     uint32_t *ties)
{
    tforge_sdk_strat_base *b = &s->base;
    if (!(g > 0) || g < *best_g ||
        tforge_sdk_strat_find(&b->archive, s->move) != TFORGE_SDK_STRAT_NONE ||
        !b->space->is_valid(b->context, s->move) || refuted(s, from))
        return;
    if (g > *best_g)
        *ties = 0;
    if (tforge_rng_below(&b->rng, ++*ties) != 0)
        return;
    *best_g = g;
    memcpy(s->best, s->move, b->dims * sizeof *s->best);
}

/* The favoured untried neighbour of the incumbent with the highest gain, nearest ring first, into
 * s->best: 1, or 0 when there is none. */
static int ranked_neighbour(rules_state *s)
{
    tforge_sdk_strat_base *b = &s->base;
    uint32_t at = incumbent(b);
    if (!s->prior || at == TFORGE_SDK_STRAT_NONE)
        return 0;
    const tforge_level *from = tforge_sdk_strat_point(&b->archive, at);
    uint32_t n = one_step_moves(s, from), ties = 0;
    double best_g = -INFINITY;
    for (uint32_t i = 0; i < n; i++) {
        memcpy(s->move, from, b->dims * sizeof *s->move);
        s->move[s->move_dim[i]] = s->move_level[i];
        consider(s, from, s->move_gain[i], &best_g, &ties);
    }
    if (ties)
        return 1;
    for (uint32_t d = 0; d < b->dims; d++) /* an ordinal dimension moved by two levels */
        for (int sign = -1; b->ordered[d] && sign <= 1; sign += 2) {
            int64_t level = (int64_t)from[d] + 2 * sign;
            if (level < 0 || level >= b->levels[d])
                continue;
            memcpy(s->move, from, b->dims * sizeof *s->move);
            s->move[d] = (tforge_level)level;
            consider(s, from, gain(s, from, d, (uint32_t)level), &best_g, &ties);
        }
    for (uint32_t i = 0; i < n; i++) /* two dimensions moved by one step each */
        for (uint32_t j = i + 1; j < n; j++) {
            if (s->move_dim[i] == s->move_dim[j])
                continue;
            memcpy(s->move, from, b->dims * sizeof *s->move);
            s->move[s->move_dim[i]] = s->move_level[i];
            s->move[s->move_dim[j]] = s->move_level[j];
            consider(s, from, s->move_gain[i] + s->move_gain[j], &best_g, &ties);
        }
    return ties > 0;
}

/* The points measured OK. */
static uint32_t measured(const tforge_sdk_strat_base *b)
{
    uint32_t n = 0;
    for (uint32_t id = 0; id < b->archive.n; id++)
        n += b->archive.states[id] == TFORGE_SDK_STRAT_OK;
    return n;
}

/* compound=1: the untried valid compound move of the incumbent that moves the largest share of
 * its rewrite's knobs, into s->best: 1, or 0 when there is none (or it is too early: before the
 * initial design is measured, or compound_after of the budget proposed). */
static int compound_move(rules_state *s)
{
    tforge_sdk_strat_base *b = &s->base;
    uint32_t at = incumbent(b), ties = 0, knob[16];
    if (!s->compound || at == TFORGE_SDK_STRAT_NONE || measured(b) < b->dims ||
        b->archive.n < s->compound_after * s->budget)
        return 0;
    const tforge_level *from = tforge_sdk_strat_point(&b->archive, at);
    double best_share = 0;
    for (uint32_t r = 0; r < b->dims; r++)
        for (int way = -1; way <= 1; way += 2) {
            int64_t level = (int64_t)from[r] + way;
            if (level < 0 || level >= b->levels[r] || (!b->ordered[r] && b->levels[r] != 2))
                continue; /* a categorical's levels have no way to go */
            /* the knobs that can move the way this move needs them to */
            uint32_t n = 0;
            const int8_t *c = s->couple + (size_t)r * b->dims;
            for (uint32_t k = 0; k < b->dims && n < 16; k++) {
                int64_t to = (int64_t)from[k] + c[k] * way;
                if (c[k] && b->ordered[k] && to >= 0 && to < b->levels[k])
                    knob[n++] = k;
            }
            for (uint32_t subset = 1; subset < 1u << n; subset++) {
                memcpy(s->move, from, b->dims * sizeof *s->move);
                s->move[r] = (tforge_level)level;
                uint32_t moved = 0;
                for (uint32_t i = 0; i < n; i++)
                    if (subset >> i & 1) {
                        s->move[knob[i]] = (tforge_level)(from[knob[i]] + c[knob[i]] * way);
                        moved++;
                    }
                double share = (double)moved / n;
                if (share < best_share ||
                    tforge_sdk_strat_find(&b->archive, s->move) != TFORGE_SDK_STRAT_NONE ||
                    !b->space->is_valid(b->context, s->move))
                    continue;
                if (share > best_share)
                    ties = 0;
                best_share = share;
                if (tforge_rng_below(&b->rng, ++ties) == 0)
                    memcpy(s->best, s->move, b->dims * sizeof *s->best);
            }
        }
    return ties > 0;
}

enum { WALK_PROPOSE, WALK_FILL, WALK_RESTART };

/* Advances the first-improvement walk as far as the known results allow: WALK_PROPOSE with an
 * untried neighbour of its point in s->best, WALK_FILL while results are awaited, WALK_RESTART
 * when stuck (or not started and nothing is known). */
static int walk_step(rules_state *s)
{
    tforge_sdk_strat_base *b = &s->base;
    const tforge_sdk_strat_archive *a = &b->archive;
    uint32_t moves = tforge_sdk_strat_move_count(b, 1);
    if (s->current == TFORGE_SDK_STRAT_NONE && (s->current = incumbent(b)) == TFORGE_SDK_STRAT_NONE)
        return WALK_RESTART;
    for (;;) {
        if (a->states[s->current] == TFORGE_SDK_STRAT_PENDING)
            return WALK_FILL;
        if (a->states[s->current] == TFORGE_SDK_STRAT_FAILED)
            return WALK_RESTART;
        const tforge_level *x = tforge_sdk_strat_point(a, s->current);
        uint32_t better = TFORGE_SDK_STRAT_NONE, untried = 0;
        int waiting = 0;
        for (uint32_t i = 0; i < moves; i++) {
            if (!tforge_sdk_strat_move(b, x, 1, i, s->move))
                continue;
            uint32_t id = tforge_sdk_strat_find(a, s->move);
            if (id == TFORGE_SDK_STRAT_NONE) {
                /* a uniform choice among the untried, as they come */
                if (tforge_rng_below(&b->rng, ++untried) == 0)
                    memcpy(s->best, s->move, b->dims * sizeof *s->best);
            } else if (a->states[id] == TFORGE_SDK_STRAT_PENDING) {
                waiting = 1;
            } else if (a->values[id] < a->values[s->current] &&
                       (better == TFORGE_SDK_STRAT_NONE || id < better)) {
                better = id; /* the first proposed of those that improve */
            }
        }
        if (better != TFORGE_SDK_STRAT_NONE) {
            s->current = better;
            continue;
        }
        return untried ? WALK_PROPOSE : waiting ? WALK_FILL : WALK_RESTART;
    }
}

static int rules_ask(void *state, uint32_t q, tforge_level *out, uint32_t *n_out)
{
    rules_state *s = state;
    tforge_sdk_strat_base *b = &s->base;
    int rc = tforge_sdk_strat_begin_ask(b, q, out, n_out);
    while (rc == 0 && !b->done && *n_out < q) {
        if (ranked_neighbour(s) || compound_move(s)) {
            rc = tforge_sdk_strat_propose(b, s->best, out, n_out, NULL);
            continue;
        }
        if (!s->walk)
            return rc; /* no rule move now; not the end */
        int step = walk_step(s);
        if (step == WALK_PROPOSE) {
            rc = tforge_sdk_strat_propose(b, s->best, out, n_out, NULL);
        } else if (step == WALK_FILL) {
            rc = tforge_sdk_strat_propose_fresh(b, out, n_out, 0);
        } else {
            uint32_t before = b->archive.n;
            rc = tforge_sdk_strat_propose_fresh(b, out, n_out, 0);
            /* the restart's point */
            s->current = b->archive.n > before ? before : TFORGE_SDK_STRAT_NONE;
        }
    }
    return tforge_sdk_strat_end_ask(b, rc, q, *n_out);
}

static int rules_tell(void *state, const tforge_observation *observations, uint32_t n)
{
    return tforge_sdk_strat_tell(state, observations, n, 0);
}

static const tforge_strategy_interface rules_interface = {
    sizeof(tforge_strategy_interface), rules_create, rules_ask, rules_tell, rules_destroy, NULL,
    rules_set_level_prior};
static const tforge_plugin_descriptor rules_descriptor = {
    .id = "rules",
    .version = TFORGE_SDK_STRAT_VERSION,
    .description = "The level prior's favoured neighbours of the incumbent, then a "
                   "first-improvement walk with random restarts (no model)",
    .interface_id = TFORGE_STRATEGY_INTERFACE_ID,
    .interface = &rules_interface,
    .options = rules_options,
    .n_options = N_RULES_OPTIONS};

static uint32_t rules_count(void)
{
    return 1;
}

static const tforge_plugin_descriptor *rules_get(uint32_t index)
{
    return index == 0 ? &rules_descriptor : NULL;
}

TFORGE_PLUGIN_EXPORT const tforge_plugin_module TFORGE_PLUGIN_ENTRY_NAME = {
    TFORGE_PLUGIN_ABI_VERSION_INIT, "rules", NULL, NULL, rules_count, rules_get};
