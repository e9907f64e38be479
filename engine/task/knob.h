/* What a task's knob is. A knob's dimension comes from the user's task or a recorded cache,
 * where nothing declares its effect: it is told here, once, where the knob enters a space, by
 * Triton's own launch options (num_warps, num_stages) and the tiling conventions of Triton
 * kernels and Kernel Tuner caches. Every reader after this one reads the effect, never the name. */
#ifndef TFORGE_ENGINE_KNOB_H
#define TFORGE_ENGINE_KNOB_H

#include "tforge/space.h"

/* Describes dimension `dim` of `space` (unbuilt, just added) as a knob
 * (TFORGE_DIM_OWNER_KNOB) and its effect: a tile is an ordinal of two levels or more named
 * BLOCK_*, *_BLOCK, TILE_* or BLOCK, or whose values are all powers of two, unless its name
 * says it counts something else (num_*, NUM_*, *GROUP*, *group*, *SPLIT*, *STAGES*, *WARPS*);
 * a tile along the contiguous axis is one named BLOCK_SIZE*, BLOCK or ending in N or K
 * (row-major operands are contiguous along N and K); num_warps and num_stages are warps and
 * stages; GROUP_M and GROUP_SIZE_M swizzle; a recorded rewrite space's columns named as the
 * shipped transforms name their parameters have those parameters' effects (tma and
 * tma_subtile: TMA, persistent_programs: programs, split_k: split-K, group_m: swizzle); any
 * other knob's effect is unknown. */
int tforge_knob_describe(tforge_space *space, uint32_t dim);

#endif
