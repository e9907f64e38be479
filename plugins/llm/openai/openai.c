/* The OpenAI-compatible chat-completions backend ("tforge.llm/1", id "openai"): POSTs
 * {endpoint}/chat/completions over libcurl, as vLLM, llama.cpp's server, Ollama, SGLang and the
 * hosted APIs serve it. Every failure of a request (HTTP status, timeout, refused connection,
 * malformed JSON, a choice without content) becomes an answer's `error` line; only a plugin that
 * cannot ask at all (no endpoint, the key's variable unset) fails the call. The key is read from
 * the environment at each call, put into the Authorization header only, and cut out of any text
 * the server sends back. */
#include <tforge/plugin/llm.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define ID "openai"
#define MAX_RESPONSE (16u << 20) /* an answer is source code: 16 MiB is far past any */
#define ERROR_SIZE 320
#define SEED_MASK 0x7fffffffu /* servers take a 32-bit signed seed (llama.cpp, vLLM) */

static const tforge_option_spec options[] = {
    {"endpoint", TFORGE_OPTION_TEXT, "", 0, 0, NULL,
     "required: the server's base URL, POSTed at {endpoint}/chat/completions "
     "(http://127.0.0.1:8080/v1)"},
    {"model", TFORGE_OPTION_TEXT, "", 0, 0, NULL,
     "the model asked for (empty: not sent, the server's own; recorded as \"default\")"},
    {"key_env", TFORGE_OPTION_TEXT, "", 0, 0, NULL,
     "the NAME of the environment variable holding the API key (empty: no key sent)"},
    {"timeout", TFORGE_OPTION_NUMBER, "300", 0.1, 86400, NULL, "seconds a request may take"},
    {"retries", TFORGE_OPTION_INTEGER, "3", 0, 20, NULL,
     "tries again after HTTP 429 and 5xx, waiting Retry-After seconds, else 1, 2, 4, ..."},
    {"retry_wait_max", TFORGE_OPTION_NUMBER, "60", 0, 3600, NULL,
     "the longest wait before a try again, seconds (caps Retry-After)"},
    {"temperature", TFORGE_OPTION_NUMBER, "0.7", 0, 2, NULL, "sampling temperature"},
    {"seed", TFORGE_OPTION_INTEGER, "", 0, SEED_MASK, NULL,
     "the sampling seed (empty: the run's; answers asked apart get seed, seed + 1, ...)"},
    {"max_tokens", TFORGE_OPTION_INTEGER, "4096", 1, 1e7, NULL, "the longest answer, tokens"},
    {"parallel", TFORGE_OPTION_INTEGER, "1", 1, 64, NULL,
     "1: the answers asked in one request (`n`), those missing asked again one by one; k > 1: "
     "each answer its own request, k at a time (servers that ignore `n`)"},
};
enum { O_ENDPOINT, O_MODEL, O_KEY_ENV, O_TIMEOUT, O_RETRIES, O_RETRY_WAIT_MAX, O_TEMPERATURE,
       O_SEED, O_MAX_TOKENS, O_PARALLEL, N_OPTIONS };

typedef struct openai_state {
    const tforge_host *host;
    char *endpoint, *model, *key_env;
    double timeout, retry_wait_max, temperature;
    uint32_t retries, max_tokens, parallel;
    int has_seed;
    uint32_t seed;
    /* the last call's answers, owned until the next call */
    tforge_llm_answer *answers;
    char **texts;
    uint32_t n_answers;
    tforge_llm_answer refused; /* the one answer of a call that could not ask */
} openai_state;

/* One HTTP request and what came back, tried up to 1 + retries times. */
typedef struct transfer {
    CURL *easy;
    char *body;         /* the request's JSON */
    uint32_t asked;     /* answers it asks for (`n`) */
    char *response;     /* the response's body so far */
    size_t size;
    int too_large;
    long status;
    double retry_after; /* the server's Retry-After, seconds; < 0 when none */
    uint32_t tries;
    double started, not_before, seconds;
    int active, done;
    char error[ERROR_SIZE]; /* the final failure, "" when the body is the answer */
    char curl_error[CURL_ERROR_SIZE];
} transfer;

static int fail(const tforge_host *host, int code, const char *format, ...)
{
    char message[512];
    int used = snprintf(message, sizeof message, "llm '" ID "': ");
    va_list ap;
    va_start(ap, format);
    vsnprintf(message + used, sizeof message - (size_t)used, format, ap);
    va_end(ap);
    return host && host->error ? host->error(host, code, message) : code;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ---- create / destroy ---- */

static void destroy(void *state);

static int parse_number(double *out, const tforge_option_spec *spec, const char *text)
{
    char *end = NULL;
    double v = strtod(text, &end);
    if (end == text || *end || !isfinite(v) || v < spec->min || v > spec->max ||
        (spec->type == TFORGE_OPTION_INTEGER && v != floor(v)))
        return -1;
    *out = v;
    return 0;
}

static int create(void **state, const tforge_host *host, const tforge_options_view *given)
{
    *state = NULL;
    const char *text[N_OPTIONS] = {0};
    double number[N_OPTIONS] = {0};
    for (uint32_t o = 0; o < N_OPTIONS; o++)
        text[o] = options[o].default_value;
    for (uint32_t i = 0; given && i < given->count; i++) {
        uint32_t o = 0;
        while (o < N_OPTIONS && strcmp(given->keys[i], options[o].name) != 0)
            o++;
        if (o == N_OPTIONS)
            return fail(host, TFORGE_PLUGIN_EINPUT, "unknown option '%s' (`tforge plugins "
                        "--options` lists those it takes)", given->keys[i]);
        text[o] = given->values[i];
    }
    for (uint32_t o = 0; o < N_OPTIONS; o++)
        if (options[o].type != TFORGE_OPTION_TEXT && text[o][0] &&
            parse_number(&number[o], &options[o], text[o]))
            return fail(host, TFORGE_PLUGIN_EINPUT, "option %s=%s: expected %s in [%g, %g]",
                        options[o].name, text[o],
                        options[o].type == TFORGE_OPTION_INTEGER ? "an integer" : "a number",
                        options[o].min, options[o].max);
    openai_state *s = calloc(1, sizeof *s);
    if (!s)
        return fail(host, TFORGE_PLUGIN_ENOMEM, "out of memory");
    s->host = host;
    s->endpoint = strdup(text[O_ENDPOINT]);
    s->model = strdup(text[O_MODEL]);
    s->key_env = strdup(text[O_KEY_ENV]);
    if (!s->endpoint || !s->model || !s->key_env) {
        destroy(s);
        return fail(host, TFORGE_PLUGIN_ENOMEM, "out of memory");
    }
    size_t len = strlen(s->endpoint);
    while (len && s->endpoint[len - 1] == '/') /* "…/v1/" and "…/v1" are one endpoint */
        s->endpoint[--len] = '\0';
    s->timeout = number[O_TIMEOUT];
    s->retries = (uint32_t)number[O_RETRIES];
    s->retry_wait_max = number[O_RETRY_WAIT_MAX];
    s->temperature = number[O_TEMPERATURE];
    s->has_seed = text[O_SEED][0] != '\0';
    s->seed = (uint32_t)number[O_SEED];
    s->max_tokens = (uint32_t)number[O_MAX_TOKENS];
    s->parallel = (uint32_t)number[O_PARALLEL];
    *state = s;
    return 0;
}

static void forget_answers(openai_state *s)
{
    for (uint32_t i = 0; i < 2 * s->n_answers; i++) /* each answer's content and error */
        free(s->texts[i]);
    free(s->texts);
    free(s->answers);
    s->texts = NULL;
    s->answers = NULL;
    s->n_answers = 0;
}

static void destroy(void *state)
{
    openai_state *s = state;
    if (!s)
        return;
    forget_answers(s);
    free(s->endpoint);
    free(s->model);
    free(s->key_env);
    free(s);
}

static const char *model(void *state)
{
    const openai_state *s = state;
    return s->model[0] ? s->model : "default";
}

/* ---- one request ---- */

static char *request_body(const openai_state *s, const tforge_llm_request *r, uint32_t n,
                          uint32_t seed)
{
    cJSON *root = cJSON_CreateObject();
    if (s->model[0])
        cJSON_AddStringToObject(root, "model", s->model);
    cJSON *messages = cJSON_AddArrayToObject(root, "messages");
    const char *roles[2] = {"system", "user"}, *contents[2] = {r->system, r->user};
    for (int i = 0; i < 2; i++) {
        if (!contents[i])
            continue;
        cJSON *m = cJSON_CreateObject();
        cJSON_AddStringToObject(m, "role", roles[i]);
        cJSON_AddStringToObject(m, "content", contents[i]);
        cJSON_AddItemToArray(messages, m);
    }
    cJSON_AddNumberToObject(root, "temperature", s->temperature);
    cJSON_AddNumberToObject(root, "max_tokens", s->max_tokens);
    cJSON_AddNumberToObject(root, "seed", seed);
    if (n > 1)
        cJSON_AddNumberToObject(root, "n", n);
    cJSON_AddFalseToObject(root, "stream");
    char *body = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return body;
}

static size_t on_body(char *data, size_t one, size_t n, void *context)
{
    transfer *t = context;
    size_t bytes = one * n;
    if (t->size + bytes > MAX_RESPONSE) {
        t->too_large = 1;
        return 0; /* curl ends the transfer with CURLE_WRITE_ERROR */
    }
    char *grown = realloc(t->response, t->size + bytes + 1);
    if (!grown)
        return 0;
    memcpy(grown + t->size, data, bytes);
    t->size += bytes;
    grown[t->size] = '\0';
    t->response = grown;
    return bytes;
}

/* Retry-After in seconds (the HTTP-date form is taken as absent: the backoff stands in). */
static size_t on_header(char *data, size_t one, size_t n, void *context)
{
    transfer *t = context;
    size_t bytes = one * n;
    static const char name[] = "retry-after:";
    if (bytes > sizeof name - 1 && strncasecmp(data, name, sizeof name - 1) == 0) {
        char value[32] = "";
        size_t len = bytes - (sizeof name - 1);
        memcpy(value, data + sizeof name - 1, len < sizeof value - 1 ? len : sizeof value - 1);
        char *end;
        double v = strtod(value, &end);
        if (end != value && isfinite(v) && v >= 0)
            t->retry_after = v;
    }
    return bytes;
}

static int transfer_setup(transfer *t, const openai_state *s, const char *url,
                          struct curl_slist *headers)
{
    free(t->response);
    t->response = NULL;
    t->size = 0;
    t->too_large = 0;
    t->status = 0;
    t->retry_after = -1;
    t->curl_error[0] = '\0';
    if (!t->easy && !(t->easy = curl_easy_init()))
        return -1;
    CURL *e = t->easy;
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, t->body);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, t);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, t);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t->curl_error);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)ceil(s->timeout * 1000));
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L); /* no SIGALRM: the host has threads */
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    return 0;
}

/* The server's own reason, from {"error": {"message": ...}} or {"error": "..."}, or "". */
static void server_reason(char *out, size_t size, const char *body)
{
    out[0] = '\0';
    cJSON *root = body ? cJSON_Parse(body) : NULL;
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(root, "error");
    const cJSON *m = cJSON_IsObject(e) ? cJSON_GetObjectItemCaseSensitive(e, "message") : e;
    if (cJSON_IsString(m))
        snprintf(out, size, ": %.200s", m->valuestring);
    cJSON_Delete(root);
    for (char *c = out; *c; c++) /* one line */
        if (*c == '\n' || *c == '\r')
            *c = ' ';
}

/* What follows a finished try: done (the body is the answer, or t->error says why not), or
 * another try scheduled. */
static void transfer_finished(transfer *t, const openai_state *s, CURLcode code, double at)
{
    t->active = 0;
    if (code == CURLE_OK)
        curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &t->status);
    int retryable = code == CURLE_OK && (t->status == 429 || t->status >= 500);
    if (retryable && t->tries <= s->retries) {
        double wait = t->retry_after >= 0 ? t->retry_after : ldexp(1.0, (int)t->tries - 1);
        t->not_before = at + fmin(wait, s->retry_wait_max);
        return;
    }
    t->done = 1;
    t->seconds = at - t->started;
    char reason[240];
    if (code == CURLE_OPERATION_TIMEDOUT)
        snprintf(t->error, sizeof t->error, "timed out after %g s", s->timeout);
    else if (t->too_large)
        snprintf(t->error, sizeof t->error, "an answer larger than %u MiB", MAX_RESPONSE >> 20);
    else if (code != CURLE_OK)
        snprintf(t->error, sizeof t->error, "%s: %s", curl_easy_strerror(code),
                 t->curl_error[0] ? t->curl_error : "no detail");
    else if (t->status != 200) {
        server_reason(reason, sizeof reason, t->response);
        snprintf(t->error, sizeof t->error, "HTTP %ld, %u tr%s%s", t->status, t->tries,
                 t->tries == 1 ? "y" : "ies", reason);
    }
}

/* Runs the transfers, `parallel` at a time, each tried again after 429 and 5xx. */
static int run_transfers(transfer *ts, uint32_t n, const openai_state *s,
                         struct curl_slist *headers)
{
    char url[2048];
    snprintf(url, sizeof url, "%s/chat/completions", s->endpoint);
    CURLM *multi = curl_multi_init();
    if (!multi)
        return -1;
    uint32_t left = n, active = 0;
    while (left) {
        double t_now = now(), next_wake = t_now + 0.1;
        for (uint32_t i = 0; i < n && active < s->parallel; i++) {
            transfer *t = &ts[i];
            if (t->done || t->active)
                continue;
            if (t->not_before > t_now) {
                next_wake = fmin(next_wake, t->not_before);
                continue;
            }
            if (transfer_setup(t, s, url, headers) || curl_multi_add_handle(multi, t->easy)) {
                curl_multi_cleanup(multi);
                return -1;
            }
            if (t->tries == 0) /* an answer's seconds: from its first try, not from the queue */
                t->started = t_now;
            t->active = 1;
            t->tries++;
            active++;
        }
        int running;
        curl_multi_perform(multi, &running);
        CURLMsg *msg;
        int queued;
        while ((msg = curl_multi_info_read(multi, &queued))) {
            if (msg->msg != CURLMSG_DONE)
                continue;
            for (uint32_t i = 0; i < n; i++)
                if (ts[i].easy == msg->easy_handle && ts[i].active) {
                    CURLcode code = msg->data.result;
                    curl_multi_remove_handle(multi, ts[i].easy);
                    active--;
                    transfer_finished(&ts[i], s, code, now());
                    left -= (uint32_t)ts[i].done;
                    break;
                }
        }
        if (left) {
            double wait = fmax(0.0, next_wake - now());
            curl_multi_poll(multi, NULL, 0, active ? (int)fmin(wait * 1000, 100) + 1
                                                   : (int)(wait * 1000) + 1, NULL);
        }
    }
    curl_multi_cleanup(multi);
    return 0;
}

/* ---- answers ---- */

/* Replaces every occurrence of the key in `text` (a server may echo it in an error). */
static void cut_key(char *text, const char *key)
{
    size_t len = key ? strlen(key) : 0;
    if (!text || len < 4)
        return;
    for (char *at; (at = strstr(text, key));)
        memset(at, '*', len);
}

static int add_answer(openai_state *s, char *text, const char *error, uint64_t prompt,
                      uint64_t completion, double seconds, const char *key)
{
    uint32_t i = s->n_answers;
    tforge_llm_answer *answers = realloc(s->answers, (i + 1) * sizeof *answers);
    if (answers)
        s->answers = answers;
    char **texts = answers ? realloc(s->texts, (i + 1) * 2 * sizeof *texts) : NULL;
    if (!texts) {
        free(text);
        return -1;
    }
    s->texts = texts;
    /* texts[2i] the content, texts[2i + 1] the error line: both owned until the next call */
    char *error_copy = error ? strdup(error) : NULL;
    cut_key(text, key);
    cut_key(error_copy, key);
    texts[2 * i] = text;
    texts[2 * i + 1] = error_copy;
    s->answers[i] = (tforge_llm_answer){text, error ? error_copy : NULL, prompt, completion,
                                        seconds};
    s->n_answers = i + 1;
    return error && !error_copy ? -1 : 0;
}

static uint64_t usage_of(const cJSON *usage, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(usage, name);
    return cJSON_IsNumber(v) && v->valuedouble >= 0 ? (uint64_t)v->valuedouble : 0;
}

/* The answers of one finished transfer, at most `room` of them; the response's usage goes to
 * the first, so that the answers' sums are the server's. */
static int take_answers(openai_state *s, const transfer *t, uint32_t room, const char *key)
{
    if (t->error[0])
        return add_answer(s, NULL, t->error, 0, 0, t->seconds, key);
    const char *parse_end = NULL;
    cJSON *root = cJSON_ParseWithOpts(t->response ? t->response : "", &parse_end, 1);
    if (!root) {
        char error[ERROR_SIZE];
        size_t at = t->response && parse_end ? (size_t)(parse_end - t->response) : 0;
        snprintf(error, sizeof error, "malformed JSON: not a JSON document at byte %zu of %zu",
                 at, t->size);
        return add_answer(s, NULL, error, 0, 0, t->seconds, key);
    }
    const cJSON *usage = cJSON_GetObjectItemCaseSensitive(root, "usage");
    uint64_t prompt = usage_of(usage, "prompt_tokens");
    uint64_t completion = usage_of(usage, "completion_tokens");
    const cJSON *choices = cJSON_GetObjectItemCaseSensitive(root, "choices");
    int rc = 0, taken = 0;
    if (!cJSON_IsArray(choices) || cJSON_GetArraySize(choices) == 0) {
        char reason[240];
        server_reason(reason, sizeof reason, t->response);
        char error[ERROR_SIZE];
        snprintf(error, sizeof error, "malformed JSON: no \"choices\"%s", reason);
        rc = add_answer(s, NULL, error, prompt, completion, t->seconds, key);
        taken = 1;
    }
    const cJSON *choice;
    cJSON_ArrayForEach(choice, choices)
    {
        if (taken == (int)room || rc)
            break;
        const cJSON *message = cJSON_GetObjectItemCaseSensitive(choice, "message");
        const cJSON *content = cJSON_GetObjectItemCaseSensitive(message, "content");
        const cJSON *finish = cJSON_GetObjectItemCaseSensitive(choice, "finish_reason");
        uint64_t p = taken ? 0 : prompt, c = taken ? 0 : completion;
        if (cJSON_IsString(content) && content->valuestring[0]) {
            char *text = strdup(content->valuestring);
            rc = text ? add_answer(s, text, NULL, p, c, t->seconds, key) : -1;
        } else {
            char error[ERROR_SIZE];
            snprintf(error, sizeof error, "no content%s%s%s",
                     cJSON_IsString(finish) ? " (finish_reason " : "",
                     cJSON_IsString(finish) ? finish->valuestring : "",
                     cJSON_IsString(finish) ? ")" : "");
            rc = add_answer(s, NULL, error, p, c, t->seconds, key);
        }
        taken++;
    }
    cJSON_Delete(root);
    return rc;
}

static void transfers_free(transfer *ts, uint32_t n)
{
    for (uint32_t i = 0; ts && i < n; i++) {
        curl_easy_cleanup(ts[i].easy);
        free(ts[i].body);
        free(ts[i].response);
    }
    free(ts);
}

/* Asks `count` requests of `asked` answers each (seeds seed, seed + 1, ...) and takes their
 * answers, at most `room` in all. */
static int ask(openai_state *s, const tforge_llm_request *r, uint32_t count, uint32_t asked,
               uint32_t seed, uint32_t room, struct curl_slist *headers, const char *key)
{
    transfer *ts = calloc(count, sizeof *ts);
    int rc = ts ? 0 : -1;
    for (uint32_t i = 0; !rc && i < count; i++) {
        ts[i].asked = asked;
        if (!(ts[i].body = request_body(s, r, asked, (seed + i) & SEED_MASK)))
            rc = -1;
    }
    if (!rc)
        rc = run_transfers(ts, count, s, headers);
    for (uint32_t i = 0; !rc && i < count && s->n_answers < room; i++)
        rc = take_answers(s, &ts[i], room - s->n_answers, key);
    transfers_free(ts, count);
    return rc;
}

static int complete(void *state, const tforge_llm_request *request,
                    const tforge_llm_answer **out, uint32_t *n)
{
    openai_state *s = state;
    forget_answers(s);
    *out = NULL;
    *n = 0;
    const char *key = s->key_env[0] ? getenv(s->key_env) : NULL;
    if (!s->endpoint[0] || (s->key_env[0] && !key)) {
        s->refused.error = !s->endpoint[0]
                            ? "no endpoint: give --llm-option endpoint=URL (the server's base "
                              "URL, http://127.0.0.1:8080/v1)"
                            : "the key's variable (option key_env) is not set in the environment";
        *out = &s->refused;
        *n = 1;
        return fail(s->host, TFORGE_PLUGIN_EINPUT, "%s", s->refused.error);
    }
    uint32_t wanted = request->answers ? request->answers : 1;
    uint32_t seed = (s->has_seed ? s->seed : (uint32_t)request->seed) & SEED_MASK;
    struct curl_slist *headers = curl_slist_append(NULL, "Content-Type: application/json");
    if (headers && key) {
        size_t size = strlen(key) + 32;
        char *line = malloc(size);
        struct curl_slist *more = NULL;
        if (line) {
            snprintf(line, size, "Authorization: Bearer %s", key);
            more = curl_slist_append(headers, line);
            memset(line, 0, size); /* curl keeps its own copy */
            free(line);
        }
        if (!more) {
            curl_slist_free_all(headers);
            headers = NULL;
        }
    }
    int rc = headers ? 0 : -1;
    if (!rc && s->parallel > 1)
        rc = ask(s, request, wanted, 1, seed, wanted, headers, key);
    else if (!rc) {
        rc = ask(s, request, 1, wanted, seed, wanted, headers, key);
        /* a server that ignores `n` sent fewer: the rest asked one by one, each its own seed */
        int answered = !rc && s->n_answers && s->answers[0].text;
        for (uint32_t k = 1; answered && !rc && s->n_answers < wanted; k++)
            rc = ask(s, request, 1, 1, seed + k, wanted, headers, key);
    }
    curl_slist_free_all(headers);
    if (rc) {
        forget_answers(s);
        return fail(s->host, TFORGE_PLUGIN_ENOMEM, "out of memory asking the model");
    }
    *out = s->answers;
    *n = s->n_answers;
    return 0;
}

/* ---- the module ---- */

static const tforge_llm_interface openai_interface = {sizeof openai_interface, create, complete,
                                                      model, destroy};

static const tforge_plugin_descriptor descriptor = {
    .id = ID,
    .version = "1.0.0",
    .description = "a model behind the OpenAI-compatible chat-completions protocol (vLLM, "
                   "llama.cpp's server, Ollama, SGLang, hosted APIs), over libcurl",
    .interface_id = TFORGE_LLM_INTERFACE_ID,
    .interface = &openai_interface,
    .options = options,
    .n_options = N_OPTIONS};

static int init(const tforge_host *host, const char *path)
{
    (void)path;
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return fail(host, TFORGE_PLUGIN_ERROR, "libcurl could not start");
    return 0;
}

static void deinit(void)
{
    curl_global_cleanup();
}

static uint32_t count(void)
{
    return 1;
}

static const tforge_plugin_descriptor *get(uint32_t index)
{
    return index == 0 ? &descriptor : NULL;
}

TFORGE_PLUGIN_EXPORT const tforge_plugin_module TFORGE_PLUGIN_ENTRY_NAME = {
    TFORGE_PLUGIN_ABI_VERSION_INIT, ID, init, deinit, count, get};
