/* What a model is told: a template the user can edit (data/prompts/kernel.md, installed as
 * share/tforge/prompts/kernel.md), rendered with the kernel, its analysis, the device, the
 * profiles (time, % of the device's peaks, the labels with their evidence), the transforms the
 * space has and what each measured, and how earlier proposals ended. The template names itself on
 * its first line ("tforge-prompt kernel 1"), holds a system part and a user part after the lines
 * "=== system ===" and "=== user ===", and places facts with {{name}}: path, kernel, source,
 * analysis, device, profiles, transforms, proposals. Its digest goes in the report and result.json
 * with its name and revision. */
#ifndef TFORGE_ENGINE_LLM_PROMPT_H
#define TFORGE_ENGINE_LLM_PROMPT_H

#include "digest.h"
#include "profile.h"

#include <stddef.h>

/* A template, loaded. */
typedef struct tforge_prompt {
    char *path;                            /* where it was read */
    char *text;                            /* all of it */
    char name[64];                         /* "kernel" */
    unsigned revision;                     /* 1 */
    char digest[TFORGE_DIGEST_SIZE];       /* of its text: the version the report names */
    const char *system, *user;             /* into `text`: each part, after its marker line */
    size_t system_size, user_size;
} tforge_prompt;

/* Reads the template at `path` (NULL: the installed kernel.md, found beside the executable).
 * A missing file is TFORGE_ENOTFOUND; a first line that is not "tforge-prompt NAME REVISION", a
 * part's marker missing or a {{name}} the renderer does not know is TFORGE_EINPUT naming the
 * file, the line and what was expected. */
int tforge_prompt_load(tforge_prompt *out, const char *path);
/* Zeroed is allowed. */
void tforge_prompt_dispose(tforge_prompt *prompt);

/* One label of a profile, as the heuristic gave it. */
typedef struct tforge_prompt_label {
    const char *label, *evidence;
    double confidence;
} tforge_prompt_label;

/* A profile as the model is shown it. */
typedef struct tforge_prompt_profile {
    const char *who;                /* "the baseline", "the incumbent" */
    double time_ms;                 /* NAN: not timed */
    const tforge_profile *profile;  /* NULL: none taken */
    const tforge_prompt_label *labels;
    size_t n_labels;
} tforge_prompt_profile;

/* A transform of the space and what it measured (the report's words: "12% faster at the
 * incumbent", "not tried yet"). */
typedef struct tforge_prompt_transform {
    const char *id, *describe, *measured;
} tforge_prompt_transform;

/* An earlier proposal and how it ended. */
typedef struct tforge_prompt_proposal {
    const char *status;  /* "refused" (before it ran), "no answer", or a measurement status */
    const char *reason;  /* why, one line; "" when it ran correctly */
    double max_error;    /* status wrong: the largest error found; else NAN */
    double slower_pct;   /* status ok: how much slower than the incumbent then (negative:
                            faster); NAN when not timed */
} tforge_prompt_proposal;

/* Everything the template may place; lent for the call. A NULL text or an empty list renders as
 * what the template's reader is told instead ("(none)", "not known"). */
typedef struct tforge_prompt_facts {
    const char *path, *kernel, *source, *analysis;
    const tforge_device_limits *device;
    const tforge_prompt_profile *profiles;
    size_t n_profiles;
    const tforge_prompt_transform *transforms;
    size_t n_transforms;
    const tforge_prompt_proposal *proposals;
    size_t n_proposals;
} tforge_prompt_facts;

/* The two messages, malloc'd (the caller frees both). */
int tforge_prompt_render(char **system, char **user, const tforge_prompt *prompt,
                         const tforge_prompt_facts *facts);

#endif
