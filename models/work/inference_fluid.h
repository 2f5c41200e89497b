/* inference_fluid.h - what the fluid mode (inference_fluid.c) offers
 * beside inference.h's calls: a take of replicas' loads as stretches. A
 * fluid service's replicas in one group share a load, and the groups'
 * members mostly sit next to one another, so the factory's drive writes
 * a stretch's load to its runs at once instead of a load a replica
 * (docs/performance-log.md, "The fluid loads to the racks a stretch at a
 * time"). */
#ifndef MODELS_INFERENCE_FLUID_H
#define MODELS_INFERENCE_FLUID_H

#include <stdint.h>

#include "inference.h"

/* inf_take_loads(s, k0, n, out) of a fluid service (inf_is_fluid) as
 * stretches: stretch t is replicas k0 + end[t - 1] .. k0 + end[t] - 1
 * (end[-1] read as 0), each at load l[t], the same bits inf_take_loads
 * gives them, with its effects (one advance, the range taken). Returns
 * the count of stretches, at most n (end and l hold n). */
uint32_t inf_fluid_take_stretches(inf_service *s, uint32_t k0, uint32_t n,
                                  uint32_t *end, gpu_load *l);

#endif
