#include "expr.h"
#include "tforge/error.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

/* a in {1, 2, 4, 8}, flag boolean, layout in {NN, NT, TN}. */
static const double a_values[] = {1, 2, 4, 8}, bool_values[] = {0, 1}, layout_values[] = {0, 1, 2};
static const char *const layouts[] = {"NN", "NT", "TN"};
static const tforge_expr_param params[] = {
    {"a", TFORGE_EXPR_NUMBER, a_values, NULL, 4},
    {"flag", TFORGE_EXPR_BOOLEAN, bool_values, NULL, 2},
    {"layout", TFORGE_EXPR_STRING, layout_values, layouts, 3},
};

/* Evaluates `text` at a = 4, flag = true, layout = NT. */
static int eval_at(const char *text)
{
    static const tforge_level point[] = {2, 1, 1};
    tforge_expr *e = NULL;
    int rc = tforge_expr_parse(&e, text, params, 3);
    if (rc < 0)
        fail_msg("'%s' did not parse: %s", text, tforge_error_last()->message);
    int r = tforge_expr_eval(e, point);
    tforge_expr_free(e);
    return r;
}

static void evaluates_like_python(void **state)
{
    (void)state;
    /* Each holds in Python (checked there), so each must hold here. */
    static const char *const truths[] = {
        "-7 // 2 == -4", "7 // -2 == -4", "-7 % 2 == 1", "7 % -2 == -1", "-7.5 // 2 == -4",
        "7.5 % 2 == 1.5", "-2 ** 2 == -4", "2 ** 3 ** 2 == 512", "2 ** -1 == 0.5", "7 / 2 == 3.5",
        "1 < 2 < 3", "3 > 2 == 2", "not 1 == 2", "!(1 == 2) && (true || False)",
        "True + True == 2", "min(3, 1, 2) == 1 and max(3, 1, 2) == 3 and abs(-4) == 4",
        "1 + 2 * 3 == 7", "(1 + 2) * 3 == 9", "10 - 2 - 3 == 5", "2 * 3 % 4 == 2",
        "1e3 == 1000 and .5 == 0.5", "'a' < 'b'", "'abc' == \"abc\"", "+3 == 3",
        "0 == 0 or 1 / 0 == 1", /* short-circuit: the division never runs */
        "a * 2 == 8", "flag", "flag and layout == 'NT'", "layout != 'NN'", "layout < 'TN'",
        "not flag or a > 2", "-a // 3 == -2 and -a % 3 == 2 and a // 3 == 1",
        "(a*a + a*2) * 2 * a <= 232448", "1 <= a < 8 != a", "not not flag", "not a == 3"};
    for (size_t i = 0; i < sizeof truths / sizeof truths[0]; i++)
        if (!eval_at(truths[i]))
            fail_msg("'%s' should hold", truths[i]);
    static const char *const falsehoods[] = {
        "1 < 3 < 2", "2 < 1 < 3", "1 / 0 == 1", "not (1 / 0 == 1)", "5 % 0 == 0",
        "5 // 0 == 0", "0 ** -1 == 1", "(-8) ** 0.5 > 0", "not flag", "layout == 'TN'",
        "a > 4 or layout == 'NN'", "min(a, 3) == 4", "1 and 0", "flag and not 2"};
    for (size_t i = 0; i < sizeof falsehoods / sizeof falsehoods[0]; i++)
        if (eval_at(falsehoods[i]))
            fail_msg("'%s' should not hold", falsehoods[i]);
}

static void tracks_last_dimension(void **state)
{
    (void)state;
    tforge_expr *e = NULL;
    assert_int_equal(tforge_expr_parse(&e, "layout == 'NN' and a > 1", params, 3), 0);
    assert_int_equal(tforge_expr_last_dim(e), 2);
    tforge_expr_free(e);
    assert_int_equal(tforge_expr_parse(&e, "flag or a > 1", params, 3), 0);
    assert_int_equal(tforge_expr_last_dim(e), 1);
    tforge_expr_free(e);
    assert_int_equal(tforge_expr_parse(&e, "1 < 2", params, 3), 0);
    assert_int_equal(tforge_expr_last_dim(e), -1);
    tforge_expr_free(e);
}

static void rejects_bad_input_with_a_clear_message(void **state)
{
    (void)state;
    static const struct {
        const char *text, *expect1, *expect2;
    } cases[] = {
        {"a +", "column 4", "unexpected end"},
        {"(a == 1", "column 8", "expected ')'"},
        {"a = 1", "column 3", "write '=='"},
        {"a == 1 b", "column 8", "unexpected 'b'"},
        {"a > 1 and foo > 1", "column 11",
         "unknown name 'foo' (known parameters: a, flag, layout)"},
        {"a == 1 and bar(2)", "column 12", "'bar' is not a function"},
        {"layout + 1 == 2", "column 8", "categorical parameter 'layout'"},
        {"layout == 3", "column 8", "cannot compare categorical parameter 'layout'"},
        {"1 < 'x'", "column 3", "cannot compare the string 'x'"},
        {"layout == 'XX'", "column 8", "'XX' is not a value of categorical 'layout'"},
        {"-layout == 1", "column 1", "unary '-' needs numbers"},
        {"not layout", "column 1", "'not' needs numbers"},
        {"a * 2", "column 1", "must be a boolean"},
        {"layout", "column 1", "not a string"},
        {"min(a) == 1", "column 1", "two or more arguments"},
        {"1 < abs(a, a)", "column 5", "one argument"},
        {"max(a, layout) > 1", "column 8", "max() needs numbers"},
        {"min(a, 2 > 1", "column 13", "expected ',' or ')'"},
        {"a == 'x", "column 6", "string not closed"},
        {"a == 1 & 2", "column 8", "unexpected character '&'"},
        {"3x == 1", "column 1", "malformed number"},
        {"min == 1", "column 1", "'min' is a function"},
        {"", "column 1", "unexpected end"},
        {"a == == 1", "column 6", "expected a number, a name or '('"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tforge_expr *e = (tforge_expr *)&e; /* must come back NULL */
        assert_int_equal(tforge_expr_parse(&e, cases[i].text, params, 3), TFORGE_EINPUT);
        assert_null(e);
        const char *m = tforge_error_last()->message;
        char head[128];
        snprintf(head, sizeof head, "constraint '%s': ", cases[i].text);
        if (strncmp(m, head, strlen(head)) || !strstr(m, cases[i].expect1) ||
            !strstr(m, cases[i].expect2))
            fail_msg("'%s' gave \"%s\", expected \"%s\" and \"%s\"", cases[i].text, m,
                     cases[i].expect1, cases[i].expect2);
    }
}

static void limits_nesting(void **state)
{
    (void)state;
    char text[700] = "";
    for (int i = 0; i < 300; i++)
        strcat(text, "(");
    strcat(text, "1");
    tforge_expr *e = NULL;
    assert_int_equal(tforge_expr_parse(&e, text, params, 3), TFORGE_EINPUT);
    assert_non_null(strstr(tforge_error_last()->message, "nested more than"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(evaluates_like_python),
        cmocka_unit_test(tracks_last_dimension),
        cmocka_unit_test(rejects_bad_input_with_a_clear_message),
        cmocka_unit_test(limits_nesting),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
