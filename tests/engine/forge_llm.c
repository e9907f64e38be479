/* When forge asks a model (issue 37, item 5), with the real bottleneck heuristic over a fake
 * backend that profiles: a label is named as no open move's only once every move its prior
 * favours from the incumbent was measured (memory-bound: larger tiles), at once when its prior
 * moves nothing in the space (latency-bound: no stages to raise), never without a label; the
 * loop goes on at a stall its grow hook answers with go_on, and forge's steer follows the space
 * when it grows (a prior over the new levels handed to bo). */
#include "backend.h"
#include "forge.h"
#include "loop.h"
#include "tforge/error.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

extern const tforge_plugin_module tforge_static_bo;
extern const tforge_plugin_module tforge_static_bottleneck;

enum { BLOCKS = 4 };

/* What the fake profile's counters say. */
typedef enum bound_by { MEMORY, LATENCY, BALANCED } bound_by;
static bound_by profiled_as;

/* BLOCK_M 16 .. 128: 2 ms at 32, slower around it; the proposal (variant level 1): half. */
static double fake_ms(const tforge_level *p)
{
    double file = 2.0 + 0.1 * fabs(p[0] - 1.0);
    return p[1] == 1 ? file / 2 : file;
}

#include "support/fake_timed.h"

static void put(tforge_profile *out, const char *name, double value)
{
    snprintf(out->metrics[out->n_metrics].name, TFORGE_METRIC_NAME_SIZE, "%s", name);
    out->metrics[out->n_metrics++].value = value;
}

static int fake_profile(void *state, const tforge_candidate *c, const tforge_measurement *m,
                        int counters, tforge_profile *out)
{
    (void)state, (void)c, (void)m, (void)counters;
    memset(out, 0, sizeof *out);
    out->counters = TFORGE_COUNTERS_OK;
    if (profiled_as == MEMORY) { /* SOLBottleneck: DRAM busy, the SMs not */
        put(out, "sm_pct", 20);
        put(out, "dram_pct", 85);
    } else if (profiled_as == LATENCY) { /* both idle, waiting on loads */
        put(out, "sm_pct", 30);
        put(out, "dram_pct", 30);
        put(out, "stall_long_scoreboard", 0.5);
        put(out, "issue_pct", 50);
    } else { /* both busy alike: no label */
        put(out, "sm_pct", 70);
        put(out, "dram_pct", 70);
    }
    return 0;
}

static const tforge_backend_type profiling_type = {"fake", 1, fake_open, fake_evaluate,
                                                   fake_retime, fake_profile, NULL, fake_close,
                                                   NULL, NULL};

/* BLOCK_M (a tile) and `variant` with `levels` levels: "file", then "p1". */
static tforge_space *space_of(uint32_t levels)
{
    static const char *labels[] = {"file", "p1"};
    double values[BLOCKS];
    for (int i = 0; i < BLOCKS; i++)
        values[i] = 16 << i;
    tforge_space *s = NULL;
    if (tforge_space_new(&s) || tforge_space_add_values(s, "BLOCK_M", values, BLOCKS) ||
        tforge_space_describe(s, 0, TFORGE_DIM_OWNER_KNOB, TFORGE_DIM_KNOB, TFORGE_EFFECT_TILE) ||
        tforge_space_add_categorical(s, "variant", labels, levels) ||
        tforge_space_describe(s, 1, "llm", TFORGE_DIM_REWRITE, TFORGE_EFFECT_UNKNOWN) ||
        tforge_space_build(s, NULL))
        fail_msg("space: %s", tforge_error_last()->message);
    return s;
}

typedef struct fixture {
    tforge_registry *reg;
    tforge_space *space;
    tforge_backend backend;
    tforge_forge *forge;
    tforge_loop_outcome out; /* by hand: the evaluations the query reads */
} fixture;

static int setup(void **state)
{
    static fixture f;
    memset(&f, 0, sizeof f);
    f.space = space_of(1);
    tforge_backend_args args = TFORGE_BACKEND_ARGS_INIT;
    args.space = f.space;
    tforge_forge_options fo = TFORGE_FORGE_OPTIONS_INIT;
    if (tforge_registry_new(&f.reg) ||
        tforge_registry_add_static(f.reg, &tforge_static_bo, "builtin:bo") ||
        tforge_registry_add_static(f.reg, &tforge_static_bottleneck, "builtin:bottleneck") ||
        tforge_backend_open(&f.backend, &profiling_type, &args) ||
        tforge_forge_open(&f.forge, f.reg, f.space, &f.backend, &fo))
        return -1;
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    free(f->out.evals);
    tforge_forge_free(f->forge);
    tforge_backend_close(&f->backend);
    tforge_space_free(f->space);
    tforge_registry_free(f->reg);
    return 0;
}

/* Appends an evaluation at BLOCK_M level `block` of the file, measured correctly. */
static size_t measure(fixture *f, tforge_level block)
{
    static tforge_level points[16][2];
    size_t i = f->out.n_evals;
    assert_true(i < 16);
    points[i][0] = block;
    points[i][1] = 0;
    f->out.evals = realloc(f->out.evals, (i + 1) * sizeof *f->out.evals);
    assert_non_null(f->out.evals);
    memset(&f->out.evals[i], 0, sizeof f->out.evals[i]);
    f->out.evals[i].point = points[i];
    tforge_measurement_init(&f->out.evals[i].m);
    f->out.evals[i].m.value = fake_ms(points[i]);
    f->out.n_evals = i + 1;
    return i;
}

static int named_at(fixture *f, size_t incumbent, char *why, size_t size)
{
    int named = -2;
    assert_int_equal(tforge_forge_profile_eval(f->forge, &f->out, incumbent, NULL), 0);
    assert_int_equal(tforge_forge_unaddressed(&named, why, size, f->forge, &f->out, incumbent),
                     0);
    return named;
}

static void memory_bound_named_once_larger_tiles_are_measured(void **state)
{
    fixture *f = *state;
    profiled_as = MEMORY;
    char why[512];
    size_t incumbent = measure(f, 1); /* BLOCK_M 32; the label favours 64 and 128 */
    assert_int_equal(named_at(f, incumbent, why, sizeof why), -1);
    assert_non_null(strstr(why, "memory-bound is still addressed by BLOCK_M=64"));
    measure(f, 2);
    assert_int_equal(named_at(f, incumbent, why, sizeof why), -1);
    assert_non_null(strstr(why, "BLOCK_M=128"));
    measure(f, 3); /* every move it favours measured: nothing left addresses it */
    assert_int_equal(named_at(f, incumbent, why, sizeof why), 0);
    assert_non_null(strstr(why, "memory-bound (dram_pct 85"));
    assert_non_null(strstr(why, "no open move addresses it"));
}

static void latency_bound_with_no_stages_is_named_at_once(void **state)
{
    fixture *f = *state;
    profiled_as = LATENCY;
    char why[512];
    measure(f, 0); /* the space has neither stages nor rewrites that shorten the waits */
    size_t incumbent = measure(f, 1);
    assert_int_equal(named_at(f, incumbent, why, sizeof why), 0);
    assert_non_null(strstr(why, "latency-bound"));
}

static void no_label_names_nothing(void **state)
{
    fixture *f = *state;
    profiled_as = BALANCED;
    char why[512];
    size_t incumbent = measure(f, 2);
    assert_int_equal(named_at(f, incumbent, why, sizeof why), -1);
    assert_non_null(strstr(why, "No label"));
}

/* ---- the loop: go_on at the first stall, the space grown at the second ---- */

typedef struct grower {
    tforge_space *grown;
    unsigned asked;
    size_t at[4]; /* the evaluations there were at each ask */
} grower;

static int go_on_then_grow(void *context, const tforge_loop_outcome *out, long incumbent,
                           const tforge_space **space, int *go_on)
{
    (void)incumbent;
    grower *g = context;
    if (g->asked < 4)
        g->at[g->asked] = out->n_evals;
    if (g->asked == 0)
        *go_on = 1; /* not now: the search goes on over the file */
    else if (g->asked == 1)
        *space = g->grown;
    g->asked++;
    return 0;
}

static void forge_follows_a_grown_space(void **state)
{
    fixture *f = *state;
    (void)f;
    profiled_as = MEMORY;
    tforge_space *file_only = space_of(1);
    grower g = {.grown = space_of(2)};
    tforge_backend backend;
    tforge_backend_args args = TFORGE_BACKEND_ARGS_INIT;
    args.space = file_only;
    assert_int_equal(tforge_backend_open(&backend, &profiling_type, &args), 0);
    tforge_forge *forge = NULL;
    tforge_forge_options fo = TFORGE_FORGE_OPTIONS_INIT;
    assert_int_equal(tforge_forge_open(&forge, f->reg, file_only, &backend, &fo), 0);
    static tforge_level start[2] = {0, 0};
    const tforge_candidate baseline = {.point = start, .config = "{\"BLOCK_M\": 16}"};
    tforge_loop_options o = TFORGE_LOOP_OPTIONS_INIT;
    o.strategy = "bo";
    o.seed = 3;
    o.budget = 7;
    o.patience = 1;
    o.final_rounds = 0;
    o.baselines = &baseline;
    o.n_baselines = 1;
    o.steer = tforge_forge_steer(forge);
    tforge_loop_grow hook = {&g, go_on_then_grow};
    o.grow = &hook;
    tforge_loop_outcome out;
    evaluated = 0;
    int rc = tforge_loop_run(&out, f->reg, file_only, &backend, &o);
    if (rc)
        fail_msg("loop: %s", tforge_error_last()->message);
    assert_true(g.asked >= 2);
    assert_true(g.at[1] > g.at[0]); /* it went on after the first stall */
    /* after the growth: the proposal first at the incumbent's knobs, then it leads */
    assert_int_equal(out.evals[g.at[1]].point[1], 1);
    assert_int_equal(out.evals[out.best].point[1], 1);
    /* the new incumbent's prior was worked out over the grown space's levels */
    const tforge_forge_profile *p = tforge_forge_find(forge, (size_t)out.best);
    assert_non_null(p);
    assert_true(p->n_labels > 0);
    assert_string_equal(tforge_forge_family(forge, 1), "llm");
    tforge_loop_outcome_dispose(&out);
    tforge_forge_free(forge);
    tforge_backend_close(&backend);
    tforge_space_free(file_only);
    tforge_space_free(g.grown);
}

int main(void)
{
    const struct CMUnitTest tests[] = { /* a fresh forge each: its profiles are by evaluation */
        cmocka_unit_test_setup_teardown(memory_bound_named_once_larger_tiles_are_measured, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(latency_bound_with_no_stages_is_named_at_once, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(no_label_names_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(forge_follows_a_grown_space, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
