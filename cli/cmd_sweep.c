/* cmd_sweep.c - `aifsim sweep`: the hooks that check and run each point
 * (as `check` and `run` do), the shard a process takes, MPI, the progress
 * line, --list and --collect. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd_internal.h"
#include "factory.h"
#include "progress.h"
#include "sweep.h"

/* ------------------------------------------------------------------ */
/* sweep                                                               */
/* ------------------------------------------------------------------ */

/* The sweep's progress line (rank 0, on a terminal) and failure lines. */
typedef struct sweep_ui {
  bool enabled; /* the progress line: rank 0, on a terminal, not quiet */
  double t0;
  int width;
  bool log;    /* rank 0 and not quiet: progress lines even off a terminal */
  double next; /* wall time of the next line about the checks */
  unsigned threads; /* each point's (--threads; 1: the points are the
                       sweep's parallelism) */
} sweep_ui;

static void ui_wipe(sweep_ui *ui) {
  if (ui->width > 0)
    fprintf(stderr, "\r%*s\r", ui->width, "");
  ui->width = 0;
}

static void ui_draw(sweep_ui *ui, const sweep_event *ev) {
  char left[32];
  double wall = cmd__wall_seconds() - ui->t0;
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

/* The checks' progress, before any point runs: a sweep of 1e6 points
 * spends minutes on them. On a terminal a line redrawn four times a
 * second; elsewhere (a batch job's log) a line after half a second, then
 * one a minute. A stop signal ends the checks. */
static int on_checking(void *user, size_t done, size_t total) {
  sweep_ui *ui = user;
  if (cmd__stop_signal() != 0)
    return 1;
  double now = cmd__wall_seconds(), wall = now - ui->t0;
  if (!ui->log || now < ui->next)
    return 0;
  char left[32];
  double eta = done > 0 ? wall * (double)(total - done) / (double)done : 0;
  progress_hms(eta, left, sizeof left);
  if (ui->enabled) {
    int n = fprintf(stderr,
                    "\r  checking %zu/%zu points before any runs  "
                    "ETA %s",
                    done, total, done > 0 ? left : "-");
    if (n < ui->width)
      fprintf(stderr, "%*s", ui->width - n, "");
    ui->width = n;
  } else {
    fprintf(stderr,
            "aifsim: checking the sweep's points before any runs: "
            "%zu of %zu points checked%s%s\n",
            done, total, done > 0 ? ", about " : "", done > 0 ? left : "");
  }
  fflush(stderr);
  ui->next = now + (ui->enabled ? 0.25 : 60);
  return 0;
}

static void on_redo(void *user, size_t point, const char *why) {
  (void)user;
  fprintf(stderr, "aifsim: point %zu: %s: computing it again\n", point, why);
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
  const sweep_ui *ui = user;
  run_request rq = {
      job->base,           job->sets, job->nsets,    job->out, true, false,
      (int64_t)job->point, job->tick, job->tick_ctx, false,    false,
      ui->threads};
  if (cmd__run_scenario(&rq, err) == 0)
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

/* An override as a shell word: quoted when the shell would change it,
 * in single quotes, with a quote inside written as '\'' (the names in it
 * are the user's: a rack called it's must still paste back whole). */
static void print_set(const char *before, const char *set) {
  bool quote = strpbrk(set, " \t\n\"'{}[]()<>,;#&*?!|`$\\~") != NULL;
  fputs(before, stdout);
  if (quote)
    putchar('\'');
  for (const char *c = set; *c != '\0'; c++)
    if (quote && *c == '\'')
      fputs("'\\''", stdout);
    else
      putchar(*c);
  if (quote)
    putchar('\'');
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
    return cmd__report(&err);
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
                         sweep_ui *ui, int rank, int size) {
  char dir[4096], why[160];
  sweep_stats st;
  sim_error err = {0};
  sweep_run_opts ro = {dir, {0, 1}, AIFSIM_VERSION, size > 1};
  if (o->output != NULL)
    snprintf(dir, sizeof dir, "%s", o->output);
  else
    default_sweep_dir(o->scenario, dir, sizeof dir);
  if (pick_shard(o, size > 1, &ro.shard, why, sizeof why, &err) != SIM_OK)
    return rank == 0 ? cmd__report(&err) : EXIT_BAD_INPUT;
  if (rank == 0)
    print_shard_source(s, &ro, why, size);
  ui->t0 = cmd__wall_seconds();
  int rc = sweep_run(s, &ro, h, &st, &err);
  ui_wipe(ui);
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
  return e == SIM_OK || e == SIM_ENOTFOUND ? 0 : cmd__report(&err);
}

static int sweep_main(const options *o, int rank, int size) {
  bool talk = rank == 0 && !o->quiet;
  sweep_ui ui = {talk && isatty(fileno(stderr)), cmd__wall_seconds(), 0, talk,
                 cmd__wall_seconds() + 0.5, o->threads > 0 ? o->threads : 1};
  sweep_hooks h = {.check = check_point,
                   .run = run_point,
                   .done = on_point,
                   .user = &ui,
                   .redo = on_redo,
                   .checking = on_checking,
                   .unchecked = o->list};
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
  sweep_sets_destroy(stored, nstored);
  ui_wipe(&ui);
  if (s == NULL && err.code == SIM_ECANCELED)
    return EXIT_RUN_FAILED; /* a stop signal: main re-raises it */
  if (s == NULL)
    return rank == 0 ? cmd__report(&err) : EXIT_BAD_INPUT;
  if (o->list)
    rc = rank == 0 ? sweep_list(s) : 0;
  else if (o->collect != NULL)
    rc = rank == 0 ? sweep_collect_cmd(s, o->collect) : 0;
  else
    rc = sweep_execute(o, s, &h, &ui, rank, size);
  sweep_destroy(s);
  return rc;
}

int cmd__sweep(const options *o, int *argc, char ***argv) {
  long size = 0;
  int rank = 0, world = 1;
  sim_error err = {0};
  if (o->scenario == NULL)
    return cmd__usage_error("%s needs a sweep file", o->command);
  if (o->list && o->collect != NULL)
    return cmd__usage_error("%s", "give --list or --collect, not both");
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
    return cmd__report(&err);
  int rc = sweep_main(o, rank, world);
  sweep_mpi_stop();
  return rc;
}
