/* A tune's speed-of-light bound (sol_bound.h). The bound is the task's: the launch's bytes and
 * flops over the peaks, the same for every candidate whose grid fills the SMs (each candidate's
 * grid would cost a worker call before it runs; on every recording of our kernels it would not
 * change the bound, experiments/roofline/). */
#include "sol_bound.h"

#include "profile.h"
#include "rpc.h"
#include "tforge/error.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const interpreting[] = {"TRITON_INTERPRET=1", NULL};
static const char *const compiling[] = {"TRITON_INTERPRET=0", NULL};

static double lower_of(void *context, const tforge_candidate *candidate)
{
    (void)candidate;
    return ((const tforge_sol_bound *)context)->lower;
}

static double number(const cJSON *o, const char *field)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, field);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* The first baseline's launch facts (bytes, flops) as a profile, from a fresh worker. */
static int task_facts(tforge_profile *p, const tforge_task *task, int gpu, int timeout_ms)
{
    tforge_rpc_candidate c = {task->path, task->baselines[0], task->tune_shapes[task->shape],
                              NULL, NULL, task->dtype};
    cJSON *facts = tforge_rpc_fresh("the launch's bytes and flops",
                                    tforge_rpc_profile(&c, 0, "cupti", NULL),
                                    gpu ? compiling : interpreting, timeout_ms);
    if (!facts)
        return tforge_error_last()->code;
    tforge_profile_init(p);
    int rc = tforge_profile_set(p, "bytes", number(facts, "bytes"));
    if (!rc)
        rc = tforge_profile_set(p, "flops", number(facts, "flops"));
    cJSON_Delete(facts);
    return rc;
}

static int uses_dots(const tforge_task *task)
{
    for (size_t k = 0; task->ir && k < task->ir->n_kernels; k++)
        if (task->ir->kernels[k].n_dots)
            return 1;
    return 0;
}

int tforge_sol_bound_open(tforge_sol_bound *out, const tforge_registry *registry,
                          const char *device_path, const tforge_task *task, int gpu,
                          double margin, double stop_percent, int timeout_ms)
{
    memset(out, 0, sizeof *out);
    out->lower = NAN;
    out->loop = (tforge_loop_bound){out, lower_of, margin, stop_percent};
    if (!device_path) {
        snprintf(out->note, sizeof out->note, "no device file (the device's measured peaks): "
                 "no speed-of-light bound");
        return 0;
    }
    int rc = tforge_device_file_read(&out->device, device_path, 0);
    if (rc)
        return rc;
    const tforge_plugin_record *record =
        tforge_registry_find(registry, TFORGE_COSTMODEL_INTERFACE_ID, "roofline");
    if (!record) {
        snprintf(out->note, sizeof out->note, "no roofline cost model (`tforge plugins`): no "
                 "speed-of-light bound");
        tforge_error_clear();
        return 0;
    }
    out->model = tforge_plugin_interface(record, TFORGE_COSTMODEL_INTERFACE_ID);
    tforge_options_view none = {sizeof none, 0, NULL, NULL};
    if ((rc = out->model->create(&out->state, tforge_registry_host(), &none)))
        return rc;
    tforge_profile facts;
    if (task->n_baseline == 0) {
        snprintf(out->note, sizeof out->note, "no baseline to find the launch's bytes and "
                 "flops: no speed-of-light bound");
        return 0;
    }
    if ((rc = task_facts(&facts, task, gpu, timeout_ms)))
        return rc;
    tforge_costmodel_candidate c;
    tforge_sol_candidate(&c, &facts, uses_dots(task), &out->device.device);
    c.programs = 0; /* the task's bound, whatever the grid */
    tforge_costmodel_prediction p;
    tforge_error_clear();
    if (out->model->predict(out->state, &c, &p)) {
        snprintf(out->note, sizeof out->note, "no speed-of-light bound: %s",
                 tforge_error_last()->message);
        tforge_error_clear();
        return 0;
    }
    out->lower = p.lower;
    char bytes[64] = "", flops[64] = "";
    if (c.bytes > 0)
        snprintf(bytes, sizeof bytes, "%.4g bytes over %.4g B/s", c.bytes,
                 out->device.device.dram_bytes_per_s);
    if (c.flops > 0)
        snprintf(flops, sizeof flops, "%s%.4g flops over %.4g flop/s", c.bytes > 0 ? ", " : "",
                 c.flops, c.uses_tensor_cores ? out->device.device.flops_per_s
                                              : out->device.device.flops_per_s_fp32);
    snprintf(out->note, sizeof out->note, "%.4g ms, the task's %s%s (the measured peaks of %s, "
             "%s)", p.lower, bytes, flops, out->device.name, device_path);
    return 0;
}

const tforge_loop_bound *tforge_sol_bound_loop(const tforge_sol_bound *b)
{
    return isfinite(b->lower) ? &b->loop : NULL;
}

void tforge_sol_bound_close(tforge_sol_bound *b)
{
    if (b->model && b->state)
        b->model->destroy(b->state);
    b->state = NULL;
}
