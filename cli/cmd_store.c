/* `tforge store`: recorded spaces in and out of a results store. */
#include "cli.h"
#include "recording.h"
#include "store.h"
#include "tforge/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char help[] =
    "usage: tforge store import FILE --store DB [--json]\n"
    "       tforge store export --store DB --run ID --out FILE [--format kt|t4]\n\n"
    "Moves recorded tuning spaces between files and a results store (SQLite):\n"
    "  import   reads a Kernel Tuner cache (.json or .json.gz) or a T4 results file and stores\n"
    "           it as a new run, one measurement per configuration; prints the run's id\n"
    "  export   reads an existing store (one that is not there is refused, never created)\n"
    "           and writes a stored run whose space is a recorded space (an import, a replay, or\n"
    "           a tune with --transforms none) as a Kernel Tuner cache (default; .gz\n"
    "           compresses) or a T4 results file; a configuration measured without its\n"
    "           individual runs kept (a tune) carries its noise as measured in the cache's\n"
    "           field `spread` (IQR / median), which replay tells the strategies\n\n"
    "exit status: 0 done, 1 failed, 2 bad usage or a bad file.\n";

enum { OPT_STORE = 1, OPT_RUN, OPT_OUT, OPT_FORMAT };

static int run(const cli_command *command, int argc, char **argv)
{
    static const struct option options[] = {{"store", required_argument, NULL, OPT_STORE},
                                            {"run", required_argument, NULL, OPT_RUN},
                                            {"out", required_argument, NULL, OPT_OUT},
                                            {"format", required_argument, NULL, OPT_FORMAT},
                                            CLI_COMMON_LONG_OPTIONS,
                                            {0, 0, 0, 0}};
    cli_common common = {0};
    const char *db = NULL, *out = NULL, *format = "kt";
    long long run_id = -1;
    const char *given[OPT_FORMAT + 1] = {0}; /* each option's first value */
    for (int opt, at = -1; (opt = getopt_long(argc, argv, "hvq", options, &at)) != -1; at = -1) {
        char *end;
        int rc = 0;
        if (at >= 0 && opt <= OPT_FORMAT &&
            (rc = cli_once(command, &given[opt], options[at].name, optarg)))
            return rc;
        switch (opt) {
        case OPT_STORE:
            db = optarg;
            rc = cli_path(command, "--store", optarg);
            break;
        case OPT_OUT:
            out = optarg;
            rc = cli_output_file(command, "--out", optarg);
            break;
        case OPT_FORMAT: format = optarg; break;
        case OPT_RUN:
            run_id = strtoll(optarg, &end, 10);
            if (!*optarg || *end || run_id < 1)
                return cli_usage_error(command, "--run expects a run id, not '%s'", optarg);
            break;
        default: rc = cli_common_option(command, &common, opt, optarg, argv);
        }
        if (rc)
            return rc < 0 ? TFORGE_EXIT_OK : rc;
    }
    const char *verb = optind < argc ? argv[optind] : NULL;
    int import = verb && strcmp(verb, "import") == 0, export = verb && strcmp(verb, "export") == 0;
    if (!import && !export)
        return cli_usage_error(command, "expected import or export");
    if (!db)
        return cli_usage_error(command, "--store DB is required");
    if (import && optind + 2 != argc)
        return cli_usage_error(command, "import takes one file");
    if (export && (optind + 1 != argc || run_id < 1 || !out))
        return cli_usage_error(command, "export takes --run ID and --out FILE");
    if (strcmp(format, "kt") != 0 && strcmp(format, "t4") != 0)
        return cli_usage_error(command, "--format expects kt or t4, not '%s'", format);

    tforge_store *store = NULL;
    tforge_recording *rec = NULL;
    int exit_code = TFORGE_EXIT_OK;
    if (import) {
        int64_t id;
        /* the file first: a bad one leaves no store behind */
        if (tforge_recording_read_space(&rec, argv[optind + 1]) ||
            tforge_store_open(&store, db) || tforge_store_import(&id, store, rec, NULL))
            goto failed;
        if (common.json)
            printf("{\"run\": %lld, \"configurations\": %zu}\n", (long long)id, rec->n_entries);
        else
            printf("imported %zu configurations of %s as run %lld\n", rec->n_entries,
                   argv[optind + 1], (long long)id);
    } else {
        /* export reads: a store that is not there is named, never created */
        if (tforge_store_open_existing(&store, db) || tforge_store_export(&rec, store, run_id) ||
            (strcmp(format, "t4") == 0 ? tforge_recording_write_t4(rec, out)
                                       : tforge_recording_write_kt(rec, out)))
            goto failed;
        if (!common.json)
            printf("exported run %lld (%zu configurations) to %s\n", run_id, rec->n_entries, out);
    }
    goto cleanup;
failed:
    exit_code = cli_fail(command);
cleanup:
    tforge_recording_free(rec);
    tforge_store_close(store);
    return exit_code;
}

const cli_command cli_cmd_store = {"store", "import and export recorded spaces (Kernel Tuner, T4)",
                                   help, run};
