/* The prompt's template read and checked, then rendered with the facts (prompt.h). */
#include "prompt.h"

#include "file.h"
#include "install.h"
#include "tforge/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The facts a template may place, in the order prompt.h lists them. */
static const char *const FACTS[] = {"path",     "kernel",     "source",   "analysis",
                                    "device",   "profiles",   "transforms", "proposals"};
enum { N_FACTS = sizeof FACTS / sizeof FACTS[0] };

static const char SYSTEM_MARKER[] = "=== system ===", USER_MARKER[] = "=== user ===";

static int fact_index(const char *name, size_t n)
{
    for (int i = 0; i < N_FACTS; i++)
        if (strlen(FACTS[i]) == n && strncmp(FACTS[i], name, n) == 0)
            return i;
    return -1;
}

static size_t line_of(const char *text, const char *at)
{
    size_t line = 1;
    for (const char *p = text; p < at; p++)
        line += *p == '\n';
    return line;
}

/* The start of the line that is exactly `marker`, or NULL. */
static const char *marker_line(const char *text, const char *marker)
{
    size_t n = strlen(marker);
    for (const char *p = text; p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (strncmp(p, marker, n) == 0 && (p[n] == '\n' || p[n] == '\0'))
            return p;
    return NULL;
}

static const char *after_line(const char *p)
{
    const char *nl = strchr(p, '\n');
    return nl ? nl + 1 : p + strlen(p);
}

/* Every {{name}} of the part [from, to) is a fact. */
static int check_placeholders(const tforge_prompt *t, const char *from, const char *to)
{
    for (const char *p = strstr(from, "{{"); p && p < to; p = strstr(p + 2, "{{")) {
        const char *end = strstr(p + 2, "}}");
        if (!end || end > to || memchr(p + 2, '\n', (size_t)(end - p - 2)))
            return tforge_error_set(TFORGE_EINPUT, "%s:%zu: a {{ without its }} on the line",
                                    t->path, line_of(t->text, p));
        if (fact_index(p + 2, (size_t)(end - p - 2)) < 0)
            return tforge_error_set(TFORGE_EINPUT,
                                    "%s:%zu: {{%.*s}} is no fact the prompt knows (expected "
                                    "path, kernel, source, analysis, device, profiles, "
                                    "transforms or proposals)",
                                    t->path, line_of(t->text, p), (int)(end - p - 2), p + 2);
    }
    return 0;
}

static int parse(tforge_prompt *t)
{
    char word[16] = "";
    unsigned revision = 0;
    int used = 0;
    if (sscanf(t->text, "%15s %63s %u%n", word, t->name, &revision, &used) != 3 ||
        strcmp(word, "tforge-prompt") != 0 || (t->text[used] != '\n' && t->text[used] != '\0'))
        return tforge_error_set(TFORGE_EINPUT,
                                "%s:1: expected \"tforge-prompt NAME REVISION\" (the template's "
                                "name and revision)",
                                t->path);
    t->revision = revision;
    const char *system = marker_line(t->text, SYSTEM_MARKER);
    const char *user = marker_line(t->text, USER_MARKER);
    if (!system || !user || user < system)
        return tforge_error_set(TFORGE_EINPUT,
                                "%s: expected a line \"%s\" and after it a line \"%s\", each "
                                "followed by its message",
                                t->path, SYSTEM_MARKER, USER_MARKER);
    t->system = after_line(system);
    t->system_size = (size_t)(user - t->system);
    t->user = after_line(user);
    t->user_size = strlen(t->user);
    int rc = check_placeholders(t, t->system, user);
    return rc ? rc : check_placeholders(t, t->user, t->user + t->user_size);
}

int tforge_prompt_load(tforge_prompt *out, const char *path)
{
    memset(out, 0, sizeof *out);
    char installed[4096];
    if (!path) {
        if (tforge_install_dir(installed, sizeof installed, TFORGE_DATA_RELDIR "/prompts") ||
            strlen(installed) + sizeof "/kernel.md" > sizeof installed)
            return tforge_error_set(TFORGE_ERROR, "the installed prompt's folder is not known");
        strcat(installed, "/kernel.md");
        path = installed;
    }
    size_t size = 0;
    int rc = tforge_file_read(&out->text, &size, path);
    if (!rc && !(out->path = strdup(path)))
        rc = tforge_error_set(TFORGE_ENOMEM, "out of memory");
    if (!rc) {
        tforge_digest_text(out->digest, out->text, size);
        rc = parse(out);
    }
    if (rc)
        tforge_prompt_dispose(out);
    return rc;
}

void tforge_prompt_dispose(tforge_prompt *prompt)
{
    free(prompt->path);
    free(prompt->text);
    memset(prompt, 0, sizeof *prompt);
}

/* ---- the facts as text ---- */

static void text_or(FILE *f, const char *text, const char *otherwise)
{
    if (!text || !*text) {
        fputs(otherwise, f);
        return;
    }
    size_t n = strlen(text);
    while (n && text[n - 1] == '\n') /* the template places the line break */
        n--;
    fwrite(text, 1, n, f);
}

static void device(FILE *f, const tforge_device_limits *d)
{
    if (!d) {
        fputs("(not known)", f);
        return;
    }
    fprintf(f, "%s: %u SMs, at most %u warps and %u blocks an SM, %u registers an SM, "
               "%u KiB of shared memory an SM (up to %u KiB a block)",
            d->name, d->sms, d->max_warps_per_sm, d->max_blocks_per_sm, d->regs_per_sm,
            d->smem_per_sm / 1024, d->smem_per_block_optin / 1024);
    if (isfinite(d->dram_gbs))
        fprintf(f, ", DRAM %.0f GB/s", d->dram_gbs);
    if (isfinite(d->fp16_tflops))
        fprintf(f, ", %.0f TFLOP/s fp16 on the tensor cores", d->fp16_tflops);
    if (isfinite(d->fp32_tflops))
        fprintf(f, ", %.0f TFLOP/s fp32", d->fp32_tflops);
}

static void profile(FILE *f, const tforge_prompt_profile *p)
{
    fprintf(f, "### %s\n", p->who);
    if (isfinite(p->time_ms))
        fprintf(f, "- time: %.4g ms\n", p->time_ms);
    const tforge_profile *m = p->profile;
    if (m) {
        double dram = tforge_profile_get(m, "dram_share"), math = tforge_profile_get(m, "flops_share");
        if (isfinite(dram) || isfinite(math)) {
            fputs("- speed of light:", f);
            if (isfinite(dram))
                fprintf(f, " DRAM bandwidth %.1f%% of the peak", 100 * dram);
            if (isfinite(math))
                fprintf(f, "%s arithmetic %.1f%% of the peak", isfinite(dram) ? "," : "",
                        100 * math);
            fputc('\n', f);
        }
        fputs("- metrics:", f);
        for (uint32_t i = 0; i < m->n_metrics; i++)
            if (isfinite(m->metrics[i].value))
                fprintf(f, "%s %s=%.4g", i ? "," : "", m->metrics[i].name, m->metrics[i].value);
        fputc('\n', f);
        if (m->note[0])
            fprintf(f, "- note: %s\n", m->note);
    } else {
        fputs("- no profile taken\n", f);
    }
    if (!p->n_labels)
        fputs("- labels: none\n", f);
    for (size_t i = 0; i < p->n_labels; i++)
        fprintf(f, "- label %s (confidence %.2f): %s\n", p->labels[i].label,
                p->labels[i].confidence, p->labels[i].evidence ? p->labels[i].evidence : "");
}

static void proposal(FILE *f, size_t i, const tforge_prompt_proposal *p)
{
    const char *why = p->reason && *p->reason ? p->reason : "";
    fprintf(f, "%zu. ", i + 1);
    if (strcmp(p->status, "ok") == 0) {
        if (!isfinite(p->slower_pct))
            fputs("ran correctly (not timed)", f);
        else if (p->slower_pct >= 0)
            fprintf(f, "ran correctly but %.1f%% slower than the incumbent", p->slower_pct);
        else
            fprintf(f, "ran correctly and %.1f%% faster than the incumbent then",
                    -p->slower_pct);
    } else if (strcmp(p->status, "wrong") == 0) {
        fputs("computed a wrong result", f);
        if (isfinite(p->max_error))
            fprintf(f, " (max error %.3g)", p->max_error);
    } else if (strcmp(p->status, "compile") == 0) {
        fputs("did not compile", f);
    } else if (strcmp(p->status, "runtime") == 0) {
        fputs("crashed or failed to launch", f);
    } else if (strcmp(p->status, "timeout") == 0) {
        fputs("never finished (timed out)", f);
    } else if (strcmp(p->status, "refused") == 0) {
        fputs("refused before it ran", f);
    } else {
        fputs(p->status, f);
    }
    fprintf(f, "%s%s\n", *why ? ": " : "", why);
}

static void fact(FILE *f, int which, const tforge_prompt_facts *x)
{
    switch (which) {
    case 0: text_or(f, x->path, "(not known)"); break;
    case 1: text_or(f, x->kernel, "(not known)"); break;
    case 2: text_or(f, x->source, "(not known)"); break;
    case 3: text_or(f, x->analysis, "(none)"); break;
    case 4: device(f, x->device); break;
    case 5:
        if (!x->n_profiles)
            fputs("(none taken)", f);
        for (size_t i = 0; i < x->n_profiles; i++)
            profile(f, &x->profiles[i]);
        break;
    case 6:
        if (!x->n_transforms)
            fputs("(none)", f);
        for (size_t i = 0; i < x->n_transforms; i++)
            fprintf(f, "- %s: %s; %s\n", x->transforms[i].id, x->transforms[i].describe,
                    x->transforms[i].measured ? x->transforms[i].measured : "not measured");
        break;
    default:
        if (!x->n_proposals)
            fputs("(none: this is the first)", f);
        for (size_t i = 0; i < x->n_proposals; i++)
            proposal(f, i, &x->proposals[i]);
        break;
    }
}

/* One part with its placeholders replaced (checked when the template was loaded). */
static int render_part(char **out, const char *part, size_t size, const tforge_prompt_facts *x)
{
    size_t n = 0;
    FILE *f = open_memstream(out, &n);
    if (!f)
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    const char *end = part + size, *p = part;
    for (const char *at = strstr(p, "{{"); at && at < end; at = strstr(p, "{{")) {
        const char *close = strstr(at + 2, "}}");
        fwrite(p, 1, (size_t)(at - p), f);
        fact(f, fact_index(at + 2, (size_t)(close - at - 2)), x);
        p = close + 2;
    }
    fwrite(p, 1, (size_t)(end - p), f);
    if (fclose(f)) {
        free(*out);
        *out = NULL;
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    }
    return 0;
}

int tforge_prompt_render(char **system, char **user, const tforge_prompt *prompt,
                         const tforge_prompt_facts *facts)
{
    *system = *user = NULL;
    int rc = render_part(system, prompt->system, prompt->system_size, facts);
    if (!rc)
        rc = render_part(user, prompt->user, prompt->user_size, facts);
    if (rc) {
        free(*system);
        *system = NULL;
    }
    return rc;
}
