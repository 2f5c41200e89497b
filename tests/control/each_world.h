/* each_world.h - the factory around one control that the policy's split
 * "for each" is exercised on, shared by tests/control/test_control_each.c
 * (which checks its bits on two threads) and tests/bench/
 * bench_control_each.c (which times it): rack groups of 72-GPU racks,
 * slots of a few GPUs, hooks that read the world's own slots, worth and
 * fit, and a state that drifts period to period. Nothing here uses
 * cmocka: the benchmark is built without it, so a failure is returned
 * (NULL or a message) for each caller to report its own way. */
#ifndef TESTS_EACH_WORLD_H
#define TESTS_EACH_WORLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "control.h"
#include "gpu.h"

#define EACH_WORLD_GROUPS 4           /* rack groups at most */
#define EACH_WORLD_GPUS (2 * 71 * 72) /* GPUs at most */

/* A world's shape: its groups (racks of 72 GPUs each; GB200 but group 2
 * H100-SXM and group 3 capped at 650 W a GPU), slots of slot_gpus GPUs
 * (4: 4 and 5 alternating), the policy, the fleet's runs kept or not
 * (the caps then written straight to the runs' own,
 * control__units_caps_to), the budget predicted or reserved, and the
 * distinct activities a period (their steps). */
typedef struct each_world_spec {
  int policy;
  size_t ngroups;
  uint32_t racks[EACH_WORLD_GROUPS];
  uint32_t slot_gpus;
  bool runs, predict;
  double classes;
} each_world_spec;

typedef struct each_world {
  const each_world_spec *s;
  sim_engine *e;
  rack_fleet *fl;
  control *c;
  uint32_t ngpus, nslots;
  uint32_t *slot;
  double *worth;
  double fit_w[EACH_WORLD_GROUPS];
  power_config cfg;
  sim_error err; /* the last failure's message */
} each_world;

/* A world of shape s (kept by pointer: it must outlive the world), its
 * GPUs from cat; NULL with *err set if it cannot be made. */
each_world *each_world_make(const each_world_spec *s, const gpu_catalog *cat,
                            sim_error *err);
void each_world_drop(each_world *w);

/* Period p: the drifted state, the split again (the fit may have moved),
 * the policy. NULL, or what failed. */
const char *each_world_period(each_world *w, int p);

#endif
