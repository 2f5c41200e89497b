/* reps_fixture.h - what the packed replicas' tests share
 * (test_workloads_tick.c, test_workloads_phis_part.c): fleets of racks
 * of one to three GPU types with units, replicas laid end to end over
 * them as the services place them, packed as the tick packs them
 * (workloads_tick.c), and the check that each replica's clock is the
 * slowest of its GPUs'. Draws from rand(): each test seeds it. */
#ifndef TESTS_REPS_FIXTURE_H
#define TESTS_REPS_FIXTURE_H

#include <stdint.h>

#include "rack.h"
#include "test_catalogs.h"

enum { MAX_REPS = 600 };

/* A draw in [0, 1]. */
double uniform(void);

/* A load drawn field by field, busy mostly 1. */
gpu_load drawn_load(void);

/* A fleet with units of groups of 4 racks: B200 then GB200 (so a
 * replica laid across them has runs of two types), or types a, b and c
 * (c NULL: two groups). */
typedef struct two_types {
  rack_group_spec grp[3];
  rack_fleet *f;
} two_types;

rack_fleet *fleet_make(two_types *t, const char *a, const char *b,
                       const char *c);
void two_types_free(two_types *t);

/* A cap in GPU i's range. */
double some_cap(const rack_fleet *f, uint32_t i);

/* Replicas end to end over the fleet's GPUs from 0 (size[k] GPUs each,
 * key k + 1, load[k]), of several runs now and then; how many. */
uint32_t lay_out(rack_fleet *f, uint32_t *size, gpu_load *load);

/* Replicas of 1 to 8 GPUs, one run each, a load and a cap new one time
 * in odds; how many. */
uint32_t lay_out_one(rack_fleet *f, uint32_t *size, gpu_load *load, int odds);

/* The packed runs of replicas laid end to end (as the tick packs them:
 * work__slot_runs, each run's first GPU, its rack and type). */
typedef struct packed {
  uint32_t run0[MAX_REPS + 1], runs[12 * 72], gpu0[12 * 72], rack[12 * 72];
  uint16_t type[12 * 72];
} packed;

void pack(const rack_fleet *f, const uint32_t *size, uint32_t nrep, packed *p);

/* Replica k's clock is the slowest of its GPUs' rack_gpu_phi, to the
 * bit (the test fails where not); how many of them have more than one
 * run. */
uint32_t check_slowest(const rack_fleet *f, const uint32_t *size, uint32_t nrep,
                       const packed *p, const double *phi);

#endif
