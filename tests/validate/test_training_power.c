/* test_training_power.c - training power against published measurements,
 * and power quality that does not depend on the control period, for
 * docs/VALIDATION.md (tools/validate.py). A training job fills one
 * 8 x H100 HGX node, and another one GB200 NVL72 rack, for 30 min at 40%
 * MFU with no other load; the rows compare the model's power with:
 *  - Latif et al., "Single-Node Power Demand During AI Training:
 *    Measurements on an 8-GPU NVIDIA H100 System", IEEE Access 13 (2025)
 *    61740 (arXiv:2412.08602): node peak about 8.4 kW, 18% below the
 *    10.2 kW rating, "with GPUs near full utilization"; band +-10%.
 *  - Newkirk et al., arXiv:2506.14551 (2025): compute-intensive training
 *    at about 76% of the node's 10.2 kW, 7.75 kW; band +-11.4% (their
 *    calibrated model's mean absolute error).
 *  - Per H100 GPU, 600-700 W: Newkirk's 7.75 kW less the host share (CPUs,
 *    NICs, NVSwitches, fans: 2.3-2.9 kW, half to 63% of the 4.6 kW that
 *    the 10.2 kW rating leaves beyond 8 x 700 W) over 8 GPUs is
 *    (7.75 - 2.9) / 8 = 606 W to (7.75 - 2.3) / 8 = 681 W; 700 W is the
 *    TDP. Published figure: the midpoint of that arithmetic, 644 W.
 *  - GB200 NVL72 rack: about 120 kW (NVIDIA), 132 kW at most
 *    (the rack limit the scenarios use); band 120-132 kW.
 * The host. A node is the systems catalog's DGX-H100 (models/hardware/
 * system.h): its CPUs, memory, NICs, NVSwitches, storage and fans from
 * the vendors' figures, the fans' maximum what the 10.2 kW rating leaves,
 * and its supplies' 80 PLUS Titanium curve; the node's power is at its
 * inlet, as both papers measured it. Nothing in the host was set against
 * Latif's or Newkirk's figures; the GPUs' phase activities were, against
 * Newkirk's mean (training_scn.c), so the node rows stay calibration. The
 * same entry serves the scenarios (those in scenarios/ name system:
 * DGX-H100). An NVL72 rack is the catalog's GB200-NVL72, in a 132 kW
 * rack limit.
 * The phase activities are training_scn.c's defaults; the compute
 * blocks' power follows the job's MFU (training.h), and a 25% and a 55%
 * MFU job on the node show that it rises with it.
 *
 * Power quality. A synchronous job of 1.4 s iterations on the NVL72 rack
 * swings inside every control tick; the largest ramp and the 0.1-20 Hz
 * oscillation come from the waveform (power_quality.h), so they agree
 * between a 1 s and a 100 ms control period, and in-rack smoothing lowers
 * both. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>

#include "test_run.h"
#include "validate_row.h"

#define TRAIN_JOB_MFU(dp, tp, mfu)                                             \
  "training:\n"                                                                \
  "  - {name: pretrain, model: Llama-3.1-8B, dp: " #dp ", tp: " #tp ",\n"      \
  "     tokens_per_iteration: 4194304, iterations: 1000000, mfu: " mfu "}\n"

#define TRAIN_JOB(dp, tp) TRAIN_JOB_MFU(dp, tp, "40%")

/* The measurements are of the IT (a node's or a rack's own power), so
 * the facility around it draws nothing here: no cooling loops and a
 * lossless power chain, and facility power is IT power. */
#define IT_ONLY "loops: []\nelectrical: {losses: false}\n"

/* One DGX H100 server, the systems catalog's (header comment). */
static const char h100_node[] =
    "name: h100-node\nseed: 1\nduration: 30 min\nsample_period: 1 min\n"
    "power: {cap: 1 MW}\n" IT_ONLY "racks:\n"
    "  - {name: dgx, count: 1, system: DGX-H100, gpus_per_rack: 8,\n"
    "     load: {level: 0%, noise: 0}}\n" TRAIN_JOB(1, 8);

#define H100_NODE(mfu)                                                         \
  "name: h100-node\nseed: 1\nduration: 30 min\nsample_period: 1 min\n"         \
  "power: {cap: 1 MW}\n" IT_ONLY "racks:\n"                                    \
  "  - {name: dgx, count: 1, system: DGX-H100, gpus_per_rack: 8,\n"            \
  "     load: {level: 0%, noise: 0}}\n" TRAIN_JOB_MFU(1, 8, mfu)

/* One NVL72 rack, the systems catalog's GB200-NVL72 in the 132 kW rack
 * limit the scenarios use. */
static const char nvl72_rack[] =
    "name: nvl72-rack\nseed: 1\nduration: 30 min\nsample_period: 1 min\n"
    "power: {cap: 1 MW}\n" IT_ONLY "racks:\n"
    "  - {name: nvl72, count: 1, system: GB200-NVL72, gpus_per_rack: 72,\n"
    "     limit: 132 kW, load: {level: 0%, noise: 0}}\n" TRAIN_JOB(18, 4);

static double mean_of(const double *v, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; i++)
    s += v[i];
  return n > 0 ? s / (double)n : NAN;
}

static double max_of(const double *v, size_t n) {
  double m = -INFINITY;
  for (size_t i = 0; i < n; i++)
    m = fmax(m, v[i]);
  return m;
}

/* The three rows of the 8 x H100 node: GPU mean, node peak, node mean
 * (W). */
static void node_rows(double gpu, double peak, double mean) {
  static const char cond[] =
      "Llama-3.1-8B tp 8 on one 8 x H100 node, 40% MFU, 30 min";
  validate_row(VALIDATE_KIND_CALIBRATION,
               "act_comm and comm_share were set to land in this band "
               "(training_scn.c)",
               VALIDATE_TRAINING, "H100 training: mean GPU power per GPU",
               "Newkirk et al., arXiv:2506.14551: 0.76 x 10.2 kW a node "
               "less a 2.3-2.9 kW host share, over 8 GPUs",
               cond, "W", 644, gpu, 600, 700, "600-700 W");
  validate_row_rel(VALIDATE_KIND_CALIBRATION,
                   "the host is the catalog's DGX-H100, set against nothing "
                   "here, but the GPUs' phase activities were set against "
                   "Newkirk et al.'s mean, the same group's measurements "
                   "of such a node",
                   VALIDATE_TRAINING, "H100 training: node peak power",
                   "Latif et al., IEEE Access 13 (2025) 61740: 8.4 kW, 18% "
                   "below the 10.2 kW rating",
                   cond, "W", 8400, peak, 0.10);
  validate_row_rel(VALIDATE_KIND_CALIBRATION,
                   "the phase activities were set against this figure "
                   "(training_scn.c); the host is the catalog's DGX-H100",
                   VALIDATE_TRAINING, "H100 training: node mean power",
                   "Newkirk et al., arXiv:2506.14551: about 76% of 10.2 kW",
                   cond, "W", 0.76 * 10200, mean, 0.114);
}

static void h100_node_training_power(void **state) {
  (void)state;
  test_run r;
  test_run_file(&r, test_scenario_file("h100-node.yaml", h100_node), NULL, 0);
  size_t n;
  const double *gpu_w = test_facility_column(&r, "gpu_power_w", &n);
  const double *it_w = test_facility_column(&r, "it_power_w", &n);
  const double *peak_w = test_facility_column(&r, "peak_power_w", &n);
  double gpu = mean_of(gpu_w, n) / 8, mean = mean_of(it_w, n);
  double peak = max_of(peak_w, n);
  print_message("8 x H100 training at 40%% MFU: GPU %.0f W, node mean %.2f "
                "kW, peak %.2f kW\n",
                gpu, mean / 1e3, peak / 1e3);
  node_rows(gpu, peak, mean);
  /* The node rows show what the catalog's DGX-H100 predicts, failing if
   * it fails; what must hold whatever the measurements say: the node
   * draws more than its GPUs and less than its 10.2 kW rating. */
  assert_true(gpu >= 600 && gpu <= 700);
  assert_true(peak > 8 * gpu && peak < 10200 && mean <= peak);
  test_run_free(&r);
}

/* The node's mean and peak power and its GPUs' mean at one MFU. */
static void node_at(const char *yaml, const char *file, double *node_w,
                    double *peak_w, double *gpu_w) {
  test_run r;
  test_run_file(&r, test_scenario_file(file, yaml), NULL, 0);
  size_t n;
  const double *gpu = test_facility_column(&r, "gpu_power_w", &n);
  const double *it = test_facility_column(&r, "it_power_w", &n);
  const double *peak = test_facility_column(&r, "peak_power_w", &n);
  *gpu_w = mean_of(gpu, n) / 8;
  *node_w = mean_of(it, n);
  *peak_w = max_of(peak, n);
  test_run_free(&r);
}

/* Measured node power rises with the work the GPUs do: Newkirk et al.
 * (arXiv:2506.14551) hold compute-intensive training to 76% of the
 * node's 10.2 kW, Latif et al. (IEEE Access 13 (2025) 61740) its peak to
 * 8.4 kW "with GPUs near full utilization". A job at 25% MFU must draw
 * less than one at 55%, whose compute blocks reach the GPUs' 700 W. The
 * direction is the figure; nothing was fitted to it (the GPU power
 * model's figures come from the ML.ENERGY inference runs, training.h
 * gives the MFU's load). The 55% node's peak against Latif's is shown. */
static void power_rises_with_mfu(void **state) {
  (void)state;
  double n25, g25, n55, g55, p25, p55;
  node_at(H100_NODE("25%"), "h100-node-25.yaml", &n25, &p25, &g25);
  node_at(H100_NODE("55%"), "h100-node-55.yaml", &n55, &p55, &g55);
  print_message("8 x H100 training: 25%% MFU GPU %.0f W, node %.2f kW (peak "
                "%.2f); 55%% MFU GPU %.0f W, node %.2f kW (peak %.2f)\n",
                g25, n25 / 1e3, p25 / 1e3, g55, n55 / 1e3, p55 / 1e3);
  static const char src[] =
      "Newkirk et al., arXiv:2506.14551; Latif et al., IEEE Access 13 "
      "(2025) 61740: node power rises with the GPUs' work";
  validate_row(VALIDATE_KIND_BAR,
               "the issue's target: power differs with the MFU in the "
               "measured direction",
               VALIDATE_TRAINING, "H100 training: node power, 25% / 55% MFU",
               src, "Llama-3.1-8B tp 8 on one 8 x H100 node, 30 min",
               "x 55% MFU", 1, n25 / n55, 0, 0.999, "below 1");
  validate_row_rel(VALIDATE_KIND_CALIBRATION,
                   "the host is the catalog's DGX-H100, set against nothing "
                   "here, but the GPUs' phase activities were set against "
                   "Newkirk et al.'s mean, the same group's measurements "
                   "of such a node",
                   VALIDATE_TRAINING, "H100 training: node peak power, 55% MFU",
                   "Latif et al., IEEE Access 13 (2025) 61740: 8.4 kW peak "
                   "with GPUs near full utilization",
                   "Llama-3.1-8B tp 8 on one 8 x H100 node, 30 min", "W", 8400,
                   p55, 0.10);
  assert_true(n25 < n55 && g25 < g55 && p25 < p55);
  assert_true(g55 <= 700 && p55 < 10200);
}

static void nvl72_rack_training_power(void **state) {
  (void)state;
  test_run r;
  test_run_file(&r, test_scenario_file("nvl72-rack.yaml", nvl72_rack), NULL, 0);
  size_t n;
  const double *peak_w = test_facility_column(&r, "peak_power_w", &n);
  const double *gpu_w = test_facility_column(&r, "gpu_power_w", &n);
  double peak = max_of(peak_w, n), gpu = mean_of(gpu_w, n) / 72;
  print_message("GB200 NVL72 training at 40%% MFU: GPU %.0f W, rack peak "
                "%.1f kW\n",
                gpu, peak / 1e3);
  /* The 120 kW is a rating, every GPU at its 1,200 W; the job's GPUs draw
   * less (at 40% MFU their compute blocks do not reach 1,200 W: the GPU
   * power follows the MFU, training.h), so the rack may fall short of it:
   * shown, not asserted. The
   * catalog's rack at full load is held to the rating in test_system.c.
   * It must stay within its 132 kW limit. */
  validate_row(VALIDATE_KIND_CALIBRATION,
               "act_comm and act_idle were set against the node figures; the "
               "GPUs' compute follows the MFU; the rest of the rack is the "
               "catalog's GB200-NVL72",
               VALIDATE_TRAINING, "GB200 NVL72 training: rack peak power",
               "NVIDIA GB200 NVL72: about 120 kW a rack, 132 kW at most",
               "Llama-3.1-8B dp 18 tp 4 on 72 GB200, 40% MFU, 30 min", "W",
               120e3, peak, 120e3, 132e3, "120-132 kW");
  assert_true(peak > 72 * gpu && peak <= 132e3);
  test_run_free(&r);
}

/* A job of about 1.4 s iterations (Llama-3.1-8B, 2 M tokens, dp 9 pp 2
 * tp 4 on 72 GB200 at 40% MFU): compute, bubbles and the all-reduce all
 * inside one 1 s tick. */
static const char swinging[] =
    "name: swing\nseed: 1\nduration: 5 min\nsample_period: 1 min\n"
    "power: {cap: 1 MW}\n"
    "racks:\n"
    "  - {name: nvl72, count: 1, gpu: GB200, gpus_per_rack: 72,\n"
    "     limit: 132 kW, other_power_idle: 16.8 kW,\n"
    "     other_power_max: 35 kW, load: {level: 0%, noise: 0}}\n"
    "training:\n"
    "  - {name: pretrain, model: Llama-3.1-8B, dp: 9, pp: 2, tp: 4,\n"
    "     tokens_per_iteration: 2097152, iterations: 1000000, mfu: 40%}\n";

static void swing_run(const char *period, bool smoothing, double *ramp,
                      double *osc) {
  char set[64];
  snprintf(set, sizeof set, "control_period=%s", period);
  const char *sets[] = {set, smoothing ? "smoothing={enabled: true}"
                                       : "smoothing={enabled: false}"};
  test_run r;
  test_run_file(&r, test_scenario_file("swing.yaml", swinging), sets, 2);
  *ramp = r.sum.max_ramp_w_per_s;
  *osc = r.sum.oscillation_j;
  print_message("control period %s%s: largest ramp %.1f kW/s, 0.1-20 Hz "
                "oscillation %.3f MJ (RMS %.1f kW)\n",
                period, smoothing ? ", smoothing" : "", *ramp / 1e3, *osc / 1e6,
                r.sum.oscillation_w_rms / 1e3);
  test_run_free(&r);
}

static void power_quality_tick_independent(void **state) {
  (void)state;
  double r1, o1, r01, o01, r001, o001, rs, os;
  swing_run("1 s", false, &r1, &o1);
  swing_run("100 ms", false, &r01, &o01);
  swing_run("10 ms", false, &r001, &o001);
  static const char cond[] =
      "Llama-3.1-8B dp 9 pp 2 tp 4 on one NVL72 rack, 1.4 s iterations, "
      "5 min, 50 Hz window";
  validate_row(VALIDATE_KIND_BAR, "the issue's target: within 10%",
               VALIDATE_FACILITY, "Largest ramp, 100 ms / 1 s control period",
               "the issue's bar: tick-independent within 10%", cond, "x 1 s", 1,
               r01 / r1, 0.9, 1.1, "+-10%");
  validate_row(VALIDATE_KIND_BAR, "the issue's target: within 10%",
               VALIDATE_FACILITY,
               "0.1-20 Hz oscillation, 100 ms / 1 s control period",
               "the issue's bar: tick-independent within 10%", cond, "x 1 s", 1,
               o01 / o1, 0.9, 1.1, "+-10%");
  assert_true(fabs(r01 / r1 - 1) <= 0.10);
  assert_true(fabs(o01 / o1 - 1) <= 0.10);
  assert_true(fabs(r001 / r1 - 1) <= 0.10);
  assert_true(fabs(o001 / o1 - 1) <= 0.10);
  /* In-rack smoothing (NVIDIA's knobs, smooth.c's defaults) absorbs the
   * swings: the ramp falls to the racks' limit, the band nearly empties. */
  swing_run("1 s", true, &rs, &os);
  assert_true(rs < 0.01 * r1);
  assert_true(os < 0.1 * o1);
}

/* The largest ramp over 1 s windows at a power-quality rate. */
static double ramp_1s_at(const char *path, const char *rate) {
  char set[64];
  snprintf(set, sizeof set, "power_quality.rate=%s", rate);
  const char *sets[] = {set};
  test_run r;
  test_run_file(&r, path, sets, 1);
  double v = fmax(r.sum.ramp_up_w_per_s[0], r.sum.ramp_down_w_per_s[0]);
  print_message("%s at %s: 1 s ramp %.1f kW/s, one-sample ramp %.1f kW/s\n",
                path, rate, v / 1e3, r.sum.max_ramp_w_per_s / 1e3);
  test_run_free(&r);
  return v;
}

/* Issue 22's bar: the ramp over 1 s windows moves by less than 10% when
 * the power-quality rate goes from 50 to 100 and 200 Hz, on mixed.yaml
 * (a day; its largest 1 s ramp is a step between control periods) and
 * on the swinging job (5 min; its 1 s ramp is the waveform's). */
static void ramp_1s_rate_independent(void **state) {
  (void)state;
  const char *mixed = AIFSIM_SOURCE_DIR "/scenarios/mixed.yaml";
  double m50 = ramp_1s_at(mixed, "50 Hz"), m100 = ramp_1s_at(mixed, "100 Hz");
  double m200 = ramp_1s_at(mixed, "200 Hz");
  const char *swing = test_scenario_file("swing.yaml", swinging);
  double s50 = ramp_1s_at(swing, "50 Hz"), s200 = ramp_1s_at(swing, "200 Hz");
  validate_row(VALIDATE_KIND_BAR, "the issue's target: within 10%",
               VALIDATE_FACILITY,
               "Largest 1 s ramp, mixed.yaml, 200 Hz / 50 Hz window",
               "issue 22's bar: independent of the rate within 10%",
               "scenarios/mixed.yaml, 24 h, power_quality.rate 200 and 50 Hz",
               "x 50 Hz", 1, m200 / m50, 0.9, 1.1, "+-10%");
  validate_row(VALIDATE_KIND_BAR, "the issue's target: within 10%",
               VALIDATE_FACILITY,
               "Largest 1 s ramp, training swing, 200 Hz / 50 Hz window",
               "issue 22's bar: independent of the rate within 10%",
               "Llama-3.1-8B dp 9 pp 2 tp 4 on one NVL72 rack, 1.4 s "
               "iterations, 5 min",
               "x 50 Hz", 1, s200 / s50, 0.9, 1.1, "+-10%");
  assert_true(fabs(m100 / m50 - 1) < 0.10 && fabs(m200 / m50 - 1) < 0.10);
  assert_true(fabs(s200 / s50 - 1) < 0.10);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(h100_node_training_power),
      cmocka_unit_test(power_rises_with_mfu),
      cmocka_unit_test(nvl72_rack_training_power),
      cmocka_unit_test(power_quality_tick_independent),
      cmocka_unit_test(ramp_1s_rate_independent),
  };
  return cmocka_run_group_tests_name("training_power", tests, NULL, NULL);
}
