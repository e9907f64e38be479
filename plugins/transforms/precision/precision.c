/* The precision of tl.dot's products: for each of the first two dots that set no input_precision
 * and no allow_tf32, an input_precision of tf32x3 (three tf32 products: about fp32's accuracy,
 * three times the tensor-core work) or ieee (fp32 FMAs, no tensor cores). The option acts only on
 * fp32 operands; Triton ignores it for fp16, bf16, fp8 and int8 ones. The IR rarely knows an
 * operand's dtype (a loaded tile's comes from the tensor passed), so a dot applies unless an
 * operand is cast to another type in the call itself (`p.to(tl.float16)`: both operands of a dot
 * have one dtype). A different precision changes the results: the check against the task's
 * tolerance decides. */
#include <tforge/sdk/transform.h>

enum { MAX_DOTS = 2 };

/* No "tf32": it is what Triton picks for an fp32 dot without the option on NVIDIA GPUs from
 * sm_80 (the backend's default_dot_input_precision), the same code as level 0. */
static const char *const precision_values[] = {"default", "tf32x3", "ieee"};

typedef struct precision_state {
    tforge_sdk_xf_base base; /* a parameter for each dot */
    const tforge_ir_dot *dots[MAX_DOTS];
    char names[MAX_DOTS][24];
} precision_state;

/* Whether `operand` ends in `.to(<lang>.T)` (a keyword after T allowed) with T other than
 * float32: then the dot's operands are T, and input_precision does nothing. */
static int cast_to_other_type(const char *operand, const char *lang)
{
    const char *to = NULL;
    for (const char *p = strstr(operand, ".to("); p; p = strstr(p + 1, ".to("))
        to = p;
    size_t n = strlen(lang), len = strlen(operand);
    if (!to || operand[len - 1] != ')' || strncmp(to + 4, lang, n) != 0 || to[4 + n] != '.')
        return 0;
    const char *type = to + 5 + n;
    size_t type_len = strcspn(type, ",)");
    if (type + type_len != operand + len - 1 && type[type_len] != ',')
        return 0;
    return !(type_len == 7 && strncmp(type, "float32", 7) == 0);
}

static int precision_create(void **state, const tforge_host *host,
                            const tforge_options_view *options, const tforge_transform_input *input)
{
    (void)options; /* it takes none */
    const tforge_ir_kernel *k = input->kernel;
    precision_state *s = tforge_sdk_xf_new(sizeof *s, host, input);
    if (!s)
        return TFORGE_PLUGIN_ENOMEM;
    tforge_sdk_xf_base *b = &s->base;
    size_t len = (size_t)snprintf(b->description, sizeof b->description, "dots at line");
    for (size_t i = 0; i < k->n_dots && b->n_params < MAX_DOTS; i++) {
        const tforge_ir_dot *d = &k->dots[i];
        if (d->input_precision || d->allow_tf32 || !d->a || !d->b ||
            cast_to_other_type(d->a, k->language) || cast_to_other_type(d->b, k->language))
            continue;
        uint32_t j = b->n_params++;
        s->dots[j] = d;
        snprintf(s->names[j], sizeof s->names[j], "dot%u_precision", (unsigned)j);
        b->params[j] = (tforge_transform_param){s->names[j], TFORGE_DIM_CATEGORICAL,
                                                TFORGE_TRANSFORM_REWRITE, 3, precision_values,
                                                0, NULL, TFORGE_EFFECT_PRECISION};
        if (len < sizeof b->description)
            len += (size_t)snprintf(b->description + len, sizeof b->description - len, "%s %d",
                                    j ? "," : "", d->span.line);
    }
    if (b->n_params == 0) {
        free(s);
        return TFORGE_TRANSFORM_NOT_APPLICABLE;
    }
    if (len < sizeof b->description)
        snprintf(b->description + len, sizeof b->description - len,
                 "; none sets input_precision, none casts an operand to a type other than fp32");
    *state = s;
    return 0;
}

static int precision_apply(void *state, const tforge_level *levels,
                           const tforge_span_edit **edits, uint32_t *n_edits)
{
    precision_state *s = state;
    tforge_sdk_xf_base *b = &s->base;
    tforge_sdk_xf_reset(&b->edits);
    int rc = 0;
    for (uint32_t j = 0; j < b->n_params && !rc; j++) {
        if (levels[j] == 0)
            continue;
        char keyword[48];
        snprintf(keyword, sizeof keyword, "input_precision=\"%s\"", precision_values[levels[j]]);
        /* a dot's span is its call: the keyword goes before its ')' */
        rc = tforge_sdk_xf_add_keyword(&b->edits, b->input->source, s->dots[j]->span, keyword);
    }
    return tforge_sdk_xf_applied(b, rc, edits, n_edits);
}

TFORGE_SDK_XF_TRANSFORM("precision", "tl.dot input precision (tf32x3, ieee) for fp32 operands",
                        precision_create, precision_apply);
