/* The files a tuning run leaves in its results folder. */
#ifndef TFORGE_ENGINE_REPORT_TUNE_H
#define TFORGE_ENGINE_REPORT_TUNE_H

#include "ablation.h"
#include "forge.h"
#include "loop.h"
#include "transforms.h"

#include <stdint.h>
#include <stdio.h>

typedef struct tforge_report_tune {
    const char *task_arg;     /* the task file as the user named it */
    const char *backend;      /* the backend's name as chosen */
    const char *backend_note; /* what its numbers are, for the report: "" or " (...)" */
    const char *strategy;
    uint64_t seed;
    const char *kernel, *task_path, *source;
    const tforge_loop_outcome *outcome; /* every evaluation's config text set */
    const char *result_json;  /* result.json's text */
    /* source transforms: NULL and 0 without them */
    const tforge_transforms *transforms; /* those that apply */
    char *const *rewrites;    /* per evaluation: its rewrite parameters, or NULL */
    const char *variant;      /* the winner's variant of the kernel file, NULL: the file itself */
    const char *diff;         /* the variant's unified diff against the file */
    const tforge_ablation *ablation; /* what each of the winner's transforms is worth */
    size_t n_ablation;
    /* the profile-guided loop's profiles: NULL when nothing steered the search */
    const tforge_forge *forge;
    const tforge_space *space; /* the dimensions' names */
    /* the take-home files run as the user runs them: NULL and 0 when nothing was checked */
    const char *launch_hook;  /* Python for best_variant.py: the winner's config on the
                                 kernel's launches, as the tune made them; NULL: none needed */
    size_t hook_at;           /* where it goes: a byte offset into the variant (or the file) */
    const char *dropped;      /* config keys the file's own launch does not pass ("maxnreg"),
                                 or NULL */
    const char *take_home;    /* report.md's lines on that run (markdown), or NULL */
    const char *speed_of_light; /* report.md's line on the bound (markdown), or NULL */
    /* the objective compared (the cost model's name and unit: "energy", "J"); NULL: latency's
     * median in ms */
    const char *objective, *unit;
    const char *model;        /* report.md's section on a model's proposals (markdown), or NULL */
    /* what the results may get wrong on this backend (the task's interpreter warnings: an `and`
     * of tiles at file:line), listed near the top of report.md; NULL and 0: none */
    char *const *warnings;
    size_t n_warnings;
} tforge_report_tune;

/* Writes best_config.py, best_variant.py (and best_variant.diff when the winner rewrites the
 * kernel), convergence.svg (when anything was timed), pareto.svg (when energy was measured:
 * time against energy, the front, the winner of latency, energy and energy-delay ringed),
 * report.md and result.json into `dir`. */
int tforge_report_write_tune(const char *dir, const tforge_report_tune *report);

/* Text written into generated Python (a comment or a '...' string): every byte that could end
 * it, or make the file invalid UTF-8, as an escape. */
void tforge_report_python_text(FILE *f, const char *text);
/* A config (JSON text) as `triton.Config({...}, num_warps=..)`: constexprs in the dict, launch
 * options as keywords. */
void tforge_report_triton_config(FILE *f, const char *config);

/* A strategy's effective options ("key": "value", defaults included) as a JSON object, for the
 * documents that must say exactly what ran; `given` is "key=value", NULL-terminated. */
struct cJSON;
struct tforge_registry;
struct cJSON *tforge_report_strategy_options(const struct tforge_registry *registry,
                                             const char *id, const char *const *given);

#endif
