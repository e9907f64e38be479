/* The loop, with a fake backend: a 6 x 6 space whose value is a bowl, with planted failures of
 * every status, a re-timing that reorders the leaders, and a backend that can be made to die
 * after any number of evaluations (a kill -9 between two commits looks the same to the store). */
#include "backend.h"
#include "loop.h"
#include "replay.h"
#include "tforge/error.h"
#include "tforge/log.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

extern const tforge_plugin_module tforge_static_random;
extern const tforge_plugin_module tforge_static_exhaustive;

enum { SIDE = 6, POINTS = SIDE * SIDE };

/* ---- the fake backend ---- */

typedef struct fake {
    size_t calls, evaluated, largest_batch, retimes;
    long die_after;     /* evaluations before the backend fails (a killed run); -1: never */
    int retime_fails;
    double spread;      /* reported with every ok value */
    unsigned first_call_ms, call_ms; /* how long the first evaluate call (the baselines') and
                                        each later one take */
    /* the lookahead's backend (ahead_type): the points prepared, in order, and how many had
     * been when each evaluate call came */
    size_t n_prepared, prepared_at_call[POINTS];
    tforge_level prepared[2 * POINTS][2];
} fake;

static fake the_fake;

static tforge_status planted(const tforge_level *p)
{
    if (p[0] == 0 && p[1] == 0)
        return TFORGE_STATUS_COMPILE;
    if (p[0] == 5 && p[1] == 5)
        return TFORGE_STATUS_TIMEOUT;
    if (p[0] == 0 && p[1] == 5)
        return TFORGE_STATUS_RUNTIME;
    if (p[0] == 5 && p[1] == 0)
        return TFORGE_STATUS_WRONG;
    return TFORGE_STATUS_OK;
}

/* A bowl with its floor at (2, 3): 1 ms there. */
static double bowl(const tforge_level *p)
{
    return 1.0 + 0.25 * ((p[0] - 2.0) * (p[0] - 2.0) + (p[1] - 3.0) * (p[1] - 3.0));
}

static int fake_open(void **state, const tforge_backend_args *args)
{
    (void)args;
    *state = &the_fake;
    return 0;
}

static int fake_evaluate(void *state, const tforge_candidate *c, size_t n, tforge_measurement *out)
{
    fake *f = state;
    usleep((f->calls == 0 ? f->first_call_ms : f->call_ms) * 1000u);
    f->prepared_at_call[f->calls++] = f->n_prepared;
    f->largest_batch = n > f->largest_batch ? n : f->largest_batch;
    for (size_t i = 0; i < n; i++) {
        if (f->die_after >= 0 && (long)f->evaluated >= f->die_after)
            return tforge_error_set(TFORGE_ERROR, "the fake backend died");
        f->evaluated++;
        assert_non_null(c[i].point);
        tforge_status st = planted(c[i].point);
        if (st != TFORGE_STATUS_OK) {
            tforge_measurement_fail(&out[i], st, "planted %s", tforge_status_name(st));
            continue;
        }
        out[i].value = out[i].median_ms = bowl(c[i].point);
        out[i].spread = f->spread;
        out[i].repeats = 10;
        out[i].wall_ms = 2.0;
        out[i].compile_ms = 3.0;
        tforge_measurement_set_metric(&out[i], "registers", 32 + c[i].point[0]);
    }
    return 0;
}

/* Re-timed, the point one step left of the floor is the fastest. */
static int fake_retime(void *state, const tforge_candidate *c, uint64_t seed,
                       tforge_measurement *out)
{
    (void)seed;
    fake *f = state;
    f->retimes++;
    if (f->retime_fails)
        return tforge_error_set(TFORGE_ERROR, "the GPU fell off the bus");
    out->value = c->point && c->point[0] == 1 && c->point[1] == 3 ? 0.5 : bowl(c->point);
    return 0;
}

static void fake_close(void *state)
{
    (void)state;
}

/* Notes the points; an evaluate of a point it was not asked to prepare first fails the test. */
static int fake_prepare(void *state, const tforge_candidate *c, size_t n)
{
    fake *f = state;
    for (size_t i = 0; i < n; i++) {
        assert_true(f->n_prepared < 2 * POINTS);
        memcpy(f->prepared[f->n_prepared++], c[i].point, sizeof f->prepared[0]);
    }
    return 0;
}

static const tforge_backend_type fake_type = {"fake", 1, fake_open, fake_evaluate, fake_retime,
                                              NULL, NULL, fake_close, NULL, NULL};
static const tforge_backend_type ahead_type = {"ahead", 1,    fake_open,  fake_evaluate,
                                               fake_retime, NULL, NULL, fake_close, fake_prepare,
                                               NULL};

/* ---- fixture ---- */

typedef struct fixture {
    tforge_space *space;
    tforge_registry *reg;
    tforge_recording *described;
    tforge_backend backend;
} fixture;

static int setup(void **state)
{
    static fixture f;
    double values[SIDE];
    for (int i = 0; i < SIDE; i++)
        values[i] = 16 << i;
    if (tforge_space_new(&f.space) || tforge_space_add_values(f.space, "BLOCK_M", values, SIDE) ||
        tforge_space_add_values(f.space, "BLOCK_N", values, SIDE) ||
        tforge_space_build(f.space, NULL) || tforge_registry_new(&f.reg) ||
        tforge_registry_add_static(f.reg, &tforge_static_random, "builtin:random") ||
        tforge_registry_add_static(f.reg, &tforge_static_exhaustive, "builtin:exhaustive") ||
        tforge_recording_describe_space(&f.described, f.space, NULL, "fake"))
        return -1;
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    tforge_recording_free(f->described);
    tforge_registry_free(f->reg);
    tforge_space_free(f->space);
    return 0;
}

static void reset_fake(void)
{
    memset(&the_fake, 0, sizeof the_fake);
    the_fake.die_after = -1;
}

static int run(tforge_loop_outcome *out, fixture *f, tforge_loop_options *o)
{
    tforge_backend_args args = TFORGE_BACKEND_ARGS_INIT;
    args.space = f->space;
    /* with lookahead, the backend that prepares */
    assert_int_equal(tforge_backend_open(&f->backend, o->lookahead ? &ahead_type : &fake_type,
                                         &args), 0);
    int rc = tforge_loop_run(out, f->reg, f->space, &f->backend, o);
    tforge_backend_close(&f->backend);
    return rc;
}

/* Batches, every failure status, the incumbent, and the final re-timing. */
static void batches_failures_and_the_final_choice(void **state)
{
    fixture *f = *state;
    reset_fake();
    tforge_loop_options o = TFORGE_LOOP_OPTIONS_INIT;
    o.strategy = "exhaustive";
    o.budget = POINTS;
    o.batch = 4;
    tforge_loop_outcome out;
    assert_int_equal(run(&out, f, &o), 0);
    assert_int_equal(out.n_evals, POINTS);
    assert_int_equal(the_fake.evaluated, POINTS);
    assert_int_equal(the_fake.largest_batch, 4);
    assert_int_equal(the_fake.calls, POINTS / 4);
    size_t counts[TFORGE_STATUS_COUNT] = {0};
    for (size_t i = 0; i < out.n_evals; i++) {
        counts[out.evals[i].m.status]++;
        assert_int_equal(out.evals[i].m.status, planted(out.evals[i].point));
        if (out.evals[i].m.status != TFORGE_STATUS_OK)
            assert_non_null(strstr(out.evals[i].m.message, "planted"));
    }
    assert_int_equal(counts[TFORGE_STATUS_OK], POINTS - 4);
    for (int st = TFORGE_STATUS_COMPILE; st <= TFORGE_STATUS_WRONG; st++)
        assert_int_equal(counts[st], 1);
    /* the first pass found the floor; re-timed, its left neighbour wins */
    assert_true(out.evals[out.n_evals - 1].best == 1.0);
    assert_int_equal(out.evals[out.best].point[0], 1);
    assert_int_equal(out.evals[out.best].point[1], 3);
    assert_true(out.best_ms == 0.5);
    assert_int_equal(the_fake.retimes, 3 * 5); /* top 3, 5 rounds, no baseline */
    tforge_loop_outcome_dispose(&out);

    /* a re-timing that fails is an error, not a silent keep */
    reset_fake();
    the_fake.retime_fails = 1;
    assert_int_equal(run(&out, f, &o), TFORGE_ERROR);
    assert_non_null(strstr(tforge_error_last()->message, "final re-timing"));
    tforge_loop_outcome_dispose(&out);
}

/* A candidate better by less than the measured noise does not become the incumbent. */
static void the_noise_rule(void **state)
{
    fixture *f = *state;
    reset_fake();
    the_fake.spread = 0.5; /* every value is this noisy: only halving the time counts */
    tforge_loop_options o = TFORGE_LOOP_OPTIONS_INIT;
    o.strategy = "exhaustive";
    o.budget = POINTS;
    o.final_rounds = 0;
    tforge_loop_outcome out;
    assert_int_equal(run(&out, f, &o), 0);
    const tforge_loop_eval *last = &out.evals[out.n_evals - 1];
    assert_true(last->best_plain == 1.0);
    assert_true(last->best > 1.0); /* the floor came too late to beat the noisy incumbent */
    tforge_loop_outcome_dispose(&out);
}

/* Baselines: evaluated first, told to the strategy when inside the space, never re-proposed. */
static void baselines_come_first(void **state)
{
    fixture *f = *state;
    reset_fake();
    tforge_level inside[2] = {2, 3};
    tforge_candidate baselines[1] = {{.point = inside,
        .config = "{\"BLOCK_M\": 64, \"BLOCK_N\": 128}"}};
    tforge_loop_options o = TFORGE_LOOP_OPTIONS_INIT;
    o.strategy = "exhaustive";
    o.budget = POINTS;
    o.baselines = baselines;
    o.n_baselines = 1;
    tforge_loop_outcome out;
    assert_int_equal(run(&out, f, &o), 0);
    assert_int_equal(out.n_evals, POINTS); /* the baseline's point is not proposed again */
    assert_true(out.evals[0].baseline);
    assert_int_equal(out.baseline, 0);
    for (size_t i = 1; i < out.n_evals; i++)
        assert_false(out.evals[i].point[0] == 2 && out.evals[i].point[1] == 3);
    assert_true(out.baseline_ms == 1.0);
    tforge_loop_outcome_dispose(&out);
}

/* When no candidate re-times faster than the baseline (here the baseline is the point the
 * re-timing finds fastest), the baseline is the winner: never anything slower. */
static void the_baseline_wins_when_nothing_beats_it(void **state)
{
    fixture *f = *state;
    reset_fake();
    tforge_level fastest[2] = {1, 3};
    tforge_candidate baselines[1] = {{.point = fastest,
        .config = "{\"BLOCK_M\": 32, \"BLOCK_N\": 128}"}};
    tforge_loop_options o = TFORGE_LOOP_OPTIONS_INIT;
    o.strategy = "exhaustive";
    o.budget = 6;
    o.baselines = baselines;
    o.n_baselines = 1;
    tforge_loop_outcome out;
    assert_int_equal(run(&out, f, &o), 0);
    assert_int_equal(out.best, out.baseline);
    assert_true(out.best_ms == out.baseline_ms && out.speedup == 1.0);
    tforge_loop_outcome_dispose(&out);
}

/* --time bounds the search, not the baselines before it (a slow baseline, or its profile, once
 * ended a tune before its first candidate); the seconds are split by phase. */
static void the_time_limit_counts_the_search(void **state)
{
    fixture *f = *state;
    reset_fake();
    the_fake.first_call_ms = 300;
    the_fake.call_ms = 20;
    tforge_level inside[2] = {2, 3};
    tforge_candidate baselines[1] = {{.point = inside,
        .config = "{\"BLOCK_M\": 64, \"BLOCK_N\": 128}"}};
    tforge_loop_options o = TFORGE_LOOP_OPTIONS_INIT;
    o.strategy = "exhaustive";
    o.budget = POINTS;
    o.batch = 2;
    o.time_limit_s = 0.05;
    o.baselines = baselines;
    o.n_baselines = 1;
    tforge_loop_outcome out;
    assert_int_equal(run(&out, f, &o), 0);
    assert_true(out.n_evals >= 3 && out.n_evals < POINTS); /* one batch at least, not all */
    const tforge_loop_seconds *t = &out.split;
    assert_true(t->baselines_s >= 0.3 && t->candidates_s >= 0.02 * (double)(out.n_evals - 1) / 2);
    assert_true(t->search_s >= 0 && t->steer_s >= 0 && t->final_s >= 0);
    assert_true(t->baselines_s + t->candidates_s + t->search_s + t->steer_s + t->final_s <=
                out.seconds);
    double compiles = 0;
    for (size_t i = 0; i < out.n_evals; i++)
        compiles += isnan(out.evals[i].m.compile_ms) ? 0 : out.evals[i].m.compile_ms / 1e3;
    assert_true(compiles > 0 && fabs(t->compile_s - compiles) < 1e-9);
    tforge_loop_outcome_dispose(&out);
}

static char *temp_store(void)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/tforge-loop-XXXXXX.db");
    close(mkstemps(path, 3));
    unlink(path);
    return path;
}

static void resumes_after_a_kill_at_every_step_with(fixture *f, int lookahead)
{
    enum { BUDGET = 14 };
    tforge_loop_options o = TFORGE_LOOP_OPTIONS_INIT;
    o.strategy = "random";
    o.seed = 7;
    o.budget = BUDGET;
    o.batch = 3;
    o.final_rounds = 0;
    o.lookahead = lookahead;
    tforge_loop_outcome whole;
    reset_fake();
    assert_int_equal(run(&whole, f, &o), 0);
    for (long kill = 0; kill <= BUDGET; kill++) {
        const char *path = temp_store();
        tforge_store *store;
        assert_int_equal(tforge_store_open(&store, path), 0);
        tforge_store_run like = {.source = "fake", .strategy = "random", .seed = 7,
                                 .budget = BUDGET};
        tforge_run_history history;
        tforge_run_record record = {store, 0, f->described, NULL, NULL};
        assert_int_equal(tforge_run_open(&record.run_id, &history, store, &like,
                                         TFORGE_RUN_RESUME), 0);
        assert_int_equal(history.n, 0);
        o.record = &record;
        o.history = &history;
        reset_fake();
        the_fake.die_after = kill;
        tforge_loop_outcome out;
        assert_int_equal(run(&out, f, &o), kill < BUDGET ? TFORGE_ERROR : 0);
        tforge_loop_outcome_dispose(&out);
        tforge_run_history_dispose(&history);
        tforge_store_close(store);

        assert_int_equal(tforge_store_open(&store, path), 0);
        record.store = store;
        assert_int_equal(tforge_run_open(&record.run_id, &history, store, &like,
                                         TFORGE_RUN_RESUME), 0);
        assert_int_equal(record.run_id, 1);
        /* a batch is recorded when the backend returns it: a kill inside one loses it whole */
        assert_int_equal(history.n, (size_t)(kill == BUDGET ? BUDGET : kill / 3 * 3));
        reset_fake();
        assert_int_equal(run(&out, f, &o), 0);
        assert_int_equal(the_fake.evaluated, BUDGET - history.n);
        /* what the store holds is not compiled again */
        assert_int_equal(the_fake.n_prepared, lookahead ? BUDGET - history.n : 0);
        assert_int_equal(out.n_resumed, history.n);
        assert_int_equal(out.n_evals, whole.n_evals);
        for (size_t i = 0; i < out.n_evals; i++) {
            assert_memory_equal(out.evals[i].point, whole.evals[i].point, 2 * sizeof(tforge_level));
            assert_int_equal(out.evals[i].m.status, whole.evals[i].m.status);
            assert_true(out.evals[i].m.value == whole.evals[i].m.value ||
                        (isnan(out.evals[i].m.value) && isnan(whole.evals[i].m.value)));
        }
        /* metrics went through the store and back */
        if (history.n && history.measurements[0].status == TFORGE_STATUS_OK)
            assert_true(tforge_measurement_metric(&history.measurements[0], "registers") ==
                        whole.evals[0].m.metrics[0].value);
        int64_t count;
        assert_int_equal(tforge_store_count(&count, store, 1), 0);
        assert_int_equal(count, BUDGET);
        tforge_loop_outcome_dispose(&out);
        tforge_run_history_dispose(&history);

        /* another seed is not this run: --resume refuses, naming the setting */
        like.seed = 8;
        assert_int_equal(tforge_run_open(&record.run_id, &history, store, &like,
                                         TFORGE_RUN_RESUME), TFORGE_EINPUT);
        assert_non_null(strstr(tforge_error_last()->message, "seed 7, this run asks for 8"));
        tforge_store_close(store);
        unlink(path);
    }
    o.record = NULL;
    o.history = NULL;
    tforge_loop_outcome_dispose(&whole);
}

/* Killed after every possible number of evaluations, then resumed: the same history as a run
 * never killed, and only the missing evaluations made (and, with lookahead, prepared). */
static void resumes_after_a_kill_at_every_step(void **state)
{
    for (int lookahead = 0; lookahead < 2; lookahead++)
        resumes_after_a_kill_at_every_step_with(*state, lookahead);
}

/* With lookahead, each batch's successor is prepared before the batch is evaluated, every point
 * is prepared before its evaluation, and a strategy whose proposals ignore what it was told
 * (exhaustive) makes the same run as without. */
static void lookahead_prepares_the_next_batch(void **state)
{
    fixture *f = *state;
    tforge_loop_options o = TFORGE_LOOP_OPTIONS_INIT;
    o.strategy = "exhaustive";
    o.budget = 14;
    o.batch = 4;
    tforge_loop_outcome plain, ahead;
    reset_fake();
    assert_int_equal(run(&plain, f, &o), 0);
    assert_int_equal(the_fake.n_prepared, 0);
    o.lookahead = 1;
    reset_fake();
    assert_int_equal(run(&ahead, f, &o), 0);
    /* batches of 4, 4, 4 and 2: two batches ready at the first call, then one more each */
    assert_int_equal(the_fake.calls, 4);
    static const size_t ready[] = {8, 12, 14, 14};
    for (size_t k = 0; k < 4; k++)
        assert_int_equal(the_fake.prepared_at_call[k], ready[k]);
    assert_int_equal(the_fake.n_prepared, 14);
    assert_int_equal(ahead.n_evals, plain.n_evals);
    for (size_t i = 0; i < ahead.n_evals; i++) {
        assert_memory_equal(ahead.evals[i].point, plain.evals[i].point, sizeof the_fake.prepared[0]);
        assert_memory_equal(ahead.evals[i].point, the_fake.prepared[i], sizeof the_fake.prepared[0]);
    }
    assert_int_equal(ahead.best, plain.best);
    tforge_loop_outcome_dispose(&plain);
    tforge_loop_outcome_dispose(&ahead);
}

/* A strategy that proposes level 9 of a dimension with 6 (when rogue_out_of_range is set), else
 * always the point (1, 1). */
static int rogue_out_of_range;
static int rogue_create(void **state, const tforge_host *host, const tforge_options_view *options,
                        const tforge_strategy_input *input)
{
    (void)host, (void)options, (void)input;
    *state = &rogue_out_of_range;
    return 0;
}

static int rogue_ask(void *state, uint32_t q, tforge_level *out, uint32_t *n_out)
{
    (void)q;
    out[0] = *(int *)state ? 9 : 1;
    out[1] = 1;
    *n_out = 1;
    return 0;
}

static int rogue_tell(void *state, const tforge_observation *o, uint32_t n)
{
    (void)state, (void)o, (void)n;
    return 0;
}

static void rogue_destroy(void *state)
{
    (void)state;
}

static const tforge_strategy_interface rogue_api = {sizeof rogue_api, rogue_create, rogue_ask,
                                                    rogue_tell, rogue_destroy, NULL, NULL};
static const tforge_plugin_descriptor rogue_descriptor = {
    0, "rogue", "1.0.0", "proposes what it must not",
    TFORGE_STRATEGY_INTERFACE_ID, &rogue_api, NULL, 0, NULL};
static uint32_t rogue_count(void)
{
    return 1;
}
static const tforge_plugin_descriptor *rogue_get(uint32_t i)
{
    (void)i;
    return &rogue_descriptor;
}
static const tforge_plugin_module rogue_module = {TFORGE_PLUGIN_ABI_VERSION_INIT, "rogue", NULL,
                                                  NULL, rogue_count, rogue_get};

/* A strategy's invalid proposal is named by dimension and level; a repeated one is refused. */
static void bad_proposals_are_named(void **state)
{
    fixture *f = *state;
    assert_int_equal(tforge_registry_add_static(f->reg, &rogue_module, "test:rogue"), 0);
    reset_fake();
    tforge_loop_options o = TFORGE_LOOP_OPTIONS_INIT;
    o.strategy = "rogue";
    rogue_out_of_range = 1;
    tforge_loop_outcome out;
    assert_int_equal(run(&out, f, &o), TFORGE_ERROR);
    assert_string_equal(tforge_error_last()->message,
                        "strategy rogue proposed an invalid point: dimension BLOCK_M has no "
                        "level 9 (it has 6)");
    tforge_loop_outcome_dispose(&out);
    tforge_level told[2] = {1, 1};
    tforge_candidate baseline = {.point = told, .config = "{}"};
    o.baselines = &baseline;
    o.n_baselines = 1;
    rogue_out_of_range = 0;
    assert_int_equal(run(&out, f, &o), TFORGE_ERROR);
    assert_string_equal(tforge_error_last()->message,
                        "strategy rogue proposed an already seen point BLOCK_M=32, BLOCK_N=32");
    tforge_loop_outcome_dispose(&out);
    o.strategy = "no-such-strategy";
    assert_int_equal(run(&out, f, &o), TFORGE_ENOTFOUND);
    tforge_loop_outcome_dispose(&out);
}

/* A strategy that reads the host's history: each tell must find the history one batch longer,
 * holding what it was just told (points copied, not borrowed). */
typedef struct historian {
    const tforge_strategy_input *input;
    uint64_t next, told;
    int checked;
} historian;
static historian the_historian;

static int historian_create(void **state, const tforge_host *host,
                            const tforge_options_view *options, const tforge_strategy_input *input)
{
    (void)host, (void)options;
    the_historian = (historian){input, 0, 0, 0};
    *state = &the_historian;
    return input->struct_size >= sizeof *input && input->history ? 0 : TFORGE_PLUGIN_EINPUT;
}

static int historian_ask(void *state, uint32_t q, tforge_level *out, uint32_t *n_out)
{
    historian *h = state;
    const tforge_space_view *v = h->input->space;
    uint32_t n = 0;
    for (; n < q && h->next < v->count(v->context); n++)
        v->point(v->context, h->next++, out + (size_t)n * 2);
    *n_out = n;
    return 0;
}

static int historian_tell(void *state, const tforge_observation *o, uint32_t n)
{
    historian *h = state;
    const tforge_history_view *view = h->input->history;
    h->told += n;
    if (view->count(view->context) != h->told)
        return TFORGE_PLUGIN_ERROR;
    for (uint32_t i = 0; i < n; i++) {
        tforge_observation kept = view->get(view->context, h->told - n + i);
        if (kept.point == o[i].point || memcmp(kept.point, o[i].point, 2 * sizeof *kept.point) ||
            kept.status != o[i].status)
            return TFORGE_PLUGIN_ERROR;
    }
    h->checked++;
    return 0;
}

static const tforge_strategy_interface historian_api = {
    sizeof historian_api, historian_create, historian_ask, historian_tell, rogue_destroy, NULL,
    NULL};
static const tforge_plugin_descriptor historian_descriptor = {
    0, "historian", "1.0.0", "reads the history",
    TFORGE_STRATEGY_INTERFACE_ID, &historian_api, NULL, 0, NULL};
static const tforge_plugin_descriptor *historian_get(uint32_t i)
{
    (void)i;
    return &historian_descriptor;
}
static const tforge_plugin_module historian_module = {TFORGE_PLUGIN_ABI_VERSION_INIT, "historian",
                                                      NULL, NULL, rogue_count, historian_get};

static void the_host_keeps_the_history(void **state)
{
    fixture *f = *state;
    assert_int_equal(tforge_registry_add_static(f->reg, &historian_module, "test:historian"), 0);
    reset_fake();
    tforge_level inside[2] = {2, 3};
    tforge_candidate baselines[1] = {{.point = inside, .config = "{}"}};
    tforge_loop_options o = TFORGE_LOOP_OPTIONS_INIT;
    o.strategy = "historian";
    o.budget = 10;
    o.batch = 3;
    o.baselines = baselines;
    o.n_baselines = 1;
    tforge_loop_outcome out;
    assert_int_equal(run(&out, f, &o), 0);
    assert_int_equal(the_historian.told, 11); /* the baseline and ten candidates */
    assert_int_equal(the_historian.checked, 1 + 4);
    tforge_loop_outcome_dispose(&out);
}

/* Two strategies that enumerate the space, "up" from its first point and "down" from its last,
 * skipping what they were told, each recording the size of every ask: a companion and its
 * strategy whose shares a test can read. */
typedef struct ladder {
    const tforge_space_view *view;
    int down;
    uint8_t seen[POINTS];
    uint32_t asks[POINTS], n_asks;
} ladder;
static ladder ladders[2];

static int ladder_create(void **state, const tforge_strategy_input *input, int down)
{
    ladders[down] = (ladder){.view = input->space, .down = down};
    *state = &ladders[down];
    return 0;
}
static int up_create(void **state, const tforge_host *host, const tforge_options_view *options,
                     const tforge_strategy_input *input)
{
    (void)host, (void)options;
    return ladder_create(state, input, 0);
}
static int down_create(void **state, const tforge_host *host, const tforge_options_view *options,
                       const tforge_strategy_input *input)
{
    (void)host, (void)options;
    return ladder_create(state, input, 1);
}

static int ladder_ask(void *state, uint32_t q, tforge_level *out, uint32_t *n_out)
{
    ladder *s = state;
    s->asks[s->n_asks++] = q;
    *n_out = 0;
    for (uint64_t i = 0; i < POINTS && *n_out < q; i++) {
        uint64_t at = s->down ? POINTS - 1 - i : i;
        if (!s->seen[at]) {
            s->seen[at] = 1;
            s->view->point(s->view->context, at, out + 2 * (*n_out)++);
        }
    }
    return 0;
}

static int ladder_tell(void *state, const tforge_observation *o, uint32_t n)
{
    ladder *s = state;
    for (uint32_t i = 0; i < n; i++)
        s->seen[s->view->index_of(s->view->context, o[i].point)] = 1;
    return 0;
}

static const tforge_strategy_interface up_api = {sizeof up_api, up_create, ladder_ask,
                                                 ladder_tell, rogue_destroy, NULL, NULL};
static const tforge_strategy_interface down_api = {sizeof down_api, down_create, ladder_ask,
                                                   ladder_tell, rogue_destroy, NULL, NULL};
static const tforge_plugin_descriptor ladder_descriptors[] = {
    {0, "up", "1.0.0", "enumeration order", TFORGE_STRATEGY_INTERFACE_ID, &up_api, NULL, 0,
     NULL},
    {0, "down", "1.0.0", "reverse enumeration order",
     TFORGE_STRATEGY_INTERFACE_ID, &down_api, NULL, 0, NULL}};
static uint32_t ladders_count(void)
{
    return 2;
}
static const tforge_plugin_descriptor *ladders_get(uint32_t i)
{
    return i < 2 ? &ladder_descriptors[i] : NULL;
}
static const tforge_plugin_module ladders_module = {TFORGE_PLUGIN_ABI_VERSION_INIT, "ladders",
                                                    NULL, NULL, ladders_count, ladders_get};

/* The companion ("up") proposes first: the whole batch while one of its points became the
 * incumbent in the batch before, half its share before after a batch in which none did, never
 * less than companion_share; the strategy ("down") the rest, and is not asked for none. */
static void the_companion_keeps_the_batch_while_it_leads(void **state)
{
    fixture *f = *state;
    assert_int_equal(tforge_registry_add_static(f->reg, &ladders_module, "test:ladders"), 0);
    reset_fake();
    tforge_level far[2] = {5, 1};
    tforge_candidate baseline = {.point = far, .config = "{}"};
    tforge_loop_options o = TFORGE_LOOP_OPTIONS_INIT;
    o.strategy = "down";
    o.companion = "up";
    o.companion_share = 0.25;
    o.budget = 16;
    o.batch = 4;
    o.final_rounds = 0;
    o.baselines = &baseline;
    o.n_baselines = 1;
    tforge_loop_outcome out;
    assert_int_equal(run(&out, f, &o), 0);
    /* batch 1: (0,1) (0,2) (0,3) lead from 4.25 ms to 2; batch 2, (0,4) .. (1,1): none beats 2;
     * batch 3: (1,2) and (1,3) lead again (1.25 ms); batch 4: (1,4) .. (2,1) do not */
    const uint32_t up[] = {4, 4, 2, 4}, down[] = {2};
    assert_int_equal(ladders[0].n_asks, 4);
    assert_memory_equal(ladders[0].asks, up, sizeof up);
    assert_int_equal(ladders[1].n_asks, 1);
    assert_memory_equal(ladders[1].asks, down, sizeof down);
    assert_int_equal(out.n_evals, 1 + 16);
    tforge_loop_outcome_dispose(&out);

    /* from the floor itself nothing the companion proposes leads: 4, 2, then 1 of each 4 */
    tforge_level floor_point[2] = {2, 3};
    baseline.point = floor_point;
    assert_int_equal(run(&out, f, &o), 0);
    const uint32_t up_after[] = {4, 2, 1, 1}, down_after[] = {2, 3, 3};
    assert_int_equal(ladders[0].n_asks, 4);
    assert_memory_equal(ladders[0].asks, up_after, sizeof up_after);
    assert_int_equal(ladders[1].n_asks, 3);
    assert_memory_equal(ladders[1].asks, down_after, sizeof down_after);
    tforge_loop_outcome_dispose(&out);
}

/* With lookahead, the companion and the strategy each propose points the other proposed in the
 * batch still untold (the ladders meet in the middle): each such point is evaluated once, in the
 * batch that proposed it first, and the whole space is covered without an error. */
static void lookahead_evaluates_a_point_both_propose_once(void **state)
{
    fixture *f = *state;
    reset_fake();
    tforge_loop_options o = TFORGE_LOOP_OPTIONS_INIT;
    o.strategy = "down";
    o.companion = "up";
    o.companion_share = 0.5;
    o.budget = POINTS + 4; /* more than the space: the last batch proposed holds only repeats */
    o.batch = 4;
    o.final_rounds = 0;
    o.lookahead = 1;
    tforge_loop_outcome out;
    assert_int_equal(run(&out, f, &o), 0);
    assert_int_equal(out.n_evals, POINTS);
    uint8_t evaluated[POINTS] = {0};
    for (size_t i = 0; i < out.n_evals; i++) {
        size_t at = (size_t)out.evals[i].point[0] * SIDE + out.evals[i].point[1];
        assert_int_equal(evaluated[at]++, 0);
    }
    tforge_loop_outcome_dispose(&out);
}

int main(void)
{
    tforge_log_set_level(TFORGE_LOG_ERROR);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(batches_failures_and_the_final_choice),
        cmocka_unit_test(the_noise_rule),
        cmocka_unit_test(baselines_come_first),
        cmocka_unit_test(the_baseline_wins_when_nothing_beats_it),
        cmocka_unit_test(the_time_limit_counts_the_search),
        cmocka_unit_test(resumes_after_a_kill_at_every_step),
        cmocka_unit_test(lookahead_prepares_the_next_batch),
        cmocka_unit_test(bad_proposals_are_named),
        cmocka_unit_test(the_host_keeps_the_history),
        cmocka_unit_test(the_companion_keeps_the_batch_while_it_leads),
        cmocka_unit_test(lookahead_evaluates_a_point_both_propose_once),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
