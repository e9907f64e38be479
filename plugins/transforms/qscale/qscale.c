/* A dot's scale moved onto its first operand, before the loop: `tl.dot(A, B) * S` in a loop
 * that changes neither A nor S becomes `tl.dot(A', B)` with `A' = (A * S).to(A.dtype)` made once
 * before the loop (attention's `tl.dot(q, k) * qk_scale`: Q scaled once a program instead of
 * every score of every block). dot(S A, B) = S dot(A, B) for any scalar S; the variant differs
 * by rounding S A to A's dtype, which the check against the task's tolerance judges. One
 * boolean per product (false: unchanged). */
#include <tforge/sdk/transform.h>

enum { MAX_SCALES = 4 };

typedef struct qscale_state {
    xf_base base;
    char names[MAX_SCALES][32];
} qscale_state;

static int qscale_create(void **state, const tforge_transform_args *args)
{
    const tforge_ir_kernel *k = args->kernel;
    if (k->n_dot_scales == 0)
        return TFORGE_TRANSFORM_NOT_APPLICABLE;
    qscale_state *s = xf_new(sizeof *s, args);
    if (!s)
        return TFORGE_PLUGIN_ENOMEM;
    xf_base *b = &s->base;
    b->n_params = (uint32_t)(k->n_dot_scales < MAX_SCALES ? k->n_dot_scales : MAX_SCALES);
    size_t len = (size_t)snprintf(b->description, sizeof b->description, "scaled dot%s at line",
                                  b->n_params > 1 ? "s" : "");
    for (size_t i = 0; i < b->n_params; i++) {
        const tforge_ir_dot_scale *d = &k->dot_scales[i];
        snprintf(s->names[i], sizeof s->names[i], "qscale%zu", i);
        b->params[i] = (tforge_transform_param){s->names[i], TFORGE_DIM_BOOLEAN,
                                                TFORGE_TRANSFORM_REWRITE, 0, NULL, 0, NULL};
        if (len < sizeof b->description)
            len += (size_t)snprintf(b->description + len, sizeof b->description - len,
                                    "%s %d (%s by %s)", i ? "," : "", d->span.line, d->a,
                                    d->scale);
    }
    *state = s;
    return 0;
}

/* Three edits: the scaled operand made on a line of its own just before the loop (at the loop
 * statement's own indentation), the dot's first operand renamed to it, the scale cut out. */
static int move_scale(xf_base *b, const tforge_ir_dot_scale *d)
{
    char in[64];
    xf_indent(in, sizeof in, b->args->source, d->loop.start);
    int rc = xf_edit(&b->edits, d->loop.start, d->loop.start, "%s = (%s * (%s)).to(%s.dtype)\n%s",
                     d->name, d->a, d->scale, d->a, in);
    if (!rc)
        rc = xf_edit(&b->edits, d->a_span.start, d->a_span.end, "%s", d->name);
    if (!rc)
        rc = xf_edit(&b->edits, d->cut.start, d->cut.end, "%s", "");
    return rc;
}

static int qscale_apply(void *state, const tforge_level *levels,
                        const tforge_span_edit **edits, uint32_t *n_edits)
{
    xf_base *b = state;
    xf_reset(&b->edits);
    int rc = 0;
    for (size_t i = 0; i < b->n_params && !rc; i++)
        if (levels[i])
            rc = move_scale(b, &b->args->kernel->dot_scales[i]);
    return xf_applied(b, rc, edits, n_edits);
}

XF_TRANSFORM("qscale", "a dot's scale moved onto its loop-fixed first operand, before the loop",
             qscale_create, qscale_apply);
