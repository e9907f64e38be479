#include "lab.h"

#include "strategy.h"
#include "tforge/error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The noise stream is separate from the strategy's, so noise never changes its proposals. */
enum { NOISE_STREAM = 0x6e6f697365 };

int tforge_lab_run(double *best, double *charged, uint32_t *n_evals, const tforge_registry *reg,
                   const tforge_replay *replay, const tforge_lab_run_options *o)
{
    const tforge_space *space = tforge_replay_space(replay);
    uint32_t dims = tforge_space_dims(space);
    uint64_t count = tforge_space_count(space);
    tforge_space_view view = tforge_space_get_view(space);
    tforge_strategy *strategy = NULL;
    tforge_level *points = malloc((size_t)o->batch * dims * sizeof *points);
    tforge_observation *told = malloc(o->batch * sizeof *told);
    unsigned char *seen = calloc(count, 1);
    tforge_rng noise;
    tforge_rng_seed(&noise, o->seed ^ NOISE_STREAM);
    int rc = 0;
    if (!points || !told || !seen) {
        rc = tforge_error_set(TFORGE_ENOMEM, "out of memory running %s", o->strategy);
        goto cleanup;
    }
    if ((rc = tforge_strategy_open(&strategy, reg, o->strategy, &view, o->seed, o->budget,
                                   o->options)))
        goto cleanup;
    double best_value = NAN, spent = 0.0;
    uint32_t n = 0;
    while (n < o->budget) {
        uint32_t want = o->budget - n < o->batch ? o->budget - n : o->batch, got = 0;
        if ((rc = tforge_strategy_ask(strategy, want, points, &got)))
            goto cleanup;
        if (got == 0)
            break;
        for (uint32_t i = 0; i < got; i++, n++) {
            const tforge_level *p = points + (size_t)i * dims;
            uint64_t index = tforge_space_index_of(space, p);
            if (index == TFORGE_NO_INDEX || seen[index]) {
                char *text = NULL;
                tforge_space_format(&text, space, p);
                rc = tforge_error_set(TFORGE_ERROR, "strategy %s proposed %s point %s",
                                      o->strategy,
                                      index == TFORGE_NO_INDEX ? "an invalid" : "an already seen",
                                      text ? text : "?");
                free(text);
                goto cleanup;
            }
            seen[index] = 1;
            tforge_lab_eval e = {index, 0, NAN, 0.0, 0.0};
            if (n < o->n_done) {
                e = o->done[n];
                if (e.index != index) {
                    rc = tforge_error_set(TFORGE_EINPUT,
                                          "resume: strategy %s with seed %llu proposed point %llu "
                                          "as evaluation %u, the stored run has %llu: its "
                                          "settings differ",
                                          o->strategy, (unsigned long long)o->seed,
                                          (unsigned long long)index, n + 1,
                                          (unsigned long long)e.index);
                    goto cleanup;
                }
            } else {
                tforge_replay_result r;
                if ((rc = tforge_replay_evaluate(&r, replay, p, o->noise ? &noise : NULL)))
                    goto cleanup;
                e = (tforge_lab_eval){index, r.status, r.value, r.spread, r.charged_ms};
                if (o->sink && (rc = o->sink(o->sink_context, n, &e)))
                    goto cleanup;
            }
            told[i] = (tforge_observation){p, e.status, e.value, e.spread};
            if (e.status == TFORGE_STATUS_OK && !(e.value >= best_value))
                best_value = e.value;
            spent += e.charged_ms;
            best[n] = best_value;
            if (charged)
                charged[n] = spent;
        }
        if ((rc = tforge_strategy_tell(strategy, told, got)))
            goto cleanup;
    }
    *n_evals = n;
    for (uint32_t b = n; b < o->budget; b++) {
        best[b] = best_value;
        if (charged)
            charged[b] = spent;
    }
cleanup:
    tforge_strategy_close(strategy);
    free(points);
    free(told);
    free(seen);
    return rc;
}
