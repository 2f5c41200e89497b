/* test_factory_thermal.c - the racks' thermal protection through whole
 * runs (factory.c): a GPU too hot for its loop held at its slowdown
 * temperature, and each group of racks at its own thermal cap. Out of
 * test_factory.c, which had reached the house's 700 lines. */
#include "test_util.h"

#include "factory.h"
#include "test_run.h"

typedef test_run run;

static void run_scenario(run *r, const char *text) {
  test_run_file(r, test_scenario_file("thermal.yaml", text), NULL, 0);
}

/* The catalog of the HOT GPU, 100 W, slowing down at 87 degC. */
static void write_hot_catalog(void) {
  test_scenario_file(
      "hot-catalog.yaml",
      "gpus:\n  - name: HOT\n    tdp: 100 W\n    idle_power: 10 W\n"
      "    power_cap_min: 20 W\n    power_cap_max: 100 W\n"
      "    clock_max: 1 GHz\n    clock_min: 100 MHz\n"
      "    slowdown_temp: 87 degC\n    shutdown_temp: 92 degC\n"
      "    memory: 8 GB\n    memory_bandwidth: 100 GB/s\n"
      "    dense: {fp16: 10 TFLOPS}\n    sources: ['all: test']\n");
}

/* A GPU too hot for its loop: with a thermal resistance and a slowdown
 * temperature, it is held at the power that keeps its junction at the
 * slowdown temperature, and the racks say so. */
static void hot_gpus_are_throttled(void **state) {
  (void)state;
  write_hot_catalog();
  static const char text[] =
      "name: hot\nduration: 1 h\ncatalog: hot-catalog.yaml\n"
      "power: {cap: 10 kW}\n"
      "grid: {outdoor: {value: 20 degC}}\n"
      "loops: [{name: air, kind: air, capacity: 5 kW}]\n"
      "racks: [{name: r, count: 1, gpu: HOT, gpus_per_rack: 8, "
      "thermal_resistance: 1 K/W, load: {level: 100%, noise: 0}}]\n";
  run r;
  run_scenario(&r, text);
  size_t rows, w;
  const double *junction = test_column(&r, "racks", "junction_c", &rows, &w);
  const double *held = test_column(&r, "racks", "throttled", &rows, &w);
  const double *gpu = test_column(&r, "racks", "gpu_power_w", &rows, &w);
  /* Steady by the end: every GPU at its slowdown temperature, well
   * below the 100 W it asks for. */
  assert_close(junction[rows - 1], 87, 1e-6, 0);
  assert_close(held[rows - 1], 1, 0, 0);
  assert_true(gpu[rows - 1] < 8 * 70);
  assert_close(r.sum.throttled_gpu_s, 8 * 3600, 1e-9, 0);
  test_run_free(&r);
}

/* Groups of racks each at its own thermal cap (the tick works it out
 * once a group and gives it to the group's racks): HOT GPUs with a
 * thermal resistance in the first and the last group are held, the
 * middle group's, without one, never. */
static void thermal_caps_by_group(void **state) {
  (void)state;
  static const char text[] =
      "name: hot\nduration: 1 h\ncatalog: hot-catalog.yaml\n"
      "power: {cap: 40 kW}\n"
      "grid: {outdoor: {value: 20 degC}}\n"
      "loops: [{name: air, kind: air, capacity: 20 kW}]\n"
      "racks:\n"
      "  - {name: a, count: 2, gpu: HOT, gpus_per_rack: 8,\n"
      "     thermal_resistance: 1 K/W, load: {level: 100%, noise: 0}}\n"
      "  - {name: b, count: 3, gpu: HOT, gpus_per_rack: 8,\n"
      "     load: {level: 100%, noise: 0}}\n"
      "  - {name: c, count: 1, gpu: HOT, gpus_per_rack: 8,\n"
      "     thermal_resistance: 1 K/W, load: {level: 100%, noise: 0}}\n";
  static const double want[] = {1, 1, 0, 0, 0, 1};
  write_hot_catalog();
  run r;
  run_scenario(&r, text);
  size_t rows, w;
  const double *held = test_column(&r, "racks", "throttled", &rows, &w);
  assert_int_equal(w, N_OF(want));
  for (size_t k = 0; k < w; k++)
    assert_close(held[(rows - 1) * w + k], want[k], 0, 0);
  test_run_free(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(hot_gpus_are_throttled),
      cmocka_unit_test(thermal_caps_by_group),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
