/* Interface "tforge.transform/7": a source rewrite as a family of dimensions of the space.
 *
 * A transform reads the analysis IR of one kernel (ir.h, part of this interface), decides whether
 * it applies (a precondition the IR proves; its README says which and how), and declares the
 * parameters it adds to the space. For a point of those parameters it returns span edits on the
 * kernel's file (byte ranges replaced by text, never a rewrite of the whole file), or none when
 * every level is 0 ("unchanged"). The host composes the edits of every transform in the space,
 * refuses overlapping ones (naming both transforms), and verifies each variant as it verifies any
 * candidate (compiled, checked on fresh inputs with poisoned outputs) before it is timed: a
 * variant that fails is a failed measurement, learnt by the search.
 *
 * A parameter may instead be a launch option (`role` TFORGE_TRANSFORM_LAUNCH): it rewrites
 * nothing and its value is passed to every launch of the kernel as the option of its name
 * (maxnreg, num_ctas), level 0 meaning "not passed". */
#ifndef TFORGE_PLUGIN_TRANSFORM_H
#define TFORGE_PLUGIN_TRANSFORM_H

#include "ir.h"
#include "plugin.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TFORGE_TRANSFORM_INTERFACE_ID "tforge.transform/7"

/* create's answer when the transform does not apply to the kernel (nothing is added). */
#define TFORGE_TRANSFORM_NOT_APPLICABLE 1

/* Replace the bytes [start, end) of the file by `text` (NUL-terminated); start == end inserts.
 * Owned by the transform, valid until its next apply or destroy. */
typedef struct tforge_span_edit {
    uint32_t start, end;
    const char *text;
} tforge_span_edit;

typedef enum tforge_transform_role {
    TFORGE_TRANSFORM_REWRITE = 0, /* its level selects edits through apply */
    TFORGE_TRANSFORM_LAUNCH = 1   /* its value is a launch option of the kernel (level 0: none) */
} tforge_transform_role;

/* A parameter: an identifier unique in the space (say whose it is: "pipe0_stages"), the kind
 * the search encodes it as, and its values as text. ORDINAL values are numbers, ascending;
 * CATEGORICAL ones are words (letters, digits, '_'); BOOLEAN has none (n_values 0). Level 0 (the
 * first value, or false) must mean "leave the kernel as it is". Constraints are expressions of
 * the space's language (tforge/space.h) over this and other parameters of the space. What the
 * parameter changes is its `effect`, never its name: heuristics steer by it. Static or
 * state-owned memory, valid as long as the state. */
typedef struct tforge_transform_param {
    const char *name;
    uint32_t kind; /* a tforge_dim_kind */
    uint32_t role; /* a tforge_transform_role */
    uint32_t n_values;
    const char *const *values;
    uint32_t n_constraints;
    const char *const *constraints;
    /* since 1.3: a tforge_dim_effect (types.h); the host reads it only from a module of ABI 1.3
     * or later, and takes TFORGE_EFFECT_UNKNOWN for an older one */
    uint32_t effect;
} tforge_transform_param;

/* What a transform is given besides the host and its options, lent for the whole life of its
 * state. Of tforge.transform/7 (ABI 1.3). */
typedef struct tforge_transform_input {
    uint32_t struct_size;
    const tforge_ir_kernel *kernel; /* the kernel being tuned */
    const char *source;             /* the kernel's file, source_size bytes (NUL after them) */
    uint32_t source_size;
    /* the parameters the space has already (the task's or the analysis' knobs and tiles) */
    uint32_t n_space_params;
    const char *const *space_params;
} tforge_transform_input;

typedef struct tforge_transform_interface {
    uint32_t struct_size;
    /* 0 with `*state` set when the transform applies; TFORGE_TRANSFORM_NOT_APPLICABLE when it
     * does not (nothing set); a negative code on failure (the host's error names it). */
    int (*create)(void **state, const tforge_host *host, const tforge_options_view *options,
                  const tforge_transform_input *input);
    /* One line saying where it applies and what the analysis proved ("2 loads at lines 34, 35;
     * none hinted"), for reports. Valid as long as the state. */
    const char *(*describe)(void *state);
    uint32_t (*n_params)(void *state); /* at least 1 */
    const tforge_transform_param *(*param)(void *state, uint32_t index);
    /* The edits for `levels` (one per param, in param order) into `*edits`, `*n_edits` of them,
     * in any order; none when every level is 0. Edits of one transform never overlap. */
    int (*apply)(void *state, const tforge_level *levels, const tforge_span_edit **edits,
                 uint32_t *n_edits);
    void (*destroy)(void *state);
} tforge_transform_interface;

#ifdef __cplusplus
}
#endif
#endif
