/* test_control_units.c - the policy's units kept from period to period
 * (control_units.c): after every change a period can see (a slot's load,
 * a rack's thermal cap, a slot's worth, the split again, a tighter cap,
 * slots moved, a rack gone dark, the free GPUs' load), the units a warm
 * control hands the policy and the caps it leaves on every GPU are those
 * of a control made cold on the same state, to the bit, and every GPU
 * of a usable rack has its unit's cap; and the workloads are asked their
 * slots' worth once a period, for every unit. A control whose units only
 * the efficiency policy reads (no clamp) refreshes them lazily, in a
 * window (control_units.h): every GPU's cap as the one that writes all.
 *
 * The racks are of three groups, so that between adjacent racks exactly
 * one of what a unit takes from its rack differs: racks 0 and 1 only in
 * the thermal cap (from step 3), 1 and 2 only in the group's ceiling, 2
 * and 3 (or 4, once 3 is dark) only in the GPU type. With every GPU alike (the
 * last step) the units across such a boundary differ in nothing else: a refresh
 * that held a rack's part of the key wrongly gives the wrong units there.
 *
 * With the fleet's runs, a predicted budget takes a run's load share from
 * the unit made from its first GPU: through the same steps, the budget
 * the policy is handed is the one the runs' loads read from the fleet
 * give, to the bit. */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bits.h"
#include "control.h"
#include "control_units.h"
#include "test_catalogs.h"

#define NRACKS 5
#define NGPUS (NRACKS * 72)
#define NSLOTS 40

/* The factory's side of one control: its fleet, the slots, what each
 * slot's work is worth, the per-GPU cap the facility fits at. */
typedef struct world {
  sim_engine *e;
  rack_fleet *fl;
  control *c;
  uint32_t slot[NGPUS];
  double worth[NSLOTS];
  double fit_w;
  long unit_calls; /* slot_units calls */
  size_t asked;    /* units asked of since it was last zeroed */
  /* The units and caps the policy gave at the last allocation. */
  power_unit u[NGPUS];
  uint32_t key[NGPUS];
  double cap[NGPUS];
  size_t n;
  double budget[3]; /* what a client's split was handed, per group */
  size_t nbudget;
  uint64_t changes; /* steps that moved a GPU's slot (slots_changed) */
  bool one_weight;  /* every slot's weight 1 (else 1 + its key % 3) */
} world;

/* Whether the worlds made next count their slots' changes for control
 * (control_hooks.slots_changed) instead of having them compared. */
static bool count_slots;

/* Whether the worlds made next are without the clamp that keeps the
 * units: the efficiency policy alone reads them, so control refreshes
 * them lazily (control_units.h). */
static bool no_clamp;

static bool fits(void *ctx, const rack_fleet *f, const double *caps) {
  const world *w = ctx;
  (void)f;
  return caps[0] <= w->fit_w;
}
static void drive(void *ctx, sim_time now) {
  (void)ctx;
  (void)now;
}
static int power(void *ctx, sim_time now, double *facility_w) {
  (void)ctx;
  (void)now;
  *facility_w = 0;
  return SIM_OK;
}
static const uint32_t *gpu_slots(void *ctx) { return ((world *)ctx)->slot; }

static uint64_t slots_changed(void *ctx) { return ((world *)ctx)->changes; }
static void slot_units(void *ctx, const uint32_t *key, size_t n,
                       power_unit *u) {
  world *w = ctx;
  w->unit_calls++;
  w->asked += n;
  for (size_t j = 0; j < n; j++) {
    if (key[j] == CONTROL_NO_SLOT)
      continue;
    u[j].cls = key[j] % 4 == 0 ? POWER_TRAINING : POWER_INFERENCE;
    u[j].weight = w->one_weight ? 1 : 1 + key[j] % 3;
    u[j].priority = key[j] % 2;
    u[j].c = w->worth[key[j]];
  }
}
static void request_counts(void *ctx, uint64_t *done, uint64_t *met) {
  (void)ctx;
  *done = *met = 0;
}

/* What the policy gave, kept (a clamp that lowers nothing). */
static void keep_split(void *ctx, const power_unit *units, const uint32_t *key,
                       size_t n, double *cap) {
  world *w = ctx;
  assert_true(n <= NGPUS);
  memcpy(w->u, units, n * sizeof *units);
  memcpy(w->key, key, n * sizeof *key);
  memcpy(w->cap, cap, n * sizeof *cap);
  w->n = n;
}

static const power_config cfg = {.cap_w = 1e6,
                                 .policy = POWER_EFFICIENCY,
                                 .allocation_period_s = 0,
                                 .budget = BUDGET_RESERVE};

static void world_drop(world *w) {
  control_destroy(w->c);
  rack_fleet_destroy(w->fl);
  sim_engine_destroy(w->e);
  free(w);
}

/* Three groups of 72-GPU racks: two GB200 racks without a per-GPU
 * limit, one GB200 rack and two H100 racks (the first goes dark) both at
 * a 650 W one, below either GPU's maximum: one ceiling for both. */
static void groups_of(rack_group_spec g[3]) {
  const gpu_spec *gb = gpu_catalog_find(&cats.gpu, "GB200");
  const gpu_spec *h = gpu_catalog_find(&cats.gpu, "H100-SXM");
  assert_non_null(gb);
  assert_non_null(h);
  g[0] = (rack_group_spec){.name = "nvl",
                           .gpu = gb,
                           .count = 2,
                           .gpus_per_rack = 72,
                           .limit_w = 132000,
                           .other_idle_w = 16800,
                           .other_max_w = 33600,
                           .r_th = NAN};
  g[1] = g[0];
  g[1].name = "nvl-limited";
  g[1].count = 1;
  g[1].gpu_limit_w = 650;
  g[2] = g[1];
  g[2].name = "h100";
  g[2].gpu = h;
  g[2].count = 2;
}

static world *world_make(const power_config *pc) {
  rack_group_spec g[3];
  groups_of(g);
  sim_error err = {0};
  world *w = calloc(1, sizeof *w);
  assert_non_null(w);
  w->e = sim_engine_create(NULL);
  assert_non_null(w->e);
  w->fl = rack_fleet_create(g, 3, NULL, &err);
  assert_non_null(w->fl);
  control_hooks h = {w,
                     fits,
                     drive,
                     power,
                     gpu_slots,
                     slot_units,
                     request_counts,
                     count_slots ? slots_changed : NULL,
                     NULL};
  w->c = control_create(pc, w->fl, w->e, &h, &err);
  assert_non_null(w->c);
  if (!no_clamp)
    control_set_clamp(w->c, keep_split, w);
  return w;
}

/* The state at step s, the changes of steps 1 .. s on the first one's:
 * rewritten whole each time (what holds is written again, the same). */
static void world_state(world *w, int s) {
  bool moved = false;
  for (uint32_t i = 0; i < NGPUS; i++) { /* interleaved, across racks */
    bool free_gpu = i % 72 >= 62 || (s >= 7 && i % 72 < 6);
    uint32_t k = free_gpu ? CONTROL_NO_SLOT : (i * 7 / 5 + (s >= 7)) % NSLOTS;
    moved = moved || w->slot[i] != k;
    w->slot[i] = k;
  }
  w->changes += moved;
  for (uint32_t k = 0; k < NSLOTS; k++)
    w->worth[k] = (k % 5) / 4.0 + (s >= 4 && k == 5 ? 0.125 : 0);
  w->fit_w = s >= 6 ? 640 : 760;
  for (uint32_t i = 0; i < NGPUS; i++) {
    uint32_t k = w->slot[i];
    double a = k == CONTROL_NO_SLOT ? (s >= 9 ? 0.2 : 0.1)
                                    : 0.3 + 0.6 * ((k * 37) % 100) / 100.0;
    if (s >= 2 && k == 3)
      a = 0.95;
    if (s >= 10)
      a = 0.5;
    rack_set_load(w->fl, i, (gpu_load){a, a / 2, fmin(1, a + 0.1)});
  }
  w->fl->thermal_cap_w[0] = s >= 3 ? 450 : INFINITY;
  w->fl->dark[3] = s >= 8;
}

typedef struct step {
  const char *what;
  bool recap; /* the factory would split again */
} step;

static const step steps[] = {
    {"the first period", true}, {"nothing moved", false},
    {"one slot's load", false}, {"a rack's thermal cap", true},
    {"a slot's worth", false},  {"the split again", true},
    {"a tighter fit", true},    {"slots moved", false},
    {"a rack dark", true},      {"the free GPUs' load", false},
    {"every GPU alike", false},
};

static void assert_same_units(const world *warm, const world *cold,
                              const char *what) {
  if (warm->n != cold->n)
    fail_msg("%s: %zu units warm, %zu cold", what, warm->n, cold->n);
  for (size_t j = 0; j < warm->n; j++) {
    const power_unit *a = &warm->u[j], *b = &cold->u[j];
    double fa[] = {a->lo,    a->hi,      a->demand,   a->weight,
                   a->c,     a->idle,    a->span,     a->activity,
                   a->gamma, a->phi_min, warm->cap[j]};
    double fb[] = {b->lo,    b->hi,      b->demand,   b->weight,
                   b->c,     b->idle,    b->span,     b->activity,
                   b->gamma, b->phi_min, cold->cap[j]};
    bool same = a->n == b->n && a->cls == b->cls &&
                a->priority == b->priority && warm->key[j] == cold->key[j];
    for (size_t f = 0; f < sizeof fa / sizeof *fa; f++)
      same = same && sim_same_bits(fa[f], fb[f]);
    if (!same)
      fail_msg("%s: unit %zu differs warm and cold (demand %.17g, %.17g; "
               "cap %.17g, %.17g)",
               what, j, a->demand, b->demand, warm->cap[j], cold->cap[j]);
  }
}

/* Every usable rack's GPUs at their unit's cap, each unit's top its
 * rack's ceiling: the units of a rack are one per slot and one for its
 * free GPUs, in the order its GPUs first name them, rack after rack. */
static void assert_caps_are_units(const world *w, const char *what) {
  size_t next = 0;
  for (uint32_t r = 0; r < NRACKS; r++) {
    if (w->fl->dark[r])
      continue;
    size_t base = next;
    for (uint32_t i = r * 72; i < (r + 1) * 72; i++) {
      size_t j = base;
      while (j < next && w->key[j] != w->slot[i])
        j++;
      if (j == next)
        next++; /* the first of its unit */
      assert_true(j < w->n);
      assert_int_equal(w->key[j], w->slot[i]);
      if (!sim_same_bits(w->fl->cap_w[i], w->cap[j]))
        fail_msg("%s: GPU %u's cap %.17g W, its unit's %.17g W", what, i,
                 w->fl->cap_w[i], w->cap[j]);
      /* its top its rack's group's ceiling: a base made again for a unit
       * of another group's rack of the same GPU type is not the last's */
      const gpu_spec *g = w->fl->types[w->fl->type[i]];
      double room = w->fl->ceiling_w[w->fl->group[r]];
      if (!sim_same_bits(w->u[j].hi,
                         fmax(g->cap_min_w, fmin(g->cap_max_w, room))))
        fail_msg("%s: GPU %u's unit's top %.17g W, its ceiling %.17g W", what,
                 i, w->u[j].hi, room);
    }
  }
  assert_int_equal(next, w->n);
}

/* A world in step s's state, split for it. */
static world *world_at(int s) {
  world *w = world_make(&cfg);
  sim_error err = {0};
  world_state(w, s);
  if (control_split(w->c, &err) != SIM_OK)
    fail_msg("%s", err.msg);
  return w;
}

/* Every step on one warm control against a cold one on the same state. */
static void warm_units_are_cold_units(void **state) {
  (void)state;
  world *warm = world_at(0);
  for (int s = 0; s < (int)(sizeof steps / sizeof *steps); s++) {
    world_state(warm, s);
    control_view v = {.cap_w = cfg.cap_w, .recap = steps[s].recap};
    assert_int_equal(control_period(warm->c, &v, (sim_time)s * 1000000000),
                     SIM_OK);
    world *cold = world_at(s);
    v.recap = false;
    assert_int_equal(control_period(cold->c, &v, 0), SIM_OK);
    assert_same_units(warm, cold, steps[s].what);
    assert_caps_are_units(warm, steps[s].what);
    for (uint32_t i = 0; i < NGPUS; i++)
      if (!sim_same_bits(warm->fl->cap_w[i], cold->fl->cap_w[i]))
        fail_msg("%s: GPU %u's cap %.17g W warm, %.17g W cold", steps[s].what,
                 i, warm->fl->cap_w[i], cold->fl->cap_w[i]);
    world_drop(cold);
  }
  world_drop(warm);
}

/* The same, control told of the slots' changes by the holder's count:
 * a build that kept its units while the count moved ("slots moved")
 * fails it. */
static void warm_units_by_count_are_cold_units(void **state) {
  count_slots = true;
  warm_units_are_cold_units(state);
  count_slots = false;
}

/* Every step on a warm control that refreshes its units lazily (no
 * clamp) against one that writes them all (the clamp that keeps them):
 * every GPU's cap the same, to the bit. */
static void lazy_units_give_the_same_caps(void **state) {
  (void)state;
  world *full = world_at(0);
  no_clamp = true;
  world *lazy = world_at(0);
  no_clamp = false;
  for (int s = 0; s < (int)(sizeof steps / sizeof *steps); s++) {
    world *w[2] = {full, lazy};
    for (int k = 0; k < 2; k++) {
      world_state(w[k], s);
      control_view v = {.cap_w = cfg.cap_w, .recap = steps[s].recap};
      assert_int_equal(control_period(w[k]->c, &v, (sim_time)s * 1000000000),
                       SIM_OK);
    }
    for (uint32_t i = 0; i < NGPUS; i++)
      if (!sim_same_bits(full->fl->cap_w[i], lazy->fl->cap_w[i]))
        fail_msg("%s: GPU %u's cap %.17g W, %.17g W lazily", steps[s].what, i,
                 full->fl->cap_w[i], lazy->fl->cap_w[i]);
  }
  world_drop(full);
  world_drop(lazy);
}

/* The workloads are asked once a period of every unit (slot and free),
 * a chunk of units a call. */
static void slot_worth_asked_once_a_period(void **state) {
  (void)state;
  world *w = world_at(0);
  control_view v = {.cap_w = cfg.cap_w};
  for (int s = 0; s < 3; s++) {
    long calls = w->unit_calls;
    w->asked = 0;
    assert_int_equal(control_period(w->c, &v, (sim_time)s * 1000000000),
                     SIM_OK);
    assert_int_equal(w->unit_calls - calls,
                     (w->n + CONTROL_UNITS_CHUNK - 1) / CONTROL_UNITS_CHUNK);
    assert_int_equal(w->asked, w->n);
  }
  size_t free_units = 0;
  for (size_t j = 0; j < w->n; j++)
    free_units += w->key[j] == CONTROL_NO_SLOT;
  assert_int_equal(free_units, NRACKS); /* one a rack, asked of too */
  world_drop(w);
}

/* A client's split that records the budget and gives every unit its
 * lowest cap. */
static int record_split(void *ctx, const power_unit *units, size_t n,
                        double budget_w, double *cap) {
  world *w = ctx;
  assert_true(w->nbudget < 3);
  w->budget[w->nbudget++] = budget_w;
  for (size_t k = 0; k < n; k++)
    cap[k] = units[k].lo;
  return SIM_OK;
}

static const power_config predict_cfg = {.cap_w = 1e6,
                                         .policy = POWER_EFFICIENCY,
                                         .budget = BUDGET_PREDICT,
                                         .budget_margin = 0.05};

/* The racks' other IT power in the coming period as control.c's
 * other_it_next adds it, each run's load share read from its first GPU. */
static double other_it_from_runs(const rack_fleet *fl) {
  double sum = 0;
  for (uint32_t r = 0; r < fl->nracks; r++) {
    double a = 0;
    for (uint32_t q = fl->rack_run[r]; q < fl->rack_run[r + 1]; q++) {
      uint32_t i = fl->run_first[q];
      a += fl->run_len[q] *
           gpu_load_share(fl->types[fl->type[i]], rack_gpu_load(fl, i));
    }
    sum += fl->other_idle_w[r] +
           (fl->other_max_w[r] - fl->other_idle_w[r]) * a / fl->count[r];
  }
  return sum;
}

/* Each group's predicted budget for view v (control.c's predict_budgets)
 * over the static split's caps gb. */
static void expect_budgets(const world *w, const control_view *v,
                           const double gb[3], double out[3]) {
  double it = v->it_w, k = fmax(0, v->facility_w - it) / it;
  double l = v->psu_loss_w / it;
  double predicted =
      v->limit_w * (1 - predict_cfg.budget_margin) * (1 - l) / (1 + k) -
      other_it_from_runs(w->fl);
  double reserve = gb[0] + gb[1] + gb[2];
  double scale = fmax(1, predicted / reserve);
  for (int g = 0; g < 3; g++)
    out[g] = gb[g] * scale;
}

/* Step s's state on w (by state_of: world_state or another), keyed by
 * slot (a slot + 1, 0 free), statically split, its runs made; each
 * group's caps in all (control.c's note_budgets) in gb. */
static void keyed_state_of(world *w, void (*state_of)(world *, int), int s,
                           double gb[3]) {
  rack_fleet *fl = w->fl;
  sim_error err = {0};
  state_of(w, s);
  for (uint32_t i = 0; i < NGPUS; i++)
    rack_set_unit_key(fl, i,
                      w->slot[i] == CONTROL_NO_SLOT ? 0 : w->slot[i] + 1);
  if (rack_fleet_split(fl, fits, w, &err) != SIM_OK)
    fail_msg("%s", err.msg);
  gb[0] = gb[1] = gb[2] = 0;
  rack_fleet_gpu_caps(fl); /* the split may have written runs only */
  for (uint32_t r = 0; r < NRACKS; r++)
    for (uint32_t i = fl->first[r];
         rack_fleet_rack_usable(fl, r) && i < fl->first[r] + fl->count[r]; i++)
      gb[fl->group[r]] += fl->cap_w[i];
  rack_fleet_update(fl, NULL);
  assert_true(rack_fleet_runs_fresh(fl));
}

static void keyed_state(world *w, int s, double gb[3]) {
  keyed_state_of(w, world_state, s, gb);
}

/* The period after step s, its budgets against the runs'. */
static void assert_budgets_of_runs(world *w, const control_view *v,
                                   const double gb[3], const char *what) {
  double want[3];
  expect_budgets(w, v, gb, want);
  assert_true(want[0] > gb[0]); /* the other IT moves it */
  w->nbudget = 0;
  assert_int_equal(control_period(w->c, v, 0), SIM_OK);
  assert_int_equal(w->nbudget, 3);
  for (int g = 0; g < 3; g++)
    if (!sim_same_bits(w->budget[g], want[g]))
      fail_msg("%s: group %d's budget %.17g W, from the runs %.17g W", what, g,
               w->budget[g], want[g]);
}

/* The view of the periods the predicted budgets are checked in. */
static const control_view predict_view = {.cap_w = 1e6,
                                          .limit_w = 1e6,
                                          .recap = true,
                                          .facility_w = 3e5,
                                          .it_w = 2.5e5,
                                          .psu_loss_w = 1e4};

/* A world with the fleet's runs whose predicted budgets a client's
 * split records (record_split). */
static world *predict_world(void) {
  world *w = world_make(&predict_cfg);
  assert_int_equal(rack_fleet_keep_units(w->fl), SIM_OK);
  control_set_split(w->c, record_split, w);
  return w;
}

/* Through every step, the budget a predicted one hands the policy is
 * the one the runs' loads give; and again when the runs change and the
 * slots do not (rack 0's GPUs under one key and one load: one run, whose
 * first GPU begins only the first of the rack's units). */
static void predicted_budget_reads_the_runs(void **state) {
  (void)state;
  world *w = predict_world();
  control_view v = predict_view;
  double gb[3];
  for (int s = 0; s < (int)(sizeof steps / sizeof *steps); s++) {
    keyed_state(w, s, gb);
    assert_budgets_of_runs(w, &v, gb, steps[s].what);
  }
  /* No step puts one run across units: a run is one key's GPUs and a
   * key one slot's, and control asserts it (runs_within_units); the runs
   * that begin no unit are a dark rack's (steps). */
  keyed_state(w, 9, gb); /* loads unlike again */
  assert_budgets_of_runs(w, &v, gb, steps[9].what);
  world_drop(w);
}

/* The racks' layouts direct_state sets: each rack's units of per GPUs
 * (72 / per units, 72 / per - 1 marks), and one unit, odd_unit of rack
 * odd_rack (-1: none), at another load. */
static const struct {
  uint32_t per;
  int odd_rack, odd_unit;
  const char *what;
} direct_at[] = {
    {6, -1, 0, "racks alike"},
    {6, 2, 11, "rack 2's last unit unlike"},
    {6, 1, 11, "rack 1's last unit unlike"},
    {6, -1, 0, "racks alike again"},
    {12, -1, 0, "racks of six units alike"},
    {12, 2, 5, "racks of six units, rack 2's last unlike"},
    /* 17 marks: two reads of sixteen, the second's last mark its own */
    {4, -1, 0, "racks of 18 units alike"},
    {4, 2, 9, "racks of 18 units, rack 2's middle unit unlike"},
    {4, 1, 17, "racks of 18 units, rack 1's last unlike"},
    /* the rack before its group's next unlike inside: the next not its */
    {4, 0, 9, "racks of 18 units, rack 0's middle unit unlike"},
    {4, 3, 1, "racks of 18 units, rack 3's second unit unlike"},
    /* 35 marks: sixteen a turn, then the last sixteen; marks 4 and 17
     * only in the turns' reads, 34 only in the last */
    {2, -1, 0, "racks of 36 units alike"},
    {2, 2, 5, "racks of 36 units, rack 2's unit 5 unlike"},
    {2, 1, 18, "racks of 36 units, rack 1's unit 18 unlike"},
    {2, 3, 35, "racks of 36 units, rack 3's last unlike"},
};

/* Racks of 72 / per units of per GPUs each (direct_at[s]; slots 0, 1,
 * ... a block each: a rack's runs are its units, one to one), every slot
 * worth the same, so a unit is marked alike the one before where its load is.
 * Where every GPU is at one load, each rack's load shares one term, the
 * same as the rack before's, whose sum control.c's other_it_next keeps
 * for it. Where one unit is at another load, its rack's first term and
 * its count are still the rack before's, its sum not (a mark found only
 * in one of the reads of its rack's marks). */
static void direct_state(world *w, int s) {
  const uint32_t per = direct_at[s].per;
  bool moved = false;
  for (uint32_t i = 0; i < NGPUS; i++) {
    uint32_t k = i % 72 / per; /* under NSLOTS */
    moved = moved || w->slot[i] != k;
    w->slot[i] = k;
  }
  w->changes += moved;
  w->one_weight = true;
  for (uint32_t k = 0; k < NSLOTS; k++)
    w->worth[k] = 0.5;
  w->fit_w = 760;
  for (uint32_t i = 0; i < NGPUS; i++) {
    bool odd = (int)(i / 72) == direct_at[s].odd_rack &&
               (int)(i % 72 / per) == direct_at[s].odd_unit;
    double a = odd ? 0.8 : 0.5;
    rack_set_load(w->fl, i, (gpu_load){a, a / 2, fmin(1, a + 0.1)});
  }
  w->fl->thermal_cap_w[0] = INFINITY;
  w->fl->dark[3] = false;
}

/* The budget a predicted one hands the policy is the runs' where racks
 * of one term follow each other (their sums kept) and where a rack's
 * first term and count are the kept rack's but a later term, the rack's
 * or the kept one's, is not. */
static void predicted_budget_of_racks_alike(void **state) {
  (void)state;
  world *w = predict_world();
  control_view v = predict_view;
  double gb[3];
  for (int s = 0; s < (int)(sizeof direct_at / sizeof *direct_at); s++) {
    keyed_state_of(w, direct_state, s, gb);
    assert_budgets_of_runs(w, &v, gb, direct_at[s].what);
  }
  world_drop(w);
}

/* The same with racks' constants unlike the rack before's though their
 * loads are alike (rack 1's other IT at its most, rack 4's idle; each
 * the second of its group): a rack
 * takes the term of the rack before (other_it_next's rack_as_before)
 * only where its constants are that rack's too. */
static void predicted_budget_of_racks_unlike_in_constants(void **state) {
  (void)state;
  world *w = predict_world();
  control_view v = predict_view;
  double gb[3];
  w->fl->other_max_w[1] = 30000;
  w->fl->other_idle_w[4] = 15000;
  for (int s = 0; s < (int)(sizeof direct_at / sizeof *direct_at); s++) {
    keyed_state_of(w, direct_state, s, gb);
    assert_budgets_of_runs(w, &v, gb, direct_at[s].what);
  }
  world_drop(w);
}

/* Step s's state on w with its GPUs keyed by slot (a slot + 1, 0 free)
 * and the racks updated, so the runs are made (or kept) for it. */
static void keyed_update(world *w, int s) {
  world_state(w, s);
  for (uint32_t i = 0; i < NGPUS; i++)
    rack_set_unit_key(w->fl, i,
                      w->slot[i] == CONTROL_NO_SLOT ? 0 : w->slot[i] + 1);
  rack_fleet_update(w->fl, NULL);
}

/* Through every step (a recap, a thermal cap, a dark rack, slots moved),
 * the caps control writes once a run of a keyed fleet are, once filled,
 * those it writes GPU by GPU to a fleet without keys, to the bit; the
 * runs' caps stay their GPUs'. A build that wrote a run the wrong unit's
 * cap, skipped a unit's later runs or wrote a dark rack's runs fails. */
static void caps_once_a_run_are_the_gpus(void **state) {
  (void)state;
  world *runs = world_at(0), *gpus = world_at(0);
  assert_int_equal(rack_fleet_keep_units(runs->fl), SIM_OK);
  size_t by_runs = 0;
  for (int s = 0; s < (int)(sizeof steps / sizeof *steps); s++) {
    keyed_update(runs, s);
    world_state(gpus, s);
    rack_fleet_update(gpus->fl, NULL);
    control_view v = {.cap_w = cfg.cap_w, .recap = steps[s].recap};
    sim_time now = (sim_time)s * 1000000000;
    assert_int_equal(control_period(runs->c, &v, now), SIM_OK);
    assert_int_equal(control_period(gpus->c, &v, now), SIM_OK);
    by_runs += runs->fl->caps_unfilled;
    uint32_t q = 0; /* the runs' caps, before the GPUs are filled */
    for (uint32_t i = 0; i < NGPUS; i++) {
      q = runs->fl->gpu_run[i];
      if (!sim_same_bits(runs->fl->run_cap_w[q], gpus->fl->cap_w[i]))
        fail_msg("%s: GPU %u's run's cap %.17g W, GPU by GPU %.17g W",
                 steps[s].what, i, runs->fl->run_cap_w[q], gpus->fl->cap_w[i]);
    }
    rack_fleet_gpu_caps(runs->fl);
    assert_false(runs->fl->caps_unfilled);
    assert_memory_equal(runs->fl->cap_w, gpus->fl->cap_w,
                        NGPUS * sizeof(double));
    assert_int_equal(rack_fleet_first_unlike(runs->fl), RACK_NO_GPU);
  }
  assert_true(by_runs >= 5); /* the run path taken, not only the GPUs' */
  world_drop(runs);
  world_drop(gpus);
}

int main(void) {
  struct CMUnitTest tests[8];
  size_t n = 0;
  TEST_ADD(tests, n, warm_units_are_cold_units);
  TEST_ADD(tests, n, warm_units_by_count_are_cold_units);
  TEST_ADD(tests, n, lazy_units_give_the_same_caps);
  TEST_ADD(tests, n, slot_worth_asked_once_a_period);
  TEST_ADD(tests, n, predicted_budget_reads_the_runs);
  TEST_ADD(tests, n, predicted_budget_of_racks_alike);
  TEST_ADD(tests, n, predicted_budget_of_racks_unlike_in_constants);
  TEST_ADD(tests, n, caps_once_a_run_are_the_gpus);
  return _cmocka_run_group_tests("control_units", tests, n,
                                 test_catalogs_load_gpu, test_catalogs_release);
}
