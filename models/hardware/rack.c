/* rack.c - the fleet of racks and GPUs (rack.h).
 *
 * Invariants: GPUs of a rack are contiguous (first .. first + count - 1),
 * racks of a group are contiguous, in the order the groups were given;
 * after rack_fleet_update every GPU's power is P(phi, L) at the largest
 * clock its cap allows, so power_w[i] <= cap_w[i] unless the cap is below
 * what the GPU draws at its lowest clock. */
#include "rack.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rack_fleet_destroy(rack_fleet *f) {
  if (f == NULL)
    return;
  const sim_allocator *a = f->alloc;
  sim_free(a, f->activity);
  sim_free(a, f->mem);
  sim_free(a, f->busy);
  sim_free(a, f->cap_w);
  sim_free(a, f->power_w);
  sim_free(a, f->rack);
  sim_free(a, f->type);
  sim_free(a, f->first);
  sim_free(a, f->count);
  sim_free(a, f->group);
  sim_free(a, f->limit_w);
  sim_free(a, f->other_idle_w);
  sim_free(a, f->other_max_w);
  sim_free(a, f->activity_mean);
  sim_free(a, f->gpu_power_w);
  sim_free(a, f->rack_power_w);
  sim_free(a, f->loss_w);
  sim_free(a, f->thermal_cap_w);
  sim_free(a, f->throttled);
  sim_free(a, f->dark);
  sim_free(a, f->emergency);
  for (uint32_t r = 0; f->names != NULL && r < f->nracks; r++)
    sim_free(a, f->names[r]);
  sim_free(a, f->names);
  sim_free(a, f->types);
  sim_free(a, f->groups);
  sim_free(a, f->t_idle);
  sim_free(a, f->t_busy);
  sim_free(a, f->t_mem);
  sim_free(a, f->t_sm);
  sim_free(a, f->t_dmin);
  sim_free(a, f->t_smin);
  sim_free(a, f->t_span);
  sim_free(a, f);
}

static int alloc_arrays(rack_fleet *f, size_t ngroups) {
  size_t n = f->n, nr = f->nracks;
  const sim_allocator *a = f->alloc;
  f->activity = sim_calloc(a, n, sizeof(double));
  f->mem = sim_calloc(a, n, sizeof(double));
  f->busy = sim_calloc(a, n, sizeof(double));
  f->cap_w = sim_calloc(a, n, sizeof(double));
  f->power_w = sim_calloc(a, n, sizeof(double));
  f->rack = sim_calloc(a, n, sizeof(uint32_t));
  f->type = sim_calloc(a, n, sizeof(uint16_t));
  f->first = sim_calloc(a, nr, sizeof(uint32_t));
  f->count = sim_calloc(a, nr, sizeof(uint32_t));
  f->group = sim_calloc(a, nr, sizeof(uint32_t));
  f->limit_w = sim_calloc(a, nr, sizeof(double));
  f->other_idle_w = sim_calloc(a, nr, sizeof(double));
  f->other_max_w = sim_calloc(a, nr, sizeof(double));
  f->activity_mean = sim_calloc(a, nr, sizeof(double));
  f->gpu_power_w = sim_calloc(a, nr, sizeof(double));
  f->rack_power_w = sim_calloc(a, nr, sizeof(double));
  f->loss_w = sim_calloc(a, nr, sizeof(double));
  f->thermal_cap_w = sim_calloc(a, nr, sizeof(double));
  f->throttled = sim_calloc(a, nr, sizeof(uint32_t));
  f->dark = sim_calloc(a, nr, sizeof(bool));
  f->emergency = sim_calloc(a, nr, sizeof(bool));
  f->names = sim_calloc(a, nr, sizeof(char *));
  f->types = sim_calloc(a, ngroups, sizeof(gpu_spec *));
  f->groups = sim_calloc(a, ngroups, sizeof(rack_group_spec));
  f->t_idle = sim_calloc(a, ngroups, sizeof(double));
  f->t_busy = sim_calloc(a, ngroups, sizeof(double));
  f->t_mem = sim_calloc(a, ngroups, sizeof(double));
  f->t_sm = sim_calloc(a, ngroups, sizeof(double));
  f->t_dmin = sim_calloc(a, ngroups, sizeof(double));
  f->t_smin = sim_calloc(a, ngroups, sizeof(double));
  f->t_span = sim_calloc(a, ngroups, sizeof(double));
  return f->activity && f->mem && f->busy && f->cap_w && f->power_w &&
         f->rack && f->type && f->first && f->count && f->group && f->limit_w &&
         f->other_idle_w && f->other_max_w && f->activity_mean &&
         f->gpu_power_w && f->rack_power_w && f->loss_w && f->thermal_cap_w &&
         f->throttled && f->dark && f->emergency && f->names && f->types &&
         f->groups && f->t_idle && f->t_busy && f->t_mem && f->t_sm &&
         f->t_dmin && f->t_smin && f->t_span;
}

/* The index of g in the fleet's type table, adding it if new. */
static uint16_t type_index(rack_fleet *f, const gpu_spec *g) {
  for (size_t t = 0; t < f->ntypes; t++)
    if (f->types[t] == g)
      return (uint16_t)t;
  size_t t = f->ntypes;
  f->types[t] = g;
  f->t_idle[t] = g->idle_w;
  f->t_busy[t] = g->busy_w;
  f->t_mem[t] = g->mem_w;
  f->t_sm[t] = gpu_sm_span(g);
  f->t_dmin[t] = gpu_dynamic_fraction(g, gpu_phi_min(g));
  f->t_smin[t] = gpu_speed_memory(g, gpu_phi_min(g));
  f->t_span[t] = g->tdp_w - g->idle_w;
  return (uint16_t)f->ntypes++;
}

static int fill_rack(rack_fleet *f, uint32_t r, uint32_t g, uint32_t k,
                     uint32_t first, uint16_t type) {
  const rack_group_spec *s = &f->groups[g];
  char name[128];
  snprintf(name, sizeof name, "%s-%u", s->name, k);
  size_t size = strlen(name) + 1;
  if ((f->names[r] = sim_alloc(f->alloc, size)) == NULL)
    return -1;
  memcpy(f->names[r], name, size);
  f->first[r] = first;
  f->count[r] = s->gpus_per_rack;
  f->group[r] = g;
  f->limit_w[r] = s->limit_w;
  f->other_idle_w[r] = s->other_idle_w;
  f->other_max_w[r] = s->other_max_w;
  f->thermal_cap_w[r] = INFINITY;
  for (uint32_t i = first; i < first + s->gpus_per_rack; i++) {
    f->rack[i] = r;
    f->type[i] = type;
    f->cap_w[i] = s->gpu_limit_w > 0 ? fmin(s->gpu->tdp_w, s->gpu_limit_w)
                                     : s->gpu->tdp_w;
  }
  return 0;
}

static int fill(rack_fleet *f) {
  uint32_t r = 0, gpu = 0;
  for (uint32_t g = 0; g < f->ngroups; g++) {
    const rack_group_spec *s = &f->groups[g];
    uint16_t type = type_index(f, s->gpu);
    for (uint32_t k = 0; k < s->count; k++, r++) {
      if (fill_rack(f, r, g, k, gpu, type) != 0)
        return -1;
      gpu += s->gpus_per_rack;
    }
  }
  return 0;
}

static int count_fleet(const rack_group_spec *groups, size_t ngroups,
                       uint64_t *racks, uint64_t *gpus, sim_error *err) {
  *racks = *gpus = 0;
  for (size_t g = 0; g < ngroups; g++) {
    if (groups[g].count == 0 || groups[g].gpus_per_rack == 0)
      return sim_error_set(err, SIM_EINVAL, "rack group '%s' is empty",
                           groups[g].name);
    *racks += groups[g].count;
    *gpus += (uint64_t)groups[g].count * groups[g].gpus_per_rack;
  }
  if (*racks == 0 || *gpus > UINT32_MAX || ngroups > UINT16_MAX)
    return sim_error_set(err, SIM_EINVAL,
                         "the fleet has %llu GPUs in %llu "
                         "racks; 1 to 4294967295 GPUs are possible",
                         (unsigned long long)*gpus, (unsigned long long)*racks);
  return SIM_OK;
}

rack_fleet *rack_fleet_create(const rack_group_spec *groups, size_t ngroups,
                              const sim_allocator *alloc, sim_error *err) {
  uint64_t racks, gpus;
  if (count_fleet(groups, ngroups, &racks, &gpus, err) != SIM_OK)
    return NULL;
  rack_fleet *f = sim_calloc(alloc, 1, sizeof *f);
  if (f == NULL) {
    sim_error_set(err, SIM_ENOMEM, "out of memory");
    return NULL;
  }
  f->alloc = alloc;
  f->n = (uint32_t)gpus;
  f->nracks = (uint32_t)racks;
  f->ngroups = ngroups;
  if (!alloc_arrays(f, ngroups) ||
      (memcpy(f->groups, groups, ngroups * sizeof *groups), fill(f)) != 0) {
    rack_fleet_destroy(f);
    sim_error_set(err, SIM_ENOMEM, "out of memory for %llu GPUs",
                  (unsigned long long)gpus);
    return NULL;
  }
  rack_fleet_update(f, NULL);
  return f;
}

/* One rack's GPUs: P = min(P(1, L), cap, thermal cap), but never below
 * what the lowest clock draws, P(phi_min, L) (gpu.h). No pow(): the clock
 * itself is only needed for speed and telemetry (rack_gpu_phi). A rack
 * holds one GPU type, so its constants leave the loop, and the
 * branch-free body lets the compiler vectorise it. */
static void update_rack(rack_fleet *f, uint32_t r) {
  uint32_t first = f->first[r], end = first + f->count[r];
  uint16_t t = f->type[first];
  double idle = f->t_idle[t], pb = f->t_busy[t], pm = f->t_mem[t];
  double ps = f->t_sm[t], dmin = f->t_dmin[t], smin = f->t_smin[t];
  double inv_span = 1 / f->t_span[t];
  double tcap = f->thermal_cap_w[r];
  const double *act = f->activity, *mem = f->mem, *busy = f->busy;
  const double *cap = f->cap_w;
  double *power = f->power_w;
  double gsum = 0, asum = 0;
  uint32_t held = 0;
  for (uint32_t i = first; i < end; i++) {
    double base = idle + pb * busy[i], m = pm * mem[i], s = ps * act[i];
    double full = base + m + s, floor = base + m * smin + s * dmin;
    double c = cap[i] < tcap ? cap[i] : tcap;
    double capped = c > floor ? c : floor;
    double p = full <= c ? full : capped;
    held += tcap < cap[i] && full > tcap;
    power[i] = p;
    gsum += p;
    double share = (full - idle) * inv_span; /* can ask above the TDP */
    asum += share < 1 ? share : 1;
  }
  double mean = asum / f->count[r];
  f->throttled[r] = held;
  f->activity_mean[r] = mean;
  f->gpu_power_w[r] = gsum;
  f->rack_power_w[r] = gsum + f->other_idle_w[r] +
                       (f->other_max_w[r] - f->other_idle_w[r]) * mean;
}

double rack_efficiency(const rack_group_spec *g, double load) {
  const rack_conv_point *c = g->conv;
  size_t n = g->nconv;
  if (n == 0)
    return 1;
  if (load <= c[0].load)
    return c[0].efficiency;
  for (size_t i = 1; i < n; i++)
    if (load <= c[i].load) {
      double w = (load - c[i - 1].load) / (c[i].load - c[i - 1].load);
      return c[i - 1].efficiency + w * (c[i].efficiency - c[i - 1].efficiency);
    }
  return c[n - 1].efficiency;
}

double rack_fleet_min_efficiency(const rack_fleet *f) {
  double lo = 1;
  for (size_t g = 0; g < f->ngroups; g++)
    for (size_t i = 0; i < f->groups[g].nconv; i++)
      lo = fmin(lo, f->groups[g].conv[i].efficiency);
  return lo;
}

/* A rack whose PDU tripped: nothing of it draws. */
static void darken_rack(rack_fleet *f, uint32_t r) {
  uint32_t first = f->first[r], end = first + f->count[r];
  for (uint32_t i = first; i < end; i++)
    f->power_w[i] = 0;
  f->throttled[r] = 0;
  f->activity_mean[r] = 0;
  f->gpu_power_w[r] = 0;
  f->rack_power_w[r] = 0;
}

double rack_fleet_update(rack_fleet *f, double *loss_w) {
  double total = 0, losses = 0;
  for (uint32_t r = 0; r < f->nracks; r++) {
    if (f->dark[r]) {
      darken_rack(f, r);
      f->loss_w[r] = 0;
      continue;
    }
    update_rack(f, r);
    const rack_group_spec *g = &f->groups[f->group[r]];
    double p = f->rack_power_w[r];
    double eta = rack_efficiency(g, p / f->limit_w[r]);
    f->loss_w[r] = p / eta - p;
    total += p;
    losses += f->loss_w[r];
  }
  if (loss_w != NULL)
    *loss_w = losses;
  return total;
}

double rack_gpu_phi(const rack_fleet *f, uint32_t i) {
  double cap = fmin(f->cap_w[i], f->thermal_cap_w[f->rack[i]]);
  return gpu_load_clock_under_cap(f->types[f->type[i]], cap,
                                  rack_gpu_load(f, i));
}

double rack_fleet_other_max_w(const rack_fleet *f) {
  double sum = 0;
  for (uint32_t r = 0; r < f->nracks; r++)
    sum += f->other_max_w[r];
  return sum;
}

double rack_fleet_floor_w(const rack_fleet *f) {
  double sum = rack_fleet_other_max_w(f);
  for (size_t g = 0; g < f->ngroups; g++)
    sum += (double)f->groups[g].count * f->groups[g].gpus_per_rack *
           f->groups[g].gpu->cap_min_w;
  return sum;
}

/* The highest cap a GPU of group g may have: its own maximum, the
 * operator's limit, or its share of what the rack limit leaves after other
 * IT power at full activity. */
double rack_group_gpu_ceiling(const rack_group_spec *s) {
  double share = (s->limit_w - s->other_max_w) / s->gpus_per_rack;
  double limit = s->gpu_limit_w > 0 ? s->gpu_limit_w : INFINITY;
  return fmin(fmin(s->gpu->cap_max_w, limit), share);
}

#define group_ceiling rack_group_gpu_ceiling

static double group_cap(const rack_group_spec *s, double frac) {
  double cap = frac * s->gpu->tdp_w;
  return fmax(s->gpu->cap_min_w, fmin(group_ceiling(s), cap));
}

static void group_caps(const rack_fleet *f, double frac, double *caps) {
  for (size_t g = 0; g < f->ngroups; g++)
    caps[g] = group_cap(&f->groups[g], frac);
}

double rack_fleet_gpu_total(const rack_fleet *f, const double *group_caps) {
  double sum = 0;
  for (size_t g = 0; g < f->ngroups; g++)
    sum +=
        (double)f->groups[g].count * f->groups[g].gpus_per_rack * group_caps[g];
  return sum;
}

static int check_ceilings(const rack_fleet *f, double *frac_max,
                          sim_error *err) {
  *frac_max = 0;
  for (size_t g = 0; g < f->ngroups; g++) {
    const rack_group_spec *s = &f->groups[g];
    double ceiling = group_ceiling(s);
    if (ceiling < s->gpu->cap_min_w)
      return sim_error_set(err, SIM_EINPUT,
                           "rack group '%s': the rack limit %.0f W leaves "
                           "%.0f W per GPU, below the %s's minimum cap %.0f W",
                           s->name, s->limit_w, ceiling, s->gpu->name,
                           s->gpu->cap_min_w);
    *frac_max = fmax(*frac_max, ceiling / s->gpu->tdp_w);
  }
  return SIM_OK;
}

static bool fits_at(const rack_fleet *f, double frac, rack_fits_fn fits,
                    void *ctx, double *caps) {
  group_caps(f, frac, caps);
  return fits(ctx, f, caps);
}

/* fits is monotone in the share, so bisection finds the largest share that
 * fits; keeping the lower end guarantees it does. */
static double largest_share(const rack_fleet *f, double hi, rack_fits_fn fits,
                            void *ctx, double *caps) {
  double lo = 0;
  if (fits_at(f, hi, fits, ctx, caps))
    return hi;
  for (int i = 0; i < 200; i++) {
    double mid = 0.5 * (lo + hi);
    if (mid <= lo || mid >= hi)
      break;
    if (fits_at(f, mid, fits, ctx, caps))
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

int rack_fleet_split(rack_fleet *f, rack_fits_fn fits, void *ctx,
                     sim_error *err) {
  double hi, *caps = sim_calloc(f->alloc, f->ngroups, sizeof *caps);
  if (caps == NULL)
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  int rc = check_ceilings(f, &hi, err);
  if (rc == SIM_OK && !fits_at(f, 0, fits, ctx, caps))
    rc = sim_error_set(err, SIM_EINPUT,
                       "even every GPU at its minimum cap (%.0f W in all) "
                       "does not fit",
                       rack_fleet_gpu_total(f, caps));
  if (rc == SIM_OK)
    group_caps(f, largest_share(f, hi, fits, ctx, caps), caps);
  for (uint32_t r = 0; rc == SIM_OK && r < f->nracks; r++)
    for (uint32_t i = f->first[r]; i < f->first[r] + f->count[r]; i++)
      f->cap_w[i] = caps[f->group[r]];
  sim_free(f->alloc, caps);
  return rc;
}

static bool within_budget(void *ctx, const rack_fleet *f, const double *caps) {
  return rack_fleet_gpu_total(f, caps) <= *(const double *)ctx;
}

int rack_fleet_split_static(rack_fleet *f, double gpu_budget_w,
                            sim_error *err) {
  return rack_fleet_split(f, within_budget, &gpu_budget_w, err);
}

void rack_fleet_cap_all_min(rack_fleet *f) {
  for (uint32_t i = 0; i < f->n; i++)
    f->cap_w[i] = f->types[f->type[i]]->cap_min_w;
}

void rack_fleet_apply_emergency(rack_fleet *f) {
  for (uint32_t r = 0; r < f->nracks; r++) {
    if (!f->emergency[r])
      continue;
    double lo = f->types[f->type[f->first[r]]]->cap_min_w;
    for (uint32_t i = f->first[r]; i < f->first[r] + f->count[r]; i++)
      f->cap_w[i] = lo;
  }
}
