/* A model's answers, from the canned-answers plugin (tests/fixtures/llm/canned.c, loaded as a
 * module): each checked before anything of it runs, then the accepted ones evaluated as
 * candidates with a source of their own by the interpret backend. Every hostile or broken answer
 * ends as a proposal refused with its reason or a failed candidate with its status and message,
 * never an error of the engine. This executable is also its own worker process (`__worker`). */
#include "backend.h"
#include "file.h"
#include "proposal.h"
#include "registry.h"
#include "task.h"
#include "tforge/error.h"
#include "worker.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "support/own_worker.h"

#define LLM TFORGE_SOURCE_DIR "/tests/fixtures/llm"

static void check(int rc)
{
    if (rc)
        fail_msg("%s", tforge_error_last()->message);
}

static void has(const char *text, const char *part)
{
    if (!text || !strstr(text, part))
        fail_msg("expected \"%s\" in: %s", part, text ? text : "(null)");
}

typedef struct canned {
    tforge_registry *registry;
    const tforge_llm_interface *llm;
    void *state;
} canned;

/* The canned plugin, loaded from its module, serving `only` (NULL: every answer). */
static void open_canned(canned *c, const char *only)
{
    check(tforge_registry_new(&c->registry));
    check(tforge_registry_load_file(c->registry, CANNED_MODULE));
    const tforge_plugin_record *r = tforge_registry_find(c->registry, TFORGE_LLM_INTERFACE_ID,
                                                         "canned");
    assert_non_null(r);
    c->llm = tforge_plugin_interface(r, TFORGE_LLM_INTERFACE_ID);
    assert_non_null(c->llm);
    const char *keys[] = {"answers", "only"}, *values[] = {LLM "/answers.json", only};
    tforge_options_view options = {sizeof options, only ? 2 : 1, keys, values};
    check(c->llm->create(&c->state, tforge_registry_host(), &options));
}

static void close_canned(canned *c)
{
    c->llm->destroy(c->state);
    tforge_registry_free(c->registry);
}

static char *kernel_file(void)
{
    char *text = NULL;
    size_t size = 0;
    check(tforge_file_read(&text, &size, LLM "/rowsum.py"));
    return text;
}

static tforge_proposal_request request_of(const canned *c, const char *source, uint32_t answers)
{
    return (tforge_proposal_request){c->llm, c->state, "the rules", "the kernel", answers, 7,
                                     "row_sum", source, NULL, 120000};
}

static void every_answer_is_checked_before_it_runs(void **state)
{
    (void)state;
    canned c;
    open_canned(&c, NULL);
    char *source = kernel_file();
    tforge_proposal_request r = request_of(&c, source, 8);
    tforge_proposal *p = NULL;
    size_t n = 0;
    check(tforge_proposal_ask(&p, &n, &r));
    assert_int_equal(n, 8);
    /* good, wrong, no_compile and hangs pass what can be read; only running them tells */
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(p[i].state, TFORGE_PROPOSAL_ACCEPTED);
        assert_null(p[i].reason);
        has(p[i].source, "def row_sum(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):");
        assert_int_equal(strncmp(p[i].digest, "fnv1a64:", 8), 0);
    }
    assert_int_equal(p[0].prompt_tokens, 1200);
    assert_int_equal(p[0].completion_tokens, 310);
    assert_true(p[0].seconds == 2.5);
    char *diagnosis = tforge_proposal_diagnosis(&p[0]);
    assert_string_equal(diagnosis, "The row is read one element at a time; load a block and "
                                   "reduce it.");
    free(diagnosis);
    /* imports_os, torch_computes, caches, no_code: refused, each with its reason */
    const char *reasons[] = {"imports os", "calls .sum() outside the kernel",
                             "decorated with _remember", "holds no code block"};
    for (size_t i = 4; i < 8; i++) {
        assert_int_equal(p[i].state, TFORGE_PROPOSAL_REFUSED);
        has(p[i].reason, reasons[i - 4]);
        assert_null(p[i].source);
        assert_string_equal(p[i].digest, "");
    }
    tforge_proposals_free(p, n);

    /* the transport's failure, then nothing left: proposals without an answer, with the reason */
    check(tforge_proposal_ask(&p, &n, &r));
    assert_int_equal(n, 1);
    assert_int_equal(p[0].state, TFORGE_PROPOSAL_NO_ANSWER);
    assert_string_equal(p[0].reason, "HTTP 429, 3 tries");
    assert_null(p[0].answer);
    tforge_proposals_free(p, n);
    check(tforge_proposal_ask(&p, &n, &r));
    assert_int_equal(p[0].state, TFORGE_PROPOSAL_NO_ANSWER);
    has(p[0].reason, "no canned answer left");
    tforge_proposals_free(p, n);
    free(source);
    close_canned(&c);
}

/* The accepted answers as candidates: the good one checks, the others fail with their status and
 * message; the one that hangs is ended by the check's timeout and its worker replaced. */
static void accepted_answers_are_candidates_like_any_other(void **state)
{
    (void)state;
    canned c;
    open_canned(&c, "good,wrong,no_compile,hangs");
    char *source = kernel_file();
    tforge_proposal_request r = request_of(&c, source, 4);
    tforge_proposal *p = NULL;
    size_t n = 0;
    check(tforge_proposal_ask(&p, &n, &r));
    assert_int_equal(n, 4);

    tforge_worker *worker = NULL;
    tforge_task *task = NULL;
    tforge_worker_options wo = TFORGE_WORKER_OPTIONS_INIT;
    wo.name = "task";
    check(tforge_worker_start(&worker, &wo));
    check(tforge_task_load(&task, worker, LLM "/task.json", 120000));
    tforge_backend backend = {0};
    tforge_backend_args args = TFORGE_BACKEND_ARGS_INIT;
    args.task = task;
    args.space = task->space;
    args.compile_workers = 1;
    args.check_timeout_ms = 20000;
    check(tforge_backend_open(&backend, &tforge_backend_interpret, &args));
    tforge_candidate candidates[4];
    tforge_measurement m[4];
    for (size_t i = 0; i < 4; i++)
        candidates[i] = (tforge_candidate){.config = task->baselines[0], .source = p[i].source};
    check(tforge_backend_evaluate(&backend, candidates, 4, m));
    assert_int_equal(m[0].status, TFORGE_STATUS_OK);
    assert_int_equal(m[1].status, TFORGE_STATUS_WRONG);
    has(m[1].message, "out");
    assert_true(m[2].status == TFORGE_STATUS_COMPILE || m[2].status == TFORGE_STATUS_RUNTIME);
    has(m[2].message, "lod");
    assert_int_equal(m[3].status, TFORGE_STATUS_TIMEOUT);
    assert_true(tforge_backend_restarts(&backend) >= 1);
    tforge_backend_close(&backend);
    tforge_task_free(task);
    tforge_worker_free(worker);
    tforge_proposals_free(p, n);
    free(source);
    close_canned(&c);
}

int main(int argc, char **argv)
{
    if (started_as_worker(argc, argv)) /* the pool starting one of its workers */
        return tforge_worker_child_main();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_answer_is_checked_before_it_runs),
        cmocka_unit_test(accepted_answers_are_candidates_like_any_other),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
