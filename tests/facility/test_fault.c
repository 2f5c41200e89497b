/* test_fault.c - faults (fault.c): listed entries expand to their one
 * interval, clipped to the run; random ones to ordered, disjoint
 * intervals inside the run whose mean up and down times match mtbf and
 * mttr within statistical bounds, the same for the same seed and entry
 * and different otherwise; names resolve to racks and loops; a plan
 * tells what is in force at each time and counts the events; the schema
 * refuses what is not a fault. */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fault.h"

#define H 3600.0

/* An entry with nothing given: the schema's absent values. */
static fault_config blank(int kind) {
  return (fault_config){.kind = kind,
                        .capacity = NAN,
                        .limit_w = NAN,
                        .at_s = NAN,
                        .duration_s = NAN,
                        .mtbf_s = NAN,
                        .mttr_s = NAN};
}

static fault_config listed(double at, double duration) {
  fault_config c = blank(FAULT_FEED);
  c.limit_w = 500e3;
  c.at_s = at;
  c.duration_s = duration;
  return c;
}

static fault_config random_entry(double mtbf, double mttr) {
  fault_config c = blank(FAULT_FEED);
  c.limit_w = 500e3;
  c.mtbf_s = mtbf;
  c.mttr_s = mttr;
  return c;
}

static void expand(const fault_config *c, uint64_t seed, size_t index,
                   double horizon, fault_interval **iv, size_t *n) {
  assert_int_equal(fault_expand(c, seed, index, horizon, NULL, iv, n), SIM_OK);
  assert_non_null(*iv);
}

/* ------------------------------------------------------------------ */
/* Expansion                                                           */
/* ------------------------------------------------------------------ */

static void listed_is_one_interval(void **state) {
  (void)state;
  fault_config c = listed(6 * H, 0.5 * H);
  fault_interval *iv;
  size_t n;
  expand(&c, 1, 0, 24 * H, &iv, &n);
  assert_int_equal(n, 1);
  assert_true(iv[0].start_s == 6 * H && iv[0].end_s == 6.5 * H);
  assert_true(!fault_is_random(&c));
  assert_true(fault_expected_events(&c, 24 * H) == 1);
  free(iv);
}

/* Clipped at the end of the run; dropped when it starts after it. */
static void listed_is_clipped_to_the_run(void **state) {
  (void)state;
  fault_config late = listed(23.5 * H, 2 * H), after = listed(24 * H, H);
  fault_interval *iv;
  size_t n;
  expand(&late, 1, 0, 24 * H, &iv, &n);
  assert_int_equal(n, 1);
  assert_true(iv[0].start_s == 23.5 * H && iv[0].end_s == 24 * H);
  free(iv);
  expand(&after, 1, 0, 24 * H, &iv, &n);
  assert_int_equal(n, 0);
  free(iv);
}

/* Every interval inside [0, horizon), non-empty, after the one before
 * with an up time between them. */
static void check_ordered(const fault_interval *iv, size_t n, double horizon) {
  for (size_t k = 0; k < n; k++) {
    assert_true(iv[k].start_s > 0 && iv[k].start_s < iv[k].end_s);
    assert_true(iv[k].end_s <= horizon);
    if (k > 0 && !(iv[k].start_s > iv[k - 1].end_s))
      fail_msg("interval %zu starts at %.17g, before %.17g", k, iv[k].start_s,
               iv[k - 1].end_s);
  }
}

static void random_intervals_are_ordered_inside_the_run(void **state) {
  (void)state;
  fault_config c = random_entry(2 * H, 0.5 * H);
  double horizon = 30 * 24 * H;
  fault_interval *iv;
  size_t n;
  expand(&c, 7, 3, horizon, &iv, &n);
  assert_true(n > 100);
  check_ordered(iv, n, horizon);
  free(iv);
}

/* Over about 1e5 cycles the mean up time (from the end of one interval,
 * or 0, to the next start) and the mean down time are within 4 standard
 * errors (an exponential's deviation is its mean) of mtbf and mttr, and
 * the count of what horizon / (mtbf + mttr) says. */
static void random_means_match_mtbf_and_mttr(void **state) {
  (void)state;
  double mtbf = 10 * H, mttr = 1.5 * H, horizon = 1e5 * (mtbf + mttr);
  fault_config c = random_entry(mtbf, mttr);
  fault_interval *iv;
  size_t n;
  expand(&c, 2024, 0, horizon, &iv, &n);
  check_ordered(iv, n, horizon);
  double up = 0, down = 0;
  for (size_t k = 0; k < n; k++) {
    up += iv[k].start_s - (k > 0 ? iv[k - 1].end_s : 0);
    if (k + 1 < n) /* the last may be clipped */
      down += iv[k].end_s - iv[k].start_s;
  }
  double mean_up = up / (double)n, mean_down = down / (double)(n - 1);
  print_message("%zu faults: mean up %.4g h (mtbf %.4g h), mean down %.4g h "
                "(mttr %.4g h)\n",
                n, mean_up / H, mtbf / H, mean_down / H, mttr / H);
  assert_close(mean_up, mtbf, 4 / sqrt((double)n), 0);
  assert_close(mean_down, mttr, 4 / sqrt((double)n - 1), 0);
  double expect = fault_expected_events(&c, horizon);
  assert_close((double)n, expect, 4 / sqrt(expect), 0);
  free(iv);
}

static bool same_intervals(const fault_interval *a, size_t na,
                           const fault_interval *b, size_t nb) {
  return na == nb && memcmp(a, b, na * sizeof *a) == 0;
}

/* The same seed and entry give the same intervals; another seed or
 * another entry (its own stream) others. */
static void random_is_deterministic_per_seed_and_entry(void **state) {
  (void)state;
  fault_config c = random_entry(3 * H, H);
  fault_interval *a, *b, *other_seed, *other_entry;
  size_t na, nb, ns, ne;
  expand(&c, 11, 2, 100 * H, &a, &na);
  expand(&c, 11, 2, 100 * H, &b, &nb);
  expand(&c, 12, 2, 100 * H, &other_seed, &ns);
  expand(&c, 11, 3, 100 * H, &other_entry, &ne);
  assert_true(na > 5);
  assert_true(same_intervals(a, na, b, nb));
  assert_false(same_intervals(a, na, other_seed, ns));
  assert_false(same_intervals(a, na, other_entry, ne));
  free(a), free(b), free(other_seed), free(other_entry);
}

/* A longer run extends the same draws: the intervals of a short run are
 * those of a long one up to its end, the last clipped. */
static void a_longer_run_extends_the_same_draws(void **state) {
  (void)state;
  fault_config c = random_entry(3 * H, H);
  fault_interval *s, *l;
  size_t ns, nl;
  expand(&c, 5, 0, 50 * H, &s, &ns);
  expand(&c, 5, 0, 200 * H, &l, &nl);
  assert_true(ns > 0 && nl > ns);
  for (size_t k = 0; k + 1 < ns; k++)
    assert_true(s[k].start_s == l[k].start_s && s[k].end_s == l[k].end_s);
  assert_true(s[ns - 1].start_s == l[ns - 1].start_s);
  assert_true(s[ns - 1].end_s == fmin(l[ns - 1].end_s, 50 * H));
  free(s), free(l);
}

/* ------------------------------------------------------------------ */
/* Sites and the plan                                                  */
/* ------------------------------------------------------------------ */

static const char *const groups[] = {"nvl72", "hgx", "a-1", "a"};
static const uint32_t counts[] = {8, 2, 1, 3};
static const char *const loops[] = {"liquid", "air"};
static const fault_site site = {groups, counts, 4, loops, 2};

typedef struct name_case {
  const char *name;
  bool found;
  uint32_t first, n;
} name_case;

static const name_case names[] = {
    {"nvl72-0", true, 0, 1},   {"nvl72-7", true, 7, 1},
    {"hgx-1", true, 9, 1},     {"nvl72", true, 0, 8},
    {"hgx", true, 8, 2},       {"a-1", true, 10, 1},
    {"a-2", true, 13, 1},      {"a", true, 11, 3},
    {"nvl72-8", false, 0, 0},  {"nvl72-03", false, 0, 0},
    {"nvl72-", false, 0, 0},   {"nvl72--1", false, 0, 0},
    {"nvl72-1x", false, 0, 0}, {"gpu", false, 0, 0},
};

static void names_resolve_to_racks(void **state) {
  const name_case *c = *state;
  uint32_t first = 99, n = 99;
  bool found = fault_rack_range(&site, c->name, &first, &n);
  if (found != c->found)
    fail_msg("'%s': found %d, want %d", c->name, found, c->found);
  if (found && (first != c->first || n != c->n))
    fail_msg("'%s': racks %u+%u, want %u+%u", c->name, first, n, c->first,
             c->n);
}

static void loops_resolve_by_name(void **state) {
  (void)state;
  assert_int_equal(fault_loop_index(&site, "liquid"), 0);
  assert_int_equal(fault_loop_index(&site, "air"), 1);
  assert_int_equal(fault_loop_index(&site, "water"), -1);
}

/* A PDU trip of rack nvl72-3 from 1 h to 1.5 h, a cooling loss of half
 * the liquid loop from 2 h to 3 h, feed drops to 600 kW from 1.25 h to
 * 2.25 h and to 400 kW from 2 h to 2.5 h. */
static fault_plan *sample_plan(fault_config *e) {
  static char *pdu_racks[] = {"nvl72-3"};
  e[0] = blank(FAULT_PDU);
  e[0].racks = pdu_racks;
  e[0].nracks = 1;
  e[0].at_s = H, e[0].duration_s = 0.5 * H;
  e[1] = blank(FAULT_COOLING);
  e[1].loop = "liquid";
  e[1].capacity = 0.5;
  e[1].at_s = 2 * H, e[1].duration_s = H;
  e[2] = listed(1.25 * H, H);
  e[2].limit_w = 600e3;
  e[3] = listed(2 * H, 0.5 * H);
  e[3].limit_w = 400e3;
  sim_error err = {0};
  fault_plan *p = fault_plan_create(e, 4, 1, 24 * H, &site, NULL, &err);
  if (p == NULL)
    fail_msg("%s", err.msg);
  return p;
}

/* The sample plan's four entries and a random PDU entry with many
 * intervals, so expanding it grows its array several times. */
static void *make_plan(const sim_allocator *a, void *ctx, sim_error *err) {
  fault_config *e = ctx;
  return fault_plan_create(e, 5, 1, 1000 * H, &site, a, err);
}

static void drop_plan(void *p) { fault_plan_destroy(p); }

static void a_plan_fails_cleanly_on_every_allocation(void **state) {
  (void)state;
  static char *racks[] = {"hgx"};
  fault_config e[5];
  fault_plan_destroy(sample_plan(e));
  e[4] = random_entry(2 * H, 0.5 * H);
  e[4].kind = FAULT_PDU;
  e[4].limit_w = NAN;
  e[4].racks = racks;
  e[4].nracks = 1;
  long calls =
      test_alloc_failures("fault_plan_create", make_plan, drop_plan, e);
  assert_true(calls > 10);
  fault_plan_destroy(NULL);
}

static void an_expansion_fails_cleanly(void **state) {
  (void)state;
  fault_config c = random_entry(2 * H, 0.5 * H);
  for (long k = 1; k <= 3; k++) {
    test_alloc t;
    test_alloc_init(&t, k);
    fault_interval *iv = (fault_interval *)&c; /* overwritten */
    size_t n = 99;
    assert_int_equal(fault_expand(&c, 1, 0, 1000 * H, &t.hook, &iv, &n),
                     SIM_ENOMEM);
    assert_null(iv);
    assert_int_equal(n, 0);
    assert_int_equal(t.live, 0);
  }
}

static void a_plan_tells_what_is_in_force(void **state) {
  (void)state;
  fault_config e[4];
  fault_plan *p = sample_plan(e);
  assert_false(fault_plan_step(p, 0));
  assert_int_equal(fault_plan_active(p), 0);
  assert_true(isinf(fault_plan_feed_limit_w(p)));
  assert_true(fault_plan_step(p, H)); /* the trip */
  assert_true(fault_plan_dark(p, 3));
  assert_false(fault_plan_dark(p, 2) || fault_plan_dark(p, 4));
  assert_false(fault_plan_step(p, H + 1)); /* nothing new */
  assert_true(fault_plan_step(p, 1.25 * H));
  assert_true(fault_plan_feed_limit_w(p) == 600e3);
  assert_int_equal(fault_plan_active(p), 2);
  assert_true(fault_plan_step(p, 1.5 * H)); /* the rack is back */
  assert_false(fault_plan_dark(p, 3));
  assert_true(fault_plan_step(p, 2 * H)); /* the loop, the deeper drop */
  assert_true(fault_plan_loop_share(p, 0) == 0.5);
  assert_true(fault_plan_loop_share(p, 1) == 1);
  assert_true(fault_plan_feed_limit_w(p) == 400e3);
  assert_int_equal(fault_plan_active(p), 3);
  assert_true(fault_plan_step(p, 2.25 * H)); /* the first drop is over */
  assert_true(fault_plan_feed_limit_w(p) == 400e3);
  assert_int_equal(fault_plan_active(p), 2);
  assert_true(fault_plan_step(p, 2.5 * H));
  assert_true(isinf(fault_plan_feed_limit_w(p)));
  assert_int_equal(fault_plan_active(p), 1);
  assert_true(fault_plan_step(p, 3 * H));
  assert_int_equal(fault_plan_active(p), 0);
  assert_true(fault_plan_loop_share(p, 0) == 1);
  assert_true(isinf(fault_plan_feed_limit_w(p)));
  assert_int_equal(fault_plan_events(p), 4);
  size_t n;
  const fault_interval *iv = fault_plan_intervals(p, 1, &n);
  assert_int_equal(n, 1);
  assert_true(iv[0].start_s == 2 * H && iv[0].end_s == 3 * H);
  fault_plan_destroy(p);
}

/* Steps that jump over a whole interval never see it: it does not count. */
static void an_interval_no_step_sees_does_not_count(void **state) {
  (void)state;
  fault_config e[4];
  fault_plan *p = sample_plan(e);
  assert_true(fault_plan_step(p, 1.1 * H));
  assert_true(fault_plan_step(p, 10 * H));
  assert_int_equal(fault_plan_events(p), 1);
  assert_int_equal(fault_plan_active(p), 0);
  fault_plan_destroy(p);
}

/* A group name darkens all its racks; a random entry's events are its
 * intervals when every one is stepped through. */
static void a_random_plan_counts_its_intervals(void **state) {
  (void)state;
  static char *racks[] = {"hgx"};
  fault_config e = random_entry(2 * H, 0.5 * H);
  e.kind = FAULT_PDU;
  e.limit_w = NAN;
  e.racks = racks;
  e.nracks = 1;
  fault_plan *p = fault_plan_create(&e, 1, 3, 1000 * H, &site, NULL, NULL);
  assert_non_null(p);
  size_t n;
  const fault_interval *iv = fault_plan_intervals(p, 0, &n);
  assert_true(n > 50);
  for (size_t k = 0; k < n; k++) {
    fault_plan_step(p, iv[k].start_s);
    assert_true(fault_plan_dark(p, 8) && fault_plan_dark(p, 9));
    assert_false(fault_plan_dark(p, 7));
    fault_plan_step(p, iv[k].end_s);
    assert_false(fault_plan_dark(p, 8));
  }
  assert_int_equal(fault_plan_events(p), n);
  fault_plan_destroy(p);
}

static void a_plan_refuses_unknown_names(void **state) {
  (void)state;
  static char *racks[] = {"nvl72-9"};
  fault_config e = blank(FAULT_PDU);
  e.racks = racks;
  e.nracks = 1;
  e.at_s = 0, e.duration_s = H;
  sim_error err = {0};
  assert_null(fault_plan_create(&e, 1, 1, 24 * H, &site, NULL, &err));
  assert_int_equal(err.code, SIM_EINPUT);
  assert_non_null(strstr(err.msg, "nvl72-9"));
  fault_config c = blank(FAULT_COOLING);
  c.loop = "water";
  c.capacity = 0.5;
  c.at_s = 0, c.duration_s = H;
  assert_null(fault_plan_create(&c, 1, 1, 24 * H, &site, NULL, &err));
  assert_non_null(strstr(err.msg, "water"));
}

/* ------------------------------------------------------------------ */
/* Schema                                                              */
/* ------------------------------------------------------------------ */

static void the_schema_reads_each_kind(void **state) {
  (void)state;
  static const char *const yaml[] = {
      "{kind: pdu, racks: [nvl72-3, hgx], at: 6 h, duration: 30 min}",
      "{kind: cooling, loop: liquid, capacity: 50%, mtbf: 30 d, mttr: 4 h}",
      "{kind: feed, limit: 600 kW, at: 0 s, duration: 20 min}"};
  for (size_t k = 0; k < N_OF(yaml); k++) {
    fault_config c = {0};
    sim_error err = {0};
    if (scn_bind_string("fault.yaml", yaml[k], &fault_schema, &c, NULL, &err) !=
        SIM_OK)
      fail_msg("%s: %s", yaml[k], err.msg);
    assert_int_equal(c.kind, (int)k);
    if (k == 0) {
      assert_int_equal(c.nracks, 2);
      assert_string_equal(c.racks[1], "hgx");
      assert_true(c.at_s == 6 * H && c.duration_s == 1800);
    } else if (k == 1) {
      assert_string_equal(c.loop, "liquid");
      assert_true(c.capacity == 0.5 && fault_is_random(&c));
      assert_true(c.mtbf_s == 30 * 24 * H && c.mttr_s == 4 * H);
    } else {
      assert_true(c.limit_w == 600e3 && c.at_s == 0);
    }
    /* What scn_emit writes reads back the same. */
    char *text = scn_emit(&fault_schema, &c);
    fault_config d = {0};
    if (scn_bind_string("again.yaml", text, &fault_schema, &d, NULL, &err) !=
        SIM_OK)
      fail_msg("%s: %s", text, err.msg);
    assert_int_equal(d.kind, c.kind);
    free(text);
    scn_release(&fault_schema, &c);
    scn_release(&fault_schema, &d);
  }
}

static const test_bad_yaml bad[] = {
    {"no kind", "{at: 1 h, duration: 1 h}", "kind"},
    {"unknown kind", "{kind: flood, at: 1 h, duration: 1 h}", "flood"},
    {"pdu without racks", "{kind: pdu, at: 1 h, duration: 1 h}",
     "a pdu fault needs 'racks'"},
    {"pdu with empty racks", "{kind: pdu, racks: [], at: 1 h, duration: 1 h}",
     "a pdu fault needs 'racks'"},
    {"cooling without loop",
     "{kind: cooling, capacity: 50%, at: 1 h, "
     "duration: 1 h}",
     "a cooling fault needs 'loop'"},
    {"cooling without capacity",
     "{kind: cooling, loop: l, at: 1 h, "
     "duration: 1 h}",
     "a cooling fault needs 'capacity'"},
    {"feed without limit", "{kind: feed, at: 1 h, duration: 1 h}",
     "a feed fault needs 'limit'"},
    {"limit on a pdu fault",
     "{kind: pdu, racks: [r-0], limit: 1 MW, at: 1 h, "
     "duration: 1 h}",
     "'limit' is for feed faults, not pdu ones"},
    {"racks on a feed fault",
     "{kind: feed, limit: 1 MW, racks: [r-0], at: "
     "1 h, duration: 1 h}",
     "'racks' is for pdu faults"},
    {"capacity on a feed fault",
     "{kind: feed, limit: 1 MW, capacity: 50%, "
     "at: 1 h, duration: 1 h}",
     "'capacity' is for cooling faults"},
    {"no timing", "{kind: feed, limit: 1 MW}", "needs a timing"},
    {"both timings",
     "{kind: feed, limit: 1 MW, at: 1 h, duration: 1 h, "
     "mtbf: 1 d, mttr: 1 h}",
     "not both"},
    {"at without duration", "{kind: feed, limit: 1 MW, at: 1 h}",
     "needs both at and duration"},
    {"duration without at", "{kind: feed, limit: 1 MW, duration: 1 h}",
     "needs both at and duration"},
    {"mtbf without mttr", "{kind: feed, limit: 1 MW, mtbf: 1 d}",
     "needs both mtbf and mttr"},
    {"zero duration", "{kind: feed, limit: 1 MW, at: 1 h, duration: 0 s}",
     "duration"},
    {"zero mttr", "{kind: feed, limit: 1 MW, mtbf: 1 d, mttr: 0 s}", "mttr"},
    {"capacity over 100%",
     "{kind: cooling, loop: l, capacity: 150%, at: 1 h, "
     "duration: 1 h}",
     "capacity"},
    {"negative limit", "{kind: feed, limit: -1 kW, at: 1 h, duration: 1 h}",
     "limit"},
    {"a limit in joules", "{kind: feed, limit: 1 MJ, at: 1 h, duration: 1 h}",
     "limit"},
    {"unknown key",
     "{kind: feed, limit: 1 MW, at: 1 h, duration: 1 h, "
     "when: 1 h}",
     "when"},
};

static void the_schema_refuses(void **state) {
  const test_bad_yaml *b = *state;
  test_schema_rejects(&fault_schema, "fault.yaml", b->yaml, b->message);
}

int main(void) {
  struct CMUnitTest tests[64];
  size_t n = 0;
  TEST_ADD(tests, n, listed_is_one_interval);
  TEST_ADD(tests, n, listed_is_clipped_to_the_run);
  TEST_ADD(tests, n, random_intervals_are_ordered_inside_the_run);
  TEST_ADD(tests, n, random_means_match_mtbf_and_mttr);
  TEST_ADD(tests, n, random_is_deterministic_per_seed_and_entry);
  TEST_ADD(tests, n, a_longer_run_extends_the_same_draws);
  TEST_ROWS(tests, n, names_resolve_to_racks, names);
  TEST_ADD(tests, n, loops_resolve_by_name);
  TEST_ADD(tests, n, a_plan_tells_what_is_in_force);
  TEST_ADD(tests, n, an_interval_no_step_sees_does_not_count);
  TEST_ADD(tests, n, a_random_plan_counts_its_intervals);
  TEST_ADD(tests, n, a_plan_refuses_unknown_names);
  TEST_ADD(tests, n, a_plan_fails_cleanly_on_every_allocation);
  TEST_ADD(tests, n, an_expansion_fails_cleanly);
  TEST_ADD(tests, n, the_schema_reads_each_kind);
  TEST_ROWS(tests, n, the_schema_refuses, bad);
  return _cmocka_run_group_tests("fault", tests, n, NULL, NULL);
}
