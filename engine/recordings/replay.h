/* The replay backend: answers evaluations from a recorded tuning space instead of a GPU, and
 * charges the recorded compile and benchmark times, so that strategies can be compared offline
 * (in evaluations and in wall-clock time) against real GPU measurements. */
#ifndef TFORGE_ENGINE_REPLAY_H
#define TFORGE_ENGINE_REPLAY_H

#include "recording.h"
#include "tforge/space.h"

typedef struct tforge_replay tforge_replay;

/* What one evaluation returns. */
typedef struct tforge_replay_result {
    tforge_status status;
    double value;      /* ms; when status is OK */
    double spread;     /* relative spread of the recorded runs (IQR / median), 0 when unknown */
    double charged_ms; /* what the evaluation cost when it was recorded: compile + benchmark */
} tforge_replay_result;

/* Builds the space of the recording (numeric parameters as ordinal lists, the others as
 * categoricals; the valid points are exactly the recorded configurations) and an index from its
 * points to the entries. `rec` must outlive the replay. */
int tforge_replay_open(tforge_replay **out, const tforge_recording *rec);
void tforge_replay_free(tforge_replay *replay);

const tforge_space *tforge_replay_space(const tforge_replay *replay);
const tforge_recording *tforge_replay_recording(const tforge_replay *replay);
/* The recording's entry for enumerated point `index` of the space. */
const tforge_recording_entry *tforge_replay_entry(const tforge_replay *replay, uint64_t index);

/* The enumerated index of the configuration whose Kernel Tuner key ("v1,v2,...") is `key`, or
 * TFORGE_NO_INDEX. */
uint64_t tforge_replay_find_key(const tforge_replay *replay, const char *key);
/* The key of enumerated point `index`, owned by the replay. */
const char *tforge_replay_key(const tforge_replay *replay, uint64_t index);

/* Answers `point`. With `noise` (not NULL) the value is one of the recorded individual runs,
 * drawn with it, instead of the recorded time. A point that is not in the recording is an error
 * (TFORGE_ENOTFOUND) that names it, whether or not it satisfies the constraints. */
int tforge_replay_evaluate(tforge_replay_result *out, const tforge_replay *replay,
                           const tforge_level *point, tforge_rng *noise);

#endif
