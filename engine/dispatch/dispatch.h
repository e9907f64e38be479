/* `tforge dispatch`: one kernel for every shape. The tuned shapes of one task (each tune's
 * result.json, with the times its history and its replayed recording hold), a decision tree over
 * the task's shape symbols fitted to them (a CART whose leaves each hold the config that is best
 * across the shapes of the leaf), its choice checked on shapes held out of the fit, and the
 * Python file the user imports. */
#ifndef TFORGE_ENGINE_DISPATCH_H
#define TFORGE_ENGINE_DISPATCH_H

#include <stddef.h>

/* One tuned shape of the task. */
typedef struct tforge_dispatch_shape {
    char *result;        /* the result.json read */
    size_t index;        /* the task's tuning shape index */
    long long *values;   /* the shape's sizes, in the set's symbol order */
    size_t winner;       /* its own tuned winner, an index into the set's configs */
    double winner_ms;    /* the winner's time as the tune re-timed it */
    char *variant;       /* the winner's best_variant.py when it rewrites the source, else NULL */
    int held_out;        /* kept out of the fit, to validate it */
} tforge_dispatch_shape;

/* A node of the tree: inner (symbol >= 0: `values[symbol] <= threshold` goes to `left`, else to
 * `right`) or a leaf (symbol -1, its config). */
typedef struct tforge_dispatch_node {
    int symbol;
    long long threshold;
    size_t left, right;
    size_t config;       /* a leaf's config, an index into the set's configs */
    size_t n_shapes;     /* fitted shapes that reach the node */
    double worst;        /* a leaf's: its config's worst time over the winner among them */
} tforge_dispatch_node;

typedef struct tforge_dispatch_set {
    char *task, *kernel;
    char **symbols;      /* the shape symbols, in the order of the first result's shape */
    size_t n_symbols;
    tforge_dispatch_shape *shapes;
    size_t n_shapes, cap_shapes;
    char **configs;      /* every config seen, as compact JSON with its keys in one order */
    size_t n_configs, cap_configs;
    unsigned char *launchable; /* a config the dispatch may choose: a winner (with its variant),
                                  or one of a run that rewrote nothing */
    char **key_order;    /* that order: the first winner's keys, then others as met */
    size_t n_keys;
    double *ms;          /* n_shapes x n_configs: the time of each config at each shape; NAN
                            where nothing measured it, INFINITY where it failed there */
    size_t cap_ms_configs;
    tforge_dispatch_node *nodes; /* the tree, its root nodes[0] */
    size_t n_nodes;
    char **notes;        /* what was passed over and why (an untimed result, no winner) */
    size_t n_notes;
} tforge_dispatch_set;

/* Reads the tuned shapes of `n` paths: a results folder (a sweep's, listed by its sweep.json;
 * `tune --shape all`'s, listed by summary.json with a shape-<i>/ each; or one tune's) or a
 * result.json. With `task_filter`, only that task's results (its file or folder name). 0, or
 * TFORGE_EINPUT naming the file and field (no results, results of two tasks, a shape without a
 * symbol the others have). */
int tforge_dispatch_read(tforge_dispatch_set **out, const char *const *paths, size_t n,
                         const char *task_filter);
void tforge_dispatch_free(tforge_dispatch_set *set);

/* Holds out of the fit the shapes whose task indices are listed, or with `k` > 0 and no list,
 * k shapes spread over the middle of the shapes in index order. TFORGE_EINPUT when an index is
 * not among the shapes read or nothing would be left to fit. */
int tforge_dispatch_hold_out(tforge_dispatch_set *set, const size_t *indices, size_t n_indices,
                             size_t k);

/* Fits the tree on the shapes not held out. */
int tforge_dispatch_fit(tforge_dispatch_set *set, size_t max_depth);

/* The time of a config at a shape (NAN unmeasured, INFINITY failed). */
double tforge_dispatch_ms(const tforge_dispatch_set *set, size_t shape, size_t config);

/* The leaf's config for a shape's sizes (in the set's symbol order). */
size_t tforge_dispatch_choose(const tforge_dispatch_set *set, const long long *values);

/* The table of every shape: held out or fitted, the choice, its time, the shape's own winner's
 * and their ratio (text, the caller frees it; NULL when out of memory). `worst_held_out` gets
 * the largest ratio over the held-out shapes (NAN when none, INFINITY when a choice has no time
 * there). */
char *tforge_dispatch_table(const tforge_dispatch_set *set, double *worst_held_out);

/* Writes the Python file: the tree as `choose(<symbols>)`, the configs, their variants (copied
 * beside `path` into <stem>_variants/), the autotune config list and its key: `key[k]`, the
 * kernel parameter carrying symbol k, or NULL where the kernel takes none (`key_why`, when not
 * "", says why none could be found). */
int tforge_dispatch_write(const tforge_dispatch_set *set, const char *path, const char *command,
                          const char *const *key, const char *key_why);

#endif
