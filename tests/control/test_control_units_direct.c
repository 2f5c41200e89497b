/* test_control_units_direct.c - the refresh of a rack whose runs are its
 * units one to one (control_units.c's refresh_direct, which compares a
 * unit's load with the unit before's, not with the last base's key): on
 * keyed fleets of five GB200 racks, units refreshed in place after the
 * loads (and a thermal cap) moved are those built anew on the same state,
 * every field, share and mark of alike, to the bit. The racks are laid
 * out every way of a table next to every other (a GPU a slot, blocks of
 * 8, blocks growing by one, a slot and the free GPUs: direct; two slots
 * by turns: not), and the
 * loads move every way of another (none, every unit, one in a rack's
 * middle, every other pair, rack by rack, a thermal cap with the loads
 * held), the worth with them or not: long stretches of units alike in
 * load and worth (the fluid mode's, which the refresh finds eight units
 * at a time, then four, and across racks) broken at every place of an
 * eight, and at the end of the fill's first chunk of 256 units (which
 * a stretch of the fluid mode's goes on over); the stretches found four
 * words a register (AVX2) and two. And refreshed lazily (control_units.h:
 * in a window, only the units left unmarked put back), each of those
 * units, and every share and mark, the same; a group's first unit never
 * marked (two groups alike, a stretch over their boundary). Built with
 * NDEBUG the lazy refresh stores only the unmarked units' fields of a
 * stretch (refresh_alike's marked_unread: with assertions on every unit
 * is put back, so all are stored): run it so too. */
#include "lanes.h"
#include "test_util.h"

#include <math.h>
#include <stdlib.h>

#include "bits.h"
#include "control_units.h"
#include "test_catalogs.h"

#define RACK 72
#define RACKS 5
#define GPUS (RACKS * RACK)

/* A rack's slots by a GPU's place i in it (CONTROL_UNITS_FREE: free). */
typedef struct layout {
  const char *what;
  uint32_t (*slot)(uint32_t i);
} layout;

static uint32_t own_slot(uint32_t i) { return i; }
static uint32_t two_slots(uint32_t i) { return i % 2; }
static uint32_t blocks_of_8(uint32_t i) { return i / 8; }
/* Blocks of 1, 2, 3, ... GPUs: every unit's GPU count unlike the unit
 * before's, so a stretch of units alike in load and worth is a stretch
 * of units left unmarked, each put back. */
static uint32_t growing(uint32_t i) {
  uint32_t k = 0;
  while ((k + 1) * (k + 2) / 2 <= i)
    k++;
  return k;
}
static uint32_t half_free(uint32_t i) {
  return i < 36 ? 0 : CONTROL_UNITS_FREE;
}

static const layout layouts[] = {{"a GPU a slot", own_slot},
                                 {"blocks of 8", blocks_of_8},
                                 {"blocks growing by one", growing},
                                 {"a slot and the free GPUs", half_free},
                                 {"two slots by turns", two_slots}};

/* The load after the move of slot s of rack r (s its place in the rack's
 * layout, CONTROL_UNITS_FREE for the free GPUs: a slot's GPUs share their
 * load, as the runs' writers keep them); rack 1's thermal cap after it.
 * Before it every load is 0.5, the cap none. */
typedef struct move {
  const char *name;
  double (*load)(uint32_t r, uint32_t i);
  double thermal1;
  control_units_fn worth; /* after it (NULL: worth, as before it) */
  int part; /* 0: the whole load; 1, 2, 3: its SM, memory or busy alone */
} move;

static double held(uint32_t r, uint32_t s) { return 0.5 + 0 * r * s; }
static double each(uint32_t r, uint32_t s) {
  return 0.3 + 0.001 * (s % 1000 + r);
}
static double middle(uint32_t r, uint32_t s) {
  return r == 1 && s == 4 ? 0.7 : 0.5;
}
static double pairs(uint32_t r, uint32_t s) {
  return (s / 2) % 2 + 0 * r ? 0.5 : 0.25;
}
static double by_rack(uint32_t r, uint32_t s) { return 0.2 + 0.1 * r + 0 * s; }
static double at_37(uint32_t r, uint32_t s) {
  return r == 1 && s == 37 ? 0.7 : 0.5;
}
static double fives(uint32_t r, uint32_t s) {
  return 0.5 + 0.1 * ((s / 5) % 2) + 0 * r;
}
static double nines(uint32_t r, uint32_t s) {
  return 0.5 + 0.1 * ((s / 9 + r) % 3);
}
static double at_26(uint32_t r, uint32_t s) {
  return r == 1 && s == 26 ? 0.7 : 0.5;
}
static double thirteens(uint32_t r, uint32_t s) {
  return 0.5 + 0.1 * ((s / 13 + r) % 2);
}
static double twenty_threes(uint32_t r, uint32_t s) {
  return 0.5 + 0.1 * ((s / 23) % 2) + 0 * r;
}

static double at_29(uint32_t r, uint32_t s) {
  return r == 1 && s == 29 ? 0.7 : 0.5;
}
static double at_31(uint32_t r, uint32_t s) {
  return r == 1 && s == 31 ? 0.7 : 0.5;
}
/* Unit 255 and 256 (a GPU a slot in racks 0 to 3): the last of the
 * fill's first chunk and the first of its second. */
static double at_255(uint32_t r, uint32_t s) {
  return r == 3 && s == 39 ? 0.7 : 0.5;
}
static double at_256(uint32_t r, uint32_t s) {
  return r == 3 && s == 40 ? 0.7 : 0.5;
}

static void flat(void *ctx, const uint32_t *key, size_t n, power_unit *u);
static void by_11(void *ctx, const uint32_t *key, size_t n, power_unit *u);
static void at_13_66(void *ctx, const uint32_t *key, size_t n, power_unit *u);
static void by_17(void *ctx, const uint32_t *key, size_t n, power_unit *u);

static const move moves[] = {
    {"nothing moved", held, INFINITY, NULL, 0},
    {"every unit's load", each, INFINITY, NULL, 0},
    {"one slot's load in a rack's middle", middle, INFINITY, NULL, 0},
    {"every other pair", pairs, INFINITY, NULL, 0},
    {"rack by rack", by_rack, INFINITY, NULL, 0},
    {"a thermal cap, the loads held", held, 450, NULL, 0},
    /* Long stretches of units alike (the fluid mode's), found four at a
     * time and across racks: */
    {"one load apart at 37, the worth flat", at_37, INFINITY, flat, 0},
    {"the loads held, the worth apart at 13 and 66", held, INFINITY, at_13_66,
     0},
    {"loads in fives, the worth flat", fives, INFINITY, flat, 0},
    {"loads in nines, the worth in elevens", nines, INFINITY, by_11, 0},
    {"rack by rack, the worth flat", by_rack, INFINITY, flat, 0},
    {"a thermal cap, the loads held, the worth flat", held, 450, flat, 0},
    /* broken in an eight's first four (26) and last (37, above), and at
     * every place of an eight: */
    {"one load apart at 26, the worth flat", at_26, INFINITY, flat, 0},
    {"loads in thirteens, the worth in seventeens", thirteens, INFINITY, by_17,
     0},
    {"loads in twenty-threes, the worth flat", twenty_threes, INFINITY, flat,
     0},
    /* one input of the three apart, in an eight's second four: */
    {"the SM load apart at 29 alone", at_29, INFINITY, flat, 1},
    {"the memory load apart at 31 alone", at_31, INFINITY, flat, 2},
    {"the busy share apart at 29 alone", at_29, INFINITY, flat, 3},
    /* at the fill's chunk end (the held loads above: a stretch over it): */
    {"one load apart at unit 255, the worth flat", at_255, INFINITY, flat, 0},
    {"one load apart at unit 256, the worth flat", at_256, INFINITY, flat, 0},
    {"the loads held, the worth by elevens over the chunk's end", held,
     INFINITY, by_11, 0},
};

/* The worth of a slot's work (none for the free GPUs'), all four fields
 * (control_hooks' slot_units). */
static void worth(void *ctx, const uint32_t *key, size_t n, power_unit *u) {
  (void)ctx;
  for (size_t j = 0; j < n; j++)
    if (key[j] != CONTROL_UNITS_FREE) {
      u[j].cls = POWER_INFERENCE;
      u[j].priority = key[j] % 2;
      u[j].weight = 1;
      u[j].c = (key[j] % 3) / 2.0;
    }
}

/* Worth alike across a slot's place: every slot's the same, */
static void flat(void *ctx, const uint32_t *key, size_t n, power_unit *u) {
  (void)ctx;
  for (size_t j = 0; j < n; j++)
    if (key[j] != CONTROL_UNITS_FREE) {
      u[j].cls = POWER_INFERENCE;
      u[j].priority = key[j] % 2;
      u[j].weight = 1;
      u[j].c = 0.5;
    }
}

/* by stretches of eleven (a rack's keys are its slots + 100 r), */
static void by_11(void *ctx, const uint32_t *key, size_t n, power_unit *u) {
  flat(ctx, key, n, u);
  for (size_t j = 0; j < n; j++)
    if (key[j] != CONTROL_UNITS_FREE)
      u[j].c = 0.25 * ((key[j] % 100 / 11) % 2);
}

/* by stretches of seventeen, */
static void by_17(void *ctx, const uint32_t *key, size_t n, power_unit *u) {
  flat(ctx, key, n, u);
  for (size_t j = 0; j < n; j++)
    if (key[j] != CONTROL_UNITS_FREE)
      u[j].c = 0.25 * ((key[j] % 100 / 17) % 2);
}

/* or apart at slots 13 and 66 of each rack only (the weight at 66). */
static void at_13_66(void *ctx, const uint32_t *key, size_t n, power_unit *u) {
  flat(ctx, key, n, u);
  for (size_t j = 0; j < n; j++)
    if (key[j] != CONTROL_UNITS_FREE && key[j] % 100 == 13)
      u[j].c = 0.75;
    else if (key[j] != CONTROL_UNITS_FREE && key[j] % 100 == 66)
      u[j].weight = 2;
}

/* Racks laid out as l[0 .. RACKS) (a slot + 1 its key, each rack's slots its
 * own), each slot's load load(r, s), rack 1's thermal cap th; runs made. */
static void lay_out(rack_fleet *fl, uint32_t *slot,
                    const layout *const l[RACKS],
                    double (*load)(uint32_t, uint32_t), double th, int part) {
  for (uint32_t i = 0; i < GPUS; i++) {
    uint32_t s = l[i / RACK]->slot(i % RACK);
    slot[i] = s == CONTROL_UNITS_FREE ? s : s + 100 * (i / RACK);
    rack_set_unit_key(fl, i, s == CONTROL_UNITS_FREE ? 0 : slot[i] + 1);
    double a = load(i / RACK, s), h = 0.5; /* h: held's */
    rack_set_load(
        fl, i,
        (gpu_load){part < 2 ? a : h, part % 2 == 0 ? a / 2 : h / 2,
                   part == 0 || part == 3 ? fmin(1, a + 0.1) : h + 0.1});
  }
  fl->thermal_cap_w[1] = th;
  rack_fleet_update(fl, NULL);
}

/* Two groups alike but for their names, of the first 2 racks and the
 * other 3: a stretch of alike units goes on over their boundary, where
 * the policy takes a run's first unit (its alike[0] not read). */
static rack_fleet *fleet_make(void) {
  rack_group_spec g[2] = {{.name = "nvl",
                           .gpu = gpu_catalog_find(&cats.gpu, "GB200"),
                           .count = 2,
                           .gpus_per_rack = RACK,
                           .limit_w = 132000,
                           .other_idle_w = 16800,
                           .other_max_w = 33600,
                           .r_th = NAN}};
  g[1] = g[0];
  g[1].name = "nvl-b";
  g[1].count = RACKS - 2;
  sim_error err = {0};
  rack_fleet *fl = rack_fleet_create(g, 2, NULL, &err);
  assert_non_null(fl);
  assert_int_equal(rack_fleet_keep_units(fl), SIM_OK);
  return fl;
}

/* Units w against c, every unit's fields, share and mark; of w's marked
 * units (lazy: not written) only the share and mark. */
static void assert_same_units(const control_units *w, const control_units *c,
                              const char *what, bool lazy) {
  assert_int_equal(w->n, c->n);
  const uint8_t *wa = control__units_alike(w), *ca = control__units_alike(c);
  assert_true(wa != NULL && ca != NULL);
  for (size_t g = 0; g < 2; g++) /* a group's first unit a run's first */
    if (w->group_first[g] < w->n && wa[w->group_first[g]] != 0)
      fail_msg("%s: group %zu's first unit marked", what, g);
  for (size_t j = 0; j < w->n; j++) {
    if (lazy && wa[j] != 0) {
      if (wa[j] != ca[j] || !sim_same_bits(w->share[j], c->share[j]))
        fail_msg("%s: unit %zu's mark or share differs lazy", what, j);
      continue;
    }
    const power_unit *a = &w->u[j], *b = &c->u[j];
    double fa[] = {a->lo,    a->hi,      a->demand,  a->weight,
                   a->c,     a->idle,    a->span,    a->activity,
                   a->gamma, a->phi_min, w->share[j]};
    double fb[] = {b->lo,    b->hi,      b->demand,  b->weight,
                   b->c,     b->idle,    b->span,    b->activity,
                   b->gamma, b->phi_min, c->share[j]};
    bool same = a->n == b->n && a->cls == b->cls &&
                a->priority == b->priority && wa[j] == ca[j];
    for (size_t f = 0; f < sizeof fa / sizeof *fa; f++)
      same = same && sim_same_bits(fa[f], fb[f]);
    if (!same)
      fail_msg("%s: unit %zu differs warm and cold (hi %.17g, %.17g; "
               "alike %d, %d)",
               what, j, a->hi, b->hi, wa[j], ca[j]);
  }
}

/* Units cu on fleet fl built at the loads before move m, refreshed
 * after it (lazy or not: control_units.h). */
static void warm_up(control_units *cu, rack_fleet *fl, uint32_t *slot,
                    const layout *const l[RACKS], const move *m, bool lazy) {
  assert_int_equal(control__units_init(cu, fl, NULL), SIM_OK);
  lay_out(fl, slot, l, held, INFINITY, 0);
  assert_int_equal(control__units_build(cu, fl, slot, NULL, worth, NULL),
                   SIM_OK);
  control_units_fn after = m->worth != NULL ? m->worth : worth;
  lay_out(fl, slot, l, m->load, m->thermal1, m->part);
  cu->lazy = lazy;
  assert_int_equal(control__units_build(cu, fl, slot, NULL, after, NULL),
                   SIM_OK);
  assert_int_equal(cu->builds, 1); /* refreshed, not built again */
}

/* Layouts l, warm (built at the loads before, refreshed after move m),
 * in place and lazily, against cold (built after it). */
static void check(const layout *const l[RACKS], const move *m) {
  static uint32_t slot[GPUS];
  rack_fleet *warm_fl = fleet_make(), *cold_fl = fleet_make(),
             *lazy_fl = fleet_make();
  control_units warm, cold, lazy;
  warm_up(&warm, warm_fl, slot, l, m, false);
  warm_up(&lazy, lazy_fl, slot, l, m, true);
  assert_int_equal(control__units_init(&cold, cold_fl, NULL), SIM_OK);
  lay_out(cold_fl, slot, l, m->load, m->thermal1, m->part);
  control_units_fn after = m->worth != NULL ? m->worth : worth;
  assert_int_equal(
      control__units_build(&cold, cold_fl, slot, NULL, after, NULL), SIM_OK);
  assert_same_units(&warm, &cold, m->name, false);
  assert_same_units(&lazy, &cold, m->name, true);
  /* More than a quarter of the units put back: whole for a while. */
  size_t unmarked = 0;
  for (size_t j = 0; j < lazy.n; j++)
    unmarked += control__units_alike(&lazy)[j] == 0;
  assert_int_equal(lazy.nput, unmarked);
  assert_int_equal(lazy.lazy_wait,
                   4 * unmarked > lazy.n ? CONTROL_UNITS_LAZY_WAIT : 0);
  control__units_fini(&warm);
  control__units_fini(&cold);
  control__units_fini(&lazy);
  rack_fleet_destroy(warm_fl);
  rack_fleet_destroy(cold_fl);
  rack_fleet_destroy(lazy_fl);
}

/* Every pair of layouts, the stretches found four words a register
 * (AVX2, where the CPU has it) and two (sim_lanes_narrow). */
static void refreshed_as_built(void **state) {
  const move *m = *state;
  size_t n = sizeof layouts / sizeof *layouts;
  for (int narrow = 0; narrow < 2; narrow++) {
    sim_lanes_narrow = narrow;
    for (size_t a = 0; a < n; a++)
      for (size_t b = 0; b < n; b++) {
        const layout *l[RACKS] = {&layouts[a], &layouts[b], &layouts[a],
                                  &layouts[b], &layouts[a]};
        check(l, m);
      }
  }
  sim_lanes_narrow = false;
}

int main(void) {
  struct CMUnitTest tests[24];
  size_t n = 0;
  TEST_ROWS(tests, n, refreshed_as_built, moves);
  return _cmocka_run_group_tests("control_units_direct", tests, n,
                                 test_catalogs_load_gpu, test_catalogs_release);
}
