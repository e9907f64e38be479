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
    if (rc == 0)
        out->type = type;
    return rc;
}

int tforge_backend_evaluate(tforge_backend *b, const tforge_candidate *candidates, size_t n,
                            tforge_measurement *out)
{
    for (size_t i = 0; i < n; i++)
        tforge_measurement_init(&out[i]);
    if (n && b->elsewhere.evaluate)
        return b->elsewhere.evaluate(b->elsewhere.context, b->elsewhere.space, candidates, n,
                                     out);
    return n ? b->type->evaluate(b->state, candidates, n, out) : 0;
}

int tforge_backend_retime(tforge_backend *b, const tforge_candidate *candidate, uint64_t seed,
                          tforge_measurement *out)
{
    tforge_measurement_init(out);
    return b->type->retime(b->state, candidate, seed, out);
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
    b->type = NULL;
    b->state = NULL;
}
