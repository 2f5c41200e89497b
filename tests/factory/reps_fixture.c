/* reps_fixture.c - replicas laid over a fleet and packed as the tick
 * packs them, for the packed clocks' tests (reps_fixture.h). */
#include "reps_fixture.h"

#include "test_util.h"

#include <math.h>
#include <stdlib.h>

#include "workloads_internal.h"

double uniform(void) { return (double)rand() / RAND_MAX; }

/* A load drawn field by field, busy mostly 1: an initializer list's
 * evaluations are unspecified in order, and the draws are to be the same
 * whatever the compiler. */
gpu_load drawn_load(void) {
  gpu_load l;
  l.sm = uniform();
  l.mem = uniform();
  l.busy = rand() % 4 ? 1 : uniform();
  return l;
}

rack_fleet *fleet_make(two_types *t, const char *a, const char *b,
                       const char *c) {
  sim_error err = {0};
  const char *names[3] = {a, b, c};
  size_t n = c != NULL ? 3 : 2;
  for (size_t k = 0; k < n; k++)
    t->grp[k] =
        (rack_group_spec){names[k], gpu_catalog_find(&cats.gpu, names[k]),
                          4,        72,
                          1e9,      0,
                          0,        NULL,
                          0,        NAN,
                          NULL,     0,
                          false,    0};
  t->f = rack_fleet_create(t->grp, n, NULL, &err);
  assert_non_null(t->f);
  assert_int_equal(rack_fleet_keep_units(t->f), SIM_OK);
  return t->f;
}

void two_types_free(two_types *t) { rack_fleet_destroy(t->f); }

/* A cap in GPU i's range. */
double some_cap(const rack_fleet *f, uint32_t i) {
  const gpu_spec *g = f->types[f->type[i]];
  return g->cap_min_w + uniform() * (g->cap_max_w - g->cap_min_w);
}

/* Replicas end to end over the fleet's GPUs from 0: replica k has
 * size[k] GPUs, key k + 1 and load[k]; a load and a cap per replica,
 * repeated from the one before at times; now and then a GPU of its own
 * cap (a run apart). How many replicas fit. */
uint32_t lay_out(rack_fleet *f, uint32_t *size, gpu_load *load) {
  uint32_t k = 0, at = 0;
  gpu_load l = {0.5, 0.5, 1};
  double cap = some_cap(f, 0);
  while (k < MAX_REPS) {
    uint32_t n = 1 + (uint32_t)(rand() % 16);
    if (at + n > f->n)
      break;
    if (rand() % 3 != 0) /* else as the replica before */
      l = drawn_load();
    if (rand() % 3 != 0)
      cap = some_cap(f, at);
    for (uint32_t i = at; i < at + n; i++) {
      rack_set_unit_key(f, i, k + 1);
      rack_set_load(f, i, l);
      f->cap_w[i] = rand() % 11 == 0 ? f->types[f->type[i]]->cap_min_w : cap;
    }
    load[k] = l;
    size[k++] = n;
    at += n;
  }
  return k;
}

/* Replicas of 1 to 8 GPUs end to end over the fleet's GPUs from 0, none
 * across a rack and none with a GPU of a cap of its own: each one run
 * (the services' layouts at bench-10k). A load and a cap per replica,
 * each new one time in odds (else the replica before's); how many
 * replicas. */
uint32_t lay_out_one(rack_fleet *f, uint32_t *size, gpu_load *load, int odds) {
  uint32_t k = 0, at = 0;
  gpu_load l = {0.5, 0.5, 1};
  double cap = some_cap(f, 0);
  while (k < MAX_REPS && at < f->n) {
    uint32_t n = 1 + (uint32_t)(rand() % 8), room = 72 - at % 72;
    n = n < room ? n : room;
    if (rand() % odds == 0) /* else as the replica before */
      l = drawn_load();
    if (rand() % odds == 0)
      cap = some_cap(f, at);
    for (uint32_t i = at; i < at + n; i++) {
      rack_set_unit_key(f, i, k + 1);
      rack_set_load(f, i, l);
      f->cap_w[i] = cap;
    }
    load[k] = l;
    size[k++] = n;
    at += n;
  }
  return k;
}

void pack(const rack_fleet *f, const uint32_t *size, uint32_t nrep, packed *p) {
  static uint32_t gpus[16], runs[16];
  uint32_t at = 0, m = 0;
  for (uint32_t k = 0; k < nrep; k++) {
    for (uint32_t i = 0; i < size[k]; i++)
      gpus[i] = at + i;
    uint32_t nr = work__slot_runs(f, gpus, size[k], runs);
    p->run0[k] = m;
    for (uint32_t q = 0; q < nr; q++, m++) {
      p->runs[m] = runs[q];
      p->gpu0[m] = f->run_first[runs[q]];
      p->rack[m] = f->rack[p->gpu0[m]];
      p->type[m] = f->type[p->gpu0[m]];
    }
    at += size[k];
  }
  p->run0[nrep] = m;
}

/* Replica k's clock is the slowest of its GPUs' rack_gpu_phi, to the bit;
 * how many of them have more than one run. */
uint32_t check_slowest(const rack_fleet *f, const uint32_t *size, uint32_t nrep,
                       const packed *p, const double *phi) {
  uint32_t at = 0, several = 0;
  for (uint32_t k = 0; k < nrep; k++) {
    double want = 1;
    for (uint32_t i = at; i < at + size[k]; i++) {
      double q = rack_gpu_phi(f, i);
      want = q < want || isnan(want) ? q : want;
    }
    assert_memory_equal(&phi[k], &want, sizeof want);
    several += p->run0[k + 1] - p->run0[k] > 1;
    at += size[k];
  }
  return several;
}
