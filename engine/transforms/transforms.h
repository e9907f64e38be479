/* The transforms of one kernel: every transform plugin that applies to it, opened over its
 * analysis IR; their parameters added to a space; for a point of that space, the variant of the
 * kernel's file their edits compose to. */
#ifndef TFORGE_ENGINE_TRANSFORMS_H
#define TFORGE_ENGINE_TRANSFORMS_H

#include "registry.h"
#include "tforge/plugin/transform.h"
#include "tforge/space.h"

#include <stddef.h>

typedef struct tforge_transforms tforge_transforms;

/* Opens the transforms named in `ids` (NULL-terminated; NULL: every transform of the registry)
 * on `kernel`, a kernel of the file whose text is `source` (`size` bytes). `space_params` are
 * the names the space has already. `options` are "ID.KEY=VALUE" texts (NULL-terminated, may be
 * NULL), each given to transform ID. The kernel, the source and the names are lent to the
 * plugins: they must outlive `*out`. An id named but not registered is TFORGE_ENOTFOUND; a
 * transform that does not apply is left out (tforge_transforms_skipped lists it). */
int tforge_transforms_open(tforge_transforms **out, const tforge_registry *registry,
                           const char *const *ids, const tforge_ir_kernel *kernel,
                           const char *source, size_t size, const char *const *space_params,
                           size_t n_space_params, const char *const *options);
/* NULL is allowed. */
void tforge_transforms_free(tforge_transforms *t);

/* The transforms that apply, in registry order. */
size_t tforge_transforms_count(const tforge_transforms *t);
const char *tforge_transforms_id(const tforge_transforms *t, size_t i);
const char *tforge_transforms_describe(const tforge_transforms *t, size_t i);
uint32_t tforge_transforms_n_params(const tforge_transforms *t, size_t i);
const tforge_transform_param *tforge_transforms_param(const tforge_transforms *t, size_t i,
                                                      uint32_t j);
/* What param j of transform i changes: the effect it declares (tforge/plugin/types.h), or
 * TFORGE_EFFECT_UNKNOWN from a module built before ABI 1.3, whose parameters have no such field. */
tforge_dim_effect tforge_transforms_effect(const tforge_transforms *t, size_t i, uint32_t j);
/* Those opened that do not apply to the kernel. */
size_t tforge_transforms_n_skipped(const tforge_transforms *t);
const char *tforge_transforms_skipped(const tforge_transforms *t, size_t i);

/* Adds every parameter, then every constraint, to `space` (not built yet), and for each pair of
 * levels of two transforms whose edits alone overlap, the constraint `not (A and B)`: the search
 * never proposes a point that could not be composed. Each parameter's dimension says what it is
 * (tforge_space_describe): its transform as the owner, its role, its effect. A name the space
 * has already is an error naming the transform. */
int tforge_transforms_add_to_space(const tforge_transforms *t, tforge_space *space);

/* The parameter called `name`: 0 with its transform and index, else TFORGE_ENOTFOUND. */
int tforge_transforms_find(const tforge_transforms *t, const char *name, size_t *transform,
                           uint32_t *param);

/* Whether transform i changes anything at `point` (a level of one of its params is not 0). */
int tforge_transforms_active(const tforge_transforms *t, const tforge_space *space,
                             const tforge_level *point, size_t i);

/* The variant of the file at `point`, a point of a space the parameters were added to: `*text`
 * (malloc'd, NUL-terminated; the caller frees it) or NULL when no transform edits anything.
 * Transform `without` (SIZE_MAX for none) is left out, as if its levels were all 0. Edits that
 * overlap are TFORGE_ERROR naming both transforms and the lines. */
int tforge_transforms_variant(char **text, const tforge_transforms *t, const tforge_space *space,
                              const tforge_level *point, size_t without);

/* One edit and whose it is (an index into `owners`). */
typedef struct tforge_owned_edit {
    tforge_span_edit edit;
    size_t owner;
} tforge_owned_edit;

/* Applies `edits` (sorted here, by start, then end, then owner, then their given order) to
 * `source`: `*out` is the new text (malloc'd). An insertion of whitespace alone at a line's
 * start indents that logical line: the lines that edits after it on the same line write are
 * indented as much. An edit past the end of the source, or two that overlap (a replaced range
 * holding any part of another edit; insertions at one place are fine, in owner order), is
 * TFORGE_ERROR naming both owners and their lines (the transforms' fault, not the user's
 * input). */
int tforge_edits_compose(char **out, const char *source, size_t size, tforge_owned_edit *edits,
                         size_t n, const char *const *owners);

enum { TFORGE_MAX_TRANSFORM_IDS = 64 };

/* A --transforms list ("ID,ID"), split: `ids` NULL-terminated, pointing into `text`. Whether
 * each id names a transform, tforge_transforms_open checks. */
typedef struct tforge_transform_ids {
    char *text; /* a copy of the list, split in place */
    const char *ids[TFORGE_MAX_TRANSFORM_IDS + 1];
    size_t n;
} tforge_transform_ids;

/* `list` (NULL is none) into `out`, empty items skipped; 0, or TFORGE_ENOMEM, or TFORGE_EINPUT
 * when it names more than TFORGE_MAX_TRANSFORM_IDS. Free it with tforge_transform_ids_free,
 * after a failure too. */
int tforge_transform_ids_split(tforge_transform_ids *out, const char *list);
void tforge_transform_ids_free(tforge_transform_ids *ids);

#endif
