/* A candidate's identity through a real worker: the task's baselines mapped to points when it
 * loads, each candidate's digest (the kernel file's, or its variant's), and candidates with a
 * source no transform made (a hand edit of the kernel, as a model would propose) evaluated by
 * the interpret backend, their sources kept once in the store by digest, and named in the
 * report. This executable is also its own worker process (`__worker`). */
#include "backend.h"
#include "digest.h"
#include "file.h"
#include "loop.h"
#include "registry.h"
#include "replay.h"
#include "store.h"
#include "task.h"
#include "tforge/error.h"
#include "tune_report.h"
#include "worker.h"

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
#define LINE "tl.store(out_ptr + offs, x + y, mask=mask)"

static void check(int rc)
{
    if (rc)
        fail_msg("%s", tforge_error_last()->message);
}

/* The kernel file's text with its store line replaced by `line`. */
static char *edited(const char *text, const char *line)
{
    const char *at = strstr(text, LINE);
    assert_non_null(at);
    size_t before = (size_t)(at - text), size = strlen(text) + strlen(line) + 1;
    char *out = malloc(size);
    snprintf(out, size, "%.*s%s%s", (int)before, text, line, at + strlen(LINE));
    return out;
}

static void foreign_sources_flow_to_the_store_and_the_report(void **state)
{
    (void)state;
    tforge_worker *worker = NULL;
    tforge_task *task = NULL;
    tforge_worker_options wo = TFORGE_WORKER_OPTIONS_INIT;
    wo.name = "task";
    check(tforge_worker_start(&worker, &wo));
    check(tforge_task_load(&task, worker, TASK, 120000));

    /* the baseline {"BLOCK": 128, "num_warps": 4, "num_stages": 1} is mapped when loaded */
    const tforge_level *point = tforge_task_baseline_point(task, 0);
    assert_non_null(point);
    char *key = NULL;
    check(tforge_space_key(&key, task->space, point));
    assert_string_equal(key, "128,4,1");
    free(key);

    char *kernel = NULL;
    size_t size = 0;
    check(tforge_file_read(&kernel, &size, task->source));
    char *same = edited(kernel, "tl.store(out_ptr + offs, y + x, mask=mask)  # a hand edit");
    char *wrong = edited(kernel, "tl.store(out_ptr + offs, x - y, mask=mask)");
    char kernel_digest[TFORGE_DIGEST_SIZE], same_digest[TFORGE_DIGEST_SIZE];
    tforge_digest_text(kernel_digest, kernel, size);
    tforge_digest_text(same_digest, same, strlen(same));

    char db[600];
    snprintf(db, sizeof db, "%s/identity.db", tmpdir);
    unlink(db);
    tforge_store *store = NULL;
    tforge_recording *described = NULL;
    tforge_registry *reg = NULL;
    int64_t run = 0;
    tforge_store_run like = {.source = task->path, .strategy = "exhaustive", .budget = 1};
    check(tforge_store_open(&store, db));
    check(tforge_store_begin_run(&run, store, &like));
    check(tforge_recording_describe_space(&described, task->space, NULL, task->kernel));
    check(tforge_registry_new(&reg));
    check(tforge_registry_add_static(reg, &tforge_static_exhaustive, "builtin:exhaustive"));

    tforge_backend backend = {0};
    tforge_backend_args args = TFORGE_BACKEND_ARGS_INIT;
    args.task = task;
    args.space = task->space;
    args.compile_workers = 1;
    check(tforge_backend_open(&backend, &tforge_backend_interpret, &args));
    tforge_candidate baselines[] = {
        {.point = point, .config = task->baselines[0]},
        {.point = point, .config = task->baselines[0], .source = same},
        {.point = NULL, .config = task->baselines[0], .source = wrong},
    };
    tforge_run_record record = {store, run, described, NULL, NULL};
    tforge_loop_options lo = TFORGE_LOOP_OPTIONS_INIT;
    lo.strategy = "exhaustive";
    lo.budget = 1;
    lo.final_rounds = 0;
    lo.baselines = baselines;
    lo.n_baselines = 3;
    lo.record = &record;
    tforge_loop_outcome out = {0};
    check(tforge_loop_run(&out, reg, task->space, &backend, &lo));
    /* a variant evaluated twice in a row: the runner is sent its text once, then its digest */
    tforge_candidate twice[2] = {baselines[2], baselines[2]};
    tforge_measurement again[2];
    check(tforge_backend_evaluate(&backend, twice, 2, again));
    assert_int_equal(again[0].status, TFORGE_STATUS_WRONG);
    assert_int_equal(again[1].status, TFORGE_STATUS_WRONG);
    tforge_backend_close(&backend);

    /* the worker ran each source: the hand edits as written */
    assert_int_equal(out.n_evals, 4);
    assert_int_equal(out.evals[0].m.status, TFORGE_STATUS_OK);
    assert_int_equal(out.evals[1].m.status, TFORGE_STATUS_OK);
    assert_int_equal(out.evals[2].m.status, TFORGE_STATUS_WRONG);
    assert_string_equal(out.evals[0].digest, kernel_digest);
    assert_string_equal(out.evals[3].digest, kernel_digest); /* nothing rewritten */
    assert_string_equal(out.evals[1].digest, same_digest);
    assert_string_not_equal(out.evals[2].digest, same_digest);

    /* the store: each source once, by digest; the same point with its own source keyed apart */
    char *text = NULL;
    check(tforge_store_source(&text, store, same_digest));
    assert_string_equal(text, same);
    free(text);
    check(tforge_store_source(&text, store, kernel_digest));
    assert_string_equal(text, kernel);
    free(text);
    check(tforge_store_source(&text, store, out.evals[2].digest));
    assert_string_equal(text, wrong);
    free(text);
    int64_t count = 0;
    check(tforge_store_count(&count, store, run));
    assert_int_equal(count, 4);

    /* the report names the candidates with sources of their own */
    for (size_t i = 0; i < out.n_evals; i++)
        if (!out.evals[i].config)
            check(tforge_task_config(&out.evals[i].config, task, out.evals[i].point));
    tforge_report_tune report = {0};
    report.task_arg = TASK;
    report.backend = "interpret";
    report.backend_note = "";
    report.strategy = "exhaustive";
    report.kernel = task->kernel;
    report.task_path = task->path;
    report.source = task->source;
    report.outcome = &out;
    report.space = task->space;
    char md[700];
    check(tforge_report_write_tune(tmpdir, &report));
    snprintf(md, sizeof md, "%s/report.md", tmpdir);
    char *written = NULL;
    check(tforge_file_read(&written, &size, md));
    char expected[200];
    snprintf(expected, sizeof expected, "with a source of its own (`%s`) | ok |", same_digest);
    assert_non_null(strstr(written, expected));
    snprintf(expected, sizeof expected, "with a source of its own (`%s`) | wrong |",
             out.evals[2].digest);
    assert_non_null(strstr(written, expected));
    free(written);

    tforge_loop_outcome_dispose(&out);
    tforge_registry_free(reg);
    tforge_recording_free(described);
    tforge_store_close(store);
    free(same);
    free(wrong);
    free(kernel);
    tforge_task_free(task);
    tforge_worker_free(worker);
}

int main(int argc, char **argv)
{
    if (started_as_worker(argc, argv)) /* the pool starting one of its workers */
        return tforge_worker_child_main();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(foreign_sources_flow_to_the_store_and_the_report),
    };
    return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
