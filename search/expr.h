/* Constraint expressions (internal to search/): parsed and type-checked once into an array of
 * nodes, then evaluated at many points. The language is described in include/tforge/space.h. */
#ifndef TFORGE_SEARCH_EXPR_H
#define TFORGE_SEARCH_EXPR_H

#include "tforge/plugin/strategy.h"

typedef enum tforge_expr_type {
    TFORGE_EXPR_NUMBER = 0,
    TFORGE_EXPR_BOOLEAN = 1,
    TFORGE_EXPR_STRING = 2
} tforge_expr_type;

/* One parameter as the parser sees it. Its tables are borrowed: they must outlive every
 * expression parsed with them. */
typedef struct tforge_expr_param {
    const char *name;
    tforge_expr_type type;
    const double *values;      /* NUMBER and BOOLEAN: the value of each level */
    const char *const *labels; /* STRING: the label of each level */
    uint32_t levels;
} tforge_expr_param;

typedef struct tforge_expr tforge_expr;

/* Parses `text` (not kept) against `params`; the expression must be a boolean. Errors are
 * TFORGE_EINPUT with the text, the column and the cause, or TFORGE_ENOMEM. */
int tforge_expr_parse(tforge_expr **out, const char *text, const tforge_expr_param *params,
                      uint32_t n_params);
void tforge_expr_free(tforge_expr *expr);

/* The highest parameter index the expression names, -1 when it names none. */
int64_t tforge_expr_last_dim(const tforge_expr *expr);

/* 1 when the expression holds at `point` (levels indexed like params), 0 when it does not or
 * when its evaluation divides by zero. */
int tforge_expr_eval(const tforge_expr *expr, const tforge_level *point);

#endif
