/* each_world.c - the factory around one control (each_world.h) that
 * tests/control/test_control_each.c and tests/bench/bench_control_each.c
 * both run: one copy, so the benchmark times the world the test checks. */
#include "each_world.h"

#include <math.h>
#include <stdlib.h>

#include "control_nop.h"

static bool fits(void *ctx, const rack_fleet *f, const double *caps) {
  const each_world *w = ctx;
  for (size_t g = 0; g < f->ngroups; g++)
    if (caps[g] > w->fit_w[g])
      return false;
  return true;
}

static const uint32_t *gpu_slots(void *ctx) {
  return ((each_world *)ctx)->slot;
}

static void slot_units(void *ctx, const uint32_t *key, size_t n,
                       power_unit *u) {
  const each_world *w = ctx;
  for (size_t j = 0; j < n; j++) {
    if (key[j] == CONTROL_NO_SLOT)
      continue;
    u[j].cls = key[j] % 7 == 0 ? POWER_TRAINING : POWER_INFERENCE;
    u[j].weight = 1 + key[j] % 3;
    u[j].priority = key[j] % 2;
    u[j].c = w->worth[key[j]];
  }
}

/* The fleet of s's groups, its runs kept if s asks; NULL on failure. */
static rack_fleet *fleet_make(const each_world_spec *s, const gpu_catalog *cat,
                              sim_error *err) {
  const gpu_spec *gb = gpu_catalog_find(cat, "GB200");
  const gpu_spec *h = gpu_catalog_find(cat, "H100-SXM");
  if (gb == NULL || h == NULL || s->ngroups > EACH_WORLD_GROUPS) {
    sim_error_set(err, SIM_EINVAL, "no GB200 or H100-SXM, or too many groups");
    return NULL;
  }
  rack_group_spec g[EACH_WORLD_GROUPS];
  for (size_t k = 0; k < s->ngroups; k++)
    g[k] = (rack_group_spec){.name = "nvl",
                             .gpu = k == 2 ? h : gb,
                             .count = s->racks[k],
                             .gpus_per_rack = 72,
                             .limit_w = 132000,
                             .other_idle_w = 16800,
                             .other_max_w = 33600,
                             .r_th = NAN,
                             .gpu_limit_w = k == 3 ? 650 : 0};
  rack_fleet *fl = rack_fleet_create(g, s->ngroups, NULL, err);
  if (fl != NULL && s->runs && rack_fleet_keep_units(fl) != SIM_OK) {
    sim_error_set(err, SIM_ENOMEM, "keeping the fleet's runs");
    rack_fleet_destroy(fl);
    return NULL;
  }
  return fl;
}

/* The world's control over its fleet and engine, with its hooks. */
static int control_make(each_world *w, sim_error *err) {
  const each_world_spec *s = w->s;
  w->cfg =
      (power_config){.cap_w = 1e7,
                     .policy = s->policy,
                     .allocation_period_s = 0,
                     .budget = s->predict ? BUDGET_PREDICT : BUDGET_RESERVE,
                     .budget_margin = 0.05,
                     .activity_smoothing_s = NAN};
  control_hooks hk = {
      w,         fits,       control_nop_drive,          control_nop_power,
      gpu_slots, slot_units, control_nop_request_counts, NULL, NULL};
  w->c = control_create(&w->cfg, w->fl, w->e, &hk, err);
  return w->c != NULL ? SIM_OK : SIM_EINVAL;
}

each_world *each_world_make(const each_world_spec *s, const gpu_catalog *cat,
                            sim_error *err) {
  each_world *w = calloc(1, sizeof *w);
  if (w == NULL) {
    sim_error_set(err, SIM_ENOMEM, "out of memory");
    return NULL;
  }
  w->s = s;
  for (size_t k = 0; k < s->ngroups && k < EACH_WORLD_GROUPS; k++)
    w->ngpus += s->racks[k] * 72;
  w->slot = calloc(w->ngpus, sizeof *w->slot);
  w->worth = calloc(w->ngpus, sizeof *w->worth);
  w->e = sim_engine_create(NULL);
  if (w->ngpus > EACH_WORLD_GPUS || w->slot == NULL || w->worth == NULL ||
      w->e == NULL) {
    sim_error_set(err, SIM_ENOMEM, "too many GPUs, or out of memory");
    each_world_drop(w);
    return NULL;
  }
  w->fl = fleet_make(s, cat, err);
  if (w->fl == NULL || control_make(w, err) != SIM_OK) {
    each_world_drop(w);
    return NULL;
  }
  return w;
}

void each_world_drop(each_world *w) {
  if (w == NULL)
    return;
  control_destroy(w->c);
  rack_fleet_destroy(w->fl);
  sim_engine_destroy(w->e);
  free(w->slot);
  free(w->worth);
  free(w);
}

/* A number in [0, 1) from k and p, the same on every machine. */
static double mix(uint32_t k, uint32_t p) {
  uint32_t x = k * 2654435761u ^ (p + 1) * 40503u;
  x ^= x >> 15, x *= 2246822519u, x ^= x >> 13;
  return (double)(x % 1000003u) / 1000003.0;
}

/* Slots of slot_gpus GPUs (4 and 5 in turn for 4), the last 2 GPUs of
 * each rack free. */
static void world_slots(each_world *w) {
  uint32_t k = 0, left = 0, n = w->s->slot_gpus;
  for (uint32_t i = 0; i < w->ngpus; i++) {
    if (i % 72 >= 70) {
      w->slot[i] = CONTROL_NO_SLOT;
      continue;
    }
    if (left == 0)
      k++, left = n + (n == 4 && k % 2);
    left--;
    w->slot[i] = k - 1;
  }
  w->nslots = k;
}

/* The state in period p: a slot's worth and load drift period to period
 * (a few slots a period), quantized to s->classes steps so that many
 * slots share a class; each group's fit its own, some periods near the
 * floor. */
static void world_state(each_world *w, int p) {
  const each_world_spec *s = w->s;
  world_slots(w);
  for (uint32_t j = 0; j < w->nslots; j++) /* some without measured work */
    w->worth[j] = j % 11 == 0 ? 0 : 0.1 + 0.8 * floor(mix(j, p / 5) * 5) / 5;
  for (uint32_t i = 0; i < w->ngpus; i++) {
    uint32_t j = w->slot[i];
    double a = 0.1;
    if (j != CONTROL_NO_SLOT) {
      uint32_t age = (uint32_t)p / 3 + (j % 3 == (uint32_t)p % 3); /* drift */
      a = j % 13 == 0
              ? 0
              : 0.05 + 0.9 * floor(mix(j, age) * s->classes) / s->classes;
    }
    if (s->runs)
      rack_set_unit_key(w->fl, i, j == CONTROL_NO_SLOT ? 0 : j + 1);
    rack_set_load(w->fl, i, (gpu_load){a, a / 2, fmin(1, a + 0.1)});
  }
  for (size_t g = 0; g < s->ngroups; g++)
    w->fit_w[g] = 420 + 90 * mix((uint32_t)g, (uint32_t)p / 4) +
                  (g == 1 && p % 5 == 4 ? -200 : 0);
  if (s->runs)
    rack_fleet_update(w->fl, NULL);
}

const char *each_world_period(each_world *w, int p) {
  world_state(w, p);
  sim_error err = {0};
  if (control_split(w->c, &err) != SIM_OK) {
    sim_error_set(&w->err, err.code, "period %d, the split: %s", p, err.msg);
    return w->err.msg;
  }
  const control_view v = {.cap_w = w->cfg.cap_w,
                          .limit_w = w->cfg.cap_w,
                          .recap = true,
                          .dr_window_s = NAN,
                          .facility_w = 0.8 * w->cfg.cap_w};
  if (control_period(w->c, &v, 60 * SIM_SEC * p) != SIM_OK) {
    sim_error_set(&w->err, SIM_EINVAL, "period %d: %s", p,
                  sim_engine_errmsg(w->e));
    return w->err.msg;
  }
  return NULL;
}
