#include "expr.h"

#include "tforge/error.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX
/* Bound the parser's recursion (nesting) and the evaluator's (which is at most the node count). */
#define MAX_DEPTH 200
#define MAX_NODES 4096

typedef enum op {
    OP_NUM, OP_STR, OP_LOAD, OP_LOAD_STR, OP_NEG, OP_NOT, OP_AND, OP_OR,
    OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_FLOORDIV, OP_MOD, OP_POW,
    OP_CHAIN, OP_MIN, OP_MAX, OP_ABS
} op;

typedef enum cmp { CMP_EQ, CMP_NE, CMP_LT, CMP_LE, CMP_GT, CMP_GE } cmp;

/* Operands are indices into the node array, so the array can grow while parsing. */
typedef struct node {
    uint8_t op;
    uint8_t type; /* a tforge_expr_type */
    uint8_t cmp;  /* in a chain: how this operand compares with the one before */
    uint32_t kid, rhs;
    uint32_t next; /* the following operand of a chain or argument of a call */
    uint32_t dim;
    union {
        double num;
        const char *str;
        const double *values;
        const char *const *labels;
    } u;
} node;

struct tforge_expr {
    node *nodes;
    uint32_t n, cap, root;
    int64_t last_dim;
    char *strings; /* the string literals, each NUL-terminated */
};

typedef enum tok {
    T_END, T_NUM, T_STR, T_NAME, T_LP, T_RP, T_COMMA, T_PLUS, T_MINUS, T_STAR, T_SLASH,
    T_DSLASH, T_PERCENT, T_POW, T_EQ, T_NE, T_LT, T_LE, T_GT, T_GE, T_AND, T_OR, T_NOT,
    T_TRUE, T_FALSE
} tok;

typedef struct parser {
    const char *text;
    size_t pos;
    tok t;
    size_t col, len; /* the token's 0-based column and length */
    double num;
    const tforge_expr_param *params;
    uint32_t n_params;
    tforge_expr *e;
    size_t n_strings;
    int depth;
} parser;

#define TRY(x)                                                                                     \
    do {                                                                                           \
        int rc_ = (x);                                                                             \
        if (rc_ < 0)                                                                               \
            return rc_;                                                                            \
    } while (0)

__attribute__((format(printf, 3, 4))) static int fail(const parser *p, size_t col, const char *format, ...)
{
    char why[768];
    va_list args;
    va_start(args, format);
    vsnprintf(why, sizeof why, format, args);
    va_end(args);
    return tforge_error_set(TFORGE_EINPUT, "constraint '%s': column %zu: %s", p->text, col + 1,
                            why);
}

static const struct {
    const char *word;
    tok t;
} keywords[] = {{"and", T_AND},   {"or", T_OR},       {"not", T_NOT},  {"True", T_TRUE},
                {"true", T_TRUE}, {"False", T_FALSE}, {"false", T_FALSE}};

static int next(parser *p)
{
    const char *s = p->text;
    size_t i = p->pos;
    while (isspace((unsigned char)s[i]))
        i++;
    p->col = i;
    p->len = 1;
    char c = s[i], d = c ? s[i + 1] : '\0';
    if (c == '\0') {
        p->t = T_END;
        p->len = 0;
    } else if (isdigit((unsigned char)c) || (c == '.' && isdigit((unsigned char)d))) {
        char *end;
        p->num = strtod(s + i, &end);
        p->t = T_NUM;
        p->len = (size_t)(end - (s + i));
        if (isalpha((unsigned char)*end) || *end == '_')
            return fail(p, i, "malformed number '%.*s'", (int)p->len + 1, s + i);
    } else if (isalpha((unsigned char)c) || c == '_') {
        while (isalnum((unsigned char)s[i + p->len]) || s[i + p->len] == '_')
            p->len++;
        p->t = T_NAME;
        for (size_t k = 0; k < sizeof keywords / sizeof keywords[0]; k++)
            if (strlen(keywords[k].word) == p->len && !strncmp(keywords[k].word, s + i, p->len))
                p->t = keywords[k].t;
    } else if (c == '\'' || c == '"') {
        const char *close = strchr(s + i + 1, c);
        if (!close)
            return fail(p, i, "string not closed: missing %c", c);
        p->t = T_STR;
        p->len = (size_t)(close - (s + i)) + 1;
    } else {
        static const struct {
            const char *text;
            tok t;
        } ops[] = {{"**", T_POW}, {"//", T_DSLASH}, {"==", T_EQ}, {"!=", T_NE},   {"<=", T_LE},
                   {">=", T_GE},  {"&&", T_AND},    {"||", T_OR}, {"(", T_LP},    {")", T_RP},
                   {",", T_COMMA}, {"+", T_PLUS},   {"-", T_MINUS}, {"*", T_STAR}, {"/", T_SLASH},
                   {"%", T_PERCENT}, {"<", T_LT},   {">", T_GT},  {"!", T_NOT}};
        size_t k = 0, n = sizeof ops / sizeof ops[0];
        while (k < n && strncmp(s + i, ops[k].text, strlen(ops[k].text)))
            k++;
        if (k == n && c == '=')
            return fail(p, i, "'=' is not a comparison: write '=='");
        if (k == n)
            return fail(p, i, "unexpected character '%c'", c);
        p->t = ops[k].t;
        p->len = strlen(ops[k].text);
    }
    p->pos = i + p->len;
    return 0;
}

static int add_node(parser *p, uint32_t *out, op o, tforge_expr_type type)
{
    tforge_expr *e = p->e;
    if (e->n == MAX_NODES)
        return fail(p, p->col, "longer than %d terms", MAX_NODES);
    if (e->n == e->cap) {
        uint32_t cap = e->cap ? 2 * e->cap : 16;
        node *nodes = realloc(e->nodes, cap * sizeof *nodes);
        if (!nodes)
            return tforge_error_set(TFORGE_ENOMEM, "constraint '%s': out of memory", p->text);
        e->nodes = nodes;
        e->cap = cap;
    }
    *out = e->n++;
    e->nodes[*out] = (node){.op = (uint8_t)o, .type = (uint8_t)type, .kid = NONE, .rhs = NONE,
                            .next = NONE};
    return 0;
}

/* Says what a string operand is, for type errors. */
static const char *describe(const parser *p, uint32_t i, char *buf, size_t size)
{
    const node *x = &p->e->nodes[i];
    if (x->op == OP_LOAD_STR)
        snprintf(buf, size, "categorical parameter '%s' (a string)", p->params[x->dim].name);
    else
        snprintf(buf, size, "the string '%s'", x->u.str);
    return buf;
}

static int need_number(const parser *p, uint32_t i, size_t col, const char *what)
{
    char buf[256];
    if (p->e->nodes[i].type != TFORGE_EXPR_STRING)
        return 0;
    return fail(p, col, "%s needs numbers or booleans, not %s", what,
                describe(p, i, buf, sizeof buf));
}

static int binary(parser *p, uint32_t *out, op o, tforge_expr_type type, uint32_t l, uint32_t r)
{
    TRY(add_node(p, out, o, type));
    p->e->nodes[*out].kid = l;
    p->e->nodes[*out].rhs = r;
    return 0;
}

static int parse_or(parser *p, uint32_t *out);
static int parse_unary(parser *p, uint32_t *out);

static int deeper(parser *p)
{
    if (++p->depth > MAX_DEPTH)
        return fail(p, p->col, "nested more than %d deep", MAX_DEPTH);
    return 0;
}

static int parse_call(parser *p, uint32_t *out, size_t col, const char *name, size_t len)
{
    op o = !strncmp(name, "min", len) ? OP_MIN : !strncmp(name, "max", len) ? OP_MAX : OP_ABS;
    uint32_t first = NONE, last = NONE, n = 0;
    TRY(deeper(p));
    TRY(next(p)); /* onto the '(' */
    do {
        uint32_t arg;
        TRY(next(p));
        size_t arg_col = p->col;
        TRY(parse_or(p, &arg));
        TRY(need_number(p, arg, arg_col, o == OP_ABS ? "abs()" : o == OP_MIN ? "min()" : "max()"));
        if (last == NONE)
            first = arg;
        else
            p->e->nodes[last].next = arg;
        last = arg;
        n++;
    } while (p->t == T_COMMA);
    if (p->t != T_RP)
        return fail(p, p->col, "expected ',' or ')' in the call of %.*s()", (int)len, name);
    if ((o == OP_ABS && n != 1) || (o != OP_ABS && n < 2))
        return fail(p, col, "%.*s() takes %s, not %u", (int)len, name,
                    o == OP_ABS ? "one argument" : "two or more arguments", n);
    TRY(add_node(p, out, o, TFORGE_EXPR_NUMBER));
    p->e->nodes[*out].kid = first;
    p->depth--;
    return next(p);
}

static int parse_name(parser *p, uint32_t *out)
{
    const char *name = p->text + p->col;
    size_t len = p->len, col = p->col;
    int is_function = (len == 3 && (!strncmp(name, "min", 3) || !strncmp(name, "max", 3) ||
                                    !strncmp(name, "abs", 3)));
    const char *after = p->text + p->pos;
    while (isspace((unsigned char)*after))
        after++;
    if (is_function && *after == '(')
        return parse_call(p, out, col, name, len);
    if (is_function)
        return fail(p, col, "'%.*s' is a function: write %.*s(...)", (int)len, name, (int)len,
                    name);
    for (uint32_t d = 0; d < p->n_params; d++) {
        const tforge_expr_param *q = &p->params[d];
        if (strlen(q->name) != len || strncmp(q->name, name, len))
            continue;
        int str = q->type == TFORGE_EXPR_STRING;
        TRY(add_node(p, out, str ? OP_LOAD_STR : OP_LOAD, q->type));
        node *x = &p->e->nodes[*out];
        x->dim = d;
        if (str)
            x->u.labels = q->labels;
        else
            x->u.values = q->values;
        if ((int64_t)d > p->e->last_dim)
            p->e->last_dim = d;
        return next(p);
    }
    char known[512] = "";
    size_t used = 0;
    for (uint32_t d = 0; d < p->n_params && used < sizeof known; d++)
        used += (size_t)snprintf(known + used, sizeof known - used, "%s%s", d ? ", " : "",
                                 p->params[d].name);
    if (*after == '(')
        return fail(p, col, "'%.*s' is not a function (functions: min, max, abs)", (int)len,
                    name);
    return fail(p, col, "unknown name '%.*s' (known parameters: %s)", (int)len, name,
                p->n_params ? known : "none");
}

static int parse_primary(parser *p, uint32_t *out)
{
    switch (p->t) {
    case T_NUM:
    case T_TRUE:
    case T_FALSE:
        TRY(add_node(p, out, OP_NUM, p->t == T_NUM ? TFORGE_EXPR_NUMBER : TFORGE_EXPR_BOOLEAN));
        p->e->nodes[*out].u.num = p->t == T_NUM ? p->num : p->t == T_TRUE;
        return next(p);
    case T_STR: {
        char *s = p->e->strings + p->n_strings;
        memcpy(s, p->text + p->col + 1, p->len - 2);
        s[p->len - 2] = '\0';
        p->n_strings += p->len - 1;
        TRY(add_node(p, out, OP_STR, TFORGE_EXPR_STRING));
        p->e->nodes[*out].u.str = s;
        return next(p);
    }
    case T_NAME:
        return parse_name(p, out);
    case T_LP:
        TRY(deeper(p));
        TRY(next(p));
        TRY(parse_or(p, out));
        if (p->t != T_RP)
            return fail(p, p->col, "expected ')'");
        p->depth--;
        return next(p);
    case T_END:
        return fail(p, p->col, "unexpected end of the constraint");
    default:
        return fail(p, p->col, "expected a number, a name or '(', found '%.*s'", (int)p->len,
                    p->text + p->col);
    }
}

/* '**' binds tighter than a unary minus on its left and is right-associative. */
static int parse_power(parser *p, uint32_t *out)
{
    TRY(parse_primary(p, out));
    if (p->t != T_POW)
        return 0;
    size_t col = p->col;
    uint32_t r;
    TRY(deeper(p));
    TRY(next(p));
    TRY(parse_unary(p, &r));
    p->depth--;
    TRY(need_number(p, *out, col, "'**'"));
    TRY(need_number(p, r, col, "'**'"));
    return binary(p, out, OP_POW, TFORGE_EXPR_NUMBER, *out, r);
}

static int parse_unary(parser *p, uint32_t *out)
{
    if (p->t != T_MINUS && p->t != T_PLUS)
        return parse_power(p, out);
    tok t = p->t;
    size_t col = p->col;
    TRY(deeper(p));
    TRY(next(p));
    TRY(parse_unary(p, out));
    p->depth--;
    TRY(need_number(p, *out, col, t == T_MINUS ? "unary '-'" : "unary '+'"));
    if (t == T_PLUS)
        return 0;
    return binary(p, out, OP_NEG, TFORGE_EXPR_NUMBER, *out, NONE);
}

/* One precedence level of left-associative arithmetic. */
static int parse_arith(parser *p, uint32_t *out, int multiplicative)
{
    static const struct {
        tok t;
        op o;
        const char *text;
    } ops[] = {{T_PLUS, OP_ADD, "'+'"},      {T_MINUS, OP_SUB, "'-'"},
               {T_STAR, OP_MUL, "'*'"},      {T_SLASH, OP_DIV, "'/'"},
               {T_DSLASH, OP_FLOORDIV, "'//'"}, {T_PERCENT, OP_MOD, "'%'"}};
    size_t from = multiplicative ? 2 : 0, to = multiplicative ? 6 : 2;
    TRY(multiplicative ? parse_unary(p, out) : parse_arith(p, out, 1));
    for (;;) {
        size_t k = from;
        while (k < to && ops[k].t != p->t)
            k++;
        if (k == to)
            return 0;
        size_t col = p->col;
        uint32_t r;
        TRY(next(p));
        TRY(multiplicative ? parse_unary(p, &r) : parse_arith(p, &r, 1));
        TRY(need_number(p, *out, col, ops[k].text));
        TRY(need_number(p, r, col, ops[k].text));
        TRY(binary(p, out, ops[k].o, TFORGE_EXPR_NUMBER, *out, r));
    }
}

/* Checks that `l cmp r` compares like with like, and that a categorical is compared for
 * (in)equality only with one of its own labels. */
static int check_comparison(const parser *p, uint32_t l, uint32_t r, cmp c, size_t col)
{
    const node *a = &p->e->nodes[l], *b = &p->e->nodes[r];
    int sa = a->type == TFORGE_EXPR_STRING, sb = b->type == TFORGE_EXPR_STRING;
    char buf[256];
    if (sa != sb)
        return fail(p, col, "cannot compare %s with a number",
                    describe(p, sa ? l : r, buf, sizeof buf));
    if (!sa || (c != CMP_EQ && c != CMP_NE))
        return 0;
    if (a->op == OP_STR)
        a = b, b = &p->e->nodes[l];
    if (a->op != OP_LOAD_STR || b->op != OP_STR)
        return 0;
    const tforge_expr_param *q = &p->params[a->dim];
    for (uint32_t k = 0; k < q->levels; k++)
        if (!strcmp(q->labels[k], b->u.str))
            return 0;
    return fail(p, col, "'%s' is not a value of categorical '%s'", b->u.str, q->name);
}

static int parse_comparison(parser *p, uint32_t *out)
{
    static const tok toks[] = {T_EQ, T_NE, T_LT, T_LE, T_GT, T_GE};
    uint32_t first, prev;
    TRY(parse_arith(p, &first, 0));
    prev = first;
    *out = first;
    for (;;) {
        cmp c = CMP_EQ;
        while (c <= CMP_GE && toks[c] != p->t)
            c++;
        if (c > CMP_GE)
            return 0;
        size_t col = p->col;
        uint32_t r;
        TRY(next(p));
        TRY(parse_arith(p, &r, 0));
        TRY(check_comparison(p, prev, r, c, col));
        if (prev == first) {
            TRY(add_node(p, out, OP_CHAIN, TFORGE_EXPR_BOOLEAN));
            p->e->nodes[*out].kid = first;
        }
        p->e->nodes[r].cmp = (uint8_t)c;
        p->e->nodes[prev].next = r;
        prev = r;
    }
}

static int parse_not(parser *p, uint32_t *out)
{
    if (p->t != T_NOT)
        return parse_comparison(p, out);
    size_t col = p->col;
    TRY(deeper(p));
    TRY(next(p));
    TRY(parse_not(p, out));
    p->depth--;
    TRY(need_number(p, *out, col, "'not'"));
    return binary(p, out, OP_NOT, TFORGE_EXPR_BOOLEAN, *out, NONE);
}

static int parse_logic(parser *p, uint32_t *out, int is_and)
{
    TRY(is_and ? parse_not(p, out) : parse_logic(p, out, 1));
    while (p->t == (is_and ? T_AND : T_OR)) {
        size_t col = p->col;
        const char *what = is_and ? "'and'" : "'or'";
        uint32_t r;
        TRY(next(p));
        TRY(is_and ? parse_not(p, &r) : parse_logic(p, &r, 1));
        TRY(need_number(p, *out, col, what));
        TRY(need_number(p, r, col, what));
        TRY(binary(p, out, is_and ? OP_AND : OP_OR, TFORGE_EXPR_BOOLEAN, *out, r));
    }
    return 0;
}

static int parse_or(parser *p, uint32_t *out)
{
    return parse_logic(p, out, 0);
}

int tforge_expr_parse(tforge_expr **out, const char *text, const tforge_expr_param *params,
                      uint32_t n_params)
{
    parser p = {.text = text, .params = params, .n_params = n_params};
    int rc;
    *out = NULL;
    p.e = calloc(1, sizeof *p.e);
    if (p.e)
        p.e->strings = malloc(strlen(text) + 1); /* literals are shorter than the text */
    if (!p.e || !p.e->strings) {
        rc = tforge_error_set(TFORGE_ENOMEM, "constraint '%s': out of memory", text);
        goto cleanup;
    }
    p.e->last_dim = -1;
    if ((rc = next(&p)) < 0 || (rc = parse_or(&p, &p.e->root)) < 0)
        goto cleanup;
    if (p.t != T_END) {
        rc = fail(&p, p.col, "unexpected '%.*s' after a complete expression", (int)p.len,
                  text + p.col);
        goto cleanup;
    }
    if (p.e->nodes[p.e->root].type != TFORGE_EXPR_BOOLEAN) {
        rc = fail(&p, 0, "a constraint must be a boolean (a comparison, and/or/not), not a %s",
                  p.e->nodes[p.e->root].type == TFORGE_EXPR_STRING ? "string" : "number");
        goto cleanup;
    }
    *out = p.e;
    p.e = NULL;
cleanup:
    tforge_expr_free(p.e);
    return rc;
}

void tforge_expr_free(tforge_expr *expr)
{
    if (!expr)
        return;
    free(expr->nodes);
    free(expr->strings);
    free(expr);
}

int64_t tforge_expr_last_dim(const tforge_expr *expr)
{
    return expr->last_dim;
}

typedef struct evaluator {
    const node *nodes;
    const tforge_level *point;
    int fault; /* set by a division by zero or a power without a real result */
} evaluator;

static double eval(evaluator *v, uint32_t i);

static const char *eval_str(const evaluator *v, uint32_t i)
{
    const node *x = &v->nodes[i];
    return x->op == OP_STR ? x->u.str : x->u.labels[v->point[x->dim]];
}

static int compare(evaluator *v, cmp c, uint32_t l, double *left, uint32_t r)
{
    double a = *left, b;
    if (v->nodes[r].type == TFORGE_EXPR_STRING) {
        a = strcmp(eval_str(v, l), eval_str(v, r));
        b = 0;
    } else {
        b = eval(v, r);
        *left = b;
    }
    switch (c) {
    case CMP_EQ: return a == b;
    case CMP_NE: return a != b;
    case CMP_LT: return a < b;
    case CMP_LE: return a <= b;
    case CMP_GT: return a > b;
    default: return a >= b;
    }
}

/* Python's floor division and modulo on floats: the remainder takes the divisor's sign and the
 * quotient is computed from the exact multiple a - remainder, not by rounding a / b. */
static double py_mod(double a, double b)
{
    double m = fmod(a, b);
    if (m != 0 && (m < 0) != (b < 0))
        m += b;
    return m;
}

static double py_floordiv(double a, double b)
{
    double m = fmod(a, b);
    double q = (a - m) / b;
    if (m != 0 && (m < 0) != (b < 0))
        q -= 1;
    double f = floor(q);
    return q - f > 0.5 ? f + 1 : f;
}

static double eval(evaluator *v, uint32_t i)
{
    const node *x = &v->nodes[i];
    double a, b;
    switch ((op)x->op) {
    case OP_NUM: return x->u.num;
    case OP_LOAD: return x->u.values[v->point[x->dim]];
    case OP_NEG: return -eval(v, x->kid);
    case OP_NOT: return eval(v, x->kid) == 0;
    case OP_AND: return eval(v, x->kid) != 0 && eval(v, x->rhs) != 0;
    case OP_OR: return eval(v, x->kid) != 0 || eval(v, x->rhs) != 0;
    case OP_ABS: return fabs(eval(v, x->kid));
    case OP_MIN:
    case OP_MAX:
        a = eval(v, x->kid);
        for (uint32_t k = v->nodes[x->kid].next; k != NONE; k = v->nodes[k].next) {
            b = eval(v, k);
            a = (x->op == OP_MIN) == (b < a) ? b : a;
        }
        return a;
    case OP_CHAIN:
        a = v->nodes[x->kid].type == TFORGE_EXPR_STRING ? 0 : eval(v, x->kid);
        for (uint32_t l = x->kid, r = v->nodes[l].next; r != NONE; l = r, r = v->nodes[r].next)
            if (!compare(v, (cmp)v->nodes[r].cmp, l, &a, r))
                return 0;
        return 1;
    default:
        break;
    }
    a = eval(v, x->kid);
    b = eval(v, x->rhs);
    switch ((op)x->op) {
    case OP_ADD: return a + b;
    case OP_SUB: return a - b;
    case OP_MUL: return a * b;
    case OP_POW:
        if (a == 0 && b < 0)
            break;
        a = pow(a, b);
        if (isnan(a))
            break;
        return a;
    default:
        if (b == 0)
            break;
        return x->op == OP_DIV ? a / b : x->op == OP_MOD ? py_mod(a, b) : py_floordiv(a, b);
    }
    v->fault = 1;
    return 0;
}

int tforge_expr_eval(const tforge_expr *expr, const tforge_level *point)
{
    evaluator v = {expr->nodes, point, 0};
    double r = eval(&v, expr->root);
    return !v.fault && r != 0;
}
