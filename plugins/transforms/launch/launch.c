/* Launch options with no rewrite: maxnreg (a register cap per thread, ptxas's maxrregcount) and
 * num_ctas (thread-block clusters on Hopper, for kernels with a tl.dot: Triton splits only dot
 * and TMA layouts across a cluster, and its pipeline gives up on others). Each option is added
 * only when the space does not have it already. Level 0: not passed. */
#include <tforge/sdk/transform.h>

static const char *const maxnreg_values[] = {"0", "64", "96", "128", "168", "255"};
static const char *const num_ctas_values[] = {"0", "2"};
/* a block's register file: 64 K registers of which each of num_warps * 32 threads takes maxnreg */
static const char *const maxnreg_fits[] = {"maxnreg == 0 or maxnreg * num_warps * 32 <= 65536"};

typedef struct launch_state {
    tforge_transform_param params[2];
    uint32_t n;
    char description[128];
} launch_state;

static int launch_create(void **state, const tforge_transform_args *args)
{
    launch_state *s = calloc(1, sizeof *s);
    if (!s)
        return TFORGE_PLUGIN_ENOMEM;
    int warps = xf_in_space(args, "num_warps");
    if (!xf_in_space(args, "maxnreg"))
        s->params[s->n++] = (tforge_transform_param){
            "maxnreg", TFORGE_DIM_ORDINAL, TFORGE_TRANSFORM_LAUNCH, 6, maxnreg_values,
            warps ? 1u : 0u, warps ? maxnreg_fits : NULL};
    if (!xf_in_space(args, "num_ctas") && args->kernel->n_dots)
        s->params[s->n++] = (tforge_transform_param){
            "num_ctas", TFORGE_DIM_ORDINAL, TFORGE_TRANSFORM_LAUNCH, 2, num_ctas_values, 0, NULL};
    if (s->n == 0) {
        free(s);
        return TFORGE_TRANSFORM_NOT_APPLICABLE;
    }
    snprintf(s->description, sizeof s->description, "launch options %s%s%s",
             s->params[0].name, s->n > 1 ? ", " : "", s->n > 1 ? s->params[1].name : "");
    *state = s;
    return 0;
}

static const char *launch_describe(void *state)
{
    return ((launch_state *)state)->description;
}

static uint32_t launch_n_params(void *state)
{
    return ((launch_state *)state)->n;
}

static const tforge_transform_param *launch_param(void *state, uint32_t index)
{
    launch_state *s = state;
    return index < s->n ? &s->params[index] : NULL;
}

static int launch_apply(void *state, const tforge_level *levels, const tforge_span_edit **edits,
                        uint32_t *n_edits)
{
    (void)state, (void)levels;
    *edits = NULL;
    *n_edits = 0; /* the host passes the values to the launch */
    return 0;
}

static void launch_destroy(void *state)
{
    free(state);
}

static const tforge_transform_interface launch_interface = {
    sizeof launch_interface, launch_create, launch_describe, launch_n_params, launch_param,
    launch_apply,           launch_destroy};

XF_PLUGIN("launch", "launch options without a rewrite: maxnreg, num_ctas", launch_interface);
