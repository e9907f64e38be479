/* What the speed-of-light model is given: a device file read (the placeholder only where
 * allowed, one the worker's peaks.py measured, each refusal naming the file and the field) and
 * a profile made its candidate. */
#include "profile.h"
#include "sol.h"

#include "tforge/error.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static const char *placeholder = COSTMODELS_FIXTURES "/h200_placeholder_device.json";

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void reads_the_placeholder_where_allowed(void **unused)
{
    (void)unused;
    tforge_device_file f;
    assert_int_equal(tforge_device_file_read(&f, placeholder, 1), 0);
    assert_true(f.placeholder);
    assert_string_equal(f.device.name, "NVIDIA H200");
    assert_ptr_equal(f.device.name, f.name);
    assert_int_equal(f.device.sms, 132);
    assert_int_equal(f.device.shared_bytes_per_sm, 233472);
    assert_float_equal(f.device.dram_bytes_per_s, 4.3e12, 1);
    assert_float_equal(f.device.flops_per_s, 7.9e14, 1);

    assert_int_equal(tforge_device_file_read(&f, placeholder, 0), TFORGE_EINPUT);
    assert_non_null(strstr(tforge_error_last()->message, "field source"));
    assert_non_null(strstr(tforge_error_last()->message, "placeholder"));
}

/* What tforge_worker.peaks wrote on an H100 reads as it is (its extra fields ignored). */
static void reads_a_file_the_worker_measured(void **unused)
{
    (void)unused;
    tforge_device_file f;
    assert_int_equal(tforge_device_file_read(&f, MEASURED_H100, 0), 0);
    assert_false(f.placeholder);
    assert_string_equal(f.device.name, "NVIDIA H100 80GB HBM3");
    assert_int_equal(f.device.sms, 132);
    assert_true(f.device.dram_bytes_per_s > 1e12 && f.device.flops_per_s > 1e14 &&
                f.device.flops_per_s_fp32 > 1e13);
}

static void refusals_name_the_file_and_field(void **unused)
{
    (void)unused;
    const char *path = "sol_device_test.json";
    tforge_device_file f;
    write_file(path, "{\"format\": \"tforge.device/1\", \"source\": \"measured\", \"name\": \"x\", "
                     "\"sms\": 132, \"max_threads_per_sm\": 2048, \"registers_per_sm\": 65536, "
                     "\"shared_bytes_per_sm\": 233472, \"dram_bytes_per_s\": 3e12, "
                     "\"flops_per_s\": 7e14, \"flops_per_s_fp32\": 5e13}");
    assert_int_equal(tforge_device_file_read(&f, path, 0), 0);
    assert_false(f.placeholder);
    write_file(path, "{\"format\": \"tforge.device/1\", \"source\": \"measured\", \"name\": \"x\", "
                     "\"sms\": 132, \"max_threads_per_sm\": 2048, \"registers_per_sm\": 65536, "
                     "\"shared_bytes_per_sm\": 233472, \"dram_bytes_per_s\": -1}");
    assert_int_equal(tforge_device_file_read(&f, path, 0), TFORGE_EINPUT);
    assert_non_null(strstr(tforge_error_last()->message, path));
    assert_non_null(strstr(tforge_error_last()->message, "field dram_bytes_per_s"));
    write_file(path, "{\"format\": \"tforge.device/2\"}");
    assert_int_equal(tforge_device_file_read(&f, path, 0), TFORGE_EINPUT);
    assert_non_null(strstr(tforge_error_last()->message, "field format"));
    write_file(path, "{\"format\": \"tforge.device/1\", \"source\": \"measured\", \"name\": \"x\"}");
    assert_int_equal(tforge_device_file_read(&f, path, 0), TFORGE_EINPUT);
    assert_non_null(strstr(tforge_error_last()->message, "field sms: expected a positive "
                                                         "integer (missing)"));
    remove(path);
}

static void a_profile_as_the_candidate(void **unused)
{
    (void)unused;
    tforge_device_file f;
    assert_int_equal(tforge_device_file_read(&f, placeholder, 1), 0);
    tforge_profile p;
    tforge_profile_init(&p);
    tforge_profile_set(&p, "bytes", 1e8);
    tforge_profile_set(&p, "grid_blocks", 2048);
    tforge_profile_set(&p, "num_warps", 8);
    tforge_profile_set(&p, "registers", 128);
    tforge_profile_set(&p, "shared_bytes", 65536);
    tforge_costmodel_candidate c;
    tforge_sol_candidate(&c, &p, 1, &f.device);
    assert_int_equal(c.struct_size, sizeof c);
    assert_float_equal(c.bytes, 1e8, 0);
    assert_true(isnan(c.flops)); /* absent stays unknown */
    assert_int_equal(c.programs, 2048);
    assert_int_equal(c.warps, 8);
    assert_int_equal(c.registers, 128);
    assert_int_equal(c.shared_bytes, 65536);
    assert_int_equal(c.uses_tensor_cores, 1);
    assert_ptr_equal(c.device, &f.device);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reads_the_placeholder_where_allowed),
        cmocka_unit_test(reads_a_file_the_worker_measured),
        cmocka_unit_test(refusals_name_the_file_and_field),
        cmocka_unit_test(a_profile_as_the_candidate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
