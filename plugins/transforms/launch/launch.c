/* Launch options with no rewrite: maxnreg (a register cap per thread, ptxas's maxrregcount) and
 * num_ctas (thread-block clusters on Hopper, for kernels with a tl.dot: Triton splits only dot
 * and TMA layouts across a cluster, and its pipeline gives up on others). Each option is added
 * only when the space does not have it already. Level 0: not passed. */
#include <tforge/sdk/transform.h>

static const char *const maxnreg_values[] = {"0", "64", "96", "128", "168", "255"};
static const char *const num_ctas_values[] = {"0", "2"};
/* a block's register file: 64 K registers of which each of num_warps * 32 threads takes maxnreg */
static const char *const maxnreg_fits[] = {"maxnreg == 0 or maxnreg * num_warps * 32 <= 65536"};

static int launch_create(void **state, const tforge_host *host,
                         const tforge_options_view *options, const tforge_transform_input *input)
{
    (void)options; /* it takes none */
    tforge_sdk_xf_base *s = tforge_sdk_xf_new(sizeof *s, host, input);
    if (!s)
        return TFORGE_PLUGIN_ENOMEM;
    int warps = tforge_sdk_xf_in_space(input, "num_warps");
    if (!tforge_sdk_xf_in_space(input, "maxnreg"))
        s->params[s->n_params++] = (tforge_transform_param){
            "maxnreg", TFORGE_DIM_ORDINAL, TFORGE_TRANSFORM_LAUNCH, 6, maxnreg_values,
            warps ? 1u : 0u, warps ? maxnreg_fits : NULL, TFORGE_EFFECT_REGISTER_CAP};
    if (!tforge_sdk_xf_in_space(input, "num_ctas") && input->kernel->n_dots)
        s->params[s->n_params++] = (tforge_transform_param){
            "num_ctas", TFORGE_DIM_ORDINAL, TFORGE_TRANSFORM_LAUNCH, 2, num_ctas_values, 0, NULL,
            TFORGE_EFFECT_CLUSTER};
    if (s->n_params == 0) {
        free(s);
        return TFORGE_TRANSFORM_NOT_APPLICABLE;
    }
    snprintf(s->description, sizeof s->description, "launch options %s%s%s", s->params[0].name,
             s->n_params > 1 ? ", " : "", s->n_params > 1 ? s->params[1].name : "");
    *state = s;
    return 0;
}

static int launch_apply(void *state, const tforge_level *levels, const tforge_span_edit **edits,
                        uint32_t *n_edits)
{
    (void)state, (void)levels;
    *edits = NULL;
    *n_edits = 0; /* the host passes the values to the launch */
    return 0;
}

TFORGE_SDK_XF_TRANSFORM("launch", "launch options without a rewrite: maxnreg, num_ctas",
                        launch_create,
                        launch_apply);
