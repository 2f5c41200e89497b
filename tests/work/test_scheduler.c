/* test_scheduler.c - the job queue and gang placement (models/scheduler.c):
 * packing into domains and racks against hand-worked layouts, FCFS, EASY
 * backfill with hand-computed shadow times, priorities, power-aware
 * admission, and random sequences checked against a mirror of who holds
 * each GPU. */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler.h"

#define ANY SCHED_ANY_TYPE

/* ---- Helpers --------------------------------------------------------- */

/* Racks laid end to end from GPU 0. */
typedef struct layout {
  sched_rack racks[16];
  size_t n;
  uint32_t ngpus;
} layout;

/* Appends n racks of size GPUs in domains of domain GPUs. */
static void add_racks(layout *l, size_t n, uint32_t size, uint32_t domain,
                      uint32_t type) {
  for (size_t i = 0; i < n; i++) {
    assert_true(l->n < N_OF(l->racks));
    l->racks[l->n++] = (sched_rack){l->ngpus, size, type, domain};
    l->ngpus += size;
  }
}

static sched *create(const layout *l, sched_policy policy,
                     sched_admission admission) {
  sim_error err = {0};
  sched *s =
      sched_create(l->racks, l->n, l->ngpus, policy, admission, NULL, &err);
  if (s == NULL)
    fail_msg("sched_create: %s", err.msg);
  return s;
}

static sched *create_placer(const layout *l) {
  return create(l, SCHED_FCFS, SCHED_ADMIT_AND_CAP);
}

/* The rack holding GPU g, or -1. */
static int rack_at(const layout *l, uint32_t g) {
  for (size_t r = 0; r < l->n; r++)
    if (g >= l->racks[r].first && g - l->racks[r].first < l->racks[r].count)
      return (int)r;
  return -1;
}

/* Takes every GPU, then frees the first free[d] GPUs of each domain d
 * (racks in order, their domains in order): a fragmented fleet. */
static void leave_free(sched *s, const layout *l, const uint32_t *pattern) {
  uint32_t *all = malloc(l->ngpus * sizeof *all);
  assert_non_null(all);
  assert_true(sched_place(s, l->ngpus, ANY, all));
  assert_int_equal(sched_free_gpus(s, ANY), 0);
  size_t d = 0;
  for (size_t r = 0; r < l->n; r++) {
    const sched_rack *k = &l->racks[r];
    for (uint32_t lo = k->first; lo < k->first + k->count; lo += k->domain) {
      for (uint32_t i = 0; i < pattern[d]; i++)
        all[i] = lo + i;
      sched_release(s, all, pattern[d++]);
    }
  }
  free(all);
}

/* Fails unless gpus[0..n) rise strictly (rack then index order, as the
 * racks here are laid out in index order) and lie in racks of type. */
static void assert_gang(const layout *l, const uint32_t *gpus, uint32_t n,
                        uint32_t type) {
  for (uint32_t i = 0; i < n; i++) {
    int r = rack_at(l, gpus[i]);
    if (r < 0 || (type != ANY && l->racks[r].type != type))
      fail_msg("GPU %u (rack %d) is not of type %u", gpus[i], r, type);
    if (i > 0 && gpus[i] <= gpus[i - 1])
      fail_msg("GPU %u follows GPU %u", gpus[i], gpus[i - 1]);
  }
}

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

/* ---- Passes ---------------------------------------------------------- */

/* A job as the tables give it; its id is its name. */
typedef struct job_spec {
  char name; /* 0 ends a list */
  uint32_t gpus;
  double runtime_s;
  uint32_t type;
  double power_w;
  int64_t priority;
  double arrival_s;
} job_spec;

/* A job of gpus GPUs of type 0 running runtime_s, and the same with more
 * fields set (.type, .power_w, .priority, .arrival_s). */
#define JOB(c, g, rt)                                                          \
  { .name = (c), .gpus = (g), .runtime_s = (rt) }
#define JOBX(c, g, rt, ...)                                                    \
  { .name = (c), .gpus = (g), .runtime_s = (rt), __VA_ARGS__ }

/* Collects the names of the started jobs in order and checks each gang;
 * counts the GPUs of watch_type held by jobs that run longer than
 * watch_s (for EASY: past the shadow time). */
typedef struct recorder {
  const layout *l;
  char started[64];
  size_t n;
  char fail_on; /* a job whose start fails, or 0 */
  uint32_t watch_type;
  double watch_s;
  uint32_t held_past;
} recorder;

static int record_start(void *ctx, const sched_job *job, const uint32_t *gpus) {
  recorder *r = ctx;
  if (r->fail_on != 0 && job->id == (size_t)r->fail_on)
    return SIM_EINPUT;
  assert_gang(r->l, gpus, job->gpus, job->type);
  assert_true(r->n + 1 < sizeof r->started);
  r->started[r->n++] = (char)job->id;
  for (uint32_t i = 0; i < job->gpus && job->runtime_s > r->watch_s; i++)
    r->held_past += r->l->racks[rack_at(r->l, gpus[i])].type == r->watch_type;
  return SIM_OK;
}

/* Submits the jobs up to the first named 0 (the tables' arrays keep a
 * spare slot for it). */
static void submit_all(sched *s, const job_spec *jobs) {
  for (; jobs->name != 0; jobs++) {
    sched_job j = {.id = (size_t)jobs->name,
                   .gpus = jobs->gpus,
                   .type = jobs->type,
                   .priority = jobs->priority,
                   .arrival_s = jobs->arrival_s,
                   .runtime_s = jobs->runtime_s,
                   .power_w = jobs->power_w};
    assert_int_equal(sched_submit(s, &j), SIM_OK);
  }
}

/* Runs a pass at now with headroom through r and checks the names
 * started. */
static void assert_pass_with(sched *s, recorder *r, double now_s,
                             double headroom_w, const sched_running *run,
                             size_t nrun, const char *want) {
  size_t queued = sched_queued(s);
  assert_int_equal(sched_pass(s, now_s, headroom_w, run, nrun, record_start, r),
                   SIM_OK);
  r->started[r->n] = '\0';
  if (strcmp(r->started, want) != 0)
    fail_msg("started \"%s\", want \"%s\"", r->started, want);
  assert_int_equal(sched_queued(s), queued - r->n);
}

static void assert_pass(sched *s, const layout *l, double now_s,
                        double headroom_w, const sched_running *run,
                        size_t nrun, const char *want) {
  recorder r = {.l = l};
  assert_pass_with(s, &r, now_s, headroom_w, run, nrun, want);
}

typedef struct order_case {
  const char *name;
  sched_policy policy;
  job_spec jobs[6];
  const char *started;
} order_case;

/* 32 GPUs in four 8-GPU racks; A takes 24, so B (16) cannot start. */
static const order_case head_blocks[] = {
    {"FCFS: the head blocks the rest",
     SCHED_FCFS,
     {JOB('A', 24, 100), JOB('B', 16, 10), JOB('C', 8, 10)},
     "A"},
    /* B's shadow is A's end at 100; C ends at 10. */
    {"EASY: a short job backfills",
     SCHED_EASY,
     {JOB('A', 24, 100), JOB('B', 16, 10), JOB('C', 8, 10)},
     "AC"},
    {"FCFS: all fit, all start",
     SCHED_FCFS,
     {JOB('A', 8, 1), JOB('B', 8, 1), JOB('C', 16, 1)},
     "ABC"},
};

static void test_head_blocks(void **state) {
  const order_case *c = *state;
  layout l = {0};
  add_racks(&l, 4, 8, 8, 0);
  sched *s = create(&l, c->policy, SCHED_ADMIT_AND_CAP);
  submit_all(s, c->jobs);
  assert_pass(s, &l, 0, INFINITY, NULL, 0, c->started);
  sched_destroy(s);
}

/* Priority first, then arrival, then submission order; all fit. */
static const order_case priorities[] = {
    {"priority, arrival, submission",
     SCHED_FCFS,
     {JOBX('a', 1, 1, .priority = 0, .arrival_s = 5),
      JOBX('b', 1, 1, .priority = 2, .arrival_s = 7),
      JOBX('c', 1, 1, .priority = 0, .arrival_s = 1),
      JOBX('d', 1, 1, .priority = 2, .arrival_s = 7),
      JOBX('e', 1, 1, .priority = 1, .arrival_s = 0)},
     "bdeca"},
    {"equal priority keeps arrival order",
     SCHED_FCFS,
     {JOBX('x', 1, 1, .arrival_s = 2), JOBX('y', 1, 1, .arrival_s = 3),
      JOBX('z', 1, 1, .arrival_s = 1)},
     "zxy"},
    {"negative priority goes last",
     SCHED_FCFS,
     {JOBX('n', 1, 1, .priority = -1, .arrival_s = 0),
      JOBX('p', 1, 1, .priority = 0, .arrival_s = 9)},
     "pn"},
};

static void test_priorities(void **state) {
  const order_case *c = *state;
  layout l = {0};
  add_racks(&l, 1, 8, 8, 0);
  sched *s = create(&l, c->policy, SCHED_ADMIT_AND_CAP);
  submit_all(s, c->jobs);
  assert_pass(s, &l, 0, INFINITY, NULL, 0, c->started);
  sched_destroy(s);
}

/* With GPUs for one, the later high-priority job goes first. */
static void test_priority_takes_the_gpus(void **state) {
  (void)state;
  layout l = {0};
  add_racks(&l, 1, 8, 8, 0);
  sched *s = create(&l, SCHED_FCFS, SCHED_ADMIT_AND_CAP);
  submit_all(
      s, (const job_spec[]){JOB('X', 8, 10),
                            JOBX('Y', 8, 10, .priority = 1, .arrival_s = 10),
                            {0}});
  assert_pass(s, &l, 10, INFINITY, NULL, 0, "Y");
  sched_destroy(s);
}

/* EASY, worked by hand. Racks 0-3: 8 GPUs of type 0 each; rack 4: 8 of
 * type 1. At t = 0 job R1 holds 16 type-0 GPUs until 100, R2 8 until 300,
 * so 8 of type 0 are free. The head H wants 20 of type 0 (runtime 50):
 * 8 free now, 8 + 16 = 24 >= 20 when R1 ends, so the shadow time is 100
 * and the extra GPUs are 24 - 20 = 4. */
typedef struct easy_case {
  const char *name;
  sched_policy policy;
  job_spec jobs[4]; /* behind H */
  const char *started;
} easy_case;

static const easy_case easy[] = {
    {"short job ends by the shadow", SCHED_EASY, {JOB('S', 8, 100)}, "S"},
    {"long job would delay the head", SCHED_EASY, {JOB('L', 6, 500)}, ""},
    {"long job fits the extra GPUs", SCHED_EASY, {JOB('L', 4, 500)}, "L"},
    {"extra GPUs are spent once",
     SCHED_EASY,
     {JOB('L', 4, 500), JOB('M', 2, 500), JOB('S', 2, 50)},
     "LS"},
    {"too big to fit now", SCHED_EASY, {JOB('X', 10, 10)}, ""},
    {"another type runs past the shadow",
     SCHED_EASY,
     {JOBX('O', 8, 1000, .type = 1)},
     "O"},
    {"any type counts against the extra",
     SCHED_EASY,
     {JOBX('A', 6, 1000, .type = ANY), JOBX('B', 4, 1000, .type = ANY)},
     "B"},
    {"FCFS starts none behind the head",
     SCHED_FCFS,
     {JOB('S', 8, 100), JOB('L', 4, 500), JOBX('O', 8, 1000, .type = 1)},
     ""},
};

static void test_easy_backfill(void **state) {
  const easy_case *c = *state;
  layout l = {0};
  add_racks(&l, 4, 8, 8, 0);
  add_racks(&l, 1, 8, 8, 1);
  sched *s = create(&l, c->policy, SCHED_ADMIT_AND_CAP);
  uint32_t r1[16], r2[8];
  assert_true(sched_place(s, 16, 0, r1));
  assert_true(sched_place(s, 8, 0, r2));
  const sched_running run[] = {{300, 8, 0}, {100, 16, 0}};
  submit_all(s, (const job_spec[]){JOB('H', 20, 50), {0}});
  submit_all(s, c->jobs);
  recorder r = {.l = &l, .watch_type = 0, .watch_s = 100};
  assert_pass_with(s, &r, 0, INFINITY, run, N_OF(run), c->started);
  /* The reservation held: at 100 the 8 free before the pass and R1's 16,
   * less what backfilled jobs still hold then, cover H's 20. */
  if (24 - r.held_past < 20)
    fail_msg("backfill holds %u of H's GPUs at the shadow", r.held_past);
  sched_destroy(s);
}

/* More EASY by hand, on the same racks; each running job first takes
 * its GPUs (in list order), and the first job listed is the head. */
typedef struct easy_scene {
  const char *name;
  sched_running running[4]; /* up to the first with no GPUs */
  job_spec jobs[5];
  const char *started;
} easy_scene;

static const easy_scene easy_scenes[] = {
    /* Racks 0-2 taken, 8 free. H needs 12: 8 + 8 >= 12 at 100, and the
     * other job ending at 100 adds 8: extra 24 - 12 = 12 >= L's 8. */
    {"jobs ending at the shadow all count",
     {{100, 8, 0}, {100, 8, 0}, {300, 8, 0}},
     {JOB('H', 12, 50), JOB('L', 8, 500)},
     "L"},
    /* Only rack 3 free (8). H takes any type: 8 + 16 + 8 = 32 >= 30 at
     * 100, with the type-1 job's GPUs, so extra 2. M would end at 200,
     * after the shadow, and needs 6; L needs 4; S's 2 fit the extra. */
    {"a head of any type counts every type",
     {{100, 16, 0}, {100, 8, 1}, {300, 8, 0}},
     {JOBX('H', 30, 50, .type = ANY), JOB('M', 6, 200), JOB('L', 4, 500),
      JOB('S', 2, 500)},
     "S"},
    /* A running job placed on any type frees GPUs for every type. */
    {"a running job of any type counts",
     {{100, 16, ANY}, {300, 8, 0}},
     {JOB('H', 20, 50), JOB('S', 8, 100), JOB('L', 6, 500)},
     "S"},
};

static void test_easy_scenes(void **state) {
  const easy_scene *c = *state;
  layout l = {0};
  add_racks(&l, 4, 8, 8, 0);
  add_racks(&l, 1, 8, 8, 1);
  sched *s = create(&l, SCHED_EASY, SCHED_ADMIT_AND_CAP);
  size_t nrun = 0;
  uint32_t held[40];
  for (; nrun < N_OF(c->running) && c->running[nrun].gpus > 0; nrun++)
    assert_true(
        sched_place(s, c->running[nrun].gpus, c->running[nrun].type, held));
  submit_all(s, c->jobs);
  assert_pass(s, &l, 0, INFINITY, c->running, nrun, c->started);
  sched_destroy(s);
}

/* Five 8-GPU racks. A (24 GPUs, ends at 100) starts; H (32) blocks. A,
 * started in this very pass, frees 24 at 100: shadow 100, extra 16 + 24
 * - 32 = 8. L (12, long) would take head GPUs and is held; E (8) fits the
 * extra. Were A not counted, the shadow would be infinite and L start. */
static void test_easy_counts_this_pass(void **state) {
  (void)state;
  layout l = {0};
  add_racks(&l, 5, 8, 8, 0);
  sched *s = create(&l, SCHED_EASY, SCHED_ADMIT_AND_CAP);
  submit_all(s, (const job_spec[]){JOB('A', 24, 100),
                                   JOB('H', 32, 10),
                                   JOB('L', 12, 500),
                                   JOB('E', 8, 500),
                                   {0}});
  assert_pass(s, &l, 0, INFINITY, NULL, 0, "AE");
  sched_destroy(s);
}

/* 32 GPUs in four 8-GPU racks; jobs carry their estimated power. */
typedef struct power_case {
  const char *name;
  sched_policy policy;
  sched_admission admission;
  double headroom_w;
  job_spec jobs[6];
  const char *started;
} power_case;

static const power_case powers[] = {
    {"power-aware: headroom for one",
     SCHED_FCFS,
     SCHED_POWER_AWARE,
     1500,
     {JOBX('A', 8, 10, .power_w = 1000), JOBX('B', 8, 10, .power_w = 1000)},
     "A"},
    {"admit-and-cap: both, headroom ignored",
     SCHED_FCFS,
     SCHED_ADMIT_AND_CAP,
     1500,
     {JOBX('A', 8, 10, .power_w = 1000), JOBX('B', 8, 10, .power_w = 1000)},
     "AB"},
    {"admit-and-cap: both, no headroom",
     SCHED_FCFS,
     SCHED_ADMIT_AND_CAP,
     INFINITY,
     {JOBX('A', 8, 10, .power_w = 1000), JOBX('B', 8, 10, .power_w = 1000)},
     "AB"},
    {"power-aware: exactly enough for both",
     SCHED_FCFS,
     SCHED_POWER_AWARE,
     2000,
     {JOBX('A', 8, 10, .power_w = 1000), JOBX('B', 8, 10, .power_w = 1000)},
     "AB"},
    {"power-aware FCFS: the held head blocks",
     SCHED_FCFS,
     SCHED_POWER_AWARE,
     1000,
     {JOBX('A', 8, 10, .power_w = 2000), JOBX('B', 8, 10, .power_w = 500)},
     ""},
    /* A is held for power with its 8 GPUs free: shadow now, extra 24. B
     * (8 of them) starts, leaving 500 W; C needs 600 W; D's 20 GPUs are
     * more than the 16 extra left; E's 16 are not. */
    {"power-aware EASY: a reservation, the headroom left",
     SCHED_EASY,
     SCHED_POWER_AWARE,
     1000,
     {JOBX('A', 8, 10, .power_w = 2000), JOBX('B', 8, 10, .power_w = 500),
      JOBX('C', 8, 10, .power_w = 600), JOBX('D', 20, 10, .power_w = 100),
      JOBX('E', 16, 10, .power_w = 100)},
     "BE"},
};

static void test_power_admission(void **state) {
  const power_case *c = *state;
  layout l = {0};
  add_racks(&l, 4, 8, 8, 0);
  sched *s = create(&l, c->policy, c->admission);
  submit_all(s, c->jobs);
  assert_pass(s, &l, 0, c->headroom_w, NULL, 0, c->started);
  sched_destroy(s);
}

/* A failing start stops the pass: that job stays queued, holding nothing. */
static void test_start_error_stops_the_pass(void **state) {
  (void)state;
  layout l = {0};
  add_racks(&l, 4, 8, 8, 0);
  sched *s = create(&l, SCHED_EASY, SCHED_ADMIT_AND_CAP);
  submit_all(s, (const job_spec[]){
                    JOB('A', 8, 1), JOB('B', 8, 1), JOB('C', 8, 1), {0}});
  recorder r = {.l = &l, .fail_on = 'B'};
  assert_int_equal(sched_pass(s, 0, INFINITY, NULL, 0, record_start, &r),
                   SIM_EINPUT);
  assert_int_equal(r.n, 1);
  assert_int_equal(sched_queued(s), 2);
  assert_int_equal(sched_free_gpus(s, 0), 24);
  assert_pass(s, &l, 1, INFINITY, NULL, 0, "BC");
  sched_destroy(s);
}

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

/* The fewest free GPUs of a domain of type that holds n; 0 if none. */
static uint32_t best_domain_free(const layout *l, const uint32_t *dom_free,
                                 uint32_t n, uint32_t type) {
  uint32_t best = 0;
  size_t d = 0;
  for (size_t r = 0; r < l->n; r++)
    for (uint32_t i = 0; i < l->racks[r].count / l->racks[r].domain; i++) {
      bool ok = type == ANY || l->racks[r].type == type;
      if (ok && dom_free[d] >= n && (best == 0 || dom_free[d] < best))
        best = dom_free[d];
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
  uint32_t domain_fit = best_domain_free(l, dom_free, n, type);
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
  /* All in one domain, which had domain_fit free. */
  uint32_t after[16], dom_after[64];
  count_free(l, owner, after, dom_after);
  size_t d = 0, hit = 0;
  for (; d < domains(l) && hit == 0; d++)
    hit = dom_after[d] + n == dom_free[d] ? d + 1 : 0;
  assert_true(hit > 0);
  assert_int_equal(dom_free[hit - 1], domain_fit);
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
  TEST_ROWS(tests, n, test_head_blocks, head_blocks);
  TEST_ROWS(tests, n, test_priorities, priorities);
  TEST_ADD(tests, n, test_priority_takes_the_gpus);
  TEST_ROWS(tests, n, test_easy_backfill, easy);
  TEST_ROWS(tests, n, test_easy_scenes, easy_scenes);
  TEST_ADD(tests, n, test_easy_counts_this_pass);
  TEST_ROWS(tests, n, test_power_admission, powers);
  TEST_ADD(tests, n, test_start_error_stops_the_pass);
  TEST_ADD(tests, n, test_random_placement);
  TEST_ROWS(tests, n, test_random_passes, randoms);
  return _cmocka_run_group_tests("scheduler", tests, n, NULL, NULL);
}
