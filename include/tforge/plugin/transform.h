/* DRAFT, interface "tforge.transform/0" (not frozen: issue 15, source-rewriting transforms,
 * fills it in and freezes it as /1). A transform reads the analysis IR of a kernel (issue 14),
 * says where it applies and which parameters it adds to the space, and for a point of those
 * parameters returns span edits on the source, never string hacks on the whole file. The host
 * composes the edits of several transforms, refuses overlapping ones, and verifies every
 * variant (compiled, checked on fresh inputs) before it is timed. */
#ifndef TFORGE_PLUGIN_TRANSFORM_H
#define TFORGE_PLUGIN_TRANSFORM_H

#include "plugin.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TFORGE_TRANSFORM_INTERFACE_ID "tforge.transform/0"

/* A byte range [start, end) of the kernel file. */
typedef struct tforge_source_span {
    uint32_t start, end;
} tforge_source_span;

/* Replace `span` by `text` (NUL-terminated, owned by the transform until its next call). */
typedef struct tforge_span_edit {
    tforge_source_span span;
    const char *text;
} tforge_span_edit;

/* A parameter a transform adds: its values as Python literals ("2", "True", "'evict_last'"),
 * level 0 meaning "leave the source unchanged", and constraints over it and other parameters in
 * the space's expression language. */
typedef struct tforge_transform_param {
    const char *name;
    uint32_t n_values;
    const char *const *values;
    uint32_t n_constraints;
    const char *const *constraints;
} tforge_transform_param;

/* The analysis IR, lent read-only; its layout is issue 14's to define. */
typedef struct tforge_kernel_ir tforge_kernel_ir;

typedef struct tforge_transform_args {
    uint32_t struct_size;
    const tforge_host *host;
    const tforge_kernel_ir *ir;
    const char *source;   /* the kernel file's text */
    uint32_t n_options;
    const char *const *option_keys;
    const char *const *option_values;
} tforge_transform_args;

typedef struct tforge_transform_interface {
    uint32_t struct_size;
    /* 0 and `*state` set when the transform applies (the precondition its README states holds
     * for this kernel); 1 when it does not apply (nothing is added to the space). */
    int (*create)(void **state, const tforge_transform_args *args);
    uint32_t (*n_params)(void *state);
    const tforge_transform_param *(*param)(void *state, uint32_t index);
    /* The edits for `levels` (one per param): `*n_edits` of them into `*edits`, valid until the
     * next call; none when every level is 0. */
    int (*apply)(void *state, const tforge_level *levels, const tforge_span_edit **edits,
                 uint32_t *n_edits);
    void (*destroy)(void *state);
} tforge_transform_interface;

#ifdef __cplusplus
}
#endif
#endif
