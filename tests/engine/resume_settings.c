/* What a refused --resume names (tforge_run_settings_difference: the first key that differs,
 * with both values), and a store opened to be read (tforge_store_open_existing: never
 * created). */
#include "loop.h"
#include "store.h"

#include "tforge/error.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "../support/tmpdir.h"

static void difference(const char *was_json, const char *now_json, int found, const char *key,
                       const char *was, const char *now)
{
    char k[64] = "", a[256] = "", b[256] = "";
    assert_int_equal(
        tforge_run_settings_difference(k, sizeof k, a, b, sizeof a, was_json, now_json), found);
    if (found == 1) {
        assert_string_equal(k, key);
        assert_string_equal(a, was);
        assert_string_equal(b, now);
    }
}

static void names_the_first_key_that_differs(void **state)
{
    (void)state;
    const char *stored = "{\"options\":[],\"backend\":\"replay:a.json\",\"shape\":0,\"batch\":4,"
                         "\"transforms\":\"all\"}";
    difference(stored, "{\"options\":[],\"backend\":\"replay:a.json\",\"shape\":0,\"batch\":8,"
                       "\"transforms\":\"none\"}", 1, "batch", "4", "8");
    difference(stored, "{\"options\":[\"initial=3\"],\"backend\":\"replay:a.json\",\"shape\":0,"
                       "\"batch\":4,\"transforms\":\"all\"}",
               1, "options", "[]", "[\"initial=3\"]");
    difference(stored, "{\"options\":[],\"backend\":\"replay:b.json\",\"shape\":0,\"batch\":4,"
                       "\"transforms\":\"all\"}", 1, "backend", "replay:a.json", "replay:b.json");
    /* a key only one document has: the other's value is "(none)", whichever side it is on */
    difference(stored, "{\"options\":[],\"backend\":\"replay:a.json\",\"shape\":0,\"batch\":4,"
                       "\"transforms\":\"all\",\"patience\":5}", 1, "patience", "(none)", "5");
    difference("{\"batch\":4,\"patience\":5}", "{\"batch\":4}", 1, "patience", "5", "(none)");
    /* the same settings in another key order say the same */
    difference("{\"batch\":4,\"shape\":0}", "{\"shape\":0,\"batch\":4}", 0, NULL, NULL, NULL);
    difference(NULL, NULL, 0, NULL, NULL, NULL);
    difference("[1]", "{}", -1, NULL, NULL, NULL);
    difference("{}", "not json", -1, NULL, NULL, NULL);
}

static void an_export_never_creates_a_store(void **state)
{
    (void)state;
    char path[512];
    struct stat st;
    tforge_store *store = NULL;
    snprintf(path, sizeof path, "%s/missing.db", tmpdir);
    assert_int_equal(tforge_store_open_existing(&store, path), TFORGE_ENOTFOUND);
    assert_null(store);
    assert_non_null(strstr(tforge_error_last()->message, "missing.db: no store there"));
    assert_int_equal(stat(path, &st), -1);
    assert_int_equal(tforge_store_open_existing(&store, tmpdir), TFORGE_EINPUT);

    /* a store made by a run reads back; nothing can be recorded through the reading door */
    snprintf(path, sizeof path, "%s/runs.db", tmpdir);
    int64_t id;
    tforge_store_run run = {.source = "k.json", .seed = 1, .budget = 3};
    assert_int_equal(tforge_store_open(&store, path), 0);
    assert_int_equal(tforge_store_begin_run(&id, store, &run), 0);
    tforge_store_close(store);
    assert_int_equal(tforge_store_open_existing(&store, path), 0);
    tforge_store_run found;
    assert_int_equal(tforge_store_find_run(&found, store, id), 0);
    assert_string_equal(found.source, "k.json");
    tforge_store_run_dispose(&found);
    assert_int_not_equal(tforge_store_begin_run(&id, store, &run), 0);
    tforge_store_close(store);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names_the_first_key_that_differs),
        cmocka_unit_test(an_export_never_creates_a_store),
    };
    return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
