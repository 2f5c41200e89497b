/* test_engine_fixture.h - the fixture the engine tests share: an engine on
 * a counting allocator with one fake model, and its log checked against a
 * reference sorted by (time, order of scheduling) (test_engine.c,
 * test_engine_cancel.c, test_engine_fluid.c). Header only. */
#ifndef TEST_ENGINE_FIXTURE_H
#define TEST_ENGINE_FIXTURE_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>

#include "engine.h"
#include "fake_model.h"
#include "test_util.h"

/* ---- Fixture --------------------------------------------------------- */

/* An engine on a counting allocator with one fake model. */
typedef struct fixture {
  test_alloc t;
  sim_engine *e;
  fake_model m;
} fixture;

static inline void fx_init(fixture *f) {
  test_alloc_init(&f->t, 0);
  f->e = sim_engine_create(&f->t.hook);
  assert_non_null(f->e);
  assert_int_equal(fake_model_init(&f->m, f->e, "fake"), SIM_OK);
}

/* Frees everything and checks that nothing leaked. */
static inline void fx_fini(fixture *f) {
  fake_model_fini(&f->m);
  sim_engine_destroy(f->e);
  assert_int_equal(f->t.live, 0);
}

static inline gsl_rng *rng_new(unsigned long seed) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
  assert_non_null(r);
  gsl_rng_set(r, seed);
  return r;
}

/* Checks that the log holds events with payload a = want[0..n) in order. */
static inline void assert_log_a(const fake_model *m, const uint64_t *want,
                                size_t n) {
  assert_int_equal(m->n, n);
  for (size_t i = 0; i < n; i++)
    if (m->log[i].a != want[i])
      fail_msg("log[%zu].a = %llu, want %llu", i,
               (unsigned long long)m->log[i].a, (unsigned long long)want[i]);
}

typedef struct ref_event {
  sim_time time;
  uint64_t order; /* scheduling order */
  uint64_t a;
} ref_event;

static inline int ref_cmp(const void *x, const void *y) {
  const ref_event *p = x, *q = y;
  if (p->time != q->time)
    return p->time < q->time ? -1 : 1;
  return p->order < q->order ? -1 : p->order > q->order;
}

/* Checks the log against ref[0..n) sorted by (time, order). */
static inline void assert_log_ref(const fake_model *m, ref_event *ref,
                                  size_t n) {
  qsort(ref, n, sizeof *ref, ref_cmp);
  assert_int_equal(m->n, n);
  for (size_t i = 0; i < n; i++)
    if (m->log[i].a != ref[i].a || m->log[i].time != ref[i].time)
      fail_msg("log[%zu] = (%lld, a=%llu), want (%lld, a=%llu)", i,
               (long long)m->log[i].time, (unsigned long long)m->log[i].a,
               (long long)ref[i].time, (unsigned long long)ref[i].a);
}

#endif
