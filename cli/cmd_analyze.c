/* `tforge analyze FILE.py`: what the static analysis finds in a Triton file, run nothing. */
#include "analysis.h"
#include "cli.h"
#include "worker.h"
#include "tforge/error.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char help[] =
    "usage: tforge analyze FILE.py [--kernel K] [--json]\n\n"
    "Reads a Triton source file without running it (Python's own parser) and reports, for every\n"
    "@triton.jit function: its parameters (pointer, scalar or constexpr, and how each constexpr\n"
    "is used), loops with their trip counts, loads and stores, dots, reductions, atomics, the\n"
    "autotune and heuristics decorators, the places that launch it (grid and meta-parameters,\n"
    "and where their values come from), and the tunables inferred from all that, with their\n"
    "domains and constraints. Every fact carries its file:line. Last, notes: Python's and/or/not\n"
    "of tiles, which Triton's CPU interpreter runs otherwise than a GPU.\n\n"
    "  --kernel K         only the jit function K\n"
    "  --json             the analysis as one JSON document (each node with its span)\n"
    "  -v, -q             more or less logging\n\n"
    "exit status: 0 analysed, 1 the analysis failed, 2 bad usage, a missing file, a syntax\n"
    "error or an unknown kernel.\n";

static int run(const cli_command *command, int argc, char **argv)
{
    enum { OPT_KERNEL = 1 };
    static const struct option options[] = {{"kernel", required_argument, NULL, OPT_KERNEL},
                                            CLI_COMMON_LONG_OPTIONS, {0, 0, 0, 0}};
    cli_common common = {0};
    const char *kernel = NULL;
    /* "hvq", not the common "+hvq": options may follow FILE.py, as the usage shows */
    for (int opt; (opt = getopt_long(argc, argv, "hvq", options, NULL)) != -1;) {
        if (opt == OPT_KERNEL) {
            kernel = optarg;
            continue;
        }
        int rc = cli_common_option(command, &common, opt, optarg, argv);
        if (rc)
            return rc < 0 ? TFORGE_EXIT_OK : rc;
    }
    if (optind >= argc)
        return cli_usage_error(command, "FILE.py is required");
    if (optind + 1 < argc)
        return cli_usage_error(command, "unexpected argument '%s'", argv[optind + 1]);
    const char *path = argv[optind];
    struct stat st;
    int found = stat(path, &st) == 0;
    if (!found || !S_ISREG(st.st_mode)) {
        fprintf(stderr, "tforge %s: %s: %s\n", command->name, path,
                found ? "not a regular file" : strerror(errno));
        return TFORGE_EXIT_USAGE;
    }
    char *json = cli_analysis(path, kernel);
    tforge_ir_file *ir = NULL;
    if (!json || tforge_ir_parse(&ir, json, path)) {
        free(json);
        return cli_fail(command);
    }
    if (common.json) {
        cJSON *doc = cJSON_Parse(json);
        char *pretty = doc ? cJSON_Print(doc) : NULL;
        puts(pretty ? pretty : json);
        free(pretty);
        cJSON_Delete(doc);
    }
    else {
        tforge_ir_print(stdout, ir, kernel);
        tforge_ir_print_notes(stdout, json, kernel);
    }
    tforge_ir_free(ir);
    free(json);
    return TFORGE_EXIT_OK;
}

const cli_command cli_cmd_analyze = {"analyze", "what a Triton file's kernels do and could tune",
                                     help, run};
