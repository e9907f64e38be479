/* `tforge analyze`'s notes: each kernel's tile_logic sentence printed after the report, only the
 * kernel asked for with --kernel, nothing for a kernel without findings. */
#include "analysis.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static const char doc[] =
    "{\"path\": \"k.py\", \"kernels\": ["
    " {\"name\": \"copy_rows\", \"tile_logic\": [{\"op\": \"and\", \"text\": \"a and b\","
    "   \"note\": \"k.py:19: `a and b`: Python's `and` of tiles\"}]},"
    " {\"name\": \"_load_masked\", \"tile_logic\": [{\"op\": \"or\", \"text\": \"m or c\","
    "   \"note\": \"k.py:11: `m or c`: Python's `or` of tiles\"}]},"
    " {\"name\": \"scalar_flags\", \"tile_logic\": []}]}";

static char *notes(const char *kernel, size_t *n)
{
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    *n = tforge_ir_print_notes(out, doc, kernel);
    fclose(out);
    return text;
}

static void every_kernels_notes_follow_the_report(void **state)
{
    (void)state;
    size_t n;
    char *text = notes(NULL, &n);
    assert_int_equal(n, 2);
    assert_string_equal(text, "\nnote: k.py:19: `a and b`: Python's `and` of tiles\n"
                              "note: k.py:11: `m or c`: Python's `or` of tiles\n");
    free(text);
}

static void only_the_kernel_asked_for(void **state)
{
    (void)state;
    size_t n;
    char *text = notes("_load_masked", &n);
    assert_int_equal(n, 1);
    assert_string_equal(text, "\nnote: k.py:11: `m or c`: Python's `or` of tiles\n");
    free(text);
    text = notes("scalar_flags", &n);
    assert_int_equal(n, 0);
    assert_string_equal(text, "");
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_kernels_notes_follow_the_report),
        cmocka_unit_test(only_the_kernel_asked_for),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
