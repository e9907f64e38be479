#include "install.h"

#include "tforge/error.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int tforge_install_dir(char *out, size_t size, const char *relative)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return tforge_error_set(TFORGE_ERROR, "cannot read the executable's path");
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return tforge_error_set(TFORGE_ERROR, "the executable's path %s has no folder", exe);
    *slash = '\0'; /* <prefix>/bin */
    int used = snprintf(out, size, "%s/%s", exe, relative);
    if (used < 0 || (size_t)used >= size)
        return tforge_error_set(TFORGE_ERROR, "the path %s/%s is too long", exe, relative);
    return 0;
}
