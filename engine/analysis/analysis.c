#include "analysis.h"

#include "tforge/error.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* One allocation per block, freed together: the IR is built once and read, never edited. */
struct tforge_ir_arena {
    struct tforge_ir_arena *next;
    size_t used, size;
    max_align_t data[];
};

enum { ARENA_BLOCK = 64 * 1024 };

static void *arena_alloc(struct tforge_ir_arena **head, size_t size)
{
    size = (size + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
    struct tforge_ir_arena *a = *head;
    if (!a || a->size - a->used < size) {
        size_t capacity = size > ARENA_BLOCK ? size : ARENA_BLOCK;
        if (!(a = malloc(sizeof *a + capacity)))
            return NULL;
        a->next = *head;
        a->used = 0;
        a->size = capacity;
        *head = a;
    }
    void *out = (char *)a->data + a->used;
    a->used += size;
    return memset(out, 0, size);
}

/* The parse in progress: the first error stops it (every helper is then a no-op). */
typedef struct parser {
    tforge_ir_file *file;
    const char *path;
    char where[512]; /* the element being read, "kernels[0].params[2]" */
    int rc;
} parser;

static void *take(parser *p, size_t size)
{
    void *out = p->rc ? NULL : arena_alloc(&p->file->arena, size ? size : 1);
    if (!out && !p->rc)
        p->rc = tforge_error_set(TFORGE_ENOMEM, "%s: out of memory reading its analysis", p->path);
    return out;
}

static void fail(parser *p, const char *key, const char *expected, const cJSON *got)
{
    if (p->rc)
        return;
    char *shown = got ? cJSON_PrintUnformatted(got) : NULL;
    p->rc = tforge_error_set(TFORGE_EINPUT, "%s: analysis: %s%s%s: expected %s, got %.80s",
                             p->path, p->where, p->where[0] && key[0] ? "." : "", key, expected,
                             shown ? shown : "nothing");
    free(shown);
}

static size_t push(parser *p, const char *format, ...)
{
    size_t len = strlen(p->where);
    va_list args;
    va_start(args, format);
    vsnprintf(p->where + len, sizeof p->where - len, format, args);
    va_end(args);
    return len;
}

static void pop(parser *p, size_t len)
{
    p->where[len] = '\0';
}

static const char *copy(parser *p, const char *s)
{
    char *out = take(p, strlen(s) + 1);
    return out ? strcpy(out, s) : NULL;
}

/* A string field; missing or null is NULL unless `required`. */
static const char *text(parser *p, const cJSON *o, const char *key, int required)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (p->rc)
        return NULL;
    if (cJSON_IsString(v))
        return copy(p, v->valuestring);
    if (required || (v && !cJSON_IsNull(v)))
        fail(p, key, required ? "a string" : "a string or null", v);
    return NULL;
}

/* Any value as its JSON text (defaults, config values); NULL when missing or null. */
static const char *json_text(parser *p, const cJSON *v)
{
    if (p->rc || !v || cJSON_IsNull(v))
        return NULL;
    char *printed = cJSON_PrintUnformatted(v);
    if (!printed) {
        p->rc = tforge_error_set(TFORGE_ENOMEM, "%s: out of memory reading its analysis", p->path);
        return NULL;
    }
    const char *out = copy(p, printed);
    free(printed);
    return out;
}

static int flag(parser *p, const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (v && !cJSON_IsBool(v))
        fail(p, key, "true or false", v);
    return cJSON_IsTrue(v);
}

static int integer(parser *p, const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v) || v->valuedouble != (int)v->valuedouble) {
        fail(p, key, "an integer", v);
        return 0;
    }
    return (int)v->valuedouble;
}

static int choice(parser *p, const cJSON *o, const char *key, const char *const *names, int n)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    for (int i = 0; cJSON_IsString(v) && i < n; i++)
        if (strcmp(v->valuestring, names[i]) == 0)
            return i;
    char expected[256] = "one of";
    for (int i = 0; i < n; i++)
        snprintf(expected + strlen(expected), sizeof expected - strlen(expected), "%s %s",
                 i ? "," : "", names[i]);
    fail(p, key, expected, v);
    return 0;
}

static tforge_ir_span span_value(parser *p, const cJSON *v, const char *key)
{
    tforge_ir_span s = {0};
    if (!cJSON_IsObject(v)) {
        fail(p, key, "a span {line, col, end_line, end_col, start, end}", v);
        return s;
    }
    size_t len = push(p, "%s%s", p->where[0] && key[0] ? "." : "", key);
    s.line = integer(p, v, "line");
    s.col = integer(p, v, "col");
    s.end_line = integer(p, v, "end_line");
    s.end_col = integer(p, v, "end_col");
    int start = integer(p, v, "start"), end = integer(p, v, "end");
    if (!p->rc && (start < 0 || end < start))
        fail(p, "end", "byte offsets with 0 <= start <= end", v);
    s.start = (uint32_t)start;
    s.end = (uint32_t)end;
    pop(p, len);
    return s;
}

static tforge_ir_span span(parser *p, const cJSON *o, const char *key)
{
    return span_value(p, cJSON_GetObjectItemCaseSensitive(o, key), key);
}

/* A span that may be null or missing (a zero span then). */
static tforge_ir_span optional_span(parser *p, const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return !v || cJSON_IsNull(v) ? (tforge_ir_span){0} : span_value(p, v, key);
}

typedef void parse_fn(parser *p, const cJSON *o, void *out);

/* An array of objects, each read by `each` into an element of `size` bytes. Missing or null is
 * empty unless `required`. */
static void *array(parser *p, const cJSON *o, const char *key, int required, size_t size,
                   size_t *n, parse_fn *each)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    *n = 0;
    if (p->rc || ((!v || cJSON_IsNull(v)) && !required))
        return NULL;
    if (!cJSON_IsArray(v)) {
        fail(p, key, "a list", v);
        return NULL;
    }
    size_t count = (size_t)cJSON_GetArraySize(v), i = 0;
    char *out = take(p, size * count);
    for (const cJSON *item = v->child; item && !p->rc; item = item->next, i++) {
        size_t len = push(p, "%s%s[%zu]", p->where[0] ? "." : "", key, i);
        if (each == NULL || cJSON_IsObject(item))
            each(p, item, out + i * size);
        else
            fail(p, "", "an object", item);
        pop(p, len);
    }
    *n = p->rc ? 0 : count;
    return out;
}

static void string_item(parser *p, const cJSON *o, void *out)
{
    if (!cJSON_IsString(o))
        fail(p, "", "a string", o);
    else
        *(const char **)out = copy(p, o->valuestring);
}

static const char **strings(parser *p, const cJSON *o, const char *key, size_t *n)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    *n = 0;
    if (p->rc || !v || cJSON_IsNull(v))
        return NULL;
    if (!cJSON_IsArray(v)) {
        fail(p, key, "a list of strings", v);
        return NULL;
    }
    size_t count = (size_t)cJSON_GetArraySize(v), i = 0;
    const char **out = take(p, sizeof *out * count);
    for (const cJSON *item = v->child; item && !p->rc; item = item->next, i++) {
        size_t len = push(p, "%s%s[%zu]", p->where[0] ? "." : "", key, i);
        string_item(p, item, &out[i]);
        pop(p, len);
    }
    *n = p->rc ? 0 : count;
    return out;
}

/* An object {name: value} as pairs: values that are strings as they are, or (`as_json`) any
 * value as its JSON text. */
static tforge_ir_pair *pairs(parser *p, const cJSON *o, const char *key, int as_json, size_t *n)
{
    const cJSON *v = key ? cJSON_GetObjectItemCaseSensitive(o, key) : o;
    *n = 0;
    if (p->rc || !v || cJSON_IsNull(v))
        return NULL;
    if (!cJSON_IsObject(v)) {
        fail(p, key ? key : "", "an object", v);
        return NULL;
    }
    size_t count = (size_t)cJSON_GetArraySize(v), i = 0;
    tforge_ir_pair *out = take(p, sizeof *out * count);
    for (const cJSON *item = v->child; item && !p->rc; item = item->next, i++) {
        out[i].name = copy(p, item->string);
        if (as_json)
            out[i].text = json_text(p, item);
        else if (cJSON_IsString(item))
            out[i].text = copy(p, item->valuestring);
        else if (!cJSON_IsNull(item))
            fail(p, item->string, "a string", item);
    }
    *n = p->rc ? 0 : count;
    return out;
}

static void parse_param(parser *p, const cJSON *o, void *out)
{
    static const char *const kinds[] = {"scalar", "pointer", "constexpr"};
    tforge_ir_param *x = out;
    x->name = text(p, o, "name", 1);
    x->kind = (tforge_ir_param_kind)choice(p, o, "kind", kinds, 3);
    x->default_json = json_text(p, cJSON_GetObjectItemCaseSensitive(o, "default"));
    x->uses = strings(p, o, "uses", &x->n_uses);
    x->span = span(p, o, "span");
}

static void parse_loop(parser *p, const cJSON *o, void *out)
{
    tforge_ir_loop *x = out;
    x->kind = text(p, o, "kind", 1);
    x->var = text(p, o, "var", 1);
    x->start = text(p, o, "start", 1);
    x->stop = text(p, o, "stop", 1);
    x->step = text(p, o, "step", 1);
    x->trip_count = text(p, o, "trip_count", 1);
    x->options = pairs(p, o, "options", 0, &x->n_options);
    x->depth = integer(p, o, "depth");
    x->span = span(p, o, "span");
    x->iter = span(p, o, "iter_span");
    x->func = span(p, o, "func_span");
}

static void parse_memop(parser *p, const cJSON *o, void *out)
{
    tforge_ir_memop *x = out;
    x->op = text(p, o, "op", 1);
    x->pointer = text(p, o, "pointer", 0);
    x->value = text(p, o, "value", 0);
    x->mask = text(p, o, "mask", 0);
    x->other = text(p, o, "other", 0);
    x->cache_modifier = text(p, o, "cache_modifier", 0);
    x->eviction_policy = text(p, o, "eviction_policy", 0);
    x->volatile_ = text(p, o, "volatile", 0);
    x->boundary_check = text(p, o, "boundary_check", 0);
    x->padding_option = text(p, o, "padding_option", 0);
    x->block_shape = text(p, o, "block_shape", 0);
    x->offsets = text(p, o, "offsets", 0);
    x->block_pointer = flag(p, o, "block_pointer");
    x->descriptor = flag(p, o, "descriptor");
    x->in_loop = flag(p, o, "in_loop");
    x->span = span(p, o, "span");
}

static void parse_dot(parser *p, const cJSON *o, void *out)
{
    tforge_ir_dot *x = out;
    x->a = text(p, o, "a", 0);
    x->b = text(p, o, "b", 0);
    x->acc = text(p, o, "acc", 0);
    x->input_precision = text(p, o, "input_precision", 0);
    x->out_dtype = text(p, o, "out_dtype", 0);
    x->max_num_imprecise_acc = text(p, o, "max_num_imprecise_acc", 0);
    x->allow_tf32 = text(p, o, "allow_tf32", 0);
    x->m = text(p, o, "m", 0);
    x->n = text(p, o, "n", 0);
    x->k = text(p, o, "k", 0);
    x->in_loop = flag(p, o, "in_loop");
    x->span = span(p, o, "span");
}

static void parse_reduction(parser *p, const cJSON *o, void *out)
{
    tforge_ir_op *x = out;
    x->op = text(p, o, "op", 1);
    x->operand = text(p, o, "input", 0);
    x->detail = text(p, o, "axis", 0);
    x->span = span(p, o, "span");
}

static void parse_atomic(parser *p, const cJSON *o, void *out)
{
    tforge_ir_op *x = out;
    x->op = text(p, o, "op", 1);
    x->operand = text(p, o, "pointer", 0);
    x->detail = text(p, o, "value", 0);
    x->span = span(p, o, "span");
}

static void parse_program_id(parser *p, const cJSON *o, void *out)
{
    tforge_ir_op *x = out;
    x->op = "program_id";
    x->detail = text(p, o, "axis", 0);
    x->span = span(p, o, "span");
}

static void parse_num_programs(parser *p, const cJSON *o, void *out)
{
    parse_program_id(p, o, out);
    ((tforge_ir_op *)out)->op = "num_programs";
}

static void parse_call(parser *p, const cJSON *o, void *out)
{
    tforge_ir_op *x = out;
    x->op = text(p, o, "callee", 1);
    x->span = span(p, o, "span");
}

static void parse_config(parser *p, const cJSON *o, void *out)
{
    tforge_ir_config *x = out;
    x->values = pairs(p, o, NULL, 1, &x->n_values);
}

static void parse_launch_arg(parser *p, const cJSON *o, void *out)
{
    tforge_ir_launch_arg *x = out;
    x->name = text(p, o, "name", 1);
    x->value = text(p, o, "value", 1);
    x->assigned = text(p, o, "assigned", 0);
    x->from_param = flag(p, o, "from_param");
    x->positional = flag(p, o, "positional");
}

static void parse_launch_site(parser *p, const cJSON *o, void *out)
{
    static const char *const kinds[] = {"tuple", "lambda", "name", "expression"};
    tforge_ir_launch_site *x = out;
    x->function = text(p, o, "function", 1);
    x->qualname = text(p, o, "qualname", 1);
    x->params = strings(p, o, "params", &x->n_params);
    const cJSON *grid = cJSON_GetObjectItemCaseSensitive(o, "grid");
    if (!cJSON_IsObject(grid)) {
        fail(p, "grid", "an object {text, kind, assigned}", grid);
    } else {
        size_t len = push(p, ".grid");
        x->grid = text(p, grid, "text", 1);
        x->grid_kind = kinds[choice(p, grid, "kind", kinds, 4)];
        x->grid_assigned = text(p, grid, "assigned", 0);
        pop(p, len);
    }
    x->args = strings(p, o, "args", &x->n_args);
    x->kwargs = pairs(p, o, "kwargs", 0, &x->n_kwargs);
    x->constexprs = array(p, o, "constexprs", 0, sizeof *x->constexprs, &x->n_constexprs,
                          parse_launch_arg);
    x->num_warps = text(p, o, "num_warps", 0);
    x->num_stages = text(p, o, "num_stages", 0);
    x->span = span(p, o, "span");
    x->function_span = span(p, o, "function_span");
}

static const char *const tunable_kinds[] = {"fixed", "block", "step", "group", "warps", "stages"};

const char *tforge_ir_tunable_kind_name(tforge_ir_tunable_kind kind)
{
    return (unsigned)kind < sizeof tunable_kinds / sizeof *tunable_kinds ? tunable_kinds[kind]
                                                                          : "?";
}

static void parse_tunable(parser *p, const cJSON *o, void *out)
{
    tforge_ir_tunable *x = out;
    x->name = text(p, o, "name", 1);
    x->kind = (tforge_ir_tunable_kind)choice(p, o, "kind", tunable_kinds, 6);
    x->why = text(p, o, "why", 0);
    x->domain = text(p, o, "domain", 0);
    x->covers_row = text(p, o, "covers_row", 0);
    x->relates_to = strings(p, o, "relates_to", &x->n_relates_to);
    x->dot = flag(p, o, "dot");
}

static void parse_constraint(parser *p, const cJSON *o, void *out)
{
    tforge_ir_constraint *x = out;
    x->expr = text(p, o, "expr", 1);
    x->why = text(p, o, "why", 0);
}

static void parse_statement(parser *p, const cJSON *o, void *out)
{
    tforge_ir_statement *x = out;
    x->kind = text(p, o, "kind", 0);
    x->text = text(p, o, "text", 1);
    x->span = span(p, o, "span");
}

static tforge_ir_autotune *parse_autotune(parser *p, const cJSON *o)
{
    tforge_ir_autotune *x = take(p, sizeof *x);
    if (!x)
        return NULL;
    size_t len = push(p, ".autotune");
    x->configs_text = text(p, o, "configs_text", 1);
    x->configs_source = text(p, o, "configs_source", 0);
    x->configs_literal = flag(p, o, "configs_literal");
    x->configs = array(p, o, "configs", 0, sizeof *x->configs, &x->n_configs, parse_config);
    const cJSON *key = cJSON_GetObjectItemCaseSensitive(o, "key");
    x->key = cJSON_IsString(key) ? copy(p, key->valuestring) : json_text(p, key);
    x->prune_configs_by = text(p, o, "prune_configs_by", 0);
    x->reset_to_zero = json_text(p, cJSON_GetObjectItemCaseSensitive(o, "reset_to_zero"));
    x->restore_value = json_text(p, cJSON_GetObjectItemCaseSensitive(o, "restore_value"));
    x->pre_hook = text(p, o, "pre_hook", 0);
    x->post_hook = text(p, o, "post_hook", 0);
    x->span = span(p, o, "span");
    pop(p, len);
    return x;
}

static tforge_ir_heuristics *parse_heuristics(parser *p, const cJSON *o)
{
    tforge_ir_heuristics *x = take(p, sizeof *x);
    if (!x)
        return NULL;
    size_t len = push(p, ".heuristics");
    x->values = pairs(p, o, "values", 0, &x->n_values);
    x->span = span(p, o, "span");
    pop(p, len);
    return x;
}

static void parse_math(parser *p, const cJSON *o, void *out)
{
    tforge_ir_math *x = out;
    x->op = text(p, o, "op", 1);
    x->span = span(p, o, "span");
    x->func = span(p, o, "func_span");
    x->arg = span(p, o, "arg_span");
}

static void parse_offset(parser *p, const cJSON *o, void *out)
{
    tforge_ir_offset *x = out;
    x->name = text(p, o, "name", 1);
    x->multiple = text(p, o, "multiple", 1);
    x->contiguous = text(p, o, "contiguous", 1);
    x->span = span(p, o, "span");
}

static tforge_ir_tile_map *parse_tile_map(parser *p, const cJSON *o)
{
    static const char *const forms[] = {"linear", "grid2d"};
    tforge_ir_tile_map *x = take(p, sizeof *x);
    if (!x)
        return NULL;
    size_t len = push(p, ".tile_map");
    x->form = forms[choice(p, o, "form", forms, 2)];
    x->pid = text(p, o, "pid", 0);
    x->num_pid_n = text(p, o, "num_pid_n", 0);
    x->m_target = text(p, o, "m_target", 1);
    x->n_target = text(p, o, "n_target", 1);
    x->m_stmt = span(p, o, "m_stmt");
    x->n_stmt = span(p, o, "n_stmt");
    if (!p->rc && strcmp(x->form, "linear") == 0 && (!x->pid || !x->num_pid_n))
        fail(p, "pid", "pid and num_pid_n for a linear tile map", o);
    pop(p, len);
    return x;
}

static void parse_gemm_matrix(parser *p, const cJSON *o, const char *key,
                              tforge_ir_gemm_matrix *x)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsObject(m)) {
        fail(p, key, "an object", m);
        return;
    }
    size_t len = push(p, ".%s", key);
    x->base = text(p, m, "base", 1);
    x->stride_row = text(p, m, "stride_row", 1);
    x->stride_col = text(p, m, "stride_col", 1);
    x->row_start = text(p, m, "row_start", 1);
    x->col_start = text(p, m, "col_start", 1);
    x->ptrs = text(p, m, "ptrs", 0);
    x->mask = text(p, m, "mask", 0);
    x->other = text(p, m, "other", 0);
    x->value = text(p, m, "value", 0);
    x->pointer = text(p, m, "pointer", 0);
    x->plain = flag(p, m, "plain");
    x->ptrs_stmt = optional_span(p, m, "ptrs_stmt");
    x->access = span(p, m, "access");
    x->advance = optional_span(p, m, "advance");
    const cJSON *batch = cJSON_GetObjectItemCaseSensitive(m, "batch");
    if (cJSON_IsObject(batch)) {
        size_t at = push(p, ".batch");
        x->batch.pointer = text(p, batch, "pointer", 1);
        x->batch.index = text(p, batch, "index", 1);
        x->batch.stride = strings(p, batch, "stride", &x->batch.n_stride);
        if (!p->rc && !x->batch.n_stride)
            fail(p, "stride", "the factors of the batch stride", batch);
        pop(p, at);
    } else if (batch && !cJSON_IsNull(batch)) {
        fail(p, "batch", "an object or null", batch);
    }
    pop(p, len);
}

static void parse_line_start(parser *p, const cJSON *o, void *out)
{
    *(tforge_ir_span *)out = span_value(p, o, "");
}

static tforge_ir_gemm *parse_gemm(parser *p, const cJSON *o)
{
    tforge_ir_gemm *x = take(p, sizeof *x);
    if (!x)
        return NULL;
    size_t len = push(p, ".gemm");
    x->m = text(p, o, "m", 1);
    x->n = text(p, o, "n", 1);
    x->k = text(p, o, "k", 1);
    x->block_m = text(p, o, "block_m", 1);
    x->block_n = text(p, o, "block_n", 1);
    x->block_k = text(p, o, "block_k", 1);
    x->group_m = text(p, o, "group_m", 0);
    x->acc = text(p, o, "acc", 1);
    x->acc_dtype = text(p, o, "acc_dtype", 0);
    x->store_dtype = text(p, o, "store_dtype", 0);
    x->stores_acc = flag(p, o, "stores_acc");
    x->k_var = text(p, o, "k_var", 1);
    x->k_offset = text(p, o, "k_offset", 1);
    parse_gemm_matrix(p, o, "a", &x->a);
    parse_gemm_matrix(p, o, "b", &x->b);
    parse_gemm_matrix(p, o, "c", &x->c);
    x->loop = span(p, o, "loop");
    x->dot = span(p, o, "dot");
    x->k_args = span(p, o, "k_args");
    x->k_stop = text(p, o, "k_stop", 1);
    x->k_step = text(p, o, "k_step", 1);
    x->k_advanced = flag(p, o, "k_advanced");
    const cJSON *body = cJSON_GetObjectItemCaseSensitive(o, "tile_body");
    if (cJSON_IsObject(body)) {
        size_t at = push(p, ".tile_body");
        x->pid = text(p, body, "pid", 1);
        x->pid_stmt = span(p, body, "stmt");
        x->pid_call = span(p, body, "call");
        x->lines = array(p, body, "lines", 1, sizeof *x->lines, &x->n_lines, parse_line_start);
        pop(p, at);
    } else if (body && !cJSON_IsNull(body)) {
        fail(p, "tile_body", "an object or null", body);
    }
    pop(p, len);
    return x;
}

static void parse_loop_tail(parser *p, const cJSON *o, void *out)
{
    static const char *const forms[] = {"step", "count", "diagonal"};
    tforge_ir_loop_tail *x = out;
    x->form = forms[choice(p, o, "form", forms, 3)];
    x->var = text(p, o, "var", 1);
    x->size = text(p, o, "size", 1);
    x->block = text(p, o, "block", 1);
    x->span = span(p, o, "span");
    x->stop = span(p, o, "stop");
    x->body = span(p, o, "body");
    x->drops = array(p, o, "drops", 1, sizeof *x->drops, &x->n_drops, parse_line_start);
    x->trues = array(p, o, "trues", 0, sizeof *x->trues, &x->n_trues, parse_line_start);
}

static void parse_scale_fold(parser *p, const cJSON *o, void *out)
{
    tforge_ir_scale_fold *x = out;
    x->x = text(p, o, "x", 1);
    x->scale = text(p, o, "scale", 1);
    x->params = strings(p, o, "params", &x->n_params);
    x->stmt = span(p, o, "stmt");
    x->cut = span(p, o, "cut");
    x->loop = span(p, o, "loop");
    x->maxes = array(p, o, "maxes", 1, sizeof *x->maxes, &x->n_maxes, parse_line_start);
    x->subs = array(p, o, "subs", 0, sizeof *x->subs, &x->n_subs, parse_line_start);
}

static void parse_kernel(parser *p, const cJSON *o, void *out)
{
    tforge_ir_kernel *k = out;
    k->name = text(p, o, "name", 1);
    k->language = text(p, o, "language", 0);
    if (!k->language)
        k->language = "triton.language";
    k->span = span(p, o, "span");
    k->decorators = array(p, o, "decorators", 0, sizeof *k->decorators, &k->n_decorators,
                          parse_statement);
    k->jit_options = pairs(p, o, "jit_options", 0, &k->n_jit_options);
    const cJSON *autotune = cJSON_GetObjectItemCaseSensitive(o, "autotune");
    if (cJSON_IsObject(autotune))
        k->autotune = parse_autotune(p, autotune);
    else if (autotune && !cJSON_IsNull(autotune))
        fail(p, "autotune", "an object or null", autotune);
    const cJSON *heuristics = cJSON_GetObjectItemCaseSensitive(o, "heuristics");
    if (cJSON_IsObject(heuristics))
        k->heuristics = parse_heuristics(p, heuristics);
    else if (heuristics && !cJSON_IsNull(heuristics))
        fail(p, "heuristics", "an object or null", heuristics);
    k->params = array(p, o, "params", 1, sizeof *k->params, &k->n_params, parse_param);
    k->loops = array(p, o, "loops", 0, sizeof *k->loops, &k->n_loops, parse_loop);
    k->memops = array(p, o, "memops", 0, sizeof *k->memops, &k->n_memops, parse_memop);
    k->dots = array(p, o, "dots", 0, sizeof *k->dots, &k->n_dots, parse_dot);
    k->reductions = array(p, o, "reductions", 0, sizeof *k->reductions, &k->n_reductions,
                          parse_reduction);
    k->atomics = array(p, o, "atomics", 0, sizeof *k->atomics, &k->n_atomics, parse_atomic);
    /* program ids and numbers of programs read into one list, ids first */
    size_t n_ids, n_nums;
    tforge_ir_op *ids = array(p, o, "program_ids", 0, sizeof *ids, &n_ids, parse_program_id);
    tforge_ir_op *nums = array(p, o, "num_programs", 0, sizeof *nums, &n_nums,
                               parse_num_programs);
    if ((k->program_ids = take(p, sizeof *ids * (n_ids + n_nums)))) {
        if (n_ids) /* memcpy from NULL is undefined even for 0 bytes */
            memcpy(k->program_ids, ids, sizeof *ids * n_ids);
        if (n_nums)
            memcpy(k->program_ids + n_ids, nums, sizeof *nums * n_nums);
        k->n_program_ids = n_ids + n_nums;
    }
    k->calls = array(p, o, "calls", 0, sizeof *k->calls, &k->n_calls, parse_call);
    k->launch_sites = array(p, o, "launch_sites", 0, sizeof *k->launch_sites,
                            &k->n_launch_sites, parse_launch_site);
    k->tunables = array(p, o, "tunables", 0, sizeof *k->tunables, &k->n_tunables,
                        parse_tunable);
    k->constraints = array(p, o, "constraints", 0, sizeof *k->constraints, &k->n_constraints,
                           parse_constraint);
    k->math = array(p, o, "math", 0, sizeof *k->math, &k->n_math, parse_math);
    k->offsets = array(p, o, "offsets", 0, sizeof *k->offsets, &k->n_offsets, parse_offset);
    const cJSON *tile_map = cJSON_GetObjectItemCaseSensitive(o, "tile_map");
    if (cJSON_IsObject(tile_map))
        k->tile_map = parse_tile_map(p, tile_map);
    else if (tile_map && !cJSON_IsNull(tile_map))
        fail(p, "tile_map", "an object or null", tile_map);
    const cJSON *gemm = cJSON_GetObjectItemCaseSensitive(o, "gemm");
    if (cJSON_IsObject(gemm))
        k->gemm = parse_gemm(p, gemm);
    else if (gemm && !cJSON_IsNull(gemm))
        fail(p, "gemm", "an object or null", gemm);
    k->loop_tails = array(p, o, "loop_tails", 0, sizeof *k->loop_tails, &k->n_loop_tails,
                          parse_loop_tail);
    k->scale_folds = array(p, o, "scale_folds", 0, sizeof *k->scale_folds,
                           &k->n_scale_folds, parse_scale_fold);
}

static void parse_function(parser *p, const cJSON *o, void *out)
{
    tforge_ir_function *x = out;
    x->name = text(p, o, "name", 1);
    x->qualname = text(p, o, "qualname", 1);
    x->span = span(p, o, "span");
}

int tforge_ir_parse(tforge_ir_file **out, const char *json, const char *path)
{
    *out = NULL;
    tforge_ir_file *file = calloc(1, sizeof *file);
    if (!file)
        return tforge_error_set(TFORGE_ENOMEM, "%s: out of memory reading its analysis", path);
    parser p = {file, path, "", 0};
    cJSON *doc = cJSON_Parse(json);
    if (!cJSON_IsObject(doc)) {
        p.rc = tforge_error_set(TFORGE_EINPUT, "%s: analysis: expected a JSON object", path);
    } else {
        file->path = text(&p, doc, "path", 1);
        file->kernels = array(&p, doc, "kernels", 1, sizeof *file->kernels, &file->n_kernels,
                              parse_kernel);
        file->functions = array(&p, doc, "functions", 0, sizeof *file->functions,
                                &file->n_functions, parse_function);
        file->device_queries = array(&p, doc, "device_queries", 0, sizeof *file->device_queries,
                                     &file->n_device_queries, parse_statement);
    }
    cJSON_Delete(doc);
    if (p.rc) {
        tforge_ir_free(file);
        return p.rc;
    }
    *out = file;
    return 0;
}

void tforge_ir_free(tforge_ir_file *file)
{
    if (!file)
        return;
    for (struct tforge_ir_arena *a = file->arena, *next; a; a = next) {
        next = a->next;
        free(a);
    }
    free(file);
}

/* ---- the human-readable report ---- */

static void print_list(FILE *out, const char *const *items, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%s%s", i ? ", " : "", items[i]);
}

static void print_option(FILE *out, const char *name, const char *value)
{
    if (value)
        fprintf(out, " %s=%s", name, value);
}

static void print_params(FILE *out, const tforge_ir_kernel *k)
{
    static const char *const kinds[] = {"scalar", "pointer", "constexpr"};
    fprintf(out, "  params:\n");
    for (size_t i = 0; i < k->n_params; i++) {
        const tforge_ir_param *x = &k->params[i];
        fprintf(out, "    %-20s %s", x->name, kinds[x->kind]);
        if (x->default_json)
            fprintf(out, " = %s", x->default_json);
        if (x->kind == TFORGE_IR_CONSTEXPR) {
            fprintf(out, "  uses: ");
            print_list(out, x->uses, x->n_uses);
        }
        fputc('\n', out);
    }
}

static void print_body(FILE *out, const char *path, const tforge_ir_kernel *k)
{
    if (k->n_loops)
        fprintf(out, "  loops:\n");
    for (size_t i = 0; i < k->n_loops; i++) {
        const tforge_ir_loop *x = &k->loops[i];
        fprintf(out, "    %s:%d %*s%s %s in [%s, %s) step %s: %s trips", path, x->span.line,
                2 * x->depth, "", x->kind, x->var, x->start, x->stop, x->step, x->trip_count);
        for (size_t j = 0; j < x->n_options; j++)
            print_option(out, x->options[j].name, x->options[j].text);
        fputc('\n', out);
    }
    size_t loads = 0, stores = 0, masked = 0, blocks = 0, descriptors = 0;
    for (size_t i = 0; i < k->n_memops; i++) {
        const tforge_ir_memop *x = &k->memops[i];
        loads += strcmp(x->op, "load") == 0;
        stores += strcmp(x->op, "store") == 0;
        masked += x->mask != NULL || x->boundary_check != NULL;
        blocks += x->block_pointer;
        descriptors += x->descriptor;
    }
    if (k->n_memops)
        fprintf(out, "  memory: %zu loads, %zu stores (%zu masked, %zu through block pointers, "
                     "%zu through descriptors)\n", loads, stores, masked, blocks, descriptors);
    for (size_t i = 0; i < k->n_memops; i++) {
        const tforge_ir_memop *x = &k->memops[i];
        fprintf(out, "    %s:%d %s %s", path, x->span.line, x->op, x->pointer ? x->pointer : "?");
        print_option(out, "value", x->value);
        print_option(out, "mask", x->mask);
        print_option(out, "other", x->other);
        print_option(out, "boundary_check", x->boundary_check);
        print_option(out, "block_shape", x->block_shape);
        print_option(out, "cache_modifier", x->cache_modifier);
        print_option(out, "eviction_policy", x->eviction_policy);
        print_option(out, "volatile", x->volatile_);
        fprintf(out, "%s\n", x->in_loop ? " (in a loop)" : "");
    }
    for (size_t i = 0; i < k->n_dots; i++) {
        const tforge_ir_dot *x = &k->dots[i];
        fprintf(out, "  %s %s:%d tl.dot(%s, %s)", i ? "    " : "dots:", path, x->span.line,
                x->a ? x->a : "?", x->b ? x->b : "?");
        print_option(out, "acc", x->acc);
        print_option(out, "input_precision", x->input_precision);
        print_option(out, "out_dtype", x->out_dtype);
        print_option(out, "max_num_imprecise_acc", x->max_num_imprecise_acc);
        if (x->m && x->n && x->k)
            fprintf(out, " [%s x %s, over %s]", x->m, x->n, x->k);
        fputc('\n', out);
    }
    const struct {
        const char *title;
        const tforge_ir_op *ops;
        size_t n;
    } groups[] = {{"reductions", k->reductions, k->n_reductions},
                  {"atomics", k->atomics, k->n_atomics},
                  {"program ids", k->program_ids, k->n_program_ids},
                  {"calls", k->calls, k->n_calls}};
    for (size_t g = 0; g < sizeof groups / sizeof *groups; g++)
        for (size_t i = 0; i < groups[g].n; i++) {
            const tforge_ir_op *x = &groups[g].ops[i];
            fprintf(out, "  %-12s %s:%d %s(%s%s%s)\n", i ? "" : groups[g].title, path,
                    x->span.line, x->op, x->operand ? x->operand : "",
                    x->operand && x->detail ? ", " : "", x->detail ? x->detail : "");
        }
}

static void print_decorators(FILE *out, const char *path, const tforge_ir_kernel *k)
{
    const tforge_ir_autotune *a = k->autotune;
    if (a) {
        fprintf(out, "  autotune %s:%d: configs %s (%s), key %s\n", path, a->span.line,
                a->configs_text, a->configs_literal ? "literal" : "built by code",
                a->key ? a->key : "?");
        print_option(out, "   prune_configs_by", a->prune_configs_by);
        print_option(out, "   reset_to_zero", a->reset_to_zero);
        print_option(out, "   restore_value", a->restore_value);
        print_option(out, "   pre_hook", a->pre_hook);
        print_option(out, "   post_hook", a->post_hook);
        if (a->prune_configs_by || a->reset_to_zero || a->restore_value || a->pre_hook ||
            a->post_hook)
            fputc('\n', out);
        for (size_t i = 0; i < a->n_configs; i++) {
            fprintf(out, "    config");
            for (size_t j = 0; j < a->configs[i].n_values; j++)
                print_option(out, a->configs[i].values[j].name, a->configs[i].values[j].text);
            fputc('\n', out);
        }
    }
    if (k->heuristics) {
        fprintf(out, "  heuristics %s:%d:\n", path, k->heuristics->span.line);
        for (size_t i = 0; i < k->heuristics->n_values; i++)
            fprintf(out, "    %s = %s\n", k->heuristics->values[i].name,
                    k->heuristics->values[i].text ? k->heuristics->values[i].text : "?");
    }
    for (size_t i = 0; i < k->n_jit_options; i++)
        fprintf(out, "  %s %s=%s\n", i ? "   " : "jit:", k->jit_options[i].name,
                k->jit_options[i].text);
}

static void print_launches(FILE *out, const char *path, const tforge_ir_kernel *k)
{
    for (size_t i = 0; i < k->n_launch_sites; i++) {
        const tforge_ir_launch_site *x = &k->launch_sites[i];
        fprintf(out, "  %s %s:%d %s(", i ? "            " : "launched at", path, x->span.line,
                x->qualname);
        print_list(out, x->params, x->n_params);
        fprintf(out, "): grid %s (%s)\n", x->grid, x->grid_kind);
        if (x->grid_assigned)
            fprintf(out, "      grid from: %s\n", x->grid_assigned);
        for (size_t j = 0; j < x->n_constexprs; j++) {
            const tforge_ir_launch_arg *c = &x->constexprs[j];
            fprintf(out, "      %s = %s", c->name, c->value);
            if (c->from_param)
                fprintf(out, " (the function's parameter)");
            if (c->assigned)
                fprintf(out, " (from: %s)", c->assigned);
            fputc('\n', out);
        }
        fprintf(out, "      num_warps %s, num_stages %s\n",
                x->num_warps ? x->num_warps : "not passed",
                x->num_stages ? x->num_stages : "not passed");
    }
}

static void print_tunables(FILE *out, const tforge_ir_kernel *k)
{
    fprintf(out, "  tunables:\n");
    for (size_t i = 0; i < k->n_tunables; i++) {
        const tforge_ir_tunable *x = &k->tunables[i];
        fprintf(out, "    %-20s %-6s %s", x->name, tforge_ir_tunable_kind_name(x->kind),
                x->kind == TFORGE_IR_FIXED && x->why ? x->why : x->domain ? x->domain : "");
        if (x->n_relates_to) {
            fprintf(out, " (masked against ");
            print_list(out, x->relates_to, x->n_relates_to);
            fputc(')', out);
        }
        fputc('\n', out);
    }
    for (size_t i = 0; i < k->n_constraints; i++)
        fprintf(out, "  %s %s%s%s\n", i ? "           " : "constraint", k->constraints[i].expr,
                k->constraints[i].why ? "  # " : "", k->constraints[i].why ? k->constraints[i].why
                                                                           : "");
}

/* What a rewrite can cut: exp calls, aligned offsets, the tile map, the GEMM. */
static void print_sites(FILE *out, const char *path, const tforge_ir_kernel *k)
{
    for (size_t i = 0; i < k->n_math; i++)
        fprintf(out, "  %s %s:%d %s\n", i ? "         " : "math:", path, k->math[i].span.line,
                k->math[i].op);
    for (size_t i = 0; i < k->n_offsets; i++)
        fprintf(out, "  %s %s:%d %s: multiple of %s, %s contiguous\n", i ? "       " : "offsets:",
                path, k->offsets[i].span.line, k->offsets[i].name, k->offsets[i].multiple,
                k->offsets[i].contiguous);
    if (k->tile_map)
        fprintf(out, "  tile map %s:%d-%d: %s (%s, %s)\n", path, k->tile_map->m_stmt.line,
                k->tile_map->n_stmt.line, k->tile_map->form, k->tile_map->m_target,
                k->tile_map->n_target);
    const tforge_ir_gemm *g = k->gemm;
    if (g) {
        fprintf(out, "  gemm %s:%d: %s = %s @ %s, %s x %s x %s in %s x %s x %s blocks", path,
                g->loop.line, g->c.base, g->a.base, g->b.base, g->m, g->n, g->k, g->block_m,
                g->block_n, g->block_k);
        if (g->group_m)
            fprintf(out, ", grouped by %s", g->group_m);
        if (g->store_dtype)
            fprintf(out, ", stored as %s", g->store_dtype);
        if (g->pid)
            fprintf(out, "; a tile a program from line %d", g->pid_stmt.line);
        fputc('\n', out);
    }
    for (size_t i = 0; i < k->n_loop_tails; i++) {
        const tforge_ir_loop_tail *t = &k->loop_tails[i];
        if (strcmp(t->form, "diagonal") == 0)
            fprintf(out, "  %s %s:%d: %s by %s, a causal mask only the blocks from row %s need "
                    "(%zu conditions)\n", i ? "         " : "loop tail", path, t->span.line,
                    t->var, t->block, t->size, t->n_trues);
        else
            fprintf(out, "  %s %s:%d: %s over %s by %s, masks only its last needs (%zu cuts, "
                    "%zu conditions)\n", i ? "         " : "loop tail", path, t->span.line,
                    t->var, t->size, t->block, t->n_drops, t->n_trues);
    }
    for (size_t i = 0; i < k->n_scale_folds; i++) {
        const tforge_ir_scale_fold *d = &k->scale_folds[i];
        fprintf(out, "  %s %s:%d: %s scaled by %s (positive%s", i ? "          " : "scale fold",
                path, d->stmt.line, d->x, d->scale, d->n_params ? " with " : "");
        print_list(out, d->params, d->n_params);
        fprintf(out, "), %zu max%s, %zu subtraction%s\n", d->n_maxes, d->n_maxes > 1 ? "es" : "",
                d->n_subs, d->n_subs == 1 ? "" : "s");
    }
}

void tforge_ir_print(FILE *out, const tforge_ir_file *file, const char *kernel)
{
    const char *path = file->path;
    for (size_t i = 0; i < file->n_kernels; i++) {
        const tforge_ir_kernel *k = &file->kernels[i];
        if (kernel && strcmp(kernel, k->name) != 0)
            continue;
        fprintf(out, "%skernel %s (%s:%d)\n", i ? "\n" : "", k->name, path, k->span.line);
        print_params(out, k);
        print_body(out, path, k);
        print_sites(out, path, k);
        print_decorators(out, path, k);
        print_launches(out, path, k);
        print_tunables(out, k);
    }
    if (!kernel && file->n_functions) {
        fprintf(out, "\nfunctions:");
        for (size_t i = 0; i < file->n_functions; i++)
            fprintf(out, " %s (%d)%s", file->functions[i].qualname, file->functions[i].span.line,
                    i + 1 < file->n_functions ? "," : "");
        fputc('\n', out);
    }
    if (!kernel && file->n_device_queries) {
        fprintf(out, "\ndevice queries at import:\n");
        for (size_t i = 0; i < file->n_device_queries; i++)
            fprintf(out, "  %s:%d %s\n", path, file->device_queries[i].span.line,
                    file->device_queries[i].text);
    }
}

size_t tforge_ir_print_notes(FILE *out, const char *json, const char *kernel)
{
    cJSON *doc = cJSON_Parse(json);
    size_t n = 0;
    const cJSON *k, *finding;
    cJSON_ArrayForEach(k, cJSON_GetObjectItemCaseSensitive(doc, "kernels")) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(k, "name");
        if (kernel && !(cJSON_IsString(name) && strcmp(name->valuestring, kernel) == 0))
            continue;
        cJSON_ArrayForEach(finding, cJSON_GetObjectItemCaseSensitive(k, "tile_logic")) {
            const cJSON *note = cJSON_GetObjectItemCaseSensitive(finding, "note");
            if (cJSON_IsString(note))
                fprintf(out, "%snote: %s\n", n++ ? "" : "\n", note->valuestring);
        }
    }
    cJSON_Delete(doc);
    return n;
}
