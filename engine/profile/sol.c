/* A device file read, and a profile made the cost model's candidate (sol.h). */
#include "sol.h"

#include "profile.h"
#include "tforge/error.h"

#include "file.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int count_field(uint32_t *out, const cJSON *o, const char *field, const char *path)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, field);
    if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > 4294967295.0 ||
        v->valuedouble != floor(v->valuedouble))
        return tforge_error_set(TFORGE_EINPUT, "%s: field %s: expected a positive integer%s",
                                path, field, v ? "" : " (missing)");
    *out = (uint32_t)v->valuedouble;
    return 0;
}

static int peak_field(double *out, const cJSON *o, const char *field, const char *path)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, field);
    if (!cJSON_IsNumber(v) || !(v->valuedouble > 0) || !isfinite(v->valuedouble))
        return tforge_error_set(TFORGE_EINPUT, "%s: field %s: expected a positive number%s",
                                path, field, v ? "" : " (missing)");
    *out = v->valuedouble;
    return 0;
}

static int string_field(const char **out, const cJSON *o, const char *field, const char *path)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, field);
    if (!cJSON_IsString(v))
        return tforge_error_set(TFORGE_EINPUT, "%s: field %s: expected a string%s", path, field,
                                v ? "" : " (missing)");
    *out = v->valuestring;
    return 0;
}

int tforge_device_file_read(tforge_device_file *out, const char *path, int allow_placeholder)
{
    char *text = NULL;
    size_t size = 0;
    int rc = tforge_file_read(&text, &size, path);
    if (rc)
        return rc;
    cJSON *o = cJSON_Parse(text);
    free(text);
    tforge_device_file f;
    memset(&f, 0, sizeof f);
    f.device.struct_size = sizeof f.device;
    const char *format = NULL, *source = NULL, *name = NULL;
    rc = cJSON_IsObject(o) ? 0 : tforge_error_set(TFORGE_EINPUT, "%s: expected a JSON object "
                                                  "(a device file)", path);
    if (!rc && !(rc = string_field(&format, o, "format", path)) &&
        strcmp(format, TFORGE_DEVICE_FILE_FORMAT) != 0)
        rc = tforge_error_set(TFORGE_EINPUT, "%s: field format: expected \"%s\", got \"%s\"",
                              path, TFORGE_DEVICE_FILE_FORMAT, format);
    if (!rc && !(rc = string_field(&source, o, "source", path))) {
        f.placeholder = strcmp(source, "placeholder") == 0;
        if (strcmp(source, "measured") != 0 && !(f.placeholder && allow_placeholder))
            rc = tforge_error_set(TFORGE_EINPUT, "%s: field source: expected \"measured\", got "
                                  "\"%s\" (a device's peaks are measured on it)", path, source);
    }
    if (!rc && !(rc = string_field(&name, o, "name", path)))
        snprintf(f.name, sizeof f.name, "%s", name);
    if (!rc)
        rc = count_field(&f.device.sms, o, "sms", path);
    if (!rc)
        rc = count_field(&f.device.max_threads_per_sm, o, "max_threads_per_sm", path);
    if (!rc)
        rc = count_field(&f.device.registers_per_sm, o, "registers_per_sm", path);
    if (!rc)
        rc = count_field(&f.device.shared_bytes_per_sm, o, "shared_bytes_per_sm", path);
    if (!rc)
        rc = peak_field(&f.device.dram_bytes_per_s, o, "dram_bytes_per_s", path);
    if (!rc)
        rc = peak_field(&f.device.flops_per_s, o, "flops_per_s", path);
    if (!rc)
        rc = peak_field(&f.device.flops_per_s_fp32, o, "flops_per_s_fp32", path);
    cJSON_Delete(o);
    if (rc)
        return rc;
    *out = f;
    out->device.name = out->name;
    return 0;
}

/* A count metric of the profile, 0 when absent or not a count. */
static uint64_t count_metric(const tforge_profile *p, const char *name)
{
    double v = tforge_profile_get(p, name);
    return isfinite(v) && v >= 1 && v < 1.8e19 ? (uint64_t)v : 0;
}

void tforge_sol_candidate(tforge_costmodel_candidate *out, const tforge_profile *p,
                          int uses_tensor_cores, const tforge_costmodel_device *device)
{
    memset(out, 0, sizeof *out);
    out->struct_size = sizeof *out;
    out->bytes = tforge_profile_get(p, "bytes");
    out->flops = tforge_profile_get(p, "flops");
    out->programs = count_metric(p, "grid_blocks");
    out->warps = (uint32_t)count_metric(p, "num_warps");
    out->registers = (uint32_t)count_metric(p, "registers");
    out->shared_bytes = (uint32_t)count_metric(p, "shared_bytes");
    out->uses_tensor_cores = uses_tensor_cores != 0;
    out->device = device;
}

int tforge_sol_prunes(double lower, double incumbent, double margin)
{
    return isfinite(lower) && isfinite(incumbent) && lower > incumbent * (1 + margin);
}

double tforge_sol_percent(double lower, double value)
{
    return isfinite(lower) && lower > 0 && isfinite(value) && value > 0 ? 100 * lower / value
                                                                        : NAN;
}
