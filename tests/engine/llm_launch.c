/* The launch check of a model's proposals: the first candidate of a proposal that passed its
 * checks is profiled once more, and where the profiler saw no launch of the task's kernel, the
 * candidate fails with that reason; the kernel file's own candidates are never asked. Run in the
 * interpreter with the test profiler `launches` (tests/fixtures/profilers), which sees the
 * kernels its option `seen` names. This executable is also its own worker process (`__worker`). */
#include "backend.h"
#include "file.h"
#include "task.h"
#include "tforge/error.h"
#include "worker.h"

#include <cjson/cJSON.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "support/own_worker.h"

#define LLM TFORGE_SOURCE_DIR "/tests/fixtures/llm"
#define NO_LAUNCH "the profiler saw no launch of row_sum while it was timed"

static void check(int rc)
{
    if (rc)
        fail_msg("%s", tforge_error_last()->message);
}

#include "support/canned_answer.h"

typedef struct fixture {
    tforge_worker *worker;
    tforge_task *task;
    tforge_level *baseline, *proposal, *proposal_other; /* the last: another config of it */
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    tforge_worker_options wo = TFORGE_WORKER_OPTIONS_INIT;
    wo.name = "task";
    check(tforge_worker_start(&f->worker, &wo));
    check(tforge_task_load(&f->task, f->worker, LLM "/task.json", 120000));
    char *good = good_source();
    uint32_t level = 0;
    check(tforge_task_add_proposal(f->task, good, &level));
    free(good);
    uint32_t dims = tforge_space_dims(f->task->space), variant = dims - 1;
    const tforge_level *baseline = tforge_task_baseline_point(f->task, 0);
    f->baseline = calloc(dims, sizeof *f->baseline);
    f->proposal = calloc(dims, sizeof *f->proposal);
    f->proposal_other = calloc(dims, sizeof *f->proposal_other);
    memcpy(f->baseline, baseline, dims * sizeof *baseline);
    memcpy(f->proposal, baseline, dims * sizeof *baseline);
    f->proposal[variant] = (tforge_level)level;
    memcpy(f->proposal_other, f->proposal, dims * sizeof *baseline);
    f->proposal_other[0] = f->proposal[0] ? 0 : 1; /* the other BLOCK */
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    free(f->baseline);
    free(f->proposal);
    free(f->proposal_other);
    tforge_task_free(f->task);
    tforge_worker_free(f->worker);
    free(f);
    return 0;
}

/* The points evaluated in one interpreter backend with profiler `profiler` and its `options`. */
static void evaluate(const fixture *f, const char *profiler, const char *const *options,
                     tforge_level *const *points, size_t n, tforge_measurement *out)
{
    tforge_backend backend = {0};
    tforge_backend_args args = TFORGE_BACKEND_ARGS_INIT;
    args.task = f->task;
    args.space = f->task->space;
    args.compile_workers = 1;
    args.profiler = profiler;
    args.profiler_options = options;
    check(tforge_backend_open(&backend, &tforge_backend_interpret, &args));
    for (size_t i = 0; i < n; i++) {
        tforge_candidate c = {.point = points[i]};
        check(tforge_backend_identify(&backend, &c));
        check(tforge_backend_evaluate(&backend, &c, 1, &out[i]));
        tforge_candidate_forget(&c);
    }
    tforge_backend_close(&backend);
}

static void a_proposal_whose_kernel_ran_passes(void **state)
{
    const fixture *f = *state;
    const char *options[] = {"seen=row_sum", NULL};
    tforge_level *points[] = {f->proposal};
    tforge_measurement m;
    evaluate(f, "launches", options, points, 1, &m);
    assert_int_equal(m.status, TFORGE_STATUS_OK);
}

/* Nothing launched, or only another kernel (torch's, say): the proposal fails with the reason,
 * its other configs with it; the kernel file's own candidate is not asked. */
static void a_proposal_whose_kernel_did_not_run_fails(void **state)
{
    const fixture *f = *state;
    const char *none[] = {"seen=", NULL}, *other[] = {"seen=reduce_kernel", NULL};
    const char *const *cases[] = {none, other};
    for (int k = 0; k < 2; k++) {
        tforge_level *points[] = {f->baseline, f->proposal, f->proposal_other};
        tforge_measurement m[3];
        evaluate(f, "launches", cases[k], points, 3, m);
        assert_int_equal(m[0].status, TFORGE_STATUS_OK);
        assert_int_equal(m[1].status, TFORGE_STATUS_RUNTIME);
        assert_string_equal(m[1].message, NO_LAUNCH);
        assert_int_equal(m[2].status, TFORGE_STATUS_RUNTIME);
        assert_string_equal(m[2].message, NO_LAUNCH);
    }
}

/* Counters refused, or no profiler in the interpreter: the check is skipped. */
static void without_a_profiler_that_counts_the_check_is_skipped(void **state)
{
    const fixture *f = *state;
    const char *refused[] = {"seen=", "refuse=1", NULL};
    tforge_level *points[] = {f->proposal, f->proposal_other};
    tforge_measurement m[2];
    evaluate(f, "launches", refused, points, 2, m);
    assert_int_equal(m[0].status, TFORGE_STATUS_OK);
    assert_int_equal(m[1].status, TFORGE_STATUS_OK);
    evaluate(f, NULL, NULL, points, 1, m);
    assert_int_equal(m[0].status, TFORGE_STATUS_OK);
}

int main(int argc, char **argv)
{
    if (started_as_worker(argc, argv)) /* the pool starting one of its workers */
        return tforge_worker_child_main();
    setenv("TFORGE_PLUGIN_PATH", PROFILER_MODULES, 1); /* the workers find `launches` there */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_proposal_whose_kernel_ran_passes),
        cmocka_unit_test(a_proposal_whose_kernel_did_not_run_fails),
        cmocka_unit_test(without_a_profiler_that_counts_the_check_is_skipped),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
