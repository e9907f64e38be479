/* The Gaussian-process model behind the "bo" strategy: encodings and the product kernel
 * (kernel.c), MAP-II fitting and the posterior over a set of candidate points (gp.c), and the
 * acquisition functions and the failure model (acquisition.c). Internal to the plugin module:
 * nothing here is exported from the shared object. */
#ifndef TFORGE_SEARCH_GP_GP_H
#define TFORGE_SEARCH_GP_GP_H

#include "tforge/plugin/strategy.h"

#include <stddef.h>
#include <stdint.h>

/* ---- encodings and the product kernel ---- */

enum { TFORGE_GP_MATERN52 = 0, TFORGE_GP_SE = 1 };
enum { TFORGE_GP_RANK = 0, TFORGE_GP_LOG2 = 1 };
enum { TFORGE_GP_NO_WARP = 0, TFORGE_GP_KUMARASWAMY = 1 };
/* What a derivative table is taken against: a lengthscale, or a warping's log alpha or log beta. */
enum { TFORGE_GP_D_LS = 0, TFORGE_GP_D_ALPHA = 1, TFORGE_GP_D_BETA = 2 };

/* Dimensions with more levels than this compute their factor on the fly instead of holding an
 * L x L table. */
#define TFORGE_GP_TABLE_LEVELS 512u

/* k(a, b) = sf2 * prod_d (c + f(dist_d(a_d, b_d) / ls_d)) / (1 + c), f the one-dimensional
 * Matern-5/2 or squared exponential. For an ordinal dimension dist = (1 - h) |w(e(a)) -
 * w(e(b))| + h [a != b], e the level's encoding in [0, 1] (its rank, or its log2 value), w the
 * identity or, with warping, the Kumaraswamy CDF w(e) = 1 - (1 - e^alpha)^beta (monotone, fixing
 * 0 and 1; alpha and beta fitted with the lengthscales), and h the Hamming part: every change of
 * level counts at least h, however near the levels; categorical and boolean dimensions are all
 * Hamming (0 for the same level, 1 for another). c is the floor: with c > 0 points that differ in
 * a dimension stay correlated (the product expands into one-dimensional, pairwise, ... terms), so
 * what a level does is shared across the others. */
typedef struct tforge_gp_kernel {
    uint32_t dims;
    int type;          /* TFORGE_GP_MATERN52 or TFORGE_GP_SE */
    uint32_t *levels;  /* per dimension */
    double **encoding; /* per dimension, per level; NULL for a Hamming dimension */
    double *ls;        /* lengthscales, per dimension */
    double floor;      /* c above (0 after init: the plain product) */
    double hamming;    /* h above (0 after init: the plain ordinal distance) */
    int warping;       /* TFORGE_GP_NO_WARP or TFORGE_GP_KUMARASWAMY */
    double *warp;      /* with warping: log alpha, log beta per dimension */
    double **warped;   /* with warping, per ordinal dimension: w(e) per level */
    double **dwarp;    /* ... and dw / dlog alpha, dw / dlog beta per level (2 L) */
    double **table;    /* per dimension: L x L factors, NULL above TFORGE_GP_TABLE_LEVELS */
    double **gtable;   /* per dimension: L x L values of g (for the gradient), as table; with
                          warping, for ordinal dimensions, two more L x L tables after it: the
                          factor's d log / d log alpha and d log / d log beta */
} tforge_gp_kernel;

/* Reads the dimensions from `space`. 0 or TFORGE_PLUGIN_ENOMEM. */
int tforge_gp_kernel_init(tforge_gp_kernel *k, const tforge_space_view *space, int type,
                          int ordinal, int warping);
void tforge_gp_kernel_dispose(tforge_gp_kernel *k);
/* Sets the lengthscales and rebuilds the tables. */
void tforge_gp_kernel_set(tforge_gp_kernel *k, const double *ls);
/* Sets the lengthscales and warpings from theta (see below) and rebuilds the tables. */
void tforge_gp_kernel_set_theta(tforge_gp_kernel *k, const double *theta);
/* out[j] = scale * k(a, points[j]) for `count` points (dims levels each, one after another);
 * k the product of the per-dimension factors, sf2 not included. */
void tforge_gp_kernel_row(const tforge_gp_kernel *k, const tforge_level *a,
                          const tforge_level *points, size_t count, double scale, double *out);
/* sum_j weights[j] * d log factor_d(a, points[j]) / d p, p = log ls_d (TFORGE_GP_D_LS) or, for
 * a warped ordinal dimension, its log alpha or log beta (0 where the levels are equal). */
double tforge_gp_kernel_g_dot(const tforge_gp_kernel *k, int against, uint32_t d,
                              const tforge_level *a, const tforge_level *points, size_t count,
                              const double *weights);
/* The scaled distance r = dist(a, b) / ls in dimension d. */
double tforge_gp_kernel_r(const tforge_gp_kernel *k, uint32_t d, uint32_t a, uint32_t b);
/* f(r) and g(r) = d log f / d log ls = -r f'(r) / f(r), without the floor. */
double tforge_gp_f(int type, double r);
double tforge_gp_g(int type, double r);

/* ---- MAP-II hyperparameters ---- */

/* theta = (log ls_1 .. log ls_d, log sf2, log noise_extra) and, with warping, (log alpha_1,
 * log beta_1, ..., log alpha_d, log beta_d); the noise variance is noise_floor +
 * exp(theta[d + 1]). Priors: log ls ~ N(0, 3) (a dimension's whole range), log sf2 ~ N(0, 1),
 * log noise_extra ~ N(log 1e-3, 4), log alpha and log beta ~ N(0, 0.75^2) (the identity, as
 * BoTorch's input warping). */
typedef struct tforge_gp_data {
    uint32_t n;
    const tforge_level *x; /* n x dims */
    const double *z;       /* standardised outputs */
    double noise_floor;
} tforge_gp_data;

/* The negative log posterior of theta (up to a constant) and, when `grad` is not NULL, its
 * gradient. `k` is scratch: its lengthscales are set from theta. `work` holds 2 n^2 + 2 n
 * doubles. Returns +inf when the kernel matrix is not positive definite. */
double tforge_gp_neg_log_posterior(tforge_gp_kernel *k, const double *theta,
                                   const tforge_gp_data *data, double *grad, double *work);
/* theta's entries: dims + 2, and 2 dims more with warping. */
uint32_t tforge_gp_theta_size(const tforge_gp_kernel *k);
/* The prior's mean for theta. */
void tforge_gp_theta_prior(const tforge_gp_kernel *k, double *theta);
/* Minimises the negative log posterior with GSL's BFGS from `theta` (in and out), from
 * `restarts` more starts drawn from the prior, and, when theta's noise is far above the prior's,
 * from theta with the prior's noise; keeps the best. 0 or a negative code. */
int tforge_gp_fit(double *theta, tforge_gp_kernel *k, const tforge_gp_data *data,
                  uint32_t restarts, tforge_rng *rng);

/* ---- the posterior over candidates ---- */

/* Observations (rows) are appended one by one (bordered Cholesky), or all set at once (full
 * factorisation). The candidates are columns: for each, the posterior mean and the latent
 * variance are kept up to date as rows come, at O(n) a candidate for each row. Rows appended
 * after tforge_gp_mark are dropped again by tforge_gp_rollback (fantasies of a batch). */
typedef struct tforge_gp {
    tforge_gp_kernel *k;
    uint32_t dims;
    double sf2, noise;
    uint32_t n, cap;   /* rows, and rows allocated */
    tforge_level *x;   /* cap x dims */
    double *z;         /* cap */
    double *chol;      /* cap x cap, row-major lower triangle */
    double *beta;      /* L^-1 z, cap */
    size_t nc;         /* candidates */
    tforge_level *c;   /* nc x dims */
    double *v;         /* L^-1 K(X, C): cap x nc, row-major */
    double *mean, *var; /* per candidate */
    double *kx;        /* scratch: cap */
    size_t cap_p;      /* points tforge_gp_predict_many takes at once */
    double *pv;        /* its scratch: cap x cap_p */
    uint32_t mark_n;
    double *mark_mean, *mark_var;
} tforge_gp;

/* Starts an empty model over `k` (kept, not owned). */
void tforge_gp_init(tforge_gp *gp, tforge_gp_kernel *k);
void tforge_gp_dispose(tforge_gp *gp);
/* Factorises K(X, X) + noise I for `n` rows afresh, with kernel `k` and the given variances.
 * Keeps the candidates and recomputes their posterior. 0, TFORGE_PLUGIN_ENOMEM, or
 * TFORGE_PLUGIN_ERROR when the matrix is not positive definite. */
int tforge_gp_reset(tforge_gp *gp, double sf2, double noise, const tforge_level *x,
                    const double *z, uint32_t n);
/* Appends one row by a bordered Cholesky step: O(n^2 + n * candidates). */
int tforge_gp_append(tforge_gp *gp, const tforge_level *x, double z);
/* Replaces the candidates by `n` points. */
int tforge_gp_set_candidates(tforge_gp *gp, const tforge_level *points, size_t n);
/* Posterior mean and latent variance at any point. */
void tforge_gp_predict(tforge_gp *gp, const tforge_level *point, double *mean, double *var);
/* Makes room for tforge_gp_predict_many of up to `m` points (kept as rows are added). 0 or
 * TFORGE_PLUGIN_ENOMEM. */
int tforge_gp_reserve_predictions(tforge_gp *gp, size_t m);
/* The posterior of `m` points (m at most the reserve), solved together: one triangular solve
 * of m columns (BLAS 3) instead of m of one column, 3-5 times faster at m = 24-100. */
void tforge_gp_predict_many(tforge_gp *gp, const tforge_level *points, size_t m, double *mean,
                            double *var);
void tforge_gp_mark(tforge_gp *gp);
void tforge_gp_rollback(tforge_gp *gp);

/* ---- acquisition ---- */

/* log(phi(u) + u Phi(u)), accurate for every finite u (never log 0). */
double tforge_gp_log_h(double u);
/* log EI for minimisation: improvement below `best` of N(mean, sd^2). */
double tforge_gp_log_ei(double mean, double sd, double best);
/* log(1 - sqrt(noise / (var + noise))): augmented EI's factor (Huang et al. 2006), near 0 where
 * the latent variance var is far above the noise and very negative where it is far below. */
double tforge_gp_log_noise_discount(double var, double noise);
/* log PI = log Phi((best - mean) / sd). */
double tforge_gp_log_pi(double mean, double sd, double best);
/* log softplus(best - mean + kappa sd): an optimistic improvement, positive, in log space. */
double tforge_gp_log_ucb(double mean, double sd, double best, double kappa);


/* ---- the failure model ---- */

/* A naive Bayes classifier of OK against failed evaluations over the levels of each dimension
 * (after BaCO's idea of a feasibility classifier multiplied into the acquisition): cheap, and
 * exact for the limits that fail kernels most (a tile or a stage count beyond some level).
 * Counts are smoothed by half an observation a level. */
typedef struct tforge_gp_feasibility {
    uint32_t dims;
    uint32_t *offset; /* per dimension, into the counts; dims + 1 entries */
    double *ok, *failed;
    uint32_t n_ok, n_failed;
} tforge_gp_feasibility;

int tforge_gp_feasibility_init(tforge_gp_feasibility *f, uint32_t dims, const uint32_t *levels);
void tforge_gp_feasibility_dispose(tforge_gp_feasibility *f);
void tforge_gp_feasibility_add(tforge_gp_feasibility *f, const tforge_level *point, int ok);
/* log P(feasible | point); 0 before the first failure. */
double tforge_gp_feasibility_log(const tforge_gp_feasibility *f, const tforge_level *point);

#endif
