/* test_rack_run_loads.c - the loads kept once a run (rack.h run_sm,
 * run_mem, run_busy) while the runs are fresh, the GPUs' arrays a cache
 * filled when asked: against a fleet without units (the reference, every
 * GPU written), the same powers and clocks to the bit; the GPUs' loads,
 * once filled, the reference's; a writer per GPU, a change of keys and
 * the debug check each keep the runs the truth; many runs' loads
 * written at once (rack_set_run_loads_seq) as one by one; racks held by
 * known stretches updated as racks whose loads were listed. */
#include "lanes.h"
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rack_fixture.h"

typedef struct loads_case {
  const char *name;
  bool system;       /* DGX-H100 servers of 8 GPUs, else plain NVL72 */
  uint32_t max_slot; /* GPUs a slot holds at most */
} loads_case;

static const loads_case cases[] = {
    {"plain racks, replicas of up to 8", false, 8},
    {"plain racks, stages of up to 72", false, 72},
    {"servers of 8, slots of up to 12", true, 12},
};

static rack_fleet *make(const loads_case *c) {
  const sys_spec *s = sys_catalog_find(&cats.sys, "DGX-H100");
  rack_group_spec g = {"nvl",  gpu_catalog_find(&cats.gpu, "GB200"),
                       4,      72,
                       132000, 16800,
                       33600,  rack_fixture_titanium,
                       4,      NAN,
                       NULL,   0,
                       false,  0};
  if (c->system)
    g = (rack_group_spec){"dgx", gpu_catalog_find(&cats.gpu, "H100-SXM"),
                          4,     32,
                          40800, 0,
                          0,     NULL,
                          0,     NAN,
                          s,     s->host_load,
                          false, 0};
  return rack_fixture_fleet(&g, 1);
}

static double uniform(unsigned *seed) {
  return (double)rand_r(seed) / RAND_MAX;
}

/* Random slots of adjacent GPUs keyed 1, 2, ... (some free, key 0) given
 * to f's keys, as the workloads' slots take them. */
static void new_layout(rack_fleet *f, uint32_t max, unsigned *seed) {
  uint32_t next = 1;
  for (uint32_t i = 0; i < f->n;) {
    uint32_t len = 1 + (uint32_t)(uniform(seed) * (max - 1) + 0.5);
    uint32_t k = uniform(seed) < 0.2 ? 0 : next++;
    for (uint32_t j = i; j < i + len && j < f->n; j++)
      rack_set_unit_key(f, j, k);
    i += len;
  }
}

/* Both fleets made of a fresh layout: f's runs made (its loads and caps
 * the reference's, written per GPU), the reference unkeyed. */
static void start(rack_fleet *f, rack_fleet *ref, const loads_case *c,
                  unsigned *seed) {
  new_layout(f, c->max_slot, seed);
  for (uint32_t i = 0; i < f->n; i++)
    rack_set_load(ref, i, gpu_load_level(uniform(seed)));
  rack_fleet_gpu_caps(f);
  for (uint32_t i = 0; i < f->n; i++) {
    rack_set_load(f, i, rack_gpu_load(ref, i));
    f->cap_w[i] = ref->cap_w[i];
  }
  rack_fleet_caps_written(f);
  rack_fleet_update(f, NULL); /* makes the runs from the GPUs */
  rack_fleet_update(ref, NULL);
  assert_true(rack_fleet_runs_fresh(f));
}

/* A new load to each of f's runs once a run, and to every GPU of it in
 * the reference; true when some run's first GPU now lags its run. */
static bool drive_runs(rack_fleet *f, rack_fleet *ref, unsigned *seed) {
  bool lag = false;
  for (uint32_t q = 0; q < f->nruns; q++) {
    gpu_load l;
    l.sm = uniform(seed); /* one draw a statement: an initializer
                              list's order is unspecified */
    l.mem = uniform(seed);
    l.busy = uniform(seed);
    rack_set_run_load(f, q, l);
    uint32_t i = f->run_first[q];
    lag = lag || f->activity[i] != l.sm;
    for (uint32_t j = i; j < i + f->run_len[q]; j++)
      rack_set_load(ref, j, l);
  }
  return lag;
}

/* f's powers, clocks and loads are the reference's to the bit. */
static void assert_as_ref(rack_fleet *f, rack_fleet *ref) {
  rack_fleet_update(f, NULL);
  rack_fleet_update(ref, NULL);
  for (uint32_t r = 0; r < f->nracks; r++) {
    double a = rack_fleet_rack_phi_sum(f, r),
           b = rack_fleet_rack_phi_sum(ref, r);
    assert_memory_equal(&a, &b, sizeof a);
  }
  assert_memory_equal(rack_fleet_gpu_power(f), ref->power_w,
                      f->n * sizeof(double));
  rack_fleet_gpu_loads(f);
  assert_false(f->loads_unfilled);
  assert_memory_equal(f->activity, ref->activity, f->n * sizeof(double));
  assert_memory_equal(f->mem, ref->mem, f->n * sizeof(double));
  assert_memory_equal(f->busy, ref->busy, f->n * sizeof(double));
  assert_int_equal(rack_fleet_first_unlike(f), RACK_NO_GPU);
}

/* The keyed fleet and its reference for row c, and the draws' seed. */
typedef struct duo {
  rack_fleet *f, *ref;
  unsigned seed;
} duo;

static duo duo_make(const loads_case *c, unsigned seed) {
  duo d = {make(c), make(c), seed};
  assert_int_equal(rack_fleet_keep_units(d.f), SIM_OK);
  return d;
}

/* duo_make, a layout started and a load driven once a run after it. */
static duo duo_driven(const loads_case *c, unsigned seed) {
  duo d = duo_make(c, seed);
  start(d.f, d.ref, c, &d.seed);
  drive_runs(d.f, d.ref, &d.seed);
  return d;
}

static void duo_drop(duo *d) {
  rack_fleet_destroy(d->ref);
  rack_fleet_destroy(d->f);
}

/* Loads written once a run: the runs hold them (the GPUs lag, even a
 * run's first), the update and the clocks read them, the fill gives
 * every GPU its run's. */
static void run_loads_are_the_gpus(void **state) {
  const loads_case *c = *state;
  duo d = duo_make(c, 7);
  rack_fleet *f = d.f, *ref = d.ref;
  for (int layout = 0; layout < 4; layout++) {
    start(f, ref, c, &d.seed);
    for (int round = 0; round < 4; round++) {
      assert_true(drive_runs(f, ref, &d.seed));
      assert_true(f->loads_unfilled);
      for (uint32_t q = 0; q < f->nruns; q++) {
        gpu_load a = rack_run_load(f, q);
        gpu_load b = rack_gpu_load(ref, f->run_first[q]);
        assert_memory_equal(&a, &b, sizeof a);
      }
      assert_as_ref(f, ref);
    }
  }
  duo_drop(&d);
}

/* A writer per GPU behind fresh runs (a test, a stale path's loop): a
 * run's first GPU written sets its run's load, so the runs stay the
 * truth without a call after it. */
static void gpu_writes_set_the_runs(void **state) {
  duo d = duo_driven(*state, 11); /* some GPUs behind their runs */
  rack_fleet *f = d.f, *ref = d.ref;
  rack_fleet_gpu_loads(f);
  for (uint32_t q = 0; q < f->nruns; q += 2) { /* every other run */
    gpu_load l;
    l.sm = uniform(&d.seed); /* one draw a statement: an initializer
                              list's order is unspecified */
    l.mem = uniform(&d.seed);
    l.busy = uniform(&d.seed);
    for (uint32_t j = f->run_first[q]; j < f->run_first[q] + f->run_len[q];
         j++) {
      rack_set_load(f, j, l);
      rack_set_load(ref, j, l);
    }
    gpu_load got = rack_run_load(f, q);
    assert_memory_equal(&got, &l, sizeof l);
  }
  assert_as_ref(f, ref);
  duo_drop(&d);
}

/* A key changed behind run loads: the GPUs are filled from the old runs
 * first, so the runs made next hold the loads the reference has. */
static void keys_fill_from_the_runs(void **state) {
  duo d = duo_driven(*state, 13);
  rack_fleet *f = d.f, *ref = d.ref;
  assert_true(f->loads_unfilled);
  rack_set_unit_key(f, 0, f->unit_key[0] + 1000);
  assert_false(f->loads_unfilled);
  assert_false(rack_fleet_runs_fresh(f));
  assert_memory_equal(f->activity, ref->activity, f->n * sizeof(double));
  assert_memory_equal(f->busy, ref->busy, f->n * sizeof(double));
  assert_as_ref(f, ref); /* the runs made again from the GPUs */
  duo_drop(&d);
}

/* The debug check finds a run's first GPU whose filled load is not its
 * run's (a write to the array behind the runs' back). */
static void unlike_finds_a_first_gpu_apart(void **state) {
  duo d = duo_driven(*state, 17);
  rack_fleet *f = d.f;
  rack_fleet_gpu_loads(f);
  uint32_t q = f->nruns / 2, i = f->run_first[q];
  assert_int_equal(rack_fleet_first_unlike(f), RACK_NO_GPU);
  f->mem[i] = f->run_mem[q] + 0.125;
  assert_int_equal(rack_fleet_first_unlike(f), i);
  duo_drop(&d);
}

/* rack_set_run_loads_seq: n loads to the runs from q0 (from_end: q0 is
 * nruns - n, the runs at the array's end), every word the load's to the
 * bit, no run beside them written, the GPUs' loads noted behind exactly
 * when a run was written, and the GPUs, once filled, their runs'. */
typedef struct seq_case {
  const char *name;
  uint32_t q0, n;
  bool from_end;
  bool narrow; /* two a turn where AVX2 is (sim_lanes_narrow) */
} seq_case;

#define SEQ_ALL UINT32_MAX /* n: every run */

static const seq_case seq_cases[] = {
    {"seq: none", 3, 0, false, false},
    {"seq: none at the end", 0, 0, true, false},
    {"seq: one at the start", 0, 1, false, false},
    {"seq: one at the end", 0, 1, true, false},
    {"seq: two", 5, 2, false, false},
    {"seq: three", 4, 3, false, false},
    {"seq: five", 6, 5, false, false},
    {"seq: six", 1, 6, false, false},
    {"seq: odd", 1, 7, false, false},
    {"seq: even", 2, 10, false, false},
    {"seq: odd to the end", 0, 9, true, false},
    {"seq: even to the end", 0, 12, true, false},
    {"seq: every run", 0, SEQ_ALL, false, false},
    {"seq, two a turn: none", 3, 0, false, true},
    {"seq, two a turn: none at the end", 0, 0, true, true},
    {"seq, two a turn: one at the start", 0, 1, false, true},
    {"seq, two a turn: one at the end", 0, 1, true, true},
    {"seq, two a turn: two", 5, 2, false, true},
    {"seq, two a turn: three", 4, 3, false, true},
    {"seq, two a turn: five", 6, 5, false, true},
    {"seq, two a turn: six", 1, 6, false, true},
    {"seq, two a turn: odd", 1, 7, false, true},
    {"seq, two a turn: even", 2, 10, false, true},
    {"seq, two a turn: odd to the end", 0, 9, true, true},
    {"seq, two a turn: even to the end", 0, 12, true, true},
    {"seq, two a turn: every run", 0, SEQ_ALL, false, true},
};

/* A word of every kind a load can hold: -0 (not 0), a subnormal, the
 * largest double, and draws; so a lane swapped or a sign lost shows. */
static double seq_word(uint32_t k, unsigned *seed) {
  static const double odd[] = {-0.0, 0x1p-1070, 0x1.fffffffffffffp1023, 1};
  return k % 5 < 4 ? odd[k % 5] * (k % 2 ? -1 : 1) : uniform(seed);
}

/* Case c's loads to the runs: a list of loads (rack_set_run_loads_seq),
 * or one load n times (fill: rack_set_run_loads_fill), then checked. */
static void loads_to_runs(const seq_case *c, bool fill) {
  duo d = duo_driven(&cases[0], 19);
  rack_fleet *f = d.f;
  const gpu_load was = {-1, -2, -3};
  for (uint32_t q = 0; q < f->nruns; q++)
    rack_set_run_load(f, q, was);
  rack_fleet_gpu_loads(f); /* every GPU was, nothing behind */
  uint32_t n = c->n == SEQ_ALL ? f->nruns : c->n;
  uint32_t q0 = c->from_end ? f->nruns - n : c->q0;
  assert_true(f->nruns > 24 && q0 + n <= f->nruns);
  gpu_load *l = test_malloc((n + 1) * sizeof *l);
  for (uint32_t k = 0; k < n; k++)
    l[k] = (gpu_load){seq_word(3 * k, &d.seed), seq_word(3 * k + 1, &d.seed),
                      seq_word(3 * k + 2, &d.seed)};
  for (uint32_t k = 1; fill && k < n; k++)
    l[k] = l[0];
  sim_lanes_narrow = c->narrow;
  if (fill)
    rack_set_run_loads_fill(f, q0, n, n > 0 ? l[0] : was);
  else
    rack_set_run_loads_seq(f, q0, l, n);
  sim_lanes_narrow = false;
  assert_int_equal(f->loads_unfilled, n > 0);
  for (uint32_t q = 0; q < f->nruns; q++) {
    gpu_load want = q >= q0 && q < q0 + n ? l[q - q0] : was,
             got = rack_run_load(f, q);
    assert_memory_equal(&got, &want, sizeof want);
  }
  rack_fleet_gpu_loads(f);
  for (uint32_t q = 0; q < f->nruns; q++) {
    gpu_load want = rack_run_load(f, q),
             got = rack_gpu_load(f, f->run_first[q]);
    assert_memory_equal(&got, &want, sizeof want);
  }
  test_free(l);
  duo_drop(&d);
}

static void run_loads_seq(void **state) { loads_to_runs(*state, false); }

/* rack_set_run_loads_fill: the same rows, one load (the first's words:
 * -0, a subnormal, the largest double) to every run of the stretch. */
static void run_loads_fill(void **state) { loads_to_runs(*state, true); }

/* The fleet's known stretches (rack_fleet's known) true to the runs:
 * each one's runs hold its load, to the bit, inside the bounds the
 * writers look at. */
static void known_true(const rack_fleet *f) {
  for (uint32_t k = 0; k < f->nknown; k++) {
    const struct rack_known *x = &f->known[k];
    assert_true(x->q0 < x->q1 && x->q1 <= f->nruns);
    assert_true(x->q0 >= f->known_lo && x->q1 <= f->known_hi);
    for (uint32_t q = x->q0; q < x->q1; q++) {
      gpu_load got = rack_run_load(f, q);
      assert_memory_equal(&got, &x->l, sizeof got);
    }
  }
}

/* 400 writes of runs' loads at random: fills of one of three loads (in
 * order, as the drive's chunks, or anywhere), one run's, two listed
 * runs' (rack_set_runs_load), a list's in order, the list forgotten or
 * the runs made again; after each the known stretches
 * are true (a write inside one that left it would break that) and a
 * fill's ends are found known at its load. */
static void known_stretches_hold(void **state) {
  (void)state;
  duo d = duo_driven(&cases[0], 23);
  rack_fleet *f = d.f;
  const gpu_load l[3] = {{0.5, 0.25, 1}, {-0.0, 0.25, 1}, {0.5, 0.25, 0.75}};
  gpu_load list[8];
  uint32_t next = 0;
  for (int i = 0; i < 400; i++) {
    uint32_t op = (uint32_t)(uniform(&d.seed) * 6), n = f->nruns;
    uint32_t q = (uint32_t)(uniform(&d.seed) * n), m = 1 + q % 8;
    m = q + m <= n ? m : n - q;
    gpu_load x = l[(uint32_t)(uniform(&d.seed) * 3)];
    if (op <= 1) { /* 0: the next chunk in order (a group's load for 40
                      writes, so chunks join); 1: anywhere */
      x = op == 0 ? l[i / 40 % 3] : x;
      q = op == 0 ? next : q;
      m = op == 0 ? (q + m <= n ? m : n - q) : m;
      rack_set_run_loads_fill(f, q, m, x);
      next = q + m < n ? q + m : 0;
      const struct rack_known *a = rack_known_at(f, q),
                              *b = rack_known_at(f, q + m - 1);
      assert_true(m == 0 || f->nknown == RACK_KNOWN_MAX ||
                  (a != NULL && b != NULL && memcmp(&a->l, &x, sizeof x) == 0 &&
                   a == b));
    } else if (op == 2) { /* one run, or a list of runs (a stage's) */
      uint32_t runs[2] = {q, (q + n / 2) % n};
      if (i % 2)
        rack_set_run_load(f, q, x);
      else
        rack_set_runs_load(f, runs, 2, x);
      for (int k = 0; k < 2 - i % 2; k++) {
        gpu_load got = rack_run_load(f, runs[k]);
        assert_memory_equal(&got, &x, sizeof x);
      }
      assert_true(f->loads_unfilled);
    } else if (op == 3) {
      for (uint32_t k = 0; k < m; k++)
        list[k] = l[(k + (uint32_t)i) % 3];
      rack_set_run_loads_seq(f, q, list, m);
    } else if (op == 4) {
      rack_known_forget(f);
      next = 0;
    } else if (op == 5 && i % 11 == 0) {
      rack_set_unit_key(f, 0, f->unit_key[0] + 1000); /* runs made again */
      rack_fleet_update(f, NULL);
      assert_int_equal(f->nknown, 0);
      n = f->nruns;
      next = 0;
    }
    known_true(f);
  }
  duo_drop(&d);
}

/* Runs [q0, q1) given load x: f by a fill (a known stretch), g as a
 * list of x (none known). */
static void fill_and_list(rack_fleet *f, rack_fleet *g, uint32_t q0,
                          uint32_t q1, gpu_load x) {
  gpu_load *list = test_malloc((q1 - q0 + 1) * sizeof *list);
  for (uint32_t q = q0; q < q1; q++)
    list[q - q0] = x;
  rack_set_run_loads_fill(f, q0, q1 - q0, x);
  rack_set_run_loads_seq(g, q0, list, q1 - q0);
  test_free(list);
}

/* f's and g's racks and runs after an update, to the bit. */
static void assert_updates_alike(rack_fleet *f, rack_fleet *g) {
  double a = rack_fleet_update(f, NULL), b = rack_fleet_update(g, NULL);
  assert_memory_equal(&a, &b, sizeof a);
  size_t racks = f->nracks * sizeof(double);
  assert_memory_equal(f->rack_power_w, g->rack_power_w, racks);
  assert_memory_equal(f->gpu_power_w, g->gpu_power_w, racks);
  assert_memory_equal(f->activity_mean, g->activity_mean, racks);
  assert_memory_equal(f->loss_w, g->loss_w, racks);
  assert_memory_equal(f->fan_w, g->fan_w, racks);
  assert_memory_equal(f->throttled, g->throttled,
                      f->nracks * sizeof *f->throttled);
  assert_memory_equal(f->run_power_w, g->run_power_w,
                      f->nruns * sizeof(double));
}

/* Racks held whole by known stretches, whose update compares their runs'
 * caps alone (nothing where the stretch's load is not the run evaluated
 * last), against a twin given the same loads as lists (none known):
 * every rack's sums and run's power the same bits, in AVX2 and two a
 * turn. Rounds of fills of one to three racks at one of three loads, now
 * and then a run's load written apart (its stretch dropped); a cap a
 * rack, now and then one run's apart. */
static void known_racks_as_listed(void **state) {
  const loads_case *c = *state;
  duo d = duo_make(c, 29), t = duo_make(c, 29);
  start(d.f, d.ref, c, &d.seed);
  start(t.f, t.ref, c, &t.seed); /* the same draws: the same layout */
  rack_fleet *f = d.f, *g = t.f;
  assert_int_equal(f->nruns, g->nruns);
  const gpu_spec *gs = f->types[0];
  const double caps[2] = {gs->cap_max_w, 0.5 * (gs->cap_min_w + gs->cap_max_w)};
  const gpu_load l[3] = {{0.5, 0.25, 1}, {0.75, 0.25, 1}, {0.5, 0.25, 0.75}};
  uint32_t known = 0;
  for (int round = 0; round < 80; round++) {
    for (uint32_t r = 0, r1; r < f->nracks; r = r1) {
      r1 = r + 1 + (uint32_t)(uniform(&d.seed) * 2.99);
      r1 = r1 < f->nracks ? r1 : f->nracks;
      fill_and_list(f, g, f->rack_run[r], f->rack_run[r1],
                    l[(uint32_t)(uniform(&d.seed) * 2.99)]);
    }
    if (round % 3 == 0) { /* a run apart: its stretch no longer known */
      uint32_t q = (uint32_t)(uniform(&d.seed) * (f->nruns - 1));
      rack_set_run_load(f, q, l[round % 2]);
      rack_set_run_load(g, q, l[round % 2]);
    }
    for (uint32_t r = 0; r < f->nracks; r++) {
      double cap = caps[uniform(&d.seed) < 0.5];
      for (uint32_t q = f->rack_run[r]; q < f->rack_run[r + 1]; q++) {
        double x = uniform(&d.seed) < 0.05 ? caps[cap == caps[0]] : cap;
        rack_set_run_cap(f, q, x);
        rack_set_run_cap(g, q, x);
      }
    }
    known += f->nknown;
    sim_lanes_narrow = round % 2;
    assert_updates_alike(f, g);
    sim_lanes_narrow = false;
  }
  assert_true(known > 0);
  duo_drop(&t);
  duo_drop(&d);
}

int main(void) {
  struct CMUnitTest tests[80];
  size_t n = 0;
  TEST_ROWS(tests, n, run_loads_are_the_gpus, cases);
  TEST_ROWS(tests, n, gpu_writes_set_the_runs, cases);
  TEST_ROWS(tests, n, keys_fill_from_the_runs, cases);
  TEST_ROWS(tests, n, unlike_finds_a_first_gpu_apart, cases);
  TEST_ROWS(tests, n, run_loads_seq, seq_cases);
  TEST_ROWS(tests, n, run_loads_fill, seq_cases);
  TEST_ADD(tests, n, known_stretches_hold);
  TEST_ROWS(tests, n, known_racks_as_listed, cases);
  return _cmocka_run_group_tests("rack_run_loads", tests, n,
                                 test_catalogs_load_hardware,
                                 test_catalogs_release);
}
