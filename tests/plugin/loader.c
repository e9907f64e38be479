/* The loader admits good modules and refuses bad ones, naming the file and the reason, while
 * the others still load. The fixtures (tests/fixtures/plugins) have one defect each. */
#include "registry.h"
#include "tforge/error.h"
#include "tforge/log.h"
#include "tforge/plugin/strategy.h"
#include "tforge/plugin/transform.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

extern const tforge_plugin_module fixture_static;

static const char *find_refusal(const tforge_registry *registry, const char *file)
{
    for (size_t i = 0; i < tforge_registry_refusal_count(registry); i++) {
        const tforge_plugin_refusal *r = tforge_registry_refusal(registry, i);
        if (strstr(r->path, file))
            return r->reason;
    }
    return NULL;
}

static void folder_loads_good_and_refuses_each_defect(void **state)
{
    (void)state;
    tforge_registry *registry;
    assert_int_equal(tforge_registry_new(&registry), 0);
    assert_int_equal(tforge_registry_load_dir(registry, FIXTURE_PLUGIN_DIR), 0);

    /* a-good: its factories, looked up by kind (an interface id) and id */
    assert_int_equal(tforge_registry_count(registry), 3);
    const tforge_plugin_record *r =
        tforge_registry_find(registry, TFORGE_STRATEGY_INTERFACE_ID, "good");
    assert_non_null(r);
    assert_non_null(strstr(r->path, "a-good.so"));
    assert_string_equal(r->descriptor->version, "0.1.0");
    assert_string_equal(r->kind, "strategy");
    assert_null(tforge_registry_find(registry, TFORGE_TRANSFORM_INTERFACE_ID, "good"));
    assert_int_equal(tforge_error_last()->code, TFORGE_ENOTFOUND);
    assert_non_null(strstr(tforge_error_last()->message, "no transform plugin with id 'good'"));

    /* a factory of an older revision of its kind is found, and refused by name */
    assert_null(tforge_registry_find(registry, TFORGE_TRANSFORM_INTERFACE_ID, "good-transform"));
    assert_int_equal(tforge_error_last()->code, TFORGE_EINPUT);
    assert_non_null(strstr(tforge_error_last()->message,
                           "speaks tforge.transform/4, this tforge speaks tforge.transform/7"));
    assert_non_null(tforge_registry_find(registry, "tforge.transform/4", "good-transform"));

    /* a kind the registry has never heard of is a kind all the same */
    r = tforge_registry_find(registry, "test.widget/1", "good-widget");
    assert_non_null(r);
    assert_string_equal(r->kind, "test.widget");
    assert_true(tforge_plugin_is_kind(r, "test.widget/7"));
    assert_false(tforge_plugin_is_kind(r, "test.widgets/1"));
    assert_false(tforge_plugin_is_kind(r, TFORGE_STRATEGY_INTERFACE_ID));
    assert_null(tforge_registry_find(registry, "test.widget/1", "good"));

    assert_int_equal(tforge_registry_refusal_count(registry), 7);
    const char *why = find_refusal(registry, "b-abi2.so");
    assert_non_null(why);
    assert_non_null(strstr(why, "built for plugin ABI 2.0"));
    why = find_refusal(registry, "c-noentry.so");
    assert_non_null(why);
    assert_non_null(strstr(why, "exports no 'tforge_plugin_entry' symbol"));
    why = find_refusal(registry, "d-initfails.so");
    assert_non_null(why);
    assert_non_null(strstr(why, "init failed"));
    assert_non_null(strstr(why, "no GPU named 'imaginary'"));
    why = find_refusal(registry, "e-duplicate.so");
    assert_non_null(why);
    assert_non_null(strstr(why, "duplicate id: strategy 'good' is already provided by"));
    assert_non_null(strstr(why, "a-good.so"));
    why = find_refusal(registry, "f-twice.so");
    assert_non_null(why);
    assert_non_null(strstr(why, "appears twice in the module"));
    why = find_refusal(registry, "g-text.so");
    assert_non_null(why);
    assert_non_null(strstr(why, "g-text.so"));
    why = find_refusal(registry, "h-nokind.so");
    assert_non_null(why);
    assert_non_null(strstr(why, "interface id 'strategy' is not <kind>/<revision>"));
    tforge_registry_free(registry);
}

static void abi_refusal_returns_eabi_with_the_file_in_the_message(void **state)
{
    (void)state;
    tforge_registry *registry;
    assert_int_equal(tforge_registry_new(&registry), 0);
    assert_int_equal(tforge_registry_load_file(registry, FIXTURE_PLUGIN_DIR "/fixture-b-abi2.so"),
                     TFORGE_EABI);
    assert_non_null(strstr(tforge_error_last()->message, "b-abi2.so"));
    assert_int_equal(tforge_registry_count(registry), 0);
    tforge_registry_free(registry);
}

static void static_registration_and_duplicates_across_origins(void **state)
{
    (void)state;
    tforge_registry *registry;
    assert_int_equal(tforge_registry_new(&registry), 0);
    assert_int_equal(tforge_registry_add_static(registry, &fixture_static, "builtin:fixture"), 0);
    const tforge_plugin_record *r =
        tforge_registry_find(registry, TFORGE_STRATEGY_INTERFACE_ID, "static-fixture");
    assert_non_null(r);
    assert_string_equal(r->path, "builtin:fixture");
    /* the same module again is a duplicate */
    assert_int_equal(tforge_registry_add_static(registry, &fixture_static, "builtin:again"),
                     TFORGE_EINPUT);
    assert_non_null(strstr(tforge_error_last()->message, "already provided by builtin:fixture"));
    tforge_registry_free(registry);
}

static void search_path_skips_empty_entries_and_missing_folders(void **state)
{
    (void)state;
    /* An empty entry must not mean the current folder: run from the fixture folder, where
     * loading "." would find the good module. */
    char cwd[4096];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(FIXTURE_PLUGIN_DIR), 0);
    setenv("TFORGE_PLUGIN_PATH", "::/nonexistent/folder:", 1);
    tforge_registry *registry;
    assert_int_equal(tforge_registry_new(&registry), 0);
    assert_int_equal(tforge_registry_load_search_path(registry, NULL, 0), 0);
    assert_null(tforge_registry_find(registry, TFORGE_STRATEGY_INTERFACE_ID, "good"));
    tforge_registry_free(registry);

    const char *dirs[] = {FIXTURE_PLUGIN_DIR};
    unsetenv("TFORGE_PLUGIN_PATH");
    assert_int_equal(tforge_registry_new(&registry), 0);
    assert_int_equal(tforge_registry_load_search_path(registry, dirs, 1), 0);
    assert_non_null(tforge_registry_find(registry, TFORGE_STRATEGY_INTERFACE_ID, "good"));
    tforge_registry_free(registry);
    assert_int_equal(chdir(cwd), 0);
}

int main(void)
{
    tforge_log_set_level(TFORGE_LOG_ERROR);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(folder_loads_good_and_refuses_each_defect),
        cmocka_unit_test(abi_refusal_returns_eabi_with_the_file_in_the_message),
        cmocka_unit_test(static_registration_and_duplicates_across_origins),
        cmocka_unit_test(search_path_skips_empty_entries_and_missing_folders),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
