#include "tforge/error.h"
#include "tforge/space.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void expect_error(int rc, int code, const char *part1, const char *part2)
{
    const char *m = tforge_error_last()->message;
    if (rc != code || !strstr(m, part1) || (part2 && !strstr(m, part2)))
        fail_msg("got %d \"%s\", expected %d with \"%s\" and \"%s\"", rc, m, code, part1,
                 part2 ? part2 : "");
}

static void parameter_errors_name_the_parameter(void **state)
{
    (void)state;
    tforge_space *s;
    const double twice[] = {1, 2, 1}, inf[] = {1, INFINITY};
    const char *const labels[] = {"x", "y", "x"};
    assert_int_equal(tforge_space_new(&s), 0);
    assert_int_equal(tforge_space_add_range(s, "BM", 16, 64, 16), 0);
    expect_error(tforge_space_add_boolean(s, "BM"), TFORGE_EINPUT, "'BM' is defined twice", 0);
    expect_error(tforge_space_add_range(s, "lohi", 5, 3, 1), TFORGE_EINPUT, "'lohi'", "lo <= hi");
    expect_error(tforge_space_add_range(s, "step", 1, 3, 0), TFORGE_EINPUT, "'step'", "step > 0");
    expect_error(tforge_space_add_range(s, "big", 0, 65535, 1), TFORGE_EINPUT, "'big'",
                 "65536 values, at most 65535");
    assert_int_equal(tforge_space_add_range(s, "most", 1, 65535, 1), 0);
    expect_error(tforge_space_add_values(s, "none", twice, 0), TFORGE_EINPUT, "'none': no values",
                 0);
    expect_error(tforge_space_add_values(s, "dup", twice, 3), TFORGE_EINPUT, "'dup'",
                 "value 1 given twice");
    expect_error(tforge_space_add_values(s, "inf", inf, 2), TFORGE_EINPUT, "'inf'", "not finite");
    expect_error(tforge_space_add_categorical(s, "lab", labels, 3), TFORGE_EINPUT, "'lab'",
                 "'x' given twice");
    expect_error(tforge_space_add_boolean(s, "a-b"), TFORGE_EINPUT, "'a-b'", "identifier");
    expect_error(tforge_space_add_boolean(s, "max"), TFORGE_EINPUT, "'max'", "word");
    assert_int_equal(tforge_space_dims(s), 2); /* failures added nothing */
    assert_int_equal(tforge_space_build(s, NULL), 0);
    expect_error(tforge_space_add_boolean(s, "late"), TFORGE_EINPUT, "'late'", "already built");
    expect_error(tforge_space_add_constraint(s, "BM > 1"), TFORGE_EINPUT, "already built", 0);
    tforge_space_free(s);
}

static void levels_values_and_labels(void **state)
{
    (void)state;
    tforge_space *s;
    const double unsorted[] = {8, 1, 4, 2};
    const char *const labels[] = {"NT", "NN"};
    assert_int_equal(tforge_space_new(&s), 0);
    assert_int_equal(tforge_space_add_values(s, "w", unsorted, 4), 0);
    assert_int_equal(tforge_space_add_range(s, "r", -3, 7, 5), 0);
    assert_int_equal(tforge_space_add_categorical(s, "layout", labels, 2), 0);
    assert_int_equal(tforge_space_add_boolean(s, "tma"), 0);
    assert_int_equal(tforge_space_levels(s, 0), 4);
    for (uint32_t l = 0; l < 4; l++) /* sorted ascending */
        assert_true(tforge_space_value(s, 0, l) == (double)(1u << l));
    assert_int_equal(tforge_space_levels(s, 1), 3);
    assert_true(tforge_space_value(s, 1, 2) == 7);
    assert_int_equal(tforge_space_kind(s, 2), TFORGE_DIM_CATEGORICAL);
    assert_string_equal(tforge_space_label(s, 2, 0), "NT"); /* categoricals keep their order */
    assert_null(tforge_space_label(s, 0, 0));
    assert_int_equal(tforge_space_kind(s, 3), TFORGE_DIM_BOOLEAN);
    assert_true(tforge_space_value(s, 3, 1) == 1);
    assert_string_equal(tforge_space_name(s, 3), "tma");
    assert_int_equal(tforge_space_find(s, "layout"), 2);
    assert_int_equal(tforge_space_find(s, "nope"), -1);
    assert_int_equal(tforge_space_raw_count(s), 4 * 3 * 2 * 2);
    tforge_space_free(s);
}

/* ---- enumeration against a brute-force loop with a directly coded predicate ---- */

typedef int (*predicate)(const tforge_space *s, const tforge_level *p);
#define V(d) tforge_space_value(s, d, p[d])
#define L(d) tforge_space_label(s, d, p[d])

static const double pow2[] = {16, 32, 64, 128, 256}, warps[] = {2, 4, 8};

static tforge_space *tile_space(void)
{
    tforge_space *s;
    const double ys[] = {1, 2, 4, 8, 16, 32};
    assert_int_equal(tforge_space_new(&s), 0);
    assert_int_equal(tforge_space_add_range(s, "block_size_x", 16, 1024, 16), 0);
    assert_int_equal(tforge_space_add_values(s, "block_size_y", ys, 6), 0);
    assert_int_equal(tforge_space_add_constraint(s, "block_size_x*block_size_y<=1024"), 0);
    assert_int_equal(tforge_space_add_constraint(s, "block_size_x % 32 == 0 or block_size_y == 1"),
                     0);
    return s;
}

static int tile_ok(const tforge_space *s, const tforge_level *p)
{
    return V(0) * V(1) <= 1024 && (fmod(V(0), 32) == 0 || V(1) == 1);
}

static tforge_space *gemm_space(void)
{
    tforge_space *s;
    assert_int_equal(tforge_space_new(&s), 0);
    assert_int_equal(tforge_space_add_values(s, "BM", pow2, 5), 0);
    assert_int_equal(tforge_space_add_values(s, "BN", pow2, 5), 0);
    assert_int_equal(tforge_space_add_values(s, "BK", pow2, 5), 0);
    assert_int_equal(tforge_space_add_range(s, "num_stages", 1, 5, 1), 0);
    assert_int_equal(tforge_space_add_values(s, "num_warps", warps, 3), 0);
    assert_int_equal(tforge_space_add_range(s, "GROUP_M", 1, 8, 1), 0);
    assert_int_equal(tforge_space_add_constraint(s, "(BM*BK + BK*BN) * 2 * num_stages <= 232448"),
                     0);
    assert_int_equal(tforge_space_add_constraint(s, "BM * BN // (num_warps * 32) >= 16"), 0);
    assert_int_equal(tforge_space_add_constraint(s, "GROUP_M <= max(BM // 32, 1) + 1"), 0);
    return s;
}

static int gemm_ok(const tforge_space *s, const tforge_level *p)
{
    return (V(0) * V(2) + V(2) * V(1)) * 2 * V(3) <= 232448 &&
           floor(V(0) * V(1) / (V(4) * 32)) >= 16 && V(5) <= fmax(floor(V(0) / 32), 1) + 1;
}

static tforge_space *mixed_space(void)
{
    tforge_space *s;
    const char *const layouts[] = {"NN", "NT", "TN", "TT"};
    const double split[] = {1, 2, 4, 8}, bm[] = {32, 64, 128};
    assert_int_equal(tforge_space_new(&s), 0);
    assert_int_equal(tforge_space_add_categorical(s, "layout", layouts, 4), 0);
    assert_int_equal(tforge_space_add_boolean(s, "use_tma"), 0);
    assert_int_equal(tforge_space_add_values(s, "split_k", split, 4), 0);
    assert_int_equal(tforge_space_add_values(s, "BM", bm, 3), 0);
    assert_int_equal(tforge_space_add_constraint(
                         s, "not use_tma || layout == 'NN' || layout == \"TN\""), 0);
    assert_int_equal(tforge_space_add_constraint(s, "split_k == 1 or BM <= 64"), 0);
    assert_int_equal(tforge_space_add_constraint(s, "use_tma + (split_k > 2) < 2"), 0);
    return s;
}

static int mixed_ok(const tforge_space *s, const tforge_level *p)
{
    int tma = p[1];
    return (!tma || !strcmp(L(0), "NN") || !strcmp(L(0), "TN")) && (V(2) == 1 || V(3) <= 64) &&
           tma + (V(2) > 2) < 2;
}

static void check_against_brute_force(tforge_space *s, predicate ok)
{
    uint32_t n = tforge_space_dims(s);
    tforge_level p[8] = {0}, q[8];
    uint64_t valid = 0;
    assert_int_equal(tforge_space_build(s, NULL), 0);
    for (uint64_t r = 0; r < tforge_space_raw_count(s); r++) {
        uint64_t rest = r;
        for (uint32_t d = n; d-- > 0;) {
            p[d] = (tforge_level)(rest % tforge_space_levels(s, d));
            rest /= tforge_space_levels(s, d);
        }
        int good = ok(s, p);
        valid += (uint64_t)good;
        assert_int_equal(tforge_space_is_valid(s, p), good);
        uint64_t i = tforge_space_index_of(s, p);
        assert_true(good ? i != TFORGE_NO_INDEX : i == TFORGE_NO_INDEX);
        if (good) { /* index_of and point are inverse */
            assert_int_equal(tforge_space_point(q, s, i), 0);
            assert_memory_equal(p, q, n * sizeof *p);
        }
    }
    assert_true(valid > 0 && valid < tforge_space_raw_count(s)); /* the constraints matter */
    assert_int_equal(tforge_space_count(s), valid);
    tforge_space_free(s);
}

static void enumeration_matches_brute_force(void **state)
{
    (void)state;
    check_against_brute_force(tile_space(), tile_ok);
    check_against_brute_force(gemm_space(), gemm_ok);
    check_against_brute_force(mixed_space(), mixed_ok);
}

/* ---- sampling ---- */

/* Draws 200 samples per valid point of the tile space and returns Pearson's chi-square against
 * the uniform distribution, with `count` - 1 degrees of freedom. */
static double chi_square(const tforge_space *s, const tforge_space *enumerated, uint64_t count)
{
    uint64_t draws = 200 * count, *seen = calloc(count, sizeof *seen);
    tforge_rng rng;
    tforge_level p[2];
    tforge_rng_seed(&rng, 42);
    for (uint64_t t = 0; t < draws; t++) {
        assert_int_equal(tforge_space_sample(p, s, &rng), 0);
        uint64_t i = tforge_space_index_of(enumerated, p);
        assert_true(i < count);
        seen[i]++;
    }
    double chi2 = 0;
    for (uint64_t i = 0; i < count; i++)
        chi2 += (seen[i] - 200.0) * (seen[i] - 200.0) / 200.0;
    free(seen);
    return chi2;
}

static void sampling_is_uniform(void **state)
{
    (void)state;
    tforge_space *s = tile_space(), *r = tile_space();
    tforge_space_build_options rejecting = TFORGE_SPACE_BUILD_OPTIONS_INIT;
    rejecting.enumerate_limit = 0;
    assert_int_equal(tforge_space_build(s, NULL), 0);
    assert_int_equal(tforge_space_build(r, &rejecting), 0);
    assert_int_equal(tforge_space_count(r), 0);
    uint64_t k = tforge_space_count(s);
    assert_true(k > 50);
    /* Chi-square with df = k - 1 has mean df and variance 2 df; by the Wilson-Hilferty
     * approximation, df + 5 sqrt(2 df) is exceeded with probability below 1e-4 for df >= 50. */
    double df = (double)(k - 1), limit = df + 5 * sqrt(2 * df);
    assert_true(chi_square(s, s, k) < limit);
    assert_true(chi_square(r, s, k) < limit);
    tforge_space_free(s);
    tforge_space_free(r);
}

static void rejection_sampling_gives_up_clearly(void **state)
{
    (void)state;
    tforge_space *s;
    tforge_space_build_options options = TFORGE_SPACE_BUILD_OPTIONS_INIT;
    options.enumerate_limit = 0;
    options.max_tries = 20000; /* one valid point in 10^4: a sample fails with probability e^-2 */
    assert_int_equal(tforge_space_new(&s), 0);
    assert_int_equal(tforge_space_add_range(s, "x", 0, 999, 1), 0);
    assert_int_equal(tforge_space_add_range(s, "y", 0, 9, 1), 0);
    assert_int_equal(tforge_space_add_constraint(s, "x == 7 and y == 3"), 0);
    assert_int_equal(tforge_space_build(s, &options), 0);
    tforge_rng rng;
    tforge_level p[2];
    int failures = 0;
    tforge_rng_seed(&rng, 3);
    for (int i = 0; i < 100; i++) {
        int rc = tforge_space_sample(p, s, &rng);
        if (rc == 0) {
            assert_true(p[0] == 7 && p[1] == 3);
            continue;
        }
        expect_error(rc, TFORGE_ERROR, "no valid point in 20000 random draws",
                     "valid fraction looks below 1/20000");
        failures++;
    }
    assert_in_range(failures, 1, 40);
    tforge_space_free(s);
}

/* ---- neighbours, text, errors, view ---- */

static tforge_space *small_space(void)
{
    tforge_space *s;
    const double a[] = {1, 2, 4, 8};
    const char *const c[] = {"x", "y", "z"};
    assert_int_equal(tforge_space_new(&s), 0);
    assert_int_equal(tforge_space_add_values(s, "a", a, 4), 0);
    assert_int_equal(tforge_space_add_categorical(s, "c", c, 3), 0);
    assert_int_equal(tforge_space_add_boolean(s, "f"), 0);
    assert_int_equal(tforge_space_add_constraint(s, "f or a < 8"), 0);
    assert_int_equal(tforge_space_add_constraint(s, "not (a == 1 and c == 'z')"), 0);
    assert_int_equal(tforge_space_build(s, NULL), 0);
    return s;
}

static void neighbours_of_a_small_space(void **state)
{
    (void)state;
    tforge_space *s = small_space();
    tforge_level out[8 * 3];
    size_t n;
    assert_int_equal(tforge_space_max_neighbours(s), 2 + 2 + 1);
    const tforge_level p[] = {2, 1, 0}; /* a=4, c=y, f=False; a=8 is invalid without f */
    const tforge_level want[] = {1, 1, 0, 2, 0, 0, 2, 2, 0, 2, 1, 1};
    assert_int_equal(tforge_space_neighbours(out, &n, s, p, 8), 0);
    assert_int_equal(n, 4);
    assert_memory_equal(out, want, sizeof want);
    const tforge_level q[] = {1, 2, 0}; /* a=2, c=z: a=1 is invalid with c=z */
    const tforge_level want_q[] = {2, 2, 0, 1, 0, 0, 1, 1, 0, 1, 2, 1};
    assert_int_equal(tforge_space_neighbours(out, &n, s, q, 8), 0);
    assert_int_equal(n, 4);
    assert_memory_equal(out, want_q, sizeof want_q);
    expect_error(tforge_space_neighbours(out, &n, s, q, 4), TFORGE_EINPUT, "5 needed", 0);
    tforge_space_free(s);
}

static void formats_and_parses_points(void **state)
{
    (void)state;
    tforge_space *s = small_space();
    const tforge_level p[] = {3, 2, 1};
    tforge_level q[3];
    char *text;
    assert_int_equal(tforge_space_format(&text, s, p, NULL), 0);
    assert_string_equal(text, "a=8, c=z, f=True");
    free(text);
    const char *names[] = {"f", "a", "c"}, *values[] = {"true", "8", "z"};
    assert_int_equal(tforge_space_parse_point(q, s, names, values, 3), 0);
    assert_memory_equal(p, q, sizeof p);
    values[1] = "3";
    expect_error(tforge_space_parse_point(q, s, names, values, 3), TFORGE_EINPUT,
                 "parameter 'a' has no value '3'", 0);
    values[1] = "8";
    names[2] = "d";
    expect_error(tforge_space_parse_point(q, s, names, values, 3), TFORGE_ENOTFOUND,
                 "unknown parameter 'd'", 0);
    expect_error(tforge_space_parse_point(q, s, names, values, 2), TFORGE_EINPUT,
                 "parameter 'c' is missing", 0);
    tforge_space_free(s);

    const double halves[] = {0.1, 2.5, 1e6};
    assert_int_equal(tforge_space_new(&s), 0);
    assert_int_equal(tforge_space_add_values(s, "h", halves, 3), 0);
    const tforge_level l0[] = {0}, l2[] = {2};
    assert_int_equal(tforge_space_format(&text, s, l0, NULL), 0);
    assert_string_equal(text, "h=0.1");
    free(text);
    assert_int_equal(tforge_space_format(&text, s, l2, NULL), 0);
    assert_string_equal(text, "h=1000000");
    free(text);
    tforge_space_free(s);
}

static void empty_spaces_are_errors(void **state)
{
    (void)state;
    tforge_space *s = tile_space();
    assert_int_equal(tforge_space_add_constraint(s, "block_size_y > 16"), 0);
    assert_int_equal(tforge_space_add_constraint(s, "block_size_x > 64"), 0);
    expect_error(tforge_space_build(s, NULL), TFORGE_EINPUT, "no valid point",
                 "constraint 'block_size_x*block_size_y<=1024' rejected the most");
    tforge_space_free(s);

    s = tile_space();
    tforge_space_build_options rejecting = TFORGE_SPACE_BUILD_OPTIONS_INIT;
    rejecting.enumerate_limit = 10;
    rejecting.max_tries = 1000;
    assert_int_equal(tforge_space_add_constraint(s, "block_size_x == 1"), 0);
    expect_error(tforge_space_build(s, &rejecting), TFORGE_EINPUT, "1000 uniform draws",
                 "'block_size_x*block_size_y<=1024' rejected the most");
    tforge_space_free(s);

    s = tile_space();
    assert_int_equal(tforge_space_add_constraint(s, "1 > 2"), 0);
    expect_error(tforge_space_build(s, NULL), TFORGE_EINPUT, "'1 > 2' is always false", 0);
    tforge_space_free(s);

    assert_int_equal(tforge_space_new(&s), 0);
    expect_error(tforge_space_build(s, NULL), TFORGE_EINPUT, "no parameters", 0);
    tforge_space_free(s);
}

static void view_calls_into_the_space(void **state)
{
    (void)state;
    tforge_space *s = small_space();
    tforge_space_view v = tforge_space_get_view(s);
    tforge_level p[3], q[3];
    tforge_rng rng;
    assert_int_equal(v.struct_size, sizeof v);
    assert_int_equal(v.dims(v.context), 3);
    assert_int_equal(v.levels(v.context, 1), 3);
    assert_int_equal(v.kind(v.context, 2), TFORGE_DIM_BOOLEAN);
    assert_string_equal(v.name(v.context, 1), "c");
    assert_true(v.value(v.context, 0, 3) == 8);
    assert_int_equal(v.count(v.context), tforge_space_count(s));
    tforge_rng_seed(&rng, 7);
    assert_int_equal(v.sample(v.context, &rng, p), 0);
    assert_true(v.is_valid(v.context, p));
    v.point(v.context, v.index_of(v.context, p), q);
    assert_memory_equal(p, q, sizeof p);
    const tforge_level bad[] = {3, 0, 0}, out_of_range[] = {4, 0, 0};
    assert_false(v.is_valid(v.context, bad));
    assert_false(v.is_valid(v.context, out_of_range));
    assert_true(v.index_of(v.context, bad) == TFORGE_NO_INDEX);
    tforge_space_free(s);
}

/* A recorded space: only the listed points that satisfy the constraints are valid. */
static void restricted_to_listed_points(void **state)
{
    (void)state;
    tforge_space *s;
    assert_int_equal(tforge_space_new(&s), 0);
    assert_int_equal(tforge_space_add_range(s, "a", 0, 9, 1), 0);
    assert_int_equal(tforge_space_add_range(s, "b", 0, 9, 1), 0);
    assert_int_equal(tforge_space_add_constraint(s, "a != 5"), 0);
    const tforge_level listed[] = {7, 1, 5, 5, 2, 3, 0, 9};
    assert_int_equal(tforge_space_restrict(s, listed, 4), 0);
    assert_int_equal(tforge_space_build(s, NULL), 0);
    assert_int_equal(tforge_space_count(s), 3); /* (5,5) breaks the constraint */
    tforge_level p[2];
    assert_int_equal(tforge_space_point(p, s, 0), 0);
    assert_int_equal(p[0], 0);
    assert_int_equal(p[1], 9);
    const tforge_level in[] = {2, 3}, out[] = {2, 4}, broken[] = {5, 5};
    assert_int_equal(tforge_space_index_of(s, in), 1);
    assert_true(tforge_space_is_valid(s, in));
    assert_false(tforge_space_is_valid(s, out));
    assert_false(tforge_space_is_valid(s, broken));
    expect_error(tforge_space_restrict(s, listed, 1), TFORGE_EINPUT, "before the build", 0);
    tforge_space_free(s);

    assert_int_equal(tforge_space_new(&s), 0);
    assert_int_equal(tforge_space_add_range(s, "a", 0, 9, 1), 0);
    const tforge_level twice[] = {3, 4, 3};
    assert_int_equal(tforge_space_restrict(s, twice, 3), 0);
    expect_error(tforge_space_build(s, NULL), TFORGE_EINPUT, "a=3", "allowed twice");
    tforge_space_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parameter_errors_name_the_parameter),
        cmocka_unit_test(levels_values_and_labels),
        cmocka_unit_test(enumeration_matches_brute_force),
        cmocka_unit_test(sampling_is_uniform),
        cmocka_unit_test(rejection_sampling_gives_up_clearly),
        cmocka_unit_test(neighbours_of_a_small_space),
        cmocka_unit_test(formats_and_parses_points),
        cmocka_unit_test(empty_spaces_are_errors),
        cmocka_unit_test(view_calls_into_the_space),
        cmocka_unit_test(restricted_to_listed_points),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
