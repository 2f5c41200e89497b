/* test_system.c - the systems catalog (every system the issue names, its
 * GPUs in the GPU catalog, a source for each), the server power model's
 * defining points (the supplies' curve, the fans' cube law and floor, the
 * parts' drivers), its full-load figures against the vendors' ratings,
 * and the catalog's bad input with its position. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "system.h"
#include "test_catalogs.h"
#include "validate_row.h"

static const sys_spec *find(const char *name, const gpu_spec **g) {
  const sys_spec *s = sys_catalog_find(&cats.sys, name);
  assert_non_null(s);
  *g = gpu_catalog_find(&cats.gpu, s->gpu);
  assert_non_null(*g);
  return s;
}

/* The six systems: their GPUs and how many a unit holds. */
typedef struct system_row {
  const char *name;
  const char *gpu;
  int64_t gpus;
} system_row;

static const system_row required[] = {
    {"DGX-H100", "H100-SXM", 8},  {"HGX-H100", "H100-SXM", 8},
    {"HGX-H200", "H200", 8},      {"HGX-B200", "B200", 8},
    {"GB200-NVL72", "GB200", 72}, {"GB300-NVL72", "GB300", 72},
};

static void names_its_gpus_and_sources(void **state) {
  const system_row *row = *state;
  const gpu_spec *g;
  const sys_spec *s = find(row->name, &g);
  assert_string_equal(s->gpu, row->gpu);
  assert_int_equal(s->gpus, row->gpus);
  assert_true(s->nsources >= 3);
  assert_true(s->psu.count >= 2 && s->psu.ncurve >= 2);
  /* Every kind of part a server has is there, memory aside for the
   * NVL72s, whose LPDDR5X is counted with Grace. */
  bool has[SYS_NKINDS] = {false};
  for (size_t i = 0; i < s->nparts; i++)
    has[s->parts[i].kind] = true;
  assert_true(has[SYS_CPU] && has[SYS_NIC] && has[SYS_NVSWITCH]);
  assert_true(has[SYS_MEMORY] || s->gpus == 72);
  assert_true(s->fans.max_w > 0);
}

/* The 80 PLUS Titanium points (90/94/96/91% at 10/20/50/100%), linear in
 * between and held beyond the ends. */
typedef struct psu_row {
  const char *name;
  double load, efficiency;
} psu_row;

static const psu_row titanium[] = {
    {"at 10%", 0.10, 0.90},          {"at 20%", 0.20, 0.94},
    {"at 50%", 0.50, 0.96},          {"at 100%", 1.00, 0.91},
    {"at 35%", 0.35, 0.95},          {"at 75%", 0.75, 0.935},
    {"below the curve", 0.02, 0.90}, {"above the curve", 1.3, 0.91},
};

static void psu_follows_titanium(void **state) {
  const psu_row *row = *state;
  const gpu_spec *g;
  const sys_spec *s = find("DGX-H100", &g);
  double rated = (double)s->psu.count * s->psu.rating_w;
  assert_close(sys_psu_efficiency(s, row->load * rated), row->efficiency, 1e-12,
               0);
  assert_close(sys_wall_w(s, row->load * rated),
               row->load * rated / row->efficiency, 1e-12, 0);
}

/* Fans: the cube of the heat's share of the design heat, never under the
 * floor, never over full speed. */
static void fans_follow_the_heat(void **state) {
  (void)state;
  const gpu_spec *g;
  const sys_spec *s = find("DGX-H100", &g);
  double design = 8 * g->tdp_w + s->parts_max_w;
  assert_close(sys_fan_w(s, g, design), s->fans.max_w, 1e-12, 0);
  assert_close(sys_fan_w(s, g, 2 * design), s->fans.max_w, 1e-12, 0);
  assert_close(sys_fan_w(s, g, 0.5 * design), s->fans.max_w / 8, 1e-12, 0);
  double floor = pow(s->fans.min_speed, 3) * s->fans.max_w;
  assert_close(sys_fan_w(s, g, 0), floor, 1e-12, 0);
  assert_close(sys_fan_w(s, g, 0.1 * design), floor, 1e-12, 0);
}

/* The parts: the host load drives the CPUs, the GPUs' activity the NICs
 * and switches; each is its idle at 0 and its maximum at 1. */
static void parts_follow_their_drivers(void **state) {
  (void)state;
  const gpu_spec *g;
  const sys_spec *s = find("DGX-H100", &g);
  assert_close(sys_parts_w(s, 0, 0), s->parts_idle_w, 1e-12, 0);
  assert_close(sys_parts_w(s, 1, 1), s->parts_max_w, 1e-12, 0);
  double net = 0, cpu = 0;
  for (size_t i = 0; i < s->nparts; i++) {
    const sys_part *p = &s->parts[i];
    double span = (double)p->count * (p->max_w - p->idle_w);
    if (p->kind == SYS_NIC || p->kind == SYS_NVSWITCH)
      net += span;
    else
      cpu += span;
  }
  assert_close(sys_parts_w(s, 1, 0) - s->parts_idle_w, net, 1e-12, 0);
  assert_close(sys_parts_w(s, 0, 1) - s->parts_idle_w, cpu, 1e-12, 0);
  assert_close(sys_parts_w(s, 2, -1), sys_parts_w(s, 1, 0), 1e-12, 0);
}

/* sys_parts_w adds what the load made of each part (units, span_w,
 * follows_gpus): the same bits as the sum written from the catalog's own
 * figures, part by part, for every system and activity and host load
 * (clamped ones too). */
static void parts_sum_is_the_catalogs(const sys_spec *s) {
  const double xs[] = {-0.5, 0, 1e-300, 0.1, 0.3, 1.0 / 3, 0.5, 0.999, 1, 7};
  size_t nx = sizeof xs / sizeof *xs;
  for (size_t ia = 0; ia < nx; ia++)
    for (size_t iu = 0; iu < nx; iu++) {
      double a = fmin(1, fmax(0, xs[ia])), u = fmin(1, fmax(0, xs[iu]));
      double want = 0;
      for (size_t i = 0; i < s->nparts; i++) {
        const sys_part *p = &s->parts[i];
        double x = p->kind == SYS_NIC || p->kind == SYS_NVSWITCH ? a : u;
        want += (double)p->count * (p->idle_w + (p->max_w - p->idle_w) * x);
      }
      double got = sys_parts_w(s, xs[ia], xs[iu]);
      if (memcmp(&got, &want, sizeof got) != 0)
        fail_msg("%s (%zu parts) at %g, %g: %.17g, the catalog's %.17g",
                 s->name, s->nparts, xs[ia], xs[iu], got, want);
    }
  /* At full activity and the system's host load: the sum kept at load. */
  double want = 0, got = sys_parts_w(s, 1, s->host_load);
  for (size_t i = 0; i < s->nparts; i++) {
    const sys_part *p = &s->parts[i];
    double x = p->kind == SYS_NIC || p->kind == SYS_NVSWITCH ? 1 : s->host_load;
    want += (double)p->count * (p->idle_w + (p->max_w - p->idle_w) * x);
  }
  if (memcmp(&got, &want, sizeof got) != 0)
    fail_msg("%s at full load: %.17g, the catalog's %.17g", s->name, got, want);
}

static void parts_are_the_catalog_sum(void **state) {
  (void)state;
  for (size_t k = 0; k < cats.sys.n; k++)
    parts_sum_is_the_catalogs(&cats.sys.systems[k]);
}


/* A server's books: wall = DC + losses, DC = compute + fans, and more
 * GPU power never costs less at the wall. */
static void server_power_adds_up(void **state) {
  (void)state;
  for (size_t k = 0; k < cats.sys.n; k++) {
    const sys_spec *s = &cats.sys.systems[k];
    const gpu_spec *g = gpu_catalog_find(&cats.gpu, s->gpu);
    assert_non_null(g);
    double last = 0;
    for (int i = 0; i <= 20; i++) {
      double a = i / 20.0;
      double gpu_w = (double)s->gpus * (g->idle_w + a * (g->tdp_w - g->idle_w));
      sys_power p = sys_server_power(s, g, gpu_w, a, a * s->host_load);
      assert_close(p.compute_w, p.gpu_w + p.parts_w, 1e-12, 0);
      assert_close(p.dc_w, p.compute_w + p.fan_w, 1e-12, 0);
      assert_close(p.wall_w, p.dc_w + p.psu_loss_w, 1e-12, 0);
      assert_true(p.psu_loss_w > 0 && p.wall_w > last);
      last = p.wall_w;
    }
  }
}

/* Full load against the vendors' ratings. DGX H100's and HGX B200's fans
 * are what the rating leaves (the catalog's sources), so their rows are
 * arithmetic. */
static void full_load_meets_the_ratings(void **state) {
  (void)state;
  const gpu_spec *g;
  const sys_spec *s = find("DGX-H100", &g);
  double dgx = sys_full_power(s, g).wall_w;
  validate_row(VALIDATE_KIND_IDENTITY,
               "the fans' maximum is what this rating leaves (catalog)",
               VALIDATE_SEED, "DGX H100 at full load, at the inlet",
               "NVIDIA DGX H100/H200 User Guide: 10.2 kW maximum (the fans "
               "are what it leaves: identity)",
               "systems catalog, every part at its maximum", "W", 10200, dgx,
               0.99 * 10200, 1.01 * 10200, "+-1%");
  assert_close(dgx, 10200, 0.01, 0);
  s = find("HGX-B200", &g);
  double b200 = sys_full_power(s, g).wall_w;
  validate_row(VALIDATE_KIND_IDENTITY,
               "the fans' maximum is what this rating leaves (catalog)",
               VALIDATE_SEED, "HGX B200 (DGX B200) at full load, at the inlet",
               "NVIDIA DGX B200 User Guide: about 14.3 kW maximum (the fans "
               "are what it leaves: identity)",
               "systems catalog, every part at its maximum", "W", 14300, b200,
               0.99 * 14300, 1.01 * 14300, "+-1%");
  assert_close(b200, 14300, 0.01, 0);
  print_message("full load: DGX H100 %.0f W, HGX B200 %.0f W\n", dgx, b200);
}

/* The NVL72 racks at full load: their fans and parts are estimates, held
 * to the rack figures vendors give (calibration). */
static void nvl72_racks_meet_the_vendors_figures(void **state) {
  (void)state;
  const gpu_spec *g;
  const sys_spec *s = find("GB200-NVL72", &g);
  double nvl = sys_full_power(s, g).wall_w;
  validate_row(VALIDATE_KIND_CALIBRATION,
               "the parts no vendor publishes were estimated with this "
               "figure in view",
               VALIDATE_SEED, "GB200 NVL72 rack at full load, at the inlet",
               "NVIDIA: about 120 kW a rack; 132 kW of DC from its 8 power "
               "shelves (Supermicro)",
               "systems catalog, every part at its maximum", "W", 120e3, nvl,
               115e3, 132e3, "115-132 kW");
  assert_true(nvl >= 115e3 && nvl <= 132e3);
  s = find("GB300-NVL72", &g);
  double gb300 = sys_full_power(s, g).wall_w;
  validate_row(VALIDATE_KIND_CALIBRATION,
               "the parts no vendor publishes were estimated with this "
               "figure in view",
               VALIDATE_SEED, "GB300 NVL72 rack at full load, at the inlet",
               "vendors: up to about 142 kW a rack",
               "systems catalog, every part at its maximum", "W", 142e3, gb300,
               125e3, 142e3, "125-142 kW");
  assert_true(gb300 >= 125e3 && gb300 <= 142e3);
  print_message("full load: GB200 NVL72 %.1f kW, GB300 NVL72 %.1f kW\n",
                nvl / 1e3, gb300 / 1e3);
}

/* Bad catalogs: each refused with its position. */
#define ENTRY(parts, psu)                                                      \
  "systems:\n  - name: X\n    gpu: H100-SXM\n    gpus: 8\n"                    \
  "    host_load: 30%\n    parts:\n" parts "    fans: {max_power: 1 kW, "      \
  "min_speed: 25%}\n    psu:\n" psu "    sources: [\"x: y\"]\n"
#define CPU                                                                    \
  "      - {kind: cpu, count: 2, idle_power: 90 W, max_power: 350 W}\n"
#define PSU                                                                    \
  "      count: 2\n      rating: 3 kW\n      efficiency:\n"                    \
  "        - {load: 10%, efficiency: 90%}\n"                                   \
  "        - {load: 50%, efficiency: 96%}\n"

static const test_bad_yaml bad[] = {
    {"max below idle",
     ENTRY("      - {kind: cpu, count: 2, idle_power: 90 W, max_power: 50 W}\n",
           PSU),
     "7:60: max_power 50 W is below idle_power 90 W"},
    {"unknown kind",
     ENTRY("      - {kind: gpu, count: 2, idle_power: 1 W, max_power: 2 W}\n",
           PSU),
     "7:16: 'kind' cannot be 'gpu'"},
    {"efficiency not rising",
     ENTRY(CPU, "      count: 2\n      rating: 3 kW\n      efficiency:\n"
                "        - {load: 50%, efficiency: 90%}\n"
                "        - {load: 10%, efficiency: 96%}\n"),
     "14:18: X: efficiency points must rise in load"},
    {"no parts", ENTRY("", PSU), "6:"},
    {"twice",
     "systems:\n"
     "  - {name: X, gpu: A, gpus: 8, host_load: 0%, parts: [{kind: cpu, "
     "count: 1, idle_power: 1 W, max_power: 2 W}], fans: {max_power: 1 W, "
     "min_speed: 0%}, psu: {count: 1, rating: 1 kW, efficiency: [{load: 50%, "
     "efficiency: 90%}]}, sources: [a]}\n"
     "  - {name: X, gpu: A, gpus: 8, host_load: 0%, parts: [{kind: cpu, "
     "count: 1, idle_power: 1 W, max_power: 2 W}], fans: {max_power: 1 W, "
     "min_speed: 0%}, psu: {count: 1, rating: 1 kW, efficiency: [{load: 50%, "
     "efficiency: 90%}]}, sources: [a]}\n",
     "system 'X' is listed twice"},
};

/* The same for systems of one part to more than sys_parts_w takes two a
 * register (SYS_PARTS_LANED: then one by one), odd counts and even, the
 * kinds in turn and figures whose sums round. */
typedef struct parts_case {
  const char *name;
  size_t nparts;
} parts_case;

static const parts_case parts_cases[] = {
    {"1 part", 1}, {"2 parts", 2}, {"3 parts", 3}, {"7 parts", 7},
    {"8 parts", 8}, {"9 parts", 9}, {"12 parts", 12}};

static void parts_of_any_count_are_the_sum(void **state) {
  const parts_case *c = *state;
  static const char *const kinds[] = {"cpu", "nic",     "memory",
                                      "nvswitch", "storage", "other"};
  char yaml[4096];
  int len = snprintf(yaml, sizeof yaml,
                     "systems:\n  - name: X\n    gpu: H100-SXM\n    gpus: 8\n"
                     "    host_load: 30%%\n    parts:\n");
  for (size_t i = 0; i < c->nparts; i++)
    len += snprintf(yaml + len, sizeof yaml - (size_t)len,
                    "      - {kind: %s, count: %zu, idle_power: %.7g W, "
                    "max_power: %.7g W}\n",
                    kinds[i % 6], 1 + i % 4, 3.1 + 7.3 * (double)i,
                    41.7 + 13.9 * (double)i);
  snprintf(yaml + len, sizeof yaml - (size_t)len, "%s",
           "    fans: {max_power: 1 kW, min_speed: 25%}\n    psu:\n" PSU
           "    sources: [\"x: y\"]\n");
  FILE *f = fopen("parts-systems.yaml", "w");
  assert_non_null(f);
  fputs(yaml, f);
  fclose(f);
  sys_catalog cat = {0};
  sim_error err = {0};
  int rc = sys_catalog_load_file(&cat, "parts-systems.yaml", &err);
  remove("parts-systems.yaml");
  if (rc != SIM_OK)
    fail_msg("%s", err.msg);
  assert_int_equal(cat.systems[0].nparts, c->nparts);
  parts_sum_is_the_catalogs(&cat.systems[0]);
  sys_catalog_fini(&cat);
}

static void refuses_bad_catalogs(void **state) {
  const test_bad_yaml *row = *state;
  sys_catalog cat = {0};
  sim_error err = {0};
  FILE *f = fopen("bad-systems.yaml", "w");
  assert_non_null(f);
  fputs(row->yaml, f);
  fclose(f);
  int rc = sys_catalog_load_file(&cat, "bad-systems.yaml", &err);
  remove("bad-systems.yaml");
  if (rc == SIM_OK)
    sys_catalog_fini(&cat);
  assert_int_equal(rc, SIM_EINPUT);
  if (strstr(err.msg, row->message) == NULL)
    fail_msg("'%s' lacks '%s'", err.msg, row->message);
  assert_true(strncmp(err.msg, "bad-systems.yaml:", 17) == 0);
}

int main(void) {
  struct CMUnitTest tests[64];
  size_t n = 0;
  TEST_ROWS(tests, n, names_its_gpus_and_sources, required);
  TEST_ROWS(tests, n, psu_follows_titanium, titanium);
  TEST_ADD(tests, n, fans_follow_the_heat);
  TEST_ADD(tests, n, parts_follow_their_drivers);
  TEST_ADD(tests, n, parts_are_the_catalog_sum);
  TEST_ROWS(tests, n, parts_of_any_count_are_the_sum, parts_cases);
  TEST_ADD(tests, n, server_power_adds_up);
  TEST_ADD(tests, n, full_load_meets_the_ratings);
  TEST_ADD(tests, n, nvl72_racks_meet_the_vendors_figures);
  TEST_ROWS(tests, n, refuses_bad_catalogs, bad);
  return _cmocka_run_group_tests("system", tests, n,
                                 test_catalogs_load_hardware,
                                 test_catalogs_release);
}
