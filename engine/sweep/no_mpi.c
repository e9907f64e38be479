/* The engine built without MPI: a sweep runs alone. */
#include "sweep.h"

#include "tforge/error.h"

const tforge_sweep_transport *tforge_sweep_mpi(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    tforge_error_set(TFORGE_ENOTFOUND, "sweep: this tforge was built without MPI");
    return NULL;
}

void tforge_sweep_mpi_end(void)
{
}
