/* A file's text read into one buffer (1 MiB) for assertions with strstr or cJSON. */
#ifndef TFORGE_TESTS_TEXT_FILE_H
#define TFORGE_TESTS_TEXT_FILE_H

#include <stdio.h>

static char text[1 << 20];

/* The text of `path` in `text`; fails the test when it cannot be opened. */
static const char *read_text(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        fail_msg("cannot open %s", path);
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    return text;
}

#endif
