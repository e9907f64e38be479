/* Encodings of levels and the product kernel, from per-dimension tables of factors: an entry of
 * a kernel matrix costs one lookup and one multiplication a dimension, no exp. */
#include "gp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double tforge_gp_f(int type, double r)
{
    if (type == TFORGE_GP_SE)
        return exp(-0.5 * r * r);
    double s = sqrt(5.0) * r;
    return (1.0 + s + s * s / 3.0) * exp(-s);
}

double tforge_gp_g(int type, double r)
{
    if (type == TFORGE_GP_SE)
        return r * r;
    double s = sqrt(5.0) * r;
    return s * s * (1.0 + s) / (3.0 * (1.0 + s + s * s / 3.0));
}

/* A dimension's factor with the floor c, (c + f) / (1 + c), and its d log / d log ls,
 * g f / (c + f). */
static double factor(const tforge_gp_kernel *k, double r)
{
    return (k->floor + tforge_gp_f(k->type, r)) / (1.0 + k->floor);
}

static double factor_g(const tforge_gp_kernel *k, double r)
{
    double f = tforge_gp_f(k->type, r);
    return tforge_gp_g(k->type, r) * f / (k->floor + f);
}

double tforge_gp_kernel_r(const tforge_gp_kernel *k, uint32_t d, uint32_t a, uint32_t b)
{
    double e = a != b;
    const double *enc = k->warped && k->warped[d] ? k->warped[d] : k->encoding[d];
    if (enc)
        e = (1.0 - k->hamming) * fabs(enc[a] - enc[b]) + k->hamming * e;
    return e / k->ls[d];
}

/* d log factor / d p at levels a, b of dimension d: p its log lengthscale, or the log alpha or
 * log beta of its warping (through r: d log factor / dr = -factor_g / r). */
static double derivative(const tforge_gp_kernel *k, int against, uint32_t d, uint32_t a,
                         uint32_t b)
{
    double r = tforge_gp_kernel_r(k, d, a, b);
    if (against == TFORGE_GP_D_LS)
        return factor_g(k, r);
    double diff = k->warped[d][a] - k->warped[d][b];
    if (r <= 0 || diff == 0)
        return 0;
    const double *dw = k->dwarp[d] + (against == TFORGE_GP_D_BETA ? k->levels[d] : 0);
    double dr = (1.0 - k->hamming) * (diff > 0 ? 1 : -1) * (dw[a] - dw[b]) / k->ls[d];
    return -factor_g(k, r) / r * dr;
}

/* w(e) = 1 - (1 - e^alpha)^beta, and dw / dlog alpha and dw / dlog beta. */
static void kumaraswamy(double e, double alpha, double beta, double *w, double *da, double *db)
{
    if (e <= 0 || e >= 1) {
        *w = e <= 0 ? 0 : 1;
        *da = *db = 0;
        return;
    }
    double ea = pow(e, alpha), rest = 1 - ea, rb = pow(rest, beta);
    *w = 1 - rb;
    *da = alpha * beta * rb / rest * ea * log(e);
    *db = -beta * rb * log(rest);
}

int tforge_gp_kernel_init(tforge_gp_kernel *k, const tforge_space_view *space, int type,
                          int ordinal, int warping)
{
    memset(k, 0, sizeof *k);
    k->dims = space->dims(space->context);
    k->type = type;
    k->warping = warping;
    if (warping && (!(k->warp = calloc(2 * (size_t)k->dims, sizeof *k->warp)) ||
                    !(k->warped = calloc(k->dims, sizeof *k->warped)) ||
                    !(k->dwarp = calloc(k->dims, sizeof *k->dwarp))))
        goto fail;
    k->levels = calloc(k->dims, sizeof *k->levels);
    k->encoding = calloc(k->dims, sizeof *k->encoding);
    k->ls = calloc(k->dims, sizeof *k->ls);
    k->table = calloc(k->dims, sizeof *k->table);
    k->gtable = calloc(k->dims, sizeof *k->gtable);
    if (!k->levels || !k->encoding || !k->ls || !k->table || !k->gtable)
        goto fail;
    for (uint32_t d = 0; d < k->dims; d++) {
        uint32_t n = k->levels[d] = space->levels(space->context, d);
        k->ls[d] = 1.0;
        if (space->kind(space->context, d) == TFORGE_DIM_CATEGORICAL ||
            space->kind(space->context, d) == TFORGE_DIM_BOOLEAN)
            continue;
        if (!(k->encoding[d] = malloc(n * sizeof **k->encoding)))
            goto fail;
        /* log2 positions need positive values; otherwise (and by default) the rank. */
        int use_log = ordinal == TFORGE_GP_LOG2 && n > 1;
        for (uint32_t l = 0; l < n && use_log; l++)
            use_log = space->value(space->context, d, l) > 0;
        double lo = use_log ? log2(space->value(space->context, d, 0)) : 0.0;
        double hi = use_log ? log2(space->value(space->context, d, n - 1)) : n - 1.0;
        for (uint32_t l = 0; l < n; l++) {
            double e = use_log ? log2(space->value(space->context, d, l)) : (double)l;
            k->encoding[d][l] = hi > lo ? (e - lo) / (hi - lo) : 0.0;
        }
        if (warping && (!(k->warped[d] = malloc(n * sizeof **k->warped)) ||
                        !(k->dwarp[d] = malloc(2 * n * sizeof **k->dwarp))))
            goto fail;
    }
    for (uint32_t d = 0; d < k->dims; d++) {
        size_t nn = (size_t)k->levels[d] * k->levels[d];
        size_t tables = k->warped && k->warped[d] ? 3 : 1; /* d / dlog ls, dlog alpha, dlog beta */
        if (k->levels[d] <= TFORGE_GP_TABLE_LEVELS &&
            (!(k->table[d] = malloc(nn * sizeof **k->table)) ||
             !(k->gtable[d] = malloc(tables * nn * sizeof **k->gtable))))
            goto fail;
    }
    tforge_gp_kernel_set(k, k->ls);
    return 0;
fail:
    tforge_gp_kernel_dispose(k);
    return TFORGE_PLUGIN_ENOMEM;
}

void tforge_gp_kernel_dispose(tforge_gp_kernel *k)
{
    for (uint32_t d = 0; k->encoding && d < k->dims; d++) {
        free(k->encoding[d]);
        if (k->table)
            free(k->table[d]);
        if (k->gtable)
            free(k->gtable[d]);
        if (k->warped)
            free(k->warped[d]);
        if (k->dwarp)
            free(k->dwarp[d]);
    }
    free(k->warp);
    free(k->warped);
    free(k->dwarp);
    free(k->levels);
    free(k->encoding);
    free(k->ls);
    free(k->table);
    free(k->gtable);
    memset(k, 0, sizeof *k);
}

void tforge_gp_kernel_set(tforge_gp_kernel *k, const double *ls)
{
    if (ls != k->ls)
        memcpy(k->ls, ls, k->dims * sizeof *ls);
    for (uint32_t d = 0; d < k->dims; d++) {
        uint32_t n = k->levels[d];
        int warped = k->warped && k->warped[d];
        for (uint32_t l = 0; warped && l < n; l++)
            kumaraswamy(k->encoding[d][l], exp(k->warp[2 * d]), exp(k->warp[2 * d + 1]),
                        &k->warped[d][l], &k->dwarp[d][l], &k->dwarp[d][n + l]);
        int last = warped ? TFORGE_GP_D_BETA : TFORGE_GP_D_LS; /* the derivative tables kept */
        if (!k->table[d])
            continue;
        size_t nn = (size_t)n * n;
        for (uint32_t a = 0; a < n; a++)
            for (uint32_t b = 0; b <= a; b++) {
                double r = tforge_gp_kernel_r(k, d, a, b);
                k->table[d][(size_t)a * n + b] = k->table[d][(size_t)b * n + a] = factor(k, r);
                for (int t = TFORGE_GP_D_LS; t <= last; t++)
                    k->gtable[d][t * nn + (size_t)a * n + b] =
                        k->gtable[d][t * nn + (size_t)b * n + a] = derivative(k, t, d, a, b);
            }
    }
}

void tforge_gp_kernel_set_theta(tforge_gp_kernel *k, const double *theta)
{
    for (uint32_t d = 0; d < k->dims; d++)
        k->ls[d] = exp(theta[d]);
    if (k->warping)
        memcpy(k->warp, theta + k->dims + 2, 2 * (size_t)k->dims * sizeof *k->warp);
    tforge_gp_kernel_set(k, k->ls);
}

/* Row by row and dimension by dimension: the inner loops are plain gathers from one row of a
 * table, which the compiler keeps in registers (an entry at a time through a function call cost
 * a fifth of a refit). */
void tforge_gp_kernel_row(const tforge_gp_kernel *k, const tforge_level *a,
                          const tforge_level *points, size_t count, double scale, double *out)
{
    uint32_t dims = k->dims;
    for (size_t j = 0; j < count; j++)
        out[j] = scale;
    for (uint32_t d = 0; d < dims; d++) {
        const double *row = k->table[d] ? k->table[d] + (size_t)a[d] * k->levels[d] : NULL;
        const tforge_level *b = points + d;
        if (row)
            for (size_t j = 0; j < count; j++)
                out[j] *= row[b[j * dims]];
        else
            for (size_t j = 0; j < count; j++)
                out[j] *= factor(k, tforge_gp_kernel_r(k, d, a[d], b[j * dims]));
    }
}

double tforge_gp_kernel_g_dot(const tforge_gp_kernel *k, int against, uint32_t d,
                              const tforge_level *a, const tforge_level *points, size_t count,
                              const double *weights)
{
    uint32_t dims = k->dims, n = k->levels[d];
    const double *row =
        k->gtable[d] ? k->gtable[d] + (size_t)against * n * n + (size_t)a[d] * n : NULL;
    const tforge_level *b = points + d;
    double sum = 0;
    if (row)
        for (size_t j = 0; j < count; j++)
            sum += weights[j] * row[b[j * dims]];
    else
        for (size_t j = 0; j < count; j++)
            sum += weights[j] * derivative(k, against, d, a[d], b[j * dims]);
    return sum;
}
