/* The sweep's transport over MPI (sweep.h): the one file that calls MPI. Only the main thread
 * of each rank calls it (MPI_THREAD_FUNNELED): rank 0's dispatcher, the others' serve loop.
 * Waiting ranks poll with short sleeps rather than block in MPI, which spins: oversubscribed
 * ranks on few cores then leave the cores to those that work. */
#include "sweep.h"

#include "tforge/error.h"

#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { TAG_JOB = 1, TAG_STOP, TAG_RESULT };

static void nap(void)
{
    struct timespec t = {0, 1000000};
    nanosleep(&t, NULL);
}

static int mpi_send(void *context, int to, const char *text)
{
    (void)context;
    int rc = text ? MPI_Send(text, (int)strlen(text) + 1, MPI_CHAR, to, TAG_JOB, MPI_COMM_WORLD)
                  : MPI_Send("", 1, MPI_CHAR, to, TAG_STOP, MPI_COMM_WORLD);
    return rc == MPI_SUCCESS ? 0 : tforge_error_set(TFORGE_EIO, "sweep: MPI could not send to "
                                                    "rank %d", to);
}

/* Receives the message `status` announced, as an allocated text. */
static int take(char **text, MPI_Status *status)
{
    int size = 0;
    MPI_Get_count(status, MPI_CHAR, &size);
    *text = malloc((size_t)size + 1);
    if (!*text)
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    if (MPI_Recv(*text, size, MPI_CHAR, status->MPI_SOURCE, status->MPI_TAG, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE) != MPI_SUCCESS) {
        free(*text);
        *text = NULL;
        return tforge_error_set(TFORGE_EIO, "sweep: MPI could not receive from rank %d",
                                status->MPI_SOURCE);
    }
    (*text)[size] = '\0';
    return 0;
}

static int mpi_poll(void *context, int *from, char **text)
{
    (void)context;
    int flag = 0;
    MPI_Status status;
    if (MPI_Iprobe(MPI_ANY_SOURCE, TAG_RESULT, MPI_COMM_WORLD, &flag, &status) != MPI_SUCCESS)
        return tforge_error_set(TFORGE_EIO, "sweep: MPI could not probe for results");
    if (!flag)
        return 0;
    *from = status.MPI_SOURCE;
    return take(text, &status) ? -1 : 1;
}

static int mpi_receive(void *context, char **text)
{
    (void)context;
    *text = NULL;
    MPI_Status status;
    for (int flag = 0; !flag; ) {
        if (MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status) != MPI_SUCCESS)
            return tforge_error_set(TFORGE_EIO, "sweep: MPI could not probe for jobs");
        if (!flag)
            nap();
    }
    int rc = take(text, &status);
    if (!rc && status.MPI_TAG == TAG_STOP) {
        free(*text);
        *text = NULL;
    }
    return rc;
}

static int mpi_reply(void *context, const char *text)
{
    (void)context;
    return MPI_Send(text, (int)strlen(text) + 1, MPI_CHAR, 0, TAG_RESULT, MPI_COMM_WORLD) ==
                   MPI_SUCCESS
               ? 0
               : tforge_error_set(TFORGE_EIO, "sweep: MPI could not send a result to rank 0");
}

/* CUDA_VISIBLE_DEVICES for this rank: the local rank's entry of the list given, else the local
 * rank itself, so that each rank of a host owns one GPU. */
static void choose_gpu(void)
{
    const char *local = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
    if (!local)
        return;
    int index = atoi(local), n = 0;
    const char *given = getenv("CUDA_VISIBLE_DEVICES");
    char list[512], *saveptr = NULL, *chosen = NULL;
    snprintf(list, sizeof list, "%s", given ? given : "");
    for (char *item = strtok_r(list, ",", &saveptr); item; item = strtok_r(NULL, ",", &saveptr))
        n++;
    char value[64];
    if (n) {
        snprintf(list, sizeof list, "%s", given);
        int at = 0;
        for (char *item = strtok_r(list, ",", &saveptr); item;
             item = strtok_r(NULL, ",", &saveptr), at++)
            if (at == index % n)
                chosen = item;
        snprintf(value, sizeof value, "%s", chosen ? chosen : "0");
    } else {
        snprintf(value, sizeof value, "%d", index);
    }
    setenv("CUDA_VISIBLE_DEVICES", value, 1);
}

static tforge_sweep_transport transport;

const tforge_sweep_transport *tforge_sweep_mpi(int *argc, char ***argv)
{
    int provided = 0;
    choose_gpu(); /* before any worker process starts */
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        tforge_error_set(TFORGE_ERROR, "sweep: MPI could not start");
        return NULL;
    }
    transport = (tforge_sweep_transport){0, 1, NULL, mpi_send, mpi_poll, mpi_receive, mpi_reply};
    MPI_Comm_rank(MPI_COMM_WORLD, &transport.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &transport.ranks);
    return &transport;
}

void tforge_sweep_mpi_end(void)
{
    MPI_Finalize();
}
