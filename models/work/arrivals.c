/* arrivals.c - request arrival processes (Poisson with a diurnal profile,
 * 2-state MMPP, trace replay) and their schema.
 *
 * Every draw comes from a stream owned by the generator, one per purpose,
 * so the times of a run do not move when the length distributions change
 * (gaps and normals: arrivals_zig.h; the rest GSL's: arrivals_draw.h).
 * A loaded trace keeps its times relative to its first row, in seconds
 * before scaling, and its tokens as integers; replay only adds offsets. */
#include "arrivals.h"
#include "arrivals_internal.h"
#include "arrivals_zig.h"
#include "arrivals_exp.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "sig.h"
#include "vec.h"

#define MAX_TRACE_BYTES ((size_t)256 << 20)

static const char *const kind_names[] = {"poisson", "mmpp", "trace", NULL};
static const char *const profile_names[] = {"flat", "diurnal", NULL};
static const char *const dist_names[] = {"lognormal", "fixed", NULL};

/* The most tokens a trace row may give for a prompt or an output: the
 * longest context window offered (Llama 4 Scout's, 10M tokens), the bound
 * of the synthetic lengths' mean too. The service's model is not known
 * where the trace is read, so its own context_length is not the bound. */
#define MAX_TRACE_TOKENS ((int64_t)10000000)

/* The Azure LLM inference trace's columns, found by header name. */
static const char *const col_names[] = {"TIMESTAMP", "ContextTokens",
                                        "GeneratedTokens"};

/* ------------------------------------------------------------------ */
/* Schema                                                              */
/* ------------------------------------------------------------------ */

/* Prompt and output lengths differ only in their default mean. */
#define LENGTH_SCHEMA(ident, mean_dflt)                                        \
  static const scn_field ident##_fields[] = {                                  \
      {.key = "dist",                                                          \
       .type = SCN_ENUM,                                                       \
       .offset = offsetof(arr_length, dist),                                   \
       .names = dist_names,                                                    \
       .dflt = "lognormal",                                                    \
       .help = "lognormal or fixed"},                                          \
      {.key = "mean",                                                          \
       .type = SCN_QUANTITY,                                                   \
       .offset = offsetof(arr_length, mean),                                   \
       .dim = UNITS_NUMBER,                                                    \
       .min = 1,                                                               \
       .max = 1e7,                                                             \
       .dflt = mean_dflt,                                                      \
       .help = "mean length in tokens"},                                       \
      {.key = "sigma",                                                         \
       .type = SCN_QUANTITY,                                                   \
       .offset = offsetof(arr_length, sigma),                                  \
       .dim = UNITS_NUMBER,                                                    \
       .min = 0,                                                               \
       .max = 5,                                                               \
       .dflt = "1",                                                            \
       .help = "lognormal: sigma of the underlying normal"},                   \
  };                                                                           \
  static const scn_schema ident##_schema =                                     \
      SCN_SCHEMA("token length", arr_length, ident##_fields, .check = NULL)

LENGTH_SCHEMA(prompt, "1155");
LENGTH_SCHEMA(output, "211");

static int check_arrivals(void *obj, const scn_loc *loc, void *user,
                          sim_error *err);

#define NUMBER(k, field, lo, hi, def, fl, h)                                   \
  {                                                                            \
    .key = k, .type = SCN_QUANTITY, .offset = offsetof(arr_config, field),     \
    .dim = UNITS_NUMBER, .min = lo, .max = hi, .flags = fl, .dflt = def,       \
    .help = h                                                                  \
  }

#define SHARE(k, field, def, h)                                                \
  {                                                                            \
    .key = k, .type = SCN_QUANTITY, .offset = offsetof(arr_config, field),     \
    .dim = UNITS_FRACTION, .min = 0, .max = 1, .dflt = def, .help = h          \
  }

#define SOJOURN(k, field, def, h)                                              \
  {                                                                            \
    .key = k, .type = SCN_QUANTITY, .offset = offsetof(arr_config, field),     \
    .dim = UNITS_TIME, .flags = SCN_POSITIVE, .dflt = def, .help = h           \
  }

static const scn_field arr_fields[] = {
    {.key = "kind",
     .type = SCN_ENUM,
     .offset = offsetof(arr_config, kind),
     .names = kind_names,
     .dflt = "poisson",
     .help = "poisson, mmpp or trace"},
    NUMBER("rate", rate, 0, 1e6, "1", SCN_POSITIVE,
           "poisson: mean requests per second (a plain number)"),
    {.key = "profile",
     .type = SCN_ENUM,
     .offset = offsetof(arr_config, profile),
     .names = profile_names,
     .dflt = "flat",
     .help = "poisson: flat or diurnal"},
    SHARE("low", low, "30%", "diurnal: the trough, in proportion to high"),
    SHARE("high", high, "90%", "diurnal: the peak, in proportion to low"),
    {.key = "peak_at",
     .type = SCN_QUANTITY,
     .offset = offsetof(arr_config, peak_s),
     .dim = UNITS_TIME,
     .min = 0,
     .max = DAY_S,
     .dflt = "15 h",
     .help = "diurnal: time of day of the peak"},
    NUMBER("rate1", rate1, 0, 1e6, "10", 0,
           "mmpp: requests per second in state 1"),
    NUMBER("rate2", rate2, 0, 1e6, "1", 0,
           "mmpp: requests per second in state 2"),
    SOJOURN("sojourn1", sojourn1, "1 min", "mmpp: mean time in state 1"),
    SOJOURN("sojourn2", sojourn2, "5 min", "mmpp: mean time in state 2"),
    {.key = "file",
     .type = SCN_STRING,
     .offset = offsetof(arr_config, file),
     .help = "trace: CSV (TIMESTAMP,ContextTokens,GeneratedTokens), "
             "relative to the scenario"},
    NUMBER("time_scale", time_scale, 0, 1e6, "1", SCN_POSITIVE,
           "trace: multiplies the gaps (2 halves the rate)"),
    {.key = "loop",
     .type = SCN_BOOL,
     .offset = offsetof(arr_config, loop),
     .dflt = "false",
     .help = "trace: start again after the last row"},
    {.key = "prompt",
     .type = SCN_MAP,
     .offset = offsetof(arr_config, prompt),
     .sub = &prompt_schema,
     .help = "synthetic kinds: prompt length {dist, mean, sigma}"},
    {.key = "output",
     .type = SCN_MAP,
     .offset = offsetof(arr_config, output),
     .sub = &output_schema,
     .help = "synthetic kinds: output length {dist, mean, sigma}"},
};

const scn_schema arr_schema =
    SCN_SCHEMA("arrivals", arr_config, arr_fields, .check = check_arrivals);

static int check_arrivals(void *obj, const scn_loc *loc, void *user,
                          sim_error *err) {
  (void)user;
  const arr_config *c = obj;
  if (c->kind == ARR_POISSON && c->profile == ARR_DIURNAL) {
    if (c->low > c->high)
      return scn_fail(loc, "low", err, NULL, "'low' is above 'high'");
    if (c->high <= 0)
      return scn_fail(loc, "high", err, NULL, "'high' must be above 0%%");
  }
  if (c->kind == ARR_MMPP && c->rate1 <= 0 && c->rate2 <= 0)
    return scn_fail(loc, "rate1", err, "e.g. rate1: 10, rate2: 1",
                    "an MMPP needs a rate above 0 in one of its states");
  if (c->kind == ARR_TRACE && (c->file == NULL || c->file[0] == '\0'))
    return scn_fail(loc, "file", err, "e.g. file: traces/conv.csv",
                    "a trace needs a file");
  return SIM_OK;
}

/* ------------------------------------------------------------------ */
/* Rates                                                               */
/* ------------------------------------------------------------------ */

double arr_rate_at(const arr_config *c, double t_s) {
  if (c->profile != ARR_DIURNAL)
    return c->rate;
  double phase = 2 * PI * (t_s - c->peak_s) / DAY_S;
  double s = c->low + (c->high - c->low) * 0.5 * (1 + cos(phase));
  return c->rate * s / (0.5 * (c->low + c->high));
}

double arr_mean_rate(const arr_config *c) {
  switch (c->kind) {
  case ARR_POISSON:
    return c->rate;
  case ARR_MMPP:
    return (c->sojourn1 * c->rate1 + c->sojourn2 * c->rate2) /
           (c->sojourn1 + c->sojourn2);
  default:
    return NAN;
  }
}

/* ------------------------------------------------------------------ */
/* Trace files                                                         */
/* ------------------------------------------------------------------ */


static int find_columns(csv_reader *r, long col[3]) {
  char *h[CSV_MAX_FIELDS];
  size_t n;
  int rc = csv_header(r, h, &n, "TIMESTAMP, ContextTokens, GeneratedTokens");
  if (rc != SIM_OK)
    return rc;
  for (int k = 0; k < 3; k++)
    if ((col[k] = csv_column(h, n, col_names[k])) < 0)
      return csv_fail(r, NULL, col_names[k], "no such column in the header");
  return SIM_OK;
}

static int parse_tokens(csv_reader *r, const char *text, int k, int64_t *out) {
  return csv_count(r, text, col_names[k], MAX_TRACE_TOKENS, "tokens", out);
}

static int trace_push(trace *tr, double t, int64_t p, int64_t o) {
  size_t need = tr->n + 1, tcap = tr->cap, pcap = tr->cap, ocap = tr->cap;
  if (sim_vec_reserve(tr->a, &tr->t, &tcap, need, sizeof *tr->t) != SIM_OK ||
      sim_vec_reserve(tr->a, &tr->prompt, &pcap, need, sizeof *tr->prompt) !=
          SIM_OK ||
      sim_vec_reserve(tr->a, &tr->output, &ocap, need, sizeof *tr->output) !=
          SIM_OK)
    return SIM_ENOMEM;
  tr->cap = tcap;
  tr->t[tr->n] = t;
  tr->prompt[tr->n] = p;
  tr->output[tr->n++] = o;
  return SIM_OK;
}

/* Reads one data row; *first is the absolute time of the first row. */
static int read_trace_row(csv_reader *r, char *line, const long col[3],
                          trace *tr, double *first) {
  char *f[CSV_MAX_FIELDS];
  size_t n = csv_split(line, f);
  for (int k = 0; k < 3; k++)
    if ((size_t)col[k] >= n)
      return csv_fail(r, NULL, col_names[k], "missing: the row has %zu fields",
                      n);
  double t;
  size_t bad;
  if (sig_parse_time(f[col[0]], &t, &bad) != 0)
    return csv_fail(r, f[col[0]], col_names[0],
                    "not a time like 2023-11-16 18:15:46.68 (at character "
                    "%zu)",
                    bad + 1);
  int64_t p, o;
  int rc = parse_tokens(r, f[col[1]], 1, &p);
  if (rc == SIM_OK)
    rc = parse_tokens(r, f[col[2]], 2, &o);
  if (rc != SIM_OK)
    return rc;
  if (tr->n == 0)
    *first = t;
  t -= *first;
  if (tr->n > 0 && t < tr->t[tr->n - 1])
    return csv_fail(r, f[col[0]], col_names[0],
                    "time %s is earlier than the row before", f[col[0]]);
  if (trace_push(tr, t, p, o) != SIM_OK)
    return sim_error_set(r->err, SIM_ENOMEM, "out of memory");
  return SIM_OK;
}

static void trace_fini(trace *tr) {
  sim_free(tr->a, tr->t);
  sim_free(tr->a, tr->prompt);
  sim_free(tr->a, tr->output);
  *tr = (trace){.a = tr->a};
}

static int parse_trace(csv_reader *r, trace *tr, bool loop) {
  long col[3];
  int rc = find_columns(r, col);
  double first = 0;
  char *line;
  while (rc == SIM_OK && (line = csv_next_line(r)) != NULL)
    if (*line != '\0')
      rc = read_trace_row(r, line, col, tr, &first);
  if (rc == SIM_OK && tr->n == 0)
    rc = csv_fail(r, NULL, NULL, "no data rows");
  if (rc == SIM_OK && loop && !(tr->t[tr->n - 1] > 0))
    rc = csv_fail(r, NULL, NULL,
                  "a looped trace needs two or more distinct times");
  return rc;
}

/* Reads the trace at path into tr; on failure tr is left empty. */
static int load_trace(const char *path, trace *tr, bool loop, sim_error *err) {
  csv_reader r;
  int rc = csv_open(&r, path, MAX_TRACE_BYTES, err);
  if (rc != SIM_OK)
    return rc;
  rc = parse_trace(&r, tr, loop);
  csv_close(&r);
  if (rc != SIM_OK)
    trace_fini(tr);
  return rc;
}

/* ------------------------------------------------------------------ */
/* Generators                                                          */
/* ------------------------------------------------------------------ */


static void start_mmpp(arr_gen *g) {
  const arr_config *c = g->c;
  double pi1 = c->sojourn1 / (c->sojourn1 + c->sojourn2);
  g->state = arr_uniform(taus(g, ARR_RNG_STATE)) < pi1 ? 0 : 1;
  /* Sojourns are exponential, so the rest of the first one is too. */
  g->state_end = arr_exponential(taus(g, ARR_RNG_STATE), sojourn(c, g->state));
}

static void trace_summarise(arr_gen *g) {
  const trace *tr = &g->tr;
  double p = 0, o = 0;
  for (size_t i = 0; i < tr->n; i++) {
    p += (double)tr->prompt[i];
    o += (double)tr->output[i];
  }
  g->stats = (arr_trace_stats){tr->n, tr->t[tr->n - 1], p / (double)tr->n,
                               o / (double)tr->n};
  /* One mean gap between passes keeps the seam like the rest. */
  if (tr->n > 1)
    g->period = g->stats.span_s * (double)tr->n / (double)(tr->n - 1) *
                g->c->time_scale;
}

static int open_trace(arr_gen *g, const char *base_dir, sim_error *err) {
  const char *file = g->c->file;
  char path[4096];
  if (base_dir == NULL || base_dir[0] == '\0' || file[0] == '/')
    snprintf(path, sizeof path, "%s", file);
  else
    snprintf(path, sizeof path, "%s%s%s", base_dir,
             strcmp(base_dir, "/") == 0 ? "" : "/", file);
  int rc = load_trace(path, &g->tr, g->c->loop, err);
  if (rc != SIM_OK)
    return rc;
  trace_summarise(g);
  if (g->c->loop && !(g->period > 0))
    return sim_error_set(err, SIM_EINPUT,
                         "%s: a looped trace needs two or more distinct "
                         "times",
                         path);
  return SIM_OK;
}

/* The streams' states, as rng_stream_create seeds them (every draw then
 * goes through taus(), so the streams themselves are not kept). */
static int seed_streams(arr_gen *g, uint64_t seed, uint64_t index) {
  for (int i = 0; i < NSTREAMS; i++) {
    gsl_rng *r =
        rng_stream_create(seed, ARR_RNG_KIND, index, (uint32_t)(i + 1));
    if (r == NULL)
      return SIM_ENOMEM;
    bool fits = gsl_rng_size(r) == sizeof g->st[i];
    if (fits)
      memcpy(&g->st[i], gsl_rng_state(r), sizeof g->st[i]);
    rng_stream_destroy(r);
    if (!fits)
      return SIM_ENOMEM;
  }
  return SIM_OK;
}

arr_gen *arr_create(const arr_config *c, const char *base_dir, uint64_t seed,
                    uint64_t index, const sim_allocator *alloc,
                    sim_error *err) {
  arr_gen *g = sim_calloc(alloc, 1, sizeof *g);
  if (g == NULL)
    goto nomem;
  g->alloc = alloc;
  g->tr.a = alloc;
  g->c = c;
  arr_zig_tables(&g->gaps, &g->normals);
  if (seed_streams(g, seed, index) != SIM_OK)
    goto nomem;
  if (c->kind == ARR_POISSON)
    g->peak = c->profile == ARR_DIURNAL
                  ? c->rate * c->high / (0.5 * (c->low + c->high))
                  : c->rate;
  else if (c->kind == ARR_MMPP)
    start_mmpp(g);
  else if (open_trace(g, base_dir, err) != SIM_OK) {
    arr_destroy(g);
    return NULL;
  }
  return g;
nomem:
  arr_destroy(g);
  sim_error_set(err, SIM_ENOMEM, "out of memory");
  return NULL;
}

void arr_destroy(arr_gen *g) {
  if (g == NULL)
    return;
  trace_fini(&g->tr);
  sim_free(g->alloc, g->ahead);
  sim_free(g->alloc, g);
}

/* Bounds on the diurnal rate over the second from t: its value mid-way,
 * widened by its steepest slope over half a second and by far more than
 * the rounding of arr_rate_at, so a candidate below win_lo would pass the
 * exact test and one at or above win_hi would fail it. */
static void thin_window(arr_gen *g, double t) {
  const arr_config *c = g->c;
  double mid = arr_rate_at(c, t + 0.5);
  double slope = c->rate * (c->high - c->low) / (c->low + c->high) * 2 * PI /
                 DAY_S; /* the largest |d rate / dt| */
  double reach = 0.5 * slope + 1e-9 * g->peak;
  g->win_lo = mid - reach;
  g->win_hi = mid + reach;
  g->win_end = t + 1;
}

/* Candidates at the peak rate, each kept with probability rate(t) / peak:
 * a non-homogeneous Poisson process by thinning (Lewis & Shedler 1979). A
 * flat profile keeps every candidate without a draw. The bounds of the
 * current second decide almost every candidate without a cos (a
 * squeeze): the same decisions as the exact test, far cheaper. */
static double next_poisson(arr_gen *g) {
  for (;;) {
    g->t += arr_zig_exponential(g->gaps, taus(g, ARR_RNG_TIMES)) / g->peak;
    if (g->c->profile != ARR_DIURNAL)
      return g->t;
    double x = arr_uniform(taus(g, ARR_RNG_THIN)) * g->peak;
    if (!(g->t < g->win_end))
      thin_window(g, g->t);
    if (x < g->win_lo)
      return g->t;
    if (x >= g->win_hi)
      continue;
    if (x < arr_rate_at(g->c, g->t))
      return g->t;
  }
}

/* Arrivals at the current state's rate until the state ends; a gap that
 * runs past the end is dropped (memoryless), and the next state begins. */
static double next_mmpp(arr_gen *g) {
  const arr_config *c = g->c;
  for (;;) {
    double r = g->state == 0 ? c->rate1 : c->rate2;
    double gap = r > 0
                     ? arr_zig_exponential(g->gaps, taus(g, ARR_RNG_TIMES)) / r
                     : INFINITY;
    if (g->t + gap < g->state_end)
      return g->t += gap;
    g->t = g->state_end;
    g->state ^= 1;
    g->state_end +=
        arr_exponential(taus(g, ARR_RNG_STATE), sojourn(c, g->state));
  }
}

/* A length from l on stream p, the prompt's or the output's, in tokens. */
static int64_t draw_length(arr_gen *g, const arr_length *l, arr_purpose p) {
  int k = p == ARR_RNG_OUTPUT;
  if (!(l->dist == ARR_LOGNORMAL && l->sigma > 0))
    return arr_tokens(l->mean);
  double mu = arr_mu_of(&g->mu[k], l->mean, l->sigma);
  /* arr_tokens(exp(y)), mostly without the exp (arrivals_exp.h) */
  return arr_exp_tokens(l->sigma * arr_zig_normal(g->normals, taus(g, p)) + mu);
}

static bool next_trace(arr_gen *g, double *t_s, int64_t *p, int64_t *o) {
  if (g->next == g->tr.n) {
    if (!g->c->loop)
      return false;
    g->next = 0;
    g->offset += g->period;
  }
  size_t i = g->next++;
  *t_s = g->offset + g->tr.t[i] * g->c->time_scale;
  *p = g->tr.prompt[i];
  *o = g->tr.output[i];
  return true;
}

/* A synthetic process's next request, drawn now. */
static arr_drawn draw_next(arr_gen *g) {
  arr_drawn d;
  d.t = g->c->kind == ARR_MMPP ? next_mmpp(g) : next_poisson(g);
  d.prompt = draw_length(g, &g->c->prompt, ARR_RNG_PROMPT);
  d.output = draw_length(g, &g->c->output, ARR_RNG_OUTPUT);
  return d;
}

bool arr_next(arr_gen *g, double *t_s, int64_t *prompt_tokens,
              int64_t *output_tokens) {
  if (g->c->kind == ARR_TRACE)
    return next_trace(g, t_s, prompt_tokens, output_tokens);
  arr_drawn d;
  if (g->ahead_n > 0) { /* drawn ahead: the stream's next, in order */
    d = g->ahead[g->ahead_head];
    g->ahead_head = g->ahead_head + 1 == g->ahead_cap ? 0 : g->ahead_head + 1;
    g->ahead_n--;
  } else {
    d = draw_next(g);
  }
  *t_s = d.t;
  *prompt_tokens = d.prompt;
  *output_tokens = d.output;
  return true;
}

/* The highest rate the process reaches: the candidates' (Poisson), the
 * busier state's (MMPP). */
static double top_rate(const arr_gen *g) {
  if (g->c->kind == ARR_POISSON)
    return g->peak;
  return fmax(g->c->rate1, g->c->rate2);
}

int arr_ahead_reserve(arr_gen *g, double span_s) {
  if (g->c->kind == ARR_TRACE || !(span_s > 0) || !isfinite(span_s))
    return SIM_EINVAL;
  if (g->ahead_n > 0)
    return SIM_ESTATE;
  /* A Poisson count over the span passes its mean by a quarter rarely
   * at a day's rates; when it does, the rest is drawn on demand. */
  double want = 1.25 * top_rate(g) * span_s + 64;
  size_t cap = want < (double)ARR_AHEAD_MAX ? (size_t)want : ARR_AHEAD_MAX;
  sim_free(g->alloc, g->ahead);
  g->ahead = sim_calloc(g->alloc, cap, sizeof *g->ahead);
  g->ahead_cap = g->ahead != NULL ? cap : 0;
  g->ahead_head = 0;
  return g->ahead != NULL ? SIM_OK : SIM_ENOMEM;
}

size_t arr_draw_ahead(arr_gen *g, double until_s, size_t max_n) {
  size_t drawn = 0;
  if (g->ahead_cap == 0)
    return 0;
  /* g->t is the last drawn request's time, ahead or not */
  while (drawn < max_n && g->ahead_n < g->ahead_cap && g->t < until_s) {
    size_t at = g->ahead_head + g->ahead_n;
    g->ahead[at < g->ahead_cap ? at : at - g->ahead_cap] = draw_next(g);
    g->ahead_n++;
    drawn++;
  }
  return drawn;
}

size_t arr_ahead_held(const arr_gen *g) { return g->ahead_n; }

size_t arr_ahead_room(const arr_gen *g) { return g->ahead_cap; }

arr_trace_stats arr_trace_info(const arr_gen *g) { return g->stats; }
