/* Workers survive what candidates do: crashes, aborts, hangs, exits, exceptions and prints. */
#include "worker.h"

#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

static tforge_worker *worker;

static int setup(void **state)
{
    (void)state;
    static const char *const env[] = {"TFORGE_PYTHONPATH=" FIXTURE_PYTHON_DIR, NULL};
    tforge_worker_options options = TFORGE_WORKER_OPTIONS_INIT;
    options.executable = TFORGE_EXE;
    options.name = "test";
    options.env = env;
    return tforge_worker_start(&worker, &options);
}

static int teardown(void **state)
{
    (void)state;
    tforge_worker_free(worker);
    return 0;
}

/* Calls fixture_worker.FUNCTION with ARGS (JSON object text); returns the response text. */
static char *call(const char *function, const char *args, int timeout_ms,
                  tforge_call_status *status, char *detail)
{
    char request[512];
    snprintf(request, sizeof request,
             "{\"module\": \"fixture_worker\", \"function\": \"%s\", \"args\": %s}", function,
             args);
    char *response = NULL;
    assert_int_equal(tforge_worker_call(worker, request, timeout_ms, &response, status, detail,
                                        256),
                     0);
    return response;
}

static void answers_and_survives_exceptions(void **state)
{
    (void)state;
    tforge_call_status status;
    char detail[256] = "";
    char *r = call("add", "{\"a\": 2, \"b\": 40}", 20000, &status, detail);
    assert_int_equal(status, TFORGE_CALL_OK);
    assert_string_equal(r, "{\"ok\": true, \"result\": 42}");
    free(r);
    r = call("raise_error", "{\"message\": \"bad tile\"}", 20000, &status, detail);
    assert_int_equal(status, TFORGE_CALL_OK);
    assert_non_null(strstr(r, "\"ok\": false"));
    /* what was raised travels as two fields: its kind (the class) and its message */
    assert_non_null(strstr(r, "\"kind\": \"ValueError\", \"error\": \"bad tile\""));
    free(r);
    r = call("no_such_function", "{}", 20000, &status, detail);
    assert_non_null(strstr(r, "\"kind\": \"AttributeError\""));
    free(r);
    /* a lone surrogate, returned or raised, still makes an answer a JSON reader takes */
    r = call("lone_surrogate", "{\"fail\": false}", 20000, &status, detail);
    assert_int_equal(status, TFORGE_CALL_OK);
    cJSON *doc = cJSON_Parse(r);
    assert_non_null(doc);
    assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "result"), 0)->valuestring,
                        "tile?x");
    assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "result"), 1)->valuestring,
                        "caf\xc3\xa9 \xf0\x9f\x98\x80");
    cJSON_Delete(doc);
    free(r);
    r = call("lone_surrogate", "{\"fail\": true}", 20000, &status, detail);
    assert_non_null(doc = cJSON_Parse(r));
    assert_string_equal(cJSON_GetObjectItem(doc, "error")->valuestring, "tile?x");
    cJSON_Delete(doc);
    free(r);
    r = call("chatty", "{}", 20000, &status, detail);
    assert_string_equal(r, "{\"ok\": true, \"result\": \"quiet\"}");
    free(r);
    r = call("big", "{\"n\": 3000000}", 20000, &status, detail);
    assert_int_equal(status, TFORGE_CALL_OK);
    assert_true(strlen(r) > 3000000);
    free(r);
    assert_int_equal(tforge_worker_generation(worker), 1);
}

static void crashes_are_reported_and_the_worker_restarts(void **state)
{
    (void)state;
    static const struct {
        const char *function, *args, *expect;
    } cases[] = {
        {"segfault", "{}", "signal 11"},
        {"abort", "{}", "signal 6"},
        {"exit_now", "{\"code\": 7}", "exited with status 7"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        unsigned generation = tforge_worker_generation(worker);
        tforge_call_status status;
        char detail[256] = "";
        char *r = call(cases[i].function, cases[i].args, 20000, &status, detail);
        assert_null(r);
        assert_int_equal(status, TFORGE_CALL_CRASHED);
        assert_non_null(strstr(detail, cases[i].expect));
        r = call("echo", "{\"value\": \"alive\"}", 20000, &status, detail);
        assert_int_equal(status, TFORGE_CALL_OK);
        assert_string_equal(r, "{\"ok\": true, \"result\": \"alive\"}");
        free(r);
        assert_int_equal(tforge_worker_generation(worker), generation + 1);
    }
}

static void hangs_time_out_and_the_worker_restarts(void **state)
{
    (void)state;
    tforge_call_status status;
    char detail[256] = "";
    pid_t before = tforge_worker_pid(worker);
    char *r = call("hang", "{}", 500, &status, detail);
    assert_null(r);
    assert_int_equal(status, TFORGE_CALL_TIMEOUT);
    assert_non_null(strstr(detail, "no answer within 500 ms"));
    r = call("pid", "{}", 20000, &status, detail);
    assert_int_equal(status, TFORGE_CALL_OK);
    char expect_not[64];
    snprintf(expect_not, sizeof expect_not, "%d", (int)before);
    assert_null(strstr(r, expect_not));
    free(r);
}

/* A start slower than the call's timeout is not the call's time: the call succeeds. */
static void a_slow_start_is_not_charged_to_the_call(void **state)
{
    (void)state;
    static const char *const env[] = {"TFORGE_PYTHONPATH=" FIXTURE_PYTHON_DIR,
                                      "TFORGE_WORKER_PRELOAD=fixture_slow_start", NULL};
    tforge_worker_options options = TFORGE_WORKER_OPTIONS_INIT;
    options.executable = TFORGE_EXE;
    options.name = "slow";
    options.env = env;
    tforge_worker *slow[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(tforge_worker_start(&slow[i], &options), 0);
    /* Both start together; the second's call is sent while the first's process still starts. */
    const char *request = "{\"module\": \"fixture_worker\", \"function\": \"add\", "
                          "\"args\": {\"a\": 1, \"b\": 2}}";
    assert_int_equal(tforge_worker_send(slow[1], request), 0);
    assert_true(tforge_worker_call_start_ms(slow[1]) == 0);
    char *response = NULL, detail[256] = "";
    tforge_call_status status;
    assert_int_equal(tforge_worker_call(slow[0], request, 1000, &response, &status, detail,
                                        sizeof detail),
                     0);
    assert_int_equal(status, TFORGE_CALL_OK);
    assert_string_equal(response, "{\"ok\": true, \"result\": 3}");
    free(response);
    /* The second has been ready for a while by now; its call's time began at its ready frame. */
    struct pollfd p = {tforge_worker_fd(slow[1]), POLLIN, 0};
    while (poll(&p, 1, 20000) == 1 &&
           tforge_worker_collect(slow[1], &response, &status, detail, sizeof detail) == 0)
        ;
    assert_int_equal(status, TFORGE_CALL_OK);
    assert_true(tforge_worker_call_start_ms(slow[1]) > 0);
    free(response);
    for (int i = 0; i < 2; i++)
        tforge_worker_free(slow[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(answers_and_survives_exceptions),
        cmocka_unit_test(crashes_are_reported_and_the_worker_restarts),
        cmocka_unit_test(hangs_time_out_and_the_worker_restarts),
        cmocka_unit_test(a_slow_start_is_not_charged_to_the_call),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
