/* rack_runs.c - the fleet's units (rack.h): runs of GPUs that share their
 * load and cap, and the racks' update run by run.
 *
 * This is a deliberate change of outputs in their last bits against the
 * per-GPU update (rack.c update_rack): a run of k GPUs at power p adds k p
 * to its rack's sum, where the GPU-by-GPU loop added p k times, which
 * rounds differently (a relative 1e-16 or so a sum; test_rack holds the
 * two within 1e-13). Each GPU's own power is the same bits either way. */
#include <string.h>

#include "rack_internal.h"

void rack__free_units(rack_fleet *f) {
  const sim_allocator *a = f->alloc;
  sim_free(a, f->unit_key);
  sim_free(a, f->run_first);
  sim_free(a, f->run_len);
  sim_free(a, f->rack_run);
  sim_free(a, f->run_power_w);
  sim_free(a, f->gpu_run);
  f->gpu_run = NULL;
  f->unit_key = f->run_first = f->run_len = f->rack_run = NULL;
  f->run_power_w = NULL;
}

int rack_fleet_keep_units(rack_fleet *f) {
  if (f->unit_key != NULL)
    return SIM_OK;
  const sim_allocator *a = f->alloc;
  f->unit_key = sim_calloc(a, f->n, sizeof *f->unit_key);
  f->run_first = sim_calloc(a, f->n, sizeof *f->run_first);
  f->run_len = sim_calloc(a, f->n, sizeof *f->run_len);
  f->rack_run = sim_calloc(a, (size_t)f->nracks + 1, sizeof *f->rack_run);
  f->run_power_w = sim_calloc(a, f->n, sizeof *f->run_power_w);
  f->gpu_run = sim_calloc(a, f->n, sizeof *f->gpu_run);
  if (!f->unit_key || !f->run_first || !f->run_len || !f->rack_run ||
      !f->run_power_w || !f->gpu_run) {
    rack__free_units(f);
    return SIM_ENOMEM;
  }
  f->runs_stale = true;
  return SIM_OK;
}

/* GPU j like GPU i in key and cap (their loads not yet filled). */
static bool gpu_keyed_alike(const rack_fleet *f, uint32_t i, uint32_t j) {
  return f->unit_key[i] == f->unit_key[j] &&
         memcmp(&f->cap_w[i], &f->cap_w[j], sizeof(double)) == 0;
}

/* GPU j like GPU i: key, load and cap, to the bit. */
static bool gpu_alike(const rack_fleet *f, uint32_t i, uint32_t j) {
  return gpu_keyed_alike(f, i, j) &&
         memcmp(&f->activity[i], &f->activity[j], sizeof(double)) == 0 &&
         memcmp(&f->mem[i], &f->mem[j], sizeof(double)) == 0 &&
         memcmp(&f->busy[i], &f->busy[j], sizeof(double)) == 0;
}

/* Runs break at every rack, every server of a system rack, every change
 * of key and every GPU unlike the one before (a run only ever merges
 * GPUs the per-GPU update would give the same power). */
void rack__build_runs(rack_fleet *f) {
  uint32_t q = 0;
  rack_fleet_gpu_loads(f); /* filled when the keys changed; to be sure */
  for (uint32_t r = 0; r < f->nracks; r++) {
    const rack_group_spec *g = &f->groups[f->group[r]];
    uint32_t per = g->system != NULL ? (uint32_t)g->system->gpus : f->count[r];
    uint32_t first = f->first[r], end = first + f->count[r];
    f->rack_run[r] = q;
    for (uint32_t i = first; i < end; i++) {
      if (i == first || (i - first) % per == 0 || !gpu_alike(f, i - 1, i)) {
        f->run_first[q] = i;
        f->run_len[q++] = 0;
      }
      f->run_len[q - 1]++;
      f->gpu_run[i] = q - 1;
    }
  }
  f->rack_run[f->nracks] = q;
  f->nruns = q;
  f->runs_stale = false;
  f->runs_made++;
}

uint32_t rack_fleet_first_unlike(const rack_fleet *f) {
  for (uint32_t q = 0; f->unit_key != NULL && q < f->nruns; q++)
    for (uint32_t k = 1; k < f->run_len[q]; k++) {
      uint32_t i = f->run_first[q], j = i + k;
      bool alike = f->loads_unfilled ? gpu_keyed_alike(f, i, j)
                                     : gpu_alike(f, i, j);
      if (!alike || f->gpu_run[j] != q ||
          (!f->power_unfilled &&
           memcmp(&f->power_w[i], &f->power_w[j], sizeof(double)) != 0))
        return j;
    }
  return RACK_NO_GPU;
}

const double *rack_fleet_gpu_power(rack_fleet *f) {
  for (uint32_t q = 0; f->power_unfilled && q < f->nruns; q++)
    for (uint32_t j = f->run_first[q]; j < f->run_first[q] + f->run_len[q]; j++)
      f->power_w[j] = f->run_power_w[q];
  f->power_unfilled = false;
  return f->power_w;
}

void rack_fleet_gpu_loads(rack_fleet *f) {
  for (uint32_t q = 0; f->loads_unfilled && q < f->nruns; q++) {
    uint32_t i = f->run_first[q];
    gpu_load l = rack_gpu_load(f, i);
    for (uint32_t j = i + 1; j < i + f->run_len[q]; j++)
      rack_set_load(f, j, l);
  }
  f->loads_unfilled = false;
}

bool rack_fleet_runs_alike(const rack_fleet *f) {
  return rack_fleet_first_unlike(f) == RACK_NO_GPU;
}

/* A server's sums from its runs (each within one server): the sums the
 * per-GPU pass adds GPU by GPU, run by run. */
static void run_sums(const rack_fleet *f, uint32_t r, uint32_t i, uint32_t per,
                     double *gpu, double *act, uint32_t *q) {
  for (; *q < f->rack_run[r + 1] && f->run_first[*q] < i + per; (*q)++) {
    *gpu += f->run_len[*q] * f->run_power_w[*q];
    *act += f->run_len[*q] * rack__load_share(f, f->run_first[*q]);
  }
}

/* Rack r run by run: each run's power from its first GPU with update_rack's
 * expressions, k times it to the rack's sums; its GPUs' own powers wait
 * for a reader (rack_fleet_gpu_power). */
void rack__update_runs(rack_fleet *f, uint32_t r) {
  uint16_t t = f->type[f->first[r]];
  double idle = f->t_idle[t], pb = f->t_busy[t], pm = f->t_mem[t];
  double ps = f->t_sm[t], dmin = f->t_dmin[t], smin = f->t_smin[t];
  double inv_span = 1 / f->t_span[t], tcap = f->thermal_cap_w[r];
  double gsum = 0, asum = 0;
  uint32_t held = 0;
  for (uint32_t q = f->rack_run[r]; q < f->rack_run[r + 1]; q++) {
    uint32_t i = f->run_first[q], k = f->run_len[q];
    double m = pm * f->mem[i], s = pb * f->busy[i] + ps * f->activity[i];
    double full = idle + m + s, floor = idle + m * smin + s * dmin;
    double c = rack_cap_min(f->cap_w[i], tcap);
    double capped = c > floor ? c : floor;
    double p = full <= c ? full : capped;
    held += tcap < f->cap_w[i] && full > tcap ? k : 0;
    f->run_power_w[q] = p; /* its GPUs' at rack_fleet_gpu_power */
    gsum += k * p;
    double share = (full - idle) * inv_span; /* can ask above the TDP */
    asum += k * (share < 1 ? share : 1);
  }
  f->throttled[r] = held;
  f->activity_mean[r] = asum / f->count[r];
  f->gpu_power_w[r] = gsum;
  if (f->groups[f->group[r]].system != NULL)
    rack__system_rack(f, r, run_sums);
  else
    rack__plain_rack(f, r);
}
