/* `tforge llm ask`: one request to a language model through the host's door (engine/llm/), the
 * answers printed: a user's endpoint checked without a tune. */
#include "llm_backend.h"
#include "cli.h"
#include "door.h"
#include "file.h"
#include "registry.h"
#include "store.h"
#include "tforge/error.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char help[] =
    "usage: tforge llm ask (--llm ID | --llm-replay) [--llm-option KEY=VALUE]...\n"
    "                      --prompt-file FILE [--system-file FILE] [--answers N] [--seed S]\n"
    "                      [--store DB] [--json]\n\n"
    "Asks a language model once, through the door a tune uses, and prints its answers (or why\n"
    "each failed) and what asking cost: a way to check an endpoint before tuning with it.\n"
    "  --llm ID              the model plugin (`tforge plugins` lists them: openai)\n"
    "  --llm-option K=V      one of its options (`tforge plugins --options`), repeatable:\n"
    "                        endpoint=http://127.0.0.1:8080/v1 model=NAME key_env=VARIABLE ...\n"
    "  --llm-replay          answers from --store only, no model asked (with --llm, the\n"
    "                        plugin only names the model); a request not stored is answered\n"
    "                        \"" TFORGE_LLM_NOT_STORED "\"\n"
    "  --prompt-file FILE    the user message\n"
    "  --system-file FILE    the system message (none by default)\n"
    "  --answers N           answers wanted, 1 to 64 (default 1)\n"
    "  --seed S              the request's seed (default 0; the plugin's seed option wins)\n"
    "  --store DB            keep the request and its answers in this results store (created\n"
    "                        when missing), as a tune does\n"
    "  --json                one JSON document: the model, the answers and the usage\n\n"
    "exit status: 0 at least one answer, 1 every answer failed (each says why), 2 bad usage\n"
    "or a model that cannot be asked at all (no endpoint, the key's variable unset).\n";

enum { OPT_LLM = 1, OPT_LLM_OPTION, OPT_LLM_REPLAY, OPT_PROMPT, OPT_SYSTEM, OPT_ANSWERS,
       OPT_SEED, OPT_STORE };

#define MAX_LLM_OPTIONS 64

static void print_text(const char *model, const tforge_llm_answer *answers, uint32_t n,
                       tforge_llm_usage u)
{
    for (uint32_t i = 0; i < n; i++) {
        const tforge_llm_answer *a = &answers[i];
        if (a->text)
            printf("--- answer %u of %u (%llu + %llu tokens, %.2f s)\n%s\n", i + 1, n,
                   (unsigned long long)a->prompt_tokens,
                   (unsigned long long)a->completion_tokens, a->seconds, a->text);
        else
            printf("--- answer %u of %u failed: %s\n", i + 1, n, a->error);
    }
    printf("--- model %s: %llu request%s (%llu replayed), %llu answer%s (%llu failed), "
           "%llu prompt + %llu completion tokens, %.2f s\n",
           model, (unsigned long long)u.requests, u.requests == 1 ? "" : "s",
           (unsigned long long)u.replayed, (unsigned long long)u.answers,
           u.answers == 1 ? "" : "s", (unsigned long long)u.failed,
           (unsigned long long)u.prompt_tokens, (unsigned long long)u.completion_tokens,
           u.seconds);
}

static int print_json(const char *model, const tforge_llm_answer *answers, uint32_t n,
                      tforge_llm_usage u)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "model", model);
    cJSON *list = cJSON_AddArrayToObject(root, "answers");
    for (uint32_t i = 0; i < n; i++) {
        cJSON *a = cJSON_CreateObject();
        if (answers[i].text)
            cJSON_AddStringToObject(a, "text", answers[i].text);
        else
            cJSON_AddStringToObject(a, "error", answers[i].error);
        cJSON_AddNumberToObject(a, "prompt_tokens", (double)answers[i].prompt_tokens);
        cJSON_AddNumberToObject(a, "completion_tokens", (double)answers[i].completion_tokens);
        cJSON_AddNumberToObject(a, "seconds", answers[i].seconds);
        cJSON_AddItemToArray(list, a);
    }
    cJSON *usage = cJSON_AddObjectToObject(root, "usage");
    cJSON_AddNumberToObject(usage, "requests", (double)u.requests);
    cJSON_AddNumberToObject(usage, "replayed", (double)u.replayed);
    cJSON_AddNumberToObject(usage, "answers", (double)u.answers);
    cJSON_AddNumberToObject(usage, "failed", (double)u.failed);
    cJSON_AddNumberToObject(usage, "prompt_tokens", (double)u.prompt_tokens);
    cJSON_AddNumberToObject(usage, "completion_tokens", (double)u.completion_tokens);
    cJSON_AddNumberToObject(usage, "seconds", u.seconds);
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text)
        return TFORGE_EXIT_FAILED;
    puts(text);
    free(text);
    return TFORGE_EXIT_OK;
}

static int run(const cli_command *command, int argc, char **argv)
{
    static const struct option options[] = {{"llm", required_argument, NULL, OPT_LLM},
                                            {"llm-option", required_argument, NULL, OPT_LLM_OPTION},
                                            {"llm-replay", no_argument, NULL, OPT_LLM_REPLAY},
                                            {"prompt-file", required_argument, NULL, OPT_PROMPT},
                                            {"system-file", required_argument, NULL, OPT_SYSTEM},
                                            {"answers", required_argument, NULL, OPT_ANSWERS},
                                            {"seed", required_argument, NULL, OPT_SEED},
                                            {"store", required_argument, NULL, OPT_STORE},
                                            CLI_COMMON_LONG_OPTIONS,
                                            {0, 0, 0, 0}};
    /* the verb first, as the usage writes it: its options follow */
    int asked = argc > 1 && strcmp(argv[1], "ask") == 0;
    if (asked) {
        argc--;
        argv++;
    }
    cli_common common = {0};
    const char *llm = NULL, *prompt_path = NULL, *system_path = NULL, *db = NULL;
    const char *llm_options[MAX_LLM_OPTIONS];
    size_t n_llm_options = 0;
    int replay = 0;
    unsigned long answers = 1;
    unsigned long long seed = 0;
    const char *given[OPT_STORE + 1] = {0};
    for (int opt, at = -1; (opt = getopt_long(argc, argv, CLI_COMMON_SHORT_OPTIONS, options,
                                              &at)) != -1;
         at = -1) {
        char *end;
        int rc = 0;
        if (at >= 0 && opt <= OPT_STORE && opt != OPT_LLM_OPTION && opt != OPT_LLM_REPLAY &&
            (rc = cli_once(command, &given[opt], options[at].name, optarg)))
            return rc;
        switch (opt) {
        case OPT_LLM: llm = optarg; break;
        case OPT_LLM_OPTION:
            if (n_llm_options == MAX_LLM_OPTIONS)
                return cli_usage_error(command, "--llm-option: at most %d", MAX_LLM_OPTIONS);
            llm_options[n_llm_options++] = optarg;
            break;
        case OPT_LLM_REPLAY: replay = 1; break;
        case OPT_PROMPT:
            prompt_path = optarg;
            rc = cli_path(command, "--prompt-file", optarg);
            break;
        case OPT_SYSTEM:
            system_path = optarg;
            rc = cli_path(command, "--system-file", optarg);
            break;
        case OPT_STORE:
            db = optarg;
            rc = cli_path(command, "--store", optarg);
            break;
        case OPT_ANSWERS:
            answers = strtoul(optarg, &end, 10);
            if (!*optarg || *end || answers < 1 || answers > 64)
                return cli_usage_error(command, "--answers expects 1 to 64, not '%s'", optarg);
            break;
        case OPT_SEED:
            seed = strtoull(optarg, &end, 10);
            if (!*optarg || *end || optarg[0] == '-')
                return cli_usage_error(command, "--seed expects a whole number, not '%s'",
                                       optarg);
            break;
        default: rc = cli_common_option(command, &common, opt, optarg, argv);
        }
        if (rc)
            return rc < 0 ? TFORGE_EXIT_OK : rc;
    }
    if (!asked)
        return cli_usage_error(command, "expected ask");
    if (optind != argc)
        return cli_usage_error(command, "unexpected argument '%s'", argv[optind]);
    if (!llm && !replay)
        return cli_usage_error(command, "name the model plugin with --llm ID, or replay a "
                               "store with --llm-replay");
    if (replay && !db)
        return cli_usage_error(command, "--llm-replay answers from a store: give --store DB");
    if (n_llm_options && !llm)
        return cli_usage_error(command, "--llm-option needs --llm ID");
    if (!prompt_path)
        return cli_usage_error(command, "--prompt-file FILE is required");

    char *prompt = NULL, *system = NULL;
    tforge_registry *registry = NULL;
    tforge_llm_backend backend = {0};
    tforge_store *store = NULL;
    tforge_llm_door *door = NULL;
    int exit_code = TFORGE_EXIT_OK, rc;
    size_t size;
    if ((rc = tforge_file_read(&prompt, &size, prompt_path)) ||
        (system_path && (rc = tforge_file_read(&system, &size, system_path))))
        goto fail;
    if (llm && ((rc = cli_load_plugins(&common, &registry)) ||
                (rc = tforge_llm_backend_open(&backend, registry, llm, llm_options,
                                              n_llm_options))))
        goto fail;
    if (db && (rc = tforge_store_open(&store, db)))
        goto fail;
    if ((rc = tforge_llm_door_open(&door, store, backend.interface, backend.state, replay)))
        goto fail;
    const tforge_llm_interface *iface;
    void *state;
    tforge_llm_door_interface(door, &iface, &state);
    tforge_llm_request request = {sizeof request, system, prompt, (uint32_t)answers, seed};
    const tforge_llm_answer *got = NULL;
    uint32_t n = 0;
    tforge_error_clear();
    if ((rc = iface->complete(state, &request, &got, &n)) < 0) {
        if (!tforge_error_last()->message[0] && n == 1 && got && got[0].error)
            tforge_error_set(rc, "%s", got[0].error);
        goto fail;
    }
    tforge_llm_usage usage = tforge_llm_door_usage(door);
    const char *model = iface->model(state);
    if (common.json)
        exit_code = print_json(model, got, n, usage);
    else
        print_text(model, got, n, usage);
    if (exit_code == TFORGE_EXIT_OK && usage.failed == usage.answers)
        exit_code = TFORGE_EXIT_FAILED;
    goto cleanup;
fail:
    exit_code = cli_fail(command);
cleanup:
    tforge_llm_door_close(door);
    tforge_store_close(store);
    tforge_llm_backend_close(&backend);
    tforge_registry_free(registry);
    free(prompt);
    free(system);
    return exit_code;
}

const cli_command cli_cmd_llm = {"llm", "ask a language model once (an endpoint checked)", help,
                                 run};
