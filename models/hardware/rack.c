/* rack.c - the fleet of racks and GPUs (rack.h).
 *
 * Invariants: GPUs of a rack are contiguous (first .. first + count - 1),
 * racks of a group are contiguous, in the order the groups were given;
 * after rack_fleet_update every GPU's power is P(phi, L) at the largest
 * clock its cap allows, so power_w[i] <= cap_w[i] unless the cap is below
 * what the GPU draws at its lowest clock. */
#include "rack.h"
#include "bits.h"
#include "rack_internal.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The fleet's arrays by what they index: GPUs, racks, groups. */
static void free_per_gpu(rack_fleet *f) {
  const sim_allocator *a = f->alloc;
  sim_free(a, f->activity);
  sim_free(a, f->mem);
  sim_free(a, f->busy);
  sim_free(a, f->cap_w);
  sim_free(a, f->power_w);
  sim_free(a, f->rack);
  sim_free(a, f->type);
}

static void free_per_rack(rack_fleet *f) {
  const sim_allocator *a = f->alloc;
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
  sim_free(a, f->fan_w);
  sim_free(a, f->thermal_cap_w);
  sim_free(a, f->throttled);
  sim_free(a, f->dark);
  sim_free(a, f->emergency);
  for (uint32_t r = 0; f->names != NULL && r < f->nracks; r++)
    sim_free(a, f->names[r]);
  sim_free(a, f->names);
}

static void free_per_group(rack_fleet *f) {
  const sim_allocator *a = f->alloc;
  sim_free(a, f->types);
  sim_free(a, f->groups);
  sim_free(a, f->t_idle);
  sim_free(a, f->t_busy);
  sim_free(a, f->t_mem);
  sim_free(a, f->t_sm);
  sim_free(a, f->t_dmin);
  sim_free(a, f->t_smin);
  sim_free(a, f->t_span);
  sim_free(a, f->ceiling_w);
}

static rack_phi_gate *phi_gate_create(const sim_allocator *a) {
  rack_phi_gate *g = sim_calloc(a, 1, sizeof *g);
  for (size_t k = 0; g != NULL && k < RACK_PHI_RECENT; k++)
    g->recent[k].type = UINT32_MAX;
  return g;
}

static rack_phi_memo *phi_memo_create(const sim_allocator *a, uint32_t gpus) {
  size_t n = (size_t)1 << rack__phi_memo_bits(gpus);
  rack_phi_memo *m = sim_calloc(a, n, sizeof *m);
  for (size_t k = 0; m != NULL && k < n; k++)
    m[k].type = UINT32_MAX;
  return m;
}

void rack_fleet_destroy(rack_fleet *f) {
  if (f == NULL)
    return;
  sim_free(f->alloc, f->phi_memo);
  sim_free(f->alloc, f->phi_gate);
  sim_free(f->alloc, f->phi_sum);
  sim_free(f->alloc, f->cap_sum);
  sim_free(f->alloc, f->sample_kept);
  sim_free(f->alloc, f->worst_memos);
  sim_free(f->alloc, f->worst_memo);
  rack__free_units(f);
  free_per_gpu(f);
  free_per_rack(f);
  free_per_group(f);
  sim_free(f->alloc, f);
}

static bool alloc_per_gpu(rack_fleet *f) {
  size_t n = f->n;
  const sim_allocator *a = f->alloc;
  f->activity = sim_calloc(a, n, sizeof(double));
  f->mem = sim_calloc(a, n, sizeof(double));
  f->busy = sim_calloc(a, n, sizeof(double));
  f->cap_w = sim_calloc(a, n, sizeof(double));
  f->power_w = sim_calloc(a, n, sizeof(double));
  f->rack = sim_calloc(a, n, sizeof(uint32_t));
  f->type = sim_calloc(a, n, sizeof(uint16_t));
  return f->activity && f->mem && f->busy && f->cap_w && f->power_w &&
         f->rack && f->type;
}

static bool alloc_per_rack(rack_fleet *f) {
  size_t nr = f->nracks;
  const sim_allocator *a = f->alloc;
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
  f->fan_w = sim_calloc(a, nr, sizeof(double));
  f->thermal_cap_w = sim_calloc(a, nr, sizeof(double));
  f->throttled = sim_calloc(a, nr, sizeof(uint32_t));
  f->dark = sim_calloc(a, nr, sizeof(bool));
  f->emergency = sim_calloc(a, nr, sizeof(bool));
  f->names = sim_calloc(a, nr, sizeof(char *));
  return f->first && f->count && f->group && f->limit_w && f->other_idle_w &&
         f->other_max_w && f->activity_mean && f->gpu_power_w &&
         f->rack_power_w && f->loss_w && f->fan_w && f->thermal_cap_w &&
         f->throttled && f->dark && f->emergency && f->names;
}

static bool alloc_per_group(rack_fleet *f, size_t ngroups) {
  const sim_allocator *a = f->alloc;
  f->types = sim_calloc(a, ngroups, sizeof(gpu_spec *));
  f->groups = sim_calloc(a, ngroups, sizeof(rack_group_spec));
  f->t_idle = sim_calloc(a, ngroups, sizeof(double));
  f->t_busy = sim_calloc(a, ngroups, sizeof(double));
  f->t_mem = sim_calloc(a, ngroups, sizeof(double));
  f->t_sm = sim_calloc(a, ngroups, sizeof(double));
  f->t_dmin = sim_calloc(a, ngroups, sizeof(double));
  f->t_smin = sim_calloc(a, ngroups, sizeof(double));
  f->t_span = sim_calloc(a, ngroups, sizeof(double));
  f->ceiling_w = sim_calloc(a, ngroups, sizeof(double));
  return f->types && f->groups && f->t_idle && f->t_busy && f->t_mem &&
         f->t_sm && f->t_dmin && f->t_smin && f->t_span && f->ceiling_w;
}

/* Every array, each allocated whatever the others did (the caller frees
 * what was got when any failed). */
static int alloc_arrays(rack_fleet *f, size_t ngroups) {
  bool gpus = alloc_per_gpu(f);
  bool racks = alloc_per_rack(f);
  bool groups = alloc_per_group(f, ngroups);
  return gpus && racks && groups;
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

/* A rack's host DC power at idle and at full activity: the group's
 * other_* without a system (or when given with one), else its servers'
 * parts and fans with the GPUs idle and at TDP. Linear in between is how
 * power control predicts it (control.c) and how a job's waveform carries
 * it (training_iteration.c); the fleet's own power is the system's model. */
static void host_range(const rack_group_spec *s, double *idle, double *max) {
  const sys_spec *sys = s->system;
  *idle = s->other_idle_w;
  *max = s->other_max_w;
  if (sys == NULL || s->other_given)
    return;
  double ns = rack_group_servers(s), per = (double)sys->gpus;
  double lo = sys_parts_w(sys, 0, 0), hi = sys_parts_w(sys, 1, s->host_load);
  *idle = ns * (lo + sys_fan_w(sys, s->gpu, per * s->gpu->idle_w + lo));
  *max = ns * (hi + sys_fan_w(sys, s->gpu, per * s->gpu->tdp_w + hi));
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
  host_range(s, &f->other_idle_w[r], &f->other_max_w[r]);
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
    const sys_spec *sys = groups[g].system;
    if (sys != NULL && groups[g].gpus_per_rack % sys->gpus != 0)
      return sim_error_set(err, SIM_EINVAL,
                           "rack group '%s': %u GPUs are not whole %s "
                           "servers of %lld",
                           groups[g].name, groups[g].gpus_per_rack, sys->name,
                           (long long)sys->gpus);
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
      (f->phi_memo = phi_memo_create(alloc, f->n)) == NULL ||
      (f->phi_gate = phi_gate_create(alloc)) == NULL ||
      (f->phi_sum = sim_calloc(alloc, 1, sizeof *f->phi_sum)) == NULL ||
      (f->cap_sum = sim_calloc(alloc, 1, sizeof *f->cap_sum)) == NULL ||
      (f->sample_kept = sim_calloc(alloc, RACK_SAMPLE_KEPT,
                                   sizeof *f->sample_kept)) == NULL ||
      (f->worst_memos = sim_calloc(alloc, ngroups,
                                   sizeof *f->worst_memos)) == NULL ||
      (f->worst_memo = sim_calloc(alloc, ngroups,
                                  sizeof *f->worst_memo)) == NULL ||
      (memcpy(f->groups, groups, ngroups * sizeof *groups), fill(f)) != 0) {
    rack_fleet_destroy(f);
    sim_error_set(err, SIM_ENOMEM, "out of memory for %llu GPUs",
                  (unsigned long long)gpus);
    return NULL;
  }
  rack__worst_memos_share(f);
  for (size_t g = 0; g < ngroups; g++)
    f->ceiling_w[g] = rack_group_ceiling_w(&f->groups[g]);
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
    double m = pm * mem[i], s = pb * busy[i] + ps * act[i];
    double full = idle + m + s, floor = idle + m * smin + s * dmin;
    double c = rack_cap_min(cap[i], tcap);
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
  if (f->groups[f->group[r]].system != NULL)
    rack__system_rack(f, r);
  else
    rack__plain_rack(f, r);
}

double rack_fleet_min_efficiency(const rack_fleet *f) {
  double lo = 1;
  for (size_t g = 0; g < f->ngroups; g++)
    lo = fmin(lo, rack_group_min_efficiency(&f->groups[g]));
  return lo;
}

double rack_group_full_w(const rack_group_spec *g) {
  double tdp = g->gpu->tdp_w, ns = rack_group_servers(g);
  double most = g->gpu_limit_w > 0 ? fmin(tdp, g->gpu_limit_w) : tdp;
  if (g->system == NULL)
    return g->gpus_per_rack * most + g->other_max_w;
  if (g->other_given)
    return rack_group_worst_w(g, most);
  if (most < tdp) /* GPUs held at the operator's limit, the host at its most */
    return ns *
           sys_server_power(g->system, g->gpu, g->system->gpus * most, 1, 1)
               .wall_w;
  return ns * sys_full_power(g->system, g->gpu).wall_w;
}

/* The largest per-GPU power whose rack, host at full activity, fits the
 * limit at its inlet: worst_w is monotone, so bisect, keeping the end
 * that fits. */
static double system_ceiling(const rack_group_spec *g) {
  double lo = 0, hi = g->gpu->cap_max_w;
  if (rack_group_worst_w(g, hi) <= g->limit_w)
    return hi;
  if (rack_group_worst_w(g, lo) > g->limit_w)
    return -1;
  for (int i = 0; i < 100 && hi - lo > 1e-9; i++) {
    double mid = 0.5 * (lo + hi);
    if (rack_group_worst_w(g, mid) <= g->limit_w)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

double rack_group_ceiling_w(const rack_group_spec *g) {
  double limit = g->gpu_limit_w > 0 ? g->gpu_limit_w : INFINITY;
  if (g->system != NULL)
    return fmin(limit, system_ceiling(g));
  double share = (g->limit_w - g->other_max_w) / g->gpus_per_rack;
  return fmin(fmin(g->gpu->cap_max_w, limit), share);
}

/* A rack whose PDU tripped: nothing of it draws. */
double rack_fleet_update(rack_fleet *f, double *loss_w) {
  double total = 0, losses = 0;
  if (f->unit_key != NULL && f->runs_stale)
    rack__build_runs(f);
  f->power_unfilled = f->unit_key != NULL;
  if (f->unit_key != NULL)
    rack__update_all_runs(f, &total, &losses);
  for (uint32_t r = 0; f->unit_key == NULL && r < f->nracks; r++) {
    if (f->dark[r]) {
      rack__darken(f, r);
      continue;
    }
    update_rack(f, r);
    total += f->rack_power_w[r];
    losses += f->loss_w[r];
  }
  /* The writers' invariant (rack.h): a run's GPUs alike. Debug builds
   * only, as it reads every GPU; the index helps whoever breaks it. */
  assert(rack_fleet_first_unlike(f) == RACK_NO_GPU);
  if (loss_w != NULL)
    *loss_w = losses;
  return total;
}

double rack_gpu_phi(const rack_fleet *f, uint32_t i) {
  return rack__phi_at(f, f->type[i], rack_gpu_cap_w(f, i), rack_gpu_load(f, i));
}

/* rack__phi_at, in line in rack__run_phi_remember (at the request level's
 * peak nearly every replica's clock; the call passed l through memory). */
static inline double phi_memo_at(const rack_fleet *f, uint32_t type, double cap,
                                 gpu_load l) {
  if (f->phi_memo == NULL)
    return gpu_load_clock_under_cap(f->types[type], cap, l);
  rack_phi_memo *at[2];
  if (rack__memo_find(f, type, cap, l, at, true))
    return at[0]->phi;
  double phi = gpu_load_clock_under_cap(f->types[type], cap, l);
  rack__memo_keep(f, at, type, cap, l, phi, true);
  return phi;
}

double rack__phi_at(const rack_fleet *f, uint32_t type, double cap,
                    gpu_load l) {
  return phi_memo_at(f, type, cap, l);
}

/* sum + phi added n times, in order. From 0 (+0) the answer depends on
 * phi and n alone, and racks alike in their clocks ask the same (a
 * rack's 72 GPUs at one clock): the last one is kept (f->phi_sum), the
 * same bits without the adds. */
static double add_repeat(const rack_fleet *f, double sum, double phi,
                         uint32_t n) {
  struct rack_phi_sum *m = f->phi_sum;
  bool from_zero = sim_bits(sum) == 0;
  if (n == 0) /* nothing to add (a rack's start): the kept sum stays */
    return sum;
  if (from_zero && m->n == n && sim_bits(m->phi) == sim_bits(phi))
    return m->sum;
  double s = sum;
  for (uint32_t k = 0; k < n; k++)
    s += phi;
  if (from_zero)
    *m = (struct rack_phi_sum){phi, s, n};
  return s;
}

/* Runs j, j + 1, ... before end at cap and load l (compared as doubles,
 * as the GPUs' loop compares them): their GPUs added to *reps; returns
 * the first run unlike (end: none). No call in it, so the arrays and
 * the run's inputs stay in registers. */
static uint32_t runs_like(const rack_fleet *f, uint32_t j, uint32_t end,
                          double cap, gpu_load l, uint32_t *reps) {
  const double *caps = f->run_cap_w, *sm = f->run_sm, *mem = f->run_mem;
  const double *busy = f->run_busy;
  const uint32_t *len = f->run_len;
  uint32_t n = *reps;
  for (; j < end; j++) {
    if (caps[j] != cap || sm[j] != l.sm || mem[j] != l.mem || busy[j] != l.busy)
      break;
    n += len[j];
  }
  *reps = n;
  return j;
}

/* rack_fleet_rack_phi_sum with the runs fresh: the GPUs' loop below run
 * by run (a run's GPUs are alike), each stretch of runs like the one
 * that opens it taken by runs_like: the same clocks, the same adds. The
 * stretches' clocks a batch at a time (rack__phis_at: at the request
 * level's peak nearly all are new, and solved together), then added in
 * order. */
static double runs_phi_sum(const rack_fleet *f, uint32_t r) {
  double sum = 0, cap[RACK_RUNS_BATCH], phi[RACK_RUNS_BATCH];
  gpu_load l[RACK_RUNS_BATCH];
  uint16_t type[RACK_RUNS_BATCH];
  uint32_t reps[RACK_RUNS_BATCH], first[RACK_RUNS_BATCH];
  uint32_t j = f->rack_run[r], end = f->rack_run[r + 1];
  while (j < end) { /* the clocks of up to a batch of stretches at once */
    uint32_t n = 0;
    for (; j < end && n < RACK_RUNS_BATCH; n++) {
      double run_cap = f->run_cap_w[j];
      first[n] = j;
      l[n] = rack_run_load(f, j);
      type[n] = f->run_type[j];
      cap[n] = rack_cap_min(run_cap, f->thermal_cap_w[r]);
      reps[n] = f->run_len[j];
      j = runs_like(f, j + 1, end, run_cap, l[n], &reps[n]);
    }
    if (f->known_n > 0) /* a sample's, the replicas' solved ahead */
      rack__phis_known_at(f, n, first, type, cap, l, phi);
    else
      rack__phis_at(f, n, type, cap, l, phi);
    for (uint32_t k = 0; k < n; k++)
      sum = add_repeat(f, sum, phi[k], reps[k]);
  }
  return sum;
}

double rack_fleet_rack_phi_sum(const rack_fleet *f, uint32_t r) {
  if (rack_fleet_runs_fresh(
          f)) /* the runs' caps and loads: the GPUs' may lag */
    return runs_phi_sum(f, r);
  assert(!f->loads_unfilled);
  double sum = 0, phi = 0, last_cap = NAN;
  gpu_load last = {NAN, NAN, NAN};
  uint32_t reps = 0; /* GPUs at phi not yet added */
  for (uint32_t i = f->first[r]; i < f->first[r] + f->count[r]; i++) {
    double cap = f->cap_w[i];
    if (cap != last_cap || f->activity[i] != last.sm || f->mem[i] != last.mem ||
        f->busy[i] != last.busy) {
      sum = add_repeat(f, sum, phi, reps);
      reps = 0;
      last = (gpu_load){f->activity[i], f->mem[i], f->busy[i]};
      phi = rack__phi_at(f, f->type[i], rack_cap_min(cap, f->thermal_cap_w[r]),
                         last);
      last_cap = cap;
    }
    reps++;
  }
  return add_repeat(f, sum, phi, reps);
}

double rack__phi_remember(const rack_fleet *f, uint32_t i,
                          rack_phi_last *last) {
  gpu_load l = rack_gpu_load(f, i);
  *last = (rack_phi_last){rack_gpu_cap_w(f, i), l.sm,      l.mem, l.busy,
                          rack_gpu_phi(f, i),   f->type[i]};
  return last->phi;
}

double rack__run_phi_remember(const rack_fleet *f, uint32_t q, uint32_t rack,
                              rack_phi_last *last) {
  uint16_t t = f->run_type[q];
  gpu_load l = rack_run_load(f, q);
  double cap = rack_run_cap_w(f, q, rack);
  *last =
      (rack_phi_last){cap, l.sm, l.mem, l.busy, phi_memo_at(f, t, cap, l), t};
  return last->phi;
}

double rack_fleet_other_max_w(const rack_fleet *f) {
  double sum = 0;
  for (uint32_t r = 0; r < f->nracks; r++)
    sum += f->other_max_w[r];
  return sum;
}

double rack_fleet_floor_w(const rack_fleet *f) {
  double sum = 0;
  for (size_t g = 0; g < f->ngroups; g++)
    sum += (double)f->groups[g].count *
           rack_group_worst_w(&f->groups[g], f->groups[g].gpu->cap_min_w);
  return sum;
}

/* The cap a GPU of group g gets at a share of its TDP: within its range
 * and what the rack limit leaves it (rack_group_ceiling_w). */
static double group_cap(const rack_fleet *f, size_t g, double frac) {
  const rack_group_spec *s = &f->groups[g];
  double cap = frac * s->gpu->tdp_w;
  return fmax(s->gpu->cap_min_w, fmin(f->ceiling_w[g], cap));
}

static void group_caps(const rack_fleet *f, double frac, double *caps) {
  for (size_t g = 0; g < f->ngroups; g++)
    caps[g] = group_cap(f, g, frac);
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
    double ceiling = f->ceiling_w[g];
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
  if (rc == SIM_OK)
    rack_set_group_caps(f, caps);
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
  for (uint32_t r = 0; r < f->nracks; r++) /* a rack is of one type */
    rack_set_rack_cap(f, r, f->types[f->type[f->first[r]]]->cap_min_w);
}

void rack_fleet_apply_emergency(rack_fleet *f) {
  for (uint32_t r = 0; r < f->nracks; r++)
    if (f->emergency[r])
      rack_set_rack_cap(f, r, f->types[f->type[f->first[r]]]->cap_min_w);
}
