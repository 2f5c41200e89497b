/* main.c - the aifsim command: parses the command line and wires the
 * scenario, the engine, the factory and the HDF5 writer together. The only
 * place that prints, reads the wall clock or decides an exit status.
 * Exit status: 0 ok, 1 the run failed, 2 usage or bad input. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_errno.h>

#include "engine.h"
#include "factory.h"
#include "gpu.h"
#include "progress.h"
#include "record.h"

enum { EXIT_RUN_FAILED = 1, EXIT_BAD_INPUT = 2 };
enum { MAX_SETS = 256 };

typedef struct options {
  const char *command;
  const char *scenario;
  const char *output;
  const char *catalog;
  const char *sets[MAX_SETS + 1];
  size_t nsets;
  char seed_set[64];
  bool quiet, resolved;
} options;

static volatile sig_atomic_t interrupted;

static void on_signal(int sig) { interrupted = sig; }

static const char usage_text[] =
    "usage: aifsim COMMAND [ARGS]\n"
    "\n"
    "  run SCENARIO [-o OUT.h5] [--seed N] [--set KEY=VALUE]... [--quiet]\n"
    "        simulate; write OUT.h5 (default out/NAME.h5)\n"
    "  check SCENARIO [--resolved] [--seed N] [--set KEY=VALUE]...\n"
    "        validate only; --resolved prints the scenario with every\n"
    "        default filled in\n"
    "  catalog [--catalog FILE]\n"
    "        the GPU types with their figures and TFLOPS per watt\n"
    "  version\n"
    "  help\n"
    "\n"
    "Keys in --set are paths into the scenario: power.cap=18MW,\n"
    "racks.0.count=4. Exit status: 0 ok, 1 the run failed, 2 bad input.\n";

static int usage_error(const char *fmt, const char *arg) {
  fprintf(stderr, "aifsim: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\n\n%s", usage_text);
  return EXIT_BAD_INPUT;
}

static double wall_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ------------------------------------------------------------------ */
/* Arguments                                                           */
/* ------------------------------------------------------------------ */

static int take_value(int argc, char **argv, int *i, const char **out) {
  if (*i + 1 >= argc)
    return usage_error("%s needs a value", argv[*i]);
  *out = argv[++*i];
  return 0;
}

static int parse_seed(options *o, const char *text) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 10);
  if (*text == '\0' || *end != '\0' || errno != 0 || text[0] == '-')
    return usage_error("--seed takes a whole number, not '%s'", text);
  snprintf(o->seed_set, sizeof o->seed_set, "seed=%llu", v);
  return 0;
}

static int add_set(options *o, const char *assignment) {
  if (o->nsets >= MAX_SETS)
    return usage_error("more than %s --set options", "256");
  o->sets[o->nsets++] = assignment;
  return 0;
}

/* Options that take a value; the value is checked by its handler. */
static int parse_valued(options *o, const char *opt, const char *v) {
  if (strcmp(opt, "-o") == 0 || strcmp(opt, "--output") == 0)
    o->output = v;
  else if (strcmp(opt, "--set") == 0)
    return add_set(o, v);
  else if (strcmp(opt, "--seed") == 0)
    return parse_seed(o, v);
  else
    o->catalog = v;
  return 0;
}

static bool takes_value(const char *a) {
  static const char *const valued[] = {"-o", "--output", "--set", "--seed",
                                       "--catalog"};
  for (size_t i = 0; i < sizeof valued / sizeof valued[0]; i++)
    if (strcmp(a, valued[i]) == 0)
      return true;
  return false;
}

static int parse_option(options *o, int argc, char **argv, int *i) {
  const char *a = argv[*i], *v = NULL;
  if (takes_value(a)) {
    int rc = take_value(argc, argv, i, &v);
    return rc != 0 ? rc : parse_valued(o, a, v);
  }
  if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0)
    o->quiet = true;
  else if (strcmp(a, "--resolved") == 0)
    o->resolved = true;
  else if (a[0] == '-')
    return usage_error("unknown option '%s'", a);
  else if (o->scenario == NULL)
    o->scenario = a;
  else
    return usage_error("unexpected argument '%s'", a);
  return 0;
}

static int parse_args(options *o, int argc, char **argv) {
  memset(o, 0, sizeof *o);
  if (argc < 2)
    return usage_error("%s", "no command given");
  o->command = argv[1];
  for (int i = 2; i < argc; i++) {
    int rc = parse_option(o, argc, argv, &i);
    if (rc != 0)
      return rc;
  }
  if (o->seed_set[0] != '\0')
    o->sets[o->nsets++] = o->seed_set;
  return 0;
}

/* ------------------------------------------------------------------ */
/* check                                                               */
/* ------------------------------------------------------------------ */

static int report(const sim_error *err) {
  fprintf(stderr, "%s\n", err->msg);
  return err->code == SIM_EINPUT || err->code == SIM_EIO ? EXIT_BAD_INPUT
                                                         : EXIT_RUN_FAILED;
}

static int load(const options *o, factory_scenario *sc) {
  sim_error err = {0};
  if (o->scenario == NULL)
    return usage_error("%s needs a scenario file", o->command);
  if (factory_scenario_load(o->scenario, o->sets, o->nsets, sc, &err) != SIM_OK)
    return report(&err);
  return 0;
}

static int cmd_check(const options *o) {
  factory_scenario sc;
  int rc = load(o, &sc);
  if (rc != 0)
    return rc;
  if (o->resolved)
    fputs(sc.resolved, stdout);
  else
    printf("%s: ok\n", o->scenario);
  factory_scenario_release(&sc);
  return 0;
}

/* ------------------------------------------------------------------ */
/* catalog                                                             */
/* ------------------------------------------------------------------ */

static void print_flops(const gpu_spec *g) {
  for (int p = 0; p < GPU_NPRECISIONS; p++) {
    double v = gpu_peak_flops(g, (gpu_precision)p);
    if (isnan(v))
      printf(" %7s", "-");
    else
      printf(" %7.0f", v / 1e12);
  }
}

static void print_gpu(const gpu_spec *g) {
  double fp16 = gpu_peak_flops(g, GPU_FP16);
  printf("%-10s %5.0f %4.0f %4.0f-%-4.0f %5.0f %4.0f %5.2f", g->name, g->tdp_w,
         g->idle_w, g->cap_min_w, g->cap_max_w, g->clock_max_hz / 1e6,
         g->memory_bytes / 1e9, g->bandwidth_bps / 1e12);
  print_flops(g);
  printf("  %5.2f", fp16 / 1e12 / g->tdp_w);
  if (!isnan(g->fp16_headline))
    printf("  %5.2f%s", g->fp16_headline / 1e12 / g->tdp_w,
           g->fp16_headline_sparse ? " (sparse)" : "");
  printf("\n");
}

static int cmd_catalog(const options *o) {
  gpu_catalog cat;
  sim_error err = {0};
  int rc = o->catalog ? gpu_catalog_load_file(&cat, o->catalog, &err)
                      : gpu_catalog_load_builtin(&cat, &err);
  if (rc != SIM_OK)
    return report(&err);
  printf("%-10s %5s %4s %9s %5s %4s %5s %7s %7s %7s %7s %7s  %5s  %s\n", "GPU",
         "TDP", "idle", "cap", "MHz", "GB", "TB/s", "FP16", "FP8", "FP4",
         "INT8", "INT4", "TF/W", "headline TF/W");
  printf("%-10s %5s %4s %9s %5s %4s %5s %39s  %5s\n", "", "W", "W", "W", "max",
         "", "", "dense TFLOPS (TOPS for INT)", "FP16");
  for (size_t i = 0; i < cat.n; i++)
    print_gpu(&cat.gpus[i]);
  printf("\nDense figures; sparse (2:4) headlines marked. Sources: "
         "scenarios/catalog/gpus.yaml.\n");
  gpu_catalog_release(&cat);
  return 0;
}

/* ------------------------------------------------------------------ */
/* run                                                                 */
/* ------------------------------------------------------------------ */

static void default_output(const char *scenario, char *buf, size_t size) {
  const char *base = strrchr(scenario, '/');
  base = base ? base + 1 : scenario;
  size_t len = strcspn(base, ".");
  snprintf(buf, size, "out/%.*s.h5", (int)len, base);
}

static int write_meta(tel_sink *sink, const factory_scenario *sc) {
  int rc = tel_put_meta_str(sink, "aifsim_version", AIFSIM_VERSION);
  if (rc == SIM_OK)
    rc = tel_put_meta_str(sink, "scenario_name", sc->cfg.name);
  if (rc == SIM_OK)
    rc = tel_put_meta_int(sink, "seed", sc->cfg.seed);
  if (rc == SIM_OK)
    rc = tel_put_text(sink, "scenario", sc->resolved);
  return rc;
}

/* Runs the engine to the end in slices, drawing progress between them and
 * stopping early on SIGINT/SIGTERM. */
static int run_slices(sim_engine *e, sim_time end, const options *o,
                      double *wall) {
  progress p;
  progress_init(&p, stderr, o->quiet);
  double t0 = wall_seconds();
  sim_time slice = end / 200 > 0 ? end / 200 : 1;
  int rc = SIM_OK;
  for (sim_time t = 0; rc == SIM_OK && t < end && !interrupted;) {
    t = end - t > slice ? t + slice : end;
    rc = sim_engine_run(e, t);
    progress_update(&p, sim_time_to_s(t), sim_time_to_s(end),
                    sim_engine_events_run(e), wall_seconds() - t0);
  }
  progress_done(&p);
  *wall = wall_seconds() - t0;
  return interrupted ? SIM_ECANCELED : rc;
}

static void print_summary(const factory_scenario *sc, const factory_summary *s,
                          const char *out, double wall, uint64_t events) {
  char t[32];
  printf("%s: %s simulated in %.2f s (%llu events, %.3g events/s)\n",
         sc->cfg.name, progress_hms(s->duration_s, t, sizeof t), wall,
         (unsigned long long)events, wall > 0 ? (double)events / wall : 0);
  printf("  fleet          %llu GPUs in %llu racks\n",
         (unsigned long long)s->gpus, (unsigned long long)s->racks);
  printf("  energy         %.4f MWh (IT %.4f MWh, GPUs %.4f MWh)\n",
         s->energy_j / 3.6e9, s->it_energy_j / 3.6e9, s->gpu_energy_j / 3.6e9);
  printf("  power          mean %.1f kW, peak %.1f kW, cap %.1f kW "
         "(peak %.1f%% of cap)\n",
         s->mean_power_w / 1e3, s->peak_power_w / 1e3, s->cap_w / 1e3,
         100 * s->peak_power_w / s->cap_w);
  printf("  cap violation  %.0f s, %.3g J\n", s->cap_violation_s,
         s->cap_violation_j);
  printf("  output         %s\n", out);
}

typedef struct run_state {
  factory_scenario sc;
  tel_sink *sink;
  sim_engine *engine;
  factory *factory;
} run_state;

static void run_cleanup(run_state *r) {
  factory_destroy(r->factory);
  sim_engine_destroy(r->engine);
  tel_destroy(r->sink); /* removes an uncommitted partial file */
  factory_scenario_release(&r->sc);
}

static int run_fail(run_state *r, const char *what, const char *msg) {
  fprintf(stderr, "aifsim: %s: %s\n", what, msg);
  run_cleanup(r);
  return EXIT_RUN_FAILED;
}

static int run_build(run_state *r, const char *out) {
  sim_error err = {0};
  r->sink = h5w_create(out, NULL, &err);
  if (r->sink == NULL)
    return run_fail(r, "cannot write the output", err.msg);
  if (write_meta(r->sink, &r->sc) != SIM_OK)
    return run_fail(r, "writing the output", tel_errmsg(r->sink));
  r->engine = sim_engine_create(NULL);
  if (r->engine == NULL)
    return run_fail(r, "starting the engine", "out of memory");
  r->factory = factory_create(&r->sc, r->engine, r->sink, &err);
  if (r->factory == NULL) {
    int code = report(&err);
    run_cleanup(r);
    return code;
  }
  return 0;
}

static int cmd_run(const options *o) {
  run_state r = {0};
  int rc = load(o, &r.sc);
  char out[4096];
  if (rc != 0)
    return rc;
  if (o->output != NULL)
    snprintf(out, sizeof out, "%s", o->output);
  else
    default_output(o->scenario, out, sizeof out);
  if ((rc = run_build(&r, out)) != 0)
    return rc;
  double wall;
  factory_summary s;
  sim_error err = {0};
  rc = run_slices(r.engine, factory_duration(&r.sc.cfg), o, &wall);
  if (rc == SIM_ECANCELED)
    return run_fail(&r, "interrupted", "no output was kept");
  if (rc != SIM_OK)
    return run_fail(&r, "the run failed", sim_engine_errmsg(r.engine));
  if (factory_finish(r.factory, &s, &err) != SIM_OK)
    return run_fail(&r, "closing the books", err.msg);
  if (tel_commit(r.sink) != SIM_OK)
    return run_fail(&r, "writing the output", tel_errmsg(r.sink));
  print_summary(&r.sc, &s, out, wall, sim_engine_events_run(r.engine));
  run_cleanup(&r);
  return 0;
}

/* ------------------------------------------------------------------ */

int main(int argc, char **argv) {
  gsl_set_error_handler_off();
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);
  options o;
  int rc = parse_args(&o, argc, argv);
  if (rc != 0)
    return rc;
  if (strcmp(o.command, "run") == 0)
    return cmd_run(&o);
  if (strcmp(o.command, "check") == 0)
    return cmd_check(&o);
  if (strcmp(o.command, "catalog") == 0)
    return cmd_catalog(&o);
  if (strcmp(o.command, "version") == 0)
    return printf("aifsim %s\n", AIFSIM_VERSION) < 0;
  if (strcmp(o.command, "help") == 0 || strcmp(o.command, "--help") == 0 ||
      strcmp(o.command, "-h") == 0)
    return fputs(usage_text, stdout) < 0;
  return usage_error("unknown command '%s'", o.command);
}
