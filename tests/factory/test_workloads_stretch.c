/* test_workloads_stretch.c - the tick's stretches of replicas and the
 * free GPUs' background (workloads_tick.c, factory.c): whether a
 * service's runs are in order (work__runs_seq); the stretches of a
 * service's replicas that take their worth in one call
 * (work__replica_stretch) against the slot-reading loop they replaced,
 * on keys that cross services' ends, jumps and free GPUs; the background
 * load on the free GPUs (factory.c's list of free runs) after jobs have
 * come and gone, and the noise of racks with no free GPU stepping on;
 * a class's priority taken as a unit's; the units' worth stored
 * four words at once as a pair at a time; and jobs' units a run of one
 * job at a time. */
#define WORK_SCENARIO "work_stretch.yaml"
#include "test_workloads_run.h"

#include <stdint.h>

#include "test_catalogs.h"
#include "workloads_internal.h"

/* Whether runs are in order (work__runs_seq): one a replica, each the one
 * before's plus one, from any first. */
static void runs_in_order(void **state) {
  (void)state;
  static const struct {
    uint32_t n, run0[5], runs[4];
    bool seq;
  } rows[] = {
      {0, {0}, {0}, false},
      {1, {0, 1}, {7}, true},
      {4, {0, 1, 2, 3, 4}, {5, 6, 7, 8}, true},
      {4, {0, 1, 2, 3, 4}, {5, 6, 8, 9}, false},
      {4, {0, 1, 2, 3, 4}, {5, 7, 6, 8}, false},
      {3, {0, 1, 3, 4}, {5, 6, 7, 8}, false}, /* two runs a replica */
  };
  for (size_t k = 0; k < sizeof rows / sizeof *rows; k++)
    assert_int_equal(work__runs_seq(rows[k].run0, rows[k].runs, rows[k].n),
                     rows[k].seq);
}

/* Services of 5, 70 and 300 replicas (more than a stretch's most,
 * WORK_CHUNK), their slots first as lay_out_slots makes them, then a
 * job's 9 stages. */
enum { NSVC = 3, NREP = 5 + 70 + 300, NSLOTS = NREP + 9, NKEYS = 6000 };

/* The loop work__replica_stretch replaced, which read every slot's owner
 * and part: the reference. */
static size_t stretch_ref(const work *w, const uint32_t *key, size_t j,
                          size_t n) {
  const slot *s0 = &w->slots[key[j]];
  size_t e = j + 1;
  while (e < n && e - j < WORK_CHUNK && key[e] == key[j] + (e - j) &&
         key[e] < w->nrep && w->slots[key[e]].owner == s0->owner &&
         w->slots[key[e]].part == s0->part + (e - j))
    e++;
  return e - j;
}

/* work__replica_stretch against stretch_ref on keys in stretches of
 * consecutive slots that cross services' ends and run into the job's
 * slots, broken by jumps and free GPUs (NO_SLOT), at every service slot
 * of them, with the keys' end there or further on. */
static void replica_stretches(void **state) {
  (void)state;
  static inf_config svc[NSVC];
  static slot slots[NSLOTS];
  static uint32_t key[NKEYS];
  const int64_t reps[NSVC + 1] = {5, 70, 300, 9}; /* and the job's stages */
  work_config cfg = {.services = svc, .nservices = NSVC};
  work w = {.cfg = &cfg, .slots = slots, .nslots = NSLOTS, .nrep = NREP};
  for (uint32_t s = 0, at = 0; s <= NSVC; s++)
    for (uint32_t r = 0; r < reps[s]; r++, at++)
      slots[at] = (slot){s, r, 0, 1, true, false};
  for (uint32_t s = 0; s < NSVC; s++)
    svc[s].replicas = reps[s];
  srand(28);
  for (uint32_t j = 0; j < NKEYS;) {
    uint32_t from = (uint32_t)(rand() % NSLOTS), len = 1 + rand() % 400;
    const bool holes = rand() % 2 == 0; /* else stretches past WORK_CHUNK */
    for (; len > 0 && j < NKEYS; len--, j++)
      key[j] = holes && rand() % 50 == 0 ? NO_SLOT : (from++) % NSLOTS;
  }
  for (size_t j = 0; j < NKEYS; j++) {
    size_t n = j % 3 == 0 ? j + 1 + (size_t)(rand() % 300) : NKEYS;
    n = n < NKEYS ? n : NKEYS;
    if (key[j] < NREP)
      assert_int_equal(work__replica_stretch(&w, key, j, n),
                       stretch_ref(&w, key, j, n));
  }
}

/* work__key_stretch against one key at a time: keys from bases near 0
 * and near UINT32_MAX (where a lane of the many-a-turn compare could
 * carry or wrap), every length up to KEYS_MAX, sixteen a turn or eight
 * (sim_lanes_narrow), the first break at every
 * place (or none), the keys after it as they were or not, the break a
 * step, a jump back, a key a lane over. */
typedef struct key_case {
  const char *name;
  uint64_t base;
  uint32_t wrong; /* what a broken key is, from the key it should be */
  bool narrow;    /* eight a turn where AVX2 is (sim_lanes_narrow) */
} key_case;

/* Every length to two turns of sixteen from key 0, the eight, the four,
 * the last few one at a time, and one more. */
enum { KEYS_MAX = 32 + 8 + 4 + 3 + 1 };

static const key_case key_cases[] = {
    {"from 0, one more", 0, 1, false},
    {"from 7, back to the base", 7, 0, false},
    {"from 2^32 - 20, one more", UINT32_MAX - 19, 1, false},
    {"from 2^32 - 3, lanes at the top", UINT32_MAX - 2, 1, false},
    {"from 2^32 - 1, lanes wrap", UINT32_MAX, 2, false},
    {"from 2^31, a high bit", 1u << 31, 1u << 31, false},
    {"from 2^32 - 48, the last that fits", UINT32_MAX - 47, 1, false},
    {"from 5, four lanes over", 5, 4, false},
    {"from 5, eight lanes over", 5, 8, false},
    {"from 30, one less", 30, UINT32_MAX, false},
    {"from 30, eight less", 30, UINT32_MAX - 7, false},
    {"from 30, sixteen less", 30, UINT32_MAX - 15, false},
    {"from 0, one more, eight a turn", 0, 1, true},
    {"from 7, back to the base, eight a turn", 7, 0, true},
    {"from 2^32 - 20, one more, eight a turn", UINT32_MAX - 19, 1, true},
    {"from 2^32 - 3, lanes at the top, eight a turn", UINT32_MAX - 2, 1, true},
    {"from 2^32 - 1, lanes wrap, eight a turn", UINT32_MAX, 2, true},
    {"from 2^31, a high bit, eight a turn", 1u << 31, 1u << 31, true},
    {"from 2^32 - 48, the last that fits, eight a turn", UINT32_MAX - 47, 1, true},
    {"from 5, four lanes over, eight a turn", 5, 4, true},
    {"from 5, eight lanes over, eight a turn", 5, 8, true},
    {"from 30, one less, eight a turn", 30, UINT32_MAX, true},
    {"from 30, eight less, eight a turn", 30, UINT32_MAX - 7, true},
    {"from 30, sixteen less, eight a turn", 30, UINT32_MAX - 15, true},
};

static void key_stretches(void **state) {
  const key_case *c = *state;
  uint32_t k[KEYS_MAX];
  /* brk == m: no break; alone: only k[brk] off, the rest as they were. */
  for (size_t m = 1; m <= KEYS_MAX; m++)
    for (size_t brk = 1; brk <= m; brk++)
      for (int alone = 0; alone < 2; alone++) {
        for (size_t i = 0; i < m; i++) {
          bool off = alone ? i == brk : i >= brk;
          k[i] = (uint32_t)(c->base + i + (off ? c->wrong : 0));
        }
        size_t want = 1;
        while (want < m && k[want] == (uint64_t)k[0] + want)
          want++;
        sim_lanes_narrow = c->narrow;
        size_t got = work__key_stretch(k, m);
        sim_lanes_narrow = false;
        assert_int_equal(got, want);
      }
}

/* Jobs start and end on a rack whose background steps from 30% to 60%
 * once they have ended: every GPU is free again, so the mean activity
 * after the step is 60% (the free runs' list made again with the runs;
 * a list kept from the start leaves the jobs' old GPUs behind). */
static void freed_gpus_take_the_background(void **state) {
  (void)state;
  static const char jobs[] =
      "name: w\nseed: 5\nduration: 2 h\nsample_period: 1 min\n"
      "power: {cap: 200 kW}\n"
      "racks:\n"
      "  - {name: nvl, count: 1, gpu: GB200, gpus_per_rack: 72,\n"
      "     other_power_idle: 16.8 kW, other_power_max: 33.6 kW,\n"
      "     load: {pattern: steps, noise: 0, steps: [{at: 0 s, level: 30%},\n"
      "                                              {at: 100 min, level: 60%}]}}\n"
      "training:\n"
      "  - {name: first, model: Llama-3.1-8B, dp: 8, tp: 4,\n"
      "     tokens_per_iteration: 1048576, iterations: 1500}\n"
      "  - {name: small, model: Llama-3.1-8B, dp: 1, tp: 4, arrival: 20 min,\n"
      "     tokens_per_iteration: 65536, iterations: 200}\n";
  run r;
  run_scenario(&r, jobs, NULL, 0);
  assert_int_equal(r.sum.jobs_done, 2);
  size_t n, rows;
  const double *end = job_column(&r, "end_s", &n);
  assert_true(fmax(end[0], end[1]) < 100 * 60);
  const double *act = facility(&r, "activity", &rows);
  const double *t = tel_memory_times(r.sink, "facility", &rows);
  size_t after = 0;
  for (size_t i = 0; i < rows; i++)
    if (t[i] - 60 > 100 * 60 + 1) { /* the interval began after the step */
      assert_close(act[i], 0.6, 1e-12, 0);
      after++;
    }
  assert_true(after > 10);
  run_free(&r);
}

/* Two noisy racks, with a job on all of rack 0's GPUs for its first
 * minutes or without it: once the job has ended, each rack's activity is
 * the run without the job's, to the bit. A rack with no free GPU gives
 * its level to none, but its noise steps on every tick all the same
 * (its own stream's draws). */
static void busy_racks_keep_their_noise(void **state) {
  (void)state;
  static const char text[] =
      "name: w\nseed: 9\nduration: 40 min\nsample_period: 1 min\n"
      "power: {cap: 400 kW}\n"
      "racks:\n"
      "  - {name: nvl, count: 2, gpu: GB200, gpus_per_rack: 72,\n"
      "     other_power_idle: 16.8 kW, other_power_max: 33.6 kW,\n"
      "     load: {level: 40%%, noise: 10%%, noise_time: 2 min}}\n"
      "%s";
  static const char job[] =
      "training:\n"
      "  - {name: all, model: Llama-3.1-8B, dp: 18, tp: 4,\n"
      "     tokens_per_iteration: 1048576, iterations: 600}\n";
  char with[1024], without[1024];
  snprintf(with, sizeof with, text, job);
  snprintf(without, sizeof without, text, "");
  run a, b;
  run_scenario(&a, with, NULL, 0);
  double end = job_column(&a, "end_s", &(size_t){0})[0];
  assert_true(end > 120 && end < 30 * 60);
  run_scenario(&b, without, NULL, 0);
  size_t rows, rb, w, wb;
  const double *t = tel_memory_times(a.sink, "racks", &rows);
  const double *x = tel_memory_column(a.sink, "racks", "activity", &rows, &w);
  const double *y = tel_memory_column(b.sink, "racks", "activity", &rb, &wb);
  assert_int_equal(rows, rb);
  assert_int_equal(w, 2);
  size_t after = 0;
  for (size_t i = 0; i < rows; i++)
    if (t[i] - 60 > end + 1) { /* the interval began after the job's end */
      assert_memory_equal(x + i * w, y + i * w, w * sizeof *x);
      after++;
    }
  assert_true(after > 5);
  run_free(&a);
  run_free(&b);
}

/* work__class_priority: the sixteen bytes of a unit made of zeros from
 * its cls on, with the class and priority set (the padding between them
 * zeros), to the byte. */
static void class_priority_as_a_unit(void **state) {
  (void)state;
  static const struct {
    int cls;
    int64_t priority;
  } rows[] = {
      {POWER_INFERENCE, 0},        {POWER_INFERENCE, 7},
      {POWER_TRAINING, -1},        {POWER_INFERENCE, INT64_MIN},
      {POWER_TRAINING, INT64_MAX}, {POWER_INFERENCE, (int64_t)1 << 40},
  };
  for (size_t k = 0; k < sizeof rows / sizeof *rows; k++) {
    power_unit t;
    memset(&t, 0, sizeof t);
    t.cls = rows[k].cls;
    t.priority = rows[k].priority;
    unsigned char got[16];
    sim_u2_put(got, work__class_priority(rows[k].cls, rows[k].priority));
    assert_memory_equal(got, (const char *)&t + offsetof(power_unit, cls),
                        sizeof got);
  }
}

/* Two fluid services of 27 and 13 replicas (stretches that end a turn
 * of four early and late) on two racks with a job beside them, under
 * the efficiency policy and a cap it must split: the units' worth
 * stored 32 bytes a unit (AVX2, where the CPU has it) and a pair at a
 * time (sim_lanes_narrow, the loop it replaced) give the racks' power
 * and caps to the bit. The policy reads every unit's class, priority,
 * weight and c, and its GPU count n, which shares the class's word (the
 * wide store blends it back in), so a word stored wrong or to the wrong
 * unit, or an n not kept, moves the caps. */
static void worth_stored_wide_as_narrow(void **state) {
  (void)state;
  static const char text[] =
      "name: w\nseed: 3\nduration: 20 min\nsample_period: 1 min\n"
      "power: {cap: 190 kW, policy: efficiency}\n"
      "racks:\n"
      "  - {name: nvl, count: 2, gpu: GB200, gpus_per_rack: 72,\n"
      "     other_power_idle: 16.8 kW, other_power_max: 33.6 kW,\n"
      "     load: {level: 20%, noise: 0}}\n"
      "services:\n"
      "  - {name: chat, model: Llama-3.1-8B, precision: fp8, replicas: 27,\n"
      "     priority: 2, arrivals: {kind: poisson, rate: 300,\n"
      "     prompt: {mean: 500}, output: {mean: 200}}}\n"
      "  - {name: code, model: Llama-3.1-8B, precision: fp8, replicas: 13,\n"
      "     arrivals: {kind: poisson, rate: 40, prompt: {mean: 4000},\n"
      "     output: {mean: 50}}}\n"
      "training:\n"
      "  - {name: first, model: Llama-3.1-8B, dp: 8, tp: 4,\n"
      "     tokens_per_iteration: 1048576, iterations: 1500}\n";
  const char *sets[] = {"inference.granularity=fluid"};
  run r[2];
  for (int narrow = 0; narrow < 2; narrow++) {
    sim_lanes_narrow = narrow;
    run_scenario(&r[narrow], text, sets, 1);
    sim_lanes_narrow = false;
  }
  static const char *const cols[] = {"power_w", "gpu_cap_w"};
  for (size_t c = 0; c < sizeof cols / sizeof *cols; c++) {
    size_t rows[2], w[2];
    const double *p[2];
    for (int k = 0; k < 2; k++)
      p[k] = tel_memory_column(r[k].sink, "racks", cols[c], &rows[k], &w[k]);
    assert_non_null(p[0]);
    assert_int_equal(rows[0], rows[1]);
    assert_int_equal(w[0], w[1]);
    assert_true(rows[0] >= 20);
    assert_memory_equal(p[0], p[1], rows[0] * w[0] * sizeof *p[0]);
  }
  run_free(&r[0]);
  run_free(&r[1]);
}

/* Jobs' units in runs of one job (work_slot_units' job_units): every
 * unit of a job's slot takes that job's worth (weight 1, the training
 * class, c = 1 - its comm share, its priority), the run ending where the
 * next unit is another job's or free (NO_SLOT, left as it was), and no
 * byte else written (a unit's padding left). */
static void jobs_worth_a_run_at_a_time(void **state) {
  (void)state;
  static train_config jobs[2];
  jobs[0].comm_share = 0.25, jobs[0].priority = 3;
  jobs[1].comm_share = 0.5, jobs[1].priority = -1;
  static slot slots[5] = {{0, 0, 0, 4, true, false}, {0, 1, 4, 4, true, false},
                          {0, 2, 8, 4, true, false}, {1, 0, 12, 4, true, false},
                          {1, 1, 16, 4, true, false}};
  work_config cfg = {.nservices = 0}; /* every owner a job */
  work w = {.cfg = &cfg, .slots = slots, .nslots = 5, .jobs = jobs, .njobs = 2};
  const uint32_t key[] = {0, 1, 3, NO_SLOT, 2, 4, 3, 0, 1};
  enum { N = sizeof key / sizeof *key };
  power_unit u[N], want[N];
  memset(u, 0xab, sizeof u);
  memset(want, 0xab, sizeof want);
  for (size_t j = 0; j < N; j++)
    if (key[j] != NO_SLOT) {
      const train_config *t = &jobs[slots[key[j]].owner];
      want[j].weight = 1;
      want[j].cls = POWER_TRAINING;
      want[j].c = 1 - t->comm_share;
      want[j].priority = t->priority;
    }
  work_slot_units(&w, key, N, u);
  assert_memory_equal(u, want, sizeof u);
}

int main(void) {
  struct CMUnitTest tests[40];
  size_t n = 0;
  TEST_ADD(tests, n, runs_in_order);
  TEST_ADD(tests, n, class_priority_as_a_unit);
  TEST_ADD(tests, n, replica_stretches);
  TEST_ADD(tests, n, worth_stored_wide_as_narrow);
  TEST_ADD(tests, n, jobs_worth_a_run_at_a_time);
  TEST_ROWS(tests, n, key_stretches, key_cases);
  TEST_ADD(tests, n, freed_gpus_take_the_background);
  TEST_ADD(tests, n, busy_racks_keep_their_noise);
  return _cmocka_run_group_tests("workloads_stretch", tests, n,
                                 test_catalogs_load_gpu, test_catalogs_release);
}
