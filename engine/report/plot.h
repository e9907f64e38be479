/* Convergence plots as SVG text: best-so-far over budget for several strategies, each as its
 * median line over seeds with a band from the 25th to the 75th percentile, random search's
 * expectation dashed, and vertical markers (the score's cut-off budgets); and the Pareto front
 * of two objectives (time and energy) over what was measured. Plain C, no library.
 * Numbers are written with printf, so the C locale's decimal point is assumed. */
#ifndef TFORGE_ENGINE_PLOT_H
#define TFORGE_ENGINE_PLOT_H

#include <math.h>
#include <stddef.h>
#include <stdio.h>

/* One strategy over budgets 1..budget. Arrays have `budget` entries; NaN leaves a gap. */
typedef struct tforge_plot_series {
    const char *name;        /* the legend's label */
    const double *median;    /* the line */
    const double *q25, *q75; /* the band: both, or both NULL for none */
} tforge_plot_series;

/* A vertical line at a budget, labelled at its top ("50% cut-off"). */
typedef struct tforge_plot_marker {
    size_t budget;
    const char *label;
} tforge_plot_marker;

typedef struct tforge_plot_convergence {
    unsigned int version;
    const char *title, *x_label, *y_label; /* NULL for none */
    size_t budget;                         /* x runs over evaluations 1..budget */
    const tforge_plot_series *series;      /* drawn in the palette's order */
    size_t n_series;                       /* at most 8 get distinct colours */
    const double *random;                  /* random search's expectation; NULL for none */
    const tforge_plot_marker *markers;
    size_t n_markers;
    int log_x, log_y;     /* logarithmic axes (values must then be positive) */
    double y_min, y_max;  /* the y range; NaN each for the data's own (padded) */
    unsigned width, height; /* pixels; 0 each for 800 x 500 */
} tforge_plot_convergence;

#define TFORGE_PLOT_CONVERGENCE_VERSION 1
#define TFORGE_PLOT_CONVERGENCE_INIT                                                              \
    {                                                                                             \
        .version = TFORGE_PLOT_CONVERGENCE_VERSION, .y_min = NAN, .y_max = NAN                    \
    }

/* Writes the plot as one SVG document to `out`. Values outside the y range are clipped at the
 * frame. Returns TFORGE_EINPUT for a malformed description (the message names the field),
 * TFORGE_EIO when writing fails. */
int tforge_plot_convergence_svg(FILE *out, const tforge_plot_convergence *plot);

/* A point ringed and named in the legend ("latency's winner"). */
typedef struct tforge_plot_winner {
    size_t index; /* into x and y */
    const char *label;
} tforge_plot_winner;

/* Every measured point of two objectives, both minimised (x: ms, y: J), grey; the points no
 * other beats in both, joined as a staircase; the winners ringed. */
typedef struct tforge_plot_pareto {
    unsigned int version;
    const char *title, *x_label, *y_label; /* NULL for none */
    const double *x, *y;                   /* n each; a point with a NaN is left out */
    size_t n;
    const tforge_plot_winner *winners;
    size_t n_winners;
    unsigned width, height; /* pixels; 0 each for 800 x 500 */
} tforge_plot_pareto;
#define TFORGE_PLOT_PARETO_VERSION 1

/* The Pareto front of the points with finite x and y: those no other is at most in both and
 * below in one (of equal points, the first), as indices into x and y, by x ascending, into
 * `front` (n entries); how many. */
size_t tforge_plot_pareto_front(size_t *front, const double *x, const double *y, size_t n);

/* Writes the plot as one SVG document to `out`. TFORGE_EINPUT for a malformed description or
 * no finite point, TFORGE_EIO when writing fails. */
int tforge_plot_pareto_svg(FILE *out, const tforge_plot_pareto *plot);

#endif
