/* test_arrivals_ahead.c - arrivals drawn ahead (arrivals.h,
 * arr_draw_ahead): for Poisson (flat and diurnal, thinning at work),
 * MMPP and fixed lengths, the requests arr_next returns are the same bits
 * as a twin generator's drawn on demand, whatever was drawn ahead in
 * between (none, one, a chunk, the room full); taken in order; the room
 * bounded and its failure clean; a trace and bad spans refused. */
#include "test_util.h"

#include <math.h>
#include <string.h>

#include "arrivals.h"

enum { N = 6000 };

typedef struct req {
  double t;
  int64_t p, o;
} req;

typedef struct ahead_case {
  const char *name;
  const char *yaml;
} ahead_case;

static const ahead_case cases[] = {
    {"poisson flat", "kind: poisson\nrate: 500\n"},
    /* the peak at 1 s: the rate moves, so the thinning's draws decide */
    {"poisson diurnal",
     "kind: poisson\nrate: 350\nprofile: diurnal\npeak_at: 1 s\n"
     "low: 10%\nhigh: 90%\n"},
    {"mmpp",
     "kind: mmpp\nrate1: 800\nrate2: 20\nsojourn1: 2 s\nsojourn2: 3 s\n"},
    {"fixed lengths",
     "kind: poisson\nrate: 150\nprompt: {dist: fixed, mean: 100}\n"
     "output: {dist: lognormal, mean: 50, sigma: 0}\n"},
};
enum { NCASES = sizeof cases / sizeof cases[0] };

static void bind_ok(const char *yaml, arr_config *c) {
  sim_error err = {0};
  memset(c, 0, sizeof *c);
  if (scn_bind_string("arr.yaml", yaml, &arr_schema, c, NULL, &err) != SIM_OK)
    fail_msg("%s", err.msg);
}

static arr_gen *make(const arr_config *c, const sim_allocator *a) {
  sim_error err = {0};
  arr_gen *g = arr_create(c, NULL, 7, 3, a, &err);
  if (g == NULL)
    fail_msg("%s", err.msg);
  return g;
}

static req next_ok(arr_gen *g) {
  req r;
  assert_true(arr_next(g, &r.t, &r.p, &r.o));
  return r;
}

/* The same request, to the bit. */
static void assert_same(const req *a, const req *b, const char *name,
                        size_t i) {
  if (memcmp(&a->t, &b->t, sizeof a->t) != 0 || a->p != b->p || a->o != b->o)
    fail_msg("%s: request %zu differs: %.17g %lld %lld vs %.17g %lld %lld",
             name, i, a->t, (long long)a->p, (long long)a->o, b->t,
             (long long)b->p, (long long)b->o);
}

/* How much to draw ahead before taking request i: a pattern that mixes
 * nothing, single draws, chunks, up to a time and the room full. */
static void draw_some(arr_gen *g, size_t i, double last_t) {
  switch (i % 7) {
  case 0:
    (void)arr_draw_ahead(g, last_t + 1.0, SIZE_MAX); /* a second ahead */
    break;
  case 2:
    (void)arr_draw_ahead(g, INFINITY, 1);
    break;
  case 3:
    (void)arr_draw_ahead(g, INFINITY, 17);
    break;
  case 5:
    if (i % 500 == 5)
      (void)arr_draw_ahead(g, INFINITY, SIZE_MAX); /* the room full */
    break;
  default:
    break;
  }
}

/* The stream equal to drawing on demand, however much is drawn ahead. */
static void stream_as_on_demand(void **state) {
  (void)state;
  for (size_t k = 0; k < NCASES; k++) {
    arr_config c;
    bind_ok(cases[k].yaml, &c);
    arr_gen *plain = make(&c, NULL), *ahead = make(&c, NULL);
    assert_int_equal(arr_ahead_reserve(ahead, 0.5), SIM_OK);
    double last_t = 0;
    for (size_t i = 0; i < N; i++) {
      draw_some(ahead, i, last_t);
      assert_true(arr_ahead_held(ahead) <= arr_ahead_room(ahead));
      req a = next_ok(plain), b = next_ok(ahead);
      assert_same(&a, &b, cases[k].name, i);
      last_t = a.t;
    }
    arr_destroy(plain);
    arr_destroy(ahead);
  }
}

/* Drawn ahead up to a time: every one but the last before it, the last
 * at or after it (room allowing); then taken in the order drawn, times
 * not decreasing, the held count falling by one each take. */
static void take_order_and_until(void **state) {
  (void)state;
  for (size_t k = 0; k < NCASES; k++) {
    arr_config c;
    bind_ok(cases[k].yaml, &c);
    arr_gen *plain = make(&c, NULL), *g = make(&c, NULL);
    assert_int_equal(arr_ahead_reserve(g, 2), SIM_OK);
    size_t n = arr_draw_ahead(g, 1.0, SIZE_MAX);
    assert_int_equal(arr_ahead_held(g), n);
    assert_true(n > 0 && n < arr_ahead_room(g));
    /* Nothing more while the last drawn is past the time. */
    assert_int_equal(arr_draw_ahead(g, 1.0, SIZE_MAX), 0);
    double prev = -1;
    for (size_t i = 0; i < n; i++) {
      req a = next_ok(plain), b = next_ok(g);
      assert_same(&a, &b, cases[k].name, i);
      assert_true(b.t >= prev);
      assert_true(i + 1 == n ? b.t >= 1.0 : b.t < 1.0);
      assert_int_equal(arr_ahead_held(g), n - 1 - i);
      prev = b.t;
    }
    arr_destroy(plain);
    arr_destroy(g);
  }
}

/* The room: at least 64, about 1.25 x the top rate x the span, at most
 * ARR_AHEAD_MAX; a draw never passes it, nor max_n. */
static void room_bounded(void **state) {
  (void)state;
  arr_config c;
  bind_ok("kind: poisson\nrate: 1000\n", &c);
  arr_gen *g = make(&c, NULL);
  assert_int_equal(arr_draw_ahead(g, INFINITY, SIZE_MAX), 0); /* no room */
  assert_int_equal(arr_ahead_reserve(g, 0.001), SIM_OK);
  assert_int_equal(arr_ahead_room(g), 65);
  assert_int_equal(arr_ahead_reserve(g, 2), SIM_OK);
  assert_int_equal(arr_ahead_room(g), 2564);
  assert_int_equal(arr_draw_ahead(g, INFINITY, 10), 10);
  assert_int_equal(arr_ahead_reserve(g, 1), SIM_ESTATE); /* some held */
  assert_int_equal(arr_draw_ahead(g, INFINITY, SIZE_MAX), 2554);
  assert_int_equal(arr_ahead_held(g), 2564);
  assert_int_equal(arr_draw_ahead(g, INFINITY, SIZE_MAX), 0);
  while (arr_ahead_held(g) > 0)
    (void)next_ok(g);
  assert_int_equal(arr_ahead_reserve(g, 1e6), SIM_OK);
  assert_int_equal(arr_ahead_room(g), ARR_AHEAD_MAX);
  arr_destroy(g);
}

/* A trace's rows are read, not drawn: no room, nothing drawn; spans
 * not positive and finite refused. */
static void refusals(void **state) {
  (void)state;
  arr_config c;
  bind_ok("kind: poisson\nrate: 10\n", &c);
  arr_gen *g = make(&c, NULL);
  static const double bad[] = {0, -1, INFINITY, NAN};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
    assert_int_equal(arr_ahead_reserve(g, bad[k]), SIM_EINVAL);
  assert_int_equal(arr_ahead_room(g), 0);
  arr_destroy(g);
  test_data_path("traces/AzureLLMInferenceTrace_conv.csv");
  bind_ok("kind: trace\nfile: AzureLLMInferenceTrace_conv.csv\n", &c);
  sim_error err = {0};
  g = arr_create(&c, AIFSIM_SOURCE_DIR "/data/traces", 1, 0, NULL, &err);
  assert_non_null(g);
  assert_int_equal(arr_ahead_reserve(g, 1), SIM_EINVAL);
  assert_int_equal(arr_draw_ahead(g, INFINITY, SIZE_MAX), 0);
  arr_destroy(g);
  scn_release(&arr_schema, &c);
}

/* The room's allocation failing: SIM_ENOMEM, nothing drawn ahead, the
 * stream as on demand, nothing leaked. */
static void room_fails_cleanly(void **state) {
  (void)state;
  arr_config c;
  bind_ok(cases[1].yaml, &c);
  test_alloc ta;
  test_alloc_init(&ta, 0);
  arr_gen *plain = make(&c, NULL), *g = make(&c, &ta.hook);
  ta.fail_at = ta.calls + 1;
  assert_int_equal(arr_ahead_reserve(g, 1), SIM_ENOMEM);
  assert_int_equal(arr_ahead_room(g), 0);
  for (size_t i = 0; i < 1000; i++) {
    assert_int_equal(arr_draw_ahead(g, INFINITY, SIZE_MAX), 0);
    req a = next_ok(plain), b = next_ok(g);
    assert_same(&a, &b, "after ENOMEM", i);
  }
  arr_destroy(plain);
  arr_destroy(g);
  assert_int_equal(ta.live, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(stream_as_on_demand),
      cmocka_unit_test(take_order_and_until),
      cmocka_unit_test(room_bounded),
      cmocka_unit_test(refusals),
      cmocka_unit_test(room_fails_cleanly),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
