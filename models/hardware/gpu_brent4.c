/* gpu_brent4.c - gpu_power.c's brent_fma four solves at a time, one a
 * lane of an AVX2 register: at the request level's peak nearly every
 * replica's (cap, load) is new each period and its clock is a Brent
 * solve (about 1,845 a period at bench-10k), a loop of branches the
 * scalar code takes one solve at a time.
 *
 * Each lane does the scalar loop's operations on its own values: the
 * same correctly rounded adds, products and quotients in the same order,
 * each branch of the scalar loop a compare whose mask picks the lane's
 * side (both sides are computed; the side not taken is thrown away), and
 * x^2.5 through sim_pow25_fma4 (sim_pow25_fma's bits lane by lane, pow
 * itself for the lanes that need it). A lane is done where the scalar
 * loop would return: its answer is kept and its later values ignored.
 * The four lanes leave together, once each is done, so a group costs its
 * slowest solve (the scalar loop's 100-iteration cap bounds it). */
#include "gpu_internal.h"

#include <float.h>
#include <math.h>
#include <stddef.h>

#include "pow.h"

#ifdef SIM_POW_FMA
#include <immintrin.h>

typedef __m256d v4;

#define TARGET __attribute__((target("avx2,fma")))

TARGET static inline v4 v4_all(double x) { return _mm256_set1_pd(x); }

TARGET static inline v4 v4_abs(v4 x) {
  return _mm256_andnot_pd(v4_all(-0.0), x);
}

TARGET static inline v4 v4_neg(v4 x) { return _mm256_xor_pd(x, v4_all(-0.0)); }

/* k ? yes : no, lane by lane (k a compare's mask) */
TARGET static inline v4 v4_pick(v4 k, v4 yes, v4 no) {
  return _mm256_blendv_pd(no, yes, k);
}

TARGET static inline v4 v4_lt(v4 x, v4 y) {
  return _mm256_cmp_pd(x, y, _CMP_LT_OQ);
}
TARGET static inline v4 v4_le(v4 x, v4 y) {
  return _mm256_cmp_pd(x, y, _CMP_LE_OQ);
}
TARGET static inline v4 v4_gt(v4 x, v4 y) {
  return _mm256_cmp_pd(x, y, _CMP_GT_OQ);
}
TARGET static inline v4 v4_ge(v4 x, v4 y) {
  return _mm256_cmp_pd(x, y, _CMP_GE_OQ);
}
TARGET static inline v4 v4_eq(v4 x, v4 y) {
  return _mm256_cmp_pd(x, y, _CMP_EQ_OQ);
}
TARGET static inline v4 v4_or(v4 x, v4 y) { return _mm256_or_pd(x, y); }
TARGET static inline v4 v4_and(v4 x, v4 y) { return _mm256_and_pd(x, y); }
TARGET static inline v4 v4_andnot(v4 x, v4 y) { return _mm256_andnot_pd(x, y); }
TARGET static inline int v4_lanes(v4 k) { return _mm256_movemask_pd(k); }

/* gpu_power.c's same_sign */
TARGET static inline v4 v4_same_sign(v4 x, v4 y) {
  v4 z = _mm256_setzero_pd();
  return v4_or(v4_and(v4_lt(x, z), v4_lt(y, z)),
               v4_and(v4_gt(x, z), v4_gt(y, z)));
}

/* What the lanes' solves share (the type) and hold apart (the load's
 * terms and the cap). */
typedef struct lanes4 {
  v4 idle, knee, phi_min, mem, clocked, cap;
} lanes4;

/* residual_fma lane by lane; pow(x, 2.5) asked only for the lanes in
 * want (the others' values are thrown away). mid: every lane's bracket
 * in [phi_min, knee], phi_min at least 2^-8 and the knee under 1 (the
 * callers' brackets: group4 tests it), so a clock inside it is its own
 * clamp, never 1, and phi / knee is s_mem (1 at the knee: x / x), the
 * same values without the tests. */
TARGET static inline __attribute__((always_inline)) v4
residual4(const lanes4 *s, v4 x, int want, bool mid) {
  v4 one = v4_all(1), phi = x, s_mem, at_one = _mm256_setzero_pd(), d;
  int pow_lanes;
  if (mid) {
    s_mem = _mm256_div_pd(phi, s->knee);
    pow_lanes = sim_pow25_fma4_try_mid(phi, &d) & want;
  } else {
    phi = v4_pick(v4_lt(x, s->phi_min), s->phi_min,
                  v4_pick(v4_gt(x, one), one, x));
    s_mem = v4_pick(v4_ge(phi, s->knee), one, _mm256_div_pd(phi, s->knee));
    at_one = v4_eq(phi, one);
    pow_lanes = sim_pow25_fma4_try(phi, &d) & want & ~v4_lanes(at_one);
  }
  if (pow_lanes != 0) {
    double xs[4], ds[4];
    _mm256_storeu_pd(xs, phi);
    _mm256_storeu_pd(ds, d);
    for (int i = 0; i < 4; i++)
      if (pow_lanes >> i & 1)
        ds[i] = pow(xs[i], 2.5);
    d = _mm256_loadu_pd(ds);
  }
  if (!mid)
    d = v4_pick(at_one, one, d);
  v4 p = _mm256_add_pd(_mm256_add_pd(s->idle, _mm256_mul_pd(s->mem, s_mem)),
                       _mm256_mul_pd(s->clocked, d));
  return _mm256_sub_pd(p, s->cap);
}

/* gpu_power.c's converged(lo, hi) lane by lane */
TARGET static inline v4 converged4(v4 lo, v4 hi) {
  v4 l = v4_abs(lo), h = v4_abs(hi);
  v4 min_abs = v4_and(v4_same_sign(lo, hi), v4_pick(v4_lt(l, h), l, h));
  return v4_lt(v4_abs(_mm256_sub_pd(hi, lo)),
               _mm256_mul_pd(v4_all(1e-12), min_abs));
}

/* The Brent state, gpu_power.c's names. */
typedef struct state4 {
  v4 a, b, c, d, e, fa, fb, fc;
} state4;

/* brent_step lane by lane: bisection where it would bisect, else the
 * secant (ac_equal) or inverse quadratic step, accepted or not. */
TARGET static inline void step4(state4 *s, v4 tol, v4 m, v4 ac_equal) {
  v4 one = v4_all(1), two_m = _mm256_mul_pd(v4_all(2), m);
  v4 bisect =
      v4_or(v4_lt(v4_abs(s->e), tol), v4_le(v4_abs(s->fa), v4_abs(s->fb)));
  v4 sr = _mm256_div_pd(s->fb, s->fa);
  v4 p_sec = _mm256_mul_pd(two_m, sr), q_sec = _mm256_sub_pd(one, sr);
  v4 q = _mm256_div_pd(s->fa, s->fc), r = _mm256_div_pd(s->fb, s->fc);
  v4 r_1 = _mm256_sub_pd(r, one);
  v4 p_iq = _mm256_mul_pd(
      sr,
      _mm256_sub_pd(_mm256_mul_pd(_mm256_mul_pd(two_m, q), _mm256_sub_pd(q, r)),
                    _mm256_mul_pd(_mm256_sub_pd(s->b, s->a), r_1)));
  v4 q_iq = _mm256_mul_pd(_mm256_mul_pd(_mm256_sub_pd(q, one), r_1),
                          _mm256_sub_pd(sr, one));
  v4 p = v4_pick(ac_equal, p_sec, p_iq);
  q = v4_pick(ac_equal, q_sec, q_iq);
  v4 pos = v4_gt(p, _mm256_setzero_pd());
  q = v4_pick(pos, v4_neg(q), q);
  p = v4_pick(pos, p, v4_neg(p));
  v4 lim = _mm256_sub_pd(_mm256_mul_pd(_mm256_mul_pd(v4_all(3), m), q),
                         v4_abs(_mm256_mul_pd(tol, q)));
  v4 e_q = v4_abs(_mm256_mul_pd(s->e, q));
  v4 take =
      v4_lt(_mm256_mul_pd(v4_all(2), p), v4_pick(v4_lt(lim, e_q), lim, e_q));
  v4 d = v4_pick(take, _mm256_div_pd(p, q), m), e = v4_pick(take, s->d, m);
  s->d = v4_pick(bisect, m, d);
  s->e = v4_pick(bisect, m, e);
}

/* Orientation: c from a where fb and fc agree, then b the end nearer the
 * root; returns where the step may interpolate by the secant. */
TARGET static inline v4 orient4(state4 *s, v4 agree) {
  v4 b_a = _mm256_sub_pd(s->b, s->a);
  s->c = v4_pick(agree, s->a, s->c), s->fc = v4_pick(agree, s->fa, s->fc);
  s->d = v4_pick(agree, b_a, s->d), s->e = v4_pick(agree, b_a, s->e);
  v4 swap = v4_lt(v4_abs(s->fc), v4_abs(s->fb));
  v4 a = v4_pick(swap, s->b, s->a), fa = v4_pick(swap, s->fb, s->fa);
  s->b = v4_pick(swap, s->c, s->b), s->fb = v4_pick(swap, s->fc, s->fb);
  s->c = v4_pick(swap, a, s->c), s->fc = v4_pick(swap, fa, s->fc);
  s->a = a, s->fa = fa;
  return v4_or(agree, swap);
}

/* The interval test of the step before (brent_loop's, i > 0) at the
 * lower end *phi of [b, c], for the live lanes: converged's general case
 * only where a live lane's lower end is not above 0 (a type whose lowest
 * clock is 0), brent_loop's in-line case for the others. */
TARGET static inline v4 tested4(const state4 *s, v4 *phi, v4 live) {
  v4 below = v4_lt(s->b, s->c), up = v4_pick(below, s->c, s->b);
  *phi = v4_pick(below, s->b, s->c);
  v4 pos = v4_gt(*phi, _mm256_setzero_pd());
  v4 near = v4_lt(_mm256_sub_pd(up, *phi), _mm256_mul_pd(v4_all(1e-12), *phi));
  if (v4_lanes(v4_andnot(pos, live)) == 0)
    return near;
  return v4_pick(pos, near, converged4(*phi, up));
}

/* brent_loop for four jobs' lanes (live: the lanes that hold one). The
 * state's orientation and the interval test are split here around the
 * swap as in brent_loop, whose order of tests each lane keeps. Every
 * clock it evaluates is inside the lane's bracket [lo, hi] (between b
 * and c: a bisection, an accepted interpolation short of 3/4 of the way
 * to c, or a step of tol toward c where |m| > tol), hence residual4's
 * mid where the brackets allow it. */
TARGET static inline __attribute__((always_inline)) v4
brent4(const lanes4 *L, state4 s, v4 lo, v4 live, bool mid) {
  v4 phi = lo, out = lo;
  for (int i = 0;; i++) {
    v4 agree = v4_same_sign(s.fb, s.fc);
    if (i > 0) { /* the test reads [b, c] after c is set from a */
      state4 t = s;
      t.c = v4_pick(agree, s.a, s.c);
      v4 done =
          v4_or(tested4(&t, &phi, live), i == 100 ? live : _mm256_setzero_pd());
      out = v4_pick(v4_and(live, done), phi, out);
      if (v4_lanes(live = v4_andnot(done, live)) == 0)
        return out;
    }
    v4 ac_equal = orient4(&s, agree);
    v4 tol = _mm256_mul_pd(v4_all(0.5 * DBL_EPSILON), v4_abs(s.b));
    v4 m = _mm256_mul_pd(v4_all(0.5), _mm256_sub_pd(s.c, s.b));
    v4 zero = v4_eq(s.fb, _mm256_setzero_pd()),
       found = v4_or(zero, v4_le(v4_abs(m), tol));
    out = v4_pick(v4_and(live, found),
                  v4_pick(v4_or(zero, v4_lt(s.b, s.c)), s.b, s.c), out);
    if (v4_lanes(live = v4_andnot(found, live)) == 0)
      return out;
    step4(&s, tol, m, ac_equal);
    v4 far = v4_gt(v4_abs(s.d), tol);
    v4 toward = v4_pick(v4_gt(m, _mm256_setzero_pd()), tol, v4_neg(tol));
    v4 next = _mm256_add_pd(s.b, v4_pick(far, s.d, toward));
    v4 f_next = residual4(L, next, v4_lanes(live), mid);
    v4 bad = v4_andnot(v4_lt(v4_abs(f_next), v4_all(INFINITY)), live);
    out = v4_pick(bad, phi, out);
    if (v4_lanes(live = v4_andnot(bad, live)) == 0)
      return out;
    s.a = s.b, s.fa = s.fb, s.b = next, s.fb = f_next;
  }
}

/* One field of jobs x[0 .. 3] as lanes, lane i job x[i]'s (in line:
 * each lane a load, no store to the stack and load back). */
#define LANES(x, f) _mm256_set_pd((x)[3]->f, (x)[2]->f, (x)[1]->f, (x)[0]->f)

/* Jobs k .. k + n - 1 (n in 1 .. 4) as lanes, the lanes past n copies
 * of the first (their answers not stored). */
TARGET static void group4(const gpu_brent_type *t, const gpu_brent_job *j,
                          size_t n, double *phi) {
  const gpu_brent_job *x[4] = {j, &j[n > 1], &j[n > 2 ? 2 : 0],
                               &j[n > 3 ? 3 : 0]};
  lanes4 L = {v4_all(t->idle_w),     v4_all(t->knee),  v4_all(t->phi_min),
              LANES(x, mem),         LANES(x, clocked), LANES(x, cap)};
  v4 lo = LANES(x, lo), hi = LANES(x, hi);
  v4 fb = LANES(x, fb), d = _mm256_sub_pd(hi, lo);
  state4 s = {lo, hi, hi, d, d, LANES(x, fa), fb, fb};
  static const int64_t first[8] = {-1, -1, -1, -1, 0, 0, 0, 0};
  v4 live = _mm256_loadu_pd((const double *)(first + 4 - n));
  v4 mid = v4_and(v4_and(v4_ge(lo, L.phi_min), v4_le(hi, L.knee)),
                  v4_and(v4_lt(hi, v4_all(1)),
                         v4_ge(L.phi_min, v4_all(SIM_POW25_NEAR_FROM))));
  v4 out = v4_lanes(mid) == 0xf ? brent4(&L, s, lo, live, true)
                                : brent4(&L, s, lo, live, false);
  if (n == 4) {
    _mm256_storeu_pd(phi, out);
    return;
  }
  double part[4];
  _mm256_storeu_pd(part, out);
  for (size_t i = 0; i < n; i++)
    phi[i] = part[i];
}

void gpu__brent_lanes(const gpu_brent_type *t, const gpu_brent_job *j, size_t n,
                      double *phi) {
  for (size_t k = 0; k < n; k += 4)
    group4(t, j + k, n - k < 4 ? n - k : 4, phi + k);
}
#endif
