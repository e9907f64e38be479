/* The bottleneck heuristic ("tforge.heuristic/2", id "bottleneck"): rules from a profile's
 * metrics to labels, after Nsight Compute's section rules where they have one (README.md says
 * which threshold came from where), and from labels to a prior over the space's levels. Counter
 * metrics are used when the profile has them; the static metrics alone give the same labels at
 * a lower confidence. Evidence is written as "metric value, metric value": the prior reads the
 * values it needs back from it, so labels stored and read again steer the same way. */
#include <tforge/plugin/heuristic.h>

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ID "bottleneck"
#define MAX_LABELS 12
#define EVIDENCE_SIZE 256
#define RULE_SIZE 240

/* Nsight Compute's SOLBottleneck: below 60% of peak on both units is latency, a unit at least
 * 10 points above the other is the bottleneck. */
#define SOL_LATENCY 60.0
#define SOL_BALANCED 10.0

typedef struct bottleneck_state {
    const tforge_host *host;
    const tforge_space_view *space;
    double ridge;      /* flop per byte where the roofline's roofs meet */
    double max_weight; /* |log weight| cap per level */
    double unchanged;  /* log weight of level 0 of a transform parameter no label speaks for */
    uint32_t n;
    tforge_bottleneck labels[MAX_LABELS];
    char evidence[MAX_LABELS][EVIDENCE_SIZE];
    char rule[MAX_LABELS][RULE_SIZE];
} bottleneck_state;

static const tforge_option_spec options[] = {
    {"ridge", TFORGE_OPTION_NUMBER, "206", 1, 1e5, NULL,
     "flop per DRAM byte where compute and memory roofs meet (H200: 989.5 TFLOP/s / 4.8 TB/s)"},
    {"max_weight", TFORGE_OPTION_NUMBER, "2", 0, 10, NULL,
     "largest |log weight| the prior gives a level, so that data overrules it"},
    {"unchanged", TFORGE_OPTION_NUMBER, "1", 0, 10, NULL,
     "log weight of level 0 (the source unchanged) of each transform parameter that no label "
     "favours: a rewrite earns its place"},
};
#define N_OPTIONS (sizeof options / sizeof *options)

static int fail(const tforge_host *host, int code, const char *format, ...)
{
    char message[512];
    int used = snprintf(message, sizeof message, "heuristic '" ID "': ");
    va_list ap;
    va_start(ap, format);
    vsnprintf(message + used, sizeof message - (size_t)used, format, ap);
    va_end(ap);
    return host && host->error ? host->error(host, code, message) : code;
}

/* ---- create / destroy ---- */

static int parse_number(double *out, const tforge_option_spec *spec, const char *text)
{
    char *end = NULL;
    double v = strtod(text, &end);
    if (end == text || *end || !isfinite(v) || v < spec->min || v > spec->max)
        return -1;
    *out = v;
    return 0;
}

static int create(void **state, const tforge_host *host, const tforge_options_view *given,
                  const tforge_heuristic_input *input)
{
    if (!input || !input->space)
        return fail(host, TFORGE_PLUGIN_EINPUT, "needs the space's view");
    double values[N_OPTIONS] = {206, 2, 1};
    for (uint32_t i = 0; given && i < given->count; i++) {
        uint32_t o = 0;
        while (o < N_OPTIONS && strcmp(given->keys[i], options[o].name) != 0)
            o++;
        if (o == N_OPTIONS)
            return fail(host, TFORGE_PLUGIN_EINPUT, "unknown option '%s' (it takes ridge, "
                        "max_weight, unchanged)", given->keys[i]);
        if (parse_number(&values[o], &options[o], given->values[i]))
            return fail(host, TFORGE_PLUGIN_EINPUT, "option %s=%s: expected a number in "
                        "[%g, %g]", options[o].name, given->values[i], options[o].min,
                        options[o].max);
    }
    bottleneck_state *s = calloc(1, sizeof *s);
    if (!s)
        return fail(host, TFORGE_PLUGIN_ENOMEM, "out of memory");
    s->host = host;
    s->space = input->space;
    s->ridge = values[0];
    s->max_weight = values[1];
    s->unchanged = values[2];
    *state = s;
    return 0;
}

static void destroy(void *state)
{
    free(state);
}

/* ---- classify ---- */

static double metric(const tforge_profile *p, const char *name)
{
    for (uint32_t i = 0; i < p->n_metrics && i < TFORGE_PROFILE_METRICS; i++)
        if (strcmp(p->metrics[i].name, name) == 0)
            return p->metrics[i].value;
    return NAN;
}

static int known(double x)
{
    return isfinite(x);
}

/* From c_lo at x == lo to c_hi at x == hi, clamped (lo > hi for a falling ramp). */
static double ramp(double x, double lo, double hi, double c_lo, double c_hi)
{
    double t = (x - lo) / (hi - lo);
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    return c_lo + t * (c_hi - c_lo);
}

/* Adds a label; its evidence is the named metrics the profile has (a NULL-terminated list). */
static void emit(bottleneck_state *s, const tforge_profile *p, const char *label,
                 double confidence, const char *rule, ...)
{
    if (s->n == MAX_LABELS)
        return;
    uint32_t i = s->n++;
    char *e = s->evidence[i];
    size_t used = 0;
    e[0] = '\0';
    va_list ap;
    va_start(ap, rule);
    for (const char *name; (name = va_arg(ap, const char *));) {
        double v = metric(p, name);
        if (!known(v) || used >= EVIDENCE_SIZE)
            continue;
        int n = snprintf(e + used, EVIDENCE_SIZE - used, "%s%s %.4g", used ? ", " : "", name, v);
        used += n > 0 ? (size_t)n : 0;
    }
    va_end(ap);
    snprintf(s->rule[i], RULE_SIZE, "%s", rule);
    s->labels[i] = (tforge_bottleneck){label, confidence > 0.95 ? 0.95 : confidence, e, s->rule[i]};
}

/* SOLBottleneck on the counters: sm_pct against the busier of DRAM and L2. */
static int throughput_counters(bottleneck_state *s, const tforge_profile *p)
{
    double sm = metric(p, "sm_pct"), dram = metric(p, "dram_pct"), l2 = metric(p, "l2_pct");
    double mem = known(dram) && known(l2) ? fmax(dram, l2) : known(dram) ? dram : l2;
    if (!known(sm) || !known(mem))
        return 0;
    double waves = metric(p, "waves");
    if (sm < SOL_LATENCY && mem < SOL_LATENCY) {
        if (known(waves) && waves < 1)
            return 1; /* a grid short of one wave: the tail rule says so */
        double stall = metric(p, "stall_long_scoreboard"), issue = metric(p, "issue_pct");
        if (known(stall) && stall > 0.3 && (!known(issue) || issue < 80))
            emit(s, p, "latency-bound", 0.8,
                 "sm_pct < 60 and max(dram_pct, l2_pct) < 60 (SOLBottleneck); "
                 "stall_long_scoreboard > 0.3 with issue_pct < 80 (CPIStallLongScoreboard)",
                 "sm_pct", "dram_pct", "l2_pct", "stall_long_scoreboard", "issue_pct", NULL);
        else
            emit(s, p, "latency-bound", 0.55,
                 "sm_pct < 60 and max(dram_pct, l2_pct) < 60 (SOLBottleneck)", "sm_pct",
                 "dram_pct", "l2_pct", "issue_pct", NULL);
    } else if (mem - sm >= SOL_BALANCED) {
        emit(s, p, "memory-bound", ramp(mem, 60, 90, 0.6, 0.95),
             "max(dram_pct, l2_pct) >= 60 and >= sm_pct + 10 (SOLBottleneck)", "dram_pct",
             "l2_pct", "sm_pct", "intensity", NULL);
    } else if (sm - mem >= SOL_BALANCED) {
        emit(s, p, "compute-bound", ramp(sm, 60, 90, 0.6, 0.95),
             "sm_pct >= 60 and >= max(dram_pct, l2_pct) + 10 (SOLBottleneck)", "sm_pct",
             "dram_pct", "l2_pct", NULL);
    } /* balanced, both at 60% or more: neither alone is the bottleneck */
    return 1;
}

/* The same rule on the static shares of the datasheet's peaks, then the roofline's ridge. */
static void throughput_static(bottleneck_state *s, const tforge_profile *p)
{
    double dram = metric(p, "dram_share") * 100, flops = metric(p, "flops_share") * 100;
    double intensity = metric(p, "intensity"), waves = metric(p, "waves");
    if (known(dram) && dram >= SOL_LATENCY && (!known(flops) || dram - flops >= SOL_BALANCED))
        emit(s, p, "memory-bound", ramp(dram, 60, 90, 0.4, 0.6),
             "dram_share >= 0.6 and >= flops_share + 0.1 (SOLBottleneck on the static shares)",
             "dram_share", "flops_share", "intensity", NULL);
    else if (known(flops) && flops >= SOL_LATENCY && (!known(dram) || flops - dram >= SOL_BALANCED))
        emit(s, p, "compute-bound", ramp(flops, 60, 90, 0.4, 0.6),
             "flops_share >= 0.6 and >= dram_share + 0.1 (SOLBottleneck on the static shares)",
             "flops_share", "dram_share", "intensity", NULL);
    else if (known(intensity) && known(dram) && intensity < s->ridge && dram >= 30)
        emit(s, p, "memory-bound", 0.3,
             "intensity below the ridge point and dram_share >= 0.3 (roofline)", "intensity",
             "dram_share", NULL);
    else if (known(intensity) && known(flops) && intensity >= s->ridge && flops >= 30)
        emit(s, p, "compute-bound", 0.3,
             "intensity above the ridge point and flops_share >= 0.3 (roofline)", "intensity",
             "flops_share", NULL);
    else if (known(dram) && known(flops) && dram < SOL_LATENCY && flops < SOL_LATENCY &&
             !(known(waves) && waves < 1))
        emit(s, p, "latency-bound", 0.3,
             "dram_share < 0.6 and flops_share < 0.6 (SOLBottleneck on the static shares)",
             "dram_share", "flops_share", NULL);
}

static void occupancy(bottleneck_state *s, const tforge_profile *p)
{
    double achieved = metric(p, "occupancy_achieved"), theoretical =
        metric(p, "occupancy_theoretical");
    double issue = metric(p, "issue_pct"), sm = metric(p, "sm_pct");
    double dram = metric(p, "dram_share"), flops = metric(p, "flops_share");
    if (known(achieved)) {
        if (achieved < 0.25 && (!known(issue) || issue < 80) && !(known(sm) && sm >= 60))
            emit(s, p, "low-occupancy", ramp(achieved, 0.25, 0.0, 0.5, 0.85),
                 "occupancy_achieved < 0.25 with issue_pct < 80 (IssueSlotUtilization) and "
                 "sm_pct < 60", "occupancy_achieved", "occupancy_theoretical",
                 "occupancy_limiter", "registers", "shared_bytes", "num_warps", "issue_pct", NULL);
    } else if (known(theoretical) && theoretical <= 0.25 && known(dram) && dram < 0.6 &&
               !(known(flops) && flops >= 0.6)) {
        /* Low occupancy is a bottleneck only below both roofs: a tile-reuse kernel (a GEMM) is
         * fastest at low occupancy, so without a time and the launch's bytes, no label. */
        emit(s, p, "low-occupancy", ramp(theoretical, 0.25, 0.0, 0.3, 0.5),
             "occupancy_theoretical <= 0.25 (static), dram_share < 0.6 and flops_share < 0.6",
             "occupancy_theoretical", "occupancy_limiter", "blocks_per_sm", "registers",
             "shared_bytes", "num_warps", "dram_share", "flops_share", NULL);
    }
}

static void spills(bottleneck_state *s, const tforge_profile *p)
{
    double stores = metric(p, "spill_stores"), loads = metric(p, "spill_loads");
    double worst = fmax(known(stores) ? stores : 0, known(loads) ? loads : 0);
    if (worst > 0)
        emit(s, p, "register-spills", ramp(worst, 0, 256, 0.6, 0.95),
             "spill_stores > 0 or spill_loads > 0 (ptxas: bytes through local memory)",
             "spill_stores", "spill_loads", "registers", NULL);
}

/* LaunchConfiguration's tail effect: whole waves and a partial one that may take 1 / (whole + 1)
 * of the time, flagged at 20% or more (and, with counters, achieved occupancy under 80% of the
 * theoretical); a grid short of one wave leaves SMs idle (SOLBottleneck: waves < 1). */
static void tail(bottleneck_state *s, const tforge_profile *p)
{
    double waves = metric(p, "waves"), fill = metric(p, "last_wave_fill");
    if (!known(waves) || !known(fill))
        return;
    if (waves < 1) {
        emit(s, p, "tail-effect", ramp(waves, 1, 0, 0.3, 0.8),
             "waves < 1: the grid leaves SMs idle (SOLBottleneck, LaunchConfiguration)", "waves",
             "grid_blocks", "blocks_per_sm", NULL);
        return;
    }
    double whole = floor(waves), share = 1 / (whole + 1);
    if (fill >= 1 || share < 0.2 || fill > 0.5)
        return;
    double achieved = metric(p, "occupancy_achieved"), theoretical =
        metric(p, "occupancy_theoretical");
    if (known(achieved) && known(theoretical)) {
        if (achieved < 0.8 * theoretical)
            emit(s, p, "tail-effect", ramp(share * (1 - fill), 0.1, 0.5, 0.5, 0.85),
                 "waves >= 1, 1 / (full waves + 1) >= 0.2, last_wave_fill <= 0.5, "
                 "occupancy_achieved < 0.8 occupancy_theoretical (LaunchConfiguration)", "waves",
                 "last_wave_fill", "occupancy_achieved", "occupancy_theoretical", NULL);
    } else {
        emit(s, p, "tail-effect", ramp(share * (1 - fill), 0.1, 0.5, 0.3, 0.65),
             "waves >= 1, 1 / (full waves + 1) >= 0.2, last_wave_fill <= 0.5 "
             "(LaunchConfiguration, static)", "waves", "last_wave_fill", "grid_blocks", NULL);
    }
}

static void memory_access(bottleneck_state *s, const tforge_profile *p)
{
    double sectors = metric(p, "l2_sectors_per_request");
    double conflicts = metric(p, "smem_conflicts_per_request");
    if (known(sectors) && sectors > 16)
        emit(s, p, "uncoalesced", ramp(sectors, 16, 32, 0.5, 0.9),
             "l2_sectors_per_request > 16: more than a warp's 128-bit loads need "
             "(UncoalescedGlobalAccess flags any excess over the ideal)", "l2_sectors_per_request",
             "dram_pct", NULL);
    if (known(conflicts) && conflicts >= 1)
        emit(s, p, "smem-conflicts", ramp(conflicts, 1, 4, 0.5, 0.9),
             "smem_conflicts_per_request >= 1: at least 2-way on average",
             "smem_conflicts_per_request", NULL);
}

static void launch(bottleneck_state *s, const tforge_profile *p)
{
    double kernel = metric(p, "kernel_ms"), t = known(kernel) ? kernel : metric(p, "time_ms");
    if (known(t) && t < 0.010)
        emit(s, p, "launch-bound", ramp(t, 0.010, 0.003, 0.3, 0.8),
             "kernel time < 10 us: the launch's few microseconds are a large share",
             known(kernel) ? "kernel_ms" : "time_ms", "grid_blocks", NULL);
}

static int stronger(const void *a, const void *b)
{
    const tforge_bottleneck *x = a, *y = b;
    int order = (x->confidence < y->confidence) - (x->confidence > y->confidence);
    return order ? order : strcmp(x->label, y->label);
}

static int classify(void *state, const tforge_profile *profile, const tforge_bottleneck **out,
                    uint32_t *n)
{
    bottleneck_state *s = state;
    if (!profile || !out || !n)
        return fail(s->host, TFORGE_PLUGIN_EINPUT, "classify needs a profile and its outputs");
    s->n = 0;
    if (!throughput_counters(s, profile))
        throughput_static(s, profile);
    occupancy(s, profile);
    spills(s, profile);
    tail(s, profile);
    memory_access(s, profile);
    launch(s, profile);
    /* A label points at the evidence and rule slots it was emitted with, which stay put. */
    qsort(s->labels, s->n, sizeof *s->labels, stronger);
    *out = s->labels;
    *n = s->n;
    return 0;
}

/* ---- prior ---- */

/* The value of `name` in an evidence text "name value, name value", or NAN. */
static double evidence_value(const char *evidence, const char *name)
{
    size_t len = strlen(name);
    for (const char *e = evidence; e && *e;) {
        if (strncmp(e, name, len) == 0 && e[len] == ' ')
            return strtod(e + len + 1, NULL);
        e = strstr(e, ", ");
        e = e ? e + 2 : NULL;
    }
    return NAN;
}

/* What dimension d changes and whether a transform owns it, from the view (ABI 1.3); a host
 * whose view does not say leaves every effect unknown and every dimension a knob. */
static int view_describes(const tforge_space_view *v)
{
    return v->struct_size >= offsetof(tforge_space_view, effect) + sizeof v->effect && v->owner &&
           v->effect;
}

static uint32_t effect_of(const tforge_space_view *v, uint32_t d)
{
    return view_describes(v) ? v->effect(v->context, d) : TFORGE_EFFECT_UNKNOWN;
}

static int owned_by_transform(const tforge_space_view *v, uint32_t d)
{
    return view_describes(v) && strcmp(v->owner(v->context, d), TFORGE_DIM_OWNER_KNOB) != 0;
}

/* A tile the prior can move: an ordinal of two levels or more. */
static int is_tile(const tforge_space_view *v, uint32_t d)
{
    uint32_t e = effect_of(v, d);
    return (e == TFORGE_EFFECT_TILE || e == TFORGE_EFFECT_TILE_CONTIGUOUS) &&
           v->kind(v->context, d) == TFORGE_DIM_ORDINAL && v->levels(v->context, d) >= 2;
}

/* A tile along a contiguous dimension: one that says so, or the only tile there is. */
static int is_contiguous_tile(const tforge_space_view *v, uint32_t d)
{
    uint32_t tiles = 0, dims = v->dims(v->context);
    for (uint32_t e = 0; e < dims; e++)
        tiles += (uint32_t)is_tile(v, e);
    return tiles == 1 || effect_of(v, d) == TFORGE_EFFECT_TILE_CONTIGUOUS;
}

typedef struct dim_view {
    const tforge_space_view *v;
    uint32_t d, levels, kind, at; /* at == levels when unknown */
    double *w;
} dim_view;

/* Levels past the incumbent in `direction` (+1 larger, -1 smaller) gain `s`, levels on the
 * other side lose s / 2: a direction, not a verdict. Categoricals have none. */
static void toward(const dim_view *d, int direction, double s)
{
    if (d->kind == TFORGE_DIM_CATEGORICAL || d->at == d->levels)
        return;
    for (uint32_t l = 0; l < d->levels; l++) {
        int side = (l > d->at) - (l < d->at);
        d->w[l] += side == direction ? s : side == -direction ? -s / 2 : 0;
    }
}

/* Levels whose value satisfies `wanted` gain `s`. */
static void favour(const dim_view *d, int (*wanted)(const dim_view *, uint32_t, double),
                   double arg, double s)
{
    for (uint32_t l = 0; l < d->levels; l++)
        if (wanted(d, l, arg))
            d->w[l] += s;
}

static double value_of(const dim_view *d, uint32_t l)
{
    return d->v->value(d->v->context, d->d, l);
}

static int value_is(const dim_view *d, uint32_t l, double v)
{
    return value_of(d, l) == v;
}

static int value_positive(const dim_view *d, uint32_t l, double unused)
{
    (void)unused;
    return value_of(d, l) > 0;
}

static int value_above_one(const dim_view *d, uint32_t l, double unused)
{
    (void)unused;
    return value_of(d, l) > 1;
}

static int value_caps_below(const dim_view *d, uint32_t l, double registers)
{
    return value_of(d, l) > 0 && (!known(registers) || value_of(d, l) < registers);
}

static int level_positive(const dim_view *d, uint32_t l, double unused)
{
    (void)d;
    (void)unused;
    return l > 0;
}

static int level_is_at(const dim_view *d, uint32_t l, double unused)
{
    (void)unused;
    return l == d->at;
}

/* The dimensions the rules move, each told by its effect (types.h): UNMASKED (effect mask:
 * masksplit's main loop without its masks) and NO_MULTIPLY (effect fold: exp2's exponentials and
 * scalefold's scores without their multiply) issue fewer instructions for the same work and the
 * same bytes; SPLITK multiplies a GEMM's programs by its split of K. */
enum role { OTHER, TILE, WARPS, STAGES, PIPELINE_STAGES, MAXNREG, PERSISTENT, EVICTION, TMA,
            PRECISION, UNMASKED, NO_MULTIPLY, SPLITK };

static enum role role_of(const dim_view *d)
{
    if (is_tile(d->v, d->d))
        return TILE;
    switch (effect_of(d->v, d->d)) {
    case TFORGE_EFFECT_WARPS:
        return WARPS;
    case TFORGE_EFFECT_STAGES:
        return STAGES;
    case TFORGE_EFFECT_PIPELINE_STAGES:
        return PIPELINE_STAGES;
    case TFORGE_EFFECT_REGISTER_CAP:
        return MAXNREG;
    case TFORGE_EFFECT_PROGRAMS:
        return PERSISTENT;
    case TFORGE_EFFECT_EVICTION:
        return EVICTION;
    case TFORGE_EFFECT_TMA:
        return TMA;
    case TFORGE_EFFECT_PRECISION:
        return PRECISION;
    case TFORGE_EFFECT_MASK:
        return UNMASKED;
    case TFORGE_EFFECT_FOLD:
        return NO_MULTIPLY;
    case TFORGE_EFFECT_SPLIT_K:
        return SPLITK;
    default:
        return OTHER;
    }
}

/* One label's pull on one dimension, `s` its strength (confidence x 1.5). */
static void pull(const bottleneck_state *s, const tforge_bottleneck *b, const dim_view *d,
                 double strength)
{
    enum role r = role_of(d);
    const char *label = b->label;
    double limiter = evidence_value(b->evidence, "occupancy_limiter");
    double registers = evidence_value(b->evidence, "registers");
    double waves = evidence_value(b->evidence, "waves");
    if (strcmp(label, "register-spills") == 0) {
        if (r == TILE || r == STAGES)
            toward(d, -1, strength);
        else if (r == WARPS) /* the same tile over more threads: fewer registers each */
            toward(d, +1, strength / 2);
        else if (r == PIPELINE_STAGES)
            toward(d, -1, strength / 2);
        else if (r == MAXNREG)
            favour(d, value_is, 0, strength);
    } else if (strcmp(label, "low-occupancy") == 0) {
        if (limiter == 1 && r == TILE)
            toward(d, -1, strength);
        else if (limiter == 1 && r == MAXNREG)
            favour(d, value_caps_below, registers, strength / 2);
        else if (limiter == 2 && (r == TILE || r == STAGES))
            toward(d, -1, strength);
        else if (limiter == 2 && r == PIPELINE_STAGES)
            toward(d, -1, strength / 2);
        else if ((limiter == 3 || limiter == 4) && r == WARPS)
            toward(d, +1, strength);
        else if (!known(limiter) && r == TILE)
            toward(d, -1, strength / 2);
    } else if (strcmp(label, "tail-effect") == 0) {
        if (r == PERSISTENT && !(known(waves) && waves < 1))
            favour(d, value_positive, 0, strength);
        else if (r == SPLITK && known(waves) && waves < 1) /* more programs on the idle SMs */
            favour(d, value_above_one, 0, strength);
        else if (r == TILE)
            toward(d, -1, strength);
    } else if (strcmp(label, "memory-bound") == 0) {
        /* although the task's own intensity lies above the ridge: the kernel moves more than
         * its compulsory bytes, re-reading what larger tiles would reuse */
        double intensity = evidence_value(b->evidence, "intensity");
        int reuse = known(intensity) && intensity >= s->ridge;
        if (r == EVICTION)
            favour(d, level_positive, 0, strength / 2);
        else if (r == TMA)
            favour(d, level_positive, 0, strength);
        else if (r == TILE && (reuse || is_contiguous_tile(d->v, d->d)))
            toward(d, +1, strength); /* wider loads; with re-reads, more reuse in every tile */
    } else if (strcmp(label, "latency-bound") == 0) {
        if (r == STAGES || r == PIPELINE_STAGES)
            toward(d, +1, strength);
        else if (r == UNMASKED || r == NO_MULTIPLY) /* fewer instructions between the waits */
            favour(d, level_positive, 0, strength);
    } else if (strcmp(label, "compute-bound") == 0) {
        if (r == TILE)
            toward(d, +1, strength);
        else if (r == NO_MULTIPLY) /* not masksplit: it slowed the compute-bound GEMM's K
                                    * loop by 1.2-1.4x (experiments/NOTES.md, session 15) */
            favour(d, level_positive, 0, strength);
        else if (r == WARPS)
            favour(d, value_is, 8, strength);
        else if (r == PRECISION && d->at < d->levels)
            favour(d, level_is_at, 0, strength);
    } else if (strcmp(label, "uncoalesced") == 0) {
        if (r == TMA)
            favour(d, level_positive, 0, strength);
    } else if (strcmp(label, "smem-conflicts") == 0) {
        if (r == TMA) /* TMA writes its tiles swizzled */
            favour(d, level_positive, 0, strength / 2);
    } else if (strcmp(label, "launch-bound") == 0) {
        if (r == TILE)
            toward(d, +1, strength);
        else if (r == PERSISTENT)
            favour(d, value_positive, 0, strength / 2);
    }
}

/* Once the labels moved something, each transform parameter that none of them moved leans to
 * level 0, the source unchanged: the levels an initial design drew at random are then not
 * carried along by the moves the labels favour. */
static void lean_unchanged(const bottleneck_state *s, double *log_weight, uint64_t n)
{
    const tforge_space_view *v = s->space;
    uint32_t dims = v->dims(v->context);
    int any = 0;
    for (uint64_t i = 0; i < n; i++)
        any |= log_weight[i] != 0;
    if (!any)
        return;
    double *w = log_weight;
    for (uint32_t d = 0; d < dims; w += v->levels(v->context, d), d++) {
        uint32_t levels = v->levels(v->context, d);
        int moved = 0;
        for (uint32_t l = 0; l < levels; l++)
            moved |= w[l] != 0;
        if (!moved && levels > 1 && owned_by_transform(v, d))
            w[0] = fmin(s->max_weight, s->unchanged);
    }
}

static int prior(void *state, const tforge_bottleneck *labels, uint32_t n_labels,
                 const tforge_level *at, double *log_weight, uint64_t n)
{
    bottleneck_state *s = state;
    const tforge_space_view *v = s->space;
    uint32_t dims = v->dims(v->context);
    uint64_t total = 0;
    for (uint32_t d = 0; d < dims; d++)
        total += v->levels(v->context, d);
    if (n != total || (n_labels && !labels) || (n && !log_weight))
        return fail(s->host, TFORGE_PLUGIN_EINPUT, "prior: %llu weights asked for, the space has "
                    "%llu levels", (unsigned long long)n, (unsigned long long)total);
    memset(log_weight, 0, n * sizeof *log_weight);
    uint64_t offset = 0;
    for (uint32_t d = 0; d < dims; d++) {
        dim_view dv = {v, d, v->levels(v->context, d), v->kind(v->context, d), 0,
                       log_weight + offset};
        dv.at = at && at[d] < dv.levels ? at[d] : dv.levels;
        for (uint32_t i = 0; i < n_labels; i++)
            if (labels[i].label && labels[i].confidence > 0)
                pull(s, &labels[i], &dv, fmin(labels[i].confidence, 1.0) * 1.5);
        for (uint32_t l = 0; l < dv.levels; l++)
            dv.w[l] = fmax(-s->max_weight, fmin(s->max_weight, dv.w[l]));
        offset += dv.levels;
    }
    lean_unchanged(s, log_weight, n);
    return 0;
}

static const tforge_heuristic_interface bottleneck_interface = {sizeof bottleneck_interface,
                                                                create, classify, prior, destroy};

static const tforge_plugin_descriptor descriptor = {
    .id = ID,
    .version = "1.0.0",
    .description = "bottleneck labels from counters or static metrics (Nsight Compute's "
                   "thresholds), and their prior over tiles, warps, stages and transforms",
    .interface_id = TFORGE_HEURISTIC_INTERFACE_ID,
    .interface = &bottleneck_interface,
    .options = options,
    .n_options = sizeof options / sizeof *options};

static uint32_t count(void)
{
    return 1;
}

static const tforge_plugin_descriptor *get(uint32_t index)
{
    return index == 0 ? &descriptor : NULL;
}

TFORGE_PLUGIN_EXPORT const tforge_plugin_module TFORGE_PLUGIN_ENTRY_NAME = {
    TFORGE_PLUGIN_ABI_VERSION_INIT, ID, NULL, NULL, count, get};
