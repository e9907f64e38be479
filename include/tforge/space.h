/* A parameter space: named dimensions with finite lists of levels, and constraints over them.
 *
 * Life of a space: tforge_space_new, then tforge_space_add_* (parameters first, constraints after
 * the parameters they name), then tforge_space_build once, then queries. Adding after the build
 * is an error. After the build every query is read-only, so many threads may query one space.
 *
 * Levels: dimension d has levels 0..L-1 (L <= 65535). Level l of an ordinal dimension is its
 * l-th smallest value: a range lists lo, lo+step, ... <= hi; a list of values is SORTED ASCENDING
 * whatever order it was given in. Categorical levels keep the given order. A boolean has level 0
 * (false) and 1 (true).
 *
 * Constraints are Python-like boolean expressions over parameter names, as Kernel Tuner users
 * write them, e.g. "(BM*BK + BK*BN) * 2 * num_stages <= 232448":
 *   numbers, parameter names, 'strings' or "strings", True/False (also true/false),
 *   + - * / // % ** (Python semantics: // floors, % takes the divisor's sign, ** is right
 *   associative and binds tighter than unary minus), unary - +, comparisons == != < <= > >=
 *   (chained as in Python: 1 <= a < b), and/or/not (also && || !, with Python's precedence),
 *   parentheses, min(a, b, ...), max(a, b, ...), abs(a).
 * Booleans count as 0/1 in arithmetic; and/or/not take booleans or numbers (non-zero is true) and
 * give a boolean (Python would give an operand back). Strings (literals and categorical
 * parameters) may only be compared with strings; comparing a categorical with == or != to a
 * literal that is none of its values is an error (a typo, most likely). A division, floor
 * division or modulo by zero, or a power without a real result, makes the constraint false for
 * that point. Each constraint is parsed and type-checked once, when added. */
#ifndef TFORGE_SPACE_H
#define TFORGE_SPACE_H

#include <stddef.h>
#include <stdint.h>

#include "plugin/rng.h"
#include "plugin/strategy.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tforge_space tforge_space;

/* Creates an empty space; free it with tforge_space_free. */
int tforge_space_new(tforge_space **out);
/* Frees the space and everything it owns; NULL is allowed. Views of it become invalid. */
void tforge_space_free(tforge_space *space);

/* Parameters. Names are identifiers ([A-Za-z_][A-Za-z0-9_]*), unique, and not one of the
 * expression words (and, or, not, True, False, true, false, min, max, abs). The space copies
 * every string and array it is given. Errors name the parameter. */
int tforge_space_add_range(tforge_space *space, const char *name, int64_t lo, int64_t hi,
                           int64_t step);
/* Finite numbers, all distinct; stored sorted ascending (see above). */
int tforge_space_add_values(tforge_space *space, const char *name, const double *values,
                            size_t n);
int tforge_space_add_categorical(tforge_space *space, const char *name,
                                 const char *const *labels, size_t n);
int tforge_space_add_boolean(tforge_space *space, const char *name);

/* What a dimension is, for the readers that steer by it (heuristics, reports, strategies): who
 * declared it, how its level reaches the kernel and what it changes. A dimension added without
 * it is a knob of unknown effect. */
typedef enum tforge_dim_role {
    TFORGE_DIM_KNOB = 0,    /* a value of the task's config: a parameter or a launch option */
    TFORGE_DIM_REWRITE = 1, /* a transform's: its level selects a variant of the source */
    TFORGE_DIM_LAUNCH = 2   /* a transform's launch option, level 0 meaning "not passed" */
} tforge_dim_role;

/* Says what dimension `dim` is: its owner (a transform's id, or TFORGE_DIM_OWNER_KNOB; copied),
 * its role and its effect (a tforge_dim_effect of tforge/plugin/types.h). Only before the
 * build; an unknown role or effect is TFORGE_EINPUT naming the parameter. */
int tforge_space_describe(tforge_space *space, uint32_t dim, const char *owner,
                          tforge_dim_role role, uint32_t effect);

/* Parses `text` (copied) and checks it against the parameters added so far. Errors give the
 * constraint, the column (1-based) and what is wrong: syntax, an unknown name (with the list of
 * known parameters), a type mistake, or a top-level expression that is not a boolean. */
int tforge_space_add_constraint(tforge_space *space, const char *text);

/* Restricts the valid points to `n` listed points (n x dims levels, copied), for spaces known only
 * by the configurations measured in them (recorded spaces). The build then keeps the listed
 * points that satisfy the constraints, enumerated whatever their raw product; a point listed twice
 * is an error. Only before the build. */
int tforge_space_restrict(tforge_space *space, const tforge_level *points, uint64_t n);

typedef struct tforge_space_build_options {
    unsigned int version;     /* TFORGE_SPACE_BUILD_OPTIONS_VERSION */
    uint64_t enumerate_limit; /* enumerate when the raw product of levels is at most this */
    uint64_t max_tries;       /* rejection sampling: draws per sample before giving up */
} tforge_space_build_options;

#define TFORGE_SPACE_BUILD_OPTIONS_VERSION 1
#define TFORGE_SPACE_BUILD_OPTIONS_INIT {TFORGE_SPACE_BUILD_OPTIONS_VERSION, 10000000u, 1000000u}

/* Freezes the space. When the raw product of levels is at most options->enumerate_limit, every
 * valid point is enumerated once (row-major: the last dimension varies fastest); otherwise
 * nothing is enumerated, count is 0 and sampling rejects invalid raw draws, and the build checks
 * with up to max_tries draws of a fixed-seed generator that valid points can be found at all.
 * An empty space (or one whose valid fraction looks below 1/max_tries) is a TFORGE_EINPUT error
 * naming the constraint that rejected most; a failed build leaves the space unbuilt, so that it
 * can be changed and built again. `options` may be NULL for the defaults. */
int tforge_space_build(tforge_space *space, const tforge_space_build_options *options);

/* Queries. `dim` < dims and `level` < levels(dim) unless said otherwise; a point is an array of
 * dims levels. Strings returned are owned by the space and live as long as it does. */
uint32_t tforge_space_dims(const tforge_space *space);
uint32_t tforge_space_levels(const tforge_space *space, uint32_t dim);
tforge_dim_kind tforge_space_kind(const tforge_space *space, uint32_t dim);
const char *tforge_space_name(const tforge_space *space, uint32_t dim);
/* What the dimension is (tforge_space_describe): TFORGE_DIM_OWNER_KNOB, TFORGE_DIM_KNOB and
 * TFORGE_EFFECT_UNKNOWN unless described. */
const char *tforge_space_owner(const tforge_space *space, uint32_t dim);
tforge_dim_role tforge_space_role(const tforge_space *space, uint32_t dim);
tforge_dim_effect tforge_space_effect(const tforge_space *space, uint32_t dim);
/* Index of the parameter called `name`, or -1. */
int tforge_space_find(const tforge_space *space, const char *name);
/* Ordinal: the value; boolean: 0 or 1; categorical: the level itself. */
double tforge_space_value(const tforge_space *space, uint32_t dim, uint32_t level);
/* The label of a categorical level; NULL for other kinds. */
const char *tforge_space_label(const tforge_space *space, uint32_t dim, uint32_t level);
/* Product of the levels of all dimensions, UINT64_MAX when it overflows. */
uint64_t tforge_space_raw_count(const tforge_space *space);
/* Valid points enumerated by the build; 0 when not enumerated (or not built). */
uint64_t tforge_space_count(const tforge_space *space);
/* Copies enumerated point `index` into `out`; TFORGE_EINPUT when index >= count. */
int tforge_space_point(tforge_level *out, const tforge_space *space, uint64_t index);
/* Index of an enumerated valid point (binary search), or TFORGE_NO_INDEX. */
uint64_t tforge_space_index_of(const tforge_space *space, const tforge_level *point);
/* 1 when every level is in range and every constraint holds (and, in a restricted space once
 * built, the point is one of those listed), else 0. Works unbuilt too. */
int tforge_space_is_valid(const tforge_space *space, const tforge_level *point);
/* A valid point, uniformly at random, into `out`: a uniform index when enumerated, else
 * rejection sampling; TFORGE_ERROR when max_tries draws found none. Needs a built space. */
int tforge_space_sample(tforge_level *out, const tforge_space *space, tforge_rng *rng);

/* The most neighbours a point can have: 2 per ordinal dimension, L-1 per other dimension. */
size_t tforge_space_max_neighbours(const tforge_space *space);
/* The valid points that differ from `point` in one dimension: one level up or down in an
 * ordinal dimension, any other level in a categorical or boolean one. They go to `out`, `capacity`
 * points of dims levels each, in dimension order (down before up, categorical levels ascending);
 * `*n_out` is how many. TFORGE_EINPUT when capacity < tforge_space_max_neighbours. */
int tforge_space_neighbours(tforge_level *out, size_t *n_out, const tforge_space *space,
                            const tforge_level *point, size_t capacity);

/* ---- The one converter of a point: levels <-> texts. Every text of a candidate (the store's
 * key, its parameters, the config sent to a worker, messages) is made here. ----
 * A level's text: a categorical's label, True/False for a boolean, an ordinal value as Python
 * prints it (an integral value as an integer, else the shortest text that reads back), unless
 * tforge_space_set_texts gave the dimension texts of its own (a recording's "1.0"). */
const char *tforge_space_text(const tforge_space *space, uint32_t dim, uint32_t level);
/* Gives ordinal dimension `dim` the texts its levels are written as, texts[l] for level l (copied;
 * each must read back as that level's value). Before the build. */
int tforge_space_set_texts(tforge_space *space, uint32_t dim, const char *const *texts);
/* A number as Python prints it into `buf` (size >= 32): the default text of an ordinal level. */
void tforge_space_number_text(char *buf, size_t size, double value);

/* The texts of a point, allocated, the caller frees them with free(). `which` selects the
 * dimensions written (NULL: all; else those d with which[d] != 0), in dimension order.
 *   format: "name=text, name=text" (for people)
 *   key:    "text,text" every dimension: a Kernel Tuner cache key, and the store's key
 *   json:   {"name":value,...} compact JSON: an ordinal's text as a number, a label as a string,
 *           a boolean as true/false */
int tforge_space_format(char **out, const tforge_space *space, const tforge_level *point,
                        const unsigned char *which);
int tforge_space_key(char **out, const tforge_space *space, const tforge_level *point);
int tforge_space_json(char **out, const tforge_space *space, const tforge_level *point,
                      const unsigned char *which);
/* The level of dimension `dim` whose value `text` names (a number for ordinals, a label,
 * True/False/true/false/1/0 for booleans), or -1. */
int64_t tforge_space_level_of(const tforge_space *space, uint32_t dim, const char *text);
/* Parses a point from `n` pairs (names[i], values[i]), every parameter given exactly once, each
 * value as tforge_space_level_of reads it. Errors name the parameter and the value. */
int tforge_space_parse_point(tforge_level *out, const tforge_space *space,
                             const char *const *names, const char *const *values, size_t n);

/* A view for strategy plugins whose functions call into `space`; valid while the space lives and
 * is not modified (build it first). The view never changes the space. */
tforge_space_view tforge_space_get_view(const tforge_space *space);

#ifdef __cplusplus
}
#endif
#endif
