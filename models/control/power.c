/* power.c - what the allocation policies share (see power.h): the
 * search to the bit, the spreading of what is left, the total (which
 * units are alike: power_alike.c; the water-filling: power_fill.c). */
#include "power.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "bits.h"

double power_total(const power_unit *units, size_t n, const double *cap) {
  double sum = 0;
  for (size_t u = 0; u < n; u++)
    sum += units[u].n * cap[u];
  return sum;
}

/* The repeated sum for s > 0 and t >= 0, both finite. Within the binade
 * [2^e, B = 2^(e+1)) of s the doubles are the multiples of q = 2^(e-52),
 * and s is one, so while s + t stays below B each addition rounds t to
 * the same multiple R q of q (t half way between two multiples, a tie,
 * rounds to the even sum: after the first addition, by the even one of
 * the two each time, below). The k additions that land at or below B
 * then land on s + k R q exactly,
 * computed at once: one step per binade the sum crosses, not per term.
 * (The one that reaches B exactly, from B - R q, adds t = (R + d) q with
 * |d| < 1/2: B + d q, which rounds to B on either side.) In units of q,
 * with s1 = S1 q after the first addition, that is S1 + k R <= 2^53.
 * The addition after them leaves the binade (or is the first of the
 * next, from B): it is made at once, an add, not a turn of the loop
 * whose tests find it crosses (a turn a binade, not two). */
/* The step in units of q = 2^(e-52) by which each later addition of t
 * moves a sum in s's binade, from the first one's s1 = s + t whose
 * significands differ by R >= 1; 0 where t rounds away at s1. */
static uint64_t binade_step(double s, double s1, double t, uint64_t R,
                            uint64_t e) {
  double half, d = t - (s1 - s); /* exact (Sterbenz), within q / 2 */
  uint64_t h = (e - 53) << 52;
  memcpy(&half, &h, sizeof half);
  if (d != half && d != -half)
    return R;
  /* A tie, t = T q with T = R +- 1/2: s1 rounded to even, so S1 is.
   * From an even S the sum S + T rounds to S + E, E the even one of
   * T -+ 1/2, and stays even: each later addition in the binade steps
   * by E (R, or R's neighbour towards T where R is odd, as from an odd
   * S). At the binade's end, S + E = 2^53 leaves S + T at 2^53 +- 1/2,
   * which rounds to B on either side (below it a tie to the even
   * 2^53). E = 0 (T = 1/2): every later addition rounds away at S1. */
  return (R & 1) == 0 ? R : d > 0 ? R + 1 : R - 1;
}

static double add_up(double s, double t, size_t m) {
  const uint64_t one = UINT64_C(1) << 52; /* a significand's implicit bit */
  /* Under 16 t a binade [2^j t, 2^(j+1) t) holds about 2^j additions,
   * no dearer than a binade's step (some 30 instructions), so those
   * are made one at a time (docs/performance-log.md: fluid tick -1,120). */
  for (; m > 0 && s < 16 * t; m--)
    s += t;
  while (m > 0) {
    double s1 = s + t;
    m--;
    if (m == 0 || s1 == s) /* t rounds away at s: at every later s too */
      return s1;
    uint64_t b, b1;
    memcpy(&b, &s, sizeof b);
    memcpy(&b1, &s1, sizeof b1);
    uint64_t e = b >> 52; /* the biased exponent (s > 0: no sign bit) */
    /* s1 past the binade, or q / 2 not normal, or B not finite: a step */
    if (b1 >> 52 != e || e <= 53 || e >= 2046) {
      s = s1;
      continue;
    }
    uint64_t S1 = (b1 & (one - 1)) | one;
    uint64_t R = binade_step(s, s1, t, S1 - ((b & (one - 1)) | one), e);
    if (R == 0)
      return s1;
    uint64_t k = (2 * one - S1) / R;
    if (k > m)
      k = (uint64_t)m;
    b = (e << 52) + (S1 + k * R - one); /* S1 + k R = 2^53: B, exactly */
    memcpy(&s, &b, sizeof s);
    m -= (size_t)k;
    if (m > 0) { /* the next addition, one at a time as the loop's */
      s += t;
      m--;
    }
  }
  return s;
}

double power_add_repeat(double s, double t, size_t m) {
  for (; m > 0; m--) {
    if (s > 0 && t >= 0 && s < INFINITY && t < INFINITY)
      return add_up(s, t, m);
    /* Rounding to nearest is symmetric: the negative sum mirrors. */
    if (s < 0 && t <= 0 && s > -INFINITY && t > -INFINITY)
      return -add_up(-s, -t, m);
    s += t; /* signs apart, a zero sum, inf or NaN: one at a time */
  }
  return s;
}

/* Whether no double lies strictly between a and b. */
static bool adjacent(double a, double b) {
  double mid = 0.5 * (a + b);
  return mid == a || mid == b;
}

/* A search for the boundary (power_boundary): the bracket, the last point
 * tried with f there less the target and its slope, the lengths of the
 * last two steps (the one before last first), and, once Newton has nothing left to give (its step
 * within the rounding of f), how many doubles the next probe steps past
 * the crossing (0: Newton still). */
typedef struct search {
  double good, bad, dir;
  double x, fx, slope, step, step_before;
  double gallop;
  bool edged; /* the last point was just inside an end */
  power_finish fin; /* NULL: none (power_boundary_warm_finish) */
} search;

static bool inside(const search *s, double x) {
  return (x - s->good) * s->dir > 0 && (s->bad - x) * s->dir > 0;
}

/* x moved n doubles towards the bad end (away from it for n < 0). */
static double doubles_on(const search *s, double x, double n) {
  double ulp = fabs(nextafter(x, s->dir * INFINITY) - x);
  return x + s->dir * n * ulp;
}

/* Newton's estimate r past an end of the bracket: the double just
 * inside that end, so that a crossing at the end closes the bracket at
 * once; NaN if r is not past an end. */
static double just_inside(const search *s, double r) {
  if ((r - s->bad) * s->dir >= 0)
    return doubles_on(s, s->bad, -1);
  if ((s->good - r) * s->dir >= 0)
    return doubles_on(s, s->good, 1);
  return NAN;
}

/* The next point while Newton converges: its estimate, unless it leaves
 * the bracket (then just inside the end it passed, once) or does not at
 * least halve the step before last (then the midpoint: Numerical
 * Recipes' rtsafe). When its step is within the rounding of f (blur),
 * the search turns to galloping across the crossing from the estimate. */
static double newton_next(search *s, double target) {
  double d = s->fx / s->slope, r = s->x - d;
  double blur = 0x1p-52 * (fabs(target) + fabs(s->fx)) / fabs(s->slope);
  if (isfinite(blur) && fabs(d) <= blur + fabs(doubles_on(s, s->x, 2) - s->x)) {
    /* The first probe a quarter of the blur's doubles on (one at least):
     * a stair of f's rounding is about the blur wide, and galloping to
     * its edge from one double took as many probes again as closing the
     * bracket after it (a sum hundreds of doubles flat: the fill's one
     * unit between its bounds). */
    double width = blur / fabs(doubles_on(s, s->x, 1) - s->x);
    s->gallop = width >= 8 && width < 0x1p52 ? floor(width / 4) : 1;
    return inside(s, r) ? r : doubles_on(s, s->x, s->fx <= 0 ? 1 : -1);
  }
  /* No estimate where f is flat (slope 0: r infinite): the midpoint, not
   * a probe just inside the end an infinite r passes, which on a flat
   * stretch cost an evaluation for each halving. */
  double edge = s->edged || !isfinite(r) ? NAN : just_inside(s, r);
  bool ok = isfinite(r) && inside(s, r) && !(fabs(d) > 0.5 * s->step_before);
  s->edged = !isnan(edge) && inside(s, edge);
  s->step_before = s->step;
  s->step = ok ? fabs(d) : 0.5 * fabs(s->bad - s->good);
  return ok ? r : s->edged ? edge : 0.5 * (s->good + s->bad);
}

/* The next point once galloping: from the last point, gallop doubles
 * towards the other side of the crossing, doubling while the probes stay
 * on one side; the midpoint once the step would leave the bracket (the
 * crossing is then within it, a few doubles wide). */
static double gallop_next(search *s, bool same_side) {
  if (same_side)
    s->gallop *= 2;
  double x = doubles_on(s, s->x, s->fx <= 0 ? s->gallop : -s->gallop);
  return inside(s, x) ? x : 0.5 * (s->good + s->bad);
}

/* Closes the bracket from the point last tried (s->x, side was_good of
 * the point before) until no double lies between its ends. */
static double close_bracket(search *s, power_fn f, const void *ctx,
                            double target, bool was_good) {
  for (int k = 0; k < 400 && !adjacent(s->good, s->bad); k++) {
    double done = s->fin != NULL ? s->fin(ctx, s->good, s->bad) : NAN;
    if (!isnan(done))
      return done;
    double x = s->gallop > 0 ? gallop_next(s, (s->fx <= 0) == was_good)
                             : newton_next(s, target);
    was_good = s->fx <= 0;
    s->fx = f(ctx, x, &s->slope) - target;
    s->x = x;
    if (s->fx <= 0)
      s->good = x;
    else
      s->bad = x;
  }
  return s->good;
}

/* power_boundary with the finish fin (NULL: none). */
static double boundary_fin(power_fn f, power_finish fin, const void *ctx,
                           double target, double good, double bad) {
  search s = {good, bad, bad > good ? 1 : -1, good, 0, 0, INFINITY, INFINITY, 0,
              false, fin};
  s.fx = f(ctx, good, &s.slope) - target;
  if (s.fx > 0)
    return good; /* f(good) above target: bisection would never move good */
  return close_bracket(&s, f, ctx, target, true);
}

double power_boundary(power_fn f, const void *ctx, double target, double good,
                      double bad) {
  return boundary_fin(f, NULL, ctx, target, good, bad);
}

/* power_boundary_from with the finish fin (NULL: none). */
static double boundary_from_fin(power_fn f, power_finish fin, const void *ctx,
                                double target, double good, double bad,
                                double x) {
  search s = {good, bad, bad > good ? 1 : -1, x, 0, 0, INFINITY, INFINITY, 0,
              false, fin};
  if (!inside(&s, x))
    return boundary_fin(f, fin, ctx, target, good, bad);
  s.fx = f(ctx, x, &s.slope) - target;
  if (s.fx <= 0)
    s.good = x;
  else
    s.bad = x;
  return close_bracket(&s, f, ctx, target, s.fx <= 0);
}

double power_boundary_from(power_fn f, const void *ctx, double target,
                           double good, double bad, double x) {
  return boundary_from_fin(f, NULL, ctx, target, good, bad, x);
}

/* The warm search's first step from x (the bracket's width is unknown):
 * `over` times Newton's distance to the crossing, at least `least`
 * doubles; from a flat start, 2^-12 of x (at least 2^-12). The
 * efficiency policy's level at the request level's peak starts flat
 * (every class at its floor there) about 10^-4 to 10^-2 from its answer:
 * a step of 1 cost some ten Newton steps back across the classes'
 * kinks. */
static inline double warm_step(double x, double fx, double slope, double end,
                               double over, double least) {
  double step =
      slope != 0 ? over * fabs(fx / slope) : 0x1p-12 * fmax(1, fabs(x));
  return fmax(step, least * fabs(nextafter(x, end) - x));
}

/* Between a good point g (f less the target fg <= 0) and a bad one b
 * (fb > 0), both known: the search from the secant's crossing. */
static double warm_between(power_fn f, power_finish fin, const void *ctx,
                           double target, double g, double fg, double b,
                           double fb) {
  double x = g + (b - g) * (fg / (fg - fb));
  if (adjacent(g, b)) /* both ends known: the crossing is between */
    return g;
  double done = fin != NULL ? fin(ctx, g, b) : NAN;
  if (!isnan(done))
    return done;
  /* A secant's point rounded onto an end would send power_boundary_from
   * to evaluate good again: the double just inside that end instead. */
  if (x == b || !((x - g) * (b - x) > 0))
    x = x == g ? nextafter(g, b) : nextafter(b, g);
  return boundary_from_fin(f, fin, ctx, target, g, b, x);
}

/* power_boundary_warm and power_boundary_near: the first step
 * warm_step's (over, least), each next one grow times the last. */
static inline double boundary_warm(power_fn f, power_finish fin,
                                   const void *ctx, double target,
                                   double good_end, double bad_end, double x,
                                   double over, double least, double grow) {
  double slope, fx = f(ctx, x, &slope) - target;
  bool good = fx <= 0;
  double end = good ? bad_end : good_end;
  double dir = end > x ? 1 : -1,
         step = warm_step(x, fx, slope, end, over, least);
  for (;;) {
    /* bad so far: the whole way to the good end may be (fin's answer) */
    double done = !good && fin != NULL ? fin(ctx, end, x) : NAN;
    if (!isnan(done))
      return done;
    double y = (end - x) * dir <= step ? end : x + dir * step, sy;
    double fy = f(ctx, y, &sy) - target;
    if ((fy <= 0) != good)
      return good ? warm_between(f, fin, ctx, target, x, fx, y, fy)
                  : warm_between(f, fin, ctx, target, y, fy, x, fx);
    if (y == end)
      return end;
    x = y;
    fx = fy;
    step = isfinite(step) && step < 1e3 ? grow * step : 1e3;
  }
}

double power_boundary_warm_finish(power_fn f, power_finish fin,
                                  const void *ctx, double target,
                                  double good_end, double bad_end, double x) {
  return boundary_warm(f, fin, ctx, target, good_end, bad_end, x, 2, 16, 4);
}

/* Twice Newton's distance, at least 16 doubles, then four times the
 * step before: a bracket at once from most starts, which at the request
 * level are last period's answers. */
double power_boundary_warm(power_fn f, const void *ctx, double target,
                           double good_end, double bad_end, double x) {
  return boundary_warm(f, NULL, ctx, target, good_end, bad_end, x, 2, 16, 4);
}

/* Half Newton's distance, at least four doubles, then twice the step
 * before: from a start a few stairs from the crossing (the efficiency
 * policy's long runs, level_close), where the steps above overshot it by
 * about a stair and closing that bracket cost as many sums again. In
 * bench-10k's fluid group of three long runs, its first 20 and 40
 * minutes (1,200 and 2,400 splits): 7,921 and 16,044 sums with
 * power_boundary_warm's steps, 6,862 and 13,976 with these
 * (docs/performance-log.md, twenty-third session, has the others tried). */
double power_boundary_near(power_fn f, const void *ctx, double target,
                           double good_end, double bad_end, double x) {
  return boundary_warm(f, NULL, ctx, target, good_end, bad_end, x, 0.5, 4, 2);
}

/* Newton's distance, at least one double, then twice the step before:
 * at the request level's large group (2,039 units, a unit a run) the
 * start, grouped_at's crossing, lies within three doubles of the answer
 * in four splits in five, where the sixteen doubles of
 * power_boundary_warm's first step overshot it and the bracket then cost
 * a secant's evaluation more (bench-10k's diurnal peak, its first 15
 * minutes: 3.65 sums a split -> 2.94). */
double power_boundary_newton(power_fn f, const void *ctx, double target,
                             double good_end, double bad_end, double x) {
  return boundary_warm(f, NULL, ctx, target, good_end, bad_end, x, 1, 1, 2);
}

/* What is left of budget_w after total (the caps' sum) spread over the
 * units' room, room. */
static void spread_left(const power_unit *units, const power_runs *runs,
                        double budget_w, double *cap, double total,
                        double room) {
  double left = budget_w - total;
  if (!(left > 0) || !(room > 0))
    return;
  /* A hair under the exact share, so rounding never spends more than the
   * budget. */
  double share = fmin(1, left / room) * (1 - 1e-12);
  for (size_t r = 0; r < runs->n; r++) {
    /* fmin(hi, x) without the call: the caps and ranges are finite, and
     * for a NaN x both give hi. */
    double hi = power_run_unit(units, runs, r)->hi, x = cap[r] + share * (hi - cap[r]);
    cap[r] = x < hi ? x : hi;
  }
}

void power_spread_rest_runs(const power_unit *units, const power_runs *runs,
                            double budget_w, double *cap) {
  /* power_total's sum and the room's, in one pass: each adds in the same
   * order as in two. */
  double total = 0, room = 0;
  for (size_t r = 0; r < runs->n; r++) {
    const power_unit *p = power_run_unit(units, runs, r);
    size_t m = power_run_len(runs, r);
    total = power_add_n(total, p->n * cap[r], m);
    room = power_add_n(room, p->n * (p->hi - cap[r]), m);
  }
  spread_left(units, runs, budget_w, cap, total, room);
}

void power_spread_rest_summed(const power_unit *units, const power_runs *runs,
                              double budget_w, double *cap, double total) {
  double room = 0;
  for (size_t r = 0; r < runs->n; r++) {
    const power_unit *p = power_run_unit(units, runs, r);
    room = power_add_n(room, p->n * (p->hi - cap[r]), power_run_len(runs, r));
  }
  spread_left(units, runs, budget_w, cap, total, room);
}

void power_spread_rest(const power_unit *units, size_t n, double budget_w,
                       double *cap) {
  power_runs each = {n, NULL, NULL};
  power_spread_rest_runs(units, &each, budget_w, cap);
}

/* Run r's cap to its units, four a turn (in the fluid mode a run is some
 * thirty units, a service's replicas in one state; one group's runs are
 * some seven hundred). */
static void run_out(const power_runs *runs, const double *rcap, size_t r,
                    double *cap) {
  double c = rcap[r];
  double *out = cap + runs->first[r], *end = out + runs->len[r];
  for (; end - out >= 4; out += 4) {
    out[0] = c;
    out[1] = c;
    out[2] = c;
    out[3] = c;
  }
  while (out < end)
    *out++ = c;
}

#if defined(__GNUC__) && defined(__x86_64__)
#define CAPS_AVX 1
#include <immintrin.h>

/* run_out eight units a turn in two 256-bit stores, then four, then one
 * at a time: the same doubles stored. */
__attribute__((target("avx"))) static void
caps_out_avx(const power_runs *runs, const double *rcap, double *cap) {
  for (size_t r = 0; r < runs->n; r++) {
    double c = rcap[r];
    double *out = cap + runs->first[r], *end = out + runs->len[r];
    if (end - out >= 4) { /* at request level most runs are shorter */
      __m256d c4 = _mm256_set1_pd(c);
      for (; end - out >= 8; out += 8) {
        _mm256_storeu_pd(out, c4);
        _mm256_storeu_pd(out + 4, c4);
      }
      if (end - out >= 4) {
        _mm256_storeu_pd(out, c4);
        out += 4;
      }
    }
    while (out < end)
      *out++ = c;
  }
}
#endif

void power_runs_out(const power_runs *runs, const double *rcap, double *cap) {
#ifdef CAPS_AVX
  if (__builtin_cpu_supports("avx")) {
    caps_out_avx(runs, rcap, cap);
    return;
  }
#endif
  for (size_t r = 0; r < runs->n; r++)
    run_out(runs, rcap, r, cap);
}
