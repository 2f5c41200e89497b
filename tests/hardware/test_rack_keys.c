/* test_rack_keys.c - runs' keys (rack_runs_key, rack_runs_key_same): a
 * clock solved when the keys were taken is kept only while they hold,
 * and then it is the clock a solve gives now, to the bit. What moves
 * between the take and the look: a load's word, a cap, a rack's thermal
 * cap below or above the cap, or a write of what was there. */
#include "test_util.h"

#include <math.h>
#include <string.h>

#include "bits.h"
#include "rack_fixture.h"

typedef enum {
  NOTHING,
  SAME_CAP,
  LOAD_SM,
  LOAD_MEM,
  LOAD_BUSY,
  CAP,
  THERMAL_BELOW,
  THERMAL_ABOVE,
  NAN_BUSY_HELD
} key_move;

/* A move and whether the moved run's key still holds after it. */
typedef struct key_case {
  const char *name;
  key_move move;
  bool holds;
} key_case;

static const key_case keys[] = {
    {"keys: nothing moved", NOTHING, true},
    {"keys: a cap written again as it was", SAME_CAP, true},
    {"keys: a run's SM share moved", LOAD_SM, false},
    {"keys: a run's memory share moved", LOAD_MEM, false},
    {"keys: a run's busy share moved", LOAD_BUSY, false},
    {"keys: a run's cap moved", CAP, false},
    {"keys: its rack's thermal cap below the cap", THERMAL_BELOW, false},
    {"keys: its rack's thermal cap moved, above the cap", THERMAL_ABOVE, true},
    {"keys: a NaN busy share, as it was", NAN_BUSY_HELD, true},
};


/* Every run's clock as a replica's: the least of 1 and the solve. */
static void clocks_now(const rack_fleet *f, uint32_t n, double *phi) {
  for (uint32_t q = 0; q < n; q++) {
    double x = gpu_load_clock_under_cap(f->types[f->run_type[q]],
                                        rack_run_cap_w(f, q, f->run_rack[q]),
                                        rack_run_load(f, q));
    phi[q] = x < 1 ? x : 1; /* NaN: 1 */
  }
}

/* Run q (its rack's second run) moved as c says. */
static void move_run(rack_fleet *f, const key_case *c, uint32_t q) {
  gpu_load l = rack_run_load(f, q);
  uint32_t r = f->run_rack[q];
  double cap = f->run_cap_w[q];
  switch (c->move) {
  case NOTHING:
  case NAN_BUSY_HELD:
    break;
  case SAME_CAP:
    rack_set_run_cap(f, q, cap);
    break;
  case LOAD_SM:
    rack_set_run_load(f, q, (gpu_load){l.sm + 0.25, l.mem, l.busy});
    break;
  case LOAD_MEM:
    rack_set_run_load(f, q, (gpu_load){l.sm, l.mem + 0.25, l.busy});
    break;
  case LOAD_BUSY:
    rack_set_run_load(f, q, (gpu_load){l.sm, l.mem, l.busy * 0.5});
    break;
  case CAP:
    rack_set_run_cap(f, q, cap - 100);
    break;
  case THERMAL_BELOW:
    f->thermal_cap_w[r] = cap - 50;
    break;
  case THERMAL_ABOVE:
    f->thermal_cap_w[r] = cap + 50;
    break;
  }
}

static void kept_while_keys_hold(void **state) {
  const key_case *c = *state;
  rack_fleet *f = rack_fixture_capped(NAN);
  uint32_t n = f->rack_run[f->nracks], q = f->rack_run[1] + 1;
  assert_true(n <= 512 && q < f->rack_run[2]);
  if (c->move == NAN_BUSY_HELD) {
    gpu_load l = rack_run_load(f, q);
    rack_set_run_load(f, q, (gpu_load){l.sm, l.mem, NAN});
  }
  double kept[512], now[512];
  rack_run_key key[512];
  clocks_now(f, n, kept); /* solved, the keys taken with them */
  rack_runs_key(f, 0, n, key);
  move_run(f, c, q);
  clocks_now(f, n, now);
  assert_int_equal(rack_runs_key_same(f, 0, n, key), c->holds);
  if (!c->holds) /* the move reaches the clock: keeping it would be stale */
    assert_false(sim_same_bits(kept[q], now[q]));
  for (uint32_t k = 0; k < n; k++) { /* each run's own key */
    bool holds = rack_runs_key_same(f, k, 1, key + k);
    bool touched = k == q || (c->move == THERMAL_BELOW && /* its rack's */
                              f->run_rack[k] == f->run_rack[q]);
    assert_int_equal(holds, !touched || c->holds);
    if (holds && !sim_same_bits(kept[k], now[k])) /* a stale clock kept */
      fail_msg("%s: run %u's key holds, its clock moved", c->name, k);
  }
  rack_fleet_destroy(f);
}

int main(void) {
  struct CMUnitTest tests[16];
  size_t n = 0;
  TEST_ROWS(tests, n, kept_while_keys_hold, keys);
  return _cmocka_run_group_tests("rack_keys", tests, n,
                                 test_catalogs_load_hardware,
                                 test_catalogs_release);
}
