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
  uint64_t top;       /* rr x bcap: every replica at the cap */
  double up, lim;     /* arrivals rr x rho; the TPOT limit */
  uint32_t rr, bcap;
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

/* States n .. end (n <= end) of block b going up (from mid, whose
 * weight is 1): returns the weight of end. Only a block's first state
 * can be mid, have j 0 or be top (j 0 of block bcap): it is taken apart,
 * the rest (jpos: j > 0, past mid, not top) go without those tests. */
static inline __attribute__((always_inline)) double
up_block(blk *b, const walk *w, uint64_t n, uint64_t end, uint64_t mid,
         double p, double *p_top, chain *c, bool zero) {
  uint32_t rr = w->rr, j = (uint32_t)(n % rr);
  if (n > mid)
    p *= w->up / blk_total(b, rr, j, zero, false);
  blk_add(b, w, j, n, p, c, zero, false);
  if (n == w->top)
    *p_top = p;
  for (n++, j++; n <= end; n++, j++) {
    p *= w->up / blk_total(b, rr, j, zero, true);
    blk_add(b, w, j, n, p, c, zero, true);
  }
  return p;
}

/* States n - 1 down to start (< n) of block b (j: that of n - 1), each
 * the one above times above / up: returns the weight of start; *above
 * the rate of start. Only start can have j 0: it is taken apart. */
static inline __attribute__((always_inline)) double
down_block(blk *b, const walk *w, uint64_t n, uint64_t start, uint32_t j,
           double p, double *above, chain *c, bool zero) {
  for (; n > start + 1; j--) {
    p *= *above / w->up;
    blk_add(b, w, j, --n, p, c, zero, true);
    *above = blk_total(b, w->rr, j, zero, true);
  }
  p *= *above / w->up; /* start */
  blk_add(b, w, j, --n, p, c, zero, false);
  *above = blk_total(b, w->rr, j, zero, false);
  return p;
}

/* States mid .. hi, each weighing the one below times up / its rate;
 * returns the weight at top (0: not in the window). */
static inline __attribute__((always_inline)) double
chain_up(inf_service *s, const walk *w, uint64_t mid, uint64_t hi, chain *c) {
  double p = 1, p_top = 0;
  uint32_t rr = w->rr;
  for (uint64_t n = mid; n <= hi;) {
    uint32_t k = (uint32_t)(n / rr);
    uint64_t end = (uint64_t)k * rr + rr - 1;
    end = end < hi ? end : hi;
    blk b = blk_open(s, w, k);
    p = k == 0 ? up_block(&b, w, n, end, mid, p, &p_top, c, true)
               : up_block(&b, w, n, end, mid, p, &p_top, c, false);
    n = end + 1;
    blk_close(s, &b);
  }
  return p_top;
}

/* States mid - 1 down to lo, each weighing the one above times the
 * rate of the one above / up. */
static inline __attribute__((always_inline)) void
chain_down(inf_service *s, const walk *w, uint64_t mid, uint64_t lo, chain *c) {
  uint32_t rr = w->rr, jm = (uint32_t)(mid % rr), km = (uint32_t)(mid / rr);
  double g0 = inf__rate_at(s, km), g1 = jm > 0 ? inf__rate_at(s, km + 1) : 0;
  double above = (rr - jm) * g0 + (jm > 0 ? jm * g1 : 0), p = 1;
  for (uint64_t n = mid; n > lo;) {
    uint32_t k = (uint32_t)((n - 1) / rr), j = (uint32_t)((n - 1) % rr);
    uint64_t start = (uint64_t)k * rr;
    start = start > lo ? start : lo;
    blk b = blk_open(s, w, k);
    p = k == 0 ? down_block(&b, w, n, start, j, p, &above, c, true)
               : down_block(&b, w, n, start, j, p, &above, c, false);
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

/* The per-replica decode rate rho (tokens/s) sits between the batch
 * sizes k and k + 1: the balanced mean batch k + frac. */
static double mean_batch(inf_service *s, double rho, uint32_t bcap) {
  uint32_t lo = 0, hi = bcap;
  while (hi - lo > 1) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (inf__rate_at(s, mid) <= rho)
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
  walk w = {f->frac, top, rr * rho, tpot_lim, rr, bcap};
  chain acc = *c; /* nothing else can write it: kept in registers */
  double p_top = chain_up(s, &w, mid, hi, &acc);
  chain_down(s, &w, mid, lo, &acc);
  *c = acc;
  if (hi == top && p_top > 0) {
    double r = fmin(rho / inf__rate_at(s, bcap), 1 - 1e-9);
    double jmax = (double)s->c->max_queue * rr;
    add_tail(s, p_top, r, jmax, rr, bcap, tpot_lim, c);
    f->tok_hi = f->tok_hi > (size_t)bcap + 1 ? f->tok_hi : (size_t)bcap + 1;
  }
}
