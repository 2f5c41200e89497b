/* test_rack.c - the fleet: layout, the hot power loop against the GPU
 * model, rack sums, the static split of a budget into per-GPU caps, and
 * the cache of clocks against the solve it stands for. */
#include "lanes.h"
#include "test_util.h"

#include <math.h>
#include <string.h>

#include "rack_fixture.h"

static rack_fleet *two_groups(double nvl_limit_w) {
  rack_group_spec g[2] = {
      {"nvl", gpu_catalog_find(&cats.gpu, "GB200"), 3, 72, nvl_limit_w, 16800,
       33600, NULL, 0, NAN, NULL, 0, false, 0},
      {"hgx", gpu_catalog_find(&cats.gpu, "H100-SXM"), 2, 32, 40800, 9200, 18400,
       rack_fixture_titanium, 4, NAN, NULL, 0, false, 0},
  };
  return rack_fixture_fleet(g, 2);
}

static void layout_is_contiguous(void **state) {
  (void)state;
  rack_fleet *f = two_groups(132000);
  assert_int_equal(f->n, 3 * 72 + 2 * 32);
  assert_int_equal(f->nracks, 5);
  assert_int_equal(f->ntypes, 2);
  uint32_t next = 0;
  for (uint32_t r = 0; r < f->nracks; r++) {
    assert_int_equal(f->first[r], next);
    for (uint32_t i = f->first[r]; i < f->first[r] + f->count[r]; i++)
      assert_int_equal(f->rack[i], r);
    next += f->count[r];
  }
  assert_string_equal(f->names[0], "nvl-0");
  assert_string_equal(f->names[4], "hgx-1");
  assert_int_equal(f->group[3], 1);
  /* Every GPU starts idle at its TDP cap. */
  assert_close(f->cap_w[0], 1200, 0, 0);
  assert_close(f->power_w[f->n - 1], f->types[1]->idle_w, 1e-12, 0);
  rack_fleet_destroy(f);
  rack_fleet_destroy(NULL);
}

typedef struct power_case {
  const char *name;
  double activity;
  double cap_share; /* of TDP; the cap is between the GPU's min and max */
} power_case;

static const power_case powers[] = {
    {"idle", 0, 1},
    {"full at TDP", 1, 1},
    {"half at TDP", 0.5, 1},
    {"full capped 80%", 1, 0.8},
    {"full capped 50%", 1, 0.5},
    {"light under cap", 0.2, 0.5},
    {"full at min cap", 1, 0.0},
    {"capped mid", 0.7, 0.6},
};

/* The hot loop's shortcut (no pow) gives what the model gives at the clock
 * the cap allows: one piece of arithmetic, checked against the other. */
static void hot_loop_matches_the_model(void **state) {
  const power_case *c = *state;
  rack_fleet *f = two_groups(132000);
  for (uint32_t i = 0; i < f->n; i++) {
    const gpu_spec *g = f->types[f->type[i]];
    rack_set_load(f, i, gpu_load_level(c->activity));
    f->cap_w[i] = fmax(g->cap_min_w, c->cap_share * g->tdp_w);
  }
  rack_fleet_update(f, NULL);
  for (uint32_t i = 0; i < f->n; i++) {
    const gpu_spec *g = f->types[f->type[i]];
    double expect = gpu_power(g, rack_gpu_phi(f, i), c->activity);
    assert_close(f->power_w[i], expect, 1e-9, 1e-9);
    /* Over the cap only where even the lowest clock draws more (a GB200
     * busy at its 200 W minimum: idle and busy floor are 209 W). */
    double lowest = gpu_power(g, gpu_phi_min(g), c->activity);
    assert_true(f->power_w[i] <= fmax(f->cap_w[i], lowest) * (1 + 1e-12));
  }
  rack_fleet_destroy(f);
}

static void rack_sums_add_up(void **state) {
  (void)state;
  rack_fleet *f = two_groups(132000);
  for (uint32_t i = 0; i < f->n; i++)
    rack_set_load(f, i, gpu_load_level((double)(i % 10) / 10));
  double total = rack_fleet_update(f, NULL), check = 0;
  for (uint32_t r = 0; r < f->nracks; r++) {
    double gpu = 0, act = 0;
    for (uint32_t i = f->first[r]; i < f->first[r] + f->count[r]; i++) {
      gpu += f->power_w[i];
      act += f->activity[i];
    }
    act /= f->count[r];
    assert_close(f->gpu_power_w[r], gpu, 1e-12, 0);
    assert_close(f->activity_mean[r], act, 1e-12, 0);
    double other =
        f->other_idle_w[r] + (f->other_max_w[r] - f->other_idle_w[r]) * act;
    assert_close(f->rack_power_w[r], gpu + other + f->loss_w[r], 1e-12, 0);
    check += f->rack_power_w[r];
  }
  assert_close(total, check, 1e-12, 0);
  /* An NVL72 rack flat out at TDP: 72 x 1200 W + 33.6 kW = 120 kW. */
  for (uint32_t i = 0; i < f->n; i++)
    rack_set_load(f, i, gpu_load_level(1));
  rack_fleet_update(f, NULL);
  assert_close(f->rack_power_w[0], 120000, 1e-12, 0);
  rack_fleet_destroy(f);
}

typedef struct split_case {
  const char *name;
  double budget_w; /* for the GPUs */
  double nvl_limit_w;
  int rc;
} split_case;

static const split_case splits[] = {
    {"generous", 1e9, 132000, SIM_OK},
    {"binding", 250000, 132000, SIM_OK},
    {"tight", 110000, 132000, SIM_OK},
    {"exactly the floor", 3 * 72 * 200.0 + 2 * 32 * 200.0, 132000, SIM_OK},
    {"below the floor", 50000, 132000, SIM_EINPUT},
    {"rack limit binds", 1e9, 100000, SIM_OK},
    {"rack limit too low", 1e9, 40000, SIM_EINPUT},
};

static void static_split_respects_every_bound(void **state) {
  const split_case *c = *state;
  rack_fleet *f = two_groups(c->nvl_limit_w);
  sim_error err = {0};
  int rc = rack_fleet_split_static(f, c->budget_w, &err);
  assert_int_equal(rc, c->rc);
  if (rc != SIM_OK) {
    assert_true(strlen(err.msg) > 0);
    rack_fleet_destroy(f);
    return;
  }
  double sum = 0, share = -1;
  for (uint32_t i = 0; i < f->n; i++) {
    const gpu_spec *g = f->types[f->type[i]];
    uint32_t r = f->rack[i];
    double ceiling =
        fmin(g->cap_max_w, (f->limit_w[r] - f->other_max_w[r]) / f->count[r]);
    assert_true(f->cap_w[i] >= g->cap_min_w && f->cap_w[i] <= ceiling);
    /* Unclamped GPUs all get the same share of their TDP. */
    if (f->cap_w[i] > g->cap_min_w && f->cap_w[i] < ceiling) {
      if (share < 0)
        share = f->cap_w[i] / g->tdp_w;
      assert_close(f->cap_w[i] / g->tdp_w, share, 1e-12, 0);
    }
    sum += f->cap_w[i];
  }
  assert_true(sum <= c->budget_w);
  /* Nothing is stranded when the budget binds: within 1e-9 of it. */
  if (c->budget_w < 1e9)
    assert_close(sum, c->budget_w, 1e-9, 0);
  /* Racks at full load stay within their limits: without a system, the
   * limit bounds the DC power, before the conversion's losses. */
  for (uint32_t i = 0; i < f->n; i++)
    rack_set_load(f, i, gpu_load_level(1));
  rack_fleet_update(f, NULL);
  for (uint32_t r = 0; r < f->nracks; r++)
    assert_true(f->rack_power_w[r] - f->loss_w[r] <=
                f->limit_w[r] * (1 + 1e-12));
  rack_fleet_destroy(f);
}

/* Losses follow the efficiency curve at the rack's load share; a group
 * without a curve is lossless. */
static void conversion_losses(void **state) {
  (void)state;
  rack_fleet *f = two_groups(132000);
  for (uint32_t i = 0; i < f->n; i++)
    rack_set_load(f, i, gpu_load_level(0.5));
  double loss;
  rack_fleet_update(f, &loss);
  double sum = 0;
  for (uint32_t r = 0; r < f->nracks; r++) {
    double p = f->rack_power_w[r] - f->loss_w[r]; /* DC */
    double eta = rack_efficiency(&f->groups[f->group[r]], p / f->limit_w[r]);
    assert_close(f->loss_w[r], p / eta - p, 1e-12, 0);
    if (f->group[r] == 0)
      assert_close(f->loss_w[r], 0, 0, 0);
    sum += f->loss_w[r];
  }
  assert_close(loss, sum, 1e-12, 0);
  assert_true(loss > 0);
  const rack_group_spec *hgx = &f->groups[1];
  assert_close(rack_efficiency(hgx, 0.05), 0.90, 0, 0);
  assert_close(rack_efficiency(hgx, 0.35), 0.95, 1e-12, 0);
  assert_close(rack_efficiency(hgx, 0.75), 0.935, 1e-12, 0);
  assert_close(rack_efficiency(hgx, 1.2), 0.91, 0, 0);
  assert_close(rack_fleet_min_efficiency(f), 0.90, 0, 0);
  rack_fleet_destroy(f);
}

static void floor_and_reserve(void **state) {
  (void)state;
  rack_fleet *f = two_groups(132000);
  assert_close(rack_fleet_other_max_w(f), 3 * 33600.0 + 2 * 18400.0, 1e-12, 0);
  /* The hgx group's losses at its curve's lowest efficiency, 90%. */
  assert_close(rack_fleet_floor_w(f),
               3 * (33600.0 + 72 * 200.0) + 2 * (18400.0 + 32 * 200.0) / 0.9,
               1e-12, 0);
  rack_fleet_destroy(f);
}

static void empty_groups_are_refused(void **state) {
  (void)state;
  rack_group_spec g = {"none", gpu_catalog_find(&cats.gpu, "L4"),
                       0,      8,
                       1000,   0,
                       0,      NULL,
                       0,      NAN,
                       NULL,   0,
                       false,  0};
  sim_error err = {0};
  assert_null(rack_fleet_create(&g, 1, NULL, &err));
  assert_int_equal(err.code, SIM_EINVAL);
  assert_null(rack_fleet_create(&g, 0, NULL, &err));
}

/* Failing the k-th allocation, for every k until construction succeeds:
 * NULL, SIM_ENOMEM and nothing left live; then the built fleet frees all
 * it took, and a split that cannot get its scratch array fails cleanly. */
static void create_fails_cleanly(void **state) {
  (void)state;
  rack_group_spec g[2] = {
      {"nvl", gpu_catalog_find(&cats.gpu, "GB200"), 3, 72, 132000, 16800, 33600,
       NULL, 0, NAN, NULL, 0, false, 0},
      {"hgx", gpu_catalog_find(&cats.gpu, "H100-SXM"), 2, 32, 40800, 9200, 18400,
       rack_fixture_titanium, 4, NAN, NULL, 0, false, 0},
  };
  test_alloc t;
  rack_fleet *f = NULL;
  long k;
  for (k = 1; k < 1000 && f == NULL; k++) {
    test_alloc_init(&t, k);
    sim_error err = {0};
    f = rack_fleet_create(g, 2, &t.hook, &err);
    if (f == NULL) {
      if (err.code != SIM_ENOMEM || t.live != 0)
        fail_msg("allocation %ld failed: code %d, %ld blocks live", k, err.code,
                 t.live);
    }
  }
  assert_non_null(f);
  /* Each allocation of the successful run was failed once: the fleet,
   * its arrays and one name per rack. */
  assert_int_equal(k - 2, t.calls);
  assert_true(t.calls > 5);
  assert_true(t.live > 0);
  t.fail_at = t.calls + 1;
  sim_error err = {0};
  assert_int_equal(rack_fleet_split_static(f, 1e6, &err), SIM_ENOMEM);
  assert_int_equal(err.code, SIM_ENOMEM);
  t.fail_at = 0;
  assert_int_equal(rack_fleet_split_static(f, 1e6, &err), SIM_OK);
  rack_fleet_destroy(f);
  assert_int_equal(t.live, 0);
  rack_fleet_destroy(NULL);
}

/* Faults: a dark rack draws nothing at all, GPUs, other IT and losses,
 * whatever its GPUs' activities, and the others are as before; back, it
 * draws as it did. */
static void a_dark_rack_draws_nothing(void **state) {
  (void)state;
  rack_fleet *f = two_groups(132000);
  for (uint32_t i = 0; i < f->n; i++)
    rack_set_load(f, i, gpu_load_level(0.7));
  double loss0, it0 = rack_fleet_update(f, &loss0);
  double rack1 = f->rack_power_w[1], rack3 = f->rack_power_w[3];
  double loss3 = f->loss_w[3];
  f->dark[1] = f->dark[3] = true;
  double loss, it = rack_fleet_update(f, &loss);
  for (uint32_t r = 1; r <= 3; r += 2) {
    assert_true(f->rack_power_w[r] == 0 && f->gpu_power_w[r] == 0);
    assert_true(f->loss_w[r] == 0 && f->activity_mean[r] == 0);
    for (uint32_t i = f->first[r]; i < f->first[r] + f->count[r]; i++)
      assert_true(f->power_w[i] == 0);
  }
  assert_close(it, it0 - rack1 - rack3, 1e-12, 0);
  assert_close(loss, loss0 - loss3, 1e-12, 0);
  f->dark[1] = f->dark[3] = false;
  assert_close(rack_fleet_update(f, NULL), it0, 1e-15, 0);
  rack_fleet_destroy(f);
}

/* An emergency rack's GPUs go to their minimum cap, and only its: the
 * fleet's other caps stay as a split left them. */
static void emergency_caps_go_to_the_minimum(void **state) {
  (void)state;
  rack_fleet *f = two_groups(132000);
  assert_int_equal(rack_fleet_split_static(f, 1e9, NULL), SIM_OK);
  double before = f->cap_w[f->first[0]];
  f->emergency[2] = f->emergency[4] = true;
  assert_false(rack_fleet_rack_usable(f, 2) || rack_fleet_rack_usable(f, 4));
  assert_true(rack_fleet_rack_usable(f, 0));
  rack_fleet_apply_emergency(f);
  for (uint32_t r = 0; r < f->nracks; r++)
    for (uint32_t i = f->first[r]; i < f->first[r] + f->count[r]; i++) {
      double want = f->emergency[r] ? f->types[f->type[i]]->cap_min_w
                    : r < 3         ? before
                                    : f->cap_w[f->first[3]];
      assert_true(f->cap_w[i] == want);
    }
  assert_true(f->cap_w[f->first[2]] == 200);
  rack_fleet_destroy(f);
}

/* Two racks of 32 H100 as DGX-H100: four servers a rack. */
static rack_group_spec dgx_group(double limit_w) {
  const sys_spec *s = sys_catalog_find(&cats.sys, "DGX-H100");
  assert_non_null(s);
  rack_group_spec g = {"dgx",   gpu_catalog_find(&cats.gpu, "H100-SXM"),
                       2,       32,
                       limit_w, 0,
                       0,       NULL,
                       0,       NAN,
                       s,       s->host_load,
                       false,   0};
  return g;
}

static rack_fleet *make(const rack_group_spec *g) {
  return rack_fixture_fleet(g, 1);
}

/* Each server draws what sys_server_power gives for its own eight GPUs
 * (their power and mean activity, host load 30% of it), and the rack is
 * their sum: inlet power, supplies' losses and fans. A level load a
 * (gpu.h) has activity a: the share of the span it draws at full clock. */
static void a_rack_of_servers(void **state) {
  (void)state;
  rack_group_spec g = dgx_group(4 * 10200.0);
  rack_fleet *f = make(&g);
  assert_int_equal(rack_group_servers(&g), 4);
  for (uint32_t i = 0; i < f->n; i++)
    rack_set_load(
        f, i,
        gpu_load_level(0.1 + 0.8 * (double)((i / 8) % 4) / 3 + 0.01 * (i % 8)));
  double loss, it = rack_fleet_update(f, &loss);
  double wall = 0, psu = 0;
  for (uint32_t r = 0; r < f->nracks; r++) {
    double rw = 0, rl = 0, rf = 0;
    for (uint32_t k = 0; k < 4; k++) {
      double gpu = 0, act = 0;
      for (uint32_t i = f->first[r] + 8 * k; i < f->first[r] + 8 * k + 8; i++) {
        gpu += f->power_w[i];
        act += f->activity[i] / 8;
      }
      sys_power p = sys_server_power(g.system, g.gpu, gpu, act, 0.3 * act);
      rw += p.wall_w;
      rl += p.psu_loss_w;
      rf += p.fan_w;
    }
    assert_close(f->rack_power_w[r], rw, 1e-12, 0);
    assert_close(f->loss_w[r], rl, 1e-12, 0);
    assert_close(f->fan_w[r], rf, 1e-12, 0);
    wall += rw;
    psu += rl;
  }
  assert_close(it, wall, 1e-12, 0);
  assert_close(loss, psu, 1e-12, 0);
  /* At its most a rack is four DGX H100s at their 10.2 kW. */
  assert_close(rack_group_full_w(&g), 4 * 10200.0, 0.01, 0);
  rack_fleet_destroy(f);
}

/* The rack limit bounds the inlet power with the host at full activity:
 * the ceiling is the GPU power at which the rack just fits. */
static void the_limit_bounds_the_inlet(void **state) {
  (void)state;
  rack_group_spec g = dgx_group(4 * 10200.0);
  assert_close(rack_group_ceiling_w(&g), 700, 0, 0);
  g.limit_w = 30000;
  double c = rack_group_ceiling_w(&g);
  assert_true(c > 200 && c < 700);
  assert_close(rack_group_worst_w(&g, c), 30000, 1e-9, 0);
  rack_fleet *f = make(&g);
  assert_int_equal(rack_fleet_split_static(f, 1e9, NULL), SIM_OK);
  for (uint32_t i = 0; i < f->n; i++) {
    assert_close(f->cap_w[i], c, 1e-12, 0);
    rack_set_load(f, i, gpu_load_level(1));
  }
  rack_fleet_update(f, NULL);
  for (uint32_t r = 0; r < f->nracks; r++)
    assert_true(f->rack_power_w[r] <= 30000 * (1 + 1e-9));
  rack_fleet_destroy(f);
}

/* An operator's per-GPU limit (racks[].gpu_power_limit, nvidia-smi -pl)
 * bounds every cap a split writes, beneath what the rack limit allows, and
 * the rack's default limit counts its GPUs at it. */
static void the_gpu_power_limit_bounds_the_caps(void **state) {
  (void)state;
  rack_group_spec g = dgx_group(4 * 10200.0);
  double full = rack_group_full_w(&g);
  g.gpu_limit_w = 450;
  assert_close(rack_group_ceiling_w(&g), 450, 0, 0);
  double at_450 = rack_group_full_w(&g);
  assert_true(at_450 < full - 32 * 200);
  assert_close(at_450,
               4 * sys_server_power(g.system, g.gpu, 8 * 450, 1, 1).wall_w,
               1e-12, 0);
  rack_fleet *f = make(&g);
  assert_int_equal(rack_fleet_split_static(f, 1e9, NULL), SIM_OK);
  for (uint32_t i = 0; i < f->n; i++) {
    assert_close(f->cap_w[i], 450, 0, 0);
    rack_set_load(f, i, gpu_load_level(1));
  }
  rack_fleet_update(f, NULL);
  for (uint32_t i = 0; i < f->n; i++)
    assert_close(f->power_w[i], 450, 1e-12, 0);
  rack_fleet_destroy(f);
}

/* Without a system, a group's ceiling is the lower of the per-GPU limit
 * and the GPUs' share of the rack limit. */
static void without_a_system_the_lower_limit_holds(void **state) {
  (void)state;
  rack_group_spec h = {"hgx",
                       gpu_catalog_find(&cats.gpu, "H100-SXM"),
                       1,
                       8,
                       8 * 700 + 2800,
                       2300,
                       2800,
                       NULL,
                       0,
                       NAN,
                       NULL,
                       0,
                       false,
                       300};
  assert_close(rack_group_ceiling_w(&h), 300, 0, 0);
  h.limit_w = 8 * 250 + 2800;
  assert_close(rack_group_ceiling_w(&h), 250, 1e-12, 0);
  h.gpu_limit_w = 0; /* none */
  assert_close(rack_group_ceiling_w(&h), 250, 1e-12, 0);
}

/* other_power_* given with a system replace its parts and fans; its
 * supplies still turn the DC into inlet power. */
static void other_power_overrides_the_parts(void **state) {
  (void)state;
  rack_group_spec g = dgx_group(45000);
  g.other_idle_w = 9200;
  g.other_max_w = 18400;
  g.other_given = true;
  rack_fleet *f = make(&g);
  for (uint32_t i = 0; i < f->n; i++)
    rack_set_load(f, i, gpu_load_level(0.5));
  rack_fleet_update(f, NULL);
  double dc = f->gpu_power_w[0] + 9200 + 0.5 * 9200;
  assert_close(f->rack_power_w[0], 4 * sys_wall_w(g.system, dc / 4), 1e-12, 0);
  assert_close(f->fan_w[0], 0, 0, 0);
  assert_close(f->other_max_w[0], 18400, 0, 0);
  rack_fleet_destroy(f);
}

/* 36 H100 are not whole DGX H100 servers. */
static void partial_servers_are_refused(void **state) {
  (void)state;
  rack_group_spec g = dgx_group(50000);
  g.gpus_per_rack = 36;
  sim_error err = {0};
  assert_null(rack_fleet_create(&g, 1, NULL, &err));
  assert_int_equal(err.code, SIM_EINVAL);
  assert_non_null(strstr(err.msg, "not whole DGX-H100 servers of 8"));
}

/* rack_gpu_phi is gpu_load_clock_under_cap to the bit, whether the cache
 * holds the GPU's cap and load (a GPU like one before), a stale entry for
 * its slot (the cap or load moved) or another's: random caps and loads
 * drawn from few values, so most reads repeat, over several rounds. */
static void clock_cache_is_the_solve(void **state) {
  (void)state;
  rack_fleet *f = two_groups(132000);
  static const double acts[] = {0, 0.13, 0.5, 0.77, 1};
  uint64_t s = 3;
  for (int round = 0; round < 40; round++)
    for (uint32_t i = 0; i < f->n; i++) {
      s = s * 6364136223846793005ULL + 1442695040888963407ULL;
      const gpu_spec *g = f->types[f->type[i]];
      double a = acts[(s >> 33) % 5], m = acts[(s >> 40) % 5];
      f->cap_w[i] = g->cap_min_w + (g->cap_max_w - g->cap_min_w) *
                                       (double)((s >> 20) % 7) / 6;
      rack_set_load(f, i, (gpu_load){a, m, a > m ? a : m});
      double want = gpu_load_clock_under_cap(g, rack_gpu_cap_w(f, i),
                                             rack_gpu_load(f, i));
      double got = rack_gpu_phi(f, i), again = rack_gpu_phi(f, i);
      if (memcmp(&got, &want, sizeof got) != 0 || again != got)
        fail_msg("round %d, GPU %u: %.17g, the solve %.17g", round, i, got,
                 want);
    }
  rack_fleet_destroy(f);
}

/* rack_fleet_rack_sample against the three readers it stands for, to the
 * bit: every rack's runs at one load and cap, then one run of each rack
 * (at pos, from its first; -1 its last) made unlike in what the case
 * moves, or the fleet's GPUs filled; in every order of racks (the kept
 * sums), four runs a register and two. */
typedef enum {
  MOVE_NONE,
  MOVE_SM,
  MOVE_MEM,
  MOVE_BUSY,
  MOVE_CAP,
  MOVE_POWER,
  NAN_BUSY,
  THERMAL,
  CAPS_FILLED,
  POWER_FILLED
} sample_move;

typedef struct sample_case {
  const char *name;
  sample_move move;
  int pos;
} sample_case;

static const sample_case samples[] = {
    {"sample: all runs alike", MOVE_NONE, 0},
    {"sample: the second run's activity", MOVE_SM, 1},
    {"sample: a middle run's memory", MOVE_MEM, 2},
    {"sample: the last run's busy share", MOVE_BUSY, -1},
    {"sample: the last run's cap", MOVE_CAP, -1},
    {"sample: the second run's cap", MOVE_CAP, 1},
    {"sample: the last run's power", MOVE_POWER, -1},
    {"sample: a middle run's power", MOVE_POWER, 3},
    {"sample: a NaN busy share in every run", NAN_BUSY, 0},
    {"sample: a thermal cap", THERMAL, 0},
    {"sample: the GPUs' caps filled, one written", CAPS_FILLED, 0},
    {"sample: the GPUs' powers filled, one moved", POWER_FILLED, 0},
};

static void sample_move_rack(rack_fleet *f, const sample_case *c,
                             uint32_t r) {
  uint32_t q0 = f->rack_run[r], n = f->rack_run[r + 1] - q0;
  uint32_t q = q0 + (c->pos < 0 ? n - 1 : (uint32_t)c->pos % n);
  gpu_load l = rack_run_load(f, q);
  switch (c->move) {
  case MOVE_SM:
  case MOVE_MEM:
  case MOVE_BUSY:
    rack_set_run_load(f, q, (gpu_load){l.sm + (c->move == MOVE_SM) * 0.25,
                                       l.mem + (c->move == MOVE_MEM) * 0.25,
                                       l.busy - (c->move == MOVE_BUSY) * 0.5});
    break;
  case MOVE_CAP:
    rack_set_run_cap(f, q, f->run_cap_w[q] - 100);
    break;
  case MOVE_POWER:
    f->run_power_w[q] += 50;
    break;
  case NAN_BUSY:
    for (q = q0; q < q0 + n; q++)
      rack_set_run_load(f, q, (gpu_load){l.sm, l.mem, NAN});
    break;
  default:
    break;
  }
}

static void sample_matches_the_readers(void **state) {
  const sample_case *c = *state;
  rack_fleet *f = rack_fixture_capped(c->move == THERMAL ? 300 : NAN);
  for (uint32_t r = 0; r < f->nracks; r++)
    sample_move_rack(f, c, r);
  if (c->move == CAPS_FILLED) /* then a rack's last GPU's alone */
    rack_fleet_gpu_caps(f);
  if (c->move == POWER_FILLED)
    rack_fleet_gpu_power(f);
  for (uint32_t r = 0; r < f->nracks; r++) {
    uint32_t i = f->first[r] + f->count[r] - 1;
    f->cap_w[i] -= 10 * (c->move == CAPS_FILLED);
    f->power_w[i] += 20 * (c->move == POWER_FILLED);
  }
  for (int narrow = 0; narrow < 2; narrow++)
    for (uint32_t k = 0; k < 3 * f->nracks; k++) {
      uint32_t r = (k * 7 + narrow) % f->nracks;
      sim_lanes_narrow = narrow;
      rack_phi_last last = {.type = RACK_PHI_NONE};
      rack_sample_sums got = rack_fleet_rack_sample(f, r, &last);
      sim_lanes_narrow = false;
      rack_sample_sums want = {rack_fleet_rack_cap_sum(f, r),
                               rack_fleet_rack_phi_sum(f, r),
                               rack_fleet_rack_max_power_w(f, r)};
      if (memcmp(&got, &want, sizeof got) != 0)
        fail_msg("rack %u (narrow %d): %.17g %.17g %.17g, the readers "
                 "%.17g %.17g %.17g",
                 r, narrow, got.cap, got.phi, got.max_power_w, want.cap,
                 want.phi, want.max_power_w);
    }
  rack_fleet_destroy(f);
}

/* The sample's kept sums are by value and count: a rack's cap moved
 * through forty values (more than the sums kept, so some share a place)
 * gives the readers' sums each time. */
static void sample_sums_kept_by_value(void **state) {
  (void)state;
  rack_fleet *f = rack_fixture_two("H100-SXM", 32, true);
  rack_fleet_update(f, NULL); /* makes the runs */
  double base = f->types[f->type[0]]->cap_min_w;
  for (int k = 0; k < 80; k++) {
    rack_set_rack_cap(f, 0, base + k % 40);
    rack_fleet_update(f, NULL);
    rack_phi_last last = {.type = RACK_PHI_NONE};
    rack_sample_sums got = rack_fleet_rack_sample(f, 0, &last);
    double want = rack_fleet_rack_cap_sum(f, 0);
    if (memcmp(&got.cap, &want, sizeof want) != 0)
      fail_msg("cap %g: %.17g, the reader %.17g", base + k % 40, got.cap,
               want);
  }
  rack_fleet_destroy(f);
}

/* Without units (no runs: the per-GPU update), or with the runs stale,
 * the sample is the readers'. */
static void sample_without_runs(void **state) {
  (void)state;
  for (int units = 0; units < 2; units++) {
    rack_fleet *f = rack_fixture_two("H100-SXM", 32, units);
    rack_fleet_update(f, NULL);
    if (units)
      rack_set_unit_key(f, 3, 99); /* the runs stale until the next update */
    for (uint32_t i = 0; i < f->count[0]; i++) /* the GPUs' alone */
      rack_set_load(f, i, gpu_load_level(0.25));
    for (uint32_t r = 0; r < f->nracks; r++) {
      rack_phi_last last = {.type = RACK_PHI_NONE};
      rack_sample_sums got = rack_fleet_rack_sample(f, r, &last);
      rack_sample_sums want = {rack_fleet_rack_cap_sum(f, r),
                               rack_fleet_rack_phi_sum(f, r),
                               rack_fleet_rack_max_power_w(f, r)};
      assert_memory_equal(&got, &want, sizeof got);
    }
    rack_fleet_destroy(f);
  }
}

int main(void) {
  struct CMUnitTest tests[64];
  size_t n = 0;
  TEST_ADD(tests, n, layout_is_contiguous);
  TEST_ROWS(tests, n, hot_loop_matches_the_model, powers);
  TEST_ADD(tests, n, rack_sums_add_up);
  TEST_ROWS(tests, n, static_split_respects_every_bound, splits);
  TEST_ADD(tests, n, conversion_losses);
  TEST_ADD(tests, n, floor_and_reserve);
  TEST_ADD(tests, n, empty_groups_are_refused);
  TEST_ADD(tests, n, create_fails_cleanly);
  TEST_ADD(tests, n, a_dark_rack_draws_nothing);
  TEST_ADD(tests, n, emergency_caps_go_to_the_minimum);
  TEST_ADD(tests, n, a_rack_of_servers);
  TEST_ADD(tests, n, the_limit_bounds_the_inlet);
  TEST_ADD(tests, n, the_gpu_power_limit_bounds_the_caps);
  TEST_ADD(tests, n, without_a_system_the_lower_limit_holds);
  TEST_ADD(tests, n, other_power_overrides_the_parts);
  TEST_ADD(tests, n, partial_servers_are_refused);
  TEST_ADD(tests, n, clock_cache_is_the_solve);
  TEST_ROWS(tests, n, sample_matches_the_readers, samples);
  TEST_ADD(tests, n, sample_sums_kept_by_value);
  TEST_ADD(tests, n, sample_without_runs);
  return _cmocka_run_group_tests("rack", tests, n, test_catalogs_load_hardware,
                                 test_catalogs_release);
}
