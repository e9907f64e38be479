#include "cli.h"

#include "registry.h"
#include "rpc.h"
#include "transforms.h"
#include "worker.h"
#include "tforge/error.h"
#include "tforge/log.h"
#include "tforge/plugin/heuristic.h"
#include "tforge/plugin/profiler.h"
#include "tforge/plugin/transform.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef TFORGE_VERSION
#define TFORGE_VERSION "0.0.0"
#endif

/* The proposer benchmark is its own executable beside this one (it links the bo strategy
 * statically, which the engine never does): run it in this process's place. */
static int run_bench_proposer(const cli_command *command, int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(command->help, stdout);
            return TFORGE_EXIT_OK;
        }
    if (argc > 1) {
        fprintf(stderr, "tforge %s: takes no arguments\nsee 'tforge %s --help'\n", command->name,
                command->name);
        return TFORGE_EXIT_USAGE;
    }
    char path[4096];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 32);
    char *slash = n > 0 ? (path[n] = '\0', strrchr(path, '/')) : NULL;
    if (!slash) {
        fprintf(stderr, "tforge %s: cannot find this executable's folder\n", command->name);
        return TFORGE_EXIT_FAILED;
    }
    strcpy(slash + 1, "tforge-bench-proposer");
    execl(path, path, (char *)NULL);
    fprintf(stderr, "tforge %s: cannot run %s: %s\n", command->name, path, strerror(errno));
    return TFORGE_EXIT_FAILED;
}

static const cli_command cmd_bench_proposer = {
    "bench-proposer", "time the Bayesian-optimisation proposer (prints a table)",
    "usage: tforge bench-proposer\n\nTimes one proposal and one refit of the bo strategy, and its "
    "peak memory, at N in\n{1e4, 1e5, 1e6} candidates, n in {50, 200, 500} observations and d in "
    "{4, 8, 12}\ndimensions, each case in its own process; prints a Markdown table (about 10 "
    "s).\n",
    run_bench_proposer};

static const cli_command *const commands[] = {
    &cli_cmd_analyze, &cli_cmd_capture, &cli_cmd_init,      &cli_cmd_check,
    &cli_cmd_transform, &cli_cmd_tune,  &cli_cmd_replay,    &cli_cmd_store,
    &cli_cmd_plugins, &cmd_bench_proposer, &cli_cmd_profile,
    &cli_cmd_dispatch, &cli_cmd_sweep, &cli_cmd_llm};
enum { N_COMMANDS = sizeof commands / sizeof *commands };

static void print_main_help(FILE *out)
{
    fprintf(out, "usage: tforge [--version] [--help] <command> [options]\n\n"
                 "TritonForge makes existing Triton kernels faster.\n\ncommands:\n");
    for (size_t i = 0; i < N_COMMANDS; i++)
        fprintf(out, "  %-16s %s\n", commands[i]->name, commands[i]->summary);
    fprintf(out, "\nEvery command takes --help, -v/--verbose, -q/--quiet, --plugin-dir DIR, and\n"
                 "--json where it prints results.\n\n"
                 "exit status: 0 ok, 1 the work failed, 2 bad usage or bad input.\n");
}

int cli_common_option(const cli_command *command, cli_common *common, int opt, const char *arg,
                      char **argv)
{
    switch (opt) {
    case CLI_OPT_JSON:
        common->json = 1;
        return 0;
    case CLI_OPT_PLUGIN_DIR:
        if (common->n_plugin_dirs == sizeof common->plugin_dirs / sizeof *common->plugin_dirs)
            return cli_usage_error(command, "too many --plugin-dir options (at most 16)");
        common->plugin_dirs[common->n_plugin_dirs++] = arg;
        return 0;
    case 'h':
    case CLI_OPT_HELP:
        fputs(command->help, stdout);
        return -1;
    case 'v':
        common->verbosity++;
        break;
    case 'q':
        common->verbosity--;
        break;
    default:
        return cli_bad_option(command, argv);
    }
    int level = TFORGE_LOG_WARN + common->verbosity;
    tforge_log_set_level(level < 0 ? TFORGE_LOG_ERROR : (tforge_log_level)level);
    return 0;
}

int cli_usage_error(const cli_command *command, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    fprintf(stderr, "tforge %s: ", command->name);
    vfprintf(stderr, format, args);
    fprintf(stderr, "\nsee 'tforge %s --help'\n", command->name);
    va_end(args);
    return TFORGE_EXIT_USAGE;
}

int cli_bad_option(const cli_command *command, char **argv)
{
    const char *what = optind > 0 ? argv[optind - 1] : "?";
    return cli_usage_error(command, "unknown option or missing value: %s", what);
}

int cli_fail(const cli_command *command)
{
    const tforge_error *e = tforge_error_last();
    fprintf(stderr, "tforge %s: %s\n", command->name, e->message[0] ? e->message : "failed");
    switch (e->code) {
    case TFORGE_EINPUT:
    case TFORGE_ENOTFOUND:
    case TFORGE_EABI:
        return TFORGE_EXIT_USAGE;
    default:
        return TFORGE_EXIT_FAILED;
    }
}

int cli_once(const cli_command *command, const char **seen, const char *name, const char *value)
{
    if (*seen && strcmp(*seen, value) != 0)
        return cli_usage_error(command, "--%s given twice, as '%s' and as '%s': give it once",
                               name, *seen, value);
    *seen = value;
    return 0;
}

int cli_path(const cli_command *command, const char *name, const char *value)
{
    return value[0] ? 0 : cli_usage_error(command, "%s expects a path, not ''", name);
}

int cli_output_file(const cli_command *command, const char *name, const char *value)
{
    if (!value[0])
        return cli_path(command, name, value);
    struct stat st;
    if (stat(value, &st) == 0 && S_ISDIR(st.st_mode))
        return cli_usage_error(command, "%s %s: a folder, not a file", name, value);
    char folder[4096];
    snprintf(folder, sizeof folder, "%s", value);
    char *slash = strrchr(folder, '/');
    if (!slash)
        return 0; /* in the current folder */
    slash[slash == folder] = '\0'; /* "/x" is in "/" */
    if (stat(folder, &st) != 0 || !S_ISDIR(st.st_mode))
        return cli_usage_error(command, "%s %s: there is no folder %s to write it in", name,
                               value, folder);
    return 0;
}

static int has_id(const tforge_transform_ids *ids, const char *id)
{
    for (size_t i = 0; i < ids->n; i++)
        if (strcmp(ids->ids[i], id) == 0)
            return 1;
    return 0;
}

/* --transforms (`list`, split into `ids`): all, none, or loaded transform ids separated by
 * commas. */
static int check_transform_ids(const tforge_registry *reg, const char *list,
                               const tforge_transform_ids *ids)
{
    if (strcmp(list, "all") == 0 || strcmp(list, "none") == 0)
        return 0;
    size_t len = strlen(list);
    if (!len || list[0] == ',' || list[len - 1] == ',' || strstr(list, ",,"))
        return tforge_error_set(TFORGE_EINPUT, "--transforms '%s': expected all, none or "
                                "transform ids separated by commas", list);
    for (size_t i = 0; i < ids->n; i++)
        if (!tforge_registry_find(reg, TFORGE_TRANSFORM_INTERFACE_ID, ids->ids[i]))
            return tforge_error_set(TFORGE_ENOTFOUND, "--transforms %s: no transform plugin "
                                    "'%s' (all, none, or ids that `tforge plugins` lists)", list,
                                    ids->ids[i]);
    return 0;
}

/* One transform option ID.KEY=VALUE (given as `flag`) against what ID publishes and against
 * --transforms (`transforms`, split into `ids`). */
static int check_transform_option(const tforge_registry *reg, const char *transforms,
                                  const tforge_transform_ids *ids, const char *flag,
                                  const char *text)
{
    const char *dot = strchr(text, '.'), *eq = strchr(text, '=');
    if (!dot || !eq || dot > eq || dot == text || eq == dot + 1)
        return tforge_error_set(TFORGE_EINPUT, "%s %s: expected ID.KEY=VALUE", flag, text);
    char id[128], key[128];
    snprintf(id, sizeof id, "%.*s", (int)(dot - text), text);
    snprintf(key, sizeof key, "%.*s", (int)(eq - dot - 1), dot + 1);
    const tforge_plugin_record *r = tforge_registry_find(reg, TFORGE_TRANSFORM_INTERFACE_ID, id);
    if (!r)
        return tforge_error_set(TFORGE_ENOTFOUND, "%s %s: no transform plugin '%s' (see "
                                "`tforge plugins`)", flag, text, id);
    if (transforms && strcmp(transforms, "all") != 0 && !has_id(ids, id))
        return tforge_error_set(TFORGE_EINPUT, "%s %s: transform %s is not among --transforms "
                                "%s", flag, text, id, transforms);
    const char *keys[1] = {key}, *values[1] = {eq + 1};
    if (tforge_plugin_check_options(r, keys, values, 1))
        return tforge_error_prefix("%s %s", flag, text);
    return 0;
}

int cli_check_plugins(const tforge_registry *reg, const char *transforms,
                      const char *const *transform_options, const char *options_flag,
                      const char *heuristic)
{
    tforge_transform_ids ids;
    int rc = tforge_transform_ids_split(&ids, transforms);
    if (!rc && transforms)
        rc = check_transform_ids(reg, transforms, &ids);
    for (size_t i = 0; !rc && transform_options && transform_options[i]; i++)
        rc = check_transform_option(reg, transforms, &ids, options_flag, transform_options[i]);
    tforge_transform_ids_free(&ids);
    if (!rc && heuristic && !tforge_registry_find(reg, TFORGE_HEURISTIC_INTERFACE_ID, heuristic))
        rc = tforge_error_set(TFORGE_ENOTFOUND, "--heuristic %s: no heuristic plugin '%s' (see "
                              "`tforge plugins`)", heuristic, heuristic);
    return rc;
}

int cli_check_profiler_options(const tforge_registry *reg, const char *const *options)
{
    for (size_t i = 0; options && options[i]; i++) {
        const char *eq = strchr(options[i], '=');
        char key[128];
        snprintf(key, sizeof key, "%.*s", eq ? (int)(eq - options[i]) : 0, options[i]);
        const char *keys[1] = {key}, *values[1] = {eq ? eq + 1 : ""};
        int taken = 0, tried = 0;
        for (size_t j = 0; !taken && j < tforge_registry_count(reg); j++) {
            const tforge_plugin_record *r = tforge_registry_at(reg, j);
            if (!tforge_plugin_is_kind(r, TFORGE_PROFILER_INTERFACE_ID))
                continue;
            tried++;
            taken = tforge_plugin_check_options(r, keys, values, 1) == 0;
        }
        if (!taken) /* with one profiler, its own refusal says what it takes */
            return tried ? tforge_error_prefix("--profiler-option %s", options[i])
                         : tforge_error_set(TFORGE_ENOTFOUND, "--profiler-option %s: no profiler "
                                            "plugin is loaded to take it (see `tforge plugins`)",
                                            options[i]);
    }
    tforge_error_clear();
    return 0;
}

/* The --plugin-dir folders first in TFORGE_PLUGIN_PATH, absolute, so that the worker processes
 * (the GPU worker's profiler) find the plugins this process found. */
static void export_plugin_dirs(const cli_common *common)
{
    char path[8192] = "";
    size_t used = 0;
    for (size_t i = 0; i < common->n_plugin_dirs && used < sizeof path; i++) {
        char *absolute = realpath(common->plugin_dirs[i], NULL);
        if (absolute)
            used += (size_t)snprintf(path + used, sizeof path - used, "%s:", absolute);
        free(absolute);
    }
    const char *inherited = getenv("TFORGE_PLUGIN_PATH");
    if (used && used < sizeof path) {
        snprintf(path + used, sizeof path - used, "%s", inherited ? inherited : "");
        setenv("TFORGE_PLUGIN_PATH", path, 1);
    }
}

int cli_load_plugins(const cli_common *common, tforge_registry **out)
{
    tforge_registry *registry;
    int rc = tforge_registry_new(&registry);
    if (rc)
        return rc;
    for (size_t i = 0; i < common->n_plugin_dirs; i++)
        if (access(common->plugin_dirs[i], R_OK | X_OK) != 0)
            tforge_log(TFORGE_LOG_WARN, "--plugin-dir %s: %s (nothing loaded from it)",
                       common->plugin_dirs[i], strerror(errno));
    rc = tforge_registry_load_search_path(registry, common->plugin_dirs, common->n_plugin_dirs);
    if (rc) {
        tforge_registry_free(registry);
        return rc;
    }
    export_plugin_dirs(common);
    *out = registry;
    return 0;
}

int tforge_cli_main(int argc, char **argv)
{
    if (argc < 2) {
        print_main_help(stderr);
        return TFORGE_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "__worker") == 0) /* the engine starting one of its worker processes */
        return tforge_worker_child_main();
    if (strcmp(name, "--version") == 0) {
        printf("tforge %s (plugin ABI %u.%u)\n", TFORGE_VERSION, TFORGE_PLUGIN_ABI_MAJOR,
               TFORGE_PLUGIN_ABI_MINOR);
        return TFORGE_EXIT_OK;
    }
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        if (argc > 2 && strcmp(name, "help") == 0)
            for (size_t i = 0; i < N_COMMANDS; i++)
                if (strcmp(argv[2], commands[i]->name) == 0) {
                    fputs(commands[i]->help, stdout);
                    return TFORGE_EXIT_OK;
                }
        print_main_help(stdout);
        return TFORGE_EXIT_OK;
    }
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(name, commands[i]->name) == 0) {
            optind = 1;
            return commands[i]->run(commands[i], argc - 1, argv + 1);
        }
    fprintf(stderr, "tforge: unknown command '%s'\nsee 'tforge --help'\n", name);
    return TFORGE_EXIT_USAGE;
}

const char *const *cli_kernel_env(void)
{
    static const char *const gpu[] = {"TRITON_INTERPRET=0", NULL};
    static const char *const cpu[] = {"TRITON_INTERPRET=1", NULL};
    char *where = tforge_rpc_fresh_text("looking for a GPU", tforge_rpc_device(), gpu, 120000);
    int have_gpu = where && strcmp(where, "cuda") == 0;
    free(where);
    tforge_error_clear();
    return have_gpu ? gpu : cpu;
}

char *cli_analysis(const char *path, const char *kernel)
{
    static const char *const env[] = {"TRITON_INTERPRET=1", NULL}; /* no GPU needed to parse */
    return tforge_rpc_fresh_json(path, tforge_rpc_analyze(path, kernel), env, 120000);
}

int cli_transform_point(tforge_level *point, const cli_command *command,
                        const tforge_space *space, const char *const *sets, size_t n_sets)
{
    uint32_t dims = tforge_space_dims(space);
    memset(point, 0, dims * sizeof *point);
    for (size_t i = 0; i < n_sets; i++) {
        const char *eq = strchr(sets[i], '=');
        char name[128];
        if (!eq || (size_t)(eq - sets[i]) >= sizeof name)
            return cli_usage_error(command, "--set %s: expected NAME=VALUE", sets[i]);
        memcpy(name, sets[i], (size_t)(eq - sets[i]));
        name[eq - sets[i]] = '\0';
        int d = tforge_space_find(space, name);
        if (d < 0)
            return cli_usage_error(command, "--set %s: no parameter '%s' (see the list without "
                                   "--set)", sets[i], name);
        const char *value = eq + 1;
        uint32_t level = UINT32_MAX, dim = (uint32_t)d;
        if (tforge_space_kind(space, dim) == TFORGE_DIM_BOOLEAN) {
            if (!strcmp(value, "True") || !strcmp(value, "true") || !strcmp(value, "1"))
                level = 1;
            else if (!strcmp(value, "False") || !strcmp(value, "false") || !strcmp(value, "0"))
                level = 0;
        }
        for (uint32_t l = 0; level == UINT32_MAX && l < tforge_space_levels(space, dim); l++) {
            const char *label = tforge_space_label(space, dim, l);
            char *end;
            double number = strtod(value, &end);
            if (label ? strcmp(label, value) == 0
                      : end != value && *end == '\0' && number == tforge_space_value(space, dim, l))
                level = l;
        }
        if (level == UINT32_MAX)
            return cli_usage_error(command, "--set %s: '%s' is not one of the parameter's "
                                   "values", sets[i], value);
        point[d] = (tforge_level)level;
    }
    return 0;
}
