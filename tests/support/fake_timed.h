/* A timed fake backend for loop tests: each candidate's time is `fake_ms` of its point, which the
 * including test defines before including this; `evaluated` counts the candidates it ran. */
#ifndef TFORGE_TESTS_FAKE_TIMED_H
#define TFORGE_TESTS_FAKE_TIMED_H

#include "backend.h"

#include <stddef.h>

static size_t evaluated; /* candidates the fake backend ran */

static int fake_open(void **state, const tforge_backend_args *args)
{
    (void)args;
    *state = NULL;
    return 0;
}

static int fake_evaluate(void *state, const tforge_candidate *c, size_t n, tforge_measurement *out)
{
    (void)state;
    for (size_t i = 0; i < n; i++) {
        evaluated++;
        out[i].value = out[i].median_ms = fake_ms(c[i].point);
        out[i].repeats = 10;
    }
    return 0;
}

static int fake_retime(void *state, const tforge_candidate *c, uint64_t seed,
                       tforge_measurement *out)
{
    (void)state;
    (void)seed;
    out->value = out->median_ms = fake_ms(c->point);
    return 0;
}

static void fake_close(void *state)
{
    (void)state;
}

static const tforge_backend_type fake_type = {"fake", 1, fake_open, fake_evaluate, fake_retime,
                                              NULL, NULL, fake_close, NULL, NULL};

#endif
