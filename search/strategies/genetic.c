/* "genetic": a steady-state genetic algorithm over level vectors. The first `population`
 * proposals are random points; after that every proposal is a child of two parents chosen by
 * tournaments of `tournament` members from the population (the best points measured so far, at
 * most `population` of them): uniform crossover, then each level changed with probability
 * `mutation` to another level of its dimension. An invalid child is repaired by taking back its
 * differences from the first parent, in random order, until it is valid; a child already seen is
 * bred again, and after 32 tries a random point (an immigrant) is proposed instead. A measured
 * point enters the population when it is not full or replaces its worst member if better;
 * failures never enter.
 *
 * Being steady-state, it never waits: a batch is q children (random points while fewer than two
 * members are measured).
 *
 * Options: population (20), tournament (3), mutation (1 / dimensions). */
#include "tforge/sdk/strategy.h"

#define GENETIC_TRIES 32

typedef struct genetic_state {
    tforge_sdk_strat_base base;
    double population, tournament, mutation;
    uint32_t *members; /* archive ids, measured OK */
    uint32_t n_members;
    uint32_t n_random; /* random proposals so far */
    tforge_level *child;
} genetic_state;

static const tforge_level *genetic_select(genetic_state *s)
{
    const tforge_sdk_strat_archive *a = &s->base.archive;
    uint32_t best = s->members[tforge_rng_below(&s->base.rng, s->n_members)];
    for (uint32_t i = 1; i < (uint32_t)s->tournament; i++) {
        uint32_t other = s->members[tforge_rng_below(&s->base.rng, s->n_members)];
        if (a->values[other] < a->values[best])
            best = other;
    }
    return tforge_sdk_strat_point(a, best);
}

/* Breeds a valid child never seen into `s->child`; 0 when GENETIC_TRIES attempts found none. */
static int genetic_breed(genetic_state *s)
{
    tforge_sdk_strat_base *b = &s->base;
    tforge_level *child = s->child;
    for (int attempt = 0; attempt < GENETIC_TRIES; attempt++) {
        const tforge_level *mother = genetic_select(s), *father = genetic_select(s);
        for (uint32_t d = 0; d < b->dims; d++) {
            child[d] = tforge_rng_below(&b->rng, 2) ? father[d] : mother[d];
            if (b->levels[d] > 1 && tforge_rng_uniform(&b->rng) < s->mutation) {
                tforge_level other = (tforge_level)tforge_rng_below(&b->rng, b->levels[d] - 1);
                child[d] = other >= child[d] ? other + 1 : other;
            }
        }
        /* Repair: the mother is valid, so taking back every difference ends at a valid point. */
        uint32_t start = (uint32_t)tforge_rng_below(&b->rng, b->dims);
        for (uint32_t k = 0; k < b->dims && !b->space->is_valid(b->context, child); k++) {
            uint32_t d = (start + k) % b->dims;
            child[d] = mother[d];
        }
        if (tforge_sdk_strat_find(&b->archive, child) == TFORGE_SDK_STRAT_NONE)
            return 1;
    }
    return 0;
}

static int genetic_ask(void *state, uint32_t q, tforge_level *out, uint32_t *n_out)
{
    genetic_state *s = state;
    int rc = tforge_sdk_strat_begin_ask(&s->base, q, out, n_out);
    while (rc == 0 && !s->base.done && *n_out < q) {
        if (s->n_random >= (uint32_t)s->population && s->n_members >= 2 && genetic_breed(s)) {
            rc = tforge_sdk_strat_propose(&s->base, s->child, out, n_out, NULL);
        } else {
            rc = tforge_sdk_strat_propose_fresh(&s->base, out, n_out, 0);
            s->n_random++;
        }
    }
    return tforge_sdk_strat_end_ask(&s->base, rc, q, *n_out);
}

/* Lets a measured point into the population if there is room or it beats the worst member. */
static void genetic_admit(genetic_state *s, uint32_t id)
{
    const tforge_sdk_strat_archive *a = &s->base.archive;
    uint32_t worst = 0;
    for (uint32_t i = 0; i < s->n_members; i++) {
        if (s->members[i] == id)
            return;
        if (a->values[s->members[i]] > a->values[s->members[worst]])
            worst = i;
    }
    if (s->n_members < (uint32_t)s->population)
        s->members[s->n_members++] = id;
    else if (a->values[id] < a->values[s->members[worst]])
        s->members[worst] = id;
}

static int genetic_tell(void *state, const tforge_observation *observations, uint32_t n)
{
    genetic_state *s = state;
    if (n && !observations)
        return tforge_sdk_strat_error(&s->base, TFORGE_PLUGIN_EINPUT,
                                      "told %u observations without an array", n);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t id;
        int rc = tforge_sdk_strat_record(&s->base, &observations[i], 0, &id);
        if (rc)
            return rc;
        if (s->base.archive.states[id] == TFORGE_SDK_STRAT_OK)
            genetic_admit(s, id);
    }
    return 0;
}

static void genetic_destroy(void *state)
{
    genetic_state *s = state;
    if (s) {
        free(s->members);
        free(s->child);
    }
    tforge_sdk_strat_destroy(state);
}

static const tforge_option_spec genetic_options[] = {
    {"population", TFORGE_OPTION_INTEGER, "20", 2, 1e6, NULL, "members kept"},
    {"tournament", TFORGE_OPTION_INTEGER, "3", 1, 1e6, NULL, "members drawn to pick a parent"},
    {"mutation", TFORGE_OPTION_NUMBER, "", 0, 1, NULL,
     "chance that a child's level changes, per dimension (default 1/dims)"},
};
#define N_OPTIONS (sizeof genetic_options / sizeof *genetic_options)

static int genetic_create(void **state, const tforge_host *host,
                          const tforge_options_view *options, const tforge_strategy_input *input)
{
    int rc = tforge_sdk_strat_create(state, sizeof(genetic_state), "genetic", host, input);
    if (rc)
        return rc;
    genetic_state *s = *state;
    s->mutation = 1.0 / s->base.dims;
    double *const targets[N_OPTIONS] = {&s->population, &s->tournament, &s->mutation};
    if ((rc = tforge_sdk_strat_parse_options(&s->base, options, genetic_options, N_OPTIONS,
                                             targets)) == 0 &&
        (!(s->members = malloc((size_t)s->population * sizeof *s->members)) ||
         !(s->child = malloc(s->base.dims * sizeof *s->child))))
        rc = tforge_sdk_strat_error(&s->base, TFORGE_PLUGIN_ENOMEM, "out of memory");
    if (rc) {
        genetic_destroy(s);
        *state = NULL;
    }
    return rc;
}

TFORGE_SDK_STRAT_PLUGIN("genetic",
                        "Steady-state genetic algorithm: tournaments, uniform crossover, mutation",
                        genetic_options, N_OPTIONS, genetic_create, genetic_ask, genetic_tell,
                        genetic_destroy);
