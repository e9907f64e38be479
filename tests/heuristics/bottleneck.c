/* The bottleneck heuristic: each rule on the fixture profiles of this folder (counters and
 * static metrics; the static ones derived here by engine/profile from the recorded inputs), the
 * same kernels with their counters taken away, absent metrics giving no label, and each label's
 * prior on a small space: which levels gain, which lose, scaled by confidence, capped. */
#include "profile.h"

#include "tforge/error.h"
#include "tforge/measurement.h"
#include "tforge/plugin/heuristic.h"
#include "tforge/space.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

extern const tforge_plugin_module tforge_static_bottleneck;

static char host_message[512];

static int host_error(const tforge_host *host, int code, const char *message)
{
    (void)host;
    snprintf(host_message, sizeof host_message, "%s", message);
    return code;
}

static const tforge_host host = {TFORGE_PLUGIN_ABI_VERSION_INIT, sizeof(tforge_host), NULL, NULL,
                                 host_error, NULL, NULL};

static const tforge_heuristic_interface *heuristic(void)
{
    const tforge_plugin_descriptor *d = tforge_static_bottleneck.get(0);
    assert_non_null(d);
    assert_string_equal(d->id, "bottleneck");
    assert_string_equal(d->interface_id, TFORGE_HEURISTIC_INTERFACE_ID);
    return d->interface;
}

/* ---- the spaces ---- */

typedef struct fixture_space {
    tforge_space *space;
    tforge_space_view view;
} fixture_space;

static void add_values(tforge_space *s, const char *name, const double *v, size_t n)
{
    assert_int_equal(tforge_space_add_values(s, name, v, n), 0);
}

/* The task's knobs and one parameter of each transform family the prior knows, each named as
 * its transform names it and saying its owner and effect as the host does (the heuristic reads
 * only those; tests/heuristics/contract.c builds the space from the real transforms). */
enum { BLOCK_M, BLOCK_N, WARPS, STAGES, GROUP_M, EVICT, TMA, PERSISTENT, MAXNREG, LOOP_STAGES,
       PRECISION, MASKSPLIT, SPLITK, DIMS };

static fixture_space gemm_space(void)
{
    static const double tiles[] = {32, 64, 128, 256}, warps[] = {2, 4, 8}, stages[] = {1, 2, 3, 4},
                        group[] = {1, 8}, programs[] = {0, 132, 264},
                        maxnreg[] = {0, 64, 96, 128, 168, 255}, splits[] = {1, 2, 4, 8},
                        loop_stages[] = {0, 1, 2, 3, 4, 5};
    static const char *const evict[] = {"none", "evict_first", "evict_last"};
    static const char *const precision[] = {"tf32", "tf32x3", "ieee"};
    static const char *const owners[DIMS] = {
        TFORGE_DIM_OWNER_KNOB, TFORGE_DIM_OWNER_KNOB, TFORGE_DIM_OWNER_KNOB, TFORGE_DIM_OWNER_KNOB,
        TFORGE_DIM_OWNER_KNOB, "eviction", "descriptors", "persistent", "launch", "pipeline",
        "precision", "masksplit", "splitk"};
    static const tforge_dim_effect effects[DIMS] = {
        TFORGE_EFFECT_TILE,     TFORGE_EFFECT_TILE_CONTIGUOUS, TFORGE_EFFECT_WARPS,
        TFORGE_EFFECT_STAGES,   TFORGE_EFFECT_SWIZZLE,         TFORGE_EFFECT_EVICTION,
        TFORGE_EFFECT_TMA,      TFORGE_EFFECT_PROGRAMS,        TFORGE_EFFECT_REGISTER_CAP,
        TFORGE_EFFECT_PIPELINE_STAGES, TFORGE_EFFECT_PRECISION, TFORGE_EFFECT_MASK,
        TFORGE_EFFECT_SPLIT_K};
    fixture_space f = {NULL, {0}};
    assert_int_equal(tforge_space_new(&f.space), 0);
    add_values(f.space, "BLOCK_M", tiles, 4);
    add_values(f.space, "BLOCK_N", tiles, 4);
    add_values(f.space, "num_warps", warps, 3);
    add_values(f.space, "num_stages", stages, 4);
    add_values(f.space, "GROUP_M", group, 2);
    assert_int_equal(tforge_space_add_categorical(f.space, "evict0", evict, 3), 0);
    assert_int_equal(tforge_space_add_boolean(f.space, "tma"), 0);
    add_values(f.space, "persistent_programs", programs, 3);
    add_values(f.space, "maxnreg", maxnreg, 6);
    add_values(f.space, "loop0_stages", loop_stages, 6);
    assert_int_equal(tforge_space_add_categorical(f.space, "dot0_precision", precision, 3), 0);
    assert_int_equal(tforge_space_add_boolean(f.space, "masksplit0"), 0);
    add_values(f.space, "split_k", splits, 4);
    for (uint32_t d = 0; d < DIMS; d++)
        assert_int_equal(tforge_space_describe(f.space, d, owners[d],
                                               d < EVICT ? TFORGE_DIM_KNOB
                                               : d == MAXNREG ? TFORGE_DIM_LAUNCH
                                                              : TFORGE_DIM_REWRITE,
                                               effects[d]),
                         0);
    assert_int_equal(tforge_space_build(f.space, NULL), 0);
    f.view = tforge_space_get_view(f.space);
    return f;
}

/* The incumbent: BLOCK_M 64, BLOCK_N 128, 4 warps, 2 stages, GROUP_M 1, no hint, no TMA, not
 * persistent, maxnreg 128, loop not pipelined, tf32x3, the loop's mask kept, K not split. */
static const tforge_level at[DIMS] = {1, 2, 1, 1, 0, 0, 0, 0, 3, 0, 1, 0, 0};

/* ---- profiles ---- */

/* A fixture profile with its static metrics derived over the H200 from its recorded inputs. */
static tforge_profile load(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", HEURISTICS_FIXTURES, name);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char text[8192];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    tforge_profile p;
    assert_int_equal(tforge_profile_from_json(&p, text, path), 0);
    tforge_measurement m;
    tforge_measurement_init(&m);
    m.median_ms = tforge_profile_get(&p, "time_ms");
    assert_int_equal(tforge_profile_add_static(&p, tforge_device_h200(), &m,
                                               tforge_profile_get(&p, "num_warps"),
                                               tforge_profile_get(&p, "grid_blocks"),
                                               tforge_profile_get(&p, "bytes"),
                                               tforge_profile_get(&p, "flops")), 0);
    return p;
}

/* The same profile with every counter taken away, as where counters are refused. */
static tforge_profile without_counters(const tforge_profile *p)
{
    tforge_profile q;
    tforge_profile_init(&q);
    q.counters = TFORGE_COUNTERS_REFUSED;
    for (uint32_t i = 0; i < p->n_metrics; i++)
        if (!tforge_profile_counter_name(p->metrics[i].name))
            tforge_profile_set(&q, p->metrics[i].name, p->metrics[i].value);
    return q;
}

typedef struct classified {
    const tforge_bottleneck *labels;
    uint32_t n;
} classified;

static void *open_heuristic(const fixture_space *f, uint32_t n_options, const char *const *keys,
                            const char *const *values)
{
    tforge_options_view options = {sizeof options, n_options, keys, values};
    tforge_heuristic_input input = {sizeof input, &f->view, NULL};
    void *state = NULL;
    assert_int_equal(heuristic()->create(&state, &host, &options, &input), 0);
    return state;
}

static classified classify(void *state, const tforge_profile *p)
{
    classified c = {NULL, 0};
    assert_int_equal(heuristic()->classify(state, p, &c.labels, &c.n), 0);
    for (uint32_t i = 1; i < c.n; i++) /* strongest first */
        assert_true(c.labels[i - 1].confidence >= c.labels[i].confidence);
    for (uint32_t i = 0; i < c.n; i++) {
        assert_true(c.labels[i].confidence > 0 && c.labels[i].confidence <= 1);
        assert_true(c.labels[i].evidence[0] != '\0'); /* a label needs its evidence */
        assert_true(c.labels[i].rule[0] != '\0');
    }
    return c;
}

static const tforge_bottleneck *find(classified c, const char *label)
{
    for (uint32_t i = 0; i < c.n; i++)
        if (strcmp(c.labels[i].label, label) == 0)
            return &c.labels[i];
    return NULL;
}

/* Exactly these labels (a NULL-terminated list), the first one strongest. */
static void assert_labels(classified c, ...)
{
    va_list ap;
    va_start(ap, c);
    uint32_t count = 0;
    for (const char *label; (label = va_arg(ap, const char *)); count++) {
        if (count == 0)
            assert_string_equal(c.labels[0].label, label);
        if (!find(c, label))
            fail_msg("label %s missing", label);
    }
    va_end(ap);
    if (c.n != count)
        fail_msg("%u labels, expected %u (first: %s)", c.n, count, c.n ? c.labels[0].label : "");
}

typedef struct fixture {
    fixture_space space;
    void *state;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->space = gemm_space();
    f->state = open_heuristic(&f->space, 0, NULL, NULL);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    heuristic()->destroy(f->state);
    tforge_space_free(f->space.space);
    free(f);
    return 0;
}

/* ---- the rules ---- */

static void test_memory_bound_copy(void **state)
{
    fixture *f = *state;
    tforge_profile p = load("copy_counters.json");
    classified c = classify(f->state, &p);
    assert_labels(c, "memory-bound", NULL);
    const tforge_bottleneck *b = find(c, "memory-bound");
    assert_true(b->confidence > 0.9);
    assert_non_null(strstr(b->evidence, "dram_pct 88.4"));
    assert_non_null(strstr(b->rule, ">= 60"));
    double with_counters = b->confidence;
    /* Refused counters: the static DRAM share (0.87 of 4.8 TB/s) says the same, less surely. */
    tforge_profile q = without_counters(&p);
    c = classify(f->state, &q);
    assert_labels(c, "memory-bound", NULL);
    assert_true(find(c, "memory-bound")->confidence < with_counters);
    assert_non_null(strstr(find(c, "memory-bound")->evidence, "dram_share 0.87"));
}

static void test_compute_bound_matmul(void **state)
{
    fixture *f = *state;
    tforge_profile p = load("matmul_counters.json");
    /* one 8-warp block an SM: low occupancy, which a compute-bound GEMM does not mind */
    assert_float_equal(tforge_profile_get(&p, "occupancy_theoretical"), 0.125, 1e-12);
    classified c = classify(f->state, &p);
    assert_labels(c, "compute-bound", NULL);
    assert_true(find(c, "compute-bound")->confidence > 0.85);
    tforge_profile q = without_counters(&p);
    c = classify(f->state, &q);
    assert_labels(c, "compute-bound", NULL); /* flops_share 0.72 */
    assert_true(find(c, "compute-bound")->confidence < 0.6);
}

static void test_spilling_layer_norm(void **state)
{
    fixture *f = *state;
    tforge_profile p = load("layernorm_spills.json");
    classified c = classify(f->state, &p);
    assert_labels(c, "register-spills", "low-occupancy", NULL);
    assert_non_null(strstr(find(c, "register-spills")->evidence, "spill_stores 756"));
    const tforge_bottleneck *low = find(c, "low-occupancy");
    assert_non_null(strstr(low->evidence, "occupancy_theoretical 0.125"));
    assert_non_null(strstr(low->evidence, "occupancy_limiter 1"));
    assert_true(low->confidence < 0.5); /* static evidence only */
    assert_non_null(strstr(low->evidence, "dram_share 0.3"));
    /* As recorded spaces have it: no launch bytes, so no evidence that the low occupancy
     * (true) is what limits the kernel, as it is not for a GEMM's large tiles. */
    tforge_profile q;
    tforge_profile_init(&q);
    for (uint32_t i = 0; i < p.n_metrics; i++)
        if (strcmp(p.metrics[i].name, "bytes") && strcmp(p.metrics[i].name, "dram_share"))
            tforge_profile_set(&q, p.metrics[i].name, p.metrics[i].value);
    assert_labels(classify(f->state, &q), "register-spills", NULL);
}

static void test_tail_effect(void **state)
{
    fixture *f = *state;
    tforge_profile p = load("tail_wave.json");
    assert_float_equal(tforge_profile_get(&p, "waves"), 581.0 / 528, 1e-12);
    classified c = classify(f->state, &p);
    assert_labels(c, "tail-effect", NULL);
    assert_non_null(strstr(find(c, "tail-effect")->evidence, "waves 1.1"));
    /* With counters, Nsight Compute also asks for achieved occupancy below 80% of theoretical. */
    tforge_profile_set(&p, "occupancy_achieved", 0.35); /* theoretical 0.5 */
    c = classify(f->state, &p);
    assert_non_null(find(c, "tail-effect"));
    tforge_profile_set(&p, "occupancy_achieved", 0.45);
    c = classify(f->state, &p);
    assert_null(find(c, "tail-effect"));
    /* Two and a half waves: the last is half full, not a tail worth a label. */
    p = load("tail_wave.json");
    tforge_profile_set(&p, "waves", 2.6);
    tforge_profile_set(&p, "last_wave_fill", 0.6);
    assert_null(find(classify(f->state, &p), "tail-effect"));
}

static void test_latency_bound(void **state)
{
    fixture *f = *state;
    tforge_profile p = load("latency_counters.json");
    classified c = classify(f->state, &p);
    assert_labels(c, "latency-bound", NULL);
    const tforge_bottleneck *b = find(c, "latency-bound");
    assert_true(b->confidence >= 0.8); /* long-scoreboard stalls */
    assert_non_null(strstr(b->evidence, "stall_long_scoreboard 0.61"));
    tforge_profile_set(&p, "stall_long_scoreboard", 0.1);
    assert_true(find(classify(f->state, &p), "latency-bound")->confidence < 0.8);
}

static void test_launch_bound_and_small_grid(void **state)
{
    fixture *f = *state;
    tforge_profile p = load("launch_small.json");
    classified c = classify(f->state, &p);
    assert_labels(c, "tail-effect", "launch-bound", NULL);
    assert_non_null(strstr(find(c, "tail-effect")->rule, "waves < 1"));
    assert_non_null(strstr(find(c, "launch-bound")->evidence, "time_ms 0.0035"));
}

static void test_uncoalesced_and_conflicts(void **state)
{
    fixture *f = *state;
    tforge_profile p = load("strided_counters.json");
    classified c = classify(f->state, &p);
    assert_labels(c, "uncoalesced", "memory-bound", "smem-conflicts", NULL);
    assert_non_null(strstr(find(c, "uncoalesced")->evidence, "l2_sectors_per_request 31.5"));
    assert_non_null(strstr(find(c, "memory-bound")->evidence, "l2_pct 80"));
}

/* Absent metrics give no label, never a guess. */
static void test_absent_metrics(void **state)
{
    fixture *f = *state;
    tforge_profile p;
    tforge_profile_init(&p);
    assert_int_equal(classify(f->state, &p).n, 0);
    tforge_profile_set(&p, "registers", 255);
    tforge_profile_set(&p, "sm_pct", 20); /* one unit's throughput says nothing alone */
    tforge_profile_set(&p, "intensity", 0.1);
    assert_int_equal(classify(f->state, &p).n, 0);
}

/* ---- the prior ---- */

typedef struct weights {
    double w[64];
    uint32_t offset[DIMS], total;
} weights;

static weights prior_of(fixture *f, const tforge_bottleneck *labels, uint32_t n)
{
    weights out;
    uint64_t total = 0;
    for (uint32_t d = 0; d < DIMS; d++) {
        out.offset[d] = (uint32_t)total;
        total += tforge_space_levels(f->space.space, d);
    }
    assert_true(total <= 64);
    out.total = (uint32_t)total;
    assert_int_equal(heuristic()->prior(f->state, labels, n, at, out.w, total), 0);
    return out;
}

static double w(const weights *x, uint32_t dim, uint32_t level)
{
    return x->w[x->offset[dim] + level];
}

static void assert_neutral(const weights *x, uint32_t dim, uint32_t levels)
{
    for (uint32_t l = 0; l < levels; l++)
        assert_float_equal(w(x, dim, l), 0, 0);
}

/* A transform's parameter no label moved: level 0, the source unchanged, leans by the option
 * `unchanged` (1), the others are neutral. */
static void assert_unchanged(const weights *x, uint32_t dim, uint32_t levels)
{
    assert_float_equal(w(x, dim, 0), 1, 0);
    for (uint32_t l = 1; l < levels; l++)
        assert_float_equal(w(x, dim, l), 0, 0);
}

/* Smaller than the incumbent gains, larger loses. */
static void assert_down(const weights *x, uint32_t dim, uint32_t levels)
{
    for (uint32_t l = 0; l < levels; l++)
        if (l < at[dim])
            assert_true(w(x, dim, l) > 0);
        else if (l > at[dim])
            assert_true(w(x, dim, l) < 0);
        else
            assert_float_equal(w(x, dim, l), 0, 0);
}

static void assert_up(const weights *x, uint32_t dim, uint32_t levels)
{
    for (uint32_t l = 0; l < levels; l++)
        if (l > at[dim])
            assert_true(w(x, dim, l) > 0);
        else if (l < at[dim])
            assert_true(w(x, dim, l) < 0);
        else
            assert_float_equal(w(x, dim, l), 0, 0);
}

static tforge_bottleneck label(const char *name, double confidence, const char *evidence)
{
    return (tforge_bottleneck){name, confidence, evidence, "test"};
}

static void test_prior_spills(void **state)
{
    tforge_bottleneck b = label("register-spills", 0.9, "spill_stores 756, registers 255");
    weights x = prior_of(*state, &b, 1);
    assert_down(&x, BLOCK_M, 4);
    assert_down(&x, BLOCK_N, 4);
    assert_down(&x, STAGES, 4);
    assert_true(w(&x, MAXNREG, 0) > 0); /* maxnreg off */
    for (uint32_t l = 1; l < 6; l++)
        assert_float_equal(w(&x, MAXNREG, l), 0, 0);
    assert_up(&x, WARPS, 3); /* the tile's registers over more threads */
    assert_neutral(&x, GROUP_M, 2);
    assert_unchanged(&x, TMA, 2);
}

static void test_prior_low_occupancy(void **state)
{
    /* shared memory limits: smaller tiles, fewer stages, warps untouched */
    tforge_bottleneck b = label("low-occupancy", 1, "occupancy_theoretical 0.125, "
                                "occupancy_limiter 2, registers 128, num_warps 4");
    weights x = prior_of(*state, &b, 1);
    assert_down(&x, BLOCK_M, 4);
    assert_down(&x, STAGES, 4);
    assert_neutral(&x, WARPS, 3);
    assert_unchanged(&x, MAXNREG, 6);
    /* registers limit: smaller tiles, and caps below the 168 registers used */
    b = label("low-occupancy", 1, "occupancy_limiter 1, registers 168");
    x = prior_of(*state, &b, 1);
    assert_down(&x, BLOCK_N, 4);
    assert_neutral(&x, STAGES, 4);
    assert_float_equal(w(&x, MAXNREG, 0), 0, 0);
    for (uint32_t l = 1; l <= 3; l++) /* 64, 96, 128 */
        assert_true(w(&x, MAXNREG, l) > 0);
    assert_float_equal(w(&x, MAXNREG, 4), 0, 0);
    /* blocks per SM limit (one-warp blocks): more warps, tiles untouched */
    b = label("low-occupancy", 1, "occupancy_limiter 4, num_warps 1");
    x = prior_of(*state, &b, 1);
    assert_up(&x, WARPS, 3);
    assert_neutral(&x, BLOCK_M, 4);
}

static void test_prior_tail_effect(void **state)
{
    tforge_bottleneck b = label("tail-effect", 0.6, "waves 1.1, last_wave_fill 0.1");
    weights x = prior_of(*state, &b, 1);
    assert_float_equal(w(&x, PERSISTENT, 0), 0, 0);
    assert_true(w(&x, PERSISTENT, 1) > 0 && w(&x, PERSISTENT, 2) > 0);
    assert_down(&x, BLOCK_M, 4);
    assert_unchanged(&x, SPLITK, 4); /* a whole wave: more programs would not fill more SMs */
    /* a grid short of one wave: persistent programs would not help, splitting K would */
    b = label("tail-effect", 0.6, "waves 0.004, grid_blocks 8");
    x = prior_of(*state, &b, 1);
    assert_unchanged(&x, PERSISTENT, 3);
    assert_down(&x, BLOCK_N, 4);
    assert_float_equal(w(&x, SPLITK, 0), 0, 0);
    for (uint32_t l = 1; l < 4; l++)
        assert_true(w(&x, SPLITK, l) > 0);
}

static void test_prior_memory_bound(void **state)
{
    tforge_bottleneck b = label("memory-bound", 0.9, "dram_pct 88.4, sm_pct 17.9");
    weights x = prior_of(*state, &b, 1);
    assert_float_equal(w(&x, EVICT, 0), 0, 0);
    assert_true(w(&x, EVICT, 1) > 0 && w(&x, EVICT, 2) > 0);
    assert_true(w(&x, TMA, 1) > w(&x, TMA, 0));
    assert_unchanged(&x, MASKSPLIT, 2); /* the same bytes either way */
    assert_up(&x, BLOCK_N, 4);     /* contiguous */
    assert_neutral(&x, BLOCK_M, 4); /* not */
    /* stages hide latency; a memory-bound kernel keeps the DRAM busy already */
    assert_neutral(&x, STAGES, 4);
    assert_float_equal(w(&x, LOOP_STAGES, 1), 0, 0);
    assert_neutral(&x, WARPS, 3);
    /* a GEMM's intensity (above the ridge, 206) while memory-bound: re-reads, every tile up */
    b = label("memory-bound", 0.8, "dram_pct 21.5, l2_pct 80.4, sm_pct 43.9, intensity 1365");
    x = prior_of(*state, &b, 1);
    assert_up(&x, BLOCK_M, 4);
    assert_up(&x, BLOCK_N, 4);
    b = label("memory-bound", 0.8, "dram_pct 88, l2_pct 80, sm_pct 40, intensity 0.25");
    x = prior_of(*state, &b, 1);
    assert_neutral(&x, BLOCK_M, 4);
}

static void test_prior_latency_compute_launch_uncoalesced(void **state)
{
    tforge_bottleneck b = label("latency-bound", 0.8, "stall_long_scoreboard 0.61");
    weights x = prior_of(*state, &b, 1);
    assert_up(&x, STAGES, 4);
    assert_true(w(&x, LOOP_STAGES, 1) > 0);
    assert_neutral(&x, BLOCK_M, 4);
    assert_true(w(&x, MASKSPLIT, 1) > 0); /* fewer instructions between the waits */
    assert_float_equal(w(&x, MASKSPLIT, 0), 0, 0);

    b = label("compute-bound", 0.9, "sm_pct 84.2");
    x = prior_of(*state, &b, 1);
    assert_up(&x, BLOCK_M, 4);
    assert_up(&x, BLOCK_N, 4);
    assert_true(w(&x, WARPS, 2) > 0); /* num_warps 8 */
    assert_float_equal(w(&x, WARPS, 0), 0, 0);
    assert_true(w(&x, PRECISION, 1) > 0); /* the dot's precision unchanged */
    assert_float_equal(w(&x, PRECISION, 0), 0, 0);
    assert_float_equal(w(&x, PRECISION, 2), 0, 0);
    assert_unchanged(&x, EVICT, 3);
    assert_unchanged(&x, MASKSPLIT, 2); /* a GEMM's split K loop ran slower */

    b = label("launch-bound", 0.7, "time_ms 0.0035");
    x = prior_of(*state, &b, 1);
    assert_up(&x, BLOCK_M, 4);
    assert_true(w(&x, PERSISTENT, 1) > 0);

    b = label("uncoalesced", 0.9, "l2_sectors_per_request 31.5");
    x = prior_of(*state, &b, 1);
    assert_true(w(&x, TMA, 1) > 0);
    assert_neutral(&x, BLOCK_M, 4);
    assert_neutral(&x, STAGES, 4);
}

/* Confidence scales the weights; stacked labels stay within max_weight; unknown labels and
 * labels of no confidence weigh nothing. */
static void test_prior_scale_and_cap(void **state)
{
    fixture *f = *state;
    tforge_bottleneck strong = label("compute-bound", 1, "sm_pct 90");
    tforge_bottleneck weak = label("compute-bound", 0.5, "sm_pct 70");
    weights a = prior_of(f, &strong, 1), b = prior_of(f, &weak, 1);
    assert_float_equal(w(&b, BLOCK_M, 3), w(&a, BLOCK_M, 3) / 2, 1e-12);
    tforge_bottleneck many[] = {strong, strong, strong, label("launch-bound", 1, "time_ms 0.001")};
    a = prior_of(f, many, 4);
    for (uint32_t i = 0; i < a.total; i++)
        assert_true(fabs(a.w[i]) <= 2);
    assert_float_equal(w(&a, BLOCK_M, 3), 2, 0);

    tforge_bottleneck odd[] = {label("cache-thrash", 1, "l2_pct 99"),
                               label("memory-bound", 0, "dram_pct 99")};
    a = prior_of(f, odd, 2);
    for (uint32_t i = 0; i < a.total; i++)
        assert_float_equal(a.w[i], 0, 0);

    double out[64];
    assert_int_equal(heuristic()->prior(f->state, &strong, 1, at, out, 5), TFORGE_EINPUT);
    assert_non_null(strstr(host_message, "levels"));

    /* max_weight=1 caps lower */
    const char *keys[] = {"max_weight"}, *values[] = {"1"};
    void *capped = open_heuristic(&f->space, 1, keys, values);
    assert_int_equal(heuristic()->prior(capped, many, 4, at, out, a.total), 0);
    assert_float_equal(out[a.offset[BLOCK_M] + 3], 1, 0);
    heuristic()->destroy(capped);
}

/* A host's view of ABI 1.2 says no owners and no effects: the prior then moves nothing, rather
 * than guessing from the names (the same space, each dimension named as before). */
static void test_prior_without_effects(void **state)
{
    fixture *f = *state;
    fixture_space old = f->space;
    old.view.struct_size = (uint32_t)offsetof(tforge_space_view, owner);
    old.view.owner = NULL;
    old.view.effect = NULL;
    void *h = open_heuristic(&old, 0, NULL, NULL);
    tforge_bottleneck b = label("compute-bound", 1, "sm_pct 90");
    double out[64];
    uint32_t total = prior_of(f, &b, 1).total;
    assert_int_equal(heuristic()->prior(h, &b, 1, at, out, total), 0);
    for (uint32_t i = 0; i < total; i++)
        assert_float_equal(out[i], 0, 0);
    heuristic()->destroy(h);
}

static void test_options(void **state)
{
    fixture *f = *state;
    tforge_heuristic_input input = {sizeof input, &f->space.view, NULL};
    const char *keys[] = {"threshold"}, *values[] = {"3"};
    tforge_options_view options = {sizeof options, 1, keys, values};
    void *s = NULL;
    assert_int_equal(heuristic()->create(&s, &host, &options, &input), TFORGE_EINPUT);
    assert_non_null(strstr(host_message, "unknown option 'threshold'"));
    const char *ridge[] = {"ridge"}, *bad[] = {"steep"};
    options.keys = ridge;
    options.values = bad;
    assert_int_equal(heuristic()->create(&s, &host, &options, &input), TFORGE_EINPUT);
    assert_non_null(strstr(host_message, "ridge=steep"));

    /* The ridge decides the roofline rule: intensity 50 with 40% of DRAM and 20% of the fp16
     * peak is memory-bound under the H200's ridge (206), compute-bound under a ridge of 10. */
    tforge_profile p;
    tforge_profile_init(&p);
    tforge_profile_set(&p, "intensity", 50);
    tforge_profile_set(&p, "dram_share", 0.4);
    tforge_profile_set(&p, "flops_share", 0.35);
    assert_labels(classify(f->state, &p), "memory-bound", NULL);
    const char *low[] = {"10"};
    options.values = low;
    assert_int_equal(heuristic()->create(&s, &host, &options, &input), 0);
    assert_labels(classify(s, &p), "compute-bound", NULL);
    heuristic()->destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_memory_bound_copy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compute_bound_matmul, setup, teardown),
        cmocka_unit_test_setup_teardown(test_spilling_layer_norm, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tail_effect, setup, teardown),
        cmocka_unit_test_setup_teardown(test_latency_bound, setup, teardown),
        cmocka_unit_test_setup_teardown(test_launch_bound_and_small_grid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_uncoalesced_and_conflicts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_absent_metrics, setup, teardown),
        cmocka_unit_test_setup_teardown(test_prior_spills, setup, teardown),
        cmocka_unit_test_setup_teardown(test_prior_low_occupancy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_prior_tail_effect, setup, teardown),
        cmocka_unit_test_setup_teardown(test_prior_memory_bound, setup, teardown),
        cmocka_unit_test_setup_teardown(test_prior_latency_compute_launch_uncoalesced, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_prior_scale_and_cap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_prior_without_effects, setup, teardown),
        cmocka_unit_test_setup_teardown(test_options, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
