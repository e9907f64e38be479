/* Eviction hints on loads: for each of four `tl.load`s (pointers or block pointers, not
 * descriptors) that set no eviction_policy, cache_modifier or volatile, an eviction policy for
 * the lines it brings into the caches (evict_first: streamed, evict_last: reused). A hint only
 * says which lines the caches give up first; the load reads the same bytes, so the variant
 * computes what the kernel did. Volatile loads (how programs signal each other) are left alone.
 * No cache modifier: .ca only makes the default weak load a strong one, .cg (L2 only) gives up
 * the L1 reuse of kernels that read a row twice, .cv refetches every time. */
#include <tforge/sdk/transform.h>

enum { MAX_LOADS = 4 };

static const char *const evict_values[] = {"none", "evict_first", "evict_last"};

typedef struct eviction_state {
    tforge_sdk_xf_base base; /* a parameter for each load */
    const tforge_ir_memop *loads[MAX_LOADS];
    char names[MAX_LOADS][16];
} eviction_state;

/* How much a load's hint may matter, where the IR can tell: loads in a loop stream or reuse the
 * most bytes (2), masked and block-pointer loads are tiles (1), an unmasked pointer load is most
 * often one index or length (0). */
static int weight(const tforge_ir_memop *m)
{
    return m->in_loop ? 2 : m->mask || m->block_pointer ? 1 : 0;
}

/* Whether load `m` is among the MAX_LOADS that count most, ties to the earlier in the source. */
static int chosen(const tforge_ir_kernel *k, const tforge_ir_memop *m)
{
    unsigned ahead = 0;
    for (size_t i = 0; i < k->n_memops; i++) {
        const tforge_ir_memop *o = &k->memops[i];
        if (o != m && strcmp(o->op, "load") == 0 && !o->descriptor && !o->eviction_policy &&
            !o->cache_modifier && !o->volatile_ &&
            (weight(o) > weight(m) || (weight(o) == weight(m) && o < m)))
            ahead++;
    }
    return ahead < MAX_LOADS;
}

static int eviction_create(void **state, const tforge_host *host,
                           const tforge_options_view *options, const tforge_transform_input *input)
{
    (void)options; /* it takes none */
    const tforge_ir_kernel *k = input->kernel;
    eviction_state *s = tforge_sdk_xf_new(sizeof *s, host, input);
    if (!s)
        return TFORGE_PLUGIN_ENOMEM;
    tforge_sdk_xf_base *b = &s->base;
    size_t len = (size_t)snprintf(b->description, sizeof b->description, "loads at line");
    unsigned hinted = 0, passed = 0;
    for (size_t i = 0; i < k->n_memops; i++) {
        const tforge_ir_memop *m = &k->memops[i];
        if (strcmp(m->op, "load") != 0 || m->descriptor)
            continue;
        if (m->eviction_policy || m->cache_modifier || m->volatile_) {
            hinted++;
            continue;
        }
        if (!chosen(k, m)) {
            passed++;
            continue;
        }
        uint32_t l = b->n_params++;
        s->loads[l] = m;
        snprintf(s->names[l], sizeof s->names[l], "evict%u", (unsigned)l);
        b->params[l] = (tforge_transform_param){s->names[l], TFORGE_DIM_CATEGORICAL,
                                                TFORGE_TRANSFORM_REWRITE, 3, evict_values, 0,
                                                NULL, TFORGE_EFFECT_EVICTION};
        if (len < sizeof b->description)
            len += (size_t)snprintf(b->description + len, sizeof b->description - len, "%s %d%s",
                                    l ? "," : "", m->span.line, m->in_loop ? " (in a loop)" : "");
    }
    if (b->n_params == 0) {
        free(s);
        return TFORGE_TRANSFORM_NOT_APPLICABLE;
    }
    if (hinted && len < sizeof b->description)
        len += (size_t)snprintf(b->description + len, sizeof b->description - len,
                                "; %u hinted or volatile already, left alone", hinted);
    if (passed && len < sizeof b->description)
        snprintf(b->description + len, sizeof b->description - len,
                 "; %u more left out (loads in loops, then masked ones, come first)",
                 passed);
    *state = s;
    return 0;
}

static int eviction_apply(void *state, const tforge_level *levels, const tforge_span_edit **edits,
                          uint32_t *n_edits)
{
    eviction_state *s = state;
    tforge_sdk_xf_base *b = &s->base;
    tforge_sdk_xf_reset(&b->edits);
    int rc = 0;
    for (uint32_t l = 0; l < b->n_params && !rc; l++) {
        if (levels[l] == 0)
            continue;
        char keyword[48];
        snprintf(keyword, sizeof keyword, "eviction_policy=\"%s\"", evict_values[levels[l]]);
        /* a load's span is its call: the keyword goes before its ')' */
        rc = tforge_sdk_xf_add_keyword(&b->edits, b->input->source, s->loads[l]->span, keyword);
    }
    return tforge_sdk_xf_applied(b, rc, edits, n_edits);
}

TFORGE_SDK_XF_TRANSFORM("eviction", "cache eviction hints on loads", eviction_create,
                        eviction_apply);
