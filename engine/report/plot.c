/* Convergence plots and the time-energy Pareto front, written as SVG text. */
#include "plot.h"

#include "tforge/error.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Okabe and Ito's colour-blind-safe palette, ordered for contrast on white (the pale yellow
 * last); black is kept for random search. */
static const char *const palette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                      "#E69F00", "#56B4E9", "#F0E442", "#999999"};
#define PALETTE_SIZE (sizeof palette / sizeof palette[0])
#define MAX_TICKS 40

/* A data range mapped onto pixels p0 (at lo) .. p1 (at hi). */
typedef struct axis {
    double lo, hi;
    int log;
    double p0, p1;
} axis;

static double axis_map(const axis *a, double v)
{
    double t = a->log ? log10(v / a->lo) / log10(a->hi / a->lo) : (v - a->lo) / (a->hi - a->lo);
    /* Far-off values stay finite numbers; the clip path hides them. */
    return fmin(fmax(a->p0 + t * (a->p1 - a->p0), -1e4), 1e4);
}

static double nice_step(double raw)
{
    double e = pow(10.0, floor(log10(raw)));
    double f = raw / e;
    return (f <= 1.0 ? 1.0 : f <= 2.0 ? 2.0 : f <= 5.0 ? 5.0 : 10.0) * e;
}

/* Ticks at multiples of a 1-2-5 step, about `target` of them; *step is that step. */
static size_t linear_ticks(double *ticks, double lo, double hi, int target, double *step)
{
    *step = nice_step((hi - lo) / target);
    size_t n = 0;
    for (double k = ceil(lo / *step - 1e-9); k * *step <= hi + 1e-9 * *step && n < MAX_TICKS; k++)
        ticks[n++] = k * *step + 0.0; /* + 0.0 turns -0 into 0 */
    return n;
}

/* Decades (with 2 and 5 between them when the range is short); less than a decade gets linear
 * ticks placed logarithmically. *step is 0 when labels are to be written compactly. */
static size_t log_ticks(double *ticks, double lo, double hi, double *step)
{
    double decades = log10(hi / lo);
    if (decades < 1.0)
        return linear_ticks(ticks, lo, hi, 5, step);
    static const double dense[] = {1.0, 1.5, 2.0, 3.0, 5.0, 7.0}, sparse[] = {1.0, 2.0, 5.0};
    const double *mantissas = decades <= 1.3 ? dense : sparse;
    size_t n_mantissas = decades <= 1.3 ? 6 : decades <= 2.5 ? 3 : 1;
    int stride = decades > 7.0 ? (int)ceil(decades / 7.0) : 1;
    int k0 = (int)floor(log10(lo)), k1 = (int)ceil(log10(hi));
    size_t n = 0;
    for (int k = k0; k <= k1; k++) {
        if ((k - k0) % stride != 0)
            continue;
        for (size_t j = 0; j < n_mantissas && n < MAX_TICKS; j++) {
            double v = mantissas[j] * pow(10.0, k);
            if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9))
                ticks[n++] = v;
        }
    }
    *step = 0.0;
    if (n < 2)
        return linear_ticks(ticks, lo, hi, 5, step);
    return n;
}

static void format_tick(char *out, size_t size, double v, double step)
{
    if (step > 0.0) {
        int decimals = step >= 1.0 ? 0 : (int)ceil(-log10(step) - 1e-9);
        snprintf(out, size, "%.*f", decimals, v);
        return;
    }
    /* %g, with its exponent tidied: 1e+06 -> 1e6, 1e-05 -> 1e-5 */
    char raw[32];
    snprintf(raw, sizeof raw, "%g", v);
    char *e = strchr(raw, 'e');
    if (e) {
        char *digits = e + 1;
        int negative = *digits == '-';
        if (*digits == '-' || *digits == '+')
            digits++;
        while (*digits == '0' && digits[1] != '\0')
            digits++;
        e[1] = '\0';
        snprintf(out, size, "%s%s%s", raw, negative ? "-" : "", digits);
        return;
    }
    snprintf(out, size, "%s", raw);
}

static void write_text(FILE *out, const char *text)
{
    for (const char *c = text; *c; c++) {
        switch (*c) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        case '\'': fputs("&apos;", out); break;
        default: fputc(*c, out);
        }
    }
}

typedef struct frame {
    axis x, y;
} frame;

static long column(const frame *f, size_t index)
{
    return (long)floor(axis_map(&f->x, (double)(index + 1)) * 2.0);
}

/* Path commands for y[from..to] (both included, walked in either direction), keeping the first
 * and the last point of every half-pixel column, so that a million budgets stay a small file. */
static void write_points(FILE *out, const frame *f, const double *y, size_t from, size_t to,
                         char first)
{
    size_t count = (from <= to ? to - from : from - to) + 1;
    long previous = LONG_MIN;
    for (size_t c = 0; c < count; c++) {
        size_t i = from <= to ? from + c : from - c;
        long col = column(f, i);
        long next = c + 1 < count ? column(f, from <= to ? i + 1 : i - 1) : LONG_MIN;
        if (c == 0 || c + 1 == count || col != previous || col != next)
            fprintf(out, "%c%.1f %.1f", c == 0 ? first : 'L', axis_map(&f->x, (double)(i + 1)),
                    axis_map(&f->y, y[i]));
        previous = col;
    }
}

/* The line through the finite values, a new subpath after each gap. */
static void write_line(FILE *out, const frame *f, const double *y, size_t n)
{
    for (size_t i = 0; i < n;) {
        if (!isfinite(y[i])) {
            i++;
            continue;
        }
        size_t end = i;
        while (end + 1 < n && isfinite(y[end + 1]))
            end++;
        write_points(out, f, y, i, end, 'M');
        i = end + 1;
    }
}

/* The band between lo and hi: along hi, back along lo, closed; one subpath per stretch where
 * both are finite. */
static void write_band(FILE *out, const frame *f, const double *lo, const double *hi, size_t n)
{
    for (size_t i = 0; i < n;) {
        if (!isfinite(lo[i]) || !isfinite(hi[i])) {
            i++;
            continue;
        }
        size_t end = i;
        while (end + 1 < n && isfinite(lo[end + 1]) && isfinite(hi[end + 1]))
            end++;
        write_points(out, f, hi, i, end, 'M');
        write_points(out, f, lo, end, i, 'L');
        fputc('Z', out);
        i = end + 1;
    }
}

/* Widens [lo, hi] from one array, checking values a log axis cannot show. */
static int scan_values(double *lo, double *hi, const double *values, size_t n, int log_y,
                       const char *what)
{
    if (!values)
        return 0;
    for (size_t i = 0; i < n; i++) {
        double v = values[i];
        if (isinf(v))
            return tforge_error_set(TFORGE_EINPUT, "plot: %s at budget %zu is infinite", what,
                                    i + 1);
        if (isnan(v))
            continue;
        if (log_y && v <= 0.0)
            return tforge_error_set(TFORGE_EINPUT,
                                    "plot: %s at budget %zu is %g, which a log y axis cannot show",
                                    what, i + 1, v);
        *lo = fmin(*lo, v);
        *hi = fmax(*hi, v);
    }
    return 0;
}

static int y_range(axis *y, const tforge_plot_convergence *p)
{
    double lo = INFINITY, hi = -INFINITY;
    int rc;
    for (size_t s = 0; s < p->n_series; s++) {
        const tforge_plot_series *series = &p->series[s];
        if ((rc = scan_values(&lo, &hi, series->median, p->budget, p->log_y, "a median")) < 0 ||
            (rc = scan_values(&lo, &hi, series->q25, p->budget, p->log_y, "a 25th percentile")) <
                0 ||
            (rc = scan_values(&lo, &hi, series->q75, p->budget, p->log_y, "a 75th percentile")) <
                0)
            return rc;
    }
    if ((rc = scan_values(&lo, &hi, p->random, p->budget, p->log_y, "random search")) < 0)
        return rc;
    if (lo > hi)
        return tforge_error_set(TFORGE_EINPUT, "plot: no finite value to draw");
    /* Pad the data's own ends by 4% (of the log range on a log axis); a flat curve gets room. */
    double a = p->log_y ? log10(lo) : lo, b = p->log_y ? log10(hi) : hi;
    double pad = a < b ? 0.04 * (b - a) : (p->log_y ? 0.05 : fmax(0.05 * fabs(a), 0.5));
    a -= pad;
    b += pad;
    y->lo = isnan(p->y_min) ? (p->log_y ? pow(10.0, a) : a) : p->y_min;
    y->hi = isnan(p->y_max) ? (p->log_y ? pow(10.0, b) : b) : p->y_max;
    if (!(y->lo < y->hi) || (p->log_y && !(y->lo > 0.0)))
        return tforge_error_set(TFORGE_EINPUT,
                                "plot: y range [%g, %g] is empty%s (y_min, y_max)", y->lo, y->hi,
                                p->log_y ? " or not positive" : "");
    y->log = p->log_y;
    return 0;
}

static int check(const tforge_plot_convergence *p)
{
    if (!p)
        return tforge_error_set(TFORGE_EINPUT, "plot: no plot description");
    if (p->version != TFORGE_PLOT_CONVERGENCE_VERSION)
        return tforge_error_set(TFORGE_EINPUT, "plot: version %u, expected %u", p->version,
                                TFORGE_PLOT_CONVERGENCE_VERSION);
    if (p->budget == 0)
        return tforge_error_set(TFORGE_EINPUT, "plot: budget must be at least 1");
    if (p->n_series > 0 && !p->series)
        return tforge_error_set(TFORGE_EINPUT, "plot: %zu series but no array", p->n_series);
    for (size_t s = 0; s < p->n_series; s++) {
        const tforge_plot_series *series = &p->series[s];
        if (!series->name || !series->median || !series->q25 != !series->q75)
            return tforge_error_set(TFORGE_EINPUT,
                                    "plot: series %zu needs a name, a median, and q25 and q75 "
                                    "both or neither",
                                    s);
    }
    if (p->n_markers > 0 && !p->markers)
        return tforge_error_set(TFORGE_EINPUT, "plot: %zu markers but no array", p->n_markers);
    for (size_t m = 0; m < p->n_markers; m++)
        if (p->markers[m].budget < 1 || p->markers[m].budget > p->budget)
            return tforge_error_set(TFORGE_EINPUT, "plot: marker %zu at budget %zu, outside 1..%zu",
                                    m, p->markers[m].budget, p->budget);
    if ((p->width && p->width < 300) || (p->height && p->height < 200))
        return tforge_error_set(TFORGE_EINPUT, "plot: %u x %u pixels is too small (300 x 200 at "
                                               "least)",
                                p->width, p->height);
    return 0;
}

static void write_axes(FILE *out, const frame *f, const char *x_label, const char *y_label)
{
    double ticks[MAX_TICKS], step;
    char label[48];
    double left = f->x.p0, right = f->x.p1, bottom = f->y.p0, top = f->y.p1;

    size_t n = f->x.log ? log_ticks(ticks, f->x.lo, f->x.hi, &step)
                        : linear_ticks(ticks, f->x.lo, f->x.hi, 8, &step);
    for (size_t i = 0; i < n; i++) {
        double x = axis_map(&f->x, ticks[i]);
        format_tick(label, sizeof label, ticks[i], step);
        fprintf(out,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e6e6e6\"/>\n"
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333333\"/>\n"
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                x, top, x, bottom, x, bottom, x, bottom + 5, x, bottom + 18, label);
    }
    n = f->y.log ? log_ticks(ticks, f->y.lo, f->y.hi, &step)
                 : linear_ticks(ticks, f->y.lo, f->y.hi, 6, &step);
    for (size_t i = 0; i < n; i++) {
        double y = axis_map(&f->y, ticks[i]);
        format_tick(label, sizeof label, ticks[i], step);
        fprintf(out,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e6e6e6\"/>\n"
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333333\"/>\n"
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                left, y, right, y, left - 5, y, left, y, left - 8, y + 4, label);
    }
    fprintf(out,
            "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
            "stroke=\"#333333\"/>\n",
            left, top, right - left, bottom - top);
    if (x_label) {
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"13\">",
                (left + right) / 2, bottom + 40);
        write_text(out, x_label);
        fputs("</text>\n", out);
    }
    if (y_label) {
        double x = 18, y = (top + bottom) / 2;
        fprintf(out,
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"13\" "
                "transform=\"rotate(-90 %.1f %.1f)\">",
                x, y, x, y);
        write_text(out, y_label);
        fputs("</text>\n", out);
    }
}

/* Each marker's label sits above the frame, right of its line (left of it near the right edge);
 * a label that would overlap the one before goes one row up. Widths are estimated, about 6.2
 * pixels a character at 11 pixels, since SVG text cannot be measured here. */
static void write_markers(FILE *out, const frame *f, const tforge_plot_convergence *p)
{
    double row_end[2] = {-INFINITY, -INFINITY};
    for (size_t m = 0; m < p->n_markers; m++) {
        double x = axis_map(&f->x, (double)p->markers[m].budget);
        fprintf(out,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555555\" "
                "stroke-width=\"1.2\" stroke-dasharray=\"2 3\"/>\n",
                x, f->y.p1, x, f->y.p0);
        const char *label = p->markers[m].label;
        if (!label)
            continue;
        double w = 6.2 * (double)strlen(label), from = x + 3;
        int right = from + w > f->x.p1 + 20;
        if (right)
            from = x - 3 - w;
        int row = from > row_end[0] + 8 ? 0 : 1;
        row_end[row] = from + w;
        fprintf(out,
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"11\" "
                "fill=\"#555555\">",
                right ? x - 3 : x + 3, f->y.p1 - 5 - 13 * row, right ? "end" : "start");
        write_text(out, label);
        fputs("</text>\n", out);
    }
}

static void write_legend(FILE *out, const frame *f, const tforge_plot_convergence *p)
{
    static const char random_label[] = "random search (expected)";
    size_t entries = p->n_series + (p->random ? 1 : 0);
    size_t longest = p->random ? strlen(random_label) : 0;
    if (entries == 0)
        return;
    for (size_t s = 0; s < p->n_series; s++)
        longest = strlen(p->series[s].name) > longest ? strlen(p->series[s].name) : longest;
    /* About 6.5 pixels a character at 12 pixels: a box that fits without measuring text. */
    double width = 44 + 6.5 * (double)longest, height = 8 + 18 * (double)entries;
    double x = f->x.p1 - width - 10, y = f->y.p1 + 10;
    fprintf(out,
            "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#ffffff\" "
            "fill-opacity=\"0.85\" stroke=\"#bbbbbb\"/>\n",
            x, y, width, height);
    for (size_t e = 0; e < entries; e++) {
        double row = y + 13 + 18 * (double)e;
        int is_random = e == p->n_series;
        const char *colour = is_random ? "#000000" : palette[e % PALETTE_SIZE];
        if (!is_random && p->series[e].q25)
            fprintf(out,
                    "<rect x=\"%.1f\" y=\"%.1f\" width=\"24\" height=\"10\" fill=\"%s\" "
                    "fill-opacity=\"0.25\"/>\n",
                    x + 8, row - 5, colour);
        fprintf(out,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                "stroke-width=\"2\"%s/>\n",
                x + 8, row, x + 32, row, colour,
                is_random ? " stroke-dasharray=\"6 4\"" : "");
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\">", x + 38, row + 4);
        write_text(out, is_random ? random_label : p->series[e].name);
        fputs("</text>\n", out);
    }
}

/* The document's head: its size, a white ground, the clip of the plot area and the title. */
static void write_head(FILE *out, const frame *f, double width, double height, const char *title)
{
    fprintf(out,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
            "viewBox=\"0 0 %.0f %.0f\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" "
            "font-size=\"12\" fill=\"#222222\">\n"
            "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n"
            "<defs><clipPath id=\"plot-area\"><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
            "height=\"%.1f\"/></clipPath></defs>\n",
            width, height, width, height, width, height, f->x.p0, f->y.p1, f->x.p1 - f->x.p0,
            f->y.p0 - f->y.p1);
    if (title) {
        fprintf(out,
                "<text x=\"%.1f\" y=\"24\" text-anchor=\"middle\" font-size=\"16\" "
                "font-weight=\"bold\">",
                (f->x.p0 + f->x.p1) / 2);
        write_text(out, title);
        fputs("</text>\n", out);
    }
}

int tforge_plot_convergence_svg(FILE *out, const tforge_plot_convergence *p)
{
    int rc = check(p);
    if (rc < 0)
        return rc;
    if (!out)
        return tforge_error_set(TFORGE_EINPUT, "plot: no output stream");
    double width = p->width ? p->width : 800, height = p->height ? p->height : 500;
    frame f = {.x = {.lo = p->log_x ? 1.0 : 0.0, .hi = (double)p->budget, .log = p->log_x,
                     .p0 = 72, .p1 = width - 24},
               .y = {.p0 = height - 56, .p1 = 62}};
    if (f.x.hi <= f.x.lo)
        f.x.hi = p->log_x ? 10.0 : 1.0; /* a single budget still gets a visible axis */
    if ((rc = y_range(&f.y, p)) < 0)
        return rc;

    write_head(out, &f, width, height, p->title);
    write_axes(out, &f, p->x_label, p->y_label);
    write_markers(out, &f, p);

    /* Bands under every line, random search under the strategies. */
    fputs("<g clip-path=\"url(#plot-area)\" fill=\"none\" stroke-linejoin=\"round\">\n", out);
    for (size_t s = 0; s < p->n_series; s++) {
        if (!p->series[s].q25)
            continue;
        fprintf(out, "<path fill=\"%s\" fill-opacity=\"0.2\" stroke=\"none\" d=\"",
                palette[s % PALETTE_SIZE]);
        write_band(out, &f, p->series[s].q25, p->series[s].q75, p->budget);
        fputs("\"/>\n", out);
    }
    if (p->random) {
        fputs("<path stroke=\"#000000\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\" d=\"", out);
        write_line(out, &f, p->random, p->budget);
        fputs("\"/>\n", out);
    }
    for (size_t s = 0; s < p->n_series; s++) {
        fprintf(out, "<path stroke=\"%s\" stroke-width=\"2\" d=\"", palette[s % PALETTE_SIZE]);
        write_line(out, &f, p->series[s].median, p->budget);
        fputs("\"/>\n", out);
    }
    fputs("</g>\n", out);
    write_legend(out, &f, p);
    fputs("</svg>\n", out);
    if (fflush(out) != 0 || ferror(out))
        return tforge_error_set(TFORGE_EIO, "plot: writing the SVG failed");
    return 0;
}

/* ---- the time-energy Pareto front ---- */

size_t tforge_plot_pareto_front(size_t *front, const double *x, const double *y, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x[i]) || !isfinite(y[i]))
            continue;
        int dominated = 0;
        for (size_t j = 0; j < n && !dominated; j++)
            dominated = j != i && isfinite(x[j]) && isfinite(y[j]) && x[j] <= x[i] &&
                        y[j] <= y[i] && (x[j] < x[i] || y[j] < y[i] || j < i);
        if (!dominated) { /* insertion by x: fronts are short */
            size_t at = k++;
            while (at > 0 && x[front[at - 1]] > x[i]) {
                front[at] = front[at - 1];
                at--;
            }
            front[at] = i;
        }
    }
    return k;
}

/* [lo, hi] of the finite values, padded by 6%: a single value gets room of its own. */
static int data_range(axis *a, const double *v, size_t n, const char *what)
{
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i])) {
            lo = fmin(lo, v[i]);
            hi = fmax(hi, v[i]);
        }
    if (lo > hi)
        return tforge_error_set(TFORGE_EINPUT, "plot: no point has a finite %s", what);
    double pad = lo < hi ? 0.06 * (hi - lo) : fmax(0.05 * fabs(lo), 1e-12);
    a->lo = lo - pad;
    a->hi = hi + pad;
    return 0;
}

int tforge_plot_pareto_svg(FILE *out, const tforge_plot_pareto *p)
{
    if (!p || p->version != TFORGE_PLOT_PARETO_VERSION)
        return tforge_error_set(TFORGE_EINPUT, "plot: a Pareto plot of version %u, expected %u",
                                p ? p->version : 0, TFORGE_PLOT_PARETO_VERSION);
    if (!out || !p->x || !p->y || (p->n_winners && !p->winners))
        return tforge_error_set(TFORGE_EINPUT, "plot: a Pareto plot needs an output, x and y, "
                                "and its winners' array");
    for (size_t w = 0; w < p->n_winners; w++)
        if (p->winners[w].index >= p->n || !p->winners[w].label)
            return tforge_error_set(TFORGE_EINPUT, "plot: winner %zu has no label or no point "
                                    "(index %zu of %zu)", w, p->winners[w].index, p->n);
    double width = p->width ? p->width : 800, height = p->height ? p->height : 500;
    frame f = {.x = {.p0 = 72, .p1 = width - 24}, .y = {.p0 = height - 56, .p1 = 62}};
    int rc = data_range(&f.x, p->x, p->n, "x");
    if (!rc)
        rc = data_range(&f.y, p->y, p->n, "y");
    size_t *front = rc ? NULL : malloc(p->n * sizeof *front);
    if (rc || !front)
        return rc ? rc : tforge_error_set(TFORGE_ENOMEM, "out of memory");
    size_t k = tforge_plot_pareto_front(front, p->x, p->y, p->n);

    write_head(out, &f, width, height, p->title);
    write_axes(out, &f, p->x_label, p->y_label);
    fputs("<g clip-path=\"url(#plot-area)\">\n", out);
    for (size_t i = 0; i < p->n; i++)
        if (isfinite(p->x[i]) && isfinite(p->y[i]))
            fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"#999999\"/>\n",
                    axis_map(&f.x, p->x[i]), axis_map(&f.y, p->y[i]));
    /* the front as a staircase: nothing below or left of it was measured */
    fprintf(out, "<path class=\"front\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" d=\"",
            palette[0]);
    for (size_t i = 0; i < k; i++) {
        double x = axis_map(&f.x, p->x[front[i]]), y = axis_map(&f.y, p->y[front[i]]);
        if (i == 0)
            fprintf(out, "M%.1f %.1f", x, y);
        else
            fprintf(out, "H%.1f V%.1f", x, y);
    }
    fputs("\"/>\n", out);
    for (size_t i = 0; i < k; i++)
        fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"/>\n",
                axis_map(&f.x, p->x[front[i]]), axis_map(&f.y, p->y[front[i]]), palette[0]);
    fputs("</g>\n", out);
    /* each winner ringed in a colour of its own, named in the legend */
    for (size_t w = 0; w < p->n_winners; w++)
        fprintf(out, "<circle class=\"winner\" cx=\"%.1f\" cy=\"%.1f\" r=\"%.0f\" "
                "fill=\"none\" stroke=\"%s\" stroke-width=\"2.5\"/>\n",
                axis_map(&f.x, p->x[p->winners[w].index]),
                axis_map(&f.y, p->y[p->winners[w].index]), 8.0 + 4.0 * (double)w,
                palette[(w + 1) % PALETTE_SIZE]);
    size_t longest = strlen("Pareto front");
    for (size_t w = 0; w < p->n_winners; w++)
        longest = strlen(p->winners[w].label) > longest ? strlen(p->winners[w].label) : longest;
    double lw = 44 + 6.5 * (double)longest, lh = 8 + 18 * (double)(p->n_winners + 1);
    double lx = f.x.p1 - lw - 10, ly = f.y.p1 + 10;
    fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#ffffff\" "
            "fill-opacity=\"0.85\" stroke=\"#bbbbbb\"/>\n"
            "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
            "stroke-width=\"2\"/>\n<text x=\"%.1f\" y=\"%.1f\">Pareto front</text>\n",
            lx, ly, lw, lh, lx + 8, ly + 13, lx + 32, ly + 13, palette[0], lx + 38, ly + 17);
    for (size_t w = 0; w < p->n_winners; w++) {
        double row = ly + 13 + 18 * (double)(w + 1);
        fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"none\" stroke=\"%s\" "
                "stroke-width=\"2.5\"/>\n<text x=\"%.1f\" y=\"%.1f\">",
                lx + 20, row, palette[(w + 1) % PALETTE_SIZE], lx + 38, row + 4);
        write_text(out, p->winners[w].label);
        fputs("</text>\n", out);
    }
    fputs("</svg>\n", out);
    free(front);
    if (fflush(out) != 0 || ferror(out))
        return tforge_error_set(TFORGE_EIO, "plot: writing the SVG failed");
    return 0;
}
