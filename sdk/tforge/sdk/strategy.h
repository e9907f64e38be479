/* The strategy SDK: what every shipped strategy is built from, installed with the plugin headers
 * (as <tforge/sdk/strategy.h>) so that an out-of-tree strategy copies nothing. Each strategy is a
 * plugin module of its own, so everything here is static inline and uses only the plugin ABI and
 * the C library: the seen-point archive, unseen draws, neighbours and moves, a Gaussian draw,
 * option parsing against the published table, and the entry boilerplate (TFORGE_SDK_STRAT_PLUGIN).
 * Every strategy keeps an archive of the points it has seen (proposed, or told by the host without
 * being proposed) keyed by their level vectors: a point in the archive is never proposed again,
 * whatever the strategy's own logic asks for. Fresh points come from a lazily shuffled permutation
 * of the enumerated space (O(1) a draw, memory in the draws), or from the space's sampler with
 * rejection of seen points when the space is not enumerated. */
#ifndef TFORGE_SDK_STRATEGY_H
#define TFORGE_SDK_STRATEGY_H

#include <tforge/plugin/strategy.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TFORGE_SDK_STRAT_NONE UINT32_MAX

/* Draws from the sampler before a space that is not enumerated counts as used up. */
#define TFORGE_SDK_STRAT_SAMPLE_TRIES 256

#if defined(__GNUC__)
#define TFORGE_SDK_STRAT_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define TFORGE_SDK_STRAT_PRINTF(f, a)
#endif

/* ---- errors ---- */

/* Records "strategy '<name>': <message>" with the host and returns `code`. */
static inline int tforge_sdk_strat_verror(const tforge_host *host, const char *name, int code,
                                          const char *format, va_list ap)
{
    char message[512];
    int used = snprintf(message, sizeof message, "strategy '%s': ", name);
    if (used >= 0 && (size_t)used < sizeof message)
        vsnprintf(message + used, sizeof message - (size_t)used, format, ap);
    return host && host->error ? host->error(host, code, message) : code;
}

static inline int tforge_sdk_strat_host_error(const tforge_host *host, const char *name, int code,
                                              const char *format, ...) TFORGE_SDK_STRAT_PRINTF(4,
                                                                                               5);
static inline int tforge_sdk_strat_host_error(const tforge_host *host, const char *name, int code,
                                              const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    code = tforge_sdk_strat_verror(host, name, code, format, ap);
    va_end(ap);
    return code;
}

/* ---- the archive: every point seen, with what was measured ---- */

enum { TFORGE_SDK_STRAT_PENDING = 0, TFORGE_SDK_STRAT_OK = 1, TFORGE_SDK_STRAT_FAILED = 2 };

typedef struct tforge_sdk_strat_archive {
    uint32_t dims, n, cap;
    tforge_level *points; /* n * dims */
    double *values;       /* the measured value when OK, else +inf */
    /* TFORGE_SDK_STRAT_PENDING, TFORGE_SDK_STRAT_OK or TFORGE_SDK_STRAT_FAILED */
    uint8_t *states;
    uint32_t *slots;      /* open addressing: id + 1, 0 when empty; 2 * cap of them */
    uint32_t mask;
} tforge_sdk_strat_archive;

static inline uint64_t tforge_sdk_strat_hash(const tforge_level *point, uint32_t dims)
{
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (uint32_t d = 0; d < dims; d++) {
        h = (h ^ point[d]) * 0xff51afd7ed558ccdull;
        h ^= h >> 29;
    }
    return h;
}

static inline const tforge_level *tforge_sdk_strat_point(const tforge_sdk_strat_archive *a,
                                                         uint32_t id)
{
    return a->points + (size_t)id * a->dims;
}

/* The id of `point`, or TFORGE_SDK_STRAT_NONE when it was never seen. */
static inline uint32_t tforge_sdk_strat_find(const tforge_sdk_strat_archive *a,
                                             const tforge_level *point)
{
    if (!a->slots)
        return TFORGE_SDK_STRAT_NONE;
    for (uint64_t i = tforge_sdk_strat_hash(point, a->dims) & a->mask;; i = (i + 1) & a->mask) {
        uint32_t slot = a->slots[i];
        if (!slot)
            return TFORGE_SDK_STRAT_NONE;
        if (memcmp(tforge_sdk_strat_point(a, slot - 1), point, a->dims * sizeof *point) == 0)
            return slot - 1;
    }
}

static inline void tforge_sdk_strat_place(tforge_sdk_strat_archive *a, uint32_t id)
{
    uint64_t i = tforge_sdk_strat_hash(tforge_sdk_strat_point(a, id), a->dims) & a->mask;
    while (a->slots[i])
        i = (i + 1) & a->mask;
    a->slots[i] = id + 1;
}

/* Appends `point` (not yet seen) as pending; 0 or TFORGE_PLUGIN_ENOMEM. */
static inline int tforge_sdk_strat_add(tforge_sdk_strat_archive *a, const tforge_level *point,
                                       uint32_t *id)
{
    if (a->n == a->cap) {
        if (a->cap >= (1u << 30))
            return TFORGE_PLUGIN_ENOMEM;
        uint32_t cap = a->cap ? a->cap * 2 : 64;
        /* Arrays grown before a later failure are merely larger than `cap` says. */
        tforge_level *points = realloc(a->points, (size_t)cap * a->dims * sizeof *points);
        if (!points)
            return TFORGE_PLUGIN_ENOMEM;
        a->points = points;
        double *values = realloc(a->values, (size_t)cap * sizeof *values);
        if (!values)
            return TFORGE_PLUGIN_ENOMEM;
        a->values = values;
        uint8_t *states = realloc(a->states, cap);
        if (!states)
            return TFORGE_PLUGIN_ENOMEM;
        a->states = states;
        uint32_t *slots = calloc((size_t)cap * 2, sizeof *slots);
        if (!slots)
            return TFORGE_PLUGIN_ENOMEM;
        free(a->slots);
        a->slots = slots;
        a->mask = cap * 2 - 1;
        a->cap = cap;
        for (uint32_t i = 0; i < a->n; i++)
            tforge_sdk_strat_place(a, i);
    }
    *id = a->n++;
    memcpy(a->points + (size_t)*id * a->dims, point, a->dims * sizeof *point);
    a->values[*id] = INFINITY;
    a->states[*id] = TFORGE_SDK_STRAT_PENDING;
    tforge_sdk_strat_place(a, *id);
    return 0;
}

/* ---- the lazy permutation: position -> index, only where a swap moved it ---- */

typedef struct tforge_sdk_strat_swaps {
    uint64_t *keys; /* UINT64_MAX when empty */
    uint64_t *values;
    uint64_t n, mask;
} tforge_sdk_strat_swaps;

static inline uint64_t tforge_sdk_strat_swaps_slot(const tforge_sdk_strat_swaps *s, uint64_t key)
{
    uint64_t i = ((key * 0x9e3779b97f4a7c15ull) >> 17) & s->mask;
    while (s->keys[i] != UINT64_MAX && s->keys[i] != key)
        i = (i + 1) & s->mask;
    return i;
}

/* What sits at `position`: itself unless a swap put something else there. */
static inline uint64_t tforge_sdk_strat_swaps_get(const tforge_sdk_strat_swaps *s,
                                                  uint64_t position)
{
    if (!s->keys)
        return position;
    uint64_t i = tforge_sdk_strat_swaps_slot(s, position);
    return s->keys[i] == UINT64_MAX ? position : s->values[i];
}

static inline int tforge_sdk_strat_swaps_put(tforge_sdk_strat_swaps *s, uint64_t position,
                                             uint64_t value)
{
    if (2 * (s->n + 1) > (s->keys ? s->mask + 1 : 0)) {
        tforge_sdk_strat_swaps bigger = {NULL, NULL, 0, s->keys ? 2 * s->mask + 1 : 63};
        bigger.keys = malloc((bigger.mask + 1) * sizeof *bigger.keys);
        bigger.values = malloc((bigger.mask + 1) * sizeof *bigger.values);
        if (!bigger.keys || !bigger.values) {
            free(bigger.keys);
            free(bigger.values);
            return TFORGE_PLUGIN_ENOMEM;
        }
        memset(bigger.keys, 0xff, (bigger.mask + 1) * sizeof *bigger.keys);
        for (uint64_t i = 0; s->keys && i <= s->mask; i++)
            if (s->keys[i] != UINT64_MAX) {
                uint64_t j = tforge_sdk_strat_swaps_slot(&bigger, s->keys[i]);
                bigger.keys[j] = s->keys[i];
                bigger.values[j] = s->values[i];
            }
        bigger.n = s->n;
        free(s->keys);
        free(s->values);
        *s = bigger;
    }
    uint64_t i = tforge_sdk_strat_swaps_slot(s, position);
    if (s->keys[i] == UINT64_MAX)
        s->n++;
    s->keys[i] = position;
    s->values[i] = value;
    return 0;
}

/* ---- the state every strategy starts with ---- */

typedef struct tforge_sdk_strat_base {
    const char *name; /* the strategy's id, for messages */
    const tforge_host *host;
    const tforge_space_view *space;
    void *context;
    uint32_t dims;
    uint32_t *levels;  /* per dimension */
    uint8_t *ordered;  /* 1 for an ordinal dimension: its neighbours are levels up and down */
    uint64_t count;    /* enumerated valid points; 0 when the space is sampled */
    uint64_t drawn;    /* positions of the permutation used so far */
    tforge_sdk_strat_swaps swaps;
    tforge_rng rng;
    tforge_sdk_strat_archive archive;
    uint32_t *seeds; /* random points a local search may (re)start from */
    uint32_t n_seeds, cap_seeds;
    tforge_level *draw; /* dims levels of scratch */
    int done;           /* an ask came back short: nothing more is proposed */
} tforge_sdk_strat_base;

static inline int tforge_sdk_strat_error(const tforge_sdk_strat_base *b, int code,
                                         const char *format, ...)
    TFORGE_SDK_STRAT_PRINTF(3, 4);
static inline int tforge_sdk_strat_error(const tforge_sdk_strat_base *b, int code,
                                         const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    code = tforge_sdk_strat_verror(b->host, b->name, code, format, ap);
    va_end(ap);
    return code;
}

static inline int tforge_sdk_strat_check_space(tforge_sdk_strat_base *b,
                                               const tforge_strategy_input *input)
{
    const tforge_space_view *s = input->space;
    /* the view of ABI 1.0 is enough: a strategy that reads owners or effects (1.3: rules'
     * compound moves) checks struct_size itself */
    if (!s || s->struct_size < offsetof(tforge_space_view, owner) || !s->dims || !s->levels ||
        !s->kind || !s->count || !s->is_valid)
        return tforge_sdk_strat_error(b, TFORGE_PLUGIN_EINPUT,
                                      "the space view is missing or incomplete");
    b->space = s;
    b->context = s->context;
    b->dims = s->dims(s->context);
    b->count = s->count(s->context);
    if (b->dims == 0)
        return tforge_sdk_strat_error(b, TFORGE_PLUGIN_EINPUT, "the space has no dimensions");
    if ((b->count && !s->point) || (!b->count && !s->sample))
        return tforge_sdk_strat_error(
            b, TFORGE_PLUGIN_EINPUT, "%s",
            b->count ? "the space is enumerated but its view has no point()"
                     : "the space is not enumerated and its view has no sample()");
    return 0;
}

/* Frees the base and the state around it. */
static inline void tforge_sdk_strat_destroy(tforge_sdk_strat_base *b)
{
    if (!b)
        return;
    free(b->levels);
    free(b->ordered);
    free(b->draw);
    free(b->swaps.keys);
    free(b->swaps.values);
    free(b->archive.points);
    free(b->archive.values);
    free(b->archive.states);
    free(b->archive.slots);
    free(b->seeds);
    free(b);
}

/* Allocates a strategy's state of `size` bytes, whose first member is a tforge_sdk_strat_base, and
 * fills the base from `host` and `input`. On failure nothing is left allocated. */
static inline int tforge_sdk_strat_create(
    void **state, size_t size, const char *name,
    const tforge_host *host, const tforge_strategy_input *input)
{
    *state = NULL;
    if (!input || input->struct_size < sizeof *input)
        return tforge_sdk_strat_host_error(host, name, TFORGE_PLUGIN_EINPUT,
                                           "the strategy's input is missing or too old");
    tforge_sdk_strat_base *b = calloc(1, size);
    if (!b)
        return tforge_sdk_strat_host_error(host, name, TFORGE_PLUGIN_ENOMEM, "out of memory");
    b->name = name;
    b->host = host;
    tforge_rng_seed(&b->rng, input->seed);
    int rc = tforge_sdk_strat_check_space(b, input);
    if (rc)
        goto fail;
    b->archive.dims = b->dims;
    b->levels = malloc(b->dims * sizeof *b->levels);
    b->ordered = malloc(b->dims);
    b->draw = malloc(b->dims * sizeof *b->draw);
    if (!b->levels || !b->ordered || !b->draw) {
        rc = tforge_sdk_strat_error(b, TFORGE_PLUGIN_ENOMEM, "out of memory");
        goto fail;
    }
    for (uint32_t d = 0; d < b->dims; d++) {
        b->levels[d] = b->space->levels(b->context, d);
        b->ordered[d] = b->space->kind(b->context, d) == TFORGE_DIM_ORDINAL;
        if (b->levels[d] == 0 || b->levels[d] > (uint32_t)UINT16_MAX + 1) {
            rc = tforge_sdk_strat_error(b, TFORGE_PLUGIN_EINPUT,
                                        "dimension %u has %u levels (expected 1 to 65536)",
                                        d, b->levels[d]);
            goto fail;
        }
    }
    *state = b;
    return 0;
fail:
    tforge_sdk_strat_destroy(b);
    return rc;
}

/* ---- options: parsed against the table the strategy publishes ---- */

/* Parses one option's text into `*out`: the number, or the index of the word among a choice's.
 * Returns 0, or an error naming the option. */
static inline int tforge_sdk_strat_option_value(const tforge_sdk_strat_base *b,
                                                const tforge_option_spec *o,
                                                const char *text, double *out)
{
    if (o->type == TFORGE_OPTION_CHOICE) {
        size_t len = strlen(text), index = 0;
        for (const char *c = o->choices; c && *c; index++) {
            const char *bar = strchr(c, '|');
            size_t n = bar ? (size_t)(bar - c) : strlen(c);
            if (n == len && strncmp(c, text, n) == 0) {
                *out = (double)index;
                return 0;
            }
            c = bar ? bar + 1 : c + n;
        }
        return tforge_sdk_strat_error(b, TFORGE_PLUGIN_EINPUT,
                                      "option '%s' is '%s', expected one of %s",
                                      o->name, text, o->choices);
    }
    char *end;
    double v = strtod(text, &end);
    if (end == text || *end || !isfinite(v) || v < o->min || v > o->max ||
        (o->type == TFORGE_OPTION_INTEGER && v != floor(v)))
        return tforge_sdk_strat_error(b, TFORGE_PLUGIN_EINPUT,
                                      "option '%s' is '%s', expected %s in [%g, %g]",
                                      o->name, text, o->type == TFORGE_OPTION_INTEGER ? "an integer"
                                                                                      : "a number",
                                      o->min, o->max);
    *out = v;
    return 0;
}

/* Sets `targets[i]` from option i of `specs` (n of them): its default first (unless "", which
 * leaves the target as the strategy set it), then the value given in `options` (NULL: none), if
 * any. A key the table lacks is refused, listing the known ones. */
static inline int tforge_sdk_strat_parse_options(const tforge_sdk_strat_base *b,
                                                 const tforge_options_view *options,
                                                 const tforge_option_spec *specs, size_t n,
                                                 double *const *targets)
{
    for (size_t j = 0; j < n; j++)
        if (specs[j].default_value[0]) {
            int rc = tforge_sdk_strat_option_value(b, &specs[j], specs[j].default_value,
                                                   targets[j]);
            if (rc)
                return rc;
        }
    if (options && options->count && (!options->keys || !options->values))
        return tforge_sdk_strat_error(b, TFORGE_PLUGIN_EINPUT,
                                      "%u options given without keys or values",
                                      options->count);
    for (uint32_t i = 0; options && i < options->count; i++) {
        const char *key = options->keys[i], *text = options->values[i];
        if (!key || !text)
            return tforge_sdk_strat_error(b, TFORGE_PLUGIN_EINPUT,
                                          "option %u has no key or no value", i);
        size_t j = 0;
        while (j < n && strcmp(specs[j].name, key) != 0)
            j++;
        if (j == n) {
            char known[512] = "";
            size_t used = 0;
            for (size_t k = 0; k < n && used < sizeof known; k++)
                used += (size_t)snprintf(known + used, sizeof known - used, "%s%s",
                                         k ? ", " : "", specs[k].name);
            return tforge_sdk_strat_error(b, TFORGE_PLUGIN_EINPUT, "unknown option '%s' (%s%s)",
                                          key,
                                          n ? "known: " : "it takes no options", known);
        }
        int rc = tforge_sdk_strat_option_value(b, &specs[j], text, targets[j]);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- asking ---- */

/* Starts an ask: its loop then runs while no error, not done, and the batch is short. */
static inline int tforge_sdk_strat_begin_ask(const tforge_sdk_strat_base *b, uint32_t q,
                                             const tforge_level *out,
                                             uint32_t *n_out)
{
    if (!n_out || (q && !out))
        return tforge_sdk_strat_error(b, TFORGE_PLUGIN_EINPUT,
                                      "ask needs an output buffer and a count");
    *n_out = 0;
    return 0;
}

/* Ends an ask. A batch short of q tells the host there is nothing more, so it stays so, even on a
 * sampled space whose sampler might find an unseen point again. */
static inline int tforge_sdk_strat_end_ask(tforge_sdk_strat_base *b, int rc, uint32_t q,
                                           uint32_t n_out)
{
    if (rc < 0)
        return rc;
    b->done |= n_out < q;
    return 0;
}

/* Draws a valid point never seen into `out`: 1, or 0 when none is left (or, for a sampled
 * space, none turned up in TFORGE_SDK_STRAT_SAMPLE_TRIES draws), or a negative code. */
static inline int tforge_sdk_strat_fresh(tforge_sdk_strat_base *b, tforge_level *out)
{
    const tforge_space_view *s = b->space;
    if (b->count) {
        while (b->drawn < b->count) {
            /* One step of Fisher-Yates: swap a random later position into this one. */
            uint64_t j = b->drawn + tforge_rng_below(&b->rng, b->count - b->drawn);
            uint64_t index = tforge_sdk_strat_swaps_get(&b->swaps, j);
            if (j != b->drawn &&
                tforge_sdk_strat_swaps_put(&b->swaps, j,
                                           tforge_sdk_strat_swaps_get(&b->swaps, b->drawn)))
                return tforge_sdk_strat_error(b, TFORGE_PLUGIN_ENOMEM, "out of memory");
            b->drawn++;
            s->point(b->context, index, out);
            if (tforge_sdk_strat_find(&b->archive, out) == TFORGE_SDK_STRAT_NONE)
                return 1;
        }
        return 0;
    }
    for (int tries = 0; tries < TFORGE_SDK_STRAT_SAMPLE_TRIES; tries++) {
        if (s->sample(b->context, &b->rng, out) < 0)
            return 0;
        if (tforge_sdk_strat_find(&b->archive, out) == TFORGE_SDK_STRAT_NONE)
            return 1;
    }
    return 0;
}

static inline int tforge_sdk_strat_add_seed(tforge_sdk_strat_base *b, uint32_t id)
{
    if (b->n_seeds == b->cap_seeds) {
        uint32_t cap = b->cap_seeds ? b->cap_seeds * 2 : 16;
        uint32_t *seeds = realloc(b->seeds, cap * sizeof *seeds);
        if (!seeds)
            return tforge_sdk_strat_error(b, TFORGE_PLUGIN_ENOMEM, "out of memory");
        b->seeds = seeds;
        b->cap_seeds = cap;
    }
    b->seeds[b->n_seeds++] = id;
    return 0;
}

/* Records `point` (valid, never seen) as pending and appends it to the batch `out`. */
static inline int tforge_sdk_strat_propose(tforge_sdk_strat_base *b, const tforge_level *point,
                                           tforge_level *out,
                                           uint32_t *n_out, uint32_t *id)
{
    uint32_t added;
    if (tforge_sdk_strat_add(&b->archive, point, &added))
        return tforge_sdk_strat_error(b, TFORGE_PLUGIN_ENOMEM, "out of memory recording point %u",
                                      b->archive.n);
    memcpy(out + (size_t)*n_out * b->dims, point, b->dims * sizeof *point);
    (*n_out)++;
    if (id)
        *id = added;
    return 0;
}

/* Proposes a random point never seen, or sets `done` when none is left. A seed is remembered as
 * a place where a local search may start. */
static inline int tforge_sdk_strat_propose_fresh(tforge_sdk_strat_base *b, tforge_level *out,
                                                 uint32_t *n_out,
                                                 int as_seed)
{
    int rc = tforge_sdk_strat_fresh(b, b->draw);
    if (rc <= 0) {
        b->done = rc == 0;
        return rc;
    }
    uint32_t id = TFORGE_SDK_STRAT_NONE;
    if ((rc = tforge_sdk_strat_propose(b, b->draw, out, n_out, &id)) == 0 && as_seed)
        rc = tforge_sdk_strat_add_seed(b, id);
    return rc;
}

/* Removes and returns the best seed measured OK, or TFORGE_SDK_STRAT_NONE when there is none yet.
 * Failed seeds are dropped; pending ones wait. */
static inline uint32_t tforge_sdk_strat_take_seed(tforge_sdk_strat_base *b)
{
    const tforge_sdk_strat_archive *a = &b->archive;
    uint32_t best = TFORGE_SDK_STRAT_NONE, at = 0, kept = 0;
    for (uint32_t i = 0; i < b->n_seeds; i++) {
        uint32_t id = b->seeds[i];
        if (a->states[id] == TFORGE_SDK_STRAT_FAILED)
            continue;
        if (a->states[id] == TFORGE_SDK_STRAT_OK &&
            (best == TFORGE_SDK_STRAT_NONE || a->values[id] < a->values[best])) {
            best = id;
            at = kept;
        }
        b->seeds[kept++] = id;
    }
    if (best != TFORGE_SDK_STRAT_NONE)
        memmove(b->seeds + at, b->seeds + at + 1, (kept - at - 1) * sizeof *b->seeds);
    b->n_seeds = kept - (best != TFORGE_SDK_STRAT_NONE);
    return best;
}

/* ---- telling ---- */

/* Stores one observation. A point the strategy never proposed is added to the archive (so it is
 * never proposed) and, with `seed_external`, kept as a seed: a baseline told first is where a
 * local search starts. A non-finite value counts as a failure. */
static inline int tforge_sdk_strat_record(tforge_sdk_strat_base *b, const tforge_observation *o,
                                          int seed_external,
                                          uint32_t *id)
{
    if (!o->point)
        return tforge_sdk_strat_error(b, TFORGE_PLUGIN_EINPUT,
                                      "told an observation without a point");
    for (uint32_t d = 0; d < b->dims; d++)
        if (o->point[d] >= b->levels[d])
            return tforge_sdk_strat_error(b, TFORGE_PLUGIN_EINPUT,
                                          "told a point with level %u in dimension %u, "
                                                           "which has %u levels",
                                          o->point[d], d, b->levels[d]);
    tforge_sdk_strat_archive *a = &b->archive;
    int rc;
    if ((*id = tforge_sdk_strat_find(a, o->point)) == TFORGE_SDK_STRAT_NONE) {
        if (tforge_sdk_strat_add(a, o->point, id))
            return tforge_sdk_strat_error(b, TFORGE_PLUGIN_ENOMEM,
                                          "out of memory recording a told point");
        if (seed_external && (rc = tforge_sdk_strat_add_seed(b, *id)))
            return rc;
    }
    int ok = o->status == TFORGE_STATUS_OK && isfinite(o->value);
    a->states[*id] = ok ? TFORGE_SDK_STRAT_OK : TFORGE_SDK_STRAT_FAILED;
    a->values[*id] = ok ? o->value : INFINITY;
    return 0;
}

static inline int tforge_sdk_strat_tell(tforge_sdk_strat_base *b,
                                        const tforge_observation *observations, uint32_t n,
                                        int seed_external)
{
    if (n && !observations)
        return tforge_sdk_strat_error(b, TFORGE_PLUGIN_EINPUT,
                                      "told %u observations without an array", n);
    uint32_t id;
    for (uint32_t i = 0; i < n; i++) {
        int rc = tforge_sdk_strat_record(b, &observations[i], seed_external, &id);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- the neighbourhood graph ---- */

/* Moves from a point: along an ordinal dimension `radius` levels down and up (in the order -1,
 * +1, -2, +2 ...); along a categorical or boolean one, to every other level. */
static inline uint32_t tforge_sdk_strat_move_count(const tforge_sdk_strat_base *b, uint32_t radius)
{
    uint32_t n = 0;
    for (uint32_t d = 0; d < b->dims; d++)
        n += b->ordered[d] ? 2 * radius : b->levels[d] - 1;
    return n;
}

/* Writes move `index` of `from` into `out`: 1 when that is a valid point, 0 when it leaves the
 * grid or breaks a constraint. */
static inline int tforge_sdk_strat_move(const tforge_sdk_strat_base *b, const tforge_level *from,
                                        uint32_t radius,
                                        uint32_t index, tforge_level *out)
{
    uint32_t d = 0;
    for (;; d++) {
        uint32_t n = b->ordered[d] ? 2 * radius : b->levels[d] - 1;
        if (index < n)
            break;
        index -= n;
    }
    memcpy(out, from, b->dims * sizeof *out);
    if (b->ordered[d]) {
        int64_t r = index / 2 + 1, level = (int64_t)from[d] + (index % 2 ? r : -r);
        if (level < 0 || level >= b->levels[d])
            return 0;
        out[d] = (tforge_level)level;
    } else {
        out[d] = (tforge_level)(index < from[d] ? index : index + 1);
    }
    return b->space->is_valid(b->context, out);
}

/* ---- the module around one strategy ---- */

/* The factory's version; a plugin defines its own before including this header. */
#ifndef TFORGE_SDK_STRAT_VERSION
#define TFORGE_SDK_STRAT_VERSION "1.0.0"
#endif

/* A standard normal draw (Box-Muller on two uniforms of the generator). */
static inline double tforge_sdk_strat_gaussian(tforge_rng *rng)
{
    double u = 1.0 - tforge_rng_uniform(rng), v = tforge_rng_uniform(rng); /* u in (0, 1] */
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* The entry boilerplate: one strategy factory named `id`, publishing `n_specs` options (`specs`
 * may be NULL with 0), as the module's exported entry. */
#define TFORGE_SDK_STRAT_PLUGIN(plugin_id, plugin_description, specs, n_specs, create, ask,        \
                                tell, destroy)                                                     \
    static const tforge_strategy_interface tforge_sdk_strat_interface = {                          \
        sizeof(tforge_strategy_interface), create, ask, tell, destroy, NULL, NULL};                \
    static const tforge_plugin_descriptor tforge_sdk_strat_descriptor = {                          \
        .id = plugin_id, .version = TFORGE_SDK_STRAT_VERSION, .description = plugin_description,   \
        .interface_id = TFORGE_STRATEGY_INTERFACE_ID, .interface = &tforge_sdk_strat_interface,    \
        .options = specs, .n_options = n_specs};                                                   \
    static uint32_t tforge_sdk_strat_count(void)                                                   \
    {                                                                                              \
        return 1;                                                                                  \
    }                                                                                              \
    static const tforge_plugin_descriptor *tforge_sdk_strat_get(uint32_t index)                    \
    {                                                                                              \
        return index == 0 ? &tforge_sdk_strat_descriptor : NULL;                                   \
    }                                                                                              \
    TFORGE_PLUGIN_EXPORT const tforge_plugin_module TFORGE_PLUGIN_ENTRY_NAME = {                   \
        TFORGE_PLUGIN_ABI_VERSION_INIT, plugin_id, NULL, NULL, tforge_sdk_strat_count,             \
        tforge_sdk_strat_get}

#endif
