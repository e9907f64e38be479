/* The cost models that score (latency, energy, edp): each one's value from a measurement, what a
 * measurement lacking its input gets, the engine's built-in default, and the lab minimising each
 * objective over the synthetic energy recording (tests/fixtures/recordings: made-up numbers whose
 * fastest, most frugal and best energy-delay entries differ). */
#include "costmodel.h"
#include "lab.h"
#include "registry.h"
#include "replay.h"
#include "tforge/error.h"
#include "tforge/measurement.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

extern const tforge_plugin_module tforge_static_latency;
extern const tforge_plugin_module tforge_static_energy;
extern const tforge_plugin_module tforge_static_edp;
extern const tforge_plugin_module tforge_static_exhaustive;

static tforge_registry *registry(void)
{
    tforge_registry *reg = NULL;
    assert_int_equal(tforge_registry_new(&reg), 0);
    assert_int_equal(tforge_registry_add_static(reg, &tforge_static_latency, "builtin:latency"), 0);
    assert_int_equal(tforge_registry_add_static(reg, &tforge_static_energy, "builtin:energy"), 0);
    assert_int_equal(tforge_registry_add_static(reg, &tforge_static_edp, "builtin:edp"), 0);
    assert_int_equal(
        tforge_registry_add_static(reg, &tforge_static_exhaustive, "builtin:exhaustive"), 0);
    return reg;
}

static tforge_measurement timed(double ms, double joules)
{
    tforge_measurement m;
    tforge_measurement_init(&m);
    m.status = TFORGE_STATUS_OK;
    m.median_ms = ms;
    if (!isnan(joules))
        assert_int_equal(tforge_measurement_set_metric(&m, "energy_j", joules), 0);
    return m;
}

static double scored(tforge_registry *reg, const char *id, tforge_measurement *m)
{
    tforge_costmodel *model = NULL;
    assert_int_equal(tforge_costmodel_open(&model, reg, id), 0);
    assert_int_equal(tforge_costmodel_score(model, m), 0);
    tforge_costmodel_close(model);
    return m->value;
}

static void each_objective_scores_what_it_names(void **state)
{
    (void)state;
    tforge_registry *reg = registry();
    tforge_measurement m = timed(2.0, 0.5);
    assert_true(scored(reg, "latency", &m) == 2.0);
    m = timed(2.0, 0.5);
    assert_true(scored(reg, "energy", &m) == 0.5);
    m = timed(2.0, 0.5);
    assert_true(fabs(scored(reg, "edp", &m) - 0.5 * 2.0e-3) < 1e-15);
    assert_string_equal(m.message, "");
    tforge_registry_free(reg);
}

static void missing_energy_is_said_and_failures_are_left_alone(void **state)
{
    (void)state;
    tforge_registry *reg = registry();
    tforge_measurement m = timed(2.0, NAN);
    assert_true(isnan(scored(reg, "energy", &m)));
    assert_int_equal(m.status, TFORGE_STATUS_OK);
    assert_non_null(strstr(m.message, "energy_j"));
    m = timed(2.0, NAN);
    assert_true(isnan(scored(reg, "edp", &m)));
    assert_non_null(strstr(m.message, "energy_j"));
    m = timed(2.0, 0.5);
    m.status = TFORGE_STATUS_WRONG;
    m.value = 7.0;
    scored(reg, "energy", &m);
    assert_true(m.value == 7.0);
    assert_string_equal(m.message, "");
    tforge_registry_free(reg);
}

static void the_builtin_default_is_latency_and_unknown_ids_are_named(void **state)
{
    (void)state;
    tforge_costmodel *model = NULL;
    assert_int_equal(tforge_costmodel_open(&model, NULL, NULL), 0);
    assert_string_equal(tforge_costmodel_id(model), "latency");
    assert_string_equal(tforge_costmodel_unit(model), "ms");
    tforge_measurement m = timed(3.0, 1.0);
    assert_int_equal(tforge_costmodel_score(model, &m), 0);
    assert_true(m.value == 3.0);
    tforge_costmodel_close(model);
    tforge_registry *reg = registry();
    assert_int_equal(tforge_costmodel_open(&model, reg, "joules"), TFORGE_ENOTFOUND);
    assert_non_null(strstr(tforge_error_last()->message, "joules"));
    assert_null(model);
    tforge_registry_free(reg);
}

/* Exhaustive search over the recording, scored by `id` (NULL: the replay's recorded time): the
 * best value found after every entry. */
static double lab_best(tforge_registry *reg, const tforge_replay *replay, const char *id)
{
    tforge_costmodel *model = NULL;
    if (id)
        assert_int_equal(tforge_costmodel_open(&model, reg, id), 0);
    tforge_lab_run_options o = TFORGE_LAB_RUN_OPTIONS_INIT;
    o.strategy = "exhaustive";
    o.budget = 5;
    o.objective = model;
    double best[5];
    uint32_t n = 0;
    assert_int_equal(tforge_lab_run(best, NULL, &n, reg, replay, &o), 0);
    assert_int_equal(n, 5);
    tforge_costmodel_close(model);
    return best[4];
}

static void the_lab_minimises_the_objective_on_a_recording_with_energy(void **state)
{
    (void)state;
    tforge_registry *reg = registry();
    tforge_recording *rec = NULL;
    tforge_replay *replay = NULL;
    assert_int_equal(tforge_recording_read_space(&rec, SYNTHETIC_ENERGY), 0);
    assert_int_equal(tforge_replay_open(&replay, rec), 0);
    assert_true(lab_best(reg, replay, NULL) == 0.4);     /* BLOCK 128, the fastest */
    assert_true(lab_best(reg, replay, "latency") == 0.4);
    assert_true(lab_best(reg, replay, "energy") == 0.20); /* BLOCK 256, the most frugal */
    assert_true(fabs(lab_best(reg, replay, "edp") - 0.45 * 0.25e-3) < 1e-15); /* BLOCK 64 */
    tforge_replay_free(replay);
    tforge_recording_free(rec);
    tforge_registry_free(reg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_objective_scores_what_it_names),
        cmocka_unit_test(missing_energy_is_said_and_failures_are_left_alone),
        cmocka_unit_test(the_builtin_default_is_latency_and_unknown_ids_are_named),
        cmocka_unit_test(the_lab_minimises_the_objective_on_a_recording_with_energy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
