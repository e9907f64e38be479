/* Split-K for the tutorial-03 GEMM (the analysis' gemm record): S programs share each tile of
 * C, program s of a tile summing the K blocks s, s + S, s + 2S, ..., and each adds its partial
 * tile into C with tl.atomic_add. For skinny products, whose tiles are too few to fill the GPU:
 * S times the programs, each 1/S of the K loop. A decorator defined beside the kernel makes the
 * caller's grid (one program per tile) S times larger along axis 0 and gives the kernel zeroed
 * fp32 sums to add into (C itself when it is fp32), copied into C after it. Parameter split_k (ORDINAL 1 = unchanged, 2, 4,
 * 8, 16). The README says what the analysis proves and what the rewrite changes. */
#include <tforge/sdk/transform.h>

static const char *const split_values[] = {"1", "2", "4", "8", "16"};

typedef struct splitk_state {
    tforge_sdk_xf_base base;
    char hook[128]; /* the decorator's name */
} splitk_state;

static int splitk_create(void **state, const tforge_host *host,
                         const tforge_options_view *options, const tforge_transform_input *input)
{
    (void)options; /* it takes none */
    const tforge_ir_kernel *k = input->kernel;
    const tforge_ir_gemm *g = k->gemm;
    /* the tile body's pid (one program id, no num_programs), A's and B's tiles made before the
     * loop and advanced in it (the split moves both), no atomics already, C's store
     * passing pointer, value and mask alone, and a stored value linear in the accumulator
     * (`acc` or `acc.to(D)`: the sum of the partial tiles' values is the whole tile's); K
     * offsets the loop advances in place would keep bounding the unsplit blocks */
    if (!g || !g->pid || !g->a.advance.end || !g->b.advance.end || g->k_advanced ||
        k->n_atomics ||
        !tforge_sdk_xf_jit_decorator(k) || !g->c.plain ||
        !g->c.pointer || !g->c.value || !g->stores_acc)
        return TFORGE_TRANSFORM_NOT_APPLICABLE;
    splitk_state *s = tforge_sdk_xf_new(sizeof *s, host, input);
    if (!s)
        return TFORGE_PLUGIN_ENOMEM;
    s->base.params[s->base.n_params++] = (tforge_transform_param){
        "split_k", TFORGE_DIM_ORDINAL, TFORGE_TRANSFORM_REWRITE, 5, split_values, 0, NULL,
        TFORGE_EFFECT_SPLIT_K};
    snprintf(s->hook, sizeof s->hook, "_tforge_splitk_%s", k->name);
    snprintf(s->base.description, sizeof s->base.description,
             "split-K for the GEMM %s = %s @ %s (loop at line %d, store at line %d)", g->c.base,
             g->a.base, g->b.base, g->loop.line, g->c.access.line);
    *state = s;
    return 0;
}

/* `bound["name"]`, or the literal a stride left out stands for. */
static const char *bound(char *out, size_t size, const char *name)
{
    snprintf(out, size, strcmp(name, "1") ? "bound[\"%s\"]" : "%s", name);
    return out;
}

/* The decorator's definition before the kernel's first decorator, and its use directly above
 * the jit decorator (under any autotune or heuristics: every launch through them is split).
 * The partial tiles are added in fp32: into C when it is fp32, else into a zeroed fp32 array of
 * C's strides that the launch then copies into C (fp16 atomics would round every partial sum;
 * session 16 measured 11 to 1255 of 1024^2 elements outside a GEMM's tolerance). */
static int add_hook(splitk_state *s, const char *split)
{
    const tforge_ir_kernel *k = s->base.input->kernel;
    const tforge_ir_gemm *g = k->gemm;
    const char *src = s->base.input->source;
    tforge_sdk_xf_edits *e = &s->base.edits;
    char in[64], rows[96], cols[96];
    uint32_t at = tforge_sdk_xf_before_decorators(s->base.input, in, sizeof in);
    int rc = tforge_sdk_xf_edit(
        e, at, at,
        "%sdef %s(kernel):\n"
        "%s    \"\"\"tforge splitk: %s programs share each tile of C, each adding its part of the\n"
        "%s    sum along K atomically into an fp32 C (C itself when it is fp32, else a zeroed\n"
        "%s    fp32 array with C's strides, copied into C after the kernel). The caller's grid\n"
        "%s    has a program per tile: each launch makes it %s times larger along axis 0.\"\"\"\n"
        "%s    import torch\n\n"
        "%s    def launch(run, args, kwargs, grid):\n"
        "%s        bound = dict(zip(kernel.arg_names, args), **kwargs)\n"
        "%s        size, strides = (bound[\"%s\"], bound[\"%s\"]), (%s, %s)\n"
        "%s        c = torch.as_strided(bound[\"%s\"], size, strides)\n"
        "%s        sums = c if c.dtype == torch.float32 else torch.empty_strided(\n"
        "%s            size, strides, dtype=torch.float32, device=c.device)\n"
        "%s        sums.zero_()\n"
        "%s        args = [sums if n == \"%s\" else a for n, a in zip(kernel.arg_names, args)]\n"
        "%s        kwargs = {n: sums if n == \"%s\" else a for n, a in kwargs.items()}\n\n"
        "%s        def split_grid(meta):\n"
        "%s            tiles = grid(meta) if callable(grid) else grid\n"
        "%s            return (tiles[0] * %s, *tiles[1:])\n"
        "%s        out = run(args, kwargs, split_grid)\n"
        "%s        if sums is not c:\n"
        "%s            c.copy_(sums)\n"
        "%s        return out\n\n"
        "%s    unsplit = kernel.run\n\n"
        "%s    def run(*args, grid, warmup=False, **kwargs):\n"
        "%s        if warmup:\n"
        "%s            return unsplit(*args, grid=grid, warmup=True, **kwargs)\n"
        "%s        return launch(lambda a, kw, g: unsplit(*a, grid=g, warmup=False, **kw), "
        "args,\n%s                      kwargs, grid)\n\n"
        "%s    kernel.run = run\n"
        "%s    kernel.tforge_launch = launch  # how tforge's launches of the variant run\n"
        "%s    return kernel\n\n\n",
        in, s->hook, in, split, in, in, in, split, in, in, in, in, g->m, g->n,
        bound(rows, sizeof rows, g->c.stride_row), bound(cols, sizeof cols, g->c.stride_col), in,
        g->c.base, in, in, in, in, g->c.base, in, g->c.base, in, in, in, split, in, in, in, in,
        in, in, in, in, in, in, in, in, in);
    uint32_t jit = tforge_sdk_xf_line_start(src, tforge_sdk_xf_jit_decorator(k)->span.start);
    return rc ? rc : tforge_sdk_xf_edit(e, jit, jit, "%s@%s\n", in, s->hook);
}

/* An operand's tile: made starting at its split's first block along K, advanced S blocks. */
static int split_operand(tforge_sdk_xf_edits *e, const tforge_ir_gemm *g,
                         const tforge_ir_gemm_matrix *m,
                         const char *stride, const char *split)
{
    char step[160];
    snprintf(step, sizeof step, strcmp(stride, "1") ? "%s * %s" : "%s", g->block_k, stride);
    int rc = tforge_sdk_xf_edit(e, m->ptrs_stmt.end, m->ptrs_stmt.end, "; %s += _tforge_split * %s",
                                m->ptrs, step);
    return rc ? rc : tforge_sdk_xf_edit(e, m->advance.start, m->advance.end, "%s += %s * %s",
                                        m->ptrs,
                                        split, step);
}

static int splitk_apply(void *state, const tforge_level *levels, const tforge_span_edit **edits,
                        uint32_t *n_edits)
{
    splitk_state *s = state;
    const tforge_ir_kernel *k = s->base.input->kernel;
    const tforge_ir_gemm *g = k->gemm;
    const char *tl = k->language, *split = split_values[levels[0]];
    tforge_sdk_xf_edits *e = &s->base.edits;
    tforge_sdk_xf_reset(e);
    *edits = NULL;
    *n_edits = 0;
    if (!levels[0])
        return 0;
    /* program p computes tile p // S, split p % S; the K loop takes every S-th block from the
     * split's; the store adds the fp32 accumulator itself (relaxed: nothing reads the sums
     * before the kernel ends) */
    int rc = add_hook(s, split);
    if (!rc)
        rc = tforge_sdk_xf_edit(
            e, g->pid_stmt.start, g->pid_stmt.end,
            "%s = %s.program_id(0) // %s; _tforge_split = %s.program_id(0) %% %s", g->pid,
            tl, split, tl, split);
    if (!rc)
        rc = tforge_sdk_xf_edit(e, g->k_args.start, g->k_args.end,
                                "_tforge_split * (%s), %s, (%s) * %s",
                                g->k_step, g->k_stop, g->k_step, split);
    if (!rc)
        rc = split_operand(e, g, &g->a, g->a.stride_col, split);
    if (!rc)
        rc = split_operand(e, g, &g->b, g->b.stride_row, split);
    if (!rc)
        rc = tforge_sdk_xf_edit(
            e, g->c.access.start, g->c.access.end, "%s.atomic_add(%s, %s%s%s, "
            "sem=\"relaxed\")", tl, g->c.pointer, g->acc, g->c.mask ? ", mask=" : "",
            g->c.mask ? g->c.mask : "");
    return tforge_sdk_xf_applied(&s->base, rc, edits, n_edits);
}

TFORGE_SDK_XF_TRANSFORM("splitk",
                        "split-K: programs sharing a GEMM's tiles, partial sums added atomically",
                        splitk_create, splitk_apply);
