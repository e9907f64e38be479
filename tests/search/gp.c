/* The "bo" strategy and its Gaussian process: closed-form posteriors, analytic gradients, LogEI
 * deep in the tail, incremental updates, the failure model, the best point's neighbours first,
 * and the strategy's promises (no point twice, distinct batches, determinism, priors that help
 * and priors that cannot trap, a space too large to enumerate). */
#include "gp.h"
#include "tforge/space.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

extern const tforge_plugin_module tforge_static_bo;

static const tforge_strategy_interface *bo(void)
{
    assert_int_equal(tforge_static_bo.init(NULL, NULL), 0);
    const tforge_plugin_descriptor *d = tforge_static_bo.get(0);
    assert_string_equal(d->id, "bo");
    return d->interface;
}

/* A grid of `dims` ranges 0..levels-1, with an optional constraint. */
static tforge_space *grid(uint32_t dims, int64_t levels, const char *constraint)
{
    tforge_space *space;
    assert_int_equal(tforge_space_new(&space), 0);
    for (uint32_t d = 0; d < dims; d++) {
        char name[16];
        snprintf(name, sizeof name, "x%u", d);
        assert_int_equal(tforge_space_add_range(space, name, 0, levels - 1, 1), 0);
    }
    if (constraint)
        assert_int_equal(tforge_space_add_constraint(space, constraint), 0);
    assert_int_equal(tforge_space_build(space, NULL), 0);
    return space;
}

/* ---- the model ---- */

static void posterior_matches_closed_form(void **state)
{
    (void)state;
    tforge_space *space = grid(1, 5, NULL);
    tforge_space_view view = tforge_space_get_view(space);
    tforge_gp_kernel k;
    assert_int_equal(tforge_gp_kernel_init(&k, &view, TFORGE_GP_MATERN52, TFORGE_GP_RANK,
                                             TFORGE_GP_NO_WARP), 0);
    double ls = 0.5;
    tforge_gp_kernel_set(&k, &ls);
    tforge_gp gp;
    tforge_gp_init(&gp, &k);
    const double sf2 = 1.5, noise = 0.01;
    tforge_level x[2] = {0, 2}, c[5] = {0, 1, 2, 3, 4};
    double z[2] = {1.0, -0.5};
    assert_int_equal(tforge_gp_set_candidates(&gp, c, 5), 0);
    /* One observation at level 0 (encoding 0): mean = k z / (sf2 + noise). */
    assert_int_equal(tforge_gp_reset(&gp, sf2, noise, x, z, 1), 0);
    for (int j = 0; j < 5; j++) {
        double r = (j / 4.0) / ls, s5 = sqrt(5.0) * r;
        double kj = sf2 * (1 + s5 + s5 * s5 / 3) * exp(-s5);
        assert_true(fabs(gp.mean[j] - kj * z[0] / (sf2 + noise)) < 1e-12);
        assert_true(fabs(gp.var[j] - (sf2 - kj * kj / (sf2 + noise))) < 1e-12);
    }
    /* Two observations (levels 0 and 2): the 2 x 2 inverse by hand. */
    assert_int_equal(tforge_gp_reset(&gp, sf2, noise, x, z, 2), 0);
    double r12 = 0.5 / ls, s12 = sqrt(5.0) * r12;
    double k12 = sf2 * (1 + s12 + s12 * s12 / 3) * exp(-s12), a = sf2 + noise;
    double det = a * a - k12 * k12;
    for (int j = 0; j < 5; j++) {
        double k1 = sf2 * tforge_gp_f(TFORGE_GP_MATERN52, (j / 4.0) / ls);
        double k2 = sf2 * tforge_gp_f(TFORGE_GP_MATERN52, fabs(j / 4.0 - 0.5) / ls);
        double w1 = (a * k1 - k12 * k2) / det, w2 = (a * k2 - k12 * k1) / det;
        assert_true(fabs(gp.mean[j] - (w1 * z[0] + w2 * z[1])) < 1e-12);
        assert_true(fabs(gp.var[j] - (sf2 - w1 * k1 - w2 * k2)) < 1e-12);
        double m, v;
        tforge_gp_predict(&gp, c + j, &m, &v);
        assert_true(fabs(m - gp.mean[j]) < 1e-12 && fabs(v - gp.var[j]) < 1e-12);
    }
    /* With a Hamming part h, a change of level counts h plus (1 - h) of the encoded distance. */
    k.hamming = 0.3;
    assert_true(tforge_gp_kernel_r(&k, 0, 1, 1) == 0.0);
    assert_true(fabs(tforge_gp_kernel_r(&k, 0, 0, 1) - (0.7 * 0.25 + 0.3) / ls) < 1e-12);
    assert_true(fabs(tforge_gp_kernel_r(&k, 0, 4, 0) - 1.0 / ls) < 1e-12);
    /* Warped by the Kumaraswamy CDF with alpha = 2, beta = 1: w(e) = e^2, so levels 0 and 2
     * (encodings 0 and 0.5) are 0.25 apart and levels 2 and 4 0.75 apart. */
    tforge_gp_kernel warped;
    assert_int_equal(tforge_gp_kernel_init(&warped, &view, TFORGE_GP_MATERN52, TFORGE_GP_RANK,
                                           TFORGE_GP_KUMARASWAMY), 0);
    double theta[5] = {log(ls), 0, 0, log(2.0), 0};
    tforge_gp_kernel_set_theta(&warped, theta);
    assert_true(fabs(tforge_gp_kernel_r(&warped, 0, 0, 2) - 0.25 / ls) < 1e-12);
    assert_true(fabs(tforge_gp_kernel_r(&warped, 0, 4, 2) - 0.75 / ls) < 1e-12);
    tforge_gp_kernel_dispose(&warped);
    tforge_gp_dispose(&gp);
    tforge_gp_kernel_dispose(&k);
    tforge_space_free(space);
}

static void gradient_matches_finite_differences(void **state)
{
    (void)state;
    tforge_space *space = grid(3, 6, NULL);
    tforge_space_view view = tforge_space_get_view(space);
    /* Each kernel, then each with a floor, then with a Hamming part too, then warped too. */
    for (int variant = 0; variant < 8; variant++) {
        tforge_gp_kernel k;
        int type = variant % 2 ? TFORGE_GP_SE : TFORGE_GP_MATERN52;
        int warping = variant < 6 ? TFORGE_GP_NO_WARP : TFORGE_GP_KUMARASWAMY;
        assert_int_equal(tforge_gp_kernel_init(&k, &view, type, TFORGE_GP_RANK, warping), 0);
        k.floor = variant < 2 ? 0.0 : 0.7;
        k.hamming = variant < 4 ? 0.0 : 0.3;
        enum { N = 12, NP = 3 + 2 + 2 * 3 };
        uint32_t np = tforge_gp_theta_size(&k);
        assert_int_equal(np, warping ? NP : 5);
        tforge_level x[N * 3];
        double z[N], work[2 * N * N + 2 * N], grad[NP], g2[NP];
        tforge_rng rng;
        tforge_rng_seed(&rng, 7);
        for (int i = 0; i < N; i++) {
            for (int d = 0; d < 3; d++)
                x[i * 3 + d] = (tforge_level)((i * 7 + d * 3 + i * d) % 6);
            z[i] = sin(x[i * 3]) + 0.3 * x[i * 3 + 1] - 0.5;
        }
        tforge_gp_data data = {N, x, z, 1e-4};
        double theta[NP] = {-0.7, 0.2, 0.9, 0.3, -4.0, 0.4, -0.3, -0.5, 0.6, 0.2, 0.1};
        double f = tforge_gp_neg_log_posterior(&k, theta, &data, grad, work);
        assert_true(isfinite(f));
        for (uint32_t j = 0; j < np; j++) {
            double h = 1e-5, t[NP];
            memcpy(t, theta, sizeof t);
            t[j] += h;
            double up = tforge_gp_neg_log_posterior(&k, t, &data, g2, work);
            t[j] -= 2 * h;
            double down = tforge_gp_neg_log_posterior(&k, t, &data, g2, work);
            double fd = (up - down) / (2 * h);
            assert_true(fabs(fd - grad[j]) < 1e-5 * (1 + fabs(fd)));
            if (warping && j >= 5)
                assert_true(fabs(grad[j]) > 1e-6); /* the warping's terms are not empty */
        }
        /* The fit lowers the objective from the prior's mean. */
        double fitted[NP];
        tforge_gp_theta_prior(&k, fitted);
        double before = tforge_gp_neg_log_posterior(&k, fitted, &data, NULL, work);
        assert_int_equal(tforge_gp_fit(fitted, &k, &data, 1, &rng), 0);
        assert_true(tforge_gp_neg_log_posterior(&k, fitted, &data, NULL, work) < before);
        tforge_gp_kernel_dispose(&k);
    }
    tforge_space_free(space);
}

/* log(phi(u) + u Phi(u)) computed with mpmath at 60 digits (mp.log(mp.npdf(u) + u*mp.ncdf(u)));
 * the points cross each branch of the implementation (u > -1, -20 <= u <= -1, u < -20). */
static void log_ei_is_accurate_in_the_tail(void **state)
{
    (void)state;
    static const struct {
        double u, expected;
    } cases[] = {
        {2.0, 0.69738354578822831219},     {0.0, -0.91893853320467274178},
        {-0.5, -1.6205162643873199193},    {-1.0, -2.4851210257126413368},
        {-3.0, -7.8696860596030285171},    {-10.0, -55.553122036122355927},
        {-19.5, -196.99258561722833326},   {-20.5, -217.09186837038312513},
        {-50.0, -1258.7441828684608531},   {-1000.0, -500014.73445209115845},
        {-1e5, -5000000023.9447894634},    {-1e8, -5000000000000037.7603},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        double got = tforge_gp_log_h(cases[i].u);
        assert_true(isfinite(got));
        assert_true(fabs(got - cases[i].expected) <= 1e-12 * (1 + fabs(cases[i].expected)));
    }
    /* Monotone and finite where plain EI underflows to 0. */
    double previous = tforge_gp_log_h(0.0);
    for (double u = -1.0; u > -1e6; u *= 1.7) {
        double h = tforge_gp_log_h(u);
        assert_true(isfinite(h) && h < previous);
        previous = h;
    }
    assert_true(isfinite(tforge_gp_log_ei(100.0, 1e-3, 0.0)));
    assert_true(isfinite(tforge_gp_log_pi(100.0, 1e-3, 0.0)));
    assert_true(isfinite(tforge_gp_log_ucb(100.0, 1e-3, 0.0, 2.0)));
    assert_true(tforge_gp_log_ei(0.0, 1.0, 0.0) > tforge_gp_log_ei(0.5, 1.0, 0.0));
    /* The noise discount: the plain formula where it is exact enough, finite and rising as the
     * variance falls far below the noise, and near 0 far above it. */
    assert_true(fabs(tforge_gp_log_noise_discount(0.3, 0.1) - log(1 - sqrt(0.1 / 0.4))) < 1e-12);
    double tiny = tforge_gp_log_noise_discount(1e-20, 1e-3);
    assert_true(isfinite(tiny) && fabs(tiny - log(1e-20 / 2e-3)) < 1e-6);
    assert_true(tiny < tforge_gp_log_noise_discount(1e-10, 1e-3));
    assert_true(fabs(tforge_gp_log_noise_discount(1e6, 1e-3)) < 1e-4);
}

static void incremental_posterior_equals_refactorisation(void **state)
{
    (void)state;
    tforge_space *space = grid(3, 7, NULL);
    tforge_space_view view = tforge_space_get_view(space);
    tforge_gp_kernel k;
    assert_int_equal(tforge_gp_kernel_init(&k, &view, TFORGE_GP_MATERN52, TFORGE_GP_RANK,
                                             TFORGE_GP_NO_WARP), 0);
    double ls[3] = {0.4, 0.8, 1.3};
    tforge_gp_kernel_set(&k, ls);
    size_t nc = tforge_space_count(space);
    tforge_level *c = malloc(nc * 3 * sizeof *c);
    for (size_t j = 0; j < nc; j++)
        tforge_space_point(c + j * 3, space, j);
    enum { N = 40 };
    tforge_level x[N * 3];
    double z[N];
    tforge_rng rng;
    tforge_rng_seed(&rng, 3);
    for (int i = 0; i < N; i++) {
        tforge_space_point(x + i * 3, space, tforge_rng_below(&rng, nc));
        z[i] = cos(x[i * 3]) * x[i * 3 + 1] - 0.1 * x[i * 3 + 2];
    }
    tforge_gp a, b;
    tforge_gp_init(&a, &k);
    tforge_gp_init(&b, &k);
    assert_int_equal(tforge_gp_set_candidates(&a, c, nc), 0);
    assert_int_equal(tforge_gp_set_candidates(&b, c, nc), 0);
    assert_int_equal(tforge_gp_reset(&a, 1.3, 0.02, x, z, 5), 0);
    for (int i = 5; i < N; i++)
        assert_int_equal(tforge_gp_append(&a, x + i * 3, z[i]), 0);
    assert_int_equal(tforge_gp_reset(&b, 1.3, 0.02, x, z, N), 0);
    for (size_t j = 0; j < nc; j++) {
        assert_true(fabs(a.mean[j] - b.mean[j]) < 1e-9);
        assert_true(fabs(a.var[j] - b.var[j]) < 1e-9);
    }
    for (int i = 0; i < N; i++)
        for (int j = 0; j <= i; j++)
            assert_true(fabs(a.chol[i * a.cap + j] - b.chol[i * b.cap + j]) < 1e-9);
    /* Points predicted together match one at a time and the candidates' posterior. */
    double mean[9], var[9];
    assert_int_equal(tforge_gp_reserve_predictions(&a, 9), 0);
    tforge_gp_predict_many(&a, c + 100 * 3, 9, mean, var);
    for (int j = 0; j < 9; j++) {
        double m, v;
        tforge_gp_predict(&a, c + (100 + j) * 3, &m, &v);
        assert_true(fabs(mean[j] - m) < 1e-9 && fabs(var[j] - v) < 1e-9);
        assert_true(fabs(mean[j] - b.mean[100 + j]) < 1e-9 && fabs(var[j] - b.var[100 + j]) < 1e-9);
    }
    /* Fantasies appended after a mark leave no trace after the rollback. */
    double m0 = a.mean[17], v0 = a.var[17];
    tforge_gp_mark(&a);
    assert_int_equal(tforge_gp_append(&a, c + 17 * 3, 5.0), 0);
    assert_true(fabs(a.mean[17] - m0) > 1e-6);
    tforge_gp_rollback(&a);
    assert_true(a.n == N && a.mean[17] == m0 && a.var[17] == v0);
    tforge_gp_dispose(&a);
    tforge_gp_dispose(&b);
    tforge_gp_kernel_dispose(&k);
    free(c);
    tforge_space_free(space);
}

/* Failures wherever x0 > 7 on a 10 x 10 grid: after 150 random observations the model's
 * probability of feasibility there is below 0.2, and above 0.8 where x0 < 7. (After 60, the
 * boundary level x0 = 8 still reaches 0.49 at some x1: naive Bayes is noisy while failures are
 * few.) */
static void feasibility_model_learns_a_planted_constraint(void **state)
{
    (void)state;
    uint32_t levels[2] = {10, 10};
    tforge_gp_feasibility f;
    assert_int_equal(tforge_gp_feasibility_init(&f, 2, levels), 0);
    tforge_level p[2] = {9, 9};
    assert_true(tforge_gp_feasibility_log(&f, p) == 0.0); /* no failure yet: no penalty */
    tforge_rng rng;
    tforge_rng_seed(&rng, 11);
    for (int i = 0; i < 150; i++) {
        p[0] = (tforge_level)tforge_rng_below(&rng, 10);
        p[1] = (tforge_level)tforge_rng_below(&rng, 10);
        tforge_gp_feasibility_add(&f, p, p[0] <= 7);
    }
    for (p[0] = 0; p[0] < 10; p[0]++)
        for (p[1] = 0; p[1] < 10; p[1]++) {
            double pf = exp(tforge_gp_feasibility_log(&f, p));
            if (p[0] > 7)
                assert_true(pf < 0.2);
            if (p[0] < 7)
                assert_true(pf > 0.8);
        }
    tforge_gp_feasibility_dispose(&f);
}

/* ---- the strategy ---- */

typedef double (*objective)(const tforge_level *x, uint32_t *status);

static double bowl(const tforge_level *x, uint32_t *status)
{
    *status = TFORGE_STATUS_OK;
    double a = x[0] - 11.0, b = x[1] - 4.0, c = x[2] - 6.0;
    return 1.0 + 0.02 * (a * a + 2 * b * b + c * c) + 0.01 * a * b;
}

/* The bowl, with a corner forty times slower (as register spills make big tiles). */
static double spilled(const tforge_level *x, uint32_t *status)
{
    return bowl(x, status) * (x[0] + x[2] >= 20 ? 40.0 : 1.0);
}

static double planted(const tforge_level *x, uint32_t *status)
{
    double v = bowl(x, status);
    *status = x[0] > 12 ? TFORGE_STATUS_COMPILE : TFORGE_STATUS_OK;
    return v;
}

typedef struct run_result {
    uint32_t evals;        /* evaluations made */
    uint32_t to_optimum;   /* evaluations until the optimum (1.0) was found, or 0 */
    uint32_t failures;     /* failed evaluations after the first `initial` */
    uint64_t hash;         /* of the proposals, in order */
} run_result;

/* Runs bo on a 16 x 8 x 12 grid with constraint x0 + x2 <= 24, q points asked at a time. Checks
 * that every point is valid, new, and distinct within its batch. */
static run_result run(uint64_t seed, uint32_t budget, uint32_t q, objective f,
                      const double *prior, const char *const *keys, const char *const *values,
                      uint32_t n_options)
{
    const tforge_strategy_interface *it = bo();
    tforge_space *space;
    assert_int_equal(tforge_space_new(&space), 0);
    assert_int_equal(tforge_space_add_range(space, "x0", 0, 15, 1), 0);
    assert_int_equal(tforge_space_add_range(space, "x1", 0, 7, 1), 0);
    assert_int_equal(tforge_space_add_range(space, "x2", 0, 11, 1), 0);
    assert_int_equal(tforge_space_add_constraint(space, "x0 + x2 <= 24"), 0);
    assert_int_equal(tforge_space_build(space, NULL), 0);
    tforge_space_view view = tforge_space_get_view(space);
    uint64_t count = tforge_space_count(space);
    tforge_options_view options = {sizeof options, n_options, keys, values};
    tforge_strategy_input input = {sizeof input, &view, seed, budget, NULL};
    void *s;
    assert_int_equal(it->create(&s, NULL, &options, &input), 0);
    if (prior)
        assert_int_equal(it->set_prior(s, prior, count), 0);
    uint8_t *seen = calloc(count, 1);
    tforge_level *batch = malloc(q * 3 * sizeof *batch);
    tforge_observation *obs = malloc(q * sizeof *obs);
    run_result r = {0, 0, 0, 1469598103934665603ull};
    while (r.evals < budget) {
        uint32_t n = 0;
        assert_int_equal(it->ask(s, q, batch, &n), 0);
        if (n == 0)
            break;
        for (uint32_t i = 0; i < n; i++) {
            uint64_t index = tforge_space_index_of(space, batch + i * 3);
            assert_true(index != TFORGE_NO_INDEX);
            assert_false(seen[index]);
            seen[index] = 1;
            r.hash = (r.hash ^ index) * 1099511628211ull;
            obs[i].point = batch + i * 3;
            obs[i].value = f(batch + i * 3, &obs[i].status);
            obs[i].spread = 0.01;
            r.evals++;
            if (obs[i].status == TFORGE_STATUS_OK && obs[i].value <= 1.0 + 1e-12 && !r.to_optimum)
                r.to_optimum = r.evals;
            if (obs[i].status != TFORGE_STATUS_OK && r.evals > 20)
                r.failures++;
        }
        assert_int_equal(it->tell(s, obs, n), 0);
    }
    free(obs);
    free(batch);
    free(seen);
    it->destroy(s);
    tforge_space_free(space);
    return r;
}

static void never_proposes_a_point_twice(void **state)
{
    (void)state;
    /* To exhaustion: every valid point once (16*8*12 minus the constraint's), then nothing. */
    for (uint32_t q = 1; q <= 7; q += 6) {
        run_result r = run(5, 100000, q, bowl, NULL, NULL, NULL, 0);
        assert_int_equal(r.evals, 1512); /* 16*8*12 less 3 (x0, x2) pairs x 8 */
    }
}

static void finds_the_optimum_and_batches_are_distinct(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 3; seed++) {
        run_result one = run(seed, 60, 1, bowl, NULL, NULL, NULL, 0);
        assert_true(one.to_optimum > 0 && one.to_optimum <= 60);
        run_result four = run(seed, 60, 4, bowl, NULL, NULL, NULL, 0); /* distinctness checked */
        assert_true(four.to_optimum > 0);
    }
}

static void same_seed_same_proposals(void **state)
{
    (void)state;
    run_result a = run(42, 40, 1, planted, NULL, NULL, NULL, 0);
    run_result b = run(42, 40, 1, planted, NULL, NULL, NULL, 0);
    run_result c = run(43, 40, 1, planted, NULL, NULL, NULL, 0);
    assert_true(a.hash == b.hash);
    assert_true(a.hash != c.hash);
    run_result d = run(42, 40, 3, planted, NULL, NULL, NULL, 0);
    run_result e = run(42, 40, 3, planted, NULL, NULL, NULL, 0);
    assert_true(d.hash == e.hash);
}

/* x0 > 12 fails (a fifth of the grid, next to the optimum at x0 = 11): after the first 20
 * evaluations bo seldom goes there. Each failing level must fail about twice before the failure
 * model ranks it last, so the failures come early and then stop. */
static void avoids_a_region_that_fails(void **state)
{
    (void)state;
    uint32_t failures = 0, evals = 0;
    for (uint64_t seed = 1; seed <= 4; seed++) {
        run_result r = run(seed, 120, 1, planted, NULL, NULL, NULL, 0);
        failures += r.failures;
        evals += r.evals - 20;
    }
    /* Random search would fail about 0.18 of the time: 72 of 400. bo: 22 (seeds 1-4). */
    assert_true(failures * 2 < evals * 0.18);
}

static void prior_helps_and_cannot_trap(void **state)
{
    (void)state;
    /* Prior weights over run()'s space, enumerated in the same (row-major) order: the log
     * density of a narrow bump at the optimum, or at a far corner. */
    uint32_t count = 1512;
    double *good = malloc(count * sizeof *good), *wrong = malloc(count * sizeof *wrong);
    uint32_t i = 0;
    for (int a = 0; a < 16; a++)
        for (int b = 0; b < 8; b++)
            for (int c = 0; c < 12; c++) {
                if (a + c > 24)
                    continue;
                double dg = (a - 11.0) * (a - 11.0) + (b - 4.0) * (b - 4.0) + (c - 6.0) * (c - 6.0);
                double dw = (a - 1.0) * (a - 1.0) + (b - 0.0) * (b - 0.0) + (c - 11.0) * (c - 11.0);
                good[i] = -dg / 8.0;
                wrong[i] = -dw / 8.0;
                i++;
            }
    assert_int_equal(i, count);
    uint32_t plain = 0, helped = 0;
    for (uint64_t seed = 1; seed <= 5; seed++) {
        run_result p = run(seed, 120, 1, bowl, NULL, NULL, NULL, 0);
        run_result g = run(seed, 120, 1, bowl, good, NULL, NULL, 0);
        run_result w = run(seed, 120, 1, bowl, wrong, NULL, NULL, 0);
        assert_true(p.to_optimum > 0 && g.to_optimum > 0);
        assert_true(w.to_optimum > 0 && w.to_optimum <= 120); /* not trapped */
        plain += p.to_optimum;
        helped += g.to_optimum;
    }
    assert_true(helped < plain);
    free(good);
    free(wrong);
}

/* A slow corner (a fortieth of the speed) shortens the lengthscales of a GP on log values;
 * output=tail compresses it. Seeds 1-8, without the neighbour rule, reach the optimum after 20-69
 * evaluations with it (254 in all); on log values two never do within 100 and the rest need 319
 * in all. The neighbour rule gets past the corner too (the best point's neighbours are measured
 * whatever the model makes of them): with both, 13-40 evaluations, 173 in all. */
static void spills_do_not_derail(void **state)
{
    (void)state;
    const char *keys[] = {"neighbour", "output"}, *tail_values[] = {"0", "tail"},
               *log_values[] = {"0", "log"};
    uint32_t both = 0, tail = 0, log = 0;
    for (uint64_t seed = 1; seed <= 8; seed++) {
        run_result b = run(seed, 100, 1, spilled, NULL, NULL, NULL, 0);
        run_result t = run(seed, 100, 1, spilled, NULL, keys, tail_values, 2);
        run_result l = run(seed, 100, 1, spilled, NULL, keys, log_values, 2);
        assert_true(b.to_optimum > 0 && t.to_optimum > 0);
        both += b.to_optimum;
        tail += t.to_optimum;
        log += l.to_optimum ? l.to_optimum : 101;
    }
    assert_true(both < tail && tail < log);
}

/* With neighbour on (any tolerance, any lengthscale), every proposal after the initial design is
 * an unseen neighbour of the best point so far whenever that point has one; with it off, bo
 * goes elsewhere at times (the check below would fail). */
static uint32_t proposals_away_from_the_best(const char *tolerance, uint32_t *checked)
{
    const tforge_strategy_interface *it = bo();
    tforge_space *space = grid(3, 8, NULL);
    tforge_space_view view = tforge_space_get_view(space);
    const char *keys[] = {"neighbour", "neighbour_ls"}, *values[] = {tolerance, "1000"};
    tforge_options_view options = {sizeof options, 2, keys, values};
    tforge_strategy_input input = {sizeof input, &view, 3, 40, NULL};
    void *s;
    assert_int_equal(it->create(&s, NULL, &options, &input), 0);
    tforge_level seen[40][3], p[3];
    double value[40];
    uint32_t away = 0, best = 0;
    *checked = 0;
    for (uint32_t n = 0; n < 40; n++) {
        uint32_t got = 0;
        assert_int_equal(it->ask(s, 1, p, &got), 0);
        assert_int_equal(got, 1);
        int has_unseen = 0, is_neighbour = 0;
        for (uint32_t m = 0; n >= 4 && m < 6; m++) { /* after the design of d + 1 points */
            tforge_level q[3] = {seen[best][0], seen[best][1], seen[best][2]};
            int level = q[m / 2] + (m % 2 ? 1 : -1);
            if (level < 0 || level > 7)
                continue;
            q[m / 2] = (tforge_level)level;
            int unseen = 1;
            for (uint32_t i = 0; i < n; i++)
                unseen &= memcmp(seen[i], q, sizeof q) != 0;
            has_unseen |= unseen;
            is_neighbour |= memcmp(p, q, sizeof q) == 0;
        }
        *checked += has_unseen;
        away += has_unseen && !is_neighbour;
        memcpy(seen[n], p, sizeof p);
        double a = p[0] - 5.0, b = p[1] - 2.0, c = p[2] - 3.0;
        value[n] = 1.0 + 0.05 * (a * a + b * b + c * c) + 0.03 * sin(3.0 * p[0] * p[2]);
        if (value[n] < value[best])
            best = n;
        tforge_observation o = {p, TFORGE_STATUS_OK, value[n], 0.01};
        assert_int_equal(it->tell(s, &o, 1), 0);
    }
    it->destroy(s);
    tforge_space_free(space);
    return away;
}

static void neighbours_of_the_best_come_first(void **state)
{
    (void)state;
    uint32_t checked;
    assert_int_equal(proposals_away_from_the_best("1000", &checked), 0);
    assert_true(checked >= 10);
    assert_true(proposals_away_from_the_best("0", &checked) > 0);
}

/* ---- a space too large to enumerate ---- */

enum { WIDE_DIMS = 8 };

/* A bowl over 8 dimensions of 10 levels, its optimum 1 at (2, 3, 4, 5, 6, 2, 3, 4). */
static double wide_bowl(const tforge_level *x)
{
    double sum = 0;
    for (int d = 0; d < WIDE_DIMS; d++) {
        double e = x[d] - (2.0 + d % 5);
        sum += (1 + d % 3) * e * e;
    }
    return 1.0 + 0.01 * sum;
}

/* 10^8 raw points, above the enumeration limit (count 0: bo proposes from its pool), under a
 * constraint that leaves about 60% of them. */
static tforge_space *wide_space(void)
{
    tforge_space *space = grid(WIDE_DIMS, 10, "x0 + x1 + x2 <= 15");
    assert_true(tforge_space_raw_count(space) > 10000000u);
    assert_int_equal(tforge_space_count(space), 0);
    return space;
}

/* The best value bo finds in `budget` evaluations asked q at a time; every proposal must be
 * valid and new. */
static double wide_run(uint64_t seed, uint32_t budget, uint32_t q)
{
    const tforge_strategy_interface *it = bo();
    tforge_space *space = wide_space();
    tforge_space_view view = tforge_space_get_view(space);
    tforge_options_view options = {sizeof options, 0, NULL, NULL};
    tforge_strategy_input input = {sizeof input, &view, seed, budget, NULL};
    void *s;
    assert_int_equal(it->create(&s, NULL, &options, &input), 0);
    tforge_level *points = malloc((size_t)(budget + q) * WIDE_DIMS * sizeof *points);
    tforge_observation *obs = malloc(q * sizeof *obs);
    uint32_t n = 0;
    double best = INFINITY;
    while (n < budget) {
        uint32_t got = 0;
        tforge_level *batch = points + (size_t)n * WIDE_DIMS;
        assert_int_equal(it->ask(s, q, batch, &got), 0);
        assert_int_equal(got, q); /* never short: unseen points abound */
        for (uint32_t i = 0; i < got; i++) {
            const tforge_level *p = batch + (size_t)i * WIDE_DIMS;
            assert_true(tforge_space_is_valid(space, p));
            for (uint32_t j = 0; j < n + i; j++)
                assert_memory_not_equal(points + (size_t)j * WIDE_DIMS, p,
                                        WIDE_DIMS * sizeof *p);
            obs[i] = (tforge_observation){p, TFORGE_STATUS_OK, wide_bowl(p), 0.01};
            if (obs[i].value < best)
                best = obs[i].value;
        }
        n += got;
        assert_int_equal(it->tell(s, obs, got), 0);
    }
    /* A prior needs an enumerated space: refused, and the search is unharmed. */
    double w = 0;
    assert_int_equal(it->set_prior(s, &w, 1), TFORGE_PLUGIN_EINPUT);
    free(obs);
    free(points);
    it->destroy(s);
    tforge_space_free(space);
    return best;
}

/* On the space too large to enumerate, one at a time and in batches of 3: valid, new, and near
 * the optimum in 80 evaluations where random search is not. */
static void proposes_without_enumerating(void **state)
{
    (void)state;
    tforge_space *space = wide_space();
    for (uint64_t seed = 1; seed <= 3; seed++) {
        tforge_rng rng;
        tforge_rng_seed(&rng, seed);
        double random_best = INFINITY;
        tforge_level p[WIDE_DIMS];
        for (int i = 0; i < 80; i++) {
            assert_int_equal(tforge_space_sample(p, space, &rng), 0);
            if (wide_bowl(p) < random_best)
                random_best = wide_bowl(p);
        }
        /* Random search's best of 80 is 1.21-1.48 (seeds 1-3); bo's is 1.00-1.01. */
        double one = wide_run(seed, 80, 1), three = wide_run(seed, 81, 3);
        assert_true(one < 1.05 && one < random_best);
        assert_true(three < 1.05 && three < random_best);
    }
    tforge_space_free(space);
}

/* unchanged_tail=1: the initial design (free dimensions + 1 points) holds the last dimension at
 * level 0 and spreads over the others; the model then moves it (the bowl's optimum has x2 = 6). */
static void the_design_holds_the_unchanged_tail(void **state)
{
    (void)state;
    const tforge_strategy_interface *it = bo();
    tforge_space *space = grid(3, 8, NULL);
    tforge_space_view view = tforge_space_get_view(space);
    const char *keys[] = {"unchanged_tail"}, *values[] = {"1"};
    tforge_options_view options = {sizeof options, 1, keys, values};
    tforge_strategy_input input = {sizeof input, &view, 3, 40, NULL};
    void *s = NULL;
    assert_int_equal(it->create(&s, NULL, &options, &input), 0);
    tforge_level batch[3 * 8];
    uint32_t n = 0;
    assert_int_equal(it->ask(s, 8, batch, &n), 0);
    assert_true(n >= 3);
    for (uint32_t i = 0; i < 3; i++) {
        assert_int_equal(batch[i * 3 + 2], 0);
        for (uint32_t j = 0; j < i; j++)
            assert_true(batch[i * 3] != batch[j * 3] || batch[i * 3 + 1] != batch[j * 3 + 1]);
    }
    it->destroy(s);
    tforge_space_free(space);
    for (uint64_t seed = 1; seed <= 3; seed++) {
        run_result r = run(seed, 60, 1, bowl, NULL, keys, values, 1);
        assert_true(r.to_optimum > 0);
    }
}

/* The first proposal (0-based) of a one-at-a-time run of `budget` on `space` that changes the
 * last `tail` dimensions, or `budget` when none does; f is the wide bowl over the first dims. */
static uint32_t first_tail_move(tforge_space *space, uint32_t tail, const char *knobs_first,
                                uint32_t budget, uint64_t seed)
{
    const tforge_strategy_interface *it = bo();
    tforge_space_view view = tforge_space_get_view(space);
    uint32_t dims = tforge_space_dims(space), first = budget;
    char tail_text[16];
    snprintf(tail_text, sizeof tail_text, "%u", tail);
    const char *keys[] = {"unchanged_tail", "knobs_first"}, *values[] = {tail_text, knobs_first};
    tforge_options_view options = {sizeof options, 2, keys, values};
    tforge_strategy_input input = {sizeof input, &view, seed, budget, NULL};
    void *s = NULL;
    assert_int_equal(it->create(&s, NULL, &options, &input), 0);
    tforge_level x[WIDE_DIMS];
    for (uint32_t e = 0; e < budget; e++) {
        uint32_t n = 0;
        assert_int_equal(it->ask(s, 1, x, &n), 0);
        assert_int_equal(n, 1);
        double sum = 0;
        for (uint32_t d = 0; d < dims; d++) {
            double err = x[d] - (2.0 + d % 5);
            sum += (1 + d % 3) * err * err;
            if (d >= dims - tail && x[d] && first == budget)
                first = e;
        }
        tforge_observation o = {x, TFORGE_STATUS_OK, 1.0 + 0.01 * sum, 0};
        assert_int_equal(it->tell(s, &o, 1), 0);
    }
    it->destroy(s);
    return first;
}

/* knobs_first: for that share of the budget no proposal changes the unchanged tail, in a pooled
 * space (the climbs, the pool) and in an enumerated one (every point scored); afterwards the
 * model moves it towards the bowl's optimum (level 2 + d % 5 there, never 0). Without the hold
 * it moves sooner. */
static void knobs_first_holds_the_tail_for_its_share(void **state)
{
    (void)state;
    tforge_space *wide = wide_space(), *small = grid(4, 8, NULL);
    for (uint64_t seed = 1; seed <= 3; seed++) {
        uint32_t held = first_tail_move(wide, 3, "0.5", 60, seed);
        assert_true(held >= 30 && held < 60);
        assert_true(first_tail_move(wide, 3, "0", 60, seed) < held);
        held = first_tail_move(small, 1, "0.5", 40, seed);
        assert_true(held >= 20 && held < 40);
    }
    tforge_space_free(wide);
    tforge_space_free(small);
}

static void options_are_checked(void **state)
{
    (void)state;
    const tforge_strategy_interface *it = bo();
    tforge_space *space = grid(2, 4, NULL);
    tforge_space_view view = tforge_space_get_view(space);
    const char *keys[] = {"acquisition", "kernel", "ordinal", "initial", "refit_every", "output",
                          "warping"};
    const char *good[] = {"ucb", "se", "log2", "3", "2", "log", "kumaraswamy"};
    tforge_options_view options = {sizeof options, 7, keys, good};
    tforge_strategy_input input = {sizeof input, &view, 1, 10, NULL};
    void *s = NULL;
    assert_int_equal(it->create(&s, NULL, &options, &input), 0);
    it->destroy(s);
    const char *bad_key[] = {"acquisitions"};
    const char *bad_choice[] = {"ei"};
    const char *hamming[] = {"hamming"}, *too_much[] = {"1.5"};
    options.count = 1;
    options.keys = hamming;
    options.values = too_much;
    assert_int_equal(it->create(&s, NULL, &options, &input), TFORGE_PLUGIN_EINPUT);
    assert_null(s);
    options.count = 1;
    options.keys = bad_key;
    options.values = good;
    assert_int_equal(it->create(&s, NULL, &options, &input), TFORGE_PLUGIN_EINPUT);
    assert_null(s);
    options.keys = keys;
    options.values = bad_choice;
    assert_int_equal(it->create(&s, NULL, &options, &input), TFORGE_PLUGIN_EINPUT);
    /* A prior must have one weight per enumerated point. */
    options.count = 0;
    assert_int_equal(it->create(&s, NULL, &options, &input), 0);
    double w[3] = {0, 0, 0};
    assert_int_equal(it->set_prior(s, w, 3), TFORGE_PLUGIN_EINPUT);
    it->destroy(s);
    tforge_space_free(space);
}

/* The acquisition, kernel and warping options all work end to end. */
static void every_acquisition_and_kernel_runs(void **state)
{
    (void)state;
    const char *keys[] = {"acquisition", "kernel", "ordinal", "warping"};
    const char *sets[][4] = {{"logei", "matern52", "rank", "none"},
                             {"ucb", "se", "log2", "kumaraswamy"},
                             {"pi", "matern52", "log2", "kumaraswamy"}};
    for (size_t i = 0; i < 3; i++) {
        run_result r = run(9, 80, 2, bowl, NULL, keys, sets[i], 4);
        assert_int_equal(r.evals, 80);
        assert_true(r.to_optimum > 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(posterior_matches_closed_form),
        cmocka_unit_test(gradient_matches_finite_differences),
        cmocka_unit_test(log_ei_is_accurate_in_the_tail),
        cmocka_unit_test(incremental_posterior_equals_refactorisation),
        cmocka_unit_test(feasibility_model_learns_a_planted_constraint),
        cmocka_unit_test(never_proposes_a_point_twice),
        cmocka_unit_test(finds_the_optimum_and_batches_are_distinct),
        cmocka_unit_test(same_seed_same_proposals),
        cmocka_unit_test(avoids_a_region_that_fails),
        cmocka_unit_test(prior_helps_and_cannot_trap),
        cmocka_unit_test(spills_do_not_derail),
        cmocka_unit_test(neighbours_of_the_best_come_first),
        cmocka_unit_test(proposes_without_enumerating),
        cmocka_unit_test(the_design_holds_the_unchanged_tail),
        cmocka_unit_test(knobs_first_holds_the_tail_for_its_share),
        cmocka_unit_test(options_are_checked),
        cmocka_unit_test(every_acquisition_and_kernel_runs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
