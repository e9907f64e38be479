/* What `tforge tune` leaves in its results folder: the config to paste, the variant, the
 * convergence plot, the report and the result document. Everything written into generated
 * Python is escaped. */
#include "tune_report.h"

#include "plot.h"
#include "tforge/error.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Text written into generated Python: every byte that could end a comment or a string, or make
 * the file invalid UTF-8, as an escape (\n, \xNN), so that a file name never becomes code. */
static void write_escaped(FILE *f, const char *text)
{
    for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
        if (*c == '\\' || *c == '\'')
            fprintf(f, "\\%c", *c);
        else if (*c == '\n')
            fputs("\\n", f);
        else if (*c < 0x20 || *c >= 0x7f)
            fprintf(f, "\\x%02x", *c);
        else
            fputc(*c, f);
    }
}

static void write_triton_config(FILE *f, const char *config)
{
    static const char *const launch[] = {"num_warps", "num_stages", "num_ctas", "maxnreg"};
    cJSON *o = cJSON_Parse(config);
    fputs("triton.Config({", f);
    int first = 1;
    for (cJSON *v = o ? o->child : NULL; v; v = v->next) {
        int is_launch = 0;
        for (int i = 0; i < 4; i++)
            is_launch |= strcmp(v->string, launch[i]) == 0;
        if (is_launch)
            continue;
        fprintf(f, "%s'", first ? "" : ", ");
        write_escaped(f, v->string);
        fputs("': ", f);
        if (cJSON_IsBool(v)) {
            fputs(cJSON_IsTrue(v) ? "True" : "False", f);
        } else if (cJSON_IsString(v)) {
            fputc('\'', f);
            write_escaped(f, v->valuestring);
            fputc('\'', f);
        } else {
            char *text = cJSON_PrintUnformatted(v);
            fputs(text ? text : "None", f);
            free(text);
        }
        first = 0;
    }
    fputs("}", f);
    for (int i = 0; i < 4; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, launch[i]);
        if (cJSON_IsNumber(v))
            fprintf(f, ", %s=%d", launch[i], v->valueint);
    }
    fputs(")", f);
    cJSON_Delete(o);
}

static FILE *open_out(const char *dir, const char *name, char *path, size_t size)
{
    snprintf(path, size, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f)
        tforge_error_set(TFORGE_EIO, "cannot write %s: %s", path, strerror(errno));
    return f;
}

int tforge_report_write_tune(const char *dir, const tforge_report_tune *r)
{
    const tforge_loop_outcome *o = r->outcome;
    char path[4096];
    FILE *f;
    const char *best = o->best >= 0 ? o->evals[o->best].config : NULL;
    /* the config, ready to paste */
    if (!(f = open_out(dir, "best_config.py", path, sizeof path)))
        return TFORGE_EIO;
    fputs("# Found by `tforge tune ", f);
    write_escaped(f, r->task_arg);
    fputs("` (backend ", f);
    write_escaped(f, r->backend);
    fputs(", strategy ", f);
    write_escaped(f, r->strategy);
    fprintf(f, ", seed %llu).\nimport triton\n\n", (unsigned long long)r->seed);
    if (best) {
        fputs("BEST = ", f);
        write_triton_config(f, best);
        fprintf(f, "  # %.4g ms, %.2fx the baseline\n", o->best_ms, o->speedup);
    } else {
        fputs("BEST = None  # no candidate was timed (see report.md)\n", f);
    }
    fclose(f);
    /* the variant's source: parameters only for now, so the kernel file with its config */
    FILE *in = fopen(r->source, "r");
    if (!(f = open_out(dir, "best_variant.py", path, sizeof path))) {
        if (in)
            fclose(in);
        return TFORGE_EIO;
    }
    fputs("# ", f);
    write_escaped(f, r->source);
    fputs(", tuned by tforge. The source is unchanged; launch it with\n# ", f);
    if (best)
        write_triton_config(f, best);
    else
        fputs("(no timed candidate)", f);
    fputs("\n\n", f);
    for (int ch; in && (ch = fgetc(in)) != EOF;)
        fputc(ch, f);
    if (in)
        fclose(in);
    fclose(f);
    /* the convergence plot: best so far over evaluations */
    size_t n = o->n_evals;
    double *curve = malloc((n ? n : 1) * sizeof *curve);
    size_t k = 0;
    for (size_t i = 0; curve && i < n; i++)
        if (!o->evals[i].baseline)
            curve[k++] = o->evals[i].best;
    int has_time = k && !isnan(curve[k - 1]);
    if (curve && has_time && (f = open_out(dir, "convergence.svg", path, sizeof path))) {
        tforge_plot_series series = {r->strategy, curve, NULL, NULL};
        tforge_plot_marker none[1];
        tforge_plot_convergence plot = TFORGE_PLOT_CONVERGENCE_INIT;
        char title[256];
        snprintf(title, sizeof title, "%s: best so far (%s backend)", r->kernel, r->backend);
        plot.title = title;
        plot.x_label = "evaluations";
        plot.y_label = "best so far (ms)";
        plot.budget = k;
        plot.series = &series;
        plot.n_series = 1;
        plot.markers = none;
        tforge_plot_convergence_svg(f, &plot);
        fclose(f);
    }
    free(curve);
    /* the report */
    if (!(f = open_out(dir, "report.md", path, sizeof path)))
        return TFORGE_EIO;
    fprintf(f, "# tforge tune: %s\n\n", r->kernel);
    fprintf(f, "- task: `%s`\n- backend: %s%s\n- strategy: %s, seed %llu, %zu evaluations "
               "(%zu from a resumed run), %.1f s, %u workers replaced\n\n",
            r->task_path, r->backend, r->backend_note, r->strategy, (unsigned long long)r->seed,
            o->n_evals, o->n_resumed, o->seconds, o->restarts);
    if (o->best >= 0 && o->baseline >= 0)
        fprintf(f, "| | config | median (ms) |\n|---|---|---|\n| baseline | `%s` | %.4g |\n"
                   "| best | `%s` | %.4g |\n\nSpeedup **%.2fx** (medians of the final "
                   "interleaved re-timing).\n\n",
                o->evals[o->baseline].config, o->baseline_ms, best, o->best_ms, o->speedup);
    if (has_time)
        fputs("![best so far](convergence.svg)\n\n", f);
    size_t counts[6] = {0};
    for (size_t i = 0; i < n; i++)
        counts[o->evals[i].m.status < TFORGE_STATUS_COUNT ? o->evals[i].m.status : 2]++;
    fputs("| status | evaluations |\n|---|---|\n", f);
    for (int st = 0; st < 6; st++)
        if (counts[st])
            fprintf(f, "| %s | %zu |\n", tforge_status_name((tforge_status)st), counts[st]);
    fputs("\n| # | config | status | median (ms) | note (failure, or registers, spills and shared "
          "memory) |\n|---|---|---|---|---|\n", f);
    for (size_t i = 0; i < n; i++) {
        const tforge_measurement *m = &o->evals[i].m;
        char metrics[1024];
        tforge_measurement_metrics_json(m, metrics, sizeof metrics);
        char value[32] = "-";
        if (!isnan(m->value))
            snprintf(value, sizeof value, "%.4g", m->value);
        fprintf(f, "| %zu%s | `%s` | %s | %s | %s |\n", i + 1,
                o->evals[i].baseline ? " (baseline)" : "", o->evals[i].config,
                tforge_status_name(m->status), value, m->message[0] ? m->message : metrics);
    }
    fclose(f);
    /* the result */
    if (!(f = open_out(dir, "result.json", path, sizeof path)))
        return TFORGE_EIO;
    fputs(r->result_json ? r->result_json : "{}", f);
    fputc('\n', f);
    fclose(f);
    return 0;
}

