/* What every `tforge` command shares: exit codes, the common options, and how errors are shown. */
#ifndef TFORGE_ENGINE_CLI_H
#define TFORGE_ENGINE_CLI_H

#include "tforge/space.h"

#include <getopt.h>
#include <stddef.h>

enum { TFORGE_EXIT_OK = 0, TFORGE_EXIT_FAILED = 1, TFORGE_EXIT_USAGE = 2 };

/* Options every command takes. */
typedef struct cli_common {
    int json;                /* --json: results as one JSON document on stdout */
    int verbosity;           /* -v raises, -q lowers; 0 is the default (warnings) */
    const char *plugin_dirs[16];
    size_t n_plugin_dirs;    /* --plugin-dir DIR, in order */
} cli_common;

/* getopt_long ids of the common options; a command's own ids stay below 1000. */
enum { CLI_OPT_JSON = 1000, CLI_OPT_PLUGIN_DIR, CLI_OPT_HELP };

#define CLI_COMMON_LONG_OPTIONS                                                                   \
    {"json", no_argument, NULL, CLI_OPT_JSON}, {"plugin-dir", required_argument, NULL,            \
                                                CLI_OPT_PLUGIN_DIR},                              \
        {"help", no_argument, NULL, CLI_OPT_HELP}, {"verbose", no_argument, NULL, 'v'},           \
        {"quiet", no_argument, NULL, 'q'}
#define CLI_COMMON_SHORT_OPTIONS "+hvq"

typedef struct cli_command {
    const char *name;
    const char *summary; /* one line for `tforge --help` */
    const char *help;    /* the whole text for `tforge NAME --help` */
    int (*run)(const struct cli_command *command, int argc, char **argv);
} cli_command;

/* Handles an option that is not the command's own: a common one (applying the log level), or
 * else an unknown one (reported, with `argv`). Returns 0 when it was a common option, -1 when
 * --help was printed (the caller then exits 0), an exit status for a bad value or an unknown
 * option. */
int cli_common_option(const cli_command *command, cli_common *common, int opt, const char *arg,
                      char **argv);

/* Prints "tforge NAME: <message>" and the usage hint to stderr; returns TFORGE_EXIT_USAGE. */
int cli_usage_error(const cli_command *command, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Prints the last error and maps its code to an exit status: bad input or a missing file is 2,
 * anything else 1. */
int cli_fail(const cli_command *command);

/* An unknown option or a missing argument, as getopt_long reported it. */
int cli_bad_option(const cli_command *command, char **argv);

/* An option that takes one value (its long `name`, "shape"), given again: the same value is
 * harmless, another one contradicts the first and is refused naming both ("--shape all" then
 * "--shape 1"). `*seen` keeps the value given first (NULL before). Returns 0 or the usage
 * error's exit status. */
int cli_once(const cli_command *command, const char **seen, const char *name, const char *value);

/* A path option's value: an empty one is refused naming the option. 0 or the exit status. */
int cli_path(const cli_command *command, const char *name, const char *value);
/* A file to be written: not empty, not a folder, in a folder that exists (nothing is created
 * here). 0 or the usage error's exit status. */
int cli_output_file(const cli_command *command, const char *name, const char *value);

/* The plugins the command line names, checked before anything starts: `transforms` (all, none,
 * or ids of loaded transforms separated by commas), each of `transform_options` ("ID.KEY=VALUE",
 * given as `options_flag`: a loaded transform that `transforms` keeps, a key and a value of the
 * options it publishes) and `heuristic` (a loaded heuristic, whatever the strategy). NULL skips
 * a check. 0, or the error set (TFORGE_EINPUT or TFORGE_ENOTFOUND, naming the option: cli_fail
 * shows it, exit 2). */
struct tforge_registry;
int cli_check_plugins(const struct tforge_registry *registry, const char *transforms,
                      const char *const *transform_options, const char *options_flag,
                      const char *heuristic);

/* Each --profiler-option KEY=VALUE taken by a loaded profiler plugin (its published options),
 * whatever the strategy: 0, or the error set naming the option (exit 2 through cli_fail). */
int cli_check_profiler_options(const struct tforge_registry *registry,
                               const char *const *options);

/* Loads plugins from the command line's folders, TFORGE_PLUGIN_PATH and the installed folder. */
int cli_load_plugins(const cli_common *common, struct tforge_registry **out);

/* The worker's analysis of the Triton file `path` (only `kernel` when not NULL) as JSON text (the
 * caller frees it), or NULL with the error set (the input's fault: TFORGE_EINPUT). */
char *cli_analysis(const char *path, const char *kernel);

/* The point of `sets` ("NAME=VALUE": a number, a word, True or False), every other parameter at
 * level 0. A name not in the space, or a value not among its parameter's, is a usage error
 * (its exit status returned); else 0. */
int cli_transform_point(tforge_level *point, const cli_command *command,
                        const tforge_space *space, const char *const *sets, size_t n_sets);

/* The candidate of `check --set` and `profile --set` on a task whose transforms are in use:
 * `point` (the space's dims entries) at the baseline's levels (level 0 where the baseline is
 * outside the space) with the parameters set, and `*config` the first baseline's config with
 * the transforms' launch options set (and, with `knobs`, the task's own parameters set) joined
 * in, or NULL when nothing joins it (the caller frees it). Without `knobs`, a name that is no
 * transform's parameter is a usage error. 0, or the exit status to return. */
struct tforge_task;
int cli_set_candidate(const cli_command *command, const struct tforge_task *task,
                      const char *const *sets, size_t n_sets, int knobs, tforge_level *point,
                      char **config);

/* The worker environment that runs kernels where they can run: on the GPU when a worker sees
 * one, else in Triton's interpreter (asks a worker once). */
const char *const *cli_kernel_env(void);

/* The commands, each defined in its own file. */
extern const cli_command cli_cmd_analyze;
extern const cli_command cli_cmd_capture;
extern const cli_command cli_cmd_check;
extern const cli_command cli_cmd_dispatch;
extern const cli_command cli_cmd_init;
extern const cli_command cli_cmd_llm;
extern const cli_command cli_cmd_plugins;
extern const cli_command cli_cmd_profile;
extern const cli_command cli_cmd_replay;
extern const cli_command cli_cmd_transform;
extern const cli_command cli_cmd_tune;
extern const cli_command cli_cmd_store;
extern const cli_command cli_cmd_sweep;

int tforge_cli_main(int argc, char **argv);

#endif
