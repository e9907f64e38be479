/* A complete out-of-tree plugin: a strategy that proposes the valid points in order, written
 * against the installed headers only. Build it with the Makefile beside it. */
#include <tforge/plugin/plugin.h>
#include <tforge/plugin/strategy.h>

#include <stdlib.h>

typedef struct state {
    const tforge_space_view *space;
    uint64_t next;
} state;

static int create(void **out, const tforge_strategy_args *args)
{
    if (args->n_options > 0)
        return args->host->error(args->host, TFORGE_PLUGIN_EINPUT, "hello: takes no options");
    if (args->space->count(args->space->context) == 0)
        return args->host->error(args->host, TFORGE_PLUGIN_EINPUT, "hello: needs an enumerated space");
    state *s = calloc(1, sizeof *s);
    if (!s)
        return args->host->error(args->host, TFORGE_PLUGIN_ENOMEM, "hello: out of memory");
    s->space = args->space;
    *out = s;
    return 0;
}

static int ask(void *opaque, uint32_t q, tforge_level *out, uint32_t *n_out)
{
    state *s = opaque;
    uint32_t dims = s->space->dims(s->space->context);
    uint64_t count = s->space->count(s->space->context);
    uint32_t n = 0;
    for (; n < q && s->next < count; n++, s->next++)
        s->space->point(s->space->context, s->next, out + (size_t)n * dims);
    *n_out = n;
    return 0;
}

static int tell(void *opaque, const tforge_observation *observations, uint32_t n)
{
    (void)opaque;
    (void)observations;
    (void)n;
    return 0;
}

static void destroy(void *opaque)
{
    free(opaque);
}

static const tforge_strategy_interface interface = {sizeof interface, create, ask, tell, destroy,
                                                    NULL};

static const tforge_plugin_descriptor descriptor = {
    TFORGE_PLUGIN_STRATEGY, "hello", "1.0.0", "proposes the valid points in order (example)",
    TFORGE_STRATEGY_INTERFACE_ID, &interface};

static uint32_t count(void)
{
    return 1;
}

static const tforge_plugin_descriptor *get(uint32_t index)
{
    return index == 0 ? &descriptor : NULL;
}

TFORGE_PLUGIN_EXPORT const tforge_plugin_module tforge_plugin_entry = {
    TFORGE_PLUGIN_ABI_VERSION_INIT, "hello", NULL, NULL, count, get};
