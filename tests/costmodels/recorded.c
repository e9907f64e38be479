/* The speed-of-light bound on every recording we hold of our kernels (data/h200/, the
 * counters recordings of experiments/profile/recordings/), over the placeholder H200 device
 * file: no configuration is measured faster than its bound, and pruning (tforge_sol_prunes at
 * the loop's margin) never removes a recording's optimum, in 50 random visiting orders. Prints
 * the share of evaluations it saves, each optimum's % of the speed of light, and how well the
 * estimate ranks the configurations (the GP's would-be prior mean). The launch facts the
 * recordings without counters lack come from their tasks (tests/costmodels/facts/, written by
 * experiments/roofline/facts.py); where a recording has them, both must agree. The Kernel Tuner
 * caches are left out: no device file of their cards (A100, A4000) is held. */
#include "profile.h"
#include "recording.h"
#include "sol.h"

#include "file.h"
#include "tforge/error.h"
#include "tforge/plugin/rng.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

extern const tforge_plugin_module tforge_static_roofline;

#define SEEDS 50
#define MARGIN 0.05 /* the loop's default: a bound within 5% of the incumbent is not pruned */

static const tforge_host host = {TFORGE_PLUGIN_ABI_VERSION_INIT, sizeof(tforge_host), NULL, NULL,
                                 NULL, NULL, NULL};

typedef struct facts {
    double bytes, flops;
    int uses_tensor_cores;
    cJSON *doc; /* grid_blocks by cache key */
} facts;

static facts read_facts(const char *name)
{
    char path[512], *text = NULL;
    size_t size = 0;
    snprintf(path, sizeof path, "%s/facts/%s.facts.json", COSTMODELS_FIXTURES, name);
    assert_int_equal(tforge_file_read(&text, &size, path), 0);
    facts f = {NAN, NAN, 0, cJSON_Parse(text)};
    free(text);
    assert_non_null(f.doc);
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(f.doc, "bytes");
    const cJSON *fl = cJSON_GetObjectItemCaseSensitive(f.doc, "flops");
    f.bytes = cJSON_IsNumber(b) ? b->valuedouble : NAN;
    f.flops = cJSON_IsNumber(fl) ? fl->valuedouble : NAN;
    f.uses_tensor_cores = cJSON_GetObjectItemCaseSensitive(f.doc, "uses_tensor_cores")->valueint;
    return f;
}

static double entry_metric(const tforge_recording *rec, const tforge_recording_entry *e,
                           const char *name)
{
    for (uint32_t k = 0; k < rec->n_metrics; k++)
        if (strcmp(rec->metric_names[k], name) == 0)
            return e->metrics[k];
    return NAN;
}

/* num_warps is Triton's launch option, a knob of every recording of ours. */
static double entry_warps(const tforge_recording *rec, const tforge_recording_entry *e)
{
    for (uint32_t p = 0; p < rec->n_params; p++)
        if (strcmp(rec->params[p].name, "num_warps") == 0)
            return rec->params[p].numbers[e->levels[p]];
    return NAN;
}

/* Spearman's rank correlation of x and y (n of them, no ties expected to matter). */
static double ranks_correlation(const double *x, const double *y, size_t n)
{
    double *rx = calloc(n, sizeof *rx), *ry = calloc(n, sizeof *ry);
    assert_non_null(rx);
    assert_non_null(ry);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            rx[i] += (x[j] < x[i]) + 0.5 * (j != i && x[j] == x[i]);
            ry[i] += (y[j] < y[i]) + 0.5 * (j != i && y[j] == y[i]);
        }
    double mean = (n - 1) / 2.0, sxy = 0, sxx = 0, syy = 0;
    for (size_t i = 0; i < n; i++) {
        sxy += (rx[i] - mean) * (ry[i] - mean);
        sxx += (rx[i] - mean) * (rx[i] - mean);
        syy += (ry[i] - mean) * (ry[i] - mean);
    }
    free(rx);
    free(ry);
    return sxx > 0 && syy > 0 ? sxy / sqrt(sxx * syy) : NAN;
}

static void check_recording(const char *path, const char *name)
{
    tforge_device_file device;
    assert_int_equal(tforge_device_file_read(&device, COSTMODELS_FIXTURES
                                             "/h200_placeholder_device.json", 1), 0);
    const tforge_costmodel_interface *model = tforge_static_roofline.get(0)->interface;
    void *state = NULL;
    assert_int_equal(model->create(&state, &host, NULL), 0);
    tforge_recording *rec = NULL;
    if (tforge_recording_read(&rec, path))
        fail_msg("%s: %s", path, tforge_error_last()->message);
    facts f = read_facts(name);
    if (!(f.bytes > 0) && !(f.flops > 0)) { /* its task states neither: nothing to bound */
        tforge_costmodel_candidate unknown = {sizeof unknown, f.bytes, f.flops, 1, 4, 0, 0, 0,
                                              &device.device};
        tforge_costmodel_prediction out;
        assert_int_equal(model->predict(state, &unknown, &out), TFORGE_PLUGIN_EINPUT);
        print_message("%-28s no bytes nor flops in its task: not bounded\n", name);
        cJSON_Delete(f.doc);
        tforge_recording_free(rec);
        model->destroy(state);
        return;
    }
    const cJSON *grids = cJSON_GetObjectItemCaseSensitive(f.doc, "grid_blocks");

    size_t n = 0, best = 0;
    double *lower = calloc(rec->n_entries, sizeof *lower);
    double *estimate = calloc(rec->n_entries, sizeof *estimate);
    double *time = calloc(rec->n_entries, sizeof *time);
    assert_non_null(lower);
    assert_non_null(estimate);
    assert_non_null(time);
    for (size_t i = 0; i < rec->n_entries; i++) {
        const tforge_recording_entry *e = &rec->entries[i];
        if (e->status != TFORGE_STATUS_OK || !isfinite(e->time))
            continue;
        char *key = NULL;
        assert_int_equal(tforge_recording_key(&key, rec, e->levels), 0);
        const cJSON *grid = cJSON_GetObjectItemCaseSensitive(grids, key);
        if (!cJSON_IsNumber(grid))
            fail_msg("%s: no grid for %s in its facts", name, key);
        double recorded_grid = entry_metric(rec, e, "grid_blocks");
        if (isfinite(recorded_grid) && recorded_grid != grid->valuedouble)
            fail_msg("%s %s: the task's grid %g, the recording's %g", name, key,
                     grid->valuedouble, recorded_grid);
        free(key);
        tforge_profile p;
        tforge_profile_init(&p);
        tforge_profile_set(&p, "bytes", f.bytes);
        tforge_profile_set(&p, "flops", f.flops);
        tforge_profile_set(&p, "grid_blocks", grid->valuedouble);
        tforge_profile_set(&p, "num_warps", entry_warps(rec, e));
        tforge_profile_set(&p, "registers", entry_metric(rec, e, "registers"));
        tforge_profile_set(&p, "shared_bytes", entry_metric(rec, e, "shared_bytes"));
        tforge_costmodel_candidate c;
        tforge_sol_candidate(&c, &p, f.uses_tensor_cores, &device.device);
        tforge_costmodel_prediction out;
        assert_int_equal(model->predict(state, &c, &out), 0);
        if (!(out.lower <= e->time))
            fail_msg("%s: a configuration measured %.4f ms, under its bound %.4f ms", name,
                     e->time, out.lower);
        lower[n] = out.lower;
        estimate[n] = out.estimate;
        time[n] = e->time;
        if (time[n] < time[best])
            best = n;
        n++;
    }
    assert_true(n > 0);

    size_t pruned = 0;
    for (uint64_t seed = 1; seed <= SEEDS; seed++) {
        tforge_rng rng;
        tforge_rng_seed(&rng, seed);
        size_t *order = calloc(n, sizeof *order);
        assert_non_null(order);
        for (size_t i = 0; i < n; i++)
            order[i] = i;
        for (size_t i = n - 1; i > 0; i--) {
            size_t j = (size_t)tforge_rng_below(&rng, i + 1), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        double incumbent = INFINITY;
        for (size_t k = 0; k < n; k++) {
            size_t i = order[k];
            if (tforge_sol_prunes(lower[i], incumbent, MARGIN)) {
                if (i == best)
                    fail_msg("%s seed %llu: the optimum (%.4f ms) pruned by its bound %.4f ms",
                             name, (unsigned long long)seed, time[i], lower[i]);
                pruned++;
                continue;
            }
            incumbent = fmin(incumbent, time[i]);
        }
        free(order);
    }
    print_message("%-28s %4zu configs  bound %.4f ms  optimum %.4f ms (%.0f%% of speed of light)"
                  "  pruned %.1f%%  estimate~time rank correlation %.2f\n", name, n,
                  lower[best], time[best], tforge_sol_percent(lower[best], time[best]),
                  100.0 * (double)pruned / (double)(n * SEEDS),
                  ranks_correlation(estimate, time, n));
    free(lower);
    free(estimate);
    free(time);
    cJSON_Delete(f.doc);
    tforge_recording_free(rec);
    model->destroy(state);
}

#define RECORDING(dir, name)                                                                     \
    static void name##_(void **unused)                                                           \
    {                                                                                            \
        (void)unused;                                                                            \
        check_recording(dir "/" #name ".json.gz", #name);                                        \
    }

RECORDING(DATA_H200, attention_0_H200)
RECORDING(DATA_H200, conv2d_0_H200)
RECORDING(DATA_H200, layer_norm_0_H200)
RECORDING(DATA_H200, matmul_0_H200)
RECORDING(DATA_H200, matmul_2_H200)
RECORDING(DATA_H200, rms_norm_0_H200)
RECORDING(DATA_H200, softmax_0_H200)
RECORDING(PROFILE_RECORDINGS, attention_counters_H200)
RECORDING(PROFILE_RECORDINGS, layer_norm_counters_H200)
RECORDING(PROFILE_RECORDINGS, rms_norm_counters_H200)
RECORDING(PROFILE_RECORDINGS, rope_counters_H200)
RECORDING(PROFILE_RECORDINGS, softmax_counters_H200)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(attention_0_H200_),        cmocka_unit_test(conv2d_0_H200_),
        cmocka_unit_test(layer_norm_0_H200_),       cmocka_unit_test(matmul_0_H200_),
        cmocka_unit_test(matmul_2_H200_),           cmocka_unit_test(rms_norm_0_H200_),
        cmocka_unit_test(softmax_0_H200_),          cmocka_unit_test(attention_counters_H200_),
        cmocka_unit_test(layer_norm_counters_H200_), cmocka_unit_test(rms_norm_counters_H200_),
        cmocka_unit_test(rope_counters_H200_),      cmocka_unit_test(softmax_counters_H200_),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
