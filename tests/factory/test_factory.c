/* test_factory.c - a whole factory from a scenario: the books (energy from
 * samples = integrated energy = summary), the cap held, analytic power for
 * a constant load, determinism and seeds, overrides, the resolved scenario
 * reading back, and bad factory input with positions. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "factory.h"
#include "factory_alloc.h"
#include "gpu.h"
#include "llm.h"
#include "test_run.h"
#include "validate_row.h"

static const char base[] =
    "name: t\nseed: 3\nduration: 2 h\nsample_period: 5 min\n"
    "power: {cap: 150 kW}\n"
    "racks:\n"
    "  - name: nvl\n    count: 1\n    gpu: GB200\n    gpus_per_rack: 72\n"
    "    other_power_idle: 16.8 kW\n    other_power_max: 33.6 kW\n"
    "    load: {pattern: diurnal, low: 30%, high: 95%, noise: 10%}\n"
    "  - name: hgx\n    count: 2\n    gpu: H100-SXM\n    gpus_per_rack: 32\n"
    "    other_power_idle: 9.2 kW\n    other_power_max: 18.4 kW\n"
    "    load: {pattern: steps, noise: 0, steps: [{at: 0 s, level: 90%}, "
    "{at: 1 h, level: 20%}]}\n"
    /* The IT side alone: no cooling and a lossless power chain, so
     * facility power is IT power (the overhead's tests: tests/facility). */
    "loops: []\nelectrical: {losses: false}\n";

typedef test_run run;

/* The invariants of every run (docs/MODELS.md, Energy books): facility energy
 * is IT, losses, cooling and smoothing less what the battery delivered; no
 * power column goes negative. */
static void assert_books(const run *r) {
  const factory_summary *s = &r->sum;
  assert_close(s->energy_j,
               s->it_energy_j + s->loss_energy_j + s->cooling_energy_j +
                   s->smoothing_energy_j - s->battery_net_j,
               1e-12, 0);
  static const char *const powers[] = {"power_w", "it_power_w", "gpu_power_w",
                                       "loss_power_w", "cooling_power_w"};
  for (size_t c = 0; c < N_OF(powers); c++) {
    size_t rows, w;
    const double *v =
        tel_memory_column(r->sink, "facility", powers[c], &rows, &w);
    for (size_t i = 0; v != NULL && i < rows; i++)
      assert_true(v[i] >= 0);
  }
}

static void run_scenario(run *r, const char *text, const char *const *sets,
                         size_t nsets) {
  test_run_file(r, test_scenario_file("factory.yaml", text), sets, nsets);
  assert_books(r);
}

static void run_free(run *r) { test_run_free(r); }

/* Energy balance: the samples' mean power times their interval adds up to
 * the integrated energy, the summary, and IT = facility (no cooling yet);
 * the cap holds at every tick; no power is negative. */
static void books_balance_and_cap_holds(void **state) {
  (void)state;
  run r;
  run_scenario(&r, base, NULL, 0);
  size_t rows, w;
  const double *p = test_column(&r, "facility", "power_w", &rows, &w);
  const double *peak = test_column(&r, "facility", "peak_power_w", &rows, &w);
  const double *cap = test_column(&r, "facility", "cap_w", &rows, &w);
  const double *energy = test_column(&r, "facility", "energy_j", &rows, &w);
  const double *t = tel_memory_times(r.sink, "facility", &rows);
  assert_int_equal(rows, 24);
  double sum = 0;
  for (size_t i = 0; i < rows; i++) {
    assert_close(t[i], 300.0 * (double)(i + 1), 0, 0);
    sum += p[i] * 300;
    assert_true(p[i] > 0 && p[i] <= cap[i]);
    assert_true(peak[i] >= p[i] && peak[i] <= cap[i]);
    assert_close(energy[i], sum, 1e-12, 0);
  }
  assert_close(sum, r.sum.energy_j, 1e-9, 0);
  assert_close(r.sum.it_energy_j, r.sum.energy_j, 1e-12, 0);
  assert_true(r.sum.gpu_energy_j < r.sum.it_energy_j);
  assert_close(r.sum.mean_power_w * 7200, r.sum.energy_j, 1e-12, 0);
  double mwh;
  assert_int_equal(tel_memory_summary(r.sink, "energy_mwh", &mwh), SIM_OK);
  assert_close(mwh * 3.6e9, r.sum.energy_j, 1e-12, 0);
  assert_close(r.sum.cap_violation_s, 0, 0, 0);
  assert_true(r.sum.peak_power_w <= 150000);
  /* Racks: their power adds up to the facility's in every sample. */
  const double *rp = test_column(&r, "racks", "power_w", &rows, &w);
  assert_int_equal(w, 3);
  for (size_t i = 0; i < rows; i++)
    assert_close(rp[i * w] + rp[i * w + 1] + rp[i * w + 2], p[i], 1e-12, 0);
  /* The step at 1 h shows in the H100 racks' activity. */
  const double *act = test_column(&r, "racks", "activity", &rows, &w);
  assert_close(act[5 * w + 1], 0.9, 1e-12, 0);
  assert_close(act[20 * w + 1], 0.2, 1e-12, 0);
  run_free(&r);
}

/* With the cap out of the way and a constant, noiseless load, every GPU
 * draws idle + (TDP - idle) a and every rack adds its other IT power at
 * that activity: the facility power is known in closed form. */
static void constant_load_gives_analytic_power(void **state) {
  (void)state;
  static const char *const sets[] = {
      "power.cap=10 MW", "racks.0.load={level: 60%, noise: 0}",
      "racks.1.load={pattern: constant, level: 60%, noise: 0}"};
  run r;
  run_scenario(&r, base, sets, 3);
  const gpu_spec *gb = gpu_catalog_find(&r.sc.catalog, "GB200");
  const gpu_spec *h = gpu_catalog_find(&r.sc.catalog, "H100-SXM");
  double a = 0.6;
  double expect = 72 * (gb->idle_w + (gb->tdp_w - gb->idle_w) * a) + 16800 +
                  16800 * a + 64 * (h->idle_w + (h->tdp_w - h->idle_w) * a) +
                  2 * (9200 + 9200 * a);
  assert_close(r.sum.mean_power_w, expect, 1e-12, 0);
  assert_close(r.sum.energy_j, expect * 7200, 1e-12, 0);
  assert_close(r.sum.peak_power_w, expect, 1e-12, 0);
  run_free(&r);
}

/* A group without noise keeps its racks at its level while the next
 * group's noise moves each of its racks on its own stream (the noise is
 * stepped group by group, a noiseless group skipped: factory.c). */
static void noise_moves_only_its_groups_racks(void **state) {
  (void)state;
  static const char *const sets[] = {"power.cap=10 MW",
                                     "racks.0.load={level: 60%, noise: 0}",
                                     "racks.1.load={level: 60%, noise: 10%}"};
  run r;
  run_scenario(&r, base, sets, 3);
  size_t rows, w;
  const double *act = test_column(&r, "racks", "activity", &rows, &w);
  assert_int_equal(w, 3);
  bool moved[3] = {false, false, false};
  for (size_t i = 0; i < rows; i++) {
    assert_close(act[i * w], 0.6, 1e-12, 0);
    for (size_t k = 1; k < w; k++)
      moved[k] = moved[k] || fabs(act[i * w + k] - 0.6) > 1e-6;
    assert_true(act[i * w + 1] != act[i * w + 2]);
  }
  assert_true(moved[1] && moved[2]);
  run_free(&r);
}

/* A DR cut: the cap column shows it, the static split follows it, and the
 * facility stays under it; a cut below the fleet's floor is counted as a
 * violation, never hidden. */
static void dr_cut_is_held_or_reported(void **state) {
  (void)state;
  static const char *const sets[] = {
      "grid.dr_events=[{start: 30 min, duration: 1 h, cut: 25%}, "
      "{start: 100 min, duration: 10 min, level: 50 kW}]"};
  run r;
  run_scenario(&r, base, sets, 1);
  size_t rows, w;
  const double *p = test_column(&r, "facility", "power_w", &rows, &w);
  const double *peak = test_column(&r, "facility", "peak_power_w", &rows, &w);
  const double *cap = test_column(&r, "facility", "cap_w", &rows, &w);
  for (size_t i = 0; i < rows; i++) {
    double t_end = 300.0 * (double)(i + 1);
    double expect = t_end > 1800 && t_end <= 5400   ? 112500
                    : t_end > 6000 && t_end <= 6600 ? 50000
                                                    : 150000;
    assert_close(cap[i], expect, 0, 0);
    if (expect > 50000)
      assert_true(peak[i] <= cap[i] && p[i] <= cap[i]);
  }
  /* 50 kW is below what the fleet draws at its minimum caps: ten minutes
   * over the cap, and the joules over it are the two samples' excess. */
  assert_close(r.sum.cap_violation_s, 600, 0, 0);
  double excess = (p[20] - 50000) * 300 + (p[21] - 50000) * 300;
  assert_close(r.sum.cap_violation_j, excess, 1e-9, 0);
  run_free(&r);
}

/* Cost and CO2 are the exact integrals of power times the signals. */
static void constant_signals_give_exact_books(void **state) {
  (void)state;
  static const char *const sets[] = {"grid.carbon={value: 400 gCO2/kWh}",
                                     "grid.price={value: 80 $/MWh}"};
  run r;
  run_scenario(&r, base, sets, 2);
  double want_kg = r.sum.energy_j / 3.6e9 * 400;
  validate_row(VALIDATE_KIND_IDENTITY, "arithmetic: energy x intensity",
               VALIDATE_GRID, "CO2 of a factory run at a flat 400 g/kWh",
               "arithmetic: energy (MWh) x 400 kg/MWh",
               "tests/factory base scenario, 2 h", "kg CO2", want_kg,
               r.sum.co2_kg, want_kg * (1 - 1e-12), want_kg * (1 + 1e-12),
               "exact (1e-12)");
  assert_close(r.sum.co2_kg, r.sum.energy_j / 3.6e9 * 400, 1e-12, 0);
  assert_close(r.sum.cost, r.sum.energy_j / 3.6e9 * 80, 1e-12, 0);
  size_t rows, w;
  const double *c = test_column(&r, "facility", "carbon_g_per_kwh", &rows, &w);
  assert_close(c[rows - 1], 400, 1e-12, 0);
  run_free(&r);
}

/* With cooling loops and conversion losses the books still balance:
 * facility = IT + losses + cooling in every sample and in total, the PUE
 * column is their ratio, and the cap holds with the cooling reserved. The
 * racks' conversion losses are IT (The Green Grid measures IT at the IT
 * equipment's input), so they are in it_power_w, not loss_power_w, which
 * is the power chain's (off here). */
static void cooling_and_losses_balance(void **state) {
  (void)state;
  static const char *const sets[] = {
      "loops=[{name: liq, kind: liquid, capacity: 120 kW, racks: [nvl]}, "
      "{name: air, kind: air, capacity: 60 kW, racks: [hgx]}]",
      "grid.outdoor={low: 15 degC, high: 30 degC}",
      "racks.1.conversion=[{load: 10%, efficiency: 90%}, "
      "{load: 50%, efficiency: 96%}, {load: 100%, efficiency: 91%}]"};
  run r;
  run_scenario(&r, base, sets, 3);
  size_t rows, w;
  const double *p = test_column(&r, "facility", "power_w", &rows, &w);
  const double *it = test_column(&r, "facility", "it_power_w", &rows, &w);
  const double *loss = test_column(&r, "facility", "loss_power_w", &rows, &w);
  const double *cool =
      test_column(&r, "facility", "cooling_power_w", &rows, &w);
  const double *pue = test_column(&r, "facility", "pue", &rows, &w);
  const double *peak = test_column(&r, "facility", "peak_power_w", &rows, &w);
  for (size_t i = 0; i < rows; i++) {
    assert_close(p[i], it[i] + loss[i] + cool[i], 1e-12, 0);
    assert_close(pue[i], p[i] / it[i], 1e-12, 0);
    assert_true(cool[i] > 0 && loss[i] == 0 && peak[i] <= 150000);
  }
  assert_true(r.sum.psu_loss_energy_j > 0);
  assert_true(factory_itue(&r.sum) > 1);
  assert_close(factory_tue(&r.sum),
               factory_itue(&r.sum) * r.sum.energy_j / r.sum.it_energy_j, 1e-12,
               0);
  const double *lp = test_column(&r, "loops", "cooling_power_w", &rows, &w);
  assert_int_equal(w, 2);
  for (size_t i = 0; i < rows; i++)
    assert_close(lp[i * 2] + lp[i * 2 + 1], cool[i], 1e-12, 0);
  run_free(&r);
}

/* A square wave of training load (30% <-> 100% every 10 s) on the NVL72
 * rack: without smoothing the feed jumps by the whole swing; with it the
 * facility's largest ramp is the racks' ramp limit, and the books still
 * balance with what smoothing burned or stored. */
static double square_wave_ramp(bool smoothing, double *violation_s) {
  char steps[2048] = "racks.0.load={pattern: steps, noise: 0, steps: [";
  for (int k = 0; k < 24; k++) {
    char one[64];
    snprintf(one, sizeof one, "%s{at: %d s, level: %s}", k ? ", " : "", 10 * k,
             k % 2 ? "30%" : "100%");
    strcat(steps, one);
  }
  strcat(steps, "]}");
  const char *sets[] = {"duration=4 min", "sample_period=1 min", steps,
                        "racks.1.load={level: 50%, noise: 0}",
                        smoothing ? "smoothing={enabled: true, floor: 0%, "
                                    "hysteresis: 0 s, ramp_up: 1 kW/s,"
                                    " ramp_down: 1 kW/s, store: 2 MJ}"
                                  : "smoothing={enabled: false}"};
  run r;
  run_scenario(&r, base, sets, 5);
  double ramp = r.sum.max_ramp_w_per_s;
  *violation_s = r.sum.smoothing_violation_s;
  run_free(&r);
  return ramp;
}

static void smoothing_limits_the_ramp(void **state) {
  (void)state;
  double violation;
  double raw = square_wave_ramp(false, &violation);
  double smooth = square_wave_ramp(true, &violation);
  assert_true(raw > 20e3); /* the swing of 72 capped GPUs in one second */
  assert_close(smooth, 1e3, 1e-9, 0);
  assert_close(violation, 0, 0, 0);
}

/* Peak shaving: a cap below the load at its peak, held by the battery
 * while it has energy; its state of charge stays in bounds, and the books
 * count what it delivered and lost. */
static void battery_shaves_the_peak(void **state) {
  (void)state;
  static const char *const sets[] = {
      "power.cap=130 kW",
      "grid.dr_events=[{start: 30 min, duration: 30 min, level: 60 kW}]",
      ("battery={capacity: 100 kWh, charge_power: 50 kW, discharge_power: "
       "50 kW, mode: dr_ride_through}")};
  run r;
  run_scenario(&r, base, sets, 3);
  size_t rows, w;
  const double *p = test_column(&r, "facility", "power_w", &rows, &w);
  const double *cap = test_column(&r, "facility", "cap_w", &rows, &w);
  const double *bat = test_column(&r, "facility", "battery_power_w", &rows, &w);
  const double *soc = test_column(&r, "facility", "battery_soc", &rows, &w);
  for (size_t i = 0; i < rows; i++) {
    assert_true(soc[i] >= 0.1 - 1e-12 && soc[i] <= 0.9 + 1e-12);
    if (cap[i] == 60000)
      assert_true(bat[i] > 0 && p[i] <= cap[i] * (1 + 1e-12));
    else
      assert_true(bat[i] <= 0); /* ride-through: no discharge outside DR */
  }
  assert_close(r.sum.cap_violation_s, 0, 0, 0);
  assert_true(r.sum.battery_loss_j > 0); /* it cycled: in DR, then recharging */
  run_free(&r);
}

static bool same_column(const run *a, const run *b, const char *g,
                        const char *c) {
  size_t ra, wa, rb, wb;
  const double *x = test_column(a, g, c, &ra, &wa);
  const double *y = test_column(b, g, c, &rb, &wb);
  return ra == rb && wa == wb && memcmp(x, y, ra * wa * sizeof *x) == 0;
}

static void same_seed_same_bits_other_seed_differs(void **state) {
  (void)state;
  static const char *const seed9[] = {"seed=9"};
  run a, b, c;
  run_scenario(&a, base, NULL, 0);
  run_scenario(&b, base, NULL, 0);
  run_scenario(&c, base, seed9, 1);
  assert_true(same_column(&a, &b, "facility", "power_w"));
  assert_true(same_column(&a, &b, "racks", "activity"));
  assert_false(same_column(&a, &c, "facility", "power_w"));
  assert_int_equal(c.sc.cfg.seed, 9);
  run_free(&a);
  run_free(&b);
  run_free(&c);
}

/* The resolved scenario, run again, is the same run. */
static void resolved_scenario_reproduces_the_run(void **state) {
  (void)state;
  run a, b;
  run_scenario(&a, base, NULL, 0);
  char *resolved = strdup(a.sc.resolved);
  run_scenario(&b, resolved, NULL, 0);
  assert_string_equal(a.sc.resolved, b.sc.resolved);
  assert_true(same_column(&a, &b, "facility", "power_w"));
  assert_non_null(strstr(resolved, "limit: 120 kW"));
  free(resolved);
  run_free(&a);
  run_free(&b);
}

typedef struct bad_case {
  const char *name;
  const char *set;     /* an override that breaks the base scenario */
  const char *where;   /* prefix of the message */
  const char *message; /* substring */
} bad_case;

static const bad_case bad[] = {
    {"unknown gpu", "racks.1.gpu=H300", "--set racks.1.gpu=H300:1:13",
     "unknown GPU type"},
    {"cap below the floor", "power.cap=90 kW", "--set power.cap=90 kW:1:11",
     "below what the factory draws"},
    {"duration not a multiple", "duration=7 min", "--set duration=7 min:1:10",
     "multiple of sample_period"},
    {"sample not a multiple", "sample_period=1500 ms", "--set",
     "multiple of control_period"},
    {"other max below idle", "racks.0.other_power_max=1 kW", "--set",
     "below other_power_idle"},
    {"rack limit too low", "racks.0.limit=40 kW", "--set racks.0.limit",
     "rack limit"},
    {"duplicate group", "racks.1.name=nvl", "--set racks.1.name=nvl:1:14",
     "two rack groups"},
    {"cap zero", "power.cap=0 W", "--set power.cap=0 W:1:11",
     "greater than zero"},
    {"unknown policy", "power.policy=magic", "--set", "one of: static"},
    {"steps without a start", "racks.1.load.steps=[{at: 1 h, level: 5%}]",
     "--set", "first at 0 s"},
    {"too many GPUs", "racks.0.count=100000", "factory.yaml:", "at most"},
    {"loop naming no group",
     "loops=[{name: l, kind: air, capacity: 1 MW, racks: [x]}]",
     "--set loops=", "no rack group is called 'x'"},
    {"group without a loop",
     "loops=[{name: l, kind: air, capacity: 1 MW, racks: [nvl]}]", "",
     "the loops take 0% of rack group 'hgx''s heat"},
    {"DR off the sample grid",
     "grid.dr_events=[{start: 7 min, duration: 1 h, cut: 10%}]",
     "--set grid.dr_events", "whole multiples of sample_period"},
    {"signal file missing", "grid.price={file: nowhere.csv}",
     "--set grid.price={file: nowhere.csv}:1:", "nowhere.csv: cannot open"},
    {"unknown system", "racks.1.system=DGX-X",
     "--set racks.1.system=DGX-X:1:16", "unknown system 'DGX-X'"},
    {"part of a server",
     "racks.1={name: hgx, count: 2, system: DGX-H100, gpus_per_rack: 36}",
     "--set racks.1=", "36 GPUs are not whole DGX-H100 servers of 8 GPUs"},
    {"conversion with a system",
     "racks.1={name: hgx, count: 2, system: DGX-H100, gpus_per_rack: 32, "
     "conversion: [{load: 50%, efficiency: 96%}]}",
     "--set racks.1=", "a rack group with a system takes no conversion"},
    {"host load without a system", "racks.1.host_load=50%",
     "--set racks.1.host_load=50%:1:19", "host_load is a system's"},
    {"signal file too short",
     "grid.carbon={file: short.csv, value_column: v, basis: lifecycle, "
     "start: '2023-01-01 01:00'}",
     "--set grid.carbon={file: short.csv", "covers 1 h from the start"},
};

static void bad_factory_input(void **state) {
  const bad_case *c = *state;
  factory_scenario sc;
  sim_error err = {0};
  const char *path = test_scenario_file("factory.yaml", base);
  const char *sets[] = {c->set};
  assert_int_equal(factory_scenario_load(path, sets, 1, &sc, &err), SIM_EINPUT);
  char where[4200];
  snprintf(where, sizeof where, "%s", c->where);
  if (strncmp(c->where, "factory.yaml:", 13) == 0)
    snprintf(where, sizeof where, "%s", path);
  if (strncmp(err.msg, where, strlen(where)) != 0 ||
      strstr(err.msg, c->message) == NULL)
    fail_msg("got '%s', want '%s...' with '%s'", err.msg, where, c->message);
}

/* A group of DGX-H100: each rack is four servers at the catalog's model,
 * their supplies' losses and fans inside the IT, ITUE above 1; the
 * resolved scenario names the system and what it filled in. */
static void systems_power_the_racks(void **state) {
  (void)state;
  static const char *const sets[] = {
      "power.cap=1 MW",
      "racks.1={name: hgx, count: 2, system: DGX-H100, gpus_per_rack: 32, "
      "load: {pattern: constant, level: 80%, noise: 0}}"};
  run r;
  run_scenario(&r, base, sets, 2);
  const sys_spec *s = sys_catalog_find(&r.sc.systems, "DGX-H100");
  const gpu_spec *g = gpu_catalog_find(&r.sc.catalog, "H100-SXM");
  sys_power p =
      sys_server_power(s, g, 8 * gpu_power(g, 1, 0.8), 0.8, 0.8 * s->host_load);
  size_t rows, w;
  const double *rack = test_column(&r, "racks", "power_w", &rows, &w);
  assert_int_equal(w, 3);
  for (size_t i = 0; i < rows; i++)
    for (size_t k = 1; k < 3; k++)
      assert_close(rack[i * w + k], 4 * p.wall_w, 1e-9, 0);
  assert_close(r.sum.fan_energy_j, 2 * 4 * p.fan_w * r.sum.duration_s, 1e-9, 0);
  assert_close(r.sum.psu_loss_energy_j, 2 * 4 * p.psu_loss_w * r.sum.duration_s,
               1e-9, 0);
  assert_true(factory_itue(&r.sum) > 1.05);
  assert_non_null(strstr(r.sc.resolved, "system: \"DGX-H100\""));
  assert_non_null(strstr(r.sc.resolved, "gpu: \"H100-SXM\""));
  assert_non_null(strstr(r.sc.resolved, "nvlink_domain: 8"));
  assert_null(strstr(r.sc.resolved, "other_power_idle: 0 W\n    other_power_"
                                    "max: 0 W\n    conversion: []\n    "
                                    "nvlink_domain: 8"));
  char note[512];
  assert_string_equal(factory_host_note(&r.sc.cfg, note, sizeof note), "");
  /* The resolved scenario is the same run: the system's parts, not
   * other_power_* of 0 W. */
  run again;
  char *resolved = strdup(r.sc.resolved);
  run_scenario(&again, resolved, NULL, 0);
  assert_true(same_column(&r, &again, "facility", "it_power_w"));
  free(resolved);
  run_free(&again);
  run_free(&r);
}

/* A group with neither a system nor other_power_* is named: its IT
 * excludes the host. */
static void a_group_without_host_power_is_named(void **state) {
  (void)state;
  static const char *const sets[] = {
      "racks.0={name: nvl, count: 1, gpu: GB200, gpus_per_rack: 72}"};
  run r;
  run_scenario(&r, base, sets, 1);
  char note[512];
  factory_host_note(&r.sc.cfg, note, sizeof note);
  assert_non_null(strstr(note, "without host power"));
  assert_non_null(strstr(note, ": nvl: their IT excludes"));
  assert_null(strstr(note, "hgx"));
  run_free(&r);
}

static void unknown_gpu_hint_lists_the_catalog(void **state) {
  (void)state;
  factory_scenario sc;
  sim_error err = {0};
  char text[sizeof base + 16];
  snprintf(text, sizeof text, "%s", base);
  memcpy(strstr(text, "H100-SXM"), "H300-SXM", 8);
  factory_scenario_load(test_scenario_file("factory.yaml", text), NULL, 0, &sc,
                        &err);
  if (strstr(err.msg, ":16:10: unknown GPU type 'H300-SXM'") == NULL)
    fail_msg("got '%s'", err.msg);
  assert_non_null(strstr(err.msg, "hint: did you mean 'H100-SXM'? known "
                                  "types: H100-SXM, H100-PCIe"));
}

static int write_short_csv(void **state) {
  (void)state;
  test_scenario_file("short.csv", "t,v\n2023-01-01 00:00,100\n"
                                  "2023-01-01 01:00,200\n");
  return 0;
}

static void a_catalog_file_adds_a_type(void **state) {
  (void)state;
  test_scenario_file(
      "mini-catalog.yaml",
      "gpus:\n  - name: MINI\n    tdp: 100 W\n    idle_power: 10 W\n"
      "    power_cap_min: 50 W\n    power_cap_max: 100 W\n"
      "    clock_max: 1 GHz\n    clock_min: 100 MHz\n"
      "    memory: 8 GB\n    memory_bandwidth: 100 GB/s\n"
      "    dense: {fp16: 10 TFLOPS}\n    sources: ['all: test']\n");
  static const char text[] =
      "name: mini\nduration: 1 h\ncatalog: mini-catalog.yaml\n"
      "power: {cap: 10 kW}\nloops: []\nelectrical: {losses: false}\n"
      "racks: [{name: r, count: 2, gpu: MINI, gpus_per_rack: 8, "
      "load: {level: 100%, noise: 0}}]\n";
  run r;
  run_scenario(&r, text, NULL, 0);
  assert_close(r.sum.mean_power_w, 16 * 100, 1e-12, 0);
  run_free(&r);
}

/* scenarios/frankfurt-week.yaml for 2 days with a 15 $/kW demand charge:
 * a lower cap lowers the billed peak and with it the demand charge, which
 * is the rate times the peak prorated over 2 of 30 days; the summary's
 * cost is the sum of its parts and names the carbon basis. */
static void a_lower_cap_cuts_the_demand_charge(void **state) {
  (void)state;
  static const char *const caps[2] = {"power.cap=700 kW", "power.cap=560 kW"};
  double demand[2], peak[2];
  for (size_t k = 0; k < 2; k++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/scenarios/frankfurt-week.yaml",
             AIFSIM_SOURCE_DIR);
    const char *sets[] = {"duration=2 d", "grid.tariff.demand_charge=15 $/kW",
                          "grid.tariff.fixed_fee=3000 $", caps[k]};
    run r;
    test_run_file(&r, path, sets, N_OF(sets));
    const factory_summary *s = &r.sum;
    demand[k] = s->cost_demand;
    peak[k] = s->peak_demand_kw;
    assert_true(peak[k] <= s->cap_w / 1e3 * (1 + 1e-9));
    assert_close(s->cost_demand, 15 * s->peak_demand_kw * 2 / 30, 1e-12, 0);
    assert_close(s->cost_fees, 3000 * 2 / 30.0, 1e-12, 0);
    assert_close(s->cost, s->cost_energy + s->cost_demand + s->cost_fees, 1e-12,
                 0);
    assert_string_equal(tel_memory_summary_str(r.sink, "carbon_basis"),
                        "lifecycle");
    print_message("cap %s: peak %.1f kW, demand charge %.2f $, energy "
                  "%.2f $\n",
                  caps[k] + 10, s->peak_demand_kw, s->cost_demand,
                  s->cost_energy);
    run_free(&r);
  }
  assert_true(peak[1] < peak[0]);
  assert_true(demand[1] < demand[0]);
}

/* The allocation-failure tests of the factory (factory_alloc.h) on base
 * with a loop, smoothing, a battery through a demand-response event, a
 * PDU fault, a service and a training job. */
static void allocation_failures_leave_nothing(void **state) {
  (void)state;
  static const char *const sets[] = {
      "duration=30 min",
      "loops=[{name: air, kind: air, capacity: 100 kW}]",
      "smoothing={enabled: true, floor: 0%, hysteresis: 0 s, "
      "ramp_up: 1 kW/s, ramp_down: 1 kW/s, store: 2 MJ}",
      "grid.outdoor={value: 20 degC}",
      "grid.dr_events=[{start: 10 min, duration: 10 min, level: 120 kW}]",
      "battery={capacity: 100 kWh, charge_power: 50 kW, discharge_power: "
      "50 kW, mode: dr_ride_through}",
      "faults=[{kind: pdu, racks: [hgx-1], at: 5 min, duration: 10 min}]",
      "services=[{name: chat, model: Llama-3.1-8B, precision: fp8, "
      "gpu: H100-SXM, replicas: 2, arrivals: {kind: poisson, rate: 5, "
      "prompt: {mean: 500}, output: {mean: 200}}}]",
      "training=[{name: j, model: Llama-3.1-8B, gpu: GB200, dp: 2, tp: 4, "
      "tokens_per_iteration: 65536, iterations: 100}]",
  };
  alloc_check_scenario(test_scenario_file("factory.yaml", base), sets,
                       N_OF(sets), 12);
}

/* Each invariant broken on purpose and what the books then say. */
static const struct {
  factory_break which;
  const char *says;
} breaks[] = {
    {FACTORY_BREAK_NONE, NULL},
    {FACTORY_BREAK_BALANCE, "energy balance: the books do not balance"},
    {FACTORY_BREAK_NAN, "energy balance: the books do not balance"},
    {FACTORY_BREAK_CO2, "carbon: CO2 is -1 kg, not a finite, >= 0 number"},
    {FACTORY_BREAK_COST, "cost is nan $, not a finite number"},
    {FACTORY_BREAK_CAP, "cap accounting: over the cap for 1801 s"},
};

/* The books refuse a run whose invariants fail, naming the invariant and
 * its numbers: each broken on purpose through the test seam. */
static void broken_books_fail_the_run(void **state) {
  (void)state;
  static const char *const sets[] = {"duration=30 min",
                                     "grid.carbon={value: 400 gCO2/kWh}",
                                     "grid.price={value: 80 $/MWh}"};
  const char *path = test_scenario_file("factory.yaml", base);
  for (size_t i = 0; i < N_OF(breaks); i++) {
    factory_scenario sc;
    sim_error err = {0};
    if (factory_scenario_load(path, sets, N_OF(sets), &sc, &err) != SIM_OK)
      fail_msg("%s", err.msg);
    sim_engine *e = sim_engine_create(NULL);
    factory *f = factory_create(&sc, e, NULL, &err);
    assert_non_null(f);
    assert_int_equal(sim_engine_run(e, factory_duration(&sc.cfg)), SIM_OK);
    factory__test_break(f, breaks[i].which);
    factory_summary s;
    int rc = factory_finish(f, &s, &err);
    if (breaks[i].says == NULL) {
      assert_int_equal(rc, SIM_OK);
    } else {
      assert_int_equal(rc, SIM_ESTATE);
      if (strstr(err.msg, breaks[i].says) == NULL)
        fail_msg("break %zu: '%s' does not say '%s'", i, err.msg,
                 breaks[i].says);
    }
    factory_destroy(f);
    sim_engine_destroy(e);
    factory_scenario_release(&sc);
  }
}

/* Every number a scenario or a catalog gives has an upper bound (issue
 * 28: 1e304 W passed check): an integer its own finite range, a quantity
 * its own or its kind's largest (units_ceiling, scenario_bind.c). */
static void walk_bounds(const scn_schema *s, int depth) {
  for (size_t i = 0; i < s->nfields; i++) {
    const scn_field *f = &s->fields[i];
    if (f->type == SCN_INT && !(f->min < f->max && isfinite(f->max)))
      fail_msg("%s: '%s' is an integer without a finite range", s->name,
               f->key);
    if (f->type == SCN_QUANTITY &&
        !(units_ceiling(f->dim) > 0 && isfinite(units_ceiling(f->dim))))
      fail_msg("%s: '%s' has no largest value", s->name, f->key);
    if ((f->type == SCN_MAP || f->type == SCN_LIST) && f->sub != NULL &&
        depth < 16)
      walk_bounds(f->sub, depth + 1);
  }
}

static void every_number_has_an_upper_bound(void **state) {
  (void)state;
  walk_bounds(&factory_schema, 0);
  walk_bounds(&gpu_spec_schema, 0);
  walk_bounds(&llm_model_schema, 0);
}

int main(void) {
  struct CMUnitTest tests[64];
  size_t n = 0;
  TEST_ADD(tests, n, books_balance_and_cap_holds);
  TEST_ADD(tests, n, every_number_has_an_upper_bound);
  TEST_ADD(tests, n, constant_load_gives_analytic_power);
  TEST_ADD(tests, n, noise_moves_only_its_groups_racks);
  TEST_ADD(tests, n, same_seed_same_bits_other_seed_differs);
  TEST_ADD(tests, n, dr_cut_is_held_or_reported);
  TEST_ADD(tests, n, constant_signals_give_exact_books);
  TEST_ADD(tests, n, cooling_and_losses_balance);
  TEST_ADD(tests, n, smoothing_limits_the_ramp);
  TEST_ADD(tests, n, battery_shaves_the_peak);
  TEST_ADD(tests, n, resolved_scenario_reproduces_the_run);
  TEST_ADD(tests, n, a_lower_cap_cuts_the_demand_charge);
  TEST_ROWS(tests, n, bad_factory_input, bad);
  TEST_ADD(tests, n, systems_power_the_racks);
  TEST_ADD(tests, n, a_group_without_host_power_is_named);
  TEST_ADD(tests, n, unknown_gpu_hint_lists_the_catalog);
  TEST_ADD(tests, n, a_catalog_file_adds_a_type);
  TEST_ADD(tests, n, allocation_failures_leave_nothing);
  TEST_ADD(tests, n, broken_books_fail_the_run);
  return _cmocka_run_group_tests("factory", tests, n, write_short_csv, NULL);
}
