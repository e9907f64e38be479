/* For a test program that is its own worker: the engine starts workers as `ARGV0 __worker`. */
#ifndef TFORGE_TESTS_OWN_WORKER_H
#define TFORGE_TESTS_OWN_WORKER_H

#include <string.h>

/* Whether this process was started as one of the engine's workers (main then returns
 * tforge_worker_child_main()). */
static int started_as_worker(int argc, char **argv)
{
    return argc > 1 && strcmp(argv[1], "__worker") == 0;
}

#endif
