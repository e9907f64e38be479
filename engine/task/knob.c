#include "knob.h"

#include <math.h>
#include <string.h>

static int prefixed(const char *name, const char *prefix)
{
    return strncmp(name, prefix, strlen(prefix)) == 0;
}

static int suffixed(const char *name, const char *suffix)
{
    size_t n = strlen(name), k = strlen(suffix);
    return n >= k && strcmp(name + n - k, suffix) == 0;
}

static int power_of_two(double v)
{
    return v >= 1 && v == floor(v) && ((unsigned long long)v & ((unsigned long long)v - 1)) == 0;
}

static int is_tile(const tforge_space *space, uint32_t dim, const char *name)
{
    uint32_t levels = tforge_space_levels(space, dim);
    if (tforge_space_kind(space, dim) != TFORGE_DIM_ORDINAL || levels < 2)
        return 0;
    if (prefixed(name, "BLOCK_") || suffixed(name, "_BLOCK") || prefixed(name, "TILE_") ||
        strcmp(name, "BLOCK") == 0)
        return 1;
    if (prefixed(name, "num_") || prefixed(name, "NUM_") || strstr(name, "GROUP") ||
        strstr(name, "SPLIT") || strstr(name, "STAGES") || strstr(name, "WARPS") ||
        strstr(name, "group"))
        return 0;
    for (uint32_t l = 0; l < levels; l++)
        if (!power_of_two(tforge_space_value(space, dim, l)))
            return 0;
    return 1;
}

static tforge_dim_effect effect_of(const tforge_space *space, uint32_t dim)
{
    const char *name = tforge_space_name(space, dim);
    size_t n = strlen(name);
    /* a recorded rewrite space's columns: the shipped transforms' parameters, whose effect
     * their plugins declare in a tune but a cache does not keep */
    static const struct {
        const char *name;
        tforge_dim_effect effect;
    } rewrites[] = {{"tma", TFORGE_EFFECT_TMA},
                    {"tma_subtile", TFORGE_EFFECT_TMA},
                    {"persistent_programs", TFORGE_EFFECT_PROGRAMS},
                    {"split_k", TFORGE_EFFECT_SPLIT_K},
                    {"group_m", TFORGE_EFFECT_SWIZZLE}};
    for (size_t i = 0; i < sizeof rewrites / sizeof *rewrites; i++)
        if (strcmp(name, rewrites[i].name) == 0)
            return rewrites[i].effect;
    if (is_tile(space, dim, name))
        return prefixed(name, "BLOCK_SIZE") || strcmp(name, "BLOCK") == 0 ||
                       (n && (name[n - 1] == 'N' || name[n - 1] == 'K'))
                   ? TFORGE_EFFECT_TILE_CONTIGUOUS
                   : TFORGE_EFFECT_TILE;
    if (strcmp(name, "num_warps") == 0)
        return TFORGE_EFFECT_WARPS;
    if (strcmp(name, "num_stages") == 0)
        return TFORGE_EFFECT_STAGES;
    if (strcmp(name, "GROUP_M") == 0 || strcmp(name, "GROUP_SIZE_M") == 0)
        return TFORGE_EFFECT_SWIZZLE;
    return TFORGE_EFFECT_UNKNOWN;
}

int tforge_knob_describe(tforge_space *space, uint32_t dim)
{
    return tforge_space_describe(space, dim, TFORGE_DIM_OWNER_KNOB, TFORGE_DIM_KNOB,
                                 effect_of(space, dim));
}
