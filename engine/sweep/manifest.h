/* A sweep's manifest (SWEEP.json): tasks x shapes x dtypes, each (task, shape, dtype) with its
 * budget or time,
 * its strategy and options and its backend. Read on rank 0 only; its errors name the file and
 * the field. The schema is in README.md. */
#ifndef TFORGE_ENGINE_SWEEP_MANIFEST_H
#define TFORGE_ENGINE_SWEEP_MANIFEST_H

#include <stddef.h>
#include <stdint.h>

/* One (task, shape) of the sweep; every string owned by the manifest. */
typedef struct tforge_sweep_entry {
    char *name;        /* the task's folder in the sweep's: DIR/<name>/shape-<shape>/ */
    char *task;        /* the task file, resolved against the manifest's folder */
    size_t shape;      /* an index into the task's tuning shapes */
    char *dtype;       /* one of the task's `dtypes` (the entry's "dtypes"); NULL: its default */
    char *backend;     /* cuda, interpret, compile or replay:FILE (FILE resolved too) */
    char *strategy;    /* NULL: the tune's default */
    char **options;    /* the strategy's "KEY=VALUE", NULL-terminated */
    char *transforms;  /* all, none or ID,ID */
    uint32_t budget, batch, patience, compile_workers, timeout_s;
    double time_s;     /* the search's time limit; 0: none */
    uint64_t seed;
    double simulate;   /* replay: each evaluation sleeps its recorded wall time x this; 0: no */
} tforge_sweep_entry;

typedef struct tforge_sweep_manifest {
    char *path;
    char *out; /* the sweep's folder ("out"), resolved; NULL: not given */
    size_t n;
    tforge_sweep_entry *entries;
} tforge_sweep_manifest;

/* Reads and checks `path`: TFORGE_EINPUT naming the file and the field ("tasks[1].budget:
 * expected a whole number >= 1") for anything wrong, TFORGE_ENOTFOUND for a file missing. */
int tforge_sweep_manifest_read(tforge_sweep_manifest *out, const char *path);
void tforge_sweep_manifest_dispose(tforge_sweep_manifest *manifest);

#endif
