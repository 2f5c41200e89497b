/* test_fabric.c - the network fabric (models/factory/fabric.c): its size
 * and power against hand-computed fleets, its defaults against the data
 * they come from (data/network/fabric.csv), its power in the IT books and
 * telemetry of a run with the books still closing, a run without it
 * unchanged, its bad input with positions, and allocation failures. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric.h"
#include "factory.h"
#include "factory_alloc.h"
#include "test_run.h"

/* The defaults: SN5600-class 64 x 800G switches at 1,848 W, 17 W
 * modules, one 400G NIC per GPU (fabric.c's schema). */
static fab_config defaults(void) {
  return (fab_config){.enabled = true,
                      .nics_per_gpu = 1,
                      .nic_gbps = 400,
                      .switch_ports = 64,
                      .port_gbps = 800,
                      .switch_w = 1848,
                      .transceiver_w = 17};
}

/* Hand-computed: a 800G port carries two 400G NICs; a leaf has 32 ports
 * down and 32 up; a spine's 64 ports all face down; a module per leaf
 * down port and two per switch-to-switch link. */
static const struct {
  double gpus, nics_per_gpu, nic_gbps;
  uint64_t tiers, leaves, spines, cores, links, transceivers;
  double power_w;
} sizes[] = {
    /* One NVL72 rack: 36 down ports, one switch: 1848 + 36 x 17. */
    {72, 1, 400, 1, 1, 0, 0, 0, 36, 2460},
    /* 1,024 GPUs: 512 down ports, 16 leaves, 512 links to 8 spines:
     * 24 x 1848 + (512 + 2 x 512) x 17 = 44,352 + 26,112. */
    {1024, 1, 400, 2, 16, 8, 0, 512, 1536, 70464},
    /* 100 GPUs with 800G NICs: 100 down ports, 4 leaves, 128 links,
     * 2 spines: 6 x 1848 + (100 + 256) x 17 = 11,088 + 6,052. */
    {100, 1, 800, 2, 4, 2, 0, 128, 356, 17140},
    /* 8,192 GPUs: 4,096 down ports (> 64^2 / 2): a fat tree of 128
     * leaves, 128 aggregation and 64 core switches, 4,096 + 4,096
     * links: 320 x 1848 + (4,096 + 16,384) x 17 = 591,360 + 348,160. */
    {8192, 1, 400, 3, 128, 128, 64, 8192, 20480, 939520},
    /* Two NICs per GPU double the ports: 72 GPUs, 72 down ports > 64:
     * 3 leaves, 96 links, 2 spines: 5 x 1848 + (72 + 192) x 17. */
    {72, 2, 400, 2, 3, 2, 0, 96, 264, 13728},
    /* No GPUs, no fabric. */
    {0, 1, 400, 0, 0, 0, 0, 0, 0, 0},
};

static void sizes_by_hand(void **state) {
  (void)state;
  for (size_t i = 0; i < N_OF(sizes); i++) {
    fab_config c = defaults();
    c.nics_per_gpu = sizes[i].nics_per_gpu;
    c.nic_gbps = sizes[i].nic_gbps;
    fab_size s;
    sim_error err = {0};
    assert_int_equal(fab_size_of(&c, sizes[i].gpus, &s, &err), SIM_OK);
    assert_int_equal(s.tiers, sizes[i].tiers);
    assert_int_equal(s.leaves, sizes[i].leaves);
    assert_int_equal(s.spines, sizes[i].spines);
    assert_int_equal(s.cores, sizes[i].cores);
    assert_int_equal(s.links, sizes[i].links);
    assert_int_equal(s.transceivers, sizes[i].transceivers);
    assert_int_equal(s.switches, s.leaves + s.spines + s.cores);
    assert_close(s.power_w, sizes[i].power_w, 1e-12, 0);
  }
}

/* Beyond three tiers: 8-port switches carry at most 8^3 / 4 = 128 leaf
 * ports; 300 GPUs need 150. */
static void refuses_four_tiers(void **state) {
  (void)state;
  fab_config c = defaults();
  c.switch_ports = 8;
  fab_size s;
  sim_error err = {0};
  assert_int_equal(fab_size_of(&c, 300, &s, &err), SIM_EINPUT);
  assert_non_null(strstr(err.msg, "more than three tiers"));
}

/* Two groups of GB200 racks, a generous cap (the split leaves every GPU
 * at its TDP with or without the fabric), no cooling and a lossless
 * chain: facility power is IT power. 144 GPUs: 72 down ports, 3 leaves,
 * 96 links, 2 spines: 5 x 1848 + (72 + 192) x 17 = 13,728 W. */
static const char scenario[] =
    "name: f\nseed: 4\nduration: 1 h\nsample_period: 5 min\n"
    "power: {cap: 1 MW}\n"
    "racks:\n"
    "  - {name: a, count: 1, gpu: GB200, gpus_per_rack: 72,\n"
    "     other_power_idle: 16.8 kW, other_power_max: 33.6 kW,\n"
    "     load: {pattern: diurnal, low: 30%, high: 95%, noise: 10%}}\n"
    "  - {name: b, count: 1, gpu: GB200, gpus_per_rack: 72,\n"
    "     other_power_idle: 16.8 kW, other_power_max: 33.6 kW,\n"
    "     load: {level: 50%, noise: 5%}}\n"
    "loops: []\nelectrical: {losses: false}\n";

static const char *const on[] = {"fabric.enabled=true"};

/* A /summary metric of a memory sink; NaN when it is not there. */
static double metric(const tel_sink *sink, const char *key) {
  double v;
  return tel_memory_summary(sink, key, &v) == SIM_OK ? v : NAN;
}
#define FABRIC_W 13728.0

static void run(test_run *r, const char *const *sets, size_t nsets) {
  test_run_file(r, test_scenario_file("fabric.yaml", scenario), sets, nsets);
  const factory_summary *s = &r->sum;
  assert_close(s->energy_j,
               s->it_energy_j + s->loss_energy_j + s->cooling_energy_j +
                   s->smoothing_energy_j - s->battery_net_j,
               1e-12, 0);
}

/* On, IT power moves by the fabric's power at every sample and nothing
 * else does; the books close, its energy is its power over the run, and
 * the workloads are held to the racks' share. */
static void power_in_it_books(void **state) {
  (void)state;
  test_run off, with;
  run(&off, NULL, 0);
  run(&with, on, 1);
  size_t n0, n1, nf, w;
  const double *it0 = test_facility_column(&off, "it_power_w", &n0);
  const double *it1 = test_facility_column(&with, "it_power_w", &n1);
  const double *gpu0 = test_facility_column(&off, "gpu_power_w", &n0);
  const double *gpu1 = test_facility_column(&with, "gpu_power_w", &n1);
  const double *fab =
      tel_memory_column(with.sink, "fabric", "power_w", &nf, &w);
  assert_non_null(fab);
  assert_int_equal(n0, n1);
  assert_int_equal(nf, n1);
  for (size_t i = 0; i < n1; i++) {
    assert_close(it1[i] - it0[i], FABRIC_W, 1e-9, 0);
    assert_close(fab[i], FABRIC_W, 1e-12, 0);
    assert_true(gpu1[i] == gpu0[i]);
  }
  double t = with.sum.duration_s;
  assert_close(with.sum.it_energy_j - off.sum.it_energy_j, FABRIC_W * t, 1e-9,
               0);
  assert_close(with.sum.it_outside_racks_j, FABRIC_W * t, 1e-12, 0);
  assert_close(off.sum.it_outside_racks_j, 0, 0, 0);
  assert_close(metric(with.sink, "fabric_energy_mwh"), FABRIC_W * t / 3.6e9,
               1e-12, 0);
  assert_close(metric(with.sink, "fabric_switches"), 5, 0, 0);
  assert_close(metric(with.sink, "fabric_transceivers"), 264, 0, 0);
  /* Off: no group, no metric, and no `fabric` in the resolved scenario. */
  assert_null(tel_memory_column(off.sink, "fabric", "power_w", &nf, &w));
  assert_true(isnan(metric(off.sink, "fabric_energy_mwh")));
  assert_null(strstr(off.sc.resolved, "fabric"));
  assert_non_null(strstr(with.sc.resolved, "fabric:"));
  test_run_free(&off);
  test_run_free(&with);
}

/* The schema's defaults are the figures of data/network/fabric.csv. */
static void defaults_are_the_data(void **state) {
  (void)state;
  factory_scenario sc;
  sim_error err = {0};
  const char *path = test_scenario_file("fabric.yaml", scenario);
  assert_int_equal(factory_scenario_load(path, on, 1, &sc, &err), SIM_OK);
  const fab_config *c = &sc.cfg.fabric;
  const struct {
    const char *key;
    double v;
  } want[] = {{"nics_per_gpu", c->nics_per_gpu},
              {"nic_gbps", c->nic_gbps},
              {"switch_ports", (double)c->switch_ports},
              {"port_gbps", c->port_gbps},
              {"switch_power_w", c->switch_w},
              {"transceiver_power_w", c->transceiver_w}};
  FILE *fp = test_data_open("network/fabric.csv");
  char line[1024], key[64];
  double v;
  size_t found = 0;
  while (fgets(line, sizeof line, fp) != NULL)
    if (sscanf(line, "%63[^,],%lf", key, &v) == 2)
      for (size_t i = 0; i < N_OF(want); i++)
        if (strcmp(key, want[i].key) == 0) {
          assert_close(want[i].v, v, 0, 0);
          found++;
        }
  fclose(fp);
  assert_int_equal(found, N_OF(want));
  factory_scenario_release(&sc);
}

/* Bad input names the key with its position. */
static void bad_input(void **state) {
  (void)state;
  static const struct {
    const char *set, *want;
  } cases[] = {
      {"fabric={enabled: true, switch_ports: 63}", "switch_ports must be even"},
      {"fabric={enabled: true, port_gbps: 200}", "slower than a NIC"},
      {"fabric={enabled: true, transceiver_power: -1 W}", "transceiver_power"},
      {"fabric={enabled: true, speed: 1}", "speed"},
  };
  const char *path = test_scenario_file("fabric.yaml", scenario);
  for (size_t i = 0; i < N_OF(cases); i++) {
    factory_scenario sc;
    sim_error err = {0};
    const char *sets[] = {cases[i].set};
    assert_int_equal(factory_scenario_load(path, sets, 1, &sc, &err),
                     SIM_EINPUT);
    if (strstr(err.msg, cases[i].want) == NULL || strstr(err.msg, ":") == NULL)
      fail_msg("%s: %s", cases[i].set, err.msg);
  }
}

static void alloc_failures(void **state) {
  (void)state;
  alloc_check_scenario(test_scenario_file("fabric.yaml", scenario), on, 1, 4);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(sizes_by_hand),
      cmocka_unit_test(refuses_four_tiers),
      cmocka_unit_test(power_in_it_books),
      cmocka_unit_test(defaults_are_the_data),
      cmocka_unit_test(bad_input),
      cmocka_unit_test(alloc_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
