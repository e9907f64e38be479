/* Energy replayed from a recording as Kernel Tuner's NVML observer writes it (nvml_energy, J a
 * launch; nvml_power, W): each replayed measurement carries energy_j and power_w as the GPU
 * worker's do, the lab minimises energy and energy-delay over them, and an objective that a
 * recording has nothing for is refused when the replay opens, not replayed as NAN.
 * tests/fixtures/recordings/vector_add_nvml_energy.json is SYNTHETIC (made-up numbers): BLOCK
 * 512 is the fastest (0.15 ms at 440 W), BLOCK 1024 the most frugal (0.051 J). */
#include "backend.h"
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

typedef struct fixture {
    tforge_registry *reg;
    tforge_recording *rec;
    tforge_replay *replay;
} fixture;

static int setup(void **state)
{
    static fixture f;
    if (tforge_registry_new(&f.reg) ||
        tforge_registry_add_static(f.reg, &tforge_static_latency, "builtin:latency") ||
        tforge_registry_add_static(f.reg, &tforge_static_energy, "builtin:energy") ||
        tforge_registry_add_static(f.reg, &tforge_static_edp, "builtin:edp") ||
        tforge_registry_add_static(f.reg, &tforge_static_exhaustive, "builtin:exhaustive") ||
        tforge_recording_read_space(&f.rec, NVML_ENERGY) || tforge_replay_open(&f.replay, f.rec))
        return -1;
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    tforge_replay_free(f->replay);
    tforge_recording_free(f->rec);
    tforge_registry_free(f->reg);
    return 0;
}

/* The replayed measurement of the entry with this BLOCK (num_warps 4, num_stages 1). */
static tforge_measurement replayed(const fixture *f, double block)
{
    const tforge_recording_param *blocks = &f->rec->params[0];
    tforge_level levels[3] = {0, 0, 0};
    while (levels[0] < blocks->n_values && blocks->numbers[levels[0]] != block)
        levels[0]++;
    assert_true(levels[0] < blocks->n_values);
    tforge_measurement m;
    tforge_measurement_init(&m);
    tforge_replay_answer(&m, f->replay, tforge_replay_index_of_levels(f->replay, levels), NULL);
    return m;
}

static void kernel_tuners_nvml_names_are_the_workers_energy_and_power(void **state)
{
    fixture *f = *state;
    tforge_measurement m = replayed(f, 1024);
    assert_int_equal(m.status, TFORGE_STATUS_OK);
    assert_true(m.median_ms == 0.17);
    assert_true(tforge_measurement_metric(&m, "energy_j") == 0.051);
    assert_true(tforge_measurement_metric(&m, "power_w") == 300.0);
    /* under the worker's names alone: no second copy of either */
    assert_true(isnan(tforge_measurement_metric(&m, "nvml_energy")));
    assert_true(isnan(tforge_measurement_metric(&m, "nvml_power")));
    /* the recording itself keeps Kernel Tuner's names (what it writes back) */
    uint32_t k = 0;
    assert_int_equal(tforge_recording_metric(&k, f->rec, "nvml_energy"), 0);
    assert_int_equal(k, 0);
}

static void the_energy_model_scores_a_replayed_measurement(void **state)
{
    fixture *f = *state;
    tforge_costmodel *model = NULL;
    assert_int_equal(tforge_costmodel_open(&model, f->reg, "energy"), 0);
    tforge_measurement m = replayed(f, 512);
    assert_int_equal(tforge_costmodel_score(model, &m), 0);
    assert_int_equal(m.status, TFORGE_STATUS_OK);
    assert_true(m.value == 0.066);
    tforge_costmodel_close(model);
}

/* Exhaustive search over the recording through the replay backend, scored by `id` (NULL: the
 * recorded time): the best value found. */
static double lab_best(const fixture *f, const char *id)
{
    tforge_costmodel *model = NULL;
    if (id)
        assert_int_equal(tforge_costmodel_open(&model, f->reg, id), 0);
    tforge_lab_run_options o = TFORGE_LAB_RUN_OPTIONS_INIT;
    o.strategy = "exhaustive";
    o.budget = 5;
    o.objective = model;
    double best[5];
    uint32_t n = 0;
    assert_int_equal(tforge_lab_run(best, NULL, &n, f->reg, f->replay, &o), 0);
    assert_int_equal(n, 5);
    tforge_costmodel_close(model);
    return best[4];
}

static void the_lab_minimises_energy_where_latency_picks_another(void **state)
{
    fixture *f = *state;
    assert_true(lab_best(f, NULL) == 0.15);      /* BLOCK 512, the fastest */
    assert_true(lab_best(f, "latency") == 0.15);
    assert_true(lab_best(f, "energy") == 0.051); /* BLOCK 1024, the most frugal */
    assert_true(fabs(lab_best(f, "edp") - 0.051 * 0.17e-3) < 1e-15); /* BLOCK 1024 again */
}

/* A recording without energy (the H200 matmul space: times, registers, clocks): the energy
 * objective is refused when the replay opens, saying what it misses and what the recording
 * holds; latency is not. */
static void an_objective_the_recording_cannot_score_is_refused(void **state)
{
    fixture *f = *state;
    tforge_recording *rec = NULL;
    tforge_replay *replay = NULL;
    assert_int_equal(tforge_recording_read_space(&rec, RECORDED_SPACE), 0);
    assert_int_equal(tforge_replay_open(&replay, rec), 0);
    tforge_costmodel *energy = NULL, *latency = NULL;
    assert_int_equal(tforge_costmodel_open(&energy, f->reg, "energy"), 0);
    assert_int_equal(tforge_costmodel_open(&latency, f->reg, "latency"), 0);
    assert_int_equal(tforge_replay_check_objective(replay, latency), 0);
    assert_int_equal(tforge_replay_check_objective(replay, energy), TFORGE_EINPUT);
    const char *why = tforge_error_last()->message;
    assert_non_null(strstr(why, "objective energy"));
    assert_non_null(strstr(why, "no energy_j"));
    assert_non_null(strstr(why, "the recording holds time and registers"));

    tforge_backend_args args = TFORGE_BACKEND_ARGS_INIT;
    args.space = tforge_replay_space(replay);
    args.recording = rec;
    args.replay = replay;
    args.objective = energy;
    tforge_backend backend;
    assert_int_equal(tforge_backend_open(&backend, &tforge_backend_replay, &args), TFORGE_EINPUT);
    assert_non_null(strstr(tforge_error_last()->message, "no energy_j"));
    args.objective = latency;
    assert_int_equal(tforge_backend_open(&backend, &tforge_backend_replay, &args), 0);
    tforge_backend_close(&backend);

    tforge_costmodel_close(energy);
    tforge_costmodel_close(latency);
    tforge_replay_free(replay);
    tforge_recording_free(rec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kernel_tuners_nvml_names_are_the_workers_energy_and_power),
        cmocka_unit_test(the_energy_model_scores_a_replayed_measurement),
        cmocka_unit_test(the_lab_minimises_energy_where_latency_picks_another),
        cmocka_unit_test(an_objective_the_recording_cannot_score_is_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
