/* Workers survive what candidates do: crashes, aborts, hangs, exits, exceptions and prints. */
#include "worker.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

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
    assert_non_null(strstr(r, "ValueError: bad tile"));
    free(r);
    r = call("no_such_function", "{}", 20000, &status, detail);
    assert_non_null(strstr(r, "AttributeError"));
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(answers_and_survives_exceptions),
        cmocka_unit_test(crashes_are_reported_and_the_worker_restarts),
        cmocka_unit_test(hangs_time_out_and_the_worker_restarts),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
