/* validate_set.h - what the calibration runs of the validation programs
 * (validate_mlenergy --steady, validate_mlperf; tools/calibrate.py drives
 * them) may replace: a serving engine's figures and the GPU power model,
 * by --set KEY=VALUE, and the GPU types' power parts from that model. */
#ifndef TESTS_VALIDATE_SET_H
#define TESTS_VALIDATE_SET_H

#include "gpu.h"
#include "llm.h"

/* KEY=VALUE into e or pm: eff_bw, eff_flops, act_fixed, seq_overhead,
 * moe_layer_overhead, step_overhead (s) of the engine; busy_share,
 * pj_per_byte of the power model. 0, or -1 for a malformed text or an
 * unknown key (nothing changed). */
int vset_apply(const char *kv, llm_engine *e, gpu_power_model *pm);

/* Every type's busy floor and memory power from the model pm. */
void vset_power_model(gpu_catalog *gpus, const gpu_power_model *pm);

#endif
