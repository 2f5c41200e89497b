/* test_rack_known.c - a sample's racks' sums with some runs' clocks known
 * (rack_fleet_phis_known): the same bits as the sums that solve them,
 * the known clocks read where they apply and nowhere else. */
#include "lanes.h"
#include "test_util.h"

#include <math.h>
#include <string.h>

#include "rack_fixture.h"

typedef enum { ALIKE, ONE_LOAD, ONE_CAP, NAN_BUSY, THERMAL } known_move;

/* A fleet's runs, the known range (first run, count; count UINT32_MAX:
 * to the last run) and what is moved before the sample. */
typedef struct known_case {
  const char *name;
  known_move move;
  uint32_t q0, n;
} known_case;

static const known_case knowns[] = {
    {"known: every run, racks alike", ALIKE, 0, UINT32_MAX},
    {"known: every run, a run's load moved", ONE_LOAD, 0, UINT32_MAX},
    {"known: every run, a run's cap moved", ONE_CAP, 0, UINT32_MAX},
    {"known: the first three runs", ONE_LOAD, 0, 3},
    {"known: a middle stretch", ONE_CAP, 5, 9},
    {"known: from a middle run to the last", ONE_LOAD, 7, UINT32_MAX},
    {"known: a NaN busy share (never read)", NAN_BUSY, 0, UINT32_MAX},
    {"known: under a thermal cap", THERMAL, 0, UINT32_MAX},
};

static rack_fleet *fleet_of(const known_case *c) {
  rack_fleet *f = rack_fixture_capped(c->move == THERMAL ? 300 : NAN);
  for (uint32_t r = 0; r < f->nracks; r++) {
    uint32_t q = f->rack_run[r] + 1 < f->rack_run[r + 1] ? f->rack_run[r] + 1
                                                          : f->rack_run[r];
    gpu_load l = rack_run_load(f, q);
    if (c->move == ONE_LOAD)
      rack_set_run_load(f, q, (gpu_load){l.sm + 0.25, l.mem, l.busy});
    if (c->move == ONE_CAP)
      rack_set_run_cap(f, q, f->run_cap_w[q] - 100);
    for (q = f->rack_run[r]; c->move == NAN_BUSY && q < f->rack_run[r + 1];
         q++) /* every run's: none is read */
      rack_set_run_load(f, q, (gpu_load){l.sm, l.mem, NAN});
  }
  return f;
}

/* Every rack's sums, in rack order (the kept sums as a sample keeps). */
static void sums_of(const rack_fleet *f, rack_sample_sums *s) {
  rack_phi_last last = {.type = RACK_PHI_NONE};
  for (uint32_t r = 0; r < f->nracks; r++)
    s[r] = rack_fleet_rack_sample(f, r, &last);
}

/* Runs q0 .. q0 + n - 1's clocks as the caller solves them: the least of
 * 1 and the solve, as a replica's (workloads_crew.c); bogus: a clock no
 * solve gives, to see where they are read. */
static void known_clocks(const rack_fleet *f, uint32_t q0, uint32_t n,
                         bool bogus, double *phi) {
  for (uint32_t k = 0; k < n; k++) {
    uint32_t q = q0 + k, r = f->run_rack[q];
    double x = gpu_load_clock_under_cap(f->types[f->run_type[q]],
                                        rack_run_cap_w(f, q, r),
                                        rack_run_load(f, q));
    phi[k] = bogus ? 0.123 + 0.001 * k : x < 1 ? x : 1; /* NaN: 1 */
  }
}

static void known_are_the_solves(void **state) {
  const known_case *c = *state;
  rack_fleet *f = fleet_of(c);
  uint32_t nruns = f->rack_run[f->nracks];
  uint32_t n = c->n == UINT32_MAX ? nruns - c->q0 : c->n;
  assert_true(c->q0 + n <= nruns && n > 0);
  rack_sample_sums want[64], got[64], odd[64];
  assert_true(f->nracks <= 64);
  double phi[512];
  assert_true(n <= 512);
  sums_of(f, want);
  for (int narrow = 0; narrow < 2; narrow++) {
    sim_lanes_narrow = narrow;
    known_clocks(f, c->q0, n, false, phi);
    rack_fleet_phis_known(f, c->q0, n, phi);
    sums_of(f, got);
    if (memcmp(got, want, f->nracks * sizeof *got) != 0)
      fail_msg("%s (narrow %d): the sums moved with the clocks known",
               c->name, narrow);
    known_clocks(f, c->q0, n, true, phi); /* read only where they apply */
    sums_of(f, odd);
    bool moved = memcmp(odd, want, f->nracks * sizeof *odd) != 0;
    assert_int_equal(moved, c->move != NAN_BUSY);
    for (uint32_t r = 0; r < f->nracks; r++) { /* not outside the range */
      bool in = f->rack_run[r] < c->q0 + n && f->rack_run[r + 1] > c->q0;
      if (!in && memcmp(&odd[r], &want[r], sizeof odd[r]) != 0)
        fail_msg("%s: rack %u read a clock outside the range", c->name, r);
      assert_true(sim_same_bits(odd[r].cap, want[r].cap));
    }
    rack_fleet_phis_known(f, 0, 0, NULL); /* taken back: solved again */
    sums_of(f, got);
    assert_memory_equal(got, want, f->nracks * sizeof *got);
    sim_lanes_narrow = false;
  }
  rack_fleet_destroy(f);
}

int main(void) {
  struct CMUnitTest tests[16];
  size_t n = 0;
  TEST_ROWS(tests, n, known_are_the_solves, knowns);
  return _cmocka_run_group_tests("rack_known", tests, n,
                                 test_catalogs_load_hardware,
                                 test_catalogs_release);
}
