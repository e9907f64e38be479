/* GROUP_M swizzling of a 2-D tile grid (Triton tutorial 03): programs are taken in groups of
 * group_m rows of tiles, column by column inside a group, so that programs running together
 * share rows of A and columns of B in L2. Applies to kernels with a tl.dot whose program-to-tile
 * map the analysis found plain (`m = pid // NPN; n = pid % NPN`, or `m = tl.program_id(0); n =
 * tl.program_id(1)`) and that do not group already. The two statements are rewritten into the
 * grouped map over the same tiles (the README proves it is a bijection onto the old map's set
 * for any grid); the locals it adds start with `_tf_gm_`. ORDINAL group_m: 0 leaves the kernel
 * as it is. */
#include <tforge/sdk/transform.h>

static const char *const group_values[] = {"0", "2", "4", "8", "16"};

/* Whether the text is one name (used bare where it is repeated; anything else in parentheses). */
static int is_name(const char *t)
{
    if (!*t)
        return 0;
    for (; *t; t++)
        if (!(*t == '_' || (*t >= 'a' && *t <= 'z') || (*t >= 'A' && *t <= 'Z') ||
              (*t >= '0' && *t <= '9')))
            return 0;
    return 1;
}

/* Whether the n bytes at s are `x*y`. */
static int is_product(const char *s, size_t n, const char *x, const char *y)
{
    size_t lx = strlen(x), ly = strlen(y);
    return n == lx + 1 + ly && memcmp(s, x, lx) == 0 && s[lx] == '*' &&
           memcmp(s + lx + 1, y, ly) == 0;
}

/* Whether `s` (n bytes, spaces left out) starts with `a*b+` or ends with `+a*b`, factors in
 * either order. */
static int has_product(const char *s, size_t n, const char *a, const char *b)
{
    size_t len = strlen(a) + 1 + strlen(b);
    if (len >= n)
        return 0;
    int head = s[len] == '+' && (is_product(s, len, a, b) || is_product(s, len, b, a));
    const char *t = s + n - len;
    int tail = t[-1] == '+' && (is_product(t, len, a, b) || is_product(t, len, b, a));
    return head || tail;
}

/* Whether an offset of the analysis (`offs = X * B + tl.arange(0, B)`, either order) has block
 * `block` and X the name `target`: the target counts tiles of that block. */
static int scales(const tforge_ir_kernel *k, const char *source, const char *target,
                  const char *block)
{
    for (size_t i = 0; i < k->n_offsets; i++) {
        const tforge_ir_offset *o = &k->offsets[i];
        char text[256];
        size_t n = 0;
        if (o->span.end - o->span.start >= sizeof text)
            continue;
        for (uint32_t at = o->span.start; at < o->span.end; at++)
            if (!strchr(" \t\r\n", source[at]))
                text[n++] = source[at];
        if (strcmp(o->multiple, block) == 0 && has_product(text, n, target, block))
            return 1;
    }
    return 0;
}

/* Whether the program ids the map reads serve nothing else, so that a program may take another
 * tile: linear, one tl.program_id(0) (the pid's); grid2d, axes 0 and 1 only in the two
 * statements. */
static int tile_ids_only(const tforge_ir_kernel *k)
{
    const tforge_ir_tile_map *t = k->tile_map;
    int linear = strcmp(t->form, "linear") == 0, pids = 0;
    for (size_t i = 0; i < k->n_program_ids; i++) {
        const tforge_ir_op *o = &k->program_ids[i];
        if (strcmp(o->op, "program_id") != 0 || !o->detail)
            continue;
        int axis0 = strcmp(o->detail, "0") == 0, axis1 = strcmp(o->detail, "1") == 0;
        tforge_ir_span at = o->span;
        int in_map = (at.start >= t->m_stmt.start && at.end <= t->m_stmt.end) ||
                     (at.start >= t->n_stmt.start && at.end <= t->n_stmt.end);
        pids += axis0;
        if (!linear && (axis0 || axis1) && !in_map)
            return 0;
    }
    return !linear || pids == 1;
}

static int groupm_create(void **state, const tforge_host *host,
                         const tforge_options_view *options, const tforge_transform_input *input)
{
    (void)options; /* it takes none */
    const tforge_ir_kernel *k = input->kernel;
    /* grouping pays where neighbouring tiles share operands: the two targets must be the tile
     * row and column of a tl.dot's result (attention's (block, head) grid is not) */
    int tiles = 0;
    for (size_t i = 0; k->tile_map && i < k->n_dots && !tiles; i++)
        tiles = k->dots[i].m && k->dots[i].n &&
                scales(k, input->source, k->tile_map->m_target, k->dots[i].m) &&
                scales(k, input->source, k->tile_map->n_target, k->dots[i].n);
    if (!tiles || k->n_atomics || !tile_ids_only(k))
        return TFORGE_TRANSFORM_NOT_APPLICABLE;
    tforge_sdk_xf_base *s = tforge_sdk_xf_new(sizeof *s, host, input);
    if (!s)
        return TFORGE_PLUGIN_ENOMEM;
    s->params[s->n_params++] = (tforge_transform_param){
        "group_m", TFORGE_DIM_ORDINAL, TFORGE_TRANSFORM_REWRITE, 5, group_values, 0, NULL,
        TFORGE_EFFECT_SWIZZLE};
    const tforge_ir_tile_map *t = k->tile_map;
    snprintf(s->description, sizeof s->description, "%s tile map %s, %s at lines %d, %d",
             t->form, t->m_target, t->n_target, t->m_stmt.line, t->n_stmt.line);
    *state = s;
    return 0;
}

/* linear: the grid's programs in complete rows of NPN tiles are grouped; a last incomplete row
 * (a grid that is not a multiple of NPN) keeps its old tiles, so the set of tiles never changes.
 * The row count of a group is kept at 1 or more so that those programs never divide by 0. */
static int linear(tforge_sdk_xf_base *s, const tforge_ir_tile_map *t, const char *g, const char *in)
{
    const char *tl = s->input->kernel->language;
    char pid[256], npn[256];
    snprintf(pid, sizeof pid, is_name(t->pid) ? "%s" : "(%s)", t->pid);
    snprintf(npn, sizeof npn, is_name(t->num_pid_n) ? "%s" : "(%s)", t->num_pid_n);
    int rc = tforge_sdk_xf_edit(
        &s->edits, t->m_stmt.start, t->m_stmt.end,
        "_tf_gm_rows = %s.num_programs(0) // %s\n"
        "%s_tf_gm_in_group = %s * %s\n"
        "%s_tf_gm_first = %s // _tf_gm_in_group * %s\n"
        "%s_tf_gm_group_rows = max(min(_tf_gm_rows - _tf_gm_first, %s), 1)\n"
        "%s_tf_gm_grouped = %s < _tf_gm_rows * %s\n"
        "%s%s = %s.where(_tf_gm_grouped, _tf_gm_first + %s %% _tf_gm_in_group %% "
        "_tf_gm_group_rows, %s // %s)",
        tl, npn, in, g, npn, in, pid, g, in, g, in, pid, npn, in, t->m_target, tl,
        pid, pid, npn);
    if (!rc)
        rc = tforge_sdk_xf_edit(
            &s->edits, t->n_stmt.start, t->n_stmt.end,
            "%s = %s.where(_tf_gm_grouped, %s %% _tf_gm_in_group // _tf_gm_group_rows, "
            "%s %% %s)",
            t->n_target, tl, pid, pid, npn);
    return rc;
}

/* grid2d: the launch order (axis 0 fastest) as one index over the P0 x P1 programs, then
 * tutorial 03's map with P0 rows and P1 columns of tiles. */
static int grid2d(tforge_sdk_xf_base *s, const tforge_ir_tile_map *t, const char *g, const char *in)
{
    const char *tl = s->input->kernel->language;
    int rc = tforge_sdk_xf_edit(
        &s->edits, t->m_stmt.start, t->m_stmt.end,
        "_tf_gm_pid = %s.program_id(0) + %s.program_id(1) * %s.num_programs(0)\n"
        "%s_tf_gm_in_group = %s * %s.num_programs(1)\n"
        "%s_tf_gm_first = _tf_gm_pid // _tf_gm_in_group * %s\n"
        "%s_tf_gm_group_rows = min(%s.num_programs(0) - _tf_gm_first, %s)\n"
        "%s%s = _tf_gm_first + _tf_gm_pid %% _tf_gm_in_group %% _tf_gm_group_rows",
        tl, tl, tl, in, g, tl, in, g, in, tl, g, in, t->m_target);
    if (!rc)
        rc = tforge_sdk_xf_edit(
            &s->edits, t->n_stmt.start, t->n_stmt.end,
            "%s = _tf_gm_pid %% _tf_gm_in_group // _tf_gm_group_rows", t->n_target);
    return rc;
}

static int groupm_apply(void *state, const tforge_level *levels, const tforge_span_edit **edits,
                        uint32_t *n_edits)
{
    tforge_sdk_xf_base *s = state;
    const tforge_ir_tile_map *t = s->input->kernel->tile_map;
    tforge_sdk_xf_reset(&s->edits);
    int rc = 0;
    if (levels[0]) {
        char in[64];
        tforge_sdk_xf_indent(in, sizeof in, s->input->source, t->m_stmt.start);
        const char *g = group_values[levels[0]];
        rc = strcmp(t->form, "linear") == 0 ? linear(s, t, g, in) : grid2d(s, t, g, in);
    }
    return tforge_sdk_xf_applied(s, rc, edits, n_edits);
}

TFORGE_SDK_XF_TRANSFORM("groupm",
                        "GROUP_M swizzling of a 2-D tile grid (L2 reuse between programs)",
                        groupm_create, groupm_apply);
