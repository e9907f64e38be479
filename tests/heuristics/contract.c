/* The contract between the transforms and the heuristic: the heuristic's space is built from the
 * real transform modules, loaded from the plugin folder as the engine loads them, over the real
 * analyses of tests/golden/analyze/ and knobs described as the task describes them; nothing here
 * names a dimension the way the heuristic would have to guess it. A latency-bound profile must
 * then move every loop's pipeline stages (pipeline's `loop<N>_stages`) up. */
#include "analysis.h"
#include "knob.h"
#include "profile.h"
#include "registry.h"
#include "transforms.h"
#include "tforge/error.h"
#include "tforge/plugin/heuristic.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static char *read_text(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)n + 1);
    assert_non_null(text);
    assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    text[n] = '\0';
    if (size)
        *size = (size_t)n;
    return text;
}

/* One kernel's space as a tune builds it: the task's knobs, then every transform that applies. */
typedef struct kernel_space {
    tforge_ir_file *ir;
    char *source;
    tforge_transforms *transforms;
    tforge_space *space;
} kernel_space;

typedef struct knob {
    const char *name;
    double values[4];
    size_t n;
} knob;

/* `analysis`: a document of `tforge analyze --json`, relative to the source tree. */
static kernel_space open_kernel(const tforge_registry *registry, const char *analysis,
                                const knob *knobs, size_t n_knobs)
{
    kernel_space k = {0};
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", SOURCE_DIR, analysis);
    char *json = read_text(path, NULL);
    assert_int_equal(tforge_ir_parse(&k.ir, json, path), 0);
    free(json);
    snprintf(path, sizeof path, "%s/%s", SOURCE_DIR, k.ir->path);
    size_t size = 0;
    k.source = read_text(path, &size);
    const char *names[8];
    assert_true(n_knobs <= 8);
    assert_int_equal(tforge_space_new(&k.space), 0);
    for (size_t i = 0; i < n_knobs; i++) {
        names[i] = knobs[i].name;
        assert_int_equal(tforge_space_add_values(k.space, knobs[i].name, knobs[i].values,
                                                 knobs[i].n),
                         0);
        assert_int_equal(tforge_knob_describe(k.space, (uint32_t)i), 0);
    }
    assert_int_equal(tforge_transforms_open(&k.transforms, registry, NULL, &k.ir->kernels[0],
                                            k.source, size, names, n_knobs, NULL),
                     0);
    assert_int_equal(tforge_transforms_add_to_space(k.transforms, k.space), 0);
    tforge_space_build_options options = TFORGE_SPACE_BUILD_OPTIONS_INIT;
    options.enumerate_limit = 1000000; /* as the task builds a space with transforms */
    assert_int_equal(tforge_space_build(k.space, &options), 0);
    return k;
}

static void close_kernel(kernel_space *k)
{
    tforge_space_free(k->space);
    tforge_transforms_free(k->transforms);
    free(k->source);
    tforge_ir_free(k->ir);
}

static const knob gemm_knobs[] = {{"BLOCK_SIZE_M", {32, 64, 128}, 3},
                                  {"BLOCK_SIZE_N", {32, 64, 128}, 3},
                                  {"BLOCK_SIZE_K", {32, 64}, 2},
                                  {"GROUP_SIZE_M", {1, 8}, 2},
                                  {"num_warps", {4, 8}, 2},
                                  {"num_stages", {3, 4}, 2}};

#define GEMM "tests/golden/analyze/gemm_autotune.json"

static tforge_registry *real_plugins(void)
{
    tforge_registry *registry = NULL;
    assert_int_equal(tforge_registry_new(&registry), 0);
    assert_int_equal(tforge_registry_load_dir(registry, PLUGIN_DIR), 0);
    return registry;
}

static int setup(void **state)
{
    *state = real_plugins();
    return 0;
}

static int teardown(void **state)
{
    tforge_registry_free(*state);
    return 0;
}

/* The GEMM's K loop, rewritten by pipeline: its stages say so, and a latency-bound profile
 * (long-scoreboard stalls, neither unit busy) makes the real heuristic favour more stages on it,
 * as on the launch's num_stages. */
static void latency_bound_moves_the_loops_stages_up(void **state)
{
    tforge_registry *registry = *state;
    kernel_space k = open_kernel(registry, GEMM, gemm_knobs, 6);
    uint32_t dims = tforge_space_dims(k.space), loops = 0;
    int stages = tforge_space_find(k.space, "num_stages");
    assert_true(stages >= 0);
    assert_int_equal(tforge_space_effect(k.space, (uint32_t)stages), TFORGE_EFFECT_STAGES);
    for (uint32_t d = 0; d < dims; d++)
        if (tforge_space_effect(k.space, d) == TFORGE_EFFECT_PIPELINE_STAGES) {
            assert_string_equal(tforge_space_owner(k.space, d), "pipeline");
            assert_int_equal(tforge_space_role(k.space, d), TFORGE_DIM_REWRITE);
            loops++;
        }
    assert_int_equal(tforge_space_find(k.space, "loop0_stages") >= 0, 1);
    assert_true(loops >= 1);

    const tforge_plugin_record *record =
        tforge_registry_find(registry, TFORGE_HEURISTIC_INTERFACE_ID, "bottleneck");
    assert_non_null(record);
    const tforge_heuristic_interface *h =
        tforge_plugin_interface(record, TFORGE_HEURISTIC_INTERFACE_ID);
    assert_non_null(h);
    tforge_space_view view = tforge_space_get_view(k.space);
    const char **families = calloc(dims, sizeof *families); /* as the host lends them (forge.c) */
    assert_non_null(families);
    for (uint32_t d = 0; d < dims; d++)
        families[d] =
            tforge_space_role(k.space, d) == TFORGE_DIM_KNOB ? "" : tforge_space_owner(k.space, d);
    tforge_heuristic_input input = {sizeof input, &view, families};
    tforge_options_view options = {sizeof options, 0, NULL, NULL};
    void *heuristic = NULL;
    assert_int_equal(h->create(&heuristic, tforge_registry_host(), &options, &input), 0);

    char path[1024];
    snprintf(path, sizeof path, "%s/tests/heuristics/latency_counters.json", SOURCE_DIR);
    char *json = read_text(path, NULL);
    tforge_profile profile;
    assert_int_equal(tforge_profile_from_json(&profile, json, path), 0);
    free(json);
    const tforge_bottleneck *labels = NULL;
    uint32_t n_labels = 0;
    assert_int_equal(h->classify(heuristic, &profile, &labels, &n_labels), 0);
    assert_true(n_labels >= 1);
    assert_string_equal(labels[0].label, "latency-bound");

    /* the incumbent: the baseline's knobs (num_stages 3), every transform at level 0 */
    tforge_level *at = calloc(dims, sizeof *at);
    uint64_t total = 0;
    for (uint32_t d = 0; d < dims; d++)
        total += tforge_space_levels(k.space, d);
    double *w = calloc(total, sizeof *w);
    assert_true(at && w);
    assert_int_equal(h->prior(heuristic, labels, 1, at, w, total), 0);
    uint64_t offset = 0;
    for (uint32_t d = 0; d < dims; offset += tforge_space_levels(k.space, d), d++) {
        tforge_dim_effect e = tforge_space_effect(k.space, d);
        if (e != TFORGE_EFFECT_PIPELINE_STAGES && e != TFORGE_EFFECT_STAGES)
            continue;
        for (uint32_t l = 1; l < tforge_space_levels(k.space, d); l++)
            if (!(w[offset + l] > w[offset]))
                fail_msg("%s: level %u weighs %g, level 0 %g: more stages are not favoured",
                         tforge_space_name(k.space, d), l, w[offset + l], w[offset]);
    }
    free(w);
    free(at);
    h->destroy(heuristic);
    free(families);
    close_kernel(&k);
}

/* Every parameter of every shipped transform says what it changes: over analysed kernels where
 * each transform applies (tests/golden/analyze/, tests/fixtures/analysis/), each declares a
 * known effect for each of its parameters, and the space carries it with the transform as the
 * owner. */
static void every_transform_parameter_declares_its_effect(void **state)
{
    tforge_registry *registry = *state;
    static const char *const analyses[] = {
        GEMM, "tests/golden/analyze/attention_causal.json",
        "tests/golden/analyze/matvec_heuristics.json", "tests/golden/analyze/rms_norm_liger.json",
        "tests/fixtures/analysis/softmax.json", "tests/fixtures/analysis/gemm_grid2d.json",
        "tests/fixtures/analysis/matmul.json"};
    static const char *const effect_names[] = TFORGE_EFFECT_NAMES;
    const char *seen[64];
    size_t n_seen = 0;
    for (size_t a = 0; a < sizeof analyses / sizeof *analyses; a++) {
        kernel_space k = open_kernel(registry, analyses[a], NULL, 0);
        for (size_t i = 0; i < tforge_transforms_count(k.transforms); i++) {
            const char *id = tforge_transforms_id(k.transforms, i);
            for (uint32_t j = 0; j < tforge_transforms_n_params(k.transforms, i); j++) {
                const tforge_transform_param *p = tforge_transforms_param(k.transforms, i, j);
                int d = tforge_space_find(k.space, p->name);
                assert_true(d >= 0);
                if (p->effect == TFORGE_EFFECT_UNKNOWN || p->effect >= TFORGE_EFFECT_COUNT)
                    fail_msg("%s: transform %s's parameter %s declares no known effect",
                             analyses[a], id, p->name);
                assert_int_equal(tforge_space_effect(k.space, (uint32_t)d), p->effect);
                assert_string_equal(tforge_space_owner(k.space, (uint32_t)d), id);
                assert_string_not_equal(effect_names[p->effect], "unknown");
            }
            if (n_seen < 64)
                seen[n_seen++] = id; /* the module's, alive as long as the registry */
        }
        close_kernel(&k);
    }
    /* and every transform module in the plugin folder was among them */
    for (size_t r = 0; r < tforge_registry_count(registry); r++) {
        const tforge_plugin_record *record = tforge_registry_at(registry, r);
        if (!tforge_plugin_is_kind(record, TFORGE_TRANSFORM_INTERFACE_ID))
            continue;
        size_t s = 0;
        while (s < n_seen && strcmp(seen[s], record->descriptor->id) != 0)
            s++;
        if (s == n_seen)
            fail_msg("transform %s applied to none of the analysed kernels: its parameters' "
                     "effects are not checked", record->descriptor->id);
    }
}

/* A module built before ABI 1.3 has no `effect` in its parameters: the host never reads those
 * bytes (the fixture leaves a stray TMA there), the module loads, and its dimension's effect is
 * unknown. */
static void an_older_module_loads_with_effects_unknown(void **state)
{
    (void)state;
    tforge_registry *registry = NULL;
    assert_int_equal(tforge_registry_new(&registry), 0);
    assert_int_equal(tforge_registry_load_file(registry,
                                               FIXTURE_TRANSFORM_DIR "/fixture-clobber.so"),
                     0);
    const tforge_plugin_record *r = tforge_registry_find(registry, TFORGE_TRANSFORM_INTERFACE_ID,
                                                         "clobber");
    assert_non_null(r);
    assert_int_equal(r->abi_minor, 2);
    kernel_space k = open_kernel(registry, GEMM, NULL, 0);
    int d = tforge_space_find(k.space, "clobber");
    assert_true(d >= 0);
    assert_string_equal(tforge_space_owner(k.space, (uint32_t)d), "clobber");
    assert_int_equal(tforge_space_effect(k.space, (uint32_t)d), TFORGE_EFFECT_UNKNOWN);
    close_kernel(&k);
    tforge_registry_free(registry);
}

/* The task's knobs get theirs where they enter the space: tiles by Triton's naming (BLOCK_*,
 * *_BLOCK, TILE_*) or as power-of-two ordinals not named as counts (num_*, *GROUP*, *SPLIT*,
 * *STAGES*, *WARPS*), contiguous ones (ending in N or K, BLOCK_SIZE*), Triton's launch
 * options. */
static void knobs_are_described_where_they_are_made(void **state)
{
    (void)state;
    static const double pow2[] = {16, 32, 64}, other[] = {3, 5, 7};
    static const struct {
        const char *name;
        const double *values;
        tforge_dim_effect effect;
    } cases[] = {{"TILE_X", other, TFORGE_EFFECT_TILE},
                 {"CHUNK", pow2, TFORGE_EFFECT_TILE_CONTIGUOUS}, /* ends in K */
                 {"WIDTH", pow2, TFORGE_EFFECT_TILE},
                 {"SPLIT_K", pow2, TFORGE_EFFECT_UNKNOWN},
                 {"ROW_BLOCK", other, TFORGE_EFFECT_TILE_CONTIGUOUS},
                 {"STEP", other, TFORGE_EFFECT_UNKNOWN},
                 {"num_ctas", pow2, TFORGE_EFFECT_UNKNOWN},
                 {"BLOCK_M", pow2, TFORGE_EFFECT_TILE},
                 {"BLOCK_SIZE_M", pow2, TFORGE_EFFECT_TILE_CONTIGUOUS},
                 {"num_warps", pow2, TFORGE_EFFECT_WARPS},
                 {"num_stages", other, TFORGE_EFFECT_STAGES},
                 {"GROUP_M", pow2, TFORGE_EFFECT_SWIZZLE}};
    tforge_space *space = NULL;
    assert_int_equal(tforge_space_new(&space), 0);
    for (uint32_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        assert_int_equal(tforge_space_add_values(space, cases[i].name, cases[i].values, 3), 0);
        assert_int_equal(tforge_knob_describe(space, i), 0);
        assert_string_equal(tforge_space_owner(space, i), TFORGE_DIM_OWNER_KNOB);
        assert_int_equal(tforge_space_role(space, i), TFORGE_DIM_KNOB);
        if (tforge_space_effect(space, i) != cases[i].effect)
            fail_msg("%s: effect %d, expected %d", cases[i].name, tforge_space_effect(space, i),
                     cases[i].effect);
    }
    /* one level is no tile a prior could move */
    static const double one[] = {64};
    assert_int_equal(tforge_space_add_values(space, "BLOCK_K", one, 1), 0);
    uint32_t last = tforge_space_dims(space) - 1;
    assert_int_equal(tforge_knob_describe(space, last), 0);
    assert_int_equal(tforge_space_effect(space, last), TFORGE_EFFECT_UNKNOWN);
    tforge_space_free(space);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(latency_bound_moves_the_loops_stages_up, setup, teardown),
        cmocka_unit_test_setup_teardown(every_transform_parameter_declares_its_effect, setup,
                                        teardown),
        cmocka_unit_test(an_older_module_loads_with_effects_unknown),
        cmocka_unit_test(knobs_are_described_where_they_are_made),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
