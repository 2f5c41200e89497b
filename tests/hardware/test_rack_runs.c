/* test_rack_runs.c - the fleet's units (rack_runs.c) against the per-GPU
 * update they stand for: two fleets alike, one without units (the
 * reference, rack.c update_rack), one with; the same loads and caps
 * written the way the factory writes them (one to every GPU of a slot in
 * a rack, of a rack's free GPUs, of a rack). Each GPU's power must be the
 * same bits; the rack sums, which add k p for a run where the reference
 * adds p k times, within a relative 1e-13. */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rack_fixture.h"

/* What a row changes: the racks' kind and the faults and thermal caps. */
typedef struct runs_case {
  const char *name;
  bool system;        /* DGX-H100 servers of 8 GPUs, else plain NVL72 */
  bool thermal, dark, emergency;
  uint32_t max_slot;  /* GPUs a slot holds at most */
} runs_case;

static const runs_case cases[] = {
    {"plain racks, replicas of up to 8", false, false, false, false, 8},
    {"plain racks, stages of up to 72", false, false, false, false, 72},
    {"servers of 8, slots of up to 12", true, false, false, false, 12},
    {"thermal caps below some GPUs", false, true, false, false, 8},
    {"a dark rack and an emergency rack", true, false, true, true, 6},
    {"servers, thermal, faults", true, true, true, true, 20},
};

static rack_fleet *make(const runs_case *c) {
  const sys_spec *s = sys_catalog_find(&rack_fixture_systems, "DGX-H100");
  rack_group_spec g = {"nvl", gpu_catalog_find(&rack_fixture_gpus, "GB200"),
                       5,     72,
                       132000, 16800,
                       33600, rack_fixture_titanium,
                       4,     NAN,
                       NULL,  0,
                       false, 0};
  if (c->system)
    g = (rack_group_spec){"dgx", gpu_catalog_find(&rack_fixture_gpus, "H100-SXM"), 5,
                          32, 40800, 0, 0, NULL, 0, NAN, s, s->host_load,
                          false, 0};
  return rack_fixture_fleet(&g, 1);
}

static double uniform(unsigned *seed) {
  return (double)rand_r(seed) / RAND_MAX;
}

/* Random slots: stretches of adjacent GPUs (in a rack or across racks)
 * keyed 1, 2, ...; some GPUs free (key 0). */
static void lay_out(rack_fleet *f, uint32_t *key, uint32_t max, unsigned *seed) {
  uint32_t next = 1;
  for (uint32_t i = 0; i < f->n;) {
    uint32_t len = 1 + (uint32_t)(uniform(seed) * (max - 1) + 0.5);
    uint32_t k = uniform(seed) < 0.2 ? 0 : next++;
    for (uint32_t j = i; j < i + len && j < f->n; j++)
      key[j] = k;
    i += len;
  }
}

/* A new layout given to f's keys, as the workloads' slots take them. */
static void new_layout(rack_fleet *f, uint32_t *key, uint32_t max,
                       unsigned *seed) {
  lay_out(f, key, max, seed);
  for (uint32_t i = 0; i < f->n; i++)
    rack_set_unit_key(f, i, key[i]);
}

/* Loads and caps as the factory writes them: each rack a level for its
 * GPUs, each slot a load, each slot's GPUs in a rack (a unit) a cap, the
 * rack's free GPUs another. */
static void write_state(rack_fleet *f, const uint32_t *key, unsigned *seed) {
  gpu_load l = {0, 0, 0};
  double cap = 0;
  for (uint32_t r = 0; r < f->nracks; r++) {
    gpu_load rack_l = gpu_load_level(uniform(seed));
    double free_cap = 200 + 800 * uniform(seed);
    uint32_t end = f->first[r] + f->count[r];
    for (uint32_t i = f->first[r]; i < end; i++) {
      bool head = i == f->first[r] || key[i] != key[i - 1];
      if (head && key[i] != 0) {
        l = (gpu_load){uniform(seed), uniform(seed), uniform(seed)};
        cap = 200 + 800 * uniform(seed);
      }
      rack_set_load(f, i, key[i] != 0 ? l : rack_l);
      f->cap_w[i] = key[i] != 0 ? cap : free_cap;
    }
  }
  rack_fleet_caps_written(f); /* written per GPU: the runs' from them */
}

/* The caps, thermal caps and faults of from to to; not the loads. */
static void copy_caps(rack_fleet *to, rack_fleet *from) {
  rack_fleet_gpu_caps(from); /* an emergency wrote from's runs only */
  memcpy(to->cap_w, from->cap_w, from->n * sizeof(double));
  rack_fleet_caps_written(to);
  memcpy(to->thermal_cap_w, from->thermal_cap_w,
         from->nracks * sizeof(double));
  memcpy(to->dark, from->dark, from->nracks * sizeof(bool));
  memcpy(to->emergency, from->emergency, from->nracks * sizeof(bool));
}

static void copy_state(rack_fleet *to, rack_fleet *from) {
  size_t n = from->n * sizeof(double);
  memcpy(to->activity, from->activity, n);
  memcpy(to->mem, from->mem, n);
  memcpy(to->busy, from->busy, n);
  copy_caps(to, from);
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

/* Rack r's clocks summed GPU by GPU as the samples did (a GPU equal to
 * the one before taking its clock), on a fleet whose GPUs are filled. */
static double phi_over_gpus(const rack_fleet *f, uint32_t r) {
  double sum = 0, phi = 0, last_cap = NAN;
  gpu_load last = {NAN, NAN, NAN};
  for (uint32_t i = f->first[r]; i < f->first[r] + f->count[r]; i++) {
    if (f->cap_w[i] != last_cap || !rack_load_is(f, i, last)) {
      phi = rack_gpu_phi(f, i);
      last_cap = f->cap_w[i];
      last = rack_gpu_load(f, i);
    }
    sum += phi;
  }
  return sum;
}

static void compare(const rack_fleet *ref, rack_fleet *f) {
  for (uint32_t r = 0; r < f->nracks; r++) { /* run by run, loads behind */
    double runs = rack_fleet_rack_phi_sum(f, r), gpus = phi_over_gpus(ref, r);
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
    f->thermal_cap_w[r] = c->thermal ? 300 + 600 * uniform(seed) : INFINITY;
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
    new_layout(f, key, c->max_slot, &seed);
    for (int round = 0; round < 10; round++) {
      write_state(f, key, &seed);
      set_racks(f, c, &seed);
      copy_state(ref, f);
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
    new_layout(f, key, c->max_slot, &seed);
    assert_false(f->loads_unfilled); /* filled before the first key moved */
    assert_loads(f, ref);
    write_state(f, key, &seed); /* the runs are made from these */
    copy_state(ref, f);
    rack_fleet_update(ref, NULL);
    rack_fleet_update(f, NULL);
    for (int round = 0; round < 6; round++) {
      write_state(ref, key, &seed);
      set_racks(ref, c, &seed);
      copy_caps(f, ref);
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

/* Runs alike, as the fluid mode has them: a rack's slots side by side at
 * one load and cap, the update taking a run like the one before from
 * its memo. A row's odd slots differ from the rest in one input only. */
typedef struct alike_case {
  const char *name;
  int field;    /* what the odd slots change: 0 nothing, 1 the cap, 2 sm,
                   3 mem, 4 busy */
  bool zero;    /* the field 0 in the rack and -0 in the odd slots (else
                   one double up) */
  bool system;  /* DGX-H100 servers of 8, else plain racks */
  bool thermal; /* a thermal cap between the rack's caps */
} alike_case;

static const alike_case alike_cases[] = {
    {"all alike, plain racks", 0, false, false, false},
    {"all alike, servers of 8", 0, false, true, false},
    {"a cap one double up", 1, false, true, false},
    {"sm one double up", 2, false, true, false},
    {"mem one double up", 3, false, false, false},
    {"busy one double up", 4, false, true, false},
    {"sm 0 and -0", 2, true, true, false},
    {"mem 0 and -0", 3, true, true, false},
    {"busy 0 and -0", 4, true, false, false},
    {"a thermal cap holding some", 1, false, true, true},
};

/* One of a load's and a cap's doubles: the field's. */
static double *field_of(gpu_load *l, double *cap, int field) {
  double *at[] = {cap, cap, &l->sm, &l->mem, &l->busy};
  return at[field];
}

/* Each rack one load and cap (the row's field 0 in it when zero); the odd
 * slots (about one in three) that field changed. */
static void write_alike(rack_fleet *f, const uint32_t *key,
                        const alike_case *c, unsigned *seed) {
  for (uint32_t r = 0; r < f->nracks; r++) {
    gpu_load base = {uniform(seed), uniform(seed), uniform(seed)};
    double base_cap = 300 + 600 * uniform(seed), odd_cap = base_cap;
    if (c->zero)
      *field_of(&base, &base_cap, c->field) = 0;
    gpu_load odd = base;
    double *x = field_of(&odd, &odd_cap, c->field);
    *x = c->field == 0 ? *x : c->zero ? -0.0 : nextafter(*x, INFINITY);
    bool is_odd = false;
    for (uint32_t i = f->first[r]; i < f->first[r] + f->count[r]; i++) {
      if (i == f->first[r] || key[i] != key[i - 1])
        is_odd = uniform(seed) < 0.35;
      rack_set_load(f, i, is_odd ? odd : base);
      f->cap_w[i] = is_odd ? odd_cap : base_cap;
    }
    f->thermal_cap_w[r] = c->thermal ? base_cap - 0.5 : INFINITY;
  }
  rack_fleet_caps_written(f);
}

/* What rack r's sums must be, to the bit: the two-pass run-by-run update
 * (main before the one pass). Run q's power is its first GPU's under the
 * per-GPU update (ref); the rack adds k p and k min(1, share) run by
 * run, each server k p and k min(1, load share) over its runs, then its
 * supplies (sys_server_power); a plain rack its conversion curve. */
typedef struct rack_want {
  double gpu, mean, rack, loss, fan;
  uint32_t held;
} rack_want;

/* Run q's terms under the per-GPU update (ref): its power, its activity
 * share and load share, each at most 1, and whether the thermal cap
 * holds it. */
typedef struct run_terms {
  double p, share, load;
  bool held;
} run_terms;

static run_terms terms_of(const rack_fleet *f, const rack_fleet *ref,
                          uint32_t q, double tcap) {
  uint32_t i = f->run_first[q];
  uint16_t t = f->type[i];
  double m = f->t_mem[t] * f->mem[i];
  double full = f->t_idle[t] + m + (f->t_busy[t] * f->busy[i] +
                                    f->t_sm[t] * f->activity[i]);
  double share = (full - f->t_idle[t]) * (1 / f->t_span[t]);
  double load = (f->t_busy[t] * f->busy[i] + f->t_mem[t] * f->mem[i] +
                 f->t_sm[t] * f->activity[i]) / f->t_span[t];
  return (run_terms){ref->power_w[i], share < 1 ? share : 1,
                     load < 1 ? load : 1, tcap < f->cap_w[i] && full > tcap};
}

static rack_want want_of(const rack_fleet *f, const rack_fleet *ref,
                         uint32_t r) {
  const rack_group_spec *g = &f->groups[f->group[r]];
  uint32_t per = g->system != NULL ? (uint32_t)g->system->gpus : f->count[r];
  double asum = 0;
  rack_want w = {0, 0, 0, 0, 0, 0};
  for (uint32_t s = f->first[r]; s < f->first[r] + f->count[r]; s += per) {
    double gpu = 0, act = 0;
    for (uint32_t q = f->gpu_run[s]; q <= f->gpu_run[s + per - 1]; q++) {
      double k = f->run_len[q];
      run_terms t = terms_of(f, ref, q, f->thermal_cap_w[r]);
      w.held += t.held ? f->run_len[q] : 0;
      w.gpu += k * t.p;
      asum += k * t.share;
      gpu += k * t.p;
      act += k * t.load;
    }
    if (g->system == NULL)
      continue;
    act /= per;
    sys_power sp = sys_server_power(g->system, g->gpu, gpu, act,
                                    g->host_load * act);
    w.rack += sp.wall_w;
    w.loss += sp.psu_loss_w;
    w.fan += sp.fan_w;
  }
  w.mean = asum / f->count[r];
  if (g->system == NULL) {
    double dc = w.gpu + f->other_idle_w[r] +
                (f->other_max_w[r] - f->other_idle_w[r]) * w.mean;
    w.loss = dc / rack_efficiency(g, dc / f->limit_w[r]) - dc;
    w.rack = dc + w.loss;
  }
  return w;
}

/* Rack r's sums are w's, to the bit. */
static void assert_rack_is(const rack_fleet *f, uint32_t r, rack_want w) {
  assert_memory_equal(&f->gpu_power_w[r], &w.gpu, sizeof w.gpu);
  assert_memory_equal(&f->activity_mean[r], &w.mean, sizeof w.mean);
  assert_memory_equal(&f->rack_power_w[r], &w.rack, sizeof w.rack);
  assert_memory_equal(&f->loss_w[r], &w.loss, sizeof w.loss);
  assert_memory_equal(&f->fan_w[r], &w.fan, sizeof w.fan);
  assert_int_equal(f->throttled[r], w.held);
}

/* The one pass over alike runs (the memo hit, and missed by a double
 * or a zero's sign) is the two-pass update to the bit: every run's
 * power, every rack's sums. */
static void alike_runs_are_the_run_sums(void **state) {
  const alike_case *c = *state;
  runs_case rc = {c->name, c->system, false, false, false, 8};
  rack_fleet *ref = make(&rc), *f = make(&rc);
  assert_int_equal(rack_fleet_keep_units(f), SIM_OK);
  uint32_t *key = calloc(f->n, sizeof *key);
  unsigned seed = 2024;
  for (int layout = 0; layout < 8; layout++) {
    new_layout(f, key, 1 + layout % 2 * 7, &seed);
    for (int round = 0; round < 6; round++) {
      write_alike(f, key, c, &seed);
      copy_state(ref, f);
      rack_fleet_update(ref, NULL);
      rack_fleet_update(f, NULL);
      assert_memory_equal(ref->power_w, rack_fleet_gpu_power(f),
                          f->n * sizeof(double));
      for (uint32_t r = 0; r < f->nracks; r++)
        assert_rack_is(f, r, want_of(f, ref, r));
    }
  }
  free(key);
  rack_fleet_destroy(ref);
  rack_fleet_destroy(f);
}

/* Two groups of plain racks, three each: GB200 and the second GPU (with
 * its gpus_per_rack); with units, each rack's GPUs in slots of 8. */
static rack_fleet *make_two(const char *second, uint32_t per_rack,
                            bool units) {
  rack_group_spec g[2] = {{"a", gpu_catalog_find(&rack_fixture_gpus, "GB200"),
                           3, 72, 132000, 16800, 33600,
                           rack_fixture_titanium, 4, NAN, NULL, 0, false, 0}};
  g[1] = g[0];
  g[1].name = "b";
  g[1].gpu = gpu_catalog_find(&rack_fixture_gpus, second);
  g[1].gpus_per_rack = per_rack;
  rack_fleet *f = rack_fixture_fleet(g, 2);
  if (units)
    assert_int_equal(rack_fleet_keep_units(f), SIM_OK);
  for (uint32_t i = 0; units && i < f->n; i++)
    rack_set_unit_key(f, i, 1 + i / 8);
  return f;
}

/* The run evaluated last carried from rack to rack (rack__update_runs):
 * every GPU of the fleet at one load and one cap, the racks' thermal caps
 * the same or not as the rack's before, the GPU type changing at rack 3
 * (the same thermal cap as rack 2's). Each rack's sums are the two-pass
 * update's to the bit: a rack takes the last answer only for its type
 * and its thermal cap. */
static void runs_alike_across_racks_keep_type_and_thermal(void **state) {
  (void)state;
  rack_fleet *f = make_two("H100-SXM", 72, true);
  rack_fleet *ref = make_two("H100-SXM", 72, false);
  const double tcap[6] = {INFINITY, INFINITY, 500, 500, INFINITY, 550};
  for (int round = 0; round < 2; round++) { /* made, then fresh runs */
    for (uint32_t i = 0; i < f->n; i++) {
      rack_set_load(f, i, (gpu_load){0.7, 0.4, 0.9});
      f->cap_w[i] = 600;
    }
    rack_fleet_caps_written(f);
    memcpy(f->thermal_cap_w, tcap, sizeof tcap);
    copy_state(ref, f);
    rack_fleet_update(ref, NULL);
    rack_fleet_update(f, NULL);
    for (uint32_t r = 0; r < f->nracks; r++)
      assert_rack_is(f, r, want_of(f, ref, r));
    assert_true(f->throttled[2] > 0 && f->throttled[0] == 0);
  }
  rack_fleet_destroy(ref);
  rack_fleet_destroy(f);
}

/* What rack 2 changes from racks 0, 1 and 3, all at one load and cap. */
typedef struct whole_case {
  const char *name;
  int system;  /* 0 plain racks, 1 one GB200-NVL72 server a rack, 2 four
                  DGX-H100 servers a rack (of 32 H100s) */
  int what;    /* 0 nothing, 1 its run lengths (slots of 6), 2 its limit,
                  3 its host's idle power, 4 its host's most, 5 a thermal
                  cap that holds none */
} whole_case;

static const whole_case whole_cases[] = {
    {"alike: taken whole", 0, 0},
    {"other run lengths", 0, 1},
    {"another limit", 0, 2},
    {"another host idle", 0, 3},
    {"another host most", 0, 4},
    {"a thermal cap above the cap", 0, 5},
    {"NVL72 servers alike", 1, 0},
    {"NVL72 servers, other run lengths", 1, 1},
    {"NVL72 servers, another host most", 1, 4},
    {"DGX servers alike", 2, 0},
    {"DGX servers, other run lengths", 2, 1},
    {"DGX servers, another limit", 2, 2},
};

/* The row's racks: five of plain NVL72s, of one NVL72 server, or of
 * four DGX-H100 servers. */
static rack_group_spec whole_group(int system) {
  const sys_spec *nvl = sys_catalog_find(&rack_fixture_systems, "GB200-NVL72");
  const sys_spec *dgx = sys_catalog_find(&rack_fixture_systems, "DGX-H100");
  rack_group_spec g = {"nvl", gpu_catalog_find(&rack_fixture_gpus, "GB200"),
                       5, 72, 132000, 16800, 33600, rack_fixture_titanium, 4,
                       NAN, system ? nvl : NULL, system ? nvl->host_load : 0,
                       false, 0};
  if (system == 2)
    g = (rack_group_spec){"dgx", gpu_catalog_find(&rack_fixture_gpus, "H100-SXM"),
                          5, 32, 40800, 0, 0, NULL, 0, NAN, dgx,
                          dgx->host_load, false, 0};
  return g;
}

/* Rack 2 changed as the row says, on f. */
static void change_rack(rack_fleet *f, int what, bool keys) {
  uint32_t r = 2, first = f->first[r];
  double *at[] = {NULL, NULL, f->limit_w, f->other_idle_w, f->other_max_w,
                  f->thermal_cap_w};
  if (what >= 2)
    at[what][r] = what == 5 ? 1e6 : at[what][r] * 1.25;
  for (uint32_t k = 0; keys && what == 1 && k < f->count[r]; k++)
    rack_set_unit_key(f, first + k, 1000 + k / 6);
}

/* A rack of one server whose runs all take one evaluation takes an
 * earlier rack of its pattern whole only when the two are alike in run
 * lengths, host range, limit and thermal cap: every rack's sums to the
 * bit, the rack changed among alike ones. */
static void racks_taken_whole_only_when_alike(void **state) {
  const whole_case *c = *state;
  rack_group_spec g = whole_group(c->system);
  rack_fleet *f = rack_fixture_fleet(&g, 1), *ref = rack_fixture_fleet(&g, 1);
  assert_int_equal(rack_fleet_keep_units(f), SIM_OK);
  for (uint32_t i = 0; i < f->n; i++) {
    rack_set_unit_key(f, i, 1 + (i - f->first[f->rack[i]]) / 8);
    rack_set_load(f, i, (gpu_load){0.7, 0.4, 0.9});
    f->cap_w[i] = 800;
  }
  rack_fleet_caps_written(f);
  change_rack(f, c->what, true);
  change_rack(ref, c->what, false);
  for (int round = 0; round < 2; round++) { /* runs made, then fresh */
    copy_state(ref, f);
    rack_fleet_update(ref, NULL);
    rack_fleet_update(f, NULL);
    for (uint32_t r = 0; r < f->nracks; r++)
      assert_rack_is(f, r, want_of(f, ref, r));
  }
  assert_true(c->what != 1 || f->rack_pattern[2] != f->rack_pattern[0]);
  assert_int_equal(f->rack_pattern[3], f->rack_pattern[0]);
  rack_fleet_destroy(ref);
  rack_fleet_destroy(f);
}

/* More patterns than the update keeps racks for: 18 plain racks at one
 * load and cap, racks r and r + 9 in slots of r + 1 GPUs (nine patterns
 * for eight kept racks, so two share a place). Every rack's sums to the
 * bit: a rack takes only a rack of its own pattern. */
static void more_patterns_than_kept(void **state) {
  (void)state;
  rack_group_spec g = {"nvl", gpu_catalog_find(&rack_fixture_gpus, "GB200"),
                       18, 72, 132000, 16800, 33600, rack_fixture_titanium,
                       4, NAN, NULL, 0, false, 0};
  rack_fleet *f = rack_fixture_fleet(&g, 1), *ref = rack_fixture_fleet(&g, 1);
  assert_int_equal(rack_fleet_keep_units(f), SIM_OK);
  for (uint32_t i = 0; i < f->n; i++) {
    uint32_t r = f->rack[i], k = i - f->first[r];
    rack_set_unit_key(f, i, 1 + r * 100 + k / (r % 9 + 1));
    rack_set_load(f, i, (gpu_load){0.7, 0.4, 0.9});
    f->cap_w[i] = 800;
  }
  rack_fleet_caps_written(f);
  copy_state(ref, f);
  rack_fleet_update(ref, NULL);
  rack_fleet_update(f, NULL);
  for (uint32_t r = 0; r < f->nracks; r++) {
    assert_rack_is(f, r, want_of(f, ref, r));
    assert_int_equal(f->rack_pattern[r], r % 9);
  }
  rack_fleet_destroy(ref);
  rack_fleet_destroy(f);
}

/* Rack r's GPUs at load a, but its GPUs from .. from + len - 1 at b. */
static void load_rack(rack_fleet *f, uint32_t r, uint32_t from, uint32_t len) {
  for (uint32_t k = 0; k < f->count[r]; k++)
    rack_set_load(f, f->first[r] + k, k >= from && k < from + len
                                          ? (gpu_load){0.3, 0.2, 0.5}
                                          : (gpu_load){0.8, 0.6, 1});
}

/* rack_fleet_rack_phi_sum's kept sum (a clock added n times from 0) is
 * the GPUs' sum to the bit, asked in an order that tempts it wrongly:
 * the same clock and count added after another clock (rack 1's last 64
 * after rack 2's first 64), the same clock over fewer GPUs (group b's 36
 * after group a's 72), and the same rack twice. */
static void rack_clock_sums_are_the_gpus(void **state) {
  (void)state;
  rack_fleet *f = make_two("GB200", 36, true); /* one type, 72 and 36 a rack */
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
    double want = phi_over_gpus(f, order[k]);
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
  rack_fleet *f = make_two("GB200", 72, true);
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
  rack_set_load(f, j, (gpu_load){l.sm + c->sm, l.mem + c->mem, l.busy + c->busy});
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
  copy_state(ref, f);
  rack_fleet_update(ref, NULL);
  rack_fleet_update(f, NULL);
  assert_int_equal(f->nruns, f->n); /* every GPU unlike its neighbour */
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
  rack_set_unit_key(f, 5, 0); /* the same key: still fresh */
  assert_true(rack_fleet_runs_fresh(f));
  rack_set_unit_key(f, 5, 2);
  assert_false(rack_fleet_runs_fresh(f));
  rack_fleet_destroy(f);
}

int main(void) {
  struct CMUnitTest tests[64];
  size_t n = 0;
  TEST_ROWS(tests, n, runs_are_the_per_gpu_update, cases);
  TEST_ROWS(tests, n, loads_by_runs_are_the_per_gpu_loads, cases);
  TEST_ROWS(tests, n, near_clock_is_the_clock, near_cases);
  TEST_ROWS(tests, n, alike_runs_are_the_run_sums, alike_cases);
  TEST_ROWS(tests, n, rack_max_is_fmax, max_cases);
  TEST_ROWS(tests, n, racks_taken_whole_only_when_alike, whole_cases);
  TEST_ADD(tests, n, more_patterns_than_kept);
  TEST_ADD(tests, n, runs_alike_across_racks_keep_type_and_thermal);
  TEST_ADD(tests, n, rack_clock_sums_are_the_gpus);
  TEST_ADD(tests, n, unlike_gpus_are_not_merged);
  TEST_ADD(tests, n, keys_mark_the_runs_stale);
  TEST_ADD(tests, n, a_gpu_written_alone_is_found);
  return _cmocka_run_group_tests("rack_runs", tests, n, rack_fixture_setup,
                                 rack_fixture_teardown);
}
