/* inference_stats.c - the latency statistics of an inference service:
 * the run-wide histograms, the sampling interval's buffers and their
 * quantiles (inference_internal.h). */
#include "inference_internal.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_statistics_double.h>

#include "bits.h"
#include "lanes.h"
#include "vec.h"

/* A completed request's latencies, in the run's totals, its histograms
 * and the interval's buffers; SIM_ENOMEM when the buffers cannot grow. */
int inf__record(inf_service *s, double ttft, double tpot) {
  bool met = ttft <= s->c->ttft_slo_s && tpot <= s->c->tpot_slo_s;
  s->tot.completed++;
  s->tot.slo_met += met;
  s->tot.ttft_sum_s += ttft;
  s->tot.tpot_sum_s += tpot;
  s->iv.completed++;
  s->iv.slo_met += met;
  inf__hist_add(&s->ttft_h, ttft);
  inf__hist_add(&s->tpot_h, tpot);
  return inf__interval_push(s->alloc, &s->iv, ttft, tpot) != SIM_OK
             ? SIM_ENOMEM
             : SIM_OK;
}

void inf__count_rejected(inf_service *s) {
  s->tot.rejected++;
  s->iv.rejected++;
}

void inf__count_timed_out(inf_service *s) {
  s->tot.timed_out++;
  s->iv.timed_out++;
}

double inf__hist_pos(double x) {
  return log10(x / HIST_LO_S) * HIST_PER_DECADE;
}

void inf__hist_init(histogram *h) { *h = (histogram){.n = 0}; }

double inf__req_quantile(const inf_service *s, bool ttft, double q) {
  return inf__hist_quantile(ttft ? &s->ttft_h : &s->tpot_h, q);
}

/* The k-th smallest value (0-based), as the geometric middle of its bin
 * (within 1.2% of it), kept within the extremes seen. */
static double hist_order_stat(const histogram *h, uint64_t k) {
  if (k < h->under)
    return h->min;
  uint64_t seen = h->under;
  for (size_t b = 0; b < HIST_BINS; b++) {
    seen += h->bin[b];
    if (k < seen) {
      double x = HIST_LO_S * pow(10, (b + 0.5) / HIST_PER_DECADE);
      return fmin(fmax(x, h->min), h->max);
    }
  }
  return h->max;
}

/* Interpolates between order statistics as GSL's quantile does, so the
 * run-wide figure matches an interval's on the same requests. */
double inf__hist_quantile(const histogram *h, double q) {
  if (h->n == 0 || !(q >= 0 && q <= 1))
    return NAN;
  double rank = q * (double)(h->n - 1);
  uint64_t k = (uint64_t)rank;
  double lo = hist_order_stat(h, k);
  if (k + 1 >= h->n)
    return lo;
  double d = rank - (double)k;
  return d > 0 ? (1 - d) * lo + d * hist_order_stat(h, k + 1) : lo;
}

int inf__interval_grow(const sim_allocator *a, interval *iv, double ttft,
                       double tpot) {
  /* Parallel arrays: one growth each, on copies of the capacity. */
  size_t cap_a = iv->cap, cap_b = iv->cap;
  if (sim_vec_reserve(a, &iv->ttft, &cap_a, iv->n + 1, sizeof *iv->ttft) !=
          SIM_OK ||
      sim_vec_reserve(a, &iv->tpot, &cap_b, iv->n + 1, sizeof *iv->tpot) !=
          SIM_OK)
    return SIM_ENOMEM;
  iv->cap = cap_a;
  iv->ttft[iv->n] = ttft;
  iv->tpot[iv->n++] = tpot;
  return SIM_OK;
}

/* The order statistic k + 1 of x[0..n) (0-based) given lo, the k-th, in
 * one pass: lo again if more than k + 1 values are at most lo, else the
 * smallest value above it. The same value a second selection finds, for
 * two compares a value instead of a quickselect's partitions. */
static double next_order_stat(const double *x, size_t n, size_t k, double lo) {
  size_t at_most = 0;
  double above = INFINITY;
  for (size_t i = 0; i < n; i++) {
    at_most += x[i] <= lo;
    if (x[i] > lo && x[i] < above)
      above = x[i];
  }
  return at_most > k + 1 ? lo : above;
}

/* Quantile q of x[0..n) as gsl_stats_quantile_from_sorted_data gives it
 * (linear between the order statistics around (n - 1) q), by GSL's
 * selection: the way for values with a NaN or a -0, where which of
 * equal-comparing values is read decides the bits. Reorders x. */
static double quantile_gsl(double *x, size_t n, double q) {
  double index = (double)(n - 1) * q;
  size_t k = (size_t)index;
  double delta = index - (double)k;
  double lo = gsl_stats_select(x, 1, n, k);
  if (delta == 0 || k + 1 >= n)
    return lo;
  return (1 - delta) * lo + delta * next_order_stat(x, n, k, lo);
}

static void swap(double *x, size_t i, size_t j) {
  double t = x[i];
  x[i] = x[j];
  x[j] = t;
}

/* Puts the order statistic k (0-based, of the whole array) at x[k], the
 * values of x[l..r] (inclusive, k among them) at most it before and at
 * least it after: a quickselect with the median of three (Numerical
 * Recipes' select). Only the order statistic's value is read, so any
 * exact selection gives the same one. */
static double select_at(double *x, size_t l, size_t r, size_t k) {
  while (r > l + 1) {
    swap(x, (l + r) / 2, l + 1);
    if (x[l] > x[r])
      swap(x, l, r);
    if (x[l + 1] > x[r])
      swap(x, l + 1, r);
    if (x[l] > x[l + 1])
      swap(x, l, l + 1);
    size_t i = l + 1, j = r;
    double a = x[l + 1]; /* the pivot: x[l] <= a <= x[r] bound the scans */
    for (;;) {
      while (x[++i] < a) {
      }
      while (x[--j] > a) {
      }
      if (j < i)
        break;
      swap(x, i, j);
    }
    x[l + 1] = x[j];
    x[j] = a;
    if (j >= k)
      r = j - 1;
    if (j <= k)
      l = i;
  }
  if (r == l + 1 && x[r] < x[l])
    swap(x, l, r);
  return x[k];
}

/* The smallest of x[l..n): after select_at put the order statistic k at
 * x[k], the order statistic k + 1 is the smallest of x[k + 1..n). */
static double least(const double *x, size_t l, size_t n) {
  double m = x[l];
  for (size_t i = l + 1; i < n; i++)
    m = x[i] < m ? x[i] : m;
  return m;
}

/* x[i]'s bits as a signed word: a plain value's (below) are 0 to +inf's,
 * under 2^63, ordered as the values; a negative's are below 0. */
static int64_t word_at(const double *x, size_t i) {
  int64_t w;
  memcpy(&w, &x[i], sizeof w);
  return w;
}

/* The least and largest of the words of x[from..n), from *lo and *hi. */
static void bounds_from(const double *x, size_t from, size_t n, int64_t *lo,
                        int64_t *hi) {
  int64_t least_w = *lo, most = *hi;
  for (size_t i = from; i < n; i++) {
    int64_t w = word_at(x, i);
    most = w > most ? w : most;
    least_w = w < least_w ? w : least_w;
  }
  *lo = least_w;
  *hi = most;
}

#if SIM_LANES_AVX2
/* bounds_from(x, 0, n) four words a register, the last few alone (the
 * lanes' least and largest from INT64_MAX and INT64_MIN, each apart). */
__attribute__((target("avx2"))) static void
bounds_avx2(const double *x, size_t n, int64_t *lo, int64_t *hi) {
  __m256i least4 = _mm256_set1_epi64x(INT64_MAX),
          most4 = _mm256_set1_epi64x(INT64_MIN);
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    __m256i w = _mm256_loadu_si256((const __m256i *)(x + i));
    least4 = _mm256_blendv_epi8(least4, w, _mm256_cmpgt_epi64(least4, w));
    most4 = _mm256_blendv_epi8(most4, w, _mm256_cmpgt_epi64(w, most4));
  }
  int64_t l[4], m[4];
  _mm256_storeu_si256((__m256i *)l, least4);
  _mm256_storeu_si256((__m256i *)m, most4);
  for (int j = 0; j < 4; j++) {
    *lo = l[j] < *lo ? l[j] : *lo;
    *hi = m[j] > *hi ? m[j] : *hi;
  }
  bounds_from(x, i, n, lo, hi);
}
#endif

/* Whether every value is +0 to +inf (as latencies are): then equal values
 * have the same bits and any exact selection gives GSL's quantiles' bits.
 * Those are the values whose words (word_at) are 0 to +inf's: a negative
 * value's word is below 0, a NaN's below 0 or above +inf's. The least and
 * largest words are left in *lo and *hi for the bins. */
static bool plain(const double *x, size_t n, uint64_t *lo, uint64_t *hi) {
  int64_t least_w = INT64_MAX, most = INT64_MIN;
#if SIM_LANES_AVX2
  if (sim_lanes_wide())
    bounds_avx2(x, n, &least_w, &most);
  else
#endif
    bounds_from(x, 0, n, &least_w, &most);
  *lo = (uint64_t)least_w;
  *hi = (uint64_t)most;
  return least_w >= 0 && (uint64_t)most <= sim_bits(INFINITY);
}

/* Quantile q of the n values as gsl_stats_quantile_from_sorted_data
 * interpolates, read from x[0..m), a part of them that holds their order
 * statistics k and k + 1, the k-th at x[kl] by select_at (the part's
 * values after it at least it). */
static double quantile_at(const double *x, size_t m, size_t kl, size_t n,
                          size_t k, double q) {
  double delta = (double)(n - 1) * q - (double)k;
  if (delta == 0 || k + 1 >= n)
    return x[kl];
  return (1 - delta) * x[kl] + delta * least(x, kl + 1, m);
}

/* The two quantiles of x[0..m), the part of the n values whose order
 * statistics k50, k50 + 1, k99 and k99 + 1 (those below n) are its own
 * k50 - below and on. The p99's order statistic is selected among the
 * values above the p50's, which the p50's selection left after it. */
static void two_quantiles(double *x, size_t m, size_t below, size_t n,
                          double *p50, double *p99) {
  size_t k50 = (size_t)((double)(n - 1) * 0.5);
  size_t k99 = (size_t)((double)(n - 1) * 0.99);
  select_at(x, 0, m - 1, k50 - below);
  *p50 = quantile_at(x, m, k50 - below, n, k50, 0.5);
  if (k99 > k50)
    select_at(x, k50 - below + 1, m - 1, k99 - below);
  *p99 = quantile_at(x, m, k99 - below, n, k99, 0.99);
}

/* ------------------------------------------------------------------ */
/* The quantiles of a large interval by bins first                     */
/* ------------------------------------------------------------------ */

/* The bins split the values' bits from the least to the largest into
 * equal ranges of 2^shift: the values' own order, since the bits of +0
 * to +inf are ordered as they are. A count a bin tells which bins hold
 * the order statistics the quantiles read; only their values are then
 * selected, a few dozen where the interval holds thousands. Three passes
 * of a few instructions a value (the bits' range, the counts, the
 * gather), whose branches go the same way for almost every value, in
 * place of a quickselect's partitions over all, whose branches a
 * predictor cannot learn. Below BINS_FROM values the
 * quickselect over all costs less than the bins' fixed work. */
#define BINS_LOG2 10
#define BINS (1u << BINS_LOG2)
#define BINS_FROM 128

typedef struct bins {
  uint64_t lo;    /* the least value's bits: bin 0's start */
  unsigned shift; /* a bin spans 2^shift bits */
  uint32_t count[BINS];
} bins;

static void bins_count(bins *b, const double *x, size_t n, uint64_t lo,
                       uint64_t hi) {
  uint64_t span = hi - lo;
  unsigned len = span == 0 ? 0 : 64 - (unsigned)__builtin_clzll(span);
  b->lo = lo;
  b->shift = len > BINS_LOG2 ? len - BINS_LOG2 : 0;
  memset(b->count, 0, sizeof b->count);
  for (size_t i = 0; i < n; i++)
    b->count[(sim_bits_at(x, i) - lo) >> b->shift]++;
}

/* The bin of each of the m ascending ranks, and the number of values in
 * the bins before it. */
static void bins_find(const bins *b, const size_t *rank, size_t m, size_t *bin,
                      size_t *below) {
  size_t seen = 0, j = 0;
  for (size_t k = 0; k < BINS && j < m; k++) {
    size_t next = seen + b->count[k];
    for (; j < m && rank[j] < next; j++) {
      bin[j] = k;
      below[j] = seen;
    }
    seen = next;
  }
}

/* The bits' range [start, start + width] of bins first to last. */
typedef struct bits_range {
  uint64_t start, width;
} bits_range;

static bits_range bins_bits(const bins *b, size_t first, size_t last) {
  uint64_t start = b->lo + ((uint64_t)first << b->shift);
  return (bits_range){start, (((uint64_t)(last - first + 1)) << b->shift) - 1};
}

static bool within(uint64_t u, bits_range r) { return u - r.start <= r.width; }

/* A range no +0 to +inf holds: a NaN's bits just above +inf's. */
#define NO_BITS ((bits_range){sim_bits(INFINITY) + 1, 0})

/* gather's step at x[*i]: a value in range a to the front, one in b to
 * the back (x[*i] then the one from there, not yet seen), else passed. */
static inline void gather_one(double *x, size_t *i, size_t *front, size_t *back,
                              bits_range a, bits_range b) {
  uint64_t u = sim_bits_at(x, *i);
  if (within(u, a))
    swap(x, (*i)++, (*front)++);
  else if (within(u, b))
    swap(x, *i, --*back);
  else
    (*i)++;
}

#if SIM_LANES_AVX2
/* range r's words as bounds for signed compares: its first less one and
 * its last plus one, the last taken no further than +inf's (no plain
 * value's word is above, and the bins' last range can end at 2^63 - 1). */
__attribute__((target("avx2"))) static inline void
range4(bits_range r, __m256i *below, __m256i *above) {
  uint64_t inf = sim_bits(INFINITY), last = r.start + r.width;
  *below = _mm256_set1_epi64x((long long)(r.start - 1));
  *above = _mm256_set1_epi64x((long long)((last < inf ? last : inf) + 1));
}

/* gather with four plain values a register passed at once when none is
 * in a or b: most of them, the ranges holding a few dozen of thousands. */
__attribute__((target("avx2"))) static void
gather_avx2(double *x, size_t n, bits_range a, bits_range b, size_t *na,
            size_t *nb) {
  __m256i a_below, a_above, b_below, b_above;
  range4(a, &a_below, &a_above);
  range4(b, &b_below, &b_above);
  size_t front = 0, back = n, i = 0;
  while (i < back) {
    if (i + 4 <= back) {
      __m256i w = _mm256_loadu_si256((const __m256i *)(x + i));
      __m256i in_a = _mm256_and_si256(_mm256_cmpgt_epi64(w, a_below),
                                      _mm256_cmpgt_epi64(a_above, w));
      __m256i in_b = _mm256_and_si256(_mm256_cmpgt_epi64(w, b_below),
                                      _mm256_cmpgt_epi64(b_above, w));
      if (_mm256_testz_si256(_mm256_or_si256(in_a, in_b),
                             _mm256_set1_epi64x(-1))) {
        i += 4;
        continue;
      }
    }
    gather_one(x, &i, &front, &back, a, b);
  }
  *na = front;
  *nb = n - back;
}
#endif

/* Moves the plain values in range a to the front of x[0..n) and those in
 * range b (apart from a) to its back, one pass; their numbers in *na,
 * *nb. */
static void gather(double *x, size_t n, bits_range a, bits_range b, size_t *na,
                   size_t *nb) {
#if SIM_LANES_AVX2
  if (sim_lanes_wide()) {
    gather_avx2(x, n, a, b, na, nb);
    return;
  }
#endif
  size_t front = 0, back = n, i = 0;
  while (i < back)
    gather_one(x, &i, &front, &back, a, b);
  *na = front;
  *nb = n - back;
}

/* Both quantiles from the bins that hold the order statistics k50,
 * k50 + 1, k99 and k99 + 1 (the last one's bin for any rank past it):
 * the p50's bins to the front and the p99's to the back, each selected
 * apart, or, when their bins meet, all of them to the front at once. */
static void quantiles_by_bins(double *x, size_t n, uint64_t lo, uint64_t hi,
                              double *p50, double *p99) {
  bins b;
  bins_count(&b, x, n, lo, hi);
  size_t k50 = (size_t)((double)(n - 1) * 0.5);
  size_t k99 = (size_t)((double)(n - 1) * 0.99);
  size_t rank[4] = {k50, k50 + 1 < n ? k50 + 1 : n - 1, k99,
                    k99 + 1 < n ? k99 + 1 : n - 1};
  size_t bin[4], below[4], na, nb;
  bins_find(&b, rank, 4, bin, below);
  if (bin[2] <= bin[1]) {
    gather(x, n, bins_bits(&b, bin[0], bin[3]), NO_BITS, &na, &nb);
    assert(rank[3] - below[0] < na);
    two_quantiles(x, na, below[0], n, p50, p99);
    return;
  }
  gather(x, n, bins_bits(&b, bin[0], bin[1]), bins_bits(&b, bin[2], bin[3]),
         &na, &nb);
  assert(rank[1] - below[0] < na && rank[3] - below[2] < nb);
  double *top = x + (n - nb);
  select_at(x, 0, na - 1, k50 - below[0]);
  *p50 = quantile_at(x, na, k50 - below[0], n, k50, 0.5);
  select_at(top, 0, nb - 1, k99 - below[2]);
  *p99 = quantile_at(top, nb, k99 - below[2], n, k99, 0.99);
}

/* Reads two quantiles of the interval's values (reordering them): by
 * the bins when there are many, else by selection over all. */
void inf__quantiles(double *x, size_t n, double *p50, double *p99) {
  if (n == 0) {
    *p50 = *p99 = NAN;
    return;
  }
  uint64_t lo, hi;
  if (!plain(x, n, &lo, &hi)) {
    *p50 = quantile_gsl(x, n, 0.5);
    *p99 = quantile_gsl(x, n, 0.99);
  } else if (n >= BINS_FROM)
    quantiles_by_bins(x, n, lo, hi, p50, p99);
  else
    two_quantiles(x, n, 0, n, p50, p99);
}
