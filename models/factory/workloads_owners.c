/* workloads_owners.c - the energy's attribution per owner, each control
 * tick (workloads.h's work__owner_power): run by run of the fleet's units
 * where they are fresh (rack.h), a stretch of one owner's runs at a time;
 * GPU by GPU otherwise. Moved out of workloads_tick.c, whole. */
#include "workloads.h"

#include <stdbool.h>

#include "bits.h"
#include "lanes.h"
#include "power.h"
#include "workloads_internal.h"

/* Adds each GPU's power to its owner's sum (row n: the free GPUs'), GPU
 * by GPU in fleet order: the additions of `sum[owner[i]] += power[i]`, so
 * the same bits. A run of GPUs of one owner (a replica's, a stage's, a
 * rack's free ones) adds in a register and stores once: the per-GPU
 * store and reload of the same sum was the loop's whole cost. */
void work__owner_sums(double *sum, const uint32_t *owner, const double *power,
                      uint32_t n) {
  if (n == 0)
    return;
  uint32_t o = owner[0];
  double acc = sum[o];
  for (uint32_t i = 0; i < n; i++) {
    if (owner[i] != o) {
      sum[o] = acc;
      o = owner[i];
      acc = sum[o];
    }
    acc += power[i];
  }
  sum[o] = acc;
}

/* The owners' sums run by run (the fleet's units, rack.h): a run's GPUs
 * share a slot, so an owner, and a power; k GPUs at p add k p, which
 * rounds apart from work__owner_sums' p added k times in the last bits. */
void work__owner_sums_runs(double *sum, const uint32_t *owner,
                           const rack_fleet *fl) {
  for (uint32_t q = 0; q < fl->nruns; q++)
    sum[owner[fl->run_first[q]]] += fl->run_len[q] * fl->run_power_w[q];
}

/* The fleet's runs' owners and lengths (as doubles) for the sums by runs,
 * into run_owner and run_len (fl->nruns each): a run's GPUs share a slot,
 * so an owner, its first GPU's. */
void work__runs_owners(const rack_fleet *fl, const uint32_t *owner,
                       uint32_t *run_owner, double *run_len) {
  for (uint32_t q = 0; q < fl->nruns; q++) {
    run_owner[q] = owner[fl->run_first[q]];
    run_len[q] = fl->run_len[q];
  }
}

/* work__owner_sums_runs from the runs' owners and lengths made once a
 * making of the runs (work__runs_owners): the same products added in
 * the same order, the same bits, without the lookups through each run's
 * first GPU and the conversion of its length. */
void work__owner_sums_packed(double *sum, const uint32_t *run_owner,
                             const double *run_len, const double *power,
                             uint32_t nruns) {
  for (uint32_t q = 0; q < nruns; q++)
    sum[run_owner[q]] += run_len[q] * power[q];
}

uint32_t work__owner_stretches(const uint32_t *run_owner, uint32_t nruns,
                               uint32_t *own_owner, uint32_t *own_end) {
  uint32_t k = 0;
  for (uint32_t q = 0; q < nruns; q++) {
    if (k > 0 && own_owner[k - 1] == run_owner[q]) {
      own_end[k - 1] = q + 1;
      continue;
    }
    own_owner[k] = run_owner[q];
    own_end[k++] = q + 1;
  }
  return k;
}

/* One of work__owner_sums_stretches' two lanes: the stretches of the
 * owners of one parity, in order, stretch k (of owner o) next, its runs
 * q .. end left and its sum so far in acc; done past the last. */
typedef struct sum_lane {
  uint32_t k, q, end, o;
  double acc;
  bool done;
} sum_lane;

/* Runs alike at least for which a lane adds them at once (lane_alike). */
#define OWNER_ALIKE_MIN 16

#ifdef SIM_LANES_AVX2
/* alike_runs' compares eight runs a turn, four words a register (AVX2,
 * where the CPU has it): where the turn with a difference starts, or
 * the last turn's end. */
__attribute__((target("avx2"), noinline)) static uint32_t
owner_runs_eights_avx2(const double *run_len, const double *power, uint32_t z,
                  uint32_t end, uint64_t len_bits, uint64_t power_bits) {
  const __m256i l4 = _mm256_set1_epi64x((long long)len_bits),
                p4 = _mm256_set1_epi64x((long long)power_bits);
  for (; z + 8 <= end; z += 8) {
    __m256i d = _mm256_or_si256(_mm256_or_si256(sim_x4_xor(run_len + z, l4),
                                                sim_x4_xor(run_len + z + 4, l4)),
                                _mm256_or_si256(sim_x4_xor(power + z, p4),
                                                sim_x4_xor(power + z + 4, p4)));
    if (!_mm256_testz_si256(d, d))
      break;
  }
  return z;
}
#endif

/* The end of the runs from q (< end) on whose length and power are run
 * q's, to the bit: each adds the same product. */
static uint32_t alike_runs(const double *run_len, const double *power,
                           uint32_t q, uint32_t end) {
  const uint64_t l = sim_bits_at(run_len, q), p = sim_bits_at(power, q);
  uint32_t z = q + 1;
#ifdef SIM_LANES_AVX2
  if (sim_lanes_wide())
    z = owner_runs_eights_avx2(run_len, power, z, end, l, p);
#endif
  while (z < end && sim_bits_at(run_len, z) == l && sim_bits_at(power, z) == p)
    z++;
  return z;
}

/* The lane's next runs, while OWNER_ALIKE_MIN or more of them are alike
 * (alike_runs), added a stretch of them at once: power_add_n makes the
 * additions one at a time would, to the bit, a step a binade the sum
 * crosses. The adds of a stretch wait each on the one before; at
 * bench-10k's fluid tick 2,164 of the owners' 2,247 runs are four such
 * stretches (a job's 700 stages, 1,200 free GPUs, a service's 139 and
 * 125 replicas). A stretch that begins unlike costs one compare. */
static void lane_alike(sum_lane *l, const double *run_len,
                       const double *power) {
  while (l->end - l->q >= OWNER_ALIKE_MIN) {
    uint32_t e = alike_runs(run_len, power, l->q, l->end);
    if (e - l->q < OWNER_ALIKE_MIN)
      return;
    l->acc = power_add_n(l->acc, run_len[l->q] * power[l->q], e - l->q);
    l->q = e;
  }
}

/* Lane l's next stretch from l->k on whose owner has the lane's parity,
 * its sum read and its first runs alike added (lane_alike); or done. */
static void lane_next(sum_lane *l, uint32_t parity, const double *sum,
                      const uint32_t *own_owner, const uint32_t *own_end,
                      uint32_t nstretches, const double *run_len,
                      const double *power) {
  while (l->k < nstretches && (own_owner[l->k] & 1) != parity)
    l->k++;
  l->done = l->k == nstretches;
  if (l->done)
    return;
  l->q = l->k > 0 ? own_end[l->k - 1] : 0;
  l->end = own_end[l->k];
  l->o = own_owner[l->k++];
  l->acc = sum[l->o];
  lane_alike(l, run_len, power);
}

/* Each owner's sum takes its runs' products in fleet order, as one loop
 * over the stretches would add them, but two owners' chains at once:
 * the stretches of even owners and those of odd ones, each lane in
 * order (an owner's stretches all in one lane), a run of each a turn.
 * A sum's adds each wait on the one before, and a stretch is long (one
 * service's replicas, a run each at bench-10k: 700, 1,200 and 264), so
 * one chain after another was bound by the add's latency (a
 * micro-benchmark of bench-10k's eight stretches, 2,247 runs: 1.14 us a
 * call, 0.66 us in two lanes). Where one lane is done, the other goes on
 * alone. */
void work__owner_sums_stretches(double *sum, const uint32_t *own_owner,
                                const uint32_t *own_end, uint32_t nstretches,
                                const double *run_len, const double *power) {
  sum_lane a = {0}, b = {0};
  lane_next(&a, 0, sum, own_owner, own_end, nstretches, run_len, power);
  lane_next(&b, 1, sum, own_owner, own_end, nstretches, run_len, power);
  while (!a.done && !b.done) {
    uint32_t m = a.end - a.q < b.end - b.q ? a.end - a.q : b.end - b.q;
    const double *la = run_len + a.q, *pa = power + a.q;
    const double *lb = run_len + b.q, *pb = power + b.q;
    double sa = a.acc, sb = b.acc;
#pragma GCC unroll 4
    for (uint32_t i = 0; i < m; i++) {
      sa += la[i] * pa[i];
      sb += lb[i] * pb[i];
    }
    a.acc = sa;
    b.acc = sb;
    a.q += m;
    b.q += m;
    if (a.q == a.end) {
      sum[a.o] = a.acc;
      lane_next(&a, 0, sum, own_owner, own_end, nstretches, run_len, power);
    }
    if (b.q == b.end) {
      sum[b.o] = b.acc;
      lane_next(&b, 1, sum, own_owner, own_end, nstretches, run_len, power);
    }
  }
  sum_lane *l = a.done ? &b : &a;
  for (uint32_t parity = a.done; !l->done;) {
#pragma GCC unroll 4
    for (; l->q < l->end; l->q++)
      l->acc += run_len[l->q] * power[l->q];
    sum[l->o] = l->acc;
    lane_next(l, parity, sum, own_owner, own_end, nstretches, run_len, power);
  }
}

/* Each owner's power now into sum (tick_j's rows): run by run while the
 * runs are fresh (a stretch of one owner's runs at a time), GPU by GPU
 * otherwise. */
void work__owner_power(work *w, double *sum) {
  rack_fleet *fl = w->fleet;
  if (!rack_fleet_runs_fresh(fl)) {
    work__owner_sums(sum, w->gpu_owner, rack_fleet_gpu_power(fl), fl->n);
    return;
  }
  if (w->owners_seen != fl->runs_made) { /* no key changed since: owners */
    work__runs_owners(fl, w->gpu_owner, w->run_owner, w->run_len);
    w->nown_stretches = work__owner_stretches(w->run_owner, fl->nruns,
                                              w->own_owner, w->own_end);
    w->owners_seen = fl->runs_made;
  }
  work__owner_sums_stretches(sum, w->own_owner, w->own_end, w->nown_stretches,
                             w->run_len, fl->run_power_w);
}
