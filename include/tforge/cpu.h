/* What the CPU can do, for the libraries that plugins bring. */
#ifndef TFORGE_CPU_H
#define TFORGE_CPU_H

#ifdef __cplusplus
extern "C" {
#endif

/* For an OpenBLAS loaded after the call (the bo plugin's BLAS), through the variables it reads
 * when it is loaded, each only where unset:
 * - OPENBLAS_CORETYPE from the CPU's features (AVX-512: SkylakeX; AVX2 and FMA: Haswell).
 *   OpenBLAS picks its kernels from the CPU's model number and falls back to its generic SSE3
 *   ones on a model newer than itself (Debian 12's 0.3.21 on an Emerald Rapids Xeon: Cholesky
 *   and triangular solves 1.5-2x slower).
 * - OPENBLAS_NUM_THREADS=1: bo computes on one thread, and the pool OpenBLAS starts at load
 *   otherwise spins on the other cores.
 * Returns which it set (TFORGE_CPU_SET_CORETYPE | TFORGE_CPU_SET_THREADS), for
 * tforge_cpu_unset_openblas to take back once the library is loaded. */
enum { TFORGE_CPU_SET_CORETYPE = 1, TFORGE_CPU_SET_THREADS = 2 };
int tforge_cpu_prepare_openblas(void);
void tforge_cpu_unset_openblas(int set);

#ifdef __cplusplus
}
#endif

#endif
