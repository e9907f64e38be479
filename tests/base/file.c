#include "file.h"
#include "support/tmpdir.h"
#include "tforge/error.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

/* Every byte comes back, a NUL among them too, with a NUL after the last. */
static void whole_file_with_its_size(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/kernel.py", tmpdir);
    static const char bytes[] = "def k():\n\0    pass\n";
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, sizeof bytes - 1, f), sizeof bytes - 1);
    fclose(f);
    char *text = NULL;
    size_t size = 0;
    assert_int_equal(tforge_file_read(&text, &size, path), 0);
    assert_int_equal(size, sizeof bytes - 1);
    assert_memory_equal(text, bytes, sizeof bytes - 1);
    assert_int_equal(text[size], '\0');
    free(text);

    f = fopen(path, "wb");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(tforge_file_read(&text, &size, path), 0);
    assert_int_equal(size, 0);
    assert_string_equal(text, "");
    free(text);
}

/* A missing file and a folder (or a FIFO) are refused, naming the path and why. */
static void missing_file_and_folder_refused(void **state)
{
    (void)state;
    char path[512], expected[600];
    snprintf(path, sizeof path, "%s/absent.py", tmpdir);
    char *text = (char *)path;
    size_t size = 7;
    assert_int_equal(tforge_file_read(&text, &size, path), TFORGE_ENOTFOUND);
    assert_null(text);
    assert_int_equal(size, 7);
    snprintf(expected, sizeof expected, "%s: No such file or directory", path);
    assert_string_equal(tforge_error_last()->message, expected);

    assert_int_equal(tforge_file_read(&text, &size, tmpdir), TFORGE_EIO);
    assert_null(text);
    snprintf(expected, sizeof expected, "%s: not a regular file (a directory)", tmpdir);
    assert_string_equal(tforge_error_last()->message, expected);

    /* a FIFO with no writer is refused at once, not waited on */
    snprintf(path, sizeof path, "%s/fifo.py", tmpdir);
    assert_int_equal(mkfifo(path, 0600), 0);
    assert_int_equal(tforge_file_read(&text, &size, path), TFORGE_EIO);
    assert_null(text);
    snprintf(expected, sizeof expected, "%s: not a regular file (a FIFO)", path);
    assert_string_equal(tforge_error_last()->message, expected);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(whole_file_with_its_size),
        cmocka_unit_test(missing_file_and_folder_refused),
    };
    return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
