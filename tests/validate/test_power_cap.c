/* test_power_cap.c - LLM inference under a GPU power limit against a
 * published characterisation no constant was fitted to, and what a deep
 * cap does to a decode-heavy service, for docs/VALIDATION.md.
 *
 * Splitwise (Patel et al., "Splitwise: Efficient generative LLM inference
 * using phase splitting", ISCA 2024) measured Llama-2-70B on DGX-H100
 * under a power cap; its simulator ships the result as the power-capped
 * profile h100-80gb-pcap of data/gpu_power/perf_model.csv: the prompt
 * phase 1.30x slower, the token phase unchanged, on a server capped at
 * 7,140 W of its 10,200 W (Mutinifni/splitwise-sim, configs/hardware_repo/
 * skus/dgx-h100-pcap.yaml against dgx-h100.yaml): 70%, taken here as 70%
 * of each GPU's 700 W, 490 W (the per-GPU limit is our reading of the
 * server's). The profile is Splitwise's model of their measurement, not
 * a raw trace (data/SOURCES.md says so). Bands, chosen before the model
 * was run: +-15% on the prefill slowdown, +-10% on the decode step.
 *
 * KNOWN GAP, shown failing and not asserted: the prefill slows 1.07x, not
 * 1.30x. At tp 8 the prompt's all-reduces leave the SMs busy 3/4 of the
 * prefill, so it asks about 550 W at full clock and 490 W costs it 9% of
 * its clock under phi^2.5 (Hopper has no measured cap-to-clock curve:
 * docs/MODELS.md); a GPU at its 700 W would lose 16%. The decode half
 * holds: a memory-bound step at 400 W does not feel a 490 W limit.
 *
 * The 8B service at 200 W: one H100 serving Llama-3.1-8B at ML.ENERGY's
 * lm-arena-chat lengths (serve_run.h: saturated, the batch formed by the
 * service up to 256). Before the GPU model followed memory traffic it
 * kept 76% of its tokens/s at a 200 W limit and doubled its tokens/J; no
 * measurement says a decode at 29% of the TDP keeps that (the issue's
 * bar: it no longer does). */
#include "test_catalogs.h"
#include "test_replica.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>

#include "serve_run.h"
#include "validate_row.h"

static const char splitwise[] =
    "Patel et al., Splitwise, ISCA 2024 (data/gpu_power/perf_model.csv, "
    "h100-80gb-pcap)";

/* The clock a load gets under a per-GPU limit. */
static double clock_at(const rl_replica *r, double limit_w, gpu_load l) {
  return gpu_load_clock_under_cap(r->gpu, limit_w, l);
}

static void splitwise_prefill_slows_decode_does_not(void **state) {
  (void)state;
  rl_replica r = test_replica("H100-SXM", "Llama-2-70B", "fp16", 8);
  const double cap = 0.7 * r.gpu->tdp_w, prompt = 1024;
  double pre_phi = clock_at(&r, cap, rl_prefill_load(&r, prompt));
  double pre = rl_prefill_s(&r, prompt, pre_phi) / rl_prefill_s(&r, prompt, 1);
  rl_step s;
  rl_decode_step(&r, 16, prompt + 64, 1, &s);
  double dec_phi = clock_at(&r, cap, s.load);
  double dec = rl_decode_step_s(&r, 16, prompt + 64, dec_phi) / s.t;
  print_message("Llama-2-70B tp 8 on H100 at 490 W: prefill clock %.3f, %.3fx "
                "slower; decode (batch 16) clock %.3f, %.3fx (power uncapped "
                "%.0f W)\n",
                pre_phi, pre, dec_phi, dec, gpu_load_power(r.gpu, 1, s.load));
  validate_row(VALIDATE_KIND_VALIDATION,
               "nothing was fitted to Splitwise's capped profile",
               VALIDATE_SERVING,
               "Power-capped DGX-H100: prefill time, capped / uncapped",
               splitwise,
               "Llama-2-70B FP16, tp 8, prompt 1024, GPUs at 490 W (70%)",
               "x uncapped", 1.30, pre, 1.30 * 0.85, 1.30 * 1.15,
               "+-15% (KNOWN GAP, the test's header)");
  validate_row(
      VALIDATE_KIND_CALIBRATION,
      "the memory knee (50%, an estimate) was set below the clock this "
      "profile implies",
      VALIDATE_SERVING, "Power-capped DGX-H100: decode step, capped / uncapped",
      splitwise, "Llama-2-70B FP16, tp 8, batch 16, GPUs at 490 W (70%)",
      "x uncapped", 1.00, dec, 0.9, 1.1, "+-10%");
  assert_true(pre > 1); /* the direction holds; the size is the gap */
  assert_true(fabs(dec - 1) <= 0.10);
}

static serve_result serve_8b(double limit_w) {
  rl_replica r = test_replica("H100-SXM", "Llama-3.1-8B", "fp16", 1);
  serve_spec s = {.replica = &r,
                  .replicas = 1,
                  .max_batch = 256,
                  .prompt = 512,
                  .output = 400,
                  .output_sigma = 0.8,
                  .limit_w = limit_w,
                  .seed = 1};
  serve_result res;
  sim_error err = {0};
  if (serve_run(&s, &res, &err) != SIM_OK)
    fail_msg("%s", err.msg);
  return res;
}

static void deep_cap_slows_decode(void **state) {
  (void)state;
  serve_result full = serve_8b(0), low = serve_8b(200);
  double kept = low.tokens_per_s / full.tokens_per_s;
  print_message("8B on one H100, saturated: 700 W %.0f tok/s at batch %.0f, "
                "%.0f W, %.2f tok/J; 200 W %.0f tok/s at batch %.0f, %.0f W "
                "(clock %.3f), %.2f tok/J: keeps %.0f%% of its tokens/s\n",
                full.tokens_per_s, full.batch, full.power_w, full.tokens_per_j,
                low.tokens_per_s, low.batch, low.power_w, low.phi,
                low.tokens_per_j, 100 * kept);
  validate_row(VALIDATE_KIND_BAR,
               "the issue's target: not 76% without a measurement",
               VALIDATE_SERVING, "8B service at a 200 W limit: tokens/s kept",
               "the issue's bar: no longer 76% without a measurement",
               "Llama-3.1-8B FP16 on one H100, saturated, max_batch 256",
               "x 700 W", 0.76, kept, 0, 0.76, "below 76%");
  validate_row(VALIDATE_KIND_BAR,
               "the issue's target: not doubled without a measurement",
               VALIDATE_SERVING, "8B service at a 200 W limit: tokens/J",
               "the issue's bar: the 13.2 -> 27.9 tokens/J was not measured",
               "Llama-3.1-8B FP16 on one H100, saturated, max_batch 256",
               "x 700 W", 27.9 / 13.2, low.tokens_per_j / full.tokens_per_j, 0,
               27.9 / 13.2, "below 2.11x");
  assert_true(kept < 0.76);
  assert_true(low.power_w <= 200 * 1.02);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(splitwise_prefill_slows_decode_does_not),
      cmocka_unit_test(deep_cap_slows_decode),
  };
  return cmocka_run_group_tests_name("power_cap", tests, test_catalogs_load,
                                     test_catalogs_release);
}
