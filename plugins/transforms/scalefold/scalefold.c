/* A score's scale folded into its uses: `X = tl.dot(A, B) * S` becomes the dot alone, each row
 * maximum `tl.max(X, ..)` is multiplied by S and each `X - M` becomes `X * S - M` (one FMA), as
 * tutorial 06 writes attention: one multiply per score fewer. For S > 0, max(S x) = S max(x),
 * S (-inf) = -inf (the where masks) and (S x) - M = S x - M, so the variant computes what the
 * kernel did up to the FMA's rounding; for S <= 0 the first fails. The analysis proves S > 0
 * whenever some scalar parameters are (a product of positive numbers and them); a decorator
 * checks those at each launch and launches a copy of the kernel as the file has it when they are
 * not. One boolean per score (false: unchanged). */
#include <tforge/sdk/transform.h>

enum { MAX_FOLDS = 4 };

typedef struct scalefold_state {
    tforge_sdk_xf_base base;
    char names[MAX_FOLDS][32];
    char hook[128], unfolded[128]; /* the decorator's name, the kernel's copy's */
} scalefold_state;

static int scalefold_create(void **state, const tforge_host *host,
                            const tforge_options_view *options, const tforge_transform_input *input)
{
    (void)options; /* it takes none */
    const tforge_ir_kernel *k = input->kernel;
    if (k->n_scale_folds == 0 || !tforge_sdk_xf_jit_decorator(k))
        return TFORGE_TRANSFORM_NOT_APPLICABLE;
    scalefold_state *s = tforge_sdk_xf_new(sizeof *s, host, input);
    if (!s)
        return TFORGE_PLUGIN_ENOMEM;
    tforge_sdk_xf_base *b = &s->base;
    snprintf(s->hook, sizeof s->hook, "_tforge_scalefold_%s", k->name);
    snprintf(s->unfolded, sizeof s->unfolded, "_tforge_unfolded_%s", k->name);
    tforge_sdk_xf_booleans(b, s->names, k->n_scale_folds, MAX_FOLDS, "scalefold",
                           TFORGE_EFFECT_FOLD);
    size_t len = (size_t)snprintf(b->description, sizeof b->description, "scaled score%s at line",
                                  b->n_params > 1 ? "s" : "");
    for (size_t i = 0; i < b->n_params; i++) {
        const tforge_ir_scale_fold *f = &k->scale_folds[i];
        if (len < sizeof b->description)
            len += (size_t)snprintf(b->description + len, sizeof b->description - len,
                                    "%s %d (%s by %s)", i ? "," : "", f->stmt.line, f->x,
                                    f->scale);
    }
    *state = s;
    return 0;
}

/* The guard, once for the kernel: a copy of the kernel as the file has it (under its jit
 * decorator alone) and a decorator whose launch runs that copy unless every parameter the
 * folded scales' signs rest on is positive; its use directly above the jit decorator (under any
 * autotune or heuristics: every launch through them is guarded). `params` is the Python tuple
 * of those names. */
static int add_guard(scalefold_state *s, const char *params)
{
    const tforge_ir_kernel *k = s->base.input->kernel;
    const char *src = s->base.input->source;
    tforge_sdk_xf_edits *e = &s->base.edits;
    const tforge_ir_statement *jit = tforge_sdk_xf_jit_decorator(k);
    uint32_t name_end = k->span.start + 4 + (uint32_t)strlen(k->name); /* past `def NAME` */
    char in[64];
    uint32_t at = tforge_sdk_xf_before_decorators(s->base.input, in, sizeof in);
    int rc = tforge_sdk_xf_edit(
        e, at, at,
        "%s@%.*s\n%sdef %s%.*s\n\n\n"
        "%sdef %s(kernel):\n"
        "%s    \"\"\"tforge scalefold: the scores' scale folded into their row maxima and\n"
        "%s    exponents, right for a positive scale only: a launch where one of the\n"
        "%s    parameters %s is not positive runs %s, the kernel as the file has it.\"\"\"\n"
        "%s    import inspect\n"
        "%s    signature = inspect.signature(kernel.fn).parameters\n\n"
        "%s    def launch(run, args, kwargs, grid):\n"
        "%s        bound = dict(zip(kernel.arg_names, args), **kwargs)\n"
        "%s        if all((bound[p] if p in bound else signature[p].default) > 0 for p in %s):\n"
        "%s            return run(args, kwargs, grid)\n"
        "%s        return %s.run(*args, grid=grid, warmup=False, **kwargs)\n\n"
        "%s    folded = kernel.run\n\n"
        "%s    def run(*args, grid, warmup=False, **kwargs):\n"
        "%s        if warmup:\n"
        "%s            return folded(*args, grid=grid, warmup=True, **kwargs)\n"
        "%s        return launch(lambda a, kw, g: folded(*a, grid=g, warmup=False, **kw), "
        "args,\n%s                      kwargs, grid)\n\n"
        "%s    kernel.run = run\n"
        "%s    kernel.tforge_launch = launch  # how tforge's launches of the variant run\n"
        "%s    return kernel\n\n\n",
        in, (int)(jit->span.end - jit->span.start), src + jit->span.start, in, s->unfolded,
        (int)(k->span.end - name_end), src + name_end, in, s->hook, in, in, in, params,
        s->unfolded, in, in, in, in, in, params, in, in, s->unfolded, in, in, in, in, in, in, in,
        in, in);
    uint32_t use = tforge_sdk_xf_line_start(src, jit->span.start);
    return rc ? rc : tforge_sdk_xf_edit(e, use, use, "%s@%s\n", in, s->hook);
}

/* The score without S; S on each of its row maxima and subtractions. */
static int fold(tforge_sdk_xf_edits *e, const tforge_ir_scale_fold *f)
{
    int rc = tforge_sdk_xf_edit(e, f->cut.start, f->cut.end, "%s", "");
    for (size_t i = 0; i < f->n_maxes && !rc; i++) {
        rc = tforge_sdk_xf_edit(e, f->maxes[i].start, f->maxes[i].start, "(");
        if (!rc)
            rc = tforge_sdk_xf_edit(e, f->maxes[i].end, f->maxes[i].end, ") * (%s)", f->scale);
    }
    for (size_t i = 0; i < f->n_subs && !rc; i++)
        rc = tforge_sdk_xf_edit(e, f->subs[i].end, f->subs[i].end, " * (%s)", f->scale);
    return rc;
}

static int scalefold_apply(void *state, const tforge_level *levels,
                           const tforge_span_edit **edits, uint32_t *n_edits)
{
    scalefold_state *s = state;
    tforge_sdk_xf_base *b = &s->base;
    const tforge_ir_kernel *k = b->input->kernel;
    tforge_sdk_xf_reset(&b->edits);
    char params[512] = "(";
    size_t len = 1, n = 0;
    int rc = 0;
    for (size_t i = 0; i < b->n_params && !rc; i++) {
        if (!levels[i])
            continue;
        const tforge_ir_scale_fold *f = &k->scale_folds[i];
        rc = fold(&b->edits, f);
        for (size_t p = 0; p < f->n_params && len < sizeof params; p++, n++)
            len += (size_t)snprintf(params + len, sizeof params - len, "\"%s\",", f->params[p]);
    }
    if (!rc && n > 0 && len + 1 >= sizeof params) {
        rc = TFORGE_PLUGIN_ENOMEM;
    } else if (!rc && n > 0) {
        strcat(params, ")"); /* ("sm_scale",): a tuple even of one */
        rc = add_guard(s, params);
    }
    return tforge_sdk_xf_applied(b, rc, edits, n_edits);
}

TFORGE_SDK_XF_TRANSFORM("scalefold",
                        "a score's positive scale folded into its row maxima and exponents",
                        scalefold_create, scalefold_apply);
