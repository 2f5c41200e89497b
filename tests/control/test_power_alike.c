/* test_power_alike.c - the policy's runs handed over by control instead
 * of found by comparing units (power.h, split_from's alike): marks that
 * hold give the split the units alone give, bit for bit, however many
 * are left unsaid; and control's marks (control_units.c, fill_and_mark)
 * hold through every change a period can see, and say every alike
 * neighbour within a rack, so the policy's runs are as long as before.
 *
 * The fleet has more units than a chunk of the fill (1,024), so a chunk's
 * first unit is marked against the last of the chunk before. Its slots
 * are a few services' replicas (the same load and worth, one to three
 * GPUs each) and free GPUs, so that units alike to the bit lie next to
 * each other in long runs, and each step breaks them in one way: a
 * slot's load, a slot's worth (alike in everything the refresh reads),
 * a rack's thermal cap, a rack gone dark, slots moved (their GPU counts
 * alike or not), every GPU alike. */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "control_units.h"
#include "power_fixture.h"
#include "power_policy.h"
#include "test_catalogs.h"

/* ------------------------------------------------------------------ */
/* The policy: marks that hold                                         */
/* ------------------------------------------------------------------ */

#define MAXR 1500

/* Runs of copies (one to maxlen units each, every third of another
 * class and priority but alike in what a split reads) of random units. */
static size_t units_in_runs(uint64_t *seed, power_unit *u, size_t maxlen) {
  size_t n = 0;
  while (n < MAXR - maxlen) {
    power_unit one[POWER_FIXTURE_MAXU];
    double b;
    random_fleet(seed, one, &b);
    size_t len = 1 + (size_t)(uniform(seed) * (double)maxlen);
    for (size_t k = 0; k < len; k++, n++) {
      u[n] = one[0];
      u[n].cls = (int)(k % 3 == 2);
      u[n].priority = (int64_t)k % 2;
    }
    if (uniform(seed) < 0.1)
      break;
  }
  return n;
}

/* Marks of alike the unit before: every true one (kept = 1), some
 * (0 < kept < 1), none (kept = 0). */
static void some_marks(uint64_t *seed, const power_unit *u, size_t n,
                       double kept, uint8_t *alike) {
  for (size_t k = 0; k < n; k++)
    alike[k] = k > 0 && power_alike(&u[k], &u[k - 1]) && uniform(seed) < kept;
}

/* However many true marks are said, the split from them is the split
 * that compares the units (itself held to the unit-by-unit split by
 * test_power_runs.c), caps and level to the bit; power_alike_ok holds
 * of them and fails one wrong mark. */
static void split_from_marks_is_split_from_units(void **state) {
  (void)state;
  uint64_t seed = 91;
  power_memo memo = {.level = NAN}, plain = {.level = NAN};
  power_unit *u = calloc(MAXR, sizeof *u);
  double *cap = calloc(2 * MAXR, sizeof *cap), *want = cap + MAXR;
  uint8_t *alike = calloc(MAXR, 1);
  assert_true(u != NULL && cap != NULL && alike != NULL);
  static const double kept[] = {1, 0.9, 0.5, 0};
  for (int trial = 0; trial < 80; trial++) {
    size_t n = units_in_runs(&seed, u, trial % 2 ? 300 : 6);
    double budget = drawn_budget(&seed, u, n), k = kept[trial % 4];
    some_marks(&seed, u, n, k, alike);
    assert_true(power_alike_ok(u, n, alike));
    power_split_efficiency_from(u, n, budget, want, &plain, NULL);
    power_split_efficiency_from(u, n, budget, cap, &memo, alike);
    if (memcmp(&memo.level, &plain.level, sizeof memo.level) != 0 ||
        memcmp(cap, want, n * sizeof *cap) != 0)
      fail_msg("trial %d (%zu units, marks kept %g): the caps differ", trial,
               n, k);
  }
  size_t n = units_in_runs(&seed, u, 6), k = 1;
  while (k < n && power_alike(&u[k], &u[k - 1]))
    k++;
  assert_true(k < n);
  some_marks(&seed, u, n, 1, alike);
  alike[k] = 1; /* a mark between units that differ */
  assert_false(power_alike_ok(u, n, alike));
  power_memo_clear(&memo);
  power_memo_clear(&plain);
  free(u);
  free(cap);
  free(alike);
}

/* ------------------------------------------------------------------ */
/* Control: the marks it hands over                                    */
/* ------------------------------------------------------------------ */

#define NRACKS 24
#define NGPUS (NRACKS * 72)
#define NSLOTS 1600

/* The holder's side: the GPUs' slots, each slot's worth, and what the
 * fill was asked. */
typedef struct holder {
  uint32_t slot[NGPUS];
  double worth[NSLOTS];
  size_t asked, calls;
} holder;

static void fill(void *ctx, const uint32_t *key, size_t n, power_unit *u) {
  holder *h = ctx;
  h->asked += n;
  h->calls++;
  for (size_t j = 0; j < n; j++) {
    if (key[j] == CONTROL_UNITS_FREE)
      continue;
    u[j].cls = (int)(key[j] % 2);
    u[j].priority = key[j] % 3; /* unlike within a run: not read */
    u[j].weight = 1;
    u[j].c = h->worth[key[j]];
  }
}

/* Two groups of twelve racks, GB200 then H100. */
static rack_fleet *fleet_make(void) {
  const gpu_spec *gb = gpu_catalog_find(&cats.gpu, "GB200");
  const gpu_spec *h = gpu_catalog_find(&cats.gpu, "H100-SXM");
  assert_true(gb != NULL && h != NULL);
  rack_group_spec g[2] = {{.name = "gb", .gpu = gb, .count = NRACKS / 2,
                           .gpus_per_rack = 72, .limit_w = 132000,
                           .other_idle_w = 16800, .other_max_w = 33600,
                           .r_th = NAN}};
  g[1] = g[0];
  g[1].name = "h100";
  g[1].gpu = h;
  sim_error err = {0};
  rack_fleet *fl = rack_fleet_create(g, 2, NULL, &err);
  assert_non_null(fl);
  return fl;
}

/* The service of slot k: four, of six racks' replicas each. */
static uint32_t service(uint32_t k) { return k / 400; }

/* The state at step s. Each rack: its first 66 GPUs in slots of one or
 * two GPUs (replicas of its six racks' service; in a rack of two-GPU
 * slots the first and last slots have one, so that only the GPU count
 * tells them from their neighbours), the last six free. */
static void state_at(rack_fleet *fl, holder *h, int s) {
  for (uint32_t r = 0; r < NRACKS; r++) {
    uint32_t i = r * 72, size = s >= 5 && r == 7 ? 1 : 1 + r % 2;
    for (; i < r * 72 + 66; i++)
      h->slot[i] =
          (r / 6) * 400 + (r % 6) * 67 + (i - r * 72 + size - 1) / size;
    for (; i < (r + 1) * 72; i++)
      h->slot[i] = CONTROL_UNITS_FREE;
  }
  for (uint32_t j = 0; j < NSLOTS; j++)
    h->worth[j] = 0.2 + 0.2 * service(j) + (s >= 2 && j == 301 ? 0.05 : 0);
  for (uint32_t i = 0; i < NGPUS; i++) {
    uint32_t j = h->slot[i];
    double a = j == CONTROL_UNITS_FREE ? 0.1 : 0.4 + 0.1 * service(j);
    if (s >= 1 && j == 5)
      a = 0.95;
    if (s >= 6)
      a = 0.5;
    rack_set_load(fl, i, (gpu_load){a, a / 2, fmin(1, a + 0.1)});
  }
  fl->thermal_cap_w[3] = s >= 3 ? 450 : INFINITY;
  fl->dark[9] = s >= 4;
}

static const char *const steps[] = {
    "the first period", "a slot's load", "a slot's worth",
    "a rack's thermal cap", "a rack dark", "slots moved",
    "every GPU alike",
};

/* Control's marks hold (power_alike_ok), and within a rack say every
 * alike neighbour; the fill was asked of every unit once, in chunks. */
static void assert_marks(const control_units *cu, const holder *h,
                         const char *what) {
  const uint8_t *alike = control__units_alike(cu);
  assert_non_null(alike);
  if (!power_alike_ok(cu->u, cu->n, alike))
    fail_msg("%s: a unit marked alike the one before differs", what);
  size_t marked = 0;
  for (size_t u = 1; u < cu->n; u++) {
    marked += alike[u] != 0;
    if (cu->rack[u] == cu->rack[u - 1] && !alike[u] &&
        power_alike(&cu->u[u], &cu->u[u - 1]))
      fail_msg("%s: unit %zu alike the one before, not marked", what, u);
  }
  assert_int_equal(h->asked, cu->n);
  assert_true(h->calls >= 2);
  assert_true(marked > cu->n / 2); /* runs, not a unit each */
}

/* Every step on one control's units, built and then refreshed. */
static void control_marks_hold(void **state) {
  (void)state;
  rack_fleet *fl = fleet_make();
  holder *h = calloc(1, sizeof *h);
  assert_non_null(h);
  control_units cu;
  assert_int_equal(control__units_init(&cu, fl, NULL), SIM_OK);
  for (int s = 0; s < (int)(sizeof steps / sizeof *steps); s++) {
    state_at(fl, h, s);
    for (int again = 0; again < 2; again++) { /* built, then refreshed */
      h->asked = h->calls = 0;
      assert_int_equal(
          control__units_build(&cu, fl, h->slot, NULL, fill, h), SIM_OK);
      assert_true(cu.n > 1024);
      assert_marks(&cu, h, steps[s]);
    }
  }
  control__units_fini(&cu);
  rack_fleet_destroy(fl);
  free(h);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(split_from_marks_is_split_from_units),
      cmocka_unit_test(control_marks_hold),
  };
  return cmocka_run_group_tests(tests, test_catalogs_load_gpu,
                                test_catalogs_release);
}
