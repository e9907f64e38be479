/* Loop peeling of a masked loop's last iteration: for a loop over a size B in blocks of E whose
 * loads and stores are masked by the tile's bound against B (the analysis' loop_tails: the bound
 * holds in every iteration that ends by B), the loop runs over the whole blocks without those
 * bounds and a copy of it, masks kept, runs the last partial block. The iterations are the
 * original ones in their order, so the variant computes what the kernel did, bit for bit. One
 * boolean per loop (false: unchanged). */
#include <tforge/sdk/transform.h>

enum { MAX_LOOPS = 4 };

typedef struct masksplit_state {
    const tforge_transform_args *args;
    size_t n;
    tforge_transform_param params[MAX_LOOPS];
    char names[MAX_LOOPS][32];
    xf_edits edits;
    char description[256];
} masksplit_state;

static int masksplit_create(void **state, const tforge_transform_args *args)
{
    const tforge_ir_kernel *k = args->kernel;
    if (k->n_loop_tails == 0)
        return TFORGE_TRANSFORM_NOT_APPLICABLE;
    masksplit_state *s = calloc(1, sizeof *s);
    if (!s)
        return TFORGE_PLUGIN_ENOMEM;
    s->args = args;
    s->n = k->n_loop_tails < MAX_LOOPS ? k->n_loop_tails : MAX_LOOPS;
    size_t len = (size_t)snprintf(s->description, sizeof s->description, "masked loop%s at line",
                                  s->n > 1 ? "s" : "");
    for (size_t i = 0; i < s->n; i++) {
        const tforge_ir_loop_tail *t = &k->loop_tails[i];
        snprintf(s->names[i], sizeof s->names[i], "masksplit%zu", i);
        s->params[i] = (tforge_transform_param){s->names[i], TFORGE_DIM_BOOLEAN,
                                                TFORGE_TRANSFORM_REWRITE, 0, NULL, 0, NULL};
        if (len < sizeof s->description)
            len += (size_t)snprintf(s->description + len, sizeof s->description - len,
                                    "%s %d (%s over %s by %s, %zu cuts)", i ? "," : "",
                                    t->span.line, t->var, t->size, t->block, t->n_drops);
    }
    *state = s;
    return 0;
}

static const char *masksplit_describe(void *state)
{
    return ((masksplit_state *)state)->description;
}

static uint32_t masksplit_n_params(void *state)
{
    return (uint32_t)((masksplit_state *)state)->n;
}

static const tforge_transform_param *masksplit_param(void *state, uint32_t index)
{
    masksplit_state *s = state;
    return index < s->n ? &s->params[index] : NULL;
}

/* The whole blocks: v over [0, B - B % E) in steps of E ("step"; Triton's % truncates, so for
 * B < 0 it is empty as the loop was), or [0, B // E) ("count"). The last block after them: from
 * there to the loop's own stop; max(.., 0) keeps a count loop's tail empty for B < 0, where
 * B // E may be below the stop tl.cdiv(B, E). */
static int split(masksplit_state *s, const tforge_ir_loop_tail *t)
{
    const char *src = s->args->source;
    const char *B = t->size, *E = t->block;
    int step = strcmp(t->form, "step") == 0;
    char whole[256], tail[512], in[64];
    if (step) {
        snprintf(whole, sizeof whole, "%s - %s %% %s", B, B, E);
        snprintf(tail, sizeof tail, "range(%s, %s, %s)", whole, B, E);
    } else {
        snprintf(whole, sizeof whole, "%s // %s", B, E);
        snprintf(tail, sizeof tail, "range(max(%s, 0), %.*s)", whole,
                 (int)(t->stop.end - t->stop.start), src + t->stop.start);
    }
    xf_indent(in, sizeof in, src, t->span.start);
    int rc = xf_edit(&s->edits, t->stop.start, t->stop.end, "%s", whole);
    for (size_t d = 0; d < t->n_drops && !rc; d++)
        rc = xf_edit(&s->edits, t->drops[d].start, t->drops[d].end, "%s", "");
    /* the copy is the file's own text of the body, so it keeps every mask */
    if (!rc)
        rc = xf_edit(&s->edits, t->span.end, t->span.end, "\n%sfor %s in %s:\n%.*s", in, t->var,
                     tail, (int)(t->body.end - t->body.start), src + t->body.start);
    return rc;
}

static int masksplit_apply(void *state, const tforge_level *levels,
                           const tforge_span_edit **edits, uint32_t *n_edits)
{
    masksplit_state *s = state;
    xf_reset(&s->edits);
    int rc = 0;
    /* last loop first: a loop nested at the end of another inserts its copy before the outer
     * one's, at the same place, where it belongs */
    for (size_t i = s->n; i-- > 0 && !rc;)
        if (levels[i])
            rc = split(s, &s->args->kernel->loop_tails[i]);
    *edits = s->edits.items;
    *n_edits = s->edits.n;
    return rc;
}

static void masksplit_destroy(void *state)
{
    masksplit_state *s = state;
    xf_free(&s->edits);
    free(s);
}

static const tforge_transform_interface masksplit_interface = {
    sizeof masksplit_interface, masksplit_create, masksplit_describe, masksplit_n_params,
    masksplit_param,           masksplit_apply,  masksplit_destroy};

XF_PLUGIN("masksplit", "the last block of a masked loop peeled off, the others without masks",
          masksplit_interface);
