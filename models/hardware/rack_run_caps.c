/* rack_run_caps.c - the fleet's runs' caps, powers and loads as per-GPU
 * arrays, and the caps written a rack or a group at a time (rack.h):
 * what the runs keep once, given out GPU by GPU where a caller asks. */

#include "rack_internal.h"

const double *rack_fleet_gpu_power(rack_fleet *f) {
  for (uint32_t q = 0; f->power_unfilled && q < f->nruns; q++)
    for (uint32_t j = f->run_first[q]; j < f->run_first[q] + f->run_len[q]; j++)
      f->power_w[j] = f->run_power_w[q];
  f->power_unfilled = false;
  return f->power_w;
}

/* fmax(p, x) for p not a NaN, the same bits as the libm call it was
 * (GCC passed it as fmax(x, p), glibc's maxsd keeping p on a tie of
 * zeros, a NaN x losing), inlined: the call was made for every run of
 * every rack at each sample. */
static double max_of(double p, double x) { return x > p ? x : p; }

double rack_fleet_rack_max_power_w(const rack_fleet *f, uint32_t r) {
  double p = 0;
  if (f->power_unfilled) /* the runs' powers are the truth */
    for (uint32_t q = f->rack_run[r]; q < f->rack_run[r + 1]; q++)
      p = max_of(p, f->run_power_w[q]);
  else
    for (uint32_t i = f->first[r]; i < f->first[r] + f->count[r]; i++)
      p = max_of(p, f->power_w[i]);
  return p;
}

void rack_fleet_gpu_caps(rack_fleet *f) {
  for (uint32_t q = 0; f->caps_unfilled && q < f->nruns; q++) {
    double cap = f->run_cap_w[q];
    for (uint32_t j = f->run_first[q]; j < f->run_first[q] + f->run_len[q]; j++)
      f->cap_w[j] = cap;
  }
  f->caps_unfilled = false;
}

/* Racks r..end-1's runs (fresh) or GPUs (stale runs are made again from
 * the GPUs') at cap, the flag left to the caller: both lie in one stretch
 * of their arrays, the racks' in order. */
static void racks_cap_put(rack_fleet *f, uint32_t r, uint32_t end, double cap,
                          bool fresh) {
  if (fresh) {
    for (uint32_t q = f->rack_run[r]; q < f->rack_run[end]; q++)
      f->run_cap_w[q] = cap;
    return;
  }
  for (uint32_t i = f->first[r]; i < f->first[end - 1] + f->count[end - 1]; i++)
    f->cap_w[i] = cap;
}

void rack_set_rack_cap(rack_fleet *f, uint32_t r, double cap) {
  bool fresh = rack_fleet_runs_fresh(f);
  racks_cap_put(f, r, r + 1, cap, fresh);
  f->caps_unfilled |= fresh;
}

/* The split's write, every recap: a group's racks (the fleet lays them
 * out one after another) in one stretch, the runs' freshness asked once. */
void rack_set_group_caps(rack_fleet *f, const double *caps) {
  bool fresh = rack_fleet_runs_fresh(f);
  for (uint32_t r = 0, end; r < f->nracks; r = end) {
    for (end = r + 1; end < f->nracks && f->group[end] == f->group[r]; end++)
      ;
    racks_cap_put(f, r, end, caps[f->group[r]], fresh);
  }
  f->caps_unfilled |= fresh;
}

double rack_fleet_rack_cap_sum(const rack_fleet *f, uint32_t r) {
  return rack_fleet_rack_caps_added(f, r, 0);
}

/* rack__add_times, a cap's last sum from 0 kept (f->cap_sum): from +0 the
 * answer depends on the cap and n alone, and a rack whose runs are at
 * one cap (most: control writes a unit's cap to its runs) asks for
 * what an earlier one did. */
static double add_kept(const rack_fleet *f, double sum, double x, uint32_t n) {
  struct rack_phi_sum *m = f->cap_sum;
  bool from_zero = sim_bits(sum) == 0;
  if (n == 0)
    return sum;
  if (from_zero && m->n == n && sim_bits(m->phi) == sim_bits(x))
    return m->sum;
  double s = rack__add_times(sum, x, n);
  if (from_zero)
    *m = (struct rack_phi_sum){x, s, n};
  return s;
}

/* Rack r's caps added to sum from its runs' (the truth while
 * caps_unfilled): runs side by side at one cap's bits add it once for
 * each of their GPUs in a row, as their GPUs would, so they are added
 * together (add_kept): the same adds in the same order. */
static double runs_caps_added(const rack_fleet *f, uint32_t r, double sum) {
  const double *cap = f->run_cap_w;
  uint32_t q = f->rack_run[r], end = f->rack_run[r + 1], reps = 0;
  double x = q < end ? cap[q] : 0;
  for (; q < end; q++) {
    if (!sim_same_bits(cap[q], x)) {
      sum = add_kept(f, sum, x, reps);
      x = cap[q];
      reps = 0;
    }
    reps += f->run_len[q];
  }
  return add_kept(f, sum, x, reps);
}

double rack_fleet_rack_caps_added(const rack_fleet *f, uint32_t r, double sum) {
  if (f->caps_unfilled)
    return runs_caps_added(f, r, sum);
  for (uint32_t i = f->first[r]; i < f->first[r] + f->count[r]; i++)
    sum += f->cap_w[i];
  return sum;
}

void rack_fleet_caps_written(rack_fleet *f) {
  for (uint32_t q = 0; f->unit_key != NULL && q < f->nruns; q++)
    f->run_cap_w[q] = f->cap_w[f->run_first[q]];
  f->caps_unfilled = false;
}

void rack_fleet_gpu_loads(rack_fleet *f) {
  for (uint32_t q = 0; f->loads_unfilled && q < f->nruns; q++) {
    double sm = f->run_sm[q], mem = f->run_mem[q], busy = f->run_busy[q];
    for (uint32_t j = f->run_first[q]; j < f->run_first[q] + f->run_len[q];
         j++) {
      f->activity[j] = sm;
      f->mem[j] = mem;
      f->busy[j] = busy;
    }
  }
  f->loads_unfilled = false;
}
