/* `tforge plugins`: what was loaded, from where, and what was refused and why. */
#include "cli.h"
#include "registry.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>

static const char help[] =
    "usage: tforge plugins [--json] [--plugin-dir DIR]...\n\n"
    "Lists every plugin factory found (id, kind, version, module file) and every module that was\n"
    "refused, with the reason. Folders searched, in order: each --plugin-dir, each entry of\n"
    "TFORGE_PLUGIN_PATH (colon-separated), then the installed plugin folder\n"
    "(<prefix>/lib/tforge/plugins). The current folder is never searched unless named.\n\n"
    "  --json             one JSON document: {\"plugins\": [...], \"refused\": [...]}\n"
    "  --plugin-dir DIR   search DIR first (repeatable)\n"
    "  -v, -q             more or less logging\n\n"
    "exit status: 0 listed (refusals included), 1 failed, 2 bad usage.\n";

static int print_json(const tforge_registry *registry)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *plugins = cJSON_AddArrayToObject(root, "plugins");
    cJSON *refused = cJSON_AddArrayToObject(root, "refused");
    for (size_t i = 0; i < tforge_registry_count(registry); i++) {
        const tforge_plugin_record *r = tforge_registry_at(registry, i);
        cJSON *item = cJSON_CreateObject();
        cJSON_AddStringToObject(item, "id", r->descriptor->id);
        cJSON_AddStringToObject(item, "kind", tforge_plugin_kind_name(r->descriptor->kind));
        cJSON_AddStringToObject(item, "version", r->descriptor->version);
        cJSON_AddStringToObject(item, "interface", r->descriptor->interface_id);
        cJSON_AddStringToObject(item, "description",
                                r->descriptor->description ? r->descriptor->description : "");
        cJSON_AddStringToObject(item, "module", r->module);
        cJSON_AddStringToObject(item, "path", r->path);
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

static void print_table(const tforge_registry *registry)
{
    printf("%-20s %-10s %-8s %s\n", "ID", "KIND", "VERSION", "PATH");
    for (size_t i = 0; i < tforge_registry_count(registry); i++) {
        const tforge_plugin_record *r = tforge_registry_at(registry, i);
        printf("%-20s %-10s %-8s %s\n", r->descriptor->id,
               tforge_plugin_kind_name(r->descriptor->kind), r->descriptor->version, r->path);
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
    static const struct option options[] = {CLI_COMMON_LONG_OPTIONS, {0, 0, 0, 0}};
    cli_common common = {0};
    for (int opt; (opt = getopt_long(argc, argv, CLI_COMMON_SHORT_OPTIONS, options, NULL)) != -1;) {
        int handled = cli_common_option(command, &common, opt, optarg);
        if (handled < 0)
            return TFORGE_EXIT_OK;
        if (handled > 1)
            return handled;
        if (handled == 0)
            return cli_bad_option(command, argv);
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
        print_table(registry);
    tforge_registry_free(registry);
    return rc;
}

const cli_command cli_cmd_plugins = {"plugins", "list plugins, and those refused with the reason",
                                     help, run};
