/* The time-energy Pareto front: which points it keeps, its SVG (the front, every objective's
 * winner ringed), and the tune report drawing it only where energy was measured. */
#include "file.h"
#include "plot.h"
#include "tforge/error.h"
#include "tforge/measurement.h"
#include "tune_report.h"

#include "support/tmpdir.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

static size_t count(const char *text, const char *what)
{
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, what)); p += strlen(what))
        n++;
    return n;
}

static void the_front_keeps_what_nothing_beats_in_both(void **state)
{
    (void)state;
    /* 2 is beaten by 1 in both, 4 equals 1 (the first of equals stays), 5 has no time */
    const double ms[] = {1.0, 2.0, 3.0, 4.0, 2.0, NAN, 0.5};
    const double joules[] = {5.0, 3.0, 4.0, 1.0, 3.0, 0.1, 9.0};
    size_t front[7];
    size_t n = tforge_plot_pareto_front(front, ms, joules, 7);
    assert_int_equal(n, 4);
    const size_t expected[] = {6, 0, 1, 3}; /* by time */
    assert_memory_equal(front, expected, sizeof expected);
}

static void the_svg_draws_the_front_and_rings_each_winner(void **state)
{
    (void)state;
    const double ms[] = {1.0, 2.0, 3.0, 4.0};
    const double joules[] = {5.0, 3.0, 4.0, 1.0};
    const tforge_plot_winner winners[] = {{0, "fastest"}, {3, "least energy"}, {1, "edp"}};
    tforge_plot_pareto plot = {TFORGE_PLOT_PARETO_VERSION, "t", "ms", "J", ms, joules, 4,
                               winners, 3, 0, 0};
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    assert_int_equal(tforge_plot_pareto_svg(f, &plot), 0);
    fclose(f);
    assert_int_equal(count(text, "class=\"winner\""), 3);
    assert_int_equal(count(text, "<circle"), 4 + 3 + 3 + 3); /* points, front, rings, legend */
    assert_non_null(strstr(text, "class=\"front\""));
    assert_non_null(strstr(text, ">least energy<"));
    free(text);

    tforge_plot_winner stray = {4, "nowhere"};
    plot.winners = &stray;
    plot.n_winners = 1;
    f = open_memstream(&text, &size);
    assert_int_equal(tforge_plot_pareto_svg(f, &plot), TFORGE_EINPUT);
    assert_non_null(strstr(tforge_error_last()->message, "winner 0"));
    fclose(f);
    free(text);
}

static tforge_loop_eval eval(double ms, double joules)
{
    tforge_loop_eval e = {0};
    tforge_measurement_init(&e.m);
    e.m.status = TFORGE_STATUS_OK;
    e.m.value = e.m.median_ms = ms;
    if (!isnan(joules))
        assert_int_equal(tforge_measurement_set_metric(&e.m, "energy_j", joules), 0);
    return e;
}

/* The report of a run whose evaluations are `evals`; whether it drew pareto.svg. */
static int report_draws_pareto(tforge_loop_eval *evals, size_t n)
{
    char path[512];
    snprintf(path, sizeof path, "%s/pareto.svg", tmpdir);
    unlink(path);
    tforge_loop_outcome out = {0};
    out.evals = evals;
    out.n_evals = n;
    out.best = out.baseline = -1;
    tforge_report_tune report = {0};
    report.task_arg = report.kernel = report.task_path = "k.json";
    report.backend = "replay";
    report.backend_note = "";
    report.strategy = "exhaustive";
    report.source = __FILE__; /* best_variant.py copies the kernel file: any file will do */
    report.outcome = &out;
    assert_int_equal(tforge_report_write_tune(tmpdir, &report), 0);
    return access(path, R_OK) == 0;
}

static void the_report_draws_it_only_where_energy_was_measured(void **state)
{
    (void)state;
    tforge_loop_eval timed[] = {eval(1.0, NAN), eval(2.0, NAN)};
    assert_false(report_draws_pareto(timed, 2));
    tforge_loop_eval measured[] = {eval(1.0, 0.4), eval(2.0, 0.1), eval(0.5, NAN)};
    assert_true(report_draws_pareto(measured, 3));
    char path[512], *text = NULL;
    size_t size = 0;
    snprintf(path, sizeof path, "%s/report.md", tmpdir);
    assert_int_equal(tforge_file_read(&text, &size, path), 0);
    assert_non_null(strstr(text, "(pareto.svg)"));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_front_keeps_what_nothing_beats_in_both),
        cmocka_unit_test(the_svg_draws_the_front_and_rings_each_winner),
        cmocka_unit_test(the_report_draws_it_only_where_energy_was_measured),
    };
    return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
