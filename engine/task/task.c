#include "task.h"

#include "file.h"
#include "knob.h"
#include "rpc.h"
#include "tforge/error.h"
#include "tforge/log.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tforge_task_free(tforge_task *t)
{
    if (!t)
        return;
    char **lists[] = {t->tune_shapes, t->check_shapes, t->baselines, t->files,
                      t->plans,       t->dropped,      t->warnings,  t->dtypes};
    size_t counts[] = {t->n_tune,  t->n_check,    t->n_baseline, t->n_files,
                       t->n_plans, t->n_dropped,  t->n_warnings, t->n_dtypes};
    for (int l = 0; l < 8; l++) {
        for (size_t i = 0; lists[l] && i < counts[l]; i++)
            free(lists[l][i]);
        free(lists[l]);
    }
    free(t->path);
    free(t->kernel);
    free(t->source);
    free(t->baseline_from);
    tforge_space_free(t->space);
    tforge_transforms_free(t->transforms);
    for (size_t i = 0; i < t->n_knobs; i++)
        free(t->knobs[i]);
    free(t->knobs);
    free(t->kernel_text);
    free(t->baseline_points);
    free(t->baseline_inside);
    tforge_ir_free(t->ir);
    for (size_t i = 0; i < t->n_proposals; i++)
        free(t->proposals[i]);
    free(t->proposals);
    free(t->proposal_digests);
    free(t);
}

static char *string_field(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsString(v) ? strdup(v->valuestring) : NULL;
}

/* Each element of a JSON array as compact text. */
static int texts_of(char ***out, size_t *n, const cJSON *array)
{
    *n = (size_t)cJSON_GetArraySize(array);
    *out = calloc(*n ? *n : 1, sizeof **out);
    if (!*out)
        return TFORGE_ENOMEM;
    size_t i = 0;
    for (const cJSON *e = array ? array->child : NULL; e; e = e->next, i++)
        if (!((*out)[i] = cJSON_PrintUnformatted(e)))
            return TFORGE_ENOMEM;
    return 0;
}

/* Each string of a JSON array. */
static int strings_of(char ***out, size_t *n, const cJSON *array)
{
    *n = 0;
    *out = calloc((size_t)cJSON_GetArraySize(array) + 1, sizeof **out);
    if (!*out)
        return TFORGE_ENOMEM;
    for (const cJSON *e = array ? array->child : NULL; e; e = e->next)
        if (cJSON_IsString(e) && !((*out)[(*n)++] = strdup(e->valuestring)))
            return TFORGE_ENOMEM;
    return 0;
}

/* Each statement the import filter dropped, as one line for -v. */
static int dropped_lines(tforge_task *t, const cJSON *array)
{
    t->n_dropped = 0;
    t->dropped = calloc((size_t)cJSON_GetArraySize(array) + 1, sizeof *t->dropped);
    if (!t->dropped)
        return TFORGE_ENOMEM;
    const cJSON *d;
    cJSON_ArrayForEach(d, array)
    {
        const cJSON *file = cJSON_GetObjectItemCaseSensitive(d, "file"),
                    *line = cJSON_GetObjectItemCaseSensitive(d, "line"),
                    *end = cJSON_GetObjectItemCaseSensitive(d, "end_line"),
                    *kind = cJSON_GetObjectItemCaseSensitive(d, "kind"),
                    *binds = cJSON_GetObjectItemCaseSensitive(d, "binds");
        char names[512] = "";
        size_t used = 0;
        const cJSON *b;
        cJSON_ArrayForEach(b, binds) if (cJSON_IsString(b) && used < sizeof names)
            used += (size_t)snprintf(names + used, sizeof names - used, "%s%s",
                                     used ? ", " : "", b->valuestring);
        char text[1200];
        int first = cJSON_IsNumber(line) ? line->valueint : 0;
        int last = cJSON_IsNumber(end) ? end->valueint : first;
        int n = snprintf(text, sizeof text, "%s:%d", cJSON_IsString(file) ? file->valuestring
                                                                          : t->source, first);
        if (last > first)
            n += snprintf(text + n, sizeof text - (size_t)n, "-%d", last);
        snprintf(text + n, sizeof text - (size_t)n, ": dropped %s%s%s%s",
                 cJSON_IsString(kind) ? kind->valuestring : "statement",
                 names[0] ? " (binds " : "", names, names[0] ? ")" : "");
        if (!(t->dropped[t->n_dropped++] = strdup(text)))
            return TFORGE_ENOMEM;
    }
    return 0;
}

/* One space parameter: numbers become an ordinal list, strings a categorical, [false, true] a
 * boolean. The validator has checked the shapes of these already. */
static int add_param(tforge_space *space, const char *path, const cJSON *param)
{
    size_t n = (size_t)cJSON_GetArraySize(param), i = 0;
    int numbers = 1, strings = 1, booleans = 1;
    for (const cJSON *v = param->child; v; v = v->next) {
        numbers &= cJSON_IsNumber(v);
        strings &= cJSON_IsString(v);
        booleans &= cJSON_IsBool(v);
    }
    if (booleans && n == 2 && cJSON_IsFalse(param->child) != cJSON_IsFalse(param->child->next)) {
        int rc = tforge_space_add_boolean(space, param->string);
        return rc ? rc : tforge_knob_describe(space, tforge_space_dims(space) - 1);
    }
    if (numbers || strings) {
        double *values = malloc(n * sizeof *values);
        const char **labels = malloc(n * sizeof *labels);
        int rc = values && labels ? 0 : TFORGE_ENOMEM;
        for (const cJSON *v = param->child; !rc && v; v = v->next, i++) {
            values[i] = numbers ? v->valuedouble : 0;
            labels[i] = strings ? v->valuestring : NULL;
        }
        if (!rc)
            rc = numbers ? tforge_space_add_values(space, param->string, values, n)
                         : tforge_space_add_categorical(space, param->string, labels, n);
        if (!rc)
            rc = tforge_knob_describe(space, tforge_space_dims(space) - 1);
        free(values);
        free(labels);
        return rc;
    }
    return tforge_error_set(TFORGE_EINPUT,
                            "%s: space.params.%s: expected a list of numbers, of strings, or "
                            "[false, true]",
                            path, param->string);
}

/* The `variant` dimension (the file, then each proposal by its digest) and, for each transform's
 * dimension, the constraint that keeps it at level 0 at a proposal: its edits were made on the
 * file's text. */
static int add_variant(tforge_task *t)
{
    if (tforge_space_find(t->space, TFORGE_TASK_VARIANT) >= 0)
        return tforge_error_set(TFORGE_EINPUT, "%s: the space has a parameter named %s already: "
                                "a model's proposals cannot be added", t->path,
                                TFORGE_TASK_VARIANT);
    const char **labels = malloc((t->n_proposals + 1) * sizeof *labels);
    if (!labels)
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    labels[0] = "file";
    for (size_t i = 0; i < t->n_proposals; i++)
        labels[i + 1] = t->proposal_digests[i];
    uint32_t dims = tforge_space_dims(t->space);
    int rc = tforge_space_add_categorical(t->space, TFORGE_TASK_VARIANT, labels,
                                          t->n_proposals + 1);
    free(labels);
    if (!rc)
        rc = tforge_space_describe(t->space, dims, TFORGE_TASK_VARIANT_OWNER, TFORGE_DIM_REWRITE,
                                   TFORGE_EFFECT_UNKNOWN);
    char text[512];
    for (uint32_t d = 0; !rc && d < dims; d++) {
        if (tforge_space_role(t->space, d) == TFORGE_DIM_KNOB)
            continue;
        const char *name = tforge_space_name(t->space, d);
        tforge_dim_kind kind = tforge_space_kind(t->space, d);
        if (kind == TFORGE_DIM_BOOLEAN)
            snprintf(text, sizeof text, "%s == \"file\" or not %s", TFORGE_TASK_VARIANT, name);
        else if (kind == TFORGE_DIM_CATEGORICAL)
            snprintf(text, sizeof text, "%s == \"file\" or %s == \"%s\"", TFORGE_TASK_VARIANT,
                     name, tforge_space_label(t->space, d, 0));
        else
            snprintf(text, sizeof text, "%s == \"file\" or %s == %s", TFORGE_TASK_VARIANT,
                     name, tforge_space_text(t->space, d, 0));
        rc = tforge_space_add_constraint(t->space, text);
    }
    return rc;
}

/* The space of tuning shape `shape` from its plan. A space without a valid point names the
 * task's constraints and the shape (their sizes are put in), or says the analysis inferred it. */
static int build_space(tforge_task *t, size_t shape, const cJSON *plan)
{
    const cJSON *space = cJSON_GetObjectItemCaseSensitive(plan, "space");
    tforge_space_free(t->space);
    t->space = NULL;
    int rc = tforge_space_new(&t->space);
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(space, "params");
    if (!rc && (!cJSON_IsObject(params) || !params->child))
        rc = tforge_error_set(TFORGE_EINPUT,
                              "%s: space.params: expected the tunable parameters (none "
                              "given, and the static analysis inferred none: there is nothing "
                              "to tune)",
                              t->path);
    for (const cJSON *p = params ? params->child : NULL; !rc && p; p = p->next)
        if ((rc = add_param(t->space, t->path, p)) && !strstr(tforge_error_last()->message,
                                                              t->path))
            rc = tforge_error_prefix("%s: space.params.%s", t->path, p->string);
    if (!rc && t->transforms)
        rc = tforge_transforms_add_to_space(t->transforms, t->space);
    if (!rc && (t->n_proposals || t->variant_declared))
        rc = add_variant(t);
    const cJSON *constraints = cJSON_GetObjectItemCaseSensitive(space, "constraints");
    for (const cJSON *c = constraints ? constraints->child : NULL; !rc && c; c = c->next)
        if ((rc = tforge_space_add_constraint(t->space, c->valuestring)))
            rc = tforge_error_prefix("%s: space.constraints", t->path);
    for (const char *const *c = t->constraints; !rc && c && *c; c++)
        if ((rc = tforge_space_add_constraint(t->space, *c)))
            rc = tforge_error_prefix("--constraint");
    /* With transforms the space is too large to enumerate whole: the strategies sample it. */
    tforge_space_build_options options = TFORGE_SPACE_BUILD_OPTIONS_INIT;
    if (t->transforms)
        options.enumerate_limit = 1000000;
    if (!rc && (rc = tforge_space_build(t->space, &options)))
        rc = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(plan, "inferred"))
                 ? tforge_error_prefix("%s: the space inferred at shapes.tune[%zu]", t->path,
                                       shape)
                 : tforge_error_prefix("%s: space.constraints at shapes.tune[%zu]", t->path,
                                       shape);
    return rc;
}

int tforge_task_load(tforge_task **out, tforge_worker *worker, const char *path, int timeout_ms)
{
    char *request = tforge_rpc_load_task(path);
    tforge_rpc_reply reply = {0};
    tforge_task *t = calloc(1, sizeof *t);
    int rc = request ? 0 : tforge_error_last()->code;
    if (!rc && !t)
        rc = tforge_error_set(TFORGE_ENOMEM, "out of memory loading %s", path);
    if (!rc)
        rc = tforge_rpc_call(&reply, worker, request, timeout_ms);
    if (!rc && reply.call != TFORGE_CALL_OK)
        rc = tforge_error_set(TFORGE_EINPUT, "%s: the worker loading it %s (the task or its "
                              "kernel file hangs or crashes at import)", path, reply.detail);
    if (!rc && !reply.doc)
        rc = tforge_error_set(TFORGE_ERROR, "%s: the worker's answer is not JSON", path);
    if (rc)
        goto cleanup;
    if (reply.kind) {
        /* TaskError lists every bad field, each naming the file; anything else raised while
         * loading the task is the task's too (its files, their imports), named here */
        char raised[2048];
        rc = tforge_rpc_raised(&reply, "TaskError")
                 ? tforge_error_set(TFORGE_EINPUT, "%s", reply.error)
                 : tforge_error_set(TFORGE_EINPUT, "%s: loading it failed: %s", path,
                                    tforge_rpc_error_text(&reply, raised, sizeof raised));
        goto cleanup;
    }
    const cJSON *task = reply.result;
    const cJSON *shapes = cJSON_GetObjectItemCaseSensitive(task, "shapes");
    t->path = string_field(task, "id");
    t->kernel = string_field(task, "kernel");
    t->source = string_field(task, "source");
    t->baseline_from = string_field(task, "baseline_from");
    if (!t->path || !t->kernel || !t->source || !t->baseline_from) {
        rc = tforge_error_set(TFORGE_ERROR, "%s: the worker's task lacks id, kernel or source",
                              path);
        goto cleanup;
    }
    if ((rc = texts_of(&t->tune_shapes, &t->n_tune,
                       cJSON_GetObjectItemCaseSensitive(shapes, "tune"))) ||
        (rc = texts_of(&t->check_shapes, &t->n_check,
                       cJSON_GetObjectItemCaseSensitive(shapes, "check"))) ||
        (rc = texts_of(&t->plans, &t->n_plans, cJSON_GetObjectItemCaseSensitive(task, "plans"))) ||
        (rc = strings_of(&t->files, &t->n_files,
                         cJSON_GetObjectItemCaseSensitive(task, "files"))) ||
        (rc = strings_of(&t->warnings, &t->n_warnings,
                         cJSON_GetObjectItemCaseSensitive(task, "warnings"))) ||
        (rc = strings_of(&t->dtypes, &t->n_dtypes,
                         cJSON_GetObjectItemCaseSensitive(task, "dtypes"))) ||
        (rc = dropped_lines(t, cJSON_GetObjectItemCaseSensitive(task, "dropped")))) {
        rc = tforge_error_set(TFORGE_ENOMEM, "out of memory loading %s", path);
        goto cleanup;
    }
    const cJSON *analysis = cJSON_GetObjectItemCaseSensitive(task, "analysis");
    if (cJSON_IsObject(analysis)) {
        char *json = cJSON_PrintUnformatted(analysis);
        rc = json ? tforge_ir_parse(&t->ir, json, t->source)
                  : tforge_error_set(TFORGE_ENOMEM, "out of memory loading %s", path);
        free(json);
        if (!rc && t->ir->n_kernels != 1)
            rc = tforge_error_set(TFORGE_ERROR, "%s: the analysis holds %zu kernels, not the "
                                  "task's one", path, t->ir->n_kernels);
        if (rc)
            goto cleanup;
    }
    if (t->n_plans != t->n_tune) {
        rc = tforge_error_set(TFORGE_ERROR, "%s: the worker planned %zu of %zu tuning shapes",
                              path, t->n_plans, t->n_tune);
        goto cleanup;
    }
    t->dtype = t->n_dtypes ? t->dtypes[0] : NULL;
    if ((rc = tforge_task_select(t, 0)))
        goto cleanup;
    *out = t;
    t = NULL;
cleanup:
    tforge_rpc_reply_dispose(&reply);
    free(request);
    tforge_task_free(t);
    return rc;
}

int tforge_task_set_dtype(tforge_task *t, const char *dtype, const char *field)
{
    if (!dtype) {
        t->dtype = t->n_dtypes ? t->dtypes[0] : NULL;
        return 0;
    }
    if (!t->n_dtypes)
        return tforge_error_set(TFORGE_EINPUT, "%s %s: %s declares no dtypes (its inputs keep "
                                "their own; a task lists those it allows in \"dtypes\")",
                                field, dtype, t->path);
    for (size_t i = 0; i < t->n_dtypes; i++)
        if (strcmp(t->dtypes[i], dtype) == 0) {
            t->dtype = t->dtypes[i];
            return 0;
        }
    char allowed[512] = "";
    for (size_t i = 0; i < t->n_dtypes; i++)
        snprintf(allowed + strlen(allowed), sizeof allowed - strlen(allowed), "%s%s",
                 i ? ", " : "", t->dtypes[i]);
    return tforge_error_set(TFORGE_EINPUT, "%s %s: expected one of %s's dtypes (%s)", field,
                            dtype, t->path, allowed);
}

static int map_baselines(tforge_task *t, const cJSON *launched);

int tforge_task_select(tforge_task *t, size_t shape)
{
    if (shape >= t->n_tune)
        return tforge_error_set(TFORGE_EINPUT, "%s: tuning shape %zu: the task has %zu", t->path,
                                shape, t->n_tune);
    cJSON *plan = cJSON_Parse(t->plans[shape]);
    if (!plan)
        return tforge_error_set(TFORGE_ERROR, "%s: the worker's plan for shape %zu is not JSON",
                                t->path, shape);
    for (size_t i = 0; i < t->n_baseline; i++)
        free(t->baselines[i]);
    free(t->baselines);
    t->baselines = NULL;
    t->n_baseline = 0;
    int rc = texts_of(&t->baselines, &t->n_baseline,
                      cJSON_GetObjectItemCaseSensitive(plan, "baseline"));
    if (rc)
        rc = tforge_error_set(TFORGE_ENOMEM, "out of memory loading %s", t->path);
    if (!rc)
        rc = build_space(t, shape, plan);
    if (!rc)
        rc = map_baselines(t, cJSON_GetObjectItemCaseSensitive(plan, "launched"));
    if (!rc)
        t->shape = shape;
    cJSON_Delete(plan);
    return rc;
}

int tforge_task_check_spaces(tforge_task *t)
{
    size_t selected = t->shape;
    for (size_t s = 0; s < t->n_tune; s++) {
        int rc = s == selected ? 0 : tforge_task_select(t, s);
        if (rc)
            return rc;
    }
    return t->shape == selected ? 0 : tforge_task_select(t, selected);
}

/* The dimensions of a point that a worker's config holds (`config`: the plan's parameters and the
 * launch options a point sets), or its rewrites (the transforms' rewrite parameters it sets), as
 * the space's `which`; NULL when out of memory. */
static unsigned char *dims_of(const tforge_task *t, const tforge_level *point, int config)
{
    uint32_t dims = tforge_space_dims(t->space);
    unsigned char *which = calloc(dims ? dims : 1, 1);
    for (uint32_t d = 0; which && d < dims; d++) {
        tforge_dim_role role = tforge_space_role(t->space, d);
        which[d] = config ? role != TFORGE_DIM_REWRITE && !(role == TFORGE_DIM_LAUNCH && !point[d])
                          : role == TFORGE_DIM_REWRITE && point[d];
    }
    return which;
}

int tforge_task_config(char **out, const tforge_task *t, const tforge_level *point)
{
    *out = NULL;
    unsigned char *which = dims_of(t, point, 1);
    int rc = which ? tforge_space_json(out, t->space, point, which)
                   : tforge_error_set(TFORGE_ENOMEM, "out of memory");
    free(which);
    return rc;
}

int tforge_task_point(tforge_level *out, const tforge_task *t, const char *config)
{
    cJSON *o = cJSON_Parse(config);
    int rc = o ? 0 : tforge_error_set(TFORGE_EINPUT, "a config is not JSON: %s", config);
    for (uint32_t d = 0; !rc && d < tforge_space_dims(t->space); d++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, tforge_space_name(t->space, d));
        tforge_dim_kind kind = tforge_space_kind(t->space, d);
        char number[32] = "";
        if (cJSON_IsNumber(v))
            tforge_space_number_text(number, sizeof number, v->valuedouble);
        /* the value as the space reads a level, when its JSON type is the dimension's */
        const char *truth = cJSON_IsTrue(v) ? "1" : "0";
        const char *text = kind == TFORGE_DIM_CATEGORICAL ? (cJSON_IsString(v) ? v->valuestring
                                                                               : NULL)
                           : kind == TFORGE_DIM_BOOLEAN   ? (cJSON_IsBool(v) ? truth : NULL)
                           : cJSON_IsNumber(v)            ? number
                                                          : NULL;
        int64_t l = text ? tforge_space_level_of(t->space, d, text) : -1;
        if (!v && tforge_space_role(t->space, d) != TFORGE_DIM_KNOB)
            out[d] = 0; /* the kernel as it is */
        else if (l < 0)
            rc = tforge_error_set(TFORGE_ENOTFOUND, "config %s: %s is outside the space", config,
                                  tforge_space_name(t->space, d));
        else
            out[d] = (tforge_level)l;
    }
    if (!rc && !tforge_space_is_valid(t->space, out))
        rc = tforge_error_set(TFORGE_ENOTFOUND, "config %s breaks a constraint of the space",
                              config);
    cJSON_Delete(o);
    return rc;
}

/* Each baseline's point, where it lies in the space: of the config as the file's own launch
 * runs it where the plan says (`launched`: a baseline that leaves parameters of the space to a
 * wrapper's defaults is still the point those defaults make), else of the config itself. */
static int map_baselines(tforge_task *t, const cJSON *launched)
{
    uint32_t dims = tforge_space_dims(t->space);
    free(t->baseline_points);
    free(t->baseline_inside);
    size_t n = (t->n_baseline + 1) * (dims ? dims : 1);
    t->baseline_points = malloc(n * sizeof *t->baseline_points);
    t->baseline_inside = calloc(t->n_baseline + 1, 1);
    if (!t->baseline_points || !t->baseline_inside)
        return tforge_error_set(TFORGE_ENOMEM, "out of memory loading %s", t->path);
    for (size_t b = 0; b < t->n_baseline; b++) {
        const cJSON *as_run = cJSON_GetArrayItem(launched, (int)b);
        char *text = cJSON_IsObject(as_run) ? cJSON_PrintUnformatted(as_run) : NULL;
        if (cJSON_IsObject(as_run) && !text)
            return tforge_error_set(TFORGE_ENOMEM, "out of memory loading %s", t->path);
        t->baseline_inside[b] =
            tforge_task_point(t->baseline_points + b * dims, t, text ? text : t->baselines[b]) == 0;
        free(text);
    }
    tforge_error_clear(); /* a baseline outside the space is no error */
    return 0;
}

const tforge_level *tforge_task_baseline_point(const tforge_task *t, size_t b)
{
    return b < t->n_baseline && t->baseline_inside[b]
               ? t->baseline_points + b * tforge_space_dims(t->space)
               : NULL;
}

int tforge_task_add_constraints(tforge_task *t, const char *const *constraints)
{
    t->constraints = constraints;
    return tforge_task_select(t, t->shape);
}

int tforge_task_use_transforms(tforge_task *t, const tforge_registry *registry,
                               const char *const *ids, const char *const *options)
{
    if (t->transforms)
        return tforge_error_set(TFORGE_ERROR, "%s: transforms are opened once", t->path);
    if (!t->ir) {
        tforge_log(TFORGE_LOG_WARN, "%s: kernel '%s' could not be analysed, so no source "
                   "transform applies (only its parameters are tuned)", t->path, t->kernel);
        return 0;
    }
    const char *file = t->ir->path;
    if (tforge_file_read(&t->kernel_text, &t->kernel_size, file))
        return tforge_error_set(TFORGE_EINPUT, "%s: cannot read the kernel's file %s", t->path,
                                file);
    uint32_t dims = tforge_space_dims(t->space);
    if (!(t->knobs = calloc(dims + 1, sizeof *t->knobs)))
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    for (uint32_t d = 0; d < dims; d++)
        if (!(t->knobs[t->n_knobs++] = strdup(tforge_space_name(t->space, d))))
            return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    int rc = tforge_transforms_open(&t->transforms, registry, ids, &t->ir->kernels[0],
                                    t->kernel_text, t->kernel_size,
                                    (const char *const *)t->knobs, t->n_knobs, options);
    if (rc)
        return rc;
    return tforge_task_select(t, t->shape);
}

int tforge_task_add_proposal(tforge_task *t, const char *source, uint32_t *level)
{
    char digest[TFORGE_DIGEST_SIZE];
    tforge_digest_text(digest, source, strlen(source));
    for (size_t i = 0; i < t->n_proposals; i++)
        if (strcmp(t->proposal_digests[i], digest) == 0) {
            *level = (uint32_t)i + 1;
            return 0;
        }
    size_t n = t->n_proposals + 1;
    char **texts = realloc(t->proposals, n * sizeof *texts);
    if (texts)
        t->proposals = texts;
    char(*digests)[TFORGE_DIGEST_SIZE] = realloc(t->proposal_digests, n * sizeof *digests);
    if (digests)
        t->proposal_digests = digests;
    if (!texts || !digests || !(t->proposals[n - 1] = strdup(source)))
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    memcpy(t->proposal_digests[n - 1], digest, sizeof digest);
    t->n_proposals = n;
    int rc = tforge_task_check_spaces(t); /* every other shape's, then the selected one's */
    if (!rc)
        rc = tforge_task_select(t, t->shape);
    if (rc) { /* the space as it was: the proposal is not one of its levels */
        free(t->proposals[--t->n_proposals]);
        int again = tforge_task_select(t, t->shape);
        return again ? again : rc;
    }
    *level = (uint32_t)n;
    return 0;
}

int tforge_task_declare_variant(tforge_task *t)
{
    if (t->variant_declared)
        return 0;
    t->variant_declared = 1;
    int rc = tforge_task_check_spaces(t);
    if (!rc)
        rc = tforge_task_select(t, t->shape);
    if (rc) { /* the space as it was */
        t->variant_declared = 0;
        int again = tforge_task_select(t, t->shape);
        return again ? again : rc;
    }
    return 0;
}

uint32_t tforge_task_variant_level(const tforge_task *t, const tforge_level *point)
{
    for (uint32_t d = 0; point && t->n_proposals && d < tforge_space_dims(t->space); d++)
        if (tforge_space_role(t->space, d) == TFORGE_DIM_REWRITE &&
            strcmp(tforge_space_owner(t->space, d), TFORGE_TASK_VARIANT_OWNER) == 0)
            return point[d];
    return 0;
}

int tforge_task_variant(char **out, const tforge_task *t, const tforge_level *point,
                        size_t without)
{
    *out = NULL;
    uint32_t level = tforge_task_variant_level(t, point);
    if (level) /* a proposal: the transforms' dimensions are at level 0 there */
        return (*out = strdup(t->proposals[level - 1]))
                   ? 0
                   : tforge_error_set(TFORGE_ENOMEM, "out of memory");
    return t->transforms ? tforge_transforms_variant(out, t->transforms, t->space, point, without)
                         : 0;
}

int tforge_task_rewrites(char **out, const tforge_task *t, const tforge_level *point)
{
    *out = NULL;
    if (!point)
        return 0;
    unsigned char *which = dims_of(t, point, 0);
    if (!which)
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    size_t any = 0;
    for (uint32_t d = 0; d < tforge_space_dims(t->space); d++)
        any += which[d];
    int rc = any ? tforge_space_format(out, t->space, point, which) : 0;
    free(which);
    return rc;
}
