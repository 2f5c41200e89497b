/* test_inference.c - inference services at request level: conservation at
 * any time, processor sharing against the hand computation, light-load
 * latencies, the KV-cache and max_batch limits, and overload with and
 * without a client timeout and a queue limit. Activity and energy are in
 * test_inference_energy.c; determinism, trace replay, quantiles, refusals,
 * the schema and allocation failures in test_inference_config.c. */
#include "test_inference_rig.h"

/* ---- 1. Conservation at any time --------------------------------------- */

/* Llama-3.1-70B in FP16 on two H100s barely fits (70.5 of 72 GB a GPU), so
 * its KV cache holds about 8,800 tokens: long lognormal prompts are
 * sometimes rejected, the rest queue and batch. Checked at 500 moments,
 * through the load and after the horizon, until everything drains. */
static void conservation_at_any_time(void **state) {
  (void)state;
  rig g;
  rig_open(&g, H100,
           "name: tight\nmodel: Llama-3.1-70B\ntp: 2\nreplicas: 2\n"
           "max_batch: 8\narrivals: {rate: 1.5, prompt: {mean: 2000, sigma: "
           "1}, output: {mean: 300, sigma: 1}}\n",
           11, 60);
  uint64_t most_waiting = 0;
  for (int k = 1; k <= 500; k++) {
    run_to(&g, 0.4 * k);
    inf_totals t = inf_totals_of(g.s);
    assert_conserved(&t);
    most_waiting = t.waiting > most_waiting ? t.waiting : most_waiting;
  }
  inf_totals t = inf_totals_of(g.s);
  print_message("arrived %llu, completed %llu, rejected %llu, at most %llu "
                "waiting\n",
                (unsigned long long)t.arrived, (unsigned long long)t.completed,
                (unsigned long long)t.rejected,
                (unsigned long long)most_waiting);
  assert_true(t.rejected > 0 && t.completed > 0 && most_waiting > 0);
  assert_int_equal(t.waiting + t.in_batch, 0); /* drained after the horizon */
  rig_close(&g);
}

/* A replica that goes down drops what it holds and gets nothing until it
 * is back; with every replica down arrivals are dropped; conservation
 * counts them at every moment. */
static void replicas_down_drop_and_recover(void **state) {
  (void)state;
  rig g;
  rig_open(&g, H100,
           "name: down\nmodel: Llama-3.1-8B\nreplicas: 2\n"
           "arrivals: {rate: 20, prompt: {mean: 500}, output: {mean: 200}}\n",
           5, 60);
  run_to(&g, 10);
  assert_int_equal(inf_set_down(g.s, 0, true), SIM_OK);
  inf_totals t = inf_totals_of(g.s);
  assert_true(t.dropped > 0);
  assert_conserved(&t);
  uint64_t dropped = t.dropped;
  run_to(&g, 20); /* replica 1 serves alone */
  t = inf_totals_of(g.s);
  assert_int_equal(t.dropped, dropped);
  assert_conserved(&t);
  assert_int_equal(inf_set_down(g.s, 1, true), SIM_OK);
  run_to(&g, 30); /* both down: every arrival dropped */
  inf_totals down = inf_totals_of(g.s);
  assert_true(down.dropped > t.dropped + 100);
  assert_int_equal(down.waiting + down.in_batch, 0);
  assert_conserved(&down);
  assert_int_equal(inf_set_down(g.s, 0, false), SIM_OK);
  assert_int_equal(inf_set_down(g.s, 1, false), SIM_OK);
  run_to(&g, 40);
  inf_totals up = inf_totals_of(g.s);
  assert_true(up.completed > down.completed);
  assert_conserved(&up);
  assert_int_equal(inf_set_down(g.s, 2, true), SIM_EINVAL);
  rig_close(&g);
}

/* ---- 2. Processor sharing against the hand computation ------------------ */

typedef struct group {
  int count;
  long prompt, output;
} group;

typedef struct ps_case {
  const char *name;
  double phi; /* the replica's clock, set before the requests arrive */
  group g[3];
} ps_case;

/* Requests arriving together at t = 0, in the order listed. */
static const ps_case ps_cases[] = {
    {"ps: outputs 10 and 20", 1, {{1, 1000, 10}, {1, 1000, 20}}},
    {"ps: mean context of unequal prompts", 1, {{1, 1000, 10}, {1, 3000, 20}}},
    {"ps: one-token output and a tie",
     1,
     {{1, 500, 1}, {2, 800, 16}, {1, 2000, 40}}},
    {"ps: half clock, memory-bound", 0.5, {{1, 1000, 10}, {1, 3000, 20}}},
    {"ps: half clock, compute-bound batch of 161",
     0.5,
     {{160, 100, 30}, {1, 100, 40}}},
};

typedef struct ps_hand {
  size_t n;
  long prompt[MAX_REQ], output[MAX_REQ];
  double prefill_s;       /* every TTFT */
  double finish[MAX_REQ]; /* s */
  double tpot[MAX_REQ];   /* s */
} ps_hand;

static void expand(const ps_case *pc, ps_hand *h) {
  h->n = 0;
  for (size_t k = 0; k < N_OF(pc->g); k++)
    for (int j = 0; j < pc->g[k].count; j++) {
      h->prompt[h->n] = pc->g[k].prompt;
      h->output[h->n++] = pc->g[k].output;
    }
}

/* The header's model by hand: one prefill of every prompt, then decode
 * phases; in each the B live requests gain one token a step, the step
 * time taken at the mean of (prompt + tokens so far) when the phase
 * begins, until the next smallest output is complete. */
static void hand_ps(const rl_replica *r, double phi, ps_hand *h) {
  bool done[MAX_REQ];
  double t = 0, v = 0;
  for (size_t i = 0; i < h->n; i++)
    t += rl_prefill_s(r, (double)h->prompt[i], phi);
  h->prefill_s = t;
  for (size_t i = 0; i < h->n; i++)
    if ((done[i] = h->output[i] <= 1))
      h->finish[i] = t;
  for (;;) {
    double b = 0, ctx = 0, next = INFINITY;
    for (size_t i = 0; i < h->n; i++)
      if (!done[i]) {
        b++;
        ctx += (double)h->prompt[i] + 1 + v;
        next = fmin(next, (double)h->output[i] - 1);
      }
    if (b == 0)
      break;
    t += (next - v) * rl_decode_step_s(r, b, ctx / b, phi);
    v = next;
    for (size_t i = 0; i < h->n; i++)
      if (!done[i] && (double)h->output[i] - 1 == next) {
        h->finish[i] = t;
        done[i] = true;
      }
  }
  for (size_t i = 0; i < h->n; i++)
    h->tpot[i] = h->output[i] > 1 ? (h->finish[i] - h->prefill_s) /
                                        (double)(h->output[i] - 1)
                                  : 0;
}

/* The distinct finish times, ascending; returns how many. */
static size_t finish_times(const ps_hand *h, double *out) {
  double t[MAX_REQ];
  memcpy(t, h->finish, h->n * sizeof *t);
  gsl_sort(t, 1, h->n);
  size_t m = 0;
  for (size_t i = 0; i < h->n; i++)
    if (m == 0 || t[i] != out[m - 1])
      out[m++] = t[i];
  return m;
}

/* Samples just after each finish time: the interval holds exactly the
 * requests finishing then, whose TTFT and TPOT the hand gives. */
static void check_each_finish(rig *g, const ps_hand *h) {
  double times[MAX_REQ], row[INF_NCOLS];
  size_t m = finish_times(h, times);
  for (size_t j = 0; j < m; j++) {
    double until = j + 1 < m ? 0.5 * (times[j] + times[j + 1]) : times[j] + 1;
    run_to(g, until);
    double dt = sample(g, row);
    double count = 0, tpot = NAN;
    for (size_t i = 0; i < h->n; i++)
      if (h->finish[i] == times[j]) {
        count++;
        tpot = h->tpot[i];
      }
    assert_close(row[INF_REQUESTS_PER_S] * dt, count, 1e-9, 0);
    assert_close(row[INF_TTFT_P50], h->prefill_s, 1e-9, 0);
    assert_close(row[INF_TTFT_P99], h->prefill_s, 1e-9, 0);
    assert_close(row[INF_TPOT_P50], tpot, 1e-9, 1e-15);
    assert_close(row[INF_TPOT_P99], tpot, 1e-9, 1e-15);
  }
}

static void processor_sharing_is_exact(void **state) {
  const ps_case *pc = *state;
  static ps_hand h;
  expand(pc, &h);
  trace_row rows[MAX_REQ];
  double tokens = 0, prompts = 0;
  for (size_t i = 0; i < h.n; i++) {
    rows[i] = (trace_row){0, h.prompt[i], h.output[i]};
    tokens += (double)h.output[i];
    prompts += (double)h.prompt[i];
  }
  char yaml[8192];
  trace_yaml(yaml, sizeof yaml, "Llama-3.1-8B", "max_batch: 512\n",
             write_trace("inf_ps.csv", rows, h.n));
  rig g;
  rig_open(&g, H100, yaml, 1, INFINITY);
  assert_int_equal(inf_set_clock(g.s, 0, pc->phi), SIM_OK);
  hand_ps(&g.r, pc->phi, &h);
  print_message("%s: prefill %.6f ms, last finish %.6f ms\n", pc->name,
                1e3 * h.prefill_s, 1e3 * h.finish[h.n - 1]);
  check_each_finish(&g, &h);
  inf_totals t = inf_totals_of(g.s);
  assert_conserved(&t);
  assert_int_equal(t.completed, h.n);
  assert_close(t.tokens_generated, tokens, 1e-9, 0);
  assert_close(t.prompt_tokens, prompts, 0, 0);
  rig_close(&g);
}

/* ---- 3. Light load: TTFT = prefill, TPOT = the step at batch 1 ---------- */

static void light_load_latency(void **state) {
  (void)state;
  trace_row rows[5];
  for (int i = 0; i < 5; i++)
    rows[i] = (trace_row){10.0 * i, 512, 128};
  char yaml[8192];
  trace_yaml(yaml, sizeof yaml, "Llama-3.1-8B", "",
             write_trace("inf_light.csv", rows, 5));
  rig g;
  rig_open(&g, H100, yaml, 1, INFINITY);
  run_to(&g, 60);
  double row[INF_NCOLS];
  sample(&g, row);
  double ttft = rl_prefill_s(&g.r, 512, 1);
  double tpot = rl_decode_step_s(&g.r, 1, 513, 1);
  print_message("8B on H100, prompt 512: TTFT %.3f ms (prefill), TPOT %.3f "
                "ms (step at batch 1)\n",
                1e3 * row[INF_TTFT_P50], 1e3 * row[INF_TPOT_P50]);
  assert_close(row[INF_TTFT_P50], ttft, 1e-9, 0);
  assert_close(row[INF_TTFT_P99], ttft, 1e-9, 0);
  assert_close(row[INF_TPOT_P50], tpot, 1e-9, 0);
  assert_close(row[INF_TPOT_P99], tpot, 1e-9, 0);
  assert_close(row[INF_SLO], 1, 0, 0);
  assert_close(inf_ttft_quantile(g.s, 0.5), ttft, 0.023, 0);
  assert_close(inf_tpot_quantile(g.s, 0.99), tpot, 0.023, 0);
  rig_close(&g);
}

/* ---- 4. The KV cache bounds the batch ----------------------------------- */

/* The batch fills the cache at what each request holds: its prompt and
 * kv_reserve of its output (1: the whole sequence reserved; 0.5: vLLM's
 * paging, half the output on average). */
static void kv_cache_bounds_the_batch(void **state) {
  (void)state;
  static const double reserves[] = {1, 0.5};
  for (size_t i = 0; i < N_OF(reserves); i++) {
    rig g;
    rig_open_kv(&g, H100,
                "name: kv\nmodel: Llama-3.1-70B\ntp: 2\narrivals: {rate: 5, "
                "prompt: {dist: fixed, mean: 1000}, output: {dist: fixed, "
                "mean: 1000}}\n",
                3, 60, reserves[i]);
    double cap = 0;
    assert_int_equal(rl_max_batch_tokens(&g.r, &cap, NULL), SIM_OK);
    double held = 1000 + reserves[i] * 1000;
    uint64_t most = (uint64_t)floor(cap / held), seen = 0;
    for (int k = 1; k <= 1200; k++) {
      run_to(&g, 0.05 * k);
      inf_totals t = inf_totals_of(g.s);
      assert_true(t.in_batch <= most);
      seen = t.in_batch > seen ? t.in_batch : seen;
    }
    print_message("70B FP16 on 2 x H100: KV for %.0f tokens, %llu requests "
                  "of %.0f; batch reached %llu\n",
                  cap, (unsigned long long)most, held,
                  (unsigned long long)seen);
    assert_int_equal(seen, most);
    rig_close(&g);
  }
}

/* A request larger than the whole cache is rejected; the others pass. */
static void request_larger_than_the_cache_is_rejected(void **state) {
  (void)state;
  rl_replica r = test_replica(H100, "Llama-3.1-70B", "fp16", 2);
  double cap = 0;
  assert_int_equal(rl_max_batch_tokens(&r, &cap, NULL), SIM_OK);
  trace_row rows[] = {{0, 1000, 100},
                      {1, (long)cap - 99, 100},  /* cap + 1 tokens */
                      {2, (long)cap - 100, 100}, /* exactly cap: fits */
                      {3, 1000, 100}};
  char yaml[8192];
  trace_yaml(yaml, sizeof yaml, "Llama-3.1-70B", "tp: 2\n",
             write_trace("inf_huge.csv", rows, N_OF(rows)));
  rig g;
  rig_open(&g, H100, yaml, 1, INFINITY);
  run_to(&g, 120);
  inf_totals t = inf_totals_of(g.s);
  assert_conserved(&t);
  assert_int_equal(t.arrived, 4);
  assert_int_equal(t.rejected, 1);
  assert_int_equal(t.completed, 3);
  rig_close(&g);
}

/* ---- 5. max_batch, queueing, TTFT under overload ------------------------ */

typedef struct overload_case {
  const char *name;
  int max_batch;
  double rate; /* requests per second, several times what it serves */
} overload_case;

static const overload_case overload_cases[] = {
    {"overload: max_batch 1", 1, 5},
    {"overload: max_batch 4", 4, 20},
    {"overload: max_batch 32", 32, 100},
};

static void max_batch_holds_under_overload(void **state) {
  const overload_case *oc = *state;
  char yaml[1024];
  snprintf(yaml, sizeof yaml,
           "name: busy\nmodel: Llama-3.1-8B\nmax_batch: %d\narrivals: {rate: "
           "%g, prompt: {dist: fixed, mean: 256}, output: {dist: fixed, "
           "mean: 256}}\n",
           oc->max_batch, oc->rate);
  rig g;
  rig_open(&g, H100, yaml, 5, INFINITY);
  double first[INF_NCOLS], last[INF_NCOLS];
  uint64_t seen = 0, queue_early = 0;
  for (int k = 1; k <= 600; k++) {
    run_to(&g, 0.1 * k);
    inf_totals t = inf_totals_of(g.s);
    assert_conserved(&t);
    assert_true(t.in_batch <= (uint64_t)oc->max_batch);
    seen = t.in_batch > seen ? t.in_batch : seen;
    if (k == 100) {
      sample(&g, first);
      queue_early = t.waiting;
    } else if (k == 500) {
      sample(&g, last); /* discards 10-50 s */
    }
  }
  sample(&g, last);
  print_message("%s at %g/s: queue %.0f at 10 s, %.0f at 60 s; TTFT p50 "
                "%.2f s in 0-10 s, %.2f s in 50-60 s; mean batch %.2f\n",
                oc->name, oc->rate, first[INF_QUEUE], last[INF_QUEUE],
                first[INF_TTFT_P50], last[INF_TTFT_P50], last[INF_BATCH]);
  assert_int_equal(seen, oc->max_batch);
  assert_true(queue_early > 0 && last[INF_QUEUE] > 2.0 * queue_early);
  assert_true(last[INF_TTFT_P50] > 3 * first[INF_TTFT_P50]);
  assert_true(last[INF_BATCH] <= oc->max_batch &&
              last[INF_BATCH] > 0.9 * oc->max_batch);
  rig_close(&g);
}

/* ---- 5b. Overload: the client timeout and the queue limit -------------- */

/* One replica of max_batch 4 (about 2.5 requests a second of 256 + 256
 * tokens) offered 20 a second for 60 s, then drained: eight times what it
 * serves. The queue grows by about 17 a second. A TTFT SLO of 30 s, above
 * the timeouts tried, so that every request served within a timeout
 * meets its SLOs and the attainment is the share served. */
#define OVERLOAD_SVC                                                           \
  "name: busy\nmodel: Llama-3.1-8B\nmax_batch: 4\nttft_slo: 30 s\n"            \
  "arrivals: {rate: 20, prompt: {dist: fixed, mean: 256}, output: {dist: "     \
  "fixed, mean: 256}}\n"

typedef struct overload_run {
  inf_totals t;
  double ttft_p99, ttft_max, slo, queue_max;
} overload_run;

/* Runs OVERLOAD_SVC with extra keys until it has drained (800 s),
 * checking conservation every 2 s and that no replica's queue exceeds
 * max_queue (0: no limit). */
static overload_run run_overload(const char *extra, uint64_t max_queue) {
  char yaml[1024];
  snprintf(yaml, sizeof yaml, "%s%s", OVERLOAD_SVC, extra);
  rig g;
  rig_open(&g, H100, yaml, 5, 60);
  overload_run o = {.queue_max = 0};
  for (int k = 1; k <= 400; k++) {
    run_to(&g, 2.0 * k);
    inf_totals t = inf_totals_of(g.s);
    assert_conserved(&t);
    o.queue_max = fmax(o.queue_max, (double)t.waiting);
    if (max_queue > 0)
      assert_true(t.waiting <= max_queue);
  }
  double row[INF_NCOLS];
  sample(&g, row); /* the whole run is one interval */
  o.t = inf_totals_of(g.s);
  assert_conserved(&o.t);
  assert_int_equal(o.t.waiting + o.t.in_batch, 0);
  o.ttft_p99 = inf_ttft_quantile(g.s, 0.99);
  o.ttft_max = inf_ttft_quantile(g.s, 1);
  o.slo = (double)o.t.slo_met / (double)inf_totals_ended(&o.t);
  assert_close(row[INF_SLO], o.slo, 1e-12, 0); /* the interval agrees */
  rig_close(&g);
  return o;
}

static void print_overload(const char *what, const overload_run *o) {
  print_message(
      "%s: arrived %llu, completed %llu, timed out %llu, rejected "
      "%llu; TTFT p99 %.1f s, max %.1f s; at most %.0f waiting; "
      "SLO attainment %.1f%% (%.1f%% of the completed)\n",
      what, (unsigned long long)o->t.arrived,
      (unsigned long long)o->t.completed, (unsigned long long)o->t.timed_out,
      (unsigned long long)o->t.rejected, o->ttft_p99, o->ttft_max, o->queue_max,
      100 * o->slo, 100 * (double)o->t.slo_met / (double)o->t.completed);
}

/* Without a timeout every request waits its turn: TTFT grows with the
 * queue to minutes and most miss the 30 s SLO. A 20 s timeout bounds
 * every completed request's TTFT by 20 s (the p99 lands just under it);
 * the rest time out, unserved, and count against the attainment: every
 * served request meets its SLOs, yet the attainment is the share served. */
static void timeout_bounds_ttft_under_overload(void **state) {
  (void)state;
  overload_run patient = run_overload("timeout: 0 s\n", 0);
  overload_run hasty = run_overload("timeout: 20 s\n", 0);
  print_overload("no timeout", &patient);
  print_overload("timeout 20 s", &hasty);
  assert_int_equal(patient.t.timed_out + patient.t.rejected, 0);
  assert_true(patient.ttft_p99 > 100);
  assert_int_equal(hasty.t.arrived, patient.t.arrived);
  assert_true(hasty.ttft_max <= 20);
  assert_true(hasty.ttft_p99 > 18);
  /* A capacity of about 2 a second: most of the 20 a second time out. */
  assert_true(hasty.t.timed_out > hasty.t.arrived / 2);
  assert_true(hasty.t.completed > 100);
  assert_int_equal(hasty.t.rejected, 0);
  /* Waiting requests are younger than the timeout, give or take the time
   * between the replica's changes (about 1.7 s a batch), when the expired
   * ones leave: 20 a second for 20 + 2 s, and Poisson's spread. */
  assert_true(hasty.queue_max < 20 * 25 && patient.queue_max > 1000);
  assert_int_equal(hasty.t.slo_met, hasty.t.completed);
  assert_close(hasty.slo,
               (double)hasty.t.completed /
                   (double)(hasty.t.completed + hasty.t.timed_out),
               1e-12, 0);
  assert_true(hasty.slo < 0.25);
}

/* A queue of at most 8: arrivals beyond are rejected at once, so waiting
 * is short (TTFT about three batches' turn), and most requests are
 * rejected, each an SLO miss. */
static void queue_limit_sheds_arrivals(void **state) {
  (void)state;
  overload_run o = run_overload("max_queue: 8\n", 8);
  print_overload("max_queue 8", &o);
  assert_true(o.t.rejected > o.t.arrived / 2);
  assert_int_equal(o.t.timed_out, 0);
  assert_true(o.queue_max == 8);
  assert_true(o.ttft_p99 < 10);
  assert_int_equal(o.t.slo_met, o.t.completed);
  assert_close(o.slo, (double)o.t.completed / (double)o.t.arrived, 1e-12, 0);
}

/* ---- 6. A prefill's end without its own event --------------------------- */

/* A decodes alone from its prefill's end; B arrives at 0.5 s, pauses it for
 * B's prefill, and the two decode together until B is done, then A alone.
 * No prefill's end has an event of its own (each is folded into the next
 * completion, A's into the arrival's catch-up), yet each is processed at
 * its exact time: the hand's TTFTs and TPOTs, with samples taken in B's
 * prefill and between its end and B's completion, and 4 events run for 2
 * requests. */
static void folded_prefill_end_is_exact(void **state) {
  (void)state;
  const trace_row rows[] = {{0, 512, 400}, {0.5, 2000, 100}};
  char yaml[8192];
  trace_yaml(yaml, sizeof yaml, "Llama-3.1-8B", "",
             write_trace("inf_fold.csv", rows, 2));
  rig g;
  rig_open(&g, H100, yaml, 1, INFINITY);
  const rl_replica *r = &g.r;
  double pa = rl_prefill_s(r, 512, 1), b1 = 0.5 + rl_prefill_s(r, 2000, 1);
  double va = (0.5 - pa) / rl_decode_step_s(r, 1, 513, 1);
  assert_true(va > 0 && va < 300); /* B finishes first */
  double tb = b1 + 99 * rl_decode_step_s(r, 2, (513 + va + 2001) / 2, 1);
  double ta = tb + (300 - va) * rl_decode_step_s(r, 1, 612 + va, 1);
  const double at[] = {(0.5 + b1) / 2, (b1 + tb) / 2, (tb + ta) / 2, ta + 1};
  const double ttft[] = {NAN, NAN, b1 - 0.5, pa};
  const double tpot[] = {NAN, NAN, (tb - b1) / 99, (ta - pa) / 399};
  for (size_t k = 0; k < N_OF(at); k++) {
    double row[INF_NCOLS];
    run_to(&g, at[k]);
    double dt = sample(&g, row);
    assert_close(row[INF_REQUESTS_PER_S] * dt, k < 2 ? 0 : 1, 1e-9, 0);
    if (k >= 2) {
      assert_close(row[INF_TTFT_P50], ttft[k], 1e-12, 0);
      assert_close(row[INF_TPOT_P50], tpot[k], 1e-9, 1e-15);
    }
  }
  inf_totals t = inf_totals_of(g.s);
  assert_int_equal(t.completed, 2);
  assert_close(t.tokens_generated, 500, 1e-12, 0);
  assert_int_equal(sim_engine_events_run(g.e), 4);
  rig_close(&g);
}

/* A joiner whose client gives up during its prefill, alone or pausing
 * another's decode: that prefill's end keeps its event, so it times out at
 * its exact end, and the decode it paused resumes then. */
typedef struct giveup_case {
  const char *name;
  bool decoding; /* a request decodes when the long prompt arrives */
} giveup_case;

static const giveup_case giveup_cases[] = {{"give up: alone", false},
                                           {"give up: pausing a decode", true}};

static void joiner_times_out_at_its_prefill_end(void **state) {
  const giveup_case *gc = *state;
  /* A trace starts at its first row: the long prompt alone comes at 0. */
  double at = gc->decoding ? 0.1 : 0;
  const trace_row rows[] = {{0, 512, 400}, {at, 20000, 100}};
  size_t n = gc->decoding ? 2 : 1;
  const char *path = write_trace("inf_giveup.csv", rows + 2 - n, n);
  char extra[64], yaml[8192];
  trace_yaml(yaml, sizeof yaml, "Llama-3.1-8B", "", path);
  rig g;
  rig_open(&g, H100, yaml, 1, INFINITY); /* for the prefill's length */
  double end = at + rl_prefill_s(&g.r, 20000, 1);
  rig_close(&g);
  snprintf(extra, sizeof extra, "timeout: %.9f s\n", (end - at) / 2);
  trace_yaml(yaml, sizeof yaml, "Llama-3.1-8B", extra, path);
  rig_open(&g, H100, yaml, 1, INFINITY);
  run_to(&g, end - 1e-6);
  inf_totals t = inf_totals_of(g.s);
  assert_int_equal(t.timed_out, 0);
  assert_int_equal(t.in_batch, n);
  run_to(&g, end + 1e-6);
  t = inf_totals_of(g.s);
  assert_int_equal(t.timed_out, 1);
  assert_int_equal(t.in_batch, n - 1);
  run_to(&g, 60);
  t = inf_totals_of(g.s);
  assert_int_equal(t.completed, n - 1);
  assert_conserved(&t);
  rig_close(&g);
}

int main(void) {
  struct CMUnitTest tests[64];
  size_t n = 0;
  TEST_ADD(tests, n, conservation_at_any_time);
  TEST_ADD(tests, n, replicas_down_drop_and_recover);
  TEST_ROWS(tests, n, processor_sharing_is_exact, ps_cases);
  TEST_ADD(tests, n, light_load_latency);
  TEST_ADD(tests, n, kv_cache_bounds_the_batch);
  TEST_ADD(tests, n, request_larger_than_the_cache_is_rejected);
  TEST_ROWS(tests, n, max_batch_holds_under_overload, overload_cases);
  TEST_ADD(tests, n, timeout_bounds_ttft_under_overload);
  TEST_ADD(tests, n, queue_limit_sheds_arrivals);
  TEST_ADD(tests, n, folded_prefill_end_is_exact);
  TEST_ROWS(tests, n, joiner_times_out_at_its_prefill_end, giveup_cases);
  return _cmocka_run_group_tests("inference", tests, n, test_catalogs_load,
                                 test_catalogs_release);
}
