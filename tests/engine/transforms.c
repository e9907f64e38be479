/* Composing span edits: sorted, applied, insertions at one place kept in owner order, and
 * overlaps or edits past the file refused naming both transforms; a transform plugin opened on a
 * kernel's IR, its parameters in a space and its variant at a point. */
#include "analysis.h"
#include "registry.h"
#include "transforms.h"
#include "tforge/error.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

extern const tforge_plugin_module tforge_static_pipeline;

static const char *const owners[] = {"first", "second"};

static void applies_edits_in_place_order(void **state)
{
    (void)state;
    const char source[] = "a = f(x)\nb = g(y)\n";
    tforge_owned_edit edits[] = {{{15, 16, "(y + 1)"}, 1},
                                 {{4, 5, "ff"}, 0},
                                 {{7, 7, ", k=1"}, 0},
                                 {{7, 7, ", j=2"}, 1}};
    char *out = NULL;
    assert_int_equal(tforge_edits_compose(&out, source, strlen(source), edits, 4, owners), 0);
    assert_string_equal(out, "a = ff(x, k=1, j=2)\nb = g((y + 1))\n");
    free(out);
}

/* An insertion of whitespace alone at a line's start indents the whole logical line: the lines
 * another edit on it writes are indented as much (a swizzle written inside a body that a tile
 * loop re-indents), the next source line is not, nor a header inserted before the indentation. */
static void indentation_carries_to_the_lines_an_edit_writes(void **state)
{
    (void)state;
    const char source[] = "    p = pid\n    q = p\n";
    tforge_owned_edit edits[] = {{{0, 0, "    for t in r:\n"}, 0},
                                 {{0, 0, "    "}, 0},
                                 {{4, 11, "a = 1\n    p = a"}, 1},
                                 {{12, 12, "    "}, 0}};
    char *out = NULL;
    assert_int_equal(tforge_edits_compose(&out, source, strlen(source), edits, 4, owners), 0);
    assert_string_equal(out, "    for t in r:\n        a = 1\n        p = a\n        q = p\n");
    free(out);
    /* without the indentation, the same rewrite as written */
    assert_int_equal(tforge_edits_compose(&out, source, strlen(source), edits + 2, 1, owners), 0);
    assert_string_equal(out, "    a = 1\n    p = a\n    q = p\n");
    free(out);
}

static void refuses_overlaps_and_edits_past_the_end(void **state)
{
    (void)state;
    const char source[] = "a = f(x)\nb = g(y)\n";
    tforge_owned_edit overlap[] = {{{4, 8, "h(z)"}, 0}, {{6, 6, "w, "}, 1}};
    char *out = NULL;
    assert_int_equal(tforge_edits_compose(&out, source, strlen(source), overlap, 2, owners),
                     TFORGE_ERROR);
    assert_null(out);
    const char *msg = tforge_error_last()->message;
    assert_non_null(strstr(msg, "transform 'first' at line 1"));
    assert_non_null(strstr(msg, "transform 'second' at line 1"));
    tforge_owned_edit same[] = {{{13, 14, "z"}, 0}, {{13, 14, "w"}, 1}};
    assert_int_equal(tforge_edits_compose(&out, source, strlen(source), same, 2, owners),
                     TFORGE_ERROR);
    tforge_owned_edit past[] = {{{10, 40, "z"}, 1}};
    assert_int_equal(tforge_edits_compose(&out, source, strlen(source), past, 1, owners),
                     TFORGE_ERROR);
    assert_non_null(strstr(tforge_error_last()->message, "transform 'second'"));
}

/* One kernel with a `range` loop that loads, written as the analysis would give it. */
static const char kernel_source[] =
    "@triton.jit\n"
    "def k(x_ptr, n, BLOCK: tl.constexpr):\n"
    "    for i in range(0, n, BLOCK):\n"
    "        v = tl.load(x_ptr + i)\n";
#define SPAN(l, c, el, ec, s, e)                                                                   \
    "{\"line\": " #l ", \"col\": " #c ", \"end_line\": " #el ", \"end_col\": " #ec                \
    ", \"start\": " #s ", \"end\": " #e "}"
static const char kernel_ir[] =
    "{\"path\": \"k.py\", \"kernels\": [{\"name\": \"k\", \"language\": \"tl\", \"span\": "
    SPAN(2, 0, 4, 30, 12, 113) ", \"params\": [],"
    " \"loops\": [{\"kind\": \"range\", \"var\": \"i\", \"start\": \"0\", \"stop\": \"n\","
    "   \"step\": \"BLOCK\", \"trip_count\": \"cdiv(n, BLOCK)\", \"depth\": 0, \"options\": {},"
    "   \"span\": " SPAN(3, 4, 4, 30, 54, 113) ", \"iter_span\": " SPAN(3, 13, 3, 31, 63, 81)
    ",   \"func_span\": " SPAN(3, 13, 3, 18, 63, 68) "}],"
    " \"memops\": [{\"op\": \"load\", \"pointer\": \"x_ptr + i\", \"block_pointer\": false,"
    "   \"descriptor\": false, \"in_loop\": true, \"span\": " SPAN(4, 12, 4, 30, 95, 113) "}]}]}";

static void opens_a_transform_and_makes_its_variant(void **state)
{
    (void)state;
    tforge_registry *registry = NULL;
    tforge_ir_file *ir = NULL;
    tforge_transforms *t = NULL;
    tforge_space *space = NULL;
    assert_int_equal(tforge_registry_new(&registry), 0);
    assert_int_equal(tforge_registry_add_static(registry, &tforge_static_pipeline, "test"), 0);
    assert_int_equal(tforge_ir_parse(&ir, kernel_ir, "k.py"), 0);
    assert_int_equal(tforge_transforms_open(&t, registry, NULL, &ir->kernels[0], kernel_source,
                                            strlen(kernel_source), NULL, 0, NULL),
                     0);
    assert_int_equal(tforge_transforms_count(t), 1);
    assert_string_equal(tforge_transforms_id(t, 0), "pipeline");
    assert_int_equal(tforge_space_new(&space), 0);
    assert_int_equal(tforge_transforms_add_to_space(t, space), 0);
    assert_int_equal(tforge_space_build(space, NULL), 0);
    int stages = tforge_space_find(space, "loop0_stages");
    assert_true(stages >= 0);
    tforge_level point[8] = {0};
    char *variant = NULL;
    assert_int_equal(tforge_transforms_variant(&variant, t, space, point, SIZE_MAX), 0);
    assert_null(variant); /* level 0 everywhere: the file as it is */
    point[stages] = 3;    /* num_stages=3 */
    assert_int_equal(tforge_transforms_variant(&variant, t, space, point, SIZE_MAX), 0);
    assert_non_null(strstr(variant, "for i in tl.range(0, n, BLOCK, num_stages=3):\n"));
    free(variant);
    assert_int_equal(tforge_transforms_variant(&variant, t, space, point, 0), 0);
    assert_null(variant); /* the only transform left out */
    /* a second space with the parameter already in it is refused, naming the transform */
    tforge_space *again = NULL;
    assert_int_equal(tforge_space_new(&again), 0);
    assert_int_equal(tforge_space_add_boolean(again, "loop0_stages"), 0);
    assert_int_equal(tforge_transforms_add_to_space(t, again), TFORGE_EINPUT);
    assert_non_null(strstr(tforge_error_last()->message, "transform 'pipeline'"));
    tforge_space_free(again);
    tforge_space_free(space);
    tforge_transforms_free(t);
    tforge_ir_free(ir);
    tforge_registry_free(registry);
}

/* Levels whose edits overlap (the fixture transform rewrites the iterator pipeline appends to)
 * become a constraint: such a point is not valid in the space. */
static void overlapping_levels_are_excluded_from_the_space(void **state)
{
    (void)state;
    tforge_registry *registry = NULL;
    tforge_ir_file *ir = NULL;
    tforge_transforms *t = NULL;
    tforge_space *space = NULL;
    assert_int_equal(tforge_registry_new(&registry), 0);
    assert_int_equal(tforge_registry_add_static(registry, &tforge_static_pipeline, "test"), 0);
    assert_int_equal(tforge_registry_load_file(registry, FIXTURE_TRANSFORM_DIR "/fixture-clobber.so"),
                     0);
    assert_int_equal(tforge_ir_parse(&ir, kernel_ir, "k.py"), 0);
    assert_int_equal(tforge_transforms_open(&t, registry, NULL, &ir->kernels[0], kernel_source,
                                            strlen(kernel_source), NULL, 0, NULL),
                     0);
    assert_int_equal(tforge_transforms_count(t), 2);
    assert_int_equal(tforge_space_new(&space), 0);
    assert_int_equal(tforge_transforms_add_to_space(t, space), 0);
    assert_int_equal(tforge_space_build(space, NULL), 0);
    tforge_level point[8] = {0};
    int stages = tforge_space_find(space, "loop0_stages");
    int clobber = tforge_space_find(space, "clobber");
    assert_true(stages >= 0 && clobber >= 0);
    point[clobber] = 1;
    assert_true(tforge_space_is_valid(space, point)); /* alone, it composes */
    point[stages] = 2;
    assert_false(tforge_space_is_valid(space, point)); /* with pipeline's options, never */
    point[clobber] = 0;
    assert_true(tforge_space_is_valid(space, point));
    tforge_space_free(space);
    tforge_transforms_free(t);
    tforge_ir_free(ir);
    tforge_registry_free(registry);
}

/* A transform's failure at a point reaches the caller (a failed candidate's message) as the
 * plugin said it, after the transform's name: not garbled by quoting the last error. */
static void a_refused_level_is_named_in_the_variants_error(void **state)
{
    (void)state;
    tforge_registry *registry = NULL;
    tforge_ir_file *ir = NULL;
    tforge_transforms *t = NULL;
    tforge_space *space = NULL;
    assert_int_equal(tforge_registry_new(&registry), 0);
    assert_int_equal(tforge_registry_load_file(registry, FIXTURE_TRANSFORM_DIR "/fixture-clobber.so"),
                     0);
    assert_int_equal(tforge_ir_parse(&ir, kernel_ir, "k.py"), 0);
    assert_int_equal(tforge_transforms_open(&t, registry, NULL, &ir->kernels[0], kernel_source,
                                            strlen(kernel_source), NULL, 0, NULL),
                     0);
    assert_int_equal(tforge_space_new(&space), 0);
    assert_int_equal(tforge_transforms_add_to_space(t, space), 0);
    assert_int_equal(tforge_space_build(space, NULL), 0);
    tforge_level point[1] = {7};
    char *variant = NULL;
    assert_int_equal(tforge_transforms_variant(&variant, t, space, point, SIZE_MAX), TFORGE_EINPUT);
    assert_null(variant);
    assert_int_equal(tforge_error_last()->code, TFORGE_EINPUT);
    assert_string_equal(tforge_error_last()->message,
                        "transform 'clobber': dimension clobber: value 7 is not a level");
    tforge_space_free(space);
    tforge_transforms_free(t);
    tforge_ir_free(ir);
    tforge_registry_free(registry);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(applies_edits_in_place_order),
        cmocka_unit_test(indentation_carries_to_the_lines_an_edit_writes),
        cmocka_unit_test(refuses_overlaps_and_edits_past_the_end),
        cmocka_unit_test(opens_a_transform_and_makes_its_variant),
        cmocka_unit_test(overlapping_levels_are_excluded_from_the_space),
        cmocka_unit_test(a_refused_level_is_named_in_the_variants_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
