/* test_arrivals.c - request arrivals: the Azure conversation trace
 * replayed to its published figures, scaling and looping, a KS test of
 * Poisson gaps, the diurnal and MMPP long-run rates, determinism, and
 * bad traces and scenarios refused with their positions. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_sort.h>

#include "arrivals.h"
#include "arrivals_draw.h"
#include "rng.h"
#include "validate_row.h"

#define TRACES AIFSIM_SOURCE_DIR "/data/traces"
#define CONV "AzureLLMInferenceTrace_conv.csv"

static void bind_ok(const char *yaml, arr_config *c) {
  sim_error err = {0};
  memset(c, 0, sizeof *c);
  if (scn_bind_string("arr.yaml", yaml, &arr_schema, c, NULL, &err) != SIM_OK)
    fail_msg("%s", err.msg);
}

static arr_gen *create_ok(const arr_config *c, const char *dir, uint64_t seed) {
  sim_error err = {0};
  arr_gen *g = arr_create(c, dir, seed, 0, NULL, &err);
  if (g == NULL)
    fail_msg("%s", err.msg);
  return g;
}

/* Opens the conversation trace; fails the test when it is missing. */
static arr_gen *open_conv(const char *yaml, arr_config *c) {
  test_data_path("traces/" CONV);
  bind_ok(yaml, c);
  return create_ok(c, TRACES, 1);
}

typedef struct replay {
  size_t n;
  double first, last, prompt_sum, output_sum;
} replay;

/* Draws up to max requests, checking that times never decrease. */
static replay drain(arr_gen *g, size_t max) {
  replay r = {0};
  double t;
  int64_t p, o;
  while (r.n < max && arr_next(g, &t, &p, &o)) {
    if (r.n == 0)
      r.first = t;
    else if (t < r.last)
      fail_msg("request %zu at %.9g s before %.9g s", r.n, t, r.last);
    r.last = t;
    r.prompt_sum += (double)p;
    r.output_sum += (double)o;
    r.n++;
  }
  return r;
}

/* The figures: 19,366 requests; rate = count / (last - first)
 * = 5.5304 req/s (count - 1 over the span, 5.5301, rounds the same);
 * prompt mean 1,154.70 and output mean 211.13 (round to 1,155 and 211).
 * The sums are exact: 22,361,870 and 4,088,665 tokens. */
static void conv_trace_replay(void **state) {
  (void)state;
  arr_config c;
  arr_gen *g = open_conv("kind: trace\nfile: " CONV "\n", &c);
  replay r = drain(g, SIZE_MAX);
  static const char azure[] =
      "Patel et al., Splitwise, ISCA 2024 (Azure LLM inference trace, conv)";
  static const char replay_basis[] =
      "data entry: the statistics of the file the model replays";
  static const char replayed[] = "data/traces/AzureLLMInferenceTrace_conv.csv "
                                 "replayed by kind: trace";
  validate_row(VALIDATE_KIND_IDENTITY, replay_basis, VALIDATE_WORKLOADS,
               "Azure conv trace: requests", azure, replayed, "requests", 19366,
               (double)r.n, 19366, 19366, "exact");
  validate_row(VALIDATE_KIND_IDENTITY, replay_basis, VALIDATE_WORKLOADS,
               "Azure conv trace: mean rate", azure, replayed, "req/s", 5.53,
               r.n / (r.last - r.first), 5.525, 5.535, "5.53 to 2 decimals");
  validate_row(VALIDATE_KIND_IDENTITY, replay_basis, VALIDATE_WORKLOADS,
               "Azure conv trace: mean prompt", azure, replayed, "tokens",
               1154.70, r.prompt_sum / r.n, 1154.5, 1155.5, "1,155 rounded");
  validate_row(VALIDATE_KIND_IDENTITY, replay_basis, VALIDATE_WORKLOADS,
               "Azure conv trace: mean output", azure, replayed, "tokens",
               211.13, r.output_sum / r.n, 210.5, 211.5, "211 rounded");
  assert_int_equal(r.n, 19366);
  assert_close(r.first, 0, 0, 0);
  assert_close(round(r.n / (r.last - r.first) * 100) / 100, 5.53, 0, 1e-12);
  assert_close(r.prompt_sum, 22361870, 0, 0);
  assert_close(r.output_sum, 4088665, 0, 0);
  assert_close(round(r.prompt_sum / r.n), 1155, 0, 0);
  assert_close(round(r.output_sum / r.n), 211, 0, 0);
  arr_trace_stats s = arr_trace_info(g);
  assert_int_equal(s.n, 19366);
  assert_close(s.span_s, r.last, 0, 0);
  assert_close(s.prompt_mean, r.prompt_sum / r.n, 1e-15, 0);
  assert_close(s.output_mean, r.output_sum / r.n, 1e-15, 0);
  assert_close(s.span_s, 3501.7219, 0, 1e-3); /* 18:15:46.68 to 19:14:08.40 */
  arr_destroy(g);
  scn_release(&arr_schema, &c);
}

/* time_scale 2 doubles every gap, so the rate halves. */
static void conv_trace_time_scale(void **state) {
  (void)state;
  arr_config c;
  arr_gen *g = open_conv("kind: trace\nfile: " CONV "\ntime_scale: 2\n", &c);
  replay r = drain(g, SIZE_MAX);
  assert_int_equal(r.n, 19366);
  assert_close(r.last, 2 * arr_trace_info(g).span_s, 1e-15, 0);
  assert_close(r.n / r.last, 0.5 * 19366 / arr_trace_info(g).span_s, 1e-15, 0);
  arr_destroy(g);
  scn_release(&arr_schema, &c);
}

/* Three passes of a looped trace: three times the count and the tokens,
 * each pass one mean gap after the last, so the rate is (n - 1) / span. */
static void conv_trace_loop(void **state) {
  (void)state;
  arr_config c;
  arr_gen *g = open_conv("kind: trace\nfile: " CONV "\nloop: true\n", &c);
  replay r = drain(g, 3 * 19366);
  arr_trace_stats s = arr_trace_info(g);
  assert_int_equal(r.n, 3 * 19366);
  assert_close(r.prompt_sum, 3 * 22361870.0, 0, 0);
  assert_close(r.output_sum, 3 * 4088665.0, 0, 0);
  double period = s.span_s * 19366 / 19365;
  assert_close(r.last, 2 * period + s.span_s, 1e-12, 0);
  double t;
  int64_t p, o;
  assert_true(arr_next(g, &t, &p, &o)); /* a fourth pass starts */
  assert_close(t, 3 * period, 1e-12, 0);
  assert_int_equal(p, 374);
  assert_int_equal(o, 44);
  arr_destroy(g);
  scn_release(&arr_schema, &c);
}

/* Kolmogorov-Smirnov: 20,000 gaps of a flat Poisson process against the
 * exponential CDF at the configured rate; D below the 1% critical value
 * 1.63 / sqrt(n). */
static void poisson_gaps_pass_ks(void **state) {
  (void)state;
  enum { N = 20000 };
  static double gap[N];
  arr_config c;
  bind_ok("kind: poisson\nrate: 7.5\n", &c);
  arr_gen *g = create_ok(&c, NULL, 2024);
  double t, prev = 0;
  int64_t p, o;
  for (size_t i = 0; i < N; i++) {
    assert_true(arr_next(g, &t, &p, &o));
    gap[i] = t - prev;
    prev = t;
  }
  gsl_sort(gap, 1, N);
  double d = 0;
  for (size_t i = 0; i < N; i++) {
    double f = gsl_cdf_exponential_P(gap[i], 1 / 7.5);
    d = fmax(d, fmax((double)(i + 1) / N - f, f - (double)i / N));
  }
  print_message("KS D = %.5f (1%% critical %.5f)\n", d, 1.63 / sqrt(N));
  validate_row(VALIDATE_KIND_IDENTITY,
               "the exponential gaps the generator implements",
               VALIDATE_WORKLOADS, "Poisson arrivals: KS statistic D",
               "Kolmogorov-Smirnov 1% critical value 1.63 / sqrt(n)",
               "20,000 gaps at 7.5 req/s, seed 2024", "D", 1.63 / sqrt(N), d, 0,
               1.63 / sqrt(N), "< 1% critical value");
  assert_true(d < 1.63 / sqrt(N));
  assert_close(prev / N, 1 / 7.5, 0.03, 0);
  arr_destroy(g);
  scn_release(&arr_schema, &c);
}

/* Over whole days the diurnal profile's count is rate x time, within 4
 * Poisson sigma; the peak hour outruns the trough hour by about high /
 * low. */
static void diurnal_mean_rate(void **state) {
  (void)state;
  arr_config c;
  bind_ok("kind: poisson\nrate: 2\nprofile: diurnal\nlow: 20%\nhigh: 80%\n"
          "peak_at: 15 h\n",
          &c);
  assert_close(arr_rate_at(&c, 15 * 3600.0), 3.2, 1e-12, 0);
  assert_close(arr_rate_at(&c, 3 * 3600.0), 0.8, 1e-12, 0);
  arr_gen *g = create_ok(&c, NULL, 7);
  double t, end = 4 * 86400.0;
  int64_t p, o;
  size_t n = 0, peak = 0, trough = 0;
  while (arr_next(g, &t, &p, &o) && t < end) {
    double h = fmod(t, 86400.0) / 3600;
    peak += h >= 14.5 && h < 15.5;
    trough += h >= 2.5 && h < 3.5;
    n++;
  }
  double want = 2 * end;
  print_message("diurnal: %zu requests in 4 days (want %.0f +- %.0f), "
                "peak/trough %.3f\n",
                n, want, 4 * sqrt(want), (double)peak / (double)trough);
  assert_close((double)n, want, 0, 4 * sqrt(want));
  assert_close((double)peak / (double)trough, 4, 0.1, 0);
  arr_destroy(g);
  scn_release(&arr_schema, &c);
}

/* The MMPP's long-run rate is the stationary mix pi1 r1 + pi2 r2:
 * (60 x 10 + 300 x 1) / 360 = 2.5 req/s. */
static void mmpp_long_run_rate(void **state) {
  (void)state;
  arr_config c;
  bind_ok("kind: mmpp\nrate1: 10\nrate2: 1\nsojourn1: 1 min\n"
          "sojourn2: 5 min\n",
          &c);
  assert_close(arr_mean_rate(&c), 2.5, 1e-15, 0);
  arr_gen *g = create_ok(&c, NULL, 11);
  double t, end = 2e6;
  int64_t p, o;
  size_t n = 0;
  while (arr_next(g, &t, &p, &o) && t < end)
    n++;
  print_message("MMPP rate %.4f req/s (stationary mix 2.5)\n", n / end);
  assert_close(n / end, 2.5, 0.02, 0);
  arr_destroy(g);
  scn_release(&arr_schema, &c);
}

/* Lognormal lengths have the configured mean; fixed ones are exact. */
static void token_lengths(void **state) {
  (void)state;
  arr_config c;
  bind_ok("rate: 100\nprompt: {mean: 1155, sigma: 1}\n"
          "output: {dist: fixed, mean: 211}\n",
          &c);
  arr_gen *g = create_ok(&c, NULL, 3);
  double t, sum = 0;
  int64_t p, o;
  enum { N = 200000 };
  for (int i = 0; i < N; i++) {
    assert_true(arr_next(g, &t, &p, &o));
    assert_true(p >= 1);
    assert_int_equal(o, 211);
    sum += (double)p;
  }
  /* The sample mean's sd is 1155 x sqrt(e - 1) / sqrt(N) = 3.4 tokens. */
  assert_close(sum / N, 1155, 0, 15);
  arr_destroy(g);
  scn_release(&arr_schema, &c);
}

/* Equal as bits (a NaN is equal to itself, -0 is not 0). */
static void assert_same_bits(double a, double b) {
  assert_memory_equal(&a, &b, sizeof a);
}

typedef struct draw_row {
  uint64_t seed, index;
  uint32_t purpose;
  double mu;
} draw_row;

/* Draw k of a row's kinds, from a (inline, or through GSL when k % 7 is
 * 3) and from b through GSL, as the same bits. (The gaps and lengths are
 * the ziggurat's: test_arrivals_zig.c tests their laws.) */
static void draw_both(int k, gsl_rng *a, gsl_rng *b, const draw_row *r) {
  bool gsl = k % 7 == 3;
  arr_taus *t = gsl_rng_state(a);
  double x, y;
  if (k % 2 == 0) {
    x = gsl ? gsl_rng_uniform(a) : arr_uniform(t);
    y = gsl_rng_uniform(b);
  } else {
    x = gsl ? gsl_ran_exponential(a, r->mu) : arr_exponential(t, r->mu);
    y = gsl_ran_exponential(b, r->mu);
  }
  assert_same_bits(x, y);
}

/* arrivals_draw.h's draws are GSL's, bit for bit, from streams of several
 * seeds, entities and purposes, and a stream drawn now inline, now
 * through GSL stays where GSL's alone would be. */
static void inline_draws_are_gsl_draws(void **state) {
  (void)state;
  static const draw_row rows[] = {
      {1, 0, ARR_RNG_THIN, 1 / 637.0},
      {9, 3, ARR_RNG_PROMPT, 1},
      {123456789, 17, ARR_RNG_OUTPUT, 250},
      {UINT64_MAX, 1u << 20, ARR_RNG_STATE, 1e-9},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    const draw_row *r = &rows[i];
    gsl_rng *a = rng_stream_create(r->seed, ARR_RNG_KIND, r->index, r->purpose);
    gsl_rng *b = rng_stream_create(r->seed, ARR_RNG_KIND, r->index, r->purpose);
    assert_non_null(a);
    assert_non_null(b);
    for (int k = 0; k < 30000; k++)
      draw_both(k, a, b, r);
    assert_memory_equal(gsl_rng_state(a), gsl_rng_state(b), sizeof(arr_taus));
    rng_stream_destroy(a);
    rng_stream_destroy(b);
  }
}

/* arr_tokens is max(1, llround(x)) everywhere: halves, the last double
 * below a half, the ends of the inline range and what lies past them. */
static void tokens_round_as_llround(void **state) {
  (void)state;
  static const double xs[] = {0,
                              0x1p-1074,
                              0.49999999999999994,
                              0.5,
                              1,
                              1.4999999999999998,
                              1.5,
                              2.5,
                              1154.5,
                              1155.4999999999998,
                              0x1p52 - 0.5,
                              0x1p52 - 1.5,
                              0x1p52,
                              0x1p52 + 1,
                              0x1p62,
                              -0.0,
                              -0.5,
                              -3.7};
  for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) {
    int64_t n = (int64_t)llround(xs[i]);
    assert_int_equal(arr_tokens(xs[i]), n < 1 ? 1 : n);
  }
  /* And on a dense sweep of fractions near the halves. */
  for (double x = 0; x < 40; x += 0.0625 + 0x1p-40)
    assert_int_equal(arr_tokens(x), llround(x) < 1 ? 1 : llround(x));
}

/* arr_llround is llround on an arrival's nanoseconds (t x 1e9, up to the
 * request level's 9e18 guard) and beyond, halves included. */
static void nanoseconds_round_as_llround(void **state) {
  (void)state;
  static const double ts[] = {0,   1e-9,   0.5e-9, 1.5e-9,  86400,
                              0.3, 1.7e-3, 3e6,    4.5e6,   4503599.6270496,
                              9e9, -0.5,   -1e-9,  INFINITY};
  for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) {
    double x = ts[i] * 1e9;
    double near[] = {x, nextafter(x, -INFINITY), nextafter(x, INFINITY),
                     x + 0.5};
    for (int k = 0; k < 4; k++)
      assert_int_equal(arr_llround(near[k]), llround(near[k]));
  }
}

/* The same seed gives the same requests; another seed others. */
static void deterministic_for_a_seed(void **state) {
  (void)state;
  arr_config c;
  bind_ok("kind: mmpp\n", &c);
  arr_gen *a = create_ok(&c, NULL, 5), *b = create_ok(&c, NULL, 5);
  arr_gen *x = create_ok(&c, NULL, 6);
  double ta, tb, tx;
  int64_t pa, pb, px, oa, ob, ox;
  int differ = 0;
  for (int i = 0; i < 1000; i++) {
    arr_next(a, &ta, &pa, &oa);
    arr_next(b, &tb, &pb, &ob);
    arr_next(x, &tx, &px, &ox);
    assert_true(ta == tb && pa == pb && oa == ob);
    differ += tx != ta;
  }
  assert_true(differ > 900);
  arr_destroy(a);
  arr_destroy(b);
  arr_destroy(x);
  scn_release(&arr_schema, &c);
}

typedef struct bad_trace {
  const char *name;
  const char *csv;
  const char *message; /* after "FILE:" */
} bad_trace;

#define HEAD "TIMESTAMP,ContextTokens,GeneratedTokens\n"
#define ROW1 "2023-11-16 18:15:46.6805900,374,44\n"

static const bad_trace bad_traces[] = {
    {"negative tokens", HEAD ROW1 "2023-11-16 18:15:50.9951690,-3,109\n",
     "3:29: column 'ContextTokens': not a whole number of tokens"},
    {"non-integer tokens", HEAD ROW1 "2023-11-16 18:15:50.9951690,396,10.5\n",
     "3:33: column 'GeneratedTokens': not a whole number of tokens"},
    {"tokens beyond any context",
     HEAD ROW1 "2023-11-16 18:15:50.9951690,"
               "4294967296,1\n",
     "3:29: column 'ContextTokens': 4294967296 tokens is outside "
     "0..10000000 tokens"},
    {"hex tokens", HEAD ROW1 "2023-11-16 18:15:50.9951690,0x10,1\n",
     "3:29: column 'ContextTokens': not a whole number of tokens"},
    {"no header", ROW1 "2023-11-16 18:15:50.9951690,1,1\n",
     "1:1: expected a header naming columns TIMESTAMP, ContextTokens, "
     "GeneratedTokens; found a time"},
    {"empty file", "", "1:1: the file is empty"},
    {"unsorted times",
     HEAD ROW1 "2023-11-16 18:15:50.9951690,1,1\n"
               "2023-11-16 18:15:49.0000000,1,1\n",
     "4:1: column 'TIMESTAMP': time 2023-11-16 18:15:49.0000000 is earlier "
     "than the row before"},
    {"missing column", "TIMESTAMP,ContextTokens\n2023-11-16 18:15:46,1\n",
     "1:1: column 'GeneratedTokens': no such column in the header"},
    {"short row", HEAD ROW1 "2023-11-16 18:15:50.9951690,396\n",
     "3:1: column 'GeneratedTokens': missing"},
    {"bad time", HEAD "2023-11-16 25:15:46,1,1\n",
     "2:1: column 'TIMESTAMP': not a time like"},
    {"no rows", HEAD, "1:1: no data rows"},
    {"looped single time", HEAD ROW1 "2023-11-16 18:15:46.6805900,3,4\n",
     "3:1: a looped trace needs two or more distinct times"},
};

static void bad_trace_is_rejected(void **state) {
  const bad_trace *b = *state;
  char name[64], file[4096];
  snprintf(name, sizeof name, "arr_%s.csv", b->name);
  for (char *q = name; *q; q++)
    *q = *q == ' ' ? '_' : *q;
  snprintf(file, sizeof file, "%s", test_out_path(name));
  FILE *f = fopen(file, "w");
  assert_non_null(f);
  fputs(b->csv, f);
  fclose(f);
  arr_config c;
  bind_ok("kind: trace\nfile: x.csv\nloop: true\n", &c);
  char *keep = c.file;
  c.file = file;
  sim_error err = {0};
  assert_null(arr_create(&c, NULL, 1, 0, NULL, &err));
  char want[8192];
  snprintf(want, sizeof want, "%s:%s", file, b->message);
  assert_int_equal(err.code, SIM_EINPUT);
  if (strstr(err.msg, want) != err.msg)
    fail_msg("got '%s', want '%s'", err.msg, want);
  c.file = keep;
  scn_release(&arr_schema, &c);
}

/* A byte-order mark and CRLF line ends, as Excel writes them: the header
 * names match and the rows read as without them. */
static void trace_with_bom_and_crlf(void **state) {
  (void)state;
  const char *file = test_out_path("arr_bom.csv");
  FILE *f = fopen(file, "wb");
  assert_non_null(f);
  fputs("\xEF\xBB\xBFTIMESTAMP,ContextTokens,GeneratedTokens\r\n"
        "2023-11-16 18:15:46.5,374,44\r\n"
        "2023-11-16 18:15:50.5,396,109\r\n",
        f);
  fclose(f);
  arr_config c;
  bind_ok("kind: trace\nfile: x.csv\n", &c);
  char *keep = c.file;
  c.file = (char *)file;
  sim_error err = {0};
  arr_gen *g = arr_create(&c, NULL, 1, 0, NULL, &err);
  if (g == NULL)
    fail_msg("%s", err.msg);
  double t;
  int64_t p, o;
  assert_true(arr_next(g, &t, &p, &o));
  assert_int_equal(p, 374);
  assert_int_equal(o, 44);
  assert_true(arr_next(g, &t, &p, &o));
  assert_close(t, 4, 0, 0);
  assert_int_equal(p, 396);
  assert_int_equal(o, 109);
  arr_destroy(g);
  c.file = keep;
  scn_release(&arr_schema, &c);
}

static void missing_trace_is_io_error(void **state) {
  (void)state;
  arr_config c;
  bind_ok("kind: trace\nfile: no_such.csv\n", &c);
  sim_error err = {0};
  assert_null(arr_create(&c, "/nonexistent", 1, 0, NULL, &err));
  assert_int_equal(err.code, SIM_EIO);
  scn_release(&arr_schema, &c);
}

static const test_bad_yaml bad_yaml[] = {
    {"unknown kind", "kind: hawkes\n", "arr.yaml:1:7: "},
    {"rate zero", "rate: 0\n", "arr.yaml:1:7: "},
    {"rate with a unit", "rate: 5 W\n",
     "arr.yaml:1:9: 'rate': unexpected unit"},
    {"low above high", "profile: diurnal\nlow: 90%\nhigh: 10%\n",
     "arr.yaml:2:6: 'low' is above 'high'"},
    {"mmpp without rates", "kind: mmpp\nrate1: 0\nrate2: 0\n",
     "arr.yaml:2:8: an MMPP needs a rate above 0"},
    {"sojourn zero", "kind: mmpp\nsojourn2: 0 s\n", "arr.yaml:2:11: "},
    {"trace without file", "kind: trace\n", "a trace needs a file"},
    {"time scale negative", "kind: trace\nfile: a.csv\ntime_scale: -1\n",
     "arr.yaml:3:13: "},
    {"loop not a bool", "loop: often\n", "arr.yaml:1:7: "},
    {"unknown length dist", "prompt: {dist: zipf}\n", "arr.yaml:1:16: "},
    {"length mean zero", "output: {mean: 0}\n", "arr.yaml:1:16: "},
};

static void bad_yaml_is_rejected(void **state) {
  const test_bad_yaml *b = *state;
  test_schema_rejects(&arr_schema, "arr.yaml", b->yaml, b->message);
}

/* ---- Allocation failures -------------------------------------------- */

typedef struct gen_args {
  arr_config c;
  const char *dir;
} gen_args;

static void *make_gen(const sim_allocator *a, void *ctx, sim_error *err) {
  gen_args *g = ctx;
  return arr_create(&g->c, g->dir, 1, 0, a, err);
}

static void drop_gen(void *g) { arr_destroy(g); }

/* A Poisson generator and a looped trace of 50 rows (its arrays grow
 * several times) fail cleanly on every allocation. */
static void generators_fail_cleanly(void **state) {
  (void)state;
  gen_args g = {.dir = NULL};
  bind_ok("kind: poisson\nrate: 7.5\n", &g.c);
  assert_int_equal(test_alloc_failures("poisson", make_gen, drop_gen, &g), 1);
  scn_release(&arr_schema, &g.c);

  char file[4096];
  snprintf(file, sizeof file, "%s", test_out_path("arr_grow.csv"));
  FILE *f = fopen(file, "w");
  assert_non_null(f);
  fputs(HEAD, f);
  for (int i = 0; i < 50; i++)
    fprintf(f, "2023-11-16 18:%02d:00.0000000,%d,%d\n", i, 100 + i, 10 + i);
  fclose(f);
  bind_ok("kind: trace\nfile: x.csv\nloop: true\n", &g.c);
  char *keep = g.c.file;
  g.c.file = file;
  assert_true(test_alloc_failures("trace", make_gen, drop_gen, &g) > 4);
  g.c.file = keep;
  scn_release(&arr_schema, &g.c);
}

/* Windows (arr_window_take): a trace's windows give its rows exactly,
 * in pieces that add up to the whole replay; the Poisson window's count
 * is the rate's integral (against a midpoint sum) and its length moments
 * are those of many draws. */
static void trace_windows_add_up(void **state) {
  (void)state;
  arr_config c;
  arr_gen *g = open_conv("kind: trace\nfile: " CONV "\n", &c);
  double n = 0, p = 0, o = 0;
  for (double t = 0; t < 4000; t += 60) {
    arr_window w;
    arr_window_take(g, t, t + 60, INFINITY, &w);
    assert_true(w.over == 0);
    if (w.count > 0) {
      p += w.prompt_mean * w.count;
      o += w.output_mean * w.count;
    }
    n += w.count;
  }
  assert_true(n == 19366);
  assert_close(p, 22361870, 1e-12, 0);
  /* Outputs of 0 count as 1, as the services count them. */
  assert_true(o >= 4088665);
  arr_destroy(g);
  scn_release(&arr_schema, &c);
}

static void poisson_window_moments(void **state) {
  (void)state;
  arr_config c;
  bind_ok("rate: 10\nprofile: diurnal\nlow: 40%\nhigh: 100%\n"
          "peak_at: 14 h\nprompt: {mean: 1155}\noutput: {mean: 211}\n",
          &c);
  arr_gen *g = create_ok(&c, NULL, 3);
  arr_window w;
  arr_window_take(g, 3600, 7200, INFINITY, &w);
  double sum = 0;
  for (int i = 0; i < 3600; i++)
    sum += arr_rate_at(&c, 3600 + i + 0.5);
  assert_close(w.count, sum, 1e-6, 0);
  assert_close(arr_rate_integral(&c, 0, 86400), 10 * 86400, 1e-12, 0);
  double m = 0, m2 = 0, t;
  int64_t pr, out;
  const int draws = 200000;
  for (int i = 0; i < draws; i++) {
    arr_next(g, &t, &pr, &out);
    m += (double)pr / draws;
    m2 += (double)pr * (double)pr / draws;
  }
  assert_close(w.prompt_mean, m, 0.01, 0);
  assert_close(w.prompt_sq, m2, 0.05, 0);
  arr_destroy(g);
  scn_release(&arr_schema, &c);
}

int main(void) {
  struct CMUnitTest tests[64];
  size_t n = 0;
  TEST_ADD(tests, n, conv_trace_replay);
  TEST_ADD(tests, n, generators_fail_cleanly);
  TEST_ADD(tests, n, conv_trace_time_scale);
  TEST_ADD(tests, n, conv_trace_loop);
  TEST_ADD(tests, n, trace_windows_add_up);
  TEST_ADD(tests, n, poisson_window_moments);
  TEST_ADD(tests, n, poisson_gaps_pass_ks);
  TEST_ADD(tests, n, diurnal_mean_rate);
  TEST_ADD(tests, n, mmpp_long_run_rate);
  TEST_ADD(tests, n, token_lengths);
  TEST_ADD(tests, n, inline_draws_are_gsl_draws);
  TEST_ADD(tests, n, tokens_round_as_llround);
  TEST_ADD(tests, n, nanoseconds_round_as_llround);
  TEST_ADD(tests, n, deterministic_for_a_seed);
  TEST_ROWS(tests, n, bad_trace_is_rejected, bad_traces);
  TEST_ADD(tests, n, trace_with_bom_and_crlf);
  TEST_ADD(tests, n, missing_trace_is_io_error);
  TEST_ROWS(tests, n, bad_yaml_is_rejected, bad_yaml);
  return _cmocka_run_group_tests("arrivals", tests, n, NULL, NULL);
}
