#include "transforms.h"

#include "tforge/error.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct opened {
    const tforge_plugin_record *record;
    const tforge_transform_interface *api;
    void *state;
    char **keys, **values; /* its options */
    uint32_t n_options;
    tforge_transform_input input; /* lent to the plugin for the life of its state */
} opened;

struct tforge_transforms {
    const char *source;
    size_t size;
    opened *items;
    size_t n;
    const char **skipped;
    size_t n_skipped;
};

static void close_one(opened *o)
{
    if (o->state)
        o->api->destroy(o->state);
    for (uint32_t i = 0; i < o->n_options; i++) {
        free(o->keys[i]);
        free(o->values[i]);
    }
    free(o->keys);
    free(o->values);
    memset(o, 0, sizeof *o);
}

void tforge_transforms_free(tforge_transforms *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++)
        close_one(&t->items[i]);
    free(t->items);
    free(t->skipped);
    free(t);
}

/* The options "ID.KEY=VALUE" of transform `id` into o's keys and values. */
static int take_options(opened *o, const char *id, const char *const *options)
{
    size_t len = strlen(id), n = 0;
    for (size_t i = 0; options && options[i]; i++)
        n++;
    o->keys = calloc(n + 1, sizeof *o->keys);
    o->values = calloc(n + 1, sizeof *o->values);
    if (!o->keys || !o->values)
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    for (size_t i = 0; options && options[i]; i++) {
        const char *eq = strchr(options[i], '=');
        if (!eq)
            return tforge_error_set(TFORGE_EINPUT, "transform option '%s': expected ID.KEY=VALUE",
                                    options[i]);
        if (strncmp(options[i], id, len) != 0 || options[i][len] != '.')
            continue;
        const char *key = options[i] + len + 1;
        o->keys[o->n_options] = strndup(key, (size_t)(eq - key));
        o->values[o->n_options] = strdup(eq + 1);
        if (!o->keys[o->n_options] || !o->values[o->n_options])
            return tforge_error_set(TFORGE_ENOMEM, "out of memory");
        o->n_options++;
    }
    return 0;
}

static int open_one(tforge_transforms *t, const tforge_plugin_record *r,
                    const tforge_ir_kernel *kernel, const char *const *space_params,
                    size_t n_space_params, const char *const *options)
{
    const char *id = r->descriptor->id;
    const tforge_transform_interface *api =
        tforge_plugin_interface(r, TFORGE_TRANSFORM_INTERFACE_ID);
    if (!api)
        return tforge_error_set(TFORGE_EINPUT, "transform '%s' (%s) speaks %s, not %s", id,
                                r->path, r->descriptor->interface_id,
                                TFORGE_TRANSFORM_INTERFACE_ID);
    opened *o = &t->items[t->n]; /* in place: the plugin keeps pointers to o's views */
    *o = (opened){r, api, NULL, NULL, NULL, 0, {0}};
    int rc = take_options(o, id, options);
    tforge_options_view given = {sizeof given, o->n_options, (const char *const *)o->keys,
                                 (const char *const *)o->values};
    o->input = (tforge_transform_input){sizeof o->input, kernel, t->source, (uint32_t)t->size,
                                        (uint32_t)n_space_params, space_params};
    int applies =
        rc ? rc : api->create(&o->state, tforge_registry_host(), &given, &o->input);
    if (applies == TFORGE_TRANSFORM_NOT_APPLICABLE) {
        o->state = NULL;
        close_one(o);
        t->skipped[t->n_skipped++] = id;
        return 0;
    }
    if (applies == 0 && api->n_params(o->state) == 0)
        applies = tforge_error_set(TFORGE_ERROR, "transform '%s' applies but has no parameters",
                                   id);
    if (applies) {
        if (applies != rc) /* the plugin's own failure: its message is the last error */
            tforge_error_prefix("transform '%s' (%s)", id, r->path);
        close_one(o);
        return applies;
    }
    t->n++;
    return 0;
}

int tforge_transforms_open(tforge_transforms **out, const tforge_registry *registry,
                           const char *const *ids, const tforge_ir_kernel *kernel,
                           const char *source, size_t size, const char *const *space_params,
                           size_t n_space_params, const char *const *options)
{
    *out = NULL;
    tforge_transforms *t = calloc(1, sizeof *t);
    size_t n = tforge_registry_count(registry);
    if (t) {
        t->items = calloc(n + 1, sizeof *t->items);
        t->skipped = calloc(n + 1, sizeof *t->skipped);
    }
    if (!t || !t->items || !t->skipped) {
        tforge_transforms_free(t);
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    }
    t->source = source;
    t->size = size;
    int rc = 0;
    for (size_t i = 0; ids && ids[i] && !rc; i++)
        if (!tforge_registry_find(registry, TFORGE_TRANSFORM_INTERFACE_ID, ids[i]))
            rc = tforge_error_last()->code;
    for (size_t i = 0; i < n && !rc; i++) {
        const tforge_plugin_record *r = tforge_registry_at(registry, i);
        if (!tforge_plugin_is_kind(r, TFORGE_TRANSFORM_INTERFACE_ID))
            continue;
        int wanted = !ids;
        for (size_t j = 0; ids && ids[j] && !wanted; j++)
            wanted = strcmp(ids[j], r->descriptor->id) == 0;
        if (wanted)
            rc = open_one(t, r, kernel, space_params, n_space_params, options);
    }
    if (rc) {
        tforge_transforms_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

size_t tforge_transforms_count(const tforge_transforms *t)
{
    return t ? t->n : 0;
}

const char *tforge_transforms_id(const tforge_transforms *t, size_t i)
{
    return t->items[i].record->descriptor->id;
}

const char *tforge_transforms_describe(const tforge_transforms *t, size_t i)
{
    return t->items[i].api->describe(t->items[i].state);
}

uint32_t tforge_transforms_n_params(const tforge_transforms *t, size_t i)
{
    return t->items[i].api->n_params(t->items[i].state);
}

const tforge_transform_param *tforge_transforms_param(const tforge_transforms *t, size_t i,
                                                      uint32_t j)
{
    return t->items[i].api->param(t->items[i].state, j);
}

size_t tforge_transforms_n_skipped(const tforge_transforms *t)
{
    return t ? t->n_skipped : 0;
}

const char *tforge_transforms_skipped(const tforge_transforms *t, size_t i)
{
    return t->skipped[i];
}

tforge_dim_effect tforge_transforms_effect(const tforge_transforms *t, size_t i, uint32_t j)
{
    const tforge_transform_param *p = tforge_transforms_param(t, i, j);
    return t->items[i].record->abi_minor >= 3 && p->effect < TFORGE_EFFECT_COUNT
               ? (tforge_dim_effect)p->effect
               : TFORGE_EFFECT_UNKNOWN;
}

static int add_param(tforge_space *space, const tforge_transforms *t, size_t i, uint32_t j)
{
    const char *id = tforge_transforms_id(t, i);
    const tforge_transform_param *p = tforge_transforms_param(t, i, j);
    int rc;
    if (tforge_space_find(space, p->name) >= 0)
        return tforge_error_set(TFORGE_EINPUT, "transform '%s': parameter '%s' is in the space "
                                "already", id, p->name);
    if (p->kind == TFORGE_DIM_BOOLEAN) {
        rc = tforge_space_add_boolean(space, p->name);
    } else if (p->kind == TFORGE_DIM_CATEGORICAL) {
        rc = tforge_space_add_categorical(space, p->name, p->values, p->n_values);
    } else {
        double *values = malloc((p->n_values + 1) * sizeof *values);
        if (!values)
            return tforge_error_set(TFORGE_ENOMEM, "out of memory");
        rc = 0;
        for (uint32_t k = 0; k < p->n_values && !rc; k++) {
            char *end;
            values[k] = strtod(p->values[k], &end);
            if (end == p->values[k] || *end || (k && values[k] <= values[k - 1]))
                rc = tforge_error_set(TFORGE_EINPUT, "transform '%s': parameter '%s': value "
                                      "'%s' is not a number above the one before", id, p->name,
                                      p->values[k]);
        }
        if (!rc)
            rc = tforge_space_add_values(space, p->name, values, p->n_values);
        free(values);
    }
    if (!rc)
        rc = tforge_space_describe(space, tforge_space_dims(space) - 1, id,
                                   p->role == TFORGE_TRANSFORM_LAUNCH ? TFORGE_DIM_LAUNCH
                                                                      : TFORGE_DIM_REWRITE,
                                   tforge_transforms_effect(t, i, j));
    if (rc)
        tforge_error_prefix("transform '%s'", id);
    return rc;
}

/* The edits of transform i with every level 0 but param j's at `level`, as owned edits (owner i)
 * appended to `*all`; 0 or an error. */
static int single_edits(tforge_owned_edit **all, size_t *n, size_t *cap,
                        const tforge_transforms *t, size_t i, uint32_t j, tforge_level level)
{
    tforge_level levels[256] = {0};
    if (tforge_transforms_n_params(t, i) > 256)
        return 0;
    levels[j] = level;
    const tforge_span_edit *edits = NULL;
    uint32_t n_edits = 0;
    int rc = t->items[i].api->apply(t->items[i].state, levels, &edits, &n_edits);
    for (uint32_t e = 0; !rc && e < n_edits; e++) {
        if (*n == *cap) {
            size_t bigger_cap = *cap ? 2 * *cap : 16;
            tforge_owned_edit *bigger = realloc(*all, bigger_cap * sizeof *bigger);
            if (!bigger)
                return tforge_error_set(TFORGE_ENOMEM, "out of memory");
            *all = bigger;
            *cap = bigger_cap;
        }
        (*all)[(*n)++] = (tforge_owned_edit){edits[e], i};
    }
    return rc;
}

/* `name == value` in the space's language for a level of param p (p alone for a boolean). */
static void level_test(char *out, size_t size, const tforge_transform_param *p, tforge_level l)
{
    if (p->kind == TFORGE_DIM_BOOLEAN)
        snprintf(out, size, "%s", p->name);
    else if (p->kind == TFORGE_DIM_CATEGORICAL)
        snprintf(out, size, "%s == '%s'", p->name, p->values[l]);
    else
        snprintf(out, size, "%s == %s", p->name, p->values[l]);
}

static uint32_t n_levels(const tforge_transform_param *p)
{
    return p->kind == TFORGE_DIM_BOOLEAN ? 2 : p->n_values;
}

/* Two transforms whose edits overlap at some levels (descriptors replacing a load that eviction
 * appends a keyword to) would fail every such point: each pair of levels whose edits alone
 * overlap becomes a constraint, so that the search never proposes them. */
static int exclude_overlaps(const tforge_transforms *t, tforge_space *space)
{
    tforge_owned_edit *all = NULL;
    size_t cap = 0;
    int rc = 0;
    for (size_t a = 0; a < t->n && !rc; a++)
        for (uint32_t pa = 0; pa < tforge_transforms_n_params(t, a) && !rc; pa++)
            for (size_t b = a + 1; b < t->n && !rc; b++)
                for (uint32_t pb = 0; pb < tforge_transforms_n_params(t, b) && !rc; pb++) {
                    const tforge_transform_param *x = tforge_transforms_param(t, a, pa),
                                                 *y = tforge_transforms_param(t, b, pb);
                    for (tforge_level la = 1; la < n_levels(x) && !rc; la++)
                        for (tforge_level lb = 1; lb < n_levels(y) && !rc; lb++) {
                            size_t n = 0;
                            char *text = NULL;
                            if ((rc = single_edits(&all, &n, &cap, t, a, pa, la)) ||
                                (rc = single_edits(&all, &n, &cap, t, b, pb, lb)))
                                break;
                            const char *ids[2] = {tforge_transforms_id(t, a),
                                                  tforge_transforms_id(t, b)};
                            for (size_t e = 0; e < n; e++) /* owners as 0 and 1 for compose */
                                all[e].owner = all[e].owner == a ? 0 : 1;
                            if (!tforge_edits_compose(&text, t->source, t->size, all, n, ids)) {
                                free(text);
                                continue;
                            }
                            tforge_error_clear();
                            char test_a[160], test_b[160], constraint[400];
                            level_test(test_a, sizeof test_a, x, la);
                            level_test(test_b, sizeof test_b, y, lb);
                            snprintf(constraint, sizeof constraint, "not (%s and %s)", test_a,
                                     test_b);
                            rc = tforge_space_add_constraint(space, constraint);
                        }
                }
    free(all);
    return rc;
}

int tforge_transforms_add_to_space(const tforge_transforms *t, tforge_space *space)
{
    for (size_t i = 0; i < tforge_transforms_count(t); i++)
        for (uint32_t j = 0; j < tforge_transforms_n_params(t, i); j++) {
            int rc = add_param(space, t, i, j);
            if (rc)
                return rc;
        }
    for (size_t i = 0; i < tforge_transforms_count(t); i++)
        for (uint32_t j = 0; j < tforge_transforms_n_params(t, i); j++) {
            const tforge_transform_param *p = tforge_transforms_param(t, i, j);
            for (uint32_t c = 0; c < p->n_constraints; c++) {
                int rc = tforge_space_add_constraint(space, p->constraints[c]);
                if (rc)
                    return tforge_error_prefix("transform '%s'", tforge_transforms_id(t, i));
            }
        }
    return exclude_overlaps(t, space);
}

int tforge_transforms_find(const tforge_transforms *t, const char *name, size_t *transform,
                           uint32_t *param)
{
    for (size_t i = 0; i < tforge_transforms_count(t); i++)
        for (uint32_t j = 0; j < tforge_transforms_n_params(t, i); j++)
            if (strcmp(tforge_transforms_param(t, i, j)->name, name) == 0) {
                *transform = i;
                *param = j;
                return 0;
            }
    return TFORGE_ENOTFOUND;
}

/* The levels of transform i's params at `point`, into `levels`; 1 when any is not 0. Its
 * dimensions are those the space says it owns, added in its params' order (add_to_space); a
 * space without them leaves every level 0. */
static int levels_of(tforge_level *levels, const tforge_transforms *t, const tforge_space *space,
                     const tforge_level *point, size_t i)
{
    uint32_t n = tforge_transforms_n_params(t, i), j = 0;
    const char *id = tforge_transforms_id(t, i);
    int any = 0;
    memset(levels, 0, n * sizeof *levels);
    for (uint32_t d = 0; d < tforge_space_dims(space) && j < n; d++)
        if (tforge_space_role(space, d) != TFORGE_DIM_KNOB &&
            strcmp(tforge_space_owner(space, d), id) == 0) {
            levels[j] = point[d];
            any |= levels[j++] != 0;
        }
    return any;
}

int tforge_transforms_active(const tforge_transforms *t, const tforge_space *space,
                             const tforge_level *point, size_t i)
{
    tforge_level levels[256];
    return tforge_transforms_n_params(t, i) <= 256 && levels_of(levels, t, space, point, i);
}

int tforge_transforms_variant(char **text, const tforge_transforms *t, const tforge_space *space,
                              const tforge_level *point, size_t without)
{
    *text = NULL;
    size_t n = 0, cap = 0, count = tforge_transforms_count(t);
    tforge_owned_edit *all = NULL;
    const char **owners = calloc(count + 1, sizeof *owners);
    tforge_level *levels = NULL;
    int rc = owners ? 0 : tforge_error_set(TFORGE_ENOMEM, "out of memory");
    for (size_t i = 0; i < count && !rc; i++) {
        owners[i] = tforge_transforms_id(t, i);
        uint32_t n_params = tforge_transforms_n_params(t, i);
        tforge_level *more = realloc(levels, n_params * sizeof *levels);
        if (!more) {
            rc = tforge_error_set(TFORGE_ENOMEM, "out of memory");
            break;
        }
        levels = more;
        if (i == without || t->items[i].api->apply == NULL ||
            !levels_of(levels, t, space, point, i))
            continue;
        const tforge_span_edit *edits = NULL;
        uint32_t n_edits = 0;
        if ((rc = t->items[i].api->apply(t->items[i].state, levels, &edits, &n_edits))) {
            tforge_error_prefix("transform '%s'", owners[i]);
            break;
        }
        for (uint32_t e = 0; e < n_edits && !rc; e++) {
            if (n == cap) {
                cap = cap ? 2 * cap : 16;
                tforge_owned_edit *bigger = realloc(all, cap * sizeof *all);
                if (!bigger) {
                    rc = tforge_error_set(TFORGE_ENOMEM, "out of memory");
                    break;
                }
                all = bigger;
            }
            all[n++] = (tforge_owned_edit){edits[e], i};
        }
    }
    if (!rc && n)
        rc = tforge_edits_compose(text, t->source, t->size, all, n, owners);
    free(levels);
    free(all);
    free(owners);
    return rc;
}

/* An edit as sorted: its place, then its owner, then its given order. */
typedef struct placed {
    tforge_owned_edit e;
    size_t order;
} placed;

static int by_place(const void *pa, const void *pb)
{
    const placed *a = pa, *b = pb;
    if (a->e.edit.start != b->e.edit.start)
        return a->e.edit.start < b->e.edit.start ? -1 : 1;
    if (a->e.edit.end != b->e.edit.end)
        return a->e.edit.end < b->e.edit.end ? -1 : 1;
    if (a->e.owner != b->e.owner)
        return a->e.owner < b->e.owner ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order;
}

static int line_of(const char *source, uint32_t at)
{
    int line = 1;
    for (uint32_t i = 0; i < at; i++)
        line += source[i] == '\n';
    return line;
}

/* A growing text; `failed` once memory ran out. */
typedef struct text_out {
    char *text;
    size_t length, cap;
    int failed;
} text_out;

static void append(text_out *o, const char *bytes, size_t n)
{
    if (o->failed)
        return;
    if (o->length + n + 1 > o->cap) {
        size_t cap = 2 * (o->length + n + 1);
        char *bigger = realloc(o->text, cap);
        if (!bigger) {
            o->failed = 1;
            return;
        }
        o->text = bigger;
        o->cap = cap;
    }
    memcpy(o->text + o->length, bytes, n);
    o->length += n;
    o->text[o->length] = '\0';
}

/* An insertion of whitespace alone at a line's start: it indents that logical line (persistent
 * wraps a body in a loop so). */
static int is_indentation(const char *source, const tforge_span_edit *e)
{
    return e->start == e->end && e->text[0] && (e->start == 0 || source[e->start - 1] == '\n') &&
           strspn(e->text, " \t") == strlen(e->text);
}

int tforge_edits_compose(char **out, const char *source, size_t size, tforge_owned_edit *edits,
                         size_t n, const char *const *owners)
{
    *out = NULL;
    for (size_t i = 0; i < n; i++)
        if (edits[i].edit.end < edits[i].edit.start || edits[i].edit.end > size)
            return tforge_error_set(TFORGE_ERROR, "transform '%s': an edit of bytes [%u, %u) "
                                    "outside the file (%zu bytes)", owners[edits[i].owner],
                                    edits[i].edit.start, edits[i].edit.end, size);
    placed *p = malloc((n + 1) * sizeof *p);
    if (!p)
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        p[i] = (placed){edits[i], i};
    qsort(p, n, sizeof *p, by_place);
    int rc = 0;
    for (size_t i = 0; i + 1 < n && !rc; i++)
        if (p[i + 1].e.edit.start < p[i].e.edit.end)
            rc = tforge_error_set(
                TFORGE_ERROR, "overlapping edits: transform '%s' at line %d and transform '%s' "
                "at line %d change the same source", owners[p[i].e.owner],
                line_of(source, p[i].e.edit.start), owners[p[i + 1].e.owner],
                line_of(source, p[i + 1].e.edit.start));
    /* The indentation inserted at the start of the source line being written: the lines that a
     * later edit on that line writes (after a newline of its text) belong to the same block and
     * are indented as much, so that a multi-line rewrite inside a re-indented body (groupm's
     * swizzle inside persistent's tile loop) stays in it. */
    char indent[256];
    size_t indent_len = 0;
    text_out o = {NULL, 0, 0, 0};
    append(&o, "", 0); /* an empty text, never NULL, whatever follows */
    uint32_t at = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        const tforge_span_edit *e = &p[i].e.edit;
        if (memchr(source + at, '\n', e->start - at))
            indent_len = 0;
        append(&o, source + at, e->start - at);
        for (const char *t = e->text, *nl; *t; t = nl + 1) {
            nl = strchr(t, '\n');
            append(&o, t, nl ? (size_t)(nl - t + 1) : strlen(t));
            if (!nl)
                break;
            append(&o, indent, indent_len);
        }
        if (is_indentation(source, e) && indent_len + strlen(e->text) < sizeof indent) {
            memcpy(indent + indent_len, e->text, strlen(e->text));
            indent_len += strlen(e->text);
        } else if (memchr(source + e->start, '\n', e->end - e->start)) {
            indent_len = 0;
        }
        at = e->end;
    }
    if (!rc)
        append(&o, source + at, size - at);
    if (!rc && o.failed)
        rc = tforge_error_set(TFORGE_ENOMEM, "out of memory");
    if (rc)
        free(o.text);
    else
        *out = o.text;
    free(p);
    return rc;
}

int tforge_transform_ids_split(tforge_transform_ids *out, const char *list)
{
    *out = (tforge_transform_ids){0};
    if (!list)
        return 0;
    if (!(out->text = strdup(list)))
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    for (char *save = NULL, *id = strtok_r(out->text, ",", &save); id;
         id = strtok_r(NULL, ",", &save)) {
        if (out->n == TFORGE_MAX_TRANSFORM_IDS)
            return tforge_error_set(TFORGE_EINPUT, "--transforms %s: more than %d ids", list,
                                    TFORGE_MAX_TRANSFORM_IDS);
        out->ids[out->n++] = id;
    }
    return 0;
}

void tforge_transform_ids_free(tforge_transform_ids *ids)
{
    free(ids->text);
    *ids = (tforge_transform_ids){0};
}
