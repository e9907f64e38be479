#include "lab.h"

#include "digest.h"
#include "forge.h"
#include "tforge/error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A replayed entry's individual runs and the rest of what it recorded, for the store's row. */
static int entry_extras(void *context, const tforge_candidate *c, char **json)
{
    const tforge_replay *replay = context;
    uint64_t index = tforge_space_index_of(tforge_replay_space(replay), c->point);
    *json = NULL;
    if (index == TFORGE_NO_INDEX)
        return 0;
    return tforge_recording_extras_json(json, tforge_replay_recording(replay),
                                        tforge_replay_entry(replay, index));
}

/* A finished stored run's traces, read from the store without driving the strategy again. */
static void traces_of(double *best, double *charged, uint32_t budget,
                      const tforge_run_history *h)
{
    double spent = 0.0, low = NAN;
    for (uint32_t b = 0; b < budget; b++) {
        const tforge_measurement *m = &h->measurements[b];
        if (m->status == TFORGE_STATUS_OK && !(m->value >= low))
            low = m->value;
        spent += isnan(m->wall_ms) ? 0.0 : m->wall_ms;
        best[b] = low;
        if (charged)
            charged[b] = spent;
    }
}

/* Opens (or resumes) the stored run of these settings. */
static int open_run(tforge_run_record *record, tforge_run_history *history,
                    const tforge_lab_run_options *o)
{
    char *space = NULL;
    int rc = tforge_recording_space_json(&space, record->space);
    if (rc)
        return rc;
    tforge_store_run like = {0};
    like.space_json = space; /* so that `tforge store export` can write the run as a recording */
    like.source = (char *)o->source;
    like.strategy = (char *)o->strategy;
    like.settings_json = (char *)o->settings_json;
    like.seed = o->seed;
    like.budget = o->budget;
    like.environment_json = "{\"backend\": \"replay\"}";
    char inputs[4200] = "";
    size_t used = 0;
    if (o->source && access(o->source, R_OK) == 0)
        rc = tforge_digest_append(inputs, sizeof inputs, &used, o->source);
    like.inputs = inputs;
    if (!rc)
        rc = tforge_run_open(&record->run_id, history, o->store, &like, TFORGE_RUN_EXACT);
    free(space);
    return rc;
}

int tforge_lab_run(double *best, double *charged, uint32_t *n_evals, const tforge_registry *reg,
                   const tforge_replay *replay, const tforge_lab_run_options *o)
{
    const tforge_space *space = tforge_replay_space(replay);
    const tforge_recording *rec = tforge_replay_recording(replay);
    tforge_recording *described = NULL;
    tforge_run_history history = {0};
    tforge_run_record record = {o->store, 0, NULL, entry_extras, (void *)replay};
    tforge_backend backend = {0};
    tforge_loop_outcome out = {0};
    int rc = 0;
    if (o->version != TFORGE_LAB_RUN_OPTIONS_VERSION)
        return tforge_error_set(TFORGE_EINPUT, "lab: options of version %u, expected %u",
                                o->version, TFORGE_LAB_RUN_OPTIONS_VERSION);
    if (o->store) {
        rc = tforge_recording_describe_space(&described, space, rec, rec->kernel_name);
        record.space = described;
        if (!rc)
            rc = open_run(&record, &history, o);
        if (!rc && history.n >= o->budget) { /* finished already: its traces are stored */
            traces_of(best, charged, o->budget, &history);
            *n_evals = o->budget;
            goto cleanup;
        }
    }
    tforge_backend_args args = TFORGE_BACKEND_ARGS_INIT;
    args.space = space;
    args.recording = rec;
    args.replay = replay;
    args.noise = o->noise;
    args.noise_seed = o->seed;
    args.objective = o->objective;
    if (!rc)
        rc = tforge_backend_open(&backend, &tforge_backend_replay, &args);
    int steered;
    tforge_forge *forge = NULL;
    tforge_forge_options fo = TFORGE_FORGE_OPTIONS_INIT;
    fo.heuristic = o->heuristic;
    fo.heuristic_options = o->heuristic_options;
    fo.record = o->store ? &record : NULL;
    tforge_forge_options_for(&fo, o->strategy);
    tforge_loop_options lo = TFORGE_LOOP_OPTIONS_INIT;
    tforge_forge_companion_texts companion;
    lo.strategy = tforge_forge_plugin(o->strategy, &steered);
    lo.strategy_options = o->options;
    tforge_forge_companion(&lo, o->strategy, &companion);
    if (!rc && steered && !(rc = tforge_forge_open(&forge, reg, space, &backend, &fo)))
        lo.steer = tforge_forge_steer(forge);
    lo.patience = o->patience;
    lo.seed = o->seed;
    lo.budget = o->budget;
    lo.batch = o->batch;
    lo.lookahead = o->lookahead;
    lo.final_rounds = 0;
    lo.record = o->store ? &record : NULL;
    lo.history = o->store ? &history : NULL;
    if (!rc)
        rc = tforge_loop_run(&out, reg, space, &backend, &lo);
    if (!rc) {
        double spent = 0.0, last = NAN;
        for (uint32_t b = 0; b < o->budget; b++) {
            if (b < out.n_evals) {
                last = out.evals[b].best_plain;
                spent += out.evals[b].m.wall_ms;
            }
            best[b] = last;
            if (charged)
                charged[b] = spent;
        }
        *n_evals = (uint32_t)out.n_evals;
    }
    tforge_forge_free(forge);
cleanup:
    tforge_loop_outcome_dispose(&out);
    tforge_backend_close(&backend);
    tforge_run_history_dispose(&history);
    tforge_recording_free(described);
    return rc;
}
