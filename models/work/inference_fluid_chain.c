/* inference_fluid_chain.c - the stationary chain of a fluid replica's
 * decoding requests (inference_fluid.c describes the method): N = k R +
 * j requests decoding on R replicas kept even, a birth-death chain whose
 * stationary law is summed over a window around its mean, with the
 * geometric tail of waiting requests past a full batch. Apart from
 * inference_fluid_solve.c, which prices the step rows it reads. */
#include "inference_fluid_internal.h"

#include <math.h>
#include <string.h>

/* The chain's states N = k R + j (k requests on R - j replicas, k + 1
 * on j of them) are summed a block of one k at a time: the block's two
 * step rows, rates and token weights are read once, and (double)i / R
 * comes from a table (frac_for). Every sum takes the same terms in the
 * same order as a state-by-state pass, so the answer is the same to the
 * bit (tests/work/test_inference_fluid_solve.c). */
typedef struct blk {
  const step_row *r0, *r1; /* rows k and k + 1; NULL: k 0, or k the cap */
  double g0, g1;           /* their tokens/s (0 where NULL) */
  double w0, w1;           /* tok_b[k], tok_b[k + 1], kept in the block */
  bool ok0, ok1;           /* their steps within the TPOT limit */
  uint32_t k;
} blk;

/* What a pass over the chain holds fixed. */
typedef struct walk {
  const double *frac; /* frac[i] = (double)i / rr */
  const double *frev; /* frev[i] = frac[rr - i] */
  uint64_t top;       /* rr x bcap: every replica at the cap */
  double up, lim;     /* arrivals rr x rho; the TPOT limit */
  uint32_t rr, bcap;
  bool z512; /* the wide path's AVX-512 tier (sim_lanes_512) */
} walk;

static inline blk blk_open(inf_service *s, const walk *w, uint32_t k) {
  blk b = {.k = k};
  b.r0 = k > 0 ? inf__step_at(s, k) : NULL;
  b.r1 = k < w->bcap ? inf__step_at(s, k + 1) : NULL;
  b.g0 = b.r0 != NULL ? b.r0->g : 0;
  b.g1 = b.r1 != NULL ? b.r1->g : 0;
  b.ok0 = b.r0 != NULL && b.r0->t <= w->lim;
  b.ok1 = b.r1 != NULL && b.r1->t <= w->lim;
  b.w0 = s->fluid->tok_b[k];
  b.w1 = s->fluid->tok_b[k + 1];
  return b;
}

static inline void blk_close(inf_service *s, const blk *b) {
  s->fluid->tok_b[b->k] = b->w0;
  s->fluid->tok_b[b->k + 1] = b->w1;
}

/* The decoding rate of rr replicas holding k R + j requests evenly. In
 * the block of k 0 (zero: the caller's constant) g0 is 0 and (rr - j) x
 * 0 is +0, which added to the rest leaves it: dropped, the same bits. */
static inline __attribute__((always_inline)) double
blk_total(const blk *b, uint32_t rr, uint32_t j, bool zero, bool jpos) {
  double rest = jpos || j > 0 ? j * b->g1 : 0;
  return zero ? rest : (rr - j) * b->g0 + rest;
}

/* Adds a state's replicas at row r, share x of them (weight included),
 * decoding g tokens/s each, to the sums and to the row's token weight
 * w. Adding 0 to the TPOT sum (a step over the limit) is skipped: it
 * leaves the same bits. */
static inline __attribute__((always_inline)) void
add_row(chain *c, double x, const step_row *r, double g, bool ok, double *w) {
  double v = x * g;
  sim_d2 xx = {x, x};
  c->am += xx * row_pair(r, AM_AT);
  c->bc += xx * row_pair(r, BC_AT);
  *w += v;
  if (ok)
    c->tpot_ok += v;
}

/* Adds the chain's state (b->k, j) = n, of weight p. zero: b->k is 0
 * (a constant where it is called, so each block's loop is compiled for
 * its case): no row k, g0 0, lo x g0 +0 and p x 1 p, each dropped where
 * it leaves the same bits. */
static inline __attribute__((always_inline)) void
blk_add(blk *b, const walk *w, uint32_t j, uint64_t n, double p, chain *c,
        bool zero, bool jpos) {
  double lo = w->frac[w->rr - j], hi = w->frac[j];
  double rest = jpos || j > 0 ? hi * b->g1 : 0;
  c->z += p;
  c->busy += zero ? p * hi : p;
  /* n < 2^63 and rr < 2^32: as signed integers they convert in one
   * instruction each (unsigned ones take several), to the same values. */
  c->members += p * (double)(int64_t)n / (double)(int64_t)w->rr;
  c->tokens += p * (zero ? rest : lo * b->g0 + rest);
  if (!zero)
    add_row(c, p * lo, b->r0, b->g0, b->ok0, &b->w0);
  if (jpos || j > 0)
    add_row(c, p * hi, b->r1, b->g1, b->ok1, &b->w1);
}

#if SIM_LANES_AVX2
/* The wide path (AVX2): a block's states past its first (j > 0, not
 * mid, not top) four at a time, one state a lane (lanes by ascending
 * j). What a state's terms need but the weights before it (its rate, so
 * the ratio of its weight to the last's) and the products that make
 * its terms from its weight are worked out for the four at once, lane
 * by lane the scalar's operations in their order, so each lane has the
 * scalar's bits; the weights' products and each sum's adds stay one at
 * a time in the walk's order, as in blk_add. The four sums of blk_add's
 * own (z, busy, members, tokens) go as one register, the four states'
 * terms transposed, and the rows' (sm, mem, busy, compute share) as
 * another. A run's last states short of four go by blk_add. */
/* cnt states of b going up from j (n: its state), each the last's weight
 * times up / its rate: returns the last's weight. */
static inline __attribute__((always_inline)) double
steps_up(blk *b, const walk *w, uint32_t j, uint64_t n, uint32_t cnt, double p,
         chain *c, bool zero) {
  for (; cnt > 0; cnt--, j++, n++) {
    p *= w->up / blk_total(b, w->rr, j, zero, true);
    blk_add(b, w, j, n, p, c, zero, true);
  }
  return p;
}

/* cnt states of b going down from j (n: its state), each the weight
 * above times *above / up, *above then its rate: returns the last's
 * weight. */
static inline __attribute__((always_inline)) double
steps_down(blk *b, const walk *w, uint32_t j, uint64_t n, uint32_t cnt,
           double p, double *above, chain *c, bool zero) {
  for (; cnt > 0; cnt--, j--, n--) {
    p *= *above / w->up;
    blk_add(b, w, j, n, p, c, zero, true);
    *above = blk_total(b, w->rr, j, zero, true);
  }
  return p;
}

#define WIDE_INLINE static inline __attribute__((target("avx2"), always_inline))

/* x[i] in every lane. */
#define LANE(x, i) sim_d4_all((x)[i])

/* The sums a run adds to, in registers: sm (z, busy, members, tokens),
 * a the rows' (sm, mem, busy, compute share), wt the token weight of row
 * k, the TPOT sum and row k + 1's (each row's adds the others' +0: the
 * sums are never -0, so that leaves their bits). */
typedef struct wsum {
  sim_d4 sm, a, wt;
} wsum;

/* What a run holds fixed, in lanes: a0 and a1 the rows' loads and
 * compute shares, t0 and t1 their rates in the lanes of wt each adds to
 * (the TPOT sum's only within the limit) and +0 in the others (a share
 * x, finite and at least +0, a weight times a fraction, times +0 is the
 * +0 a mask of x times the rate leaves); g0 and g1 the rates, up the
 * arrivals, rr, nb the block's first count and step the lanes' j a
 * turn. Read from memory each turn (wide_run): held in registers with
 * the sums and a turn's terms they were more than the sixteen, and the
 * compiler kept the sums on the stack, a store and a load in each sum's
 * chain a turn. */
typedef struct wk {
  sim_d4 a0, a1, t0, t1, g0, g1, up, rr, nb, step;
} wk;

/* k, which the compiler must take for any address: each constant read
 * through it is loaded where used (a load beside the arithmetic, off the
 * sums' chains), not held in a register across the loop. */
static inline const wk *wk_opaque(const wk *k) {
  __asm__("" : "+r"(k));
  return k;
}

/* The rates of the four states from j (blk_total's terms). */
WIDE_INLINE sim_d4 wide_total(const wk *k, sim_d4 j, bool zero) {
  sim_d4 rest = j * k->g1;
  return zero ? rest : (k->rr - j) * k->g0 + rest;
}

/* A state added to the sums (st: its four terms side by side; x0, x1:
 * its share of each row in every lane). */
WIDE_INLINE wsum wide_add(wsum u, const wk *k, sim_d4 st, sim_d4 x0, sim_d4 x1,
                          bool zero) {
  u.sm += st;
  if (!zero) {
    u.a += x0 * k->a0;
    u.wt += x0 * k->t0;
  }
  u.a += x1 * k->a1;
  u.wt += x1 * k->t1;
  return u;
}

/* The four states from jl (of weights p) added to u in the walk's order
 * (n: their counts of requests, as doubles). The sums go by value, so
 * they stay in registers. */
/* The four states' terms from jl (of weights p; n: their counts of
 * requests, as doubles): st[i] state i's four sums' terms side by side,
 * xs[i] and xs[4 + i] its shares x0 and x1 of the rows. */
WIDE_INLINE void wide_terms(const wk *k, const walk *w, uint32_t jl, sim_d4 n,
                            sim_d4 p, bool zero, sim_d4 st[4], double xs[8]) {
  sim_d4 hi = sim_d4_at(w->frac + jl), x0 = sim_d4_all(0);
  sim_d4 rest = hi * k->g1, x1 = p * hi, tok = p * rest;
  if (!zero) {
    sim_d4 lo = sim_d4_at(w->frev + jl);
    x0 = p * lo;
    tok = p * (lo * k->g0 + rest);
  }
  sim_d4_transpose_put((double *)st, p, zero ? x1 : p, p * n / k->rr, tok);
  /* Each state's shares, x0 and x1's lanes, go to every lane by a
   * broadcast from memory (a load) rather than a shuffle from the
   * register: the turn is bound by what it issues (a quarter of it
   * shuffles), not by its sums' chains of adds (docs/performance-log.md,
   * "two fluid chain walks interleaved"). The asm has the compiler read
   * xs from memory, not keep it in registers. The same products: the
   * same bits. */
  sim_d4_put(xs, x0);
  sim_d4_put(xs + 4, x1);
  __asm__("" : "+m"(*(double(*)[8])xs));
}

WIDE_INLINE wsum wide_sums(const wk *k, const walk *w, uint32_t jl, sim_d4 n,
                           sim_d4 p, bool up, bool zero, wsum u) {
  sim_d4 st[4];
  double xs[8];
  wide_terms(k, w, jl, n, p, zero, st, xs);
  if (up) {
    u = wide_add(u, k, st[0], LANE(xs, 0), LANE(xs, 4), zero);
    u = wide_add(u, k, st[1], LANE(xs, 1), LANE(xs, 5), zero);
    u = wide_add(u, k, st[2], LANE(xs, 2), LANE(xs, 6), zero);
    return wide_add(u, k, st[3], LANE(xs, 3), LANE(xs, 7), zero);
  }
  u = wide_add(u, k, st[3], LANE(xs, 3), LANE(xs, 7), zero);
  u = wide_add(u, k, st[2], LANE(xs, 2), LANE(xs, 6), zero);
  u = wide_add(u, k, st[1], LANE(xs, 1), LANE(xs, 5), zero);
  return wide_add(u, k, st[0], LANE(xs, 0), LANE(xs, 4), zero);
}

/* The weights of the four states of j (lanes by ascending j) going up
 * from weight p (each the last's times up / its rate), or down (each
 * times the rate above it / up, *above the rate above the four, left at
 * the lowest's). */
WIDE_INLINE sim_d4 wide_weights(const wk *k, sim_d4 j, bool up, bool zero,
                                double p, double *above) {
  sim_d4 tot = wide_total(k, j, zero);
  if (up) {
    sim_d4 q = k->up / tot;
    double p0 = p * q[0], p1 = p0 * q[1], p2 = p1 * q[2], p3 = p2 * q[3];
    return (sim_d4){p0, p1, p2, p3};
  }
  sim_d4 q = SIM_D4_PICK(tot, sim_d4_all(*above), 1, 2, 3, 4) / k->up;
  double p3 = p * q[3], p2 = p3 * q[2], p1 = p2 * q[1], p0 = p1 * q[0];
  *above = tot[0];
  return (sim_d4){p0, p1, p2, p3};
}

/* A run's weights two turns ahead of its sums. The weights' chain of
 * products (each state's the last's times a ratio, four a turn) is what
 * the turn waits on: computed in the turn that adds them, behind the
 * sums of the turn before in program order, its next products could not
 * start until those sums were under way. Here turn t + 2's weights come
 * first in turn t's code. The same weights from the same ratios, in the
 * same order (and *above's, down, the same sequence): the same bits. */
typedef struct wq {
  sim_d4 pw, jv; /* this turn's weights and lanes' j */
  sim_d4 pn, jn; /* the next turn's (pn: when it has one) */
  double ab;     /* wide_weights' *above going down */
} wq;

/* The weight the run goes on from after the four states of pw. */
WIDE_INLINE double wq_last(sim_d4 pw, bool up) { return up ? pw[3] : pw[0]; }

/* The first two turns' weights of a run of cnt states (>= 4) from lanes
 * jv, entering at weight p (ab: the rate above, going down). */
WIDE_INLINE void wq_open(wq *q, const wk *k, sim_d4 jv, uint32_t cnt, bool up,
                         bool zero, double p, double ab) {
  q->ab = ab;
  q->jv = jv;
  q->pw = wide_weights(k, jv, up, zero, p, &q->ab);
  q->jn = jv + k->step;
  q->pn = q->pw;
  if (cnt >= 8)
    q->pn = wide_weights(k, q->jn, up, zero, wq_last(q->pw, up), &q->ab);
}

/* To the next turn, with cnt states left from this one: the turn after
 * it worked out where there is one. */
WIDE_INLINE void wq_ahead(wq *q, const wk *k, uint32_t cnt, bool up,
                          bool zero) {
  sim_d4 jnn = q->jn + k->step, pnn = q->pn;
  if (cnt >= 12)
    pnn = wide_weights(k, jnn, up, zero, wq_last(q->pn, up), &q->ab);
  q->pw = q->pn;
  q->jv = q->jn;
  q->pn = pnn;
  q->jn = jnn;
}

/* Chain c's running sums in lanes, and block b's constants into *k. */
WIDE_INLINE wsum wsum_open(const blk *b, const walk *w, const chain *c, bool up,
                           bool zero, wk *k) {
  const int64_t all = -1, ok0 = b->ok0 ? -1 : 0, ok1 = b->ok1 ? -1 : 0;
  const sim_i4 m0 = {all, ok0, 0, 0}, m1 = {0, ok1, all, 0};
  /* Field by field: a compound literal zeroed the whole 320 bytes first
   * (a rep stos, slow to start on AMD's cores, for a0 alone; zero never
   * reads a0). */
  k->a0 = zero ? sim_d4_all(0) : sim_d4_at((const char *)b->r0 + AM_AT);
  k->a1 = sim_d4_at((const char *)b->r1 + AM_AT);
  k->t0 = (sim_d4)((sim_i4)sim_d4_all(b->g0) & m0);
  k->t1 = (sim_d4)((sim_i4)sim_d4_all(b->g1) & m1);
  k->g0 = sim_d4_all(b->g0);
  k->g1 = sim_d4_all(b->g1);
  k->up = sim_d4_all(w->up);
  k->rr = sim_d4_all(w->rr);
  k->nb = sim_d4_all((double)((uint64_t)b->k * w->rr));
  k->step = sim_d4_all(up ? 4 : -4);
  return (wsum){.sm = {c->z, c->busy, c->members, c->tokens},
                .a = {c->am[0], c->am[1], c->bc[0], c->bc[1]},
                .wt = {b->w0, c->tpot_ok, b->w1, 0}};
}

/* The sums of u back to c and b. */
WIDE_INLINE void wsum_close(wsum u, blk *b, chain *c) {
  c->z = u.sm[0];
  c->busy = u.sm[1];
  c->members = u.sm[2];
  c->tokens = u.sm[3];
  c->am = (sim_d2){u.a[0], u.a[1]};
  c->bc = (sim_d2){u.a[2], u.a[3]};
  b->w0 = u.wt[0];
  c->tpot_ok = u.wt[1];
  b->w1 = u.wt[2];
}

/* cnt states of block b past its first from j (up: j, j + 1, ...;
 * down: j, j - 1, ..., *above the rate above j), entering at weight p:
 * returns the last one's weight (down: *above its rate). */
WIDE_INLINE double wide_run(blk *b, const walk *w, uint32_t j, uint32_t cnt,
                            bool up, double p, double *above, chain *c,
                            bool zero) {
  wk kk;
  wsum u = wsum_open(b, w, c, up, zero, &kk);
  /* The lanes' j counted in doubles, exact (sum_chain: below 2^52). */
  sim_d4 jv = sim_d4_all(up ? j : j - 3) + (sim_d4){0, 1, 2, 3};
  wq q = {.ab = up ? 0 : *above};
  if (cnt >= 4)
    wq_open(&q, &kk, jv, cnt, up, zero, p, q.ab);
  for (; cnt >= 4; cnt -= 4) {
    const wk *k = wk_opaque(&kk);
    uint32_t jl = up ? j : j - 3;
    sim_d4 pw = q.pw, jt = q.jv;
    wq_ahead(&q, k, cnt, up, zero);
    p = wq_last(pw, up);
    u = wide_sums(k, w, jl, k->nb + jt, pw, up, zero, u);
    j = up ? j + 4 : j - 4;
  }
  if (!up)
    *above = q.ab;
  wsum_close(u, b, c);
  uint64_t n = (uint64_t)b->k * w->rr + j;
  return up ? steps_up(b, w, j, n, cnt, p, c, zero)
            : steps_down(b, w, j, n, cnt, p, above, c, zero);
}

/* wide_run out of line, one copy a case. */
static __attribute__((target("avx2"), noinline)) double
wide_block(blk *b, const walk *w, uint32_t j, uint32_t cnt, bool up, double p,
           double *above, chain *c) {
  if (b->k == 0)
    return up ? wide_run(b, w, j, cnt, true, p, above, c, true)
              : wide_run(b, w, j, cnt, false, p, above, c, true);
  return up ? wide_run(b, w, j, cnt, true, p, above, c, false)
            : wide_run(b, w, j, cnt, false, p, above, c, false);
}

/* The AVX-512 path (sim_lanes_512): the same turn of four states, the
 * same operations in the same order lane by lane, so the same bits. The
 * turn is bound by what it issues (docs/performance-log.md, "two fluid chain
 * walks interleaved"), and here it issues less: the rows' sums and the
 * token weights go as one register of eight lanes (a's four, wt's four),
 * so each state's two products and adds a row are one of each, not two;
 * and with 32 registers the run's constants, the weight and the sums
 * stay in registers (no wk_opaque, nothing on the stack). */
#define W512_INLINE                                                            \
  static inline                                                                \
      __attribute__((target("avx2,avx512f,avx512vl,avx512dq"), always_inline))

typedef double sim_d8 __attribute__((vector_size(64)));

/* wsum's a and wt side by side, and a row's constants the same way. */
typedef struct wsum8 {
  sim_d4 sm;
  sim_d8 aw;
} wsum8;

typedef struct wk8 {
  wk k;
  sim_d8 at0, at1; /* k.a0 then k.t0; k.a1 then k.t1 */
} wk8;

W512_INLINE sim_d8 d8_join(sim_d4 lo, sim_d4 hi) {
  return __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 4, 5, 6, 7);
}

W512_INLINE sim_d8 d8_all(double x) { return (sim_d8){x, x, x, x, x, x, x, x}; }

/* wide_add's adds, a and wt at once. */
W512_INLINE wsum8 wide_add8(wsum8 u, const wk8 *k, sim_d4 st, double x0,
                            double x1, bool zero) {
  u.sm += st;
  if (!zero)
    u.aw += d8_all(x0) * k->at0;
  u.aw += d8_all(x1) * k->at1;
  return u;
}

/* wide_sums with wide_add8. */
W512_INLINE wsum8 wide_sums8(const wk8 *k8, const walk *w, uint32_t jl,
                             sim_d4 n, sim_d4 p, bool up, bool zero, wsum8 u) {
  sim_d4 st[4];
  double xs[8];
  wide_terms(&k8->k, w, jl, n, p, zero, st, xs);
  if (up) {
    u = wide_add8(u, k8, st[0], xs[0], xs[4], zero);
    u = wide_add8(u, k8, st[1], xs[1], xs[5], zero);
    u = wide_add8(u, k8, st[2], xs[2], xs[6], zero);
    return wide_add8(u, k8, st[3], xs[3], xs[7], zero);
  }
  u = wide_add8(u, k8, st[3], xs[3], xs[7], zero);
  u = wide_add8(u, k8, st[2], xs[2], xs[6], zero);
  u = wide_add8(u, k8, st[1], xs[1], xs[5], zero);
  return wide_add8(u, k8, st[0], xs[0], xs[4], zero);
}

/* wide_run with wide_sums8. */
W512_INLINE double wide_run8(blk *b, const walk *w, uint32_t j, uint32_t cnt,
                             bool up, double p, double *above, chain *c,
                             bool zero) {
  wk8 k8;
  const wk *k = &k8.k;
  wsum u4 = wsum_open(b, w, c, up, zero, &k8.k);
  k8.at0 = d8_join(k->a0, k->t0);
  k8.at1 = d8_join(k->a1, k->t1);
  wsum8 u = {.sm = u4.sm, .aw = d8_join(u4.a, u4.wt)};
  sim_d4 jv = sim_d4_all(up ? j : j - 3) + (sim_d4){0, 1, 2, 3};
  wq q = {.ab = up ? 0 : *above};
  if (cnt >= 4)
    wq_open(&q, k, jv, cnt, up, zero, p, q.ab);
  for (; cnt >= 4; cnt -= 4) {
    uint32_t jl = up ? j : j - 3;
    sim_d4 pw = q.pw, jt = q.jv;
    wq_ahead(&q, k, cnt, up, zero);
    p = wq_last(pw, up);
    u = wide_sums8(&k8, w, jl, k->nb + jt, pw, up, zero, u);
    j = up ? j + 4 : j - 4;
  }
  if (!up)
    *above = q.ab;
  u4.sm = u.sm;
  u4.a = __builtin_shufflevector(u.aw, u.aw, 0, 1, 2, 3);
  u4.wt = __builtin_shufflevector(u.aw, u.aw, 4, 5, 6, 7);
  wsum_close(u4, b, c);
  uint64_t n = (uint64_t)b->k * w->rr + j;
  return up ? steps_up(b, w, j, n, cnt, p, c, zero)
            : steps_down(b, w, j, n, cnt, p, above, c, zero);
}

/* wide_run8 out of line, one copy a case. */
static
    __attribute__((target("avx2,avx512f,avx512vl,avx512dq"), noinline)) double
    wide_block8(blk *b, const walk *w, uint32_t j, uint32_t cnt, bool up,
                double p, double *above, chain *c) {
  if (b->k == 0)
    return up ? wide_run8(b, w, j, cnt, true, p, above, c, true)
              : wide_run8(b, w, j, cnt, false, p, above, c, true);
  return up ? wide_run8(b, w, j, cnt, true, p, above, c, false)
            : wide_run8(b, w, j, cnt, false, p, above, c, false);
}

/* The tier the walk was given (walk's z512). */
static inline double wide_tier(blk *b, const walk *w, uint32_t j, uint32_t cnt,
                               bool up, double p, double *above, chain *c) {
  return w->z512 ? wide_block8(b, w, j, cnt, up, p, above, c)
                 : wide_block(b, w, j, cnt, up, p, above, c);
}
#else
static double wide_tier(blk *b, const walk *w, uint32_t j, uint32_t cnt,
                        bool up, double p, double *above, chain *c) {
  (void)b, (void)w, (void)j, (void)cnt, (void)up, (void)above, (void)c;
  return p; /* never called: no wide path */
}
#endif

/* States n .. end (n <= end) of block b going up (from mid, whose
 * weight is 1): returns the weight of end. Only a block's first state
 * can be mid, have j 0 or be top (j 0 of block bcap): it is taken apart,
 * the rest (jpos: j > 0, past mid, not top) go without those tests. */
static inline __attribute__((always_inline)) double
up_block(blk *b, const walk *w, uint64_t n, uint64_t end, uint64_t mid,
         double p, double *p_top, chain *c, bool zero, bool wide) {
  uint32_t rr = w->rr, j = (uint32_t)(n % rr);
  if (n > mid)
    p *= w->up / blk_total(b, rr, j, zero, false);
  blk_add(b, w, j, n, p, c, zero, false);
  if (n == w->top)
    *p_top = p;
  if (wide)
    return end > n
               ? wide_tier(b, w, j + 1, (uint32_t)(end - n), true, p, NULL, c)
               : p;
  return end > n ? steps_up(b, w, j + 1, n + 1, (uint32_t)(end - n), p, c, zero)
                 : p;
}

/* States n - 1 down to start (< n) of block b (j: that of n - 1), each
 * the one above times above / up: returns the weight of start; *above
 * the rate of start. Only start can have j 0: it is taken apart. */
static inline __attribute__((always_inline)) double
down_block(blk *b, const walk *w, uint64_t n, uint64_t start, uint32_t j,
           double p, double *above, chain *c, bool zero, bool wide) {
  if (wide && n > start + 1) {
    uint32_t cnt = (uint32_t)(n - 1 - start);
    p = wide_tier(b, w, j, cnt, false, p, above, c);
    n -= cnt;
    j -= cnt;
  }
  if (n > start + 1) {
    uint32_t cnt = (uint32_t)(n - 1 - start);
    p = steps_down(b, w, j, n - 1, cnt, p, above, c, zero);
    n -= cnt;
    j -= cnt;
  }
  p *= *above / w->up; /* start */
  blk_add(b, w, j, --n, p, c, zero, false);
  *above = blk_total(b, w->rr, j, zero, false);
  return p;
}

/* States mid .. hi, each weighing the one below times up / its rate;
 * returns the weight at top (0: not in the window). */
static inline __attribute__((always_inline)) double
chain_up(inf_service *s, const walk *w, uint64_t mid, uint64_t hi, chain *c,
         bool wide) {
  double p = 1, p_top = 0;
  uint32_t rr = w->rr;
  for (uint64_t n = mid; n <= hi;) {
    uint32_t k = (uint32_t)(n / rr);
    uint64_t end = (uint64_t)k * rr + rr - 1;
    end = end < hi ? end : hi;
    blk b = blk_open(s, w, k);
    p = k == 0 ? up_block(&b, w, n, end, mid, p, &p_top, c, true, wide)
               : up_block(&b, w, n, end, mid, p, &p_top, c, false, wide);
    n = end + 1;
    blk_close(s, &b);
  }
  return p_top;
}

/* States mid - 1 down to lo, each weighing the one above times the
 * rate of the one above / up. */
static inline __attribute__((always_inline)) void
chain_down(inf_service *s, const walk *w, uint64_t mid, uint64_t lo, chain *c,
           bool wide) {
  uint32_t rr = w->rr, jm = (uint32_t)(mid % rr), km = (uint32_t)(mid / rr);
  double g0 = inf__rate_at(s, km), g1 = jm > 0 ? inf__rate_at(s, km + 1) : 0;
  double above = (rr - jm) * g0 + (jm > 0 ? jm * g1 : 0), p = 1;
  for (uint64_t n = mid; n > lo;) {
    uint32_t k = (uint32_t)((n - 1) / rr), j = (uint32_t)((n - 1) % rr);
    uint64_t start = (uint64_t)k * rr;
    start = start > lo ? start : lo;
    blk b = blk_open(s, w, k);
    p = k == 0 ? down_block(&b, w, n, start, j, p, &above, c, true, wide)
               : down_block(&b, w, n, start, j, p, &above, c, false, wide);
    n = start;
    blk_close(s, &b);
  }
}

/* The requests waiting beyond a full chain (every replica at bcap): a
 * geometric tail of ratio r, cut at jmax waiting (0: no limit). Adds its
 * mass as full-batch states, its mean queue and the chance an arrival
 * finds it full. */
static void add_tail(inf_service *s, double p_full, double r, double jmax,
                     uint32_t rr, uint32_t bcap, double tpot_lim, chain *c) {
  double rj = jmax > 0 ? pow(r, jmax) : 0;
  double mass = p_full * r * (1 - rj) / (1 - r);
  double queue =
      p_full * r * (1 - (jmax + 1) * rj + jmax * rj * r) / ((1 - r) * (1 - r));
  const step_row *row = inf__step_at(s, bcap);
  double g = bcap / row->t;
  c->z += mass;
  c->busy += mass;
  c->members += mass * bcap;
  c->tokens += mass * g;
  sim_d2 mm = {mass, mass};
  c->am += mm * row_pair(row, AM_AT);
  c->bc += mm * row_pair(row, BC_AT);
  s->fluid->tok_b[bcap] += mass * g;
  c->tpot_ok += row->t <= tpot_lim ? mass * g : 0;
  c->waiting += queue / rr;
  c->full += p_full + mass;
  c->block += p_full * rj;
}

void inf__row_bounds(inf_service *s, uint32_t b) {
  inf_fluid *f = s->fluid;
  step_row *row = &f->tab[b];
  if (!(row->bat.key == b))
    rl_batch_of(&s->proto, b, &row->bat);
  row->g_hi = b / rl_decode_step_batch_s(&row->bat, f->tab_ctx, &f->full);
  row->g_lo = b / rl_decode_step_batch_s(&row->bat, f->tab_ctx, &f->slow);
  row->bnd_ctx = f->tab_ctx;
}

/* inf__rate_at(s, b) <= rho, b > 0, the same answer: from row b's
 * bounds where they decide it (a row not yet priced at this clock, in a
 * context seen before), else from the row. mean_batch's search asks
 * about eight rows a solve, most of them far from rho, and the clock is
 * new every span: each was priced (five divisions in a chain the search
 * waits on) for a compare its bounds answer. */
static bool rate_at_most(inf_service *s, uint32_t b, double rho) {
  inf_fluid *f = s->fluid;
  const step_row *row = &f->tab[b];
  if (row->gen != f->tab_gen && f->ctx_steady) {
    if (!(row->bnd_ctx == f->tab_ctx))
      inf__row_bounds(s, b);
    if (row->g_hi * (1 + INF_BOUND_EPS) <= rho)
      return true;
    if (rho < row->g_lo * (1 - INF_BOUND_EPS))
      return false;
  }
  return inf__rate_at(s, b) <= rho;
}

/* The per-replica decode rate rho (tokens/s) sits between the batch
 * sizes k and k + 1: the balanced mean batch k + frac. */
static double mean_batch(inf_service *s, double rho, uint32_t bcap) {
  uint32_t lo = 0, hi = bcap;
  while (hi - lo > 1) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (rate_at_most(s, mid, rho))
      lo = mid;
    else
      hi = mid;
  }
  double g0 = inf__rate_at(s, lo), g1 = inf__rate_at(s, lo + 1);
  return lo + fmin(1, (rho - g0) / (g1 - g0));
}

/* Readies the token weights for a chain writing [lo, hi): tok_b is 0
 * but where the last chain wrote, so only that is cleared. */
static void tok_reset(inf_fluid *f, size_t lo, size_t hi) {
  if (f->tok_hi > f->tok_lo)
    memset(f->tok_b + f->tok_lo, 0, (f->tok_hi - f->tok_lo) * sizeof *f->tok_b);
  f->tok_lo = lo;
  f->tok_hi = hi; /* k + 1 at the window's top: at most bcap + 1 */
}

/* Sums the chain over a window around its mean; the states' weights
 * are products of birth-death ratios from the mean outwards (no
 * logarithms: they fall away from the mean, so nothing overflows). */
void inf__sum_chain(inf_service *s, double rho, uint32_t rr, uint32_t bcap,
                    double tpot_lim, chain *c) {
  double m = mean_batch(s, rho, bcap) * rr;
  double half = 8 * sqrt(m + 1) + 4;
  uint64_t top = (uint64_t)rr * bcap;
  uint64_t lo = m > half ? (uint64_t)(m - half) : 0;
  uint64_t hi = (uint64_t)fmin((double)top, ceil(m + half));
  uint64_t mid = (uint64_t)fmin((double)hi, fmax((double)lo, round(m)));
  inf_fluid *f = s->fluid;
  tok_reset(f, (size_t)(lo / rr), (size_t)(hi / rr) + 2);
  walk w = {f->frac, f->frac + rr + 1, top, rr * rho, tpot_lim, rr,
            bcap,    sim_lanes_512()};
  chain acc = *c; /* nothing else can write it: kept in registers */
  double p_top;
  /* The wide path's counts in doubles are exact below 2^53. */
  if (sim_lanes_wide() && top < (uint64_t)1 << 52) {
    p_top = chain_up(s, &w, mid, hi, &acc, true);
    chain_down(s, &w, mid, lo, &acc, true);
  } else {
    p_top = chain_up(s, &w, mid, hi, &acc, false);
    chain_down(s, &w, mid, lo, &acc, false);
  }
  *c = acc;
  if (hi == top && p_top > 0) {
    double r = fmin(rho / inf__rate_at(s, bcap), 1 - 1e-9);
    double jmax = (double)s->c->max_queue * rr;
    add_tail(s, p_top, r, jmax, rr, bcap, tpot_lim, c);
    f->tok_hi = f->tok_hi > (size_t)bcap + 1 ? f->tok_hi : (size_t)bcap + 1;
  }
}
