/* "bo": Bayesian optimisation with a Gaussian process on log(value). See README.md for the
 * method and the options. */
#include "tforge/sdk/strategy.h"
#include "gp.h"

#include <gsl/gsl_errno.h>

void openblas_set_num_threads(int threads); /* OpenBLAS's own, not in the CBLAS header */

enum { ACQ_AUTO, ACQ_LOGEI, ACQ_UCB, ACQ_PI };
enum { OUTPUT_TAIL, OUTPUT_LOG };
/* acquisition=auto: LogEI for this many successful observations, UCB after them. */
enum { AUTO_UCB_AFTER = 64 };

/* Observations of a first fit on a subset (see refit). */
#define PREFIT 64
/* Steps of the hill climb on the acquisition in a pooled space. */
#define LOCAL_STEPS 32
/* In a pooled space, climbs start from this many of the pool's best candidates and from this
 * many of the best points measured. */
#define POOL_STARTS 4
#define LEADERS 4
enum { CLIMBS = POOL_STARTS + LEADERS };
/* The pool holds the neighbours of this many of the best points measured. */
#define POOL_LEADERS 8

typedef struct bo_state {
    tforge_sdk_strat_base base;
    /* options */
    int acquisition, kernel_type, ordinal, output, warping;
    double initial, unchanged_tail, refit_every, kappa, prior_beta, pool, fit_max, memory_mb,
        restarts;
    double feasible_min, floor, hamming, augmented, neighbour, neighbour_ls, knobs_first;
    uint32_t hold_until; /* proposals (the archive's points) before the unchanged tail moves */
    /* the models */
    tforge_gp_kernel kernel;
    tforge_gp_feasibility feas;
    tforge_gp gp;
    double *theta;
    int fitted, pooled, started;
    /* observations, as archive ids, in the order told */
    uint32_t *told, n_told, cap_told;
    double *spread_told;    /* the spread told with each */
    uint32_t *ok, n_ok;     /* the OK ones among them (cap_told) */
    double *spread_ok;
    uint32_t n_processed;   /* told observations the models have seen */
    uint32_t n_fit;         /* OK observations at the last refit */
    double log_mean, log_scale, best_z;
    double tail_at, tail_width; /* output=tail: where the compression starts, and its width */
    uint8_t *seen; /* per candidate: seen already */
    /* the initial design */
    tforge_level *design;
    uint32_t n_design, next_design;
    /* the piBO prior: a log weight per enumerated point, or per level of every dimension (a
     * point's weight the sum of its levels'); at most one of the two is set */
    double *log_prior;
    double *level_prior;
    uint32_t *level_offset; /* per dimension: where its levels' weights start */
    /* scratch */
    tforge_level *x_ok, *nb, *best_nb;
    double *z_ok, *nb_mean, *nb_var; /* nb: the neighbours of up to CLIMBS points, predicted */
    tforge_level *at, *path; /* where each climb is; the points the climbs went through */
    uint32_t n_path;
    uint32_t *pending;
} bo_state;

static int bo_error(const bo_state *s, int code, const char *format,
                    ...) TFORGE_SDK_STRAT_PRINTF(3, 4);
static int bo_error(const bo_state *s, int code, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    code = tforge_sdk_strat_verror(s->base.host, "bo", code, format, ap);
    va_end(ap);
    return code;
}

static void bo_destroy(void *state)
{
    bo_state *s = state;
    if (!s)
        return;
    tforge_gp_dispose(&s->gp);
    tforge_gp_kernel_dispose(&s->kernel);
    tforge_gp_feasibility_dispose(&s->feas);
    free(s->theta);
    free(s->told);
    free(s->ok);
    free(s->spread_told);
    free(s->spread_ok);
    free(s->seen);
    free(s->design);
    free(s->log_prior);
    free(s->level_prior);
    free(s->level_offset);
    free(s->x_ok);
    free(s->nb);
    free(s->best_nb);
    free(s->at);
    free(s->path);
    free(s->nb_mean);
    free(s->nb_var);
    free(s->z_ok);
    free(s->pending);
    tforge_sdk_strat_destroy(&s->base);
}

/* ---- options ---- */

/* The choices' words are in the order of their ACQ_, kernel, ordinal, output and warping codes. */
static const tforge_option_spec bo_options[] = {
    {"acquisition", TFORGE_OPTION_CHOICE, "auto", 0, 0, "auto|logei|ucb|pi",
     "auto: LogEI, then UCB after 64 observations"},
    {"kernel", TFORGE_OPTION_CHOICE, "matern52", 0, 0, "matern52|se", "the GP's kernel"},
    {"ordinal", TFORGE_OPTION_CHOICE, "rank", 0, 0, "rank|log2", "encoding of ordinal levels"},
    {"output", TFORGE_OPTION_CHOICE, "tail", 0, 0, "tail|log",
     "what the GP models: log time, its upper half compressed (tail), or log time"},
    {"warping", TFORGE_OPTION_CHOICE, "none", 0, 0, "none|kumaraswamy",
     "a learned monotone warping of each ordinal encoding"},
    {"initial", TFORGE_OPTION_INTEGER, "", -1, 1000, NULL,
     "points of the initial design (default: its free dimensions + 1, at most 20)"},
    {"unchanged_tail", TFORGE_OPTION_INTEGER, "0", 0, 1e6, NULL,
     "the initial design and the pool's hypercube hold the last N dimensions at level 0 "
     "(source transforms' parameters, level 0 the source unchanged)"},
    {"refit_every", TFORGE_OPTION_INTEGER, "0", 0, 1e6, NULL,
     "observations between refits of the hyperparameters (0: n/4)"},
    {"kappa", TFORGE_OPTION_NUMBER, "2", 0, 100, NULL, "UCB's exploration weight"},
    {"prior_beta", TFORGE_OPTION_NUMBER, "10", 0, 1e6, NULL,
     "piBO's beta: the prior counts as beta / n observations"},
    {"pool", TFORGE_OPTION_INTEGER, "4096", 16, 1e7, NULL,
     "candidates drawn when the space is not scored whole"},
    {"fit_max", TFORGE_OPTION_INTEGER, "256", 8, 4096, NULL,
     "observations used to fit the hyperparameters (the best ones)"},
    {"memory_mb", TFORGE_OPTION_NUMBER, "128", 1, 1e6, NULL,
     "memory for the posterior over every enumerated point; above it, a pool"},
    {"restarts", TFORGE_OPTION_INTEGER, "2", 0, 64, NULL,
     "extra BFGS starts while there are fewer than 20 observations"},
    {"feasible_min", TFORGE_OPTION_NUMBER, "0.5", 0, 1, NULL,
     "points less likely to be feasible come after all others (0: off)"},
    {"floor", TFORGE_OPTION_NUMBER, "1", 0, 100, NULL, "the kernel's floor (0: the plain product)"},
    {"hamming", TFORGE_OPTION_NUMBER, "0.3", 0, 1, NULL,
     "the part of an ordinal distance that any change of level costs"},
    {"augmented", TFORGE_OPTION_INTEGER, "1", 0, 1, NULL,
     "LogEI times augmented EI's noise factor (0: plain LogEI)"},
    {"neighbour", TFORGE_OPTION_NUMBER, "9.2", 0, 1e3, NULL,
     "the best point's neighbour is taken when its log acquisition is within this (0: off)"},
    {"neighbour_ls", TFORGE_OPTION_NUMBER, "0.75", 0, 1e3, NULL,
     "... among neighbours in dimensions with a lengthscale at most this"},
    {"knobs_first", TFORGE_OPTION_NUMBER, "0.5", 0, 1, NULL,
     "the share of the budget before the unchanged tail moves at all (the climbs, the pool's "
     "neighbours and the best point's neighbour hold it at level 0 until then)"},
};
#define N_OPTIONS (sizeof bo_options / sizeof *bo_options)
enum { N_CHOICES = 5 }; /* the first options of the table */

static int parse_options(bo_state *s, const tforge_options_view *options)
{
    int *const choices[N_CHOICES] = {&s->acquisition, &s->kernel_type, &s->ordinal, &s->output,
                                     &s->warping};
    double picked[N_CHOICES] = {0};
    double *const targets[N_OPTIONS] = {
        &picked[0],     &picked[1],   &picked[2],       &picked[3],      &picked[4],
        &s->initial,    &s->unchanged_tail, &s->refit_every, &s->kappa, &s->prior_beta, &s->pool,
        &s->fit_max,    &s->memory_mb, &s->restarts,    &s->feasible_min, &s->floor,
        &s->hamming,    &s->augmented, &s->neighbour,   &s->neighbour_ls, &s->knobs_first};
    int rc = tforge_sdk_strat_parse_options(&s->base, options, bo_options, N_OPTIONS, targets);
    for (int c = 0; c < N_CHOICES; c++)
        *choices[c] = (int)picked[c];
    return rc;
}

/* ---- creation ---- */

/* The dimensions the design and the pool's hypercube spread over: all but the last
 * `unchanged_tail`, which they hold at level 0 (source transforms' parameters: rewrites then
 * enter as moves from measured points, the pool's neighbours and the climbs). */
static uint32_t free_dims(const bo_state *s)
{
    uint32_t dims = s->base.dims;
    return s->unchanged_tail < dims ? dims - (uint32_t)s->unchanged_tail : 0;
}

/* Sets `point`'s unchanged tail to level 0; 1 when it is valid so. */
static int unchanged(const bo_state *s, tforge_level *point)
{
    for (uint32_t d = free_dims(s); d < s->base.dims; d++)
        point[d] = 0;
    return s->base.space->is_valid(s->base.context, point);
}

/* 1 when `point` has a level other than 0 in the unchanged tail. */
static int changes_tail(const bo_state *s, const tforge_level *point)
{
    for (uint32_t d = free_dims(s); d < s->base.dims; d++)
        if (point[d])
            return 1;
    return 0;
}

/* 1 while knobs_first holds the unchanged tail and `point` changes it. */
static int held(const bo_state *s, const tforge_level *point)
{
    return s->base.archive.n < s->hold_until && changes_tail(s, point);
}

static int bo_create(void **state, const tforge_host *host,
                     const tforge_options_view *options, const tforge_strategy_input *input)
{
    int rc = tforge_sdk_strat_create(state, sizeof(bo_state), "bo", host, input);
    if (rc)
        return rc;
    bo_state *s = *state;
    tforge_sdk_strat_base *b = &s->base;
    s->initial = -1; /* automatic; every other default is in the published table */
    if ((rc = parse_options(s, options)))
        goto fail;
    s->hold_until = (uint32_t)(s->knobs_first * input->budget);
    if (s->initial < 0) /* d + 1, not 10% of the budget as well: the model does better */
        s->initial = free_dims(s) + 1 < 20 ? free_dims(s) + 1 : 20;
    if (tforge_gp_kernel_init(&s->kernel, b->space, s->kernel_type, s->ordinal, s->warping) ||
        tforge_gp_feasibility_init(&s->feas, b->dims, b->levels))
        goto nomem;
    tforge_gp_init(&s->gp, &s->kernel);
    size_t gathered = (size_t)CLIMBS * tforge_sdk_strat_move_count(b, 1);
    s->theta = malloc(tforge_gp_theta_size(&s->kernel) * sizeof *s->theta);
    s->nb = malloc(gathered * b->dims * sizeof *s->nb + 1);
    s->nb_mean = malloc(gathered * sizeof *s->nb_mean + 1);
    s->nb_var = malloc(gathered * sizeof *s->nb_var + 1);
    s->best_nb = malloc(b->dims * sizeof *s->best_nb);
    s->at = malloc(CLIMBS * b->dims * sizeof *s->at);
    s->path = malloc(CLIMBS * (LOCAL_STEPS + 1) * b->dims * sizeof *s->path);
    if (!s->theta || !s->nb || !s->nb_mean || !s->nb_var || !s->best_nb || !s->at || !s->path ||
        tforge_gp_reserve_predictions(&s->gp, gathered))
        goto nomem;
    tforge_gp_theta_prior(&s->kernel, s->theta);
    s->kernel.floor = s->floor;
    s->kernel.hamming = s->hamming;
    tforge_gp_kernel_set(&s->kernel, s->kernel.ls);
    return 0;
nomem:
    rc = bo_error(s, TFORGE_PLUGIN_ENOMEM, "out of memory");
fail:
    bo_destroy(s);
    *state = NULL;
    return rc;
}

/* ---- the initial design: a Latin hypercube over level indices, snapped to valid points ---- */

/* Squared distance of encodings, the kernel's geometry. */
static double encoded_distance(const tforge_gp_kernel *k, const tforge_level *a,
                               const tforge_level *b)
{
    double sum = 0;
    for (uint32_t d = 0; d < k->dims; d++) {
        double e = k->encoding[d] ? k->encoding[d][a[d]] - k->encoding[d][b[d]] : a[d] != b[d];
        sum += e * e;
    }
    return sum;
}

/* Replaces `point` by the nearest valid point not yet seen nor in design[0..n): among all
 * enumerated points when there are at most a million, else among its valid neighbours (the
 * nearest there can be) and 256 drawn ones. 1 when found. */
static int snap(bo_state *s, tforge_level *point, uint32_t n)
{
    tforge_sdk_strat_base *b = &s->base;
    const tforge_space_view *v = b->space;
    tforge_level *best = s->best_nb, *x = s->nb;
    double best_d = INFINITY;
    int all = b->count && b->count <= 1000000;
    uint32_t moves = all ? 0 : tforge_sdk_strat_move_count(b, 1);
    uint64_t tries = all ? b->count : moves + 256;
    for (uint64_t t = 0; t < tries; t++) {
        if (all)
            v->point(b->context, t, x);
        else if (t < moves) {
            if (!tforge_sdk_strat_move(b, point, 1, (uint32_t)t, x))
                continue;
        } else if (v->sample(b->context, &b->rng, x) < 0) {
            break;
        } else if (!unchanged(s, x)) {
            continue;
        }
        if (changes_tail(s, x)) /* the design holds it */
            continue;
        double dist = encoded_distance(&s->kernel, point, x);
        if (dist >= best_d || tforge_sdk_strat_find(&b->archive, x) != TFORGE_SDK_STRAT_NONE)
            continue;
        int repeated = 0;
        for (uint32_t i = 0; i < n && !repeated; i++)
            repeated = !memcmp(s->design + (size_t)i * b->dims, x, b->dims * sizeof *x);
        if (!repeated) {
            best_d = dist;
            memcpy(best, x, b->dims * sizeof *x);
        }
    }
    if (best_d < INFINITY)
        memcpy(point, best, b->dims * sizeof *point);
    return best_d < INFINITY;
}

static int make_design(bo_state *s)
{
    tforge_sdk_strat_base *b = &s->base;
    uint32_t want = s->initial > b->archive.n ? (uint32_t)s->initial - b->archive.n : 0;
    s->started = 1;
    if (want == 0)
        return 0;
    uint32_t *perm = malloc((size_t)want * sizeof *perm);
    s->design = malloc((size_t)want * b->dims * sizeof *s->design);
    if (!perm || !s->design) {
        free(perm);
        return bo_error(s, TFORGE_PLUGIN_ENOMEM, "out of memory");
    }
    for (uint32_t d = 0; d < b->dims; d++) {
        if (d >= free_dims(s)) { /* held: the source unchanged */
            for (uint32_t i = 0; i < want; i++)
                s->design[(size_t)i * b->dims + d] = 0;
            continue;
        }
        for (uint32_t i = 0; i < want; i++)
            perm[i] = i;
        for (uint32_t i = want - 1; i > 0; i--) {
            uint32_t j = (uint32_t)tforge_rng_below(&b->rng, i + 1), t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        for (uint32_t i = 0; i < want; i++) {
            double u = (perm[i] + tforge_rng_uniform(&b->rng)) / want;
            uint32_t level = (uint32_t)(u * b->levels[d]);
            s->design[(size_t)i * b->dims + d] =
                (tforge_level)(level < b->levels[d] ? level : b->levels[d] - 1);
        }
    }
    free(perm);
    for (uint32_t i = 0; i < want; i++) {
        tforge_level *p = s->design + (size_t)i * b->dims;
        int fine = b->space->is_valid(b->context, p) && tforge_sdk_strat_find(
            &b->archive,
            p) == TFORGE_SDK_STRAT_NONE;
        for (uint32_t j = 0; j < s->n_design && fine; j++)
            fine = memcmp(s->design + (size_t)j * b->dims, p, b->dims * sizeof *p) != 0;
        if (!fine && !snap(s, p, s->n_design))
            continue;
        if (s->n_design != i)
            memcpy(s->design + (size_t)s->n_design * b->dims, p, b->dims * sizeof *p);
        s->n_design++;
    }
    return 0;
}

/* ---- models ---- */

static double log_value(double value)
{
    return log(value > 1e-300 ? value : 1e-300);
}

static int set_candidates(bo_state *s, const tforge_level *points, size_t n)
{
    void *p;
    int rc = tforge_gp_set_candidates(&s->gp, points, n);
    if (rc)
        return bo_error(s, rc, "out of memory for %zu candidates", n);
    size_t cap = n ? n : 1;
    if (!(p = realloc(s->seen, cap)))
        return bo_error(s, TFORGE_PLUGIN_ENOMEM, "out of memory");
    s->seen = p;
    memset(s->seen, 0, cap);
    return 0;
}

/* The archive ids of the k best OK points, best first (the first told among equals), into
 * `ids`; returns how many there are. */
static uint32_t leaders(const bo_state *s, uint32_t k, uint32_t *ids)
{
    const double *values = s->base.archive.values;
    uint32_t n = 0;
    for (uint32_t i = 0; i < s->n_ok; i++) {
        uint32_t id = s->ok[i], j;
        if (n == k && values[id] >= values[ids[n - 1]])
            continue;
        for (j = n < k ? n++ : n - 1; j > 0 && values[ids[j - 1]] > values[id]; j--)
            ids[j] = ids[j - 1];
        ids[j] = id;
    }
    return n;
}

/* The pool of a space too large to score whole: a Latin hypercube of valid points (a uniform
 * valid point where the hypercube's is invalid; the unchanged tail at level 0) and the
 * neighbours of the best points. */
static int build_pool(bo_state *s)
{
    tforge_sdk_strat_base *b = &s->base;
    size_t want = (size_t)s->pool, n = 0, moves = tforge_sdk_strat_move_count(b, 1);
    tforge_level *points = malloc((want + POOL_LEADERS * moves) * b->dims * sizeof *points);
    uint32_t *perm = malloc(want * sizeof *perm);
    if (!points || !perm) {
        free(points);
        free(perm);
        return bo_error(s, TFORGE_PLUGIN_ENOMEM, "out of memory for a pool of %zu", want);
    }
    for (uint32_t d = 0; d < b->dims; d++) {
        if (d >= free_dims(s)) {
            for (size_t i = 0; i < want; i++)
                points[i * b->dims + d] = 0;
            continue;
        }
        for (size_t i = 0; i < want; i++)
            perm[i] = (uint32_t)i;
        for (size_t i = want - 1; i > 0; i--) {
            size_t j = tforge_rng_below(&b->rng, i + 1);
            uint32_t t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        for (size_t i = 0; i < want; i++) {
            uint32_t level = (uint32_t)((perm[i] + tforge_rng_uniform(&b->rng)) / want *
                                        b->levels[d]);
            points[i * b->dims + d] = (tforge_level)(level < b->levels[d] ? level
                                                                          : b->levels[d] - 1);
        }
    }
    free(perm);
    for (size_t i = 0; i < want; i++) {
        tforge_level *p = points + n * b->dims;
        if (n != i)
            memcpy(p, points + i * b->dims, b->dims * sizeof *p);
        int valid = b->space->is_valid(b->context, p);
        if (!valid && b->count) {
            b->space->point(b->context, tforge_rng_below(&b->rng, b->count), p);
            valid = 1;
        } else if (!valid) {
            valid = b->space->sample(b->context, &b->rng, p) == 0;
            if (valid && held(s, p))
                valid = unchanged(s, p);
        }
        n += valid && tforge_sdk_strat_find(&b->archive, p) == TFORGE_SDK_STRAT_NONE;
    }
    /* The neighbours of the best OK points, best first. */
    const tforge_sdk_strat_archive *a = &b->archive;
    uint32_t top[POOL_LEADERS], n_top = leaders(s, POOL_LEADERS, top);
    for (uint32_t t = 0; t < n_top; t++)
        for (uint32_t m = 0; m < moves; m++)
            if (tforge_sdk_strat_move(b, tforge_sdk_strat_point(a, top[t]), 1, m,
                                      points + n * b->dims) &&
                !held(s, points + n * b->dims) &&
                tforge_sdk_strat_find(a, points + n * b->dims) == TFORGE_SDK_STRAT_NONE)
                n++;
    int rc = set_candidates(s, points, n);
    free(points);
    return rc;
}

static int grow_told(bo_state *s)
{
    if (s->n_told < s->cap_told)
        return 0;
    uint32_t cap = s->cap_told ? 2 * s->cap_told : 64;
    void *p;
    if (!(p = realloc(s->told, cap * sizeof *s->told)))
        return TFORGE_PLUGIN_ENOMEM;
    s->told = p;
    if (!(p = realloc(s->ok, cap * sizeof *s->ok)))
        return TFORGE_PLUGIN_ENOMEM;
    s->ok = p;
    if (!(p = realloc(s->x_ok, (size_t)cap * s->base.dims * sizeof *s->x_ok)))
        return TFORGE_PLUGIN_ENOMEM;
    s->x_ok = p;
    if (!(p = realloc(s->spread_told, cap * sizeof *s->spread_told)))
        return TFORGE_PLUGIN_ENOMEM;
    s->spread_told = p;
    if (!(p = realloc(s->spread_ok, cap * sizeof *s->spread_ok)))
        return TFORGE_PLUGIN_ENOMEM;
    s->spread_ok = p;
    /* twice: the second half is scratch for sorting */
    if (!(p = realloc(s->z_ok, 2 * (size_t)cap * sizeof *s->z_ok)))
        return TFORGE_PLUGIN_ENOMEM;
    s->z_ok = p;
    s->cap_told = cap;
    return 0;
}

/* What the GP models of a value: its log; with output=tail, a log above the median goes on
 * growing only logarithmically beyond it, y' = m + w log1p((y - m) / w) with w the
 * interquartile range, so that a few configurations ten to sixty times slower than the rest
 * (register spills) do not shorten every lengthscale; the order of values is kept. */
static double modelled(const bo_state *s, double value)
{
    double y = log_value(value);
    if (s->tail_width > 0 && y > s->tail_at)
        y = s->tail_at + s->tail_width * log1p((y - s->tail_at) / s->tail_width);
    return y;
}

static double standardised(const bo_state *s, uint32_t id)
{
    return (modelled(s, s->base.archive.values[id]) - s->log_mean) / s->log_scale;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Refits everything: the standardisation, the noise floor, the hyperparameters (on at most
 * fit_max of the best observations), the candidates when the space is pooled or the model
 * outgrows memory, and the factorisation. */
static int refit(bo_state *s)
{
    tforge_sdk_strat_base *b = &s->base;
    const tforge_sdk_strat_archive *a = &b->archive;
    uint32_t n = s->n_ok, dims = b->dims;
    double *scratch = s->z_ok + n; /* n free doubles */
    s->tail_width = 0;
    if (s->output == OUTPUT_TAIL && n >= 4) {
        for (uint32_t i = 0; i < n; i++)
            scratch[i] = log_value(a->values[s->ok[i]]);
        qsort(scratch, n, sizeof *scratch, compare_doubles);
        s->tail_at = scratch[n / 2];
        s->tail_width = scratch[3 * n / 4] - scratch[n / 4];
    }
    double sum = 0, sum2 = 0;
    for (uint32_t i = 0; i < n; i++) {
        double y = modelled(s, a->values[s->ok[i]]);
        sum += y;
        sum2 += y * y;
    }
    s->log_mean = sum / n;
    double var = n > 1 ? (sum2 - sum * sum / n) / (n - 1) : 0;
    s->log_scale = var > 1e-18 ? sqrt(var) : 1.0;
    s->best_z = INFINITY;
    for (uint32_t i = 0; i < n; i++) {
        memcpy(s->x_ok + (size_t)i * dims, tforge_sdk_strat_point(a, s->ok[i]),
               dims * sizeof *s->x_ok);
        s->z_ok[i] = standardised(s, s->ok[i]);
        if (s->z_ok[i] < s->best_z)
            s->best_z = s->z_ok[i];
    }
    /* The noise floor: a spread (IQR / median) of a normal's value is 1.349 sd in log terms;
     * the median of the measured spreads, in standardised units. */
    double *spreads = scratch, floor = 1e-6;
    uint32_t n_spread = 0;
    for (uint32_t i = 0; i < n; i++)
        if (s->spread_ok[i] > 0)
            spreads[n_spread++] = s->spread_ok[i];
    if (n_spread) {
        qsort(spreads, n_spread, sizeof *spreads, compare_doubles);
        double sd = spreads[n_spread / 2] / 1.349 / s->log_scale;
        floor += sd * sd;
    }
    int rc = 0;
    if (n >= 3) {
        /* The fit_max best observations: the model has to be right where the optimum is. */
        uint32_t m = n < s->fit_max ? n : (uint32_t)s->fit_max;
        tforge_level *fx = malloc((size_t)m * dims * sizeof *fx);
        double *fz = malloc(m * sizeof *fz);
        uint32_t *order = malloc(n * sizeof *order);
        if (!fx || !fz || !order) {
            free(fx);
            free(fz);
            free(order);
            return bo_error(s, TFORGE_PLUGIN_ENOMEM, "out of memory fitting the model");
        }
        for (uint32_t i = 0; i < n; i++)
            order[i] = i;
        for (uint32_t i = 0; i < m && m < n; i++)
            for (uint32_t j = i + 1; j < n; j++)
                if (s->z_ok[order[j]] < s->z_ok[order[i]]) {
                    uint32_t t = order[i];
                    order[i] = order[j];
                    order[j] = t;
                }
        for (uint32_t i = 0; i < m; i++) {
            memcpy(fx + (size_t)i * dims, s->x_ok + (size_t)order[i] * dims, dims * sizeof *fx);
            fz[i] = s->z_ok[order[i]];
        }
        /* Told many observations at once since the last fit (a resumed run), the fit first
         * runs on at most PREFIT of them, spread over the order, then goes on from there on
         * all: BFGS far from the optimum takes tens of iterations, each O(m^3). */
        uint32_t restarts = n < 20 ? (uint32_t)s->restarts : 0;
        if (m > 2 * PREFIT && 2 * s->n_fit < n) {
            uint32_t stride = (m + PREFIT - 1) / PREFIT, k = 0;
            tforge_level *sx = malloc((size_t)PREFIT * dims * sizeof *sx);
            double *sz = malloc(PREFIT * sizeof *sz);
            for (uint32_t i = 0; sx && sz && i < m; i += stride, k++) {
                memcpy(sx + (size_t)k * dims, fx + (size_t)i * dims, dims * sizeof *sx);
                sz[k] = fz[i];
            }
            tforge_gp_data subset = {k, sx, sz, floor};
            rc = sx && sz ? tforge_gp_fit(s->theta, &s->kernel, &subset, restarts, &b->rng)
                          : TFORGE_PLUGIN_ENOMEM;
            restarts = 0;
            free(sx);
            free(sz);
        }
        tforge_gp_data data = {m, fx, fz, floor};
        if (!rc)
            rc = tforge_gp_fit(s->theta, &s->kernel, &data, restarts, &b->rng);
        free(fx);
        free(fz);
        free(order);
        if (rc)
            return bo_error(s, rc, "out of memory fitting the model");
    }
    double sf2 = exp(s->theta[dims]), noise = floor + exp(s->theta[dims + 1]);
    tforge_gp_kernel_set_theta(&s->kernel, s->theta);

    /* Every enumerated point is a candidate while their posterior fits in memory_mb. */
    double rows = n + n / 4.0 + 80;
    int whole = b->count && b->count * rows * 8.0 <= s->memory_mb * 1048576.0;
    if ((rc = tforge_gp_reset(&s->gp, sf2, noise, NULL, NULL, 0)))
        return bo_error(s, rc, "cannot reset the model");
    if (!whole) {
        if ((rc = build_pool(s)))
            return rc;
    } else if (s->pooled || !s->fitted) {
        tforge_level *all = malloc(b->count * dims * sizeof *all);
        if (!all)
            return bo_error(s, TFORGE_PLUGIN_ENOMEM, "out of memory for %llu candidates",
                            (unsigned long long)b->count);
        for (uint64_t i = 0; i < b->count; i++)
            b->space->point(b->context, i, all + i * dims);
        rc = set_candidates(s, all, b->count);
        free(all);
        if (rc)
            return rc;
        for (uint32_t id = 0; id < a->n; id++)
            s->seen[b->space->index_of(b->context, tforge_sdk_strat_point(a, id))] = 1;
    }
    s->pooled = !whole;
    /* A matrix that is not positive definite (rounding) gets more noise. */
    for (int tries = 0; (rc = tforge_gp_reset(&s->gp, sf2, noise, s->x_ok, s->z_ok, n)); tries++) {
        if (rc != TFORGE_PLUGIN_ERROR || tries == 8)
            return bo_error(s, rc, "cannot factorise the model of %u observations", n);
        noise *= 10;
    }
    s->fitted = 1;
    s->n_fit = n;
    return 0;
}

/* Brings the models up to date with what was told since the last ask. */
static int update(bo_state *s)
{
    const tforge_sdk_strat_archive *a = &s->base.archive;
    uint32_t first_ok = s->n_ok;
    for (; s->n_processed < s->n_told; s->n_processed++) {
        uint32_t i = s->n_processed, id = s->told[i];
        if (a->states[id] == TFORGE_SDK_STRAT_OK) {
            s->spread_ok[s->n_ok] = s->spread_told[i];
            s->ok[s->n_ok++] = id;
        }
        tforge_gp_feasibility_add(&s->feas, tforge_sdk_strat_point(a, id),
                                  a->states[id] == TFORGE_SDK_STRAT_OK);
    }
    if (s->n_ok == 0)
        return 0;
    uint32_t interval = s->refit_every > 0 ? (uint32_t)s->refit_every
                                           : (s->n_fit / 4 > 1 ? s->n_fit / 4 : 1);
    if (!s->fitted || s->n_ok >= s->n_fit + interval)
        return refit(s);
    for (uint32_t i = first_ok; i < s->n_ok; i++) {
        double z = standardised(s, s->ok[i]);
        int rc = tforge_gp_append(&s->gp, tforge_sdk_strat_point(a, s->ok[i]), z);
        if (rc)
            return bo_error(s, rc, "out of memory adding observation %u", i);
        if (z < s->best_z)
            s->best_z = z;
    }
    return 0;
}

/* ---- proposing ---- */

/* Whether a prior is set, and so whether a candidate's index is worth looking up. */
static int has_prior(const bo_state *s)
{
    return s->log_prior || s->level_prior;
}

/* The prior's log weight of a point (`index` its enumerated index, or TFORGE_NO_INDEX). */
static double prior_weight(const bo_state *s, const tforge_level *point, uint64_t index)
{
    if (s->level_prior) {
        double sum = 0;
        for (uint32_t d = 0; d < s->base.dims; d++)
            sum += s->level_prior[s->level_offset[d] + point[d]];
        return sum;
    }
    return s->log_prior && index != TFORGE_NO_INDEX ? s->log_prior[index] : 0.0;
}

/* The log acquisition of a point: the chosen criterion, plus log P(feasible), plus the prior's
 * log weight times beta / n (piBO: a prior that is wrong fades as observations come). */
static double score(const bo_state *s, double mean, double var, const tforge_level *point,
                    uint64_t index)
{
    double floor = 1e-12 * s->gp.sf2, sd = sqrt(var > floor ? var : floor), v;
    int acquisition = s->acquisition != ACQ_AUTO ? s->acquisition
                      : s->n_ok < AUTO_UCB_AFTER ? ACQ_LOGEI : ACQ_UCB;
    if (acquisition == ACQ_UCB)
        v = tforge_gp_log_ucb(mean, sd, s->best_z, s->kappa);
    else if (acquisition == ACQ_PI)
        v = tforge_gp_log_pi(mean, sd, s->best_z);
    else {
        v = tforge_gp_log_ei(mean, sd, s->best_z);
        if (s->augmented) /* what the model knows to within the noise gains little */
            v += tforge_gp_log_noise_discount(sd * sd, s->gp.noise);
    }
    /* Times P(feasible); and a point more likely to fail than not comes after every other: its
     * unexplored surroundings would otherwise keep a high EI for ever, since failures carry no
     * value into the GP. */
    double log_feasible = tforge_gp_feasibility_log(&s->feas, point);
    v += log_feasible + (log_feasible < log(s->feasible_min) ? -1e6 : 0);
    if (has_prior(s))
        v += s->prior_beta / s->n_ok * prior_weight(s, point, index);
    return v;
}

static uint64_t candidate_index(const bo_state *s, size_t j)
{
    if (!s->pooled)
        return j;
    const tforge_sdk_strat_base *b = &s->base;
    return b->count ? b->space->index_of(b->context, s->gp.c + j * b->dims) : TFORGE_NO_INDEX;
}

/* Appends the unseen valid neighbours of `from` (one level up or down in an ordinal dimension,
 * another level of a categorical one) to s->nb from position m; with `relevant`, only those in
 * dimensions whose lengthscale is at most neighbour_ls. Returns the new count. */
static uint32_t gather(bo_state *s, const tforge_level *from, int relevant, uint32_t m)
{
    tforge_sdk_strat_base *b = &s->base;
    uint32_t moves = tforge_sdk_strat_move_count(b, 1);
    for (uint32_t i = 0; i < moves; i++) {
        tforge_level *p = s->nb + (size_t)m * b->dims;
        if (!tforge_sdk_strat_move(b, from, 1, i, p) || held(s, p) ||
            tforge_sdk_strat_find(&b->archive, p) != TFORGE_SDK_STRAT_NONE)
            continue;
        uint32_t d = 0;
        while (p[d] == from[d])
            d++;
        m += !relevant || s->kernel.ls[d] <= s->neighbour_ls;
    }
    return m;
}

/* The gathered points are predicted together: one triangular solve of many columns reads the
 * Cholesky factor once (8 MB at n = 1000) where a solve per point reads it each time; at
 * n = 500-1000 a column then costs a quarter to a third as much at 24 columns, a fifth to a
 * quarter at 100. */
static void predict_gathered(bo_state *s, uint32_t m)
{
    tforge_gp_predict_many(&s->gp, s->nb, m, s->nb_mean, s->nb_var);
}

/* The gathered point in [first, last) with the highest log acquisition, into *best_v; its
 * position, or UINT32_MAX (and -inf) when there is none. */
static uint32_t best_gathered(const bo_state *s, uint32_t first, uint32_t last, double *best_v)
{
    const tforge_sdk_strat_base *b = &s->base;
    uint32_t best = UINT32_MAX;
    *best_v = -INFINITY;
    for (uint32_t j = first; j < last; j++) {
        const tforge_level *p = s->nb + (size_t)j * b->dims;
        uint64_t index = s->log_prior ? b->space->index_of(b->context, p) : TFORGE_NO_INDEX;
        double v = score(s, s->nb_mean[j], s->nb_var[j], p, index);
        if (v > *best_v) {
            best = j;
            *best_v = v;
        }
    }
    return best;
}

/* 1 when a climb of this choice went through `point` already, else 0 and it is added. */
static int on_path(bo_state *s, const tforge_level *point)
{
    size_t size = s->base.dims * sizeof *point;
    for (uint32_t i = 0; i < s->n_path; i++)
        if (!memcmp(s->path + (size_t)i * s->base.dims, point, size))
            return 1;
    memcpy(s->path + (size_t)s->n_path++ * s->base.dims, point, size);
    return 0;
}

/* Hill climbs over unseen valid neighbours, up to LOCAL_STEPS steps, from the pool's best
 * candidates (top[0..n_top), their log acquisitions top_v) and from the best points measured
 * (seen, so their first step is to their best unseen neighbour), whose surroundings the pool
 * holds only as they were at the last refit. The climbs step together, all their neighbours
 * predicted at once. A climb that meets another's path stops: from there on it would take the
 * same steps (a step depends only on the point) to the same end. The best point reached goes
 * into `out` when its log acquisition beats *best_v; 1 then. */
static int local_search(bo_state *s, const size_t *top, const double *top_v, uint32_t n_top,
                        tforge_level *out, double *best_v)
{
    tforge_sdk_strat_base *b = &s->base;
    size_t size = b->dims * sizeof *out;
    uint32_t ids[LEADERS], n_leaders = leaders(s, LEADERS, ids), n = 0, first[CLIMBS + 1];
    tforge_level *at = s->at; /* where each climb is */
    double v[CLIMBS];
    int moving[CLIMBS], any = 1, found = 0;
    s->n_path = 0;
    for (uint32_t i = 0; i < n_top + n_leaders; i++) {
        const tforge_level *from = i < n_top ? s->gp.c + top[i] * b->dims
                                             : tforge_sdk_strat_point(&b->archive, ids[i - n_top]);
        if (i < n_top && on_path(s, from))
            continue;
        memcpy(at + (size_t)n * b->dims, from, size);
        v[n] = i < n_top ? top_v[i] : -INFINITY;
        moving[n++] = 1;
    }
    for (int step = 0; step < LOCAL_STEPS && any; step++) {
        uint32_t m = 0;
        for (uint32_t c = 0; c < n; c++) {
            first[c] = m;
            if (moving[c])
                m = gather(s, at + (size_t)c * b->dims, 0, m);
        }
        first[n] = m;
        predict_gathered(s, m);
        any = 0;
        for (uint32_t c = 0; c < n; c++) {
            double up;
            uint32_t j = moving[c] ? best_gathered(s, first[c], first[c + 1], &up) : UINT32_MAX;
            if (j == UINT32_MAX || !(up > v[c])) {
                moving[c] = 0;
                continue;
            }
            v[c] = up;
            memcpy(at + (size_t)c * b->dims, s->nb + (size_t)j * b->dims, size);
            moving[c] = !on_path(s, at + (size_t)c * b->dims);
            any |= moving[c];
        }
    }
    for (uint32_t c = 0; c < n; c++)
        if (v[c] > *best_v) {
            *best_v = v[c];
            memcpy(out, at + (size_t)c * b->dims, size);
            found = 1;
        }
    return found;
}

/* The best candidate never seen into `out`; in a pooled space, then the best of the local
 * searches (see above); then replaced by the best point's best neighbour in a relevant dimension
 * when that one's log acquisition is within `neighbour` of it. 0 when nothing is left unseen. */
static int choose(bo_state *s, tforge_level *out)
{
    tforge_sdk_strat_base *b = &s->base;
    const tforge_gp *gp = &s->gp;
    uint32_t want = s->pooled ? POOL_STARTS : 1, n_top = 0;
    size_t top[POOL_STARTS];
    double top_v[POOL_STARTS];
    /* The `want` best candidates unseen, best first (the first among equals). */
    for (size_t j = 0; j < gp->nc; j++) {
        if (s->seen[j] || held(s, gp->c + j * b->dims))
            continue;
        double v = score(s, gp->mean[j], gp->var[j], gp->c + j * b->dims,
                         s->log_prior ? candidate_index(s, j) : TFORGE_NO_INDEX);
        if (n_top == want && v <= top_v[n_top - 1])
            continue;
        if (tforge_sdk_strat_find(&b->archive, gp->c + j * b->dims) != TFORGE_SDK_STRAT_NONE) {
            s->seen[j] = 1; /* proposed since the candidates were set */
            continue;
        }
        uint32_t i = n_top < want ? n_top++ : n_top - 1;
        for (; i > 0 && top_v[i - 1] < v; i--) {
            top[i] = top[i - 1];
            top_v[i] = top_v[i - 1];
        }
        top[i] = j;
        top_v[i] = v;
    }
    double best_v = n_top ? top_v[0] : -INFINITY;
    if (n_top)
        memcpy(out, gp->c + top[0] * b->dims, b->dims * sizeof *out);
    int found = n_top > 0;
    if (s->pooled)
        found |= local_search(s, top, top_v, n_top, out, &best_v);
    if (!found)
        return 0;
    uint32_t best;
    if (s->neighbour > 0 && leaders(s, 1, &best)) {
        uint32_t m = gather(s, tforge_sdk_strat_point(&b->archive, best), 1, 0);
        predict_gathered(s, m);
        double v;
        uint32_t j = best_gathered(s, 0, m, &v);
        if (j != UINT32_MAX && v >= best_v - s->neighbour)
            memcpy(out, s->nb + (size_t)j * b->dims, b->dims * sizeof *out);
    }
    return 1;
}

static void mark_seen(bo_state *s, const tforge_level *point)
{
    if (s->fitted && !s->pooled) {
        uint64_t j = s->base.space->index_of(s->base.context, point);
        if (j < s->gp.nc)
            s->seen[j] = 1;
    }
}

/* q - *n_out proposals by the Kriging believer: each chosen point (and each point proposed
 * before and still pending) joins the model with its posterior mean as its value, so that the
 * next choice looks elsewhere; the model is rolled back afterwards. */
static int propose(bo_state *s, uint32_t q, tforge_level *out, uint32_t *n_out)
{
    tforge_sdk_strat_base *b = &s->base;
    const tforge_sdk_strat_archive *a = &b->archive;
    int rc = 0;
    double mean, var;
    tforge_gp_mark(&s->gp);
    for (uint32_t id = 0; id < a->n && rc == 0; id++)
        if (a->states[id] == TFORGE_SDK_STRAT_PENDING) {
            tforge_gp_predict(&s->gp, tforge_sdk_strat_point(a, id), &mean, &var);
            if ((rc = tforge_gp_append(&s->gp, tforge_sdk_strat_point(a, id), mean)))
                rc = bo_error(s, rc, "out of memory for pending points");
        }
    while (rc == 0 && !b->done && *n_out < q) {
        tforge_level *p = out + (size_t)*n_out * b->dims;
        if (!choose(s, p)) {
            rc = tforge_sdk_strat_propose_fresh(b, out, n_out, 0);
            continue;
        }
        if ((rc = tforge_sdk_strat_propose(b, p, out, n_out, NULL)))
            break;
        mark_seen(s, p);
        if (*n_out < q) {
            tforge_gp_predict(&s->gp, p, &mean, &var);
            if ((rc = tforge_gp_append(&s->gp, p, mean)))
                rc = bo_error(s, rc, "out of memory for a batch");
        }
    }
    tforge_gp_rollback(&s->gp);
    return rc;
}

static int bo_ask(void *state, uint32_t q, tforge_level *out, uint32_t *n_out)
{
    bo_state *s = state;
    tforge_sdk_strat_base *b = &s->base;
    int rc = tforge_sdk_strat_begin_ask(b, q, out, n_out);
    if (rc == 0 && !s->started)
        rc = make_design(s);
    if (rc == 0)
        rc = update(s);
    while (rc == 0 && !b->done && *n_out < q && s->next_design < s->n_design) {
        const tforge_level *p = s->design + (size_t)s->next_design++ * b->dims;
        if (tforge_sdk_strat_find(&b->archive, p) == TFORGE_SDK_STRAT_NONE &&
            (rc = tforge_sdk_strat_propose(b, p, out, n_out, NULL)) == 0)
            mark_seen(s, p);
    }
    if (rc == 0 && !b->done && *n_out < q) {
        if (s->fitted)
            rc = propose(s, q, out, n_out);
        else
            while (rc == 0 && !b->done && *n_out < q)
                rc = tforge_sdk_strat_propose_fresh(b, out, n_out, 0);
    }
    return tforge_sdk_strat_end_ask(b, rc, q, *n_out);
}

/* ---- telling ---- */

static int bo_tell(void *state, const tforge_observation *observations, uint32_t n)
{
    bo_state *s = state;
    tforge_sdk_strat_base *b = &s->base;
    if (n && !observations)
        return bo_error(s, TFORGE_PLUGIN_EINPUT, "told %u observations without an array", n);
    for (uint32_t i = 0; i < n; i++) {
        const tforge_observation *o = &observations[i];
        uint32_t before = o->point ? tforge_sdk_strat_find(&b->archive,
                                                           o->point) : TFORGE_SDK_STRAT_NONE, id;
        /* A point measured again keeps its first result: the model has it already. */
        if (before != TFORGE_SDK_STRAT_NONE &&
            b->archive.states[before] != TFORGE_SDK_STRAT_PENDING)
            continue;
        int rc = tforge_sdk_strat_record(b, o, 0, &id);
        if (rc)
            return rc;
        if (grow_told(s))
            return bo_error(s, TFORGE_PLUGIN_ENOMEM, "out of memory recording observations");
        s->spread_told[s->n_told] = isfinite(o->spread) && o->spread > 0 ? o->spread : 0;
        s->told[s->n_told++] = id;
        mark_seen(s, o->point);
    }
    return 0;
}

/* ---- the prior ---- */

static int bo_set_prior(void *state, const double *log_weight, uint64_t n)
{
    bo_state *s = state;
    const tforge_sdk_strat_base *b = &s->base;
    if (!b->count)
        return bo_error(s, TFORGE_PLUGIN_EINPUT, "a prior needs one log weight per point, and "
                        "this space has too many points to enumerate: bo goes on without one");
    if (n != b->count || !log_weight)
        return bo_error(s, TFORGE_PLUGIN_EINPUT, "a prior needs one log weight per enumerated "
                        "point (%llu), got %llu", (unsigned long long)b->count,
                        (unsigned long long)n);
    for (uint64_t i = 0; i < n; i++)
        if (isnan(log_weight[i]) || log_weight[i] == INFINITY)
            return bo_error(s, TFORGE_PLUGIN_EINPUT, "prior log weight %llu is %g",
                            (unsigned long long)i, log_weight[i]);
    double *copy = malloc(n * sizeof *copy);
    if (!copy)
        return bo_error(s, TFORGE_PLUGIN_ENOMEM, "out of memory for the prior");
    memcpy(copy, log_weight, n * sizeof *copy);
    free(s->log_prior);
    free(s->level_prior);
    s->level_prior = NULL;
    s->log_prior = copy;
    return 0;
}

/* Replaces any earlier prior; all zeros (or only equal weights within every dimension, which
 * change no difference between points) removes it, so that the proposals are those of no prior. */
static int bo_set_level_prior(void *state, const double *log_weight, uint64_t n)
{
    bo_state *s = state;
    const tforge_sdk_strat_base *b = &s->base;
    uint64_t total = 0;
    for (uint32_t d = 0; d < b->dims; d++)
        total += b->levels[d];
    if (n != total || !log_weight)
        return bo_error(s, TFORGE_PLUGIN_EINPUT, "a level prior needs one log weight per level "
                        "of every dimension (%llu), got %llu", (unsigned long long)total,
                        (unsigned long long)n);
    int flat = 1;
    for (uint64_t i = 0, d = 0, first = 0; i < n; i++) {
        if (isnan(log_weight[i]) || log_weight[i] == INFINITY)
            return bo_error(s, TFORGE_PLUGIN_EINPUT, "level prior log weight %llu is %g",
                            (unsigned long long)i, log_weight[i]);
        if (i == first + b->levels[d]) /* the next dimension starts */
            first = i, d++;
        flat &= log_weight[i] == log_weight[first];
    }
    double *copy = flat ? NULL : malloc(n * sizeof *copy);
    if (!flat && !s->level_offset && (s->level_offset = malloc(b->dims * sizeof *s->level_offset)))
        for (uint32_t d = 0, at = 0; d < b->dims; at += b->levels[d++])
            s->level_offset[d] = at;
    if (!flat && (!copy || !s->level_offset)) {
        free(copy);
        return bo_error(s, TFORGE_PLUGIN_ENOMEM, "out of memory for the prior");
    }
    if (copy)
        memcpy(copy, log_weight, n * sizeof *copy);
    free(s->log_prior);
    free(s->level_prior);
    s->log_prior = NULL;
    s->level_prior = copy;
    return 0;
}

/* ---- the module ---- */

static int bo_init(const tforge_host *host, const char *path)
{
    (void)host;
    (void)path;
    /* GSL's default handler aborts the process; here its errors are return codes. */
    gsl_set_error_handler_off();
    /* OpenBLAS's threads spin while they wait for work: with the cores busy (compile workers,
     * replays side by side) a refit took 5 s with two threads on two cores instead of 0.1 s
     * with one, and matrices of at most fit_max rows gain little from threads on idle cores.
     * One thread, unless OPENBLAS_NUM_THREADS asks for more. */
    if (!getenv("OPENBLAS_NUM_THREADS"))
        openblas_set_num_threads(1);
    return 0;
}

static const tforge_strategy_interface bo_interface = {
    sizeof(tforge_strategy_interface), bo_create, bo_ask, bo_tell, bo_destroy, bo_set_prior,
    bo_set_level_prior};
static const tforge_plugin_descriptor bo_descriptor = {
    .id = "bo",
    .version = "1.0.0",
    .description = "Bayesian optimisation: Gaussian process on log time, LogEI x P(feasible)",
    .interface_id = TFORGE_STRATEGY_INTERFACE_ID,
    .interface = &bo_interface,
    .options = bo_options,
    .n_options = N_OPTIONS};

static uint32_t bo_count(void)
{
    return 1;
}

static const tforge_plugin_descriptor *bo_get(uint32_t index)
{
    return index == 0 ? &bo_descriptor : NULL;
}

TFORGE_PLUGIN_EXPORT const tforge_plugin_module TFORGE_PLUGIN_ENTRY_NAME = {
    TFORGE_PLUGIN_ABI_VERSION_INIT, "bo", bo_init, NULL, bo_count, bo_get};
