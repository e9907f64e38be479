/* The host's door to a language model (engine/llm/door.c) over a fake plugin of this file: it
 * passes every answer through and stores it (failures too), a request asked again is a new
 * occurrence, replay serves the stored answers in the order they were asked without the plugin,
 * a request not stored is an answer with its reason, and the usage sums what was asked. */
#include "door.h"

#include "tforge/error.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "support/tmpdir.h"

/* ---- a fake model: answers "<user> #<call>", a second answer failing, tokens 3 and 5 ---- */

typedef struct fake {
    uint32_t calls;
    int refuse; /* complete fails as a misconfigured plugin does */
    char text[2][128];
    tforge_llm_answer answers[2];
} fake;

static int fake_complete(void *state, const tforge_llm_request *r, const tforge_llm_answer **out,
                         uint32_t *n)
{
    fake *f = state;
    if (f->refuse) {
        static const tforge_llm_answer refused = {NULL, "no endpoint", 0, 0, 0};
        *out = &refused;
        *n = 1;
        return tforge_error_set(TFORGE_EINPUT, "no endpoint");
    }
    f->calls++;
    *n = r->answers < 2 ? r->answers : 2;
    snprintf(f->text[0], sizeof f->text[0], "%s #%u", r->user, f->calls);
    f->answers[0] = (tforge_llm_answer){f->text[0], NULL, 3, 5, 0.25};
    f->answers[1] = (tforge_llm_answer){NULL, "HTTP 500, 4 tries", 0, 0, 0.5};
    *out = f->answers;
    return 0;
}

static const char *fake_model(void *state)
{
    (void)state;
    return "fake-1";
}

static const tforge_llm_interface fake_interface = {sizeof fake_interface, NULL, fake_complete,
                                                    fake_model, NULL};

static const char *fresh(const char *name)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    unlink(path);
    return path;
}

static tforge_store *open_store(const char *path)
{
    tforge_store *store = NULL;
    if (tforge_store_open(&store, path) < 0)
        fail_msg("%s", tforge_error_last()->message);
    return store;
}

/* Asks through the door's own interface, as a caller that cannot tell it from a plugin. */
static uint32_t ask(tforge_llm_door *door, const char *user, uint32_t answers,
                    const tforge_llm_answer **out)
{
    const tforge_llm_interface *iface;
    void *state;
    tforge_llm_door_interface(door, &iface, &state);
    tforge_llm_request r = {sizeof r, "the rules", user, answers, 42};
    uint32_t n = 0;
    if (iface->complete(state, &r, out, &n) < 0)
        fail_msg("%s", tforge_error_last()->message);
    return n;
}

static void stores_then_replays_in_order(void **state)
{
    (void)state;
    const char *path = fresh("door.db");
    fake f = {0};
    tforge_store *store = open_store(path);
    tforge_llm_door *door;
    assert_int_equal(tforge_llm_door_open(&door, store, &fake_interface, &f, 0), 0);
    const tforge_llm_answer *a;
    assert_int_equal(ask(door, "softmax", 2, &a), 2);
    assert_string_equal(a[0].text, "softmax #1");
    assert_string_equal(a[1].error, "HTTP 500, 4 tries");
    assert_int_equal(ask(door, "softmax", 2, &a), 2); /* the same request again: a new answer */
    assert_string_equal(a[0].text, "softmax #2");
    assert_int_equal(ask(door, "matmul", 1, &a), 1);
    tforge_llm_usage u = tforge_llm_door_usage(door);
    assert_int_equal(u.requests, 3);
    assert_int_equal(u.replayed, 0);
    assert_int_equal(u.answers, 5);
    assert_int_equal(u.failed, 2);
    assert_int_equal(u.prompt_tokens, 9);
    assert_int_equal(u.completion_tokens, 15);
    assert_true(u.seconds >= 0 && u.seconds < 5);
    tforge_llm_door_close(door);
    tforge_store_close(store);

    /* replay, without a plugin: the same answers in the order they were asked */
    store = open_store(path);
    assert_int_equal(tforge_llm_door_open(&door, store, NULL, NULL, 1), 0);
    const tforge_llm_interface *iface;
    void *door_state;
    tforge_llm_door_interface(door, &iface, &door_state);
    assert_string_equal(iface->model(door_state), "fake-1");
    assert_int_equal(ask(door, "softmax", 2, &a), 2);
    assert_string_equal(a[0].text, "softmax #1");
    assert_null(a[1].text);
    assert_string_equal(a[1].error, "HTTP 500, 4 tries");
    assert_int_equal(a[0].prompt_tokens, 3);
    assert_int_equal(ask(door, "softmax", 2, &a), 2);
    assert_string_equal(a[0].text, "softmax #2");
    assert_int_equal(ask(door, "softmax", 2, &a), 1); /* asked twice only */
    assert_string_equal(a[0].error, TFORGE_LLM_NOT_STORED);
    assert_int_equal(ask(door, "matmul", 2, &a), 1); /* asked for one answer, not two */
    assert_string_equal(a[0].error, TFORGE_LLM_NOT_STORED);
    assert_int_equal(ask(door, "matmul", 1, &a), 1);
    assert_string_equal(a[0].text, "matmul #3");
    u = tforge_llm_door_usage(door);
    assert_int_equal(u.requests, 5);
    assert_int_equal(u.replayed, 3);
    assert_int_equal(u.answers, 7);
    assert_int_equal(u.failed, 4);
    assert_int_equal(u.prompt_tokens, 9);
    assert_int_equal(f.calls, 3); /* the plugin was not asked */
    iface->destroy(door_state);   /* closes the door */
    tforge_store_close(store);
}

/* A request under another model's name is another request. */
static void the_model_is_part_of_the_request(void **state)
{
    (void)state;
    tforge_llm_request r = {sizeof r, "s", "u", 1, 1};
    char a[25], b[25], c[25];
    assert_int_equal(tforge_llm_request_digest(a, "m1", &r), 0);
    assert_int_equal(tforge_llm_request_digest(b, "m2", &r), 0);
    r.seed = 2;
    assert_int_equal(tforge_llm_request_digest(c, "m1", &r), 0);
    assert_string_not_equal(a, b);
    assert_string_not_equal(a, c);
    /* the fields are length-prefixed: moving text between them changes the digest */
    tforge_llm_request x = {sizeof x, "ab", "c", 1, 1}, y = {sizeof y, "a", "bc", 1, 1};
    assert_int_equal(tforge_llm_request_digest(a, "m", &x), 0);
    assert_int_equal(tforge_llm_request_digest(b, "m", &y), 0);
    assert_string_not_equal(a, b);
}

/* A stored request whose texts differ from the one asked (the digest met another text) is not
 * served as its answer. */
static void replay_checks_the_texts(void **state)
{
    (void)state;
    const char *path = fresh("collide.db");
    tforge_store *store = open_store(path);
    tforge_llm_request r = {sizeof r, "the rules", "softmax", 1, 42};
    char digest[25];
    assert_int_equal(tforge_llm_request_digest(digest, "fake-1", &r), 0);
    tforge_llm_answer answer = {"stolen", NULL, 0, 0, 0};
    tforge_store_llm_exchange x = {digest, 0, "fake-1", "the rules", "not softmax", 1, 42, 0.1, 1,
                                   &answer};
    assert_int_equal(tforge_store_record_llm(store, &x), 0);
    tforge_llm_door *door;
    fake f = {0};
    assert_int_equal(tforge_llm_door_open(&door, store, &fake_interface, &f, 1), 0);
    const tforge_llm_answer *a;
    assert_int_equal(ask(door, "softmax", 1, &a), 1);
    assert_string_equal(a[0].error, TFORGE_LLM_NOT_STORED);
    tforge_llm_door_close(door);
    tforge_store_close(store);
}

/* A plugin that cannot ask at all: its code and reason pass through, nothing stored. */
static void a_refusal_passes_through(void **state)
{
    (void)state;
    const char *path = fresh("refused.db");
    tforge_store *store = open_store(path);
    fake f = {.refuse = 1};
    tforge_llm_door *door;
    assert_int_equal(tforge_llm_door_open(&door, store, &fake_interface, &f, 0), 0);
    const tforge_llm_interface *iface;
    void *door_state;
    tforge_llm_door_interface(door, &iface, &door_state);
    tforge_llm_request r = {sizeof r, NULL, "u", 1, 0};
    const tforge_llm_answer *a;
    uint32_t n;
    assert_int_equal(iface->complete(door_state, &r, &a, &n), TFORGE_EINPUT);
    assert_int_equal(n, 1);
    assert_string_equal(a[0].error, "no endpoint");
    assert_int_equal(tforge_llm_door_usage(door).requests, 0);
    char *model = NULL;
    assert_int_equal(tforge_store_llm_latest_model(&model, store), TFORGE_ENOTFOUND);
    tforge_llm_door_close(door);
    /* no plugin and no replay: nothing to ask */
    assert_int_equal(tforge_llm_door_open(&door, store, NULL, NULL, 0), TFORGE_EINPUT);
    assert_null(door);
    tforge_store_close(store);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stores_then_replays_in_order),
        cmocka_unit_test(the_model_is_part_of_the_request),
        cmocka_unit_test(replay_checks_the_texts),
        cmocka_unit_test(a_refusal_passes_through),
    };
    return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
