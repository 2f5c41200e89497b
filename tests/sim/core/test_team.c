/* test_team.c - the team's runs: every chunk once, its writes seen by
 * the caller, any number of lanes the same answers, a sleeping worker
 * never waited for. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "team.h"

enum { MAXN = 64 };

typedef struct {
  unsigned hits[MAXN]; /* each chunk's own counter */
  double out[MAXN];
  size_t order[MAXN];
  size_t next; /* the order chunks ran in: serial cases only */
  unsigned spin; /* work a chunk: a few microseconds */
} runs;

static void chunk(void *ctx, size_t c) {
  runs *r = ctx;
  double x = (double)c;
  for (unsigned i = 0; i < r->spin; i++)
    x = x * 1.0000001 + 1e-9;
  r->out[c] = x;
  r->hits[c]++;
}

static void chunk_in_order(void *ctx, size_t c) {
  runs *r = ctx;
  r->order[r->next++] = c;
  chunk(ctx, c);
}

static void no_team_runs_the_chunks_in_order(void **state) {
  (void)state;
  static runs r;
  memset(&r, 0, sizeof r);
  sim_team_run(NULL, 10, chunk_in_order, &r);
  assert_int_equal(r.next, 10);
  for (size_t c = 0; c < 10; c++) {
    assert_int_equal(r.order[c], c);
    assert_int_equal(r.hits[c], 1);
  }
  assert_int_equal(sim_team_lanes(NULL), 1);
}

static void one_lane_is_no_team(void **state) {
  (void)state;
  assert_null(sim_team_new(0));
  assert_null(sim_team_new(1));
}

static void lanes_are_capped(void **state) {
  (void)state;
  sim_team *t = sim_team_new(100);
  assert_non_null(t);
  assert_in_range(sim_team_lanes(t), 2, SIM_TEAM_MAX_LANES);
  sim_team_free(t);
  sim_team_free(NULL);
  unsigned a = sim_team_auto_lanes();
  assert_in_range(a, 1, SIM_TEAM_MAX_LANES);
}

/* Many runs of many sizes: every chunk exactly once, and the values the
 * serial run gives, to the bit. */
static void every_chunk_once_with_any_lanes(void **state) {
  (void)state;
  static runs serial, par;
  static const unsigned lanes[] = {2, 3, 8};
  for (size_t l = 0; l < sizeof lanes / sizeof *lanes; l++) {
    sim_team *t = sim_team_new(lanes[l]);
    assert_non_null(t);
    for (unsigned run = 0; run < 20000; run++) {
      size_t n = run % MAXN;
      memset(&serial, 0, sizeof serial);
      memset(&par, 0, sizeof par);
      serial.spin = par.spin = run % 7 * 50;
      sim_team_run(NULL, n, chunk, &serial);
      sim_team_run(t, n, chunk, &par);
      for (size_t c = 0; c < MAXN; c++)
        assert_int_equal(par.hits[c], c < n ? 1 : 0);
      assert_memory_equal(par.out, serial.out, sizeof par.out);
    }
    sim_team_free(t);
  }
}

/* After its spin the worker sleeps; the next run still ends (the caller
 * takes what nobody started) and the worker wakes for the ones after. */
static void runs_after_the_worker_slept(void **state) {
  (void)state;
  static runs r;
  sim_team *t = sim_team_new(2);
  assert_non_null(t);
  for (int k = 0; k < 5; k++) {
    nanosleep(&(struct timespec){.tv_nsec = 2000000}, NULL); /* 2 ms */
    memset(&r, 0, sizeof r);
    r.spin = 2000;
    sim_team_run(t, MAXN, chunk, &r);
    for (size_t c = 0; c < MAXN; c++)
      assert_int_equal(r.hits[c], 1);
  }
  sim_team_free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(no_team_runs_the_chunks_in_order),
      cmocka_unit_test(one_lane_is_no_team),
      cmocka_unit_test(lanes_are_capped),
      cmocka_unit_test(every_chunk_once_with_any_lanes),
      cmocka_unit_test(runs_after_the_worker_slept),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
