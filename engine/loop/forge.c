#include "forge.h"

#include "grow.h"
#include "tforge/error.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tforge_forge {
    const tforge_space *space;
    tforge_space_view view;
    tforge_backend *backend;
    tforge_forge_options o;
    const char *heuristic_id;
    const tforge_heuristic_interface *heuristic;
    void *state;
    char **keys, **values; /* the heuristic's options, split */
    uint32_t n_options;
    const char **families; /* per dimension: its owner, "" for a knob (heuristic.h) */
    uint32_t dims;
    uint64_t n_levels;
    uint32_t *offset;      /* per dimension: where its levels' weights start */
    double *weights;       /* scratch: a prior */
    tforge_forge_profile *profiles;
    size_t n, cap;
    tforge_loop_steer steer;
};

const char *tforge_forge_plugin(const char *strategy, int *steered)
{
    *steered = strcmp(strategy, "forge") == 0 || strcmp(strategy, "rules") == 0;
    return strcmp(strategy, "forge") == 0 ? "bo" : strategy;
}

/* The value text that bo's option `key` is given in `options` ("key=value", NULL-terminated),
 * the last one given; NULL when it is not there. */
static const char *bo_option(const char *const *options, const char *key)
{
    size_t len = strlen(key);
    const char *value = NULL;
    for (size_t i = 0; options && options[i]; i++)
        if (strncmp(options[i], key, len) == 0 && options[i][len] == '=')
            value = options[i] + len + 1;
    return value;
}

void tforge_forge_companion(tforge_loop_options *o, const char *strategy,
                            tforge_forge_companion_texts *texts)
{
    int forge = strcmp(strategy, "forge") == 0;
    memset(texts, 0, sizeof *texts);
    size_t n = 0;
    texts->options[n++] = "walk=0";
    texts->options[n++] = "refute=1";
    texts->options[n++] = "compound=1";
    const char *tail = bo_option(o->strategy_options, "unchanged_tail");
    const char *knobs_first = bo_option(o->strategy_options, "knobs_first");
    if (tail && strtod(tail, NULL) > 0) {
        snprintf(texts->after, sizeof texts->after, "compound_after=%s",
                 knobs_first ? knobs_first : TFORGE_FORGE_BO_KNOBS_FIRST);
        texts->options[n++] = texts->after;
    }
    o->companion = forge ? "rules" : NULL;
    o->companion_options = forge ? texts->options : NULL;
    o->companion_share = forge ? TFORGE_FORGE_RULE_SHARE : 0;
}

void tforge_forge_options_for(tforge_forge_options *o, const char *strategy)
{
    o->check_prior = strcmp(strategy, "forge") == 0;
}

const char *tforge_forge_way_name(tforge_forge_way way)
{
    static const char *const names[] = {"keep", "up", "down", "other"};
    return (unsigned)way < 4 ? names[way] : "?";
}

static void free_profile(tforge_forge_profile *p)
{
    for (size_t i = 0; i < p->n_labels; i++) {
        free(p->labels[i].label);
        free(p->labels[i].evidence);
        free(p->labels[i].rule);
        free(p->labels[i].moves);
    }
    free(p->labels);
}

void tforge_forge_free(tforge_forge *f)
{
    if (!f)
        return;
    if (f->state)
        f->heuristic->destroy(f->state);
    for (uint32_t i = 0; i < f->n_options; i++) {
        free(f->keys[i]);
        free(f->values[i]);
    }
    free(f->keys);
    free(f->values);
    free(f->families);
    for (size_t i = 0; i < f->n; i++)
        free_profile(&f->profiles[i]);
    free(f->profiles);
    free(f->offset);
    free(f->weights);
    free(f);
}

/* "key=value" texts into the two arrays the plugin reads. */
static int split_options(tforge_forge *f, const char *const *options)
{
    uint32_t n = 0;
    while (options && options[n])
        n++;
    f->keys = calloc(n + 1, sizeof *f->keys);
    f->values = calloc(n + 1, sizeof *f->values);
    if (!f->keys || !f->values)
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    for (uint32_t i = 0; i < n; i++) {
        const char *eq = strchr(options[i], '=');
        if (!eq || eq == options[i])
            return tforge_error_set(TFORGE_EINPUT, "heuristic %s: option '%s' is not of the form "
                                    "key=value", f->heuristic_id, options[i]);
        f->keys[i] = strndup(options[i], (size_t)(eq - options[i]));
        f->values[i] = strdup(eq + 1);
        f->n_options = i + 1;
        if (!f->keys[i] || !f->values[i])
            return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    }
    return 0;
}

static int steer_incumbent(void *context, tforge_strategy *const *strategies, size_t n,
                           const tforge_loop_outcome *out, size_t incumbent);
static int profile_batch(void *context, const tforge_loop_outcome *out, size_t first, size_t n);
static int follow(void *context, const tforge_space *space);

/* The space's levels, where each dimension's weights start, the scratch prior and each
 * dimension's family: read again when the space grows (its dimensions stay). The view and the
 * families are updated in place: the heuristic holds pointers to both. */
static int read_space(tforge_forge *f, const tforge_space *space)
{
    f->space = space;
    f->view = tforge_space_get_view(space);
    f->dims = tforge_space_dims(space);
    f->n_levels = 0;
    free(f->weights);
    f->weights = NULL;
    if (!f->offset)
        f->offset = malloc((f->dims ? f->dims : 1) * sizeof *f->offset);
    if (!f->families)
        f->families = malloc((f->dims ? f->dims : 1) * sizeof *f->families);
    if (!f->offset || !f->families)
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    for (uint32_t d = 0; d < f->dims; d++) {
        f->offset[d] = (uint32_t)f->n_levels;
        f->n_levels += tforge_space_levels(space, d);
        f->families[d] = tforge_space_role(space, d) == TFORGE_DIM_KNOB
                             ? ""
                             : tforge_space_owner(space, d);
    }
    f->weights = malloc((f->n_levels + 1) * sizeof *f->weights);
    return f->weights ? 0 : tforge_error_set(TFORGE_ENOMEM, "out of memory");
}

int tforge_forge_open(tforge_forge **out, const tforge_registry *registry,
                      const tforge_space *space, tforge_backend *backend,
                      const tforge_forge_options *o)
{
    *out = NULL;
    if (o->version != TFORGE_FORGE_OPTIONS_VERSION)
        return tforge_error_set(TFORGE_EINPUT, "forge: options of version %u, expected %u",
                                o->version, TFORGE_FORGE_OPTIONS_VERSION);
    tforge_forge *f = calloc(1, sizeof *f);
    if (!f)
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    f->backend = backend;
    f->o = *o;
    f->heuristic_id = o->heuristic ? o->heuristic : "bottleneck";
    f->steer = (tforge_loop_steer){f, o->steer ? steer_incumbent : NULL,
                                   o->profile_all ? profile_batch : NULL, follow};
    int rc = read_space(f, space);
    const tforge_plugin_record *record =
        rc ? NULL : tforge_registry_find(registry, TFORGE_HEURISTIC_INTERFACE_ID, f->heuristic_id);
    if (!rc && !record && tforge_error_last()->code == TFORGE_ENOTFOUND)
        rc = tforge_error_set(TFORGE_ENOTFOUND, "no heuristic plugin %s (`tforge plugins` lists "
                              "those there are; the profile-guided strategies need one)",
                              f->heuristic_id);
    else if (!rc && !record)
        rc = tforge_error_last()->code; /* one of another revision: the message says which */
    if (!rc)
        f->heuristic = tforge_plugin_interface(record, TFORGE_HEURISTIC_INTERFACE_ID);
    if (!rc)
        rc = split_options(f, o->heuristic_options);
    if (!rc)
        rc = tforge_plugin_check_options(record, (const char *const *)f->keys,
                                         (const char *const *)f->values, f->n_options);
    if (!rc) {
        tforge_options_view given = {sizeof given, f->n_options, (const char *const *)f->keys,
                                     (const char *const *)f->values};
        tforge_heuristic_input input = {sizeof input, &f->view, f->families};
        tforge_error_clear();
        if ((rc = f->heuristic->create(&f->state, tforge_registry_host(), &given, &input)) &&
            !tforge_error_last()->message[0])
            tforge_error_set(rc, "heuristic %s refused to start (no reason given)",
                             f->heuristic_id);
        if (rc)
            f->state = NULL;
    }
    if (rc) {
        tforge_forge_free(f);
        return rc;
    }
    *out = f;
    return 0;
}

const tforge_loop_steer *tforge_forge_steer(tforge_forge *f)
{
    return &f->steer;
}

size_t tforge_forge_count(const tforge_forge *f)
{
    return f->n;
}

const tforge_forge_profile *tforge_forge_at(const tforge_forge *f, size_t index)
{
    return index < f->n ? &f->profiles[index] : NULL;
}

/* The profile of evaluation `eval`, or NULL. */
static tforge_forge_profile *find(const tforge_forge *f, size_t eval)
{
    for (size_t i = 0; i < f->n; i++)
        if (f->profiles[i].eval == eval)
            return &f->profiles[i];
    return NULL;
}

const tforge_forge_profile *tforge_forge_find(const tforge_forge *f, size_t eval)
{
    return find(f, eval);
}

const char *tforge_forge_family(const tforge_forge *f, uint32_t dim)
{
    return dim < f->dims ? f->families[dim] : "";
}

const char *tforge_forge_heuristic(const tforge_forge *f)
{
    return f->heuristic_id;
}

/* The dimensions `w` moves at `at` and which way, into `*moves`. */
static int moves_of(tforge_forge_move **moves, size_t *n_moves, const tforge_forge *f,
                    const double *w, const tforge_level *at)
{
    *moves = NULL;
    *n_moves = 0;
    size_t cap = 0;
    for (uint32_t d = 0; d < f->dims; d++) {
        const double *wd = w + f->offset[d], here = wd[at[d]];
        uint32_t levels = tforge_space_levels(f->space, d);
        double up = -INFINITY, down = -INFINITY;
        int flat = 1;
        for (uint32_t l = 0; l < levels; l++) {
            flat &= wd[l] == wd[0];
            if (l > at[d])
                up = fmax(up, wd[l] - here);
            else if (l < at[d])
                down = fmax(down, wd[l] - here);
        }
        if (flat)
            continue;
        tforge_forge_way way;
        if (!(up > 1e-12) && !(down > 1e-12))
            way = TFORGE_FORGE_KEEP;
        else if (tforge_space_kind(f->space, d) != TFORGE_DIM_ORDINAL || up == down)
            way = TFORGE_FORGE_OTHER;
        else
            way = up > down ? TFORGE_FORGE_UP : TFORGE_FORGE_DOWN;
        if (tforge_grow((void **)moves, &cap, *n_moves, sizeof **moves, "a label's moves"))
            return TFORGE_ENOMEM;
        (*moves)[(*n_moves)++] = (tforge_forge_move){d, way};
    }
    return 0;
}

static int heuristic_failed(const tforge_forge *f, int rc, const char *what)
{
    if (!tforge_error_last()->message[0])
        tforge_error_set(rc, "heuristic %s: %s failed (no reason given)", f->heuristic_id, what);
    return rc;
}

/* The prior of `labels` at `at` into f->weights. */
static int prior_of(tforge_forge *f, const tforge_bottleneck *labels, uint32_t n,
                    const tforge_level *at)
{
    memset(f->weights, 0, f->n_levels * sizeof *f->weights);
    if (n == 0)
        return 0;
    tforge_error_clear();
    int rc = f->heuristic->prior(f->state, labels, n, at, f->weights, f->n_levels);
    for (uint64_t i = 0; !rc && i < f->n_levels; i++)
        if (isnan(f->weights[i]) || f->weights[i] == INFINITY)
            rc = tforge_error_set(TFORGE_ERROR, "heuristic %s: prior weight %llu is %g",
                                  f->heuristic_id, (unsigned long long)i, f->weights[i]);
    return rc ? heuristic_failed(f, rc, "prior") : 0;
}

/* Copies the labels and works out what each one's prior alone moves at `at` (may be NULL). */
static int keep_labels(tforge_forge *f, tforge_forge_profile *p, const tforge_bottleneck *labels,
                       uint32_t n, const tforge_level *at)
{
    if (n && !(p->labels = calloc(n, sizeof *p->labels)))
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    for (uint32_t i = 0; i < n; i++) {
        tforge_forge_label *k = &p->labels[i];
        p->n_labels++;
        k->label = strdup(labels[i].label ? labels[i].label : "?");
        k->evidence = strdup(labels[i].evidence ? labels[i].evidence : "");
        k->rule = strdup(labels[i].rule ? labels[i].rule : "");
        k->confidence = labels[i].confidence;
        if (!k->label || !k->evidence || !k->rule)
            return tforge_error_set(TFORGE_ENOMEM, "out of memory");
        int rc = at ? prior_of(f, &labels[i], 1, at) : 0;
        if (!rc && at)
            rc = moves_of(&k->moves, &k->n_moves, f, f->weights, at);
        if (rc)
            return rc;
    }
    return 0;
}

/* The profile's metrics as the store keeps them ({"sm_pct": 41.2, ...}) and its labels (an
 * array of {label, confidence, evidence, rule}), malloc'd texts. */
static int store_texts(char **metrics, char **labels, const tforge_forge_profile *p)
{
    cJSON *m = cJSON_CreateObject(), *l = cJSON_CreateArray();
    for (uint32_t i = 0; m && i < p->profile.n_metrics; i++)
        if (isfinite(p->profile.metrics[i].value))
            cJSON_AddNumberToObject(m, p->profile.metrics[i].name, p->profile.metrics[i].value);
    for (size_t i = 0; l && i < p->n_labels; i++) {
        cJSON *one = cJSON_CreateObject();
        cJSON_AddStringToObject(one, "label", p->labels[i].label);
        cJSON_AddNumberToObject(one, "confidence", p->labels[i].confidence);
        cJSON_AddStringToObject(one, "evidence", p->labels[i].evidence);
        cJSON_AddStringToObject(one, "rule", p->labels[i].rule);
        cJSON_AddItemToArray(l, one);
    }
    *metrics = m ? cJSON_PrintUnformatted(m) : NULL;
    *labels = l ? cJSON_PrintUnformatted(l) : NULL;
    cJSON_Delete(m);
    cJSON_Delete(l);
    return *metrics && *labels ? 0 : tforge_error_set(TFORGE_ENOMEM, "out of memory");
}

/* Records a profile in the run's store, keyed as the loop keys its evaluation. */
static int store_profile(const tforge_forge *f, const tforge_loop_eval *e,
                         const tforge_forge_profile *p)
{
    const tforge_run_record *r = f->o.record;
    if (!r || !r->store || e->resumed)
        return 0;
    char *key = NULL, *params = NULL, *metrics = NULL, *labels = NULL;
    int rc = tforge_loop_key(&key, &params, f->space, e->point, e->config,
                             e->source && e->digest[0] ? e->digest : NULL);
    if (!rc)
        rc = store_texts(&metrics, &labels, p);
    if (!rc) {
        tforge_store_profile row = {key, params, 0, p->profile.counters, p->profile.note, metrics,
                                    labels};
        rc = tforge_store_record_profile(r->store, r->run_id, &row);
    }
    free(key);
    free(params);
    free(metrics);
    free(labels);
    return rc;
}

/* Profiles evaluation `eval` and classifies it, into `*taken` when `taken` is not NULL (NULL
 * when the backend cannot profile: the search goes unsteered). */
static int take(tforge_forge *f, const tforge_loop_outcome *out, size_t eval,
                tforge_forge_profile **taken)
{
    if (taken)
        *taken = NULL;
    if (tforge_grow((void **)&f->profiles, &f->cap, f->n, sizeof *f->profiles, "the profiles"))
        return TFORGE_ENOMEM;
    tforge_forge_profile *p = &f->profiles[f->n++];
    memset(p, 0, sizeof *p);
    p->eval = eval;
    const tforge_loop_eval *e = &out->evals[eval];
    tforge_candidate candidate = {.point = e->point, .config = e->config,
                                          .source = e->source};
    int rc = tforge_backend_profile(f->backend, &candidate, &e->m, f->o.counters, &p->profile);
    if (rc == TFORGE_ENOTFOUND) {
        snprintf(p->note, sizeof p->note, "The %s backend cannot profile",
                 f->backend->type ? f->backend->type->name : "?");
        tforge_error_clear();
        return 0;
    }
    if (rc)
        return rc;
    const tforge_bottleneck *labels = NULL;
    uint32_t n = 0;
    tforge_error_clear();
    if ((rc = f->heuristic->classify(f->state, &p->profile, &labels, &n)))
        return heuristic_failed(f, rc, "classify");
    if (n && !labels)
        return tforge_error_set(TFORGE_ERROR, "heuristic %s: %u labels without an array",
                                f->heuristic_id, n);
    if ((rc = keep_labels(f, p, labels, n, e->point)) || (rc = store_profile(f, e, p)))
        return rc;
    if (!e->point)
        snprintf(p->note, sizeof p->note, "A baseline outside the space: no prior at its levels");
    else if (n == 0)
        snprintf(p->note, sizeof p->note, "No label: no prior");
    if (taken)
        *taken = p;
    return 0;
}

/* The prior's log weight of `point`: the sum of its levels'. */
static double weight_of(const tforge_forge *f, const double *w, const tforge_level *point)
{
    double sum = 0;
    for (uint32_t d = 0; d < f->dims; d++)
        sum += w[f->offset[d] + point[d]];
    return sum;
}

/* The agreement (tforge_forge_agreement) and, into `*n_points`, the points it ranked. */
static double agreement(const tforge_forge *f, const double *w, const tforge_loop_outcome *out,
                        size_t *n_points)
{
    /* the points measured correctly, each one's weight once; then every pair of them */
    const tforge_loop_eval **ok = malloc((out->n_evals + 1) * sizeof *ok);
    double *weight = malloc((out->n_evals + 1) * sizeof *weight);
    size_t n = 0;
    for (size_t i = 0; ok && weight && i < out->n_evals; i++)
        if (out->evals[i].point && out->evals[i].m.status == TFORGE_STATUS_OK) {
            ok[n] = &out->evals[i];
            weight[n] = weight_of(f, w, ok[n]->point);
            n++;
        }
    double sum = 0, pairs = 0;
    for (size_t a = 0; a < n; a++)
        for (size_t b = 0; b < a; b++)
            if (weight[a] != weight[b] && ok[a]->m.value != ok[b]->m.value) {
                sum += (weight[a] > weight[b]) == (ok[a]->m.value < ok[b]->m.value) ? 1 : -1;
                pairs++;
            }
    free(ok);
    free(weight);
    *n_points = n;
    return pairs ? sum / pairs : 0; /* out of memory: no evidence, as with no pairs */
}

double tforge_forge_agreement(const tforge_forge *f, const double *w,
                              const tforge_loop_outcome *out)
{
    size_t n;
    return agreement(f, w, out, &n);
}

int tforge_forge_borne_out(const tforge_forge *f, const double *w, const tforge_loop_outcome *out)
{
    size_t n;
    double tau = agreement(f, w, out, &n);
    return n >= 2 &&
           tau > TFORGE_FORGE_BEYOND_CHANCE * sqrt(2.0 * (2.0 * n + 5) / (9.0 * n * (n - 1.0)));
}

/* Hands the prior of `p`'s labels (none: all zeros remove the one before) to each of the
 * `n_strategies` strategies; with check_prior, none unless the measurements bear it out: a
 * label's remedy is a guess, and followed where the data said otherwise it cost forge
 * evaluations against plain bo on every recording with counters (issue 36), as it did where
 * they agreed no better than chance (attention's priors handed at agreements of 0.04 to 0.25
 * over 7 to 13 points). It reads every pair of the n evaluations, once an incumbent. */
static int hand_prior(tforge_forge *f, tforge_forge_profile *p, const tforge_loop_outcome *out,
                      const tforge_loop_eval *e, tforge_strategy *const *strategies,
                      size_t n_strategies)
{
    size_t n = e->point ? p->n_labels : 0;
    tforge_bottleneck *copies = n ? malloc(n * sizeof *copies) : NULL;
    if (n && !copies)
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        copies[i] = (tforge_bottleneck){p->labels[i].label, p->labels[i].confidence,
                                        p->labels[i].evidence, p->labels[i].rule};
    int rc = prior_of(f, copies, (uint32_t)n, e->point);
    free(copies);
    if (!rc && n && f->o.check_prior && !tforge_forge_borne_out(f, f->weights, out)) {
        memset(f->weights, 0, f->n_levels * sizeof *f->weights);
        n = 0;
        snprintf(p->note, sizeof p->note, "No prior: the measurements so far do not bear out "
                 "the labels beyond chance (three measurements or fewer never do)");
    }
    for (size_t i = 0; !rc && i < n_strategies; i++)
        rc = tforge_strategy_set_level_prior(strategies[i], f->weights, f->n_levels);
    p->steered = !rc && n;
    return rc;
}

/* The new incumbent's profile (taken now unless its batch's was), its prior to the strategies. */
static int steer_incumbent(void *context, tforge_strategy *const *strategies, size_t n,
                           const tforge_loop_outcome *out, size_t incumbent)
{
    tforge_forge *f = context;
    tforge_forge_profile *p = find(f, incumbent);
    int rc = p ? 0 : take(f, out, incumbent, &p);
    return rc || !p ? rc : hand_prior(f, p, out, &out->evals[incumbent], strategies, n);
}

/* profile_all: each candidate of the batch that ran correctly (not those a resumed run took
 * from the store: the run that evaluated them profiled them). */
static int profile_batch(void *context, const tforge_loop_outcome *out, size_t first, size_t n)
{
    tforge_forge *f = context;
    int rc = 0;
    for (size_t i = first; !rc && i < first + n; i++)
        if (!out->evals[i].resumed && out->evals[i].m.status == TFORGE_STATUS_OK && !find(f, i))
            rc = take(f, out, i, NULL);
    return rc;
}

int tforge_forge_profile_eval(tforge_forge *f, const tforge_loop_outcome *out, size_t eval,
                              const tforge_forge_profile **profile)
{
    if (eval >= out->n_evals)
        return tforge_error_set(TFORGE_EINPUT, "forge: evaluation %zu of %zu", eval,
                                out->n_evals);
    int rc = find(f, eval) ? 0 : take(f, out, eval, NULL);
    if (profile)
        *profile = rc ? NULL : find(f, eval);
    return rc;
}

/* The steer's `grown`: the space gained levels; every profile's labels keep their moves (the
 * dimensions are the same). */
static int follow(void *context, const tforge_space *space)
{
    tforge_forge *f = context;
    if (tforge_space_dims(space) != f->dims)
        return tforge_error_set(TFORGE_ERROR, "forge: the space grew from %u dimensions to %u: "
                                "it may only gain levels", f->dims, tforge_space_dims(space));
    return read_space(f, space);
}

/* Whether `point` was evaluated already. */
static int measured(const tforge_forge *f, const tforge_loop_outcome *out,
                    const tforge_level *point)
{
    for (size_t i = 0; i < out->n_evals; i++)
        if (out->evals[i].point &&
            memcmp(out->evals[i].point, point, f->dims * sizeof *point) == 0)
            return 1;
    return 0;
}

/* The first move `f->weights` (one label's prior at `at`) opens: a level of one dimension that
 * it weighs above the incumbent's, the rest at the incumbent's levels, valid and not evaluated
 * yet; into `*dim` and `*level`. 0 when there is none. */
static int open_move(const tforge_forge *f, const tforge_loop_outcome *out,
                     const tforge_level *at, tforge_level *scratch, uint32_t *dim,
                     tforge_level *level)
{
    for (uint32_t d = 0; d < f->dims; d++) {
        const double *wd = f->weights + f->offset[d];
        for (uint32_t l = 0; l < tforge_space_levels(f->space, d); l++) {
            if (!(wd[l] > wd[at[d]] + 1e-12))
                continue;
            memcpy(scratch, at, f->dims * sizeof *scratch);
            scratch[d] = l;
            if (tforge_space_is_valid(f->space, scratch) && !measured(f, out, scratch)) {
                *dim = d;
                *level = l;
                return 1;
            }
        }
    }
    return 0;
}

int tforge_forge_unaddressed(int *named, char *why, size_t size, tforge_forge *f,
                             const tforge_loop_outcome *out, size_t incumbent)
{
    *named = -1;
    why[0] = '\0';
    const tforge_forge_profile *p = find(f, incumbent);
    const tforge_loop_eval *e = incumbent < out->n_evals ? &out->evals[incumbent] : NULL;
    if (!e || !p || !e->point) {
        snprintf(why, size, "%s", !e || !e->point ? "the incumbent lies outside the space"
                                                  : "the incumbent was not profiled");
        return 0;
    }
    if (p->n_labels == 0) {
        snprintf(why, size, "%s", p->note[0] ? p->note : "No label");
        return 0;
    }
    tforge_level *scratch = malloc(f->dims * sizeof *scratch);
    if (!scratch)
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    int rc = 0;
    uint32_t dim = 0, open_dim = 0;
    tforge_level level = 0, open_level = 0;
    for (size_t i = 0; !rc && i < p->n_labels && *named < 0; i++) {
        const tforge_forge_label *k = &p->labels[i];
        tforge_bottleneck one = {k->label, k->confidence, k->evidence, k->rule};
        rc = prior_of(f, &one, 1, e->point);
        if (!rc && !open_move(f, out, e->point, scratch, &dim, &level))
            *named = (int)i;
        else if (!rc && i == 0) /* the strongest label's open move, to say why not */
            open_dim = dim, open_level = level;
    }
    free(scratch);
    if (rc)
        return rc;
    if (*named >= 0)
        snprintf(why, size, "%s (%s): no open move addresses it", p->labels[*named].label,
                 p->labels[*named].evidence);
    else
        snprintf(why, size, "%s is still addressed by %s=%s, not measured yet",
                 p->labels[0].label, tforge_space_name(f->space, open_dim),
                 tforge_space_text(f->space, open_dim, open_level));
    return 0;
}
