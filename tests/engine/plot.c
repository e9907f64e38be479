#include "plot.h"

#include "tforge/error.h"
#include "tforge/plugin/rng.h"
#include "tforge/plugin/strategy.h"
#include "tforge/score.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* Attributes that must hold numbers (or path data made of numbers and commands). */
static int is_numeric_attribute(const char *name, size_t len)
{
    static const char *const names[] = {"x",      "y",     "x1",           "y1",
                                        "x2",     "y2",    "width",        "height",
                                        "d",      "font-size", "stroke-width", "fill-opacity"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strlen(names[i]) == len && strncmp(names[i], name, len) == 0)
            return 1;
    return 0;
}

/* Checks one start tag's attributes: quoted values, numbers where numbers belong (no nan, no
 * inf: letters other than path commands and exponents fail). */
static void check_attributes(const char *p, const char *end)
{
    for (;;) {
        while (p < end && (*p == ' ' || *p == '\n' || *p == '/'))
            p++;
        if (p >= end)
            return;
        const char *eq = memchr(p, '=', (size_t)(end - p));
        assert_non_null(eq);
        assert_true(eq[1] == '"');
        const char *close = memchr(eq + 2, '"', (size_t)(end - eq - 2));
        assert_non_null(close);
        if (is_numeric_attribute(p, (size_t)(eq - p))) {
            assert_true(close > eq + 2);
            for (const char *c = eq + 2; c < close; c++)
                if (!strchr("0123456789.-+e MLZ", *c))
                    fail_msg("attribute %.*s has '%c' in \"%.*s\"", (int)(eq - p), p, *c,
                             (int)(close - eq - 2), eq + 2);
        }
        p = close + 1;
    }
}

/* Entities in text must be the five XML ones; no raw '<' outside tags (found as a tag). */
static void check_text(const char *p, const char *end)
{
    for (; p < end; p++) {
        assert_true(*p != '>');
        if (*p != '&')
            continue;
        static const char *const entities[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"};
        int known = 0;
        for (size_t i = 0; i < 5; i++)
            known |= strncmp(p, entities[i], strlen(entities[i])) == 0;
        assert_true(known);
    }
}

typedef struct svg_counts {
    size_t paths, texts, lines;
} svg_counts;

/* A small well-formedness check: one XML declaration, tags closed in order, one root. */
static svg_counts check_svg(const char *svg)
{
    svg_counts counts = {0};
    const char *stack[64];
    size_t lengths[64], depth = 0, roots = 0;
    assert_true(strncmp(svg, "<?xml version=\"1.0\"", 19) == 0);
    const char *p = strstr(svg, "?>");
    assert_non_null(p);
    p += 2;
    for (;;) {
        const char *open = strchr(p, '<');
        check_text(p, open ? open : p + strlen(p));
        if (!open)
            break;
        const char *end = strchr(open, '>');
        assert_non_null(end);
        if (open[1] == '/') {
            size_t len = (size_t)(end - open - 2);
            assert_true(depth > 0);
            depth--;
            assert_true(lengths[depth] == len && strncmp(stack[depth], open + 2, len) == 0);
        } else {
            const char *name = open + 1;
            size_t len = strcspn(name, " \n/>");
            assert_true(len > 0);
            check_attributes(name + len, end);
            if (depth == 0)
                roots++;
            counts.paths += len == 4 && strncmp(name, "path", 4) == 0;
            counts.texts += len == 4 && strncmp(name, "text", 4) == 0;
            counts.lines += len == 4 && strncmp(name, "line", 4) == 0;
            if (end[-1] != '/') {
                assert_true(depth < 64);
                stack[depth] = name;
                lengths[depth++] = len;
            }
        }
        p = end + 1;
    }
    assert_int_equal(depth, 0);
    assert_int_equal(roots, 1);
    return counts;
}

static char *render(const tforge_plot_convergence *plot, int *rc)
{
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    assert_non_null(out);
    *rc = tforge_plot_convergence_svg(out, plot);
    fclose(out);
    return text;
}

static void structure_counts_and_escaping(void **state)
{
    (void)state;
    enum { B = 50 };
    double a[B], a25[B], a75[B], b[B], r[B];
    for (size_t i = 0; i < B; i++) {
        a[i] = 1.0 + 2.0 / (i + 1);
        a25[i] = a[i] * 0.95;
        a75[i] = a[i] * 1.1;
        b[i] = i < 3 ? NAN : 1.0 + 4.0 / (i + 1); /* a gap before the first ok value */
        r[i] = 1.0 + 5.0 / (i + 2);
    }
    const tforge_plot_series series[] = {{"a<b & \"c\"", a, a25, a75}, {"plain", b, NULL, NULL}};
    const tforge_plot_marker markers[] = {{5, "50% cut-off"}, {30, "96% cut-off"}};
    tforge_plot_convergence plot = TFORGE_PLOT_CONVERGENCE_INIT;
    plot.title = "Convergence";
    plot.x_label = "evaluations";
    plot.y_label = "best / optimum";
    plot.budget = B;
    plot.series = series;
    plot.n_series = 2;
    plot.random = r;
    plot.markers = markers;
    plot.n_markers = 2;
    for (int log_y = 0; log_y <= 1; log_y++) {
        plot.log_y = log_y;
        plot.log_x = log_y;
        int rc;
        char *svg = render(&plot, &rc);
        assert_int_equal(rc, 0);
        svg_counts counts = check_svg(svg);
        /* one band, two medians, random search */
        assert_int_equal(counts.paths, 4);
        assert_non_null(strstr(svg, "a&lt;b &amp; &quot;c&quot;"));
        assert_non_null(strstr(svg, ">96% cut-off</text>"));
        assert_non_null(strstr(svg, ">random search (expected)</text>"));
        assert_non_null(strstr(svg, "stroke-dasharray=\"6 4\" d=\"M"));
        /* the second series starts after its gap, at budget 4 */
        const char *line = strstr(svg, "<path stroke=\"#D55E00\"");
        assert_non_null(line);
        assert_non_null(strstr(line, "d=\"M"));
        assert_true(counts.texts >= 10); /* title, labels, ticks, legend, markers */
        free(svg);
    }
}

/* A million budgets still make a small file: points are kept per half-pixel column. */
static void long_curves_are_thinned(void **state)
{
    (void)state;
    enum { B = 1000000 };
    double *y = malloc(B * sizeof *y);
    assert_non_null(y);
    for (size_t i = 0; i < B; i++)
        y[i] = 1.0 + 100.0 / sqrt((double)i + 1.0);
    const tforge_plot_series series[] = {{"long", y, y, y}};
    tforge_plot_convergence plot = TFORGE_PLOT_CONVERGENCE_INIT;
    plot.budget = B;
    plot.series = series;
    plot.n_series = 1;
    int rc;
    char *svg = render(&plot, &rc);
    assert_int_equal(rc, 0);
    check_svg(svg);
    assert_true(strlen(svg) < 200000);
    free(svg);
    free(y);
}

static void malformed_descriptions_are_refused(void **state)
{
    (void)state;
    double y[3] = {2, 1, 0};
    tforge_plot_series series[] = {{"s", y, NULL, NULL}};
    tforge_plot_convergence plot = TFORGE_PLOT_CONVERGENCE_INIT;
    plot.budget = 3;
    plot.series = series;
    plot.n_series = 1;
    plot.log_y = 1;
    int rc;
    free(render(&plot, &rc));
    assert_int_equal(rc, TFORGE_EINPUT);
    assert_non_null(strstr(tforge_error_last()->message, "budget 3"));
    plot.log_y = 0;
    series[0].q25 = y;
    free(render(&plot, &rc));
    assert_int_equal(rc, TFORGE_EINPUT);
    series[0].q25 = NULL;
    tforge_plot_marker marker = {4, "late"};
    plot.markers = &marker;
    plot.n_markers = 1;
    free(render(&plot, &rc));
    assert_int_equal(rc, TFORGE_EINPUT);
    plot.n_markers = 0;
    plot.y_min = 5;
    plot.y_max = 1;
    free(render(&plot, &rc));
    assert_int_equal(rc, TFORGE_EINPUT);
    plot.y_min = plot.y_max = NAN;
    double all_nan[3] = {NAN, NAN, NAN};
    series[0].median = all_nan;
    free(render(&plot, &rc));
    assert_int_equal(rc, TFORGE_EINPUT);
    plot.budget = 0;
    free(render(&plot, &rc));
    assert_int_equal(rc, TFORGE_EINPUT);
}

/* Simulated strategies on a synthetic space of 2000 configurations, a third of them failing.
 * "guided" sees a noisy oracle and takes the best-looking of 8 unvisited candidates; "misled"
 * takes the worst-looking of 2. */
enum { EX_N = 2000, EX_B = 400, EX_K = 25 };

static void simulate(double *trace, const double *values, const uint32_t *statuses,
                     const double *noisy, int pick, tforge_rng *rng)
{
    static unsigned char visited[EX_N];
    memset(visited, 0, sizeof visited);
    double best = NAN;
    for (size_t b = 0; b < EX_B; b++) {
        size_t chosen = EX_N;
        int candidates = pick == 0 ? 1 : abs(pick);
        for (int c = 0; c < candidates; c++) {
            size_t i;
            do
                i = tforge_rng_below(rng, EX_N);
            while (visited[i]);
            if (chosen == EX_N || (pick > 0 ? noisy[i] < noisy[chosen] : noisy[i] > noisy[chosen]))
                chosen = i;
        }
        visited[chosen] = 1;
        if (statuses[chosen] == TFORGE_STATUS_OK && !(values[chosen] >= best))
            best = values[chosen];
        trace[b] = best;
    }
}

static void example_plot_from_scores(void **state)
{
    (void)state;
    static double values[EX_N], noisy[EX_N], traces[3][EX_K * EX_B], y[3][3][EX_B], r[EX_B];
    static uint32_t statuses[EX_N];
    tforge_rng rng;
    tforge_rng_seed(&rng, 42);
    for (size_t i = 0; i < EX_N; i++) {
        values[i] = 0.5 + 4.0 * pow(tforge_rng_uniform(&rng), 0.8); /* ms */
        statuses[i] = tforge_rng_uniform(&rng) < 0.33 ? TFORGE_STATUS_COMPILE : TFORGE_STATUS_OK;
        noisy[i] = values[i] * exp(0.25 * (tforge_rng_uniform(&rng) - 0.5));
    }
    tforge_score_space space;
    assert_int_equal(tforge_score_space_init(&space, values, statuses, EX_N), 0);
    const char *names[3] = {"guided (best of 8)", "random (sampled)", "misled (worst of 2)"};
    const int picks[3] = {8, 0, -2};
    double scores[3];
    size_t start = 0, end = 0;
    int rc;
    for (int s = 0; s < 3; s++) {
        for (size_t k = 0; k < EX_K; k++)
            simulate(traces[s] + k * EX_B, values, statuses, noisy, picks[s], &rng);
        tforge_score_stats stats;
        rc = tforge_score_summary(&stats, traces[s], EX_K, EX_B, &space, NULL);
        if (rc < 0)
            fail_msg("%s", tforge_error_last()->message);
        scores[s] = stats.score;
        start = stats.cutoff_start;
        end = stats.cutoff_end;
        for (size_t b = 0; b < EX_B; b++) {
            y[s][0][b] = stats.median[b] / space.optimum;
            y[s][1][b] = stats.q25[b] / space.optimum;
            y[s][2][b] = stats.q75[b] / space.optimum;
            r[b] = stats.random[b] / space.optimum;
        }
        tforge_score_stats_dispose(&stats);
    }
    /* The guided strategy beats random search, which scores near 0, which beats the misled. */
    assert_true(scores[0] > 0.2);
    assert_true(fabs(scores[1]) < 0.2);
    assert_true(scores[2] < scores[1]);

    char title[160];
    snprintf(title, sizeof title, "Synthetic space, %d seeds (scores %.2f, %.2f, %.2f)", EX_K,
             scores[0], scores[1], scores[2]);
    tforge_plot_series series[3];
    for (int s = 0; s < 3; s++)
        series[s] = (tforge_plot_series){names[s], y[s][0], y[s][1], y[s][2]};
    char label_start[32], label_end[32];
    snprintf(label_start, sizeof label_start, "50%% cut-off (%zu)", start);
    snprintf(label_end, sizeof label_end, "96%% cut-off (%zu)", end);
    const tforge_plot_marker markers[] = {{start, label_start}, {end, label_end}};
    tforge_plot_convergence plot = TFORGE_PLOT_CONVERGENCE_INIT;
    plot.title = title;
    plot.x_label = "evaluations";
    plot.y_label = "best found / optimum";
    plot.budget = EX_B;
    plot.series = series;
    plot.n_series = 3;
    plot.random = r;
    plot.markers = markers;
    plot.n_markers = 2;
    plot.log_y = 1;
    char *svg = render(&plot, &rc);
    assert_int_equal(rc, 0);
    assert_int_equal(check_svg(svg).paths, 7);
    /* Set TFORGE_PLOT_EXAMPLE to a file name to keep the picture. */
    const char *keep = getenv("TFORGE_PLOT_EXAMPLE");
    if (keep) {
        FILE *f = fopen(keep, "w");
        assert_non_null(f);
        fputs(svg, f);
        fclose(f);
    }
    free(svg);
    tforge_score_space_dispose(&space);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(structure_counts_and_escaping),
        cmocka_unit_test(long_curves_are_thinned),
        cmocka_unit_test(malformed_descriptions_are_refused),
        cmocka_unit_test(example_plot_from_scores),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
