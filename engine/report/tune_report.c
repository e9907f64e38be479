/* What `tforge tune` leaves in its results folder: the config to paste, the variant, the
 * convergence plot, the report and the result document. Everything written into generated
 * Python is escaped. */
#include "tune_report.h"

#include "plot.h"
#include "strategy.h"
#include "file.h"
#include "tforge/error.h"
#include "tforge/measurement.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Text written into generated Python: every byte that could end a comment or a string, or make
 * the file invalid UTF-8, as an escape (\n, \xNN), so that a file name never becomes code. */
void tforge_report_python_text(FILE *f, const char *text)
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

void tforge_report_triton_config(FILE *f, const char *config)
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
        tforge_report_python_text(f, v->string);
        fputs("': ", f);
        if (cJSON_IsBool(v)) {
            fputs(cJSON_IsTrue(v) ? "True" : "False", f);
        } else if (cJSON_IsString(v)) {
            fputc('\'', f);
            tforge_report_python_text(f, v->valuestring);
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

/* best_variant.py: the winner's variant (or the kernel file) with the config to launch it
 * with, its launch hook at r->hook_at; best_variant.diff beside it when the source was
 * rewritten. */
static int write_variant(const char *dir, const tforge_report_tune *r, const char *best)
{
    char path[4096], *own = NULL;
    size_t size = 0;
    const char *text = r->variant;
    if (!text) {
        int rc = tforge_file_read(&own, &size, r->source);
        if (rc)
            return rc;
        text = own;
    } else {
        size = strlen(text);
    }
    FILE *f = open_out(dir, "best_variant.py", path, sizeof path);
    if (!f) {
        free(own);
        return TFORGE_EIO;
    }
    fputs("# ", f);
    tforge_report_python_text(f, r->source);
    fputs(r->variant ? ", rewritten by tforge (best_variant.diff says how); launch it with\n# "
                     : ", tuned by tforge. The source is unchanged; launch it with\n# ",
          f);
    if (best)
        tforge_report_triton_config(f, best);
    else
        fputs("(no timed candidate)", f);
    const char *hook = best ? r->launch_hook : NULL;
    if (hook) {
        fputs("\n# (the tforge block below gives every launch of ", f);
        tforge_report_python_text(f, r->kernel);
        fputs(" that config, as the tune launched it)", f);
    }
    if (best && r->dropped) {
        fputs("\n# Note: the file's own launch of the kernel does not pass ", f);
        tforge_report_python_text(f, r->dropped);
        fputs(": the tune ran (and timed) the kernel without them, whatever the config says.", f);
    }
    fputs("\n\n", f);
    size_t at = hook && r->hook_at < size ? r->hook_at : size;
    fwrite(text, 1, at, f);
    if (hook)
        fputs(hook, f);
    fwrite(text + at, 1, size - at, f);
    free(own);
    fclose(f);
    if (!r->variant || !r->diff)
        return 0;
    if (!(f = open_out(dir, "best_variant.diff", path, sizeof path)))
        return TFORGE_EIO;
    fputs(r->diff, f);
    fclose(f);
    return 0;
}

/* Which transforms apply, which the winner uses, and what each is worth. */
static void write_transforms(FILE *f, const tforge_report_tune *r)
{
    const tforge_transforms *t = r->transforms;
    if (!t)
        return;
    fputs("## Source transforms\n\n", f);
    if (!tforge_transforms_count(t))
        fputs("None applies to this kernel.\n", f);
    for (size_t i = 0; i < tforge_transforms_count(t); i++)
        fprintf(f, "- `%s`: %s\n", tforge_transforms_id(t, i), tforge_transforms_describe(t, i));
    for (size_t i = 0; i < tforge_transforms_n_skipped(t); i++)
        fprintf(f, "%s`%s`%s", i ? ", " : "\nDo not apply: ", tforge_transforms_skipped(t, i),
                i + 1 == tforge_transforms_n_skipped(t) ? ".\n" : "");
    const tforge_loop_outcome *o = r->outcome;
    const char *used = o->best >= 0 && r->rewrites ? r->rewrites[o->best] : NULL;
    fprintf(f, "\nThe winner rewrites %s%s%s.\n", used ? "`" : "", used ? used : "nothing",
            used ? "` (best_variant.diff)" : "");
    if (!r->n_ablation) {
        fputc('\n', f);
        return;
    }
    fputs("\nWhat each transform is worth: the winner with that transform taken out, checked, "
          "then re-timed interleaved with the winner.\n\n| without | status | winner (ms) | "
          "without it (ms) | worth |\n|---|---|---|---|---|\n", f);
    for (size_t k = 0; k < r->n_ablation; k++) {
        const tforge_ablation *a = &r->ablation[k];
        char worth[32] = "-";
        if (!isnan(a->with_ms) && !isnan(a->without_ms))
            snprintf(worth, sizeof worth, "%.3fx", a->without_ms / a->with_ms);
        fprintf(f, "| `%s` | %s | %.4g | %.4g | %s |\n",
                tforge_transforms_id(t, a->transform), tforge_status_name(a->m.status),
                a->with_ms, a->without_ms, a->m.message[0] ? a->m.message : worth);
    }
    fputc('\n', f);
}

static const char *counters_name(uint32_t state)
{
    static const char *const names[] = {"none", "ok", "refused", "failed"};
    return state < 4 ? names[state] : "?";
}

/* One profile's labels, strongest first, each with its evidence and rule. */
static void write_labels(FILE *f, const char *who, const tforge_forge_profile *p)
{
    fprintf(f, "%s: counters %s", who, counters_name(p->profile.counters));
    if (p->profile.note[0])
        fprintf(f, " (%s)", p->profile.note);
    fprintf(f, ".%s%s%s\n\n", p->note[0] ? " " : "", p->note, p->note[0] ? "." : "");
    for (size_t k = 0; k < p->n_labels; k++)
        fprintf(f, "- **%s** (confidence %.2f): %s; rule `%s`\n", p->labels[k].label,
                p->labels[k].confidence, p->labels[k].evidence, p->labels[k].rule);
    if (p->n_labels)
        fputc('\n', f);
}

/* The metrics of two profiles side by side (the baseline's and the winner's); "-" where absent. */
static void write_metrics(FILE *f, const tforge_forge_profile *a, const tforge_forge_profile *b)
{
    fprintf(f, "| metric | %s | %s |\n|---|---|---|\n", a ? "baseline" : "-", b ? "winner" : "-");
    const tforge_forge_profile *both[2] = {a, b};
    for (int side = 0; side < 2; side++) {
        const tforge_profile *p = both[side] ? &both[side]->profile : NULL;
        for (uint32_t i = 0; p && i < p->n_metrics; i++) {
            const char *name = p->metrics[i].name;
            int listed = 0; /* a metric of both, listed with the first */
            for (uint32_t j = 0; side == 1 && a && j < a->profile.n_metrics && !listed; j++)
                listed = strcmp(a->profile.metrics[j].name, name) == 0;
            if (listed)
                continue;
            double v[2] = {NAN, NAN};
            for (int t = 0; t < 2; t++)
                for (uint32_t j = 0; both[t] && j < both[t]->profile.n_metrics; j++)
                    if (strcmp(both[t]->profile.metrics[j].name, name) == 0)
                        v[t] = both[t]->profile.metrics[j].value;
            fprintf(f, "| %s |", name);
            for (int t = 0; t < 2; t++)
                fprintf(f, isnan(v[t]) ? " - |" : " %.4g |", v[t]);
            fputc('\n', f);
        }
    }
    fputc('\n', f);
}

/* The profile-guided loop: the baseline's and the winner's metrics and labels, and which labels
 * steered which knobs and transforms at each profiled incumbent. */
static void write_profile(FILE *f, const tforge_report_tune *r)
{
    const tforge_forge *forge = r->forge;
    if (!forge)
        return;
    const tforge_loop_outcome *o = r->outcome;
    const tforge_forge_profile *base = NULL, *win = NULL;
    if (o->baseline >= 0)
        base = tforge_forge_find(forge, (size_t)o->baseline);
    if (o->best >= 0)
        win = tforge_forge_find(forge, (size_t)o->best);
    size_t steered = 0;
    for (size_t i = 0; i < tforge_forge_count(forge); i++)
        steered += (size_t)tforge_forge_at(forge, i)->steered;
    if (steered)
        fprintf(f, "## Profile\n\nProfiles of the baseline and of each new incumbent, classified "
                   "by the heuristic `%s`; each one's labels set the strategy's prior (piBO: it "
                   "fades as observations come).\n\n", tforge_forge_heuristic(forge));
    else
        fprintf(f, "## Profile\n\n%zu profiles, classified by the heuristic `%s`; none steered "
                   "the search.\n\n", tforge_forge_count(forge), tforge_forge_heuristic(forge));
    if (base || win)
        write_metrics(f, base, win);
    if (base)
        write_labels(f, "The baseline", base);
    if (win && win != base)
        write_labels(f, "The winner", win);
    else if (win)
        fputs("The winner is the baseline.\n\n", f);
    fputs("What steered the search (the dimensions each label's prior moved at the incumbent, and "
          "which way):\n\n| # | incumbent | label | moved |\n|---|---|---|---|\n", f);
    size_t rows = 0, kept = 0;
    for (size_t i = 0; i < tforge_forge_count(forge); i++) {
        const tforge_forge_profile *p = tforge_forge_at(forge, i);
        for (size_t k = 0; p->steered && k < p->n_labels; k++) {
            const tforge_forge_label *l = &p->labels[k];
            fprintf(f, "| %zu%s | `%s` | %s |", p->eval + 1,
                    o->evals[p->eval].baseline ? " (baseline)" : "", o->evals[p->eval].config,
                    l->label);
            size_t shown = 0;
            for (size_t m = 0; m < l->n_moves; m++) {
                const char *family = tforge_forge_family(forge, l->moves[m].dim);
                if (family[0] && l->moves[m].way == TFORGE_FORGE_KEEP) {
                    kept++; /* the lean to the source unchanged: said once, below */
                    continue;
                }
                fprintf(f, "%s %s%s%s %s", shown++ ? "," : "",
                        tforge_space_name(r->space, l->moves[m].dim), family[0] ? " of " : "",
                        family, tforge_forge_way_name(l->moves[m].way));
            }
            fputs(shown ? " |\n" : " nothing |\n", f);
            rows++;
        }
    }
    if (!rows)
        fputs("| - | - | - | nothing: no label, or no profile (see the notes above) |\n", f);
    if (kept)
        fputs("\nNot listed: the transform parameters a label keeps at the incumbent's level "
              "(where that is the source unchanged, the prior leans to it).\n", f);
    fputc('\n', f);
}

/* pareto.svg: every evaluation that ran with its time and its energy, the front of the two, and
 * the winner of each objective among them (latency, energy, energy-delay) ringed; 1 when drawn,
 * 0 when nothing measured energy, -1 when it could not be written. */
static int write_pareto(const char *dir, const tforge_report_tune *r)
{
    const tforge_loop_outcome *o = r->outcome;
    size_t n = o->n_evals;
    double *ms = malloc((n ? n : 1) * sizeof *ms), *joules = malloc((n ? n : 1) * sizeof *joules);
    size_t k = 0, best[3] = {0};
    for (size_t i = 0; ms && joules && i < n; i++) {
        const tforge_measurement *m = &o->evals[i].m;
        double t = m->median_ms, e = tforge_measurement_metric(m, "energy_j");
        if (m->status != TFORGE_STATUS_OK || !isfinite(t) || !isfinite(e))
            continue;
        ms[k] = t;
        joules[k] = e;
        const double mine[3] = {t, e, t * e};
        for (int w = 0; w < 3; w++) {
            const double theirs[3] = {ms[best[w]], joules[best[w]], ms[best[w]] * joules[best[w]]};
            if (k == 0 || mine[w] < theirs[w])
                best[w] = k;
        }
        k++;
    }
    int drawn = 0;
    char path[4096];
    FILE *f = k ? open_out(dir, "pareto.svg", path, sizeof path) : NULL;
    if (f) {
        const tforge_plot_winner winners[3] = {{best[0], "fastest (latency's winner)"},
                                               {best[1], "least energy (energy's winner)"},
                                               {best[2], "least energy x delay (edp's winner)"}};
        char title[256];
        snprintf(title, sizeof title, "%s: time and energy of every evaluation", r->kernel);
        tforge_plot_pareto plot = {TFORGE_PLOT_PARETO_VERSION, title, "median time (ms)",
                                   "energy per launch (J)", ms, joules, k, winners, 3, 0, 0};
        drawn = tforge_plot_pareto_svg(f, &plot) == 0 ? 1 : -1;
        fclose(f);
    } else if (k) {
        drawn = -1;
    }
    free(ms);
    free(joules);
    return drawn;
}

int tforge_report_write_tune(const char *dir, const tforge_report_tune *r)
{
    const tforge_loop_outcome *o = r->outcome;
    char path[4096];
    FILE *f;
    const char *best = o->best >= 0 ? o->evals[o->best].config : NULL;
    /* what the values are: latency's medians in ms, or another objective's in its unit */
    int in_ms = !r->unit || strcmp(r->unit, "ms") == 0;
    char column[96];
    if (in_ms)
        snprintf(column, sizeof column, "median (ms)");
    else
        snprintf(column, sizeof column, "%s (%s)", r->objective, r->unit);
    /* the config, ready to paste */
    if (!(f = open_out(dir, "best_config.py", path, sizeof path)))
        return TFORGE_EIO;
    fputs("# Found by `tforge tune ", f);
    tforge_report_python_text(f, r->task_arg);
    fputs("` (backend ", f);
    tforge_report_python_text(f, r->backend);
    fputs(", strategy ", f);
    tforge_report_python_text(f, r->strategy);
    fprintf(f, ", seed %llu).\nimport triton\n\n", (unsigned long long)r->seed);
    if (best) {
        fputs("BEST = ", f);
        tforge_report_triton_config(f, best);
        fprintf(f, "  # %.4g %s, %.2fx the baseline\n", o->best_ms, in_ms ? "ms" : r->unit,
                o->speedup);
    } else {
        fputs("BEST = None  # no candidate was timed (see report.md)\n", f);
    }
    fclose(f);
    if (write_variant(dir, r, best))
        return TFORGE_EIO;
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
        char y_label[128];
        snprintf(y_label, sizeof y_label, "best so far (%s)", in_ms ? "ms" : r->unit);
        plot.y_label = y_label;
        plot.budget = k;
        plot.series = &series;
        plot.n_series = 1;
        plot.markers = none;
        tforge_plot_convergence_svg(f, &plot);
        fclose(f);
    }
    free(curve);
    int pareto = write_pareto(dir, r);
    if (pareto < 0)
        return TFORGE_EIO;
    /* the report */
    if (!(f = open_out(dir, "report.md", path, sizeof path)))
        return TFORGE_EIO;
    fprintf(f, "# tforge tune: %s\n\n", r->kernel);
    fprintf(f, "- task: `%s`\n- backend: %s%s\n- strategy: %s, seed %llu, %zu evaluations "
               "(%zu from a resumed run), %.1f s, %u workers replaced\n\n",
            r->task_path, r->backend, r->backend_note, r->strategy, (unsigned long long)r->seed,
            o->n_evals, o->n_resumed, o->seconds, o->restarts);
    if (r->n_warnings) {
        fputs("## Warnings\n\n", f);
        for (size_t i = 0; i < r->n_warnings; i++)
            fprintf(f, "- %s\n", r->warnings[i]);
        fputc('\n', f);
    }
    if (pareto)
        fputs("Time and energy of every evaluation, their Pareto front and each objective's "
              "winner: [pareto.svg](pareto.svg).\n\n", f);
    if (o->best >= 0 && o->baseline >= 0)
        fprintf(f, "| | config | %s |\n|---|---|---|\n| baseline | `%s` | %.4g |\n"
                   "| best | `%s` | %.4g |\n\n%s **%.2fx** (medians of the final "
                   "interleaved re-timing).\n\n",
                column, o->evals[o->baseline].config, o->baseline_ms, best, o->best_ms,
                in_ms ? "Speedup" : "The baseline's over the winner's", o->speedup);
    if (r->speed_of_light)
        fprintf(f, "%s\n\n", r->speed_of_light);
    if (has_time)
        fputs("![best so far](convergence.svg)\n\n", f);
    if (r->take_home)
        fprintf(f, "## The take-home files, run as you run them\n\n%s\n", r->take_home);
    if (r->model)
        fprintf(f, "## The model's proposals\n\n%s\n", r->model);
    write_transforms(f, r);
    write_profile(f, r);
    size_t counts[6] = {0};
    for (size_t i = 0; i < n; i++)
        counts[o->evals[i].m.status < TFORGE_STATUS_COUNT ? o->evals[i].m.status : 2]++;
    fputs("| status | evaluations |\n|---|---|\n", f);
    for (int st = 0; st < 6; st++)
        if (counts[st])
            fprintf(f, "| %s | %zu |\n", tforge_status_name((tforge_status)st), counts[st]);
    fprintf(f, "\n| # | config |%s status | %s | note (failure, or registers, spills "
               "and shared memory) |\n|---|---|%s---|---|---|\n", r->transforms ? " rewrites |" : "",
            column, r->transforms ? "---|" : "");
    for (size_t i = 0; i < n; i++) {
        const tforge_measurement *m = &o->evals[i].m;
        char metrics[1024];
        tforge_measurement_metrics_json(m, metrics, sizeof metrics);
        char value[32] = "-";
        if (!isnan(m->value))
            snprintf(value, sizeof value, "%.4g", m->value);
        fprintf(f, "| %zu%s | `%s`%s%s%s |", i + 1, o->evals[i].baseline ? " (baseline)" : "",
                o->evals[i].config, o->evals[i].source ? " with a source of its own (`" : "",
                o->evals[i].source ? o->evals[i].digest : "", o->evals[i].source ? "`)" : "");
        if (r->transforms)
            fprintf(f, " %s |", r->rewrites && r->rewrites[i] ? r->rewrites[i] : "-");
        fprintf(f, " %s | %s | %s |\n", tforge_status_name(m->status), value,
                m->message[0] ? m->message : metrics);
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

struct cJSON *tforge_report_strategy_options(const tforge_registry *registry, const char *id,
                                             const char *const *given)
{
    const char *effective[128];
    char buffer[8192];
    tforge_strategy_effective(registry, id, given, effective, 128, buffer, sizeof buffer);
    cJSON *options = cJSON_CreateObject();
    for (size_t i = 0; effective[i]; i++) {
        const char *eq = strchr(effective[i], '=');
        char key[128];
        snprintf(key, sizeof key, "%.*s", (int)(eq - effective[i]), effective[i]);
        cJSON_AddStringToObject(options, key, eq + 1);
    }
    return options;
}
