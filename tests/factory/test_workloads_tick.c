/* test_workloads_tick.c - the tick's packed replicas (workloads_tick.c):
 * the clocks of a service's replicas taken from their runs' first GPUs in
 * one loop (work__replica_phis) are, replica by replica, the slowest of
 * their GPUs' rack_gpu_phi, to the bit; on fleets of replicas of random
 * sizes laid end to end as the services place them, across racks, with
 * caps that differ inside a replica (several runs), thermal caps, and
 * loads and caps that repeat from one replica to the next (the near
 * clock's hits) or do not. And the background load on the free GPUs
 * (factory.c's list of free runs) after jobs have come and gone. */
#define WORK_SCENARIO "work_tick.yaml"
#include "test_workloads_run.h"

#include <stdint.h>

#include "workloads_internal.h"

enum { MAX_REPS = 600 };

static double uniform(void) { return (double)rand() / RAND_MAX; }

/* Replicas end to end over the fleet's GPUs from 0: replica k has
 * size[k] GPUs and key k + 1; a load and a cap per replica, repeated
 * from the one before at times; now and then a GPU of its own cap (a run
 * apart). How many replicas fit. */
static uint32_t lay_out(rack_fleet *f, const gpu_spec *g, uint32_t *size) {
  uint32_t k = 0, at = 0;
  gpu_load l = {0.5, 0.5, 1};
  double cap = g->cap_max_w;
  while (k < MAX_REPS) {
    uint32_t n = 1 + (uint32_t)(rand() % 16);
    if (at + n > f->n)
      break;
    if (rand() % 3 != 0) /* else as the replica before */
      l = (gpu_load){uniform(), uniform(), rand() % 4 ? 1 : uniform()};
    if (rand() % 3 != 0)
      cap = g->cap_min_w + uniform() * (g->cap_max_w - g->cap_min_w);
    for (uint32_t i = at; i < at + n; i++) {
      rack_set_unit_key(f, i, k + 1);
      rack_set_load(f, i, l);
      f->cap_w[i] = rand() % 11 == 0 ? g->cap_min_w : cap;
    }
    size[k++] = n;
    at += n;
  }
  return k;
}

/* The packed runs of replicas laid end to end (as the tick packs them:
 * work__slot_runs, each run's first GPU) into run0 and gpu0. */
static void pack(const rack_fleet *f, const uint32_t *size, uint32_t nrep,
                 uint32_t *run0, uint32_t *gpu0) {
  static uint32_t gpus[16], runs[16];
  uint32_t at = 0, m = 0;
  for (uint32_t k = 0; k < nrep; k++) {
    for (uint32_t i = 0; i < size[k]; i++)
      gpus[i] = at + i;
    uint32_t nr = work__slot_runs(f, gpus, size[k], runs);
    run0[k] = m;
    for (uint32_t q = 0; q < nr; q++)
      gpu0[m++] = f->run_first[runs[q]];
    at += size[k];
  }
  run0[nrep] = m;
}

static void replica_clocks_are_their_gpus_slowest(void **state) {
  (void)state;
  static uint32_t size[MAX_REPS], run0[MAX_REPS + 1], gpu0[8 * 72];
  static double phi[MAX_REPS];
  rack_group_spec grp = {"r",  NULL, 8,    72, 1e9, 0, 0, NULL, 0, NAN, NULL,
                         0,    false, 0};
  gpu_catalog cat;
  sim_error err = {0};
  assert_int_equal(gpu_catalog_load_builtin(&cat, &err), SIM_OK);
  const gpu_spec *g = gpu_catalog_find(&cat, "B200");
  grp.gpu = g;
  rack_fleet *f = rack_fleet_create(&grp, 1, NULL, &err);
  assert_non_null(f);
  assert_int_equal(rack_fleet_keep_units(f), SIM_OK);
  srand(27);
  rack_phi_last last = {.type = RACK_PHI_NONE}; /* kept across rounds */
  uint32_t several = 0; /* replicas of more than one run */
  for (int round = 0; round < 60; round++) {
    uint32_t nrep = lay_out(f, g, size);
    for (uint32_t r = 0; r < f->nracks; r++)
      f->thermal_cap_w[r] = rand() % 3 ? INFINITY : g->cap_min_w + 100;
    rack_fleet_update(f, NULL);
    assert_true(rack_fleet_runs_fresh(f));
    pack(f, size, nrep, run0, gpu0);
    work__replica_phis(f, run0, gpu0, nrep, phi, &last);
    uint32_t at = 0;
    for (uint32_t k = 0; k < nrep; k++) {
      double want = 1;
      for (uint32_t i = at; i < at + size[k]; i++) {
        double p = rack_gpu_phi(f, i);
        want = p < want || isnan(want) ? p : want;
      }
      assert_memory_equal(&phi[k], &want, sizeof want);
      several += run0[k + 1] - run0[k] > 1;
      at += size[k];
    }
  }
  assert_true(several > 100);
  rack_fleet_destroy(f);
  gpu_catalog_fini(&cat);
}

/* Jobs start and end on a rack whose background steps from 30% to 60%
 * once they have ended: every GPU is free again, so the mean activity
 * after the step is 60% (the free runs' list made again with the runs;
 * a list kept from the start leaves the jobs' old GPUs behind). */
static void freed_gpus_take_the_background(void **state) {
  (void)state;
  static const char jobs[] =
      "name: w\nseed: 5\nduration: 2 h\nsample_period: 1 min\n"
      "power: {cap: 200 kW}\n"
      "racks:\n"
      "  - {name: nvl, count: 1, gpu: GB200, gpus_per_rack: 72,\n"
      "     other_power_idle: 16.8 kW, other_power_max: 33.6 kW,\n"
      "     load: {pattern: steps, noise: 0, steps: [{at: 0 s, level: 30%},\n"
      "                                              {at: 100 min, level: 60%}]}}\n"
      "training:\n"
      "  - {name: first, model: Llama-3.1-8B, dp: 8, tp: 4,\n"
      "     tokens_per_iteration: 1048576, iterations: 1500}\n"
      "  - {name: small, model: Llama-3.1-8B, dp: 1, tp: 4, arrival: 20 min,\n"
      "     tokens_per_iteration: 65536, iterations: 200}\n";
  run r;
  run_scenario(&r, jobs, NULL, 0);
  assert_int_equal(r.sum.jobs_done, 2);
  size_t n, rows;
  const double *end = job_column(&r, "end_s", &n);
  assert_true(fmax(end[0], end[1]) < 100 * 60);
  const double *act = facility(&r, "activity", &rows);
  const double *t = tel_memory_times(r.sink, "facility", &rows);
  size_t after = 0;
  for (size_t i = 0; i < rows; i++)
    if (t[i] - 60 > 100 * 60 + 1) { /* the interval began after the step */
      assert_close(act[i], 0.6, 1e-12, 0);
      after++;
    }
  assert_true(after > 10);
  run_free(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(replica_clocks_are_their_gpus_slowest),
      cmocka_unit_test(freed_gpus_take_the_background),
  };
  return cmocka_run_group_tests_name("workloads_tick", tests, NULL, NULL);
}
