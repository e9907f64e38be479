/* `tforge sweep`: a manifest's tasks x shapes tuned into one folder, alone or under mpirun. */
#include "cli.h"
#include "registry.h"
#include "sweep.h"
#include "tforge/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char help[] =
    "usage: tforge sweep SWEEP.json [--resume] [--out DIR] [--rank0-idle] [--json]\n"
    "       mpirun -n N tforge sweep SWEEP.json ...\n\n"
    "Tunes every (task, shape) the manifest lists, each as `tforge tune` would, into\n"
    "DIR/<name>/shape-<i>/ (result.json, best_config.py, best_variant.py, report.md, its\n"
    "store), and lists them in DIR/sweep.json with their status. Alone, one evaluator (this\n"
    "machine's GPU, or the backend the manifest names) serves the sessions one after another;\n"
    "under mpirun rank 0 runs the sessions (their strategies propose, their stores are written\n"
    "there) and every rank, rank 0 too unless --rank0-idle, evaluates candidates on its own GPU\n"
    "(CUDA_VISIBLE_DEVICES from its local rank) as they come. The manifest's schema is in\n"
    "engine/sweep/README.md.\n\n"
    "  --resume      continue the sweep in DIR: what is done stays done, every other (task,\n"
    "                shape) resumes its stored run (nothing committed is evaluated again)\n"
    "  --out DIR     the sweep's folder (default: the manifest's \"out\", else tforge-sweep)\n"
    "  --rank0-idle  rank 0 proposes and commits only\n\n"
    "exit status: 0 every (task, shape) tuned, 1 one failed, 2 bad usage or a bad manifest.\n";

enum { OPT_RESUME = 1, OPT_OUT, OPT_RANK0_IDLE };

static int run(const cli_command *command, int argc, char **argv)
{
    static const struct option options[] = {{"resume", no_argument, NULL, OPT_RESUME},
                                            {"out", required_argument, NULL, OPT_OUT},
                                            {"rank0-idle", no_argument, NULL, OPT_RANK0_IDLE},
                                            CLI_COMMON_LONG_OPTIONS,
                                            {0, 0, 0, 0}};
    cli_common common = {0};
    tforge_sweep_options o = TFORGE_SWEEP_OPTIONS_INIT;
    const char *given[OPT_RANK0_IDLE + 1] = {0};
    for (int opt, at = -1; (opt = getopt_long(argc, argv, "hvq", options, &at)) != -1; at = -1) {
        int rc = 0;
        if (at >= 0 && opt == OPT_OUT && (rc = cli_once(command, &given[opt], "out", optarg)))
            return rc;
        switch (opt) {
        case OPT_RESUME: o.resume = 1; break;
        case OPT_RANK0_IDLE: o.rank0_evaluates = 0; break;
        case OPT_OUT:
            o.out = optarg;
            rc = cli_path(command, "--out", optarg);
            break;
        default: rc = cli_common_option(command, &common, opt, optarg, argv);
        }
        if (rc)
            return rc < 0 ? TFORGE_EXIT_OK : rc;
    }
    if (optind + 1 != argc)
        return cli_usage_error(command, "expected one manifest, SWEEP.json");
    o.manifest = argv[optind];
    /* launched by mpirun: every rank joins; rank 0 runs the sweep, the others serve it */
    const tforge_sweep_transport *transport = NULL;
    if (getenv("OMPI_COMM_WORLD_SIZE") && !(transport = tforge_sweep_mpi(&argc, &argv)))
        return cli_fail(command);
    tforge_registry *reg = NULL;
    int exit_code = TFORGE_EXIT_OK;
    if (cli_load_plugins(&common, &reg)) {
        exit_code = cli_fail(command);
    } else if (transport && transport->rank > 0) {
        if (tforge_sweep_serve(transport, reg))
            exit_code = cli_fail(command);
    } else {
        o.registry = reg;
        o.transport = transport;
        o.progress = !common.json && common.verbosity >= 0;
        tforge_sweep_outcome out;
        int rc = tforge_sweep_run(&o, &out);
        if (out.dir && common.json)
            printf("{\"dir\": \"%s\", \"entries\": %zu, \"done\": %zu, \"failed\": %zu, "
                   "\"evaluations\": %zu, \"seconds\": %.3f, \"evaluating_seconds\": %.3f}\n",
                   out.dir, out.n, out.done, out.failed, out.evaluations, out.seconds,
                   out.evaluating_seconds);
        else if (out.dir)
            printf("sweep: %zu (task, shape): %zu done, %zu failed; %zu evaluated in %.1f s "
                   "(%.1f s evaluating); %s/sweep.json\n", out.n, out.done, out.failed,
                   out.evaluations, out.seconds, out.evaluating_seconds, out.dir);
        if (rc)
            exit_code = cli_fail(command);
        tforge_sweep_outcome_dispose(&out);
    }
    tforge_registry_free(reg);
    if (transport)
        tforge_sweep_mpi_end();
    return exit_code;
}

const cli_command cli_cmd_sweep = {"sweep", "tune a manifest's tasks x shapes, alone or under mpirun",
                                   help, run};
