/* The typed door to the worker's Python (engine/worker/rpc.c): each builder writes a request of
 * its method with the fields the table lists, nothing else is sent, a raised exception's kind
 * is read from its own field, and the table agrees with the Python functions it names (their
 * signatures and tforge_worker.ENTRY_POINTS), checked in a real worker. */
#include "rpc.h"
#include "tforge/error.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static int listed(const char *const *names, const char *name)
{
    for (; *names; names++)
        if (strcmp(*names, name) == 0)
            return 1;
    return 0;
}

static const tforge_rpc_method *method_named(const char *module, const char *function)
{
    size_t n;
    const tforge_rpc_method *m = tforge_rpc_methods(&n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(m[i].module, module) == 0 && strcmp(m[i].function, function) == 0)
            return &m[i];
    return NULL;
}

/* Every builder, each optional argument given: its method and exactly its table's fields. */
static void each_builder_writes_its_method_with_the_tables_fields(void **state)
{
    (void)state;
    const char *config = "{\"BLOCK\": 64}", *shape = "{\"N\": 1024}";
    const char *also[] = {"{\"N\": 17}", "{\"N\": 33}"};
    const char *argv[] = {"python", "run.py"};
    const char *options[] = {"metrics=dram", NULL};
    tforge_rpc_candidate c = {"task.json", config, shape, "def k(): pass\n", "fnv1a64:0",
                              "float16"};
    tforge_rpc_capture_options capture = {"out", "kern", "ref:f", 1};
    struct {
        char *request;
        const char *module, *function;
    } built[] = {
        {tforge_rpc_load_task("task.json"), "tforge_worker", "load_task"},
        {tforge_rpc_environment(), "tforge_worker", "environment"},
        {tforge_rpc_compile(&c, also, 2), "tforge_worker", "compile"},
        {tforge_rpc_run_check(&c, 7, 1), "tforge_worker", "run_check"},
        {tforge_rpc_time(&c, 0), "tforge_worker", "time"}, /* energy: false, the optional field */
        {tforge_rpc_profile_launches(&c, "cupti", options, "kern"), "tforge_worker", "profile"},
        {tforge_rpc_device(), "tforge_worker.worker", "device"},
        {tforge_rpc_check_task("task.json", config, "v"), "tforge_worker.worker", "check_task"},
        {tforge_rpc_analyze("k.py", "kern"), "tforge_worker.analyze", "analyze"},
        {tforge_rpc_capture(argv, 2, &capture), "tforge_worker.capture", "capture"},
        {tforge_rpc_init("k.py", &capture), "tforge_worker.capture", "init"},
        {tforge_rpc_unified_diff("k.py", "text"), "tforge_worker.variants", "unified_diff"},
        {tforge_rpc_launch_hook("task.json", config, "text"), "tforge_worker.takehome",
         "launch_hook"},
        {tforge_rpc_verify("out", "task.json", config, shape, "float16"), "tforge_worker.takehome",
         "verify"},
        {tforge_rpc_peaks(), "tforge_worker.peaks", "cached"},
        {tforge_rpc_check_answer("```python\n```", "kern", "text"), "tforge_worker.proposal",
         "check_answer"},
    };
    size_t n_methods, n_built = sizeof built / sizeof built[0];
    tforge_rpc_methods(&n_methods);
    assert_int_equal(n_built, n_methods); /* a method without its builder here fails */
    for (size_t i = 0; i < n_built; i++) {
        assert_non_null(built[i].request);
        cJSON *r = cJSON_Parse(built[i].request);
        const cJSON *module = cJSON_GetObjectItemCaseSensitive(r, "module");
        const cJSON *function = cJSON_GetObjectItemCaseSensitive(r, "function");
        const cJSON *args = cJSON_GetObjectItemCaseSensitive(r, "args");
        assert_string_equal(module->valuestring, built[i].module);
        assert_string_equal(function->valuestring, built[i].function);
        const tforge_rpc_method *m = method_named(built[i].module, built[i].function);
        assert_non_null(m);
        size_t n_args = 0, n_fields = 0;
        for (const cJSON *a = args->child; a; a = a->next, n_args++)
            assert_true(listed(m->always, a->string) || listed(m->sometimes, a->string));
        for (const char *const *f = m->always; *f; f++, n_fields++)
            ;
        for (const char *const *f = m->sometimes; *f; f++, n_fields++)
            ;
        assert_int_equal(n_args, n_fields); /* every optional field given above is sent */
        for (size_t j = 0; j < i; j++) /* each method once */
            assert_false(strcmp(built[j].module, built[i].module) == 0 &&
                         strcmp(built[j].function, built[i].function) == 0);
        cJSON_Delete(r);
        free(built[i].request);
    }
}

static void a_request_outside_the_table_is_refused(void **state)
{
    (void)state;
    assert_null(tforge_rpc_load_task(NULL));
    assert_non_null(strstr(tforge_error_last()->message, "field 'path' is missing"));
    tforge_rpc_candidate bad = {"task.json", "{not json", "{}", NULL, NULL, NULL};
    assert_null(tforge_rpc_time(&bad, 1));
    assert_non_null(strstr(tforge_error_last()->message, "tforge_worker.time: field 'config'"));
}

static void what_was_raised_is_read_from_its_kind_field(void **state)
{
    (void)state;
    tforge_rpc_reply r;
    char text[128];
    tforge_rpc_read(&r, TFORGE_CALL_OK,
                    "{\"ok\": false, \"kind\": \"TaskError\", \"error\": \"ValueError: x\"}", "");
    assert_true(tforge_rpc_raised(&r, "TaskError"));
    assert_false(tforge_rpc_raised(&r, "ValueError")); /* the message's words are no kind */
    assert_null(r.result);
    assert_string_equal(r.error, "ValueError: x");
    assert_string_equal(tforge_rpc_error_text(&r, text, sizeof text), "TaskError: ValueError: x");
    tforge_rpc_reply_dispose(&r);

    tforge_rpc_read(&r, TFORGE_CALL_OK, "{\"ok\": true, \"result\": {\"status\": \"ok\"}}", "");
    assert_null(r.kind);
    assert_false(tforge_rpc_raised(&r, "TaskError"));
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(r.result, "status")->valuestring, "ok");
    tforge_rpc_reply_dispose(&r);

    tforge_rpc_read(&r, TFORGE_CALL_OK, "TaskError: not a response", "");
    assert_null(r.doc);
    assert_null(r.kind);
    tforge_rpc_reply_dispose(&r);

    tforge_rpc_read(&r, TFORGE_CALL_CRASHED, NULL, "killed by signal 11");
    assert_int_equal(r.call, TFORGE_CALL_CRASHED);
    assert_string_equal(r.detail, "killed by signal 11");
    assert_null(r.doc);
    tforge_rpc_reply_dispose(&r);
}

static void candidate_answers_are_read_into_typed_results(void **state)
{
    (void)state;
    tforge_rpc_reply r;
    tforge_rpc_read(&r, TFORGE_CALL_OK,
                    "{\"ok\": true, \"result\": {\"status\": \"ok\", \"message\": \"\", "
                    "\"fatal\": false, \"registers\": 96, \"spill_stores\": 0, "
                    "\"median_ms\": 0.25, \"min_ms\": 0.2, \"spread\": 0.01, \"n\": 40}}",
                    "");
    tforge_rpc_verdict v = tforge_rpc_verdict_of(&r);
    assert_string_equal(v.status, "ok");
    assert_false(v.fatal);
    tforge_rpc_compiled c = tforge_rpc_compiled_of(&r);
    assert_true(c.registers == 96 && c.spill_stores == 0);
    assert_true(isnan(c.shared_bytes)); /* not said: NAN, never 0 */
    tforge_rpc_timed t = tforge_rpc_timed_of(&r);
    assert_true(t.median_ms == 0.25 && t.min_ms == 0.2 && t.spread == 0.01 && t.n == 40);
    tforge_rpc_reply_dispose(&r);

    tforge_rpc_read(&r, TFORGE_CALL_OK,
                    "{\"ok\": true, \"result\": {\"status\": \"runtime\", \"message\": "
                    "\"illegal memory access\", \"fatal\": true}}",
                    "");
    v = tforge_rpc_verdict_of(&r);
    assert_string_equal(v.status, "runtime");
    assert_string_equal(v.message, "illegal memory access");
    assert_true(v.fatal);
    tforge_rpc_reply_dispose(&r);

    tforge_rpc_read(&r, TFORGE_CALL_OK, "{\"ok\": false, \"kind\": \"TaskError\"}", "");
    v = tforge_rpc_verdict_of(&r);
    assert_null(v.status); /* it raised: no verdict */
    tforge_rpc_reply_dispose(&r);
}

/* The methods as rpc_contract.check takes them; `drop` leaves one out, `rename` replaces one
 * field's name ("old=new"), `lose` takes one field out of `always`. */
static cJSON *methods_json(const char *drop, const char *rename, const char *lose)
{
    size_t n;
    const tforge_rpc_method *m = tforge_rpc_methods(&n);
    char from[64] = "", to[64] = "";
    if (rename)
        sscanf(rename, "%63[^=]=%63s", from, to);
    cJSON *list = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        if (drop && strcmp(m[i].function, drop) == 0)
            continue;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "module", m[i].module);
        cJSON_AddStringToObject(o, "function", m[i].function);
        const char *const *fields[2] = {m[i].always, m[i].sometimes};
        const char *names[2] = {"always", "sometimes"};
        for (int k = 0; k < 2; k++) {
            cJSON *a = cJSON_AddArrayToObject(o, names[k]);
            for (const char *const *f = fields[k]; *f; f++)
                if (!(lose && k == 0 && strcmp(*f, lose) == 0))
                    cJSON_AddItemToArray(a, cJSON_CreateString(strcmp(*f, from) ? *f : to));
        }
        cJSON_AddItemToArray(list, o);
    }
    return list;
}

/* rpc_contract.check(methods) in a real worker: its list of problems, as JSON text. */
static char *problems_of(tforge_worker *w, cJSON *methods)
{
    cJSON *request = cJSON_CreateObject(), *args = cJSON_AddObjectToObject(request, "args");
    cJSON_AddStringToObject(request, "module", "rpc_contract");
    cJSON_AddStringToObject(request, "function", "check");
    cJSON_AddItemToObject(args, "methods", methods);
    char *text = cJSON_PrintUnformatted(request);
    cJSON_Delete(request);
    tforge_rpc_reply r;
    assert_int_equal(tforge_rpc_call(&r, w, text, 300000), 0);
    free(text);
    assert_int_equal(r.call, TFORGE_CALL_OK);
    if (r.kind)
        fail_msg("rpc_contract.check raised %s: %s", r.kind, r.error);
    assert_true(cJSON_IsArray(r.result));
    char *problems = cJSON_PrintUnformatted(r.result);
    tforge_rpc_reply_dispose(&r);
    return problems;
}

static void the_table_agrees_with_the_python_it_calls(void **state)
{
    (void)state;
    static const char *const env[] = {"TFORGE_PYTHONPATH=" FIXTURE_PYTHON_DIR,
                                      "TRITON_INTERPRET=1", NULL};
    tforge_worker_options options = TFORGE_WORKER_OPTIONS_INIT;
    options.executable = TFORGE_EXE;
    options.name = "rpc-contract";
    options.env = env;
    tforge_worker *w = NULL;
    assert_int_equal(tforge_worker_start(&w, &options), 0);

    char *problems = problems_of(w, methods_json(NULL, NULL, NULL));
    if (strcmp(problems, "[]") != 0)
        fail_msg("rpc.c and tforge_worker disagree: %s", problems);
    free(problems);

    /* the check sees each way the two sides can drift apart */
    static const struct {
        const char *drop, *rename, *lose, *expect;
    } drifts[] = {
        {"time", NULL, NULL, "tforge_worker.time: an entry point without its rpc.c method"},
        {NULL, "also=also_shapes", NULL, "sends field 'also_shapes', no parameter of it"},
        {NULL, NULL, "shape", "parameter 'shape' has no default, and rpc.c does not always"},
    };
    for (size_t i = 0; i < sizeof drifts / sizeof drifts[0]; i++) {
        problems = problems_of(w, methods_json(drifts[i].drop, drifts[i].rename, drifts[i].lose));
        if (!strstr(problems, drifts[i].expect))
            fail_msg("expected \"%s\" among %s", drifts[i].expect, problems);
        free(problems);
    }
    cJSON *unknown = methods_json(NULL, NULL, NULL), *extra = cJSON_CreateObject();
    cJSON_AddStringToObject(extra, "module", "tforge_worker");
    cJSON_AddStringToObject(extra, "function", "retime");
    cJSON_AddItemToObject(extra, "always", cJSON_CreateArray());
    cJSON_AddItemToObject(extra, "sometimes", cJSON_CreateArray());
    cJSON_AddItemToArray(unknown, extra);
    problems = problems_of(w, unknown);
    assert_non_null(strstr(problems, "tforge_worker.retime: rpc.c sends it, but it is not one"));
    assert_non_null(strstr(problems, "tforge_worker.retime: the worker cannot call it"));
    free(problems);
    tforge_worker_free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_builder_writes_its_method_with_the_tables_fields),
        cmocka_unit_test(a_request_outside_the_table_is_refused),
        cmocka_unit_test(what_was_raised_is_read_from_its_kind_field),
        cmocka_unit_test(candidate_answers_are_read_into_typed_results),
        cmocka_unit_test(the_table_agrees_with_the_python_it_calls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
