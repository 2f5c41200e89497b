/* rack_run_loads.c - many runs' loads written at once (rack.h
 * rack_set_run_loads_seq): the services' replicas, one run each and in
 * order, hand the fleet their loads as one list every period, or a
 * fluid service's as stretches of one load (rack_set_run_loads_fill). */
#include "bits.h"
#include "lanes.h"
#include "rack.h"

_Static_assert(sizeof(gpu_load) == 3 * sizeof(double),
               "two loads are three pairs of doubles");

/* Loads l[k ..) to sm, mem, busy [k ..), two a turn: two loads' six
 * words as three pairs (sm mem, busy sm, mem busy) to three (sm sm, mem
 * mem, busy busy), about 5 instructions a run, not 7. Where the pairs
 * stop (n or n - 1). */
static inline size_t loads_pairs(double *sm, double *mem, double *busy,
                                 const gpu_load *l, size_t k, size_t n) {
#pragma GCC unroll 2
  for (; k + 2 <= n; k += 2) {
    const char *x = (const char *)(l + k);
    sim_d2 a = sim_d2_at(x), b = sim_d2_at(x + 16), c = sim_d2_at(x + 32);
    sim_d2_put(sm + k, SIM_D2_PICK(a, 0, b, 1));
    sim_d2_put(mem + k, SIM_D2_PICK(a, 1, c, 0));
    sim_d2_put(busy + k, SIM_D2_PICK(b, 0, c, 1));
  }
  return k;
}

#ifdef SIM_LANES_AVX2
/* Loads l[k .. k + 4) to sm, mem, busy [k ..) (AVX2): four loads'
 * twelve words as three registers (s0 m0 b0 s1, m1 b1 s2 m2, b2 s3 m3
 * b3), each word of a kind blended into one (s0 s3 s2 s1, m1 m0 m3 m2,
 * b2 b1 b0 b3) and put in order. */
__attribute__((target("avx2"))) static inline void
quad_at(double *sm, double *mem, double *busy, const gpu_load *l, size_t k) {
  const double *x = (const double *)(l + k);
  __m256d a = _mm256_loadu_pd(x), b = _mm256_loadu_pd(x + 4),
          c = _mm256_loadu_pd(x + 8);
  __m256d s = _mm256_blend_pd(_mm256_blend_pd(a, b, 0x4), c, 0x2),
          m = _mm256_blend_pd(_mm256_blend_pd(a, b, 0x9), c, 0x4),
          u = _mm256_blend_pd(_mm256_blend_pd(a, b, 0x2), c, 0x9);
  _mm256_storeu_pd(sm + k, _mm256_permute4x64_pd(s, _MM_SHUFFLE(1, 2, 3, 0)));
  _mm256_storeu_pd(mem + k, _mm256_permute_pd(m, 0x5));
  _mm256_storeu_pd(busy + k, _mm256_permute4x64_pd(u, _MM_SHUFFLE(3, 0, 1, 2)));
}

/* loads_pairs eight a turn, then four once (AVX2, where the CPU has
 * it): the same words to the same places. Each turn asks for the three
 * arrays' lines 64 runs ahead for writing (one line of each a turn):
 * the arrays were last touched a tick ago, and each store waited for
 * its line from the second level (perf of the fluid day: about a
 * quarter fewer samples here). Where the fours stop. */
__attribute__((target("avx2"), noinline)) static size_t
loads_quads(double *sm, double *mem, double *busy, const gpu_load *l,
            size_t n) {
  size_t k = 0;
  for (; k + 8 <= n; k += 8) {
    __builtin_prefetch(sm + k + 64, 1);
    __builtin_prefetch(mem + k + 64, 1);
    __builtin_prefetch(busy + k + 64, 1);
    quad_at(sm, mem, busy, l, k);
    quad_at(sm, mem, busy, l, k + 4);
  }
  if (k + 4 <= n) {
    quad_at(sm, mem, busy, l, k);
    k += 4;
  }
  return k;
}
#endif

/* Four a turn where AVX2 is, then two, the last one alone; the flag
 * once, not once a run. */
void rack_set_run_loads_seq(rack_fleet *f, uint32_t q0, const gpu_load *l,
                            size_t n) {
  if (n == 0)
    return;
  if (q0 < f->known_hi) /* else none is met (none kept: known_hi 0) */
    rack__known_drop(f, q0, q0 + (uint32_t)n);
  double *sm = f->run_sm + q0, *mem = f->run_mem + q0, *busy = f->run_busy + q0;
  size_t k = 0;
#ifdef SIM_LANES_AVX2
  if (sim_lanes_wide())
    k = loads_quads(sm, mem, busy, l, n);
#endif
  k = loads_pairs(sm, mem, busy, l, k, n);
  if (k < n)
    rack__set_run_arrays(f, q0 + (uint32_t)k, l[k]);
  f->loads_unfilled = true;
}

/* sm, mem, busy [k .. n) = l's words, two a store (SSE2, or plain
 * words), the last one alone. */
static inline void fill_pairs(double *sm, double *mem, double *busy, gpu_load l,
                              size_t k, size_t n) {
  const sim_d2 s = {l.sm, l.sm}, m = {l.mem, l.mem}, b = {l.busy, l.busy};
  for (; k + 2 <= n; k += 2) {
    sim_d2_put(sm + k, s);
    sim_d2_put(mem + k, m);
    sim_d2_put(busy + k, b);
  }
  if (k < n) {
    sm[k] = l.sm;
    mem[k] = l.mem;
    busy[k] = l.busy;
  }
}

#ifdef SIM_LANES_AVX2
/* fill_pairs eight runs a turn in six four-lane stores (AVX2), the
 * lines 64 runs ahead asked for writing as loads_quads asks: where the
 * eights stop. */
__attribute__((target("avx2"), noinline)) static size_t
fill_quads(double *sm, double *mem, double *busy, gpu_load l, size_t n) {
  const sim_d4 s = sim_d4_all(l.sm), m = sim_d4_all(l.mem),
               b = sim_d4_all(l.busy);
  size_t k = 0;
  for (; k + 8 <= n; k += 8) {
    __builtin_prefetch(sm + k + 64, 1);
    __builtin_prefetch(mem + k + 64, 1);
    __builtin_prefetch(busy + k + 64, 1);
    sim_d4_put(sm + k, s);
    sim_d4_put(sm + k + 4, s);
    sim_d4_put(mem + k, m);
    sim_d4_put(mem + k + 4, m);
    sim_d4_put(busy + k, b);
    sim_d4_put(busy + k + 4, b);
  }
  return k;
}
#endif

void rack__known_drop(rack_fleet *f, uint32_t q0, uint32_t q1) {
  uint32_t m = 0, lo = UINT32_MAX, hi = 0;
  if (q1 <= f->known_lo || q0 >= f->known_hi)
    return;
  for (uint32_t k = 0; k < f->nknown; k++) {
    const struct rack_known *x = &f->known[k];
    if (x->q1 > q0 && x->q0 < q1)
      continue; /* written now */
    lo = x->q0 < lo ? x->q0 : lo;
    hi = x->q1 > hi ? x->q1 : hi;
    f->known[m++] = *x;
  }
  f->nknown = m;
  f->known_lo = m > 0 ? lo : 0;
  f->known_hi = hi;
}

static inline bool same_load_bits(gpu_load a, gpu_load b) {
  return sim_same_bits(a.sm, b.sm) && sim_same_bits(a.mem, b.mem) &&
         sim_same_bits(a.busy, b.busy);
}

/* Runs [q0, q1) known to hold l: the last stretch grown where it ends at
 * q0 with l's bits (one group cut by the drive's chunks), else a stretch
 * of its own while there is room. */
static void known_add(rack_fleet *f, uint32_t q0, uint32_t q1, gpu_load l) {
  rack__known_drop(f, q0, q1);
  bool none = f->nknown == 0; /* the bounds then this stretch's */
  struct rack_known *last = none ? NULL : &f->known[f->nknown - 1];
  if (last != NULL && last->q1 == q0 && same_load_bits(last->l, l))
    last->q1 = q1;
  else if (f->nknown < RACK_KNOWN_MAX)
    f->known[f->nknown++] = (struct rack_known){q0, q1, l};
  else
    return;
  f->known_lo = none || q0 < f->known_lo ? q0 : f->known_lo;
  f->known_hi = none || q1 > f->known_hi ? q1 : f->known_hi;
}

/* Eight a turn where AVX2 is and the stretch is as long, then two; the
 * stretch kept as known. */
void rack_set_run_loads_fill(rack_fleet *f, uint32_t q0, size_t n, gpu_load l) {
  if (n == 0)
    return;
  known_add(f, q0, q0 + (uint32_t)n, l);
  double *sm = f->run_sm + q0, *mem = f->run_mem + q0, *busy = f->run_busy + q0;
  size_t k = 0;
#ifdef SIM_LANES_AVX2
  if (n >= 8 && sim_lanes_wide())
    k = fill_quads(sm, mem, busy, l, n);
#endif
  fill_pairs(sm, mem, busy, l, k, n);
  f->loads_unfilled = true;
}
