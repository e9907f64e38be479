/* The profile-guided loop (forge.c) with a fake backend that profiles (a 6 x 6 bowl of BLOCK_M
 * and a transform's level), a fixture heuristic and a spy strategy that records each prior it is
 * handed: the prior is set after the baseline, set again when the incumbent changes and not
 * otherwise; patience stops the search; refused counters and a backend that cannot profile
 * still run; forge's rule moves join bo's batches; forge withholds a prior the measurements
 * contradict; profile_all profiles every candidate once. */
#include "backend.h"
#include "forge.h"
#include "lab.h"
#include "loop.h"
#include "tforge/error.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

enum { SIDE = 6, POINTS = SIDE * SIDE, LEVELS = 2 * SIDE, MAX_CALLS = 64 };

/* ---- the fake backend: a bowl with its floor at (2, 3), profiles on request ---- */

typedef struct fake {
    int refuse_counters;
    size_t profiles;          /* profile calls */
    int asked_counters;       /* every call asked for counters */
    tforge_level profiled[MAX_CALLS][2];
} fake;

static fake the_fake;

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
    (void)state;
    for (size_t i = 0; i < n; i++) {
        out[i].value = out[i].median_ms = bowl(c[i].point);
        out[i].spread = 0.0;
        out[i].repeats = 10;
    }
    return 0;
}

static int fake_retime(void *state, const tforge_candidate *c, uint64_t seed,
                       tforge_measurement *out)
{
    (void)state, (void)seed;
    out->value = bowl(c->point);
    return 0;
}

static int fake_profile(void *state, const tforge_candidate *c, const tforge_measurement *m,
                        int counters, tforge_profile *out)
{
    fake *f = state;
    assert_true(f->profiles < MAX_CALLS);
    memcpy(f->profiled[f->profiles++], c->point, sizeof f->profiled[0]);
    f->asked_counters &= counters != 0;
    out->counters = !counters ? TFORGE_COUNTERS_NONE
                    : f->refuse_counters ? TFORGE_COUNTERS_REFUSED : TFORGE_COUNTERS_OK;
    if (f->refuse_counters)
        snprintf(out->note, sizeof out->note, "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (planted)");
    out->n_metrics = 0;
    snprintf(out->metrics[out->n_metrics].name, TFORGE_METRIC_NAME_SIZE, "time_ms");
    out->metrics[out->n_metrics++].value = m->value;
    if (out->counters == TFORGE_COUNTERS_OK) {
        snprintf(out->metrics[out->n_metrics].name, TFORGE_METRIC_NAME_SIZE, "dram_pct");
        out->metrics[out->n_metrics++].value = 80.0;
    }
    return 0;
}

static void fake_close(void *state)
{
    (void)state;
}

static const tforge_backend_type fake_type = {"fake", 1,          fake_open,  fake_evaluate,
                                              fake_retime, fake_profile, NULL, fake_close, NULL,
                                              NULL};
static const tforge_backend_type blind_type = {"blind", 1,   fake_open, fake_evaluate,
                                               fake_retime, NULL, NULL, fake_close, NULL, NULL};

/* ---- the fixture heuristic: one label, whose prior favours smaller BLOCK_M ---- */

static size_t classified;
static char evidence[128];

static int fixture_create(void **state, const tforge_host *host,
                          const tforge_options_view *options, const tforge_heuristic_input *input)
{
    assert_non_null(host);
    assert_non_null(options);
    assert_true(input->struct_size >= sizeof *input);
    /* the space says who owns each dimension; the host hands heuristics built before ABI 1.3
     * the same as families ("" for a knob) */
    assert_string_equal(input->families[0], "");
    assert_string_equal(input->families[1], "persistent");
    assert_string_equal(input->space->owner(input->space->context, 1), "persistent");
    *state = &classified;
    return 0;
}

static int fixture_classify(void *state, const tforge_profile *p, const tforge_bottleneck **out,
                            uint32_t *n)
{
    (void)state;
    static tforge_bottleneck label;
    classified++;
    int counted = p->counters == TFORGE_COUNTERS_OK;
    snprintf(evidence, sizeof evidence, "time_ms %g%s", p->metrics[0].value,
             counted ? ", dram_pct 80" : "");
    label = (tforge_bottleneck){counted ? "memory-bound" : "static-only", counted ? 0.9 : 0.5,
                                evidence, "time_ms > 0"};
    *out = &label;
    *n = 1;
    return 0;
}

static int fixture_prior(void *state, const tforge_bottleneck *labels, uint32_t n_labels,
                         const tforge_level *at, double *w, uint64_t n)
{
    (void)state, (void)labels, (void)n_labels;
    assert_int_equal(n, LEVELS);
    memset(w, 0, n * sizeof *w);
    for (uint32_t l = 0; l < SIDE; l++)
        w[l] = l < at[0] ? 1.0 : 0.0; /* BLOCK_M below the incumbent's */
    return 0;
}

static void fixture_destroy(void *state)
{
    (void)state;
}

static const tforge_heuristic_interface fixture_api = {sizeof fixture_api, fixture_create,
                                                       fixture_classify, fixture_prior,
                                                       fixture_destroy};
static const tforge_plugin_descriptor fixture_descriptor = {
    0, "fixture", "1.0.0", "one label, smaller BLOCK_M",
    TFORGE_HEURISTIC_INTERFACE_ID, &fixture_api, NULL, 0, NULL};

/* ---- the spy strategy: enumeration order, every prior it is handed recorded ---- */

typedef struct spy {
    const tforge_space_view *view;
    uint64_t next;
    uint8_t told[POINTS];
    size_t n_told;
    size_t priors;               /* set_level_prior calls */
    size_t told_at[MAX_CALLS];   /* observations told before each */
    double last[LEVELS];
} spy;

static spy the_spy;

static int spy_create(void **state, const tforge_host *host, const tforge_options_view *options,
                      const tforge_strategy_input *input)
{
    (void)host, (void)options;
    memset(&the_spy, 0, sizeof the_spy);
    the_spy.view = input->space;
    *state = &the_spy;
    return 0;
}

static int spy_ask(void *state, uint32_t q, tforge_level *out, uint32_t *n_out)
{
    spy *s = state;
    *n_out = 0;
    for (; *n_out < q && s->next < POINTS; s->next++)
        if (!s->told[s->next])
            s->view->point(s->view->context, s->next, out + 2 * (*n_out)++);
    return 0;
}

static int spy_tell(void *state, const tforge_observation *o, uint32_t n)
{
    spy *s = state;
    for (uint32_t i = 0; i < n; i++)
        s->told[s->view->index_of(s->view->context, o[i].point)] = 1;
    s->n_told += n;
    return 0;
}

static void spy_destroy(void *state)
{
    (void)state;
}

static int spy_set_level_prior(void *state, const double *w, uint64_t n)
{
    spy *s = state;
    assert_int_equal(n, LEVELS);
    assert_true(s->priors < MAX_CALLS);
    s->told_at[s->priors++] = s->n_told;
    memcpy(s->last, w, sizeof s->last);
    return 0;
}

static const tforge_strategy_interface spy_api = {sizeof spy_api, spy_create, spy_ask, spy_tell,
                                                  spy_destroy, NULL, spy_set_level_prior};
static const tforge_plugin_descriptor spy_descriptor = {
    0, "spy", "1.0.0", "enumeration order, priors recorded",
    TFORGE_STRATEGY_INTERFACE_ID, &spy_api, NULL, 0, NULL};

static const tforge_plugin_descriptor *const fixtures[] = {&fixture_descriptor, &spy_descriptor};
static uint32_t fixtures_count(void)
{
    return 2;
}
static const tforge_plugin_descriptor *fixtures_get(uint32_t i)
{
    return i < 2 ? fixtures[i] : NULL;
}
static const tforge_plugin_module fixtures_module = {TFORGE_PLUGIN_ABI_VERSION_INIT, "fixtures",
                                                     NULL, NULL, fixtures_count, fixtures_get};

/* ---- the runs ---- */

typedef struct fixture {
    tforge_space *space;
    tforge_registry *reg;
} fixture;

extern const tforge_plugin_module tforge_static_bo;
extern const tforge_plugin_module tforge_static_rules;
extern const tforge_plugin_module tforge_static_bottleneck;

static int setup(void **state)
{
    static fixture f;
    double values[SIDE];
    for (int i = 0; i < SIDE; i++)
        values[i] = 16 << i;
    if (tforge_space_new(&f.space) || tforge_space_add_values(f.space, "BLOCK_M", values, SIDE) ||
        tforge_space_add_range(f.space, "persistent_programs", 0, SIDE - 1, 1) ||
        tforge_space_describe(f.space, 1, "persistent", TFORGE_DIM_REWRITE,
                              TFORGE_EFFECT_PROGRAMS) ||
        tforge_space_build(f.space, NULL) || tforge_registry_new(&f.reg) ||
        tforge_registry_add_static(f.reg, &fixtures_module, "test:fixtures") ||
        tforge_registry_add_static(f.reg, &tforge_static_rules, "builtin:rules"))
        return -1;
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    tforge_registry_free(f->reg);
    tforge_space_free(f->space);
    return 0;
}

/* The baseline at (5, 1): 4.25 ms. */
static tforge_level baseline_point[2] = {5, 1};
static const tforge_candidate baseline = {.point = baseline_point, .config = "{\"baseline\": 1}"};

static tforge_backend the_backend; /* open from run() to finish(): the forge profiles through it */

/* One run of the spy steered by the fixture over `type`; the forge in `*forge`. */
static int run_stored(tforge_loop_outcome *out, tforge_forge **forge, fixture *f,
                      const tforge_backend_type *type, uint32_t budget, uint32_t patience,
                      const tforge_run_record *record, const tforge_run_history *history)
{
    classified = 0;
    the_fake.profiles = 0;
    the_fake.asked_counters = 1;
    tforge_backend_args args = TFORGE_BACKEND_ARGS_INIT;
    args.space = f->space;
    assert_int_equal(tforge_backend_open(&the_backend, type, &args), 0);
    tforge_forge_options fo = TFORGE_FORGE_OPTIONS_INIT;
    fo.heuristic = "fixture";
    fo.record = record;
    assert_int_equal(tforge_forge_open(forge, f->reg, f->space, &the_backend, &fo), 0);
    tforge_loop_options o = TFORGE_LOOP_OPTIONS_INIT;
    o.strategy = "spy";
    o.budget = budget;
    o.final_rounds = 0;
    o.baselines = &baseline;
    o.n_baselines = 1;
    o.steer = tforge_forge_steer(*forge);
    o.patience = patience;
    o.record = record;
    o.history = history;
    return tforge_loop_run(out, f->reg, f->space, &the_backend, &o);
}

static int run(tforge_loop_outcome *out, tforge_forge **forge, fixture *f,
               const tforge_backend_type *type, uint32_t budget, uint32_t patience)
{
    return run_stored(out, forge, f, type, budget, patience, NULL, NULL);
}

static void finish(tforge_loop_outcome *out, tforge_forge *forge)
{
    tforge_forge_free(forge);
    tforge_backend_close(&the_backend);
    tforge_loop_outcome_dispose(out);
}

static void prior_after_the_baseline_and_each_new_incumbent(void **state)
{
    fixture *f = *state;
    the_fake.refuse_counters = 0;
    tforge_loop_outcome out;
    tforge_forge *forge;
    assert_int_equal(run(&out, &forge, f, &fake_type, 20, 0), 0);
    /* the incumbents: the baseline, then each evaluation that beat the one before */
    size_t incumbents = 0;
    double held = INFINITY;
    for (size_t i = 0; i < out.n_evals; i++) {
        int beats = out.evals[i].m.value < held;
        assert_int_equal(out.evals[i].incumbent, beats);
        if (!beats)
            continue;
        held = out.evals[i].m.value;
        const tforge_forge_profile *p = tforge_forge_at(forge, incumbents);
        assert_non_null(p);
        assert_int_equal(p->eval, i);
        assert_true(p->steered);
        assert_int_equal(p->profile.counters, TFORGE_COUNTERS_OK);
        assert_int_equal(p->n_labels, 1);
        assert_string_equal(p->labels[0].label, "memory-bound");
        assert_non_null(strstr(p->labels[0].evidence, "dram_pct 80"));
        /* the prior was handed once the batch of this incumbent was told, before the next ask */
        assert_int_equal(the_spy.told_at[incumbents], i + 1);
        incumbents++;
    }
    /* baseline (5,1) 4.25; (0,1) 3.0; (0,2) 2.25; (0,3) 2.0; (1,2) 1.5; (1,3) 1.25; (2,3) 1.0,
     * the floor, at evaluation 16 */
    assert_int_equal(incumbents, 7);
    assert_int_equal(the_spy.priors, incumbents);
    assert_int_equal(tforge_forge_count(forge), incumbents);
    assert_int_equal(the_fake.profiles, incumbents);
    assert_true(the_fake.asked_counters);
    /* the last incumbent is (2, 3): smaller BLOCK_M favoured, the label moves it down */
    const tforge_forge_profile *last = tforge_forge_at(forge, incumbents - 1);
    assert_int_equal(out.evals[last->eval].point[0], 2);
    assert_true(the_spy.last[0] == 1.0 && the_spy.last[1] == 1.0 && the_spy.last[2] == 0.0);
    assert_int_equal(last->labels[0].n_moves, 1);
    assert_int_equal(last->labels[0].moves[0].dim, 0);
    assert_int_equal(last->labels[0].moves[0].way, TFORGE_FORGE_DOWN);
    assert_string_equal(tforge_forge_family(forge, 1), "persistent");
    /* the winner, profiled for the report without a prior handed */
    size_t priors = the_spy.priors;
    const tforge_forge_profile *again;
    assert_int_equal(tforge_forge_profile_eval(forge, &out, last->eval, &again), 0);
    assert_int_equal(tforge_forge_count(forge), incumbents); /* profiled already */
    assert_false(out.evals[1].incumbent); /* (0, 0), as slow as the baseline */
    assert_int_equal(tforge_forge_profile_eval(forge, &out, 1, &again), 0);
    assert_int_equal(tforge_forge_count(forge), incumbents + 1);
    assert_false(again->steered);
    assert_int_equal(the_spy.priors, priors);
    finish(&out, forge);
}

static void patience_stops(void **state)
{
    fixture *f = *state;
    the_fake.refuse_counters = 0;
    tforge_loop_outcome out;
    tforge_forge *forge;
    /* the incumbent (1, 3) comes at evaluation 11 (index 10 with the baseline); 4 more without
     * a better one */
    assert_int_equal(run(&out, &forge, f, &fake_type, 30, 4), 0);
    long last = -1;
    for (size_t i = 0; i < out.n_evals; i++)
        last = out.evals[i].incumbent ? (long)i : last;
    assert_int_equal(out.n_evals, (size_t)last + 1 + 4);
    assert_true(out.n_evals < 31);
    finish(&out, forge);
}

static void refused_counters_still_run(void **state)
{
    fixture *f = *state;
    the_fake.refuse_counters = 1;
    tforge_loop_outcome out;
    tforge_forge *forge;
    assert_int_equal(run(&out, &forge, f, &fake_type, 20, 0), 0);
    assert_int_equal(out.n_evals, 21);
    assert_true(tforge_forge_count(forge) > 1);
    for (size_t i = 0; i < tforge_forge_count(forge); i++) {
        const tforge_forge_profile *p = tforge_forge_at(forge, i);
        assert_int_equal(p->profile.counters, TFORGE_COUNTERS_REFUSED);
        assert_non_null(strstr(p->profile.note, "INSUFFICIENT_PRIVILEGES"));
        assert_string_equal(p->labels[0].label, "static-only"); /* from static metrics */
        assert_true(p->steered);
    }
    assert_int_equal(the_spy.priors, tforge_forge_count(forge));
    finish(&out, forge);
    the_fake.refuse_counters = 0;
}

static void a_backend_that_cannot_profile_goes_unsteered(void **state)
{
    fixture *f = *state;
    tforge_loop_outcome out;
    tforge_forge *forge;
    assert_int_equal(run(&out, &forge, f, &blind_type, 10, 0), 0);
    assert_int_equal(out.n_evals, 11);
    assert_int_equal(the_spy.priors, 0);
    assert_int_equal(classified, 0);
    assert_true(tforge_forge_count(forge) > 0);
    assert_non_null(strstr(tforge_forge_at(forge, 0)->note, "cannot profile"));
    finish(&out, forge);
}

typedef struct stored {
    size_t n, labels;
    int labelled; /* every one with its label and the metrics */
} stored;

static int count_labelled(void *context, const tforge_store_profile *p)
{
    stored *s = context;
    s->n++;
    s->labels += strcmp(p->labels_json, "[]") != 0;
    return 0;
}

static int count_profile(void *context, const tforge_store_profile *p)
{
    stored *s = context;
    s->n++;
    s->labelled &= strstr(p->labels_json, "\"memory-bound\"") && strstr(p->metrics_json,
                                                                        "\"dram_pct\"") &&
                   p->counters == TFORGE_COUNTERS_OK && strstr(p->params_json, "BLOCK_M");
    return 0;
}

/* With a store, each profile of an evaluation the run made is recorded with its labels; a
 * resumed run steers again but records nothing twice. */
static void profiles_are_stored(void **state)
{
    fixture *f = *state;
    char path[64];
    snprintf(path, sizeof path, "/tmp/tforge-forge-XXXXXX.db");
    close(mkstemps(path, 3));
    unlink(path);
    tforge_store *store;
    tforge_recording *described;
    assert_int_equal(tforge_recording_describe_space(&described, f->space, NULL, "fake"), 0);
    assert_int_equal(tforge_store_open(&store, path), 0);
    tforge_store_run like = {.source = "fake", .strategy = "spy", .seed = 1, .budget = 12};
    tforge_run_history history;
    tforge_run_record record = {store, 0, described, NULL, NULL};
    assert_int_equal(tforge_run_open(&record.run_id, &history, store, &like, TFORGE_RUN_RESUME),
                     0);
    tforge_loop_outcome out;
    tforge_forge *forge;
    assert_int_equal(run_stored(&out, &forge, f, &fake_type, 12, 0, &record, &history), 0);
    size_t taken = tforge_forge_count(forge);
    finish(&out, forge);
    tforge_run_history_dispose(&history);
    stored seen = {0, 0, 1};
    assert_int_equal(tforge_store_each_profile(store, record.run_id, count_profile, &seen), 0);
    assert_int_equal(seen.n, taken);
    assert_true(seen.labelled);
    /* resumed: every evaluation from the store, the priors handed again, nothing recorded */
    assert_int_equal(tforge_run_open(&record.run_id, &history, store, &like, TFORGE_RUN_RESUME),
                     0);
    assert_int_equal(history.n, 13);
    assert_int_equal(run_stored(&out, &forge, f, &fake_type, 12, 0, &record, &history), 0);
    assert_int_equal(out.n_resumed, 13);
    assert_int_equal(the_spy.priors, taken);
    finish(&out, forge);
    tforge_run_history_dispose(&history);
    seen = (stored){0, 0, 1};
    assert_int_equal(tforge_store_each_profile(store, record.run_id, count_profile, &seen), 0);
    assert_int_equal(seen.n, taken);
    tforge_store_close(store);
    tforge_recording_free(described);
    unlink(path);
}

/* The lab on softmax recorded on an H200 with counters (memory-bound once its rows are in one
 * block), steered by the bottleneck heuristic through the replay backend's profile op: profiles
 * are recorded with their labels, forge's traces differ from bo's once a label fires that the
 * measurements agree with (the spills of the convolution recorded without counters steer forge
 * no more: their remedy, smaller tiles, is one the measurements contradict), rules runs, and the
 * same seed gives the same traces. */
static void the_lab_steers_on_a_recorded_space(void **state)
{
    (void)state;
    tforge_recording *rec;
    tforge_replay *replay;
    tforge_registry *reg;
    assert_int_equal(tforge_recording_read(&rec, RECORDED_SOFTMAX), 0);
    assert_int_equal(tforge_replay_open(&replay, rec), 0);
    assert_int_equal(tforge_registry_new(&reg), 0);
    assert_int_equal(tforge_registry_add_static(reg, &tforge_static_bo, "builtin:bo"), 0);
    assert_int_equal(tforge_registry_add_static(reg, &tforge_static_rules, "builtin:rules"), 0);
    assert_int_equal(tforge_registry_add_static(reg, &tforge_static_bottleneck,
                                                "builtin:bottleneck"), 0);
    char path[64];
    snprintf(path, sizeof path, "/tmp/tforge-lab-XXXXXX.db");
    close(mkstemps(path, 3));
    unlink(path);
    tforge_store *store;
    assert_int_equal(tforge_store_open(&store, path), 0);
    enum { B = 30, SEEDS = 4 };
    const char *names[] = {"bo", "forge", "forge", "rules"};
    double best[4][SEEDS][B];
    for (int k = 0; k < 4; k++)
        for (uint64_t seed = 1; seed <= SEEDS; seed++) {
            tforge_lab_run_options o = TFORGE_LAB_RUN_OPTIONS_INIT;
            o.strategy = names[k];
            o.seed = seed;
            o.budget = B;
            o.store = store;
            o.source = RECORDED_SOFTMAX;
            o.settings_json = k == 2 ? "{\"again\": 1}" : "{}";
            uint32_t n;
            assert_int_equal(tforge_lab_run(best[k][seed - 1], NULL, &n, reg, replay, &o), 0);
            assert_int_equal(n, B);
            assert_false(isnan(best[k][seed - 1][B - 1]));
        }
    stored seen = {0, 0, 1};
    for (int64_t run = 1; run <= 4 * SEEDS; run++)
        assert_int_equal(tforge_store_each_profile(store, run, count_labelled, &seen), 0);
    assert_true(seen.n >= 3 * SEEDS && seen.labels > 0); /* forge twice and rules */
    assert_memory_equal(best[1], best[2], sizeof best[1]); /* deterministic */
    assert_memory_not_equal(best[0], best[1], sizeof best[0]); /* the prior changed proposals */
    tforge_store_close(store);
    unlink(path);
    tforge_registry_free(reg);
    tforge_replay_free(replay);
    tforge_recording_free(rec);
}

/* The fixture's forge over the_backend (open). */
static tforge_forge *fixture_forge(fixture *f, int steer, int profile_all)
{
    tforge_forge_options fo = TFORGE_FORGE_OPTIONS_INIT;
    fo.heuristic = "fixture";
    fo.steer = steer;
    fo.profile_all = profile_all;
    tforge_forge *forge;
    assert_int_equal(tforge_forge_open(&forge, f->reg, f->space, &the_backend, &fo), 0);
    return forge;
}

/* The spy's loop from `from`: `budget` candidates in batches of `batch`, steered by `forge`, no
 * final re-timing. */
static tforge_loop_options spy_loop(const tforge_candidate *from, uint32_t budget, uint32_t batch,
                                    tforge_forge *forge)
{
    tforge_loop_options o = TFORGE_LOOP_OPTIONS_INIT;
    o.strategy = "spy";
    o.budget = budget;
    o.batch = batch;
    o.final_rounds = 0;
    o.baselines = from;
    o.n_baselines = 1;
    o.steer = tforge_forge_steer(forge);
    return o;
}

/* forge's rule moves (loop.h's companion: rules with walk=0) beside the spy, batches of two:
 * once a prior is set each batch opens with the favoured neighbour of the incumbent, a point the
 * spy proposes in the same batch is evaluated once, and without a prior the companion proposes
 * nothing, the spy everything. */
static void rule_moves_join_the_batches(void **state)
{
    fixture *f = *state;
    the_fake.refuse_counters = 0;
    tforge_level start[2] = {1, 0};
    const tforge_candidate from = {.point = start, .config = "{\"baseline\": 2}"};
    tforge_backend_args args = TFORGE_BACKEND_ARGS_INIT;
    args.space = f->space;
    assert_int_equal(tforge_backend_open(&the_backend, &fake_type, &args), 0);
    tforge_forge *forge = fixture_forge(f, 1, 0);
    tforge_loop_options o = spy_loop(&from, 8, 2, forge);
    tforge_forge_companion_texts texts;
    tforge_forge_companion(&o, "forge", &texts);
    assert_string_equal(o.companion, "rules");
    tforge_loop_outcome out;
    assert_int_equal(tforge_loop_run(&out, f->reg, f->space, &the_backend, &o), 0);
    /* the baseline (1, 0) favours BLOCK_M level 0: rules proposes (0, 0), which is also the
     * spy's first point: one evaluation (a batch of one; the budget is still spent in full) */
    assert_int_equal(out.evals[1].point[0], 0);
    assert_int_equal(out.evals[1].point[1], 0);
    assert_int_equal(the_spy.n_told, out.n_evals); /* the spy heard of every evaluation once */
    assert_int_equal(out.n_evals, 1 + o.budget);
    for (size_t i = 1; i < out.n_evals; i++)
        for (size_t j = 0; j < i; j++)
            assert_memory_not_equal(out.evals[i].point, out.evals[j].point,
                                    2 * sizeof(tforge_level));
    tforge_forge_free(forge);
    tforge_loop_outcome_dispose(&out);

    /* no steer, no prior: the companion answers none and the spy proposes in its order */
    o.steer = NULL;
    assert_int_equal(tforge_loop_run(&out, f->reg, f->space, &the_backend, &o), 0);
    assert_int_equal(out.n_evals, 1 + o.budget);
    tforge_level expect[2];
    const tforge_space_view v = tforge_space_get_view(f->space);
    for (size_t i = 1, next = 0; i < out.n_evals; i++, next++) {
        v.point(v.context, next, expect);
        if (memcmp(expect, start, sizeof start) == 0) /* the baseline, told, is skipped */
            v.point(v.context, ++next, expect);
        assert_memory_equal(out.evals[i].point, expect, sizeof expect);
    }
    tforge_loop_outcome_dispose(&out);
    tforge_backend_close(&the_backend);
}

/* check_prior (forge's): each incumbent's prior is handed only when the measurements told so far
 * bear it out (tforge_forge_borne_out); otherwise all zeros, the profile unsteered, with a note
 * saying why. The baseline alone is no evidence. */
static void a_prior_the_measurements_contradict_is_withheld(void **state)
{
    fixture *f = *state;
    the_fake.refuse_counters = 0;
    tforge_backend_args args = TFORGE_BACKEND_ARGS_INIT;
    args.space = f->space;
    assert_int_equal(tforge_backend_open(&the_backend, &fake_type, &args), 0);
    tforge_forge_options fo = TFORGE_FORGE_OPTIONS_INIT;
    fo.heuristic = "fixture";
    tforge_forge_options_for(&fo, "forge");
    tforge_forge *forge;
    assert_int_equal(tforge_forge_open(&forge, f->reg, f->space, &the_backend, &fo), 0);
    tforge_loop_options o = spy_loop(&baseline, 20, 1, forge);
    tforge_loop_outcome out;
    assert_int_equal(tforge_loop_run(&out, f->reg, f->space, &the_backend, &o), 0);
    size_t steered = 0, withheld = 0;
    for (size_t i = 0; i < tforge_forge_count(forge); i++) {
        const tforge_forge_profile *p = tforge_forge_at(forge, i);
        /* the fixture's prior at this incumbent, against what was measured when it was handed */
        double w[LEVELS] = {0};
        for (uint32_t l = 0; l < SIDE; l++)
            w[l] = l < out.evals[p->eval].point[0] ? 1.0 : 0.0;
        tforge_loop_outcome then = out;
        then.n_evals = p->eval + 1;
        int agrees = tforge_forge_borne_out(forge, w, &then);
        assert_int_equal(p->steered, agrees);
        assert_int_equal(p->note[0] != 0, !agrees);
        steered += agrees;
        withheld += !agrees;
    }
    assert_false(tforge_forge_at(forge, 0)->steered); /* the baseline alone */
    assert_non_null(strstr(tforge_forge_at(forge, 0)->note, "do not bear out"));
    /* the fixture's remedy (smaller BLOCK_M) points away from the bowl's floor at every
     * incumbent of this scan: the measurements never bear it out (their agreement above zero
     * by chance steered it before) */
    assert_true(withheld > 0 && steered == 0);
    assert_int_equal(the_spy.priors, steered + withheld); /* zeros handed when withheld */
    tforge_forge_free(forge);
    tforge_loop_outcome_dispose(&out);
    tforge_backend_close(&the_backend);
}

/* profile_all: every evaluation (all run correctly on the fake) profiled once, as its batch is
 * told, the incumbents' prior taken from those profiles; with steer off, profiles and no prior. */
static void profile_all_profiles_each_candidate_once(void **state)
{
    fixture *f = *state;
    the_fake.refuse_counters = 0;
    tforge_backend_args args = TFORGE_BACKEND_ARGS_INIT;
    args.space = f->space;
    assert_int_equal(tforge_backend_open(&the_backend, &fake_type, &args), 0);
    for (int steer = 1; steer >= 0; steer--) {
        the_fake.profiles = 0;
        tforge_forge *forge = fixture_forge(f, steer, 1);
        tforge_loop_options o = spy_loop(&baseline, 20, 3, forge);
        tforge_loop_outcome out;
        assert_int_equal(tforge_loop_run(&out, f->reg, f->space, &the_backend, &o), 0);
        assert_int_equal(out.n_evals, 21);
        assert_int_equal(the_fake.profiles, out.n_evals);
        assert_int_equal(tforge_forge_count(forge), out.n_evals);
        size_t steered = 0; /* a batch's last new incumbent steers: at most one a batch */
        for (size_t i = 0; i < out.n_evals; i++) {
            const tforge_forge_profile *p = tforge_forge_find(forge, i);
            assert_non_null(p);
            assert_true(!p->steered || (steer && out.evals[i].incumbent));
            steered += (size_t)p->steered;
        }
        assert_int_equal(the_spy.priors, steered);
        assert_true(steer ? steered >= 3 : steered == 0);
        tforge_forge_free(forge);
        tforge_loop_outcome_dispose(&out);
    }
    tforge_backend_close(&the_backend);
}

static void names_and_refusals(void **state)
{
    fixture *f = *state;
    int steered;
    assert_string_equal(tforge_forge_plugin("forge", &steered), "bo");
    assert_true(steered);
    assert_string_equal(tforge_forge_plugin("rules", &steered), "rules");
    assert_true(steered);
    assert_string_equal(tforge_forge_plugin("bo", &steered), "bo");
    assert_false(steered);
    tforge_backend backend = {0};
    tforge_forge_options fo = TFORGE_FORGE_OPTIONS_INIT;
    tforge_forge *forge;
    fo.heuristic = "no-such-heuristic";
    assert_int_equal(tforge_forge_open(&forge, f->reg, f->space, &backend, &fo),
                     TFORGE_ENOTFOUND);
    assert_non_null(strstr(tforge_error_last()->message, "no-such-heuristic"));
    fo.heuristic = "spy"; /* a strategy, not a heuristic */
    assert_int_equal(tforge_forge_open(&forge, f->reg, f->space, &backend, &fo),
                     TFORGE_ENOTFOUND);
    fo.heuristic = "fixture";
    const char *const bad[] = {"threshold", NULL};
    fo.heuristic_options = bad;
    assert_int_equal(tforge_forge_open(&forge, f->reg, f->space, &backend, &fo), TFORGE_EINPUT);
    assert_non_null(strstr(tforge_error_last()->message, "key=value"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(prior_after_the_baseline_and_each_new_incumbent),
        cmocka_unit_test(patience_stops),
        cmocka_unit_test(refused_counters_still_run),
        cmocka_unit_test(a_backend_that_cannot_profile_goes_unsteered),
        cmocka_unit_test(profiles_are_stored),
        cmocka_unit_test(the_lab_steers_on_a_recorded_space),
        cmocka_unit_test(rule_moves_join_the_batches),
        cmocka_unit_test(a_prior_the_measurements_contradict_is_withheld),
        cmocka_unit_test(profile_all_profiles_each_candidate_once),
        cmocka_unit_test(names_and_refusals),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
