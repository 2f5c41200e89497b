/* arrivals_zig.c - the ziggurats' tables and their rare paths (see
 * arrivals_zig.h). */
#include "arrivals_zig.h"

#include <math.h>
#include <pthread.h>
#include <stdbool.h>

/* Marsaglia & Tsang 2000's constants: where the tail begins and the
 * strips' common area (of exp(-x), and of exp(-x^2 / 2) on x >= 0). */
#define EXP_STRIPS 256
#define EXP_R 7.69711747013104972
#define EXP_V 3.949659822581572e-3
#define NORMAL_STRIPS 128
#define NORMAL_R 3.442619855899
#define NORMAL_V 9.91256303526217e-3

#define TWO_24 16777216.0 /* j's range: the word's high 24 bits */

static double exp_density(double x) { return exp(-x); }
static double exp_inverse(double y) { return -log(y); }
static double normal_density(double x) { return exp(-0.5 * x * x); }
static double normal_inverse(double y) { return sqrt(-2 * log(y)); }

/* Marsaglia & Tsang's recurrence: from the base's edge r inwards, each
 * strip's edge the x where the strip above it has area v. */
static void fill(arr_zig *z, int n, double r, double v, double (*f)(double),
                 double (*f_inverse)(double)) {
  double q = v / f(r); /* the base: r f(r) and the tail, as a rectangle */
  z->k[0] = (uint32_t)(r / q * TWO_24);
  z->k[1] = 0;
  z->w[0] = q / TWO_24;
  z->w[n - 1] = r / TWO_24;
  z->f[0] = 1;
  z->f[n - 1] = f(r);
  double x = r;
  for (int i = n - 2; i >= 1; i--) {
    double inner = f_inverse(v / x + f(x));
    z->k[i + 1] = (uint32_t)(inner / x * TWO_24);
    x = inner;
    z->f[i] = f(x);
    z->w[i] = x / TWO_24;
  }
  z->r = r;
  z->mask = (uint32_t)n - 1;
}

void arr_zig_fill_exponential(arr_zig *z, int n, double r, double v) {
  fill(z, n, r, v, exp_density, exp_inverse);
}

void arr_zig_fill_normal(arr_zig *z, int n, double r, double v) {
  fill(z, n, r, v, normal_density, normal_inverse);
}

static arr_zig exp_table, normal_table;

static void fill_tables(void) {
  arr_zig_fill_exponential(&exp_table, EXP_STRIPS, EXP_R, EXP_V);
  arr_zig_fill_normal(&normal_table, NORMAL_STRIPS, NORMAL_R, NORMAL_V);
}

/* Filled once per process: generators made on two threads at once (a
 * program that embeds the library) must not both write the tables. */
void arr_zig_tables(const arr_zig **exponential, const arr_zig **normal) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, fill_tables);
  *exponential = &exp_table;
  *normal = &normal_table;
}

/* Strip i's point x = j w[i] lies under the density f(x) when a height
 * uniform between the strip's bottom f[i] and top f[i - 1] is below it. */
static bool under(const arr_zig *z, arr_taus *t, uint32_t i, double fx) {
  return z->f[i] + arr_uniform(t) * (z->f[i - 1] - z->f[i]) < fx;
}

/* beyond r the exponential is r plus one (memoryless) */
static double exponential_tail(double r, arr_taus *t) {
  return r - log1p(-arr_uniform(t));
}

/* The normal's tail beyond r (Marsaglia 1964): r + x for x exponential of
 * mean 1 / r, kept with probability exp(-x^2 / 2) by a second one. */
static double normal_tail(double r, arr_taus *t) {
  double x, y;
  do {
    x = -log1p(-arr_uniform(t)) / r;
    y = -log1p(-arr_uniform(t));
  } while (y + y < x * x);
  return r + x;
}

/* A draw that missed its strip's sure part, on: the wedge's exact test
 * against the density f, the base's tail, or a new word. */
static double wedge_or_tail(const arr_zig *z, arr_taus *t, uint32_t w,
                            double (*f)(double),
                            double (*tail)(double, arr_taus *)) {
  for (;; w = arr_word(t)) {
    uint32_t i = w & z->mask, j = w >> 8;
    double x = (double)j * z->w[i];
    if (j < z->k[i])
      return x;
    if (i == 0)
      return tail(z->r, t);
    if (under(z, t, i, f(x)))
      return x;
  }
}

double arr_zig_exponential_slow(const arr_zig *z, arr_taus *t, uint32_t w) {
  return wedge_or_tail(z, t, w, exp_density, exponential_tail);
}

double arr_zig_normal_slow(const arr_zig *z, arr_taus *t, uint32_t w) {
  return wedge_or_tail(z, t, w, normal_density, normal_tail);
}
