/* test_gpu_lanes.c - the cap's Brent solves four at a time in an AVX2
 * register's lanes (gpu_brent4.c) against the scalar loop (brent_fma),
 * bit for bit: whole batches through gpu_load_clocks_under_caps against
 * gpu_load_clock_under_cap one by one (caps across the span, NaN caps
 * and loads, batches of every size around the lanes' groups and the
 * batch's 64), both with the lanes and without (sim_lanes_narrow); and
 * the lanes' jobs against the scalar loop's on brackets its callers
 * never hand it (ends not straddling, a NaN cap, residuals not finite,
 * a bracket whose test never holds: the 100-iteration cap), mixed so
 * that a group's lanes finish at different iterations. */
#include "test_util.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "gpu.h"
#include "gpu_internal.h"
#include "gpu_ref.h"
#include "lanes.h"
#include "pow.h"
#include "test_catalogs.h"


static bool lanes_here(void) {
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

static void same_bits_or_fail(const char *what, size_t k, double got,
                              double want) {
  if (memcmp(&got, &want, sizeof got) != 0)
    fail_msg("%s %zu: %a, one by one %a", what, k, got, want);
}

/* Batches of caps from lo to hi of the load's [P(phi_min), P(1)] (below
 * 0 or above 1: outside it), every nan_every-th cap NaN (0: none) and
 * every nan_every-th load's sm NaN, 7 from it. */
typedef struct batch_row {
  const char *name;
  double lo, hi;
  unsigned nan_every;
  bool zero_min; /* the type's lowest clock 0 */
} batch_row;

static const batch_row batch_rows[] = {
    {"batch: caps near phi_min", 1e-6, 0.05, 0, false},
    {"batch: caps across the span", 0, 1, 0, false},
    {"batch: caps near the knee and above", 0.6, 1, 0, false},
    {"batch: caps past both ends", -0.2, 1.2, 0, false},
    {"batch: NaN caps and loads among them", 0, 1, 5, false},
    {"batch: phi_min 0", 0, 1, 0, true},
};

/* Calls of these sizes in turn: one lane, partial groups, whole ones,
 * the batch's 64 and past it. */
static const size_t batch_sizes[] = {1, 2,  3,  4,  5,  7,  8,
                                     9, 31, 63, 64, 65, 130};

static void batch_once(const gpu_spec *g, const batch_row *row, uint64_t *s,
                       size_t n) {
  double cap[130] = {0}, phi[130];
  gpu_load l[130] = {{0}};
  for (size_t k = 0; k < n; k++) {
    l[k] = draw_load(s);
    double lo = gpu_load_power(g, gpu_phi_min(g), l[k]);
    double span = gpu_load_power(g, 1, l[k]) - lo;
    cap[k] = lo + span * (row->lo + (row->hi - row->lo) * draw(s));
    if (row->nan_every != 0 && k % row->nan_every == 0)
      cap[k] = NAN;
    if (row->nan_every != 0 && k % row->nan_every == 7 % row->nan_every)
      l[k].sm = NAN;
  }
  gpu_load_clocks_under_caps(g, n, cap, l, phi);
  for (size_t k = 0; k < n; k++)
    same_bits_or_fail(g->name, k, phi[k],
                      gpu_load_clock_under_cap(g, cap[k], l[k]));
}

static void batch_is_one_by_one(void **state) {
  const batch_row *row = *state;
  for (int narrow = 0; narrow < 2; narrow++) {
    sim_lanes_narrow = narrow;
    uint64_t s = 31;
    for (size_t t = 0; t < cats.gpu.n; t++) {
      gpu_spec h = cats.gpu.gpus[t];
      if (row->zero_min)
        h.clock_min_hz = 0;
      for (int rep = 0; rep < 40; rep++)
        for (size_t i = 0; i < sizeof batch_sizes / sizeof *batch_sizes; i++)
          batch_once(&h, row, &s, batch_sizes[i]);
    }
  }
  sim_lanes_narrow = false;
}

#ifdef SIM_POW_FMA
/* The brackets a job may hold. */
typedef enum job_kind {
  STRADDLES,  /* the callers' case: [phi_min, knee], the cap inside */
  SAME_SIGN,  /* ends not straddling the cap */
  NAN_CAP,    /* the ends' residuals given apart, the cap NaN */
  NOT_FINITE, /* the load's term NaN: every new residual NaN */
  NEVER,      /* [-1, 0], the residual constant past phi_min and fb
                 given against it: no interval test holds, 100 turns */
  NEGATIVE,   /* as NEVER on [-1, -0.5]: the interval test's ends both
                 below 0 (its general case) */
  INF_CAP,    /* every new residual -inf */
  TIE,        /* the ends' residuals given equal in size */
  REVERSED,   /* lo above hi */
  WIDE,       /* [phi_min / 2, (knee + 1) / 2], the cap inside: clocks
                 clamped up to phi_min, clocks above the knee */
  TO_ONE,     /* [phi_min, 1], the cap inside: clocks of 1 */
  MIXED       /* each job one of the above, drawn */
} job_kind;

typedef struct job_row {
  const char *name;
  job_kind kind;
} job_row;

static const job_row job_rows[] = {
    {"jobs: brackets straddling the cap", STRADDLES},
    {"jobs: ends not straddling", SAME_SIGN},
    {"jobs: NaN caps", NAN_CAP},
    {"jobs: residuals not finite", NOT_FINITE},
    {"jobs: the 100-iteration cap", NEVER},
    {"jobs: both ends below 0", NEGATIVE},
    {"jobs: caps of inf", INF_CAP},
    {"jobs: the ends' residuals equal in size", TIE},
    {"jobs: lo above hi", REVERSED},
    {"jobs: below phi_min and above the knee", WIDE},
    {"jobs: up to full clock", TO_ONE},
    {"jobs: each kind among others", MIXED},
};

static gpu_brent_job job_of(const gpu_spec *g, job_kind kind, uint64_t *s) {
  gpu_load l = draw_load(s);
  double phi_min = gpu_phi_min(g), knee = fmax(phi_min, fmin(1, g->knee));
  double p_lo = gpu_load_power(g, phi_min, l);
  double p_hi = gpu_load_power(g, knee, l);
  double u = draw(s), cap = p_lo + (p_hi - p_lo) * u;
  if (kind == SAME_SIGN || kind == NEVER || kind == NEGATIVE)
    cap = p_lo * (0.5 + 0.5 * u);
  gpu_brent_job j = {g->mem_w * l.mem,
                     g->busy_w * l.busy + gpu_sm_span(g) * l.sm,
                     cap,
                     phi_min,
                     knee,
                     p_lo - cap,
                     p_hi - cap};
  if (kind == NAN_CAP)
    j.cap = NAN;
  if (kind == NOT_FINITE)
    j.mem = NAN;
  if (kind == NEVER)
    j.lo = -1, j.hi = 0, j.fb = -j.fa;
  if (kind == NEGATIVE)
    j.lo = -1, j.hi = -0.5, j.fb = -j.fa;
  if (kind == INF_CAP)
    j.cap = INFINITY;
  if (kind == TIE)
    j.fb = -j.fa;
  if (kind == REVERSED)
    j.lo = knee, j.hi = phi_min, j.fa = p_hi - cap, j.fb = p_lo - cap;
  if (kind == WIDE || kind == TO_ONE) {
    j.lo = kind == WIDE ? 0.5 * phi_min : phi_min;
    j.hi = kind == WIDE ? 0.5 * (knee + 1) : 1;
    double p_top = gpu_load_power(g, j.hi, l);
    j.cap = p_lo + (p_top - p_lo) * u;
    j.fa = gpu_load_power(g, j.lo, l) - j.cap, j.fb = p_top - j.cap;
  }
  return j;
}

static void jobs_are_the_scalars(void **state) {
  const job_row *row = *state;
  if (!lanes_here())
    skip();
  uint64_t s = 37;
  for (size_t t = 0; t < cats.gpu.n; t++) {
    const gpu_spec *g = &cats.gpu.gpus[t];
    for (int rep = 0; rep < 200; rep++) {
      gpu_brent_job j[67];
      double phi[67];
      size_t n = 1 + rep % 67;
      for (size_t k = 0; k < n; k++)
        j[k] = job_of(
            g, row->kind == MIXED ? (job_kind)(draw(&s) * MIXED) : row->kind,
            &s);
      gpu_brent_type bt = {g->idle_w, g->knee, gpu_phi_min(g)};
      gpu__brent_lanes(&bt, j, n, phi);
      for (size_t k = 0; k < n; k++)
        same_bits_or_fail(g->name, k, phi[k], gpu__brent_job(g, &j[k]));
    }
  }
}
#endif

int main(void) {
  struct CMUnitTest tests[24];
  size_t n = 0;
  TEST_ROWS(tests, n, batch_is_one_by_one, batch_rows);
#ifdef SIM_POW_FMA
  TEST_ROWS(tests, n, jobs_are_the_scalars, job_rows);
#endif
  return _cmocka_run_group_tests("gpu_lanes", tests, n, test_catalogs_load_gpu,
                                 test_catalogs_release);
}
