#include "tforge/space.h"

#include "expr.h"
#include "tforge/error.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LEVELS 65535
#define PROBE_SEED 0x5eed5bacefull /* the build's own draws: the same every time */

typedef struct dim {
    char *name;
    tforge_dim_kind kind;
    uint32_t levels;
    double *values; /* each level's value: ordinal values, 0/1, or the level of a categorical */
    char **labels;  /* categorical only */
    char **texts;   /* ordinal only: each level's text (tforge_space_text) */
    char *owner;    /* NULL: a knob (tforge_space_describe) */
    tforge_dim_role role;
    tforge_dim_effect effect;
} dim;

typedef struct constraint {
    char *text;
    tforge_expr *expr;
    int64_t last_dim; /* evaluated as soon as this dimension is fixed; -1: a constant */
    uint64_t rejected; /* raw points (enumeration) or draws (probe) it ruled out, for errors */
} constraint;

struct tforge_space {
    dim *dims;
    uint32_t n_dims;
    constraint *cons;
    uint32_t n_cons;
    int built, enumerated;
    tforge_space_build_options options;
    tforge_level *rows; /* count x n_dims levels, row-major, in lexicographic order */
    uint64_t count;
    tforge_level *allowed; /* tforge_space_restrict's points, until the build sorts them */
    uint64_t n_allowed;
    int restricted;
};

int tforge_space_new(tforge_space **out)
{
    *out = calloc(1, sizeof **out);
    return *out ? 0 : tforge_error_set(TFORGE_ENOMEM, "space: out of memory");
}

static void free_dim(dim *d)
{
    for (uint32_t l = 0; d->labels && l < d->levels; l++)
        free(d->labels[l]);
    free(d->labels);
    for (uint32_t l = 0; d->texts && l < d->levels; l++)
        free(d->texts[l]);
    free(d->texts);
    free(d->values);
    free(d->name);
    free(d->owner);
}

void tforge_space_free(tforge_space *space)
{
    if (!space)
        return;
    for (uint32_t d = 0; d < space->n_dims; d++)
        free_dim(&space->dims[d]);
    for (uint32_t c = 0; c < space->n_cons; c++) {
        free(space->cons[c].text);
        tforge_expr_free(space->cons[c].expr);
    }
    free(space->dims);
    free(space->cons);
    free(space->allowed);
    free(space->rows);
    free(space);
}

int tforge_space_find(const tforge_space *space, const char *name)
{
    for (uint32_t d = 0; d < space->n_dims; d++)
        if (!strcmp(space->dims[d].name, name))
            return (int)d;
    return -1;
}

static int check_name(const tforge_space *s, const char *name, size_t levels)
{
    static const char *const words[] = {"and",   "or",   "not", "True", "False",
                                        "true",  "false", "min", "max",  "abs"};
    if (s->built)
        return tforge_error_set(TFORGE_EINPUT, "space: already built, cannot add parameter '%s'",
                                name ? name : "");
    if (!name || !(isalpha((unsigned char)name[0]) || name[0] == '_'))
        return tforge_error_set(TFORGE_EINPUT, "parameter '%s': a name is an identifier",
                                name ? name : "");
    for (const char *c = name; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '_')
            return tforge_error_set(TFORGE_EINPUT, "parameter '%s': a name is an identifier",
                                    name);
    for (size_t k = 0; k < sizeof words / sizeof words[0]; k++)
        if (!strcmp(words[k], name))
            return tforge_error_set(TFORGE_EINPUT,
                                    "parameter '%s': the name is a word of the constraint language",
                                    name);
    if (tforge_space_find(s, name) >= 0)
        return tforge_error_set(TFORGE_EINPUT, "parameter '%s' is defined twice", name);
    if (levels == 0)
        return tforge_error_set(TFORGE_EINPUT, "parameter '%s': no values", name);
    if (levels > MAX_LEVELS)
        return tforge_error_set(TFORGE_EINPUT, "parameter '%s' has %zu values, at most %d allowed",
                                name, levels, MAX_LEVELS);
    return 0;
}

/* Appends a checked dimension; takes `values` and `labels` (freed on failure too). */
static int add_dim(tforge_space *s, const char *name, tforge_dim_kind kind, uint32_t levels,
                   double *values, char **labels)
{
    dim d = {NULL, kind, levels, values, labels, NULL, NULL, TFORGE_DIM_KNOB,
             TFORGE_EFFECT_UNKNOWN};
    dim *dims = NULL;
    d.name = strdup(name);
    int texts_ok = 1;
    if (kind == TFORGE_DIM_ORDINAL && values)
        texts_ok = (d.texts = calloc(levels, sizeof *d.texts)) != NULL;
    for (uint32_t l = 0; d.texts && l < levels && texts_ok; l++) {
        char text[32];
        tforge_space_number_text(text, sizeof text, values[l]);
        texts_ok = (d.texts[l] = strdup(text)) != NULL;
    }
    if (d.name && values && texts_ok)
        dims = realloc(s->dims, (s->n_dims + 1) * sizeof *dims);
    if (!dims) {
        free_dim(&d);
        return tforge_error_set(TFORGE_ENOMEM, "parameter '%s': out of memory", name);
    }
    s->dims = dims;
    s->dims[s->n_dims++] = d;
    return 0;
}

int tforge_space_add_range(tforge_space *space, const char *name, int64_t lo, int64_t hi,
                           int64_t step)
{
    const int64_t exact = (int64_t)1 << 53; /* every value must be exact as a double */
    if (lo > hi || step <= 0 || lo < -exact || hi > exact)
        return tforge_error_set(TFORGE_EINPUT,
                                "parameter '%s': range %lld..%lld step %lld needs lo <= hi, "
                                "step > 0 and bounds within 2^53",
                                name ? name : "", (long long)lo, (long long)hi, (long long)step);
    uint64_t n = ((uint64_t)hi - (uint64_t)lo) / (uint64_t)step + 1;
    int rc = check_name(space, name, n > MAX_LEVELS ? MAX_LEVELS + 1 : (size_t)n);
    if (rc < 0)
        return rc;
    double *values = malloc(n * sizeof *values);
    for (uint64_t l = 0; values && l < n; l++)
        values[l] = (double)(lo + (int64_t)l * step);
    return add_dim(space, name, TFORGE_DIM_ORDINAL, (uint32_t)n, values, NULL);
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int tforge_space_add_values(tforge_space *space, const char *name, const double *values,
                            size_t n)
{
    int rc = check_name(space, name, n);
    if (rc < 0)
        return rc;
    for (size_t l = 0; l < n; l++)
        if (!isfinite(values[l]))
            return tforge_error_set(TFORGE_EINPUT, "parameter '%s': value %zu is not finite",
                                    name, l);
    double *sorted = malloc(n * sizeof *sorted);
    if (sorted) {
        memcpy(sorted, values, n * sizeof *sorted);
        qsort(sorted, n, sizeof *sorted, compare_doubles);
        for (size_t l = 1; l < n; l++)
            if (sorted[l] == sorted[l - 1]) {
                rc = tforge_error_set(TFORGE_EINPUT, "parameter '%s': value %.17g given twice",
                                      name, sorted[l]);
                free(sorted);
                return rc;
            }
    }
    return add_dim(space, name, TFORGE_DIM_ORDINAL, (uint32_t)n, sorted, NULL);
}

static double *level_values(uint32_t n)
{
    double *values = malloc(n * sizeof *values);
    for (uint32_t l = 0; values && l < n; l++)
        values[l] = l;
    return values;
}

static int compare_strings(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int tforge_space_add_categorical(tforge_space *space, const char *name,
                                 const char *const *labels, size_t n)
{
    int rc = check_name(space, name, n);
    if (rc < 0)
        return rc;
    char **copy = calloc(n, sizeof *copy), **sorted = malloc(n * sizeof *sorted);
    if (!copy || !sorted)
        goto nomem;
    for (size_t l = 0; l < n; l++) {
        if (!labels[l]) {
            rc = tforge_error_set(TFORGE_EINPUT, "parameter '%s': label %zu is NULL", name, l);
            goto cleanup;
        }
        if (!(copy[l] = sorted[l] = strdup(labels[l])))
            goto nomem;
    }
    qsort(sorted, n, sizeof *sorted, compare_strings);
    for (size_t l = 1; l < n; l++)
        if (!strcmp(sorted[l], sorted[l - 1])) {
            rc = tforge_error_set(TFORGE_EINPUT, "parameter '%s': value '%s' given twice", name,
                                  sorted[l]);
            goto cleanup;
        }
    rc = add_dim(space, name, TFORGE_DIM_CATEGORICAL, (uint32_t)n, level_values((uint32_t)n),
                 copy);
    copy = NULL; /* add_dim owns it now */
    goto cleanup;
nomem:
    rc = tforge_error_set(TFORGE_ENOMEM, "parameter '%s': out of memory", name);
cleanup:
    for (size_t l = 0; copy && l < n; l++)
        free(copy[l]);
    free(copy);
    free(sorted);
    return rc;
}

int tforge_space_add_boolean(tforge_space *space, const char *name)
{
    int rc = check_name(space, name, 2);
    return rc < 0 ? rc : add_dim(space, name, TFORGE_DIM_BOOLEAN, 2, level_values(2), NULL);
}

int tforge_space_add_constraint(tforge_space *space, const char *text)
{
    if (space->built)
        return tforge_error_set(TFORGE_EINPUT, "space: already built, cannot add constraint '%s'",
                                text);
    constraint c = {NULL, NULL, -1, 0};
    constraint *cons = NULL;
    tforge_expr_param *params = calloc(space->n_dims + 1, sizeof *params);
    int rc = TFORGE_ENOMEM;
    if (!params)
        goto cleanup;
    for (uint32_t d = 0; d < space->n_dims; d++) {
        const dim *x = &space->dims[d];
        params[d] = (tforge_expr_param){
            x->name,
            x->kind == TFORGE_DIM_ORDINAL ? TFORGE_EXPR_NUMBER
            : x->kind == TFORGE_DIM_BOOLEAN ? TFORGE_EXPR_BOOLEAN
                                            : TFORGE_EXPR_STRING,
            x->values, (const char *const *)x->labels, x->levels};
    }
    if ((rc = tforge_expr_parse(&c.expr, text, params, space->n_dims)) < 0)
        goto cleanup;
    rc = TFORGE_ENOMEM;
    if (!(c.text = strdup(text)) ||
        !(cons = realloc(space->cons, (space->n_cons + 1) * sizeof *cons)))
        goto cleanup;
    c.last_dim = tforge_expr_last_dim(c.expr);
    space->cons = cons;
    space->cons[space->n_cons++] = c;
    c = (constraint){NULL, NULL, -1, 0};
    rc = 0;
cleanup:
    if (rc == TFORGE_ENOMEM)
        tforge_error_set(rc, "constraint '%s': out of memory", text);
    free(params);
    free(c.text);
    tforge_expr_free(c.expr);
    return rc;
}

uint64_t tforge_space_raw_count(const tforge_space *space)
{
    uint64_t n = 1;
    for (uint32_t d = 0; d < space->n_dims; d++) {
        if (n > UINT64_MAX / space->dims[d].levels)
            return UINT64_MAX;
        n *= space->dims[d].levels;
    }
    return n;
}

/* The index of the first constraint that rules the point out, or -1. */
static int64_t first_violated(const tforge_space *s, const tforge_level *point)
{
    for (uint32_t c = 0; c < s->n_cons; c++)
        if (!tforge_expr_eval(s->cons[c].expr, point))
            return c;
    return -1;
}

static int empty_error(const tforge_space *s, const char *how)
{
    uint32_t worst = 0;
    for (uint32_t c = 1; c < s->n_cons; c++)
        if (s->cons[c].rejected > s->cons[worst].rejected)
            worst = c;
    return tforge_error_set(TFORGE_EINPUT,
                            "space: no valid point (%s); constraint '%s' rejected the most", how,
                            s->n_cons ? s->cons[worst].text : "");
}

/* Nested enumeration in dimension order: a constraint is checked as soon as the last dimension
 * it names is fixed, so a violation prunes every point below it at once. */
static int enumerate(tforge_space *s)
{
    uint32_t n = s->n_dims;
    uint32_t *order = malloc((s->n_cons + 1) * sizeof *order);
    uint32_t *start = malloc((n + 1) * sizeof *start);
    uint64_t *below = malloc(n * sizeof *below), cap = 0;
    tforge_level *point = calloc(n, sizeof *point);
    int rc = TFORGE_ENOMEM;
    if (!order || !start || !below || !point)
        goto cleanup;
    uint32_t m = 0; /* constraints grouped by their last dimension: start[d] .. start[d + 1] */
    for (uint32_t d = 0; d < n; d++) {
        start[d] = m;
        for (uint32_t c = 0; c < s->n_cons; c++)
            if (s->cons[c].last_dim == (int64_t)d)
                order[m++] = c;
    }
    start[n] = m;
    below[n - 1] = 1;
    for (uint32_t d = n - 1; d > 0; d--)
        below[d - 1] = below[d] * s->dims[d].levels;
    uint32_t d = 0;
    for (;;) {
        int ok = 1;
        for (uint32_t k = start[d]; k < start[d + 1] && ok; k++)
            if (!tforge_expr_eval(s->cons[order[k]].expr, point)) {
                s->cons[order[k]].rejected += below[d];
                ok = 0;
            }
        if (ok && d + 1 < n) {
            point[++d] = 0;
            continue;
        }
        if (ok) {
            if (s->count == cap) {
                cap = cap ? 2 * cap : 1024;
                tforge_level *rows = realloc(s->rows, cap * n * sizeof *rows);
                if (!rows)
                    goto cleanup;
                s->rows = rows;
            }
            memcpy(s->rows + s->count++ * n, point, n * sizeof *point);
        }
        while (++point[d] == s->dims[d].levels) {
            if (d == 0)
                goto done;
            d--;
        }
    }
done:
    if (s->count == 0) {
        char how[96];
        snprintf(how, sizeof how, "all %llu raw points violate a constraint",
                 (unsigned long long)tforge_space_raw_count(s));
        rc = empty_error(s, how);
        goto cleanup;
    }
    tforge_level *rows = realloc(s->rows, s->count * n * sizeof *rows);
    if (rows)
        s->rows = rows;
    rc = 0;
cleanup:
    if (rc == TFORGE_ENOMEM)
        tforge_error_set(rc, "space: out of memory enumerating %llu points",
                         (unsigned long long)s->count);
    free(order);
    free(start);
    free(below);
    free(point);
    return rc;
}

/* Lexicographic order of points, the order of enumeration. */
static int compare_levels(const tforge_level *a, const tforge_level *b, uint32_t n)
{
    for (uint32_t d = 0; d < n; d++)
        if (a[d] != b[d])
            return a[d] < b[d] ? -1 : 1;
    return 0;
}

static int compare_rows(const void *a, const void *b, void *n)
{
    return compare_levels(a, b, *(const uint32_t *)n);
}

static int in_range(const tforge_space *s, const tforge_level *point);

/* A restricted space's valid points are the allowed ones that satisfy the constraints, sorted
 * so that index_of's binary search works. */
static int keep_allowed(tforge_space *s)
{
    uint32_t n = s->n_dims;
    s->count = 0;
    for (uint64_t i = 0; i < s->n_allowed; i++) {
        const tforge_level *p = s->allowed + i * n;
        int64_t c = in_range(s, p) ? first_violated(s, p) : -2;
        if (c == -2)
            return tforge_error_set(TFORGE_EINPUT, "space: allowed point %llu has a level out of "
                                    "range", (unsigned long long)i);
        if (c >= 0) {
            s->cons[c].rejected++;
            continue;
        }
        memmove(s->allowed + s->count++ * n, p, n * sizeof *p);
    }
    if (s->count == 0)
        return empty_error(s, "no allowed point satisfies the constraints");
    qsort_r(s->allowed, s->count, n * sizeof *s->allowed, compare_rows, &n);
    for (uint64_t i = 1; i < s->count; i++)
        if (compare_levels(s->allowed + (i - 1) * n, s->allowed + i * n, n) == 0) {
            char *text = NULL;
            tforge_space_format(&text, s, s->allowed + i * n, NULL);
            int rc = tforge_error_set(TFORGE_EINPUT, "space: point %s is allowed twice",
                                      text ? text : "?");
            free(text);
            return rc;
        }
    s->rows = s->allowed;
    s->allowed = NULL;
    return 0;
}

static void draw(tforge_level *out, const tforge_space *s, tforge_rng *rng)
{
    for (uint32_t d = 0; d < s->n_dims; d++)
        out[d] = (tforge_level)tforge_rng_below(rng, s->dims[d].levels);
}

/* Without enumeration, check that rejection sampling finds valid points at all. */
static int probe(tforge_space *s)
{
    tforge_rng rng;
    tforge_level *point = malloc(s->n_dims * sizeof *point);
    if (!point)
        return tforge_error_set(TFORGE_ENOMEM, "space: out of memory");
    tforge_rng_seed(&rng, PROBE_SEED);
    for (uint64_t t = 0; t < s->options.max_tries; t++) {
        draw(point, s, &rng);
        int64_t c = first_violated(s, point);
        if (c < 0) {
            free(point);
            return 0;
        }
        s->cons[c].rejected++;
    }
    free(point);
    char how[200];
    snprintf(how, sizeof how,
             "%llu uniform draws of %llu raw points found none: valid fraction below 1/%llu?",
             (unsigned long long)s->options.max_tries,
             (unsigned long long)tforge_space_raw_count(s),
             (unsigned long long)s->options.max_tries);
    return empty_error(s, how);
}

int tforge_space_build(tforge_space *space, const tforge_space_build_options *options)
{
    const tforge_space_build_options defaults = TFORGE_SPACE_BUILD_OPTIONS_INIT;
    if (!options)
        options = &defaults;
    if (options->version != TFORGE_SPACE_BUILD_OPTIONS_VERSION || options->max_tries == 0)
        return tforge_error_set(TFORGE_EINPUT,
                                "space: build options need version %d and max_tries > 0",
                                TFORGE_SPACE_BUILD_OPTIONS_VERSION);
    if (space->built)
        return tforge_error_set(TFORGE_EINPUT, "space: already built");
    if (space->n_dims == 0)
        return tforge_error_set(TFORGE_EINPUT, "space: no parameters");
    space->options = *options;
    for (uint32_t c = 0; c < space->n_cons; c++) {
        space->cons[c].rejected = 0; /* counts from a failed build before */
        if (space->cons[c].last_dim < 0 && !tforge_expr_eval(space->cons[c].expr, NULL))
            return tforge_error_set(TFORGE_EINPUT,
                                    "space: no valid point: constraint '%s' is always false",
                                    space->cons[c].text);
    }
    space->enumerated =
        space->restricted || tforge_space_raw_count(space) <= options->enumerate_limit;
    int rc = space->restricted ? keep_allowed(space)
             : space->enumerated ? enumerate(space)
                                 : probe(space);
    if (rc < 0) {
        free(space->rows);
        space->rows = NULL;
        space->count = 0;
        space->enumerated = 0;
        return rc;
    }
    space->built = 1;
    return 0;
}

int tforge_space_describe(tforge_space *space, uint32_t index, const char *owner,
                          tforge_dim_role role, uint32_t effect)
{
    if (space->built || index >= space->n_dims)
        return tforge_error_set(TFORGE_EINPUT, "space: dimension %u cannot be described (%s)",
                                index, space->built ? "the space is built" : "no such dimension");
    dim *d = &space->dims[index];
    if ((unsigned)role > TFORGE_DIM_LAUNCH || effect >= TFORGE_EFFECT_COUNT || !owner)
        return tforge_error_set(TFORGE_EINPUT, "parameter '%s': role %u, effect %u or owner "
                                "%s is not one the space knows", d->name, (unsigned)role,
                                (unsigned)effect, owner ? owner : "(none)");
    char *copy = strdup(owner);
    if (!copy)
        return tforge_error_set(TFORGE_ENOMEM, "parameter '%s': out of memory", d->name);
    free(d->owner);
    d->owner = copy;
    d->role = role;
    d->effect = (tforge_dim_effect)effect;
    return 0;
}

const char *tforge_space_owner(const tforge_space *space, uint32_t dim)
{
    return space->dims[dim].owner ? space->dims[dim].owner : TFORGE_DIM_OWNER_KNOB;
}

tforge_dim_role tforge_space_role(const tforge_space *space, uint32_t dim)
{
    return space->dims[dim].role;
}

tforge_dim_effect tforge_space_effect(const tforge_space *space, uint32_t dim)
{
    return space->dims[dim].effect;
}

uint32_t tforge_space_dims(const tforge_space *space)
{
    return space->n_dims;
}

uint32_t tforge_space_levels(const tforge_space *space, uint32_t dim)
{
    return space->dims[dim].levels;
}

tforge_dim_kind tforge_space_kind(const tforge_space *space, uint32_t dim)
{
    return space->dims[dim].kind;
}

const char *tforge_space_name(const tforge_space *space, uint32_t dim)
{
    return space->dims[dim].name;
}

double tforge_space_value(const tforge_space *space, uint32_t dim, uint32_t level)
{
    return space->dims[dim].values[level];
}

const char *tforge_space_label(const tforge_space *space, uint32_t dim, uint32_t level)
{
    return space->dims[dim].labels ? space->dims[dim].labels[level] : NULL;
}

uint64_t tforge_space_count(const tforge_space *space)
{
    return space->count;
}

int tforge_space_point(tforge_level *out, const tforge_space *space, uint64_t index)
{
    if (index >= space->count)
        return tforge_error_set(TFORGE_EINPUT, "space: point %llu of %llu enumerated",
                                (unsigned long long)index, (unsigned long long)space->count);
    memcpy(out, space->rows + index * space->n_dims, space->n_dims * sizeof *out);
    return 0;
}

uint64_t tforge_space_index_of(const tforge_space *space, const tforge_level *point)
{
    uint64_t lo = 0, hi = space->count;
    uint32_t n = space->n_dims;
    while (lo < hi) { /* rows are in lexicographic order */
        uint64_t mid = lo + (hi - lo) / 2;
        int c = compare_levels(space->rows + mid * n, point, n);
        if (c == 0)
            return mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return TFORGE_NO_INDEX;
}

static int in_range(const tforge_space *s, const tforge_level *point)
{
    for (uint32_t d = 0; d < s->n_dims; d++)
        if (point[d] >= s->dims[d].levels)
            return 0;
    return 1;
}

int tforge_space_is_valid(const tforge_space *space, const tforge_level *point)
{
    if (!in_range(space, point) || first_violated(space, point) >= 0)
        return 0;
    return !space->restricted || !space->built ||
           tforge_space_index_of(space, point) != TFORGE_NO_INDEX;
}

int tforge_space_restrict(tforge_space *space, const tforge_level *points, uint64_t n)
{
    if (space->built)
        return tforge_error_set(TFORGE_EINPUT, "space: restrict before the build");
    if (space->n_dims == 0 || n == 0)
        return tforge_error_set(TFORGE_EINPUT, "space: restrict needs parameters and points");
    tforge_level *copy = malloc(n * space->n_dims * sizeof *copy);
    if (!copy)
        return tforge_error_set(TFORGE_ENOMEM, "space: out of memory");
    memcpy(copy, points, n * space->n_dims * sizeof *copy);
    free(space->allowed);
    space->allowed = copy;
    space->n_allowed = n;
    space->restricted = 1;
    return 0;
}

int tforge_space_sample(tforge_level *out, const tforge_space *space, tforge_rng *rng)
{
    if (!space->built)
        return tforge_error_set(TFORGE_EINPUT, "space: sampling needs a built space");
    if (space->enumerated)
        return tforge_space_point(out, space, tforge_rng_below(rng, space->count));
    for (uint64_t t = 0; t < space->options.max_tries; t++) {
        draw(out, space, rng);
        if (first_violated(space, out) < 0)
            return 0;
    }
    return tforge_error_set(TFORGE_ERROR,
                            "space: no valid point in %llu random draws: the valid fraction "
                            "looks below 1/%llu (raise max_tries or the enumeration limit)",
                            (unsigned long long)space->options.max_tries,
                            (unsigned long long)space->options.max_tries);
}

size_t tforge_space_max_neighbours(const tforge_space *space)
{
    size_t n = 0;
    for (uint32_t d = 0; d < space->n_dims; d++)
        n += space->dims[d].kind == TFORGE_DIM_ORDINAL ? 2 : space->dims[d].levels - 1;
    return n;
}

int tforge_space_neighbours(tforge_level *out, size_t *n_out, const tforge_space *space,
                            const tforge_level *point, size_t capacity)
{
    uint32_t n = space->n_dims;
    *n_out = 0;
    if (capacity < tforge_space_max_neighbours(space))
        return tforge_error_set(TFORGE_EINPUT, "space: room for %zu neighbours, %zu needed",
                                capacity, tforge_space_max_neighbours(space));
    if (!in_range(space, point))
        return tforge_error_set(TFORGE_EINPUT, "space: point has a level out of range");
    for (uint32_t d = 0; d < n; d++) {
        int ordinal = space->dims[d].kind == TFORGE_DIM_ORDINAL;
        for (uint32_t l = 0; l < space->dims[d].levels; l++) {
            if (l == point[d] || (ordinal && l + 1 != point[d] && l != point[d] + 1u))
                continue;
            tforge_level *row = out + *n_out * n;
            memcpy(row, point, n * sizeof *row);
            row[d] = (tforge_level)l;
            if (first_violated(space, row) < 0)
                ++*n_out;
        }
    }
    return 0;
}

void tforge_space_number_text(char *buf, size_t size, double value)
{
    if (value == floor(value) && fabs(value) < 1e15) {
        snprintf(buf, size, "%.0f", value);
        return;
    }
    /* Python prints the shortest text that reads back as the same double. "%.15g" already is
     * that text when it has 15 digits or fewer (%g drops trailing zeros), and for a non-integral
     * value %g switches to an exponent exactly where Python does. */
    for (int precision = 15; precision <= 17; precision++) {
        snprintf(buf, size, "%.*g", precision, value);
        if (strtod(buf, NULL) == value)
            return;
    }
}

const char *tforge_space_text(const tforge_space *space, uint32_t dim, uint32_t level)
{
    const struct dim *x = &space->dims[dim];
    return x->kind == TFORGE_DIM_CATEGORICAL ? x->labels[level]
           : x->kind == TFORGE_DIM_BOOLEAN   ? (level ? "True" : "False")
                                             : x->texts[level];
}

int tforge_space_set_texts(tforge_space *space, uint32_t dim, const char *const *texts)
{
    if (space->built || dim >= space->n_dims || space->dims[dim].kind != TFORGE_DIM_ORDINAL)
        return tforge_error_set(TFORGE_EINPUT, "space: texts are given to an ordinal dimension "
                                "before the build");
    struct dim *x = &space->dims[dim];
    for (uint32_t l = 0; l < x->levels; l++) {
        char *end;
        if (!texts[l] || strtod(texts[l], &end) != x->values[l] || end == texts[l] || *end)
            return tforge_error_set(TFORGE_EINPUT, "parameter '%s': text '%s' of level %u does "
                                    "not read as its value %.17g", x->name,
                                    texts[l] ? texts[l] : "(null)", l, x->values[l]);
    }
    for (uint32_t l = 0; l < x->levels; l++) {
        char *copy = strdup(texts[l]);
        if (!copy)
            return tforge_error_set(TFORGE_ENOMEM, "space: out of memory");
        free(x->texts[l]);
        x->texts[l] = copy;
    }
    return 0;
}

/* A growing text, snprintf-like: `used` counts the full length even when it did not fit. */
typedef struct text_buf {
    char *buf;
    size_t size, used;
} text_buf;

static void put(text_buf *t, const char *s, size_t n)
{
    if (t->used + n < t->size)
        memcpy(t->buf + t->used, s, n);
    t->used += n;
}

static void put_str(text_buf *t, const char *s)
{
    put(t, s, strlen(s));
}

/* `s` as a JSON string: quoted, with quotes, backslashes and control characters escaped. */
static void put_json_string(text_buf *t, const char *s)
{
    put(t, "\"", 1);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        char esc[8];
        if (*c == '"' || *c == '\\') {
            esc[0] = '\\', esc[1] = (char)*c;
            put(t, esc, 2);
        } else if (*c < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", *c);
            put(t, esc, 6);
        } else {
            put(t, (const char *)c, 1);
        }
    }
    put(t, "\"", 1);
}

typedef enum point_form { FORM_NAMES, FORM_KEY, FORM_JSON } point_form;

/* Writes a point in one form into `t` (with t->size 0 it only measures). */
static void write_point(text_buf *t, const tforge_space *s, const tforge_level *point,
                        const unsigned char *which, point_form form)
{
    size_t n = 0;
    if (form == FORM_JSON)
        put(t, "{", 1);
    for (uint32_t d = 0; d < s->n_dims; d++) {
        if (which && !which[d])
            continue;
        const dim *x = &s->dims[d];
        const char *text = tforge_space_text(s, d, point[d]);
        if (n++)
            put_str(t, form == FORM_NAMES ? ", " : ",");
        if (form == FORM_NAMES) {
            put_str(t, x->name);
            put(t, "=", 1);
            put_str(t, text);
        } else if (form == FORM_KEY) {
            put_str(t, text);
        } else {
            put_json_string(t, x->name);
            put(t, ":", 1);
            if (x->kind == TFORGE_DIM_CATEGORICAL)
                put_json_string(t, text);
            else
                put_str(t, x->kind == TFORGE_DIM_BOOLEAN ? (point[d] ? "true" : "false") : text);
        }
    }
    if (form == FORM_JSON)
        put(t, "}", 1);
}

static int point_text(char **out, const tforge_space *space, const tforge_level *point,
                      const unsigned char *which, point_form form)
{
    *out = NULL;
    if (!in_range(space, point))
        return tforge_error_set(TFORGE_EINPUT, "space: point has a level out of range");
    text_buf t = {NULL, 0, 0};
    write_point(&t, space, point, which, form);
    t = (text_buf){malloc(t.used + 1), t.used + 1, 0};
    if (!t.buf)
        return tforge_error_set(TFORGE_ENOMEM, "space: out of memory");
    write_point(&t, space, point, which, form);
    t.buf[t.used] = '\0';
    *out = t.buf;
    return 0;
}

int tforge_space_format(char **out, const tforge_space *space, const tforge_level *point,
                        const unsigned char *which)
{
    return point_text(out, space, point, which, FORM_NAMES);
}

int tforge_space_key(char **out, const tforge_space *space, const tforge_level *point)
{
    return point_text(out, space, point, NULL, FORM_KEY);
}

int tforge_space_json(char **out, const tforge_space *space, const tforge_level *point,
                      const unsigned char *which)
{
    return point_text(out, space, point, which, FORM_JSON);
}

/* The level whose text is `text`, or -1. */
static int64_t parse_level(const dim *x, const char *text)
{
    if (x->kind == TFORGE_DIM_CATEGORICAL) {
        for (uint32_t l = 0; l < x->levels; l++)
            if (!strcmp(x->labels[l], text))
                return l;
        return -1;
    }
    if (x->kind == TFORGE_DIM_BOOLEAN) {
        if (!strcmp(text, "True") || !strcmp(text, "true") || !strcmp(text, "1"))
            return 1;
        if (!strcmp(text, "False") || !strcmp(text, "false") || !strcmp(text, "0"))
            return 0;
        return -1;
    }
    char *end;
    double v = strtod(text, &end);
    if (end == text || *end)
        return -1;
    const double *hit = bsearch(&v, x->values, x->levels, sizeof v, compare_doubles);
    return hit ? hit - x->values : -1;
}

int64_t tforge_space_level_of(const tforge_space *space, uint32_t dim, const char *text)
{
    return parse_level(&space->dims[dim], text);
}

int tforge_space_parse_point(tforge_level *out, const tforge_space *space,
                             const char *const *names, const char *const *values, size_t n)
{
    uint32_t given = 0;
    for (uint32_t d = 0; d < space->n_dims; d++)
        out[d] = MAX_LEVELS; /* not a level: marks "not given yet" */
    for (size_t i = 0; i < n; i++) {
        int d = tforge_space_find(space, names[i]);
        if (d < 0)
            return tforge_error_set(TFORGE_ENOTFOUND, "point: unknown parameter '%s'", names[i]);
        if (out[d] != MAX_LEVELS)
            return tforge_error_set(TFORGE_EINPUT, "point: parameter '%s' given twice", names[i]);
        int64_t l = parse_level(&space->dims[d], values[i]);
        if (l < 0)
            return tforge_error_set(TFORGE_EINPUT, "point: parameter '%s' has no value '%s'",
                                    names[i], values[i]);
        out[d] = (tforge_level)l;
        given++;
    }
    for (uint32_t d = 0; d < space->n_dims && given < space->n_dims; d++)
        if (out[d] == MAX_LEVELS)
            return tforge_error_set(TFORGE_EINPUT, "point: parameter '%s' is missing",
                                    space->dims[d].name);
    return 0;
}

static uint32_t view_dims(void *c)
{
    return tforge_space_dims(c);
}

static uint32_t view_levels(void *c, uint32_t dim)
{
    return tforge_space_levels(c, dim);
}

static uint32_t view_kind(void *c, uint32_t dim)
{
    return (uint32_t)tforge_space_kind(c, dim);
}

static const char *view_name(void *c, uint32_t dim)
{
    return tforge_space_name(c, dim);
}

static double view_value(void *c, uint32_t dim, uint32_t level)
{
    return tforge_space_value(c, dim, level);
}

static uint64_t view_count(void *c)
{
    return tforge_space_count(c);
}

static void view_point(void *c, uint64_t index, tforge_level *out)
{
    (void)tforge_space_point(out, c, index);
}

static uint64_t view_index_of(void *c, const tforge_level *point)
{
    return tforge_space_index_of(c, point);
}

static int view_is_valid(void *c, const tforge_level *point)
{
    return tforge_space_is_valid(c, point);
}

static int view_sample(void *c, tforge_rng *rng, tforge_level *out)
{
    return tforge_space_sample(out, c, rng);
}

static const char *view_owner(void *c, uint32_t dim)
{
    return tforge_space_owner(c, dim);
}

static uint32_t view_effect(void *c, uint32_t dim)
{
    return (uint32_t)tforge_space_effect(c, dim);
}

tforge_space_view tforge_space_get_view(const tforge_space *space)
{
    tforge_space_view v = {sizeof v,      (void *)space, view_dims,     view_levels,
                           view_kind,     view_name,     view_value,    view_count,
                           view_point,    view_index_of, view_is_valid, view_sample,
                           view_owner,    view_effect};
    return v;
}
