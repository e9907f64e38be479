/* Profiles: occupancy against cases computed by hand from the CUDA occupancy rules on the
 * H200, waves and the last wave's fill, the roofline shares, absent inputs staying absent, the
 * JSON round trip and its refusals, device limits read from torch's properties, and the replay
 * backend's profile of a small recording (tests/heuristics/replay_recording.json). */
#include "backend.h"
#include "profile.h"

#include "tforge/error.h"
#include "tforge/measurement.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* A compiled candidate: its registers and shared memory, timed at `ms` (NAN: untimed). */
static tforge_measurement compiled(double regs, double shared, double ms)
{
    tforge_measurement m;
    tforge_measurement_init(&m);
    tforge_measurement_set_metric(&m, "registers", regs);
    tforge_measurement_set_metric(&m, "spill_stores", 0);
    tforge_measurement_set_metric(&m, "shared_bytes", shared);
    m.median_ms = ms;
    return m;
}

static tforge_profile static_of(double regs, double shared, double warps, double grid)
{
    tforge_profile p;
    tforge_profile_init(&p);
    tforge_measurement m = compiled(regs, shared, NAN);
    assert_int_equal(tforge_profile_add_static(&p, tforge_device_h200(), &m, warps, grid, NAN,
                                               NAN), 0);
    return p;
}

static void assert_occupancy(const tforge_profile *p, double blocks, double occupancy,
                             double limiter)
{
    assert_float_equal(tforge_profile_get(p, "blocks_per_sm"), blocks, 0);
    assert_float_equal(tforge_profile_get(p, "occupancy_theoretical"), occupancy, 1e-12);
    assert_float_equal(tforge_profile_get(p, "occupancy_limiter"), limiter, 0);
}

/* 128 registers x 256 threads: 4096 registers a warp, 4 per register partition, 16 warps. */
static void test_registers_limit(void **state)
{
    (void)state;
    tforge_profile p = static_of(128, 0, 8, NAN);
    assert_occupancy(&p, 2, 16.0 / 64, 1);
    assert_float_equal(tforge_profile_get(&p, "registers"), 128, 0);
    assert_float_equal(tforge_profile_get(&p, "num_warps"), 8, 0);
}

/* 170 registers a thread round up to 5632 a warp: 2 warps a partition, so 8 one-warp blocks,
 * not the 11 that 65536 / 5632 would give without the partitions. */
static void test_register_partitions(void **state)
{
    (void)state;
    tforge_profile p = static_of(170, 0, 1, NAN);
    assert_occupancy(&p, 8, 8.0 / 64, 1);
}

/* 100 KiB of shared memory plus the 1 KiB reserved a block: two fit in 228 KiB. */
static void test_shared_limit(void **state)
{
    (void)state;
    tforge_profile p = static_of(32, 100 * 1024, 4, NAN);
    assert_occupancy(&p, 2, 8.0 / 64, 2);
    /* 150 KiB: one block an SM; 228 KiB: more than a block may opt in to, none. */
    p = static_of(32, 150 * 1024, 4, NAN);
    assert_occupancy(&p, 1, 4.0 / 64, 2);
    p = static_of(32, 228 * 1024, 4, NAN);
    assert_occupancy(&p, 0, 0, 2);
}

/* One-warp blocks with few registers stop at 32 blocks an SM; 16 warps at 64 warps an SM. */
static void test_blocks_and_warps_limits(void **state)
{
    (void)state;
    tforge_profile p = static_of(16, 0, 1, NAN);
    assert_occupancy(&p, 32, 0.5, 4);
    p = static_of(32, 0, 16, NAN);
    assert_occupancy(&p, 4, 1.0, 1); /* registers and warps both allow 4: the first is named */
    p = static_of(24, 0, 16, NAN);
    assert_occupancy(&p, 4, 1.0, 3);
}

/* 255 registers: one 8-warp block; 16 warps would need 131072 registers, which no block gets. */
static void test_one_block_per_sm(void **state)
{
    (void)state;
    tforge_profile p = static_of(255, 0, 8, 1000);
    assert_occupancy(&p, 1, 8.0 / 64, 1);
    assert_float_equal(tforge_profile_get(&p, "waves"), 1000.0 / 132, 1e-12);
    p = static_of(255, 0, 16, 1000);
    assert_occupancy(&p, 0, 0, 1);
    assert_true(isnan(tforge_profile_get(&p, "waves"))); /* it cannot launch: no waves */
}

/* Two 8-warp blocks an SM: 264 blocks a wave. */
static void test_waves(void **state)
{
    (void)state;
    tforge_profile p = static_of(128, 0, 8, 291);
    assert_float_equal(tforge_profile_get(&p, "waves"), 291.0 / 264, 1e-12);
    assert_float_equal(tforge_profile_get(&p, "last_wave_fill"), 27.0 / 264, 1e-12);
    p = static_of(128, 0, 8, 528);
    assert_float_equal(tforge_profile_get(&p, "waves"), 2, 1e-12);
    assert_float_equal(tforge_profile_get(&p, "last_wave_fill"), 1, 1e-12);
    p = static_of(128, 0, 8, 100);
    assert_float_equal(tforge_profile_get(&p, "waves"), 100.0 / 264, 1e-12);
    assert_float_equal(tforge_profile_get(&p, "last_wave_fill"), 100.0 / 264, 1e-12);
    assert_float_equal(tforge_profile_get(&p, "grid_blocks"), 100, 0);
}

static void test_roofline(void **state)
{
    (void)state;
    tforge_profile p;
    tforge_profile_init(&p);
    tforge_measurement m = compiled(64, 0, 1.0);
    assert_int_equal(tforge_profile_add_static(&p, tforge_device_h200(), &m, 4, 1000, 1e9, 2e9),
                     0);
    assert_float_equal(tforge_profile_get(&p, "time_ms"), 1.0, 0);
    assert_float_equal(tforge_profile_get(&p, "intensity"), 2.0, 1e-12);
    assert_float_equal(tforge_profile_get(&p, "dram_share"), 1e12 / 4.8e12, 1e-12);
    assert_float_equal(tforge_profile_get(&p, "flops_share"), 2e12 / 989.5e12, 1e-12);
}

/* Every absent input leaves exactly what is derived from it absent. */
static void test_absent_inputs(void **state)
{
    (void)state;
    tforge_profile p;
    tforge_profile_init(&p);
    assert_int_equal(tforge_profile_add_static(&p, tforge_device_h200(), NULL, NAN, NAN, NAN,
                                               NAN), 0);
    assert_int_equal(p.n_metrics, 0);

    tforge_measurement m;
    tforge_measurement_init(&m); /* timed, but no resources */
    m.median_ms = 0.5;
    assert_int_equal(tforge_profile_add_static(&p, tforge_device_h200(), &m, 4, 1000, 1e6, NAN),
                     0);
    assert_float_equal(tforge_profile_get(&p, "time_ms"), 0.5, 0);
    assert_false(isnan(tforge_profile_get(&p, "dram_share")));
    static const char *const absent[] = {"registers", "blocks_per_sm", "occupancy_theoretical",
                                         "occupancy_limiter", "waves", "last_wave_fill",
                                         "flops", "intensity", "flops_share"};
    for (size_t i = 0; i < sizeof absent / sizeof *absent; i++)
        assert_true(isnan(tforge_profile_get(&p, absent[i])));

    /* Resources and a grid, but no warps: no occupancy, no waves; untimed: no shares. */
    tforge_profile_init(&p);
    m = compiled(64, 0, NAN);
    assert_int_equal(tforge_profile_add_static(&p, tforge_device_h200(), &m, NAN, 1000, 1e6,
                                               1e6), 0);
    assert_true(isnan(tforge_profile_get(&p, "occupancy_theoretical")));
    assert_true(isnan(tforge_profile_get(&p, "waves")));
    assert_true(isnan(tforge_profile_get(&p, "time_ms")));
    assert_true(isnan(tforge_profile_get(&p, "dram_share")));
    assert_float_equal(tforge_profile_get(&p, "intensity"), 1.0, 0);

    /* A device whose peaks are not known: no shares, the rest as before. */
    tforge_device_limits d = *tforge_device_h200();
    d.dram_gbs = d.fp16_tflops = NAN;
    tforge_profile_init(&p);
    m = compiled(64, 0, 1.0);
    assert_int_equal(tforge_profile_add_static(&p, &d, &m, 4, 1000, 1e6, 1e6), 0);
    assert_true(isnan(tforge_profile_get(&p, "dram_share")));
    assert_true(isnan(tforge_profile_get(&p, "flops_share")));
    assert_false(isnan(tforge_profile_get(&p, "waves")));
}

static void test_set_get(void **state)
{
    (void)state;
    tforge_profile p;
    tforge_profile_init(&p);
    assert_int_equal(p.counters, TFORGE_COUNTERS_NONE);
    assert_int_equal(tforge_profile_set(&p, "dram_pct", 80), 0);
    assert_int_equal(tforge_profile_set(&p, "dram_pct", 81), 0);
    assert_int_equal(tforge_profile_set(&p, "sm_pct", NAN), 0);
    assert_int_equal(p.n_metrics, 1);
    assert_float_equal(tforge_profile_get(&p, "dram_pct"), 81, 0);
    assert_true(isnan(tforge_profile_get(&p, "sm_pct")));
    assert_int_equal(tforge_profile_set(&p, "not a name", 1), TFORGE_EINPUT);
    char name[16];
    for (int i = 1; i < TFORGE_PROFILE_METRICS; i++) {
        snprintf(name, sizeof name, "m%d", i);
        assert_int_equal(tforge_profile_set(&p, name, i), 0);
    }
    assert_int_equal(tforge_profile_set(&p, "one_more", 1), TFORGE_ERROR);
}

static void test_names(void **state)
{
    (void)state;
    assert_true(tforge_profile_known_name("occupancy_theoretical"));
    assert_false(tforge_profile_counter_name("occupancy_theoretical"));
    assert_true(tforge_profile_counter_name("stall_long_scoreboard"));
    assert_true(tforge_profile_counter_name("inst_tensor"));
    assert_true(tforge_profile_counter_name("dram_pct"));
    assert_false(tforge_profile_counter_name("stall_"));
    assert_false(tforge_profile_known_name("runner_ms"));
    assert_false(tforge_profile_known_name("time"));
}

static void test_json_round_trip(void **state)
{
    (void)state;
    tforge_profile p = static_of(128, 1024, 8, 291), q;
    p.counters = TFORGE_COUNTERS_REFUSED;
    snprintf(p.note, sizeof p.note, "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES \"quoted\"");
    tforge_profile_set(&p, "dram_pct", 12.345678901234567);
    char *text = tforge_profile_to_json(&p);
    assert_non_null(text);
    assert_int_equal(tforge_profile_from_json(&q, text, "test"), 0);
    free(text);
    assert_int_equal(q.counters, TFORGE_COUNTERS_REFUSED);
    assert_string_equal(q.note, p.note);
    assert_int_equal(q.n_metrics, p.n_metrics);
    for (uint32_t i = 0; i < p.n_metrics; i++) {
        assert_string_equal(q.metrics[i].name, p.metrics[i].name);
        assert_true(q.metrics[i].value == p.metrics[i].value); /* bit for bit */
    }
}

static void assert_refused(const char *text, const char *field)
{
    tforge_profile p;
    tforge_profile_init(&p);
    tforge_profile_set(&p, "kept", 1);
    assert_int_equal(tforge_profile_from_json(&p, text, "fixture.json"), TFORGE_EINPUT);
    assert_non_null(strstr(tforge_error_last()->message, "fixture.json"));
    assert_non_null(strstr(tforge_error_last()->message, field));
    assert_float_equal(tforge_profile_get(&p, "kept"), 1, 0); /* untouched */
}

static void test_json_refused(void **state)
{
    (void)state;
    assert_refused("[1]", "JSON object");
    assert_refused("{\"counters\": \"maybe\", \"metrics\": {}}", "counters");
    assert_refused("{\"note\": 3, \"metrics\": {}}", "note");
    assert_refused("{\"counters\": \"ok\"}", "metrics");
    assert_refused("{\"metrics\": {\"sm_pct\": \"high\"}}", "sm_pct");
    assert_refused("{\"metrics\": {\"sm pct\": 3}}", "sm pct");
    tforge_profile p;
    assert_int_equal(tforge_profile_from_json(&p, "{\"metrics\": {}}", "x"), 0);
    assert_int_equal(p.counters, TFORGE_COUNTERS_NONE);
    assert_int_equal(p.n_metrics, 0);
}

/* What the GPU worker sends: torch.cuda.get_device_properties of the H200. */
#define H200_PROPERTIES                                                                           \
    "\"major\": 9, \"minor\": 0, \"multi_processor_count\": 132, "                               \
    "\"regs_per_multiprocessor\": 65536, \"shared_memory_per_multiprocessor\": 233472, "         \
    "\"shared_memory_per_block_optin\": 232448, \"max_threads_per_multi_processor\": 2048"

static void test_device_from_json(void **state)
{
    (void)state;
    tforge_device_limits d;
    assert_int_equal(tforge_device_limits_from_json(&d, "{\"name\": \"NVIDIA H200\", "
                                                    H200_PROPERTIES "}"), 0);
    assert_string_equal(d.name, "NVIDIA H200");
    assert_int_equal(d.sms, 132);
    assert_int_equal(d.max_warps_per_sm, 64);
    assert_int_equal(d.reg_alloc_unit, 256);
    assert_float_equal(d.dram_gbs, 4800, 0);
    /* An H100 shares the architecture's limits, not the H200's peaks. */
    assert_int_equal(tforge_device_limits_from_json(&d, "{\"name\": \"NVIDIA H100 PCIe\", "
                                                    H200_PROPERTIES ", \"dram_gbs\": 2000}"), 0);
    assert_float_equal(d.dram_gbs, 2000, 0);
    assert_true(isnan(d.fp16_tflops));

    assert_int_equal(tforge_device_limits_from_json(&d, "{\"name\": \"NVIDIA H200\", "
                                                    "\"major\": 9, \"minor\": 0}"),
                     TFORGE_EINPUT);
    assert_non_null(strstr(tforge_error_last()->message, "multi_processor_count"));
    assert_int_equal(tforge_device_limits_from_json(&d, "{\"name\": \"NVIDIA A100\", "
                                                    "\"major\": 8, \"minor\": 0}"),
                     TFORGE_EINPUT);
    assert_non_null(strstr(tforge_error_last()->message, "sm_80"));
    assert_int_equal(tforge_device_limits_from_json(&d, "{\"name\": 7}"), TFORGE_EINPUT);
    assert_non_null(strstr(tforge_error_last()->message, "name"));
}

/* The replay backend profiles a recorded point: profile.h's names only, counters only when
 * asked for, the static metrics over the H200 with num_warps from the point's parameter. */
static void test_replay_profile(void **state)
{
    (void)state;
    tforge_recording *rec = NULL;
    tforge_replay *replay = NULL;
    assert_int_equal(tforge_recording_read(&rec, HEURISTICS_FIXTURES "/replay_recording.json"),
                     0);
    assert_int_equal(tforge_replay_open(&replay, rec), 0);
    tforge_backend_args args = TFORGE_BACKEND_ARGS_INIT;
    args.space = tforge_replay_space(replay);
    args.recording = rec;
    args.replay = replay;
    tforge_backend backend;
    assert_int_equal(tforge_backend_open(&backend, &tforge_backend_replay, &args), 0);

    tforge_candidate copy = {.config = "{\"BLOCK_SIZE\": 1024, \"num_warps\": 4}"};
    tforge_profile p;
    assert_int_equal(tforge_backend_profile(&backend, &copy, NULL, 1, &p), 0);
    assert_int_equal(p.counters, TFORGE_COUNTERS_OK);
    assert_float_equal(tforge_profile_get(&p, "dram_pct"), 85.5, 0);
    assert_float_equal(tforge_profile_get(&p, "stall_long_scoreboard"), 0.6, 0);
    assert_true(isnan(tforge_profile_get(&p, "sm_clock_mhz"))); /* not profile.h's */
    assert_float_equal(tforge_profile_get(&p, "num_warps"), 4, 0);
    assert_float_equal(tforge_profile_get(&p, "time_ms"), 0.1, 0);
    /* 32 registers x 4 warps: 16 blocks an SM, 2112 a wave */
    assert_occupancy(&p, 16, 1.0, 1);
    assert_float_equal(tforge_profile_get(&p, "waves"), 1000.0 / 2112, 1e-12);
    assert_float_equal(tforge_profile_get(&p, "dram_share"), 4e8 / 1e-4 / 4.8e12, 1e-12);
    assert_true(isnan(tforge_profile_get(&p, "intensity"))); /* no flops recorded */

    /* Without counters asked for: the static metrics alone. */
    assert_int_equal(tforge_backend_profile(&backend, &copy, NULL, 0, &p), 0);
    assert_int_equal(p.counters, TFORGE_COUNTERS_NONE);
    assert_true(isnan(tforge_profile_get(&p, "dram_pct")));
    assert_false(isnan(tforge_profile_get(&p, "occupancy_theoretical")));

    /* A point recorded without counters, and the time the loop measured rather than the
     * recorded one. */
    tforge_candidate spilling = {.config = "{\"BLOCK_SIZE\": 1024, \"num_warps\": 8}"};
    tforge_measurement measured;
    tforge_measurement_init(&measured);
    measured.median_ms = 0.125;
    assert_int_equal(tforge_backend_profile(&backend, &spilling, &measured, 1, &p), 0);
    assert_int_equal(p.counters, TFORGE_COUNTERS_NONE);
    assert_float_equal(tforge_profile_get(&p, "spill_stores"), 12, 0);
    assert_float_equal(tforge_profile_get(&p, "time_ms"), 0.125, 0);
    assert_occupancy(&p, 1, 8.0 / 64, 1);
    assert_true(isnan(tforge_profile_get(&p, "waves"))); /* no grid recorded */

    /* A failed compile has no time; a point the recording lacks is an error. */
    tforge_candidate failed = {.config = "{\"BLOCK_SIZE\": 4096, \"num_warps\": 4}"};
    assert_int_equal(tforge_backend_profile(&backend, &failed, NULL, 1, &p), 0);
    assert_true(isnan(tforge_profile_get(&p, "time_ms")));
    tforge_candidate absent = {.config = "{\"BLOCK_SIZE\": 4096, \"num_warps\": 8}"};
    assert_int_equal(tforge_backend_profile(&backend, &absent, NULL, 1, &p), TFORGE_ENOTFOUND);

    tforge_backend_close(&backend);
    tforge_replay_free(replay);
    tforge_recording_free(rec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registers_limit),
        cmocka_unit_test(test_register_partitions),
        cmocka_unit_test(test_shared_limit),
        cmocka_unit_test(test_blocks_and_warps_limits),
        cmocka_unit_test(test_one_block_per_sm),
        cmocka_unit_test(test_waves),
        cmocka_unit_test(test_roofline),
        cmocka_unit_test(test_absent_inputs),
        cmocka_unit_test(test_set_get),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_json_round_trip),
        cmocka_unit_test(test_json_refused),
        cmocka_unit_test(test_device_from_json),
        cmocka_unit_test(test_replay_profile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
