#include "transforms.h"
#include "tforge/error.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

/* The ids in order, empty items skipped, NULL after the last; none for NULL or an empty list. */
static void ids_split_in_order(void **state)
{
    (void)state;
    tforge_transform_ids list;
    assert_int_equal(tforge_transform_ids_split(&list, ",exp2,,pipeline,"), 0);
    assert_int_equal(list.n, 2);
    assert_string_equal(list.ids[0], "exp2");
    assert_string_equal(list.ids[1], "pipeline");
    assert_null(list.ids[2]);
    tforge_transform_ids_free(&list);
    assert_null(list.text);

    assert_int_equal(tforge_transform_ids_split(&list, NULL), 0);
    assert_int_equal(list.n, 0);
    assert_null(list.ids[0]);
    tforge_transform_ids_free(&list);
    assert_int_equal(tforge_transform_ids_split(&list, ""), 0);
    assert_int_equal(list.n, 0);
    tforge_transform_ids_free(&list);
}

/* TFORGE_MAX_TRANSFORM_IDS ids are taken; one more is refused rather than dropped. */
static void too_many_ids_refused(void **state)
{
    (void)state;
    char text[TFORGE_MAX_TRANSFORM_IDS * 4 + 8] = "";
    for (int i = 0; i < TFORGE_MAX_TRANSFORM_IDS; i++)
        snprintf(text + strlen(text), sizeof text - strlen(text), "%st%d", i ? "," : "", i);
    tforge_transform_ids list;
    assert_int_equal(tforge_transform_ids_split(&list, text), 0);
    assert_int_equal(list.n, TFORGE_MAX_TRANSFORM_IDS);
    assert_string_equal(list.ids[TFORGE_MAX_TRANSFORM_IDS - 1], "t63");
    assert_null(list.ids[TFORGE_MAX_TRANSFORM_IDS]);
    tforge_transform_ids_free(&list);

    strcat(text, ",t64");
    assert_int_equal(tforge_transform_ids_split(&list, text), TFORGE_EINPUT);
    assert_non_null(strstr(tforge_error_last()->message, "more than 64 ids"));
    tforge_transform_ids_free(&list);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ids_split_in_order),
        cmocka_unit_test(too_many_ids_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
