/* A small seeded generator (xoshiro256** seeded through splitmix64) that every plugin can hold in
 * its own state, so that the same seed gives the same choices on every platform. */
#ifndef TFORGE_PLUGIN_RNG_H
#define TFORGE_PLUGIN_RNG_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tforge_rng {
    uint64_t s[4];
} tforge_rng;

static inline uint64_t tforge_rng_splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline void tforge_rng_seed(tforge_rng *rng, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        rng->s[i] = tforge_rng_splitmix(&seed);
}

static inline uint64_t tforge_rng_next(tforge_rng *rng)
{
    uint64_t *s = rng->s;
    uint64_t r = s[1] * 5;
    r = ((r << 7) | (r >> 57)) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = (s[3] << 45) | (s[3] >> 19);
    return r;
}

/* Uniform in [0, 1), 53 bits. */
static inline double tforge_rng_uniform(tforge_rng *rng)
{
    return (double)(tforge_rng_next(rng) >> 11) * (1.0 / 9007199254740992.0);
}

/* Uniform in [0, n), without modulo bias; n > 0. */
static inline uint64_t tforge_rng_below(tforge_rng *rng, uint64_t n)
{
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do
        x = tforge_rng_next(rng);
    while (x >= limit);
    return x % n;
}

#ifdef __cplusplus
}
#endif
#endif
