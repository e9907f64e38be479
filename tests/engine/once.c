/* Each candidate's variant is made once and its text crosses to a worker once: the loop
 * identifies a candidate (its variant made by the transforms) and evaluate, the compiles asked for
 * ahead and the store take it from there; a compile worker is sent a variant's text once, then
 * its digest. The task is loaded by a real worker; the pool's workers are this executable too
 * (`__worker`), answering every compile and check "ok" and writing down what each request carried,
 * so the test needs no compiler. */
#define TFORGE_PLUGIN_ENTRY_NAME counting_transform
#include <tforge/sdk/transform.h>

#include "backend.h"
#include "digest.h"
#include "file.h"
#include "frame.h"
#include "loop.h"
#include "registry.h"
#include "task.h"
#include "tforge/error.h"
#include "worker.h"

#include <cjson/cJSON.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "support/own_worker.h"
#include "support/tmpdir.h"

extern const tforge_plugin_module tforge_static_exhaustive;

#define TASK TFORGE_SOURCE_DIR "/experiments/kernels/vector_add/task.json"
/* set for the pool's workers: where they write down each request */
#define REQUESTS_LOG "TFORGE_TEST_REQUESTS_LOG"

static void check(int rc)
{
    if (rc)
        fail_msg("%s", tforge_error_last()->message);
}

/* ---- a transform that counts the variants made: one boolean, a comment on the first line ---- */

static unsigned variants_made;

static int counting_create(void **state, const tforge_host *host,
                           const tforge_options_view *options, const tforge_transform_input *input)
{
    (void)options;
    tforge_sdk_xf_base *s = tforge_sdk_xf_new(sizeof *s, host, input);
    if (!s)
        return TFORGE_PLUGIN_ENOMEM;
    s->params[s->n_params++] = (tforge_transform_param){
        "counted", TFORGE_DIM_BOOLEAN, TFORGE_TRANSFORM_REWRITE, 0, NULL, 0, NULL,
        TFORGE_EFFECT_UNKNOWN};
    snprintf(s->description, sizeof s->description, "a comment, counted");
    *state = s;
    return 0;
}

static int counting_apply(void *state, const tforge_level *levels, const tforge_span_edit **edits,
                          uint32_t *n_edits)
{
    tforge_sdk_xf_base *s = state;
    tforge_sdk_xf_reset(&s->edits);
    int rc = 0;
    if (levels[0]) {
        variants_made++;
        rc = tforge_sdk_xf_edit(&s->edits, 0, 0, "# counted\n");
    }
    return tforge_sdk_xf_applied(s, rc, edits, n_edits);
}

TFORGE_SDK_XF_TRANSFORM("counting", "a comment on the first line, each variant made counted",
                        counting_create, counting_apply);

/* ---- the pool's workers: every compile and check "ok", each request written down ---- */

static int fake_worker(const char *log_path)
{
    int log = open(log_path, O_WRONLY | O_APPEND | O_CREAT, 0644);
    if (log < 0 || tforge_frame_write(4, "", 0)) /* ready */
        return 1;
    for (;;) {
        unsigned char h[4];
        if (tforge_frame_read_all(3, h, 4))
            return 0; /* the engine is done with it */
        size_t n = tforge_frame_length(h);
        char *text = malloc(n + 1);
        if (!text || tforge_frame_read_all(3, text, n))
            return 1;
        text[n] = '\0';
        cJSON *request = cJSON_Parse(text);
        free(text);
        const cJSON *args = cJSON_GetObjectItemCaseSensitive(request, "args");
        const char *function =
            cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(request, "function"));
        const char *digest = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(args, "digest"));
        int text_sent = cJSON_GetObjectItemCaseSensitive(args, "variant") != NULL;
        /* one line a request: the process, what it was asked, the variant's text or its digest */
        dprintf(log, "%d %s %s %s\n", (int)getpid(), function ? function : "?",
                text_sent ? "text" : "digest", digest ? digest : "-");
        cJSON_Delete(request);
        static const char ok[] = "{\"ok\": true, \"result\": {\"status\": \"ok\", \"message\": "
                                 "\"\", \"fatal\": false, \"registers\": 32, \"spill_stores\": 0, "
                                 "\"shared_bytes\": 0}}";
        if (tforge_frame_write(4, ok, strlen(ok)))
            return 1;
    }
}

/* ---- the fixture: the task with the counting transform ---- */

typedef struct fixture {
    tforge_worker *worker;
    tforge_task *task;
    tforge_registry *reg;
    char log[400];
} fixture;

static int setup(void **state)
{
    if (make_tmpdir(state))
        return -1;
    fixture *f = calloc(1, sizeof *f);
    tforge_worker_options wo = TFORGE_WORKER_OPTIONS_INIT;
    wo.name = "task";
    check(tforge_worker_start(&f->worker, &wo));
    check(tforge_task_load(&f->task, f->worker, TASK, 120000));
    check(tforge_registry_new(&f->reg));
    check(tforge_registry_add_static(f->reg, &tforge_static_exhaustive, "builtin:exhaustive"));
    check(tforge_registry_add_static(f->reg, &counting_transform, "test:counting"));
    const char *const ids[] = {"counting", NULL};
    check(tforge_task_use_transforms(f->task, f->reg, ids, NULL));
    snprintf(f->log, sizeof f->log, "%s/requests.log", tmpdir);
    /* the workers started from here on are the fakes */
    setenv(REQUESTS_LOG, f->log, 1);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    unsetenv(REQUESTS_LOG);
    tforge_registry_free(f->reg);
    tforge_task_free(f->task);
    tforge_worker_free(f->worker);
    free(f);
    return remove_tmpdir(state);
}

/* The requests written down so far, `function` ones only, into `lines` (at most `max`). */
static size_t requests(const fixture *f, const char *function, char (*lines)[200], size_t max)
{
    FILE *in = fopen(f->log, "r");
    size_t n = 0;
    char line[200], pid[32], fn[64];
    while (in && n < max && fgets(line, sizeof line, in))
        if (sscanf(line, "%31s %63s", pid, fn) == 2 && strcmp(fn, function) == 0)
            snprintf(lines[n++], sizeof *lines, "%s", line);
    if (in)
        fclose(in);
    return n;
}

static tforge_backend open_backend(const fixture *f, const tforge_backend_type *type,
                                   unsigned compile_workers)
{
    unlink(f->log);
    tforge_backend backend = {0};
    tforge_backend_args args = TFORGE_BACKEND_ARGS_INIT;
    args.task = f->task;
    args.space = f->task->space;
    args.compile_workers = compile_workers;
    check(tforge_backend_open(&backend, type, &args));
    return backend;
}

/* A tune with its next batch proposed (and compiled) ahead: every candidate's variant is made
 * once, by its identification, not again for the compile asked for ahead nor for the
 * evaluation; each evaluated candidate carries its variant's digest. */
static void a_candidates_variant_is_made_once(void **state)
{
    fixture *f = *state;
    const tforge_space *space = f->task->space;
    uint32_t dims = tforge_space_dims(space), counted = dims;
    for (uint32_t d = 0; d < dims; d++)
        if (strcmp(tforge_space_name(space, d), "counted") == 0)
            counted = d;
    assert_true(counted < dims);

    tforge_backend backend = open_backend(f, &tforge_backend_interpret, 2);
    tforge_candidate baseline = {.point = tforge_task_baseline_point(f->task, 0),
                                 .config = f->task->baselines[0]};
    assert_non_null(baseline.point);
    tforge_loop_options lo = TFORGE_LOOP_OPTIONS_INIT;
    lo.strategy = "exhaustive";
    lo.budget = 12;
    lo.batch = 3;
    lo.lookahead = 1;
    lo.final_rounds = 0;
    lo.baselines = &baseline;
    lo.n_baselines = 1;
    variants_made = 0;
    tforge_loop_outcome out = {0};
    check(tforge_loop_run(&out, f->reg, space, &backend, &lo));
    tforge_backend_close(&backend);

    unsigned rewritten = 0;
    for (size_t i = 0; i < out.n_evals; i++) {
        assert_int_equal(out.evals[i].m.status, TFORGE_STATUS_OK);
        assert_int_equal(strlen(out.evals[i].digest), TFORGE_DIGEST_SIZE - 1);
        rewritten += out.evals[i].point[counted] != 0;
    }
    assert_int_equal(out.n_evals, 13);
    assert_true(rewritten > 0);
    assert_int_equal(variants_made, rewritten);
    tforge_loop_outcome_dispose(&out);
}

/* Three configs of one variant and one of another on a single compile worker: the variant's
 * text goes with its first compile, the others name its digest. */
static void a_compile_worker_is_sent_a_variants_text_once(void **state)
{
    fixture *f = *state;
    char *kernel = NULL;
    size_t size = 0;
    check(tforge_file_read(&kernel, &size, f->task->source));
    size_t len = size + 32;
    char *one = malloc(len), *other = malloc(len);
    snprintf(one, len, "# one\n%s", kernel);
    snprintf(other, len, "# other\n%s", kernel);
    char one_digest[TFORGE_DIGEST_SIZE], other_digest[TFORGE_DIGEST_SIZE];
    tforge_digest_text(one_digest, one, strlen(one));
    tforge_digest_text(other_digest, other, strlen(other));

    tforge_backend backend = open_backend(f, &tforge_backend_compile, 1);
    tforge_candidate c[] = {
        {.config = "{\"BLOCK\": 128, \"num_warps\": 4, \"num_stages\": 1}", .source = one},
        {.config = "{\"BLOCK\": 256, \"num_warps\": 4, \"num_stages\": 1}", .source = one},
        {.config = "{\"BLOCK\": 512, \"num_warps\": 4, \"num_stages\": 1}", .source = one},
        {.config = "{\"BLOCK\": 512, \"num_warps\": 4, \"num_stages\": 1}", .source = other},
    };
    tforge_measurement m[4];
    check(tforge_backend_evaluate(&backend, c, 4, m));
    /* again, in a later batch: the worker still holds `other` */
    check(tforge_backend_evaluate(&backend, c + 3, 1, m + 3));
    tforge_backend_close(&backend);
    for (int i = 0; i < 4; i++)
        assert_int_equal(m[i].status, TFORGE_STATUS_OK);

    char lines[8][200];
    assert_int_equal(requests(f, "compile", lines, 8), 5); /* one compile a config and variant */
    const char *want[] = {"text", "digest", "digest", "text", "digest"};
    const char *digest[] = {one_digest, one_digest, one_digest, other_digest, other_digest};
    for (int i = 0; i < 5; i++) {
        char expected[160];
        snprintf(expected, sizeof expected, " compile %s %s\n", want[i], digest[i]);
        assert_non_null(strstr(lines[i], expected));
    }
    free(one);
    free(other);
    free(kernel);
}

int main(int argc, char **argv)
{
    if (started_as_worker(argc, argv)) { /* one of the workers */
        const char *log = getenv(REQUESTS_LOG);
        return log ? fake_worker(log) : tforge_worker_child_main();
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_candidates_variant_is_made_once),
        cmocka_unit_test(a_compile_worker_is_sent_a_variants_text_once),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
