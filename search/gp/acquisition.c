/* Acquisition functions in log space, so that a candidate far below the incumbent still has a
 * finite, ordered score (after Ament et al., "Unexpected improvements to expected improvement",
 * NeurIPS 2023). Everything minimises: the improvement is best - value. */
#include "gp.h"

#include <gsl/gsl_sf_erf.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LOG_SQRT_2PI 0.91893853320467274178

double tforge_gp_log_h(double u)
{
    if (u > -1.0) {
        double phi = exp(-0.5 * u * u - LOG_SQRT_2PI);
        return log(phi + u * 0.5 * erfc(-u / M_SQRT2));
    }
    double x = -u;
    if (x <= 20.0) {
        /* h(-x) = phi(x) (1 - x Q(x) / phi(x)) and Q / phi = 1 / hazard: the bracket is at least
         * 1/x^2 - 3/x^4, so its rounding error stays near x^2 epsilon. */
        return -0.5 * x * x - LOG_SQRT_2PI + log1p(-x / gsl_sf_hazard(x));
    }
    /* The asymptotic series 1 - x Q/phi = 1/x^2 - 3/x^4 + 15/x^6 - ...; seven terms leave a
     * relative error below 2e-12 at x = 20, and less beyond. */
    double y = 1.0 / (x * x), term = 1.0, sum = 0.0;
    for (int k = 1; k < 7; k++) {
        term *= -(2.0 * k + 1.0) * y;
        sum += term;
    }
    return -0.5 * x * x - LOG_SQRT_2PI - 2.0 * log(x) + log1p(sum);
}

static double safe_sd(double sd)
{
    return sd > 1e-12 ? sd : 1e-12;
}

double tforge_gp_log_ei(double mean, double sd, double best)
{
    sd = safe_sd(sd);
    return log(sd) + tforge_gp_log_h((best - mean) / sd);
}

double tforge_gp_log_pi(double mean, double sd, double best)
{
    return gsl_sf_log_erfc(-(best - mean) / safe_sd(sd) / M_SQRT2) - M_LN2;
}

double tforge_gp_log_noise_discount(double var, double noise)
{
    /* 1 - sqrt(n / (v + n)) = v / (sqrt(v + n) (sqrt(v + n) + sqrt(n))): no cancellation when
     * v is far below n. */
    double total = sqrt(var + noise);
    return log(var) - log(total) - log(total + sqrt(noise));
}

double tforge_gp_log_ucb(double mean, double sd, double best, double kappa)
{
    double t = best - mean + kappa * sd;
    if (t > 30.0)
        return log(t + log1p(exp(-t)));
    if (t < -30.0)
        return t; /* log(log1p(e^t)) = t + O(e^t) */
    return log(log1p(exp(t)));
}

int tforge_gp_feasibility_init(tforge_gp_feasibility *f, uint32_t dims, const uint32_t *levels)
{
    memset(f, 0, sizeof *f);
    f->dims = dims;
    if (!(f->offset = malloc((dims + 1) * sizeof *f->offset)))
        return TFORGE_PLUGIN_ENOMEM;
    f->offset[0] = 0;
    for (uint32_t d = 0; d < dims; d++)
        f->offset[d + 1] = f->offset[d] + levels[d];
    f->ok = calloc(f->offset[dims], sizeof *f->ok);
    f->failed = calloc(f->offset[dims], sizeof *f->failed);
    if (!f->ok || !f->failed) {
        tforge_gp_feasibility_dispose(f);
        return TFORGE_PLUGIN_ENOMEM;
    }
    return 0;
}

void tforge_gp_feasibility_dispose(tforge_gp_feasibility *f)
{
    free(f->offset);
    free(f->ok);
    free(f->failed);
    memset(f, 0, sizeof *f);
}

void tforge_gp_feasibility_add(tforge_gp_feasibility *f, const tforge_level *point, int ok)
{
    double *counts = ok ? f->ok : f->failed;
    for (uint32_t d = 0; d < f->dims; d++)
        counts[f->offset[d] + point[d]] += 1;
    if (ok)
        f->n_ok++;
    else
        f->n_failed++;
}

double tforge_gp_feasibility_log(const tforge_gp_feasibility *f, const tforge_level *point)
{
    if (f->n_failed == 0)
        return 0;
    /* log odds = log prior odds + sum_d log P(level | ok) / P(level | failed) */
    double odds = log((f->n_ok + 1.0) / (f->n_failed + 1.0));
    for (uint32_t d = 0; d < f->dims; d++) {
        uint32_t i = f->offset[d] + point[d], levels = f->offset[d + 1] - f->offset[d];
        odds += log((f->ok[i] + 0.5) / (f->n_ok + 0.5 * levels)) -
                log((f->failed[i] + 0.5) / (f->n_failed + 0.5 * levels));
    }
    /* log sigmoid(odds), without overflow either way */
    return odds > 0 ? -log1p(exp(-odds)) : odds - log1p(exp(odds));
}
