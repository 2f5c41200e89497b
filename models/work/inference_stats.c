/* inference_stats.c - the latency statistics of an inference service:
 * the run-wide histograms, the sampling interval's buffers and their
 * quantiles (inference_internal.h). */
#include "inference_internal.h"

#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_statistics_double.h>

#include "vec.h"

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

/* Whether every value is +0 to +inf (as latencies are): then equal values
 * have the same bits and any exact selection gives GSL's quantiles' bits.
 * Those doubles' bits are the integers 0 to +inf's, and a negative or a
 * NaN's are above, so one maximum of the bits decides. */
static bool plain(const double *x, size_t n) {
  uint64_t most = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t u = sim_bits_at(x, i);
    most = u > most ? u : most;
  }
  return most <= sim_bits(INFINITY);
}

/* Quantile q of x[0..n) from the order statistic k (at x[k] by select_at,
 * as gsl_stats_quantile_from_sorted_data interpolates). */
static double quantile_at(const double *x, size_t n, size_t k, double q) {
  double delta = (double)(n - 1) * q - (double)k;
  if (delta == 0 || k + 1 >= n)
    return x[k];
  return (1 - delta) * x[k] + delta * least(x, k + 1, n);
}

/* Reads two quantiles of the interval's values (reordering them). The
 * p99's order statistic is selected among the values above the p50's,
 * which the p50's selection left after it: half the work of a second
 * selection over all, and the next order statistic a pass over the rest
 * only. */
void inf__quantiles(double *x, size_t n, double *p50, double *p99) {
  if (n == 0) {
    *p50 = *p99 = NAN;
    return;
  }
  if (!plain(x, n)) {
    *p50 = quantile_gsl(x, n, 0.5);
    *p99 = quantile_gsl(x, n, 0.99);
    return;
  }
  size_t k50 = (size_t)((double)(n - 1) * 0.5);
  size_t k99 = (size_t)((double)(n - 1) * 0.99);
  select_at(x, 0, n - 1, k50);
  *p50 = quantile_at(x, n, k50, 0.5);
  if (k99 > k50)
    select_at(x, k50 + 1, n - 1, k99);
  *p99 = quantile_at(x, n, k99, 0.99);
}
