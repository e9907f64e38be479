/* A profile's labels as JSON (engine/report/labels.c), the one writer for result.json's
 * "profile" and `tforge profile --json`: a forge over a fake backend that profiles and a fixture
 * heuristic with two labels, each moving one dimension, printed with their moves (result.json)
 * and without (profile); a profile without labels, and none at all, give an empty array. */
#include "backend.h"
#include "forge.h"
#include "labels.h"

#include <cjson/cJSON.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

enum { SIDE = 4 };

/* ---- a backend whose evaluations take 2 ms, profiled with that time alone ---- */

static int fake_open(void **state, const tforge_backend_args *args)
{
    (void)args;
    *state = NULL;
    return 0;
}

static int fake_evaluate(void *state, const tforge_candidate *c, size_t n, tforge_measurement *out)
{
    (void)state, (void)c;
    for (size_t i = 0; i < n; i++)
        out[i].value = out[i].median_ms = 2.0;
    return 0;
}

static int fake_profile(void *state, const tforge_candidate *c, const tforge_measurement *m,
                        int counters, tforge_profile *out)
{
    (void)state, (void)c, (void)counters;
    out->counters = TFORGE_COUNTERS_NONE;
    out->n_metrics = 1;
    snprintf(out->metrics[0].name, TFORGE_METRIC_NAME_SIZE, "time_ms");
    out->metrics[0].value = m->value;
    return 0;
}

static void fake_close(void *state)
{
    (void)state;
}

static const tforge_backend_type fake_type = {"fake", 1,    fake_open,  fake_evaluate, NULL,
                                              fake_profile, NULL, fake_close, NULL, NULL};

/* ---- the heuristic: "memory-bound" favours a larger BLOCK_M, "latency-bound" fewer
 * persistent programs; `silent` gives no label ---- */

static int silent;

static int fixture_create(void **state, const tforge_host *host,
                          const tforge_options_view *options, const tforge_heuristic_input *input)
{
    (void)host, (void)options, (void)input;
    *state = NULL;
    return 0;
}

static int fixture_classify(void *state, const tforge_profile *p, const tforge_bottleneck **out,
                            uint32_t *n)
{
    (void)state, (void)p;
    static const tforge_bottleneck labels[] = {
        {"memory-bound", 0.75, "dram_pct 81", "dram_pct > 60"},
        {"latency-bound", 0.5, "issue_pct 12", "issue_pct < 20"}};
    *out = labels;
    *n = silent ? 0 : 2;
    return 0;
}

static int fixture_prior(void *state, const tforge_bottleneck *labels, uint32_t n_labels,
                         const tforge_level *at, double *w, uint64_t n)
{
    (void)state, (void)n_labels;
    memset(w, 0, n * sizeof *w);
    int memory = strcmp(labels[0].label, "memory-bound") == 0;
    for (uint32_t l = 0; l < SIDE; l++)
        if (memory)
            w[l] = l > at[0] ? 1.0 : 0.0;
        else
            w[SIDE + l] = l < at[1] ? 1.0 : 0.0;
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
    0, "fixture", "1.0.0", "two labels, one dimension each",
    TFORGE_HEURISTIC_INTERFACE_ID, &fixture_api, NULL, 0, NULL};
static uint32_t fixtures_count(void)
{
    return 1;
}
static const tforge_plugin_descriptor *fixtures_get(uint32_t i)
{
    return i == 0 ? &fixture_descriptor : NULL;
}
static const tforge_plugin_module fixtures_module = {TFORGE_PLUGIN_ABI_VERSION_INIT, "fixtures",
                                                     NULL, NULL, fixtures_count, fixtures_get};

/* ---- the profile, as JSON ---- */

/* The labels of one evaluation at (1, 2), as result.json (with_moves) or profile prints them. */
static char *labels_text(int with_moves)
{
    tforge_space *space;
    tforge_registry *reg;
    double values[SIDE] = {16, 32, 64, 128};
    assert_int_equal(tforge_space_new(&space), 0);
    assert_int_equal(tforge_space_add_values(space, "BLOCK_M", values, SIDE), 0);
    assert_int_equal(tforge_space_add_range(space, "persistent_programs", 0, SIDE - 1, 1), 0);
    assert_int_equal(tforge_space_describe(space, 1, "persistent", TFORGE_DIM_REWRITE,
                                           TFORGE_EFFECT_PROGRAMS), 0);
    assert_int_equal(tforge_space_build(space, NULL), 0);
    assert_int_equal(tforge_registry_new(&reg), 0);
    assert_int_equal(tforge_registry_add_static(reg, &fixtures_module, "test:fixtures"), 0);
    tforge_backend backend;
    tforge_backend_args args = TFORGE_BACKEND_ARGS_INIT;
    args.space = space;
    assert_int_equal(tforge_backend_open(&backend, &fake_type, &args), 0);
    tforge_forge_options fo = TFORGE_FORGE_OPTIONS_INIT;
    fo.heuristic = "fixture";
    tforge_forge *forge;
    assert_int_equal(tforge_forge_open(&forge, reg, space, &backend, &fo), 0);

    tforge_level point[2] = {1, 2};
    tforge_loop_eval eval = {0};
    eval.point = point;
    eval.config = "{\"BLOCK_M\": 32}";
    tforge_measurement_init(&eval.m);
    eval.m.status = TFORGE_STATUS_OK;
    eval.m.value = eval.m.median_ms = 2.0;
    tforge_loop_outcome outcome = {0};
    outcome.evals = &eval;
    outcome.n_evals = 1;
    const tforge_forge_profile *p;
    assert_int_equal(tforge_forge_profile_eval(forge, &outcome, 0, &p), 0);
    cJSON *labels = tforge_report_labels(forge, p, with_moves ? space : NULL);
    assert_non_null(labels);
    char *text = cJSON_PrintUnformatted(labels);
    cJSON_Delete(labels);

    tforge_forge_free(forge);
    tforge_backend_close(&backend);
    tforge_registry_free(reg);
    tforge_space_free(space);
    return text;
}

static void result_json_has_each_labels_moves(void **state)
{
    (void)state;
    silent = 0;
    char *text = labels_text(1);
    assert_string_equal(
        text, "[{\"label\":\"memory-bound\",\"confidence\":0.75,\"evidence\":\"dram_pct 81\","
              "\"rule\":\"dram_pct > 60\",\"moves\":[{\"dimension\":\"BLOCK_M\",\"family\":\"\","
              "\"way\":\"up\"}]},"
              "{\"label\":\"latency-bound\",\"confidence\":0.5,\"evidence\":\"issue_pct 12\","
              "\"rule\":\"issue_pct < 20\",\"moves\":[{\"dimension\":\"persistent_programs\","
              "\"family\":\"persistent\",\"way\":\"down\"}]}]");
    free(text);
}

static void profile_json_has_the_labels_alone(void **state)
{
    (void)state;
    silent = 0;
    char *text = labels_text(0);
    assert_string_equal(
        text, "[{\"label\":\"memory-bound\",\"confidence\":0.75,\"evidence\":\"dram_pct 81\","
              "\"rule\":\"dram_pct > 60\"},"
              "{\"label\":\"latency-bound\",\"confidence\":0.5,\"evidence\":\"issue_pct 12\","
              "\"rule\":\"issue_pct < 20\"}]");
    free(text);
}

static void no_label_and_no_profile_are_empty(void **state)
{
    (void)state;
    silent = 1;
    char *text = labels_text(1);
    assert_string_equal(text, "[]");
    free(text);
    cJSON *none = tforge_report_labels(NULL, NULL, NULL);
    text = cJSON_PrintUnformatted(none);
    assert_string_equal(text, "[]");
    free(text);
    cJSON_Delete(none);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(result_json_has_each_labels_moves),
        cmocka_unit_test(profile_json_has_the_labels_alone),
        cmocka_unit_test(no_label_and_no_profile_are_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
