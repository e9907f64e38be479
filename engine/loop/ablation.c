#include "ablation.h"

#include "tforge/error.h"

#include <math.h>
#include <stdlib.h>

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(v[i]))
            v[k++] = v[i];
    if (!k)
        return NAN;
    qsort(v, k, sizeof *v, by_value);
    return k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
}

int tforge_ablate(tforge_ablation **out, size_t *n, tforge_backend *b, const tforge_task *t,
                  const tforge_level *point, unsigned rounds)
{
    *out = NULL;
    *n = 0;
    size_t count = tforge_transforms_count(t->transforms);
    tforge_ablation *a = calloc(count + 1, sizeof *a);
    if (!a)
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    int rc = 0;
    for (size_t i = 0; i < count && !rc; i++) {
        if (!tforge_transforms_active(t->transforms, t->space, point, i))
            continue;
        tforge_ablation *e = &a[(*n)++];
        e->transform = i;
        e->with_ms = e->without_ms = NAN;
        tforge_candidate without = {.point = point, .without = (unsigned)i + 1};
        rc = tforge_backend_evaluate(b, &without, 1, &e->m);
    }
    double *with = calloc(rounds + 1, sizeof *with), *alone = calloc(rounds + 1, sizeof *alone);
    if (!rc && (!with || !alone))
        rc = tforge_error_set(TFORGE_ENOMEM, "out of memory");
    for (size_t k = 0; !rc && b->type->timed && k < *n; k++) {
        if (a[k].m.status != TFORGE_STATUS_OK)
            continue;
        tforge_candidate winner = {.point = point};
        tforge_candidate without = {.point = point, .without = (unsigned)a[k].transform + 1};
        /* interleaved, the order swapped every round: drift, and what ran just before, hit both
         * alike */
        tforge_candidate *pair[2] = {&winner, &without};
        for (unsigned r = 0; r < rounds && !rc; r++) {
            tforge_measurement m[2];
            for (unsigned i = 0; i < 2 && !rc; i++)
                rc = tforge_backend_retime(b, pair[(i + r) % 2], r, &m[(i + r) % 2]);
            if (rc)
                break;
            with[r] = m[0].status == TFORGE_STATUS_OK ? m[0].value : NAN;
            alone[r] = m[1].status == TFORGE_STATUS_OK ? m[1].value : NAN;
        }
        a[k].with_ms = median(with, rounds);
        a[k].without_ms = median(alone, rounds);
    }
    free(with);
    free(alone);
    if (rc) {
        free(a);
        *n = 0;
        return rc;
    }
    *out = a;
    return 0;
}
