/* Loop peeling of a masked loop's last iterations: for a loop over a size B in blocks of E whose
 * loads and stores (or where conditions) are masked by the tile's bound against B (the
 * analysis' loop_tails: the bound holds in every iteration that ends by B), the loop runs over
 * the whole blocks without those bounds and a copy of it, masks kept, runs the last partial
 * block; for attention's causal loop ("diagonal": keys from 0, the mask `rows >= cols`, rows
 * from row B on), the loop runs over the blocks left of the row tile's first row without the
 * mask and the copy over the rest, the blocks on the diagonal. The iterations are the original
 * ones in their order, so the variant computes what the kernel did, bit for bit. One boolean
 * per loop (false: unchanged). */
#include <tforge/sdk/transform.h>

enum { MAX_LOOPS = 4 };

typedef struct masksplit_state {
    tforge_sdk_xf_base base;
    char names[MAX_LOOPS][32];
} masksplit_state;

static int masksplit_create(void **state, const tforge_host *host,
                            const tforge_options_view *options, const tforge_transform_input *input)
{
    (void)options; /* it takes none */
    const tforge_ir_kernel *k = input->kernel;
    if (k->n_loop_tails == 0)
        return TFORGE_TRANSFORM_NOT_APPLICABLE;
    masksplit_state *s = tforge_sdk_xf_new(sizeof *s, host, input);
    if (!s)
        return TFORGE_PLUGIN_ENOMEM;
    tforge_sdk_xf_base *b = &s->base;
    tforge_sdk_xf_booleans(b, s->names, k->n_loop_tails, MAX_LOOPS, "masksplit",
                           TFORGE_EFFECT_MASK);
    size_t len = (size_t)snprintf(b->description, sizeof b->description, "masked loop%s at line",
                                  b->n_params > 1 ? "s" : "");
    for (size_t i = 0; i < b->n_params; i++) {
        const tforge_ir_loop_tail *t = &k->loop_tails[i];
        if (len < sizeof b->description)
            len += (size_t)snprintf(b->description + len, sizeof b->description - len,
                                    "%s %d (%s over %s by %s, %zu cuts)", i ? "," : "",
                                    t->span.line, t->var,
                                    strcmp(t->form, "diagonal") ? t->size : "the diagonal",
                                    t->block, t->n_drops + t->n_trues);
    }
    *state = s;
    return 0;
}

/* The whole blocks: v over [0, B - B % E) in steps of E ("step"; Triton's % truncates, so for
 * B < 0 it is empty as the loop was), or [0, B // E) ("count"). The last block after them: from
 * there to the loop's own stop; max(.., 0) keeps a count loop's tail empty for B < 0, where
 * B // E may be below the stop tl.cdiv(B, E). Diagonal: v over [0, W) with W = min(max(B // E
 * * E, 0), S), S the loop's stop: every such v has v + E <= B // E * E <= B, so each column is
 * left of every row and the causal condition holds everywhere; the rest, [W, S), runs as the
 * file has it (W is a multiple of E or S itself, so the iterations are the original ones). */
static int split(tforge_sdk_xf_base *b, const tforge_ir_loop_tail *t)
{
    const char *src = b->input->source;
    const char *B = t->size, *E = t->block;
    int step = strcmp(t->form, "step") == 0;
    char whole[512], tail[1024], in[64];
    int stop_len = (int)(t->stop.end - t->stop.start);
    const char *stop = src + t->stop.start;
    if (strcmp(t->form, "diagonal") == 0) {
        snprintf(whole, sizeof whole, "min(max((%s) // %s * %s, 0), %.*s)", B, E, E, stop_len,
                 stop);
        snprintf(tail, sizeof tail, "range(%s, %.*s, %s)", whole, stop_len, stop, E);
    } else if (step) {
        snprintf(whole, sizeof whole, "%s - %s %% %s", B, B, E);
        snprintf(tail, sizeof tail, "range(%s, %s, %s)", whole, B, E);
    } else {
        snprintf(whole, sizeof whole, "%s // %s", B, E);
        snprintf(tail, sizeof tail, "range(max(%s, 0), %.*s)", whole, stop_len, stop);
    }
    tforge_sdk_xf_indent(in, sizeof in, src, t->span.start);
    int rc = tforge_sdk_xf_edit(&b->edits, t->stop.start, t->stop.end, "%s", whole);
    for (size_t d = 0; d < t->n_drops && !rc; d++)
        rc = tforge_sdk_xf_edit(&b->edits, t->drops[d].start, t->drops[d].end, "%s", "");
    for (size_t c = 0; c < t->n_trues && !rc; c++)
        rc = tforge_sdk_xf_edit(&b->edits, t->trues[c].start, t->trues[c].end, "%s", "True");
    /* the copy is the file's own text of the body, so it keeps every mask */
    if (!rc)
        rc = tforge_sdk_xf_edit(&b->edits, t->span.end, t->span.end, "\n%sfor %s in %s:\n%.*s", in,
                                t->var,
                                tail, (int)(t->body.end - t->body.start), src + t->body.start);
    return rc;
}

static int masksplit_apply(void *state, const tforge_level *levels,
                           const tforge_span_edit **edits, uint32_t *n_edits)
{
    tforge_sdk_xf_base *b = state;
    tforge_sdk_xf_reset(&b->edits);
    int rc = 0;
    /* last loop first: a loop nested at the end of another inserts its copy before the outer
     * one's, at the same place, where it belongs */
    for (size_t i = b->n_params; i-- > 0 && !rc;)
        if (levels[i])
            rc = split(b, &b->input->kernel->loop_tails[i]);
    return tforge_sdk_xf_applied(b, rc, edits, n_edits);
}

TFORGE_SDK_XF_TRANSFORM("masksplit",
                        "the last block of a masked loop peeled off, the others without masks",
                        masksplit_create, masksplit_apply);
