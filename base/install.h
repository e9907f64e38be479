/* Where the installed product's folders are: relative to the running executable, so that an
 * install tree and the build tree (which has the same layout) both work. */
#ifndef TFORGE_BASE_INSTALL_H
#define TFORGE_BASE_INSTALL_H

#include <stddef.h>

/* `<folder of the executable>/<relative>` into `out`; 0, or TFORGE_ERROR when the executable's
 * path cannot be read or does not fit. */
int tforge_install_dir(char *out, size_t size, const char *relative);

#endif
