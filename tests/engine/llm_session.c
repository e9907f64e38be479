/* tune --llm through the session API with a fake timed backend whose times depend on the
 * candidate's level of `variant` (a model's proposal runs in half the file's time): the search
 * stalls over the file, the canned model is asked once, its good rewrite is checked, added as a
 * level, measured first at the incumbent's knobs and wins; result.json and best_variant.py say
 * so. Resumed, the run takes the level from the store, asks no model and names the same winner.
 * This executable is its own worker (`__worker`). */
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

/* ---- the fake backend: BLOCK 32 faster than 16; a proposal's level half the file's time ---- */

static size_t evaluated;

static double value_of(const tforge_task *t, const tforge_candidate *c)
{
    if (!c->point)
        return 3.0;
    double file = 2.0 - 0.1 * c->point[0];
    return tforge_task_variant_level(t, c->point) ? file / 2 : file;
}

static int fake_open(void **state, const tforge_backend_args *args)
{
    *state = (void *)args->task;
    return 0;
}

static int fake_evaluate(void *state, const tforge_candidate *c, size_t n, tforge_measurement *out)
{
    for (size_t i = 0; i < n; i++) {
        evaluated++;
        out[i].value = out[i].median_ms = value_of(state, &c[i]);
        out[i].repeats = 10;
    }
    return 0;
}

static int fake_retime(void *state, const tforge_candidate *c, uint64_t seed,
                       tforge_measurement *out)
{
    (void)seed;
    out->value = out->median_ms = value_of(state, c); /* the objective scores the median */
    return 0;
}

static void fake_close(void *state)
{
    (void)state;
}

static const tforge_backend_type fake_type = {"fake", 1, fake_open, fake_evaluate, fake_retime,
                                              NULL, NULL, fake_close, NULL, NULL};

#include "support/own_worker.h"
#include "support/scratch.h"
#include "support/text_file.h"

static cJSON *read_json(const char *path)
{
    cJSON *doc = cJSON_Parse(read_text(path));
    assert_non_null(doc);
    return doc;
}

static const cJSON *at(const cJSON *o, const char *name)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, name);
    assert_non_null(x);
    return x;
}

static void a_model_proposal_wins(void **state)
{
    (void)state;
    tforge_registry *reg = NULL;
    assert_int_equal(tforge_registry_new(&reg), 0);
    assert_int_equal(tforge_registry_add_static(reg, &tforge_static_exhaustive,
                                                "builtin:exhaustive"), 0);
    assert_int_equal(tforge_registry_load_file(reg, CANNED_MODULE), 0);
    char dir[64], out[96];
    assert_int_equal(make_scratch(dir, sizeof dir, "llm-session"), 0);
    snprintf(out, sizeof out, "%s/run", dir);
    const char *llm_options[] = {"answers=" LLM_FIXTURES "/answers.json", "only=good", NULL};
    tforge_tune_options o = TFORGE_TUNE_OPTIONS_INIT;
    o.task = LLM_FIXTURES "/task.json";
    o.registry = reg;
    o.backend = "fake";
    o.backend_type = &fake_type;
    o.strategy = "exhaustive";
    o.transforms = "none";
    o.budget = 8;
    o.patience = 2;
    o.compile_workers = 1;
    o.out = out;
    o.llm = "canned";
    o.llm_options = llm_options;
    o.llm_budget = 1;

    tforge_tune_outcome outcome;
    evaluated = 0;
    int rc = tforge_tune_run(&o, &outcome);
    if (rc)
        fail_msg("tune: %s", tforge_error_last()->message);
    size_t first_evaluated = evaluated;
    assert_true(fabs(outcome.shapes[0].best_ms - 0.95) < 1e-9); /* BLOCK 32 at the proposal */
    assert_true(outcome.shapes[0].speedup > 2.0);
    tforge_tune_outcome_dispose(&outcome);

    char path[160];
    snprintf(path, sizeof path, "%s/result.json", out);
    cJSON *r = read_json(path);
    const cJSON *llm = at(r, "llm");
    assert_string_equal(at(llm, "model")->valuestring, "canned");
    assert_int_equal(at(llm, "requests")->valueint, 1);
    const cJSON *p = cJSON_GetArrayItem(at(llm, "proposals"), 0);
    assert_string_equal(at(p, "state")->valuestring, "accepted");
    assert_true(cJSON_IsTrue(at(p, "won")));
    assert_true(fabs(at(p, "best_ms")->valuedouble - 0.95) < 1e-9);
    assert_non_null(strstr(at(p, "best_knobs")->valuestring, "BLOCK=32"));
    assert_non_null(strstr(at(p, "diff")->valuestring, "+    tl.store(out_ptr + row, tl.sum("));
    char digest[64];
    snprintf(digest, sizeof digest, "%s", at(p, "digest")->valuestring);
    cJSON_Delete(r);
    snprintf(path, sizeof path, "%s/best_variant.py", out);
    /* the proposal, not the file */
    assert_non_null(strstr(read_text(path), "tl.sum(acc, axis=0)"));

    /* resumed: the level from the store, no model asked, nothing evaluated again */
    o.resume = 1;
    evaluated = 0;
    rc = tforge_tune_run(&o, &outcome);
    if (rc)
        fail_msg("resume: %s", tforge_error_last()->message);
    assert_true(fabs(outcome.shapes[0].best_ms - 0.95) < 1e-9);
    tforge_tune_outcome_dispose(&outcome);
    assert_true(evaluated < first_evaluated); /* the final re-timing only */
    snprintf(path, sizeof path, "%s/result.json", out);
    r = read_json(path);
    llm = at(r, "llm");
    assert_int_equal(at(llm, "requests")->valueint, 0);
    p = cJSON_GetArrayItem(at(llm, "proposals"), 0);
    assert_true(cJSON_IsTrue(at(p, "from_store")));
    assert_string_equal(at(p, "digest")->valuestring, digest);
    assert_true(cJSON_IsTrue(at(p, "won")));
    cJSON_Delete(r);

    assert_int_equal(remove_scratch(dir), 0);
    tforge_registry_free(reg);
}

int main(int argc, char **argv)
{
    if (started_as_worker(argc, argv)) /* the session's worker processes */
        return tforge_worker_child_main();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_model_proposal_wins),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
