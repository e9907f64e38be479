/* The plugin ABI's layout is a promise to every plugin ever built: these asserts pin it on the
 * LP64 platforms we ship for, so a change that moves a field fails to compile. */
#include "tforge/plugin/costmodel.h"
#include "tforge/plugin/heuristic.h"
#include "tforge/plugin/llm.h"
#include "tforge/plugin/plugin.h"
#include "tforge/plugin/profiler.h"
#include "tforge/plugin/strategy.h"
#include "tforge/plugin/transform.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#if UINTPTR_MAX == UINT64_MAX
_Static_assert(sizeof(tforge_abi_version) == 12, "tforge_abi_version size");
_Static_assert(offsetof(tforge_plugin_module, abi_version) == 0, "ABI version first");
_Static_assert(offsetof(tforge_plugin_module, name) == 16, "module.name");
_Static_assert(offsetof(tforge_plugin_module, init) == 24, "module.init");
_Static_assert(offsetof(tforge_plugin_module, deinit) == 32, "module.deinit");
_Static_assert(offsetof(tforge_plugin_module, count) == 40, "module.count");
_Static_assert(offsetof(tforge_plugin_module, get) == 48, "module.get");
_Static_assert(sizeof(tforge_plugin_module) == 56, "module size");

_Static_assert(offsetof(tforge_host, struct_size) == 12, "host.struct_size");
_Static_assert(offsetof(tforge_host, host_data) == 16, "host.host_data");
_Static_assert(offsetof(tforge_host, log) == 24, "host.log");
_Static_assert(offsetof(tforge_host, error) == 32, "host.error");
_Static_assert(offsetof(tforge_host, alloc) == 40, "host.alloc");
_Static_assert(offsetof(tforge_host, free) == 48, "host.free");
_Static_assert(sizeof(tforge_host) == 56, "host size");

_Static_assert(offsetof(tforge_plugin_descriptor, reserved) == 0, "descriptor.reserved");
_Static_assert(offsetof(tforge_plugin_descriptor, id) == 8, "descriptor.id");
_Static_assert(offsetof(tforge_plugin_descriptor, version) == 16, "descriptor.version");
_Static_assert(offsetof(tforge_plugin_descriptor, description) == 24, "descriptor.description");
_Static_assert(offsetof(tforge_plugin_descriptor, interface_id) == 32, "descriptor.interface_id");
_Static_assert(offsetof(tforge_plugin_descriptor, interface) == 40, "descriptor.interface");
/* since 1.1, at the end */
_Static_assert(offsetof(tforge_plugin_descriptor, options) == 48, "descriptor.options");
_Static_assert(offsetof(tforge_plugin_descriptor, n_options) == 56, "descriptor.n_options");
_Static_assert(offsetof(tforge_plugin_descriptor, get_interface) == 64,
               "descriptor.get_interface");
_Static_assert(sizeof(tforge_plugin_descriptor) == 72, "descriptor size");

_Static_assert(offsetof(tforge_option_spec, type) == 8, "option.type");
_Static_assert(offsetof(tforge_option_spec, default_value) == 16, "option.default_value");
_Static_assert(offsetof(tforge_option_spec, min) == 24, "option.min");
_Static_assert(offsetof(tforge_option_spec, choices) == 40, "option.choices");
_Static_assert(offsetof(tforge_option_spec, doc) == 48, "option.doc");
_Static_assert(sizeof(tforge_option_spec) == 56, "option size");

_Static_assert(offsetof(tforge_measurement, value) == 8, "measurement.value");
_Static_assert(offsetof(tforge_measurement, wall_ms) == 48, "measurement.wall_ms");
_Static_assert(offsetof(tforge_measurement, n_metrics) == 56, "measurement.n_metrics");
_Static_assert(offsetof(tforge_measurement, metrics) == 64, "measurement.metrics");
_Static_assert(offsetof(tforge_measurement, message) == 64 + 16 * 40, "measurement.message");
_Static_assert(sizeof(tforge_measurement) == 64 + 16 * 40 + 256, "measurement size");

_Static_assert(offsetof(tforge_space_view, context) == 8, "space_view.context");
_Static_assert(offsetof(tforge_space_view, dims) == 16, "space_view.dims");
_Static_assert(offsetof(tforge_space_view, sample) == 88, "space_view.sample");
_Static_assert(offsetof(tforge_space_view, owner) == 96, "space_view.owner (since 1.3)");
_Static_assert(offsetof(tforge_space_view, effect) == 104, "space_view.effect (since 1.3)");
_Static_assert(sizeof(tforge_space_view) == 112, "space_view size");

_Static_assert(offsetof(tforge_transform_param, kind) == 8, "transform_param.kind");
_Static_assert(offsetof(tforge_transform_param, role) == 12, "transform_param.role");
_Static_assert(offsetof(tforge_transform_param, n_values) == 16, "transform_param.n_values");
_Static_assert(offsetof(tforge_transform_param, values) == 24, "transform_param.values");
_Static_assert(offsetof(tforge_transform_param, n_constraints) == 32,
               "transform_param.n_constraints");
_Static_assert(offsetof(tforge_transform_param, constraints) == 40,
               "transform_param.constraints");
_Static_assert(offsetof(tforge_transform_param, effect) == 48,
               "transform_param.effect (since 1.3)");
_Static_assert(sizeof(tforge_transform_param) == 56, "transform_param size");

_Static_assert(offsetof(tforge_observation, status) == 8, "observation.status");
_Static_assert(offsetof(tforge_observation, value) == 16, "observation.value");
_Static_assert(offsetof(tforge_observation, spread) == 24, "observation.spread");
_Static_assert(sizeof(tforge_observation) == 32, "observation size");

/* since 1.3: the options view every kind's create takes, and each kind's own input */
_Static_assert(offsetof(tforge_options_view, count) == 4, "options.count");
_Static_assert(offsetof(tforge_options_view, keys) == 8, "options.keys");
_Static_assert(offsetof(tforge_options_view, values) == 16, "options.values");
_Static_assert(sizeof(tforge_options_view) == 24, "options size");

_Static_assert(offsetof(tforge_strategy_input, space) == 8, "strategy_input.space");
_Static_assert(offsetof(tforge_strategy_input, seed) == 16, "strategy_input.seed");
_Static_assert(offsetof(tforge_strategy_input, budget) == 24, "strategy_input.budget");
_Static_assert(offsetof(tforge_strategy_input, history) == 32, "strategy_input.history");
_Static_assert(sizeof(tforge_strategy_input) == 40, "strategy_input size");

_Static_assert(offsetof(tforge_transform_input, kernel) == 8, "transform_input.kernel");
_Static_assert(offsetof(tforge_transform_input, source) == 16, "transform_input.source");
_Static_assert(offsetof(tforge_transform_input, source_size) == 24, "transform_input.source_size");
_Static_assert(offsetof(tforge_transform_input, n_space_params) == 28,
               "transform_input.n_space_params");
_Static_assert(offsetof(tforge_transform_input, space_params) == 32,
               "transform_input.space_params");
_Static_assert(sizeof(tforge_transform_input) == 40, "transform_input size");

_Static_assert(offsetof(tforge_heuristic_input, space) == 8, "heuristic_input.space");
_Static_assert(offsetof(tforge_heuristic_input, families) == 16, "heuristic_input.families");
_Static_assert(sizeof(tforge_heuristic_input) == 24, "heuristic_input size");

_Static_assert(offsetof(tforge_profiler_input, device) == 4, "profiler_input.device");
_Static_assert(offsetof(tforge_profiler_input, n_metrics) == 8, "profiler_input.n_metrics");
_Static_assert(offsetof(tforge_profiler_input, metrics) == 16, "profiler_input.metrics");
_Static_assert(sizeof(tforge_profiler_input) == 24, "profiler_input size");

/* every kind's create at the same place, after struct_size */
_Static_assert(offsetof(tforge_transform_interface, create) == 8, "transform.create");
_Static_assert(offsetof(tforge_heuristic_interface, create) == 8, "heuristic.create");
_Static_assert(offsetof(tforge_profiler_interface, create) == 8, "profiler.create");
_Static_assert(offsetof(tforge_costmodel_interface, create) == 8, "costmodel.create");
_Static_assert(offsetof(tforge_llm_interface, create) == 8, "llm.create");

/* the frozen costmodel/1 and llm/1 layouts */
_Static_assert(offsetof(tforge_costmodel_interface, predict) == 40, "costmodel.predict");
_Static_assert(sizeof(tforge_costmodel_interface) == 56, "costmodel size");
_Static_assert(offsetof(tforge_costmodel_candidate, device) == 48, "costmodel_candidate.device");
_Static_assert(sizeof(tforge_costmodel_prediction) == 24, "costmodel_prediction size");
_Static_assert(offsetof(tforge_llm_interface, complete) == 16, "llm.complete");
_Static_assert(sizeof(tforge_llm_interface) == 40, "llm size");
_Static_assert(offsetof(tforge_llm_request, seed) == 32, "llm_request.seed");
_Static_assert(sizeof(tforge_llm_answer) == 40, "llm_answer size");

_Static_assert(offsetof(tforge_strategy_interface, create) == 8, "strategy.create");
_Static_assert(offsetof(tforge_strategy_interface, ask) == 16, "strategy.ask");
_Static_assert(offsetof(tforge_strategy_interface, tell) == 24, "strategy.tell");
_Static_assert(offsetof(tforge_strategy_interface, destroy) == 32, "strategy.destroy");
_Static_assert(offsetof(tforge_strategy_interface, set_prior) == 40, "strategy.set_prior");
_Static_assert(offsetof(tforge_strategy_interface, set_level_prior) == 48,
               "strategy.set_level_prior (since 1.2)");
_Static_assert(sizeof(tforge_strategy_interface) == 56, "strategy size");
#endif

/* The enumerations are part of the ABI too: their numbers travel in uint32_t fields. */
static void statuses_keep_their_numbers(void **state)
{
    (void)state;
    assert_int_equal(TFORGE_STATUS_OK, 0);
    assert_int_equal(TFORGE_STATUS_CONSTRAINT, 5);
    assert_int_equal(TFORGE_PLUGIN_ABI_MAJOR, 1);
    assert_int_equal(TFORGE_PLUGIN_ENOMEM, -2);
    assert_int_equal(TFORGE_PLUGIN_EINPUT, -3);
    assert_int_equal(TFORGE_PLUGIN_ABI_MINOR, 3);
}

/* Effects travel in uint32_t fields too; a zeroed field (a plugin older than 1.3) is unknown,
 * and each has its one spelling. */
static void effects_keep_their_numbers(void **state)
{
    (void)state;
    static const char *const names[] = TFORGE_EFFECT_NAMES;
    assert_int_equal(sizeof names / sizeof *names, TFORGE_EFFECT_COUNT);
    assert_int_equal(TFORGE_EFFECT_UNKNOWN, 0);
    assert_string_equal(names[TFORGE_EFFECT_UNKNOWN], "unknown");
    assert_int_equal(TFORGE_EFFECT_TILE, 1);
    assert_int_equal(TFORGE_EFFECT_STAGES, 4);
    assert_int_equal(TFORGE_EFFECT_PIPELINE_STAGES, 5);
    assert_string_equal(names[TFORGE_EFFECT_PIPELINE_STAGES], "pipeline-stages");
    assert_int_equal(TFORGE_EFFECT_FOLD, 18);
    assert_string_equal(names[TFORGE_EFFECT_FOLD], "fold");
}

/* A kind is its interface id: each revision names one layout of the table and of the create
 * that comes with it, so a change of either is a new revision here. */
static void interface_ids_name_their_layouts(void **state)
{
    (void)state;
    assert_int_equal(TFORGE_PLUGIN_ABI_MINOR, 3);
    assert_string_equal(TFORGE_STRATEGY_INTERFACE_ID, "tforge.strategy/2");
    assert_string_equal(TFORGE_TRANSFORM_INTERFACE_ID, "tforge.transform/7");
    assert_string_equal(TFORGE_HEURISTIC_INTERFACE_ID, "tforge.heuristic/2");
    assert_string_equal(TFORGE_PROFILER_INTERFACE_ID, "tforge.profiler/2");
    assert_string_equal(TFORGE_COSTMODEL_INTERFACE_ID, "tforge.costmodel/1");
    assert_string_equal(TFORGE_LLM_INTERFACE_ID, "tforge.llm/1");
}

/* The generator is part of the ABI's promise that a seed means the same proposals everywhere. */
static void rng_sequence_is_pinned(void **state)
{
    (void)state;
    tforge_rng rng;
    tforge_rng_seed(&rng, 42);
    uint64_t first = tforge_rng_next(&rng);
    tforge_rng_seed(&rng, 42);
    assert_true(tforge_rng_next(&rng) == first);
    /* xoshiro256** seeded by splitmix64(42), computed by an independent implementation */
    assert_true(first == UINT64_C(0x15780b2e0c2ec716));
    assert_true(tforge_rng_next(&rng) == UINT64_C(0x6104d9866d113a7e));
    assert_true(tforge_rng_next(&rng) == UINT64_C(0xae17533239e499a1));
    for (int i = 0; i < 1000; i++) {
        double u = tforge_rng_uniform(&rng);
        assert_true(u >= 0.0 && u < 1.0);
        assert_true(tforge_rng_below(&rng, 7) < 7);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(statuses_keep_their_numbers),
        cmocka_unit_test(interface_ids_name_their_layouts),
        cmocka_unit_test(rng_sequence_is_pinned),
        cmocka_unit_test(effects_keep_their_numbers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
