/* exp as exp2: every `tl.exp(x)` of the kernel becomes `tl.exp2((x) * log2(e))`, which Triton
 * lowers to one multiply and the fast ex2.approx instruction whatever the dtype (its own exp
 * takes that path for fp32 only, and libdevice's exp for fp64). exp(x) = 2^(x log2 e) exactly;
 * the variant differs by the rounding of the product, which the check against the task's
 * tolerance judges. One boolean for all exp calls of the kernel: false leaves it unchanged. */
#include <tforge/sdk/transform.h>

#define LOG2E "1.4426950408889634" /* log2(e) to double precision */

static int is_exp(const tforge_ir_math *m)
{
    return strcmp(m->op, "exp") == 0;
}

static int exp2_create(void **state, const tforge_host *host,
                       const tforge_options_view *options, const tforge_transform_input *input)
{
    (void)options; /* it takes none */
    const tforge_ir_kernel *k = input->kernel;
    size_t n = 0;
    for (size_t i = 0; i < k->n_math; i++)
        n += is_exp(&k->math[i]);
    if (n == 0)
        return TFORGE_TRANSFORM_NOT_APPLICABLE;
    tforge_sdk_xf_base *s = tforge_sdk_xf_new(sizeof *s, host, input);
    if (!s)
        return TFORGE_PLUGIN_ENOMEM;
    s->params[s->n_params++] = (tforge_transform_param){
        "exp2", TFORGE_DIM_BOOLEAN, TFORGE_TRANSFORM_REWRITE, 0, NULL, 0, NULL, TFORGE_EFFECT_FOLD};
    size_t len = (size_t)snprintf(s->description, sizeof s->description, "%zu exp call%s at line",
                                  n, n > 1 ? "s" : "");
    int last = 0;
    for (size_t i = 0; i < k->n_math && len < sizeof s->description; i++) {
        int line = k->math[i].span.line;
        if (!is_exp(&k->math[i]) || line == last)
            continue;
        len += (size_t)snprintf(s->description + len, sizeof s->description - len, "%s %d",
                                last ? "," : "", line);
        last = line;
    }
    *state = s;
    return 0;
}

static int exp2_apply(void *state, const tforge_level *levels, const tforge_span_edit **edits,
                      uint32_t *n_edits)
{
    tforge_sdk_xf_base *s = state;
    const tforge_ir_kernel *k = s->input->kernel;
    tforge_sdk_xf_reset(&s->edits);
    int rc = 0;
    /* the argument is wrapped by insertions, not replaced, so that other transforms (and a
     * nested exp) may still edit inside it */
    for (size_t i = 0; i < k->n_math && levels[0] && !rc; i++) {
        const tforge_ir_math *m = &k->math[i];
        if (!is_exp(m))
            continue;
        rc = tforge_sdk_xf_edit(&s->edits, m->func.start, m->func.end, "%s.exp2", k->language);
        if (!rc)
            rc = tforge_sdk_xf_edit(&s->edits, m->arg.start, m->arg.start, "(");
        if (!rc)
            rc = tforge_sdk_xf_edit(&s->edits, m->arg.end, m->arg.end, ") * " LOG2E);
    }
    return tforge_sdk_xf_applied(s, rc, edits, n_edits);
}

TFORGE_SDK_XF_TRANSFORM("exp2", "tl.exp(x) as tl.exp2(x * log2(e)): the fast ex2.approx",
                        exp2_create,
                        exp2_apply);
