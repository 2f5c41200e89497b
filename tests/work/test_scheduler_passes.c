/* test_scheduler_passes.c - the scheduler's passes (models/scheduler.c):
 * FCFS, EASY backfill with hand-computed shadow times, priorities, and
 * power-aware admission. */
#include "test_scheduler_layout.h"

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

int main(void) {
  struct CMUnitTest tests[80];
  size_t n = 0;
  TEST_ROWS(tests, n, test_head_blocks, head_blocks);
  TEST_ROWS(tests, n, test_priorities, priorities);
  TEST_ADD(tests, n, test_priority_takes_the_gpus);
  TEST_ROWS(tests, n, test_easy_backfill, easy);
  TEST_ROWS(tests, n, test_easy_scenes, easy_scenes);
  TEST_ADD(tests, n, test_easy_counts_this_pass);
  TEST_ROWS(tests, n, test_power_admission, powers);
  TEST_ADD(tests, n, test_start_error_stops_the_pass);
  return _cmocka_run_group_tests("scheduler_passes", tests, n, NULL, NULL);
}
