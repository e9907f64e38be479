/* `tforge transform FILE.py`: which source transforms apply to a kernel and what they add to
 * the space; with --set, the variant one point of them makes (or its diff). Runs no kernel. */
#include "analysis.h"
#include "cli.h"
#include "file.h"
#include "registry.h"
#include "rpc.h"
#include "transforms.h"
#include "tforge/error.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char help[] =
    "usage: tforge transform FILE.py [--kernel K] [--transforms ID,...] [--set NAME=VALUE]...\n"
    "                        [--option ID.KEY=VALUE]... [--diff] [--out FILE]\n\n"
    "Lists the transform plugins that apply to kernel K of the Triton file (what each found and\n"
    "the parameters it adds to the tuning space, level 0 first: \"unchanged\"), and those that do\n"
    "not apply. With --set (any number; parameters not set stay at level 0), --diff or --out it\n"
    "composes the transforms' edits at that point and prints the variant's source, or with --diff\n"
    "a unified diff against FILE.py. The file itself is never changed; nothing is run.\n\n"
    "  --kernel K          the jit function (needed when the file has several besides helpers)\n"
    "  --transforms IDS    only these transforms (default: every one `tforge plugins` lists)\n"
    "  --set NAME=VALUE    a parameter's value: a number, a word, True or False\n"
    "  --option ID.K=V     an option of transform ID\n"
    "  --diff              print a unified diff instead of the variant\n"
    "  --out FILE          write the variant to FILE\n"
    "  --plugin-dir DIR    also load plugins from DIR\n"
    "  -v, -q              more or less logging\n\n"
    "exit status: 0 done, 1 the edits were refused (they overlap) or a transform failed,\n"
    "2 bad usage, a missing file, an unknown kernel, transform or parameter.\n";

enum { MAX_ITEMS = 64 };

typedef struct request {
    const char *kernel, *out;
    const char *transforms_text; /* --transforms as given, or NULL */
    tforge_transform_ids transforms;
    const char *options[MAX_ITEMS + 1];
    const char *set[MAX_ITEMS];
    size_t n_options, n_set;
    int diff;
} request;

/* Whether another jit function of the file calls `name`: a helper (a tanh, a rounding), never
 * "the" kernel of a file. */
static int is_helper(const tforge_ir_file *ir, const char *name)
{
    for (size_t i = 0; i < ir->n_kernels; i++)
        for (size_t j = 0; j < ir->kernels[i].n_calls; j++)
            if (strcmp(ir->kernels[i].calls[j].op, name) == 0)
                return 1;
    return 0;
}

/* The jit function `name`, or without it the only one that is no helper. */
static const tforge_ir_kernel *find_kernel(const cli_command *command, const tforge_ir_file *ir,
                                           const char *name, const char *path)
{
    const tforge_ir_kernel *only = NULL;
    size_t n = 0;
    char found[512] = "", lists[2][512] = {"", ""}; /* the kernels, the helpers */
    for (size_t i = 0; i < ir->n_kernels; i++) {
        const char *k = ir->kernels[i].name;
        if (name && strcmp(k, name) == 0)
            return &ir->kernels[i];
        int helper = is_helper(ir, k);
        if (!helper) {
            only = &ir->kernels[i];
            n++;
        }
        char *list = lists[helper];
        snprintf(list + strlen(list), sizeof lists[0] - strlen(list), "%s%s", list[0] ? ", " : "",
                 k);
        snprintf(found + strlen(found), sizeof found - strlen(found), "%s%s", i ? ", " : "", k);
    }
    if (!name && n == 1)
        return only;
    if (name)
        cli_usage_error(command, "%s: no @triton.jit function '%s' (found: %s)", path, name,
                        found[0] ? found : "none");
    else if (!ir->n_kernels)
        cli_usage_error(command, "%s has no @triton.jit function", path);
    else
        cli_usage_error(command, "%s has %zu kernels (%s%s%s): name one with --kernel", path, n,
                        lists[0], lists[1][0] ? "; helpers: " : "", lists[1]);
    return NULL;
}

static void print_param(const tforge_transforms *t, size_t i, uint32_t j)
{
    static const char *const roles[] = {"rewrite", "launch option"};
    static const char *const effects[] = TFORGE_EFFECT_NAMES;
    const tforge_transform_param *p = tforge_transforms_param(t, i, j);
    printf("    %-28s", p->name);
    if (p->kind == TFORGE_DIM_BOOLEAN)
        printf(" False, True");
    for (uint32_t v = 0; v < p->n_values; v++)
        printf("%s %s", v ? "," : "", p->values[v]);
    printf("  (%s: %s)\n", roles[p->role == TFORGE_TRANSFORM_LAUNCH],
           effects[tforge_transforms_effect(t, i, j)]);
    for (uint32_t c = 0; c < p->n_constraints; c++)
        printf("      constraint %s\n", p->constraints[c]);
}

static void list(const tforge_transforms *t, const tforge_ir_kernel *k, const char *path)
{
    printf("kernel %s (%s:%d)\n", k->name, path, k->span.line);
    printf("transforms that apply: %zu\n", tforge_transforms_count(t));
    for (size_t i = 0; i < tforge_transforms_count(t); i++) {
        printf("  %s: %s\n", tforge_transforms_id(t, i), tforge_transforms_describe(t, i));
        for (uint32_t j = 0; j < tforge_transforms_n_params(t, i); j++)
            print_param(t, i, j);
    }
    if (tforge_transforms_n_skipped(t)) {
        printf("do not apply:");
        for (size_t i = 0; i < tforge_transforms_n_skipped(t); i++)
            printf("%s %s", i ? "," : "", tforge_transforms_skipped(t, i));
        putchar('\n');
    }
}

/* The variant (or its diff) to stdout or --out. */
static int write_variant(const cli_command *command, const request *r, const char *path,
                         const char *variant)
{
    char *text = NULL;
    if (r->diff) {
        text = tforge_rpc_fresh_text(path, tforge_rpc_unified_diff(path, variant), NULL, 60000);
        if (!text)
            return cli_fail(command);
    }
    FILE *out = r->out ? fopen(r->out, "w") : stdout;
    if (!out) {
        free(text);
        fprintf(stderr, "tforge %s: %s: cannot write\n", command->name, r->out);
        return TFORGE_EXIT_USAGE;
    }
    fputs(text ? text : variant, out);
    if (out != stdout)
        fclose(out);
    free(text);
    return TFORGE_EXIT_OK;
}

static int parse(const cli_command *command, cli_common *common, request *r, int argc,
                 char **argv)
{
    enum { OPT_KERNEL = 1, OPT_TRANSFORMS, OPT_SET, OPT_OPTION, OPT_DIFF, OPT_OUT };
    static const struct option options[] = {
        {"kernel", required_argument, NULL, OPT_KERNEL},
        {"transforms", required_argument, NULL, OPT_TRANSFORMS},
        {"set", required_argument, NULL, OPT_SET},
        {"option", required_argument, NULL, OPT_OPTION},
        {"diff", no_argument, NULL, OPT_DIFF},
        {"out", required_argument, NULL, OPT_OUT},
        CLI_COMMON_LONG_OPTIONS,
        {0, 0, 0, 0}};
    for (int opt; (opt = getopt_long(argc, argv, "hvq", options, NULL)) != -1;) {
        if (opt == OPT_KERNEL) {
            r->kernel = optarg;
        } else if (opt == OPT_TRANSFORMS) {
            tforge_transform_ids_free(&r->transforms);
            r->transforms_text = optarg;
            if (tforge_transform_ids_split(&r->transforms, optarg))
                return cli_fail(command);
        } else if (opt == OPT_SET || opt == OPT_OPTION) {
            size_t *n = opt == OPT_SET ? &r->n_set : &r->n_options;
            if (*n == MAX_ITEMS)
                return cli_usage_error(command, "at most %d --set and --option each", MAX_ITEMS);
            (opt == OPT_SET ? r->set : r->options)[(*n)++] = optarg;
        } else if (opt == OPT_DIFF) {
            r->diff = 1;
        } else if (opt == OPT_OUT) {
            r->out = optarg;
        } else {
            int rc = cli_common_option(command, common, opt, optarg, argv);
            if (rc)
                return rc;
        }
    }
    if (optind >= argc)
        return cli_usage_error(command, "FILE.py is required");
    if (optind + 1 < argc)
        return cli_usage_error(command, "unexpected argument '%s'", argv[optind + 1]);
    return 0;
}

static int run(const cli_command *command, int argc, char **argv)
{
    cli_common common = {0};
    request r = {0};
    int status = parse(command, &common, &r, argc, argv);
    if (status) {
        tforge_transform_ids_free(&r.transforms);
        return status < 0 ? TFORGE_EXIT_OK : status;
    }
    const char *path = argv[optind];
    size_t size = 0;
    char *source = NULL, *json = NULL, *variant = NULL;
    tforge_ir_file *ir = NULL;
    tforge_registry *registry = NULL;
    tforge_transforms *t = NULL;
    tforge_space *space = NULL;
    tforge_level *point = NULL;
    const tforge_ir_kernel *k = NULL;
    /* the transforms and their options named before the file is analysed */
    if (cli_load_plugins(&common, &registry) ||
        cli_check_plugins(registry, r.transforms_text, r.options, "--option", NULL)) {
        status = cli_fail(command);
        goto cleanup;
    }
    if (tforge_file_read(&source, &size, path)) {
        fprintf(stderr, "tforge: %s\n", tforge_error_last()->message);
        status = TFORGE_EXIT_USAGE;
        goto cleanup;
    }
    if (!(json = cli_analysis(path, NULL)) || tforge_ir_parse(&ir, json, path)) {
        status = cli_fail(command);
        goto cleanup;
    }
    if (!(k = find_kernel(command, ir, r.kernel, path))) {
        status = TFORGE_EXIT_USAGE;
        goto cleanup;
    }
    if (tforge_transforms_open(&t, registry, r.transforms.n ? r.transforms.ids : NULL, k, source,
                               size, NULL, 0, r.n_options ? r.options : NULL)) {
        status = cli_fail(command);
        goto cleanup;
    }
    if (!r.n_set && !r.diff && !r.out) {
        list(t, k, path);
        goto cleanup;
    }
    if (!tforge_transforms_count(t)) { /* nothing applies: the variant is the file itself */
        status = r.n_set ? cli_usage_error(command, "--set %s: no transform applies to %s",
                                           r.set[0], k->name)
                         : write_variant(command, &r, path, source);
        goto cleanup;
    }
    if (tforge_space_new(&space) || tforge_transforms_add_to_space(t, space) ||
        tforge_space_build(space, NULL) ||
        !(point = calloc(tforge_space_dims(space) + 1, sizeof *point))) {
        status = cli_fail(command);
        goto cleanup;
    }
    if ((status = cli_transform_point(point, command, space, r.set, r.n_set)))
        goto cleanup;
    if (tforge_transforms_variant(&variant, t, space, point, SIZE_MAX)) {
        status = cli_fail(command);
        goto cleanup;
    }
    status = write_variant(command, &r, path, variant ? variant : source);
cleanup:
    free(variant);
    free(point);
    tforge_space_free(space);
    tforge_transforms_free(t);
    tforge_registry_free(registry);
    tforge_ir_free(ir);
    free(json);
    free(source);
    tforge_transform_ids_free(&r.transforms);
    return status;
}

const cli_command cli_cmd_transform = {
    "transform", "which source transforms apply to a kernel; the variant of a point", help, run};
