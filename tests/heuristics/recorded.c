/* The bottleneck heuristic on counters recorded on the H200 (experiments/profile/recordings/,
 * every configuration of five examples profiled with CUPTI): each example's baseline and its
 * fastest configuration get the labels their counters call for by inspection
 * (experiments/NOTES.md, session 13), through the replay backend's profile op as forge and
 * rules are steered offline. */
#include "backend.h"
#include "recording.h"
#include "replay.h"

#include "tforge/plugin/heuristic.h"
#include "tforge/space.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

extern const tforge_plugin_module tforge_static_bottleneck;

static const tforge_host host = {TFORGE_PLUGIN_ABI_VERSION_INIT, sizeof(tforge_host), NULL, NULL,
                                 NULL, NULL, NULL};

static const tforge_heuristic_interface *heuristic(void)
{
    return tforge_static_bottleneck.get(0)->interface;
}

/* The labels of `config` (JSON of the recording's parameters), or of the recording's fastest
 * configuration when `config` is NULL, as "a,b,..." (strongest first). */
static const char *labels_of(const char *file, const char *config)
{
    static char out[256];
    char path[512];
    snprintf(path, sizeof path, "%s/%s", RECORDINGS, file);
    tforge_recording *rec;
    tforge_replay *replay;
    assert_int_equal(tforge_recording_read(&rec, path), 0);
    assert_int_equal(tforge_replay_open(&replay, rec), 0);
    tforge_level levels[16];
    if (config) {
        assert_int_equal(tforge_recording_config_levels(levels, rec, config, path), 0);
    } else {
        const tforge_recording_entry *best = NULL;
        for (size_t i = 0; i < rec->n_entries; i++)
            if (rec->entries[i].status == TFORGE_STATUS_OK &&
                (!best || rec->entries[i].time < best->time))
                best = &rec->entries[i];
        memcpy(levels, best->levels, rec->n_params * sizeof *levels);
    }
    tforge_backend_args args = TFORGE_BACKEND_ARGS_INIT;
    args.space = tforge_replay_space(replay);
    args.recording = rec;
    tforge_backend backend;
    assert_int_equal(tforge_backend_open(&backend, &tforge_backend_replay, &args), 0);
    tforge_candidate c = {.point = levels};
    tforge_profile p;
    assert_int_equal(tforge_backend_profile(&backend, &c, NULL, 1, &p), 0);
    assert_int_equal(p.counters, TFORGE_COUNTERS_OK);
    tforge_space_view view = tforge_space_get_view(args.space);
    tforge_options_view none = {sizeof none, 0, NULL, NULL};
    tforge_heuristic_input input = {sizeof input, &view, NULL};
    void *state = NULL;
    assert_int_equal(heuristic()->create(&state, &host, &none, &input), 0);
    const tforge_bottleneck *labels;
    uint32_t n;
    assert_int_equal(heuristic()->classify(state, &p, &labels, &n), 0);
    out[0] = '\0';
    for (uint32_t i = 0; i < n; i++)
        snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s", i ? "," : "",
                 labels[i].label);
    heuristic()->destroy(state);
    tforge_backend_close(&backend);
    tforge_replay_free(replay);
    tforge_recording_free(rec);
    return out;
}

#define SMALL_ROWS "{\"BLOCK_N\":128,\"num_warps\":4,\"num_stages\":1}"

/* Baselines: small blocks, no unit at 60% of its peak (softmax sm 49%, DRAM 34%; layer norm sm
 * 45%, DRAM 31%; RoPE sm 55%, DRAM 17%): latency-bound. The fastest configurations stream at
 * 66-82% of DRAM's peak: memory-bound; layer norm's (8192-wide rows on 4 warps, 128 registers a
 * thread) also holds 25% occupancy by its registers. Attention's fastest keeps sm at 59%, issue
 * at 61%, DRAM at 4%, and 121 registers on 8 warps cap its occupancy at 25%. */
static void labels_the_h200_recordings(void **state)
{
    (void)state;
    static const struct {
        const char *file, *config, *labels;
    } cases[] = {
        {"softmax_counters_H200.json.gz", SMALL_ROWS, "latency-bound"},
        {"softmax_counters_H200.json.gz", NULL, "memory-bound"},
        {"layer_norm_counters_H200.json.gz", SMALL_ROWS, "latency-bound"},
        {"layer_norm_counters_H200.json.gz", NULL, "memory-bound,low-occupancy"},
        {"rms_norm_counters_H200.json.gz", NULL, "memory-bound"},
        {"rope_counters_H200.json.gz", "{\"BLOCK_H\":1,\"num_warps\":4,\"num_stages\":1}",
         "latency-bound"},
        {"rope_counters_H200.json.gz", NULL, "memory-bound"},
        {"attention_counters_H200.json.gz", NULL, "latency-bound,low-occupancy"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        assert_string_equal(labels_of(cases[i].file, cases[i].config), cases[i].labels);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(labels_the_h200_recordings)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
