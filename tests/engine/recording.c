/* Recorded tuning spaces: the real Kernel Tuner caches of the community (skipped when the data
 * folder is not beside the checkout), round trips through both formats, repairs of caches that
 * Kernel Tuner left open, and one message check per kind of malformed field. */
#include "recording.h"
#include "replay.h"

#include "tforge/error.h"
#include "tforge/log.h"

#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#define FIXTURE(name) TFORGE_TEST_FIXTURES "/" name
#define KTCACHE(name) TFORGE_TEST_DATA "/ktcache/" name

#include "support/tmpdir.h"

static const char *tmp(const char *name)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    return path;
}

static int have_data(void)
{
    struct stat st;
    return stat(KTCACHE("dedispersion_A100.json.gz"), &st) == 0;
}

/* Warnings are captured so that tests can check what was said. */
typedef struct captured {
    int warnings;
    char last[1024];
} captured;

static void capture(void *context, tforge_log_level level, const char *message)
{
    captured *c = context;
    if (level == TFORGE_LOG_WARN) {
        c->warnings++;
        snprintf(c->last, sizeof c->last, "%s", message);
    }
}

static tforge_recording *read_ok(const char *path)
{
    tforge_recording *rec = NULL;
    int rc = tforge_recording_read(&rec, path);
    if (rc < 0)
        fail_msg("%s", tforge_error_last()->message);
    return rec;
}

static size_t count_status(const tforge_recording *rec, tforge_status status)
{
    size_t n = 0;
    for (size_t i = 0; i < rec->n_entries; i++)
        n += rec->entries[i].status == status;
    return n;
}

/* The entry whose key is `key`, or NULL. */
static const tforge_recording_entry *find(const tforge_recording *rec, const char *key)
{
    for (size_t i = 0; i < rec->n_entries; i++) {
        char *k;
        assert_int_equal(tforge_recording_key(&k, rec, rec->entries[i].levels), 0);
        int same = strcmp(k, key) == 0;
        free(k);
        if (same)
            return &rec->entries[i];
    }
    return NULL;
}

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* ---- the real caches ---- */

static void reads_convolution(void **state)
{
    (void)state;
    if (!have_data())
        skip();
    const char *files[] = {KTCACHE("convolution_A100.json.gz"),
                           KTCACHE("convolution_A4000.json.gz")};
    for (size_t f = 0; f < 2; f++) {
        tforge_recording *rec = read_ok(files[f]);
        assert_int_equal(rec->n_entries, 4362);
        assert_int_equal(rec->n_entries - count_status(rec, TFORGE_STATUS_OK), 161);
        assert_int_equal(count_status(rec, TFORGE_STATUS_COMPILE), 6);
        assert_int_equal(count_status(rec, TFORGE_STATUS_RUNTIME), 155);
        assert_int_equal(rec->n_params, 10);
        assert_string_equal(rec->params[0].name, "block_size_x");
        assert_int_equal(rec->params[0].n_values, 16);
        assert_string_equal(rec->params[0].texts[15], "256");
        assert_true(rec->params[0].all_numeric);
        assert_string_equal(rec->kernel_name, "convolution_kernel");
        assert_string_equal(rec->problem_size, "[4096,4096]");
        assert_string_equal(rec->objective, "time");
        assert_int_equal(rec->n_metrics, 1);
        assert_string_equal(rec->metric_names[0], "GFLOP/s");
        tforge_recording_free(rec);
    }

    tforge_recording *rec = read_ok(files[0]);
    assert_string_equal(rec->device_name, "NVIDIA A100-PCIE-40GB");
    const tforge_recording_entry *e = find(rec, "16,1,1,1,0,0,0,1,15,15");
    assert_non_null(e);
    assert_int_equal(e->status, TFORGE_STATUS_OK);
    assert_true(e->time == 3.8753279224038124);
    assert_int_equal(e->n_times, 32);
    assert_true(e->times[0] == 3.976191997528076);
    assert_true(e->compile_time == 918.5990339610726);
    assert_true(e->benchmark_time == 126.3829180970788);
    assert_true(e->framework_time == 105.24242906831205);
    assert_true(e->verification_time == 0 && e->strategy_time == 0);
    assert_true(e->metrics[0] == 1948.1569950129526);
    assert_string_equal(e->timestamp, "2023-12-22 09:54:05.502007+00:00");

    e = find(rec, "256,4,4,4,1,0,0,1,15,15");
    assert_non_null(e);
    assert_int_equal(e->status, TFORGE_STATUS_RUNTIME);
    assert_true(isnan(e->time) && isnan(e->metrics[0]));
    assert_int_equal(e->n_times, 0);
    assert_true(e->compile_time == 8965.449352981523);
    tforge_recording_free(rec);
}

static void reads_dedispersion_quickly(void **state)
{
    (void)state;
    if (!have_data())
        skip();
    double start = seconds();
    tforge_recording *rec = read_ok(KTCACHE("dedispersion_A100.json.gz"));
    double elapsed = seconds() - start;
    print_message("read dedispersion_A100.json.gz (11130 entries) in %.3f s\n", elapsed);
    assert_int_equal(rec->n_entries, 11130);
    assert_int_equal(count_status(rec, TFORGE_STATUS_OK), 11130);
    assert_int_equal(rec->n_params, 8);
    assert_string_equal(rec->params[7].name, "loop_unroll_factor_channel");
    assert_string_equal(rec->problem_size, "[25000,2048,1]");
    assert_string_equal(rec->metric_names[0], "GB/s");
    const tforge_recording_entry *e = find(rec, "1,32,1,1,1,0,0,0");
    assert_non_null(e);
    assert_true(e->time == 73.55395197868347);
    assert_true(e->verification_time == 341.3007310591638);
    assert_true(e->metrics[0] == 1069.1906809139423);
    e = find(rec, "32,32,1,4,8,1,1,0");
    assert_non_null(e);
    assert_true(e->time == 72.08191967010498);
    tforge_recording_free(rec);
}

static void assert_same(const tforge_recording *a, const tforge_recording *b)
{
    char why[512] = "";
    if (tforge_recording_diff(why, sizeof why, a, b) != 0)
        fail_msg("recordings differ: %s", why);
}

static int starts_with_bytes(const char *path, const unsigned char *bytes, size_t n)
{
    unsigned char head[4] = {0};
    FILE *f = fopen(path, "rb");
    size_t got = f ? fread(head, 1, n, f) : 0;
    if (f)
        fclose(f);
    return got == n && memcmp(head, bytes, n) == 0;
}

static void real_caches_round_trip(void **state)
{
    (void)state;
    if (!have_data())
        skip();
    const char *files[] = {KTCACHE("convolution_A100.json.gz"),
                           KTCACHE("convolution_A4000.json.gz"),
                           KTCACHE("dedispersion_A100.json.gz")};
    static const unsigned char gzip_magic[] = {0x1f, 0x8b}, brace[] = {'{'};
    for (size_t f = 0; f < 3; f++) {
        tforge_recording *rec = read_ok(files[f]);
        assert_int_equal(tforge_recording_write_kt(rec, tmp("out.json")), 0);
        assert_int_equal(tforge_recording_write_kt(rec, tmp("out.json.gz")), 0);
        assert_true(starts_with_bytes(tmp("out.json"), brace, 1));
        assert_true(starts_with_bytes(tmp("out.json.gz"), gzip_magic, 2));
        tforge_recording *plain = read_ok(tmp("out.json")), *gz = read_ok(tmp("out.json.gz"));
        assert_same(rec, plain);
        assert_same(rec, gz);
        assert_int_equal(tforge_recording_write_t4(rec, tmp("out_t4.json")), 0);
        tforge_recording *t4 = read_ok(tmp("out_t4.json"));
        assert_same(rec, t4);
        tforge_recording_free(rec);
        tforge_recording_free(plain);
        tforge_recording_free(gz);
        tforge_recording_free(t4);
    }
}

/* ---- small fixtures ---- */

static void reads_small_cache(void **state)
{
    (void)state;
    tforge_recording *rec = read_ok(FIXTURE("kt_small.json"));
    assert_int_equal(rec->n_entries, 6);
    assert_int_equal(rec->n_params, 3);
    /* The keys print 1.0 as Python does; the texts learn it. */
    assert_string_equal(rec->params[1].texts[0], "0.5");
    assert_string_equal(rec->params[1].texts[1], "1.0");
    assert_true(rec->params[1].numbers[1] == 1.0);
    assert_false(rec->params[2].all_numeric);
    assert_true(isnan(rec->params[2].numbers[1]));
    assert_string_equal(rec->params[2].texts[1], "a,b");
    const tforge_recording_entry *e = find(rec, "32,1.0,a,b");
    assert_non_null(e);
    assert_true(e->time == 2.5 && e->compile_time == 200 && e->metrics[0] == 21.25);
    e = find(rec, "64,0.5,fast");
    assert_int_equal(e->status, TFORGE_STATUS_COMPILE);
    assert_int_equal(find(rec, "64,1.0,fast")->status, TFORGE_STATUS_RUNTIME);
    assert_int_equal(find(rec, "16,1.0,a,b")->status, TFORGE_STATUS_CONSTRAINT);
    assert_int_equal(find(rec, "32,0.5,fast")->status, TFORGE_STATUS_RUNTIME); /* ErrorConfig */

    /* Written and read again: same texts, same keys. */
    assert_int_equal(tforge_recording_write_kt(rec, tmp("small.json")), 0);
    tforge_recording *again = read_ok(tmp("small.json"));
    assert_same(rec, again);
    assert_int_equal(tforge_recording_write_t4(rec, tmp("small_t4.json.gz")), 0);
    tforge_recording *t4 = read_ok(tmp("small_t4.json.gz"));
    assert_same(rec, t4);
    tforge_recording_free(rec);
    tforge_recording_free(again);
    tforge_recording_free(t4);
}

static void repairs_open_caches(void **state)
{
    (void)state;
    static const struct {
        const char *file;
        size_t entries;
        const char *said;
    } cases[] = {
        {FIXTURE("kt_open.json"), 2, "ends before its closing brackets"},
        {FIXTURE("kt_open_partial.json"), 2, "dropped that entry"},
        {FIXTURE("kt_open_empty.json"), 0, "ends before its closing brackets"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        captured c = {0};
        tforge_log_set_sink(capture, &c);
        tforge_recording *rec = NULL;
        int rc = tforge_recording_read(&rec, cases[i].file);
        tforge_log_set_sink(NULL, NULL);
        if (rc < 0)
            fail_msg("%s: %s", cases[i].file, tforge_error_last()->message);
        assert_int_equal(rec->n_entries, cases[i].entries);
        assert_int_equal(c.warnings, 1);
        assert_non_null(strstr(c.last, cases[i].file));
        assert_non_null(strstr(c.last, cases[i].said));
        tforge_recording_free(rec);
    }
}

static void reads_t4_as_kernel_tuner_writes_it(void **state)
{
    (void)state;
    tforge_recording *rec = read_ok(FIXTURE("t4_kt.json"));
    assert_int_equal(rec->n_entries, 6);
    /* No space in the metadata: derived, numbers sorted, strings as first seen. */
    assert_int_equal(rec->n_params, 3);
    assert_string_equal(rec->params[0].name, "block_size_x");
    assert_string_equal(rec->params[0].texts[0], "16");
    assert_string_equal(rec->params[0].texts[2], "64");
    assert_string_equal(rec->params[2].texts[0], "b");
    assert_string_equal(rec->params[2].texts[1], "a");
    static const tforge_status statuses[] = {TFORGE_STATUS_OK,      TFORGE_STATUS_RUNTIME,
                                             TFORGE_STATUS_WRONG,   TFORGE_STATUS_TIMEOUT,
                                             TFORGE_STATUS_COMPILE, TFORGE_STATUS_CONSTRAINT};
    for (size_t i = 0; i < 6; i++)
        assert_int_equal(rec->entries[i].status, statuses[i]);
    const tforge_recording_entry *e = &rec->entries[0];
    assert_true(e->time == 1.5 && e->n_times == 3 && e->times[2] == 2.0);
    assert_true(e->compile_time == 500 && e->benchmark_time == 30 && e->framework_time == 2);
    assert_true(e->strategy_time == 0.5 && e->verification_time == 1);
    assert_string_equal(rec->metric_names[0], "GFLOP/s");
    assert_true(e->metrics[0] == 100);
    assert_string_equal(e->timestamp, "2024-01-01 10:00:00.000000+00:00");
    assert_true(isnan(rec->entries[1].time));
    assert_null(rec->entries[1].timestamp);

    /* Kernel Tuner has no string for timeouts and wrong results: said once, written as runtime
     * failures. */
    captured c = {0};
    tforge_log_set_sink(capture, &c);
    assert_int_equal(tforge_recording_write_kt(rec, tmp("from_t4.json")), 0);
    tforge_log_set_sink(NULL, NULL);
    assert_int_equal(c.warnings, 1);
    assert_non_null(strstr(c.last, "RuntimeFailedConfig"));
    tforge_recording *kt = read_ok(tmp("from_t4.json"));
    assert_int_equal(kt->entries[2].status, TFORGE_STATUS_RUNTIME);
    assert_int_equal(kt->entries[3].status, TFORGE_STATUS_RUNTIME);
    assert_int_equal(kt->entries[4].status, TFORGE_STATUS_COMPILE);
    tforge_recording_free(kt);

    assert_int_equal(tforge_recording_write_t4(rec, tmp("again_t4.json")), 0);
    tforge_recording *t4 = read_ok(tmp("again_t4.json"));
    assert_same(rec, t4);
    tforge_recording_free(t4);
    tforge_recording_free(rec);
}

static void scales_t4_time_units(void **state)
{
    (void)state;
    tforge_recording *rec = read_ok(FIXTURE("t4_seconds.json"));
    const tforge_recording_entry *e = &rec->entries[0];
    assert_true(e->time == 1.0 && e->compile_time == 500.0);
    assert_int_equal(e->n_times, 2);
    assert_true(e->times[1] == 2.0);
    tforge_recording_free(rec);
}

static void malformed_fields_are_named(void **state)
{
    (void)state;
    static const struct {
        const char *file;
        int code;
        const char *message; /* after "<file>: " */
    } cases[] = {
        {"bad_time.json", TFORGE_EINPUT,
         "cache[\"16,0.5,fast\"].time: expected a finite number >= 0, "
         "\"CompilationFailedConfig\", \"RuntimeFailedConfig\", \"InvalidConfig\" or "
         "\"ErrorConfig\", found \"Oops\""},
        {"negative_time.json", TFORGE_EINPUT,
         "cache[\"16,0.5,fast\"].time: expected a finite number >= 0, "
         "\"CompilationFailedConfig\", \"RuntimeFailedConfig\", \"InvalidConfig\" or "
         "\"ErrorConfig\", found -1.5"},
        {"infinite_time.json", TFORGE_EINPUT,
         "cache[\"16,0.5,fast\"].time: expected a finite number >= 0, "
         "\"CompilationFailedConfig\", \"RuntimeFailedConfig\", \"InvalidConfig\" or "
         "\"ErrorConfig\", found inf"},
        {"infinite_times.json", TFORGE_EINPUT,
         "cache[\"16,0.5,fast\"].times[1]: expected a finite number >= 0 (or an array of them: "
         "a run of several kernels), found -inf"},
        {"infinite_size.json", TFORGE_EINPUT,
         "problem_size: expected an array of sizes (finite numbers >= 0), a size or a string, "
         "found an array"},
        {"not_json_bytes.json", TFORGE_EINPUT,
         "expected a JSON object (a Kernel Tuner cache or T4 results), found the byte 0x00"},
        {"bad_value.json", TFORGE_EINPUT,
         "cache[\"17,0.5,fast\"].block: expected one of the values in tune_params, found 17"},
        {"bad_times.json", TFORGE_EINPUT,
         "cache[\"16,0.5,fast\"].times[1]: expected a finite number >= 0 (or an array of them: "
         "a run of several kernels), found \"x\""},
        {"no_keys.json", TFORGE_EINPUT,
         "tune_params_keys: expected an array of parameter names, found nothing"},
        {"bad_key.json", TFORGE_EINPUT,
         "cache[\"16,0.75,fast\"]: expected the key \"16,0.5,fast\" for the entry's values"},
        {"bad_syntax.json", TFORGE_EINPUT, "not valid JSON at line 3, column 15"},
        {"bad_param_value.json", TFORGE_EINPUT,
         "tune_params[\"mode\"][1]: expected a number, a string or a boolean, found null"},
        {"missing_param.json", TFORGE_EINPUT,
         "cache[\"16,0.5,fast\"].mode: expected a value, found nothing"},
        {"bad_compile_time.json", TFORGE_EINPUT,
         "cache[\"16,0.5,fast\"].compile_time: expected a finite number >= 0, found \"slow\""},
        {"neither.json", TFORGE_EINPUT,
         "expected a Kernel Tuner cache (an object with \"cache\") or T4 results (an object "
         "with \"results\")"},
        {"t4_bad_invalidity.json", TFORGE_EINPUT,
         "results[1].invalidity: expected \"correct\", \"compile\", \"runtime\", \"timeout\", "
         "\"correctness\" or \"constraints\", found \"broken\""},
        {"t4_no_time.json", TFORGE_EINPUT,
         "results[0].measurements: expected a measurement named \"time\" for a correct result, "
         "found nothing"},
        {"t4_bad_unit.json", TFORGE_EINPUT,
         "metadata.timeunit: expected \"nanoseconds\", \"microseconds\", \"milliseconds\" or "
         "\"seconds\", found \"fortnights\""},
        {"t4_bad_config.json", TFORGE_EINPUT,
         "results[1].configuration.extra: expected a known parameter, found 1"},
        {"negative_spread.json", TFORGE_EINPUT,
         "cache[\"16\"].spread: expected a number >= 0, found -0.5"},
        {"no_such_file.json", TFORGE_ENOTFOUND, "cannot open: No such file or directory"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char path[512], expected[1024];
        snprintf(path, sizeof path, "%s/%s", TFORGE_TEST_FIXTURES, cases[i].file);
        snprintf(expected, sizeof expected, "%s: %s", path, cases[i].message);
        tforge_recording *rec = (tforge_recording *)&rec;
        assert_int_equal(tforge_recording_read(&rec, path), cases[i].code);
        assert_null(rec);
        assert_string_equal(tforge_error_last()->message, expected);
    }
}

/* An entry measured without its runs kept (a tforge store's export) carries the spread as
 * measured, which survives writing and which the replay backend reports as the entry's noise;
 * with four runs or more the runs' own IQR over median is reported instead. */
static void keeps_a_measured_spread(void **state)
{
    (void)state;
    tforge_recording *rec = read_ok(FIXTURE("kt_spread.json"));
    assert_true(find(rec, "16")->spread == 0.02);
    assert_true(find(rec, "32")->spread == 0);
    assert_int_equal(tforge_recording_write_kt(rec, tmp("spread.json")), 0);
    tforge_recording *again = read_ok(tmp("spread.json"));
    assert_same(rec, again);
    tforge_replay *replay;
    assert_int_equal(tforge_replay_open(&replay, rec), 0);
    for (uint64_t i = 0; i < 2; i++) {
        tforge_measurement m;
        tforge_measurement_init(&m);
        tforge_replay_answer(&m, replay, i, NULL);
        const tforge_recording_entry *e = tforge_replay_entry(replay, i);
        assert_true(m.spread == (e->n_times ? (2.0 - 1.25) / 1.375 : 0.02));
    }
    tforge_replay_free(replay);
    tforge_recording_free(again);
    tforge_recording_free(rec);
}

/* Caches as Kernel Tuner writes them in the wild: boolean tuning values (categorical levels
 * named True and False, as Python prints them) and runs of several kernels ([x, y] a run). */
static void reads_caches_from_the_wild(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/kt_wild.json", TFORGE_TEST_FIXTURES);
    tforge_recording *rec = NULL;
    assert_int_equal(tforge_recording_read(&rec, path), 0);
    assert_string_equal(rec->objective, "GFLOP/s");
    const tforge_recording_param *unroll = &rec->params[1];
    assert_int_equal(unroll->all_numeric, 0);
    assert_string_equal(unroll->texts[0], "False");
    assert_string_equal(unroll->texts[1], "True");
    const tforge_recording_entry *e = &rec->entries[0];
    assert_int_equal(e->levels[1], 0);
    assert_int_equal(e->n_times, 2);
    assert_true(e->times[0] == 2.0 && e->times[1] == 2.0); /* each run the sum of its kernels */
    assert_int_equal(rec->entries[1].levels[1], 1);
    tforge_recording_free(rec);
}

/* ---- building ---- */

static void builds_and_checks_entries(void **state)
{
    (void)state;
    tforge_recording *rec;
    assert_int_equal(tforge_recording_new(&rec), 0);
    assert_int_equal(tforge_recording_set_info(rec, "gpu", "k", "[ 8, 8 ]", NULL), 0);
    assert_string_equal(rec->problem_size, "[8,8]");
    assert_string_equal(rec->objective, "time");
    const char *texts[] = {"1", "2.5"};
    const double numbers[] = {1, 2.5};
    assert_int_equal(tforge_recording_add_param(rec, "a", 2, texts, numbers), 0);
    const char *bad[] = {"1", "two"};
    assert_int_equal(tforge_recording_add_param(rec, "b", 2, bad, numbers), TFORGE_EINPUT);
    assert_string_equal(tforge_error_last()->message,
                        "parameter 'b': value 1: expected the text of 2.5, found 'two'");
    const char *strings[] = {"x", "y"};
    assert_int_equal(tforge_recording_add_param(rec, "b", 2, strings, NULL), 0);
    assert_int_equal(tforge_recording_add_param(rec, "a", 2, strings, NULL), TFORGE_EINPUT);

    tforge_level levels[2] = {1, 0};
    tforge_recording_entry e = {.levels = levels, .status = TFORGE_STATUS_OK, .time = 1};
    assert_int_equal(tforge_recording_add_entry(rec, &e), 0);
    char *key;
    assert_int_equal(tforge_recording_key(&key, rec, levels), 0);
    assert_string_equal(key, "2.5,x");
    free(key);
    levels[1] = 2;
    assert_int_equal(tforge_recording_add_entry(rec, &e), TFORGE_EINPUT);
    assert_string_equal(tforge_error_last()->message, "entry 1: b: level 2 of 2 values");

    /* A metric added later reads NAN in the entries before it. */
    uint32_t index;
    assert_int_equal(tforge_recording_metric(&index, rec, "GB/s"), 0);
    assert_int_equal(index, 0);
    assert_true(isnan(rec->entries[0].metrics[0]));
    assert_int_equal(tforge_recording_add_param(rec, "late", 1, strings, NULL), TFORGE_EINPUT);
    tforge_recording_free(rec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reads_convolution),
        cmocka_unit_test(reads_dedispersion_quickly),
        cmocka_unit_test(real_caches_round_trip),
        cmocka_unit_test(reads_small_cache),
        cmocka_unit_test(repairs_open_caches),
        cmocka_unit_test(reads_t4_as_kernel_tuner_writes_it),
        cmocka_unit_test(scales_t4_time_units),
        cmocka_unit_test(malformed_fields_are_named),
        cmocka_unit_test(keeps_a_measured_spread),
        cmocka_unit_test(reads_caches_from_the_wild),
        cmocka_unit_test(builds_and_checks_entries),
    };
    return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
