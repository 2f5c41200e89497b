/* main.c - the aifsim command: parses the command line and wires the
 * scenario, the engine, the factory and the HDF5 writer together, and the
 * sweep (sweep.h) to them through its hooks. The only place (with the
 * cmd_*.c files it calls) that prints, reads the wall clock or decides an
 * exit status. This file parses the command line and runs check and
 * catalog; cmd_run.c runs a scenario, cmd_sweep.c a sweep.
 * Exit status: 0 ok, 1 the run failed, 2 usage or bad input. */
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_errno.h>

#include "cmd_internal.h"
#include "factory.h"
#include "gpu.h"
#include "units.h"

/* ------------------------------------------------------------------ */
/* Arguments                                                           */
/* ------------------------------------------------------------------ */

static int take_value(int argc, char **argv, int *i, const char **out) {
  if (*i + 1 >= argc)
    return cmd__usage_error("%s needs a value", argv[*i]);
  *out = argv[++*i];
  return 0;
}

static int parse_seed(options *o, const char *text) {
  uint64_t v;
  if (units_parse_count(text, &v) != 0)
    return cmd__usage_error("--seed takes a whole number, not '%s'", text);
  snprintf(o->seed_set, sizeof o->seed_set, "seed=%" PRIu64, v);
  return 0;
}

/* --threads N: a whole number from 1 (a thousand at most: more threads than
 * services are never used). */
static int parse_threads(options *o, const char *text) {
  unsigned long n = 0;
  size_t i = 0;
  for (; text[i] >= '0' && text[i] <= '9' && n <= 1024; i++)
    n = n * 10 + (unsigned long)(text[i] - '0');
  if (i == 0 || text[i] != '\0' || n < 1 || n > 1024)
    return cmd__usage_error("--threads takes a whole number from 1 to 1024, "
                            "not '%s'",
                            text);
  o->threads = (unsigned)n;
  return 0;
}

static int add_set(options *o, const char *assignment) {
  if (o->nsets >= MAX_SETS)
    return cmd__usage_error("more than %s --set options", "256");
  o->sets[o->nsets++] = assignment;
  return 0;
}

/* Options that take a value; the value is checked by its handler. */
static int parse_valued(options *o, const char *opt, const char *v) {
  if (strcmp(opt, "-o") == 0 || strcmp(opt, "--output") == 0)
    o->output = v;
  else if (strcmp(opt, "--set") == 0)
    return add_set(o, v);
  else if (strcmp(opt, "--set-file") == 0)
    return cmd__set_file(o->sets, &o->nsets, v);
  else if (strcmp(opt, "--seed") == 0)
    return parse_seed(o, v);
  else if (strcmp(opt, "--shard") == 0)
    o->shard = v;
  else if (strcmp(opt, "--collect") == 0)
    o->collect = v;
  else if (strcmp(opt, "--csv") == 0)
    o->csv = v;
  else if (strcmp(opt, "--policy") == 0)
    o->policy = v;
  else if (strcmp(opt, "--threads") == 0)
    return parse_threads(o, v);
  else
    o->catalog = v;
  return 0;
}

static bool takes_value(const char *a) {
  static const char *const valued[] = {"-o",        "--output",  "--set",
                                       "--seed",    "--catalog", "--shard",
                                       "--collect", "--csv",     "--set-file",
                                       "--policy",  "--threads"};
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
  else if (strcmp(a, "--list") == 0)
    o->list = true;
  else if (strcmp(a, "--force") == 0)
    o->force = true;
  else if (strcmp(a, "--keep-partial") == 0)
    o->keep_partial = true;
  else if (strcmp(a, "--quick") == 0)
    o->quick_asked = true;
  else if (strcmp(a, "--metrics") == 0)
    o->metrics = true;
  else if (a[0] == '-')
    return cmd__usage_error("unknown option '%s'", a);
  else if (o->scenario == NULL)
    o->scenario = a;
  else
    return cmd__usage_error("unexpected argument '%s'", a);
  return 0;
}

static int parse_args(options *o, int argc, char **argv) {
  memset(o, 0, sizeof *o);
  if (argc < 2)
    return cmd__usage_error("%s", "no command given");
  o->command = argv[1];
  for (int i = 2; i < argc; i++) {
    int rc = parse_option(o, argc, argv, &i);
    if (rc != 0)
      return rc;
  }
  if (o->seed_set[0] != '\0')
    o->sets[o->nsets++] = o->seed_set;
  if (strcmp(o->command, "sweep") != 0 && (o->list || o->shard || o->collect))
    return cmd__usage_error("%s",
                            "--list, --shard and --collect are options of "
                            "sweep");
  if (strcmp(o->command, "run") != 0 && o->keep_partial)
    return cmd__usage_error("%s", "--keep-partial is an option of run");
  if (strcmp(o->command, "run") != 0 && o->policy != NULL)
    return cmd__usage_error("%s", "--policy is an option of run");
  if (strcmp(o->command, "run") != 0 && o->metrics)
    return cmd__usage_error("%s", "--metrics is an option of run");
  if (strcmp(o->command, "run") != 0 && strcmp(o->command, "sweep") != 0 &&
      o->threads > 0)
    return cmd__usage_error("%s", "--threads is an option of run and sweep");
  if (strcmp(o->command, "export") != 0 && o->csv != NULL)
    return cmd__usage_error("%s", "--csv is an option of export");
  if (o->quick_asked && strcmp(o->command, "run") != 0 &&
      strcmp(o->command, "check") != 0 && strcmp(o->command, "sweep") != 0)
    return cmd__usage_error("%s", "--quick is an option of run, check and "
                                  "sweep");
  return cmd__apply_quick(o);
}

/* ------------------------------------------------------------------ */
/* check                                                               */
/* ------------------------------------------------------------------ */

static int load(const options *o, factory_scenario *sc) {
  sim_error err = {0};
  if (o->scenario == NULL)
    return cmd__usage_error("%s needs a scenario file", o->command);
  if (factory_scenario_load(o->scenario, o->sets, o->nsets, sc, &err) != SIM_OK)
    return cmd__report(&err);
  return 0;
}

/* Validates the scenario and estimates its run: "ok" and the estimate,
 * or with --resolved the scenario alone; exit 2 for a run `run` would
 * refuse (without --force). */
static int cmd_check(const options *o) {
  factory_scenario sc;
  sim_error err = {0};
  run_estimate e;
  int rc = load(o, &sc);
  if (rc != 0)
    return rc;
  cmd__warn_host(&sc);
  if (cmd__estimate(&sc, &e, !o->resolved, &err) != SIM_OK)
    rc = cmd__report(&err);
  if (rc == 0 && !o->resolved)
    cmd__print_estimate(stdout, &e);
  if (rc == 0)
    rc = cmd__refuse_estimate(&e, &sc.cfg, o->force);
  if (rc == 0 && o->resolved)
    fputs(sc.resolved, stdout);
  else if (rc == 0)
    printf("%s: ok\n", o->scenario);
  factory_scenario_release(&sc);
  return rc;
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

/* mark: '+' for a type a user file added, '*' for one it replaced, ' '
 * for a built-in one, 0 for none (no user file). */
static void print_gpu(const gpu_spec *g, char mark) {
  double fp16 = gpu_peak_flops(g, GPU_FP16);
  if (mark != 0)
    putchar(mark);
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

/* Where a type of the catalog a scenario naming the user's file sees
 * comes from: the built-in catalog (' '), the file ('+'), or the file
 * over a built-in type of that name ('*'). */
static char origin(const gpu_catalog *builtin, const gpu_catalog *user,
                   const char *name) {
  if (user->n == 0 || gpu_catalog_find(user, name) == NULL)
    return ' ';
  return gpu_catalog_find(builtin, name) != NULL ? '*' : '+';
}

/* With a user's file, a column of marks comes first; without, the table
 * starts with the names, as it always did. */
static void print_catalog(const gpu_catalog *cat, const gpu_catalog *builtin,
                          const gpu_catalog *user, const char *file) {
  const char *pad = file != NULL ? " " : "";
  printf("%s%-10s %5s %4s %9s %5s %4s %5s %7s %7s %7s %7s %7s  %5s  %s\n", pad,
         "GPU", "TDP", "idle", "cap", "MHz", "GB", "TB/s", "FP16", "FP8", "FP4",
         "INT8", "INT4", "TF/W", "headline TF/W");
  printf("%s%-10s %5s %4s %9s %5s %4s %5s %39s  %5s\n", pad, "", "W", "W", "W",
         "max", "", "", "dense TFLOPS (TOPS for INT)", "FP16");
  for (size_t i = 0; i < cat->n; i++)
    print_gpu(&cat->gpus[i],
              file != NULL ? origin(builtin, user, cat->gpus[i].name) : 0);
  printf("\nDense figures; sparse (2:4) headlines marked. Sources: "
         "scenarios/catalog/gpus.yaml");
  if (file != NULL)
    printf(" and %s%s (+ added, * replaced a built-in type)", file,
           user->replace ? ", which replaces the built-in catalog" : "");
  printf(".\n");
}

/* The systems catalog: each system's GPUs, its host at idle and at its
 * most, and the unit at full load against its vendor rating. */
static void print_systems(const gpu_catalog *gc) {
  sys_catalog sc;
  sim_error err = {0};
  if (sys_catalog_load_builtin(&sc, &err) != SIM_OK)
    return;
  printf("\n%-12s %-9s %4s %8s %8s %9s %9s\n", "system", "GPU", "GPUs", "parts",
         "fans", "full", "rated");
  printf("%-12s %-9s %4s %8s %8s %9s %9s\n", "", "", "", "kW", "kW max", "kW",
         "kW");
  for (size_t i = 0; i < sc.n; i++) {
    const sys_spec *s = &sc.systems[i];
    const gpu_spec *g = gpu_catalog_find(gc, s->gpu);
    printf("%-12s %-9s %4lld %4.1f-%-4.1f %7.2f", s->name, s->gpu,
           (long long)s->gpus, s->parts_idle_w / 1e3, s->parts_max_w / 1e3,
           s->fans.max_w / 1e3);
    if (g != NULL)
      printf(" %9.1f", sys_full_power(s, g).wall_w / 1e3);
    else
      printf(" %9s", "-");
    if (isnan(s->max_power_w))
      printf(" %9s\n", "-");
    else
      printf(" %9.1f\n", s->max_power_w / 1e3);
  }
  printf("\nFull load at the inlet (every part at its maximum, 80 PLUS "
         "Titanium supplies). Sources: scenarios/catalog/systems.yaml.\n");
  sys_catalog_fini(&sc);
}

static int cmd_catalog(const options *o) {
  gpu_catalog cat, builtin, user = {0};
  sim_error err = {0};
  if (gpu_catalog_load(&cat, o->catalog, &err) != SIM_OK)
    return cmd__report(&err);
  /* Both again, to mark what the file brought (they loaded above). */
  if (gpu_catalog_load_builtin(&builtin, &err) != SIM_OK ||
      (o->catalog != NULL &&
       gpu_catalog_load_file(&user, o->catalog, &err) != SIM_OK)) {
    gpu_catalog_fini(&cat);
    gpu_catalog_fini(&builtin);
    return cmd__report(&err);
  }
  print_catalog(&cat, &builtin, &user, o->catalog);
  print_systems(&cat);
  gpu_catalog_fini(&user);
  gpu_catalog_fini(&builtin);
  gpu_catalog_fini(&cat);
  return 0;
}

/* The registry of /summary metrics, one a line: key, units ("-" for a
 * text), group and long name, in columns; docs/OUTPUT.md's list is made
 * from it (tools/metrics_doc.py). */
static int cmd_metrics(void) {
  const tel_metric *rows[256];
  size_t n = factory_metrics(rows, sizeof rows / sizeof rows[0]);
  if (n > sizeof rows / sizeof rows[0])
    n = sizeof rows / sizeof rows[0];
  printf("%-26s %-9s %-12s %s\n", "key", "units", "group", "long name");
  for (size_t i = 0; i < n; i++)
    printf("%-26s %-9s %-12s %s\n", rows[i]->key,
           rows[i]->units != NULL ? rows[i]->units : "-", rows[i]->group,
           rows[i]->long_name);
  return fflush(stdout) != 0;
}

/* ------------------------------------------------------------------ */

static int dispatch(options *o, int *argc, char ***argv) {
  if (strcmp(o->command, "run") == 0)
    return cmd__run(o);
  if (strcmp(o->command, "check") == 0)
    return cmd_check(o);
  if (strcmp(o->command, "catalog") == 0)
    return cmd_catalog(o);
  if (strcmp(o->command, "sweep") == 0)
    return cmd__sweep(o, argc, argv);
  if (strcmp(o->command, "export") == 0)
    return cmd__export(o);
  if (strcmp(o->command, "metrics") == 0)
    return cmd_metrics();
  if (strcmp(o->command, "version") == 0)
    return printf("aifsim %s\n", AIFSIM_VERSION) < 0;
  if (strcmp(o->command, "help") == 0 || strcmp(o->command, "--help") == 0 ||
      strcmp(o->command, "-h") == 0)
    return fputs(cmd__usage_text, stdout) < 0;
  return cmd__usage_error("unknown command '%s'", o->command);
}

int main(int argc, char **argv) {
  gsl_set_error_handler_off();
  cmd__catch_signals();
  /* A file-size limit then fails the write with EFBIG, which the writer
   * reports and cleans up after, instead of killing the process. */
  signal(SIGXFSZ, SIG_IGN);
  if (argc > 1 && strcmp(argv[1], "calibrate") == 0)
    return cmd__exit(cmd__calibrate(argc, argv));
  options o;
  if (argc > 1 && strcmp(argv[1], "import") == 0) return cmd__exit(cmd__import(argc, argv));
  int rc = parse_args(&o, argc, argv);
  /* After a stop signal the process dies of it, whatever the status. */
  return cmd__exit(rc != 0 ? rc : dispatch(&o, &argc, &argv));
}
