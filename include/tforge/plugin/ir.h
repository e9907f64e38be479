/* The analysis IR of a Triton file, lent read-only to transform plugins (part of the interface
 * "tforge.transform/7": a change of any layout below is a new interface id). It is what the
 * worker's tforge_worker.analyze returns (its docstring has the rules), parsed once by the host.
 * Every node has a span, so that a rewrite can cut the file at exactly those bytes. Text fields
 * are Python source exactly as written; NULL where the file gives none. Everything lives as long
 * as the transform's state that was given it. */
#ifndef TFORGE_PLUGIN_IR_H
#define TFORGE_PLUGIN_IR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Lines from 1, columns in UTF-8 bytes from 0 (end_col one past the last byte); start and end
 * the same place as byte offsets into the file, [start, end). */
typedef struct tforge_ir_span {
    int line, col, end_line, end_col;
    uint32_t start, end;
} tforge_ir_span;

/* A name and a source text: keyword arguments, options, heuristics, config values. */
typedef struct tforge_ir_pair {
    const char *name;
    const char *text;
} tforge_ir_pair;

typedef enum tforge_ir_param_kind {
    TFORGE_IR_SCALAR,
    TFORGE_IR_POINTER,
    TFORGE_IR_CONSTEXPR
} tforge_ir_param_kind;

typedef struct tforge_ir_param {
    const char *name;
    tforge_ir_param_kind kind;
    const char *default_json; /* the literal default as JSON ("128", "\"relu\""), or NULL */
    const char **uses;        /* constexprs: arange, loop_step, loop_bound, mask, shape, ... */
    size_t n_uses;
    tforge_ir_span span;
} tforge_ir_param;

typedef struct tforge_ir_loop {
    const char *kind; /* "range", "tl.range", "tl.static_range" */
    const char *var, *start, *stop, *step, *trip_count;
    tforge_ir_pair *options; /* num_stages, loop_unroll_factor, flatten, warp_specialize */
    size_t n_options;
    int depth; /* loops around it */
    tforge_ir_span span;
    tforge_ir_span iter, func; /* the iterator's call (`range(0, K, BK)`) and its callee */
} tforge_ir_loop;

/* A load, a store, a block pointer or descriptor made or advanced, a descriptor's load/store. */
typedef struct tforge_ir_memop {
    const char *op; /* load, store, make_block_ptr, make_tensor_descriptor, advance */
    const char *pointer, *value, *mask, *other, *cache_modifier, *eviction_policy, *volatile_,
        *boundary_check, *padding_option, *block_shape, *offsets;
    int block_pointer, descriptor, in_loop;
    tforge_ir_span span;
} tforge_ir_memop;

typedef struct tforge_ir_dot {
    const char *a, *b, *acc, *input_precision, *out_dtype, *max_num_imprecise_acc, *allow_tf32;
    const char *m, *n, *k; /* the tile dimensions when known */
    int in_loop;
    tforge_ir_span span;
} tforge_ir_dot;

/* A reduction (op, its input, axis), an atomic (op, pointer, value), a tl.program_id or
 * tl.num_programs (op, NULL, axis), a call of another jit function (callee, NULL, NULL). */
typedef struct tforge_ir_op {
    const char *op, *operand, *detail;
    tforge_ir_span span;
} tforge_ir_op;

/* An elementwise math call of one argument (op "exp"): the call, its callee, its argument. */
typedef struct tforge_ir_math {
    const char *op;
    tforge_ir_span span, func, arg;
} tforge_ir_math;

/* `name = X * B + tl.arange(0, B)`: B consecutive integers from a multiple of B (the value's
 * span); `multiple` and `contiguous` are B's text. */
typedef struct tforge_ir_offset {
    const char *name, *multiple, *contiguous;
    tforge_ir_span span;
} tforge_ir_offset;

/* How a program becomes a 2-D tile when the body says so plainly: form "linear" (`m = pid //
 * NPN` then `n = pid % NPN`, with `pid` and `num_pid_n` the texts) or "grid2d" (`m =
 * tl.program_id(0)` then `n = tl.program_id(1)`); the two statements and their targets. */
typedef struct tforge_ir_tile_map {
    const char *form, *pid, *num_pid_n, *m_target, *n_target;
    tforge_ir_span m_stmt, n_stmt;
} tforge_ir_tile_map;

/* A matrix's base offset along a batch axis: `base = pointer + index * stride` (or `pointer +=
 * index * stride` where base is the parameter itself), made once before the tile; stride the
 * product of the texts of its factors (scalar parameters or integers), index a program's batch
 * index. pointer is NULL and n_stride 0 when the base is the parameter itself, unmoved. */
typedef struct tforge_ir_gemm_batch {
    const char *pointer, *index;
    const char **stride;
    size_t n_stride;
} tforge_ir_gemm_batch;

/* One matrix of a GEMM as the kernel addresses it: the tile `base + rows[:, None] * stride_row +
 * cols[None, :] * stride_col` ("1" for a stride the file leaves out), whose first row and column
 * are row_start and col_start ("pid_m * BLOCK_M", "0" along K). ptrs names the tile, made by
 * ptrs_stmt (NULL and a zero span when the load or store takes the expression itself); access
 * is the tl.load or tl.store call, with its mask and other (NULL when none); advance is the
 * statement moving an operand's tile one block along K (A and B; a zero span when the K loop
 * makes the tile again each iteration, ptrs_stmt then in the loop); value is what C stores,
 * pointer the store's pointer argument as written, plain 1 when the store passes pointer, value
 * and mask alone (C; NULL and 0 for A and B). base is a pointer parameter (maybe rebound to the
 * tile by ptrs_stmt itself), or a name offset along a batch axis (batch). */
typedef struct tforge_ir_gemm_matrix {
    const char *base, *stride_row, *stride_col, *row_start, *col_start, *ptrs, *mask, *other,
        *value, *pointer;
    int plain;
    tforge_ir_span ptrs_stmt, access, advance;
    tforge_ir_gemm_batch batch;
} tforge_ir_gemm_matrix;

/* The GEMM of Triton's tutorial 03, C (M x N) = A (M x K) @ B (K x N), tiles BLOCK_M x BLOCK_N
 * accumulated over a loop along K (the rules: tforge_worker.analyze's docstring). Texts as
 * written: sizes, blocks, the GROUP constexpr (NULL when none), the accumulator and its dtype,
 * the dtype the store converts to (`.to(D)`; NULL when none), the K loop's variable and the
 * offset along K where an iteration's tiles start ("k", or "k * BLOCK_K"), the texts of the loop's
 * range stop and step ("1" when left out; it starts at 0). Spans: the loop, the dot's statement,
 * the range's positional arguments (k_args). stores_acc is 1 when C's stored value is the
 * accumulator itself or its `.to(D)` (linear in it). pid is set (the program id's name) when the
 * body from `pid = tl.program_id(0)` (pid_stmt, its call pid_call) to its end can run once per
 * tile in a loop; lines are where re-indenting that body inserts (the starts of its logical
 * lines, col 0). k_advanced is 1 when A's or B's K offsets are not the loop variable's but
 * advanced in place by the loop (`rk += BLOCK_K`): a rewrite that moves the tiles along K
 * (split-K) would leave the masks that read them behind. */
typedef struct tforge_ir_gemm {
    const char *m, *n, *k, *block_m, *block_n, *block_k, *group_m;
    const char *acc, *acc_dtype, *store_dtype, *k_var, *k_offset, *k_stop, *k_step;
    tforge_ir_gemm_matrix a, b, c;
    tforge_ir_span loop, dot, k_args;
    int stores_acc;
    const char *pid;
    tforge_ir_span pid_stmt, pid_call;
    tforge_ir_span *lines;
    size_t n_lines;
    int k_advanced;
} tforge_ir_gemm;

/* A loop `for v in range(0, B, E)` (form "step") or `range(tl.cdiv(B, E))` ("count"), B a
 * scalar parameter and E a constexpr, whose loads and stores are masked, or whose tl.where
 * conditions are, by the tile along v against B, a bound only its last iteration needs; or a
 * loop `for v in range(0, S, E)` ("diagonal") whose where conditions are attention's causal
 * mask `rows >= v + tl.arange(0, E)`, rows a tile starting at row B (the text, "start_m *
 * BLOCK_M"), a mask only the iterations from B // E * E on need (the rules:
 * tforge_worker.analyze's docstring). Texts: v, B, E. Spans: the loop, its iterator's stop
 * argument, its body from the start (col 0) of the body's first line to the loop's end, the
 * deletions that take those bounds out of the masks (a term with its `&`, or a mask that is
 * nothing else with its `other`), and the where conditions that hold in every iteration but
 * those (`trues`: each replaced by `True` there), each list in order. */
typedef struct tforge_ir_loop_tail {
    const char *form, *var, *size, *block;
    tforge_ir_span span, stop, body;
    tforge_ir_span *drops;
    size_t n_drops;
    tforge_ir_span *trues;
    size_t n_trues;
} tforge_ir_loop_tail;

/* A score `X = tl.dot(A, B) * S` in a loop whose uses a positive S commutes with: X's row
 * maxima (`tl.max(X, ..)`), the subtractions `X - ..` and `X = tl.where(C, X, -inf)`; S a scalar
 * the loop never changes, a product or quotient of positive numbers and the scalar parameters
 * `params` (positive whenever they are). Texts: X, S. Spans: the statement, the cut that takes S
 * out (` * S` or `S * `), the max calls, X in each subtraction, the loop (the rules:
 * tforge_worker.analyze's docstring). */
typedef struct tforge_ir_scale_fold {
    const char *x, *scale;
    const char **params;
    size_t n_params;
    tforge_ir_span stmt, cut, loop;
    tforge_ir_span *maxes, *subs;
    size_t n_maxes, n_subs;
} tforge_ir_scale_fold;

typedef struct tforge_ir_config {
    tforge_ir_pair *values; /* each value as JSON: {"BLOCK_M": 64, "num_warps": 4} */
    size_t n_values;
} tforge_ir_config;

typedef struct tforge_ir_autotune {
    const char *configs_text;   /* the configs argument as written */
    const char *configs_source; /* when it is a name: the module's assignments of it */
    int configs_literal;        /* configs below hold them all */
    tforge_ir_config *configs;
    size_t n_configs;
    const char *key; /* JSON of a literal list, else the source text */
    const char *prune_configs_by, *reset_to_zero, *restore_value, *pre_hook, *post_hook;
    tforge_ir_span span;
} tforge_ir_autotune;

typedef struct tforge_ir_heuristics {
    tforge_ir_pair *values; /* constexpr name -> its lambda's source */
    size_t n_values;
    tforge_ir_span span;
} tforge_ir_heuristics;

/* A constexpr passed at a launch site, with where its value came from. */
typedef struct tforge_ir_launch_arg {
    const char *name, *value;
    const char *assigned; /* the statement that assigned a local value, or NULL */
    int from_param, positional;
} tforge_ir_launch_arg;

typedef struct tforge_ir_launch_site {
    const char *function, *qualname; /* "forward", "_attention.forward" */
    const char **params;             /* the function's parameters */
    size_t n_params;
    const char *grid, *grid_kind; /* grid_kind: tuple, lambda, name, expression */
    const char *grid_assigned;    /* a named grid's assignment, or NULL */
    const char **args;
    size_t n_args;
    tforge_ir_pair *kwargs;
    size_t n_kwargs;
    tforge_ir_launch_arg *constexprs;
    size_t n_constexprs;
    const char *num_warps, *num_stages; /* NULL when not passed */
    tforge_ir_span span, function_span;
} tforge_ir_launch_site;

typedef enum tforge_ir_tunable_kind {
    TFORGE_IR_FIXED,
    TFORGE_IR_BLOCK,
    TFORGE_IR_STEP,
    TFORGE_IR_GROUP,
    TFORGE_IR_WARPS,
    TFORGE_IR_STAGES
} tforge_ir_tunable_kind;

typedef struct tforge_ir_tunable {
    const char *name;
    tforge_ir_tunable_kind kind;
    const char *why;        /* fixed: the reason */
    const char *domain;     /* the rule of its values, in words */
    const char *covers_row; /* the size one block covers, or NULL */
    const char **relates_to; /* sizes its tiles are masked against */
    size_t n_relates_to;
    int dot; /* a tl.dot dimension */
} tforge_ir_tunable;

typedef struct tforge_ir_constraint {
    const char *expr, *why;
} tforge_ir_constraint;

/* A statement or decorator: its source and where it is. */
typedef struct tforge_ir_statement {
    const char *kind; /* decorators: jit, autotune, heuristics, other; else NULL */
    const char *text;
    tforge_ir_span span;
} tforge_ir_statement;

typedef struct tforge_ir_kernel {
    const char *name;
    const char *language; /* how the file names triton.language ("tl"), for code a rewrite adds */
    tforge_ir_span span;
    tforge_ir_statement *decorators; /* in source order */
    size_t n_decorators;
    tforge_ir_pair *jit_options;
    size_t n_jit_options;
    tforge_ir_autotune *autotune;     /* NULL when not autotuned */
    tforge_ir_heuristics *heuristics; /* NULL without @triton.heuristics */
    tforge_ir_param *params;
    size_t n_params;
    tforge_ir_loop *loops;
    size_t n_loops;
    tforge_ir_memop *memops;
    size_t n_memops;
    tforge_ir_dot *dots;
    size_t n_dots;
    tforge_ir_op *reductions, *atomics, *program_ids, *calls;
    size_t n_reductions, n_atomics, n_program_ids, n_calls;
    tforge_ir_launch_site *launch_sites;
    size_t n_launch_sites;
    tforge_ir_tunable *tunables;
    size_t n_tunables;
    tforge_ir_constraint *constraints;
    size_t n_constraints;
    tforge_ir_math *math;
    size_t n_math;
    tforge_ir_offset *offsets;
    size_t n_offsets;
    tforge_ir_tile_map *tile_map; /* NULL when there is none, or the kernel groups already */
    tforge_ir_gemm *gemm;         /* NULL unless the kernel is the tutorial-03 GEMM */
    tforge_ir_loop_tail *loop_tails; /* in source order */
    size_t n_loop_tails;
    tforge_ir_scale_fold *scale_folds; /* in source order */
    size_t n_scale_folds;
} tforge_ir_kernel;

typedef struct tforge_ir_function {
    const char *name, *qualname;
    tforge_ir_span span;
} tforge_ir_function;

typedef struct tforge_ir_file {
    const char *path;
    tforge_ir_kernel *kernels;
    size_t n_kernels;
    tforge_ir_function *functions; /* the file's other Python functions */
    size_t n_functions;
    tforge_ir_statement *device_queries; /* module-level statements asking the GPU */
    size_t n_device_queries;
    struct tforge_ir_arena *arena; /* owns everything above */
} tforge_ir_file;

#ifdef __cplusplus
}
#endif
#endif
