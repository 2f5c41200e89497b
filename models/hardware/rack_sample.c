/* rack_sample.c - a rack's three figures at a sample (rack.h
 * rack_fleet_rack_sample): its GPUs' caps summed, their clocks summed
 * and the highest GPU power, in one look at its runs.
 *
 * Most racks at a sample have every run at one cap, one load and one
 * power, to the bit (bench-10k's fluid mode: about 16 runs a rack, 0.6%
 * of runs unlike the run before). For such a rack each of the three
 * readers' loops adds or compares the same value once for each GPU, in
 * order, so their answers are those of the first run repeated over the
 * rack's GPUs: the same adds from +0, the same compares. One compare of
 * the runs against the first, four a register, stands in for the three
 * loops over the runs; a rack with any run unlike takes the readers
 * themselves. */
#include "bits.h"
#include "lanes.h"
#include "rack_internal.h"

/* x added n times to +0, in order (four adds a turn: the same adds), the
 * sum kept by x and n in the fleet's sample_kept: from +0 the answer is
 * x's and n's alone (rack_fleet_rack_phi_sum and _caps_added keep theirs
 * the same way, one each). */
static double repeat_from_zero(const rack_fleet *f, double x, uint32_t n) {
  uint64_t h = (sim_bits(x) ^ (uint64_t)n << 32) * 0x9e3779b97f4a7c15ULL;
  struct rack_phi_sum *m = &f->sample_kept[h >> 60];
  _Static_assert(RACK_SAMPLE_KEPT == 16, "h >> 60: sixteen entries");
  if (m->n == n && sim_bits(m->phi) == sim_bits(x))
    return m->sum;
  double s = rack__add_times(0, x, n);
  *m = (struct rack_phi_sum){x, s, n};
  return s;
}

/* Runs q+1 .. qend-1 against run q in cap, load and power, two a
 * register: whether all are q's to the bit. */
static bool runs_as_first(const rack_fleet *f, uint32_t q, uint32_t qend) {
  const double *cap = f->run_cap_w, *sm = f->run_sm, *mem = f->run_mem;
  const double *busy = f->run_busy, *p = f->run_power_w;
  sim_u2 ec = {sim_bits_at(cap, q), sim_bits_at(cap, q)};
  sim_u2 es = {sim_bits_at(sm, q), sim_bits_at(sm, q)};
  sim_u2 em = {sim_bits_at(mem, q), sim_bits_at(mem, q)};
  sim_u2 eb = {sim_bits_at(busy, q), sim_bits_at(busy, q)};
  sim_u2 ep = {sim_bits_at(p, q), sim_bits_at(p, q)};
  sim_u2 odd = {0, 0};
  uint32_t j = q + 1;
  for (; j + 2 <= qend; j += 2)
    odd |= (sim_u2_at(cap + j) ^ ec) | (sim_u2_at(sm + j) ^ es) |
           (sim_u2_at(mem + j) ^ em) | (sim_u2_at(busy + j) ^ eb) |
           (sim_u2_at(p + j) ^ ep);
  if (j < qend) /* q's own lanes xor to 0: a pair ending at j */
    odd |= (sim_u2_at(cap + j - 1) ^ ec) | (sim_u2_at(sm + j - 1) ^ es) |
           (sim_u2_at(mem + j - 1) ^ em) | (sim_u2_at(busy + j - 1) ^ eb) |
           (sim_u2_at(p + j - 1) ^ ep);
  return sim_u2_zero(odd);
}

#ifdef SIM_LANES_AVX2
/* runs_as_first four runs a register, the runs in one loop; the last one
 * to three through a mask. */
__attribute__((target("avx2"))) static bool
runs_as_first_avx2(const rack_fleet *f, uint32_t q, uint32_t qend) {
  const double *cap = f->run_cap_w, *sm = f->run_sm, *mem = f->run_mem;
  const double *busy = f->run_busy, *p = f->run_power_w;
  __m256i ec = _mm256_set1_epi64x((long long)sim_bits_at(cap, q));
  __m256i es = _mm256_set1_epi64x((long long)sim_bits_at(sm, q));
  __m256i em = _mm256_set1_epi64x((long long)sim_bits_at(mem, q));
  __m256i eb = _mm256_set1_epi64x((long long)sim_bits_at(busy, q));
  __m256i ep = _mm256_set1_epi64x((long long)sim_bits_at(p, q));
  __m256i odd = _mm256_setzero_si256();
  uint32_t i = q + 1;
  for (; i + 4 <= qend; i += 4)
    odd = _mm256_or_si256(
        odd, _mm256_or_si256(
                 _mm256_or_si256(_mm256_or_si256(sim_x4_xor(cap + i, ec),
                                                 sim_x4_xor(sm + i, es)),
                                 _mm256_or_si256(sim_x4_xor(mem + i, em),
                                                 sim_x4_xor(busy + i, eb))),
                 sim_x4_xor(p + i, ep)));
  __m256i k = sim_x4_first(qend - i);
  __m256i x = _mm256_or_si256(
      _mm256_or_si256(_mm256_or_si256(sim_x4_xor_masked(cap + i, ec, k),
                                      sim_x4_xor_masked(sm + i, es, k)),
                      _mm256_or_si256(sim_x4_xor_masked(mem + i, em, k),
                                      sim_x4_xor_masked(busy + i, eb, k))),
      sim_x4_xor_masked(p + i, ep, k));
  odd = _mm256_or_si256(odd, _mm256_and_si256(x, k));
  return _mm256_testz_si256(odd, odd);
}
#endif

/* runs_as_first, through AVX2 where the CPU has it (sim_lanes_narrow:
 * the two-a-register one even there). */
static bool runs_as_first_any(const rack_fleet *f, uint32_t q, uint32_t qend) {
#ifdef SIM_LANES_AVX2
  if (sim_lanes_wide())
    return runs_as_first_avx2(f, q, qend);
#endif
  return runs_as_first(f, q, qend);
}

/* Rack r's runs the truth for all three figures and all at its first's
 * inputs and power. A NaN among them is no matter: the clocks' loop
 * breaks its stretches at one (it compares as doubles), but adds the
 * same clock once a GPU all the same. */
static bool rack_runs_alike(const rack_fleet *f, uint32_t r) {
  if (!rack_fleet_runs_fresh(f) || !f->caps_unfilled || !f->power_unfilled)
    return false;
  uint32_t q = f->rack_run[r], qend = f->rack_run[r + 1];
  return q < qend && runs_as_first_any(f, q, qend);
}

rack_sample_sums rack_fleet_rack_sample(const rack_fleet *f, uint32_t r,
                                        rack_phi_last *last) {
  if (!rack_runs_alike(f, r))
    return (rack_sample_sums){rack_fleet_rack_cap_sum(f, r),
                              rack_fleet_rack_phi_sum(f, r),
                              rack_fleet_rack_max_power_w(f, r)};
  uint32_t q = f->rack_run[r];
  double p = f->run_power_w[q], phi;
  if (f->known_n == 0 ||
      !rack__phi_known(f, q, rack_run_cap_w(f, q, r), rack_run_load(f, q), &phi))
    phi = rack_run_phi_near(f, q, last);
  return (rack_sample_sums){repeat_from_zero(f, f->run_cap_w[q], f->count[r]),
                            repeat_from_zero(f, phi, f->count[r]),
                            p > 0 ? p : 0};
}
