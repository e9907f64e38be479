/* The cupti profiler as the engine loads it (the built module), without a GPU: its options are
 * checked, refuse=1 is a refusal with its reason, and the Host API plans both sets for the
 * H200's chip (GH100) with the pass counts it asks for. */
#include "registry.h"
#include "tforge/error.h"
#include "tforge/plugin/profiler.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

typedef struct fixture {
    tforge_registry *registry;
    const tforge_profiler_interface *profiler;
} fixture;

static int setup(void **state)
{
    static fixture f;
    assert_int_equal(tforge_registry_new(&f.registry), 0);
    assert_int_equal(tforge_registry_load_file(f.registry, CUPTI_PLUGIN), 0);
    const tforge_plugin_record *r =
        tforge_registry_find(f.registry, TFORGE_PROFILER_INTERFACE_ID, "cupti");
    assert_non_null(r);
    f.profiler = tforge_plugin_interface(r, TFORGE_PROFILER_INTERFACE_ID);
    assert_non_null(f.profiler);
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    tforge_registry_free(((fixture *)*state)->registry);
    return 0;
}

static int create(const fixture *f, void **profiler, const char *set, const char *refuse)
{
    const char *keys[] = {"chip", "set", "refuse"}, *values[] = {"GH100", set, refuse};
    tforge_options_view options = {sizeof options, 3, keys, values};
    tforge_profiler_input input = {sizeof input, 0, 0, NULL};
    return f->profiler->create(profiler, tforge_registry_host(), &options, &input);
}

static void sets_are_planned_for_gh100(void **state)
{
    const fixture *f = *state;
    void *core = NULL, *full = NULL;
    assert_int_equal(create(f, &core, "core", "0"), 0);
    assert_int_equal(create(f, &full, "full", "0"), 0);
    uint32_t core_passes = f->profiler->passes(core), full_passes = f->profiler->passes(full);
    /* what CUPTI 13.0's Host API answers for GH100 (README): sm__throughput alone takes 8;
     * then the timing pass */
    assert_int_equal(core_passes, CUPTI_CORE_PASSES);
    assert_true(full_passes > core_passes);
    /* planned only: no device to profile */
    assert_true(f->profiler->begin(core, 0) < 0);
    assert_non_null(strstr(tforge_error_last()->message, "plan only"));
    f->profiler->destroy(core);
    f->profiler->destroy(full);
}

static void refuse_option_is_a_refusal_with_its_reason(void **state)
{
    const fixture *f = *state;
    void *p = (void *)1;
    assert_int_equal(create(f, &p, "core", "1"), TFORGE_PROFILER_REFUSED);
    assert_null(p);
    assert_non_null(strstr(tforge_error_last()->message, "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"));
}

static void bad_options_are_named(void **state)
{
    const fixture *f = *state;
    void *p = NULL;
    assert_true(create(f, &p, "most", "0") < 0);
    assert_non_null(strstr(tforge_error_last()->message, "option set: expected core or full"));
    const char *keys[] = {"chip", "sets"}, *values[] = {"GH100", "core"};
    tforge_options_view options = {sizeof options, 2, keys, values};
    tforge_profiler_input input = {sizeof input, 0, 0, NULL};
    assert_true(f->profiler->create(&p, tforge_registry_host(), &options, &input) < 0);
    assert_non_null(strstr(tforge_error_last()->message, "unknown option 'sets'"));
    const char *chip[] = {"chip"}, *unknown[] = {"XX999"};
    options = (tforge_options_view){sizeof options, 1, chip, unknown};
    assert_true(f->profiler->create(&p, tforge_registry_host(), &options, &input) < 0);
    assert_non_null(strstr(tforge_error_last()->message, "chip 'XX999'"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sets_are_planned_for_gh100),
        cmocka_unit_test(refuse_option_is_a_refusal_with_its_reason),
        cmocka_unit_test(bad_options_are_named),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
