/* test_factory_metrics.c - the run's /summary metrics
 * (models/factory/factory_metrics.c): each metric the run cannot give
 * noted in "absent" with the why its owner states, and the registry
 * (`aifsim metrics`) gathering every model's rows and texts through the
 * table of models, each key once. */
#include "test_util.h"

#include <stdio.h>
#include <string.h>

#include "factory.h"
#include "factory_model.h"
#include "test_run.h"

/* One rack group, no price, no carbon signal and no work, for 10 min:
 * shorter than two of the 10-min ramp's windows. */
static const char scenario[] =
    "name: t\nseed: 3\nduration: 10 min\nsample_period: 1 min\n"
    "power: {cap: 150 kW}\n"
    "racks:\n"
    "  - name: hgx\n    count: 2\n    gpu: H100-SXM\n    gpus_per_rack: 32\n"
    "    other_power_idle: 9.2 kW\n    other_power_max: 18.4 kW\n"
    "    load: {pattern: steps, noise: 0, steps: [{at: 0 s, level: 90%}]}\n";

/* Each why, from its owner (the factory's for the ramps, power
 * control's for demand response, the grid's for the bill and CO2, the
 * workloads' for tokens, requests and jobs), in the summary's order:
 * the factory's rows, then the table's. */
static void each_owner_says_why_a_metric_is_absent(void **state) {
  (void)state;
  static const char *const why[] = {
      ("max_ramp_10min_w_per_s: the run is shorter than two of the ramp's "
       "windows"),
      "dr_slo_attainment: no demand-response event with requests",
      "cost: no price signal or tariff",
      "cost_fees: no price signal or tariff",
      "co2_t: no carbon signal",
      "carbon_g_per_kwh: no carbon signal",
      "tokens_per_joule: no tokens served",
      "tokens_per_joule_facility: no tokens served",
      "slo_attainment: no requests",
      "jct_mean_s: no job finished",
  };
  test_run r;
  test_run_file(&r, test_scenario_file("metrics.yaml", scenario), NULL, 0);
  const char *absent = tel_memory_summary_str(r.sink, "absent");
  assert_non_null(absent);
  const char *at = absent;
  for (size_t i = 0; i < N_OF(why); i++) {
    const char *found = strstr(at, why[i]);
    if (found == NULL)
      fail_msg("'%s' not after its predecessor in: %s", why[i], absent);
    at = found + strlen(why[i]);
  }
  test_run_free(&r);
}

/* The registry: the factory's rows first, each model's after, then the
 * factory's texts and the models' (the workloads', the grid code's), in
 * table order; every key once. */
static void the_registry_lists_every_row_once(void **state) {
  (void)state;
  const tel_metric *rows[256];
  size_t n = factory_metrics(rows, N_OF(rows));
  assert_true(n > 7 && n <= N_OF(rows));
  assert_string_equal(rows[0]->key, "energy_mwh");
  static const char *const texts[] = {
      "absent",    "host_power_note", "carbon_basis", "inference_granularity",
      "grid_code", "grid_class",      "grid_verdict",
  };
  for (size_t i = 0; i < N_OF(texts); i++) {
    assert_string_equal(rows[n - N_OF(texts) + i]->key, texts[i]);
    assert_null(rows[n - N_OF(texts) + i]->units);
  }
  for (size_t i = 0; i < n; i++)
    for (size_t j = i + 1; j < n; j++)
      if (strcmp(rows[i]->key, rows[j]->key) == 0)
        fail_msg("%s listed twice", rows[i]->key);
  /* Short of room, it still counts them all. */
  assert_int_equal(factory_metrics(rows, 3), n);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(each_owner_says_why_a_metric_is_absent),
      cmocka_unit_test(the_registry_lists_every_row_once),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
