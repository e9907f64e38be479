/* The tune session called as an API, with a fake backend (as the loop's test has) on a real
 * task: the task loaded by a worker, the loop, the final re-timing, the winner's files re-run
 * as the user runs them, result.json and the summary of every shape; a run that tunes nothing,
 * and a shape the task lacks. This executable is its own worker (`__worker`). */
#include "backend.h"
#include "registry.h"
#include "session.h"
#include "worker.h"
#include "tforge/error.h"
#include "tforge/measurement.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "support/own_worker.h"
#include "support/scratch.h"

extern const tforge_plugin_module tforge_static_exhaustive;
extern const tforge_plugin_module tforge_static_energy;

/* ---- the fake backend: the larger BLOCK, the faster; or every candidate failing; with energy,
 * the faster, the more joules a launch takes ---- */

static int fail_all, with_energy;

/* Time and, with energy, joules per launch (1 / time: the fastest draws the most). */
static void measured(tforge_measurement *m, double ms)
{
    m->value = m->median_ms = ms;
    if (with_energy)
        assert_int_equal(tforge_measurement_set_metric(m, "energy_j", 1.0 / ms), 0);
}

static double value_of(const tforge_candidate *c)
{
    return c->point ? 2.0 - 0.1 * c->point[0] + 0.01 * (c->point[1] + c->point[2]) : 3.0;
}

static int fake_open(void **state, const tforge_backend_args *args)
{
    (void)args;
    *state = NULL;
    return 0;
}

static int fake_evaluate(void *state, const tforge_candidate *c, size_t n, tforge_measurement *out)
{
    (void)state;
    for (size_t i = 0; i < n; i++) {
        if (fail_all) {
            tforge_measurement_fail(&out[i], TFORGE_STATUS_COMPILE, "planted compile error");
            continue;
        }
        measured(&out[i], value_of(&c[i]));
        out[i].repeats = 10;
    }
    return 0;
}

static int fake_retime(void *state, const tforge_candidate *c, uint64_t seed,
                       tforge_measurement *out)
{
    (void)state;
    (void)seed;
    measured(out, value_of(c));
    return 0;
}

static void fake_close(void *state)
{
    (void)state;
}

static const tforge_backend_type fake_type = {"fake", 1, fake_open, fake_evaluate, fake_retime,
                                              NULL, NULL, fake_close, NULL, NULL};

/* ---- what the session told ---- */

typedef struct told {
    size_t count[TFORGE_TUNE_SUMMARY + 1];
    char failure[512]; /* the last failure's message */
    long failed_shape; /* its shape, -1: the session's own */
} told;

static void on_event(void *user, const tforge_tune_event *e)
{
    told *t = user;
    t->count[e->kind]++;
    if (e->kind == TFORGE_TUNE_FAILED) {
        snprintf(t->failure, sizeof t->failure, "%s", tforge_error_last()->message);
        t->failed_shape = e->result ? (long)e->result->shape : -1;
    }
}

typedef struct fixture {
    tforge_registry *reg;
    char dir[64];
} fixture;

static int setup(void **state)
{
    static fixture f;
    if (make_scratch(f.dir, sizeof f.dir, "session") || tforge_registry_new(&f.reg) ||
        tforge_registry_add_static(f.reg, &tforge_static_exhaustive, "builtin:exhaustive") ||
        tforge_registry_add_static(f.reg, &tforge_static_energy, "builtin:energy"))
        return -1;
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    tforge_registry_free(f->reg);
    return remove_scratch(f->dir);
}

static tforge_tune_options options_for(const fixture *f, told *t, const char *out)
{
    tforge_tune_options o = TFORGE_TUNE_OPTIONS_INIT;
    o.task = TASK_FILE;
    o.registry = f->reg;
    o.backend = "fake";
    o.backend_type = &fake_type;
    o.strategy = "exhaustive";
    o.transforms = "none";
    o.budget = 4;
    o.compile_workers = 1;
    o.out = out;
    o.on_event = on_event;
    o.user = t;
    *t = (told){.failed_shape = -2};
    return o;
}

static char text[1 << 20]; /* the last file read */

static void read_text(const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
}

static cJSON *read_json(const char *path)
{
    read_text(path);
    cJSON *doc = cJSON_Parse(text);
    assert_non_null(doc);
    return doc;
}

static double number(const cJSON *o, const char *name)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, name);
    assert_true(cJSON_IsNumber(x));
    return x->valuedouble;
}

/* cJSON prints a double with 15 digits where that reads back within its epsilon: a number that
 * went through result.json equals the outcome's to that precision, not bit for bit. */
static int same_number(double written, double told)
{
    return fabs(written - told) <= 1e-12 * fabs(told);
}

/* Every shape: each tuned by the fake into DIR/shape-I, its winner the fastest it measured and
 * verified as the user runs it, result.json saying so; summary.json the geometric mean. */
static void every_shape_tuned(void **state)
{
    fixture *f = *state;
    told t;
    char out[128];
    snprintf(out, sizeof out, "%s/all", f->dir);
    tforge_tune_options o = options_for(f, &t, out);
    o.shape = TFORGE_TUNE_ALL_SHAPES;
    tforge_tune_outcome outcome;
    assert_int_equal(tforge_tune_run(&o, &outcome), 0);
    assert_int_equal(outcome.n_shapes, 2);
    assert_int_equal(t.count[TFORGE_TUNE_SHAPE_BEGIN], 2);
    assert_int_equal(t.count[TFORGE_TUNE_SHAPE_DONE], 2);
    assert_int_equal(t.count[TFORGE_TUNE_SUMMARY], 1);
    assert_int_equal(t.count[TFORGE_TUNE_FAILED], 0);
    assert_int_equal(t.count[TFORGE_TUNE_BACKEND_CHOSEN], 0); /* not "auto" */
    assert_string_equal(outcome.kernel, "add_kernel");
    double log_sum = 0;
    for (size_t i = 0; i < outcome.n_shapes; i++) {
        const tforge_tune_shape *r = &outcome.shapes[i];
        assert_int_equal(r->shape, i);
        assert_int_equal(r->rc, 0);
        assert_ptr_equal(r->backend_type, &fake_type);
        assert_string_equal(r->backend, "fake");
        assert_int_equal(r->n_evals, 1 + 4); /* the baseline and the budget */
        assert_int_equal(r->n_ok, r->n_evals);
        assert_true(r->baseline_ms == 2.0 - 0.1 * 0 + 0.01 * (2 + 0)); /* BLOCK 128, 4 warps */
        assert_true(r->best_ms < r->baseline_ms);
        assert_true(fabs(r->speedup - r->baseline_ms / r->best_ms) < 1e-12);
        assert_non_null(r->best_config);
        assert_null(r->rewrites);
        log_sum += log(r->speedup);

        char path[256];
        snprintf(path, sizeof path, "%s/shape-%zu", out, i);
        assert_string_equal(r->dir, path);
        snprintf(path, sizeof path, "%s/shape-%zu/result.json", out, i);
        cJSON *doc = read_json(path); /* the text told is the file's */
        assert_non_null(r->result_json);
        assert_int_equal(strncmp(text, r->result_json, strlen(r->result_json)), 0);
        assert_string_equal(cJSON_GetObjectItemCaseSensitive(doc, "backend")->valuestring, "fake");
        assert_true(number(doc, "evaluations") == (double)r->n_evals);
        assert_true(same_number(number(doc, "speedup"), r->speedup));
        cJSON *best = cJSON_GetObjectItemCaseSensitive(doc, "best");
        cJSON *config = cJSON_Parse(r->best_config);
        assert_true(cJSON_Compare(cJSON_GetObjectItemCaseSensitive(best, "config"), config, 1));
        cJSON_Delete(config);
        assert_true(same_number(number(best, "ms"), r->best_ms));
        /* no evaluation measured faster than the winner */
        const cJSON *e;
        cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(doc, "history"))
            assert_true(number(e, "ms") >= r->best_ms);
        cJSON *take_home = cJSON_GetObjectItemCaseSensitive(doc, "take_home");
        assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(take_home, "verified")));
        cJSON *split = cJSON_GetObjectItemCaseSensitive(doc, "seconds_split");
        assert_true(same_number(number(split, "load_task"), r->split.load_task));
        assert_true(same_number(number(split, "winner"), r->split.winner));
        assert_true(r->split.load_task > 0 && r->split.winner > 0);
        cJSON_Delete(doc);
        snprintf(path, sizeof path, "%s/shape-%zu/best_variant.py", out, i);
        assert_int_equal(access(path, R_OK), 0);
    }
    assert_int_equal(outcome.n_speedups, 2);
    assert_true(fabs(outcome.geomean_speedup - exp(log_sum / 2)) < 1e-12);
    char path[256];
    snprintf(path, sizeof path, "%s/summary.json", out);
    cJSON *summary = read_json(path);
    assert_true(number(summary, "geomean_speedup") == outcome.geomean_speedup);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(summary, "shapes")), 2);
    cJSON_Delete(summary);
    tforge_tune_outcome_dispose(&outcome);
}

/* --objective energy: the candidate drawing the fewest joules wins (the slowest, here, not the
 * baseline), result.json gives its value in J beside its time, and pareto.svg is drawn. */
static void energy_tuned(void **state)
{
    fixture *f = *state;
    told t;
    char out[128], path[256];
    snprintf(out, sizeof out, "%s/energy", f->dir);
    tforge_tune_options o = options_for(f, &t, out);
    o.objective = "energy";
    with_energy = 1;
    tforge_tune_outcome outcome;
    assert_int_equal(tforge_tune_run(&o, &outcome), 0);
    with_energy = 0;
    const tforge_tune_shape *r = &outcome.shapes[0];
    snprintf(path, sizeof path, "%s/result.json", r->dir);
    cJSON *doc = read_json(path);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(doc, "objective")->valuestring, "energy");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(doc, "objective_unit")->valuestring, "J");
    cJSON *best = cJSON_GetObjectItemCaseSensitive(doc, "best");
    double least = INFINITY;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(doc, "history")) {
        assert_true(same_number(number(e, "energy_j"), 1.0 / number(e, "ms")));
        assert_true(same_number(number(e, "value"), number(e, "energy_j")));
        least = fmin(least, number(e, "energy_j"));
    }
    assert_true(same_number(number(best, "value"), least));
    assert_true(same_number(number(best, "energy_j"), least));
    assert_true(same_number(number(best, "ms"), 1.0 / least));
    cJSON_Delete(doc);
    snprintf(path, sizeof path, "%s/pareto.svg", r->dir);
    assert_int_equal(access(path, R_OK), 0);
    snprintf(path, sizeof path, "%s/report.md", r->dir);
    read_text(path);
    assert_non_null(strstr(text, "| energy (J) |")); /* the values are named as what they are */
    assert_null(strstr(text, "median (ms)"));
    tforge_tune_outcome_dispose(&outcome);
}

/* Nothing ran correctly: the results are written (they say why), and the run failed. */
static void nothing_correct_is_a_failure(void **state)
{
    fixture *f = *state;
    told t;
    char out[128];
    snprintf(out, sizeof out, "%s/failing", f->dir);
    tforge_tune_options o = options_for(f, &t, out);
    fail_all = 1;
    tforge_tune_outcome outcome;
    int rc = tforge_tune_run(&o, &outcome);
    fail_all = 0;
    assert_int_equal(rc, TFORGE_ERROR);
    assert_int_equal(t.count[TFORGE_TUNE_SHAPE_DONE], 1);
    assert_int_equal(t.count[TFORGE_TUNE_FAILED], 1);
    assert_int_equal(t.failed_shape, 0);
    assert_non_null(strstr(t.failure, "no evaluation ran correctly (5 tried)"));
    assert_non_null(strstr(t.failure, "planted compile error"));
    assert_int_equal(outcome.n_shapes, 1);
    assert_int_equal(outcome.shapes[0].rc, TFORGE_ERROR);
    assert_null(outcome.shapes[0].best_config);
    assert_int_equal(outcome.shapes[0].n_ok, 0);
    char path[256];
    snprintf(path, sizeof path, "%s/result.json", out);
    cJSON *doc = read_json(path);
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(doc, "history"))
        assert_string_equal(cJSON_GetObjectItemCaseSensitive(e, "status")->valuestring,
                            "compile");
    cJSON_Delete(doc);
    tforge_tune_outcome_dispose(&outcome);
}

/* Options of another version, a backend no one has, a shape the task lacks: the input's fault,
 * the session's own failure; no shape ran. */
static void bad_options_refused(void **state)
{
    fixture *f = *state;
    told t;
    char out[128];
    snprintf(out, sizeof out, "%s/lacks", f->dir);
    tforge_tune_options o = options_for(f, &t, out);
    o.version = TFORGE_TUNE_OPTIONS_VERSION + 1;
    tforge_tune_outcome outcome;
    assert_int_equal(tforge_tune_run(&o, &outcome), TFORGE_EINPUT);
    assert_non_null(strstr(tforge_error_last()->message, "tune options version"));
    assert_int_equal(t.count[TFORGE_TUNE_FAILED], 0);
    tforge_tune_outcome_dispose(&outcome);

    o = options_for(f, &t, out);
    o.backend = "abacus";
    o.backend_type = NULL;
    assert_int_equal(tforge_tune_run(&o, &outcome), TFORGE_EINPUT);
    assert_non_null(strstr(t.failure, "backend 'abacus'"));
    assert_int_equal(t.failed_shape, -1);
    tforge_tune_outcome_dispose(&outcome);

    o = options_for(f, &t, out);
    o.shape = 7;
    assert_int_equal(tforge_tune_run(&o, &outcome), TFORGE_EINPUT);
    assert_int_equal(t.count[TFORGE_TUNE_FAILED], 1);
    assert_int_equal(t.failed_shape, -1);
    assert_non_null(strstr(t.failure, "the task has 2 tuning shapes"));
    assert_int_equal(outcome.n_shapes, 0);
    assert_int_equal(access(out, F_OK), -1); /* nothing written */
    tforge_tune_outcome_dispose(&outcome);
}

int main(int argc, char **argv)
{
    if (started_as_worker(argc, argv)) /* the session's worker processes */
        return tforge_worker_child_main();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_shape_tuned),
        cmocka_unit_test(energy_tuned),
        cmocka_unit_test(nothing_correct_is_a_failure),
        cmocka_unit_test(bad_options_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
