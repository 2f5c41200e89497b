/* test_rack_runs.c - the fleet's units (rack_runs.c) against the per-GPU
 * update they stand for: two fleets alike, one without units (the
 * reference, rack.c update_rack), one with; the same loads and caps
 * written the way the factory writes them (one to every GPU of a slot in
 * a rack, of a rack's free GPUs, of a rack). Each GPU's power must be the
 * same bits; the rack sums, which add k p for a run where the reference
 * adds p k times, within a relative 1e-13. The racks' sums to the bit,
 * over alike runs and racks taken whole: test_rack_runs_whole.c. */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rack_fixture.h"

/* What a row changes: the racks' kind and the faults and thermal caps. */
typedef struct runs_case {
  const char *name;
  bool system; /* DGX-H100 servers of 8 GPUs, else plain NVL72 */
  bool thermal, dark, emergency;
  uint32_t max_slot; /* GPUs a slot holds at most */
} runs_case;

static const runs_case cases[] = {
    {"plain racks, replicas of up to 8", false, false, false, false, 8},
    {"plain racks, stages of up to 72", false, false, false, false, 72},
    {"servers of 8, slots of up to 12", true, false, false, false, 12},
    {"thermal caps below some GPUs", false, true, false, false, 8},
    {"a dark rack and an emergency rack", true, false, true, true, 6},
    {"servers, thermal, faults", true, true, true, true, 20},
};

/* The row's fleet: of its racks' kind. */
static rack_fleet *make(const runs_case *c) {
  return rack_fixture_make(c->system);
}

/* Loads and caps as the factory writes them: each rack a level for its
 * GPUs, each slot a load, each slot's GPUs in a rack (a unit) a cap, the
 * rack's free GPUs another. */
static void write_state(rack_fleet *f, const uint32_t *key, unsigned *seed) {
  gpu_load l = {0, 0, 0};
  double cap = 0;
  for (uint32_t r = 0; r < f->nracks; r++) {
    gpu_load rack_l = gpu_load_level(rack_fixture_uniform(seed));
    double free_cap = 200 + 800 * rack_fixture_uniform(seed);
    uint32_t end = f->first[r] + f->count[r];
    for (uint32_t i = f->first[r]; i < end; i++) {
      bool head = i == f->first[r] || key[i] != key[i - 1];
      if (head && key[i] != 0) {
        /* one draw a statement: an initializer list's order is unspecified */
        l.sm = rack_fixture_uniform(seed);
        l.mem = rack_fixture_uniform(seed);
        l.busy = rack_fixture_uniform(seed);
        cap = 200 + 800 * rack_fixture_uniform(seed);
      }
      rack_set_load(f, i, key[i] != 0 ? l : rack_l);
      f->cap_w[i] = key[i] != 0 ? cap : free_cap;
    }
  }
  rack_fleet_caps_written(f); /* written per GPU: the runs' from them */
}

/* Whether f's GPUs' loads are ref's, to the bit. */
static void assert_loads(const rack_fleet *f, const rack_fleet *ref) {
  size_t n = f->n * sizeof(double);
  assert_memory_equal(f->activity, ref->activity, n);
  assert_memory_equal(f->mem, ref->mem, n);
  assert_memory_equal(f->busy, ref->busy, n);
}

/* Rack r's hottest GPU, GPU by GPU. */
static double max_over_gpus(const rack_fleet *f, const double *power,
                            uint32_t r) {
  double p = 0;
  for (uint32_t i = f->first[r]; i < f->first[r] + f->count[r]; i++)
    p = fmax(p, power[i]);
  return p;
}

static void compare(const rack_fleet *ref, rack_fleet *f) {
  for (uint32_t r = 0; r < f->nracks; r++) { /* run by run, loads behind */
    double runs = rack_fleet_rack_phi_sum(f, r),
           gpus = rack_fixture_phi_over_gpus(ref, r);
    assert_memory_equal(&runs, &gpus, sizeof runs);
  }
  assert_true(f->power_unfilled); /* the update wrote runs, not GPUs */
  for (uint32_t r = 0; r < f->nracks; r++) { /* over runs, then GPUs */
    double runs = rack_fleet_rack_max_power_w(f, r);
    double gpus = max_over_gpus(ref, ref->power_w, r); /* no units */
    assert_memory_equal(&runs, &gpus, sizeof runs);
  }
  assert_true(f->power_unfilled); /* asking did not fill the GPUs */
  assert_memory_equal(ref->power_w, rack_fleet_gpu_power(f),
                      f->n * sizeof(double));
  for (uint32_t r = 0; r < f->nracks; r++) {
    assert_close(f->gpu_power_w[r], ref->gpu_power_w[r], 1e-13, 0);
    assert_close(f->rack_power_w[r], ref->rack_power_w[r], 1e-13, 0);
    assert_close(f->loss_w[r], ref->loss_w[r], 1e-13, 0);
    assert_close(f->fan_w[r], ref->fan_w[r], 1e-13, 0);
    assert_close(f->activity_mean[r], ref->activity_mean[r], 1e-13, 1e-300);
    assert_int_equal(f->throttled[r], ref->throttled[r]);
    double filled = rack_fleet_rack_max_power_w(f, r);
    double ref_max = rack_fleet_rack_max_power_w(ref, r);
    assert_memory_equal(&filled, &ref_max, sizeof filled);
  }
  assert_true(rack_fleet_runs_alike(f));
}

/* Thermal caps and faults as the row asks, on f. */
static void set_racks(rack_fleet *f, const runs_case *c, unsigned *seed) {
  for (uint32_t r = 0; r < f->nracks; r++) {
    f->thermal_cap_w[r] =
        c->thermal ? 300 + 600 * rack_fixture_uniform(seed) : INFINITY;
    f->dark[r] = c->dark && r == 1;
    f->emergency[r] = c->emergency && r == 3;
  }
  rack_fleet_apply_emergency(f);
}

/* Rounds of new loads and caps on one layout (the runs made once), then
 * a new layout (the runs made again), against the reference each time. */
static void runs_are_the_per_gpu_update(void **state) {
  const runs_case *c = *state;
  rack_fleet *ref = make(c), *f = make(c);
  assert_int_equal(rack_fleet_keep_units(f), SIM_OK);
  uint32_t *key = calloc(f->n, sizeof *key);
  unsigned seed = 24;
  for (int layout = 0; layout < 20; layout++) {
    rack_fixture_new_layout(f, key, c->max_slot, &seed);
    for (int round = 0; round < 10; round++) {
      write_state(f, key, &seed);
      set_racks(f, c, &seed);
      rack_fixture_copy_state(ref, f);
      double lr, l, it_ref = rack_fleet_update(ref, &lr);
      double it = rack_fleet_update(f, &l);
      assert_false(f->runs_stale);
      assert_true(f->nruns < f->n / 2); /* the runs do merge GPUs */
      compare(ref, f);
      assert_close(it, it_ref, 1e-13, 0);
      assert_close(l, lr, 1e-13, 0);
    }
  }
  free(key);
  rack_fleet_destroy(ref);
  rack_fleet_destroy(f);
}

/* Loads written once a run (rack_set_run_load, as the factory's drive
 * writes them while the runs are fresh) against every GPU written (the
 * reference): the same powers to the bit, the same sums, the runs alike
 * by key and cap meanwhile; the GPUs' loads filled on demand
 * (rack_fleet_gpu_loads) or, left behind, when the next layout's keys
 * change, are the reference's to the bit. */
static void loads_by_runs_are_the_per_gpu_loads(void **state) {
  const runs_case *c = *state;
  rack_fleet *ref = make(c), *f = make(c);
  assert_int_equal(rack_fleet_keep_units(f), SIM_OK);
  uint32_t *key = calloc(f->n, sizeof *key);
  unsigned seed = 42;
  for (int layout = 0; layout < 12; layout++) {
    rack_fixture_new_layout(f, key, c->max_slot, &seed);
    assert_false(f->loads_unfilled); /* filled before the first key moved */
    assert_loads(f, ref);
    write_state(f, key, &seed); /* the runs are made from these */
    rack_fixture_update_both(ref, f);
    for (int round = 0; round < 6; round++) {
      write_state(ref, key, &seed);
      set_racks(ref, c, &seed);
      rack_fixture_copy_caps(f, ref);
      for (uint32_t q = 0; q < f->nruns; q++)
        rack_set_run_load(f, q, rack_gpu_load(ref, f->run_first[q]));
      assert_true(f->loads_unfilled || f->nruns == f->n);
      rack_fleet_update(ref, NULL);
      rack_fleet_update(f, NULL); /* asserts the runs alike (debug) */
      assert_int_equal(rack_fleet_first_unlike(f), RACK_NO_GPU);
      compare(ref, f);
      if (round % 2 == 0) { /* filled when asked; else at the keys */
        rack_fleet_gpu_loads(f);
        assert_false(f->loads_unfilled);
        assert_loads(f, ref);
      }
    }
  }
  free(key);
  rack_fleet_destroy(ref);
  rack_fleet_destroy(f);
}

/* Rack r's GPUs at load a, but its GPUs from .. from + len - 1 at b. */
static void load_rack(rack_fleet *f, uint32_t r, uint32_t from, uint32_t len) {
  for (uint32_t k = 0; k < f->count[r]; k++)
    rack_set_load(f, f->first[r] + k,
                  k >= from && k < from + len ? (gpu_load){0.3, 0.2, 0.5}
                                              : (gpu_load){0.8, 0.6, 1});
}

/* rack_fleet_rack_phi_sum's kept sum (a clock added n times from 0) is
 * the GPUs' sum to the bit, asked in an order that tempts it wrongly:
 * the same clock and count added after another clock (rack 1's last 64
 * after rack 2's first 64), the same clock over fewer GPUs (group b's 36
 * after group a's 72), and the same rack twice. */
static void rack_clock_sums_are_the_gpus(void **state) {
  (void)state;
  rack_fleet *f =
      rack_fixture_two("GB200", 36, true); /* one type, 72 and 36 a rack */
  for (uint32_t i = 0; i < f->n; i++)
    f->cap_w[i] = 700;
  rack_fleet_caps_written(f);
  load_rack(f, 0, 0, 0);
  load_rack(f, 1, 0, 8);  /* 8 at b, then 64 at a */
  load_rack(f, 2, 64, 8); /* 64 at a, then 8 at b */
  for (uint32_t r = 3; r < f->nracks; r++)
    load_rack(f, r, 0, 0);
  rack_fleet_update(f, NULL);
  assert_true(rack_fleet_runs_fresh(f));
  const uint32_t order[] = {0, 0, 2, 1, 3, 0, 4, 4, 1};
  for (size_t k = 0; k < sizeof order / sizeof *order; k++) {
    double got = rack_fleet_rack_phi_sum(f, order[k]);
    double want = rack_fixture_phi_over_gpus(f, order[k]);
    assert_memory_equal(&got, &want, sizeof got);
  }
  double sum = rack_fleet_rack_phi_sum(f, 0); /* kept: the next takes it */
  assert_int_equal(f->phi_sum->n, 72);
  assert_memory_equal(&f->phi_sum->sum, &sum, sizeof sum);
  f->phi_sum->sum = -1; /* marked: the same rack again takes it */
  assert_true(rack_fleet_rack_phi_sum(f, 0) == -1);
  rack_fleet_destroy(f);
}

/* The runs' powers a row gives rack 0, cycled over its runs. */
typedef struct max_case {
  const char *name;
  double p[3];
} max_case;

static const max_case max_cases[] = {
    {"a largest power", {3, 7.5, 7}},
    {"-0 against the start 0", {-0.0, -0.0, -0.0}},
    {"a NaN first", {NAN, 5, 2}},
    {"a NaN last", {5, 2, NAN}},
    {"negative powers", {-1, -2, -3}},
};

/* libm's fmax called as the fleet's code had it compiled (GCC passes
 * fmax(p, x) as fmax(x, p), fmax being symmetric but for the sign of a
 * zero): through a pointer, so the call is this one. */
static double (*volatile lib_fmax)(double, double) = fmax;

/* rack_fleet_rack_max_power_w over the runs is that fold from 0 to the
 * bit (its own max_of, not libm's call), signed zeros and NaNs too. */
static void rack_max_is_fmax(void **state) {
  const max_case *c = *state;
  rack_fleet *f = rack_fixture_two("GB200", 72, true);
  rack_fleet_update(f, NULL);
  assert_true(f->power_unfilled);
  double want = 0;
  for (uint32_t q = f->rack_run[0]; q < f->rack_run[1]; q++) {
    f->run_power_w[q] = c->p[q % 3];
    want = lib_fmax(f->run_power_w[q], want);
  }
  double got = rack_fleet_rack_max_power_w(f, 0);
  assert_memory_equal(&got, &want, sizeof got);
  rack_fleet_destroy(f);
}

/* What GPU 1 changes from GPU 0 in rack_gpu_phi_near's inputs. */
typedef struct near_case {
  const char *name;
  double cap, sm, mem, busy; /* added to GPU 0's */
  bool ulp;                  /* the cap one double up instead */
  bool other_rack;           /* GPU 1 in a rack with a thermal cap */
} near_case;

static const near_case near_cases[] = {
    {"alike: the last clock", 0, 0, 0, 0, false, false},
    {"a cap 200 W lower", -200, 0, 0, 0, false, false},
    {"a cap one double up", 0, 0, 0, 0, true, false},
    {"sm activity", 0, -0.25, 0, 0, false, false},
    {"memory traffic", 0, 0, 0.125, 0, false, false},
    {"busy share", 0, 0, 0, -0.5, false, false},
    {"a rack's thermal cap below the cap", 0, 0, 0, 0, false, true},
};

/* rack_gpu_phi_near is rack_gpu_phi to the bit, GPU after GPU, and takes
 * the last clock only for a GPU like the last to the bit. */
static void near_clock_is_the_clock(void **state) {
  const near_case *c = *state;
  rack_fleet *f = make(&cases[0]);
  uint32_t j = c->other_rack ? f->first[2] + 5 : 1;
  f->thermal_cap_w[2] = 400;
  gpu_load l = {0.9, 0.5, 1};
  rack_set_load(f, 0, l);
  rack_set_load(f, j,
                (gpu_load){l.sm + c->sm, l.mem + c->mem, l.busy + c->busy});
  f->cap_w[0] = 900;
  f->cap_w[j] = c->ulp ? nextafter(900, 1e9) : 900 + c->cap;
  rack_phi_last last = {.type = RACK_PHI_NONE};
  for (int pass = 0; pass < 2; pass++) { /* a hit, then the same again */
    double want0 = rack_gpu_phi(f, 0), got0 = rack_gpu_phi_near(f, 0, &last);
    assert_memory_equal(&got0, &want0, sizeof got0);
    double want = rack_gpu_phi(f, j), got = rack_gpu_phi_near(f, j, &last);
    assert_memory_equal(&got, &want, sizeof got);
    double cap = rack_gpu_cap_w(f, j); /* the memo holds GPU j's inputs */
    assert_memory_equal(&last.cap, &cap, sizeof cap);
    assert_memory_equal(&last.sm, &f->activity[j], sizeof cap);
    assert_memory_equal(&last.mem, &f->mem[j], sizeof cap);
    assert_memory_equal(&last.busy, &f->busy[j], sizeof cap);
  }
  rack_fleet_destroy(f);
}

/* A run only merges GPUs alike when it is made: GPUs of one key whose
 * loads differ then are runs of their own, and stay exact. */
static void unlike_gpus_are_not_merged(void **state) {
  (void)state;
  runs_case c = cases[0];
  rack_fleet *ref = make(&c), *f = make(&c);
  assert_int_equal(rack_fleet_keep_units(f), SIM_OK);
  for (uint32_t i = 0; i < f->n; i++) {
    rack_set_unit_key(f, i, 1 + i / 16);
    rack_set_load(f, i, gpu_load_level((i % 3) / 3.0));
  }
  rack_fixture_update_both(ref, f);
  assert_int_equal(f->nruns, f->n); /* every GPU unlike its neighbour */
  compare(ref, f);
  rack_fleet_destroy(ref);
  rack_fleet_destroy(f);
}

/* What the fifth GPU of every slot of 8 changes from its slot-mates: one
 * input of its power, one double up. */
typedef struct split_case {
  const char *name;
  int field; /* 0 the cap, 1 sm, 2 mem, 3 busy */
} split_case;

static const split_case split_cases[] = {
    {"one cap a double up", 0},
    {"one sm a double up", 1},
    {"one mem a double up", 2},
    {"one busy a double up", 3},
};

/* A GPU unlike its slot-mates in any one input alone, by one double, is
 * a run of its own (each slot of 8 three runs), and exact: a run made
 * over it would give it its neighbours' power. */
static void one_input_unlike_splits_the_run(void **state) {
  const split_case *c = *state;
  rack_fleet *ref = make(&cases[0]), *f = make(&cases[0]);
  assert_int_equal(rack_fleet_keep_units(f), SIM_OK);
  for (uint32_t i = 0; i < f->n; i++) {
    double in[4] = {800, 0.7, 0.4, 0.9};
    if (i % 8 == 5)
      in[c->field] = nextafter(in[c->field], INFINITY);
    rack_set_unit_key(f, i, 1 + i / 8);
    rack_set_load(f, i, (gpu_load){in[1], in[2], in[3]});
    f->cap_w[i] = in[0];
  }
  rack_fleet_caps_written(f);
  rack_fixture_update_both(ref, f);
  assert_int_equal(f->nruns, f->n / 8 * 3); /* 0-4, 5, 6-7 */
  compare(ref, f);
  rack_fleet_destroy(ref);
  rack_fleet_destroy(f);
}

/* A writer that writes one GPU of a run behind the runs' back (its cap,
 * then its load, not its run-mates') is found: the GPU itself, the one
 * rack_fleet_update's debug-build assertion names. Alike again once the
 * run-mates get the same. */
static void a_gpu_written_alone_is_found(void **state) {
  (void)state;
  rack_fleet *f = make(&cases[0]);
  assert_int_equal(rack_fleet_keep_units(f), SIM_OK);
  for (uint32_t i = 0; i < f->n; i++)
    rack_set_unit_key(f, i, 1 + i / 8);
  rack_fleet_update(f, NULL);
  assert_int_equal(rack_fleet_first_unlike(f), RACK_NO_GPU);
  uint32_t q = f->gpu_run[21], first = f->run_first[q];
  assert_true(first < 21 && 21 < first + f->run_len[q]);
  f->cap_w[21] = f->cap_w[first] - 1;
  assert_int_equal(rack_fleet_first_unlike(f), 21);
  assert_false(rack_fleet_runs_alike(f));
  f->cap_w[21] = f->cap_w[first];
  rack_set_load(f, 21, gpu_load_level(0.5));
  assert_int_equal(rack_fleet_first_unlike(f), 21);
  for (uint32_t i = first; i < first + f->run_len[q]; i++)
    rack_set_load(f, i, gpu_load_level(0.5));
  rack_fleet_update(f, NULL);
  assert_true(rack_fleet_runs_alike(f));
  rack_fleet_destroy(f);
}

/* Without units a fleet has no runs; a key changed marks them stale. */
static void keys_mark_the_runs_stale(void **state) {
  (void)state;
  rack_fleet *f = make(&cases[0]);
  assert_false(rack_fleet_runs_fresh(f));
  rack_set_unit_key(f, 0, 3); /* no units: nothing */
  assert_null(f->unit_key);
  assert_int_equal(rack_fleet_keep_units(f), SIM_OK);
  assert_false(rack_fleet_runs_fresh(f));
  rack_fleet_update(f, NULL);
  assert_true(rack_fleet_runs_fresh(f));
  assert_int_equal(f->nruns, f->nracks); /* all free, all alike: one a rack */
  rack_set_unit_key(f, 5, 0);            /* the same key: still fresh */
  assert_true(rack_fleet_runs_fresh(f));
  rack_set_unit_key(f, 5, 2);
  assert_false(rack_fleet_runs_fresh(f));
  rack_fleet_destroy(f);
}

/* The per-run arrays at the runs' count, not the GPUs': room for one
 * run a server while every GPU is free, more as layouts split the racks,
 * each layout's update the per-GPU one's. */
static void run_arrays_at_the_run_count(void **state) {
  (void)state;
  rack_fleet *f = rack_fixture_make(true), *ref = rack_fixture_make(true);
  assert_int_equal(rack_fleet_keep_units(f), SIM_OK);
  rack_fleet_update(f, NULL);
  assert_int_equal(f->nruns, f->nracks * 4); /* DGX servers of 8 */
  assert_true(f->run_room >= f->nruns && f->run_room < f->n);
  uint32_t *key = calloc(f->n, sizeof *key);
  unsigned seed = 99;
  for (uint32_t max = 1; max <= 12; max += 11) {
    rack_fixture_new_layout(f, key, max, &seed);
    write_state(f, key, &seed);
    rack_fixture_update_both(ref, f);
    assert_true(f->run_room >= f->nruns);
    compare(ref, f);
  }
  free(key);
  rack_fleet_destroy(ref);
  rack_fleet_destroy(f);
}

/* Out of memory for any of the per-run arrays when the runs are made:
 * units off, the update the per-GPU one to the bit, nothing leaked. */
static void no_room_for_runs_turns_units_off(void **state) {
  (void)state;
  rack_group_spec g = rack_fixture_five(RACK_FIXTURE_DGX);
  rack_fleet *ref = rack_fixture_fleet(&g, 1);
  for (long k = 1; k <= 10; k++) {
    test_alloc t;
    sim_error err;
    test_alloc_init(&t, 0);
    rack_fleet *f = rack_fleet_create(&g, 1, &t.hook, &err);
    assert_non_null(f);
    assert_int_equal(rack_fleet_keep_units(f), SIM_OK);
    for (uint32_t i = 0; i < f->n; i++) {
      rack_set_unit_key(f, i, 1 + i / 5);
      rack_set_load(f, i, gpu_load_level(0.1 * (i % 7)));
    }
    t.fail_at = t.calls + k; /* the k-th array's growth */
    rack_fixture_update_both(ref, f);
    assert_null(f->unit_key);
    assert_int_equal(f->nruns, 0);
    assert_memory_equal(ref->power_w, f->power_w, f->n * sizeof(double));
    rack_fleet_destroy(f);
    assert_int_equal(t.live, 0);
  }
  rack_fleet_destroy(ref);
}

/* A rack's caps added run by run, with the GPUs' caps behind the runs',
 * are the GPU-by-GPU sum to the bit, from 0 and from a sum: runs of 1 to
 * 11 GPUs (every remainder of the sum's four adds a turn), each at its
 * own cap. */
static void rack_cap_sums_are_the_gpus(void **state) {
  (void)state;
  rack_fleet *f = rack_fixture_make(false);
  assert_int_equal(rack_fleet_keep_units(f), SIM_OK);
  for (uint32_t r = 0, key = 1; r < f->nracks; r++, key++)
    for (uint32_t k = 0, len = 1, left = 1; k < f->count[r]; k++, left--) {
      if (left == 0) {
        left = ++len;
        key++;
      }
      rack_set_unit_key(f, f->first[r] + k, key);
    }
  rack_fleet_update(f, NULL);
  for (uint32_t q = 0; q < f->nruns; q++)
    rack_set_run_cap(f, q, 300 + q / 3.0);
  assert_true(f->caps_unfilled);
  const double from[] = {0, 1234.5678};
  for (uint32_t r = 0; r < f->nracks; r++)
    for (int s = 0; s < 2; s++) {
      double want = from[s];
      for (uint32_t i = f->first[r]; i < f->first[r] + f->count[r]; i++)
        want += f->run_cap_w[f->gpu_run[i]];
      double got = s == 0 ? rack_fleet_rack_cap_sum(f, r)
                          : rack_fleet_rack_caps_added(f, r, from[s]);
      assert_memory_equal(&got, &want, sizeof got);
    }
  rack_fleet_destroy(f);
}

/* How a row gives run k of rack r its cap. */
typedef struct kept_cap_case {
  const char *name;
  int kind;
} kept_cap_case;

static const kept_cap_case kept_cap_cases[] = {
    {"one cap every run", 0},   {"one cap a rack, two racks' caps", 1},
    {"two caps run by run", 2}, {"caps in stretches of three runs", 3},
    {"0 and -0 run by run", 4}, {"one cap but odd racks' last run", 5},
};

static double kept_cap_of(int kind, uint32_t r, uint32_t k, uint32_t nk) {
  switch (kind) {
  case 1:
    return r % 2 ? 640.25 : 700;
  case 2:
    return k % 2 ? 640.25 : 700;
  case 3:
    return 500 + 7.125 * (double)(k / 3);
  case 4:
    return k % 2 ? -0.0 : 0.0;
  case 5:
    return k + 1 == nk && r % 2 ? 333.5 : 700;
  default:
    return 700;
  }
}

/* A rack's caps added with runs at one cap added together and a cap's
 * sum from +0 kept (rack_runs.c's add_kept) are the GPU-by-GPU sum to
 * the bit: every rack twice over (the second pass meets the kept sums),
 * from +0, -0 (no kept sum: its bits are not 0's) and a sum, with runs of
 * 1 to 11 GPUs; and a rack at one cap takes the kept sum. */
static void rack_caps_kept_sums_are_the_gpus(void **state) {
  const kept_cap_case *c = *state;
  rack_fleet *f = rack_fixture_make(false);
  assert_int_equal(rack_fleet_keep_units(f), SIM_OK);
  for (uint32_t i = 0; i < f->n; i++) /* runs of 1, 2, 3, ... GPUs */
    rack_set_unit_key(f, i,
                      1 + f->rack[i] * 100 +
                          (uint32_t)sqrt(2.0 * (i - f->first[f->rack[i]])));
  rack_fleet_update(f, NULL);
  for (uint32_t q = 0; q < f->nruns; q++) {
    uint32_t r = f->run_rack[q], q0 = f->rack_run[r];
    rack_set_run_cap(f, q,
                     kept_cap_of(c->kind, r, q - q0, f->rack_run[r + 1] - q0));
  }
  const double from[] = {0, -0.0, 1234.5678};
  for (uint32_t k = 0; k < 2 * f->nracks * 3; k++) {
    uint32_t r = (k / 3) % f->nracks;
    double want = from[k % 3];
    for (uint32_t i = f->first[r]; i < f->first[r] + f->count[r]; i++)
      want += f->run_cap_w[f->gpu_run[i]];
    double got = rack_fleet_rack_caps_added(f, r, from[k % 3]);
    assert_memory_equal(&got, &want, sizeof got);
  }
  if (c->kind == 0) { /* kept: the same rack again takes it */
    f->cap_sum->sum = -1;
    assert_true(rack_fleet_rack_cap_sum(f, f->nracks - 1) == -1);
  }
  rack_fleet_destroy(f);
}

/* The split's write of a cap a group (rack_set_group_caps) is
 * rack_set_rack_cap rack by rack: without units, with the runs fresh and
 * with them stale, the same runs' and GPUs' caps and the same flag. */
typedef struct group_caps_case {
  const char *name;
  bool units, stale;
} group_caps_case;

static const group_caps_case group_caps_cases[] = {
    {"group caps, no units", false, false},
    {"group caps, runs fresh", true, false},
    {"group caps, runs stale", true, true}};

static rack_fleet *group_caps_fleet(const group_caps_case *c) {
  rack_fleet *f = rack_fixture_two("H100-SXM", 32, c->units);
  rack_fleet_update(f, NULL); /* makes the runs */
  if (c->stale)
    rack_set_unit_key(f, 3, 2);
  return f;
}

static void group_caps_are_rack_by_rack(void **state) {
  const group_caps_case *c = *state;
  rack_fleet *got = group_caps_fleet(c), *want = group_caps_fleet(c);
  const double caps[2] = {812.5, 433.25};
  rack_set_group_caps(got, caps);
  for (uint32_t r = 0; r < want->nracks; r++)
    rack_set_rack_cap(want, r, caps[want->group[r]]);
  assert_int_equal(got->caps_unfilled, want->caps_unfilled);
  assert_int_equal(got->caps_unfilled, c->units && !c->stale);
  if (rack_fleet_runs_fresh(got))
    assert_memory_equal(got->run_cap_w, want->run_cap_w,
                        got->nruns * sizeof *got->run_cap_w);
  rack_fleet_gpu_caps(got);
  rack_fleet_gpu_caps(want);
  for (uint32_t i = 0; i < got->n; i++)
    assert_true(got->cap_w[i] == caps[got->group[got->rack[i]]]);
  assert_memory_equal(got->cap_w, want->cap_w, got->n * sizeof *got->cap_w);
  rack_fleet_destroy(got);
  rack_fleet_destroy(want);
}

int main(void) {
  struct CMUnitTest tests[64];
  size_t n = 0;
  TEST_ROWS(tests, n, runs_are_the_per_gpu_update, cases);
  TEST_ROWS(tests, n, loads_by_runs_are_the_per_gpu_loads, cases);
  TEST_ROWS(tests, n, near_clock_is_the_clock, near_cases);
  TEST_ROWS(tests, n, rack_max_is_fmax, max_cases);
  TEST_ADD(tests, n, rack_clock_sums_are_the_gpus);
  TEST_ADD(tests, n, unlike_gpus_are_not_merged);
  TEST_ROWS(tests, n, one_input_unlike_splits_the_run, split_cases);
  TEST_ADD(tests, n, keys_mark_the_runs_stale);
  TEST_ADD(tests, n, a_gpu_written_alone_is_found);
  TEST_ADD(tests, n, run_arrays_at_the_run_count);
  TEST_ADD(tests, n, rack_cap_sums_are_the_gpus);
  TEST_ROWS(tests, n, rack_caps_kept_sums_are_the_gpus, kept_cap_cases);
  TEST_ADD(tests, n, no_room_for_runs_turns_units_off);
  TEST_ROWS(tests, n, group_caps_are_rack_by_rack, group_caps_cases);
  return _cmocka_run_group_tests("rack_runs", tests, n,
                                 test_catalogs_load_hardware,
                                 test_catalogs_release);
}
