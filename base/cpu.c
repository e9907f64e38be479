#include "tforge/cpu.h"

#include <stdlib.h>

int tforge_cpu_prepare_openblas(void)
{
    int set = 0;
    const char *kernels = NULL;
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl"))
        kernels = "SkylakeX";
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        kernels = "Haswell";
#endif
    if (kernels && !getenv("OPENBLAS_CORETYPE") && setenv("OPENBLAS_CORETYPE", kernels, 0) == 0)
        set |= TFORGE_CPU_SET_CORETYPE;
    if (!getenv("OPENBLAS_NUM_THREADS") && setenv("OPENBLAS_NUM_THREADS", "1", 0) == 0)
        set |= TFORGE_CPU_SET_THREADS;
    return set;
}

void tforge_cpu_unset_openblas(int set)
{
    if (set & TFORGE_CPU_SET_CORETYPE)
        unsetenv("OPENBLAS_CORETYPE");
    if (set & TFORGE_CPU_SET_THREADS)
        unsetenv("OPENBLAS_NUM_THREADS");
}
