#include "backend.h"

#include "tforge/error.h"

#include <stdlib.h>
#include <string.h>

const tforge_backend_type *tforge_backend_find(const char *name)
{
    static const tforge_backend_type *const shipped[] = {
        &tforge_backend_cuda, &tforge_backend_interpret, &tforge_backend_compile,
        &tforge_backend_replay};
    for (size_t i = 0; i < sizeof shipped / sizeof *shipped; i++)
        if (strcmp(shipped[i]->name, name) == 0)
            return shipped[i];
    return NULL;
}

int tforge_backend_open(tforge_backend *out, const tforge_backend_type *type,
                        const tforge_backend_args *args)
{
    *out = (tforge_backend){0}; /* evaluating here until told otherwise */
    if (args->version != TFORGE_BACKEND_ARGS_VERSION || !args->space)
        return tforge_error_set(TFORGE_EINPUT, "backend %s: bad arguments (version %u, or no "
                                "space)", type->name, args->version);
    int rc = type->open(&out->state, args);
    if (rc == 0) {
        out->type = type;
        out->objective = args->objective;
    }
    return rc;
}

/* The objective's value of a timed backend's measurement (the store keeps it, so a resumed run
 * is told it as it was: a run is resumed only under the same objective). */
static int score(tforge_backend *b, tforge_measurement *m)
{
    return b->type->timed && b->objective ? tforge_costmodel_score(b->objective, m) : 0;
}

int tforge_backend_evaluate(tforge_backend *b, const tforge_candidate *candidates, size_t n,
                            tforge_measurement *out)
{
    for (size_t i = 0; i < n; i++)
        tforge_measurement_init(&out[i]);
    int rc = 0;
    if (n && b->elsewhere.evaluate) /* measured elsewhere, scored here */
        rc = b->elsewhere.evaluate(b->elsewhere.context, b->elsewhere.space, candidates, n, out);
    else if (n)
        rc = b->type->evaluate(b->state, candidates, n, out);
    for (size_t i = 0; !rc && i < n; i++)
        rc = score(b, &out[i]);
    return rc;
}

int tforge_backend_retime(tforge_backend *b, const tforge_candidate *candidate, uint64_t seed,
                          tforge_measurement *out)
{
    tforge_measurement_init(out);
    int rc = b->type->retime(b->state, candidate, seed, out);
    return rc ? rc : score(b, out);
}

int tforge_backend_profile(tforge_backend *b, const tforge_candidate *candidate,
                           const tforge_measurement *measured, int counters, tforge_profile *out)
{
    memset(out, 0, sizeof *out);
    out->struct_size = sizeof *out;
    if (!b->type || !b->type->profile)
        return TFORGE_ENOTFOUND;
    return b->type->profile(b->state, candidate, measured, counters, out);
}

unsigned tforge_backend_restarts(const tforge_backend *b)
{
    return b->type && b->type->restarts ? b->type->restarts(b->state) : 0;
}

int tforge_backend_identify(tforge_backend *b, tforge_candidate *candidate)
{
    candidate->digest[0] = '\0';
    candidate->variant = candidate->unmade = NULL;
    return b->type && b->type->identify ? b->type->identify(b->state, candidate) : 0;
}

void tforge_candidate_forget(tforge_candidate *candidate)
{
    free(candidate->variant);
    free(candidate->unmade);
    candidate->variant = candidate->unmade = NULL;
    candidate->digest[0] = '\0';
}

int tforge_backend_prepare(tforge_backend *b, const tforge_candidate *candidates, size_t n)
{
    return n && b->type && b->type->prepare ? b->type->prepare(b->state, candidates, n) : 0;
}

void tforge_backend_close(tforge_backend *b)
{
    if (b->type)
        b->type->close(b->state);
    memset(b, 0, sizeof *b);
}
