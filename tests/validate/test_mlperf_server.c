/* test_mlperf_server.c - scenarios/mlperf-server.yaml against the MLPerf
 * Inference v4.0 result it models (data/mlperf/: NVIDIA's DGX H100 at
 * 450 W a GPU, Llama 2 70B Offline, 17,561.6 generated tokens/s at
 * 5,888.19 W at the wall). The trt-llm engine's figures were fitted on
 * that result and two others (scenarios/catalog/engines.yaml), so the
 * rows are calibration. The bands: +-25% in tokens/s, +-15% in
 * wall power. Wall power is the server's power at its inlet (IT as The
 * Green Grid counts it: the systems catalog's DGX-H100, its supplies'
 * losses and fans included), the facility's own chain and cooling left
 * out as MLPerf's analyzer leaves them out.
 *
 * Both rows hold the bands. The tokens/s did not (0.68x) while
 * the model decoded one sequence where MLPerf's GPT-J decodes four beams:
 * the fit, shared with GPT-J, set the efficiency too low for Llama; with
 * the beams (roofline.h, beams) one fit serves both (engines.yaml's
 * residuals). The wall power is the catalog's DGX-H100 with its GPUs at
 * what the service draws under 450 W; nothing of the host was set
 * against this figure. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>

#include "test_run.h"
#include "validate_row.h"

static double mean_from(const double *v, size_t n, size_t from) {
  double s = 0;
  for (size_t i = from; i < n; i++)
    s += v[i];
  return n > from ? s / (double)(n - from) : NAN;
}

static void mlperf_server_v40(void **state) {
  (void)state;
  const char *sets[] = {"electrical={losses: false}"};
  test_run r;
  test_run_file(&r, AIFSIM_SOURCE_DIR "/scenarios/mlperf-server.yaml", sets, 1);
  size_t n;
  /* The first two samples fill the batch; the rest is the steady state. */
  const double *it = test_facility_column(&r, "it_power_w", &n);
  const double *tps = test_facility_column(&r, "tokens_per_s", &n);
  double wall = mean_from(it, n, 2);
  double tokens = mean_from(tps, n, 2);
  print_message("mlperf-server: %.0f tokens/s (MLPerf 17,562), %.0f W at the "
                "wall (MLPerf 5,888): %.2fx, %.2fx\n",
                tokens, wall, tokens / 17561.6, wall / 5888.19);
  static const char src[] =
      "MLCommons, MLPerf Inference v4.0, NVIDIA DGX H100 MaxQ (data/mlperf/)";
  static const char cond[] =
      "scenarios/mlperf-server.yaml: Llama-2-70B FP8, trt-llm, tp 2 x 4, "
      "450 W a GPU, saturated; fitted on it";
  validate_row_rel(VALIDATE_KIND_CALIBRATION,
                   "the trt-llm engine was fitted on this result "
                   "(tools/calibrate.py)",
                   VALIDATE_SERVING, "MLPerf v4.0 Llama 2 70B server: tokens/s",
                   src, cond, "tokens/s", 17561.6, tokens, 0.25);
  validate_row_rel(VALIDATE_KIND_CALIBRATION,
                   "the trt-llm engine was fitted on this result's tokens/s "
                   "(tools/calibrate.py); the host is the catalog's "
                   "DGX-H100, set against nothing here",
                   VALIDATE_SERVING,
                   "MLPerf v4.0 Llama 2 70B server: wall power", src, cond, "W",
                   5888.19, wall, 0.15);
  /* The bands. */
  assert_true(fabs(tokens / 17561.6 - 1) <= 0.25);
  assert_true(fabs(wall / 5888.19 - 1) <= 0.15);
  test_run_free(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(mlperf_server_v40),
  };
  return cmocka_run_group_tests_name("mlperf_server", tests, NULL, NULL);
}
