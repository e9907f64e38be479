/* The model-free strategies, linked statically, against a fake space: a 16 x 16 x 4 x 2 grid
 * (two ordinal dimensions, a categorical and a boolean) under the constraint a + b <= 24, either
 * enumerated or reporting count 0 so that strategies sample. Every strategy runs on every
 * objective (GSL's multimin test style) and must never repeat a point, propose only valid ones,
 * repeat itself for a fixed seed and, on the enumerated space, propose every valid point exactly
 * once before it says it has nothing left. */
#include "tforge/error.h"
#include "tforge/plugin/strategy.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

extern const tforge_plugin_module tforge_static_random, tforge_static_exhaustive,
    tforge_static_annealing, tforge_static_genetic, tforge_static_coordinate,
    tforge_static_pattern, tforge_static_bo;

typedef struct strategy {
    const char *id;
    const tforge_plugin_module *module;
    int enumerated_only; /* refuses a space that is not enumerated */
    int local;           /* a local search: must find the bowl's optimum quickly */
    uint32_t cap;        /* a model's cost grows with what it has seen: runs stop at this many
                            proposals (a multiple of the batch, 4) instead of exhausting the
                            space (0: no cap) */
} strategy;

static const strategy strategies[] = {
    {"random", &tforge_static_random, 0, 0, 0},
    {"exhaustive", &tforge_static_exhaustive, 1, 0, 0},
    {"annealing", &tforge_static_annealing, 0, 1, 0},
    {"genetic", &tforge_static_genetic, 0, 0, 0},
    {"coordinate", &tforge_static_coordinate, 0, 1, 0},
    {"pattern", &tforge_static_pattern, 0, 1, 0},
    {"bo", &tforge_static_bo, 0, 0, 32},
};
#define N_STRATEGIES (sizeof strategies / sizeof *strategies)

static const tforge_strategy_interface *api(const strategy *s)
{
    return s->module->get(0)->interface;
}

/* ---- a host that keeps the last error ---- */

static char last_error[512];

static void host_log(const tforge_host *host, int level, const char *message)
{
    (void)host, (void)level, (void)message;
}

static int host_error(const tforge_host *host, int code, const char *message)
{
    (void)host;
    snprintf(last_error, sizeof last_error, "%s", message);
    return code;
}

static void *host_alloc(const tforge_host *host, size_t size)
{
    (void)host;
    return malloc(size);
}

static void host_free(const tforge_host *host, void *pointer)
{
    (void)host;
    free(pointer);
}

static const tforge_host host = {TFORGE_PLUGIN_ABI_VERSION_INIT, sizeof(tforge_host), NULL,
                                 host_log, host_error, host_alloc, host_free};

/* ---- the fake space ---- */

#define DIMS 4
#define RAW (16 * 16 * 4 * 2)

static const uint32_t grid_levels[DIMS] = {16, 16, 4, 2};
static const uint32_t grid_kinds[DIMS] = {TFORGE_DIM_ORDINAL, TFORGE_DIM_ORDINAL,
                                          TFORGE_DIM_CATEGORICAL, TFORGE_DIM_BOOLEAN};
static const char *const grid_names[DIMS] = {"a", "b", "c", "d"};

typedef struct grid {
    int enumerated;
    uint32_t n_valid;
    uint32_t valid[RAW];    /* raw index of enumerated point i */
    uint64_t index_of[RAW]; /* enumerated index of a raw index, or TFORGE_NO_INDEX */
} grid;

static uint32_t raw_index(const tforge_level *p)
{
    return ((p[0] * 16u + p[1]) * 4u + p[2]) * 2u + p[3];
}

static void raw_point(uint32_t raw, tforge_level *p)
{
    p[3] = raw % 2;
    p[2] = raw / 2 % 4;
    p[1] = raw / 8 % 16;
    p[0] = (tforge_level)(raw / 128);
}

static int in_grid(const tforge_level *p)
{
    for (int d = 0; d < DIMS; d++)
        if (p[d] >= grid_levels[d])
            return 0;
    return 1;
}

static int constraint(const tforge_level *p)
{
    return p[0] + p[1] <= 24;
}

static uint32_t g_dims(void *c)
{
    (void)c;
    return DIMS;
}
static uint32_t g_levels(void *c, uint32_t d)
{
    (void)c;
    return grid_levels[d];
}
static uint32_t g_kind(void *c, uint32_t d)
{
    (void)c;
    return grid_kinds[d];
}
static const char *g_name(void *c, uint32_t d)
{
    (void)c;
    return grid_names[d];
}
static double g_value(void *c, uint32_t d, uint32_t level)
{
    (void)c;
    return grid_kinds[d] == TFORGE_DIM_ORDINAL ? ldexp(1.0, (int)level) : level;
}
static uint64_t g_count(void *c)
{
    const grid *g = c;
    return g->enumerated ? g->n_valid : 0;
}
static void g_point(void *c, uint64_t index, tforge_level *out)
{
    const grid *g = c;
    assert_true(g->enumerated && index < g->n_valid);
    raw_point(g->valid[index], out);
}
static uint64_t g_index_of(void *c, const tforge_level *p)
{
    const grid *g = c;
    return g->enumerated && in_grid(p) ? g->index_of[raw_index(p)] : TFORGE_NO_INDEX;
}
static int g_is_valid(void *c, const tforge_level *p)
{
    (void)c;
    assert_true(in_grid(p)); /* strategies only ask about points of the grid */
    return constraint(p);
}
static int g_sample(void *c, tforge_rng *rng, tforge_level *out)
{
    (void)c;
    do
        raw_point((uint32_t)tforge_rng_below(rng, RAW), out);
    while (!constraint(out));
    return 0;
}

static grid enumerated_grid, sampled_grid;
static tforge_space_view enumerated_view, sampled_view;

static void grid_init(grid *g, tforge_space_view *view, int enumerated)
{
    g->enumerated = enumerated;
    g->n_valid = 0;
    for (uint32_t raw = 0; raw < RAW; raw++) {
        tforge_level p[DIMS];
        raw_point(raw, p);
        g->index_of[raw] = TFORGE_NO_INDEX;
        if (constraint(p)) {
            g->index_of[raw] = g->n_valid;
            g->valid[g->n_valid++] = raw;
        }
    }
    /* a view of ABI 1.2: no owners or effects, which no strategy reads */
    *view = (tforge_space_view){offsetof(tforge_space_view, owner),
                                g,
                                g_dims,
                                g_levels,
                                g_kind,
                                g_name,
                                g_value,
                                g_count,
                                g_point,
                                g_index_of,
                                g_is_valid,
                                g_sample,
                                NULL,
                                NULL};
}

/* ---- objectives (lower is better) ---- */

typedef struct objective {
    const char *name;
    uint32_t (*eval)(const tforge_level *p, double *value);
} objective;

static double sq(double x)
{
    return x * x;
}

/* A smooth bowl, its minimum 1 at (9, 5, 2, 1). */
static uint32_t bowl(const tforge_level *p, double *value)
{
    *value = 1 + sq(p[0] - 9.0) + 2 * sq(p[1] - 5.0) + (p[2] != 2) * 3.0 + (p[3] == 0) * 2.0;
    return TFORGE_STATUS_OK;
}

/* A trend with ripples along both ordinal dimensions and a little fixed pseudo-random noise:
 * basins every 3 levels of a and 5 of b, so local minima everywhere. */
static uint32_t rugged(const tforge_level *p, double *value)
{
    uint64_t x = raw_index(p) + 1000;
    double noise = (double)(tforge_rng_splitmix(&x) >> 11) * 0x1p-53;
    double ripple = (1 - cos(p[0] * 2 * M_PI / 3)) + (1 - cos(p[1] * 2 * M_PI / 5));
    *value = 2 + 0.03 * (sq(p[0] - 11.0) + sq(p[1] - 4.0)) + 0.4 * ripple + 0.4 * noise +
             0.3 * (p[2] != 1) + 0.2 * p[3];
    return TFORGE_STATUS_OK;
}

/* The bowl with planted failures: a region that does not compile, one that crashes. */
static uint32_t failing(const tforge_level *p, double *value)
{
    if (p[0] >= 11 || (p[2] == 3 && p[3] == 1))
        return TFORGE_STATUS_COMPILE;
    if (p[1] == 4 && p[3] == 1)
        return TFORGE_STATUS_RUNTIME;
    return bowl(p, value);
}

static const objective objectives[] = {{"bowl", bowl}, {"rugged", rugged}, {"failing", failing}};
#define N_OBJECTIVES (sizeof objectives / sizeof *objectives)

/* The best value of an objective over the valid points. */
static double optimum(const objective *f)
{
    double best = INFINITY, v;
    for (uint32_t raw = 0; raw < RAW; raw++) {
        tforge_level p[DIMS];
        raw_point(raw, p);
        if (constraint(p) && f->eval(p, &v) == TFORGE_STATUS_OK && v < best)
            best = v;
    }
    return best;
}

/* ---- the driver: the host's loop ---- */

typedef struct run {
    tforge_level sequence[RAW + 8][DIMS]; /* every proposal, in order */
    uint32_t n;
    uint8_t seen[RAW];
    double best;
    int ended; /* an ask returned fewer than q points */
} run;

typedef struct setup {
    const tforge_space_view *view;
    const objective *f;
    uint64_t seed;
    uint32_t q;
    uint32_t lag;    /* batches measured but not yet told */
    uint32_t budget; /* stop after this many proposals */
    uint32_t n_options;
    const char *const *keys;
    const char *const *values;
    uint32_t n_told; /* points told before the first ask */
    const tforge_level (*told)[DIMS];
} setup;

static void tell_range(const tforge_strategy_interface *s, void *state, run *r, const setup *u,
                       uint32_t from, uint32_t to)
{
    tforge_observation obs[RAW];
    uint32_t n = 0;
    for (uint32_t i = to; i-- > from;) { /* newest first: tells come in any order */
        double value = NAN;
        uint32_t status = u->f->eval(r->sequence[i], &value);
        obs[n++] = (tforge_observation){r->sequence[i], status, value, 0};
        if (status == TFORGE_STATUS_OK && value < r->best)
            r->best = value;
    }
    assert_int_equal(s->tell(state, obs, n), 0);
}

static void drive(const strategy *st, const setup *u, run *r)
{
    const tforge_strategy_interface *s = api(st);
    tforge_options_view options = {sizeof options, u->n_options, u->keys, u->values};
    tforge_strategy_input input = {sizeof input, u->view, u->seed, u->budget, NULL};
    void *state = NULL;
    assert_int_equal(s->create(&state, &host, &options, &input), 0);
    memset(r, 0, sizeof *r);
    r->best = INFINITY;
    for (uint32_t i = 0; i < u->n_told; i++) {
        double value = NAN;
        uint32_t status = u->f->eval(u->told[i], &value);
        tforge_observation o = {u->told[i], status, value, 0};
        assert_int_equal(s->tell(state, &o, 1), 0);
        r->seen[raw_index(u->told[i])] = 1;
    }
    uint32_t starts[RAW + 8], n_batches = 0, told_batches = 0;
    while (r->n < u->budget && !r->ended) {
        tforge_level batch[8][DIMS];
        uint32_t n_out = 99;
        assert_int_equal(s->ask(state, u->q, &batch[0][0], &n_out), 0);
        assert_true(n_out <= u->q);
        starts[n_batches++] = r->n;
        for (uint32_t i = 0; i < n_out; i++) {
            assert_true(in_grid(batch[i]));
            assert_true(constraint(batch[i]));
            uint32_t raw = raw_index(batch[i]);
            if (r->seen[raw])
                fail_msg("%s proposed (%u %u %u %u) twice (proposal %u)", st->id, batch[i][0],
                         batch[i][1], batch[i][2], batch[i][3], r->n);
            r->seen[raw] = 1;
            memcpy(r->sequence[r->n++], batch[i], sizeof batch[i]);
        }
        r->ended = n_out < u->q;
        while (n_batches - told_batches > u->lag) {
            uint32_t end = told_batches + 1 < n_batches ? starts[told_batches + 1] : r->n;
            tell_range(s, state, r, u, starts[told_batches++], end);
        }
    }
    if (told_batches < n_batches)
        tell_range(s, state, r, u, starts[told_batches], r->n);
    if (r->ended) { /* nothing left, and it stays so once everything is told */
        tforge_level batch[8][DIMS];
        uint32_t n_out = 99;
        assert_int_equal(s->ask(state, u->q, &batch[0][0], &n_out), 0);
        assert_int_equal(n_out, 0);
    }
    s->destroy(state);
}

static run run_a, run_b;

/* ---- tests ---- */

static void modules_offer_one_strategy_each(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_STRATEGIES; i++) {
        const tforge_plugin_module *m = strategies[i].module;
        assert_int_equal(m->abi_version.major, TFORGE_PLUGIN_ABI_MAJOR);
        assert_int_equal(m->count(), 1);
        const tforge_plugin_descriptor *d = m->get(0);
        assert_string_equal(d->id, strategies[i].id);
        assert_string_equal(d->interface_id, TFORGE_STRATEGY_INTERFACE_ID);
        assert_null(m->get(1));
        const tforge_strategy_interface *s = d->interface;
        assert_int_equal(s->struct_size, sizeof *s);
    }
}

/* Every strategy x every objective x (enumerated, sampled) x (one at a time, batches of 4 told
 * one batch late), run until the strategy has nothing left. */
static void every_strategy_on_every_objective(void **state)
{
    (void)state;
    static const uint32_t batching[][2] = {{1, 0}, {4, 1}};
    for (size_t i = 0; i < N_STRATEGIES; i++)
        for (size_t o = 0; o < N_OBJECTIVES; o++)
            for (int enumerated = 1; enumerated >= 0; enumerated--)
                for (size_t k = 0; k < 2; k++) {
                    const strategy *st = &strategies[i];
                    const grid *g = enumerated ? &enumerated_grid : &sampled_grid;
                    setup u = {enumerated ? &enumerated_view : &sampled_view,
                               &objectives[o], 7, batching[k][0], batching[k][1],
                               st->cap ? st->cap : UINT32_MAX, 0, NULL, NULL, 0, NULL};
                    if (st->enumerated_only && !enumerated) {
                        tforge_options_view options = {sizeof options, 0, NULL, NULL};
                        tforge_strategy_input input = {sizeof input, u.view, 7, 0, NULL};
                        void *s = (void *)1;
                        assert_int_equal(api(st)->create(&s, &host, &options, &input),
                                         TFORGE_EINPUT);
                        assert_null(s);
                        assert_non_null(strstr(last_error, "enumerate"));
                        continue;
                    }
                    drive(st, &u, &run_a);
                    if (st->cap) /* none twice (checked in drive) up to the cap */
                        assert_int_equal(run_a.n, st->cap);
                    else
                        assert_true(run_a.ended);
                    if (enumerated && !st->cap) /* none twice (checked in drive), so each once */
                        assert_int_equal(run_a.n, g->n_valid);
                    else if (!st->cap) /* the sampler gives up when unseen points are rare */
                        assert_true(run_a.n >= g->n_valid * 9 / 10);
                    drive(st, &u, &run_b);
                    assert_int_equal(run_b.n, run_a.n);
                    assert_memory_equal(run_a.sequence, run_b.sequence,
                                        run_a.n * sizeof *run_a.sequence);
                }
}

static void another_seed_gives_other_points(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_STRATEGIES; i++) {
        if (strategies[i].enumerated_only)
            continue;
        setup u = {&enumerated_view, &objectives[0], 1, 1, 0, 50, 0, NULL, NULL, 0, NULL};
        drive(&strategies[i], &u, &run_a);
        u.seed = 2;
        drive(&strategies[i], &u, &run_b);
        assert_int_equal(run_a.n, 50);
        assert_int_equal(run_b.n, 50);
        assert_memory_not_equal(run_a.sequence, run_b.sequence, 50 * sizeof *run_a.sequence);
    }
}

static void unknown_options_are_rejected(void **state)
{
    (void)state;
    const char *keys[] = {"bogus"}, *values[] = {"1"};
    for (size_t i = 0; i < N_STRATEGIES; i++) {
        tforge_options_view options = {sizeof options, 1, keys, values};
        tforge_strategy_input input = {sizeof input, &enumerated_view, 1, 0, NULL};
        void *s = (void *)1;
        last_error[0] = '\0';
        assert_int_equal(api(&strategies[i])->create(&s, &host, &options, &input), TFORGE_EINPUT);
        assert_null(s);
        assert_non_null(strstr(last_error, "'bogus'"));
        assert_non_null(strstr(last_error, strategies[i].id));
    }
}

static const strategy *find_strategy(const char *id)
{
    for (size_t i = 0; i < N_STRATEGIES; i++)
        if (strcmp(strategies[i].id, id) == 0)
            return &strategies[i];
    fail_msg("no strategy %s", id);
    return NULL;
}

static void malformed_options_are_rejected(void **state)
{
    (void)state;
    static const char *const bad[][3] = {
        {"coordinate", "radius", "0"},      {"coordinate", "radius", "1.5"},
        {"coordinate", "threshold", "x"},   {"pattern", "step", "2"},
        {"pattern", "threshold", "0.1ms"},  {"annealing", "cooling", "1.5"},
        {"annealing", "t_min", "5"},        {"annealing", "patience", ""},
        {"genetic", "population", "1"},     {"genetic", "mutation", "nan"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const char *keys[] = {bad[i][1]}, *values[] = {bad[i][2]};
        tforge_options_view options = {sizeof options, 1, keys, values};
        tforge_strategy_input input = {sizeof input, &enumerated_view, 1, 0, NULL};
        void *s = (void *)1;
        last_error[0] = '\0';
        assert_int_equal(api(find_strategy(bad[i][0]))->create(&s, &host, &options, &input),
                         TFORGE_EINPUT);
        assert_null(s);
        assert_non_null(strstr(last_error, bad[i][0]));
        assert_non_null(strstr(last_error, bad[i][1]));
    }
}

/* A valid option is taken and changes what the strategy does. */
static void options_change_the_search(void **state)
{
    (void)state;
    static const char *const good[][3] = {
        {"coordinate", "radius", "2"}, {"pattern", "step", "0.5"},
        {"annealing", "t0", "2"},      {"genetic", "population", "6"},
    };
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        const char *keys[] = {good[i][1]}, *values[] = {good[i][2]};
        setup u = {&enumerated_view, &objectives[0], 3, 1, 0, 200, 0, NULL, NULL, 0, NULL};
        drive(find_strategy(good[i][0]), &u, &run_a);
        u.n_options = 1;
        u.keys = keys;
        u.values = values;
        drive(find_strategy(good[i][0]), &u, &run_b);
        assert_memory_not_equal(run_a.sequence, run_b.sequence, 200 * sizeof *run_a.sequence);
    }
}

/* Points the host tells without asking (a baseline, a resumed run) are never proposed. */
static void told_points_are_never_proposed(void **state)
{
    (void)state;
    static const tforge_level told[][DIMS] = {{9, 5, 2, 1}, {0, 0, 0, 0}, {15, 9, 3, 1}};
    for (size_t i = 0; i < N_STRATEGIES; i++) {
        setup u = {&enumerated_view, &objectives[0], 5, 4, 1, UINT32_MAX, 0, NULL, NULL, 3, told};
        drive(&strategies[i], &u, &run_a); /* drive fails on a repeat of a told point */
        assert_true(run_a.ended);
        assert_int_equal(run_a.n, enumerated_grid.n_valid - 3);
    }
}

/* A baseline told before the first ask is where the local searches start: their first proposal
 * differs from it in one dimension only. */
static void local_strategies_start_from_a_told_baseline(void **state)
{
    (void)state;
    static const tforge_level baseline[DIMS] = {3, 12, 1, 0};
    for (size_t i = 0; i < N_STRATEGIES; i++) {
        if (!strategies[i].local)
            continue;
        const tforge_strategy_interface *s = api(&strategies[i]);
        tforge_options_view options = {sizeof options, 0, NULL, NULL};
        tforge_strategy_input input = {sizeof input, &enumerated_view, 9, 0, NULL};
        void *st = NULL;
        assert_int_equal(s->create(&st, &host, &options, &input), 0);
        tforge_observation o = {baseline, TFORGE_STATUS_OK, 50.0, 0};
        assert_int_equal(s->tell(st, &o, 1), 0);
        tforge_level p[DIMS];
        uint32_t n_out = 0, differ = 0;
        assert_int_equal(s->ask(st, 1, p, &n_out), 0);
        assert_int_equal(n_out, 1);
        for (int d = 0; d < DIMS; d++)
            differ += p[d] != baseline[d];
        assert_int_equal(differ, 1);
        s->destroy(st);
    }
}

static void bad_calls_are_rejected(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_STRATEGIES; i++) {
        const tforge_strategy_interface *s = api(&strategies[i]);
        tforge_options_view options = {sizeof options, 0, NULL, NULL};
        tforge_strategy_input input = {sizeof input, &enumerated_view, 1, 0, NULL};
        void *st = NULL;
        assert_int_equal(s->create(&st, &host, &options, &input), 0);
        tforge_level outside[DIMS] = {16, 0, 0, 0};
        tforge_observation o = {outside, TFORGE_STATUS_OK, 1.0, 0};
        assert_int_equal(s->tell(st, &o, 1), TFORGE_EINPUT);
        assert_non_null(strstr(last_error, "dimension 0"));
        assert_int_equal(s->tell(st, NULL, 1), TFORGE_EINPUT);
        uint32_t n_out = 99;
        assert_int_equal(s->ask(st, 0, NULL, &n_out), 0);
        assert_int_equal(n_out, 0);
        assert_int_equal(s->ask(st, 1, NULL, &n_out), TFORGE_EINPUT);
        s->destroy(st);

        tforge_space_view broken = enumerated_view;
        broken.is_valid = NULL;
        input.space = &broken;
        st = (void *)1;
        assert_int_equal(s->create(&st, &host, &options, &input), TFORGE_EINPUT);
        assert_null(st);
    }
}

/* The local searches find the bowl's minimum with a tenth of the space: from every seed when
 * told each point before the next ask; from nearly every seed in batches of 4 told one batch
 * late, where a sequential search (annealing most) spends part of the batch on guesses. */
static void local_strategies_find_the_bowl_minimum(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_STRATEGIES; i++) {
        if (!strategies[i].local)
            continue;
        int batched_hits = 0;
        for (uint64_t seed = 1; seed <= 20; seed++) {
            setup u = {&enumerated_view, &objectives[0], seed, 1, 0, 188, 0, NULL, NULL, 0, NULL};
            drive(&strategies[i], &u, &run_a);
            if (run_a.best != 1.0)
                fail_msg("%s, seed %u: best %g after 188 points", strategies[i].id,
                         (unsigned)seed, run_a.best);
            u.q = 4;
            u.lag = 1;
            drive(&strategies[i], &u, &run_a);
            batched_hits += run_a.best == 1.0;
        }
        if (batched_hits < 18)
            fail_msg("%s in batches of 4: the minimum found from %d of 20 seeds",
                     strategies[i].id, batched_hits);
    }
}

/* For the record: mean best / optimum on the rugged objective with a tenth of the space (188
 * points), over 20 seeds, one at a time. Every search (exhaustive is not one) should beat
 * random's mean. */
static void rugged_report(void **state)
{
    (void)state;
    double best = optimum(&objectives[1]), random_mean = 0;
    for (size_t i = 0; i < N_STRATEGIES; i++) {
        double sum = 0;
        int hits = 0;
        for (uint64_t seed = 1; seed <= 20; seed++) {
            setup u = {&enumerated_view, &objectives[1], seed, 1, 0, 188, 0, NULL, NULL, 0, NULL};
            drive(&strategies[i], &u, &run_a);
            sum += run_a.best / best;
            hits += run_a.best == best;
        }
        double mean = sum / 20;
        print_message("rugged, 188 of %u points, 20 seeds: %-10s mean best/optimum %.4f, "
                      "optimum found %d/20\n",
                      enumerated_grid.n_valid, strategies[i].id, mean, hits);
        assert_true(mean >= 1.0);
        if (strcmp(strategies[i].id, "random") == 0)
            random_mean = mean;
        else if (strcmp(strategies[i].id, "exhaustive") != 0)
            assert_true(mean < random_mean);
    }
}

static int setup_grids(void **state)
{
    (void)state;
    grid_init(&enumerated_grid, &enumerated_view, 1);
    grid_init(&sampled_grid, &sampled_view, 0);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(modules_offer_one_strategy_each),
        cmocka_unit_test(every_strategy_on_every_objective),
        cmocka_unit_test(another_seed_gives_other_points),
        cmocka_unit_test(unknown_options_are_rejected),
        cmocka_unit_test(malformed_options_are_rejected),
        cmocka_unit_test(options_change_the_search),
        cmocka_unit_test(told_points_are_never_proposed),
        cmocka_unit_test(local_strategies_start_from_a_told_baseline),
        cmocka_unit_test(bad_calls_are_rejected),
        cmocka_unit_test(local_strategies_find_the_bowl_minimum),
        cmocka_unit_test(rugged_report),
    };
    return cmocka_run_group_tests(tests, setup_grids, NULL);
}
