/* cmd_run.c - `aifsim run`: one scenario into an HDF5 file through the
 * library's calls (include/aifsim.h), in slices with a progress line, and
 * the summary at the end. A sweep runs each of its points here too. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <aifsim.h>

#include "aifsim_internal.h"
#include "cmd_internal.h"
#include "factory.h"
#include "h5read.h"
#include "power.h"
#include "progress.h"

/* ------------------------------------------------------------------ */
/* run                                                                 */
/* ------------------------------------------------------------------ */

static void default_output(const char *scenario, char *buf, size_t size) {
  const char *base = strrchr(scenario, '/');
  base = base ? base + 1 : scenario;
  size_t len = strcspn(base, ".");
  snprintf(buf, size, "out/%.*s.h5", (int)len, base);
}

/* The mean JCT, or "- (no job finished)". */
static const char *jct_text(double jct_s, char *buf, size_t size) {
  if (isnan(jct_s))
    return "- (no job finished)";
  snprintf(buf, size, "%.0f s", jct_s);
  return buf;
}

/* x times scale in format, or "- (no signal)" for a figure the run has
 * no signal for (a price without carbon, say). */
static const char *present(double x, const char *format, double scale,
                           char *buf, size_t size) {
  if (isnan(x))
    return "- (no signal)";
  snprintf(buf, size, format, x * scale);
  return buf;
}

/* What the services served and the training jobs did, when there are
 * any. */
static void print_workloads(const factory_scenario *sc,
                            const factory_summary *s) {
  char jct[32];
  if (sc->cfg.nservices > 0)
    printf("  inference      %llu requests (%llu done, %llu rejected, "
           "%llu timed out), %.4g tokens, %.3g tokens/J, SLO attainment "
           "%.1f%%\n",
           (unsigned long long)s->requests_arrived,
           (unsigned long long)s->requests_completed,
           (unsigned long long)s->requests_rejected,
           (unsigned long long)s->requests_timed_out, s->tokens,
           s->tokens_per_joule, 100 * s->slo_attainment);
  if (sc->cfg.ntraining + sc->cfg.ngjobs > 0)
    printf(
        "  training       %llu jobs arrived: %llu done, %llu running, "
        "%llu queued; mean JCT %s; %llu failures, %.1f GPU-h lost\n",
        (unsigned long long)s->jobs_arrived, (unsigned long long)s->jobs_done,
        (unsigned long long)s->jobs_running, (unsigned long long)s->jobs_queued,
        jct_text(s->jct_mean_s, jct, sizeof jct),
        (unsigned long long)s->job_failures, s->lost_gpu_hours);
  if (sc->cfg.nfaults > 0)
    printf("  faults         %llu events in force %.0f s: %.1f GPU-h of "
           "training and %llu requests lost\n",
           (unsigned long long)s->fault_events, s->fault_s,
           s->fault_lost_gpu_hours, (unsigned long long)s->requests_dropped);
  if (sc->cfg.nservices + sc->cfg.ntraining + sc->cfg.ngjobs > 0)
    printf("  GPU energy by  inference %.4f MWh, training %.4f MWh, idle "
           "%.4f MWh; other IT %.4f MWh\n",
           s->inference_energy_j / 3.6e9, s->training_energy_j / 3.6e9,
           s->idle_energy_j / 3.6e9, s->overhead_energy_j / 3.6e9);
}

/* The grid's cost and carbon, and the bill's parts, where the run has them. */
static void print_grid_bill(const factory_summary *s) {
  char cost[32], co2[32];
  if (!isnan(s->cost) || !isnan(s->co2_kg))
    printf("  grid           cost %s, CO2 %s\n",
           present(s->cost, "%.2f", 1, cost, sizeof cost),
           present(s->co2_kg, "%.3f t", 1e-3, co2, sizeof co2));
  if (!isnan(s->cost))
    printf("  bill           energy %.2f, demand %.2f (peak %.1f kW), fees "
           "%.2f\n",
           s->cost_energy, s->cost_demand, s->peak_demand_kw, s->cost_fees);
  if (!isnan(s->co2_kg))
    printf("  carbon basis   %s\n", s->carbon_basis);
}

/* Demand-response events and grid disturbances, when the run had them. */
static void print_grid_events(const factory_summary *s) {
  if (s->dr_events > 0)
    printf("  demand resp.   %llu events, %.0f s: cut met after %.0f s, %.3g J "
           "above it, SLO attainment %.1f%% during them\n",
           (unsigned long long)s->dr_events, s->dr_s, s->dr_time_to_cut_s,
           s->dr_over_j, 100 * s->dr_slo_attainment);
  if (s->dist_events > 0)
    printf("  disturbances   %llu, %llu trips: the grid lost %.1f MW, off "
           "%.0f s, backup %.4f MWh, IT dark %.0f s; ride-through met %.0f%%\n",
           (unsigned long long)s->dist_events,
           (unsigned long long)s->dist_trips, s->dist_lost_w / 1e6,
           s->dist_off_s, s->dist_backup_j / 3.6e9, s->dist_dark_s,
           100 * s->ride_through_met);
}

/* PUE, ITUE and TUE with their parts, and water when the plant uses it. */
static void print_facility(const factory_summary *s) {
  printf("  PUE            %.3f (cooling %.4f MWh, power chain %.4f MWh); "
         "ITUE %.3f (power supplies %.4f MWh, fans %.4f MWh), TUE %.3f\n",
         s->energy_j / s->it_energy_j, s->cooling_energy_j / 3.6e9,
         s->loss_energy_j / 3.6e9, factory_itue(s),
         s->psu_loss_energy_j / 3.6e9, s->fan_energy_j / 3.6e9, factory_tue(s));
  if (s->water_kg > 0)
    printf("  water          WUE %.3f L/kWh: %.1f m3 (evaporation %.1f, "
           "blowdown %.1f, drift %.2f)\n",
           factory_wue(s), s->water_kg / 1e3, s->water_evaporation_kg / 1e3,
           s->water_blowdown_kg / 1e3, s->water_drift_kg / 1e3);
}

static void print_summary(const factory_scenario *sc, const factory_summary *s,
                          const char *out, double wall, uint64_t events,
                          double hdf5_s) {
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
  print_grid_events(s);
  print_facility(s);
  char note[1024];
  if (*factory_cooling_note(sc, note, sizeof note) != '\0')
    printf("  cooling        %s\n", note);
  if (*factory_host_note(&sc->cfg, note, sizeof note) != '\0')
    printf("  host power     %s\n", note);
  print_grid_bill(s);
  print_workloads(sc, s);
  if (s->grid_verdict[0] != '\0')
    printf("  grid code      %s\n", s->grid_verdict);
  printf("  output         %s (HDF5 writing %.2f s)\n", out, hdf5_s);
}

/* Every /summary metric the run declared, by group, with its long name,
 * value and units as the models declare them (`aifsim run --metrics`). */
static void print_metrics(const tel_sink *sink) {
  size_t n;
  const tel_metric *m = tel_metrics(sink, &n);
  printf("  metrics        as /summary declares them (docs/OUTPUT.md)\n");
  for (size_t g = 0; tel_metric_groups[g] != NULL; g++) {
    printf("    %s\n", tel_metric_groups[g]);
    for (size_t i = 0; i < n; i++) {
      double v = tel_metric_value(sink, i);
      if (m[i].units == NULL || strcmp(m[i].group, tel_metric_groups[g]) != 0)
        continue;
      if (isnan(v))
        printf("      %-34s %14s %-9s %s\n", m[i].long_name, "-", "", m[i].key);
      else
        printf("      %-34s %14.6g %-9s %s\n", m[i].long_name, v,
               strcmp(m[i].units, "1") != 0 ? m[i].units : "", m[i].key);
    }
  }
}

typedef struct run_state {
  const run_request *rq;
  aifsim *a;
  sim_error *err; /* what the caller prints on failure */
} run_state;

/* The handle closes the sink first (it borrows the factory's telemetry
 * declarations): an uncommitted partial file is removed, or kept with
 * --keep-partial. */
static void run_cleanup(run_state *r) {
  aifsim_close(r->a);
  r->a = NULL;
  cmd__guard_clear();
}

/* The handle's failure, passed on: the input's as the loader or the
 * factory said it (FILE:LINE:COLUMN: exit 2), the run's with "aifsim: "
 * in front (exit 1). */
static int run_report(run_state *r) {
  int code = aifsim_errcode(r->a);
  bool input = aifsim_bad_input(r->a);
  if (input)
    sim_error_set(r->err, code, "%s", aifsim_errmsg(r->a));
  else
    sim_error_set(r->err, code, "aifsim: %s", aifsim_errmsg(r->a));
  run_cleanup(r);
  return input ? EXIT_BAD_INPUT : EXIT_RUN_FAILED;
}

#ifdef AIFSIM_TEST_HOOKS
#include <stdlib.h>

/* Test builds only (the aifsim_test executable, built with the tests):
 * AIFSIM_TEST_BREAK=energy|nan|co2|cost|cap breaks the books through
 * factory__test_break, so that the command's handling of a broken
 * invariant (exit 1, no output kept) can be tested end to end. The
 * aifsim executable is compiled without this code. */
static void test_break(aifsim *a) {
  static const char *const names[] = {"",    "energy", "nan",
                                      "co2", "cost",   "cap"};
  const char *v = getenv("AIFSIM_TEST_BREAK");
  for (int i = 1; v != NULL && i < (int)(sizeof names / sizeof *names); i++)
    if (strcmp(v, names[i]) == 0)
      factory__test_break(aifsim__factory(a), (factory_break)i);
}
#else
static void test_break(aifsim *a) { (void)a; }
#endif

/* The scenario loaded, PATH.lock taken (another process holding it is
 * AIFSIM_EBUSY, exit 1 naming the lock), PATH.partial created with the
 * run's root attributes, and the factory built at t = 0, all through
 * aifsim_open_opts. The signal deadline's paths are set first, so that a
 * factory of millions of GPUs being built is covered too. */
static int run_open(run_state *r) {
  const run_request *rq = r->rq;
  aifsim_options o = {.keep_partial = rq->keep_partial,
                      .stop = cmd__stop_flag(),
                      .sweep_point = rq->sweep_point,
                      .threads = rq->threads};
  cmd__guard_output(rq->out, rq->keep_partial);
  int rc = aifsim_open_opts(rq->scenario, rq->sets, rq->nsets, rq->out, &o,
                            &r->a);
  if (r->a == NULL) {
    cmd__guard_clear();
    sim_error_set(r->err, SIM_ENOMEM, "aifsim: out of memory");
    return EXIT_RUN_FAILED;
  }
  if (rc == AIFSIM_EBUSY)
    cmd__guard_clear(); /* the lock and the partial are another's */
  if (rc != AIFSIM_OK && rc != AIFSIM_ECANCELED)
    return run_report(r);
  test_break(r->a);
  return 0;
}

/* Wall seconds a slice of the run should take: the progress line is
 * redrawn and a sweep's tick runs between slices. (A stop signal needs no
 * slice: the engine watches its flag after every event.) */
#define SLICE_WALL_S 0.1

/* Runs to the end in slices of events (aifsim_step_events) sized by
 * progress_next_slice to take about SLICE_WALL_S each, drawing progress
 * and ticking between them; a stop signal stops the engine at its next
 * event. Slices count events, not simulated time: an event costs about
 * the same all run long, while a simulated second may cost a hundred
 * times more in a burst of requests than before it. */
static int run_slices(run_state *r, double *wall) {
  double end = aifsim_duration(r->a);
  progress p;
  progress_init(&p, stderr, r->rq->quiet);
  double t0 = cmd__wall_seconds(), before = t0;
  int64_t slice = 1000; /* events; the first slice only sets the pace */
  int rc = cmd__stop_signal() ? AIFSIM_ECANCELED : AIFSIM_OK;
  while (rc == AIFSIM_OK && !aifsim_at_end(r->a) && !cmd__stop_signal()) {
    unsigned long long ran = aifsim_events(r->a);
    rc = aifsim_step_events(r->a, (unsigned long)slice);
    double now = cmd__wall_seconds();
    unsigned long long events = aifsim_events(r->a);
    progress_update(&p, aifsim_time(r->a), end, events, now - t0);
    slice = progress_next_slice((int64_t)(events - ran), now - before,
                                SLICE_WALL_S);
    before = now;
    if (r->rq->tick != NULL)
      r->rq->tick(r->rq->tick_ctx);
  }
  progress_done(&p);
  *wall = cmd__wall_seconds() - t0;
  return cmd__stop_signal() ? AIFSIM_ECANCELED : rc;
}

/* A run stopped by a signal: its output removed, or kept as asked. */
static int run_stopped(run_state *r) {
  char partial[4200], what[64];
  snprintf(partial, sizeof partial, "%s.partial", r->rq->out);
  int sig = cmd__stop_signal();
  snprintf(what, sizeof what, "stopped by %s",
           sig == SIGINT    ? "SIGINT"
           : sig == SIGTERM ? "SIGTERM"
           : sig == SIGHUP  ? "SIGHUP"
                            : "SIGXCPU");
  run_cleanup(r);
  if (r->rq->keep_partial && access(partial, F_OK) == 0)
    sim_error_set(r->err, SIM_ECANCELED,
                  "aifsim: %s: kept %s, marked incomplete (complete=0)", what,
                  partial);
  else
    sim_error_set(r->err, SIM_ECANCELED, "aifsim: %s: no output was kept",
                  what);
  return EXIT_RUN_FAILED;
}

/* Runs one scenario to rq->out (cmd_internal.h) through the library's
 * calls (include/aifsim.h): open, steps, finish. */
int cmd__run_scenario(const run_request *rq, sim_error *err) {
  run_state r = {.rq = rq, .err = err};
  double wall = 0;
  int rc = run_open(&r);
  if (rc != 0)
    return rc;
  rc = run_slices(&r, &wall);
  if (rc == AIFSIM_ECANCELED)
    return run_stopped(&r);
  if (rc == AIFSIM_OK)
    rc = aifsim_finish(r.a);
  if (rc != AIFSIM_OK)
    return run_report(&r);
  if (rq->print_summary)
    print_summary(aifsim__scenario(r.a), aifsim__summary(r.a), rq->out, wall,
                  aifsim_events(r.a), tel_busy_s(aifsim__sink(r.a)));
  if (rq->print_metrics)
    print_metrics(aifsim__sink(r.a));
  run_cleanup(&r);
  return 0;
}

/* Whether path holds a complete aifsim output: one this command may
 * replace. */
static bool is_our_output(const char *path) {
  h5r_run r;
  sim_error e = {0};
  bool ours = h5r_run_read(path, &r, &e) == SIM_OK && r.complete == 1 &&
              r.scenario != NULL;
  h5r_run_release(&r);
  return ours;
}

/* May the run write out (through out.partial, renamed over out)? Never
 * over a file that is not regular or over the scenario itself; over any
 * other existing file only when it is a complete aifsim output, or with
 * --force. Returns 0 or EXIT_BAD_INPUT with the message printed. */
static int check_output(const options *o, const char *out) {
  struct stat st, scn;
  char partial[4200];
  snprintf(partial, sizeof partial, "%s.partial", out);
  if (lstat(partial, &st) == 0 && !S_ISREG(st.st_mode))
    return fprintf(stderr,
                   "aifsim: %s: exists and is not a regular file; "
                   "remove it\n",
                   partial),
           EXIT_BAD_INPUT;
  if (lstat(out, &st) != 0)
    return 0;
  if (!S_ISREG(st.st_mode))
    return fprintf(stderr,
                   "aifsim: %s: exists and is not a regular file; "
                   "it is never replaced\n",
                   out),
           EXIT_BAD_INPUT;
  if (stat(o->scenario, &scn) == 0 && scn.st_dev == st.st_dev &&
      scn.st_ino == st.st_ino)
    return fprintf(stderr,
                   "aifsim: %s: is the scenario being run; it is "
                   "never replaced\n",
                   out),
           EXIT_BAD_INPUT;
  if (o->force || is_our_output(out))
    return 0;
  fprintf(stderr,
          "aifsim: %s: exists and is not a complete aifsim output; "
          "choose another -o, or give --force to replace it\n",
          out);
  return EXIT_BAD_INPUT;
}

/* Loads the scenario once to estimate the run: prints the estimate on
 * stderr (stdout is the summary's) unless quiet, and refuses a run beyond
 * the limits unless --force. 0 or the exit status. */
static int estimate_run(const options *o) {
  factory_scenario sc;
  sim_error err = {0};
  if (factory_scenario_load(o->scenario, o->sets, o->nsets, &sc, &err) !=
      SIM_OK)
    return cmd__report(&err);
  cmd__warn_host(&sc);
  run_estimate e;
  int rc =
      cmd__estimate(&sc, &e, !o->quiet, &err) != SIM_OK ? cmd__report(&err) : 0;
  if (rc == 0 && !o->quiet)
    cmd__print_estimate(stderr, &e);
  if (rc == 0)
    rc = cmd__refuse_estimate(&e, &sc.cfg, o->force);
  factory_scenario_release(&sc);
  return rc;
}

/* --policy: the interpreter ($AIFSIM_PYTHON, else Debian's). */
static const char *policy_python(void) {
  const char *p = getenv("AIFSIM_PYTHON");
  return p != NULL && *p != '\0' ? p : "/usr/bin/python3";
}

/* The hook's environment: PYTHONPATH starts with the source tree's
 * analysis package, AIFSIM_LIB names the libaifsim.so beside this
 * executable (this build's) and AIFSIM_BIN this executable. */
static void policy_environment(void) {
  char exe[PATH_MAX], buf[2 * PATH_MAX + 2];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = '\0';
    setenv("AIFSIM_BIN", exe, 1);
    char *slash = strrchr(exe, '/');
    snprintf(buf, sizeof buf, "%.*s/libaifsim.so", (int)(slash - exe), exe);
    if (access(buf, R_OK) == 0)
      setenv("AIFSIM_LIB", buf, 1);
  }
  const char *old = getenv("PYTHONPATH");
  snprintf(buf, sizeof buf, "%s%s%s", AIFSIM_ANALYSIS_DIR,
           old != NULL && *old != '\0' ? ":" : "", old != NULL ? old : "");
  setenv("PYTHONPATH", buf, 1);
}

/* `run --policy module:function`: the run through the Python policy hook
 * (python3 -m aifsim.hook, analysis/aifsim/hook.py), which prints its own
 * messages and exits as run does: 0, 1 the run failed, 2 bad input (the
 * policy cannot be loaded). An interpreter that cannot be started is bad
 * input too. */
static int run_policy(const options *o, const char *out) {
  const char *argv[2 * MAX_SETS + 16] = {
      policy_python(), "-m", "aifsim.hook", o->scenario, "--policy", o->policy};
  size_t k = 6;
  for (size_t i = 0; i < o->nsets; i++) {
    argv[k++] = "--set";
    argv[k++] = o->sets[i];
  }
  argv[k++] = "-o";
  argv[k++] = out;
  char threads[16]; /* --threads N: the hook opens its run with them */
  if (o->threads > 0) {
    snprintf(threads, sizeof threads, "%u", o->threads);
    argv[k++] = "--threads";
    argv[k++] = threads;
  }
  policy_environment();
  fflush(NULL);
  extern char **environ;
  pid_t pid, w;
  int status,
      rc = posix_spawn(&pid, argv[0], NULL, NULL, (char *const *)argv, environ);
  if (rc != 0)
    return fprintf(stderr,
                   "aifsim: --policy: cannot run %s (set AIFSIM_PYTHON to "
                   "a Python 3 interpreter): %s\n",
                   argv[0], strerror(rc)),
           EXIT_BAD_INPUT;
  while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
    continue; /* a stop signal: the hook has it too, and stops */
  if (w < 0 || !WIFEXITED(status))
    return fprintf(stderr, "aifsim: --policy: %s did not exit (%s)\n", argv[0],
                   w < 0 ? strerror(errno) : "killed by a signal"),
           EXIT_RUN_FAILED;
  rc = WEXITSTATUS(status);
  return rc == 0 || rc == EXIT_BAD_INPUT ? rc : EXIT_RUN_FAILED;
}

int cmd__run(const options *o) {
  char out[4096];
  sim_error err = {0};
  if (o->scenario == NULL)
    return cmd__usage_error("%s needs a scenario file", o->command);
  if (o->policy != NULL && (o->keep_partial || o->metrics))
    return cmd__usage_error("%s", "--keep-partial and --metrics are not "
                                  "options of run --policy");
  if (o->output != NULL)
    snprintf(out, sizeof out, "%s", o->output);
  else
    default_output(o->scenario, out, sizeof out);
  int bad = check_output(o, out);
  if (bad == 0)
    bad = estimate_run(o);
  if (bad != 0 || cmd__stop_signal() != 0) /* a signal: nothing started */
    return bad != 0 ? bad : EXIT_RUN_FAILED;
  if (o->policy != NULL)
    return run_policy(o, out);
  run_request rq = {o->scenario, o->sets, o->nsets, out,  o->quiet,
                    true,        -1,      NULL,     NULL, o->keep_partial,
                    o->metrics,  o->threads};
  int rc = cmd__run_scenario(&rq, &err);
  if (rc != 0)
    fprintf(stderr, "%s\n", err.msg);
  return rc;
}
