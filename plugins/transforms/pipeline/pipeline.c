/* Software pipelining and unrolling of the kernel's loops through tl.range: for each `range` or
 * `tl.range` loop whose body loads memory (the analysis puts a load inside its span), the number
 * of stages its loads are pipelined over (num_stages), an unroll factor (loop_unroll_factor),
 * and, where the body holds a tl.dot, disallow_acc_multi_buffer; for a loop around another
 * loop, flatten. An option the loop sets already is left alone. `range` becomes tl.range (the
 * same iteration; Triton lowers both to one scf.for), so the rewrite changes only how the
 * compiler schedules the loop, never what it computes. */
#include <tforge/sdk/transform.h>

enum { MAX_LOOPS = 4, PER_LOOP = 4 };
_Static_assert(MAX_LOOPS * PER_LOOP <= TFORGE_SDK_XF_MAX_PARAMS,
               "every loop's parameters fit in the base");

static const char *const stages_values[] = {"0", "1", "2", "3", "4", "5"};
static const char *const unroll_values[] = {"0", "2", "4", "8"};

typedef enum option { STAGES, UNROLL, FLATTEN, SINGLE_ACC } option;
static const char *const option_names[] = {"num_stages", "loop_unroll_factor", "flatten",
                                           "disallow_acc_multi_buffer"};
static const char *const option_suffix[] = {"stages", "unroll", "flatten", "single_acc"};
static const uint32_t option_effect[] = {TFORGE_EFFECT_PIPELINE_STAGES, TFORGE_EFFECT_UNROLL,
                                         TFORGE_EFFECT_FLATTEN, TFORGE_EFFECT_ACC_BUFFERS};

typedef struct loop_params {
    const tforge_ir_loop *loop;
    uint32_t first, n; /* its params in the state's list */
    option options[PER_LOOP];
} loop_params;

typedef struct pipeline_state {
    tforge_sdk_xf_base base;
    loop_params loops[MAX_LOOPS];
    uint32_t n_loops;
    char names[MAX_LOOPS * PER_LOOP][48];
} pipeline_state;

static int has_option(const tforge_ir_loop *loop, const char *name)
{
    for (size_t i = 0; i < loop->n_options; i++)
        if (strcmp(loop->options[i].name, name) == 0)
            return 1;
    return 0;
}

static int inside(tforge_ir_span inner, tforge_ir_span outer)
{
    return inner.start >= outer.start && inner.end <= outer.end;
}

static void add(pipeline_state *s, loop_params *lp, option o)
{
    if (has_option(lp->loop, option_names[o]))
        return;
    tforge_sdk_xf_base *b = &s->base;
    uint32_t k = b->n_params++;
    snprintf(s->names[k], sizeof s->names[k], "loop%u_%s", (unsigned)(lp - s->loops),
             option_suffix[o]);
    tforge_transform_param *p = &b->params[k];
    *p = (tforge_transform_param){s->names[k], TFORGE_DIM_BOOLEAN, TFORGE_TRANSFORM_REWRITE,
                                  0, NULL, 0, NULL, option_effect[o]};
    if (o == STAGES)
        p->kind = TFORGE_DIM_ORDINAL, p->n_values = 6, p->values = stages_values;
    else if (o == UNROLL)
        p->kind = TFORGE_DIM_ORDINAL, p->n_values = 4, p->values = unroll_values;
    lp->options[lp->n++] = o;
}

static int pipeline_create(void **state, const tforge_host *host,
                           const tforge_options_view *options, const tforge_transform_input *input)
{
    (void)options; /* it takes none */
    const tforge_ir_kernel *k = input->kernel;
    pipeline_state *s = tforge_sdk_xf_new(sizeof *s, host, input);
    if (!s)
        return TFORGE_PLUGIN_ENOMEM;
    tforge_sdk_xf_base *b = &s->base;
    size_t len = (size_t)snprintf(b->description, sizeof b->description, "loops at line");
    for (size_t i = 0; i < k->n_loops && s->n_loops < MAX_LOOPS; i++) {
        const tforge_ir_loop *loop = &k->loops[i];
        if (strcmp(loop->kind, "tl.static_range") == 0)
            continue;
        int loads = 0, dots = 0, inner = 0;
        for (size_t m = 0; m < k->n_memops; m++)
            loads |= strcmp(k->memops[m].op, "load") == 0 && inside(k->memops[m].span, loop->span);
        for (size_t d = 0; d < k->n_dots; d++)
            dots |= inside(k->dots[d].span, loop->span);
        for (size_t j = 0; j < k->n_loops; j++)
            inner |= j != i && inside(k->loops[j].span, loop->span);
        if (!loads)
            continue;
        loop_params *lp = &s->loops[s->n_loops++];
        lp->loop = loop;
        lp->first = b->n_params;
        add(s, lp, STAGES);
        add(s, lp, UNROLL);
        if (inner)
            add(s, lp, FLATTEN);
        if (dots)
            add(s, lp, SINGLE_ACC);
        if (len < sizeof b->description)
            len += (size_t)snprintf(b->description + len, sizeof b->description - len, "%s %d",
                                    s->n_loops > 1 ? "," : "", loop->span.line);
    }
    if (b->n_params == 0) {
        free(s);
        return TFORGE_TRANSFORM_NOT_APPLICABLE;
    }
    *state = s;
    return 0;
}

static int pipeline_apply(void *state, const tforge_level *levels, const tforge_span_edit **edits,
                          uint32_t *n_edits)
{
    pipeline_state *s = state;
    tforge_sdk_xf_base *b = &s->base;
    tforge_sdk_xf_reset(&b->edits);
    int rc = 0;
    for (uint32_t l = 0; l < s->n_loops && !rc; l++) {
        const loop_params *lp = &s->loops[l];
        char keywords[256] = "";
        size_t len = 0;
        for (uint32_t j = 0; j < lp->n; j++) {
            tforge_level v = levels[lp->first + j];
            const tforge_transform_param *p = &b->params[lp->first + j];
            if (v == 0 || len >= sizeof keywords)
                continue;
            len += (size_t)snprintf(keywords + len, sizeof keywords - len, "%s%s=%s",
                                    len ? ", " : "", option_names[lp->options[j]],
                                    p->kind == TFORGE_DIM_BOOLEAN ? "True" : p->values[v]);
        }
        if (!len)
            continue;
        const tforge_ir_loop *loop = lp->loop;
        if (strcmp(loop->kind, "range") == 0)
            rc = tforge_sdk_xf_edit(&b->edits, loop->func.start, loop->func.end, "%s.range",
                                    b->input->kernel->language);
        if (!rc)
            rc = tforge_sdk_xf_add_keyword(&b->edits, b->input->source, loop->iter, keywords);
    }
    return tforge_sdk_xf_applied(b, rc, edits, n_edits);
}

TFORGE_SDK_XF_TRANSFORM("pipeline", "loop pipelining and unrolling through tl.range",
                        pipeline_create,
                        pipeline_apply);
