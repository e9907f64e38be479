/* A scratch folder for one test program: made before its group, emptied and removed after. */
#ifndef TFORGE_TESTS_TMPDIR_H
#define TFORGE_TESTS_TMPDIR_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char tmpdir[256];

/* cmocka group setup: TMPDIR (or /tmp)/tforge-test-XXXXXX */
static int make_tmpdir(void **state)
{
    (void)state;
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/tforge-test-XXXXXX", base ? base : "/tmp");
    return mkdtemp(tmpdir) ? 0 : -1;
}

/* cmocka group teardown: the files in it, then the folder */
static int remove_tmpdir(void **state)
{
    (void)state;
    DIR *dir = opendir(tmpdir);
    struct dirent *e;
    char path[512];
    while (dir && (e = readdir(dir)))
        if (e->d_name[0] != '.') {
            snprintf(path, sizeof path, "%s/%s", tmpdir, e->d_name);
            unlink(path);
        }
    if (dir)
        closedir(dir);
    return rmdir(tmpdir);
}

#endif
