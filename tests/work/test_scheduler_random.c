/* test_scheduler_random.c - random sequences of submissions, finishes and
 * passes (models/scheduler.c) checked against a mirror of who holds each
 * GPU. */
#include "test_scheduler_layout.h"

/* ---- Random sequences ------------------------------------------------ */

/* Numerical Recipes' 64-bit LCG; the high bits are the good ones. */
static uint32_t lcg(uint64_t *x) {
  *x = *x * 6364136223846793005u + 1442695040888963407u;
  return (uint32_t)(*x >> 33);
}

/* 3 NVL72 of type 0, 4 racks of 32 (domains of 8) of type 1, 2 racks of
 * 16 (domains of 4) of type 2, and 4 GPUs in no rack. */
static layout mixed_fleet(void) {
  layout l = {0};
  add_racks(&l, 3, 72, 72, 0);
  add_racks(&l, 4, 32, 8, 1);
  add_racks(&l, 2, 16, 4, 2);
  l.ngpus += 4;
  return l;
}

static const uint32_t random_types[] = {0, 1, 2, ANY};

static size_t domains(const layout *l) {
  size_t n = 0;
  for (size_t r = 0; r < l->n; r++)
    n += l->racks[r].count / l->racks[r].domain;
  return n;
}

/* Free GPUs per rack and per domain, counted from owners. */
static void count_free(const layout *l, const uint32_t *owner,
                       uint32_t *rack_free, uint32_t *dom_free) {
  size_t d = 0;
  for (size_t r = 0; r < l->n; r++) {
    const sched_rack *k = &l->racks[r];
    rack_free[r] = 0;
    for (uint32_t lo = k->first; lo < k->first + k->count; lo += k->domain) {
      dom_free[d] = 0;
      for (uint32_t g = lo; g < lo + k->domain; g++)
        dom_free[d] += owner[g] == 0;
      rack_free[r] += dom_free[d++];
    }
  }
}

/* The scheduler's free counts match the GPUs no one owns, type by type. */
static void assert_counts(const sched *s, const layout *l,
                          const uint32_t *owner) {
  uint32_t rack_free[16], dom_free[64], any = 0;
  count_free(l, owner, rack_free, dom_free);
  for (size_t t = 0; t < 3; t++) {
    uint32_t n = 0;
    for (size_t r = 0; r < l->n; r++)
      n += l->racks[r].type == t ? rack_free[r] : 0;
    assert_int_equal(sched_free_gpus(s, (uint32_t)t), n);
    any += n;
  }
  assert_int_equal(sched_free_gpus(s, ANY), any);
  for (uint32_t g = 0; g < l->ngpus; g++)
    if (rack_at(l, g) < 0)
      assert_int_equal(owner[g], 0);
}

/* The fewest racks of type that hold n, from the free counts, by taking
 * the fullest left each time; UINT32_MAX if they cannot. */
static uint32_t fewest_racks(const layout *l, const uint32_t *rack_free,
                             uint32_t n, uint32_t type) {
  uint32_t f[16], nf = 0, racks = 0;
  for (size_t r = 0; r < l->n; r++)
    if (type == ANY || l->racks[r].type == type)
      f[nf++] = rack_free[r];
  for (; n > 0 && nf > 0; racks++) {
    uint32_t best = 0;
    for (uint32_t i = 1; i < nf; i++)
      best = f[i] > f[best] ? i : best;
    if (f[best] == 0)
      return UINT32_MAX;
    n -= n < f[best] ? n : f[best];
    f[best] = 0;
  }
  return n == 0 ? racks : UINT32_MAX;
}

/* The fewest free GPUs of a domain of type that holds n, 0 if none, and
 * the first such domain (racks and their domains in order) in at. */
static uint32_t best_domain_free(const layout *l, const uint32_t *dom_free,
                                 uint32_t n, uint32_t type, size_t *at) {
  uint32_t best = 0;
  size_t d = 0;
  for (size_t r = 0; r < l->n; r++)
    for (uint32_t i = 0; i < l->racks[r].count / l->racks[r].domain; i++) {
      bool ok = type == ANY || l->racks[r].type == type;
      if (ok && dom_free[d] >= n && (best == 0 || dom_free[d] < best)) {
        best = dom_free[d];
        *at = d;
      }
      d++;
    }
  return best;
}

/* A random gang size: mostly small, sometimes a domain, sometimes big. */
static uint32_t random_size(uint64_t *x, uint32_t capacity) {
  switch (lcg(x) % 4) {
  case 0:
    return 1 + lcg(x) % 8;
  case 1:
    return 1 + lcg(x) % 32;
  case 2:
    return 1 + lcg(x) % capacity;
  default:
    return (uint32_t[]){4, 8, 72}[lcg(x) % 3];
  }
}

/* Checks one placement against the rules: false with nothing changed if
 * too few are free; else a single domain, the best fit, when one holds
 * it, and the fewest racks. */
static void check_one_place(sched *s, const layout *l, uint32_t *owner,
                            uint32_t n, uint32_t type, uint32_t id) {
  uint32_t rack_free[16], dom_free[64], out[400];
  count_free(l, owner, rack_free, dom_free);
  size_t fit_at = 0;
  uint32_t domain_fit = best_domain_free(l, dom_free, n, type, &fit_at);
  uint32_t racks = fewest_racks(l, rack_free, n, type);
  uint32_t avail = sched_free_gpus(s, type);
  if (!sched_place(s, n, type, out)) {
    assert_true(avail < n);
    return;
  }
  assert_true(avail >= n);
  assert_gang(l, out, n, type);
  assert_int_equal(sched_racks_spanned(s, out, n), racks);
  for (uint32_t i = 0; i < n; i++) {
    assert_int_equal(owner[out[i]], 0);
    owner[out[i]] = id;
  }
  if (domain_fit == 0)
    return;
  /* All in one domain: the first of those with the fewest free. */
  uint32_t after[16], dom_after[64];
  count_free(l, owner, after, dom_after);
  size_t d = 0, hit = 0;
  for (; d < domains(l) && hit == 0; d++)
    hit = dom_after[d] + n == dom_free[d] ? d + 1 : 0;
  assert_true(hit > 0);
  assert_int_equal(dom_free[hit - 1], domain_fit);
  assert_int_equal(hit - 1, fit_at);
}

/* Frees every GPU of gang id. */
static void release_owned(sched *s, const layout *l, uint32_t *owner,
                          uint32_t id) {
  uint32_t out[400], n = 0;
  for (uint32_t g = 0; g < l->ngpus; g++)
    if (owner[g] == id) {
      out[n++] = g;
      owner[g] = 0;
    }
  sched_release(s, out, n);
}

static void test_random_placement(void **state) {
  (void)state;
  layout l = mixed_fleet();
  sched *s = create_placer(&l);
  uint32_t owner[400] = {0};
  uint64_t x = 20240607;
  for (uint32_t step = 1; step <= 3000; step++) {
    if (lcg(&x) % 3 == 0) {
      release_owned(s, &l, owner, 1 + lcg(&x) % step);
    } else {
      uint32_t type = random_types[lcg(&x) % N_OF(random_types)];
      uint32_t n = random_size(&x, sched_capacity(s, type));
      check_one_place(s, &l, owner, n, type, step);
    }
    assert_counts(s, &l, owner);
  }
  sched_destroy(s);
}

/* A pass's world in the random test: who owns each GPU and what runs. */
typedef struct world {
  const layout *l;
  uint32_t owner[400]; /* job id + 1, or 0 */
  sched_running run[400];
  size_t run_id[400];
  size_t nrun;
  double now_s, headroom_w, power_w; /* power started in this pass */
  size_t next_id;
} world;

static int world_start(void *ctx, const sched_job *job, const uint32_t *gpus) {
  world *w = ctx;
  assert_gang(w->l, gpus, job->gpus, job->type);
  for (uint32_t i = 0; i < job->gpus; i++) {
    if (w->owner[gpus[i]] != 0)
      fail_msg("GPU %u given to job %zu holds job %u", gpus[i], job->id,
               w->owner[gpus[i]] - 1);
    w->owner[gpus[i]] = (uint32_t)job->id + 1;
  }
  assert_true(w->nrun < N_OF(w->run));
  w->run[w->nrun] =
      (sched_running){w->now_s + job->runtime_s, job->gpus, job->type};
  w->run_id[w->nrun++] = job->id;
  w->power_w += job->power_w;
  return SIM_OK;
}

static void world_submit(sched *s, world *w, uint64_t *x) {
  uint32_t type = random_types[lcg(x) % N_OF(random_types)];
  uint32_t capacity = sched_capacity(s, type), gpus = random_size(x, capacity);
  /* The caller keeps out jobs that could never start. */
  sched_job job = {.id = w->next_id++,
                   .gpus = gpus < capacity ? gpus : capacity,
                   .type = type,
                   .priority = lcg(x) % 3,
                   .arrival_s = w->now_s,
                   .runtime_s = 1 + lcg(x) % 1000,
                   .power_w = 100 + lcg(x) % 5000};
  assert_int_equal(sched_submit(s, &job), SIM_OK);
}

static void world_pass(sched *s, world *w, uint64_t *x, bool power_aware) {
  w->headroom_w = power_aware ? (double)(lcg(x) % 20000) : INFINITY;
  w->power_w = 0;
  sched_running run[400];
  size_t nrun = w->nrun;
  memcpy(run, w->run, nrun * sizeof *run);
  size_t queued = sched_queued(s);
  assert_int_equal(
      sched_pass(s, w->now_s, w->headroom_w, run, nrun, world_start, w),
      SIM_OK);
  assert_int_equal(sched_queued(s) + (w->nrun - nrun), queued);
  if (power_aware)
    assert_true(w->power_w <= w->headroom_w);
}

/* Ends running job k: its GPUs go back. */
static void world_end(sched *s, world *w, size_t k) {
  release_owned(s, w->l, w->owner, (uint32_t)w->run_id[k] + 1);
  w->nrun--;
  w->run[k] = w->run[w->nrun];
  w->run_id[k] = w->run_id[w->nrun];
}

typedef struct random_case {
  const char *name;
  sched_policy policy;
  sched_admission admission;
  uint64_t seed;
} random_case;

static const random_case randoms[] = {
    {"random FCFS admit-and-cap", SCHED_FCFS, SCHED_ADMIT_AND_CAP, 1},
    {"random FCFS power-aware", SCHED_FCFS, SCHED_POWER_AWARE, 2},
    {"random EASY admit-and-cap", SCHED_EASY, SCHED_ADMIT_AND_CAP, 3},
    {"random EASY power-aware", SCHED_EASY, SCHED_POWER_AWARE, 4},
};

static void test_random_passes(void **state) {
  const random_case *c = *state;
  layout l = mixed_fleet();
  sched *s = create(&l, c->policy, c->admission);
  world w = {.l = &l};
  uint64_t x = c->seed;
  for (int step = 0; step < 4000; step++) {
    w.now_s += lcg(&x) % 50;
    uint32_t op = lcg(&x) % 10;
    if (op < 4)
      world_submit(s, &w, &x);
    else if (op < 7)
      world_pass(s, &w, &x, c->admission == SCHED_POWER_AWARE);
    else if (w.nrun > 0)
      world_end(s, &w, lcg(&x) % w.nrun);
    assert_counts(s, &l, w.owner);
  }
  while (w.nrun > 0)
    world_end(s, &w, 0);
  assert_int_equal(sched_free_gpus(s, ANY), sched_capacity(s, ANY));
  sched_destroy(s);
}

int main(void) {
  struct CMUnitTest tests[80];
  size_t n = 0;
  TEST_ADD(tests, n, test_random_placement);
  TEST_ROWS(tests, n, test_random_passes, randoms);
  return _cmocka_run_group_tests("scheduler_random", tests, n, NULL, NULL);
}
