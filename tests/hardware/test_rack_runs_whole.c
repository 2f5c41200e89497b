/* test_rack_runs_whole.c - the racks' sums over the fleet's runs
 * (rack_runs.c) to the bit, against the two-pass run-by-run update they
 * stand for (rack_fixture_want_of): runs alike as the fluid mode has them
 * (the update's memo hit, and missed by a double or a zero's sign), the
 * run evaluated last carried from rack to rack, and racks of one server
 * taken whole from an earlier rack of their pattern only when alike, in
 * the update or one before (the racks kept from update to update), and
 * a server like the one before taking its power; and the racks' values
 * summed by group (rack_fleet_group_sums) as the adds one rack at a time
 * into each group's slot. The runs against the per-GPU update:
 * test_rack_runs.c. */
#include "lanes.h"
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rack_fixture.h"

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
static void write_alike(rack_fleet *f, const uint32_t *key, const alike_case *c,
                        unsigned *seed) {
  for (uint32_t r = 0; r < f->nracks; r++) {
    gpu_load base = {rack_fixture_uniform(seed), rack_fixture_uniform(seed),
                     rack_fixture_uniform(seed)};
    double base_cap = 300 + 600 * rack_fixture_uniform(seed),
           odd_cap = base_cap;
    if (c->zero)
      *field_of(&base, &base_cap, c->field) = 0;
    gpu_load odd = base;
    double *x = field_of(&odd, &odd_cap, c->field);
    *x = c->field == 0 ? *x : c->zero ? -0.0 : nextafter(*x, INFINITY);
    bool is_odd = false;
    for (uint32_t i = f->first[r]; i < f->first[r] + f->count[r]; i++) {
      if (i == f->first[r] || key[i] != key[i - 1])
        is_odd = rack_fixture_uniform(seed) < 0.35;
      rack_set_load(f, i, is_odd ? odd : base);
      f->cap_w[i] = is_odd ? odd_cap : base_cap;
    }
    f->thermal_cap_w[r] = c->thermal ? base_cap - 0.5 : INFINITY;
  }
  rack_fleet_caps_written(f);
}

/* The one pass over alike runs (the memo hit, and missed by a double
 * or a zero's sign) is the two-pass update to the bit: every run's
 * power, every rack's sums. */
static void alike_runs_are_the_run_sums(void **state) {
  const alike_case *c = *state;
  rack_fleet *ref = rack_fixture_make(c->system);
  rack_fleet *f = rack_fixture_make(c->system);
  assert_int_equal(rack_fleet_keep_units(f), SIM_OK);
  uint32_t *key = calloc(f->n, sizeof *key);
  unsigned seed = 2024;
  for (int layout = 0; layout < 8; layout++) {
    rack_fixture_new_layout(f, key, 1 + layout % 2 * 7, &seed);
    for (int round = 0; round < 6; round++) {
      write_alike(f, key, c, &seed);
      rack_fixture_update_both(ref, f);
      assert_memory_equal(ref->power_w, rack_fleet_gpu_power(f),
                          f->n * sizeof(double));
      rack_fixture_assert_racks_are(f, ref);
    }
  }
  free(key);
  rack_fleet_destroy(ref);
  rack_fleet_destroy(f);
}

/* The run evaluated last carried from rack to rack (rack__update_all_runs):
 * every GPU of the fleet at one load and one cap, the racks' thermal caps
 * the same or not as the rack's before, the GPU type changing at rack 3
 * (the same thermal cap as rack 2's). Each rack's sums are the two-pass
 * update's to the bit: a rack takes the last answer only for its type
 * and its thermal cap. */
static void runs_alike_across_racks_keep_type_and_thermal(void **state) {
  (void)state;
  rack_fleet *f = rack_fixture_two("H100-SXM", 72, true);
  rack_fleet *ref = rack_fixture_two("H100-SXM", 72, false);
  const double tcap[6] = {INFINITY, INFINITY, 500, 500, INFINITY, 550};
  for (int round = 0; round < 2; round++) { /* made, then fresh runs */
    for (uint32_t i = 0; i < f->n; i++) {
      rack_set_load(f, i, (gpu_load){0.7, 0.4, 0.9});
      f->cap_w[i] = 600;
    }
    rack_fleet_caps_written(f);
    memcpy(f->thermal_cap_w, tcap, sizeof tcap);
    rack_fixture_update_both(ref, f);
    rack_fixture_assert_racks_are(f, ref);
    assert_true(f->throttled[2] > 0 && f->throttled[0] == 0);
  }
  rack_fleet_destroy(ref);
  rack_fleet_destroy(f);
}

/* What rack 2 changes from racks 0, 1 and 3, all at one load and cap. */
typedef struct whole_case {
  const char *name;
  int system; /* the racks' kind (rack_fixture_five): 0 plain, 1 one
                 GB200-NVL72 server a rack, 2 four DGX-H100 servers */
  int what;   /* 0 nothing, 1 its run lengths (slots of 6), 2 its limit,
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

/* Rack 2 changed as the row says, on f. */
static void change_rack(rack_fleet *f, int what, bool keys) {
  uint32_t r = 2, first = f->first[r];
  double *at[] = {NULL,           NULL,
                  f->limit_w,     f->other_idle_w,
                  f->other_max_w, f->thermal_cap_w};
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
  rack_group_spec g = rack_fixture_five(c->system);
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
    rack_fixture_update_both(ref, f);
    rack_fixture_assert_racks_are(f, ref);
  }
  assert_true(c->what != 1 || f->rack_pattern[2] != f->rack_pattern[0]);
  assert_int_equal(f->rack_pattern[3], f->rack_pattern[0]);
  rack_fleet_destroy(ref);
  rack_fleet_destroy(f);
}

/* Five racks of one pattern (slots of 8 GPUs), rack 0 kept for it at
 * load a, then an evaluation made between it and rack 2, which is alike
 * at that evaluation: the kept rack fits rack 2 only if it was made of
 * the same inputs, whatever evaluation made them (the fit's number for
 * an evaluation, rack__carry's gen). */
typedef struct between_case {
  const char *name;
  bool unlike;  /* rack 1's last slot at load b (its pass evaluates b),
                   rack 2 at b; else rack 1 at a under a thermal cap that
                   holds (an evaluation for the cap), rack 2 at a */
} between_case;

static const between_case between_cases[] = {
    {"fit: an unlike rack's evaluation between", true},
    {"fit: a thermal cap's evaluation between", false},
};

static void kept_rack_fits_only_its_inputs(void **state) {
  const between_case *c = *state;
  rack_group_spec g = rack_fixture_five(RACK_FIXTURE_PLAIN);
  rack_fleet *f = rack_fixture_fleet(&g, 1), *ref = rack_fixture_fleet(&g, 1);
  assert_int_equal(rack_fleet_keep_units(f), SIM_OK);
  const gpu_load a = {0.7, 0.4, 0.9}, b = {0.3, 0.4, 0.9};
  for (int round = 0; round < 2; round++) { /* runs made, then fresh */
    for (uint32_t i = 0; i < f->n; i++) {
      uint32_t r = f->rack[i], k = i - f->first[r];
      bool at_b = c->unlike && (r == 2 || (r == 1 && k + 8 >= f->count[r]));
      rack_set_unit_key(f, i, 1 + r * 100 + k / 8);
      rack_set_load(f, i, at_b ? b : a);
      f->cap_w[i] = 800;
    }
    rack_fleet_caps_written(f);
    f->thermal_cap_w[1] = c->unlike ? INFINITY : 700;
    ref->thermal_cap_w[1] = f->thermal_cap_w[1];
    rack_fixture_update_both(ref, f);
    rack_fixture_assert_racks_are(f, ref);
    assert_int_equal(f->rack_pattern[2], f->rack_pattern[0]);
  }
  rack_fleet_destroy(ref);
  rack_fleet_destroy(f);
}

/* Many patterns: 18 plain racks at one load and cap, racks r and r + 9
 * in slots of r + 1 GPUs (nine patterns, each kept at its first rack).
 * Every rack's sums to the bit: a rack takes only a rack of its own
 * pattern. */
static void more_patterns_than_kept(void **state) {
  (void)state;
  rack_group_spec g = rack_fixture_five(RACK_FIXTURE_PLAIN);
  g.count = 18;
  rack_fleet *f = rack_fixture_fleet(&g, 1), *ref = rack_fixture_fleet(&g, 1);
  assert_int_equal(rack_fleet_keep_units(f), SIM_OK);
  for (uint32_t i = 0; i < f->n; i++) {
    uint32_t r = f->rack[i], k = i - f->first[r];
    rack_set_unit_key(f, i, 1 + r * 100 + k / (r % 9 + 1));
    rack_set_load(f, i, (gpu_load){0.7, 0.4, 0.9});
    f->cap_w[i] = 800;
  }
  rack_fleet_caps_written(f);
  rack_fixture_update_both(ref, f);
  for (uint32_t r = 0; r < f->nracks; r++) {
    rack_fixture_assert_rack_is(f, r, rack_fixture_want_of(f, ref, r));
    assert_int_equal(f->rack_pattern[r], r % 9);
  }
  rack_fleet_destroy(ref);
  rack_fleet_destroy(f);
}

/* One run of a rack unlike its rack's others, at each place in turn (the
 * update compares four runs a turn in two registers, then two, then a
 * last one alone, or with AVX2 eight a turn in two registers, then four,
 * then up to three one at a time: run counts of every remainder by four
 * and by eight): the rack is never taken whole from an alike rack before
 * it. */
typedef struct unlike_case {
  const char *name;
  int system; /* rack_fixture_five's kind */
  int field;  /* the odd run's changed input: 1 the cap, 2 sm, 3 mem, 4 busy */
  uint32_t slot; /* GPUs a slot (a run) */
} unlike_case;

static const unlike_case unlike_cases[] = {
    {"plain racks, 9 runs, the cap", RACK_FIXTURE_PLAIN, 1, 8},
    {"plain racks, 9 runs, sm", RACK_FIXTURE_PLAIN, 2, 8},
    {"plain racks, 9 runs, mem", RACK_FIXTURE_PLAIN, 3, 8},
    {"plain racks, 9 runs, busy", RACK_FIXTURE_PLAIN, 4, 8},
    {"plain racks, 12 runs, sm", RACK_FIXTURE_PLAIN, 2, 6},
    {"plain racks, 8 runs, the cap", RACK_FIXTURE_PLAIN, 1, 9},
    {"plain racks, 6 runs, mem", RACK_FIXTURE_PLAIN, 3, 12},
    {"plain racks, 3 runs, busy", RACK_FIXTURE_PLAIN, 4, 24},
    {"plain racks, 2 runs, sm", RACK_FIXTURE_PLAIN, 2, 36},
    {"plain racks, 1 run, the cap", RACK_FIXTURE_PLAIN, 1, 72},
    {"plain racks, 18 runs, busy", RACK_FIXTURE_PLAIN, 4, 4},
    {"plain racks, 24 runs, the cap", RACK_FIXTURE_PLAIN, 1, 3},
    {"plain racks, 36 runs, mem", RACK_FIXTURE_PLAIN, 3, 2},
    {"plain racks, 72 runs, sm", RACK_FIXTURE_PLAIN, 2, 1},
    {"DGX servers, 4 runs, sm", RACK_FIXTURE_DGX, 2, 8},
    {"DGX servers, 4 runs, busy", RACK_FIXTURE_DGX, 4, 8},
};

/* Every GPU at one load and cap but rack 2's run k, its field halved (a
 * change its power shows: one double up can round to the same watts);
 * slots of slot GPUs. */
static void write_one_unlike(rack_fleet *f, int field, uint32_t slot,
                             uint32_t k) {
  for (uint32_t i = 0; i < f->n; i++) {
    gpu_load l = {0.7, 0.4, 0.9};
    double cap = 800, *x = field_of(&l, &cap, field);
    if (f->rack[i] == 2 && (i - f->first[2]) / slot == k)
      *x *= 0.5;
    rack_set_load(f, i, l);
    f->cap_w[i] = cap;
  }
  rack_fleet_caps_written(f);
}

static void unlike_each_place(const unlike_case *c, bool narrow) {
  sim_lanes_narrow = narrow;
  rack_group_spec g = rack_fixture_five(c->system);
  rack_fleet *f = rack_fixture_fleet(&g, 1), *ref = rack_fixture_fleet(&g, 1);
  assert_int_equal(rack_fleet_keep_units(f), SIM_OK);
  for (uint32_t i = 0; i < f->n; i++)
    rack_set_unit_key(f, i, 1 + i / c->slot);
  for (uint32_t k = 0; k < f->count[2] / c->slot; k++) {
    write_one_unlike(f, c->field, c->slot, k);
    rack_fixture_update_both(ref, f);
    assert_int_equal(f->rack_run[3] - f->rack_run[2], f->count[2] / c->slot);
    assert_memory_equal(ref->power_w, rack_fleet_gpu_power(f),
                        f->n * sizeof(double));
    rack_fixture_assert_racks_are(f, ref);
  }
  rack_fleet_destroy(ref);
  rack_fleet_destroy(f);
  sim_lanes_narrow = false;
}

/* Both compares: four runs a register where the CPU has AVX2, and two a
 * register (SSE2). */
static void one_unlike_run_anywhere(void **state) {
  const unlike_case *c = *state;
  unlike_each_place(c, false);
  unlike_each_place(c, true);
}

/* What changes on every rack between two updates of a fleet whose GPUs
 * are all at one load and cap (every rack's runs alike, so each is kept
 * for its pattern), after which the second update's sums must still be
 * the two-pass update's. */
typedef struct kept_case {
  const char *name;
  int system; /* rack_fixture_five's kind */
  int what;   /* 0 nothing (the racks kept are taken), 1 a new layout
                 (the runs made again, the patterns with them), 2 the
                 limits, 3 the hosts' idle power, 4 their most, 5 a
                 thermal cap that holds some, 6 sm one double up */
} kept_case;

static const kept_case kept_cases[] = {
    {"kept: nothing changed, plain", RACK_FIXTURE_PLAIN, 0},
    {"kept: nothing changed, DGX servers", RACK_FIXTURE_DGX, 0},
    {"kept: a new layout, plain", RACK_FIXTURE_PLAIN, 1},
    {"kept: a new layout, NVL72 servers", RACK_FIXTURE_NVL_SERVER, 1},
    {"kept: a new layout, DGX servers", RACK_FIXTURE_DGX, 1},
    {"kept: other limits", RACK_FIXTURE_PLAIN, 2},
    {"kept: other host idle", RACK_FIXTURE_PLAIN, 3},
    {"kept: other host most", RACK_FIXTURE_DGX, 4},
    {"kept: a thermal cap", RACK_FIXTURE_DGX, 5},
    {"kept: sm one double up", RACK_FIXTURE_NVL_SERVER, 6},
};

/* Every GPU of f at load l and cap. */
static void write_all(rack_fleet *f, gpu_load l, double cap) {
  for (uint32_t i = 0; i < f->n; i++) {
    rack_set_load(f, i, l);
    f->cap_w[i] = cap;
  }
  rack_fleet_caps_written(f);
}

/* The row's change between two updates, on f (keys: the layout's). */
static void change_all(rack_fleet *f, uint32_t *key, const kept_case *c,
                       gpu_load *l, double cap, unsigned *seed) {
  double *at[] = {NULL, NULL, f->limit_w, f->other_idle_w, f->other_max_w};
  for (uint32_t r = 0; r < f->nracks; r++) {
    if (c->what >= 2 && c->what <= 4)
      at[c->what][r] *= 1.25;
    if (c->what == 5)
      f->thermal_cap_w[r] = cap - 0.5;
  }
  if (c->what == 1)
    rack_fixture_new_layout(f, key, 1 + (uint32_t)(*seed % 11), seed);
  if (c->what == 6)
    l->sm = nextafter(l->sm, INFINITY);
  write_all(f, *l, cap);
}

/* The racks kept from one update serve the next only while what their
 * sums were made of stands: each update's sums to the bit, over random
 * loads, caps and layouts. */
static void racks_kept_across_updates(void **state) {
  const kept_case *c = *state;
  rack_group_spec g = rack_fixture_five(c->system);
  rack_fleet *f = rack_fixture_fleet(&g, 1), *ref = rack_fixture_fleet(&g, 1);
  assert_int_equal(rack_fleet_keep_units(f), SIM_OK);
  uint32_t *key = calloc(f->n, sizeof *key);
  unsigned seed = 77;
  for (int round = 0; round < 40; round++) {
    rack_fixture_new_layout(f, key, 1 + round % 9, &seed);
    gpu_load l = {rack_fixture_uniform(&seed), rack_fixture_uniform(&seed),
                  rack_fixture_uniform(&seed)};
    double cap = 300 + 600 * rack_fixture_uniform(&seed);
    write_all(f, l, cap);
    rack_fixture_update_both(ref, f);
    rack_fixture_assert_racks_are(f, ref);
    change_all(f, key, c, &l, cap, &seed);
    rack_fixture_update_both(ref, f);
    rack_fixture_assert_racks_are(f, ref);
  }
  free(key);
  rack_fleet_destroy(ref);
  rack_fleet_destroy(f);
}

/* Racks whose runs are not all alike (so none is taken whole) but whose
 * servers ask what the server before asked, but for rack 2's change. */
typedef struct server_case {
  const char *name;
  int system;  /* RACK_FIXTURE_NVL_SERVER or RACK_FIXTURE_DGX */
  bool given;  /* other_given: the rack's host range replaces the parts */
  int what;    /* 0 nothing, 1 its host's idle power, 2 its most, 3 its
                  odd slot's sm (the servers' activity), 4 its odd slot's
                  cap (their GPUs' power), 5 a second group of five racks
                  after the first, its host range given at the first's
                  (the same inputs, another server model) */
} server_case;

static const server_case server_cases[] = {
    {"servers alike, NVL72", RACK_FIXTURE_NVL_SERVER, false, 0},
    {"servers alike, DGX, host range given", RACK_FIXTURE_DGX, true, 0},
    {"servers, another host idle", RACK_FIXTURE_NVL_SERVER, true, 1},
    {"servers, another host most", RACK_FIXTURE_DGX, true, 2},
    {"servers, another activity", RACK_FIXTURE_NVL_SERVER, false, 3},
    {"servers, another activity, host given", RACK_FIXTURE_DGX, true, 3},
    {"servers, another GPU power", RACK_FIXTURE_DGX, false, 4},
    {"servers, another group's model", RACK_FIXTURE_NVL_SERVER, false, 5},
};

/* Rack 2's host range changed as the row says (what 1 or 2). */
static void change_host(rack_fleet *f, int what) {
  double *host[] = {NULL, f->other_idle_w, f->other_max_w};
  if (what == 1 || what == 2)
    host[what][2] *= 1.25;
}

/* Every rack in slots of 8 at one load and cap, its second slot at
 * another sm (in rack 2, what the row changes); a server's memo taken
 * only by a server whose group and inputs are its: every rack's sums to
 * the bit. */
static void servers_like_the_one_before(void **state) {
  const server_case *c = *state;
  rack_group_spec g[2] = {rack_fixture_five(c->system)};
  g[0].other_given = c->given;
  g[0].other_idle_w = 1500, g[0].other_max_w = 2500; /* a server's, given */
  g[1] = g[0];
  g[1].name = "second";
  g[1].other_given = true;
  size_t ng = c->what == 5 ? 2 : 1;
  rack_fleet *f = rack_fixture_fleet(g, ng), *ref = rack_fixture_fleet(g, ng);
  assert_int_equal(rack_fleet_keep_units(f), SIM_OK);
  change_host(f, c->what);
  change_host(ref, c->what);
  for (uint32_t r = 5; r < f->nracks; r++) { /* the first group's range */
    f->other_idle_w[r] = ref->other_idle_w[r] = f->other_idle_w[0];
    f->other_max_w[r] = ref->other_max_w[r] = f->other_max_w[0];
  }
  for (uint32_t i = 0; i < f->n; i++) {
    uint32_t r = f->rack[i], slot = (i - f->first[r]) / 8;
    gpu_load l = {0.7, 0.4, 0.9};
    double cap = 800;
    if (slot == 1)
      l.sm = r == 2 && c->what == 3 ? 0.25 : 0.5;
    if (slot == 1 && r == 2 && c->what == 4)
      cap = 400;
    rack_set_unit_key(f, i, 1 + i / 8);
    rack_set_load(f, i, l);
    f->cap_w[i] = cap;
  }
  rack_fleet_caps_written(f);
  for (int round = 0; round < 2; round++) { /* runs made, then fresh */
    rack_fixture_update_both(ref, f);
    rack_fixture_assert_racks_are(f, ref);
  }
  rack_fleet_destroy(ref);
  rack_fleet_destroy(f);
}

/* A layout of the fixture's six racks over its two groups (a rack's
 * group), and whether a value is -0 (the sums start at +0). */
typedef struct sums_case {
  const char *name;
  uint32_t group[6];
  bool negative_zero;
} sums_case;

static const sums_case sums_cases[] = {
    {"group sums: groups one after another", {0, 0, 0, 1, 1, 1}, false},
    {"group sums: groups taking turns", {0, 1, 0, 1, 1, 0}, false},
    {"group sums: a group back after the other", {1, 1, 0, 0, 1, 1}, false},
    {"group sums: one group empty", {1, 1, 1, 1, 1, 1}, false},
    {"group sums: -0 values", {0, 0, 1, 1, 0, 1}, true},
};

/* The sums to the bit against sum[group[r]] += x[r] from zeros, over
 * values of wide spread (each add rounds). */
static void group_sums_rack_by_rack(void **state) {
  const sums_case *c = *state;
  rack_fleet *f = rack_fixture_two("GB200", 36, false);
  assert_int_equal(f->nracks, 6);
  assert_int_equal(f->ngroups, 2);
  memcpy(f->group, c->group, sizeof c->group);
  unsigned seed = 5;
  for (int round = 0; round < 50; round++) {
    double x[6], want[2] = {0, 0}, got[2] = {NAN, NAN};
    for (int r = 0; r < 6; r++) {
      x[r] = c->negative_zero && r % 2
                 ? -0.0
                 : ldexp(rack_fixture_uniform(&seed), (int)(seed % 60) - 30);
      want[c->group[r]] += x[r];
    }
    rack_fleet_group_sums(f, x, got);
    assert_memory_equal(got, want, sizeof want);
  }
  rack_fleet_destroy(f);
}

int main(void) {
  struct CMUnitTest tests[80];
  size_t n = 0;
  TEST_ROWS(tests, n, alike_runs_are_the_run_sums, alike_cases);
  TEST_ROWS(tests, n, racks_taken_whole_only_when_alike, whole_cases);
  TEST_ROWS(tests, n, one_unlike_run_anywhere, unlike_cases);
  TEST_ROWS(tests, n, racks_kept_across_updates, kept_cases);
  TEST_ADD(tests, n, more_patterns_than_kept);
  TEST_ROWS(tests, n, kept_rack_fits_only_its_inputs, between_cases);
  TEST_ROWS(tests, n, servers_like_the_one_before, server_cases);
  TEST_ADD(tests, n, runs_alike_across_racks_keep_type_and_thermal);
  TEST_ROWS(tests, n, group_sums_rack_by_rack, sums_cases);
  return _cmocka_run_group_tests("rack_runs_whole", tests, n,
                                 test_catalogs_load_hardware,
                                 test_catalogs_release);
}
