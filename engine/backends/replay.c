/* The replay backend: answers from a recorded tuning space instead of a GPU, charging the
 * recorded compile and benchmark times, so that strategies are compared offline (in evaluations
 * and in wall-clock time) against real GPU measurements. The loop's space may be the recording's
 * own (the strategy lab) or a task's (`tune --backend replay:FILE`): its dimensions are matched
 * to the recording's parameters by name and value. A candidate the recording lacks is an error:
 * the replay cannot answer it honestly. */
#include "pool.h"
#include "profile.h"
#include "replay.h"
#include "tforge/error.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The noise stream is separate from the strategy's, so noise never changes its proposals. */
enum { NOISE_STREAM = 0x6e6f697365 };
#define NO_LEVEL UINT32_MAX

typedef struct replay_state {
    const tforge_backend_args *args;
    const tforge_space *space;
    const tforge_recording *rec;
    const tforge_replay *replay;
    tforge_replay *own; /* the index opened here when the caller lent none */
    uint32_t *dim_of;      /* per recording parameter: the loop space's dimension */
    uint32_t **level_of;   /* per recording parameter: space level -> recording level */
    tforge_level *levels;  /* scratch: one candidate's recording levels */
    tforge_rng noise;
    pool *checker;         /* NULL unless args->check */
} replay_state;

static void close_replay(void *state)
{
    replay_state *r = state;
    if (!r)
        return;
    for (uint32_t p = 0; r->level_of && p < r->rec->n_params; p++)
        free(r->level_of[p]);
    free(r->level_of);
    free(r->dim_of);
    free(r->levels);
    tforge_replay_free(r->own);
    pool_close(r->checker);
    free(r);
}

/* Whether level `l` of the space's dimension `d` is value `v` of the recording's parameter. */
static int same_value(const tforge_space *space, uint32_t d, uint32_t l,
                      const tforge_recording_param *param, uint32_t v)
{
    switch (tforge_space_kind(space, d)) {
    case TFORGE_DIM_CATEGORICAL:
        return strcmp(tforge_space_label(space, d, l), param->texts[v]) == 0;
    case TFORGE_DIM_BOOLEAN:
        return strcmp(param->texts[v], l ? "True" : "False") == 0 ||
               (!isnan(param->numbers[v]) && param->numbers[v] == (double)l);
    default:
        return !isnan(param->numbers[v]) && param->numbers[v] == tforge_space_value(space, d, l);
    }
}

static int match_space(replay_state *r)
{
    uint32_t n = r->rec->n_params;
    r->dim_of = calloc(n ? n : 1, sizeof *r->dim_of);
    r->level_of = calloc(n ? n : 1, sizeof *r->level_of);
    r->levels = calloc(n ? n : 1, sizeof *r->levels);
    if (!r->dim_of || !r->level_of || !r->levels)
        return tforge_error_set(TFORGE_ENOMEM, "out of memory opening the replay");
    for (uint32_t p = 0; p < n; p++) {
        const tforge_recording_param *param = &r->rec->params[p];
        int d = tforge_space_find(r->space, param->name);
        if (d < 0)
            return tforge_error_set(TFORGE_EINPUT, "replay: the recording's parameter %s is not "
                                    "a parameter of the task", param->name);
        uint32_t levels = tforge_space_levels(r->space, (uint32_t)d);
        r->dim_of[p] = (uint32_t)d;
        if (!(r->level_of[p] = malloc(levels * sizeof **r->level_of)))
            return tforge_error_set(TFORGE_ENOMEM, "out of memory opening the replay");
        for (uint32_t l = 0; l < levels; l++) {
            r->level_of[p][l] = NO_LEVEL;
            for (uint32_t v = 0; v < param->n_values && r->level_of[p][l] == NO_LEVEL; v++)
                if (same_value(r->space, (uint32_t)d, l, param, v))
                    r->level_of[p][l] = v;
        }
    }
    return 0;
}

int tforge_replay_check_objective(const tforge_replay *replay, tforge_costmodel *objective)
{
    const tforge_recording *rec = tforge_replay_recording(replay);
    const tforge_space *space = tforge_replay_space(replay);
    char missing[sizeof ((tforge_measurement *)0)->message] = "";
    size_t ran = 0;
    for (uint64_t i = 0; i < tforge_space_count(space); i++) {
        tforge_measurement m;
        tforge_measurement_init(&m);
        tforge_replay_answer(&m, replay, i, NULL);
        if (m.status != TFORGE_STATUS_OK)
            continue;
        ran++;
        int rc = tforge_costmodel_score(objective, &m);
        if (rc)
            return rc;
        if (m.status == TFORGE_STATUS_OK && !isnan(m.value))
            return 0;
        if (!missing[0])
            snprintf(missing, sizeof missing, "%s", m.message);
    }
    if (!ran) /* nothing ran: no objective has anything to say, the replay says so itself */
        return 0;
    char metrics[512] = "";
    for (uint32_t k = 0, used = 0; k < rec->n_metrics && used < sizeof metrics; k++)
        used += (uint32_t)snprintf(metrics + used, sizeof metrics - used, "%s%s", k ? ", " : "",
                                   rec->metric_names[k]);
    return tforge_error_set(TFORGE_EINPUT, "objective %s: none of the %zu recorded "
                            "configurations that ran has a value (%s); the recording holds "
                            "time%s%s", tforge_costmodel_objective(objective), ran,
                            missing[0] ? missing : "no reason given", metrics[0] ? " and " : "",
                            metrics[0] ? metrics : " alone");
}

static int open_replay(void **state, const tforge_backend_args *args)
{
    if (!args->recording)
        return tforge_error_set(TFORGE_EINPUT, "the replay backend needs a recorded space");
    replay_state *r = calloc(1, sizeof *r);
    if (!r)
        return tforge_error_set(TFORGE_ENOMEM, "out of memory opening the replay");
    r->args = args;
    r->space = args->space;
    r->rec = args->recording;
    tforge_rng_seed(&r->noise, args->noise_seed ^ NOISE_STREAM);
    int rc = 0;
    if (args->replay)
        r->replay = args->replay;
    else if (!(rc = tforge_replay_open(&r->own, r->rec)))
        r->replay = r->own;
    if (!rc)
        rc = match_space(r);
    if (!rc && args->objective)
        rc = tforge_replay_check_objective(r->replay, args->objective);
    if (!rc && args->check)
        rc = pool_open(&r->checker, args, POOL_CHECK);
    if (rc) {
        close_replay(r);
        return rc;
    }
    *state = r;
    return 0;
}

/* A task config's recording levels: each recording parameter's value, by number or text;
 * other keys (fixed parameters of the task) are not the recording's business. */
static int config_levels(replay_state *r, const char *config)
{
    cJSON *o = cJSON_Parse(config);
    int rc = cJSON_IsObject(o) ? 0 : tforge_error_set(TFORGE_EINPUT, "replay: the config %s is "
                                                      "not a JSON object", config);
    for (uint32_t p = 0; !rc && p < r->rec->n_params; p++) {
        const tforge_recording_param *param = &r->rec->params[p];
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, param->name);
        uint32_t found = NO_LEVEL;
        for (uint32_t l = 0; v && l < param->n_values && found == NO_LEVEL; l++)
            if (cJSON_IsNumber(v) ? param->numbers[l] == v->valuedouble
                : cJSON_IsString(v) ? strcmp(param->texts[l], v->valuestring) == 0
                : cJSON_IsBool(v) ? strcmp(param->texts[l], cJSON_IsTrue(v) ? "True" : "False") == 0
                : 0)
                found = l;
        if (!v) /* a baseline the worker could not place: what its launch sets is unknown */
            rc = tforge_error_set(TFORGE_EINPUT, "replay: the config %s leaves the recording's "
                                  "parameter %s to the file's own launch, whose value the "
                                  "task's load could not tell (the launch needs real inputs, "
                                  "or an inputs_fn makes them): set it in the baseline of %s",
                                  config, param->name,
                                  r->args->task ? r->args->task->path : "the task");
        else if (found == NO_LEVEL)
            rc = tforge_error_set(TFORGE_ENOTFOUND, "replay: the config %s is not in the "
                                  "recording (%s)", config, param->name);
        else
            r->levels[p] = (tforge_level)found;
    }
    cJSON_Delete(o);
    return rc;
}

/* The recorded entry of a candidate, as an enumerated index of the replay's space. */
static int lookup(uint64_t *index, replay_state *r, const tforge_candidate *c)
{
    int rc = 0, missing = 0;
    if (c->point) {
        for (uint32_t p = 0; p < r->rec->n_params && !missing; p++) {
            uint32_t l = r->level_of[p][c->point[r->dim_of[p]]];
            missing = l == NO_LEVEL;
            r->levels[p] = (tforge_level)l;
        }
    } else if ((rc = config_levels(r, c->config))) {
        return rc;
    }
    *index = missing ? TFORGE_NO_INDEX : tforge_replay_index_of_levels(r->replay, r->levels);
    if (*index != TFORGE_NO_INDEX)
        return 0;
    char *text = NULL;
    if (c->point)
        tforge_space_format(&text, r->space, c->point, NULL);
    rc = tforge_error_set(TFORGE_ENOTFOUND, "replay: the point %s is not in the recording",
                          text ? text : c->config);
    free(text);
    return rc;
}

static int answer(replay_state *r, const tforge_candidate *c, tforge_rng *noise,
                  tforge_measurement *out)
{
    uint64_t index = 0;
    int rc = lookup(&index, r, c);
    if (rc)
        return rc;
    tforge_replay_answer(out, r->replay, index, noise);
    if (out->status != TFORGE_STATUS_OK)
        snprintf(out->message, sizeof out->message, "recorded as failed");
    return 0;
}

static int evaluate(void *state, const tforge_candidate *candidates, size_t n,
                    tforge_measurement *out)
{
    replay_state *r = state;
    for (size_t i = 0; i < n; i++) {
        int rc = answer(r, &candidates[i], r->args->noise ? &r->noise : NULL, &out[i]);
        if (rc)
            return rc;
        if (r->checker && out[i].status == TFORGE_STATUS_OK) {
            pool_job job;
            if ((rc = pool_job_of(&job, r->checker, &candidates[i], &out[i])) == 1)
                continue;
            if (rc)
                return rc;
            pool_check(r->checker, &job, &out[i]); /* a failed check overrides the record */
            pool_job_free(&job);
            if ((rc = pool_task_error(r->checker)))
                return rc;
        }
    }
    return 0;
}

static int retime(void *state, const tforge_candidate *candidate, uint64_t seed,
                  tforge_measurement *out)
{
    tforge_rng rng;
    tforge_rng_seed(&rng, seed);
    return answer(state, candidate, &rng, out);
}

/* The recorded warps at an entry: the parameter whose dimension's effect is warps, or NAN when
 * the recording has none (or not as a number). */
static double recorded_warps(const replay_state *r, const tforge_recording_entry *e)
{
    for (uint32_t p = 0; p < r->rec->n_params; p++)
        if (tforge_space_effect(r->space, r->dim_of[p]) == TFORGE_EFFECT_WARPS)
            return r->rec->params[p].numbers ? r->rec->params[p].numbers[e->levels[p]] : NAN;
    return NAN;
}

/* The recorded metrics of the candidate's entry that profile.h names (counters only when asked
 * for), then the static metrics over the H200's limits; the launch's grid, bytes and flops are
 * whatever the recording has of them. */
static int profile(void *state, const tforge_candidate *candidate,
                   const tforge_measurement *measured, int counters, tforge_profile *out)
{
    replay_state *r = state;
    uint64_t index = 0;
    int rc = lookup(&index, r, candidate);
    if (rc)
        return rc;
    const tforge_recording_entry *e = tforge_replay_entry(r->replay, index);
    tforge_profile_init(out);
    int any_counter = 0;
    for (uint32_t k = 0; k < r->rec->n_metrics && !rc; k++) {
        const char *name = r->rec->metric_names[k];
        int counter = tforge_profile_counter_name(name);
        if (!isfinite(e->metrics[k]) || !tforge_profile_known_name(name) || (counter && !counters))
            continue;
        any_counter |= counter;
        rc = tforge_profile_set(out, name, e->metrics[k]);
    }
    out->counters = any_counter ? TFORGE_COUNTERS_OK : TFORGE_COUNTERS_NONE;
    tforge_measurement recorded;
    if (!measured) {
        tforge_measurement_init(&recorded);
        tforge_replay_answer(&recorded, r->replay, index, NULL);
        measured = &recorded;
    }
    double num_warps = recorded_warps(r, e);
    if (isnan(num_warps))
        num_warps = tforge_profile_get(out, "num_warps");
    if (!rc)
        rc = tforge_profile_add_static(out, tforge_device_h200(), measured, num_warps,
                                       tforge_profile_get(out, "grid_blocks"),
                                       tforge_profile_get(out, "bytes"),
                                       tforge_profile_get(out, "flops"));
    return rc;
}

static unsigned restarts(const void *state)
{
    const replay_state *r = state;
    return r->checker ? pool_restarts(r->checker) : 0;
}

const tforge_backend_type tforge_backend_replay = {"replay", 1, open_replay, evaluate, retime,
                                                    profile, restarts, close_replay, NULL, NULL};
