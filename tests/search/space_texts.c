/* The space's one converter of a point: level texts, and the format, key and JSON forms. */
#include "tforge/error.h"
#include "tforge/space.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void numbers_read_as_python_prints_them(void **state)
{
    (void)state;
    static const struct {
        double value;
        const char *text;
    } cases[] = {{3, "3"},          {-2, "-2"},       {0.5, "0.5"},     {0.1, "0.1"},
                 {1e-05, "1e-05"},  {0.0001, "0.0001"}, {1.5e-07, "1.5e-07"},
                 {123456.789, "123456.789"}, {3.976191997528076, "3.976191997528076"},
                 {1e22, "1e+22"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char buf[32];
        tforge_space_number_text(buf, sizeof buf, cases[i].value);
        assert_string_equal(buf, cases[i].text);
    }
}

/* BM in {16, 32, 0.5}, kind in {"a\"b", "plain"}, flag boolean. */
static tforge_space *mixed_space(void)
{
    tforge_space *s;
    const double bm[] = {32, 16, 0.5};
    const char *const kinds[] = {"plain", "a\"b"};
    assert_int_equal(tforge_space_new(&s), 0);
    assert_int_equal(tforge_space_add_values(s, "BM", bm, 3), 0);
    assert_int_equal(tforge_space_add_categorical(s, "kind", kinds, 2), 0);
    assert_int_equal(tforge_space_add_boolean(s, "flag"), 0);
    return s;
}

static void a_point_has_one_text_in_each_form(void **state)
{
    (void)state;
    tforge_space *s = mixed_space();
    assert_int_equal(tforge_space_build(s, NULL), 0);
    const tforge_level p[] = {2, 1, 1}; /* BM 32, kind a"b, flag True */
    char *text;
    assert_int_equal(tforge_space_format(&text, s, p, NULL), 0);
    assert_string_equal(text, "BM=32, kind=a\"b, flag=True");
    free(text);
    assert_int_equal(tforge_space_key(&text, s, p), 0);
    assert_string_equal(text, "32,a\"b,True");
    free(text);
    assert_int_equal(tforge_space_json(&text, s, p, NULL), 0);
    assert_string_equal(text, "{\"BM\":32,\"kind\":\"a\\\"b\",\"flag\":true}");
    free(text);
    const unsigned char which[] = {1, 0, 1};
    assert_int_equal(tforge_space_json(&text, s, p, which), 0);
    assert_string_equal(text, "{\"BM\":32,\"flag\":true}");
    free(text);
    const unsigned char none[] = {0, 0, 0};
    assert_int_equal(tforge_space_format(&text, s, p, none), 0);
    assert_string_equal(text, "");
    free(text);
    const tforge_level q[] = {0, 0, 0};
    assert_int_equal(tforge_space_key(&text, s, q), 0);
    assert_string_equal(text, "0.5,plain,False");
    free(text);
    const tforge_level bad[] = {3, 0, 0};
    assert_int_equal(tforge_space_key(&text, s, bad), TFORGE_EINPUT);
    tforge_space_free(s);
}

static void texts_read_back_as_levels(void **state)
{
    (void)state;
    tforge_space *s = mixed_space();
    assert_int_equal(tforge_space_build(s, NULL), 0);
    for (uint32_t d = 0; d < tforge_space_dims(s); d++)
        for (uint32_t l = 0; l < tforge_space_levels(s, d); l++)
            assert_int_equal(tforge_space_level_of(s, d, tforge_space_text(s, d, l)), l);
    assert_int_equal(tforge_space_level_of(s, 0, "64"), -1);
    assert_int_equal(tforge_space_level_of(s, 2, "true"), 1);
    tforge_space_free(s);
}

/* A recorded space keeps its texts ("1.0"), so that its keys are the recording's own. */
static void given_texts_are_kept(void **state)
{
    (void)state;
    tforge_space *s = mixed_space();
    const char *const texts[] = {"0.50", "16.0", "32"};
    const char *const wrong[] = {"0.5", "17", "32"};
    assert_int_equal(tforge_space_set_texts(s, 0, wrong), TFORGE_EINPUT);
    assert_non_null(strstr(tforge_error_last()->message, "'BM': text '17' of level 1"));
    assert_int_equal(tforge_space_set_texts(s, 1, texts), TFORGE_EINPUT); /* categorical */
    assert_int_equal(tforge_space_set_texts(s, 0, texts), 0);
    assert_int_equal(tforge_space_build(s, NULL), 0);
    assert_int_equal(tforge_space_set_texts(s, 0, texts), TFORGE_EINPUT); /* built */
    const tforge_level p[] = {1, 0, 0};
    char *text;
    assert_int_equal(tforge_space_key(&text, s, p), 0);
    assert_string_equal(text, "16.0,plain,False");
    free(text);
    assert_int_equal(tforge_space_json(&text, s, p, NULL), 0);
    assert_string_equal(text, "{\"BM\":16.0,\"kind\":\"plain\",\"flag\":false}");
    free(text);
    tforge_space_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(numbers_read_as_python_prints_them),
        cmocka_unit_test(a_point_has_one_text_in_each_form),
        cmocka_unit_test(texts_read_back_as_levels),
        cmocka_unit_test(given_texts_are_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
