#include "door.h"

#include "clock.h"
#include "digest.h"
#include "tforge/error.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How many times a digest was asked through this door: the next one's occurrence. */
typedef struct seen {
    char digest[TFORGE_DIGEST_SIZE];
    uint32_t times;
} seen;

struct tforge_llm_door {
    tforge_store *store;
    const tforge_llm_interface *plugin;
    void *plugin_state;
    int replay;
    char *model;                       /* replay without a plugin: the store's latest, or NULL */
    seen *seen;
    size_t n_seen, cap_seen;
    tforge_store_llm_exchange current; /* replay: the last answers served, owned until the next */
    tforge_llm_answer refused;         /* replay: the one answer to a request not stored */
    tforge_llm_usage usage;
};

static const char *door_model(void *state)
{
    tforge_llm_door *d = state;
    if (d->plugin)
        return d->plugin->model(d->plugin_state);
    return d->model ? d->model : "none";
}

static int append_field(char *buf, size_t size, size_t *used, const char *text)
{
    size_t len = text ? strlen(text) : 0;
    int w = snprintf(buf + *used, size - *used, "%zu%c", len, text ? ':' : '-');
    if (w < 0 || (size_t)w + len >= size - *used)
        return -1;
    *used += (size_t)w;
    memcpy(buf + *used, text ? text : "", len);
    *used += len;
    return 0;
}

int tforge_llm_request_digest(char out[TFORGE_DIGEST_SIZE], const char *model,
                              const tforge_llm_request *r)
{
    char numbers[64];
    snprintf(numbers, sizeof numbers, "%" PRIu32 " %" PRIu64, r->answers, r->seed);
    size_t size = 128 + strlen(model) + (r->system ? strlen(r->system) : 0) +
                  (r->user ? strlen(r->user) : 0) + sizeof numbers;
    char *buf = malloc(size);
    if (!buf)
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    size_t used = 0;
    /* the interface's id first: a change of what a request is changes every digest */
    int rc = append_field(buf, size, &used, TFORGE_LLM_INTERFACE_ID) |
             append_field(buf, size, &used, model) | append_field(buf, size, &used, r->system) |
             append_field(buf, size, &used, r->user) | append_field(buf, size, &used, numbers);
    if (!rc)
        tforge_digest_text(out, buf, used);
    free(buf);
    return rc ? tforge_error_set(TFORGE_ERROR, "a model's request: digest buffer too small") : 0;
}

/* The occurrence of this ask of `digest` (0 the first time), counted. */
static int next_occurrence(uint32_t *occurrence, tforge_llm_door *d, const char *digest)
{
    for (size_t i = 0; i < d->n_seen; i++)
        if (strcmp(d->seen[i].digest, digest) == 0) {
            *occurrence = d->seen[i].times++;
            return 0;
        }
    if (d->n_seen == d->cap_seen) {
        size_t cap = d->cap_seen ? 2 * d->cap_seen : 16;
        seen *grown = realloc(d->seen, cap * sizeof *grown);
        if (!grown)
            return tforge_error_set(TFORGE_ENOMEM, "out of memory");
        d->seen = grown;
        d->cap_seen = cap;
    }
    seen *s = &d->seen[d->n_seen++];
    memcpy(s->digest, digest, TFORGE_DIGEST_SIZE);
    s->times = 1;
    *occurrence = 0;
    return 0;
}

static int same_text(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static void count_answers(tforge_llm_usage *u, const tforge_llm_answer *answers, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        u->answers++;
        u->failed += !answers[i].text;
        u->prompt_tokens += answers[i].prompt_tokens;
        u->completion_tokens += answers[i].completion_tokens;
    }
}

/* Replay: the stored answers of this request, or one answer saying it is not stored. A stored
 * request whose texts differ (the digest's 64 bits met another text) is not this one. */
static int replay(tforge_llm_door *d, const char *digest, uint32_t occurrence, const char *model,
                  const tforge_llm_request *r, const tforge_llm_answer **out, uint32_t *n)
{
    tforge_store_llm_exchange *x = &d->current;
    int rc = d->store ? tforge_store_find_llm(x, d->store, digest, occurrence)
                      : TFORGE_ENOTFOUND;
    int found = rc == 0 && x->n > 0 && same_text(x->model, model) &&
                same_text(x->system, r->system) && same_text(x->user, r->user);
    if (rc < 0 && rc != TFORGE_ENOTFOUND)
        return rc;
    d->usage.requests++;
    if (!found) {
        tforge_store_llm_dispose(x);
        d->refused = (tforge_llm_answer){NULL, TFORGE_LLM_NOT_STORED, 0, 0, 0.0};
        *out = &d->refused;
        *n = 1;
        count_answers(&d->usage, *out, 1);
        return 0;
    }
    d->usage.replayed++;
    d->usage.seconds += x->seconds;
    count_answers(&d->usage, x->answers, x->n);
    *out = x->answers;
    *n = x->n;
    return 0;
}

static int door_complete(void *state, const tforge_llm_request *r, const tforge_llm_answer **out,
                         uint32_t *n)
{
    tforge_llm_door *d = state;
    *out = NULL;
    *n = 0;
    tforge_store_llm_dispose(&d->current);
    const char *model = door_model(d);
    char digest[TFORGE_DIGEST_SIZE];
    uint32_t occurrence = 0;
    int rc = tforge_llm_request_digest(digest, model, r);
    if (!rc)
        rc = next_occurrence(&occurrence, d, digest);
    if (rc)
        return rc;
    if (d->replay)
        return replay(d, digest, occurrence, model, r, out, n);
    double start = tforge_clock_s();
    rc = d->plugin->complete(d->plugin_state, r, out, n);
    double seconds = tforge_clock_s() - start;
    if (rc < 0) /* nothing was asked: the plugin's reason stands, nothing to keep */
        return rc;
    if (d->store) {
        tforge_store_llm_exchange x = {digest, occurrence, model, r->system, r->user, r->answers,
                                       r->seed, seconds, *n, *out};
        if ((rc = tforge_store_record_llm(d->store, &x)) < 0) {
            *out = NULL;
            *n = 0;
            return rc;
        }
    }
    d->usage.requests++;
    d->usage.seconds += seconds;
    count_answers(&d->usage, *out, *n);
    return 0;
}

static int door_create(void **state, const tforge_host *host, const tforge_options_view *options)
{
    (void)host;
    (void)options;
    *state = NULL;
    return tforge_error_set(TFORGE_ERROR, "a model's door is opened with tforge_llm_door_open");
}

static void door_destroy(void *state)
{
    tforge_llm_door_close(state);
}

static const tforge_llm_interface door_interface = {sizeof door_interface, door_create,
                                                    door_complete, door_model, door_destroy};

int tforge_llm_door_open(tforge_llm_door **out, tforge_store *store,
                         const tforge_llm_interface *plugin, void *plugin_state, int replay)
{
    *out = NULL;
    if (!replay && !plugin)
        return tforge_error_set(TFORGE_EINPUT, "a model's door: no model to ask (name one with "
                                "--llm ID, or replay the store with --llm-replay)");
    tforge_llm_door *d = calloc(1, sizeof *d);
    if (!d)
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    d->store = store;
    d->plugin = plugin;
    d->plugin_state = plugin_state;
    d->replay = replay;
    if (replay && !plugin && store) {
        int rc = tforge_store_llm_latest_model(&d->model, store);
        if (rc < 0 && rc != TFORGE_ENOTFOUND) {
            tforge_llm_door_close(d);
            return rc;
        }
        tforge_error_clear(); /* an empty store replays: every answer then says why */
    }
    *out = d;
    return 0;
}

void tforge_llm_door_interface(tforge_llm_door *door, const tforge_llm_interface **interface,
                               void **state)
{
    *interface = &door_interface;
    *state = door;
}

tforge_llm_usage tforge_llm_door_usage(const tforge_llm_door *door)
{
    return door->usage;
}

void tforge_llm_door_close(tforge_llm_door *door)
{
    if (!door)
        return;
    tforge_store_llm_dispose(&door->current);
    free(door->model);
    free(door->seen);
    free(door);
}
