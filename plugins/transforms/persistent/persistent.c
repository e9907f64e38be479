/* Persistent programs for the tutorial-03 GEMM: P programs (about one per SM) each compute tile
 * after tile, instead of one program per tile, which removes the partial last wave and lets a
 * program's next tile overlap its epilogue. The caller's grid is left as it is (the task's grid
 * or the file's own wrapper computes it from the original meta-parameters): it launches one
 * program per tile, so the kernel takes that count, tl.num_programs(0), as its number of tiles;
 * programs 0..P-1 loop over tiles pid, pid + P, ... below it and programs from P on return at
 * once. The body from `pid = tl.program_id(0)` to its end becomes the loop's body, `pid` being
 * the loop's tile: each tile the original computed is computed once, by the same statements
 * (the analysis proves the body reads no other program id and rebinds nothing bound before it;
 * the transform asks for no atomics, through which programs could wait on each other).
 * Parameters: persistent_programs (0 = unchanged, then the SM count and twice it; the transform
 * option `sms`, 132 by default for an H100/H200) and persistent_flatten (flatten=True on the
 * tile loop: Triton fuses it with the K loop). */
#include <tforge/sdk/transform.h>

static const char *const flatten_only_when_persistent[] = {
    "persistent_programs > 0 or not persistent_flatten"};

typedef struct persistent_state {
    tforge_sdk_xf_base base;
    char values[3][16];
    const char *value_list[3];
    char tile[32]; /* the loop's variable */
} persistent_state;

/* Whether `word` appears as an identifier in [start, end) of the source. */
static int uses_word(const char *source, uint32_t start, uint32_t end, const char *word)
{
    size_t n = strlen(word);
    for (uint32_t i = start; i + n <= end; i++) {
        if (strncmp(source + i, word, n) != 0)
            continue;
        char before = i > 0 ? source[i - 1] : ' ', after = source[i + n];
        int ident_before = before == '_' || (before >= 'a' && before <= 'z') ||
                           (before >= 'A' && before <= 'Z') || (before >= '0' && before <= '9');
        int ident_after = after == '_' || (after >= 'a' && after <= 'z') ||
                          (after >= 'A' && after <= 'Z') || (after >= '0' && after <= '9');
        if (!ident_before && !ident_after)
            return 1;
    }
    return 0;
}

static int persistent_create(void **state, const tforge_host *host,
                             const tforge_options_view *options,
                             const tforge_transform_input *input)
{
    const tforge_ir_kernel *k = input->kernel;
    const tforge_ir_gemm *g = k->gemm;
    if (!g || !g->pid || g->n_lines == 0 || k->n_atomics)
        return TFORGE_TRANSFORM_NOT_APPLICABLE;
    const char *option = tforge_sdk_xf_option(options, "sms");
    char *end = NULL;
    long sms = option ? strtol(option, &end, 10) : 132;
    if (option && (*end || sms < 1 || sms > 100000))
        return host->error(host, TFORGE_PLUGIN_EINPUT,
                                 "persistent: option sms must be a number of SMs, 1 to 100000");
    persistent_state *s = tforge_sdk_xf_new(sizeof *s, host, input);
    if (!s)
        return TFORGE_PLUGIN_ENOMEM;
    tforge_sdk_xf_base *b = &s->base;
    for (int i = 0; i < 3; i++) {
        snprintf(s->values[i], sizeof s->values[i], "%ld", i * sms);
        s->value_list[i] = s->values[i];
    }
    b->n_params = 2;
    b->params[0] = (tforge_transform_param){"persistent_programs", TFORGE_DIM_ORDINAL,
                                            TFORGE_TRANSFORM_REWRITE, 3, s->value_list, 0, NULL,
                                            TFORGE_EFFECT_PROGRAMS};
    b->params[1] = (tforge_transform_param){"persistent_flatten", TFORGE_DIM_BOOLEAN,
                                            TFORGE_TRANSFORM_REWRITE, 0, NULL, 1,
                                            flatten_only_when_persistent, TFORGE_EFFECT_FLATTEN};
    strcpy(s->tile, uses_word(input->source, k->span.start, k->span.end, "tile_id")
                        ? "_tforge_tile_id"
                        : "tile_id");
    snprintf(b->description, sizeof b->description,
             "a loop over tiles around lines %d-%d (the tile map from line %d)",
             g->lines[0].line, g->lines[g->n_lines - 1].line, g->pid_stmt.line);
    *state = s;
    return 0;
}

static int persistent_apply(void *state, const tforge_level *levels,
                            const tforge_span_edit **edits, uint32_t *n_edits)
{
    persistent_state *s = state;
    tforge_sdk_xf_base *b = &s->base;
    const tforge_ir_kernel *k = b->input->kernel;
    const tforge_ir_gemm *g = k->gemm;
    const char *tl = k->language, *src = b->input->source;
    tforge_sdk_xf_reset(&b->edits);
    *edits = NULL;
    *n_edits = 0;
    if (!levels[0])
        return 0;
    const char *programs = s->values[levels[0]];
    char in[64];
    tforge_sdk_xf_indent(in, sizeof in, src, g->pid_stmt.start);
    const char *step = in[0] == '\t' ? "\t" : "    ";
    /* the header goes before the program id's line, at its indentation; then every logical line
     * from there to the end of the body is indented one level: insertions at line starts only,
     * so that edits other transforms make inside those statements compose */
    int rc = tforge_sdk_xf_edit(
        &b->edits, g->lines[0].start, g->lines[0].start,
        "%sif %s.program_id(0) >= %s:\n"
        "%s%sreturn\n"
        "%sfor %s in %s.range(%s.program_id(0), %s.num_programs(0), %s%s):\n",
        in, tl, programs, in, step, in, s->tile, tl, tl, tl, programs,
        levels[1] ? ", flatten=True" : "");
    for (size_t i = 0; i < g->n_lines && !rc; i++)
        rc = tforge_sdk_xf_edit(&b->edits, g->lines[i].start, g->lines[i].start, "%s", step);
    if (!rc)
        rc = tforge_sdk_xf_edit(&b->edits, g->pid_call.start, g->pid_call.end, "%s", s->tile);
    return tforge_sdk_xf_applied(b, rc, edits, n_edits);
}

TFORGE_SDK_XF_TRANSFORM("persistent", "persistent programs looping over a GEMM's tiles",
                        persistent_create,
                        persistent_apply);
