/* rack_fixture.c - the fleet tests' shared setup and oracles
 * (rack_fixture.h). */
#include "rack_fixture.h"

#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const rack_conv_point rack_fixture_titanium[4] = {
    {0.1, 0.90}, {0.2, 0.94}, {0.5, 0.96}, {1.0, 0.91}};

rack_fleet *rack_fixture_fleet(const rack_group_spec *g, size_t n) {
  sim_error err = {0};
  rack_fleet *f = rack_fleet_create(g, n, NULL, &err);
  if (f == NULL)
    fail_msg("%s", err.msg);
  return f;
}

rack_group_spec rack_fixture_five(int kind) {
  const sys_spec *nvl = sys_catalog_find(&cats.sys, "GB200-NVL72");
  const sys_spec *dgx = sys_catalog_find(&cats.sys, "DGX-H100");
  bool server = kind == RACK_FIXTURE_NVL_SERVER;
  if (kind == RACK_FIXTURE_DGX)
    return (rack_group_spec){.name = "dgx",
                             .gpu = gpu_catalog_find(&cats.gpu, "H100-SXM"),
                             .count = 5,
                             .gpus_per_rack = 32,
                             .limit_w = 40800,
                             .r_th = NAN,
                             .system = dgx,
                             .host_load = dgx->host_load};
  return (rack_group_spec){.name = "nvl",
                           .gpu = gpu_catalog_find(&cats.gpu, "GB200"),
                           .count = 5,
                           .gpus_per_rack = 72,
                           .limit_w = 132000,
                           .other_idle_w = 16800,
                           .other_max_w = 33600,
                           .conv = rack_fixture_titanium,
                           .nconv = 4,
                           .r_th = NAN,
                           .system = server ? nvl : NULL,
                           .host_load = server ? nvl->host_load : 0};
}

rack_fleet *rack_fixture_make(bool system) {
  rack_group_spec g =
      rack_fixture_five(system ? RACK_FIXTURE_DGX : RACK_FIXTURE_PLAIN);
  return rack_fixture_fleet(&g, 1);
}

rack_fleet *rack_fixture_two(const char *second, uint32_t per_rack,
                             bool units) {
  rack_group_spec g[2] = {rack_fixture_five(RACK_FIXTURE_PLAIN)};
  g[0].name = "a";
  g[0].count = 3;
  g[1] = g[0];
  g[1].name = "b";
  g[1].gpu = gpu_catalog_find(&cats.gpu, second);
  g[1].gpus_per_rack = per_rack;
  rack_fleet *f = rack_fixture_fleet(g, 2);
  if (units)
    assert_int_equal(rack_fleet_keep_units(f), SIM_OK);
  for (uint32_t i = 0; units && i < f->n; i++)
    rack_set_unit_key(f, i, 1 + i / 8);
  return f;
}

rack_fleet *rack_fixture_capped(double thermal_w) {
  rack_fleet *f = rack_fixture_two("H100-SXM", 32, true);
  for (uint32_t i = 0; i < f->n; i++)
    rack_set_load(f, i, gpu_load_level(0.6));
  rack_fleet_update(f, NULL); /* makes the runs */
  for (uint32_t r = 0; r < f->nracks; r++)
    rack_set_rack_cap(f, r, f->types[f->type[f->first[r]]]->cap_min_w + 150);
  if (!isnan(thermal_w))
    f->thermal_cap_w[1] = thermal_w;
  rack_fleet_update(f, NULL);
  return f;
}

double rack_fixture_uniform(unsigned *seed) {
  return (double)rand_r(seed) / RAND_MAX;
}

void rack_fixture_new_layout(rack_fleet *f, uint32_t *key, uint32_t max,
                             unsigned *seed) {
  uint32_t next = 1;
  for (uint32_t i = 0; i < f->n;) {
    uint32_t len = 1 + (uint32_t)(rack_fixture_uniform(seed) * (max - 1) + 0.5);
    uint32_t k = rack_fixture_uniform(seed) < 0.2 ? 0 : next++;
    for (uint32_t j = i; j < i + len && j < f->n; j++)
      key[j] = k;
    i += len;
  }
  for (uint32_t i = 0; i < f->n; i++)
    rack_set_unit_key(f, i, key[i]);
}

void rack_fixture_copy_caps(rack_fleet *to, rack_fleet *from) {
  rack_fleet_gpu_caps(from); /* an emergency wrote from's runs only */
  memcpy(to->cap_w, from->cap_w, from->n * sizeof(double));
  rack_fleet_caps_written(to);
  memcpy(to->thermal_cap_w, from->thermal_cap_w, from->nracks * sizeof(double));
  memcpy(to->dark, from->dark, from->nracks * sizeof(bool));
  memcpy(to->emergency, from->emergency, from->nracks * sizeof(bool));
}

void rack_fixture_copy_state(rack_fleet *to, rack_fleet *from) {
  size_t n = from->n * sizeof(double);
  memcpy(to->activity, from->activity, n);
  memcpy(to->mem, from->mem, n);
  memcpy(to->busy, from->busy, n);
  rack_fixture_copy_caps(to, from);
}

void rack_fixture_update_both(rack_fleet *ref, rack_fleet *f) {
  rack_fixture_copy_state(ref, f);
  rack_fleet_update(ref, NULL);
  rack_fleet_update(f, NULL);
}

double rack_fixture_phi_over_gpus(const rack_fleet *f, uint32_t r) {
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
  double full = f->t_idle[t] + m +
                (f->t_busy[t] * f->busy[i] + f->t_sm[t] * f->activity[i]);
  double share = (full - f->t_idle[t]) * (1 / f->t_span[t]);
  double load = (f->t_busy[t] * f->busy[i] + f->t_mem[t] * f->mem[i] +
                 f->t_sm[t] * f->activity[i]) /
                f->t_span[t];
  return (run_terms){ref->power_w[i], share < 1 ? share : 1,
                     load < 1 ? load : 1, tcap < f->cap_w[i] && full > tcap};
}

/* A server of rack r at GPU power gpu and mean load share act: its
 * system's parts, or (other_given) its share of the rack's host range
 * through its supplies. */
static sys_power server_of(const rack_fleet *f, uint32_t r, double gpu,
                           double act) {
  const rack_group_spec *g = &f->groups[f->group[r]];
  if (!g->other_given)
    return sys_server_power(g->system, g->gpu, gpu, act, g->host_load * act);
  double ns = f->count[r] / (uint32_t)g->system->gpus;
  double idle = f->other_idle_w[r], span = f->other_max_w[r] - idle;
  sys_power p = {.gpu_w = gpu, .parts_w = (idle + span * act) / ns};
  p.compute_w = p.dc_w = gpu + p.parts_w;
  p.wall_w = sys_wall_w(g->system, p.dc_w);
  p.psu_loss_w = p.wall_w - p.dc_w;
  return p;
}

rack_want rack_fixture_want_of(const rack_fleet *f, const rack_fleet *ref,
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
    sys_power sp = server_of(f, r, gpu, act);
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

void rack_fixture_assert_rack_is(const rack_fleet *f, uint32_t r, rack_want w) {
  assert_memory_equal(&f->gpu_power_w[r], &w.gpu, sizeof w.gpu);
  assert_memory_equal(&f->activity_mean[r], &w.mean, sizeof w.mean);
  assert_memory_equal(&f->rack_power_w[r], &w.rack, sizeof w.rack);
  assert_memory_equal(&f->loss_w[r], &w.loss, sizeof w.loss);
  assert_memory_equal(&f->fan_w[r], &w.fan, sizeof w.fan);
  assert_int_equal(f->throttled[r], w.held);
}

void rack_fixture_assert_racks_are(const rack_fleet *f, const rack_fleet *ref) {
  for (uint32_t r = 0; r < f->nracks; r++)
    rack_fixture_assert_rack_is(f, r, rack_fixture_want_of(f, ref, r));
}
