/* tforge-bench-rewrites: what source-transform dimensions cost bo on a recorded knob space.
 *
 * A recording (a Kernel Tuner cache: its configurations and times) gets R synthetic boolean
 * "rewrite" dimensions after its knobs, shaped like the H200's transform parameters: rewrite 0
 * makes every configuration 3% faster, rewrites 1-3 make it 30% slower, rewrites 4-6 fail (as a
 * compile failure does) on half of the knob points (a hash of the point), and the rest change
 * nothing. The space is not enumerated (count 0, as transform spaces are not), so bo draws a pool
 * and climbs. For each setting and seed, bo runs `budget` evaluations one at a time; the score
 * is the best value found over the best there is (the recording's optimum, 3% faster), as a
 * ratio: 1 is the optimum. Settings: the knobs alone (no rewrite dimensions; their optimum
 * without the 3%), the rewrites held at level 0 in the design and the pool (unchanged_tail=R,
 * what `tforge tune` sets) from the first model on (knobs_first=0), or not moved at all for the
 * first 30%, 50% (bo's default) or 70% of the budget, and not held (unchanged_tail=0). Numbers
 * are printed; nothing is asserted.
 * Usage: tforge-bench-rewrites RECORDING [--rewrites R] [--budget N] [--seeds K] */
#include "replay.h"
#include "tforge/plugin/strategy.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const tforge_plugin_module tforge_static_bo;

typedef struct padded {
    const tforge_replay *replay;
    const tforge_space *knobs;
    uint32_t k, r; /* knob dimensions, rewrite dimensions */
} padded;

static uint32_t pad_dims(void *c)
{
    padded *p = c;
    return p->k + p->r;
}

static uint32_t pad_levels(void *c, uint32_t d)
{
    padded *p = c;
    return d < p->k ? tforge_space_levels(p->knobs, d) : 2;
}

static uint32_t pad_kind(void *c, uint32_t d)
{
    padded *p = c;
    return d < p->k ? tforge_space_kind(p->knobs, d) : TFORGE_DIM_BOOLEAN;
}

static const char *pad_name(void *c, uint32_t d)
{
    static char names[64][16];
    padded *p = c;
    if (d < p->k)
        return tforge_space_name(p->knobs, d);
    snprintf(names[(d - p->k) % 64], 16, "rewrite%u", d - p->k);
    return names[(d - p->k) % 64];
}

static double pad_value(void *c, uint32_t d, uint32_t level)
{
    padded *p = c;
    return d < p->k ? tforge_space_value(p->knobs, d, level) : level;
}

static uint64_t pad_count(void *c)
{
    (void)c;
    return 0;
}

static void pad_point(void *c, uint64_t index, tforge_level *out)
{
    (void)c, (void)index, (void)out;
}

static uint64_t pad_index_of(void *c, const tforge_level *point)
{
    (void)c, (void)point;
    return TFORGE_NO_INDEX;
}

static int pad_valid(void *c, const tforge_level *point)
{
    padded *p = c;
    return tforge_space_index_of(p->knobs, point) != TFORGE_NO_INDEX;
}

static int pad_sample(void *c, tforge_rng *rng, tforge_level *out)
{
    padded *p = c;
    uint64_t n = tforge_space_count(p->knobs);
    tforge_space_point(out, p->knobs, tforge_rng_below(rng, n));
    for (uint32_t d = p->k; d < p->k + p->r; d++)
        out[d] = (tforge_level)tforge_rng_below(rng, 2);
    return 0;
}

/* The point's value and status: the recorded configuration's, changed by its rewrites. */
static double evaluate(const padded *p, const tforge_level *x, uint32_t *status)
{
    uint64_t index = tforge_space_index_of(p->knobs, x);
    tforge_measurement m;
    tforge_measurement_init(&m);
    tforge_replay_answer(&m, p->replay, index, NULL);
    double v = m.value;
    *status = m.status;
    for (uint32_t r = 0; r < p->r && *status == TFORGE_STATUS_OK; r++) {
        if (!x[p->k + r])
            continue;
        if (r == 0)
            v *= 0.97;
        else if (r <= 3)
            v *= 1.3;
        else if (r <= 6 && ((index * 2654435761u) >> (r + 3)) % 2)
            *status = TFORGE_STATUS_COMPILE;
    }
    return v;
}

static double run(padded *p, uint64_t seed, uint32_t budget, int hold, const char *knobs_first)
{
    const tforge_strategy_interface *it = tforge_static_bo.get(0)->interface;
    /* a view of ABI 1.2 (no owners or effects): bo reads neither */
    tforge_space_view view = {offsetof(tforge_space_view, owner),
                              p,
                              pad_dims,
                              pad_levels,
                              pad_kind,
                              pad_name,
                              pad_value,
                              pad_count,
                              pad_point,
                              pad_index_of,
                              pad_valid,
                              pad_sample,
                              NULL,
                              NULL};
    char tail[16];
    snprintf(tail, sizeof tail, "%u", hold ? p->r : 0);
    const char *keys[] = {"unchanged_tail", "knobs_first"}, *values[] = {tail, knobs_first};
    tforge_options_view options = {sizeof options, 2, keys, values};
    tforge_strategy_input input = {sizeof input, &view, seed, budget, NULL};
    void *s;
    if (it->create(&s, NULL, &options, &input))
        exit(1);
    uint32_t dims = p->k + p->r;
    tforge_level *x = malloc(dims * sizeof *x);
    double best = INFINITY;
    for (uint32_t e = 0; e < budget; e++) {
        uint32_t n = 0;
        if (it->ask(s, 1, x, &n) || n == 0)
            break;
        tforge_observation o = {x, 0, 0, 0.01};
        o.value = evaluate(p, x, &o.status);
        if (o.status == TFORGE_STATUS_OK && o.value < best)
            best = o.value;
        if (it->tell(s, &o, 1))
            exit(1);
    }
    free(x);
    it->destroy(s);
    return best;
}

static int compare(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    uint32_t rewrites = 12, budget = 50, seeds = 20;
    if (argc < 2) {
        fprintf(stderr, "usage: tforge-bench-rewrites RECORDING [--rewrites R] [--budget N] "
                        "[--seeds K]\n");
        return 2;
    }
    for (int i = 2; i + 1 < argc; i += 2) {
        uint32_t v = (uint32_t)strtoul(argv[i + 1], NULL, 10);
        if (strcmp(argv[i], "--rewrites") == 0 && v <= 64)
            rewrites = v;
        else if (strcmp(argv[i], "--budget") == 0 && v)
            budget = v;
        else if (strcmp(argv[i], "--seeds") == 0 && v)
            seeds = v;
        else
            return fprintf(stderr, "tforge-bench-rewrites: bad option %s\n", argv[i]), 2;
    }
    tforge_recording *rec;
    tforge_replay *replay;
    if (tforge_static_bo.init && tforge_static_bo.init(NULL, NULL))
        return 1;
    if (tforge_recording_read_space(&rec, argv[1]) || tforge_replay_open(&replay, rec)) {
        fprintf(stderr, "tforge-bench-rewrites: cannot read %s\n", argv[1]);
        return 1;
    }
    const tforge_space *knobs = tforge_replay_space(replay);
    double optimum = INFINITY;
    for (uint64_t i = 0; i < tforge_space_count(knobs); i++) {
        uint32_t status;
        double v = tforge_replay_value(replay, i, &status);
        if (status == TFORGE_STATUS_OK && v < optimum)
            optimum = v;
    }
    printf("%s: %u knob dimensions, %llu configurations, budget %u, %u seeds, %u rewrites\n",
           argv[1], tforge_space_dims(knobs), (unsigned long long)tforge_space_count(knobs),
           budget, seeds, rewrites);
    printf("%-32s %8s %8s %8s  (best found / the optimum: 1 is the optimum)\n", "setting",
           "median", "q1", "q3");
    const struct {
        const char *name;
        uint32_t r;
        int hold;
        const char *knobs_first;
    } settings[] = {{"knobs alone", 0, 0, "0"},
                    {"with rewrites, held in the design", rewrites, 1, "0"},
                    {"... and knobs first 0.3", rewrites, 1, "0.3"},
                    {"... and knobs first 0.5", rewrites, 1, "0.5"},
                    {"... and knobs first 0.7", rewrites, 1, "0.7"},
                    {"with rewrites, not held", rewrites, 0, "0"}};
    double *scores = malloc(seeds * sizeof *scores);
    for (size_t c = 0; c < sizeof settings / sizeof *settings; c++) {
        padded p = {replay, knobs, tforge_space_dims(knobs), settings[c].r};
        double best_there = settings[c].r ? optimum * 0.97 : optimum;
        for (uint32_t s = 0; s < seeds; s++)
            scores[s] = run(&p, s + 1, budget, settings[c].hold, settings[c].knobs_first) / best_there;
        qsort(scores, seeds, sizeof *scores, compare);
        printf("%-32s %8.4f %8.4f %8.4f\n", settings[c].name, scores[seeds / 2],
               scores[seeds / 4], scores[(3 * seeds) / 4]);
    }
    free(scores);
    tforge_replay_free(replay);
    tforge_recording_free(rec);
    return 0;
}
