/* test_training_power.c - training power against published measurements,
 * for docs/VALIDATION.md (tools/validate.py). A training job fills one
 * 8 x H100 HGX node, and another one GB200 NVL72 rack, for 30 min at 40%
 * MFU with no other load; the rows compare the model's power with:
 *  - Latif et al., "Single-Node Power Demand During AI Training:
 *    Measurements on an 8-GPU NVIDIA H100 System", IEEE Access 13 (2025)
 *    61740 (arXiv:2412.08602): node peak about 8.4 kW, 18% below the
 *    10.2 kW rating; band +-10%.
 *  - Newkirk et al., arXiv:2506.14551 (2025): compute-intensive training
 *    at about 76% of the node's 10.2 kW, 7.75 kW; band +-11.4% (their
 *    calibrated model's mean absolute error).
 *  - Per H100 GPU, 600-700 W: Newkirk's 7.75 kW less the host share (CPUs,
 *    NICs, NVSwitches, fans: 2.3-2.9 kW, half to 63% of the 4.6 kW that
 *    the 10.2 kW rating leaves beyond 8 x 700 W) over 8 GPUs is
 *    (7.75 - 2.9) / 8 = 606 W to (7.75 - 2.3) / 8 = 681 W; 700 W is the
 *    TDP. Published figure: the midpoint of that arithmetic, 644 W.
 *  - GB200 NVL72 rack: about 120 kW (NVIDIA; DESIGN 4.2), 132 kW at most
 *    (the rack limit the scenarios use); band 120-132 kW.
 * The model's figures are today's: the bands are not asserted (another
 * change calibrates training power); the rows show what fails. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>

#include "test_run.h"
#include "validate_row.h"

#define TRAIN_JOB(dp, tp)                                                      \
  "training:\n"                                                                \
  "  - {name: pretrain, model: Llama-3.1-8B, dp: " #dp ", tp: " #tp ",\n"      \
  "     tokens_per_iteration: 4194304, iterations: 1000000, mfu: 40%}\n"

/* One 8-GPU HGX H100 server: DGX H100's 10.2 kW less 8 x 700 W leaves
 * 4.6 kW for the rest at full load (scenarios/quickstart.yaml's share,
 * per server). */
static const char h100_node[] =
    "name: h100-node\nseed: 1\nduration: 30 min\nsample_period: 1 min\n"
    "power: {cap: 1 MW}\n"
    "racks:\n"
    "  - {name: hgx, count: 1, gpu: H100-SXM, gpus_per_rack: 8,\n"
    "     other_power_idle: 2.3 kW, other_power_max: 4.6 kW,\n"
    "     load: {level: 0%, noise: 0}}\n" TRAIN_JOB(1, 8);

/* One NVL72 rack as scenarios/quickstart.yaml has it. */
static const char nvl72_rack[] =
    "name: nvl72-rack\nseed: 1\nduration: 30 min\nsample_period: 1 min\n"
    "power: {cap: 1 MW}\n"
    "racks:\n"
    "  - {name: nvl72, count: 1, gpu: GB200, gpus_per_rack: 72,\n"
    "     limit: 132 kW, other_power_idle: 16.8 kW,\n"
    "     other_power_max: 33.6 kW, load: {level: 0%, noise: 0}}\n" TRAIN_JOB(
        18, 4);

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
  static const char cond[] =
      "Llama-3.1-8B tp 8 on one 8 x H100 node, 40% MFU, 30 min";
  validate_row(VALIDATE_TRAINING, "H100 training: mean GPU power per GPU",
               "Newkirk et al., arXiv:2506.14551: 0.76 x 10.2 kW a node "
               "less a 2.3-2.9 kW host share, over 8 GPUs",
               cond, "W", 644, gpu, 600, 700, "600-700 W");
  validate_row_rel(VALIDATE_TRAINING, "H100 training: node peak power",
                   "Latif et al., IEEE Access 13 (2025) 61740: 8.4 kW, 18% "
                   "below the 10.2 kW rating",
                   cond, "W", 8400, peak, 0.10);
  validate_row_rel(VALIDATE_TRAINING, "H100 training: node mean power",
                   "Newkirk et al., arXiv:2506.14551: about 76% of 10.2 kW",
                   cond, "W", 0.76 * 10200, mean, 0.114);
  assert_true(gpu > 0 && peak >= mean);
  test_run_free(&r);
}

static void nvl72_rack_training_power(void **state) {
  (void)state;
  test_run r;
  test_run_file(&r, test_scenario_file("nvl72-rack.yaml", nvl72_rack), NULL, 0);
  size_t n;
  const double *peak_w = test_facility_column(&r, "peak_power_w", &n);
  double peak = max_of(peak_w, n);
  print_message("GB200 NVL72 training at 40%% MFU: rack peak %.1f kW\n",
                peak / 1e3);
  validate_row(VALIDATE_TRAINING, "GB200 NVL72 training: rack peak power",
               "NVIDIA GB200 NVL72: about 120 kW a rack, 132 kW at most",
               "Llama-3.1-8B dp 18 tp 4 on 72 GB200, 40% MFU, 30 min", "W",
               120e3, peak, 120e3, 132e3, "120-132 kW");
  assert_true(peak > 0);
  test_run_free(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(h100_node_training_power),
      cmocka_unit_test(nvl72_rack_training_power),
  };
  return cmocka_run_group_tests_name("training_power", tests, NULL, NULL);
}
