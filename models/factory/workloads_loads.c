/* workloads_loads.c - the drive's loads of the services' replicas to
 * their runs (workloads_tick.c's replica_loads): a service's taken a
 * chunk at a time, each chunk written to its replicas' runs at once.
 * Moved out of workloads_tick.c with the chunks. */
#include "workloads.h"

#include "bits.h"
#include "inference_fluid.h"
#include "lanes.h"
#include "workloads_internal.h"

void work__reps_loads_to_runs(rack_fleet *fl, const work_reps *r, uint32_t k0,
                              uint32_t n, const gpu_load *l) {
  const uint32_t *run0 = r->run0 + k0, *runs = r->runs;
  if (r->seq) { /* replica k's run runs[0] + k */
    rack_set_run_loads_seq(fl, runs[0] + k0, l, n);
  } else if (r->run0[r->n] == r->n) { /* one run a replica */
    runs += k0;
#pragma GCC unroll 4
    for (uint32_t k = 0; k < n; k++)
      rack_set_run_load(fl, runs[k], l[k]);
  } else {
    for (uint32_t k = 0; k < n; k++) {
      uint32_t q = run0[k], end = run0[k + 1];
      do /* a replica has one run at least */
        rack_set_run_load(fl, runs[q], l[k]);
      while (++q < end);
    }
  }
}

/* The chunks' buffer stays in the first-level cache: a service's whole
 * list (28 KB at bench-10k's largest) was written from the second level,
 * each store waiting for its line, and read back for the runs. */
void work__reps_take_to_runs(rack_fleet *fl, const work_reps *r, uint32_t k0,
                             uint32_t n, work_take_fn take, void *svc,
                             gpu_load *buf, uint32_t room) {
  for (uint32_t j = 0; j < n; j += room) {
    uint32_t c = n - j < room ? n - j : room;
    take(svc, j, c, buf);
    work__reps_loads_to_runs(fl, r, k0 + j, c, buf);
  }
}

/* A stretch's load written once for its runs, where the chunk's loads
 * were written to the buffer one by one and copied to the runs word by
 * word: the same words to the same runs (rack_set_run_loads_fill). */
void work__reps_fluid_to_runs(rack_fleet *fl, const work_reps *r, uint32_t k0,
                              uint32_t n, inf_service *svc) {
  uint32_t end[WORK_LOADS_CHUNK];
  gpu_load l[WORK_LOADS_CHUNK];
  const uint32_t q0 = r->runs[0] + k0;
  for (uint32_t j = 0; j < n; j += WORK_LOADS_CHUNK) {
    uint32_t c = n - j < WORK_LOADS_CHUNK ? n - j : WORK_LOADS_CHUNK;
    uint32_t m = inf_fluid_take_stretches(svc, j, c, end, l);
    for (uint32_t t = 0, from = 0; t < m; from = end[t++])
      rack_set_run_loads_fill(fl, q0 + j + from, end[t] - from, l[t]);
  }
}

#ifdef SIM_LANES_AVX2
/* The bits in which the eight caps at x differ from c4's. */
__attribute__((target("avx2"), always_inline)) static inline __m256i
eight_misses(const double *x, __m256i c4) {
  return _mm256_or_si256(sim_x4_xor(x, c4), sim_x4_xor(x + 4, c4));
}

/* Replicas k .. e - 1 (each one run, in order: cap[j] replica j's run's
 * cap), eight a turn while each one's cap has c's bits: phi[j] = p's
 * bits. Where the eights stop (the first of eight with a miss, or
 * fewer than eight left). Sixteen a turn first, by pointers and a count
 * (a fluid day's known stretches are long: the index arithmetic and the
 * loop's test were half of the 15 instructions an eight took), then the
 * eights from where those stopped: the same eights stop at the same
 * place, the same clocks stored. */
__attribute__((target("avx2"), noinline)) static uint32_t
caps_eights(const double *cap, uint32_t k, uint32_t e, uint64_t c, uint64_t p,
            double *phi) {
  const __m256i c4 = _mm256_set1_epi64x((long long)c);
  const __m256d p4 = _mm256_castsi256_pd(_mm256_set1_epi64x((long long)p));
  const double *x = cap + k;
  double *y = phi + k;
  for (uint32_t t = (e - k) / 16; t > 0; t--, x += 16, y += 16) {
    __m256i d = _mm256_or_si256(eight_misses(x, c4), eight_misses(x + 8, c4));
    if (!_mm256_testz_si256(d, d))
      break;
    _mm256_storeu_pd(y, p4);
    _mm256_storeu_pd(y + 4, p4);
    _mm256_storeu_pd(y + 8, p4);
    _mm256_storeu_pd(y + 12, p4);
  }
  for (uint32_t t = (e - (uint32_t)(x - cap)) / 8; t > 0; t--, x += 8, y += 8) {
    __m256i d = eight_misses(x, c4);
    if (!_mm256_testz_si256(d, d))
      break;
    _mm256_storeu_pd(y, p4);
    _mm256_storeu_pd(y + 4, p4);
  }
  return (uint32_t)(x - cap);
}

uint32_t work__hits_known(const rack_fleet *fl, uint32_t q0, uint32_t k,
                          uint32_t n, gpu_load l, double cap, double p,
                          double *phi) {
  const struct rack_known *kn = rack_known_at(fl, q0 + k);
  if (kn == NULL || !sim_same_bits(kn->l.sm, l.sm) ||
      !sim_same_bits(kn->l.mem, l.mem) || !sim_same_bits(kn->l.busy, l.busy))
    return k;
  uint32_t e = kn->q1 - q0 < n ? kn->q1 - q0 : n;
  return caps_eights(fl->run_cap_w + q0, k, e, sim_bits(cap), sim_bits(p), phi);
}
#endif
