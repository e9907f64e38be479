/* The roofline cost model: its bound over the measured peaks (memory, tensor-core and fp32
 * arithmetic, the SMs a small grid leaves idle), its estimate from waves and the last wave's
 * tail, a candidate that cannot launch, what it refuses (nothing known, unknown options). */
#include "tforge/plugin/costmodel.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

extern const tforge_plugin_module tforge_static_roofline;

static char host_message[512];

static int host_error(const tforge_host *host, int code, const char *message)
{
    (void)host;
    snprintf(host_message, sizeof host_message, "%s", message);
    return code;
}

static const tforge_host host = {TFORGE_PLUGIN_ABI_VERSION_INIT, sizeof(tforge_host), NULL, NULL,
                                 host_error, NULL, NULL};

/* Round numbers, so each expected time is worked out by hand: 100 SMs, 1 TB/s, 100 TFLOP/s
 * on the tensor cores, 10 TFLOP/s fp32. */
static const tforge_costmodel_device device = {sizeof device, "test device", 100, 2048, 65536,
                                               229376, 1e12, 100e12, 10e12};

static const tforge_costmodel_interface *model(void)
{
    const tforge_plugin_descriptor *d = tforge_static_roofline.get(0);
    assert_non_null(d);
    assert_string_equal(d->id, "roofline");
    assert_string_equal(d->interface_id, TFORGE_COSTMODEL_INTERFACE_ID);
    return d->interface;
}

static void *open_model(const char *const *keys, const char *const *values, uint32_t n)
{
    tforge_options_view options = {sizeof options, n, keys, values};
    void *state = NULL;
    assert_int_equal(model()->create(&state, &host, &options), 0);
    return state;
}

/* A candidate of `programs` programs of 4 warps, 32 registers, 16 KiB shared: 16 a SM by its
 * threads, 16 by registers, 14 by shared memory: 14 a SM, 1400 a wave. */
static tforge_costmodel_candidate candidate(double bytes, double flops, uint64_t programs)
{
    tforge_costmodel_candidate c = {sizeof c, bytes, flops, programs, 4, 32, 16384, 1, &device};
    return c;
}

static tforge_costmodel_prediction predict(void *state, tforge_costmodel_candidate c)
{
    tforge_costmodel_prediction p = {NAN, NAN, NAN};
    assert_int_equal(model()->predict(state, &c, &p), 0);
    return p;
}

static void names_its_objective(void **unused)
{
    (void)unused;
    void *s = open_model(NULL, NULL, 0);
    assert_string_equal(model()->objective(s), "latency");
    assert_string_equal(model()->unit(s), "ms");
    assert_null(model()->score);
    model()->destroy(s);
}

/* 1 GB over 1 TB/s is 1 ms; 1e9 flops on the tensor cores 0.01 ms: memory decides. Whole
 * waves (2800 programs): the estimate is the bound over the efficiency (0.8). */
static void memory_bound(void **unused)
{
    (void)unused;
    void *s = open_model(NULL, NULL, 0);
    tforge_costmodel_prediction p = predict(s, candidate(1e9, 1e9, 2800));
    assert_float_equal(p.lower, 1.0, 1e-12);
    assert_float_equal(p.estimate, 1.25, 1e-12);
    assert_float_equal(p.sigma, 0.625, 1e-12);
    model()->destroy(s);
}

/* 1e12 flops: 10 ms on the tensor cores, 100 ms without them. */
static void compute_bound_by_its_unit(void **unused)
{
    (void)unused;
    void *s = open_model(NULL, NULL, 0);
    tforge_costmodel_candidate c = candidate(1e6, 1e12, 2800);
    assert_float_equal(predict(s, c).lower, 10.0, 1e-9);
    c.uses_tensor_cores = 0;
    assert_float_equal(predict(s, c).lower, 100.0, 1e-9);
    model()->destroy(s);
}

/* 25 programs on 100 SMs: the other 75 SMs' arithmetic is lost (a bound 4 times the peak's),
 * but not their DRAM bandwidth (one SM may draw more than its hundredth). */
static void small_grid_idles_sms(void **unused)
{
    (void)unused;
    void *s = open_model(NULL, NULL, 0);
    assert_float_equal(predict(s, candidate(1e6, 1e12, 25)).lower, 40.0, 1e-9);
    assert_float_equal(predict(s, candidate(1e9, 1e6, 25)).lower, 1.0, 1e-12);
    /* the estimate: a quarter of the SMs busy */
    assert_float_equal(predict(s, candidate(1e9, 1e6, 25)).estimate, 1.0 / 0.25 / 0.8, 1e-9);
    model()->destroy(s);
}

/* 2100 programs are 1.5 waves of 1400: the second wave half idle, 75% busy on average. With
 * more shared memory a program (32 KiB: 7 a SM, 700 a wave), 3 whole waves. */
static void tail_of_the_last_wave(void **unused)
{
    (void)unused;
    void *s = open_model(NULL, NULL, 0);
    tforge_costmodel_candidate c = candidate(1e9, 1e6, 2100);
    tforge_costmodel_prediction p = predict(s, c);
    assert_float_equal(p.lower, 1.0, 1e-12);
    assert_float_equal(p.estimate, 1.0 / 0.75 / 0.8, 1e-9);
    c.shared_bytes = 32768;
    assert_float_equal(predict(s, c).estimate, 1.25, 1e-9);
    model()->destroy(s);
}

/* More shared memory than an SM has: no time it could reach, the bound unchanged. */
static void cannot_launch(void **unused)
{
    (void)unused;
    void *s = open_model(NULL, NULL, 0);
    tforge_costmodel_candidate c = candidate(1e9, 1e6, 2800);
    c.shared_bytes = 300000;
    tforge_costmodel_prediction p = predict(s, c);
    assert_float_equal(p.lower, 1.0, 1e-12);
    assert_true(isinf(p.estimate));
    model()->destroy(s);
}

static void options_change_the_estimate_only(void **unused)
{
    (void)unused;
    const char *keys[] = {"efficiency", "spread"};
    const char *values[] = {"0.5", "0.1"};
    void *s = open_model(keys, values, 2);
    tforge_costmodel_prediction p = predict(s, candidate(1e9, 1e6, 2800));
    assert_float_equal(p.lower, 1.0, 1e-12);
    assert_float_equal(p.estimate, 2.0, 1e-12);
    assert_float_equal(p.sigma, 0.2, 1e-12);
    model()->destroy(s);
}

static void refusals(void **unused)
{
    (void)unused;
    void *s = NULL;
    const char *bad_key[] = {"peak"}, *bad_value[] = {"2"};
    tforge_options_view o = {sizeof o, 1, bad_key, bad_value};
    assert_int_equal(model()->create(&s, &host, &o), TFORGE_PLUGIN_EINPUT);
    assert_non_null(strstr(host_message, "unknown option 'peak'"));
    const char *key[] = {"efficiency"}, *out_of_range[] = {"1.5"};
    tforge_options_view r = {sizeof r, 1, key, out_of_range};
    assert_int_equal(model()->create(&s, &host, &r), TFORGE_PLUGIN_EINPUT);
    assert_non_null(strstr(host_message, "efficiency=1.5"));

    s = open_model(NULL, NULL, 0);
    tforge_costmodel_prediction p;
    tforge_costmodel_candidate none = candidate(NAN, 0, 2800);
    assert_int_equal(model()->predict(s, &none, &p), TFORGE_PLUGIN_EINPUT);
    assert_non_null(strstr(host_message, "neither the bytes"));
    tforge_costmodel_device unmeasured = device;
    unmeasured.dram_bytes_per_s = NAN;
    tforge_costmodel_candidate no_peak = candidate(1e9, NAN, 2800);
    no_peak.device = &unmeasured;
    assert_int_equal(model()->predict(s, &no_peak, &p), TFORGE_PLUGIN_EINPUT);
    model()->destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names_its_objective),     cmocka_unit_test(memory_bound),
        cmocka_unit_test(compute_bound_by_its_unit), cmocka_unit_test(small_grid_idles_sms),
        cmocka_unit_test(tail_of_the_last_wave),   cmocka_unit_test(cannot_launch),
        cmocka_unit_test(options_change_the_estimate_only), cmocka_unit_test(refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
