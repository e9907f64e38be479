#include "tforge/error.h"
#include "tforge/log.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

static void error_set_returns_code_and_formats(void **state)
{
    (void)state;
    tforge_error_clear();
    assert_int_equal(tforge_error_last()->code, 0);
    assert_string_equal(tforge_error_last()->message, "");
    assert_int_equal(tforge_error_set(TFORGE_EINPUT, "%s: field '%s'", "task.json", "grid"),
                     TFORGE_EINPUT);
    assert_int_equal(tforge_error_last()->code, TFORGE_EINPUT);
    assert_string_equal(tforge_error_last()->message, "task.json: field 'grid'");
}

static void *set_in_thread(void *arg)
{
    (void)arg;
    tforge_error_set(TFORGE_EIO, "other thread");
    return NULL;
}

static void errors_are_per_thread(void **state)
{
    (void)state;
    tforge_error_set(TFORGE_ENOTFOUND, "main thread");
    pthread_t t;
    pthread_create(&t, NULL, set_in_thread, NULL);
    pthread_join(t, NULL);
    assert_int_equal(tforge_error_last()->code, TFORGE_ENOTFOUND);
    assert_string_equal(tforge_error_last()->message, "main thread");
}

static void long_messages_are_truncated(void **state)
{
    (void)state;
    char big[4000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    tforge_error_set(TFORGE_ERROR, "%s", big);
    assert_int_equal(strlen(tforge_error_last()->message), 1023);
}

/* The message may be an argument of the next error: formatted into fresh memory, it reads as
 * written (it used to come back as "transform 'pipeline': transform 'pipeline': : ..."). */
static void error_set_may_quote_the_last_message(void **state)
{
    (void)state;
    tforge_error_set(TFORGE_EINPUT, "dimension loop0_stages: value 7 is not a level");
    assert_int_equal(tforge_error_set(TFORGE_ENOTFOUND, "transform '%s': %s", "pipeline",
                                      tforge_error_last()->message),
                     TFORGE_ENOTFOUND);
    assert_string_equal(tforge_error_last()->message,
                        "transform 'pipeline': dimension loop0_stages: value 7 is not a level");
}

static void error_prefix_adds_context_and_keeps_the_code(void **state)
{
    (void)state;
    tforge_error_set(TFORGE_EINPUT, "dimension loop0_stages: value 7 is not a level");
    assert_int_equal(tforge_error_prefix("transform '%s'", "pipeline"), TFORGE_EINPUT);
    assert_int_equal(tforge_error_last()->code, TFORGE_EINPUT);
    assert_string_equal(tforge_error_last()->message,
                        "transform 'pipeline': dimension loop0_stages: value 7 is not a level");
    tforge_error_prefix("task %s", "t.json");
    assert_string_equal(tforge_error_last()->message, "task t.json: transform 'pipeline': "
                                                      "dimension loop0_stages: value 7 is not a "
                                                      "level");
}

/* A failure nobody recorded must not read as success to `return tforge_error_prefix(...)`. */
static void error_prefix_without_an_error_is_a_plain_error(void **state)
{
    (void)state;
    tforge_error_clear();
    assert_int_equal(tforge_error_prefix("transform '%s'", "pipeline"), TFORGE_ERROR);
    assert_int_equal(tforge_error_last()->code, TFORGE_ERROR);
    assert_string_equal(tforge_error_last()->message, "transform 'pipeline'");
}

static void error_prefix_truncates_the_tail(void **state)
{
    (void)state;
    char big[2000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    tforge_error_set(TFORGE_EIO, "%s", big);
    tforge_error_prefix("head");
    assert_int_equal(strlen(tforge_error_last()->message), 1023);
    assert_memory_equal(tforge_error_last()->message, "head: xxx", 9);
}

typedef struct captured {
    int calls;
    tforge_log_level level;
    char message[256];
} captured;

static void capture(void *context, tforge_log_level level, const char *message)
{
    captured *c = context;
    c->calls++;
    c->level = level;
    strncpy(c->message, message, sizeof c->message - 1);
}

static void log_filters_by_level_and_uses_one_sink(void **state)
{
    (void)state;
    captured c = {0};
    tforge_log_set_sink(capture, &c);
    tforge_log_set_level(TFORGE_LOG_INFO);
    tforge_log(TFORGE_LOG_DEBUG, "dropped");
    assert_int_equal(c.calls, 0);
    tforge_log(TFORGE_LOG_WARN, "kept %d", 7);
    assert_int_equal(c.calls, 1);
    assert_int_equal(c.level, TFORGE_LOG_WARN);
    assert_string_equal(c.message, "kept 7");
    tforge_log_set_sink(NULL, NULL);
    tforge_log_set_level(TFORGE_LOG_WARN);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(error_set_returns_code_and_formats),
        cmocka_unit_test(errors_are_per_thread),
        cmocka_unit_test(long_messages_are_truncated),
        cmocka_unit_test(error_set_may_quote_the_last_message),
        cmocka_unit_test(error_prefix_adds_context_and_keeps_the_code),
        cmocka_unit_test(error_prefix_without_an_error_is_a_plain_error),
        cmocka_unit_test(error_prefix_truncates_the_tail),
        cmocka_unit_test(log_filters_by_level_and_uses_one_sink),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
