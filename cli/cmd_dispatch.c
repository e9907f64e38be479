/* `tforge dispatch`: one kernel for every shape, from the tuned shapes of a task. */
#include "cli.h"
#include "dispatch.h"
#include "file.h"
#include "tforge/error.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char help[] =
    "usage: tforge dispatch DIR|RESULT.json... --out FILE.py [--holdout K | --holdout-shapes "
    "I,J...]\n"
    "                       [--task NAME] [--depth D]\n\n"
    "Writes a Python file that picks, from a shape, the config (and the rewritten variant, where\n"
    "a winner is one) to launch: a decision tree over the task's shape symbols fitted on the\n"
    "tuned winners, each leaf holding the config best across its shapes, judged by every time\n"
    "the results hold (each tune's history, and the recording a replayed tune read). Also a\n"
    "config list and key for @triton.autotune. Shapes held out of the fit test it: each one's\n"
    "choice is timed against its own tuned winner (a table on stdout and in the file).\n\n"
    "  DIR                a results folder: a sweep's (sweep.json), `tune --shape all`'s\n"
    "                     (summary.json, shape-<i>/), or one tune's; or result.json files\n"
    "  --out FILE.py      the file to write (variants go beside it, in FILE_variants/)\n"
    "  --holdout K        hold out K shapes, spread over the middle in index order\n"
    "  --holdout-shapes L hold out the task's shapes of these indices (I,J,...)\n"
    "  --task NAME        the results of the task whose file path contains NAME (a sweep of\n"
    "                     several tasks); results of two tasks are refused otherwise\n"
    "  --depth D          the tree's greatest depth (default 4)\n"
    "  --json             the table as JSON on stdout\n\n"
    "exit status: 0 written, 1 failed, 2 bad usage or bad input (no results, results of two\n"
    "tasks, a shape without a symbol the others have: the file and the field named).\n";

enum { OPT_OUT = 1, OPT_HOLDOUT, OPT_HOLDOUT_SHAPES, OPT_TASK, OPT_DEPTH };

static int parse_count(const cli_command *c, const char *name, const char *text, size_t *out)
{
    char *end;
    unsigned long long v = strtoull(text, &end, 10);
    if (!*text || *end || text[0] == '-' || v > 1000000)
        return cli_usage_error(c, "%s expects a count, not '%s'", name, text);
    *out = (size_t)v;
    return 0;
}

static int parse_indices(const cli_command *c, const char *text, size_t *out, size_t *n,
                         size_t cap)
{
    for (const char *at = text;;) {
        char *end;
        unsigned long long v = strtoull(at, &end, 10);
        if (end == at || at[0] == '-' || (*end && *end != ',') || *n == cap)
            return cli_usage_error(c, "--holdout-shapes expects shape indices I,J,..., not '%s'",
                                   text);
        out[(*n)++] = (size_t)v;
        if (!*end)
            return 0;
        at = end + 1;
    }
}

/* The kernel parameter that carries each shape symbol, for @triton.autotune's key (which names
 * the kernel's arguments): the parameter at the position of launch.args that is the symbol
 * itself, a launch.kwargs entry that is, or a parameter of the symbol's name; NULL where the
 * kernel takes none (a size that reaches it only through the grid). The task file and the
 * kernel's analysis are read; where they cannot be, every entry stays NULL and `why` says so. */
static void autotune_key(const tforge_dispatch_set *set, char **key, char *why, size_t size)
{
    char *text = NULL, *analysis = NULL, source[4200];
    size_t length = 0;
    cJSON *task = NULL, *parsed = NULL;
    why[0] = '\0';
    if (tforge_file_read(&text, &length, set->task) || !(task = cJSON_Parse(text))) {
        snprintf(why, size, "the task %s could not be read", set->task);
        goto cleanup;
    }
    const cJSON *file = cJSON_GetObjectItemCaseSensitive(task, "source");
    const cJSON *launch = cJSON_GetObjectItemCaseSensitive(task, "launch");
    const char *slash = strrchr(set->task, '/');
    if (!cJSON_IsString(file)) {
        snprintf(why, size, "%s: source: no kernel file", set->task);
        goto cleanup;
    }
    snprintf(source, sizeof source, "%.*s%s", file->valuestring[0] == '/' || !slash ? 0
                                              : (int)(slash - set->task + 1),
             set->task, file->valuestring);
    if (!(analysis = cli_analysis(source, set->kernel)) || !(parsed = cJSON_Parse(analysis))) {
        snprintf(why, size, "the kernel file %s could not be analysed", source);
        tforge_error_clear();
        goto cleanup;
    }
    const cJSON *kernels = cJSON_GetObjectItemCaseSensitive(parsed, "kernels"), *params = NULL;
    for (const cJSON *k = kernels ? kernels->child : NULL; k; k = k->next) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(k, "name");
        if (cJSON_IsString(name) && strcmp(name->valuestring, set->kernel) == 0)
            params = cJSON_GetObjectItemCaseSensitive(k, "params");
    }
    /* a launch through the user's function passes its own arguments: only names then */
    int grid = !cJSON_GetObjectItemCaseSensitive(launch, "call") &&
               !cJSON_GetObjectItemCaseSensitive(launch, "wrapper");
    const cJSON *args = grid ? cJSON_GetObjectItemCaseSensitive(launch, "args") : NULL;
    const cJSON *kwargs = grid ? cJSON_GetObjectItemCaseSensitive(launch, "kwargs") : NULL;
    for (size_t k = 0; k < set->n_symbols; k++) {
        const char *symbol = set->symbols[k], *found = NULL;
        int at = 0;
        for (const cJSON *a = args ? args->child : NULL; a && !found; a = a->next, at++)
            if (cJSON_IsString(a) && strcmp(a->valuestring, symbol) == 0) {
                const cJSON *p = cJSON_GetArrayItem(params, at);
                const cJSON *name = cJSON_GetObjectItemCaseSensitive(p, "name");
                found = cJSON_IsString(name) ? name->valuestring : NULL;
            }
        for (const cJSON *a = kwargs ? kwargs->child : NULL; a && !found; a = a->next)
            if (cJSON_IsString(a) && strcmp(a->valuestring, symbol) == 0)
                found = a->string;
        for (const cJSON *p = params ? params->child : NULL; p && !found; p = p->next) {
            const cJSON *name = cJSON_GetObjectItemCaseSensitive(p, "name");
            if (cJSON_IsString(name) && strcmp(name->valuestring, symbol) == 0)
                found = name->valuestring;
        }
        key[k] = found ? strdup(found) : NULL;
    }
cleanup:
    cJSON_Delete(parsed);
    cJSON_Delete(task);
    free(analysis);
    free(text);
}

static int run(const cli_command *command, int argc, char **argv)
{
    static const struct option options[] = {{"out", required_argument, NULL, OPT_OUT},
                                            {"holdout", required_argument, NULL, OPT_HOLDOUT},
                                            {"holdout-shapes", required_argument, NULL,
                                             OPT_HOLDOUT_SHAPES},
                                            {"task", required_argument, NULL, OPT_TASK},
                                            {"depth", required_argument, NULL, OPT_DEPTH},
                                            CLI_COMMON_LONG_OPTIONS,
                                            {0, 0, 0, 0}};
    cli_common common = {0};
    const char *out = NULL, *task = NULL;
    size_t holdout = 0, depth = 4, indices[256], n_indices = 0;
    const char *given[OPT_DEPTH + 1] = {0};
    for (int opt, at = -1; (opt = getopt_long(argc, argv, "hvq", options, &at)) != -1; at = -1) {
        int rc = 0;
        if (at >= 0 && opt <= OPT_DEPTH &&
            (rc = cli_once(command, &given[opt], options[at].name, optarg)))
            return rc;
        switch (opt) {
        case OPT_OUT:
            out = optarg;
            rc = cli_output_file(command, "--out", optarg);
            break;
        case OPT_HOLDOUT: rc = parse_count(command, "--holdout", optarg, &holdout); break;
        case OPT_HOLDOUT_SHAPES:
            rc = parse_indices(command, optarg, indices, &n_indices, 256);
            break;
        case OPT_TASK: task = optarg; break;
        case OPT_DEPTH: rc = parse_count(command, "--depth", optarg, &depth); break;
        default: rc = cli_common_option(command, &common, opt, optarg, argv);
        }
        if (rc)
            return rc < 0 ? TFORGE_EXIT_OK : rc;
    }
    if (optind == argc)
        return cli_usage_error(command, "expected a results folder or result.json files");
    if (!out)
        return cli_usage_error(command, "--out FILE.py is required");
    if (holdout && n_indices)
        return cli_usage_error(command, "--holdout and --holdout-shapes: give one of them");

    /* the command line as written, for the file's header */
    char line[4096];
    size_t used = (size_t)snprintf(line, sizeof line, "tforge dispatch");
    for (int i = 1; i < argc && used < sizeof line; i++)
        used += (size_t)snprintf(line + used, sizeof line - used, " %s", argv[i]);

    tforge_dispatch_set *set = NULL;
    char *table = NULL;
    int exit_code = TFORGE_EXIT_OK;
    double worst;
    char **key = NULL, key_why[4400];
    if (tforge_dispatch_read(&set, (const char *const *)argv + optind, (size_t)(argc - optind),
                             task) ||
        tforge_dispatch_hold_out(set, indices, n_indices, holdout) ||
        tforge_dispatch_fit(set, depth))
        goto failed;
    if (!(key = calloc(set->n_symbols, sizeof *key))) {
        tforge_error_set(TFORGE_ENOMEM, "out of memory");
        goto failed;
    }
    autotune_key(set, key, key_why, sizeof key_why);
    if (tforge_dispatch_write(set, out, line, (const char *const *)key, key_why) ||
        !(table = tforge_dispatch_table(set, &worst)))
        goto failed;
    size_t held = 0, leaves = 0;
    for (size_t s = 0; s < set->n_shapes; s++)
        held += (size_t)set->shapes[s].held_out;
    for (size_t i = 0; i < set->n_nodes; i++)
        leaves += set->nodes[i].symbol < 0;
    if (common.json) {
        cJSON *doc = cJSON_CreateObject(), *rows = cJSON_AddArrayToObject(doc, "rows");
        cJSON_AddStringToObject(doc, "out", out);
        cJSON_AddNumberToObject(doc, "shapes", (double)set->n_shapes);
        cJSON_AddNumberToObject(doc, "held_out", (double)held);
        cJSON_AddNumberToObject(doc, "leaves", (double)leaves);
        for (size_t s = 0; s < set->n_shapes; s++) {
            const tforge_dispatch_shape *x = &set->shapes[s];
            size_t c = tforge_dispatch_choose(set, x->values);
            double t = tforge_dispatch_ms(set, s, c);
            cJSON *row = cJSON_CreateObject();
            cJSON_AddNumberToObject(row, "shape", (double)x->index);
            cJSON_AddBoolToObject(row, "held_out", x->held_out);
            cJSON_AddItemToObject(row, "choice", cJSON_Parse(set->configs[c]));
            if (isfinite(t))
                cJSON_AddNumberToObject(row, "choice_ms", t);
            else
                cJSON_AddNullToObject(row, "choice_ms");
            cJSON_AddNumberToObject(row, "winner_ms", x->winner_ms);
            cJSON_AddItemToArray(rows, row);
        }
        char *text = cJSON_Print(doc);
        cJSON_Delete(doc);
        if (!text) {
            tforge_error_set(TFORGE_ENOMEM, "out of memory");
            goto failed;
        }
        puts(text);
        free(text);
    } else {
        printf("%s: %zu shapes of %s (%zu held out), %zu leaves\n\n%s", out, set->n_shapes,
               set->kernel, held, leaves, table);
        for (size_t i = 0; i < set->n_notes; i++)
            printf("passed over: %s\n", set->notes[i]);
        if (held && isinf(worst))
            puts("\nworst held-out choice: not measured at its shape (re-time it)");
        else if (held)
            printf("\nworst held-out choice: %.3fx its shape's own winner\n", worst);
    }
    goto cleanup;
failed:
    exit_code = cli_fail(command);
cleanup:
    for (size_t k = 0; key && k < set->n_symbols; k++)
        free(key[k]);
    free(key);
    free(table);
    tforge_dispatch_free(set);
    return exit_code;
}

const cli_command cli_cmd_dispatch = {"dispatch",
                                      "one kernel for every shape: a decision tree over tuned "
                                      "shapes, as a Python file",
                                      help, run};
