/* A tune whose candidate is timed faster than the speed of light (issue 37, item 4), through the
 * session API with a fake timed backend over the row-sum task and the H100's measured device
 * file: BLOCK 32 answers an impossible time (a kernel that skipped its work), is re-timed, stays
 * under the bound, and ends failed as suspect; the winner is the honest BLOCK 16 at 2 warps, and
 * result.json's speed_of_light and report.md list the suspect with its times. This executable is
 * its own worker (`__worker`): the bound's bytes come from a fresh worker in the interpreter. */
#include "backend.h"
#include "registry.h"
#include "session.h"
#include "task.h"
#include "worker.h"
#include "tforge/error.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

extern const tforge_plugin_module tforge_static_exhaustive;
extern const tforge_plugin_module tforge_static_roofline;

/* The baseline's config (no point) 3 ms; BLOCK 32 a millionth of the bound; BLOCK 16: 2 ms at
 * one warp, 1.5 at two. */
static double fake_ms(const tforge_level *p)
{
    if (!p)
        return 3.0;
    return p[0] == 1 ? 1e-9 : p[1] == 1 ? 1.5 : 2.0;
}

#include "support/fake_timed.h"
#include "support/own_worker.h"
#include "support/scratch.h"
#include "support/text_file.h"

static void an_impossible_time_is_listed_never_won(void **state)
{
    (void)state;
    tforge_registry *reg = NULL;
    assert_int_equal(tforge_registry_new(&reg), 0);
    assert_int_equal(tforge_registry_add_static(reg, &tforge_static_exhaustive,
                                                "builtin:exhaustive"), 0);
    assert_int_equal(tforge_registry_add_static(reg, &tforge_static_roofline,
                                                "builtin:roofline"), 0);
    char dir[64], out[96], path[160];
    assert_int_equal(make_scratch(dir, sizeof dir, "session-suspect"), 0);
    snprintf(out, sizeof out, "%s/run", dir);
    tforge_tune_options o = TFORGE_TUNE_OPTIONS_INIT;
    o.task = LLM_FIXTURES "/task.json";
    o.registry = reg;
    o.backend = "fake";
    o.backend_type = &fake_type;
    o.strategy = "exhaustive";
    o.transforms = "none";
    o.budget = 4;
    o.compile_workers = 1;
    o.device_file = DEVICE_FILE;
    o.out = out;
    tforge_tune_outcome outcome;
    int rc = tforge_tune_run(&o, &outcome);
    if (rc)
        fail_msg("tune: %s", tforge_error_last()->message);
    assert_true(fabs(outcome.shapes[0].best_ms - 1.5) < 1e-12); /* never the impossible one */
    tforge_tune_outcome_dispose(&outcome);

    snprintf(path, sizeof path, "%s/result.json", out);
    read_text(path);
    cJSON *r = cJSON_Parse(text);
    assert_non_null(r);
    const cJSON *sol = cJSON_GetObjectItemCaseSensitive(r, "speed_of_light");
    const cJSON *suspects = cJSON_GetObjectItemCaseSensitive(sol, "suspect");
    assert_int_equal(cJSON_GetArraySize(suspects), 2); /* BLOCK 32 at either warps */
    const cJSON *one = cJSON_GetArrayItem(suspects, 0);
    double bound = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(sol, "bound_ms"));
    assert_true(bound > 0);
    assert_float_equal(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(one, "bound_ms")),
                       bound, bound * 1e-9);
    assert_float_equal(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(one, "measured_ms")),
                       1e-9, 1e-15);
    assert_float_equal(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(one, "retimed_ms")),
                       1e-9, 1e-15);
    const cJSON *config = cJSON_GetObjectItemCaseSensitive(one, "config");
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(config, "BLOCK")->valueint, 32);
    size_t n_suspect = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(r, "history"))
    {
        if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "suspect")))
            continue;
        n_suspect++;
        assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "status")),
                            "wrong");
    }
    assert_int_equal(n_suspect, 2);
    cJSON_Delete(r);
    snprintf(path, sizeof path, "%s/report.md", out);
    read_text(path);
    assert_non_null(strstr(text, "**2 suspect** (timed faster than the bound twice, never "
                                 "trusted): evaluation "));
    assert_non_null(strstr(text, "evaluation 2, {\"BLOCK\":32,\"num_warps\":1}, at 1e-09 ms; "));

    assert_int_equal(remove_scratch(dir), 0);
    tforge_registry_free(reg);
}

int main(int argc, char **argv)
{
    if (started_as_worker(argc, argv)) /* the session's worker processes */
        return tforge_worker_child_main();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(an_impossible_time_is_listed_never_won),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
