/* A scratch folder for a test's run (a tune's results, a store): made under /tmp, removed with
 * everything in it, folders included (tmpdir.h removes files alone). */
#ifndef TFORGE_TESTS_SCRATCH_H
#define TFORGE_TESTS_SCRATCH_H

#include <stdio.h>
#include <stdlib.h>

/* /tmp/tforge-NAME-XXXXXX into `dir`: 0, or -1 when it cannot be made */
static int make_scratch(char *dir, size_t size, const char *name)
{
    snprintf(dir, size, "/tmp/tforge-%s-XXXXXX", name);
    return mkdtemp(dir) ? 0 : -1;
}

/* 0, or -1 when `dir` is not all removed */
static int remove_scratch(const char *dir)
{
    char command[4200];
    snprintf(command, sizeof command, "rm -rf '%s'", dir);
    return system(command) == 0 ? 0 : -1;
}

#endif
