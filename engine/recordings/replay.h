/* The replay backend: answers evaluations from a recorded tuning space instead of a GPU, and
 * charges the recorded compile and benchmark times, so that strategies can be compared offline
 * (in evaluations and in wall-clock time) against real GPU measurements. */
#ifndef TFORGE_ENGINE_REPLAY_H
#define TFORGE_ENGINE_REPLAY_H

#include "recording.h"
#include "tforge/measurement.h"
#include "tforge/space.h"

typedef struct tforge_replay tforge_replay;

/* Builds the space of the recording (numeric parameters as ordinal lists, the others as
 * categoricals; the valid points are exactly the recorded configurations) and an index from its
 * points to the entries. `rec` must outlive the replay. */
int tforge_replay_open(tforge_replay **out, const tforge_recording *rec);
void tforge_replay_free(tforge_replay *replay);

const tforge_space *tforge_replay_space(const tforge_replay *replay);
const tforge_recording *tforge_replay_recording(const tforge_replay *replay);
/* The recording's entry for enumerated point `index` of the space. */
const tforge_recording_entry *tforge_replay_entry(const tforge_replay *replay, uint64_t index);

/* The objective replayed: "time" (the default) or one of the recording's metrics, minimised, or,
 * when `higher` (-1: as tforge_replay_objective_higher says of its name), maximised by
 * minimising its inverse, so that ratios to the optimum keep their meaning for rates (GFLOP/s).
 * An entry that ran but lacks the metric counts as failed for it. Errors name the objective. */
int tforge_replay_set_objective(tforge_replay *replay, const char *name, int higher);
/* 1 for names of rates ("GFLOP/s", "GB/s", "TFLOPS/J"): higher is better; else 0. */
int tforge_replay_objective_higher(const char *name);
/* The objective's name, and whether it is maximised (`higher` may be NULL). */
const char *tforge_replay_objective(const tforge_replay *replay, int *higher);
/* Entry `entry`'s value to minimise (NAN unless its status, set when not NULL, is OK). */
double tforge_replay_value(const tforge_replay *replay, size_t entry, uint32_t *status);

/* A recording with no entries that describes `space`: parameter p is dimension p and its value
 * l is level l, written as the space writes it (tforge_space_text: ordinal values as numbers,
 * categorical labels and False/True as strings), so that a point's levels are its recording
 * levels: how a run's space is stored and exported. Device, problem size and objective are
 * those of `like` (may be NULL). */
int tforge_recording_describe_space(tforge_recording **out, const tforge_space *space,
                                    const tforge_recording *like, const char *kernel_name);

/* The enumerated index of the configuration with these recording levels (n_params of them, in
 * the recording's own value order), or TFORGE_NO_INDEX. */
uint64_t tforge_replay_index_of_levels(const tforge_replay *replay, const tforge_level *levels);

/* Answers enumerated point `index` into `out` (initialised by the caller): the recorded status,
 * time (value and median_ms), spread of the recorded runs, repeats, compile time, and the wall
 * time charged (compile + benchmark), and the recorded metrics as far as a measurement holds
 * them, named as a GPU worker's measurement names them (Kernel Tuner's nvml_energy and
 * nvml_power are energy_j and power_w; the others keep their names). With `noise` (not NULL) the value is one of the recorded
 * individual runs, drawn with it, instead of the recorded time. */
void tforge_replay_answer(tforge_measurement *out, const tforge_replay *replay, uint64_t index,
                          tforge_rng *noise);

#endif
