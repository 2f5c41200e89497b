/* test_inference_energy.c - inference services' activity and energy: the
 * GPUs' energy is the roofline's, ML.ENERGY's tokens per joule against
 * batch size, and clock changes against the roofline. */
#include "test_inference_rig.h"

/* ---- Activity: the GPUs' energy is the roofline's ----------------------- */

typedef struct activity_case {
  const char *name;
  const char *model;
  int tp;
} activity_case;

static const activity_case activity_cases[] = {
    {"activity: 8B on one H100", "Llama-3.1-8B", 1},
    {"activity: 70B on two H100s", "Llama-3.1-70B", 2},
};

/* One request of prompt 1024 and output 128, then idle until 10 s: the
 * mean activity, turned into power, gives the energy of the roofline's
 * prefill and decode powers plus idle power. */
static void activity_gives_roofline_energy(void **state) {
  const activity_case *ac = *state;
  trace_row one = {0, 1024, 128};
  char yaml[8192], extra[64];
  snprintf(extra, sizeof extra, "tp: %d\n", ac->tp);
  trace_yaml(yaml, sizeof yaml, ac->model, extra,
             write_trace("inf_activity.csv", &one, 1));
  rig g;
  rig_open(&g, H100, yaml, 1, INFINITY);
  run_to(&g, 10);
  gpu_load a = inf_take_load(g.s, 0);
  const gpu_spec *gpu = g.r.gpu;
  double pre = rl_prefill_s(&g.r, 1024, 1);
  double dec = 127 * rl_decode_step_s(&g.r, 1, 1025, 1);
  double want = pre * rl_prefill_power_w(&g.r, 1024, 1) +
                dec * rl_step_power_w(&g.r, 1, 1025, 1) +
                (10 - pre - dec) * gpu->idle_w;
  print_message("%s: mean load sm %.4f, mem %.4f, busy %.4f over 10 s, "
                "energy %.1f J a GPU\n",
                ac->name, a.sm, a.mem, a.busy, gpu_load_power(gpu, 1, a) * 10);
  assert_close(gpu_load_power(gpu, 1, a) * 10, want, 1e-9, 0);
  run_to(&g, 20);
  gpu_load none = inf_take_load(g.s, 0);
  assert_close(none.sm + none.mem + none.busy, 0, 0, 0);
  rig_close(&g);
}

/* Two like requests, at 0 s and 25 s, the activity taken at 10, 20 and
 * 30 s: the replica rests through [10, 20] (taking it catches up without
 * advancing, inference_request.c's catch_up), and each busy period's mean
 * is its own: the second request's energy over [20, 30] is the first's
 * over [0, 10], and the resting period's is 0. */
static void a_rest_keeps_each_period_its_own(void **state) {
  (void)state;
  trace_row two[] = {{0, 1024, 128}, {25, 1024, 128}};
  char yaml[8192];
  trace_yaml(yaml, sizeof yaml, "Llama-3.1-8B", "",
             write_trace("inf_rest.csv", two, 2));
  rig g;
  rig_open(&g, H100, yaml, 1, INFINITY);
  gpu_load a[3];
  for (int k = 0; k < 3; k++) {
    run_to(&g, 10.0 * (k + 1));
    a[k] = inf_take_load(g.s, 0);
  }
  assert_true(a[0].sm > 0 && a[0].mem > 0 && a[0].busy > 0);
  assert_true(a[1].sm == 0 && a[1].mem == 0 && a[1].busy == 0);
  assert_close(a[2].sm, a[0].sm, 1e-9, 0);
  assert_close(a[2].mem, a[0].mem, 1e-9, 0);
  assert_close(a[2].busy, a[0].busy, 1e-9, 0);
  rig_close(&g);
}

/* ---- 6. Tokens per joule against batch size, ML.ENERGY ----------------- */

/* The service saturated at max_batch = seqs (ML.ENERGY keeps its server
 * full), prompts of 512 tokens (the CSV does not give them; as in
 * test_roofline), outputs lognormal around the run's mean. Energy is
 * honest: every 100 ms the replica's mean activity becomes gpu_power at
 * full clock over that time, fed back with inf_add_energy; tokens per
 * joule are read over 60-180 s, after the batch has filled. */
static double service_tokens_per_joule(double seqs, const test_mlenergy_row *m,
                                       double *batch) {
  rl_replica r = test_replica(H100, "Llama-3.1-8B", "fp16", 1);
  double serve = seqs / rl_decode_step_s(&r, seqs, 512 + m->avg_output / 2, 1) /
                 m->avg_output;
  char yaml[1024];
  snprintf(yaml, sizeof yaml,
           "name: arena\nmodel: Llama-3.1-8B\nmax_batch: %.0f\narrivals: "
           "{rate: %.3f, prompt: {dist: fixed, mean: 512}, output: {mean: "
           "%.2f, sigma: 0.5}}\n",
           seqs, 2 * serve, m->avg_output);
  rig g;
  rig_open(&g, H100, yaml, 2, INFINITY);
  double row[INF_NCOLS];
  for (int k = 1; k <= 1800; k++) {
    run_to(&g, 0.1 * k);
    gpu_load a = inf_take_load(g.s, 0);
    double phi = gpu_load_clock_under_cap(g.r.gpu, g.r.gpu->tdp_w, a);
    inf_set_clock(g.s, 0, phi);
    inf_add_energy(g.s, gpu_load_power(g.r.gpu, phi, a) * 0.1 * g.r.tp);
    if (k == 600)
      sample(&g, row);
  }
  sample(&g, row);
  *batch = row[INF_BATCH];
  rig_close(&g);
  return row[INF_TOKENS_PER_J];
}

static void tokens_per_joule_rises_with_batch(void **state) {
  (void)state;
  const double seqs[] = {8, 512};
  double prev = 0;
  for (size_t i = 0; i < N_OF(seqs); i++) {
    test_mlenergy_row m;
    if (!test_mlenergy_find(seqs[i], &m))
      fail_msg("no ML.ENERGY row for max_num_seqs %g in %s", seqs[i],
               "mlenergy_v3_llm_runs.csv");
    double batch = 0, tpj = service_tokens_per_joule(seqs[i], &m, &batch);
    double measured = 1 / m.j_per_token;
    print_message("ML.ENERGY 8B H100 max_num_seqs %3.0f: measured %.2f tok/J "
                  "at mean batch %.1f; service %.2f tok/J at mean batch %.1f "
                  "(x%.2f)\n",
                  seqs[i], measured, m.avg_batch, tpj, batch, tpj / measured);
    char figure[96];
    snprintf(figure, sizeof figure,
             "ML.ENERGY Llama-3.1-8B tokens/J, service, max_num_seqs %g",
             seqs[i]);
    validate_row(VALIDATE_KIND_CALIBRATION,
                 "an H100 run: the fit set of the vLLM step costs "
                 "(tools/calibrate.py)",
                 VALIDATE_SERVING, figure,
                 "Chung et al., ML.ENERGY v3, NeurIPS D&B 2025",
                 "1 x H100, served 180 s at twice the decode rate, prompt 512",
                 "tokens/J", measured, tpj, measured / 1.5, 1.5 * measured,
                 "x/ 1.5");
    assert_true(tpj > prev);
    assert_true(tpj <= 1.5 * measured && tpj >= measured / 1.5);
    prev = tpj;
  }
}

/* ---- 9. Clock changes against the roofline ------------------------------ */

typedef enum clock_at { BEFORE, MID_PREFILL, MID_DECODE } clock_at;

typedef struct clock_case {
  const char *name;
  int count; /* identical requests arriving together at 0 */
  long prompt, output;
  clock_at at;
  double phi;
  bool compute_bound; /* whether the decode after the change is */
} clock_case;

static const clock_case clock_cases[] = {
    {"clock: halved before, memory-bound", 1, 2048, 64, BEFORE, 0.5, false},
    {"clock: halved mid-prefill", 1, 2048, 64, MID_PREFILL, 0.5, false},
    {"clock: halved mid-decode, memory-bound", 1, 2048, 64, MID_DECODE, 0.5,
     false},
    {"clock: halved mid-decode, compute-bound", 160, 100, 30, MID_DECODE, 0.5,
     true},
};

typedef struct clock_hand {
  double change_s;      /* when the clock changes */
  double ttft, tpot;    /* of every request */
  double step1, step_x; /* decode steps before and after the change */
  double step_full;     /* the step after, had the clock stayed full */
} clock_hand;

/* The requests' prefill at full clock, in arrival order. */
static double prefill_of(const rl_replica *r, const clock_case *cc,
                         double phi) {
  double t = 0;
  for (int i = 0; i < cc->count; i++)
    t += rl_prefill_s(r, (double)cc->prompt, phi);
  return t;
}

static clock_hand hand_clock(const rl_replica *r, const clock_case *cc) {
  clock_hand h = {0};
  double b = cc->count, p = (double)cc->prompt, o = (double)cc->output;
  double t1 = prefill_of(r, cc, 1), tx = prefill_of(r, cc, cc->phi);
  h.step1 = rl_decode_step_s(r, b, p + 1, 1);
  if (cc->at != MID_DECODE) {
    h.change_s = cc->at == BEFORE ? 0 : sim_time_to_s(to_ns(t1 / 2));
    h.ttft = cc->at == BEFORE ? tx : h.change_s + (1 - h.change_s / t1) * tx;
    h.step_x = rl_decode_step_s(r, b, p + 1, cc->phi);
    h.step_full = h.step1;
    h.tpot = h.step_x;
    return h;
  }
  /* The step is re-evaluated at the change, at the context reached. */
  h.change_s = sim_time_to_s(to_ns(t1 + (o - 1) / 3 * h.step1));
  double v = (h.change_s - t1) / h.step1;
  h.ttft = t1;
  h.step_x = rl_decode_step_s(r, b, p + 1 + v, cc->phi);
  h.step_full = rl_decode_step_s(r, b, p + 1 + v, 1);
  h.tpot = (h.change_s + (o - 1 - v) * h.step_x - t1) / (o - 1);
  return h;
}

static void clock_change_follows_the_roofline(void **state) {
  const clock_case *cc = *state;
  trace_row rows[MAX_REQ];
  for (int i = 0; i < cc->count; i++)
    rows[i] = (trace_row){0, cc->prompt, cc->output};
  char yaml[8192];
  trace_yaml(yaml, sizeof yaml, "Llama-3.1-8B", "max_batch: 512\n",
             write_trace("inf_clock.csv", rows, (size_t)cc->count));
  rig g;
  rig_open(&g, H100, yaml, 1, INFINITY);
  clock_hand h = hand_clock(&g.r, cc);
  if (cc->at != BEFORE) /* else before the arrivals at 0 run */
    run_to(&g, h.change_s);
  assert_int_equal(inf_set_clock(g.s, 0, cc->phi), SIM_OK);
  run_to(&g, 30);
  double row[INF_NCOLS];
  sample(&g, row);
  print_message("%s: TTFT %.3f ms, TPOT %.4f ms; decode step %.4f ms at "
                "full clock, %.4f ms after (x%.3f at that context)\n",
                cc->name, 1e3 * row[INF_TTFT_P50], 1e3 * row[INF_TPOT_P50],
                1e3 * h.step1, 1e3 * h.step_x, h.step_x / h.step_full);
  assert_close(row[INF_TTFT_P50], h.ttft, 1e-9, 0);
  assert_close(row[INF_TPOT_P50], h.tpot, 1e-9, 0);
  assert_close(row[INF_TPOT_P99], h.tpot, 1e-9, 0);
  if (cc->compute_bound) /* slower, but not by 1 / phi */
    assert_true(h.step_x > 1.2 * h.step_full && h.step_x < 2 * h.step_full);
  else { /* memory-bound decode slows only by its fixed costs' kernels
          * (beta = 0; models/work/roofline.h, t_fixed(phi))... */
    rl_step s;
    rl_decode_step(&g.r, cc->count, (double)cc->prompt + 1, 1, &s);
    double a = g.r.cfg.act_fixed;
    assert_close(h.step_x, h.step_full + a * s.t_fixed * (1 / cc->phi - 1),
                 1e-9, 0);
  }
  /* ... while a prefill at half clock takes twice as long. */
  if (cc->at == BEFORE)
    assert_close(h.ttft, 2 * prefill_of(&g.r, cc, 1), 1e-12, 0);
  rig_close(&g);
}

static void clock_refuses_bad_arguments(void **state) {
  (void)state;
  rig g;
  rig_open(&g, H100, "name: a\nmodel: Llama-3.1-8B\narrivals: {rate: 1}\n", 1,
           1);
  assert_int_equal(inf_set_clock(g.s, 1, 0.5), SIM_EINVAL);
  assert_int_equal(inf_set_clock(g.s, 0, 0), SIM_EINVAL);
  assert_int_equal(inf_set_clock(g.s, 0, 1.5), SIM_EINVAL);
  assert_int_equal(inf_set_clock(g.s, 0, NAN), SIM_EINVAL);
  assert_int_equal(inf_replicas(g.s), 1);
  assert_ptr_equal(inf_config_of(g.s), &g.c);
  rig_close(&g);
}

int main(void) {
  struct CMUnitTest tests[64];
  size_t n = 0;
  TEST_ROWS(tests, n, activity_gives_roofline_energy, activity_cases);
  TEST_ADD(tests, n, a_rest_keeps_each_period_its_own);
  TEST_ADD(tests, n, tokens_per_joule_rises_with_batch);
  TEST_ROWS(tests, n, clock_change_follows_the_roofline, clock_cases);
  TEST_ADD(tests, n, clock_refuses_bad_arguments);
  return _cmocka_run_group_tests("inference_energy", tests, n,
                                 test_catalogs_load, test_catalogs_release);
}
