/* The `variant` dimension: a model's verified proposals become its levels (level 0 the kernel
 * file as it is), the knobs searched at each, the transforms' edits at the file's level only;
 * a point at a proposal's level is identified by the proposal's source and checked in the
 * interpreter like any candidate. This executable is also its own worker process (`__worker`). */
#include "backend.h"
#include "digest.h"
#include "file.h"
#include "loop.h"
#include "recording.h"
#include "registry.h"
#include "store.h"
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
#include "support/tmpdir.h"

extern const tforge_plugin_module tforge_static_exhaustive;

#define LLM TFORGE_SOURCE_DIR "/tests/fixtures/llm"

static void check(int rc)
{
    if (rc)
        fail_msg("%s", tforge_error_last()->message);
}

#include "support/canned_answer.h"

static void proposals_are_levels_of_the_variant_dimension(void **state)
{
    (void)state;
    tforge_worker *worker = NULL;
    tforge_task *task = NULL;
    tforge_registry *registry = NULL;
    tforge_worker_options wo = TFORGE_WORKER_OPTIONS_INIT;
    wo.name = "task";
    check(tforge_worker_start(&worker, &wo));
    check(tforge_task_load(&task, worker, LLM "/task.json", 120000));
    check(tforge_registry_new(&registry));
    check(tforge_registry_load_dir(registry, PLUGIN_DIR));
    const char *ids[] = {"eviction", NULL};
    check(tforge_task_use_transforms(task, registry, ids, NULL));
    uint32_t dims = tforge_space_dims(task->space);
    assert_true(dims > 2); /* BLOCK, num_warps and the eviction hints' */
    assert_int_equal(tforge_task_variant_level(task, tforge_task_baseline_point(task, 0)), 0);

    char *good = good_source();
    char *other = malloc(strlen(good) + 32);
    sprintf(other, "%s# the same, said again\n", good);
    uint32_t level = 0;
    check(tforge_task_add_proposal(task, good, &level));
    assert_int_equal(level, 1);
    const tforge_space *space = task->space;
    assert_int_equal(tforge_space_dims(space), dims + 1);
    assert_string_equal(tforge_space_name(space, dims), "variant");
    assert_string_equal(tforge_space_owner(space, dims), "llm");
    assert_int_equal(tforge_space_role(space, dims), TFORGE_DIM_REWRITE);
    char digest[TFORGE_DIGEST_SIZE];
    tforge_digest_text(digest, good, strlen(good));
    assert_string_equal(tforge_space_label(space, dims, 0), "file");
    assert_string_equal(tforge_space_label(space, dims, 1), digest);
    check(tforge_task_add_proposal(task, good, &level)); /* the same source: the same level */
    assert_int_equal(level, 1);
    assert_int_equal(tforge_space_levels(task->space, dims), 2);
    check(tforge_task_add_proposal(task, other, &level));
    assert_int_equal(level, 2);
    space = task->space;
    assert_int_equal(tforge_space_levels(space, dims), 3);

    /* the baseline still maps, at the file's level */
    const tforge_level *baseline = tforge_task_baseline_point(task, 0);
    assert_non_null(baseline);
    assert_int_equal(baseline[dims], 0);

    /* every knob at every level; the transforms' dimensions moved at the file's level only */
    uint64_t n = tforge_space_count(space);
    tforge_level *p = calloc(dims + 1, sizeof *p);
    unsigned knobs_at_proposal = 0, rewrites_at_file = 0;
    for (uint64_t i = 0; i < n; i++) {
        check(tforge_space_point(p, space, i));
        int rewrites = 0;
        for (uint32_t d = 0; d < dims; d++)
            rewrites |= tforge_space_role(space, d) != TFORGE_DIM_KNOB && p[d] != 0;
        if (p[dims]) {
            assert_false(rewrites);
            knobs_at_proposal += 1;
        } else {
            rewrites_at_file += (unsigned)rewrites;
        }
    }
    assert_int_equal(knobs_at_proposal, 2 * 4); /* two proposals x BLOCK x num_warps */
    assert_true(rewrites_at_file > 0);

    /* a point at a proposal's level: its source, and no `variant` in its config */
    memcpy(p, baseline, (dims + 1) * sizeof *p);
    p[dims] = 1;
    char *text = NULL, *config = NULL;
    check(tforge_task_variant(&text, task, p, SIZE_MAX));
    assert_string_equal(text, good);
    free(text);
    check(tforge_task_config(&config, task, p));
    assert_null(strstr(config, "variant"));
    assert_non_null(strstr(config, "\"BLOCK\""));

    /* checked in the interpreter, in both orders, identified by the proposal's digest */
    tforge_backend backend = {0};
    tforge_backend_args args = TFORGE_BACKEND_ARGS_INIT;
    args.task = task;
    args.space = space;
    args.compile_workers = 1;
    check(tforge_backend_open(&backend, &tforge_backend_interpret, &args));
    tforge_candidate c = {.point = p};
    check(tforge_backend_identify(&backend, &c));
    assert_string_equal(c.digest, digest);
    assert_string_equal(c.variant, good);
    tforge_measurement m;
    check(tforge_backend_evaluate(&backend, &c, 1, &m));
    assert_int_equal(m.status, TFORGE_STATUS_OK);
    tforge_candidate_forget(&c);
    tforge_backend_close(&backend);

    free(config);
    free(p);
    free(good);
    free(other);
    tforge_task_free(task); /* its transforms before the registry that loaded them */
    tforge_registry_free(registry);
    tforge_worker_free(worker);
}

/* The good answer's code computing twice the sum: a proposal that runs and is wrong. */
static char *wrong_source(void)
{
    char *good = good_source(), *at = strstr(good, "tl.sum(acc, axis=0)");
    assert_non_null(at);
    char *out = malloc(strlen(good) + 16);
    sprintf(out, "%.*s2 * %s", (int)(at - good), good, at);
    free(good);
    return out;
}

/* The loop over a space with two proposals: the knobs searched at every level, each proposal's
 * points verified as its source computes, its source stored once by its digest. */
static void the_loop_searches_the_knobs_of_every_proposal(void **state)
{
    (void)state;
    tforge_worker *worker = NULL;
    tforge_task *task = NULL;
    tforge_worker_options wo = TFORGE_WORKER_OPTIONS_INIT;
    wo.name = "task";
    check(tforge_worker_start(&worker, &wo));
    check(tforge_task_load(&task, worker, LLM "/task.json", 120000));
    char *good = good_source(), *wrong = wrong_source();
    uint32_t level;
    check(tforge_task_add_proposal(task, good, &level));
    check(tforge_task_add_proposal(task, wrong, &level));
    const tforge_space *space = task->space;
    uint32_t variant = tforge_space_dims(space) - 1;
    assert_int_equal(tforge_space_count(space), 2 * 2 * 3);

    char db[600];
    snprintf(db, sizeof db, "%s/variant.db", tmpdir);
    tforge_store *store = NULL;
    tforge_recording *described = NULL;
    tforge_registry *reg = NULL;
    int64_t run = 0;
    tforge_store_run like = {.source = task->path, .strategy = "exhaustive", .budget = 12};
    check(tforge_store_open(&store, db));
    check(tforge_store_begin_run(&run, store, &like));
    check(tforge_recording_describe_space(&described, space, NULL, task->kernel));
    check(tforge_registry_new(&reg));
    check(tforge_registry_add_static(reg, &tforge_static_exhaustive, "builtin:exhaustive"));
    tforge_backend backend = {0};
    tforge_backend_args args = TFORGE_BACKEND_ARGS_INIT;
    args.task = task;
    args.space = space;
    args.compile_workers = 1;
    check(tforge_backend_open(&backend, &tforge_backend_interpret, &args));
    tforge_run_record record = {store, run, described, NULL, NULL};
    tforge_loop_options lo = TFORGE_LOOP_OPTIONS_INIT;
    lo.strategy = "exhaustive";
    lo.budget = 12;
    lo.batch = 4;
    lo.final_rounds = 0;
    lo.record = &record;
    tforge_loop_outcome out = {0};
    check(tforge_loop_run(&out, reg, space, &backend, &lo));
    tforge_backend_close(&backend);

    char digests[3][TFORGE_DIGEST_SIZE] = {"", "", ""};
    tforge_digest_text(digests[1], good, strlen(good));
    tforge_digest_text(digests[2], wrong, strlen(wrong));
    unsigned at[3] = {0, 0, 0};
    assert_int_equal(out.n_evals, 12);
    for (size_t i = 0; i < out.n_evals; i++) {
        const tforge_loop_eval *e = &out.evals[i];
        uint32_t v = e->point[variant];
        at[v] += 1;
        assert_int_equal(e->m.status, v == 2 ? TFORGE_STATUS_WRONG : TFORGE_STATUS_OK);
        if (v)
            assert_string_equal(e->digest, digests[v]);
    }
    assert_int_equal(at[0], 4); /* BLOCK x num_warps at each level */
    assert_int_equal(at[1], 4);
    assert_int_equal(at[2], 4);
    char *text = NULL;
    check(tforge_store_source(&text, store, digests[1]));
    assert_string_equal(text, good);
    free(text);

    tforge_loop_outcome_dispose(&out);
    tforge_registry_free(reg);
    tforge_recording_free(described);
    tforge_store_close(store);
    free(good);
    free(wrong);
    tforge_task_free(task);
    tforge_worker_free(worker);
}

int main(int argc, char **argv)
{
    if (started_as_worker(argc, argv)) /* the pool starting one of its workers */
        return tforge_worker_child_main();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(proposals_are_levels_of_the_variant_dimension),
        cmocka_unit_test(the_loop_searches_the_knobs_of_every_proposal),
    };
    return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
