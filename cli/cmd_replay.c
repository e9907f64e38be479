/* `tforge replay`: compare search strategies offline on a recorded tuning space. */
#include "cli.h"
#include "backend.h"
#include "clock.h"
#include "costmodel.h"
#include "forge.h"
#include "lab.h"
#include "plot.h"
#include "registry.h"
#include "replay.h"
#include "store.h"
#include "tune_report.h"
#include "strategy.h"
#include "tforge/error.h"
#include "tforge/measurement.h"
#include "tforge/score.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char help[] =
    "usage: tforge replay --cache FILE --strategy A[,B...] [options]\n\n"
    "Runs each strategy with many seeds against a recorded tuning space (a Kernel Tuner cache,\n"
    ".json or .json.gz, or a T4 results file) instead of a GPU, and scores it with the\n"
    "methodology of Willemsen et al. (FGCS 2024).\n\n"
    "  --cache FILE        the recorded space\n"
    "  --strategy LIST     strategy ids, comma-separated (see `tforge plugins`); ID@NAME runs\n"
    "                      ID under options of its own (--option ID@NAME.K=V), so that one\n"
    "                      replay compares option sets\n"
    "  --budget N          evaluations per run (default 100); runs go on to the budget at which\n"
    "                      random search is expected to reach the 96%% cut-off when that is\n"
    "                      larger, so that the score is defined; the summary is taken at N\n"
    "  --seeds K           runs per strategy, seeds 1..K (default 20)\n"
    "  --batch Q           points asked at once (default 1)\n"
    "  --lookahead         each batch proposed before the one before it is told, as `tune`\n"
    "                      proposes while it compiles ahead: what that lag costs a strategy\n"
    "                      forge and rules are steered by the profile of each new incumbent,\n"
    "                      from the recorded metrics (registers, spills, shared memory, and\n"
    "                      counters where recorded): forge is bo so steered, the labels'\n"
    "                      favoured moves from the incumbent first (all of a batch while\n"
    "                      they improve it, a quarter at least), rules the heuristics alone\n"
    "                      (no model), bo is not steered\n"
    "  --option S.K=V      a setting K=V for strategy S of the list (repeatable)\n"
    "  --heuristic ID      the heuristic plugin that steers forge and rules (default\n"
    "                      bottleneck)\n"
    "  --patience N        end a run after N evaluations without a new incumbent (default:\n"
    "                      never)\n"
    "  --noise             draw each value from the recorded individual runs (time only)\n"
    "  --objective NAME[:min|:max]  what to optimise: time, or a recorded metric (default:\n"
    "                      the recording's objective); rates such as GFLOP/s are maximised;\n"
    "                      or a cost model (latency, energy, edp: `tforge plugins`), which\n"
    "                      scores each replayed entry from its time and recorded metrics\n"
    "                      unless :min says otherwise, as their inverse (so ratios to the\n"
    "                      optimum keep their meaning)\n"
    "  --store FILE.db     record every evaluation; a run interrupted is resumed from there\n"
    "  --plot FILE.svg     best-so-far curves, median and quartile band over seeds\n"
    "  --json              everything as one JSON document (fields in the README)\n"
    "  --plugin-dir DIR, -v, -q\n\n"
    "exit status: 0 done, 1 a run failed, 2 bad usage or a bad file.\n";

enum { OPT_CACHE = 1, OPT_STRATEGY, OPT_BUDGET, OPT_SEEDS, OPT_BATCH, OPT_OPTION, OPT_NOISE,
       OPT_STORE, OPT_PLOT, OPT_OBJECTIVE, OPT_HEURISTIC, OPT_PATIENCE, OPT_LOOKAHEAD };

typedef struct settings {
    const char *cache, *strategies, *store, *plot, *objective, *heuristic;
    tforge_costmodel *model; /* the objective when it names a cost model, else NULL */
    uint32_t budget, seeds, batch, patience;
    int noise, lookahead;
    int heuristic_given; /* --heuristic named: checked whatever the strategies */
    const char *options[64];
    size_t n_options;
} settings;

/* One strategy's results over every seed. */
typedef struct strategy_result {
    char id[64];
    double *best;    /* seeds x run_budget */
    double *charged; /* seeds x run_budget */
    double seconds;  /* wall time of all its runs */
    tforge_score_stats stats;
    double p_within_5pct, median_best_over_opt; /* at the asked budget */
} strategy_result;

static int parse_count(const cli_command *command, const char *name, const char *text,
                       uint32_t *out)
{
    char *end;
    unsigned long v = strtoul(text, &end, 10);
    if (*text == '\0' || *end != '\0' || v == 0 || v > 100000000ul)
        return cli_usage_error(command, "%s expects a positive integer, not '%s'", name, text);
    *out = (uint32_t)v;
    return 0;
}

/* The options given as "S.K=V" for strategy `id`, as "K=V" pointers into them. */
static size_t options_for(const settings *s, const char *id, const char **out, size_t max)
{
    size_t n = 0, len = strlen(id);
    for (size_t i = 0; i < s->n_options && n + 1 < max; i++)
        if (strncmp(s->options[i], id, len) == 0 && s->options[i][len] == '.')
            out[n++] = s->options[i] + len + 1;
    out[n] = NULL;
    return n;
}

/* The strategy's id in a label: "bo@warped" is bo, under options of its own
 * (--option bo@warped.warping=kumaraswamy), so that one replay compares option sets. */
static const char *base_id(const char *label, char *buf, size_t size)
{
    snprintf(buf, size, "%.*s", (int)strcspn(label, "@"), label);
    return buf;
}

/* How many times the comma-separated `list` names `id`. */
static size_t times_named(const char *list, const char *id)
{
    size_t n = 0, len = strlen(id);
    for (const char *c = list; *c;) {
        size_t k = strcspn(c, ",");
        n += k == len && strncmp(c, id, len) == 0;
        c += k + (c[k] == ',');
    }
    return n;
}

/* Every strategy and every option checked before anything runs or is stored: an --option for a
 * strategy not asked for, or one its table lacks, is bad usage. */
static int check_strategies(const settings *s, const tforge_registry *reg, const char *list)
{
    char *copy = strdup(list), *save = NULL;
    if (!copy)
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    int rc = 0;
    for (char *id = strtok_r(copy, ",", &save); id && !rc; id = strtok_r(NULL, ",", &save)) {
        const char *options[65];
        char base[64];
        const char *at = strchr(id, '@');
        if (at && (at == id || !at[1] || strchr(at + 1, '@'))) {
            rc = tforge_error_set(TFORGE_EINPUT, "--strategy %s: '%s' is not ID or ID@NAME (a "
                                  "strategy, and a name for its option set)", list, id);
            break;
        }
        if (times_named(list, id) > 1) {
            rc = tforge_error_set(TFORGE_EINPUT, "--strategy %s: %s is named twice (ID@NAME "
                                  "runs it again under options of its own)", list, id);
            break;
        }
        options_for(s, id, options, 65);
        int steered;
        const char *plugin = tforge_forge_plugin(base_id(id, base, sizeof base), &steered);
        rc = tforge_strategy_check(reg, plugin, options);
        if (!rc && steered &&
            !tforge_registry_find(reg, TFORGE_HEURISTIC_INTERFACE_ID, s->heuristic))
            rc = tforge_error_set(TFORGE_ENOTFOUND, "--strategy %s is steered by a heuristic, "
                                  "and there is no heuristic plugin %s (see `tforge plugins`)",
                                  id, s->heuristic);
    }
    free(copy);
    if (!rc && (list[0] == '\0' || list[0] == ',' || strstr(list, ",,") ||
                list[strlen(list) - 1] == ','))
        rc = tforge_error_set(TFORGE_EINPUT, "--strategy '%s': expected ids separated by commas",
                              list);
    for (size_t i = 0; !rc && i < s->n_options; i++) {
        const char *dot = strchr(s->options[i], '.');
        size_t len = (size_t)(dot - s->options[i]);
        int named = 0;
        for (const char *c = list; *c && !named;) {
            size_t n = strcspn(c, ",");
            named = n == len && strncmp(c, s->options[i], len) == 0;
            c += n + (c[n] == ',');
        }
        if (!named)
            rc = tforge_error_set(TFORGE_EINPUT, "--option %s: '%.*s' is not one of the "
                                  "strategies asked for (%s); see `tforge plugins --options`",
                                  s->options[i], (int)len, s->options[i], list);
    }
    return rc;
}


/* What tells the lab's stored runs apart beyond strategy, seed and budget. */
static char *run_settings(const settings *s, const char *id, const char *const *options,
                          uint32_t run_budget)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *opts = cJSON_AddArrayToObject(o, "options");
    for (size_t i = 0; options[i]; i++)
        cJSON_AddItemToArray(opts, cJSON_CreateString(options[i]));
    cJSON_AddNumberToObject(o, "budget", run_budget);
    cJSON_AddNumberToObject(o, "batch", s->batch);
    cJSON_AddBoolToObject(o, "noise", s->noise);
    int steered;
    char base[64];
    tforge_forge_plugin(base_id(id, base, sizeof base), &steered);
    if (steered) /* only where they matter, so that the runs stored before them still match */
        cJSON_AddStringToObject(o, "heuristic", s->heuristic);
    if (s->patience)
        cJSON_AddNumberToObject(o, "patience", s->patience);
    if (s->lookahead) /* likewise */
        cJSON_AddBoolToObject(o, "lookahead", 1);
    if (s->model) /* likewise */
        cJSON_AddStringToObject(o, "objective", tforge_costmodel_id(s->model));
    char *json = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if (!json)
        tforge_error_set(TFORGE_ENOMEM, "out of memory");
    return json;
}

/* Runs every seed of one strategy, resuming from the store where it holds a run already. */
static int run_strategy(strategy_result *out, const settings *s, const tforge_registry *reg,
                        const tforge_replay *replay, tforge_store *store, uint32_t run_budget,
                        const char *id)
{
    const char *options[64];
    char base[64];
    options_for(s, id, options, 64);
    double start = tforge_clock_s();
    for (uint32_t k = 0; k < s->seeds; k++) {
        uint64_t seed = k + 1;
        tforge_lab_run_options o = TFORGE_LAB_RUN_OPTIONS_INIT;
        o.strategy = base_id(id, base, sizeof base);
        o.options = options;
        o.seed = seed;
        o.budget = run_budget;
        o.batch = s->batch;
        o.noise = s->noise;
        o.store = store;
        o.source = s->cache;
        o.heuristic = s->heuristic;
        o.patience = s->patience;
        o.lookahead = s->lookahead;
        o.objective = s->model;
        char *json = store ? run_settings(s, id, options, run_budget) : NULL;
        o.settings_json = json;
        uint32_t n_evals;
        int rc = store && !json ? TFORGE_ENOMEM
                                : tforge_lab_run(out->best + (size_t)k * run_budget,
                                                 out->charged + (size_t)k * run_budget, &n_evals,
                                                 reg, replay, &o);
        free(json);
        if (rc)
            return rc;
    }
    out->seconds = tforge_clock_s() - start;
    return 0;
}

/* Fraction of seeds within 5% of the optimum, and the median best/optimum, at budget b. */
static void summary_at(strategy_result *r, uint32_t seeds, uint32_t run_budget, uint32_t b,
                       const tforge_score_space *space)
{
    double *ratios = malloc(seeds * sizeof *ratios);
    uint32_t within = 0;
    for (uint32_t k = 0; k < seeds; k++) {
        double v = r->best[(size_t)k * run_budget + b - 1];
        /* the score's rules: nothing found counts as the worst, nothing above the ceiling */
        v = isnan(v) || v > space->ceiling ? space->worst : v;
        ratios[k] = v / space->optimum;
        within += v <= 1.05 * space->optimum;
    }
    for (uint32_t i = 1; i < seeds; i++) /* insertion sort: seeds are few */
        for (uint32_t j = i; j > 0 && ratios[j - 1] > ratios[j]; j--) {
            double t = ratios[j];
            ratios[j] = ratios[j - 1];
            ratios[j - 1] = t;
        }
    r->p_within_5pct = (double)within / seeds;
    r->median_best_over_opt =
        seeds % 2 ? ratios[seeds / 2] : 0.5 * (ratios[seeds / 2 - 1] + ratios[seeds / 2]);
    free(ratios);
}

static cJSON *numbers(const double *v, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++)
        cJSON_AddItemToArray(a, isnan(v[i]) ? cJSON_CreateNull() : cJSON_CreateNumber(v[i]));
    return a;
}

/* The strategy's version and effective options (defaults included), so that a document says
 * exactly what ran. */
static void add_strategy_identity(cJSON *o, const settings *s, const tforge_registry *reg,
                                  const char *id)
{
    char base[64];
    int steered;
    const char *plugin = tforge_forge_plugin(base_id(id, base, sizeof base), &steered);
    const tforge_plugin_record *r =
        tforge_registry_find(reg, TFORGE_STRATEGY_INTERFACE_ID, plugin);
    cJSON_AddStringToObject(o, "version", r ? r->descriptor->version : "?");
    const char *given[65];
    options_for(s, id, given, 65);
    cJSON_AddItemToObject(o, "options", tforge_report_strategy_options(reg, plugin, given));
    if (steered)
        cJSON_AddStringToObject(o, "heuristic", s->heuristic);
}

static void print_json(const settings *s, const tforge_registry *reg, const tforge_replay *replay,
                       const tforge_score_space *space, size_t cut_start, size_t cut_end,
                       uint32_t run_budget, strategy_result *results, size_t n_results)
{
    const tforge_recording *rec = tforge_replay_recording(replay);
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "cache", s->cache);
    cJSON_AddStringToObject(root, "device", rec->device_name);
    cJSON_AddStringToObject(root, "kernel", rec->kernel_name);
    cJSON_AddNumberToObject(root, "configurations", (double)space->n);
    cJSON_AddNumberToObject(root, "configurations_ok", (double)space->n_ok);
    int higher;
    const char *objective = tforge_replay_objective(replay, &higher);
    cJSON_AddStringToObject(root, "objective",
                            s->model ? tforge_costmodel_objective(s->model) : objective);
    if (s->model)
        cJSON_AddStringToObject(root, "unit", tforge_costmodel_unit(s->model));
    cJSON_AddBoolToObject(root, "higher_is_better", higher);
    cJSON_AddNumberToObject(root, "optimum", space->optimum);
    cJSON_AddNumberToObject(root, "median", space->median);
    cJSON_AddNumberToObject(root, "budget", s->budget);
    cJSON_AddNumberToObject(root, "run_budget", run_budget);
    cJSON_AddNumberToObject(root, "seeds", s->seeds);
    cJSON_AddNumberToObject(root, "batch", s->batch);
    cJSON_AddBoolToObject(root, "lookahead", s->lookahead);
    cJSON_AddBoolToObject(root, "noise", s->noise);
    cJSON *cut = cJSON_AddArrayToObject(root, "cutoff_budgets");
    cJSON_AddItemToArray(cut, cJSON_CreateNumber((double)cut_start));
    cJSON_AddItemToArray(cut, cJSON_CreateNumber((double)cut_end));
    cJSON_AddItemToObject(root, "random_expected", numbers(results[0].stats.random, run_budget));
    cJSON *list = cJSON_AddArrayToObject(root, "strategies");
    for (size_t i = 0; i < n_results; i++) {
        strategy_result *r = &results[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "strategy", r->id);
        add_strategy_identity(o, s, reg, r->id);
        cJSON_AddNumberToObject(o, "score", r->stats.score);
        cJSON_AddNumberToObject(o, "p_within_5pct", r->p_within_5pct);
        cJSON_AddNumberToObject(o, "median_best_over_opt", r->median_best_over_opt);
        cJSON_AddNumberToObject(o, "seconds", r->seconds);
        cJSON_AddItemToObject(o, "median", numbers(r->stats.median, run_budget));
        cJSON_AddItemToObject(o, "q25", numbers(r->stats.q25, run_budget));
        cJSON_AddItemToObject(o, "q75", numbers(r->stats.q75, run_budget));
        cJSON *traces = cJSON_AddArrayToObject(o, "traces");
        cJSON *charged = cJSON_AddArrayToObject(o, "charged_ms");
        for (uint32_t k = 0; k < s->seeds; k++) {
            cJSON_AddItemToArray(traces, numbers(r->best + (size_t)k * run_budget, run_budget));
            cJSON_AddItemToArray(charged,
                                 numbers(r->charged + (size_t)k * run_budget, run_budget));
        }
        cJSON_AddItemToArray(list, o);
    }
    char *text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    if (text)
        puts(text);
    free(text);
}

static void print_table(const settings *s, const tforge_replay *replay,
                        const tforge_score_space *space, size_t cut_start, size_t cut_end,
                        uint32_t run_budget, const strategy_result *results, size_t n_results)
{
    const tforge_recording *rec = tforge_replay_recording(replay);
    int higher;
    const char *objective = tforge_replay_objective(replay, &higher);
    char unit[32] = "";
    if (s->model) {
        objective = tforge_costmodel_objective(s->model);
        snprintf(unit, sizeof unit, " %s", tforge_costmodel_unit(s->model));
    } else if (strcmp(objective, "time") == 0) {
        snprintf(unit, sizeof unit, " ms");
    }
    /* a maximised objective is replayed as its inverse: shown as itself */
    double optimum = higher ? 1.0 / space->optimum : space->optimum;
    double median = higher ? 1.0 / space->median : space->median;
    printf("%s on %s: %zu configurations (%zu ok), objective %s (%s is better): optimum %.6g%s, "
           "median %.6g%s\n",
           rec->kernel_name[0] ? rec->kernel_name : s->cache,
           rec->device_name[0] ? rec->device_name : "?", space->n, space->n_ok, objective,
           higher ? "higher" : "lower", optimum, unit, median, unit);
    printf("budget %u, %u seeds; each run makes %u evaluations and its strategy is told %u; score "
           "over budgets %zu..%zu (random search's 50%% and 96%% cut-offs)\n\n",
           s->budget, s->seeds, run_budget, run_budget, cut_start, cut_end);
    printf("%-14s %8s %14s %22s %9s\n", "strategy", "score", "p_within_5pct",
           "median_best_over_opt", "seconds");
    for (size_t i = 0; i < n_results; i++)
        printf("%-14s %8.3f %14.2f %22.4f %9.2f\n", results[i].id, results[i].stats.score,
               results[i].p_within_5pct, results[i].median_best_over_opt, results[i].seconds);
}

/* Best-so-far over the optimum, so that 1 is the optimum and every space reads alike. */
static double *ratio_to_optimum(const double *v, size_t n, double optimum)
{
    double *r = malloc(n * sizeof *r);
    for (size_t i = 0; r && i < n; i++)
        r[i] = v[i] / optimum;
    return r;
}

static int write_plot(const char *path, const settings *s, const tforge_recording *rec,
                      const tforge_score_space *space, size_t cut_start, size_t cut_end,
                      uint32_t run_budget, const strategy_result *results, size_t n_results)
{
    int rc = 0;
    size_t n_arrays = 3 * n_results + 1;
    double **arrays = calloc(n_arrays, sizeof *arrays);
    tforge_plot_series *series = calloc(n_results, sizeof *series);
    if (!arrays || !series) {
        rc = tforge_error_set(TFORGE_ENOMEM, "out of memory drawing %s", path);
        goto cleanup;
    }
    for (size_t i = 0; i < n_results; i++) {
        const tforge_score_stats *st = &results[i].stats;
        arrays[3 * i] = ratio_to_optimum(st->median, run_budget, space->optimum);
        arrays[3 * i + 1] = ratio_to_optimum(st->q25, run_budget, space->optimum);
        arrays[3 * i + 2] = ratio_to_optimum(st->q75, run_budget, space->optimum);
        series[i] = (tforge_plot_series){results[i].id, arrays[3 * i], arrays[3 * i + 1],
                                         arrays[3 * i + 2]};
    }
    arrays[n_arrays - 1] = ratio_to_optimum(results[0].stats.random, run_budget, space->optimum);
    for (size_t i = 0; i < n_arrays; i++)
        if (!arrays[i]) {
            rc = tforge_error_set(TFORGE_ENOMEM, "out of memory drawing %s", path);
            goto cleanup;
        }
    char title[256];
    snprintf(title, sizeof title, "%s, %s: median and quartiles of %u seeds",
             rec->kernel_name[0] ? rec->kernel_name : s->cache,
             rec->device_name[0] ? rec->device_name : "?", s->seeds);
    tforge_plot_marker markers[2] = {{cut_start, "50% cut-off"}, {cut_end, "96% cut-off"}};
    tforge_plot_convergence plot = TFORGE_PLOT_CONVERGENCE_INIT;
    plot.title = title;
    plot.x_label = "evaluations";
    plot.y_label = "best so far / optimum";
    plot.budget = run_budget;
    plot.series = series;
    plot.n_series = n_results;
    plot.random = arrays[n_arrays - 1];
    plot.markers = markers;
    plot.n_markers = 2;
    plot.log_y = space->optimum > 0;
    plot.log_x = 1; /* the early evaluations are where strategies differ most */
    FILE *out = fopen(path, "w");
    if (!out) {
        rc = tforge_error_set(TFORGE_EIO, "cannot write the plot %s", path);
        goto cleanup;
    }
    rc = tforge_plot_convergence_svg(out, &plot);
    if (fclose(out) && !rc)
        rc = tforge_error_set(TFORGE_EIO, "cannot write the plot %s", path);
cleanup:
    for (size_t i = 0; arrays && i < n_arrays; i++)
        free(arrays[i]);
    free(arrays);
    free(series);
    return rc;
}

static int parse(const cli_command *command, int argc, char **argv, settings *s,
                 cli_common *common)
{
    static const struct option options[] = {{"cache", required_argument, NULL, OPT_CACHE},
                                            {"strategy", required_argument, NULL, OPT_STRATEGY},
                                            {"budget", required_argument, NULL, OPT_BUDGET},
                                            {"seeds", required_argument, NULL, OPT_SEEDS},
                                            {"batch", required_argument, NULL, OPT_BATCH},
                                            {"option", required_argument, NULL, OPT_OPTION},
                                            {"noise", no_argument, NULL, OPT_NOISE},
                                            {"store", required_argument, NULL, OPT_STORE},
                                            {"plot", required_argument, NULL, OPT_PLOT},
                                            {"heuristic", required_argument, NULL,
                                             OPT_HEURISTIC},
                                            {"patience", required_argument, NULL, OPT_PATIENCE},
                                            {"lookahead", no_argument, NULL, OPT_LOOKAHEAD},
                                            {"objective", required_argument, NULL,
                                             OPT_OBJECTIVE},
                                            CLI_COMMON_LONG_OPTIONS,
                                            {0, 0, 0, 0}};
    *s = (settings){.budget = 100, .seeds = 20, .batch = 1, .heuristic = "bottleneck"};
    const char *given[OPT_LOOKAHEAD + 1] = {0}; /* each single-valued option's first value */
    for (int opt, at = -1;
         (opt = getopt_long(argc, argv, CLI_COMMON_SHORT_OPTIONS, options, &at)) != -1; at = -1) {
        int rc = 0;
        if (at >= 0 && opt <= OPT_LOOKAHEAD && options[at].has_arg && opt != OPT_OPTION &&
            (rc = cli_once(command, &given[opt], options[at].name, optarg)))
            return rc;
        switch (opt) {
        case OPT_CACHE:
            s->cache = optarg;
            rc = cli_path(command, "--cache", optarg);
            break;
        case OPT_STRATEGY:
            s->strategies = optarg;
            break;
        case OPT_BUDGET:
            rc = parse_count(command, "--budget", optarg, &s->budget);
            break;
        case OPT_SEEDS:
            rc = parse_count(command, "--seeds", optarg, &s->seeds);
            break;
        case OPT_BATCH:
            rc = parse_count(command, "--batch", optarg, &s->batch);
            break;
        case OPT_OPTION:
            if (!strchr(optarg, '.') || !strchr(optarg, '='))
                return cli_usage_error(command, "--option expects STRATEGY.KEY=VALUE, not '%s'",
                                       optarg);
            if (s->n_options == sizeof s->options / sizeof *s->options)
                return cli_usage_error(command, "too many --option settings (at most 64)");
            s->options[s->n_options++] = optarg;
            break;
        case OPT_NOISE:
            s->noise = 1;
            break;
        case OPT_LOOKAHEAD:
            s->lookahead = 1;
            break;
        case OPT_STORE:
            s->store = optarg;
            rc = cli_output_file(command, "--store", optarg);
            break;
        case OPT_OBJECTIVE:
            s->objective = optarg;
            break;
        case OPT_HEURISTIC:
            s->heuristic = optarg;
            s->heuristic_given = 1;
            break;
        case OPT_PATIENCE:
            rc = parse_count(command, "--patience", optarg, &s->patience);
            break;
        case OPT_PLOT:
            s->plot = optarg;
            rc = cli_output_file(command, "--plot", optarg);
            break;
        default:
            rc = cli_common_option(command, common, opt, optarg, argv);
        }
        if (rc)
            return rc;
    }
    if (optind < argc)
        return cli_usage_error(command, "unexpected argument '%s'", argv[optind]);
    if (!s->cache)
        return cli_usage_error(command, "--cache FILE is required");
    if (!s->strategies)
        return cli_usage_error(command, "--strategy is required (e.g. random,annealing)");
    return 0;
}

/* Values and statuses of every configuration, for the score. */
/* Entry i's value under the cost model: its replayed measurement, scored; an entry the model
 * finds no value for (no energy recorded) counts as failed for the score. */
static double scored_value(tforge_costmodel *model, const tforge_replay *replay, size_t i,
                           uint32_t *status, int *rc)
{
    const tforge_recording *rec = tforge_replay_recording(replay);
    tforge_measurement m;
    tforge_measurement_init(&m);
    tforge_replay_answer(&m, replay,
                         tforge_replay_index_of_levels(replay, rec->entries[i].levels), NULL);
    *rc = tforge_costmodel_score(model, &m);
    *status = m.status == TFORGE_STATUS_OK && isnan(m.value) ? TFORGE_STATUS_RUNTIME : m.status;
    return m.value;
}

static int prepare_score_space(tforge_score_space *out, const tforge_replay *replay,
                               tforge_costmodel *model, const char *path)
{
    const tforge_recording *rec = tforge_replay_recording(replay);
    double *values = malloc(rec->n_entries * sizeof *values);
    uint32_t *statuses = malloc(rec->n_entries * sizeof *statuses);
    int rc = values && statuses ? 0 : tforge_error_set(TFORGE_ENOMEM, "out of memory");
    size_t n_ok = 0;
    for (size_t i = 0; !rc && i < rec->n_entries; i++) {
        values[i] = model ? scored_value(model, replay, i, &statuses[i], &rc)
                          : tforge_replay_value(replay, i, &statuses[i]);
        n_ok += statuses[i] == TFORGE_STATUS_OK;
    }
    if (!rc && n_ok == 0) /* a well-formed file, but there is nothing to search for */
        rc = tforge_error_set(TFORGE_ERROR, "%s: none of its %zu configurations ran correctly%s: "
                              "there is nothing to score", path, rec->n_entries,
                              !model && strcmp(tforge_replay_objective(replay, NULL), "time") == 0
                                  ? "" : " with the objective measured");
    if (!rc && (rc = tforge_score_space_init(out, values, statuses, rec->n_entries)))
        rc = tforge_error_prefix("%s", path);
    free(values);
    free(statuses);
    return rc;
}

/* The objective asked for (or the recording's): a cost model of the registry (the replay then
 * serves time and the recorded metrics, which the model scores), else, in the replay, time or a
 * recorded metric, its direction from a ":min" or ":max" suffix, else from its name. */
static int choose_objective(tforge_replay *replay, settings *s, const tforge_registry *reg)
{
    if (s->objective && tforge_registry_find(reg, TFORGE_COSTMODEL_INTERFACE_ID, s->objective)) {
        int rc = tforge_costmodel_open(&s->model, reg, s->objective);
        if (!rc && (rc = tforge_replay_check_objective(replay, s->model)))
            rc = tforge_error_prefix("%s", s->cache);
        return rc;
    }
    tforge_error_clear(); /* not a cost model: a recorded objective */
    const tforge_recording *rec = tforge_replay_recording(replay);
    char name[128];
    snprintf(name, sizeof name, "%s", s->objective ? s->objective : rec->objective);
    int higher = -1;
    char *colon = strrchr(name, ':');
    if (colon && (strcmp(colon, ":min") == 0 || strcmp(colon, ":max") == 0)) {
        higher = strcmp(colon, ":max") == 0;
        *colon = '\0';
    }
    int rc = tforge_replay_set_objective(replay, name, higher);
    if (rc)
        return tforge_error_prefix("%s", s->cache);
    if (s->noise && strcmp(name, "time") != 0)
        return tforge_error_set(TFORGE_EINPUT, "--noise draws recorded runs of time; the "
                                "objective is %s", name);
    return 0;
}

static int run(const cli_command *command, int argc, char **argv)
{
    settings s;
    cli_common common = {0};
    int rc = parse(command, argc, argv, &s, &common);
    if (rc)
        return rc < 0 ? TFORGE_EXIT_OK : rc;

    tforge_registry *reg = NULL;
    tforge_recording *rec = NULL;
    tforge_replay *replay = NULL;
    tforge_store *store = NULL;
    tforge_score_space space = {0};
    strategy_result *results = NULL;
    size_t n_results = 0;
    char *list = strdup(s.strategies);
    int exit_code = TFORGE_EXIT_OK;

    if (!list || cli_load_plugins(&common, &reg) || check_strategies(&s, reg, s.strategies) ||
        cli_check_plugins(reg, NULL, NULL, NULL, s.heuristic_given ? s.heuristic : NULL) ||
        tforge_recording_read_space(&rec, s.cache) ||
        tforge_replay_open(&replay, rec) || choose_objective(replay, &s, reg) ||
        prepare_score_space(&space, replay, s.model, s.cache))
        goto failed;
    size_t cut_start, cut_end;
    if (tforge_score_cutoffs(&cut_start, &cut_end, &space, NULL))
        goto failed;
    uint64_t count = tforge_space_count(tforge_replay_space(replay));
    if (s.budget > count)
        s.budget = (uint32_t)count;
    uint32_t run_budget = s.budget > cut_end ? s.budget : (uint32_t)cut_end;
    if (s.store && tforge_store_open(&store, s.store))
        goto failed;

    size_t n_ids = 1;
    for (const char *c = list; *c; c++)
        n_ids += *c == ',';
    results = calloc(n_ids, sizeof *results);
    if (!results) {
        tforge_error_set(TFORGE_ENOMEM, "out of memory");
        goto failed;
    }
    char *save = NULL;
    for (char *id = strtok_r(list, ",", &save); id; id = strtok_r(NULL, ",", &save)) {
        strategy_result *r = &results[n_results++];
        snprintf(r->id, sizeof r->id, "%s", id);
        r->best = malloc((size_t)s.seeds * run_budget * sizeof *r->best);
        r->charged = malloc((size_t)s.seeds * run_budget * sizeof *r->charged);
        if (!r->best || !r->charged) {
            tforge_error_set(TFORGE_ENOMEM, "out of memory");
            goto failed;
        }
        if (run_strategy(r, &s, reg, replay, store, run_budget, id) ||
            tforge_score_summary(&r->stats, r->best, s.seeds, run_budget, &space, NULL))
            goto failed;
        summary_at(r, s.seeds, run_budget, s.budget, &space);
    }
    if (s.plot && write_plot(s.plot, &s, rec, &space, cut_start, cut_end, run_budget, results,
                             n_results))
        goto failed;
    if (common.json)
        print_json(&s, reg, replay, &space, cut_start, cut_end, run_budget, results, n_results);
    else
        print_table(&s, replay, &space, cut_start, cut_end, run_budget, results, n_results);
    goto cleanup;

failed:
    exit_code = cli_fail(command);
cleanup:
    for (size_t i = 0; i < n_results; i++) {
        free(results[i].best);
        free(results[i].charged);
        tforge_score_stats_dispose(&results[i].stats);
    }
    free(results);
    free(list);
    tforge_score_space_dispose(&space);
    tforge_store_close(store);
    tforge_replay_free(replay);
    tforge_recording_free(rec);
    tforge_costmodel_close(s.model);
    tforge_registry_free(reg);
    return exit_code;
}

const cli_command cli_cmd_replay = {"replay",
                                    "compare search strategies on a recorded tuning space", help,
                                    run};
