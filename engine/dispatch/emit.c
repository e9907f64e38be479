/* The Python file `tforge dispatch` writes: the tree as nested ifs over the shape symbols, each
 * leaf's triton.Config (written by the report's one converter), the variants its configs launch
 * (copied beside it), and the autotune list with its key. */
#include "dispatch.h"

#include "file.h"
#include "tune_report.h"
#include "tforge/error.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A shape symbol becomes a parameter name of choose(): a Python identifier, nothing else. */
static int identifier(const char *name)
{
    static const char *const keywords[] = {
        "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class",
        "continue", "def", "del", "elif", "else", "except", "finally", "for", "from", "global",
        "if", "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return",
        "try", "while", "with", "yield"};
    if (!(isalpha((unsigned char)name[0]) || name[0] == '_'))
        return 0;
    for (const char *c = name; *c; c++)
        if (!(isalnum((unsigned char)*c) || *c == '_'))
            return 0;
    for (size_t k = 0; k < sizeof keywords / sizeof *keywords; k++)
        if (strcmp(name, keywords[k]) == 0)
            return 0;
    return 1;
}

/* The fitted shape whose winner is `config` and rewrites the source: its best_variant.py. */
static const tforge_dispatch_shape *variant_of(const tforge_dispatch_set *set, size_t config)
{
    for (size_t s = 0; s < set->n_shapes; s++)
        if (set->shapes[s].winner == config && set->shapes[s].variant)
            return &set->shapes[s];
    return NULL;
}

static void write_symbols(FILE *f, const tforge_dispatch_set *set)
{
    for (size_t k = 0; k < set->n_symbols; k++)
        fprintf(f, "%s%s", k ? ", " : "", set->symbols[k]);
}

/* The tree as nested ifs; each leaf returns its position in CONFIGS (`leaf_of[config]`). */
static void write_node(FILE *f, const tforge_dispatch_set *set, size_t at, int depth,
                       const size_t *leaf_of)
{
    const tforge_dispatch_node *n = &set->nodes[at];
    if (n->symbol < 0) {
        fprintf(f, "%*sreturn %zu\n", 4 * depth, "", leaf_of[n->config]);
        return;
    }
    fprintf(f, "%*sif %s <= %lld:\n", 4 * depth, "", set->symbols[n->symbol], n->threshold);
    write_node(f, set, n->left, depth + 1, leaf_of);
    fprintf(f, "%*selse:\n", 4 * depth, "");
    write_node(f, set, n->right, depth + 1, leaf_of);
}

static int copy_file(const char *from, const char *to)
{
    char *text = NULL;
    size_t size = 0;
    int rc = tforge_file_read(&text, &size, from);
    if (rc)
        return rc;
    FILE *f = fopen(to, "wb");
    rc = f && fwrite(text, 1, size, f) == size ? 0 : -1;
    if (f && fclose(f))
        rc = -1;
    free(text);
    return rc ? tforge_error_set(TFORGE_EIO, "cannot write %s: %s", to, strerror(errno)) : 0;
}

/* KEY for @triton.autotune: the kernel's parameters that carry the shape symbols, and a comment
 * on those it does not take (its autotuner cannot tell shapes apart by them). */
static void write_key(FILE *f, const tforge_dispatch_set *set, const char *const *key,
                      const char *key_why)
{
    fputs("# for @triton.autotune: the kernel's parameters that carry the shape symbols", f);
    size_t missing = 0;
    for (size_t k = 0; k < set->n_symbols; k++) {
        if (key[k] && strcmp(key[k], set->symbols[k]) != 0)
            fprintf(f, "; %s is %s", set->symbols[k], key[k]);
        missing += !key[k];
    }
    if (missing) {
        fputs("\n# (the kernel takes no parameter holding ", f);
        for (size_t k = 0, n = 0; k < set->n_symbols; k++)
            if (!key[k])
                fprintf(f, "%s%s", n++ ? ", " : "", set->symbols[k]);
        fputs(": Triton's autotuner cannot tell shapes apart by it", f);
        if (key_why && key_why[0]) {
            fputs("; ", f);
            tforge_report_python_text(f, key_why);
        }
        fputs(")", f);
    }
    fputs("\nKEY = [", f);
    for (size_t k = 0, n = 0; k < set->n_symbols; k++)
        if (key[k]) {
            fputs(n++ ? ", '" : "'", f);
            tforge_report_python_text(f, key[k]);
            fputc('\'', f);
        }
    fputs("]\n", f);
}

int tforge_dispatch_write(const tforge_dispatch_set *set, const char *path, const char *command,
                          const char *const *key, const char *key_why)
{
    for (size_t k = 0; k < set->n_symbols; k++)
        if (!identifier(set->symbols[k]))
            return tforge_error_set(TFORGE_EINPUT, "%s: shape.values: the shape symbol '%s' is "
                                    "not a Python identifier, so no parameter of choose()",
                                    set->shapes[0].result, set->symbols[k]);
    /* the leaves' configs, each once, in the order the tree meets them */
    size_t *leaf_of = malloc(set->n_configs * sizeof *leaf_of);
    size_t *leaves = malloc((set->n_nodes + 1) * sizeof *leaves), n_leaves = 0;
    char *table = NULL, variants_dir[4200] = "", stem[1024];
    FILE *f = NULL;
    int rc = 0;
    if (!leaf_of || !leaves) {
        rc = tforge_error_set(TFORGE_ENOMEM, "out of memory");
        goto cleanup;
    }
    for (size_t c = 0; c < set->n_configs; c++)
        leaf_of[c] = (size_t)-1;
    for (size_t i = 0; i < set->n_nodes; i++)
        if (set->nodes[i].symbol < 0 && leaf_of[set->nodes[i].config] == (size_t)-1) {
            leaf_of[set->nodes[i].config] = n_leaves;
            leaves[n_leaves++] = i;
        }
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    snprintf(stem, sizeof stem, "%.*s", (int)(strlen(base) > 3 && !strcmp(base + strlen(base) - 3,
                                                                           ".py")
                                                  ? strlen(base) - 3
                                                  : strlen(base)),
             base);
    snprintf(variants_dir, sizeof variants_dir, "%.*s%s_variants", (int)(base - path), path,
             stem);
    int any_variant = 0;
    for (size_t l = 0; l < n_leaves; l++) {
        const tforge_dispatch_shape *v = variant_of(set, set->nodes[leaves[l]].config);
        if (!v)
            continue;
        char to[4400];
        if (!any_variant && mkdir(variants_dir, 0777) && errno != EEXIST) {
            rc = tforge_error_set(TFORGE_EIO, "cannot make %s: %s", variants_dir, strerror(errno));
            goto cleanup;
        }
        any_variant = 1;
        snprintf(to, sizeof to, "%s/shape_%zu.py", variants_dir, v->index);
        if ((rc = copy_file(v->variant, to)))
            goto cleanup;
    }
    double worst;
    if (!(table = tforge_dispatch_table(set, &worst))) {
        rc = tforge_error_set(TFORGE_ENOMEM, "out of memory");
        goto cleanup;
    }
    if (!(f = fopen(path, "w"))) {
        rc = tforge_error_set(TFORGE_EIO, "cannot write %s: %s", path, strerror(errno));
        goto cleanup;
    }
    fputs("# One kernel for every shape: ", f);
    tforge_report_python_text(f, set->kernel);
    fputs(" of ", f);
    tforge_report_python_text(f, set->task);
    fputs(",\n# written by `", f);
    tforge_report_python_text(f, command);
    size_t fitted = 0, held = 0;
    for (size_t s = 0; s < set->n_shapes; s++)
        held += (size_t)set->shapes[s].held_out;
    fitted = set->n_shapes - held;
    fprintf(f, "`.\n#\n# choose(");
    write_symbols(f, set);
    fprintf(f, ") walks a decision tree over the shape symbols, fitted on %zu tuned shape(s);\n"
               "# each leaf holds the config best across its shapes (the least geometric mean of "
               "its time\n# over each shape's own winner, from every time the results and their "
               "recordings hold).\n# Each shape's choice against its own tuned winner (%zu held "
               "out of the fit: they test it):\n#\n", fitted, held);
    for (char *line = table, *end; line && *line; line = end ? end + 1 : NULL) {
        end = strchr(line, '\n');
        if (end)
            *end = '\0';
        fputs("# ", f);
        tforge_report_python_text(f, line);
        fputc('\n', f);
    }
    for (size_t i = 0; i < set->n_notes; i++) {
        fputs("# passed over: ", f);
        tforge_report_python_text(f, set->notes[i]);
        fputc('\n', f);
    }
    fputs("#\n# Use: config(", f);
    write_symbols(f, set);
    fputs(") is the dict of constexprs and launch options to pass;\n# triton_config(...) the "
          "same as a triton.Config; variant(...) the rewritten kernel file's\n# module the config "
          "goes with (None: your kernel file as it is). Or Triton's own mechanism:\n"
          "#     @triton.autotune(configs=AUTOTUNE_CONFIGS, key=KEY)\n"
          "import importlib.util\nimport os\nimport sys\n\nimport triton\n\n", f);
    write_key(f, set, key, key_why);
    fputs("\n# each leaf's config; the comment: the fitted shapes it serves, its worst time "
          "over their winners\nCONFIGS = [\n", f);
    for (size_t l = 0; l < n_leaves; l++) {
        size_t config = set->nodes[leaves[l]].config, served = 0;
        double worst = 0;
        for (size_t i = 0; i < set->n_nodes; i++) /* a config may hold several leaves */
            if (set->nodes[i].symbol < 0 && set->nodes[i].config == config) {
                served += set->nodes[i].n_shapes;
                worst = worst > set->nodes[i].worst ? worst : set->nodes[i].worst;
            }
        fputs("    ", f);
        tforge_report_triton_config(f, set->configs[config]);
        fprintf(f, ",  # %zu shape(s), worst %.3fx\n", served, worst);
    }
    fputs("]\n# the rewritten kernel file each config launches, beside this one (None: yours as "
          "it is)\nVARIANTS = [", f);
    for (size_t l = 0; l < n_leaves; l++) {
        const tforge_dispatch_shape *v = variant_of(set, set->nodes[leaves[l]].config);
        fputs(l ? ", " : "", f);
        if (!v) {
            fputs("None", f);
            continue;
        }
        fputc('\'', f);
        tforge_report_python_text(f, stem);
        fprintf(f, "_variants/shape_%zu.py'", v->index);
    }
    fputs("]\n# for @triton.autotune: the configs that launch your kernel file as it is\n"
          "AUTOTUNE_CONFIGS = [c for c, v in zip(CONFIGS, VARIANTS) if v is None]\n\n\ndef "
          "choose(", f);
    write_symbols(f, set);
    fputs("):\n    \"\"\"The position in CONFIGS of the config to launch at this shape.\"\"\"\n", f);
    write_node(f, set, 0, 1, leaf_of);
    fputs("\n\ndef config(", f);
    write_symbols(f, set);
    fputs("):\n    \"\"\"The config to launch at this shape: constexprs and launch options.\"\"\"\n"
          "    return CONFIGS[choose(", f);
    write_symbols(f, set);
    fputs(")].all_kwargs()\n\n\ndef triton_config(", f);
    write_symbols(f, set);
    fputs("):\n    return CONFIGS[choose(", f);
    write_symbols(f, set);
    fputs(")]\n\n\n_modules = {}\n\n\ndef variant(", f);
    write_symbols(f, set);
    fputs("):\n    \"\"\"The module of the rewritten kernel file the config goes with, imported "
          "once\n    (launch it as its best_variant.py says); None: your kernel file as it is."
          "\"\"\"\n    i = choose(", f);
    write_symbols(f, set);
    fputs(")\n    if VARIANTS[i] is None:\n        return None\n    if i not in _modules:\n"
          "        file = os.path.join(os.path.dirname(os.path.abspath(__file__)), VARIANTS[i])\n"
          "        name = __name__ + '_variant_' + str(i)\n"
          "        spec = importlib.util.spec_from_file_location(name, file)\n"
          "        module = importlib.util.module_from_spec(spec)\n"
          "        sys.modules[name] = module\n"
          "        spec.loader.exec_module(module)\n"
          "        _modules[i] = module\n"
          "    return _modules[i]\n", f);
    if (fclose(f)) {
        f = NULL;
        rc = tforge_error_set(TFORGE_EIO, "cannot write %s: %s", path, strerror(errno));
        goto cleanup;
    }
    f = NULL;
cleanup:
    if (f)
        fclose(f);
    free(table);
    free(leaf_of);
    free(leaves);
    return rc;
}
