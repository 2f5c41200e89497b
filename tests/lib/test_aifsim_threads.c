/* test_aifsim_threads.c - the services' request events on threads
 * (aifsim_options.threads, models/factory/workloads_crew.c): how the run
 * is executed, never what it computes. A request-level factory (two
 * services, one from a trace, training jobs, a PDU fault on a service's
 * replicas) writes the same file, byte for byte, and the same books on 1,
 * 2 and 3 threads (3: more than its services), run in one go, stepped by
 * periods, to odd times, or by events. */
#include "test_util.h"

#include <aifsim.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FAULTS AIFSIM_SOURCE_DIR "/scenarios/faults.yaml"

/* Ten minutes of the faults scenario with its PDU trip (the rack of the
 * services' replicas) from 3 to 5 minutes: the leader's fault event
 * drops a service's requests and reschedules its replicas' events. Under
 * a cap the efficiency policy meets by lowering clocks, so the tick sets
 * each replica's clock of its own (the crew's per-service work). */
static const char *sets[] = {
    "duration=10min",           "faults.0.at=3min",
    "faults.0.duration=2min",   "faults.0.racks.0=nvl72-1",
    "power.cap=450kW",          "power.policy=efficiency",
    "sample_period=1min"};
enum { NSETS = sizeof sets / sizeof sets[0] };

/* The sample periods run: the file's, and one a tick (every drive then
 * follows a sample whose replicas' clocks were solved ahead on the
 * members' threads: work_sample_clocks). */
typedef struct sample_row {
  const char *name, *set;
} sample_row;
static const sample_row sample_rows[] = {
    {"same bytes on any threads, a sample a minute", "sample_period=1min"},
    {"same bytes on any threads, a sample a tick", "sample_period=1s"},
};

/* How a run is stepped. */
typedef enum stepping { IN_ONE_GO, BY_PERIODS, TO_ODD_TIMES, BY_EVENTS } stepping;

typedef struct run_case {
  unsigned threads;
  stepping how;
} run_case;

static char *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  *n = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = malloc(*n + 1);
  assert_non_null(b);
  assert_int_equal(fread(b, 1, *n, f), *n);
  fclose(f);
  return b;
}

static void step_through(aifsim *a, stepping how) {
  double t = 0;
  while (!aifsim_at_end(a)) {
    int rc = AIFSIM_OK;
    switch (how) {
    case IN_ONE_GO:
      rc = aifsim_run_to(a, aifsim_duration(a));
      break;
    case BY_PERIODS:
      rc = aifsim_step(a, 1);
      break;
    case TO_ODD_TIMES: /* between ticks, on no event's time */
      t = fmin(t + 7.123456789, aifsim_duration(a));
      rc = aifsim_run_to(a, t);
      break;
    case BY_EVENTS:
      rc = aifsim_step_events(a, 997);
      break;
    }
    assert_int_equal(rc, AIFSIM_OK);
  }
}

/* Runs c into out; the requests arrived and completed and the events. */
static void run_one(const run_case *c, const char *out, double *books,
                    unsigned long long *events) {
  aifsim_options o = {.sweep_point = -1, .threads = c->threads};
  aifsim *a = NULL;
  int rc = aifsim_open_opts(FAULTS, sets, NSETS, out, &o, &a);
  if (rc != AIFSIM_OK)
    fail_msg("aifsim_open_opts: %s", aifsim_errmsg(a));
  step_through(a, c->how);
  *events = aifsim_events(a);
  assert_int_equal(aifsim_finish(a), AIFSIM_OK);
  static const char *const keys[] = {"requests_arrived", "requests_completed",
                                     "energy_mwh"};
  for (size_t k = 0; k < 3; k++)
    assert_int_equal(aifsim_summary(a, keys[k], &books[k]), AIFSIM_OK);
  aifsim_close(a);
}

static void same_bytes_on_any_threads(void **state) {
  const sample_row *row = *state;
  sets[NSETS - 1] = row->set;
  static const run_case cases[] = {
      {1, IN_ONE_GO},  {2, IN_ONE_GO},    {3, IN_ONE_GO},
      {2, BY_PERIODS}, {2, TO_ODD_TIMES}, {1, BY_EVENTS},
      {2, BY_EVENTS},
  };
  char dir[] = "/tmp/test_aifsim_threads_XXXXXX", first[80], out[80];
  assert_non_null(mkdtemp(dir));
  snprintf(first, sizeof first, "%s/first.h5", dir);
  snprintf(out, sizeof out, "%s/run.h5", dir);
  double books0[3], books[3];
  unsigned long long events0, events;
  run_one(&cases[0], first, books0, &events0);
  assert_true(books0[0] > 1000 && books0[1] > 1000); /* requests ran */
  size_t n0, n;
  char *b0 = slurp(first, &n0);
  for (size_t i = 1; i < sizeof cases / sizeof cases[0]; i++) {
    run_one(&cases[i], out, books, &events);
    char *b = slurp(out, &n);
    if (n != n0 || memcmp(b, b0, n) != 0 || events != events0 ||
        memcmp(books, books0, sizeof books) != 0)
      fail_msg("%u threads, stepping %d: not the bytes of 1 thread in one go "
               "(%zu and %zu bytes, %llu and %llu events)",
               cases[i].threads, (int)cases[i].how, n, n0, events, events0);
    free(b);
    unlink(out);
  }
  free(b0);
  unlink(first);
  rmdir(dir);
}

/* The fluid granularity has no crew: threads change nothing there too. */
static void fluid_ignores_threads(void **state) {
  (void)state;
  const char *const fluid[] = {"duration=5min", "inference.granularity=fluid"};
  double e[2];
  for (unsigned t = 1; t <= 2; t++) {
    aifsim_options o = {.sweep_point = -1, .threads = t};
    aifsim *a = NULL;
    assert_int_equal(aifsim_open_opts(FAULTS, fluid, 2, NULL, &o, &a),
                     AIFSIM_OK);
    assert_int_equal(aifsim_step(a, 100000), AIFSIM_OK);
    assert_int_equal(aifsim_finish(a), AIFSIM_OK);
    assert_int_equal(aifsim_summary(a, "energy_mwh", &e[t - 1]), AIFSIM_OK);
    aifsim_close(a);
  }
  assert_true(e[0] == e[1]);
}

int main(void) {
  struct CMUnitTest tests[4];
  size_t n = 0;
  TEST_ROWS(tests, n, same_bytes_on_any_threads, sample_rows);
  TEST_ADD(tests, n, fluid_ignores_threads);
  return _cmocka_run_group_tests("aifsim_threads", tests, n, NULL, NULL);
}
