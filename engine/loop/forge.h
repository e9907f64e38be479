/* The profile-guided loop: a steer for the one loop (loop.h) that profiles each new incumbent,
 * the baseline first (the backend's profile op, counters included where asked and there),
 * classifies it with a heuristic plugin ("tforge.heuristic/2", `bottleneck` by default), asks it
 * for the prior its labels favour at the incumbent's levels and hands that to the strategy
 * (set_level_prior, which fades as observations come). `forge` is bo steered so, with the
 * prior's favoured moves from the incumbent (rules, as the loop's companion) first in each batch,
 * all of it while they lead and a quarter at least (and the rewrites' compound moves among
 * them), and its prior handed only while the measurements bear it out beyond chance
 * (check_prior); `rules` the rules strategy steered so (unchecked);
 * `bo` nothing steered.
 *
 * Every profile taken is kept with its labels and, for each label, the dimensions the prior of
 * that label alone moves and which way: what the report and result.json say steered what. A
 * backend that cannot profile leaves the search unsteered (the note says so); refused counters
 * leave the static metrics (the profile's `counters` says which). With profile_all every
 * candidate that ran correctly is profiled and stored too (`tune --profile-all`: recordings
 * with counters), and with steer off no prior is handed at all. The space may grow during the
 * run (a model's proposal, loop.h's grow): the steer follows it. */
#ifndef TFORGE_ENGINE_FORGE_H
#define TFORGE_ENGINE_FORGE_H

#include "loop.h"
#include "tforge/plugin/heuristic.h"

/* The strategy plugin behind a strategy name and whether the profile steers it: "forge" is bo,
 * steered, with rules' moves as its companion (tforge_forge_companion); "rules" is rules,
 * steered; any other name is that plugin, unsteered. */
const char *tforge_forge_plugin(const char *strategy, int *steered);

/* The least share of forge's candidates that are rule moves: the prior's favoured neighbours of
 * the incumbent (the rules strategy with walk=0), then the rewrites' compound moves, bo
 * proposing the rest. They take whole batches while they lead (loop.h's companion); where no
 * label favours a move and no compound move is due, or the measurements do not bear the prior
 * out (check_prior: one evaluation is no evidence, so bo's initial design comes first), bo
 * proposes them all. */
#define TFORGE_FORGE_RULE_SHARE 0.25
/* bo's knobs_first when its options do not set it (search/gp/bo.c's option table). */
#define TFORGE_FORGE_BO_KNOBS_FIRST "0.5"
/* The companion's options: they live in the caller's memory, as long as the loop's options. */
typedef struct tforge_forge_companion_texts {
    const char *options[5];
    char after[48];
} tforge_forge_companion_texts;
/* Sets the loop's companion for `strategy`, its options in `texts`: rules' moves for "forge"
 * (with refute=1: a favoured level proposed next to the incumbent already is not proposed
 * again; with compound=1: the rewrites' compound moves too, a rewrite with the knobs it needs),
 * none for any other. Where bo holds the rewrites (its `unchanged_tail` in
 * options->strategy_options, set before this call), the compound moves wait as long as bo does
 * (compound_after, bo's knobs_first): before then they took the evaluations of bo's knob search
 * that finds their starting point (the matmul rewrite recording at tune's settings, NOTES
 * session 24). */
void tforge_forge_companion(tforge_loop_options *options, const char *strategy,
                            tforge_forge_companion_texts *texts);

#define TFORGE_FORGE_OPTIONS_VERSION 4
typedef struct tforge_forge_options {
    unsigned version;
    const char *heuristic;                /* plugin id; NULL: "bottleneck" */
    const char *const *heuristic_options; /* "key=value", NULL-terminated; may be NULL */
    int counters;                         /* ask for the profiler's counters too */
    /* Where each profile of an evaluation made by this run (not taken from a resumed one) is
     * recorded, with its labels: the loop's record (NULL: nothing is stored). */
    const tforge_run_record *record;
    int steer;       /* hand each new incumbent's prior to the loop's strategies (0: profile) */
    int profile_all; /* profile every candidate that ran correctly, as its batch is told */
    /* Hand a prior only while the measurements bear it out (tforge_forge_borne_out), none
     * otherwise: a label whose remedy the data contradict, or agree with no better than
     * chance, steers nothing. */
    int check_prior;
} tforge_forge_options;
#define TFORGE_FORGE_OPTIONS_INIT {TFORGE_FORGE_OPTIONS_VERSION, NULL, NULL, 1, NULL, 1, 0, 0}
/* The options `strategy` runs with: check_prior for "forge" (set after the other fields). */
void tforge_forge_options_for(tforge_forge_options *options, const char *strategy);

/* Which way a label's prior moves one dimension, relative to the incumbent's level. */
typedef enum tforge_forge_way {
    TFORGE_FORGE_KEEP = 0,  /* the incumbent's level weighs most */
    TFORGE_FORGE_UP = 1,    /* a higher level weighs most */
    TFORGE_FORGE_DOWN = 2,  /* a lower level */
    TFORGE_FORGE_OTHER = 3  /* another level of a categorical dimension, or both ways alike */
} tforge_forge_way;

typedef struct tforge_forge_move {
    uint32_t dim;
    tforge_forge_way way;
} tforge_forge_move;

typedef struct tforge_forge_label {
    char *label, *evidence, *rule; /* owned copies of the heuristic's */
    double confidence;
    tforge_forge_move *moves;      /* what the prior of this label alone moves */
    size_t n_moves;
} tforge_forge_label;

typedef struct tforge_forge_profile {
    size_t eval;          /* the evaluation profiled: an index into the outcome's evals */
    int steered;          /* 1 when its labels' prior was handed to the strategy */
    tforge_profile profile;
    tforge_forge_label *labels; /* strongest first */
    size_t n_labels;
    char note[256];       /* why there is no profile or no prior; "" when there are both */
} tforge_forge_profile;

typedef struct tforge_forge tforge_forge;

/* Opens the heuristic over `space` (both lent: they outlive the forge, as does `backend`). An
 * unknown heuristic, one that speaks another interface or refuses its options is an error
 * naming it. */
int tforge_forge_open(tforge_forge **out, const tforge_registry *registry,
                      const tforge_space *space, tforge_backend *backend,
                      const tforge_forge_options *options);
/* NULL is allowed. */
void tforge_forge_free(tforge_forge *forge);

/* The steer to put in the loop's options: it lives as long as the forge. Each incumbent is
 * profiled once: with profile_all, the batch's profile is the one its prior comes from. */
const tforge_loop_steer *tforge_forge_steer(tforge_forge *forge);

/* Profiles and classifies evaluation `eval` of `out` without steering (the winner, for the
 * report), unless it was profiled already; its profile into `*profile` (may be NULL). */
int tforge_forge_profile_eval(tforge_forge *forge, const tforge_loop_outcome *out, size_t eval,
                              const tforge_forge_profile **profile);

/* The profiles taken, in order; the one of an evaluation (NULL when it has none). */
size_t tforge_forge_count(const tforge_forge *forge);
const tforge_forge_profile *tforge_forge_at(const tforge_forge *forge, size_t index);
const tforge_forge_profile *tforge_forge_find(const tforge_forge *forge, size_t eval);
/* Kendall's agreement of the level prior `w` (per level of every dimension) with the
 * measurements: over the pairs of evaluations in the space that ran correctly, whose prior
 * weights (the sums of their levels') differ and whose values differ, the share the prior orders
 * as they measured less the share it orders the other way: 1 when it ranks every pair right, -1
 * when it ranks every pair wrong, 0 with no such pair. */
double tforge_forge_agreement(const tforge_forge *forge, const double *w,
                              const tforge_loop_outcome *out);
/* How many standard deviations of Kendall's tau between unrelated rankings a prior's agreement
 * must exceed to be borne out: 1.645, chance's one-sided 5% (its tau is near normal). At one
 * (chance's 16%) priors that ranked by luck still steered, and on softmax forge fell below bo;
 * above zero alone, they cost forge evaluations on attention (experiments/NOTES.md, sessions 23
 * and 24). */
#define TFORGE_FORGE_BEYOND_CHANCE 1.645
/* 1 when the measurements bear the prior `w` out beyond chance: its agreement over the n points
 * measured correctly exceeds TFORGE_FORGE_BEYOND_CHANCE standard deviations of Kendall's tau
 * between unrelated rankings, sqrt(2 (2n + 5) / (9 n (n - 1))) (1 for two points, 0.64 for
 * three, 0.49 for four, 0.27 for nine): so never with three points or fewer, and with four only
 * when every pair is ranked right. 0 with fewer than two points. */
int tforge_forge_borne_out(const tforge_forge *f, const double *w, const tforge_loop_outcome *out);
/* Whether the incumbent's labels name a bottleneck that no open move addresses (when forge asks
 * a model, issue 37): `*named` the index of the strongest such label among the incumbent's
 * profile's (tforge_forge_find), -1 when every label is still addressed, there is none, or the
 * incumbent was not profiled. A label opens a move where its prior alone, at the incumbent,
 * weighs a level of some dimension (a knob or a transform's) above the incumbent's and the point
 * moved there is valid and not measured yet; a label whose prior moves nothing, or only to
 * points measured already (forge's rule moves tried them), is not addressed by anything left.
 * `why` (`size` bytes) says which label and why, or why none is named. 0, or an error of the
 * heuristic's prior. */
int tforge_forge_unaddressed(int *named, char *why, size_t size, tforge_forge *forge,
                             const tforge_loop_outcome *out, size_t incumbent);
/* The family of a dimension: the transform that owns it (the space says which), "" for the
 * task's knobs; the heuristic's id; "up", "down" ... */
const char *tforge_forge_family(const tforge_forge *forge, uint32_t dim);
const char *tforge_forge_heuristic(const tforge_forge *forge);
const char *tforge_forge_way_name(tforge_forge_way way);

#endif
