/* test_scheduler.c - the job queue and gang placement (models/scheduler.c):
 * creation, packing into domains and racks against hand-worked layouts,
 * and allocation failures. The passes (FCFS, EASY backfill, priorities,
 * power-aware admission) are in test_scheduler_passes.c, random sequences
 * in test_scheduler_random.c. */
#include "test_scheduler_layout.h"

/* ---- Creation -------------------------------------------------------- */

typedef struct bad_racks_case {
  const char *name;
  sched_rack racks[2];
  size_t nracks;
  uint32_t ngpus;
  const char *message;
} bad_racks_case;

static const bad_racks_case bad_racks[] = {
    {"domain not dividing the rack",
     {{0, 32, 0, 8}, {32, 32, 0, 12}},
     2,
     64,
     "rack 1: an NVLink domain of 12 GPUs does not divide its 32 GPUs"},
    {"domain of 0", {{0, 32, 0, 0}}, 1, 32, "domain of 0 GPUs"},
    {"overlapping racks",
     {{0, 72, 0, 72}, {64, 72, 0, 72}},
     2,
     136,
     "racks 0 and 1 overlap at GPU 64"},
    {"rack past the GPUs", {{0, 72, 0, 72}}, 1, 64, "GPUs 0..71 lie past"},
    {"empty rack", {{0, 0, 0, 8}}, 1, 8, "rack 0 has no GPUs"},
    {"reserved type", {{0, 8, ANY, 8}}, 1, 8, "reserved"},
};

static void test_create_refuses(void **state) {
  const bad_racks_case *c = *state;
  sim_error err = {0};
  sched *s = sched_create(c->racks, c->nracks, c->ngpus, SCHED_EASY,
                          SCHED_POWER_AWARE, NULL, &err);
  assert_null(s);
  assert_int_equal(err.code, SIM_EINPUT);
  if (strstr(err.msg, c->message) == NULL)
    fail_msg("message \"%s\" lacks \"%s\"", err.msg, c->message);
}

static void test_create_counts(void **state) {
  (void)state;
  sched_destroy(NULL);
  layout l = {0};
  add_racks(&l, 2, 72, 72, 0);
  add_racks(&l, 3, 32, 8, 1);
  l.ngpus += 4; /* GPUs in no rack: never placed */
  sched *s = create_placer(&l);
  assert_int_equal(sched_capacity(s, 0), 144);
  assert_int_equal(sched_capacity(s, 1), 96);
  assert_int_equal(sched_capacity(s, 7), 0);
  assert_int_equal(sched_capacity(s, ANY), 240);
  assert_int_equal(sched_free_gpus(s, 1), 96);
  assert_int_equal(sched_free_gpus(s, ANY), 240);
  assert_int_equal(sched_queued(s), 0);
  uint32_t out[244];
  assert_false(sched_place(s, 241, ANY, out));
  sched_destroy(s);
  /* No racks at all. */
  s = sched_create(NULL, 0, 0, SCHED_FCFS, SCHED_ADMIT_AND_CAP, NULL, NULL);
  assert_non_null(s);
  assert_int_equal(sched_free_gpus(s, ANY), 0);
  assert_false(sched_place(s, 1, ANY, out));
  sched_destroy(s);
}

/* ---- Placement ------------------------------------------------------- */

/* Two racks of 32 GPUs in four 8-GPU domains each: domains 0..7. */
typedef struct domain_fit_case {
  const char *name;
  uint32_t free[8];
  uint32_t n;
  uint32_t domain; /* where the gang must land */
} domain_fit_case;

/* Free GPUs per domain 6 3 8 5 4 8 2 7: each size has one best fit. */
#define FRAGMENTED                                                             \
  { 6, 3, 8, 5, 4, 8, 2, 7 }

static const domain_fit_case domain_fits[] = {
    {"empty: the first domain", {8, 8, 8, 8, 8, 8, 8, 8}, 8, 0},
    {"1 GPU: the 2-free domain", FRAGMENTED, 1, 6},
    {"3 GPUs: the 3-free domain", FRAGMENTED, 3, 1},
    {"4 GPUs: the 4-free domain", FRAGMENTED, 4, 4},
    {"5 GPUs: the 5-free domain", FRAGMENTED, 5, 3},
    {"7 GPUs: 7 free beats 8 free", FRAGMENTED, 7, 7},
    {"8 GPUs: the first whole domain", FRAGMENTED, 8, 2},
    {"ties go to the lower index", {8, 5, 8, 5, 0, 5, 0, 0}, 5, 1},
    {"in the second rack", {8, 8, 8, 8, 8, 3, 8, 8}, 3, 5},
};

static void test_gang_in_one_domain(void **state) {
  const domain_fit_case *c = *state;
  layout l = {0};
  add_racks(&l, 2, 32, 8, 0);
  sched *s = create_placer(&l);
  leave_free(s, &l, c->free);
  uint32_t before = sched_free_gpus(s, 0), out[8];
  assert_true(sched_place(s, c->n, 0, out));
  /* leave_free frees the low GPUs of a domain; placement takes them. */
  for (uint32_t i = 0; i < c->n; i++)
    assert_int_equal(out[i], c->domain * 8 + i);
  assert_int_equal(sched_racks_spanned(s, out, c->n), 1);
  assert_int_equal(sched_free_gpus(s, 0), before - c->n);
  sched_destroy(s);
}

/* Small gangs on NVL72 racks share the fullest rack that holds them. */
static void test_small_gangs_share_an_nvl72(void **state) {
  (void)state;
  layout l = {0};
  add_racks(&l, 3, 72, 72, 0);
  sched *s = create_placer(&l);
  uint32_t a[8], b[8], c[70];
  assert_true(sched_place(s, 8, 0, a));
  assert_true(sched_place(s, 8, 0, b));
  assert_int_equal(a[0], 0);
  assert_int_equal(b[0], 8); /* rack 0, 64 free, is the best fit */
  assert_true(sched_place(s, 70, 0, c));
  assert_int_equal(c[0], 72); /* too big for rack 0's 56 */
  assert_int_equal(sched_racks_spanned(s, c, 70), 1);
  sched_destroy(s);
}

/* Five NVL72 racks left with 50 40 30 60 20 free GPUs. */
typedef struct span_case {
  const char *name;
  uint32_t n;
  uint32_t take[5]; /* GPUs the gang must take from each rack */
} span_case;

static const span_case spans[] = {
    /* 40 is the fewest free that holds 35. */
    {"one rack, best fit", 35, {0, 35, 0, 0, 0}},
    /* 60 + 50 = 110 cover it, so the fullest rack and then the best fit
     * for the last 40 (rack 1, not rack 0 with 50). */
    {"two racks, last part best fit", 100, {0, 40, 0, 60, 0}},
    {"exactly the two fullest", 110, {50, 0, 0, 60, 0}},
    /* 60 + 50 = 110 < 140 <= 150: three racks, the last 30 best-fit. */
    {"three racks, fragmented", 140, {50, 0, 30, 60, 0}},
    {"every GPU", 200, {50, 40, 30, 60, 20}},
};

static void test_gang_spans_fewest_racks(void **state) {
  const span_case *c = *state;
  layout l = {0};
  add_racks(&l, 5, 72, 72, 0);
  sched *s = create_placer(&l);
  leave_free(s, &l, (const uint32_t[]){50, 40, 30, 60, 20});
  uint32_t out[200], took[5] = {0}, spanned = 0;
  assert_true(sched_place(s, c->n, 0, out));
  assert_gang(&l, out, c->n, 0);
  for (uint32_t i = 0; i < c->n; i++)
    took[rack_at(&l, out[i])]++;
  for (size_t r = 0; r < 5; r++) {
    if (took[r] != c->take[r])
      fail_msg("rack %zu: took %u, want %u", r, took[r], c->take[r]);
    spanned += took[r] > 0;
  }
  assert_int_equal(sched_racks_spanned(s, out, c->n), spanned);
  assert_int_equal(sched_free_gpus(s, 0), 200 - c->n);
  sched_destroy(s);
}

static void test_144_spans_two_nvl72(void **state) {
  (void)state;
  layout l = {0};
  add_racks(&l, 3, 72, 72, 0);
  sched *s = create_placer(&l);
  uint32_t out[144];
  assert_true(sched_place(s, 144, 0, out));
  assert_int_equal(sched_racks_spanned(s, out, 144), 2);
  for (uint32_t i = 0; i < 144; i++)
    assert_int_equal(out[i], i);
  assert_int_equal(sched_free_gpus(s, 0), 72);
  sched_destroy(s);
}

/* One 32-GPU rack of 8-GPU domains left with 4 8 8 2 free: a part of the
 * rack goes to its fewest domains, not simply the lowest free GPUs. */
typedef struct domain_span_case {
  const char *name;
  uint32_t n;
  uint32_t first[2], count[2]; /* the runs of GPUs it must take */
} domain_span_case;

static const domain_span_case domain_spans[] = {
    /* Index order would take 4 + 8 + 4 over three domains. */
    {"two whole domains", 16, {8, 16}, {8, 8}},
    /* 8, then the last 4 best-fit into domain 0's 4. */
    {"whole domain and best fit", 12, {0, 8}, {4, 8}},
    {"9: whole domain and best fit", 9, {8, 24}, {8, 1}},
};

static void test_rack_part_spans_fewest_domains(void **state) {
  const domain_span_case *c = *state;
  layout l = {0};
  add_racks(&l, 1, 32, 8, 0);
  sched *s = create_placer(&l);
  leave_free(s, &l, (const uint32_t[]){4, 8, 8, 2});
  uint32_t out[16], k = 0;
  assert_true(sched_place(s, c->n, 0, out));
  for (size_t run = 0; run < 2; run++)
    for (uint32_t i = 0; i < c->count[run]; i++, k++)
      assert_int_equal(out[k], c->first[run] + i);
  assert_int_equal(k, c->n);
  sched_destroy(s);
}

static void test_types_respected(void **state) {
  (void)state;
  layout l = {0};
  add_racks(&l, 1, 72, 72, 0);
  add_racks(&l, 2, 32, 8, 1);
  sched *s = create_placer(&l);
  uint32_t out[80];
  assert_true(sched_place(s, 8, 1, out));
  assert_gang(&l, out, 8, 1);
  assert_int_equal(out[0], 72); /* rack 1, though rack 0 is emptier */
  assert_false(sched_place(s, 57, 1, out)); /* 56 free of type 1 */
  assert_true(sched_place(s, 64, 0, out));
  assert_gang(&l, out, 64, 0);
  assert_int_equal(sched_free_gpus(s, 0), 8);
  assert_int_equal(sched_free_gpus(s, 1), 56);
  /* Any type: no domain holds 16; rack 1 (24 free) is the best fit,
   * and in it two whole domains (80..95). */
  assert_true(sched_place(s, 16, ANY, out));
  for (uint32_t i = 0; i < 16; i++)
    assert_int_equal(out[i], 80 + i);
  assert_int_equal(sched_racks_spanned(s, out, 16), 1);
  sched_destroy(s);
}

/* Places a fixed series of gangs; writes them one after another to out
 * and returns how many GPUs that took. */
static uint32_t place_series(sched *s, uint32_t *out) {
  static const uint32_t sizes[] = {8, 72, 5, 100, 3, 16, 40};
  static const uint32_t types[] = {1, 0, 1, ANY, 0, 1, ANY};
  uint32_t used = 0;
  for (size_t i = 0; i < N_OF(sizes); i++) {
    assert_true(sched_place(s, sizes[i], types[i], out + used));
    used += sizes[i];
  }
  return used;
}

static void test_release_restores(void **state) {
  (void)state;
  layout l = {0};
  add_racks(&l, 3, 72, 72, 0);
  add_racks(&l, 4, 32, 8, 1);
  sched *s = create_placer(&l);
  uint32_t first[400], again[400];
  uint32_t used = place_series(s, first);
  assert_int_equal(sched_free_gpus(s, ANY), l.ngpus - used);
  sched_release(s, first, used);
  assert_int_equal(sched_free_gpus(s, 0), 216);
  assert_int_equal(sched_free_gpus(s, 1), 128);
  /* Back to new: the same series lands on the same GPUs. */
  assert_int_equal(place_series(s, again), used);
  assert_memory_equal(first, again, used * sizeof *first);
  sched_destroy(s);
}

static void test_no_fit_changes_nothing(void **state) {
  (void)state;
  layout l = {0};
  add_racks(&l, 2, 32, 8, 0);
  add_racks(&l, 1, 32, 8, 1);
  sched *s = create_placer(&l), *twin = create_placer(&l);
  const uint32_t pattern[12] = {3, 0, 5, 8, 1, 2, 8, 8, 8, 8, 8, 8};
  leave_free(s, &l, pattern);
  leave_free(twin, &l, pattern);
  uint32_t out[64], twin_out[64];
  for (size_t i = 0; i < N_OF(out); i++)
    out[i] = 12345;
  assert_false(sched_place(s, 36, 0, out)); /* 35 free of type 0 */
  assert_false(sched_place(s, 33, 1, out));
  assert_false(sched_place(s, 68, ANY, out));
  assert_int_equal(out[0], 12345);
  assert_int_equal(sched_free_gpus(s, 0), 35);
  assert_int_equal(sched_free_gpus(s, 1), 32);
  /* The failed calls left no trace: the same gang lands as on the twin. */
  assert_true(sched_place(s, 35, 0, out));
  assert_true(sched_place(twin, 35, 0, twin_out));
  assert_memory_equal(out, twin_out, 35 * sizeof *out);
  assert_true(sched_place(s, 0, 0, out)); /* nothing is always free */
  sched_destroy(s);
  sched_destroy(twin);
}

/* ---- Allocation failures -------------------------------------------- */

static void *make_sched(const sim_allocator *a, void *ctx, sim_error *err) {
  const layout *l = ctx;
  return sched_create(l->racks, l->n, l->ngpus, SCHED_EASY, SCHED_POWER_AWARE,
                      a, err);
}

static void drop_sched(void *s) { sched_destroy(s); }

/* Creation fails cleanly on every allocation; a submit that cannot grow
 * the queue refuses the job and leaves the queue as it was, and the next
 * one grows it. */
static void test_allocation_failures(void **state) {
  (void)state;
  layout l = {0};
  add_racks(&l, 2, 72, 72, 0);
  add_racks(&l, 3, 8, 8, 1);
  assert_true(test_alloc_failures("sched_create", make_sched, drop_sched, &l) >
              5);
  test_alloc t;
  test_alloc_init(&t, 0);
  sim_error err = {0};
  sched *s = make_sched(&t.hook, &l, &err);
  assert_non_null(s);
  int refused = 0;
  for (size_t i = 0; i < 40; i++) {
    sched_job j = {.id = i, .gpus = 8, .type = 0, .arrival_s = (double)i};
    t.fail_at = t.calls + 1;
    if (sched_submit(s, &j) == SIM_ENOMEM) {
      refused++;
      assert_int_equal(sched_queued(s), i);
      t.fail_at = 0;
      assert_int_equal(sched_submit(s, &j), SIM_OK);
    }
    assert_int_equal(sched_queued(s), i + 1);
  }
  /* The queue grew at 0, 8, 16 and 32 jobs. */
  assert_int_equal(refused, 4);
  sched_destroy(s);
  assert_int_equal(t.live, 0);
  sched_destroy(NULL);
}

int main(void) {
  struct CMUnitTest tests[80];
  size_t n = 0;
  TEST_ROWS(tests, n, test_create_refuses, bad_racks);
  TEST_ADD(tests, n, test_create_counts);
  TEST_ADD(tests, n, test_allocation_failures);
  TEST_ROWS(tests, n, test_gang_in_one_domain, domain_fits);
  TEST_ADD(tests, n, test_small_gangs_share_an_nvl72);
  TEST_ROWS(tests, n, test_gang_spans_fewest_racks, spans);
  TEST_ADD(tests, n, test_144_spans_two_nvl72);
  TEST_ROWS(tests, n, test_rack_part_spans_fewest_domains, domain_spans);
  TEST_ADD(tests, n, test_types_respected);
  TEST_ADD(tests, n, test_release_restores);
  TEST_ADD(tests, n, test_no_fit_changes_nothing);
  return _cmocka_run_group_tests("scheduler", tests, n, NULL, NULL);
}
