/* What the speed-of-light cost model is given (include/tforge/plugin/costmodel.h): the device
 * from its device file, measured once per device (the worker's peaks.py writes it), and a
 * candidate from its profile's static inputs. */
#ifndef TFORGE_ENGINE_SOL_H
#define TFORGE_ENGINE_SOL_H

#include "tforge/plugin/costmodel.h"
#include "tforge/plugin/profile.h"

#define TFORGE_DEVICE_FILE_FORMAT "tforge.device/1"

/* A device file's device; `device.name` points at `name`, so the struct is not to be copied
 * while the cost model holds it. `placeholder` is 1 for a file whose source says "placeholder"
 * (round numbers for tests, never a measurement). */
typedef struct tforge_device_file {
    char name[128];
    int placeholder;
    tforge_costmodel_device device;
} tforge_device_file;

/* Reads a device file: format "tforge.device/1", source "measured" (or "placeholder" when
 * `allow_placeholder`), name, sms, max_threads_per_sm, registers_per_sm, shared_bytes_per_sm
 * (integers), dram_bytes_per_s, flops_per_s, flops_per_s_fp32 (positive numbers).
 * TFORGE_EINPUT naming the file and the field, or TFORGE_EIO. */
int tforge_device_file_read(tforge_device_file *out, const char *path, int allow_placeholder);

/* The candidate the cost model bounds: bytes, flops, grid_blocks, num_warps, registers and
 * shared_bytes of the profile (0 or NAN where absent), whether the kernel has a dot (the
 * analysis says), on `device` (lent: it must outlive the candidate's use). */
void tforge_sol_candidate(tforge_costmodel_candidate *out, const tforge_profile *p,
                          int uses_tensor_cores, const tforge_costmodel_device *device);

/* Whether a candidate whose bound is `lower` cannot beat the incumbent's `incumbent` (same unit)
 * by more than the noise: lower > incumbent x (1 + margin). Never with an unknown bound or no
 * incumbent yet (NAN or infinite). */
int tforge_sol_prunes(double lower, double incumbent, double margin);

/* The share of the speed of light a measured `value` reaches, in percent: 100 x lower / value;
 * NAN when either is unknown. */
double tforge_sol_percent(double lower, double value);

#endif
