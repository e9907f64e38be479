/* The static analysis of a Triton file, as the typed structs of tforge/plugin/ir.h: parsed here
 * from what the worker's tforge_worker.analyze returns and never carried as JSON further in.
 * Everything a file holds lives in its arena and goes with tforge_ir_free. */
#ifndef TFORGE_ENGINE_ANALYSIS_H
#define TFORGE_ENGINE_ANALYSIS_H

#include "tforge/plugin/ir.h"

#include <stddef.h>
#include <stdio.h>

/* Parses the analysis document `json` of the file `path` (named in errors). A field of the
 * wrong type or a kind not known is TFORGE_EINPUT naming `path` and the field
 * ("kernels[0].params[2].kind: expected pointer, constexpr or scalar, got \"ptr\""). */
int tforge_ir_parse(tforge_ir_file **out, const char *json, const char *path);

/* NULL is allowed. */
void tforge_ir_free(tforge_ir_file *file);

/* The human-readable report: every kernel (only `kernel` when not NULL) with its params, loops,
 * memory operations, dots, reductions, decorators, launch sites, tunables and constraints, each
 * with file:line; then the file's device queries. */
void tforge_ir_print(FILE *out, const tforge_ir_file *file, const char *kernel);

/* The analysis's notes for the user in the document `json` (each kernel's `tile_logic`: Python's
 * and/or/not of tiles, which Triton's CPU interpreter runs otherwise than a GPU), only `kernel`'s
 * when not NULL, a "note: ..." line each, after the report; returns how many. They stay out of
 * the IR: its layout is part of the transform interface, and no transform reads them. */
size_t tforge_ir_print_notes(FILE *out, const char *json, const char *kernel);

const char *tforge_ir_tunable_kind_name(tforge_ir_tunable_kind kind);

#endif
