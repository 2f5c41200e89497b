/* test_workloads_units_crew.c - the units' compute shares as the
 * members take them with their loads (workloads_crew.c's take_loads_of
 * into w->rep_comp, read by workloads_units.c's replica_units while
 * w->comp_taken): on two threads, at any point of a request-level run
 * between the leader's events, every replica's unit is the one the
 * services' own inf_compute_shares give, to the bit; and on one thread
 * (no crew's take) the shares are the services' and never the kept. */
#include "test_util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "factory.h"
#include "factory_internal.h"
#include "tel.h"
#include "workloads_internal.h"

#define FAULTS AIFSIM_SOURCE_DIR "/scenarios/faults.yaml"

/* The faults scenario under a cap the efficiency policy meets by the
 * units' shares; its services' replicas busy and idle in turn. */
static const char *const sets[] = {"duration=20min", "power.cap=450kW",
                                   "power.policy=efficiency"};

typedef struct units_row {
  const char *name;
  unsigned threads;
  bool kept; /* the crew's take: the shares kept (w->comp_taken) */
} units_row;

static const units_row rows[] = {
    {"two threads: the shares kept at the take", 2, true},
    {"one thread: the services' own shares", 1, false},
};

/* Every replica's unit (keys 0 .. nrep: the replicas are the first
 * slots, in order) from what w holds now and from the services'
 * inf_compute_shares (comp_taken false), the same bytes; how many
 * replicas' shares are neither 0 nor 1. */
static size_t units_are_the_services(work *w) {
  uint32_t n = w->nrep, *key = calloc(n, sizeof *key);
  power_unit *got = calloc(n, sizeof *got), *want = calloc(n, sizeof *want);
  assert_true(key != NULL && got != NULL && want != NULL);
  for (uint32_t k = 0; k < n; k++)
    key[k] = k;
  work_slot_units(w, key, n, got);
  bool kept = w->comp_taken;
  w->comp_taken = false;
  work_slot_units(w, key, n, want);
  w->comp_taken = kept;
  assert_memory_equal(got, want, n * sizeof *got);
  size_t between = 0;
  for (uint32_t k = 0; k < n; k++)
    between += got[k].c > 0 && got[k].c < 1;
  free(key);
  free(got);
  free(want);
  return between;
}

static void units_shares_are_the_services(void **state) {
  const units_row *row = *state;
  factory_scenario sc;
  sim_error err = {0};
  if (factory_scenario_load(FAULTS, sets, sizeof sets / sizeof *sets, &sc,
                            &err) != SIM_OK)
    fail_msg("%s", err.msg);
  sc.threads = row->threads;
  tel_sink *sink = tel_memory_create();
  sim_engine *e = sim_engine_create(NULL);
  factory *f = factory_create(&sc, e, sink, &err);
  if (f == NULL)
    fail_msg("%s", err.msg);
  work *w = f->state[f->holder];
  assert_true(work_on_threads(w) == (row->threads > 1));
  size_t between = 0;
  /* odd times: between ticks, at one, past the services' events */
  for (sim_time t = 1500 * SIM_MS; t < 20 * SIM_MIN;
       t = t * 17 / 10 + 300 * SIM_MS) {
    assert_int_equal(sim_engine_run(e, t), SIM_OK);
    assert_true(w->comp_taken == row->kept);
    between += units_are_the_services(w);
  }
  assert_true(between > 0); /* shares that tell replicas apart */
  factory_destroy(f);
  tel_destroy(sink);
  sim_engine_destroy(e);
  factory_scenario_release(&sc);
}

int main(void) {
  struct CMUnitTest tests[sizeof rows / sizeof *rows];
  size_t n = 0;
  TEST_ROWS(tests, n, units_shares_are_the_services, rows);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
