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
 * KNOWN GAP, shown failing and not asserted: the prefill slows 1.08x, not
 * 1.30x. At tp 8 the prompt's all-reduces leave the SMs busy 3/4 of the
 * prefill, so it asks about 550 W at full clock and 490 W costs it 10% of
 * its clock under phi^2.5 (Hopper has no measured cap-to-clock curve:
 * docs/MODELS.md); a GPU at its 700 W would lose 16%. The decode half
 * holds: a memory-bound step at 445 W does not feel a 490 W limit.
 * The Ampere curve put on the H100 (tried, not kept) makes it 1.03x:
 * near the top of its V/f range a measured curve saves power faster than
 * phi^2.5. What the row hangs on is the per-GPU limit, which the
 * simulator's files do not give (only the server's 7,140 W): the test
 * prints the slowdown at 350 W a GPU (50%, 8 x 350 W and a 4.6 kW host
 * make 7.4 kW, 73% of the server) and at 318 W (the 7,140 W less an
 * undiminished 4.6 kW host), 1.23x and 1.28x, the decode still within
 * 1% at 350 W. Reading the limit from Splitwise's text, not from this
 * row, is what would settle it; the row keeps its 490 W reading.
 *
 * The 8B service at 200 W: one H100 serving Llama-3.1-8B at ML.ENERGY's
 * lm-arena-chat lengths (serve_run.h: saturated, the batch formed by the
 * service up to 256). Before the GPU model followed memory traffic it
 * kept 76% of its tokens/s at a 200 W limit and doubled its tokens/J; no
 * measurement says a decode at 29% of the TDP keeps that (the issue's
 * bar: it no longer does).
 *
 * H200 decode under a cap: Ma, Afzal, Eitzinger and Wellein, "The
 * Illusion of Power Capping in LLM Decode: A Phase-Aware Energy
 * Characterisation Across Attention Architectures", arXiv:2605.11999
 * (2026), abstract: across GQA, MLA, Gated DeltaNet and Mamba2 models on
 * one H200, decode draws only 137-300 W of its 700 W, and no power cap
 * ever triggers. Only the abstract was read: its models, batches and caps
 * are not in this test. Our reading, chosen before the model was run: a
 * GQA model of the size such studies run on one GPU, Llama-3.1-8B at
 * BF16 on the vllm engine, decoding at batch 1 and 64 with a 1,024-token
 * context; its decode power must lie in the published range, and at a
 * 300 W limit (the highest draw measured, so a limit the measured decode
 * never met) it must keep its speed. Nothing was fitted to this paper;
 * the GPU power model's busy_share is fitted on the ML.ENERGY H100 runs
 * (make calibrate) and its pj_per_byte is the published HBM figure. The
 * batch-1 cap row holds (asserted): a 300 W limit lowers the SM clock to
 * about 0.67, the memory-bound decode keeps its speed above the memory
 * knee, and only the fixed costs' kernels slow. KNOWN GAP, shown failing
 * and not asserted: the decode power, about 490-530 W, 1.6-1.8x the top
 * of the measured range; and, from it, batch 64 keeps 0.95, not 0.97:
 * the modelled draw is over 300 W, so the model's cap binds where the
 * measured one never did, and the fixed costs (a quarter of that step)
 * slow with the clock (models/work/roofline.h). The ML.ENERGY H100 runs, the
 * same GH100 die at 3.35 TB/s, draw 430-490 W for this model at batch 8 and
 * 490-690 W at batch 16-256 (data/gpu_power/), so no model fitted to them can
 * put the H200's decode under 300 W; the abstract's runs (models, batches,
 * serving stack) are not known here. Nothing in the GPU itself accounts
 * for the gap: with no HBM power at all the modelled batch-1 draw would
 * still be idle + the busy floor, about 365 W. A reading that fits both
 * measurements is a decode whose GPU waits on the host between kernels
 * (an eager, un-graphed loop at batch 1), which draws near idle for most
 * of each token; vllm's CUDA-graphed steps, ML.ENERGY's, do not. Which
 * the paper ran is in its body, not read here.
 *
 * B200 decode under a cap: Kim et al., "Phase-Decoupled, Model-Calibrated
 * Power Control for Disaggregated LLM Serving", arXiv:2609.11133 (2026):
 * Qwen3-235B-A22B at NVFP4 on B200, prefill and decode on one GPU each
 * (TP1 PD, sglang under NVIDIA Dynamo), closed loop at 24 requests in
 * flight, lengths from six weighted buckets (section 4: inputs 64-2,048
 * tokens, mean 385 by the weights; outputs 32-1,024, mean 206). The
 * decode GPU's natural draw held at 688-689 W in three 24-hour runs
 * (section 5.7; 688.5 is the midpoint); under a cap its tokens/s are
 * flat down to about 430 W and fall 36% at 350 W (figure 3, the
 * calibration sweep, a different run whose natural draw is not stated:
 * its 460 W cap at "80% of natural" puts it near 575 W). The engine's
 * running-request limit (16 unless raised, section 5.6) may have held
 * the decode batch at 16.
 * The model: a decode step of batch 24 at a mean context of 385 + 206 / 2
 * tokens on one B200, vllm's fitted figures (no sglang engine is
 * catalogued), the KV cache at 16 bits (the paper does not say). Bands
 * chosen before the model was run: +-15% on the power, "flat" read as at
 * least 0.90 kept, +-15% on the share kept at 350 W. Nothing was fitted
 * to this paper. The power and the 430 W row hold (the latter asserted).
 * KNOWN GAP, shown failing and not asserted: at 350 W the model keeps
 * 0.87 of its speed where the measurement keeps 0.64. Half of this step
 * (14.7 of 31.7 ms, the test prints them) is the engine's fixed costs,
 * most of them the MoE layers' (94 at vllm's fitted moe_layer_overhead);
 * only their kernels' share act_fixed (45%, the power fit's) follows the
 * SM clock, 0.58 at 350 W, the host's share not (models/work/roofline.h).
 * Keeping 0.64 would need about 77% of the step on the clock: even all of
 * the fixed costs on it keep 0.75, as the other half, memory-bound above
 * the knee, keeps its speed. So the measured loss says either the
 * memory-bound work slows under this cap too (a knee above 0.58 on
 * Blackwell, which no measured B200 cap-to-clock curve here can tell)
 * or the clock falls lower than phi^gamma puts it; sglang's fixed costs
 * may also differ from vllm's fitted ones.
 * Where the 648 W goes (the test prints it): idle 140 W, HBM 108 W
 * (256 W at the datasheet bandwidth x 0.42), core 399 W. A 350 W limit
 * leaves the core 102 W, d(phi) = 0.25, phi = 0.58 under phi^2.5.
 * Neither reading can be settled with a published figure here:
 * - a lower clock: the only measured cap-to-clock curves are Zeus's
 *   (Volta, Turing, Ampere; docs/MODELS.md). Put the Ampere (A40) curve
 *   on the B200 (tried, not kept) and it keeps 0.55 at 350 W but 0.79 at
 *   430 W, where the measurement is flat (>= 0.90): the borrowed curve
 *   misses the same figure's other point. Zeus's d(phi) is a training
 *   workload's whole power above idle, its memory power included, which
 *   does not follow the clock; on top of this model's separate HBM term
 *   it counts that power twice.
 * - a higher knee: the SMs, the L2 and the crossbar, on the SM clock
 *   here, must carry the HBM traffic, so the knee is the share of that
 *   on-chip bandwidth the HBM traffic needs. The B200 has 2.4x the H100's
 *   HBM bandwidth with about 1.1x its SMs, so its knee should be about
 *   twice the H100's, and a knee between 0.58 and 0.73 (the clocks at
 *   350 and 430 W) gives both measured points. Setting it needs a
 *   measured L2 bandwidth of B200 and H100 (and that their L2 follows
 *   the SM clock), not found here; the 50% estimate stays for every
 *   type. */
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

/* Prefill time at limit_w a GPU over that at full clock. */
static double prefill_slowdown(const rl_replica *r, double limit_w,
                               double prompt) {
  double phi = clock_at(r, limit_w, rl_prefill_load(r, prompt));
  return rl_prefill_s(r, prompt, phi) / rl_prefill_s(r, prompt, 1);
}

static void splitwise_prefill_slows_decode_does_not(void **state) {
  (void)state;
  rl_replica r = test_replica("H100-SXM", "Llama-2-70B", "fp16", 8);
  const double cap = 0.7 * r.gpu->tdp_w, prompt = 1024;
  double pre_phi = clock_at(&r, cap, rl_prefill_load(&r, prompt));
  double pre = prefill_slowdown(&r, cap, prompt);
  print_message("the same prefill at other readings of the server's cap: "
                "%.3fx at 350 W a GPU, %.3fx at 318 W\n",
                prefill_slowdown(&r, 350, prompt),
                prefill_slowdown(&r, (7140 - 4600) / 8.0, prompt));
  rl_step s;
  rl_decode_step(&r, 16, prompt + 64, 1, &s);
  double dec_phi = clock_at(&r, cap, s.load);
  double dec = rl_decode_step_s(&r, 16, prompt + 64, dec_phi) / s.t;
  print_message("Llama-2-70B tp 8 on H100 at 490 W: prefill clock %.3f, %.3fx "
                "slower; decode (batch 16) clock %.3f, %.3fx (power uncapped "
                "%.0f W)\n",
                pre_phi, pre, dec_phi, dec, gpu_load_power(r.gpu, 1, s.load));
  validate_row(
      VALIDATE_KIND_VALIDATION,
      "nothing was fitted to Splitwise's capped profile", VALIDATE_SERVING,
      "Power-capped DGX-H100: prefill time, capped / uncapped", splitwise,
      "Llama-2-70B FP16, tp 8, prompt 1024, GPUs at 490 W (70%)", "x uncapped",
      1.30, pre, 1.30 * 0.85, 1.30 * 1.15,
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

static const char ma_illusion[] =
    "Ma et al., The Illusion of Power Capping in LLM Decode, "
    "arXiv:2605.11999, abstract (H200)";

/* One H200 decoding Llama-3.1-8B at batch b: its power at full clock, W,
 * and the share of its speed kept at a limit of limit_w. */
static double h200_decode(double b, double limit_w, double *kept) {
  rl_replica r = test_replica("H200", "Llama-3.1-8B", "fp16", 1);
  const double context = 1024;
  rl_step s;
  rl_decode_step(&r, b, context, 1, &s);
  double phi = clock_at(&r, limit_w, s.load);
  *kept = s.t / rl_decode_step_s(&r, b, context, phi);
  print_message("H200 decode batch %.0f at %.0f W: clock %.3f, step %.2f ms "
                "of which fixed %.2f ms\n",
                b, limit_w, phi, 1e3 * s.t, 1e3 * s.t_fixed);
  return gpu_load_power(r.gpu, 1, s.load);
}

static void h200_decode_row(double b) {
  double kept, p = h200_decode(b, 300, &kept);
  char cond[128], fig[96];
  snprintf(cond, sizeof cond,
           "Llama-3.1-8B BF16 (GQA) on one H200, vllm, decode at batch %.0f, "
           "context 1024 (our reading)",
           b);
  print_message("H200 decode batch %.0f: %.0f W; keeps %.3f at 300 W\n", b, p,
                kept);
  snprintf(fig, sizeof fig, "H200 decode power, GQA 8B, batch %.0f", b);
  validate_row(VALIDATE_KIND_VALIDATION,
               "nothing was fitted to this paper; the power model is fitted "
               "on the ML.ENERGY H100 runs",
               VALIDATE_SERVING, fig, ma_illusion, cond, "W", 300, p, 137, 300,
               "137-300 W, the measured range (KNOWN GAP, the test's header)");
  snprintf(fig, sizeof fig,
           "H200 decode at a 300 W limit: tokens/s kept, batch %.0f", b);
  validate_row(VALIDATE_KIND_VALIDATION,
               "nothing was fitted to this paper: no cap triggers at or above "
               "the highest decode draw measured",
               VALIDATE_SERVING, fig, ma_illusion, cond, "x uncapped", 1, kept,
               0.97, 1.0,
               b > 1 ? ">= 0.97 (KNOWN GAP, the test's header)" : ">= 0.97");
}

static void h200_decode_does_not_meet_the_cap(void **state) {
  (void)state;
  h200_decode_row(1);
  h200_decode_row(64);
  double kept, p1 = h200_decode(1, 700, &kept),
               p64 = h200_decode(64, 700, &kept);
  assert_true(p64 > p1); /* more sequences, more SM work: the direction */
  h200_decode(1, 300, &kept);
  assert_true(kept >= 0.97);
  double kept64;
  h200_decode(64, 300, &kept64);
  assert_true(kept64 < 1 && kept64 <= kept); /* the gap's direction */
}

static const char kim_pd[] =
    "Kim et al., Phase-Decoupled Power Control for Disaggregated LLM "
    "Serving, arXiv:2609.11133";
static const char kim_cond[] =
    "Qwen3-235B-A22B NVFP4, decode alone on one B200 (TP1 PD), 24 requests, "
    "context 488 (ShareGPT lengths of section 4)";

/* The decode GPU of Kim et al.'s TP1 PD lane pair: its power uncapped, W,
 * and the share of its speed kept at limit_w. */
static double b200_decode(double limit_w, double *kept, double *phi_out,
                          rl_step *full) {
  rl_replica r = test_replica("B200", "Qwen3-235B-A22B", "fp4", 1);
  const double batch = 24, context = 385.3 + 206.1 / 2;
  rl_decode_step(&r, batch, context, 1, full);
  double phi = clock_at(&r, limit_w, full->load);
  *phi_out = phi;
  *kept = full->t / rl_decode_step_s(&r, batch, context, phi);
  return gpu_load_power(r.gpu, 1, full->load);
}

static void b200_decode_under_a_cap(void **state) {
  (void)state;
  rl_step s;
  double k430, k350, f430, f350, p = b200_decode(430, &k430, &f430, &s);
  b200_decode(350, &k350, &f350, &s);
  const gpu_spec *g = test_replica("B200", "Qwen3-235B-A22B", "fp4", 1).gpu;
  print_message("B200 decode at full clock: idle %.0f W, HBM %.0f W (mem "
                "%.3f), core %.0f W (busy %.3f, sm %.3f)\n",
                g->idle_w, g->mem_w * s.load.mem, s.load.mem,
                g->busy_w * s.load.busy + gpu_sm_span(g) * s.load.sm,
                s.load.busy, s.load.sm);
  print_message("B200 235B NVFP4 decode: %.0f W uncapped, step %.1f ms of "
                "which fixed %.1f ms; keeps %.3f at 430 W (clock %.3f), %.3f "
                "at 350 W (clock %.3f)\n",
                p, 1e3 * s.t, 1e3 * s.t_fixed, k430, f430, k350, f350);
  validate_row_rel(VALIDATE_KIND_VALIDATION,
                   "nothing was fitted to this paper; the power model is "
                   "fitted on the ML.ENERGY H100 runs",
                   VALIDATE_SERVING,
                   "B200 decode power, uncapped (section 5.7)", kim_pd,
                   kim_cond, "W", 688.5, p, 0.15);
  validate_row(VALIDATE_KIND_VALIDATION, "nothing was fitted to this paper",
               VALIDATE_SERVING,
               "B200 decode at a 430 W limit: tokens/s kept (figure 3, flat)",
               kim_pd, kim_cond, "x uncapped", 1, k430, 0.90, 1.0, ">= 0.90");
  validate_row_rel(VALIDATE_KIND_VALIDATION, "nothing was fitted to this paper",
                   VALIDATE_SERVING,
                   "B200 decode at a 350 W limit: tokens/s kept (figure 3)",
                   kim_pd, kim_cond, "x uncapped", 0.64, k350, 0.15);
  assert_true(k350 <= k430 && k430 <= 1);
  assert_true(k430 >= 0.90);
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
      cmocka_unit_test(h200_decode_does_not_meet_the_cap),
      cmocka_unit_test(b200_decode_under_a_cap),
  };
  return cmocka_run_group_tests_name("power_cap", tests, test_catalogs_load,
                                     test_catalogs_release);
}
