/* TMA tensor descriptors for the tutorial-03 GEMM (the analysis' gemm record): A, B and C get a
 * device-side descriptor each, `tl.make_tensor_descriptor(base, shape, strides, block_shape)`
 * made where the kernel made its pointer tile, the loads in the K loop become descriptor loads
 * at the tile's first row and column (the advances have nothing left to move: `pass`), and the
 * store a descriptor store. Out-of-bounds rows and columns read as zero and are not written, as
 * the bounds masks did; the descriptors live in global scratch memory that Triton asks an
 * allocator for at each launch, and TMA needs 16-byte aligned bases and row strides and a unit
 * last stride, which the kernel cannot check. So the kernel gets a decorator, defined beside it,
 * whose pre-run hook refuses a launch that breaks them (a clear error before the launch: never
 * a fault or a wrong tile) and sets the allocator in the launching thread (Triton keeps it in a
 * context variable). One boolean, `tma`: false leaves the kernel unchanged; and, where the store
 * is a statement of its own, `tma_subtile`: C written in two halves of BLOCK_N / 2 columns (the
 * epilogue subtiling of Triton's tutorial 09), the tile split by reshape, permute and split. */
#include <ctype.h>

#include <tforge/sdk/transform.h>

static const char *const subtile_constraint[] = {"tma or not tma_subtile"};

typedef struct descriptors_state {
    tforge_sdk_xf_base base;
    char names[3][64]; /* the descriptors of A, B, C */
    char halves[64];   /* C's halves, `<halves>0` and `<halves>1` */
    char hook[128];    /* the decorator's name */
} descriptors_state;

/* Whether the span is a statement alone on its lines: only indentation before it, and nothing
 * but blanks or a comment after it. */
static int alone_on_its_line(const char *src, tforge_ir_span span)
{
    for (uint32_t i = span.start; i > 0 && src[i - 1] != '\n'; i--)
        if (src[i - 1] != ' ' && src[i - 1] != '\t')
            return 0;
    for (const char *c = src + span.end; *c && *c != '\n' && *c != '#'; c++)
        if (*c != ' ' && *c != '\t' && *c != '\r')
            return 0;
    return 1;
}

static int is_param(const tforge_ir_kernel *k, const char *name)
{
    for (size_t i = 0; i < k->n_params; i++)
        if (strcmp(k->params[i].name, name) == 0)
            return 1;
    return 0;
}

/* `a_desc` for base `a_ptr` and suffix `_desc` (`<base>_desc` otherwise), `_tma` added while it
 * names a parameter. */
static void local_name(char *out, size_t size, const tforge_ir_kernel *k, const char *base,
                       const char *suffix)
{
    size_t n = strlen(base);
    if (n > 4 && strcmp(base + n - 4, "_ptr") == 0)
        n -= 4;
    snprintf(out, size, "%.*s%s", (int)n, base, suffix);
    while (is_param(k, out) && strlen(out) + 5 < size)
        strcat(out, "_tma");
}

static int descriptors_create(void **state, const tforge_host *host,
                              const tforge_options_view *options,
                              const tforge_transform_input *input)
{
    (void)options; /* it takes none */
    const tforge_ir_kernel *k = input->kernel;
    const tforge_ir_gemm *g = k->gemm;
    if (!g || !tforge_sdk_xf_jit_decorator(k))
        return TFORGE_TRANSFORM_NOT_APPLICABLE;
    descriptors_state *s = tforge_sdk_xf_new(sizeof *s, host, input);
    if (!s)
        return TFORGE_PLUGIN_ENOMEM;
    s->base.params[s->base.n_params++] = (tforge_transform_param){
        "tma", TFORGE_DIM_BOOLEAN, TFORGE_TRANSFORM_REWRITE, 0, NULL, 0, NULL, TFORGE_EFFECT_TMA};
    if (alone_on_its_line(input->source, g->c.access))
        s->base.params[s->base.n_params++] = (tforge_transform_param){
            "tma_subtile", TFORGE_DIM_BOOLEAN, TFORGE_TRANSFORM_REWRITE, 0, NULL, 1,
            subtile_constraint, TFORGE_EFFECT_TMA};
    const tforge_ir_gemm_matrix *m[3] = {&g->a, &g->b, &g->c};
    for (int i = 0; i < 3; i++)
        local_name(s->names[i], sizeof s->names[i], k, m[i]->base, "_desc");
    local_name(s->halves, sizeof s->halves, k, g->c.base, "_half");
    snprintf(s->hook, sizeof s->hook, "_tforge_tma_%s", k->name);
    snprintf(s->base.description, sizeof s->base.description,
             "TMA descriptors for the GEMM %s = %s @ %s (loop at line %d, store at line %d)",
             g->c.base, g->a.base, g->b.base, g->loop.line, g->c.access.line);
    *state = s;
    return 0;
}

/* `tl.make_tensor_descriptor(base, shape=[rows, cols], strides=[...], block_shape=[...])` */
static int make_descriptor(char *out, size_t size, const char *tl, const tforge_ir_gemm_matrix *m,
                           const char *rows, const char *cols, const char *block_rows,
                           const char *block_cols)
{
    int n = snprintf(out, size,
                     "%s.make_tensor_descriptor(%s, shape=[%s, %s], strides=[%s, %s], "
                     "block_shape=[%s, %s])",
                     tl, m->base, rows, cols, m->stride_row, m->stride_col, block_rows,
                     block_cols);
    return n < 0 || (size_t)n >= size ? TFORGE_PLUGIN_ERROR : 0;
}

/* The parameter a matrix's tile starts from: its base, or what its base offsets. */
static const char *matrix_pointer(const tforge_ir_gemm_matrix *m)
{
    return m->batch.pointer ? m->batch.pointer : m->base;
}

/* The check of one matrix in the hook: its name, base, row stride and last stride. */
static int hook_row(tforge_sdk_xf_edits *e, uint32_t at, const char *indent,
                    const tforge_ir_gemm_matrix *m)
{
    char row[96], col[96];
    snprintf(row, sizeof row, strcmp(m->stride_row, "1") ? "bound[\"%s\"]" : "%s", m->stride_row);
    snprintf(col, sizeof col, strcmp(m->stride_col, "1") ? "bound[\"%s\"]" : "%s", m->stride_col);
    return tforge_sdk_xf_edit(e, at, at, "%s                (\"%s\", bound[\"%s\"], %s, %s),\n",
                              indent, matrix_pointer(m), matrix_pointer(m), row, col);
}

/* The check of a matrix offset along a batch axis: its name, base and batch stride, the
 * product of its factors (parameters looked up, integers as written). */
static int hook_batch_row(tforge_sdk_xf_edits *e, uint32_t at, const char *indent,
                          const tforge_ir_gemm_matrix *m)
{
    int rc = tforge_sdk_xf_edit(e, at, at, "%s                (\"%s\", bound[\"%s\"], ", indent,
                                m->batch.pointer, m->batch.pointer);
    for (size_t i = 0; i < m->batch.n_stride && !rc; i++) {
        const char *f = m->batch.stride[i], *times = i ? " * " : "";
        rc = isdigit((unsigned char)f[0]) ? tforge_sdk_xf_edit(e, at, at, "%s%s", times, f)
                                          : tforge_sdk_xf_edit(e, at, at, "%sbound[\"%s\"]",
                                                               times, f);
    }
    return rc ? rc : tforge_sdk_xf_edit(e, at, at, "),\n");
}

/* The decorator's definition, at the kernel's own indentation, before its first decorator. */
static int add_hook(descriptors_state *s)
{
    const tforge_ir_kernel *k = s->base.input->kernel;
    const tforge_ir_gemm *g = k->gemm;
    const char *src = s->base.input->source;
    tforge_sdk_xf_edits *e = &s->base.edits;
    char in[64];
    uint32_t at = tforge_sdk_xf_before_decorators(s->base.input, in, sizeof in);
    int rc = tforge_sdk_xf_edit(
        e, at, at,
        "%sdef %s(kernel):\n"
        "%s    \"\"\"tforge descriptors: the kernel makes TMA descriptors on the device. They live\n"
        "%s    in global scratch memory that Triton asks an allocator for at each launch, and TMA\n"
        "%s    needs 16-byte aligned bases and row strides and a unit last stride, which the\n"
        "%s    kernel cannot check: a launch that breaks them is refused before it runs.\"\"\"\n"
        "%s    import torch\n"
        "%s    import triton\n\n"
        "%s    def scratch(size, alignment, stream):\n"
        "%s        return torch.empty(size, device=\"cuda\", dtype=torch.int8)\n\n"
        "%s    def before_launch(*args, **kwargs):\n"
        "%s        bound = dict(zip(kernel.arg_names, args), **kwargs)\n"
        "%s        for name, x, row, last in (\n",
        in, s->hook, in, in, in, in, in, in, in, in, in, in, in);
    const tforge_ir_gemm_matrix *m[3] = {&g->a, &g->b, &g->c};
    for (int i = 0; i < 3 && !rc; i++)
        rc = hook_row(e, at, in, m[i]);
    if (!rc)
        rc = tforge_sdk_xf_edit(
            e, at, at,
            "%s        ):\n"
            "%s            if x.data_ptr() %% 16 or row * x.element_size() %% 16 or last != 1:\n"
            "%s                raise ValueError(f\"TMA needs {name} 16-byte aligned, its row stride \"\n"
            "%s                                 f\"({row} x {x.element_size()} bytes) too and its \"\n"
            "%s                                 f\"last stride 1 ({last})\")\n",
            in, in, in, in, in);
    /* a base moved along a batch axis stays aligned for every batch index when its batch
     * stride is a multiple of 16 bytes */
    int batched = 0;
    for (int i = 0; i < 3; i++)
        batched |= m[i]->batch.pointer != NULL;
    if (!rc && batched)
        rc = tforge_sdk_xf_edit(e, at, at, "%s        for name, x, batch in (\n", in);
    for (int i = 0; i < 3 && !rc && batched; i++)
        if (m[i]->batch.pointer)
            rc = hook_batch_row(e, at, in, m[i]);
    if (!rc && batched)
        rc = tforge_sdk_xf_edit(
            e, at, at,
            "%s        ):\n"
            "%s            if batch * x.element_size() %% 16:\n"
            "%s                raise ValueError(f\"TMA needs {name}'s batch stride 16-byte aligned \"\n"
            "%s                                 f\"({batch} x {x.element_size()} bytes)\")\n",
            in, in, in, in);
    if (!rc)
        rc = tforge_sdk_xf_edit(
            e, at, at,
            "%s        triton.set_allocator(scratch)\n\n"
            "%s    kernel.add_pre_run_hook(before_launch)\n"
            "%s    return kernel\n\n\n",
            in, in, in);
    /* directly above the jit decorator: the hook goes on the JITFunction itself, under any
     * autotune or heuristics wrapper, so that every launch through them runs it */
    uint32_t jit = tforge_sdk_xf_line_start(src, tforge_sdk_xf_jit_decorator(k)->span.start);
    return rc ? rc : tforge_sdk_xf_edit(e, jit, jit, "%s@%s\n", in, s->hook);
}

/* C's store in two halves, on the store's line: the BM x BN value reshaped to BM x 2 x BN/2
 * (element (i, h * BN/2 + j) at (i, h, j): row-major, nothing reordered), the halves moved
 * last and split, half h stored at column c0 + h * BN/2 by a descriptor of BM x BN/2 blocks.
 * Every element lands where the whole store put it, and TMA drops what is out of bounds per
 * element, as before. An inline descriptor (a store that took the pointer expression) is made
 * once on that line. */
static int store_halves(descriptors_state *s, const tforge_ir_gemm_matrix *m, const char *desc,
                        const char *row_at, const char *col_at, const char *half)
{
    const tforge_ir_gemm *g = s->base.input->kernel->gemm;
    const char *tl = s->base.input->kernel->language, *name = s->names[2];
    const char *tile = s->halves;
    char made[1100] = "";
    if (!m->ptrs)
        snprintf(made, sizeof made, "%s = %s; ", name, desc);
    return tforge_sdk_xf_edit(
        &s->base.edits, m->access.start, m->access.end,
        "%s%s0, %s1 = %s.split(%s.permute(%s.reshape(%s, (%s, 2, %s)), (0, 2, 1))); "
        "%s.store([%s, %s], %s0); %s.store([%s, %s + %s], %s1)",
        made, tile, tile, tl, tl, tl, m->value, g->block_m, half, name, row_at, col_at,
        tile, name, row_at, col_at, half, tile);
}

static int descriptors_apply(void *state, const tforge_level *levels,
                             const tforge_span_edit **edits, uint32_t *n_edits)
{
    descriptors_state *s = state;
    const tforge_ir_kernel *k = s->base.input->kernel;
    const tforge_ir_gemm *g = k->gemm;
    const char *tl = k->language;
    tforge_sdk_xf_edits *e = &s->base.edits;
    tforge_sdk_xf_reset(e);
    *edits = NULL;
    *n_edits = 0;
    if (!levels[0])
        return 0;
    int subtile = s->base.n_params > 1 && levels[1];
    char half[160], make[1024];
    snprintf(half, sizeof half, "%s // 2", g->block_n);
    /* A: M x K tiles BLOCK_M x BLOCK_K from (its first row, k's offset); B: K x N from (k's
     * offset, its first column); C: M x N from (first row, first column) */
    const struct {
        const tforge_ir_gemm_matrix *m;
        const char *rows, *cols, *block_rows, *block_cols, *row_at, *col_at;
    } mats[3] = {{&g->a, g->m, g->k, g->block_m, g->block_k, g->a.row_start, g->k_offset},
                 {&g->b, g->k, g->n, g->block_k, g->block_n, g->k_offset, g->b.col_start},
                 {&g->c, g->m, g->n, g->block_m, g->block_n, g->c.row_start, g->c.col_start}};
    int rc = add_hook(s);
    for (int i = 0; i < 3 && !rc; i++) {
        const tforge_ir_gemm_matrix *m = mats[i].m;
        rc = make_descriptor(make, sizeof make, tl, m, mats[i].rows, mats[i].cols,
                             mats[i].block_rows, i == 2 && subtile ? half : mats[i].block_cols);
        /* each replacement is one line, so that a rewrite re-indenting the body composes */
        if (!rc && m->ptrs)
            rc = tforge_sdk_xf_edit(e, m->ptrs_stmt.start, m->ptrs_stmt.end, "%s = %s",
                                    s->names[i], make);
        const char *desc = m->ptrs ? s->names[i] : make;
        if (!rc && i < 2)
            rc = tforge_sdk_xf_edit(e, m->access.start, m->access.end, "%s.load([%s, %s])", desc,
                                    mats[i].row_at, mats[i].col_at);
        if (!rc && i < 2 && m->advance.end) /* a tile made in the loop has none */
            rc = tforge_sdk_xf_edit(e, m->advance.start, m->advance.end, "pass");
        if (!rc && i == 2 && !subtile)
            rc = tforge_sdk_xf_edit(e, m->access.start, m->access.end, "%s.store([%s, %s], %s)",
                                    desc,
                                    mats[i].row_at, mats[i].col_at, m->value);
        if (!rc && i == 2 && subtile)
            rc = store_halves(s, m, desc, mats[i].row_at, mats[i].col_at, half);
    }
    return tforge_sdk_xf_applied(&s->base, rc, edits, n_edits);
}

TFORGE_SDK_XF_TRANSFORM("descriptors", "TMA tensor descriptors for a GEMM's loads and store",
                        descriptors_create, descriptors_apply);
