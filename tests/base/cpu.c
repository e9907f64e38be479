#include "tforge/cpu.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* A variable the user set is left alone, and only what the call set is taken back. */
static void openblas_variables_only_where_unset(void **state)
{
    (void)state;
    unsetenv("OPENBLAS_CORETYPE");
    setenv("OPENBLAS_NUM_THREADS", "3", 1);
    int set = tforge_cpu_prepare_openblas();
    assert_false(set & TFORGE_CPU_SET_THREADS);
    assert_string_equal(getenv("OPENBLAS_NUM_THREADS"), "3");
    /* The core type is named on x86-64 machines with AVX2 or AVX-512, and only then. */
    const char *core = getenv("OPENBLAS_CORETYPE");
    assert_int_equal(!!(set & TFORGE_CPU_SET_CORETYPE), core != NULL);
    if (core)
        assert_true(strcmp(core, "SkylakeX") == 0 || strcmp(core, "Haswell") == 0);
    tforge_cpu_unset_openblas(set);
    assert_null(getenv("OPENBLAS_CORETYPE"));
    assert_string_equal(getenv("OPENBLAS_NUM_THREADS"), "3");

    unsetenv("OPENBLAS_NUM_THREADS");
    setenv("OPENBLAS_CORETYPE", "Zen", 1);
    set = tforge_cpu_prepare_openblas();
    assert_int_equal(set, TFORGE_CPU_SET_THREADS);
    assert_string_equal(getenv("OPENBLAS_NUM_THREADS"), "1");
    assert_string_equal(getenv("OPENBLAS_CORETYPE"), "Zen");
    tforge_cpu_unset_openblas(set);
    assert_null(getenv("OPENBLAS_NUM_THREADS"));
    assert_string_equal(getenv("OPENBLAS_CORETYPE"), "Zen");
    unsetenv("OPENBLAS_CORETYPE");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(openblas_variables_only_where_unset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
