/* main.c - the aifsim command: parses the command line and wires the
 * scenario, the engine, the factory and the HDF5 writer together, and the
 * sweep (sweep.h) to them through its hooks. The only place that prints,
 * reads the wall clock or decides an exit status.
 * Exit status: 0 ok, 1 the run failed, 2 usage or bad input. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gsl/gsl_errno.h>

#include "engine.h"
#include "factory.h"
#include "gpu.h"
#include "power.h"
#include "progress.h"
#include "record.h"
#include "sweep.h"

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
  const char *shard, *collect; /* sweep only */
  bool list;                   /* sweep only */
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
    "  sweep SWEEP [-o DIR] [--shard I/N] [--set KEY=VALUE]... [--quiet]\n"
    "        run every point of a sweep file into DIR (default\n"
    "        out/NAME/): point-NNNN.h5, summary.h5, summary.csv; points\n"
    "        already complete are skipped; under mpirun the ranks share\n"
    "        the points; a Slurm array task or srun task runs its\n"
    "        shard\n"
    "  sweep SWEEP --list | --collect DIR\n"
    "        print the points; or rebuild DIR's summary from its files\n"
    "        (with the --set options its run stored there)\n"
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
  else if (strcmp(opt, "--shard") == 0)
    o->shard = v;
  else if (strcmp(opt, "--collect") == 0)
    o->collect = v;
  else
    o->catalog = v;
  return 0;
}

static bool takes_value(const char *a) {
  static const char *const valued[] = {
      "-o", "--output", "--set", "--seed", "--catalog", "--shard", "--collect"};
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
  if (strcmp(o->command, "sweep") != 0 && (o->list || o->shard || o->collect))
    return usage_error("%s", "--list, --shard and --collect are options of "
                             "sweep");
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
  /* The file layout's version (README, Output): readers refuse newer. */
  int rc = tel_put_meta_int(sink, "format_version", 1);
  if (rc == SIM_OK)
    rc = tel_put_meta_str(sink, "aifsim_version", AIFSIM_VERSION);
  if (rc == SIM_OK)
    rc = tel_put_meta_str(sink, "scenario_name", sc->cfg.name);
  if (rc == SIM_OK)
    rc = tel_put_meta_int(sink, "seed", sc->cfg.seed);
  if (rc == SIM_OK)
    rc = tel_put_text(sink, "scenario", sc->resolved);
  const char *start = factory_start_utc(&sc->cfg);
  if (rc == SIM_OK && start != NULL)
    rc = tel_put_meta_str(sink, "start_utc", start);
  return rc;
}

/* What the services served and the training jobs did, when there are
 * any. */
static void print_workloads(const factory_scenario *sc,
                            const factory_summary *s) {
  if (sc->cfg.nservices > 0)
    printf("  inference      %llu requests (%llu done, %llu rejected), "
           "%.4g tokens, %.3g tokens/J, SLO attainment %.1f%%\n",
           (unsigned long long)s->requests_arrived,
           (unsigned long long)s->requests_completed,
           (unsigned long long)s->requests_rejected, s->tokens,
           s->tokens_per_joule, 100 * s->slo_attainment);
  if (sc->cfg.ntraining > 0)
    printf(
        "  training       %llu jobs arrived: %llu done, %llu running, "
        "%llu queued; mean JCT %.0f s; %llu failures, %.1f GPU-h lost\n",
        (unsigned long long)s->jobs_arrived, (unsigned long long)s->jobs_done,
        (unsigned long long)s->jobs_running, (unsigned long long)s->jobs_queued,
        s->jct_mean_s, (unsigned long long)s->job_failures, s->lost_gpu_hours);
  if (sc->cfg.nfaults > 0)
    printf("  faults         %llu events in force %.0f s: %.1f GPU-h of "
           "training and %llu requests lost\n",
           (unsigned long long)s->fault_events, s->fault_s,
           s->fault_lost_gpu_hours, (unsigned long long)s->requests_dropped);
  if (sc->cfg.nservices + sc->cfg.ntraining > 0)
    printf("  GPU energy by  inference %.4f MWh, training %.4f MWh, idle "
           "%.4f MWh; other IT %.4f MWh\n",
           s->inference_energy_j / 3.6e9, s->training_energy_j / 3.6e9,
           s->idle_energy_j / 3.6e9, s->overhead_energy_j / 3.6e9);
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
  printf("  cap violation  %.0f s, %.3g J; policy %s, stranded %.4f MWh\n",
         s->cap_violation_s, s->cap_violation_j,
         power_policy_names[sc->cfg.power.policy], s->stranded_j / 3.6e9);
  if (s->dr_events > 0)
    printf("  demand resp.   %llu events, %.0f s: cut met after %.0f s, %.3g J "
           "above it, SLO attainment %.1f%% during them\n",
           (unsigned long long)s->dr_events, s->dr_s, s->dr_time_to_cut_s,
           s->dr_over_j, 100 * s->dr_slo_attainment);
  printf("  PUE            %.3f (cooling %.4f MWh, conversion losses %.4f "
         "MWh)\n",
         s->energy_j / s->it_energy_j, s->cooling_energy_j / 3.6e9,
         s->loss_energy_j / 3.6e9);
  if (!isnan(s->cost) || !isnan(s->co2_kg))
    printf("  grid           cost %.2f, CO2 %.3f t\n", s->cost,
           s->co2_kg / 1000);
  if (!isnan(s->cost))
    printf("  bill           energy %.2f, demand %.2f (peak %.1f kW), fees "
           "%.2f\n",
           s->cost_energy, s->cost_demand, s->peak_demand_kw, s->cost_fees);
  if (!isnan(s->co2_kg))
    printf("  carbon basis   %s\n", s->carbon_basis);
  print_workloads(sc, s);
  printf("  output         %s\n", out);
}

/* One run: what `run` does, and what a sweep does for each point. */
typedef struct run_request {
  const char *scenario;
  const char *const *sets;
  size_t nsets;
  const char *out;
  bool quiet;              /* no progress line */
  bool print_summary;      /* print the run's summary to stdout at the end */
  int64_t sweep_point;     /* root attribute sweep_point; -1 for none */
  void (*tick)(void *ctx); /* between slices of the run; may be NULL */
  void *tick_ctx;
} run_request;

typedef struct run_state {
  const run_request *rq;
  factory_scenario sc;
  tel_sink *sink;
  sim_engine *engine;
  factory *factory;
  sim_error *err; /* what the caller prints on failure */
} run_state;

/* The sink goes first: it borrows the factory's telemetry declarations
 * until it is destroyed (tel.h). */
static void run_cleanup(run_state *r) {
  tel_destroy(r->sink); /* removes an uncommitted partial file */
  factory_destroy(r->factory);
  sim_engine_destroy(r->engine);
  factory_scenario_release(&r->sc);
}

static int run_fail(run_state *r, int code, const char *what, const char *msg) {
  sim_error_set(r->err, code, "aifsim: %s: %s", what, msg);
  run_cleanup(r);
  return EXIT_RUN_FAILED;
}

/* An error of the loader or the factory, passed on as it is. */
static int run_report(run_state *r, const sim_error *e) {
  *r->err = *e;
  run_cleanup(r);
  return e->code == SIM_EINPUT || e->code == SIM_EIO ? EXIT_BAD_INPUT
                                                     : EXIT_RUN_FAILED;
}

static int write_run_meta(run_state *r) {
  int rc = write_meta(r->sink, &r->sc);
  if (rc == SIM_OK && r->rq->sweep_point >= 0)
    rc = tel_put_meta_int(r->sink, "sweep_point", r->rq->sweep_point);
  return rc;
}

static int run_build(run_state *r) {
  sim_error err = {0};
  r->sink = h5w_create(r->rq->out, NULL, &err);
  if (r->sink == NULL)
    return run_fail(r, SIM_EIO, "cannot write the output", err.msg);
  if (write_run_meta(r) != SIM_OK)
    return run_fail(r, SIM_EIO, "writing the output", tel_errmsg(r->sink));
  r->engine = sim_engine_create(NULL);
  if (r->engine == NULL)
    return run_fail(r, SIM_ENOMEM, "starting the engine", "out of memory");
  r->factory = factory_create(&r->sc, r->engine, r->sink, &err);
  if (r->factory == NULL)
    return run_report(r, &err);
  return 0;
}

/* Runs the engine to the end in slices, drawing progress and ticking
 * between them and stopping early on SIGINT/SIGTERM. */
static int run_slices(run_state *r, double *wall) {
  sim_time end = factory_duration(&r->sc.cfg);
  progress p;
  progress_init(&p, stderr, r->rq->quiet);
  double t0 = wall_seconds();
  sim_time slice = end / 200 > 0 ? end / 200 : 1;
  int rc = SIM_OK;
  for (sim_time t = 0; rc == SIM_OK && t < end && !interrupted;) {
    t = end - t > slice ? t + slice : end;
    rc = sim_engine_run(r->engine, t);
    progress_update(&p, sim_time_to_s(t), sim_time_to_s(end),
                    sim_engine_events_run(r->engine), wall_seconds() - t0);
    if (r->rq->tick != NULL)
      r->rq->tick(r->rq->tick_ctx);
  }
  progress_done(&p);
  *wall = wall_seconds() - t0;
  return interrupted ? SIM_ECANCELED : rc;
}

/* Runs one scenario to rq->out. Returns the exit status: 0, or 1 or 2
 * with the message to print in *err (err->code says why: SIM_ECANCELED
 * when interrupted). */
static int run_scenario(const run_request *rq, sim_error *err) {
  run_state r = {.rq = rq, .err = err};
  sim_error e = {0};
  double wall;
  factory_summary s;
  if (factory_scenario_load(rq->scenario, rq->sets, rq->nsets, &r.sc, &e) !=
      SIM_OK)
    return run_report(&r, &e);
  int rc = run_build(&r);
  if (rc != 0)
    return rc;
  rc = run_slices(&r, &wall);
  if (rc == SIM_ECANCELED)
    return run_fail(&r, rc, "interrupted", "no output was kept");
  if (rc != SIM_OK)
    return run_fail(&r, rc, "the run failed", sim_engine_errmsg(r.engine));
  if (factory_finish(r.factory, &s, &e) != SIM_OK)
    return run_fail(&r, e.code, "closing the books", e.msg);
  if (tel_commit(r.sink) != SIM_OK)
    return run_fail(&r, SIM_EIO, "writing the output", tel_errmsg(r.sink));
  if (rq->print_summary)
    print_summary(&r.sc, &s, rq->out, wall, sim_engine_events_run(r.engine));
  run_cleanup(&r);
  return 0;
}

static int cmd_run(const options *o) {
  char out[4096];
  sim_error err = {0};
  if (o->scenario == NULL)
    return usage_error("%s needs a scenario file", o->command);
  if (o->output != NULL)
    snprintf(out, sizeof out, "%s", o->output);
  else
    default_output(o->scenario, out, sizeof out);
  run_request rq = {o->scenario, o->sets, o->nsets, out, o->quiet,
                    true,        -1,      NULL,     NULL};
  int rc = run_scenario(&rq, &err);
  if (rc != 0)
    fprintf(stderr, "%s\n", err.msg);
  return rc;
}

/* ------------------------------------------------------------------ */
/* sweep                                                               */
/* ------------------------------------------------------------------ */

/* The sweep's progress line (rank 0, on a terminal) and failure lines. */
typedef struct sweep_ui {
  bool enabled;
  double t0;
  int width;
} sweep_ui;

static void ui_wipe(sweep_ui *ui) {
  if (ui->width > 0)
    fprintf(stderr, "\r%*s\r", ui->width, "");
  ui->width = 0;
}

static void ui_draw(sweep_ui *ui, const sweep_event *ev) {
  char left[32];
  double wall = wall_seconds() - ui->t0;
  double eta = wall * (double)(ev->todo - ev->done) / (double)ev->done;
  int n =
      fprintf(stderr, "\r  sweep %zu/%zu points  %zu failed  ETA %s", ev->done,
              ev->todo, ev->failed, progress_hms(eta, left, sizeof left));
  if (n < ui->width)
    fprintf(stderr, "%*s", ui->width - n, "");
  ui->width = n;
  fflush(stderr);
}

static void on_point(void *user, const sweep_event *ev) {
  sweep_ui *ui = user;
  if (ev->code != SIM_OK) {
    ui_wipe(ui);
    fprintf(stderr, "aifsim: point %zu %s: %s\n", ev->point,
            ev->busy ? "skipped" : "failed", ev->msg);
  }
  if (ui->enabled)
    ui_draw(ui, ev);
}

/* The sweep's check hook: the scenario loader, as `aifsim check`. */
static int check_point(void *user, const char *base, const char *const *sets,
                       size_t nsets, int64_t *seed, char **resolved,
                       sim_error *err) {
  factory_scenario sc;
  (void)user;
  int rc = factory_scenario_load(base, sets, nsets, &sc, err);
  if (rc != SIM_OK)
    return rc;
  *seed = sc.cfg.seed;
  *resolved = sc.resolved;
  sc.resolved = NULL;
  factory_scenario_release(&sc);
  return SIM_OK;
}

/* The sweep's run hook: `aifsim run` of one point, quietly. */
static int run_point(void *user, const sweep_job *job, sim_error *err) {
  static const char prefix[] = "aifsim: ";
  run_request rq = {job->base,    job->sets, job->nsets,          job->out,
                    true,         false,     (int64_t)job->point, job->tick,
                    job->tick_ctx};
  (void)user;
  if (run_scenario(&rq, err) == 0)
    return SIM_OK;
  if (strncmp(err->msg, prefix, sizeof prefix - 1) == 0)
    memmove(err->msg, err->msg + sizeof prefix - 1,
            strlen(err->msg) - (sizeof prefix - 1) + 1);
  return err->code != SIM_OK ? err->code : SIM_EIO;
}

/* Whether an MPI launcher started this process, and the world's size
 * when it says (0 when it does not). */
static bool mpi_launched(long *size) {
  static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
                                     "MPI_LOCALNRANKS", "PMIX_RANK"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
    const char *v = getenv(vars[i]);
    if (v != NULL) {
      *size = i < 3 ? strtol(v, NULL, 10) : 0;
      return true;
    }
  }
  return false;
}

/* srun's task of this process, when it is one of a job step with
 * several tasks (SLURM_STEP_NUM_TASKS is set in steps only, not in the
 * batch script, which has SLURM_PROCID=0 and SLURM_NTASKS too). */
static int step_task(sweep_shard *task, bool *found, sim_error *err) {
  int e = sweep_shard_from_step(
      getenv("SLURM_PROCID"), getenv("SLURM_STEP_NUM_TASKS"), task, found, err);
  *found = *found && e == SIM_OK && task->count > 1;
  return e;
}

/* The shard and, into why, what decided it: --shard, else a Slurm array
 * task's shard, split again by srun's task when the step has several
 * (not under MPI, whose ranks share the shard), else the whole sweep
 * (why ""). */
static int pick_shard(const options *o, bool mpi, sweep_shard *sh, char *why,
                      size_t size, sim_error *err) {
  bool array, step = false;
  sweep_shard task = {0, 1};
  *sh = (sweep_shard){0, 1};
  why[0] = '\0';
  if (o->shard != NULL) {
    snprintf(why, size, "--shard %s", o->shard);
    return sweep_shard_parse(o->shard, sh, err);
  }
  int e = sweep_shard_from_slurm(
      getenv("SLURM_ARRAY_TASK_ID"), getenv("SLURM_ARRAY_TASK_MIN"),
      getenv("SLURM_ARRAY_TASK_STEP"), getenv("SLURM_ARRAY_TASK_COUNT"), sh,
      &array, err);
  if (e == SIM_OK && !mpi)
    e = step_task(&task, &step, err);
  if (e != SIM_OK)
    return e;
  if (array)
    snprintf(why, size, "the Slurm array (task %zu of %zu)", sh->index,
             sh->count);
  if (step)
    snprintf(why + strlen(why), size - strlen(why), "%ssrun (task %zu of %zu)",
             array ? " split by " : "", task.index, task.count);
  *sh = sweep_shard_split(*sh, task);
  return SIM_OK;
}

/* The first line of a sweep that does not run every point in one
 * process: its shard, and which source decided it. */
static void print_shard_source(const sweep *s, const sweep_run_opts *ro,
                               const char *why, int size) {
  if (size > 1)
    printf("%s: %zu points over %d MPI ranks", sweep_path(s), sweep_npoints(s),
           size);
  if (size > 1 && ro->shard.count > 1)
    printf(", shard %zu/%zu from %s\n", ro->shard.index, ro->shard.count, why);
  else if (size > 1)
    printf("\n");
  else if (ro->shard.count > 1)
    printf("%s: shard %zu/%zu of %zu points, from %s\n", sweep_path(s),
           ro->shard.index, ro->shard.count, sweep_npoints(s), why);
  fflush(stdout);
}

/* An override as a shell word: quoted when the shell would change it. */
static void print_set(const char *before, const char *set) {
  bool quote = strpbrk(set, " \t\"'{}[]()<>,;#&*?!|`$\\~") != NULL;
  printf(quote ? "%s'%s'" : "%s%s", before, set);
}

static void print_point(const sweep *s, size_t p, const char **sets) {
  size_t n = sweep_point_sets(s, p, sets, sweep_ncolumns(s));
  printf("%zu", p);
  for (size_t i = 0; i < n; i++)
    print_set(" ", sets[i]);
  printf("\n");
}

/* --list: the fixed overrides once, then each point with its own. */
static int sweep_list(const sweep *s) {
  size_t nfixed;
  const char *const *fixed = sweep_fixed_sets(s, &nfixed);
  const char **sets = calloc(sweep_ncolumns(s) + 1, sizeof *sets);
  if (sets == NULL)
    return fprintf(stderr, "aifsim: out of memory\n"), EXIT_RUN_FAILED;
  printf("# %s: %zu points of %s", sweep_path(s), sweep_npoints(s),
         sweep_base(s));
  for (size_t i = 0; i < nfixed; i++)
    print_set(" --set ", fixed[i]);
  printf("\n");
  for (size_t p = 0; p < sweep_npoints(s); p++)
    print_point(s, p, sets);
  free(sets);
  return 0;
}

static void default_sweep_dir(const char *file, char *buf, size_t size) {
  const char *base = strrchr(file, '/');
  base = base ? base + 1 : file;
  snprintf(buf, size, "out/%.*s", (int)strcspn(base, "."), base);
}

static int sweep_collect_cmd(const sweep *s, const char *dir) {
  sweep_stats st;
  sim_error err = {0};
  size_t nsets;
  const char *const *sets = sweep_given_sets(s, &nsets);
  if (sweep_collect(s, dir, AIFSIM_VERSION, &st, &err) != SIM_OK)
    return report(&err);
  printf("%s", sweep_path(s));
  for (size_t i = 0; i < nsets; i++)
    print_set(" --set ", sets[i]);
  printf(": %zu points: %zu ok, %zu failed, %zu missing; summary in "
         "%s/summary.csv\n",
         st.points, st.points - st.failed - st.missing, st.failed, st.missing,
         dir);
  return st.failed + st.missing > 0 ? EXIT_RUN_FAILED : 0;
}

static void print_sweep_stats(const sweep *s, const sweep_run_opts *ro,
                              const sweep_stats *st) {
  char busy[64] = "";
  if (st->busy > 0)
    snprintf(busy, sizeof busy, ", %zu left to another process", st->busy);
  if (ro->shard.count > 1) {
    printf("%s: shard %zu/%zu: %zu of %zu points: %zu run, %zu already "
           "complete, %zu failed%s; ",
           sweep_path(s), ro->shard.index, ro->shard.count, st->mine,
           st->points, st->ran, st->skipped, st->failed, busy);
    if (st->summary)
      printf("every shard is done: summary in %s/summary.csv\n", ro->dir);
    else
      printf("when every shard is done: aifsim sweep %s --collect %s\n",
             sweep_path(s), ro->dir);
  } else {
    printf("%s: %zu points: %zu run, %zu already complete, %zu failed%s; "
           "summary in %s/summary.csv\n",
           sweep_path(s), st->points, st->ran, st->skipped, st->failed, busy,
           ro->dir);
  }
}

/* Runs the sweep's points; rank says who prints. */
static int sweep_execute(const options *o, const sweep *s, sweep_hooks *h,
                         int rank, int size) {
  char dir[4096], why[160];
  sweep_stats st;
  sim_error err = {0};
  sweep_ui ui = {rank == 0 && !o->quiet && isatty(fileno(stderr)),
                 wall_seconds(), 0};
  sweep_run_opts ro = {dir, {0, 1}, AIFSIM_VERSION, size > 1};
  if (o->output != NULL)
    snprintf(dir, sizeof dir, "%s", o->output);
  else
    default_sweep_dir(o->scenario, dir, sizeof dir);
  if (pick_shard(o, size > 1, &ro.shard, why, sizeof why, &err) != SIM_OK)
    return rank == 0 ? report(&err) : EXIT_BAD_INPUT;
  if (rank == 0)
    print_shard_source(s, &ro, why, size);
  h->user = &ui;
  int rc = sweep_run(s, &ro, h, &st, &err);
  ui_wipe(&ui);
  if (rank != 0)
    return rc == SIM_OK && st.failed + st.busy == 0 ? 0 : EXIT_RUN_FAILED;
  if (rc == SIM_EINPUT)
    return fprintf(stderr, "%s\n", err.msg), EXIT_BAD_INPUT;
  if (rc != SIM_OK)
    return fprintf(stderr, "aifsim: %s\n", err.msg), EXIT_RUN_FAILED;
  print_sweep_stats(s, &ro, &st);
  return st.failed + st.busy > 0 ? EXIT_RUN_FAILED : 0;
}

/* --collect without --set: the overrides the run stored in its folder
 * (none there: none). Returns 0 or an exit status. */
static int stored_sets(const options *o, char ***sets, size_t *n) {
  sim_error err = {0};
  *sets = NULL;
  *n = 0;
  if (o->collect == NULL || o->nsets > 0)
    return 0;
  int e = sweep_dir_sets(o->collect, sets, n, &err);
  return e == SIM_OK || e == SIM_ENOTFOUND ? 0 : report(&err);
}

static int sweep_main(const options *o, int rank, int size) {
  sweep_hooks h = {check_point, run_point, on_point, NULL};
  sim_error err = {0};
  char **stored;
  size_t nstored;
  int rc = stored_sets(o, &stored, &nstored);
  if (rc != 0)
    return rc;
  sweep *s = stored != NULL
                 ? sweep_load(o->scenario, (const char *const *)stored, nstored,
                              &h, &err)
                 : sweep_load(o->scenario, o->sets, o->nsets, &h, &err);
  sweep_sets_free(stored, nstored);
  if (s == NULL)
    return rank == 0 ? report(&err) : EXIT_BAD_INPUT;
  if (o->list)
    rc = rank == 0 ? sweep_list(s) : 0;
  else if (o->collect != NULL)
    rc = rank == 0 ? sweep_collect_cmd(s, o->collect) : 0;
  else
    rc = sweep_execute(o, s, &h, rank, size);
  sweep_destroy(s);
  return rc;
}

static int cmd_sweep(const options *o, int *argc, char ***argv) {
  long size = 0;
  int rank = 0, world = 1;
  sim_error err = {0};
  if (o->scenario == NULL)
    return usage_error("%s needs a sweep file", o->command);
  if (o->list && o->collect != NULL)
    return usage_error("%s", "give --list or --collect, not both");
  bool mpi = mpi_launched(&size);
  if (mpi && !sweep_mpi_built() && size > 1) {
    fprintf(stderr,
            "aifsim: started by mpirun with %ld ranks, but this "
            "aifsim was built without MPI (AIFSIM_MPI); every "
            "rank would run every point\n",
            size);
    return EXIT_BAD_INPUT;
  }
  if (mpi && sweep_mpi_built() &&
      sweep_mpi_start(argc, argv, &rank, &world, &err) != SIM_OK)
    return report(&err);
  int rc = sweep_main(o, rank, world);
  sweep_mpi_stop();
  return rc;
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
  if (strcmp(o.command, "sweep") == 0)
    return cmd_sweep(&o, &argc, &argv);
  if (strcmp(o.command, "version") == 0)
    return printf("aifsim %s\n", AIFSIM_VERSION) < 0;
  if (strcmp(o.command, "help") == 0 || strcmp(o.command, "--help") == 0 ||
      strcmp(o.command, "-h") == 0)
    return fputs(usage_text, stdout) < 0;
  return usage_error("unknown command '%s'", o.command);
}
