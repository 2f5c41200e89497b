/* test_roofline_fp8.c - block-scaled FP8 weights (the catalog's
 * fp8-block, roofline.h t_dequant): the catalog's weight_stream is the
 * published kernel measurement it cites, and the step model streams such
 * weights at that share of the achievable bandwidth where the engine's
 * eff_bw is above it, the SMs busy through the time beyond the engine's
 * stream; per-channel fp8 and an engine below the share are untouched. */
#include "test_catalogs.h"
#include "test_replica.h"
#include "test_util.h"

#include <math.h>
#include <stdlib.h>

#include "roofline.h"

/* DeepGEMM's README (github.com/deepseek-ai/DeepGEMM, commit 8002b769,
 * 'Normal GEMMs for dense models', H800 SXM5): GB/s of its rows at M = 64
 * and M = 128, the decode-sized batches. */
static const double deepgemm_gbs[] = {1688, 2455, 2143, 2668, 2320, 2470,
                                      1509, 2448, 2103, 2604, 2221, 2277};
#define N_GBS (sizeof deepgemm_gbs / sizeof deepgemm_gbs[0])

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static const llm_precision *prec(const char *name) {
  const llm_precision *p = llm_catalog_precision(&cats.llm, name);
  if (p == NULL)
    fail_msg("no precision %s", name);
  return p;
}

/* The median of the cited figures over the H100-SXM's achievable read
 * bandwidth (the H800 SXM5's memory is the H100 SXM5's), to the catalog's
 * 0.1 per cent; the other precisions keep the engine's stream. */
static void weight_stream_is_the_cited_figure(void **state) {
  (void)state;
  double v[N_GBS];
  for (size_t i = 0; i < N_GBS; i++)
    v[i] = deepgemm_gbs[i];
  qsort(v, N_GBS, sizeof v[0], by_value);
  double median = (v[N_GBS / 2 - 1] + v[N_GBS / 2]) / 2 * 1e9;
  assert_close(median, 2298.5e9, 0, 0);
  const gpu_spec *h100 = gpu_catalog_find(&cats.gpu, "H100-SXM");
  assert_non_null(h100);
  assert_close(prec("fp8-block")->weight_stream, median / h100->achievable_bps,
               0, 0.0005);
  assert_close(prec("fp8-block")->bits_per_weight, 8 + 32.0 / (128 * 128), 0,
               0);
  static const char *const others[] = {"fp16", "fp8", "fp4", "mxfp4"};
  for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
    assert_close(prec(others[i])->weight_stream, 1, 0, 0);
}

typedef struct step_row {
  const char *name;
  const char *gpu, *model;
  int tp, ep;
  double batch;
} step_row;

static const step_row rows[] = {
    {"70B tp4 H100 b16", "H100-SXM", "Llama-3.1-70B", 4, 1, 16},
    {"Qwen3-235B ep4 B200 b64", "B200", "Qwen3-235B-A22B", 4, 4, 64},
    {"Qwen3-235B ep8 H100 b128", "H100-SXM", "Qwen3-235B-A22B", 8, 8, 128},
};

static rl_replica replica(const step_row *row, const char *precision,
                          double eff_bw) {
  rl_replica r = test_replica(row->gpu, row->model, precision, row->tp);
  r.ep = row->ep;
  if (eff_bw > 0)
    r.cfg.eff_bw = eff_bw;
  assert_int_equal(rl_check(&r, NULL), SIM_OK);
  return r;
}

/* At the engine's eff_bw (above the share) the block-scaled weights take
 * eff_bw / weight_stream as long as the per-channel ones, byte for byte;
 * the excess is SM time (t_dequant), so the SMs are busier and the step
 * slower; the KV stream and the FLOPs do not change. */
static void block_fp8_streams_at_the_cited_share(void **state) {
  const step_row *row = *state;
  rl_replica ch = replica(row, "fp8", 0), bl = replica(row, "fp8-block", 0);
  double share = prec("fp8-block")->weight_stream, e = ch.cfg.eff_bw;
  assert_true(share < e);
  rl_step a, b;
  rl_decode_step(&ch, row->batch, 800, 1, &a);
  rl_decode_step(&bl, row->batch, 800, 1, &b);
  double bits = prec("fp8-block")->bits_per_weight / 8;
  assert_close(b.t_weights / a.t_weights, bits * e / share, 1e-12, 0);
  assert_close(a.t_dequant, 0, 0, 0);
  assert_true(b.t_weights > b.t_gemm); /* decode: memory-bound GEMMs */
  assert_close(b.t_dequant, b.t_weights - a.t_weights * bits, 1e-12, 0);
  assert_close(b.t_kv, a.t_kv, 0, 0);
  assert_close(b.t_gemm, a.t_gemm, 0, 0);
  assert_true(b.t > a.t);
  assert_true(b.load.sm > a.load.sm);
}

/* An engine whose own stream is at or below the share pays nothing for
 * the format but its scales' bytes. */
static void an_engine_below_the_share_is_untouched(void **state) {
  const step_row *row = *state;
  double share = prec("fp8-block")->weight_stream;
  rl_replica ch = replica(row, "fp8", share);
  rl_replica bl = replica(row, "fp8-block", share);
  rl_step a, b;
  rl_decode_step(&ch, row->batch, 800, 1, &a);
  rl_decode_step(&bl, row->batch, 800, 1, &b);
  double bits = prec("fp8-block")->bits_per_weight / 8;
  assert_close(b.t_weights / a.t_weights, bits, 1e-12, 0);
  assert_close(b.t_dequant, 0, 0, 0);
}

/* A compute-bound step (prefill-sized batch) counts its tensor pipes
 * busy already: the dequantisation adds no SM time past the weights'. */
static void compute_bound_steps_add_no_sm_time(void **state) {
  (void)state;
  const step_row big = {"8B b4096", "H100-SXM", "Llama-3.1-8B", 1, 1, 4096};
  rl_replica bl = replica(&big, "fp8-block", 0);
  rl_step s;
  rl_decode_step(&bl, big.batch, 800, 1, &s);
  assert_true(s.t_gemm > s.t_weights);
  assert_close(s.t_dequant, 0, 0, 0);
}

int main(void) {
  struct CMUnitTest tests[10];
  size_t n = 0;
  TEST_ADD(tests, n, weight_stream_is_the_cited_figure);
  TEST_ROWS(tests, n, block_fp8_streams_at_the_cited_share, rows);
  TEST_ROWS(tests, n, an_engine_below_the_share_is_untouched, rows);
  TEST_ADD(tests, n, compute_bound_steps_add_no_sm_time);
  return _cmocka_run_group_tests("roofline_fp8", tests, n, test_catalogs_load,
                                 test_catalogs_release);
}
