/* A task (engine/task/TASK.md) as the engine holds it: loaded and validated by a worker's Python,
 * its space built here. Shapes and configs stay JSON object texts: they travel back to
 * Python. */
#ifndef TFORGE_ENGINE_TASK_H
#define TFORGE_ENGINE_TASK_H

#include "analysis.h"
#include "digest.h"
#include "registry.h"
#include "tforge/space.h"
#include "transforms.h"
#include "worker.h"

#include <stddef.h>

typedef struct tforge_task {
    char *path;            /* the task file, absolute */
    char *kernel;          /* the kernel's name */
    char *source;          /* the kernel file, absolute */
    char *baseline_from;   /* "task", "autotune", "wrapper" or "defaults" */
    size_t n_tune, n_check, n_baseline, n_files;
    char **files;          /* every file the task reads: itself, the kernel, the reference's
                              and inputs' modules (their digests tell a stale stored run) */
    char **tune_shapes;    /* {"M": 4096, ...} */
    char **check_shapes;
    size_t n_plans, n_dropped, n_warnings;
    char **dropped;        /* "FILE:LINE-END: dropped KIND (binds a, b)": what the import filter
                              left out of every file it loaded */
    char **warnings;       /* what the results may get wrong here (interpreter gaps) */
    char **plans;          /* per tuning shape (n_plans == n_tune): {"baseline": [...], "space": {...},
                              "launched": [...] where a baseline leaves parameters to the launch} */
    size_t shape;          /* the tuning shape selected (0 after loading) */
    char **baselines;      /* the selected shape's configs: {"BLOCK_M": 32, "num_warps": 4} */
    tforge_level *baseline_points; /* their points in its space (n_baseline x dims), mapped when
                                      the shape is selected */
    unsigned char *baseline_inside; /* 1 where baseline b lies in the space */
    tforge_space *space;   /* the selected shape's space, built */
    tforge_ir_file *ir;    /* the analysis of the file defining the kernel (that kernel only),
                              NULL when it could not be analysed */
    char *kernel_text;     /* that file's text, once transforms are used */
    size_t kernel_size;
    char **knobs;          /* the plan's parameter names, lent to the transforms */
    size_t n_knobs;
    tforge_transforms *transforms; /* NULL until tforge_task_use_transforms */
    const char *const *constraints; /* the caller's, lent: after the plan's, in every shape */
    /* A model's verified proposals, each the kernel file's whole text: level k of the space's
     * `variant` dimension is proposals[k - 1] (none: the space has no such dimension). */
    char **proposals;
    char (*proposal_digests)[TFORGE_DIGEST_SIZE];
    size_t n_proposals;
    int variant_declared;  /* the space has `variant` before any proposal (tune --llm) */
    char **dtypes;         /* the task's `dtypes`: those its floating inputs may take */
    size_t n_dtypes;
    const char *dtype;     /* the one they are made in (dtypes[0] after loading; NULL: the
                              task declares none, the inputs keep their own) */
} tforge_task;

/* Asks `worker` to load and validate the task file, then builds its space. Errors that the
 * validator found come back as TFORGE_EINPUT with its message (every bad field, by JSON path);
 * so does a load that hangs or crashes (the task's files at import). */
/* How long a load may take unless the user says (tune's and check's --timeout): importing the
 * task's files, not running them. */
#define TFORGE_TASK_LOAD_TIMEOUT_MS 300000
int tforge_task_load(tforge_task **out, tforge_worker *worker, const char *path,
                     int timeout_ms);
void tforge_task_free(tforge_task *task);

/* Makes the task's floating inputs in `dtype` (NULL: the task's default, its first dtype).
 * TFORGE_EINPUT naming `field` ("--dtype") when the task declares no dtypes or not that one. */
int tforge_task_set_dtype(tforge_task *task, const char *dtype, const char *field);

/* Selects tuning shape `shape`: its baselines and its space (constraints over shape symbols take
 * its sizes) replace the current ones, and each baseline is mapped to its point. */
int tforge_task_select(tforge_task *task, size_t shape);

/* Builds every tuning shape's space in turn, as selecting it does (the test tune makes of the
 * shape it runs): TFORGE_EINPUT naming the constraints and the shape when one has no valid
 * point, after which the task is only to be freed. Else the shape selected before is again. */
int tforge_task_check_spaces(tforge_task *task);

/* Baseline b's point in the selected shape's space, or NULL when it lies outside the space (a
 * value the space lacks, a broken constraint). A baseline that leaves parameters of the space
 * to the file's own launch (a wrapper's defaults, `{}`) is the point of the values that launch
 * gives them, where the worker could tell them. */
const tforge_level *tforge_task_baseline_point(const tforge_task *task, size_t b);

/* Opens the transforms named in `ids` (NULL-terminated; NULL: every one the registry has) on the
 * task's kernel and adds their parameters to every shape's space (the selected shape is built
 * again). `options` are "ID.KEY=VALUE" (may be NULL). Without an analysis of the kernel (a
 * kernel the analysis cannot read) nothing is added and a warning says why. */
int tforge_task_use_transforms(tforge_task *task, const tforge_registry *registry,
                               const char *const *ids, const char *const *options);

/* Adds `constraints` (NULL-terminated, lent for the task's life) to every shape's space, after
 * the task's own and the transforms' (so they may name the transforms' parameters); the selected
 * shape is built again. A constraint that does not parse, or names no dimension, is TFORGE_EINPUT
 * naming it. */
int tforge_task_add_constraints(tforge_task *task, const char *const *constraints);

/* The config of a point, as a JSON object text the caller frees: the values of the plan's
 * parameters and of the transforms' launch options (those not at level 0); the transforms'
 * rewrite parameters shape the variant instead. */
int tforge_task_config(char **out, const tforge_task *task, const tforge_level *point);

/* The transforms' rewrite parameters a point sets (level not 0), as "name=value, ..." (the
 * caller frees it), or NULL when it sets none. */
int tforge_task_rewrites(char **out, const tforge_task *task, const tforge_level *point);

/* The kernel file's variant at `point` (the caller frees it), or NULL when the point rewrites
 * nothing; transform `without` (SIZE_MAX: none) left out. An error (overlapping edits, a
 * transform's failure) is the candidate's, not the run's: the caller records it as a failed
 * compile. */
int tforge_task_variant(char **out, const tforge_task *task, const tforge_level *point,
                        size_t without);

/* The space's categorical dimension of the kernel's sources once a model proposed one: level 0
 * the file as it is ("file"), level k the k-th proposal (labelled by its digest). A rewrite
 * dimension: it selects the variant, it is no config's. */
#define TFORGE_TASK_VARIANT "variant"
#define TFORGE_TASK_VARIANT_OWNER "llm"

/* Adds `source`, a model's proposal (the kernel file's whole text, its answer checked:
 * engine/llm/proposal.h), as the next level of the `variant` dimension, into `*level`, and builds
 * every shape's space again with it (the selected one last; the old space is freed, and a loop
 * over it must start again over the new one, its points keeping their levels with `variant` at
 * 0). The knobs are searched at every level; the transforms' edits were made on the file's text
 * and so apply at level 0 only (a constraint keeps their dimensions at level 0 elsewhere). A
 * source that is a level already is that level, nothing added. A space that has a dimension of
 * that name already is TFORGE_EINPUT naming it. */
int tforge_task_add_proposal(tforge_task *task, const char *source, uint32_t *level);

/* Declares the `variant` dimension with its "file" level alone before any proposal (a run that
 * may ask a model: its store keys then stay the same as the space grows), and builds every
 * shape's space again. Declared already: nothing done. */
int tforge_task_declare_variant(tforge_task *task);

/* The level of the `variant` dimension (the rewrite dimension the model owns) at `point`
 * (NULL is allowed): 0, the file, where the space has none. */
uint32_t tforge_task_variant_level(const tforge_task *task, const tforge_level *point);

/* The point of a config (every space parameter present, at one of its values; a transform's
 * parameter it lacks at level 0); TFORGE_ENOTFOUND when it is outside the space. */
int tforge_task_point(tforge_level *out, const tforge_task *task, const char *config);

#endif
