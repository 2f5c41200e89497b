/* test_inference_fluid_hist.c - a book's points added to two weighted
 * histograms at once (inf__wh_add_points, inference_fluid_hist.c) leave
 * them the same bytes as the points added one by one to each (the
 * per-point add below, what book did before its extremes were made once
 * a book): point sets with weights 0 and below, NaN points first and
 * later, -0 and +0 tied, points under the histogram's range, into
 * histograms empty, holding points, and with a NaN extreme. */
#include "test_util.h"

#include <math.h>
#include <string.h>

#include "inference_fluid_internal.h"

/* One point to one histogram, as book added it. */
static void add_one(wt_hist *h, double x, double w) {
  if (!(w > 0))
    return;
  h->min = h->n == 0 || x < h->min ? x : h->min;
  h->max = h->n == 0 || x > h->max ? x : h->max;
  h->n += w;
  if (!(x >= HIST_LO_S)) {
    h->under += w;
    return;
  }
  size_t bin = inf__hist_bin(x);
  if (bin < HIST_BINS)
    h->bin[bin] += w;
}

enum { PTS = 6 };

typedef struct hist_case {
  const char *name;
  double v[PTS], w[PTS];
  size_t n;
  int start; /* 0: both empty, 1: both hold a point, 2: the run's only,
                3: a NaN min and max in the run's */
} hist_case;

static const hist_case cases[] = {
    {"plain", {0.2, 0.05, 3, 0.7}, {1, 2, 0.5, 1}, 4, 0},
    {"into points", {0.2, 0.05, 3, 0.7}, {1, 2, 0.5, 1}, 4, 1},
    {"one empty", {0.2, 9, 0.01}, {1, 1, 1}, 3, 2},
    {"weights 0 and below", {0.1, 5, 0.3, 7}, {0, -1, 1, NAN}, 4, 0},
    {"none weighed", {0.1, 5}, {0, -1}, 2, 1},
    {"a NaN first", {NAN, 0.3, 0.02, 4}, {1, 1, 1, 1}, 4, 0},
    {"a NaN first, into points", {NAN, 0.3, 0.02, 4}, {1, 1, 1, 1}, 4, 1},
    {"a NaN later", {0.3, NAN, 0.02}, {1, 1, 1}, 3, 2},
    {"only NaNs", {NAN, NAN}, {1, 2}, 2, 1},
    {"-0 and +0 tied", {-0.0, 0.0, 0.0, -0.0}, {1, 1, 1, 1}, 4, 0},
    {"+0 then -0, into points", {0.0, -0.0}, {1, 1}, 2, 1},
    {"under the range", {1e-9, 2e-7, 0.5}, {1, 1, 1}, 3, 0},
    {"a NaN extreme kept", {0.3, 0.1}, {1, 1}, 2, 3},
    {"infinities", {INFINITY, -INFINITY, 1}, {1, 1, 1}, 3, 1},
    {"+inf alone, into empty", {INFINITY}, {1}, 1, 0},
    {"-inf then +inf, into empty", {-INFINITY, INFINITY}, {1, 1}, 2, 0},
    {"+inf, -inf, into the run's", {INFINITY, -INFINITY}, {1, 1}, 2, 2},
    {"a NaN first after weight 0", {0.2, NAN, 0.4}, {0, 1, 1}, 3, 0},
    {"weight 0 first, then a point", {NAN, 0.4, 0.1}, {0, 1, 1}, 3, 0},
};

static void start(wt_hist *h, int kind, bool run) {
  memset(h, 0, sizeof *h);
  if (kind == 1 || (kind >= 2 && run))
    add_one(h, 0.15, 1);
  if (kind == 3 && run)
    h->min = h->max = NAN;
}

static void points_are_one_by_one(void **state) {
  const hist_case *c = *state;
  static wt_hist want[2], got[2]; /* big: off the stack */
  for (int k = 0; k < 2; k++) {
    start(&want[k], c->start, k == 1);
    start(&got[k], c->start, k == 1);
  }
  const double hits = 3;
  for (size_t i = 0; i < c->n; i++)
    for (int k = 0; k < 2; k++)
      add_one(&want[k], c->v[i], hits * c->w[i]);
  inf__wh_add_points(&got[0], &got[1], c->v, c->w, c->n, hits);
  assert_memory_equal(want, got, sizeof want);
}

int main(void) {
  struct CMUnitTest tests[32];
  size_t n = 0;
  TEST_ROWS(tests, n, points_are_one_by_one, cases);
  return _cmocka_run_group_tests("inference_fluid_hist", tests, n, NULL, NULL);
}
