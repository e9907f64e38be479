#include "strategy.h"

#include "grow.h"
#include "tforge/error.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Every observation told, for the strategy's history view. Points live in blocks that never
 * move, since the view hands out pointers to them. */
enum { HISTORY_BLOCK = 1024 };
typedef struct history {
    uint32_t dims;
    size_t n, cap, n_blocks, cap_blocks;
    tforge_observation *told;
    tforge_level **blocks; /* HISTORY_BLOCK points each */
} history;

static uint64_t history_count(void *context)
{
    return ((const history *)context)->n;
}

static tforge_observation history_get(void *context, uint64_t index)
{
    const history *h = context;
    tforge_observation none = {NULL, TFORGE_STATUS_RUNTIME, NAN, 0};
    return index < h->n ? h->told[index] : none;
}

static int history_add(history *h, const tforge_observation *o)
{
    if (h->n == h->n_blocks * HISTORY_BLOCK) {
        if (tforge_grow((void **)&h->blocks, &h->cap_blocks, h->n_blocks, sizeof *h->blocks,
                        "the strategy's history"))
            return TFORGE_ENOMEM;
        h->blocks[h->n_blocks] = malloc((size_t)HISTORY_BLOCK * h->dims * sizeof(tforge_level));
        if (!h->blocks[h->n_blocks])
            return tforge_error_set(TFORGE_ENOMEM, "out of memory (the strategy's history)");
        h->n_blocks++;
    }
    if (tforge_grow((void **)&h->told, &h->cap, h->n, sizeof *h->told, "the strategy's history"))
        return TFORGE_ENOMEM;
    tforge_level *p = h->blocks[h->n / HISTORY_BLOCK] + (h->n % HISTORY_BLOCK) * h->dims;
    memcpy(p, o->point, h->dims * sizeof *p);
    h->told[h->n] = *o;
    h->told[h->n++].point = p;
    return 0;
}

static void history_free(history *h)
{
    for (size_t b = 0; b < h->n_blocks; b++)
        free(h->blocks[b]);
    free(h->blocks);
    free(h->told);
}

struct tforge_strategy {
    history history;
    tforge_history_view history_view;
    const tforge_plugin_record *record;
    const tforge_plugin_descriptor *descriptor;
    const tforge_strategy_interface *interface;
    void *state;
    tforge_options_view options; /* lent to the plugin with input for the life of its state */
    tforge_strategy_input input;
    char **keys, **values;
};

static void free_options(tforge_strategy *s)
{
    for (uint32_t i = 0; i < s->options.count; i++) {
        free(s->keys[i]);
        free(s->values[i]);
    }
    free(s->keys);
    free(s->values);
}

/* Splits "key=value" entries into the two arrays the plugin reads. */
static int split_options(tforge_strategy *s, const char *const *options)
{
    uint32_t n = 0;
    while (options && options[n])
        n++;
    s->keys = calloc(n + 1, sizeof *s->keys);
    s->values = calloc(n + 1, sizeof *s->values);
    if (!s->keys || !s->values)
        return tforge_error_set(TFORGE_ENOMEM, "out of memory reading strategy options");
    for (uint32_t i = 0; i < n; i++) {
        const char *eq = strchr(options[i], '=');
        if (!eq || eq == options[i])
            return tforge_error_set(TFORGE_EINPUT,
                                    "strategy %s: option '%s' is not of the form key=value",
                                    s->descriptor->id, options[i]);
        s->keys[i] = strndup(options[i], (size_t)(eq - options[i]));
        s->values[i] = strdup(eq + 1);
        s->options.count = i + 1;
        if (!s->keys[i] || !s->values[i])
            return tforge_error_set(TFORGE_ENOMEM, "out of memory reading strategy options");
    }
    return 0;
}

/* Finds the strategy, checks its interface, and splits and checks its options into `s`. */
static int prepare(tforge_strategy *s, const tforge_registry *registry, const char *id,
                   const char *const *options)
{
    if (!id || !id[0])
        return tforge_error_set(TFORGE_EINPUT, "no strategy named: give an id (see `tforge "
                                "plugins`)");
    const tforge_plugin_record *record =
        tforge_registry_find(registry, TFORGE_STRATEGY_INTERFACE_ID, id);
    if (!record)
        return tforge_error_last()->code;
    s->record = record;
    s->descriptor = record->descriptor;
    s->interface = tforge_plugin_interface(record, TFORGE_STRATEGY_INTERFACE_ID);
    int rc = split_options(s, options);
    if (!rc)
        rc = tforge_plugin_check_options(record, (const char *const *)s->keys,
                                         (const char *const *)s->values, s->options.count);
    return rc;
}

int tforge_strategy_check(const tforge_registry *registry, const char *id,
                          const char *const *options)
{
    tforge_strategy s = {0};
    int rc = prepare(&s, registry, id, options);
    free_options(&s);
    return rc;
}

size_t tforge_strategy_effective(const tforge_registry *registry, const char *id,
                                 const char *const *options, const char **out, size_t max,
                                 char *buffer, size_t size)
{
    tforge_strategy s = {0};
    size_t n = 0;
    if (prepare(&s, registry, id, options) == 0)
        n = tforge_plugin_effective_options(out, max, buffer, size, s.record,
                                            (const char *const *)s.keys,
                                            (const char *const *)s.values, s.options.count);
    else
        out[0] = NULL;
    free_options(&s);
    return n;
}

int tforge_strategy_open(tforge_strategy **out, const tforge_registry *registry, const char *id,
                         const tforge_space_view *view, uint64_t seed, uint32_t budget,
                         const char *const *options)
{
    tforge_strategy *s = calloc(1, sizeof *s);
    if (!s)
        return tforge_error_set(TFORGE_ENOMEM, "out of memory opening strategy %s", id);
    int rc = prepare(s, registry, id, options);
    if (rc)
        goto fail;
    s->options = (tforge_options_view){sizeof s->options, s->options.count,
                                       (const char *const *)s->keys,
                                       (const char *const *)s->values};
    s->input = (tforge_strategy_input){sizeof s->input, view, seed, budget, &s->history_view};
    s->history.dims = view->dims(view->context);
    s->history_view = (tforge_history_view){sizeof s->history_view, &s->history, history_count,
                                            history_get};
    tforge_error_clear();
    if ((rc = s->interface->create(&s->state, tforge_registry_host(), &s->options, &s->input))) {
        /* The plugin's own message names it; a refusal without one still says who refused. */
        if (!tforge_error_last()->message[0])
            tforge_error_set(rc, "strategy %s refused to start (no reason given)", id);
        goto fail;
    }
    *out = s;
    return 0;
fail:
    free_options(s);
    free(s);
    return rc;
}

int tforge_strategy_ask(tforge_strategy *s, uint32_t q, tforge_level *out, uint32_t *n_out)
{
    *n_out = 0;
    int rc = s->interface->ask(s->state, q, out, n_out);
    if (rc == 0 && *n_out > q)
        return tforge_error_set(TFORGE_ERROR, "strategy %s returned %u points for %u asked",
                                s->descriptor->id, *n_out, q);
    return rc;
}

int tforge_strategy_tell(tforge_strategy *s, const tforge_observation *observations, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (history_add(&s->history, &observations[i]))
            return TFORGE_ENOMEM;
    return s->interface->tell(s->state, observations, n);
}

int tforge_strategy_takes_level_prior(const tforge_strategy *s)
{
    /* A module of ABI 1.1 has a shorter table: the field is not there to read. */
    return s->record->abi_minor >= 2 &&
           s->interface->struct_size >= offsetof(tforge_strategy_interface, set_level_prior) +
                                            sizeof s->interface->set_level_prior &&
           s->interface->set_level_prior;
}

int tforge_strategy_set_level_prior(tforge_strategy *s, const double *log_weight, uint64_t n)
{
    if (!tforge_strategy_takes_level_prior(s))
        return tforge_error_set(TFORGE_ENOTFOUND, "strategy %s (%s) takes no level prior (it "
                                "needs set_level_prior, plugin ABI 1.2)", s->descriptor->id,
                                s->record->path);
    tforge_error_clear();
    int rc = s->interface->set_level_prior(s->state, log_weight, n);
    if (rc && !tforge_error_last()->message[0])
        tforge_error_set(rc, "strategy %s refused a level prior (no reason given)",
                         s->descriptor->id);
    return rc;
}

const char *tforge_strategy_id(const tforge_strategy *s)
{
    return s->descriptor->id;
}

void tforge_strategy_close(tforge_strategy *s)
{
    if (!s)
        return;
    if (s->state)
        s->interface->destroy(s->state);
    history_free(&s->history);
    free_options(s);
    free(s);
}
