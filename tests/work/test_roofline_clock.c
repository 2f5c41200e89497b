/* test_roofline_clock.c - a decode step below full clock (roofline.c,
 * rl_decode_step): its work is found once and priced twice, at its clock
 * and at full clock for its load. Held bit for bit: the load is the full
 * clock step's, the bytes and all-reduces do not depend on the clock, and
 * the times are the work over the rates at the clock, written out here
 * from the public figures (llm.h, gpu.h) in roofline.h's order. And a
 * prefill's time and load at once (rl_prefill) are rl_prefill_s's and
 * rl_prefill_load's. A step at clock terms kept (rl_clock_of,
 * rl_decode_step_at) is rl_decode_step's, and at batch terms kept too
 * (rl_batch_of, rl_decode_step_batch); a prefill at kept clocks
 * (rl_prefill_at) is rl_prefill's. A price from a batch's terms at full
 * clock kept (rl_batch_full_of, rl_decode_price) is the step's time, times
 * and load; a prefill from the prefill's terms kept (rl_prefill_kept) is
 * rl_prefill_at's. rl_fmax and rl_fmin are libm's. */
#include "test_catalogs.h"
#include "test_replica.h"
#include "test_util.h"

#include <math.h>
#include <string.h>

#include "roofline.h"

typedef struct clock_row {
  const char *name;
  const char *gpu, *model, *precision;
  int tp;
} clock_row;

static const clock_row rows[] = {
    {"8B fp16 H100", "H100-SXM", "Llama-3.1-8B", "fp16", 1},
    {"70B fp16 2 x H100", "H100-SXM", "Llama-3.1-70B", "fp16", 2},
    {"Qwen3-235B fp4 B200", "B200", "Qwen3-235B-A22B", "fp4", 1},
};

static void same_bits(double got, double want, const char *what) {
  if (memcmp(&got, &want, sizeof got) != 0)
    fail_msg("%s %.17g, want %.17g", what, got, want);
}

/* Checks one step at phi against the full clock's and the formulas. */
static void check_step(const rl_replica *r, double b, double ctx, double phi) {
  rl_step s, f;
  rl_decode_step(r, b, ctx, phi, &s);
  rl_decode_step(r, b, ctx, 1, &f);
  assert_memory_equal(&s.load, &f.load, sizeof s.load);
  same_bits(s.bytes, f.bytes, "bytes");
  same_bits(s.t_tp, f.t_tp, "t_tp");
  const llm_model *m = r->model;
  const gpu_spec *g = r->gpu;
  double p = fmin(1, fmax(phi, gpu_phi_min(g))), seqs = b * r->cfg.beams;
  double rate = r->tp * gpu_peak_flops(g, r->weights->compute) *
                r->cfg.eff_flops * gpu_speed_compute(g, p);
  double bw = r->tp * g->achievable_bps * gpu_speed_memory(g, p);
  double d_attn = (double)(m->attention_heads * m->head_dim);
  same_bits(s.t_gemm, seqs * llm_flops_per_token(m) / rate, "t_gemm");
  same_bits(s.t_attn, seqs * 4.0 * (double)m->layers * d_attn * ctx / rate,
            "t_attn");
  same_bits(s.t_kv,
            seqs * ctx * llm_kv_bytes_per_token(m, r->kv) /
                (bw * r->cfg.eff_bw),
            "t_kv");
  const rl_config *c = &r->cfg;
  double fixed = seqs * c->seq_overhead_s +
                 (double)m->moe_layers * c->moe_layer_overhead_s +
                 c->step_overhead_s;
  same_bits(s.t_fixed,
            fixed * (1 - c->act_fixed + c->act_fixed / gpu_speed_compute(g, p)),
            "t_fixed");
}

static void a_clocked_step_is_its_work_at_its_clock(void **state) {
  const clock_row *row = *state;
  rl_replica r = test_replica(row->gpu, row->model, row->precision, row->tp);
  static const double phis[] = {1, 0.93, 0.71, 0.5, 0.2};
  static const double batches[] = {1, 7, 64, 300}, ctxs[] = {100, 3000.5};
  for (size_t i = 0; i < sizeof phis / sizeof *phis; i++)
    for (size_t j = 0; j < sizeof batches / sizeof *batches; j++)
      for (size_t k = 0; k < sizeof ctxs / sizeof *ctxs; k++)
        check_step(&r, batches[j], ctxs[k], phis[i]);
}

/* A step priced at clocks worked out once (rl_clock_of, as a request-level
 * replica keeps them between its clock changes) is rl_decode_step's, bit
 * for bit, its load included, for every batch and context at that clock. */
static void a_step_at_kept_clocks_is_the_same_step(void **state) {
  const clock_row *row = *state;
  rl_replica r = test_replica(row->gpu, row->model, row->precision, row->tp);
  static const double phis[] = {1, 0.93, 0.5, 0.01};
  static const double batches[] = {1, 7, 64, 300}, ctxs[] = {0, 100, 3000.5};
  rl_clock full;
  rl_clock_of(&r, 1, &full);
  for (size_t i = 0; i < sizeof phis / sizeof *phis; i++) {
    rl_clock at;
    rl_clock_of(&r, phis[i], &at);
    same_bits(at.key, phis[i], "key");
    for (size_t j = 0; j < sizeof batches / sizeof *batches; j++)
      for (size_t k = 0; k < sizeof ctxs / sizeof *ctxs; k++) {
        rl_step got, want;
        rl_decode_step_at(&r, batches[j], ctxs[k], &at, &full, &got);
        rl_decode_step(&r, batches[j], ctxs[k], phis[i], &want);
        assert_memory_equal(&got, &want, sizeof got);
      }
  }
}

/* rl_prefill gives rl_prefill_s's time and rl_prefill_load's load, bit
 * for bit, for prompts from empty to long and clocks down to the floor. */
static void a_prefill_is_its_time_and_load(void **state) {
  const clock_row *row = *state;
  rl_replica r = test_replica(row->gpu, row->model, row->precision, row->tp);
  static const double phis[] = {1, 0.77, 0.5, 0.1};
  static const double prompts[] = {0, 1, 37, 1024, 30000.5};
  for (size_t i = 0; i < sizeof phis / sizeof *phis; i++)
    for (size_t j = 0; j < sizeof prompts / sizeof *prompts; j++) {
      double t;
      gpu_load l, want = rl_prefill_load(&r, prompts[j]);
      rl_prefill(&r, prompts[j], phis[i], &t, &l);
      same_bits(t, rl_prefill_s(&r, prompts[j], phis[i]), "prefill t");
      assert_memory_equal(&l, &want, sizeof l);
    }
}

/* A batch's terms worked out once (rl_batch_of, as a request-level
 * replica keeps them while its batch keeps its size) give
 * rl_decode_step_at's step, bit for bit, at every context and clock, and
 * rl_decode_step_batch_s its time. */
static void a_step_at_a_kept_batch_is_the_same_step(void **state) {
  const clock_row *row = *state;
  rl_replica r = test_replica(row->gpu, row->model, row->precision, row->tp);
  static const double phis[] = {1, 0.93, 0.5, 0.01};
  static const double batches[] = {1, 7, 64, 300}, ctxs[] = {0, 100, 3000.5};
  rl_clock full, at[4];
  rl_clock_of(&r, 1, &full);
  for (size_t i = 0; i < 4; i++)
    rl_clock_of(&r, phis[i], &at[i]);
  for (size_t j = 0; j < sizeof batches / sizeof *batches; j++) {
    rl_batch b;
    rl_batch_of(&r, batches[j], &b);
    same_bits(b.key, batches[j], "key");
    for (size_t i = 0; i < 4; i++)
      for (size_t k = 0; k < sizeof ctxs / sizeof *ctxs; k++) {
        rl_step got, want;
        rl_decode_step_batch(&r, &b, ctxs[k], &at[i], &full, &got);
        rl_decode_step_at(&r, batches[j], ctxs[k], &at[i], &full, &want);
        assert_memory_equal(&got, &want, sizeof got);
        same_bits(rl_decode_step_batch_s(&b, ctxs[k], &at[i]), want.t, "t");
      }
  }
}

/* The rows of the price: the clock rows, and an expert-parallel MoE at
 * block-scaled FP8, whose weights' stream is capped (its dequantisation
 * time) and whose critical path is the busiest GPU's experts. */
typedef struct price_row {
  const char *name;
  const char *gpu, *model, *precision;
  int tp, ep;
} price_row;

static const price_row price_rows[] = {
    {"8B fp16 H100", "H100-SXM", "Llama-3.1-8B", "fp16", 1, 1},
    {"70B fp16 2 x H100", "H100-SXM", "Llama-3.1-70B", "fp16", 2, 1},
    {"Qwen3-235B fp4 B200", "B200", "Qwen3-235B-A22B", "fp4", 1, 1},
    {"Qwen3-235B fp8-block 4 x H100 ep 4", "H100-SXM", "Qwen3-235B-A22B",
     "fp8-block", 4, 4},
};

/* A price row's replica, with its expert parallelism. */
static rl_replica price_replica(const price_row *row) {
  rl_replica r = test_replica(row->gpu, row->model, row->precision, row->tp);
  r.ep = row->ep;
  return r;
}

/* A batch's terms with its full clock's (rl_batch_full_of, as a
 * request-level service keeps them for each size) give, through
 * rl_decode_price, rl_decode_step_batch's time, compute and memory times
 * and load, bit for bit, at every context and clock (full, below it, below
 * the floor), and through rl_decode_price_s rl_decode_step_batch_s's
 * time; its rl_batch is rl_batch_of's. */
static void a_price_is_the_kept_batch_s_step(void **state) {
  rl_replica r = price_replica(*state);
  static const double phis[] = {1, 0.93, 0.5, 0.01};
  static const double batches[] = {1, 2, 7, 64, 300};
  static const double ctxs[] = {0, 1, 100, 3000.5, 1e6};
  rl_clock full, at[4];
  rl_clock_of(&r, 1, &full);
  for (size_t i = 0; i < 4; i++)
    rl_clock_of(&r, phis[i], &at[i]);
  for (size_t j = 0; j < sizeof batches / sizeof *batches; j++) {
    rl_batch want_b;
    rl_batch_full f;
    rl_batch_of(&r, batches[j], &want_b);
    rl_batch_full_of(&r, batches[j], &full, &f);
    assert_memory_equal(&f.b, &want_b, sizeof want_b);
    for (size_t i = 0; i < 4; i++)
      for (size_t k = 0; k < sizeof ctxs / sizeof *ctxs; k++) {
        rl_step want;
        rl_price got;
        rl_decode_step_batch(&r, &want_b, ctxs[k], &at[i], &full, &want);
        rl_decode_price(&f, ctxs[k], &at[i], &full, &got);
        same_bits(got.t, want.t, "t");
        same_bits(got.t_comp, want.t_comp, "t_comp");
        same_bits(got.t_mem, want.t_mem, "t_mem");
        assert_memory_equal(&got.load, &want.load, sizeof got.load);
        same_bits(rl_decode_price_s(&f, ctxs[k], &at[i], &full), want.t,
                  "price_s t");
      }
  }
}

/* A prefill at clocks worked out once (rl_prefill_at) is rl_prefill's,
 * bit for bit, time and load, down to the GPU's floor and below it. */
static void a_prefill_at_kept_clocks_is_the_same_prefill(void **state) {
  const clock_row *row = *state;
  rl_replica r = test_replica(row->gpu, row->model, row->precision, row->tp);
  static const double phis[] = {1, 0.77, 0.5, 0.01};
  static const double prompts[] = {0, 1, 37, 1024, 30000.5};
  rl_clock full;
  rl_clock_of(&r, 1, &full);
  for (size_t i = 0; i < sizeof phis / sizeof *phis; i++) {
    rl_clock at;
    rl_clock_of(&r, phis[i], &at);
    for (size_t j = 0; j < sizeof prompts / sizeof *prompts; j++) {
      double t, want_t;
      gpu_load l, want_l;
      rl_prefill_at(&r, prompts[j], &at, &full, &t, &l);
      rl_prefill(&r, prompts[j], phis[i], &want_t, &want_l);
      same_bits(t, want_t, "prefill t");
      assert_memory_equal(&l, &want_l, sizeof l);
    }
  }
}

/* A prefill from the replica's prefill terms kept (rl_prefill_terms_of,
 * rl_prefill_kept, as a request-level service keeps them) is
 * rl_prefill_at's, bit for bit, time and load, with and without
 * all-reduces (tp 1, rings, expert parallelism's all-to-alls), prompts
 * from empty to long and clocks down to below the floor. */
static void a_prefill_from_kept_terms_is_the_same_prefill(void **state) {
  rl_replica r = price_replica(*state);
  static const double phis[] = {1, 0.77, 0.5, 0.01};
  static const double prompts[] = {0, 1, 37, 1024, 30000.5};
  rl_clock full;
  rl_prefill_terms p = {0};
  rl_clock_of(&r, 1, &full);
  rl_prefill_terms_of(&r, &p);
  assert_true(p.ready);
  for (size_t i = 0; i < sizeof phis / sizeof *phis; i++) {
    rl_clock at;
    rl_clock_of(&r, phis[i], &at);
    for (size_t j = 0; j < sizeof prompts / sizeof *prompts; j++) {
      double t, want_t;
      gpu_load l, want_l;
      rl_prefill_kept(&r, &p, prompts[j], &at, &full, &t, &l);
      rl_prefill_at(&r, prompts[j], &at, &full, &want_t, &want_l);
      same_bits(t, want_t, "prefill t");
      assert_memory_equal(&l, &want_l, sizeof l);
    }
  }
}

/* rl_fmax and rl_fmin give libm's fmax and fmin bits: NaN on either side
 * (the other), infinities, the smallest subnormal; zeros of two signs
 * (either may come back, roofline.h) as equal values. Read through
 * volatile so the compiler cannot fold libm's call. */
static void fmax_and_fmin_are_libm_s(void **state) {
  (void)state;
  static const double xs[] = {0,      -0.0,  1,        -1,        0x1p-1074,
                              2.5e-5, 1e300, INFINITY, -INFINITY, NAN};
  enum { N = sizeof xs / sizeof xs[0] };
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      volatile double a = xs[i], b = xs[j];
      if (a == 0 && b == 0) {
        assert_true(rl_fmax(a, b) == 0 && rl_fmin(a, b) == 0);
        continue;
      }
      same_bits(rl_fmax(a, b), fmax(a, b), "fmax");
      same_bits(rl_fmin(a, b), fmin(a, b), "fmin");
    }
}

int main(void) {
  struct CMUnitTest tests[24];
  size_t n = 0;
  TEST_ROWS(tests, n, a_clocked_step_is_its_work_at_its_clock, rows);
  TEST_ROWS(tests, n, a_step_at_kept_clocks_is_the_same_step, rows);
  TEST_ROWS(tests, n, a_prefill_is_its_time_and_load, rows);
  TEST_ROWS(tests, n, a_step_at_a_kept_batch_is_the_same_step, rows);
  TEST_ROWS(tests, n, a_prefill_at_kept_clocks_is_the_same_prefill, rows);
  TEST_ROWS(tests, n, a_price_is_the_kept_batch_s_step, price_rows);
  TEST_ROWS(tests, n, a_prefill_from_kept_terms_is_the_same_prefill,
            price_rows);
  TEST_ADD(tests, n, fmax_and_fmin_are_libm_s);
  return _cmocka_run_group_tests("roofline_clock", tests, n, test_catalogs_load,
                                 test_catalogs_release);
}
