/* MAP-II fitting of the hyperparameters (GSL's BFGS on an analytic gradient) and the posterior
 * over candidates, kept up to date row by row (bordered Cholesky) through OpenBLAS. */
#include "gp.h"

#include <gsl/gsl_cblas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_multimin.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* LAPACK's Cholesky factorisation, solve and inverse, from OpenBLAS (Fortran convention). */
void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info);
void dpotrs_(const char *uplo, const int *n, const int *nrhs, const double *a, const int *lda,
             double *b, const int *ldb, int *info);
void dpotri_(const char *uplo, const int *n, double *a, const int *lda, int *info);

#define LOG_2PI 1.8378770664093453
#define PRIOR_LOG_NOISE (-6.907755278982137) /* log 1e-3 */
#define PRIOR_VAR_LS 3.0
#define PRIOR_VAR_SF 1.0
#define PRIOR_VAR_NOISE 4.0

#define PRIOR_VAR_WARP 0.5625 /* log alpha, log beta: 0.75^2 about the identity */

#define PRIOR_LOG_LS 0.0 /* a lengthscale of the whole range of a dimension's encoding */

uint32_t tforge_gp_theta_size(const tforge_gp_kernel *k)
{
    return k->dims + 2 + (k->warping ? 2 * k->dims : 0);
}

/* The prior's mean and variance of theta's entry i (see gp.h). */
static double prior_mean(const tforge_gp_kernel *k, uint32_t i)
{
    return i < k->dims ? PRIOR_LOG_LS : i == k->dims + 1 ? PRIOR_LOG_NOISE : 0.0;
}

static double prior_var(const tforge_gp_kernel *k, uint32_t i)
{
    return i < k->dims ? PRIOR_VAR_LS : i == k->dims ? PRIOR_VAR_SF
           : i == k->dims + 1 ? PRIOR_VAR_NOISE : PRIOR_VAR_WARP;
}

void tforge_gp_theta_prior(const tforge_gp_kernel *k, double *theta)
{
    for (uint32_t i = 0; i < tforge_gp_theta_size(k); i++)
        theta[i] = prior_mean(k, i);
}

/* The negative log posterior at theta; leaves the kernel's factors, the Cholesky factor and
 * alpha = K^-1 z in work for the gradient. */
static double neg_log_posterior(tforge_gp_kernel *k, const double *theta,
                                const tforge_gp_data *data, double *work)
{
    uint32_t n = data->n, dims = k->dims;
    size_t nn = (size_t)n * n;
    double *kf = work, *chol = work + nn, *alpha = work + 2 * nn;
    double sf2 = exp(theta[dims]), extra = exp(theta[dims + 1]);
    double noise = data->noise_floor + extra;
    tforge_gp_kernel_set_theta(k, theta);
    /* The lower triangles (row-major), which LAPACK reads as the upper ones (column-major). */
    for (uint32_t a = 0; a < n; a++) {
        double *row = kf + (size_t)a * n, *crow = chol + (size_t)a * n;
        tforge_gp_kernel_row(k, data->x + (size_t)a * dims, data->x, a + 1, 1.0, row);
        for (uint32_t b = 0; b <= a; b++)
            crow[b] = sf2 * row[b];
        crow[a] += noise;
    }
    int ni = (int)n, one = 1, info;
    dpotrf_("U", &ni, chol, &ni, &info);
    if (info != 0)
        return INFINITY;
    memcpy(alpha, data->z, n * sizeof *alpha);
    dpotrs_("U", &ni, &one, chol, &ni, alpha, &ni, &info);
    double value = 0.5 * n * LOG_2PI;
    for (uint32_t i = 0; i < n; i++)
        value += 0.5 * data->z[i] * alpha[i] + log(chol[(size_t)i * n + i]);
    for (uint32_t i = 0; i < tforge_gp_theta_size(k); i++) {
        double t = theta[i] - prior_mean(k, i);
        value += t * t / (2 * prior_var(k, i));
    }
    return value;
}

/* The gradient at theta from what neg_log_posterior left in work (the factor is consumed). */
static void neg_log_posterior_gradient(tforge_gp_kernel *k, const double *theta,
                                       const tforge_gp_data *data, double *grad, double *work)
{
    uint32_t n = data->n, dims = k->dims;
    size_t nn = (size_t)n * n;
    double *kf = work, *chol = work + nn, *alpha = work + 2 * nn, *wk = alpha + n;
    double sf2 = exp(theta[dims]), extra = exp(theta[dims + 1]);
    int ni = (int)n, info;
    /* d nll / d theta_j = -1/2 sum_ab W_ab dK_ab / d theta_j, W = alpha alpha^T - K^-1. */
    double *inv = chol; /* K^-1 replaces the factor, in the same (lower, row-major) triangle */
    dpotri_("U", &ni, inv, &ni, &info);
    memset(grad, 0, tforge_gp_theta_size(k) * sizeof *grad);
    double trace = 0;
    for (uint32_t a = 0; a < n; a++) {
        trace += alpha[a] * alpha[a] - inv[(size_t)a * n + a];
        /* Off-diagonal pairs count twice; the diagonal has no lengthscale term (r = 0). */
        const double *ia = inv + (size_t)a * n, *ka = kf + (size_t)a * n;
        double sum = 0;
        for (uint32_t b = 0; b < a; b++) {
            wk[b] = 2.0 * sf2 * (alpha[a] * alpha[b] - ia[b]) * ka[b];
            sum += wk[b];
        }
        grad[dims] -= 0.5 * sum;
        const tforge_level *xa = data->x + (size_t)a * dims;
        for (uint32_t d = 0; a && d < dims; d++) {
            grad[d] -= 0.5 * tforge_gp_kernel_g_dot(k, TFORGE_GP_D_LS, d, xa, data->x, a, wk);
            if (!k->warped || !k->warped[d])
                continue;
            for (int w = 0; w < 2; w++)
                grad[dims + 2 + 2 * d + w] -=
                    0.5 * tforge_gp_kernel_g_dot(k, TFORGE_GP_D_ALPHA + w, d, xa, data->x, a, wk);
        }
    }
    grad[dims] -= 0.5 * sf2 * trace; /* the diagonal: kf = 1 */
    grad[dims + 1] = -0.5 * extra * trace;
    for (uint32_t i = 0; i < tforge_gp_theta_size(k); i++)
        grad[i] += (theta[i] - prior_mean(k, i)) / prior_var(k, i);
}

double tforge_gp_neg_log_posterior(tforge_gp_kernel *k, const double *theta,
                                   const tforge_gp_data *data, double *grad, double *work)
{
    double value = neg_log_posterior(k, theta, data, work);
    if (grad && isfinite(value))
        neg_log_posterior_gradient(k, theta, data, grad, work);
    return value;
}

/* ---- BFGS ---- */

/* BFGS's line search asks for the value at a point and then often for the gradient at the same
 * point: the factorisation of the value is kept for it (`factored`: work holds it for `at`). */
typedef struct fit_problem {
    tforge_gp_kernel *k;
    const tforge_gp_data *data;
    double *work, *at, value;
    int factored;
} fit_problem;

static double fit_f(const gsl_vector *x, void *params)
{
    fit_problem *p = params;
    p->value = neg_log_posterior(p->k, x->data, p->data, p->work);
    memcpy(p->at, x->data, x->size * sizeof *p->at);
    p->factored = isfinite(p->value);
    return p->value;
}

static void fit_fdf(const gsl_vector *x, void *params, double *f, gsl_vector *g)
{
    fit_problem *p = params;
    if (!p->factored || memcmp(p->at, x->data, x->size * sizeof *p->at) != 0)
        fit_f(x, p);
    *f = p->value;
    if (p->factored)
        neg_log_posterior_gradient(p->k, x->data, p->data, g->data, p->work);
    else
        gsl_vector_set_zero(g);
    p->factored = 0;
}

static void fit_df(const gsl_vector *x, void *params, gsl_vector *g)
{
    double f;
    fit_fdf(x, params, &f, g);
}

static double normal(tforge_rng *rng)
{
    double u = tforge_rng_uniform(rng), v = tforge_rng_uniform(rng);
    return sqrt(-2.0 * log(1.0 - u)) * cos(2.0 * M_PI * v);
}

int tforge_gp_fit(double *theta, tforge_gp_kernel *k, const tforge_gp_data *data,
                  uint32_t restarts, tforge_rng *rng)
{
    uint32_t np = tforge_gp_theta_size(k);
    size_t nn = (size_t)data->n * data->n;
    int rc = 0;
    double *work = malloc((2 * nn + 2 * data->n) * sizeof *work);
    double *best = malloc(3 * np * sizeof *best), *start = best + np;
    gsl_vector *x = gsl_vector_alloc(np);
    gsl_multimin_fdfminimizer *m = gsl_multimin_fdfminimizer_alloc(
        gsl_multimin_fdfminimizer_vector_bfgs2, np);
    if (!work || !best || !x || !m) {
        rc = TFORGE_PLUGIN_ENOMEM;
        goto cleanup;
    }
    fit_problem problem = {k, data, work, best + 2 * np, INFINITY, 0};
    gsl_multimin_function_fdf fn = {fit_f, fit_df, fit_fdf, np, &problem};
    double best_value = INFINITY;
    memcpy(best, theta, np * sizeof *best);
    /* A fit that put much of the variance into noise stays there when warm-started (a local
     * optimum where the data are "explained" as noise): it is also started once from the same
     * lengthscales with the prior's noise, and the better posterior wins. */
    int noisy = theta[k->dims + 1] > PRIOR_LOG_NOISE + 2 * sqrt(PRIOR_VAR_NOISE);
    for (uint32_t r = 0; r <= restarts + noisy; r++) {
        if (r == 0) {
            memcpy(start, theta, np * sizeof *start);
        } else if (r == 1 && noisy) {
            memcpy(start, theta, np * sizeof *start);
            start[k->dims + 1] = PRIOR_LOG_NOISE;
        } else {
            for (uint32_t i = 0; i < np; i++)
                start[i] = prior_mean(k, i) + 0.5 * sqrt(prior_var(k, i)) * normal(rng);
        }
        memcpy(x->data, start, np * sizeof *start);
        if (!isfinite(fit_f(x, &problem)))
            continue;
        /* The line search's tolerance (the Wolfe curvature condition) at 0.4 rather than GSL's
         * suggested 0.1: the same optimum to 0.01 nats on the proposer benchmark with a
         * quarter fewer factorisations. */
        gsl_multimin_fdfminimizer_set(m, &fn, x, 0.1, 0.4);
        /* Stop where a step gains under a twentieth of a nat while the gradient is small: the
         * hyperparameters' posterior is far wider than that, and the next refit starts here. */
        double before = m->f;
        for (int it = 0; it < 50; it++) {
            if (gsl_multimin_fdfminimizer_iterate(m) != GSL_SUCCESS)
                break;
            if (gsl_multimin_test_gradient(m->gradient, 1e-2) == GSL_SUCCESS ||
                before - m->f < 1e-3 ||
                (before - m->f < 0.05 && gsl_multimin_test_gradient(m->gradient, 2) == GSL_SUCCESS))
                break;
            before = m->f;
        }
        double value = gsl_multimin_fdfminimizer_minimum(m);
        if (isfinite(value) && value < best_value) {
            best_value = value;
            memcpy(best, m->x->data, np * sizeof *best);
        }
    }
    memcpy(theta, best, np * sizeof *theta);
    tforge_gp_kernel_set_theta(k, theta);
cleanup:
    gsl_multimin_fdfminimizer_free(m);
    gsl_vector_free(x);
    free(best);
    free(work);
    return rc;
}

/* ---- the posterior over candidates ---- */

void tforge_gp_init(tforge_gp *gp, tforge_gp_kernel *k)
{
    memset(gp, 0, sizeof *gp);
    gp->k = k;
    gp->dims = k->dims;
    gp->sf2 = 1.0;
    gp->noise = 1e-6;
}

void tforge_gp_dispose(tforge_gp *gp)
{
    free(gp->x);
    free(gp->z);
    free(gp->chol);
    free(gp->beta);
    free(gp->c);
    free(gp->v);
    free(gp->mean);
    free(gp->var);
    free(gp->pv);
    free(gp->kx);
    free(gp->mark_mean);
    free(gp->mark_var);
    memset(gp, 0, sizeof *gp);
}

static int grow_rows(tforge_gp *gp, uint32_t need)
{
    if (need <= gp->cap)
        return 0;
    uint32_t cap = gp->cap ? gp->cap : 16;
    while (cap < need)
        cap += cap / 4 + 16; /* gently: the candidates' rows can be most of the memory */
    double *chol = calloc((size_t)cap * cap, sizeof *chol);
    if (!chol)
        return TFORGE_PLUGIN_ENOMEM;
    for (uint32_t i = 0; i < gp->n; i++)
        memcpy(chol + (size_t)i * cap, gp->chol + (size_t)i * gp->cap, (i + 1) * sizeof *chol);
    free(gp->chol);
    gp->chol = chol;
    void *p;
    if (!(p = realloc(gp->x, (size_t)cap * gp->dims * sizeof *gp->x)))
        return TFORGE_PLUGIN_ENOMEM;
    gp->x = p;
    if (!(p = realloc(gp->z, cap * sizeof *gp->z)))
        return TFORGE_PLUGIN_ENOMEM;
    gp->z = p;
    if (!(p = realloc(gp->beta, cap * sizeof *gp->beta)))
        return TFORGE_PLUGIN_ENOMEM;
    gp->beta = p;
    if (!(p = realloc(gp->kx, cap * sizeof *gp->kx)))
        return TFORGE_PLUGIN_ENOMEM;
    gp->kx = p;
    if (gp->nc && !(p = realloc(gp->v, (size_t)cap * gp->nc * sizeof *gp->v)))
        return TFORGE_PLUGIN_ENOMEM;
    if (gp->nc)
        gp->v = p;
    if (gp->cap_p && !(p = realloc(gp->pv, (size_t)cap * gp->cap_p * sizeof *gp->pv)))
        return TFORGE_PLUGIN_ENOMEM;
    if (gp->cap_p)
        gp->pv = p;
    gp->cap = cap;
    return 0;
}

/* The posterior of `m` points: v (n rows, leading dimension ld) receives L^-1 K(X, points),
 * mean and var their posterior means and latent variances. */
static void posterior(const tforge_gp *gp, const tforge_level *points, size_t m, double *v,
                      size_t ld, double *mean, double *var)
{
    if (m == 0)
        return;
    for (uint32_t i = 0; i < gp->n; i++)
        tforge_gp_kernel_row(gp->k, gp->x + (size_t)i * gp->dims, points, m, gp->sf2, v + i * ld);
    if (gp->n) {
        cblas_dtrsm(CblasRowMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, (int)gp->n,
                    (int)m, 1.0, gp->chol, (int)gp->cap, v, (int)ld);
        cblas_dgemv(CblasRowMajor, CblasTrans, (int)gp->n, (int)m, 1.0, v, (int)ld, gp->beta, 1,
                    0.0, mean, 1);
    } else {
        memset(mean, 0, m * sizeof *mean);
    }
    for (size_t j = 0; j < m; j++)
        var[j] = gp->sf2;
    for (uint32_t i = 0; i < gp->n; i++) {
        const double *row = v + i * ld;
        for (size_t j = 0; j < m; j++)
            var[j] -= row[j] * row[j];
    }
}

/* Computes L^-1 K(X, C) and the candidates' posterior. */
static void candidates(tforge_gp *gp)
{
    posterior(gp, gp->c, gp->nc, gp->v, gp->nc, gp->mean, gp->var);
}

int tforge_gp_reset(tforge_gp *gp, double sf2, double noise, const tforge_level *x,
                    const double *z, uint32_t n)
{
    int rc = grow_rows(gp, n);
    if (rc)
        return rc;
    gp->sf2 = sf2;
    gp->noise = noise;
    gp->n = n;
    if (n) {
        memcpy(gp->x, x, (size_t)n * gp->dims * sizeof *x);
        memcpy(gp->z, z, n * sizeof *z);
    }
    for (uint32_t a = 0; a < n; a++) {
        double *row = gp->chol + (size_t)a * gp->cap;
        tforge_gp_kernel_row(gp->k, x + (size_t)a * gp->dims, x, a + 1, sf2, row);
        row[a] += noise;
        for (uint32_t b = 0; b < a; b++)
            gp->chol[(size_t)b * gp->cap + a] = row[b];
    }
    if (n) {
        gsl_matrix_view L = gsl_matrix_view_array_with_tda(gp->chol, n, n, gp->cap);
        if (gsl_linalg_cholesky_decomp1(&L.matrix) != GSL_SUCCESS) {
            gp->n = 0;
            return TFORGE_PLUGIN_ERROR;
        }
        /* Row-major lower L only from here on: clear what the factorisation left above. */
        for (uint32_t a = 0; a < n; a++)
            memset(gp->chol + (size_t)a * gp->cap + a + 1, 0, (n - a - 1) * sizeof *gp->chol);
        memcpy(gp->beta, z, n * sizeof *z);
        cblas_dtrsv(CblasRowMajor, CblasLower, CblasNoTrans, CblasNonUnit, (int)n, gp->chol,
                    (int)gp->cap, gp->beta, 1);
    }
    candidates(gp);
    return 0;
}

int tforge_gp_append(tforge_gp *gp, const tforge_level *x, double z)
{
    int rc = grow_rows(gp, gp->n + 1);
    if (rc)
        return rc;
    uint32_t n = gp->n;
    double *l = gp->chol + (size_t)n * gp->cap;
    tforge_gp_kernel_row(gp->k, x, gp->x, n, gp->sf2, l);
    if (n)
        cblas_dtrsv(CblasRowMajor, CblasLower, CblasNoTrans, CblasNonUnit, (int)n, gp->chol,
                    (int)gp->cap, l, 1);
    double d2 = gp->sf2 + gp->noise - (n ? cblas_ddot((int)n, l, 1, l, 1) : 0.0);
    /* A point (almost) repeated: its own noise keeps the pivot positive in exact arithmetic. */
    if (d2 < 1e-12 * gp->sf2)
        d2 = 1e-12 * gp->sf2;
    double lnn = sqrt(d2);
    l[n] = lnn;
    gp->beta[n] = (z - (n ? cblas_ddot((int)n, l, 1, gp->beta, 1) : 0.0)) / lnn;
    memcpy(gp->x + (size_t)n * gp->dims, x, gp->dims * sizeof *x);
    gp->z[n] = z;
    if (gp->nc) {
        double *row = gp->v + (size_t)n * gp->nc;
        tforge_gp_kernel_row(gp->k, x, gp->c, gp->nc, gp->sf2, row);
        if (n)
            cblas_dgemv(CblasRowMajor, CblasTrans, (int)n, (int)gp->nc, -1.0, gp->v,
                        (int)gp->nc, l, 1, 1.0, row, 1);
        double b = gp->beta[n];
        for (size_t j = 0; j < gp->nc; j++) {
            row[j] /= lnn;
            gp->mean[j] += row[j] * b;
            gp->var[j] -= row[j] * row[j];
        }
    }
    gp->n = n + 1;
    return 0;
}

int tforge_gp_set_candidates(tforge_gp *gp, const tforge_level *points, size_t n)
{
    size_t cap = n ? n : 1;
    void *p;
    free(gp->v);
    gp->v = NULL;
    gp->nc = 0;
    if (!(p = realloc(gp->c, cap * gp->dims * sizeof *gp->c)))
        return TFORGE_PLUGIN_ENOMEM;
    gp->c = p;
    double **arrays[] = {&gp->mean, &gp->var, &gp->mark_mean, &gp->mark_var};
    for (size_t i = 0; i < sizeof arrays / sizeof *arrays; i++) {
        if (!(p = realloc(*arrays[i], cap * sizeof(double))))
            return TFORGE_PLUGIN_ENOMEM;
        *arrays[i] = p;
    }
    if (!(gp->v = malloc((size_t)(gp->cap ? gp->cap : 1) * cap * sizeof *gp->v)))
        return TFORGE_PLUGIN_ENOMEM;
    gp->nc = n;
    memcpy(gp->c, points, n * gp->dims * sizeof *points);
    candidates(gp);
    return 0;
}

int tforge_gp_reserve_predictions(tforge_gp *gp, size_t m)
{
    void *p = realloc(gp->pv, (size_t)(gp->cap ? gp->cap : 1) * (m ? m : 1) * sizeof *gp->pv);
    if (!p)
        return TFORGE_PLUGIN_ENOMEM;
    gp->pv = p;
    gp->cap_p = m;
    return 0;
}

void tforge_gp_predict_many(tforge_gp *gp, const tforge_level *points, size_t m, double *mean,
                            double *var)
{
    posterior(gp, points, m, gp->pv, m, mean, var);
}

void tforge_gp_predict(tforge_gp *gp, const tforge_level *point, double *mean, double *var)
{
    uint32_t n = gp->n;
    tforge_gp_kernel_row(gp->k, point, gp->x, n, gp->sf2, gp->kx);
    if (n == 0) {
        *mean = 0;
        *var = gp->sf2;
        return;
    }
    cblas_dtrsv(CblasRowMajor, CblasLower, CblasNoTrans, CblasNonUnit, (int)n, gp->chol,
                (int)gp->cap, gp->kx, 1);
    *mean = cblas_ddot((int)n, gp->kx, 1, gp->beta, 1);
    *var = gp->sf2 - cblas_ddot((int)n, gp->kx, 1, gp->kx, 1);
}

void tforge_gp_mark(tforge_gp *gp)
{
    gp->mark_n = gp->n;
    if (gp->nc) {
        memcpy(gp->mark_mean, gp->mean, gp->nc * sizeof *gp->mean);
        memcpy(gp->mark_var, gp->var, gp->nc * sizeof *gp->var);
    }
}

void tforge_gp_rollback(tforge_gp *gp)
{
    gp->n = gp->mark_n;
    if (gp->nc) {
        memcpy(gp->mean, gp->mark_mean, gp->nc * sizeof *gp->mean);
        memcpy(gp->var, gp->mark_var, gp->nc * sizeof *gp->var);
    }
}
