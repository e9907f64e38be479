/* tforge-bench-proposer: how long the "bo" strategy takes to decide, on synthetic spaces.
 *
 * For each N (points, about), n (observations) and d (dimensions): a grid space of d ranges
 * whose product of levels is close to N, a smooth synthetic objective, n random points told to
 * a fresh strategy, then
 *   refit:    the first ask (a full refit: standardisation, MAP-II hyperparameters from the
 *             prior's mean, candidates, factorisation) minus the median proposal;
 *   warm:     a refit as a run has them: n/4 more observations told, then one ask (the refit
 *             they trigger, its BFGS started from the last fit) minus the next ask (a proposal
 *             as they are after the refit, which may have moved from all points to a pool);
 *   proposal: the median of 5 asks of one point, each after telling one more observation (the
 *             bordered Cholesky update of the model, and the acquisition's search);
 *   peak:     the process's maximum resident set (each case runs in its own process).
 * The last case, N = 1e8, n = 500, d = 16, is the space transform parameters make: above the
 * default enumeration limit (1e7), so not enumerated (count 0: points sampled, bo on its pool),
 * and under a constraint (p0 + p1 + p2 <= 6, a sixth of the grid out), as such spaces are.
 * Numbers are printed; nothing is asserted.
 * Usage: tforge-bench-proposer [--quick] [--option KEY=VALUE] (one of bo's options, e.g.
 * warping=kumaraswamy) */
#include "tforge/cpu.h"
#include "tforge/space.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern const tforge_plugin_module tforge_static_bo;

static char option_key[64], *option_value; /* --option KEY=VALUE, or none */

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static double objective(const tforge_level *x, const uint32_t *levels, uint32_t dims)
{
    double sum = 0, all = 0;
    for (uint32_t d = 0; d < dims; d++) {
        double e = levels[d] > 1 ? (double)x[d] / (levels[d] - 1) : 0;
        double c = 0.2 + 0.6 * (d % 3) / 2.0;
        sum += (1.0 + d % 4) * (e - c) * (e - c);
        all += e;
    }
    return 1.0 + sum + 0.1 * sin(3.0 * all);
}

static int compare(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int run_case(uint64_t target, uint32_t n, uint32_t dims, const char *constraint)
{
    uint32_t levels[16];
    uint64_t product = 1;
    uint32_t base = (uint32_t)floor(pow((double)target, 1.0 / dims));
    for (uint32_t d = 0; d < dims; d++) {
        levels[d] = base < 2 ? 2 : base;
        product *= levels[d];
    }
    for (uint32_t d = 0; d < dims && product / levels[d] * (levels[d] + 1) <= target * 11 / 10;
         d++) {
        product = product / levels[d] * (levels[d] + 1);
        levels[d]++;
    }
    tforge_space *space;
    if (tforge_space_new(&space))
        return 1;
    for (uint32_t d = 0; d < dims; d++) {
        char name[16];
        snprintf(name, sizeof name, "p%u", d);
        tforge_space_add_range(space, name, 0, levels[d] - 1, 1);
    }
    if (constraint && tforge_space_add_constraint(space, constraint))
        return 1;
    if (tforge_space_build(space, NULL)) {
        fprintf(stderr, "cannot build the space\n");
        return 1;
    }
    tforge_space_view view = tforge_space_get_view(space);
    const tforge_strategy_interface *it = tforge_static_bo.get(0)->interface;
    tforge_static_bo.init(NULL, NULL);
    const char *keys[] = {"initial", option_key}, *values[] = {"1", option_value};
    tforge_options_view options = {sizeof options, option_value ? 2 : 1, keys, values};
    tforge_strategy_input input = {sizeof input, &view, 1, n + n / 4 + 16, NULL};
    void *s;
    if (it->create(&s, NULL, &options, &input))
        return 1;
    tforge_rng rng;
    tforge_rng_seed(&rng, 99);
    tforge_level *x = malloc((size_t)(n + n / 4 + 8) * dims * sizeof *x);
    tforge_observation o = {NULL, TFORGE_STATUS_OK, 0, 0.01};
    for (uint32_t i = 0; i < n; i++) {
        tforge_level *p = x + (size_t)i * dims;
        if (tforge_space_sample(p, space, &rng))
            return 1;
        o.point = p;
        o.value = objective(p, levels, dims);
        it->tell(s, &o, 1); /* a repeat is ignored: fine for timing */
    }
    tforge_level *out = malloc(dims * sizeof *out);
    uint32_t got;
    double t0 = now();
    it->ask(s, 1, out, &got);
    double first = now() - t0, times[5];
    for (int r = 0; r < 5; r++) {
        o.point = out;
        o.value = objective(out, levels, dims);
        it->tell(s, &o, 1);
        t0 = now();
        it->ask(s, 1, out, &got);
        times[r] = now() - t0;
    }
    qsort(times, 5, sizeof *times, compare);
    for (uint32_t i = 0; i < n / 4; i++) {
        tforge_level *p = x + (size_t)(n + i) * dims;
        if (tforge_space_sample(p, space, &rng))
            return 1;
        o.point = p;
        o.value = objective(p, levels, dims);
        it->tell(s, &o, 1);
    }
    t0 = now();
    it->ask(s, 1, out, &got);
    double warm = now() - t0;
    o.point = out;
    o.value = objective(out, levels, dims);
    it->tell(s, &o, 1);
    t0 = now();
    it->ask(s, 1, out, &got);
    warm -= now() - t0;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    uint64_t count = tforge_space_count(space);
    printf("| %9llu%s | %4u | %2u | %9.1f | %9.1f | %9.1f | %7.0f |\n",
           (unsigned long long)(count ? count : product), count ? " " : "*", n, dims,
           1e3 * times[2],
           1e3 * (first - times[2]), 1e3 * warm, ru.ru_maxrss / 1024.0);
    fflush(stdout);
    it->destroy(s);
    free(out);
    free(x);
    tforge_space_free(space);
    return 0;
}

/* Each case in its own process, so that its peak resident set is its own. */
static void forked_case(uint64_t target, uint32_t n, uint32_t dims, const char *constraint)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0)
        _exit(run_case(target, n, dims, constraint));
    int status;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status))
        printf("| %9llu  | %4u | %2u | failed |\n", (unsigned long long)target, n, dims);
}

int main(int argc, char **argv)
{
    /* OpenBLAS is linked in and read its variables before main: start again once they say
     * what tforge's plugin loader tells it. */
    if (tforge_cpu_prepare_openblas())
        execv("/proc/self/exe", argv);
    int quick = 0;
    for (int i = 1; i < argc; i++) {
        char *eq = i + 1 < argc && strcmp(argv[i], "--option") == 0 ? strchr(argv[i + 1], '=')
                                                                    : NULL;
        if (strcmp(argv[i], "--quick") == 0) {
            quick = 1;
        } else if (eq && eq - argv[i + 1] < (long)sizeof option_key) {
            memcpy(option_key, argv[i + 1], eq - argv[i + 1]);
            option_value = eq + 1;
            i++;
        } else {
            fprintf(stderr, "usage: tforge-bench-proposer [--quick] [--option KEY=VALUE]\n");
            return 2;
        }
    }
    const uint64_t sizes[] = {10000, 100000, 1000000};
    const uint32_t observations[] = {50, 200, 500}, dims[] = {4, 8, 12};
    printf("| N         |    n |  d | proposal ms | refit ms | warm refit ms | peak MB |\n"
           "|----------:|-----:|---:|----------:|---------:|----------:|--------:|\n");
    fflush(stdout);
    for (size_t a = 0; a < 3; a++)
        for (size_t b = 0; b < 3; b++)
            for (size_t c = 0; c < 3; c++)
                if (!quick || (a == 1 && b == 1 && c == 1))
                    forked_case(sizes[a], observations[b], dims[c], NULL);
    forked_case(100000000, 500, 16, "p0 + p1 + p2 <= 6");
    printf("(* not enumerated: the raw product of levels, p0 + p1 + p2 <= 6 holds for 84%% of "
           "them; bo proposes from its pool)\n");
    return 0;
}
