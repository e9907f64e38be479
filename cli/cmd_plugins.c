/* `tforge plugins`: what was loaded, from where, and what was refused and why. */
#include "cli.h"
#include "registry.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>

static const char help[] =
    "usage: tforge plugins [--options] [--json] [--plugin-dir DIR]...\n\n"
    "Lists every plugin factory found (id, kind, version, module file) and every module that was\n"
    "refused, with the reason; with --options, every option each factory takes (name, type,\n"
    "default, what it does), as --option ID.KEY=VALUE (replay) or KEY=VALUE (tune) set them.\n"
    "Folders searched, in order: each --plugin-dir, each entry of TFORGE_PLUGIN_PATH\n"
    "(colon-separated), then the installed plugin folder (<prefix>/lib/tforge/plugins). The\n"
    "current folder is never searched unless named.\n\n"
    "  --options          each factory's options too\n"
    "  --json             one JSON document: {\"plugins\": [...], \"refused\": [...]}; each\n"
    "                     plugin lists its options\n"
    "  --plugin-dir DIR   search DIR first (repeatable)\n"
    "  -v, -q             more or less logging\n\n"
    "exit status: 0 listed (refusals included), 1 failed, 2 bad usage.\n";

static const char *type_name(uint32_t type)
{
    return type == TFORGE_OPTION_INTEGER  ? "integer"
           : type == TFORGE_OPTION_CHOICE ? "choice"
           : type == TFORGE_OPTION_TEXT   ? "text"
                                          : "number";
}

static cJSON *options_json(const tforge_plugin_record *r)
{
    uint32_t n;
    const tforge_option_spec *specs = tforge_plugin_options(r, &n);
    cJSON *list = cJSON_CreateArray();
    for (uint32_t i = 0; i < n; i++) {
        const tforge_option_spec *o = &specs[i];
        cJSON *item = cJSON_CreateObject();
        cJSON_AddStringToObject(item, "name", o->name);
        cJSON_AddStringToObject(item, "type", type_name(o->type));
        cJSON_AddStringToObject(item, "default", o->default_value);
        if (o->type == TFORGE_OPTION_CHOICE) {
            cJSON_AddStringToObject(item, "choices", o->choices ? o->choices : "");
        } else if (o->type != TFORGE_OPTION_TEXT) {
            cJSON_AddNumberToObject(item, "min", o->min);
            cJSON_AddNumberToObject(item, "max", o->max);
        }
        cJSON_AddStringToObject(item, "doc", o->doc ? o->doc : "");
        cJSON_AddItemToArray(list, item);
    }
    return list;
}

static void print_options(const tforge_plugin_record *r)
{
    uint32_t n;
    const tforge_option_spec *specs = tforge_plugin_options(r, &n);
    for (uint32_t i = 0; i < n; i++) {
        const tforge_option_spec *o = &specs[i];
        char range[96];
        if (o->type == TFORGE_OPTION_CHOICE)
            snprintf(range, sizeof range, "%s", o->choices ? o->choices : "");
        else if (o->type == TFORGE_OPTION_TEXT)
            snprintf(range, sizeof range, "text");
        else
            snprintf(range, sizeof range, "%s in [%g, %g]", type_name(o->type), o->min, o->max);
        printf("    %-14s %-10s %-30s %s\n", o->name, o->default_value[0] ? o->default_value
                                                                         : "(derived)",
               range, o->doc ? o->doc : "");
    }
}

static int print_json(const tforge_registry *registry)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *plugins = cJSON_AddArrayToObject(root, "plugins");
    cJSON *refused = cJSON_AddArrayToObject(root, "refused");
    for (size_t i = 0; i < tforge_registry_count(registry); i++) {
        const tforge_plugin_record *r = tforge_registry_at(registry, i);
        cJSON *item = cJSON_CreateObject();
        cJSON_AddStringToObject(item, "id", r->descriptor->id);
        cJSON_AddStringToObject(item, "kind", r->kind);
        cJSON_AddStringToObject(item, "version", r->descriptor->version);
        cJSON_AddStringToObject(item, "interface", r->descriptor->interface_id);
        cJSON_AddStringToObject(item, "description",
                                r->descriptor->description ? r->descriptor->description : "");
        cJSON_AddStringToObject(item, "module", r->module);
        cJSON_AddStringToObject(item, "path", r->path);
        cJSON_AddItemToObject(item, "options", options_json(r));
        cJSON_AddItemToArray(plugins, item);
    }
    for (size_t i = 0; i < tforge_registry_refusal_count(registry); i++) {
        const tforge_plugin_refusal *r = tforge_registry_refusal(registry, i);
        cJSON *item = cJSON_CreateObject();
        cJSON_AddStringToObject(item, "path", r->path);
        cJSON_AddStringToObject(item, "reason", r->reason);
        cJSON_AddItemToArray(refused, item);
    }
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text)
        return TFORGE_EXIT_FAILED;
    puts(text);
    free(text);
    return TFORGE_EXIT_OK;
}

static void print_table(const tforge_registry *registry, int with_options)
{
    printf("%-20s %-10s %-8s %s\n", "ID", "KIND", "VERSION", "PATH");
    for (size_t i = 0; i < tforge_registry_count(registry); i++) {
        const tforge_plugin_record *r = tforge_registry_at(registry, i);
        printf("%-20s %-10s %-8s %s\n", r->descriptor->id,
               r->kind, r->descriptor->version, r->path);
        if (with_options)
            print_options(r);
    }
    size_t n = tforge_registry_refusal_count(registry);
    if (n)
        printf("\nrefused:\n");
    for (size_t i = 0; i < n; i++) {
        const tforge_plugin_refusal *r = tforge_registry_refusal(registry, i);
        printf("  %s: %s\n", r->path, r->reason);
    }
}

static int run(const cli_command *command, int argc, char **argv)
{
    enum { OPT_OPTIONS = 1 };
    static const struct option options[] = {{"options", no_argument, NULL, OPT_OPTIONS},
                                            CLI_COMMON_LONG_OPTIONS, {0, 0, 0, 0}};
    cli_common common = {0};
    int with_options = 0;
    for (int opt; (opt = getopt_long(argc, argv, CLI_COMMON_SHORT_OPTIONS, options, NULL)) != -1;) {
        if (opt == OPT_OPTIONS) {
            with_options = 1;
            continue;
        }
        int rc = cli_common_option(command, &common, opt, optarg, argv);
        if (rc)
            return rc < 0 ? TFORGE_EXIT_OK : rc;
    }
    if (optind < argc)
        return cli_usage_error(command, "unexpected argument '%s'", argv[optind]);
    tforge_registry *registry;
    if (cli_load_plugins(&common, &registry))
        return cli_fail(command);
    int rc = TFORGE_EXIT_OK;
    if (common.json)
        rc = print_json(registry);
    else
        print_table(registry, with_options);
    tforge_registry_free(registry);
    return rc;
}

const cli_command cli_cmd_plugins = {"plugins", "list plugins, and those refused with the reason",
                                     help, run};
