/* gpu_newton4.c - gpu_power.c's cap solve (the largest double phi whose
 * P, as the code evaluates it, is at most the cap) four solves at a
 * time, one a lane of an AVX2 register: at the request level's peak
 * nearly every replica's (cap, load) is new each period (about 1,845
 * solves a period at bench-10k), and one scalar solve costs more than a
 * quarter of a four-lane group.
 *
 * The answer is the definition's, not a path's: P as evaluated is
 * monotone in phi (gpu_power.c says why), so the largest held double of
 * a bracket is one double whatever finds it. Each lane evaluates P with
 * power_fma's operations in its order (the same correctly rounded
 * adds, products and quotient, x^2.5 by sim_pow25_fma4: sim_pow25_fma's
 * bits lane by lane, pow itself where it needs it), so a lane's P at a
 * clock is the scalar's to the bit, and a lane answers only where it has
 * seen P(phi) <= cap < P(next double).
 *
 * Above the knee (s_mem 1 in the bracket) P = a + clocked phi^2.5, a =
 * P_idle + P_mem L.mem, inverts to phi = ((cap - a) / clocked)^0.4: the
 * start there, taken in a few cheap operations (a float's bits for the
 * first guess, two Halley steps of x^2.5 = y, 3e-13 relative), so that
 * Newton's first power is its last (its step under CAP_NEWTON_CLOSE).
 * Below the knee two of Chebyshev's steps on P as a real function (no
 * exact power) from the chord's root do as well, and a third with its
 * residual nearly exact (below_close) takes the start to the real root,
 * from where the search goes with no power of Newton's. A batch's jobs
 * above the knee go first by the closed form to half an ULP and two or
 * three powers (close4); the rest four at a time by group4. */
#include "gpu_internal.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "bits.h"
#include "pow.h"

#ifdef SIM_POW_FMA
#include <immintrin.h>

typedef __m256d v4;
typedef __m256i w4;

#define TARGET __attribute__((target("avx2,fma")))
#define IN_LINE __attribute__((always_inline)) inline

TARGET static inline v4 v4_all(double x) { return _mm256_set1_pd(x); }

TARGET static inline v4 v4_abs(v4 x) {
  return _mm256_andnot_pd(v4_all(-0.0), x);
}

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
TARGET static inline v4 v4_and(v4 x, v4 y) { return _mm256_and_pd(x, y); }
TARGET static inline v4 v4_andnot(v4 x, v4 y) { return _mm256_andnot_pd(x, y); }
TARGET static inline int v4_lanes(v4 k) { return _mm256_movemask_pd(k); }
TARGET static inline v4 v4_of(w4 x) { return _mm256_castsi256_pd(x); }
TARGET static inline w4 w4_of(v4 x) { return _mm256_castpd_si256(x); }

/* What the lanes' solves share (the type) and hold apart (the load's
 * terms and the cap). */
typedef struct lanes4 {
  v4 idle, knee, phi_min, mem, clocked, cap;
} lanes4;

/* P's slope, bend and the last sum's rounding error at a clock
 * (gpu_power.c's power_point), lane by lane. */
typedef struct point4 {
  v4 slope, bend, err;
} point4;

/* x clamped to [phi_min, 1] as power_at clamps it, and d there:
 * sim_pow25_fma4_try's (1 at phi 1, pow(1, y) exactly). Returns the
 * lanes whose d is not yet pow's (near a midpoint or out of its range:
 * pow itself is their d). */
TARGET static IN_LINE int fraction4(const lanes4 *L, v4 x, v4 *phi, v4 *d) {
  v4 one = v4_all(1);
  *phi = v4_pick(v4_lt(x, L->phi_min), L->phi_min,
                 v4_pick(v4_gt(x, one), one, x));
  v4 at_one = _mm256_cmp_pd(*phi, one, _CMP_EQ_OQ);
  int unsure = sim_pow25_fma4_try(*phi, d) & ~v4_lanes(at_one);
  *d = v4_pick(at_one, one, *d);
  return unsure;
}

/* sim_pow25_into out of line, for a path that seldom needs it (its
 * arrays kept out of the caller's frame). */
TARGET static __attribute__((noinline, cold)) v4 pow25_cold(v4 x, v4 d,
                                                            int pow_lanes) {
  return sim_pow25_into(x, d, pow_lanes);
}

/* power_slope's sums lane by lane at a clamped phi with its d: P's
 * bits, its slope, bend and error in *pt. */
TARGET static IN_LINE v4 sums4(const lanes4 *L, v4 phi, v4 d, point4 *pt) {
  v4 one = v4_all(1), zero = _mm256_setzero_pd();
  v4 below = v4_lt(phi, L->knee);
  v4 s_mem = v4_pick(below, _mm256_div_pd(phi, L->knee), one);
  v4 dd = _mm256_div_pd(_mm256_mul_pd(v4_all(2.5), d), phi);
  pt->slope = _mm256_add_pd(v4_pick(below, _mm256_div_pd(L->mem, L->knee), zero),
                            _mm256_mul_pd(L->clocked, dd));
  pt->bend = _mm256_mul_pd(
      L->clocked, _mm256_div_pd(_mm256_mul_pd(v4_all(1.5), dd), phi));
  v4 a = _mm256_add_pd(L->idle, _mm256_mul_pd(L->mem, s_mem));
  v4 b = _mm256_mul_pd(L->clocked, d);
  v4 sum = _mm256_add_pd(a, b), b_part = _mm256_sub_pd(sum, a);
  pt->err = _mm256_add_pd(_mm256_sub_pd(a, _mm256_sub_pd(sum, b_part)),
                          _mm256_sub_pd(b, b_part));
  return sum;
}

/* power_fma lane by lane (power_slope's operations in its order), d
 * pow's bits in the lanes in want (the others' P are thrown away): P's
 * bits, its slope, bend and error in *pt. */
TARGET static IN_LINE v4 power4(const lanes4 *L, v4 x, int want,
                                point4 *pt) {
  v4 phi, d;
  int pow_lanes = fraction4(L, x, &phi, &d) & want;
  if (pow_lanes != 0)
    d = sim_pow25_into(phi, d, pow_lanes);
  return sums4(L, phi, d, pt);
}

/* Half an ULP of each lane of x > 0 (normal): gpu_power.c's half_ulp. */
TARGET static inline v4 half_ulp4(v4 x) {
  w4 e = _mm256_and_si256(w4_of(x), _mm256_set1_epi64x(0x7ff0000000000000LL));
  return v4_of(_mm256_sub_epi64(e, _mm256_set1_epi64x(53LL << 52)));
}

/* y^0.4 for y in (0, 1] to about 3e-13 relative (a start, not an
 * answer): a float's bits as its logarithm scaled by 0.4 (within 6%),
 * then two Halley steps of x^2.5 = y, x (1.5 w + 3.5 y) / (3.5 w + 1.5
 * y) with w = x^2 sqrt(x), cubic: 6e-2, 9e-5, 3e-13. */
TARGET static IN_LINE v4 root25(v4 y) {
  __m128 bits = _mm_cvtepi32_ps(_mm_castps_si128(_mm256_cvtpd_ps(y)));
  __m128 scaled = _mm_add_ps(_mm_mul_ps(bits, _mm_set1_ps(0.4f)),
                             _mm_set1_ps(0.6f * 0x3f800000));
  v4 x = _mm256_cvtps_pd(_mm_castsi128_ps(_mm_cvtps_epi32(scaled)));
  for (int i = 0; i < 2; i++) {
    v4 w = _mm256_mul_pd(_mm256_mul_pd(x, x), _mm256_sqrt_pd(x));
    v4 num = _mm256_fmadd_pd(v4_all(1.5), w, _mm256_mul_pd(v4_all(3.5), y));
    v4 den = _mm256_fmadd_pd(v4_all(3.5), w, _mm256_mul_pd(v4_all(1.5), y));
    x = _mm256_mul_pd(x, _mm256_div_pd(num, den));
  }
  return x;
}

/* Each lane's bracket [lo, hi] (P(lo) <= cap < P(hi)) and clock x. */
typedef struct bracket4 {
  v4 lo, hi, x;
} bracket4;

/* Two of Chebyshev's steps from the chord's root x toward P = target
 * below the knee, on P as a real function, (P_idle + mem x / knee) +
 * clocked x^2 sqrt(x), no exact power (a start, not an answer): 6e-2,
 * 2e-4, 8e-12 relative at the catalog's types. */
TARGET static IN_LINE v4 below_start(const lanes4 *L, v4 x, v4 target) {
  v4 m = _mm256_div_pd(L->mem, L->knee);
  for (int i = 0; i < 2; i++) {
    v4 s = _mm256_sqrt_pd(x), xs = _mm256_mul_pd(x, s);
    v4 f = _mm256_sub_pd(
        _mm256_fmadd_pd(L->clocked, _mm256_mul_pd(x, xs),
                        _mm256_fmadd_pd(m, x, L->idle)),
        target);
    v4 slope = _mm256_fmadd_pd(_mm256_mul_pd(v4_all(2.5), L->clocked), xs, m);
    v4 bend = _mm256_mul_pd(_mm256_mul_pd(v4_all(3.75), L->clocked), s);
    v4 step = _mm256_div_pd(f, slope);
    v4 half_bend = _mm256_mul_pd(v4_all(0.5), _mm256_div_pd(bend, slope));
    x = _mm256_sub_pd(x, _mm256_fmadd_pd(_mm256_mul_pd(half_bend, step), step,
                                         step));
  }
  return x;
}

/* x^2.5 as sim_pow25_fma's double-double h + t (2^-100) from s, the
 * rounded square root of x: the root's own error (x - s^2 exact by fma)
 * over 2 s, x^2 and x^2 s with their products' errors. Returns h. */
TARGET static IN_LINE v4 pow25_pair(v4 x, v4 s, v4 *t) {
  v4 q = _mm256_mul_pd(s, s);
  v4 s_lo = _mm256_div_pd(
      _mm256_sub_pd(_mm256_sub_pd(x, q), _mm256_fmsub_pd(s, s, q)),
      _mm256_mul_pd(v4_all(2), s));
  v4 p = _mm256_mul_pd(x, x), p_err = _mm256_fmsub_pd(x, x, p);
  v4 h = _mm256_mul_pd(p, s), h_err = _mm256_fmsub_pd(p, s, h);
  *t = _mm256_add_pd(
      h_err, _mm256_add_pd(_mm256_mul_pd(p, s_lo), _mm256_mul_pd(p_err, s)));
  return h;
}

/* The closed form's y above the knee: phi^2.5 = y is a + clocked phi^2.5
 * = cap + over (a = P_idle + P_mem L.mem, s_mem 1). */
TARGET static IN_LINE v4 above_y(const lanes4 *L, v4 over) {
  v4 a = _mm256_add_pd(L->idle, L->mem);
  return _mm256_div_pd(_mm256_add_pd(_mm256_sub_pd(L->cap, a), over),
                       L->clocked);
}

/* below_start's x taken to about half an ULP of the real root of
 * (P_idle + mem x / knee) + clocked x^2.5 = cap + over by one more of
 * Chebyshev's steps with its residual nearly exact: x^2.5 as
 * root25_close's double-double, mem x / knee and the sums with their
 * rounding errors (fma, TwoSum), cap less the sum exact (Sterbenz).
 * *close: the lanes whose step was under 2^-30 of x (from below_start's
 * 8e-12 its error is of order 1e-22), where the search starts from it
 * with no power of Newton's: P as evaluated crosses the cap within a
 * few ULP of that root (its inner sums' roundings), as near as Newton's
 * first step from below_start comes. A start, not an answer. */
TARGET static IN_LINE v4 below_close(const lanes4 *L, v4 x, v4 over,
                                    v4 *close) {
  v4 s = _mm256_sqrt_pd(x), t;
  v4 h = pow25_pair(x, s, &t);
  v4 c = L->clocked, ch = _mm256_mul_pd(c, h);
  v4 ch_err = _mm256_add_pd(_mm256_fmsub_pd(c, h, ch), _mm256_mul_pd(c, t));
  v4 u = _mm256_mul_pd(L->mem, x), u_err = _mm256_fmsub_pd(L->mem, x, u);
  v4 v = _mm256_div_pd(u, L->knee);
  v4 v_err = _mm256_div_pd(
      _mm256_add_pd(_mm256_fnmadd_pd(v, L->knee, u), u_err), L->knee);
  v4 s1 = _mm256_add_pd(L->idle, v), v_part = _mm256_sub_pd(s1, L->idle);
  v4 e1 = _mm256_add_pd(_mm256_sub_pd(L->idle, _mm256_sub_pd(s1, v_part)),
                        _mm256_sub_pd(v, v_part));
  v4 s2 = _mm256_add_pd(s1, ch), c_part = _mm256_sub_pd(s2, s1);
  v4 e2 = _mm256_add_pd(_mm256_sub_pd(s1, _mm256_sub_pd(s2, c_part)),
                        _mm256_sub_pd(ch, c_part));
  v4 e = _mm256_sub_pd(
      _mm256_add_pd(_mm256_sub_pd(L->cap, s2), over),
      _mm256_add_pd(_mm256_add_pd(e1, e2), _mm256_add_pd(v_err, ch_err)));
  v4 slope = _mm256_fmadd_pd(_mm256_mul_pd(v4_all(2.5), c), _mm256_mul_pd(x, s),
                             _mm256_div_pd(L->mem, L->knee));
  v4 bend = _mm256_mul_pd(_mm256_mul_pd(v4_all(3.75), c), s);
  v4 step = _mm256_div_pd(e, slope);
  v4 half_bend = _mm256_mul_pd(v4_all(0.5), _mm256_div_pd(bend, slope));
  step = _mm256_sub_pd(step,
                       _mm256_mul_pd(_mm256_mul_pd(half_bend, step), step));
  *close = v4_le(v4_abs(step), _mm256_mul_pd(v4_all(0x1p-30), x));
  return _mm256_add_pd(x, step);
}

/* The start, aimed as cap_newton aims, at the exact sum passing cap and
 * half its ULP: the closed form's root above the knee (lo at or over it:
 * s_mem 1 in the bracket), Chebyshev's steps from the chord's root below
 * it; each a few parts in 10^12 from the root, so that Newton's first
 * power is its last. Below the knee below_close's, and its close lanes
 * in *close (the others none). */
TARGET static IN_LINE v4 start4(const lanes4 *L, const bracket4 *b, v4 p_lo,
                               v4 p_hi, v4 over, v4 *close) {
  v4 chord = _mm256_add_pd(
      b->lo,
      _mm256_mul_pd(_mm256_sub_pd(b->hi, b->lo),
                    _mm256_div_pd(_mm256_sub_pd(L->cap, p_lo),
                                  _mm256_sub_pd(p_hi, p_lo))));
  v4 target = _mm256_add_pd(L->cap, over);
  v4 above = v4_ge(b->lo, L->knee);
  int n_above = __builtin_popcount((unsigned)v4_lanes(above));
  *close = _mm256_setzero_pd();
  if (n_above == 4)
    return root25(above_y(L, over));
  v4 below = below_close(L, below_start(L, chord, target), over, close);
  *close = v4_andnot(above, *close);
  if (n_above == 0)
    return below;
  return v4_pick(above, root25(above_y(L, over)), below);
}

/* cap_newton's loop lane by lane, for the lanes in live: each step's
 * clock inside the bracket (else its middle; a lane whose ends are
 * adjacent leaves), the bracket shrunk by its power, the step with its
 * second-order term, aimed past the cap by over less the sum's error; a
 * lane leaves once its step is under CAP_NEWTON_CLOSE of its clock. A
 * lane whose P is not finite leaves in *bad (its answer its lower end,
 * as the scalar's). */
TARGET static IN_LINE void newton4(const lanes4 *L, bracket4 *b, v4 live,
                                  v4 over, v4 *bad) {
  for (int i = 0; i < 100 && v4_lanes(live) != 0; i++) {
    v4 mid = _mm256_add_pd(b->lo, _mm256_mul_pd(v4_all(0.5),
                                                _mm256_sub_pd(b->hi, b->lo)));
    v4 x = v4_pick(v4_and(v4_gt(b->x, b->lo), v4_lt(b->x, b->hi)), b->x, mid);
    b->x = v4_pick(live, x, b->x);
    live = v4_and(live, v4_and(v4_gt(x, b->lo), v4_lt(x, b->hi)));
    point4 pt;
    v4 px = power4(L, x, v4_lanes(live), &pt);
    v4 out = v4_andnot(v4_lt(v4_abs(px), v4_all(INFINITY)), live);
    *bad = _mm256_or_pd(*bad, out);
    live = v4_andnot(out, live);
    v4 held = v4_le(px, L->cap);
    b->lo = v4_pick(v4_and(live, held), x, b->lo);
    b->hi = v4_pick(v4_andnot(held, live), x, b->hi);
    v4 step = _mm256_div_pd(
        _mm256_add_pd(_mm256_sub_pd(L->cap, px), _mm256_sub_pd(over, pt.err)),
        pt.slope);
    v4 half_bend = _mm256_mul_pd(v4_all(0.5), _mm256_div_pd(pt.bend, pt.slope));
    step = _mm256_sub_pd(step,
                         _mm256_mul_pd(_mm256_mul_pd(half_bend, step), step));
    x = _mm256_add_pd(x, step);
    b->x = v4_pick(live, x, b->x);
    live = v4_andnot(v4_le(v4_abs(step), _mm256_mul_pd(v4_all(0x1p-17), x)),
                     live);
  }
}

/* The bracket's ends as bits (positive doubles order as their bits),
 * the side each lane's search goes (up: from lo) and the lanes whose P
 * was not finite. */
typedef struct bits4 {
  w4 lo, hi;
  v4 up, bad;
} bits4;

/* Whether P at the clocks of bits x is under the cap, for the lanes in
 * k: the bracket moved to x (held: lo; over: hi; not finite: bad). */
TARGET static IN_LINE v4 held4(const lanes4 *L, bits4 *s, w4 x, v4 k) {
  point4 pt;
  v4 px = power4(L, v4_of(x), v4_lanes(k), &pt);
  v4 held = v4_le(px, L->cap);
  v4 bad = v4_andnot(v4_lt(v4_abs(px), v4_all(INFINITY)), k);
  s->bad = _mm256_or_pd(s->bad, bad);
  s->lo = w4_of(v4_pick(v4_and(k, held), v4_of(x), v4_of(s->lo)));
  s->hi = w4_of(v4_pick(v4_andnot(_mm256_or_pd(held, bad), k), v4_of(x),
                        v4_of(s->hi)));
  return held;
}

/* The lanes (of k) whose ends are further apart than one double. */
TARGET static inline v4 wide4(const bits4 *s, v4 k) {
  w4 width = _mm256_sub_epi64(s->hi, s->lo);
  return v4_and(k, v4_of(_mm256_cmpgt_epi64(width, _mm256_set1_epi64x(1))));
}

/* The gallop's first steps of one ULP each before they double: P as
 * evaluated crosses the cap within -5 .. +4 ULP of the start (its inner
 * sums' roundings; bench-10k's request peak, 6.1 M solves: 47% at -1 or
 * 0, 33% at -2 or 1, 15% at -3 or 2), and a group of four lanes takes
 * its slowest lane's rounds: steps of 1, 2, 4 took four rounds at -3 .. 2
 * and six past, these three to five (4.14 -> 3.7 rounds a group, by the
 * counts). */
#define SEARCH_STEPS_OF_ONE 4

/* cap_search lane by lane, to adjacent doubles in every lane whose P
 * stays finite: Newton's last clock g first (its side known where it is
 * an end; else moved to the middle where it is outside the bracket),
 * then a gallop from g's side (steps of one ULP SEARCH_STEPS_OF_ONE
 * times, then 2, 4, ... ULP, short of the far end) until a clock's side
 * differs, then halves of the bracket. A round's power is four lanes',
 * so the group's rounds are its slowest lane's. */
TARGET static IN_LINE bits4 search4(const lanes4 *L, const bracket4 *b,
                                   v4 live, v4 bad) {
  bits4 s = {w4_of(b->lo), w4_of(b->hi), _mm256_setzero_pd(), bad};
  w4 g = w4_of(b->x);
  live = v4_andnot(bad, live);
  s.up = v4_of(_mm256_cmpeq_epi64(g, s.lo));
  v4 at_end = _mm256_or_pd(s.up, v4_of(_mm256_cmpeq_epi64(g, s.hi)));
  v4 k = v4_andnot(at_end, wide4(&s, live));
  if (v4_lanes(k) != 0) {
    v4 in = v4_and(v4_of(_mm256_cmpgt_epi64(g, s.lo)),
                   v4_of(_mm256_cmpgt_epi64(s.hi, g)));
    w4 mid = _mm256_add_epi64(
        s.lo, _mm256_srli_epi64(_mm256_sub_epi64(s.hi, s.lo), 1));
    g = w4_of(v4_pick(in, v4_of(g), v4_of(mid)));
    s.up = v4_pick(k, held4(L, &s, g, k), s.up);
  }
  w4 step = _mm256_set1_epi64x(1);
  int turn = 0;
  v4 open = wide4(&s, v4_andnot(s.bad, live)), gallop = open;
  while (v4_lanes(open) != 0) {
    w4 width = _mm256_sub_epi64(s.hi, s.lo);
    gallop = v4_and(gallop, v4_of(_mm256_cmpgt_epi64(width, step)));
    w4 far = w4_of(v4_pick(s.up, v4_of(_mm256_add_epi64(s.lo, step)),
                           v4_of(_mm256_sub_epi64(s.hi, step))));
    w4 half = _mm256_add_epi64(s.lo, _mm256_srli_epi64(width, 1));
    w4 t = w4_of(v4_pick(gallop, v4_of(far), v4_of(half)));
    v4 held = held4(L, &s, t, open);
    gallop = v4_andnot(_mm256_xor_pd(held, s.up), gallop);
    if (++turn >= SEARCH_STEPS_OF_ONE)
      step = _mm256_slli_epi64(step, 1);
    open = wide4(&s, v4_andnot(s.bad, open));
  }
  return s;
}

/* One field of jobs x[0 .. 3] as lanes, lane i job x[i]'s. */
#define LANES(x, f) _mm256_set_pd((x)[3]->f, (x)[2]->f, (x)[1]->f, (x)[0]->f)

/* Jobs x[0 .. n - 1] (n in 1 .. 4) as lanes, the lanes past n copies of
 * the first (their answers not stored): job x[i]'s clock in *out[i]. */
TARGET static void group4(const gpu_cap_type *t, const gpu_cap_job *const *j,
                          size_t n, double *const *out) {
  const gpu_cap_job *x[4] = {j[0], j[n > 1], j[n > 2 ? 2 : 0], j[n > 3 ? 3 : 0]};
  lanes4 L = {v4_all(t->idle_w), v4_all(t->knee), v4_all(t->phi_min),
              LANES(x, mem),     LANES(x, clocked), LANES(x, cap)};
  bracket4 b = {LANES(x, lo), LANES(x, hi), _mm256_setzero_pd()};
  v4 over = half_ulp4(L.cap), bad = _mm256_setzero_pd(), close;
  b.x = start4(&L, &b, LANES(x, p_lo), LANES(x, p_hi), over, &close);
  static const int64_t first[8] = {-1, -1, -1, -1, 0, 0, 0, 0};
  v4 live = _mm256_loadu_pd((const double *)(first + 4 - n));
  if (v4_lanes(v4_andnot(close, live)) != 0)
    newton4(&L, &b, v4_andnot(close, live), over, &bad);
  double part[4];
  _mm256_storeu_pd(part, v4_of(search4(&L, &b, live, bad).lo));
  for (size_t i = 0; i < n; i++)
    *out[i] = part[i];
}

/* root25's x, y^0.4 within 3e-13, taken to within half an ULP of it by
 * one Newton step on x^2.5 = y with the residual exact: x^2.5 as
 * sim_pow25_fma's double-double h + t (2^-100), y - h exact (Sterbenz: y
 * and h agree to 3e-13), the step's own error of order 1e-25 relative. */
TARGET static IN_LINE v4 root25_close(v4 y) {
  v4 x = root25(y), t;
  v4 h = pow25_pair(x, _mm256_sqrt_pd(x), &t);
  v4 e = _mm256_sub_pd(_mm256_sub_pd(y, h), t);
  return _mm256_add_pd(
      x, _mm256_div_pd(_mm256_mul_pd(x, e), _mm256_mul_pd(v4_all(2.5), h)));
}

/* The closed form's root above the knee lane by lane, of a + clocked
 * phi^2.5 = cap + half its ULP (a = P_idle + P_mem L.mem, start4's aim),
 * to half an ULP (root25_close). */
TARGET static IN_LINE v4 above_root4(const lanes4 *L) {
  return root25_close(above_y(L, half_ulp4(L->cap)));
}

/* A lone job above the knee (lo at or over it: s_mem 1 in the bracket;
 * gpu_internal.h) by the closed form and one power of four neighbouring
 * doubles: the closed form's root of a + clocked phi^2.5 = cap + half
 * its ULP (a = P_idle + P_mem L.mem, start4's aim) to half an ULP, then
 * P at the doubles from one under it to two over, a lane each. Where
 * they show P(phi) <= cap < P(next double), phi is the definition's
 * answer (P as evaluated is monotone: one such phi); true and *phi that.
 * Only those two lanes' P need be pow's bits: where one's d is near a
 * midpoint pow gives it and the lanes are looked at again (the others
 * serve only to find the crossing). False where the crossing is not
 * among them (group4 solves it): bench-10k's fluid 10 minutes, 30 of
 * 7,212; the request's 3 minutes, 2 of 1,829. P is finite at every
 * clamped clock: the job's p_hi is, so its terms are. */
TARGET bool gpu__newton_lone(const gpu_cap_type *t, const gpu_cap_job *j,
                             double *phi) {
  lanes4 L = {v4_all(t->idle_w), v4_all(t->knee), v4_all(t->phi_min),
              v4_all(j->mem),    v4_all(j->clocked), v4_all(j->cap)};
  v4 root = above_root4(&L);
  w4 x = _mm256_add_epi64(w4_of(root), _mm256_set_epi64x(2, 1, 0, -1));
  v4 clamped, d;
  int unsure = fraction4(&L, v4_of(x), &clamped, &d);
  for (;;) {
    point4 pt;
    int held = v4_lanes(v4_le(sums4(&L, clamped, d, &pt), L.cap));
    if (held != 1 && held != 3 && held != 7)
      return false;
    int top = __builtin_popcount((unsigned)held) - 1;
    int pair = unsure & (3 << top);
    if (pair == 0) {
      *phi = sim_of_bits(sim_bits(_mm256_cvtsd_f64(root)) + (uint64_t)top - 1);
      return true;
    }
    d = pow25_cold(clamped, d, pair);
    unsure &= ~pair;
  }
}

/* Whether P at the clocks of bits x is at most the cap, lane by lane
 * (P's bits in the lanes in want, as power4). */
TARGET static IN_LINE v4 under4(const lanes4 *L, w4 x, int want) {
  point4 pt;
  return v4_le(power4(L, v4_of(x), want, &pt), L->cap);
}

/* Jobs j[0 .. n - 1] (n in 1 .. 4) above the knee (lo at or over it),
 * as lanes (those past n copies of the first), by gpu__newton_lone's
 * root r and P at r and at its neighbour toward the crossing: r where
 * P(r) <= cap < P(r + 1), r - 1 where P(r - 1) <= cap < P(r), and where
 * both r and r + 1 hold, r + 1 if P(r + 2) is over (a third power, for
 * those lanes). Each answer is two adjacent doubles' P either side of
 * the cap, so the definition's (P as evaluated is monotone); a lane
 * whose crossing is not among them (or whose root is not a clock: P
 * NaN holds nowhere) is left to group4. Job j[i]'s clock in *out[i] for
 * the lanes returned. Two powers of four lanes for four solves where
 * group4 takes a Newton step and at least two powers of the search (at
 * bench-10k's request peak 10.6% of the solves are above the knee, the
 * fluid's lone ones 92%: docs/performance-log.md, thirtieth session). */
TARGET static int close4(const gpu_cap_type *t, const gpu_cap_job *const *j,
                         size_t n, double *const *out) {
  const gpu_cap_job *x[4] = {j[0], j[n > 1], j[n > 2 ? 2 : 0], j[n > 3 ? 3 : 0]};
  lanes4 L = {v4_all(t->idle_w), v4_all(t->knee), v4_all(t->phi_min),
              LANES(x, mem),     LANES(x, clocked), LANES(x, cap)};
  int live = (1 << n) - 1;
  w4 r = w4_of(above_root4(&L)), one = _mm256_set1_epi64x(1);
  v4 at_r = under4(&L, r, live);
  w4 near = w4_of(v4_pick(at_r, v4_of(_mm256_add_epi64(r, one)),
                          v4_of(_mm256_sub_epi64(r, one))));
  v4 at_near = under4(&L, near, live);
  v4 done = _mm256_xor_pd(at_r, at_near);
  w4 answer = w4_of(v4_pick(at_r, v4_of(r), v4_of(near)));
  v4 up = v4_and(at_r, at_near);
  int more = v4_lanes(up) & live;
  if (more != 0) {
    v4 past = v4_andnot(under4(&L, _mm256_add_epi64(near, one), more), up);
    answer = w4_of(v4_pick(past, v4_of(near), v4_of(answer)));
    done = _mm256_or_pd(done, past);
  }
  double part[4];
  _mm256_storeu_pd(part, v4_of(answer));
  int got = v4_lanes(done) & live;
  for (size_t i = 0; i < n; i++)
    if (got >> i & 1)
      *out[i] = part[i];
  return got;
}

/* Jobs in a call's part at most (the pointers on the stack). */
#define LANES_PART 64

/* Jobs left to group4, with where their clocks go. */
typedef struct lanes_left {
  const gpu_cap_job *job[LANES_PART];
  double *out[LANES_PART];
  size_t n;
} lanes_left;

/* close4's jobs up[0 .. u - 1], those it does not settle left. */
static void close_or_leave(const gpu_cap_type *t, const gpu_cap_job *const *up,
                           size_t u, double *const *out, lanes_left *left) {
  int got = close4(t, up, u, out);
  for (size_t k = 0; k < u; k++)
    if (!(got >> k & 1))
      left->job[left->n] = up[k], left->out[left->n++] = out[k];
}

/* Jobs j[0 .. n - 1] (n at most LANES_PART): those above the knee by
 * close4, four at a time in the order met, then each it does not settle
 * with those below the knee by group4, four at a time. */
static void part_solved(const gpu_cap_type *t, const gpu_cap_job *j, size_t n,
                        double *phi) {
  lanes_left left = {.n = 0};
  const gpu_cap_job *up[4];
  double *up_out[4];
  size_t u = 0;
  for (size_t i = 0; i < n; i++) {
    if (!(j[i].lo >= t->knee)) {
      left.job[left.n] = &j[i], left.out[left.n++] = &phi[i];
      continue;
    }
    up[u] = &j[i], up_out[u++] = &phi[i];
    if (u == 4)
      close_or_leave(t, up, u, up_out, &left), u = 0;
  }
  if (u > 0)
    close_or_leave(t, up, u, up_out, &left);
  for (size_t k = 0; k < left.n; k += 4)
    group4(t, left.job + k, left.n - k < 4 ? left.n - k : 4, left.out + k);
}

void gpu__newton_lanes(const gpu_cap_type *t, const gpu_cap_job *j, size_t n,
                       double *phi) {
  if (n == 1) { /* the fluid's lone solves gpu__newton_lone left: group4's */
    group4(t, &j, 1, &phi);
    return;
  }
  for (size_t k = 0; k < n; k += LANES_PART)
    part_solved(t, j + k, n - k < LANES_PART ? n - k : LANES_PART, phi + k);
}
#endif
