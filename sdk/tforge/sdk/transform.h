/* Helpers for transform plugins (interface "tforge.transform/7"): a list of span edits that owns
 * its texts, the few questions about the source every rewrite asks (a line's indentation, where a
 * call's arguments end), an option lookup, the base state (tforge_sdk_xf_base: the parameters, the
 * edits and the description, and the describe / n_params / param / destroy that read it) and the
 * entry boilerplate (TFORGE_SDK_XF_TRANSFORM around it, TFORGE_SDK_XF_PLUGIN for a table of one's
 * own). Header-only, C11, the plugin ABI and the C library only. */
#ifndef TFORGE_SDK_TRANSFORM_H
#define TFORGE_SDK_TRANSFORM_H

#include <tforge/plugin/transform.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__)
#define TFORGE_SDK_XF_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define TFORGE_SDK_XF_PRINTF(f, a)
#endif

/* Edits whose texts the list owns; reset before each apply, freed with the state. */
typedef struct tforge_sdk_xf_edits {
    tforge_span_edit *items;
    char **texts;
    uint32_t n, capacity;
} tforge_sdk_xf_edits;

static inline void tforge_sdk_xf_reset(tforge_sdk_xf_edits *e)
{
    for (uint32_t i = 0; i < e->n; i++)
        free(e->texts[i]);
    e->n = 0;
}

static inline void tforge_sdk_xf_free(tforge_sdk_xf_edits *e)
{
    tforge_sdk_xf_reset(e);
    free(e->items);
    free(e->texts);
    memset(e, 0, sizeof *e);
}

/* Appends "replace [start, end) by the formatted text". TFORGE_PLUGIN_ENOMEM on failure. */
static inline int tforge_sdk_xf_edit(tforge_sdk_xf_edits *e, uint32_t start, uint32_t end,
                                     const char *format, ...)
    TFORGE_SDK_XF_PRINTF(4, 5);
static inline int tforge_sdk_xf_edit(tforge_sdk_xf_edits *e, uint32_t start, uint32_t end,
                                     const char *format, ...)
{
    if (e->n == e->capacity) {
        uint32_t cap = e->capacity ? 2 * e->capacity : 8;
        tforge_span_edit *items = realloc(e->items, cap * sizeof *items);
        if (items)
            e->items = items;
        char **texts = items ? realloc(e->texts, cap * sizeof *texts) : NULL;
        if (!texts)
            return TFORGE_PLUGIN_ENOMEM;
        e->texts = texts;
        e->capacity = cap;
    }
    va_list ap;
    va_start(ap, format);
    int len = vsnprintf(NULL, 0, format, ap);
    va_end(ap);
    char *text = len >= 0 ? malloc((size_t)len + 1) : NULL;
    if (!text)
        return TFORGE_PLUGIN_ENOMEM;
    va_start(ap, format);
    vsnprintf(text, (size_t)len + 1, format, ap);
    va_end(ap);
    e->texts[e->n] = text;
    e->items[e->n++] = (tforge_span_edit){start, end, text};
    return 0;
}

/* The indentation (spaces and tabs) of the line holding byte `at`, copied into `out`. */
static inline const char *tforge_sdk_xf_indent(char *out, size_t size, const char *source,
                                               uint32_t at)
{
    uint32_t begin = at;
    while (begin > 0 && source[begin - 1] != '\n')
        begin--;
    size_t n = 0;
    while (n + 1 < size && (source[begin + n] == ' ' || source[begin + n] == '\t'))
        n++;
    memcpy(out, source + begin, n);
    out[n] = '\0';
    return out;
}

/* The start of the line holding byte `at`. */
static inline uint32_t tforge_sdk_xf_line_start(const char *source, uint32_t at)
{
    while (at > 0 && source[at - 1] != '\n')
        at--;
    return at;
}

/* The kernel's @triton.jit decorator, or NULL: a decorator a transform defines goes directly
 * above it, so that it wraps the JITFunction under any autotune or heuristics. */
static inline const tforge_ir_statement *tforge_sdk_xf_jit_decorator(const tforge_ir_kernel *k)
{
    for (size_t i = 0; i < k->n_decorators; i++)
        if (k->decorators[i].kind && strcmp(k->decorators[i].kind, "jit") == 0)
            return &k->decorators[i];
    return NULL;
}

/* Where a transform defines its decorator: the start of the line of the kernel's first
 * decorator, whose indentation goes into `in` (`size` bytes). */
static inline uint32_t tforge_sdk_xf_before_decorators(const tforge_transform_input *input,
                                                       char *in,
                                                       size_t size)
{
    uint32_t at = tforge_sdk_xf_line_start(input->source, input->kernel->decorators[0].span.start);
    tforge_sdk_xf_indent(in, size, input->source, at);
    return at;
}

/* Appends a keyword argument ("name=value") to the call spanning `span` (it ends with ')'):
 * an insertion before the ')', with a comma unless the arguments end with one or are none. */
static inline int tforge_sdk_xf_add_keyword(tforge_sdk_xf_edits *e, const char *source,
                                            tforge_ir_span span,
                                            const char *keyword)
{
    uint32_t close = span.end - 1, k = close;
    while (k > span.start && (source[k - 1] == ' ' || source[k - 1] == '\n' ||
                              source[k - 1] == '\t' || source[k - 1] == '\r'))
        k--;
    int bare = k > span.start && (source[k - 1] == '(' || source[k - 1] == ',');
    return tforge_sdk_xf_edit(e, close, close, "%s%s", bare ? "" : ", ", keyword);
}

/* The value of option `key` (`options` may be NULL: none), or NULL. */
static inline const char *tforge_sdk_xf_option(const tforge_options_view *options, const char *key)
{
    for (uint32_t i = 0; options && i < options->count; i++)
        if (strcmp(options->keys[i], key) == 0)
            return options->values[i];
    return NULL;
}

/* Whether the space already has a parameter called `name`. */
static inline int tforge_sdk_xf_in_space(const tforge_transform_input *input, const char *name)
{
    for (uint32_t i = 0; i < input->n_space_params; i++)
        if (strcmp(input->space_params[i], name) == 0)
            return 1;
    return 0;
}

/* The 1-based line of byte `at`, for describe(). */
static inline int tforge_sdk_xf_line(const char *source, uint32_t at)
{
    int line = 1;
    for (uint32_t i = 0; i < at; i++)
        line += source[i] == '\n';
    return line;
}

/* ---- the state every transform starts with ---- */

/* the most a transform declares (pipeline: 4 loops, 4 each) */
enum { TFORGE_SDK_XF_MAX_PARAMS = 16 };

/* The first member of a transform's state (or the whole of it), what the base's describe,
 * n_params, param and destroy read. */
typedef struct tforge_sdk_xf_base {
    const tforge_host *host;
    const tforge_transform_input *input;
    tforge_transform_param params[TFORGE_SDK_XF_MAX_PARAMS];
    uint32_t n_params;
    tforge_sdk_xf_edits edits;        /* what apply returns */
    char description[256]; /* describe's line */
} tforge_sdk_xf_base;

/* A zeroed state of `size` bytes, whose first member is a tforge_sdk_xf_base, lent `host` and
 * `input`; NULL when out of memory. */
static inline void *tforge_sdk_xf_new(size_t size, const tforge_host *host,
                                      const tforge_transform_input *input)
{
    tforge_sdk_xf_base *b = calloc(1, size);
    if (b) {
        b->host = host;
        b->input = input;
    }
    return b;
}

/* `n` BOOLEAN rewrite parameters (at most `max`), named prefix0, prefix1, ... in `names`, a
 * transform's one per site, each of `effect` (a tforge_dim_effect); returns how many. */
static inline uint32_t tforge_sdk_xf_booleans(tforge_sdk_xf_base *b, char (*names)[32], size_t n,
                                              size_t max,
                                              const char *prefix, uint32_t effect)
{
    b->n_params = (uint32_t)(n < max ? n : max);
    for (uint32_t i = 0; i < b->n_params; i++) {
        snprintf(names[i], 32, "%s%u", prefix, i);
        b->params[i] = (tforge_transform_param){names[i], TFORGE_DIM_BOOLEAN,
                                                TFORGE_TRANSFORM_REWRITE, 0, NULL, 0, NULL, effect};
    }
    return b->n_params;
}

/* apply's last step: the base's edits into `*edits` and `*n_edits`; returns `rc`. */
static inline int tforge_sdk_xf_applied(const tforge_sdk_xf_base *b, int rc,
                                        const tforge_span_edit **edits,
                                        uint32_t *n_edits)
{
    *edits = b->edits.items;
    *n_edits = b->edits.n;
    return rc;
}

static inline const char *tforge_sdk_xf_describe(void *state)
{
    return ((const tforge_sdk_xf_base *)state)->description;
}

static inline uint32_t tforge_sdk_xf_n_params(void *state)
{
    return ((const tforge_sdk_xf_base *)state)->n_params;
}

static inline const tforge_transform_param *tforge_sdk_xf_param(void *state, uint32_t index)
{
    tforge_sdk_xf_base *b = state;
    return index < b->n_params ? &b->params[index] : NULL;
}

static inline void tforge_sdk_xf_destroy(void *state)
{
    tforge_sdk_xf_base *b = state;
    tforge_sdk_xf_free(&b->edits);
    free(b);
}

#ifndef TFORGE_SDK_XF_VERSION
#define TFORGE_SDK_XF_VERSION "1.0.0"
#endif

/* The module entry of a plugin offering one transform, from its interface table
 * (TFORGE_SDK_XF_TRANSFORM makes the table for a state that begins with a tforge_sdk_xf_base). */
#define TFORGE_SDK_XF_PLUGIN(plugin_id, plugin_description, interface_table)                       \
    static const tforge_plugin_descriptor tforge_sdk_xf_descriptor = {                             \
        .id = plugin_id, .version = TFORGE_SDK_XF_VERSION, .description = plugin_description,      \
        .interface_id = TFORGE_TRANSFORM_INTERFACE_ID, .interface = &interface_table};             \
    static uint32_t tforge_sdk_xf_count(void)                                                      \
    {                                                                                              \
        return 1;                                                                                  \
    }                                                                                              \
    static const tforge_plugin_descriptor *tforge_sdk_xf_get(uint32_t index)                       \
    {                                                                                              \
        return index == 0 ? &tforge_sdk_xf_descriptor : NULL;                                      \
    }                                                                                              \
    TFORGE_PLUGIN_EXPORT const tforge_plugin_module TFORGE_PLUGIN_ENTRY_NAME = {                   \
        TFORGE_PLUGIN_ABI_VERSION_INIT, plugin_id, NULL, NULL, tforge_sdk_xf_count,                \
        tforge_sdk_xf_get}

/* The module entry of a plugin offering one transform whose state begins with a tforge_sdk_xf_base:
 * its own create and apply, the base's describe, n_params, param and destroy. */
#define TFORGE_SDK_XF_TRANSFORM(id, description, create, apply)                                    \
    static const tforge_transform_interface tforge_sdk_xf_interface = {                            \
        sizeof(tforge_transform_interface), create, tforge_sdk_xf_describe,                        \
        tforge_sdk_xf_n_params, tforge_sdk_xf_param, apply,                                        \
        tforge_sdk_xf_destroy};                                                                    \
    TFORGE_SDK_XF_PLUGIN(id, description, tforge_sdk_xf_interface)

#endif
