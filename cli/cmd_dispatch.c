/* `tforge dispatch`: one kernel for every shape, from the tuned shapes of a task. */
#include "cli.h"
#include "dispatch.h"
#include "tforge/error.h"

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
    if (tforge_dispatch_read(&set, (const char *const *)argv + optind, (size_t)(argc - optind),
                             task) ||
        tforge_dispatch_hold_out(set, indices, n_indices, holdout) ||
        tforge_dispatch_fit(set, depth) || tforge_dispatch_write(set, out, line) ||
        !(table = tforge_dispatch_table(set, &worst)))
        goto failed;
    size_t held = 0, leaves = 0;
    for (size_t s = 0; s < set->n_shapes; s++)
        held += (size_t)set->shapes[s].held_out;
    for (size_t i = 0; i < set->n_nodes; i++)
        leaves += set->nodes[i].symbol < 0;
    if (common.json) {
        printf("{\"out\": \"%s\", \"shapes\": %zu, \"held_out\": %zu, \"leaves\": %zu, "
               "\"rows\": [", out, set->n_shapes, held, leaves);
        for (size_t s = 0, first = 1; s < set->n_shapes; s++) {
            const tforge_dispatch_shape *x = &set->shapes[s];
            size_t c = tforge_dispatch_choose(set, x->values);
            double t = tforge_dispatch_ms(set, s, c);
            printf("%s{\"shape\": %zu, \"held_out\": %s, \"choice\": %s, \"choice_ms\": ",
                   first ? "" : ", ", x->index, x->held_out ? "true" : "false", set->configs[c]);
            printf(isfinite(t) ? "%.17g" : "null", t);
            printf(", \"winner_ms\": %.17g}", x->winner_ms);
            first = 0;
        }
        puts("]}");
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
    free(table);
    tforge_dispatch_free(set);
    return exit_code;
}

const cli_command cli_cmd_dispatch = {"dispatch",
                                      "one kernel for every shape: a decision tree over tuned "
                                      "shapes, as a Python file",
                                      help, run};
