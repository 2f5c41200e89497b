/* sweep_run.c - running a sweep's points (sweep.h): serially, as one
 * shard of a job array or srun, or over MPI. The summary they leave is
 * sweep_summary.c's.
 *
 * Design: the output directory is the only record of progress. It holds
 * point-NNNN.h5 (a run file, renamed to that name only once complete),
 * point-NNNN.h5.partial (a run in progress, or killed: the next run of the
 * point replaces it), point-NNNN.error (the message of the point's last
 * failure, removed when it succeeds), point-NNNN.lock while the point
 * runs, sweep-sets.txt (the command line's --set of the run, so that
 * --collect needs no options), summary.lock (taken by shards as they
 * finish) and summary.h5 and summary.csv.
 * Whether a point is done is read from the directory alone, and the
 * summary is always rebuilt from the files in point order, so a serial,
 * an MPI, a sharded and a killed-and-rerun sweep of the same points give
 * the same summary, byte for byte.
 *
 * A process holds a POSIX record lock on point-NNNN.lock while it runs the
 * point, so two sweeps in one directory (an array task resubmitted while
 * the first still runs) never write one point at once: HDF5 truncates a
 * file it creates before it checks its own lock, which would leave the
 * first writer committing a "complete" file with zeroed contents. The
 * kernel drops the lock when its process dies, however it dies, so a
 * killed sweep blocks nothing. A point whose lock is held is left to its
 * holder (counted busy); one found complete once locked is skipped.
 *
 * Shards (a job array, srun's tasks, --shard) run at the same time and
 * do not talk to each other, so the last to finish writes the summary:
 * each, after its own points, takes the lock on summary.lock and writes
 * the summary if every point then has a point file or an error file.
 * Each renames its own point files before it takes the lock, so of two
 * shards finishing together the second to hold it sees both. The lock
 * file stays (unlinking it would let a waiter and a newcomer each lock a
 * different file); it is empty.
 *
 * MPI protocol (AIFSIM_MPI): rank 0 checks the directory and broadcasts
 * whether to go on. Each other rank (a worker) sends rank 0 a result
 * (TAG_RESULT: the point it ran, its code and message; point -1 the first
 * time) and waits for an answer (TAG_WORK: the next point, or -1 to stop).
 * Rank 0 answers every result with the next point of the queue, one at a
 * time since runs differ in length, and runs points itself in between:
 * while it runs one, the run's tick hook answers workers from inside it.
 * A cancelled point (SIGINT/SIGTERM) stops the handing out; workers get -1
 * as they report. At the end rank 0 writes the summary and broadcasts the
 * outcome, so every rank returns the same code and counts. MPI errors stay
 * fatal (MPI's default, the job aborts): a rank that returned instead
 * would leave the others waiting forever. */
#include "sweep.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "h5read.h"
#include "sweep_internal.h"
#include "units.h"

#ifdef AIFSIM_MPI
#include <mpi.h>
#endif

static sweep_shard shard_of(const sweep_run_opts *o) {
  return o->shard.count > 0 ? o->shard : (sweep_shard){0, 1};
}

/* ---- Files ------------------------------------------------------------- */

/* Makes dir and its parents, as mkdir -p. */
static int make_dir(const char *dir, sim_error *err) {
  char buf[SWEEP_PATH];
  struct stat st;
  if (snprintf(buf, sizeof buf, "%s", dir) >= (int)sizeof buf)
    return sim_error_set(err, SIM_EINVAL, "%s: path too long", dir);
  for (char *p = buf + 1;; p++) {
    if (*p != '/' && *p != '\0')
      continue;
    char c = *p;
    *p = '\0';
    if (mkdir(buf, 0777) != 0 && errno != EEXIST)
      return sim_error_set(err, SIM_EIO, "%s: cannot make the directory: %s",
                           buf, strerror(errno));
    if ((*p = c) == '\0')
      break;
  }
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
    return sim_error_set(err, SIM_EIO, "%s: not a directory", dir);
  return SIM_OK;
}

/* Writes text to path through path.PID.partial and a rename, so that
 * processes writing the same file at once each rename a whole one.
 * 0 or -1. */
static int write_text_file(const char *path, const char *text) {
  char partial[SWEEP_PATH + 40];
  snprintf(partial, sizeof partial, "%s.%ld.partial", path, (long)getpid());
  FILE *f = fopen(partial, "w");
  if (f == NULL)
    return -1;
  int bad = fputs(text, f) < 0;
  bad |= fclose(f) != 0;
  if (bad || rename(partial, path) != 0) {
    unlink(partial);
    return -1;
  }
  return 0;
}

/* ---- The run's options ------------------------------------------------- */

void sweep_sets_destroy(char **sets, size_t n) {
  for (size_t i = 0; sets != NULL && i < n; i++)
    free(sets[i]);
  free(sets);
}

/* Appends a copy of text to the array *sets of *n. */
static int push_set(char ***sets, size_t *n, const char *text, sim_error *err) {
  char **grown = realloc(*sets, (*n + 1) * sizeof *grown);
  if (grown == NULL)
    return sweep__no_memory(err);
  *sets = grown;
  if ((grown[*n] = strdup(text)) == NULL)
    return sweep__no_memory(err);
  (*n)++;
  return SIM_OK;
}

/* Reads the lines of f that are neither empty nor comments. */
static int read_set_lines(FILE *f, char ***sets, size_t *n, sim_error *err) {
  char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  int e = SIM_OK;
  while (e == SIM_OK && (len = getline(&line, &cap, f)) >= 0) {
    if (len > 0 && line[len - 1] == '\n')
      line[--len] = '\0';
    if (len > 0 && line[0] != '#')
      e = push_set(sets, n, line, err);
  }
  free(line);
  return e;
}

int sweep_dir_sets(const char *dir, char ***sets, size_t *n, sim_error *err) {
  char path[SWEEP_PATH];
  *sets = NULL;
  *n = 0;
  snprintf(path, sizeof path, "%s/%s", dir, SWEEP_SETS_FILE);
  FILE *f = fopen(path, "r");
  if (f == NULL && errno == ENOENT)
    return SIM_ENOTFOUND;
  if (f == NULL)
    return sim_error_set(err, SIM_EIO, "%s: cannot read: %s", path,
                         strerror(errno));
  int e = read_set_lines(f, sets, n, err);
  fclose(f);
  if (e != SIM_OK) {
    sweep_sets_destroy(*sets, *n);
    *sets = NULL;
    *n = 0;
  }
  return e;
}

/* The sets file's text for the overrides given: a comment line, then one
 * override a line. malloc'd, or NULL when out of memory. */
static char *sets_text(const char *const *given, size_t n) {
  static const char head[] = "# aifsim sweep: the --set options of this "
                             "directory's run; --collect reads them\n";
  size_t len = sizeof head;
  for (size_t i = 0; i < n; i++)
    len += strlen(given[i]) + 1;
  char *text = malloc(len), *at = text;
  if (text == NULL)
    return NULL;
  at += snprintf(at, len, "%s", head);
  for (size_t i = 0; i < n; i++)
    at += snprintf(at, len - (size_t)(at - text), "%s\n", given[i]);
  return text;
}

/* SIM_OK when the stored overrides are the given ones, else SIM_EINPUT
 * saying which the directory holds. */
static int compare_sets(const char *dir, char **stored, size_t nstored,
                        const char *const *given, size_t n, sim_error *err) {
  char list[512] = "none";
  bool same = nstored == n;
  for (size_t i = 0; same && i < n; i++)
    same = strcmp(stored[i], given[i]) == 0;
  if (same)
    return SIM_OK;
  for (size_t i = 0, at = 0; i < nstored && at < sizeof list; i++)
    at += (size_t)snprintf(list + at, sizeof list - at, "%s--set %s",
                           i > 0 ? " " : "", stored[i]);
  return sim_error_set(err, SIM_EINPUT,
                       "%s/%s: this directory holds a run of the sweep with "
                       "other options (%s)\n  hint: give the same --set "
                       "options, or use another output directory",
                       dir, SWEEP_SETS_FILE, list);
}

/* Stores the command line's overrides in dir, or checks them against the
 * ones stored there. */
static int store_sets(const sweep *s, const char *dir, sim_error *err) {
  size_t n, nstored;
  char **stored, path[SWEEP_PATH];
  const char *const *given = sweep_given_sets(s, &n);
  for (size_t i = 0; i < n; i++)
    if (strchr(given[i], '\n') != NULL)
      return sim_error_set(err, SIM_EINPUT,
                           "--set %s: an override with a line break cannot "
                           "be stored in %s",
                           given[i], SWEEP_SETS_FILE);
  int e = sweep_dir_sets(dir, &stored, &nstored, err);
  if (e == SIM_OK) {
    e = compare_sets(dir, stored, nstored, given, n, err);
    sweep_sets_destroy(stored, nstored);
    return e;
  }
  if (e != SIM_ENOTFOUND)
    return e;
  char *text = sets_text(given, n);
  snprintf(path, sizeof path, "%s/%s", dir, SWEEP_SETS_FILE);
  e = text == NULL ? sweep__no_memory(err) : SIM_OK;
  if (e == SIM_OK && write_text_file(path, text) != 0)
    e = sim_error_set(err, SIM_EIO, "%s: cannot write", path);
  free(text);
  return e;
}

/* ---- Which points are done --------------------------------------------- */

/* Makes the directory and lists the shard's points that are not done. */
static int prepare(const sweep *s, const sweep_run_opts *o,
                   const sweep_hooks *h, size_t **todo, size_t *ntodo,
                   sweep_stats *st, sim_error *err) {
  sweep_shard sh = shard_of(o);
  char probe[SWEEP_PATH];
  size_t n = sweep_npoints(s);
  *ntodo = 0;
  if (sweep_point_path(s, o->dir, n - 1, ".h5.partial.partial", probe,
                       sizeof probe) != SIM_OK)
    return sim_error_set(err, SIM_EINVAL, "%s: path too long", o->dir);
  int e = make_dir(o->dir, err);
  if (e != SIM_OK)
    return e;
  if ((*todo = malloc(n * sizeof **todo)) == NULL)
    return sweep__no_memory(err);
  for (size_t p = 0; p < n && e == SIM_OK; p++) {
    point_file f;
    if (!sweep_shard_has(&sh, p))
      continue;
    st->mine++;
    e = sweep__read_point(s, o->dir, p, &f, err);
    if (f.done)
      st->skipped++;
    else
      (*todo)[(*ntodo)++] = p;
    if (e == SIM_OK && f.exists && !f.done && h->redo != NULL)
      h->redo(h->user, p, f.why);
    h5r_run_release(&f.run);
  }
  /* After the points: one of another scenario is the clearer message. */
  return e == SIM_OK ? store_sets(s, o->dir, err) : e;
}

/* ---- Running one point ------------------------------------------------- */

/* What run_point says beyond SIM codes (which are <= 0). */
enum {
  POINT_SKIPPED = 1, /* complete by the time it was claimed */
  POINT_BUSY = 2     /* another process holds the point */
};

/* Claims point p: a write lock on point-NNNN.lock. Returns the open
 * descriptor (keep it open while the point runs), or -1 with *busy true
 * when another process holds it. Where the file system has no locks, or
 * the lock file cannot be made, the point runs unclaimed (descriptor -1,
 * *busy false): sweeps that do not overlap need no lock. */
static int claim(const char *path, bool *busy) {
  struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
  int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  *busy = false;
  if (fd < 0 || fcntl(fd, F_SETLK, &fl) == 0)
    return fd;
  *busy = errno == EACCES || errno == EAGAIN;
  close(fd);
  return -1;
}

static void unclaim(const char *path, int fd) {
  if (fd >= 0) {
    unlink(path); /* before the close, which drops the lock */
    close(fd);
  }
}

/* Runs claimed point p through the run hook; a failure leaves its message
 * in point-NNNN.error, a success removes that file. */
static int run_claimed(const sweep *s, const sweep_run_opts *o,
                       const sweep_hooks *h, size_t p, void (*tick)(void *),
                       void *ctx, sim_error *err) {
  size_t nfixed, ncols = sweep_ncolumns(s);
  const char *const *fixed = sweep_fixed_sets(s, &nfixed);
  const char **sets = malloc((nfixed + ncols + 1) * sizeof *sets);
  char out[SWEEP_PATH], efile[SWEEP_PATH];
  if (sets == NULL)
    return sweep__no_memory(err);
  memcpy(sets, fixed, nfixed * sizeof *sets);
  sweep_point_sets(s, p, sets + nfixed, ncols);
  sweep__point_path(s, o->dir, p, ".h5", out);
  sweep__point_path(s, o->dir, p, ".error", efile);
  sweep_job job = {p, sweep_base(s), sets, nfixed + ncols, out, tick, ctx};
  int rc = h->run(h->user, &job, err);
  free(sets);
  if (rc != SIM_OK && err->msg[0] == '\0')
    sim_error_set(err, rc, "the run failed: %s", sim_strerror(rc));
  if (rc == SIM_OK)
    unlink(efile);
  else if (rc != SIM_ECANCELED)
    write_text_file(efile, err->msg);
  return rc;
}

/* Claims and runs point p: SIM_OK, POINT_SKIPPED, POINT_BUSY (err says
 * so), or the run's failure. */
static int run_point(const sweep *s, const sweep_run_opts *o,
                     const sweep_hooks *h, size_t p, void (*tick)(void *),
                     void *ctx, sim_error *err) {
  char lock[SWEEP_PATH];
  bool busy;
  point_file f;
  sim_error_clear(err);
  sweep__point_path(s, o->dir, p, ".lock", lock);
  int fd = claim(lock, &busy);
  if (busy) {
    sim_error_set(err, SIM_ESTATE,
                  "another process is running it (%s is locked); run the "
                  "sweep again once that one is done",
                  lock);
    return POINT_BUSY;
  }
  int rc = sweep__read_point(s, o->dir, p, &f, err);
  if (rc == SIM_OK)
    rc = f.done ? POINT_SKIPPED : run_claimed(s, o, h, p, tick, ctx, err);
  h5r_run_release(&f.run);
  unclaim(lock, fd);
  return rc;
}

/* Counts a point's outcome and tells the done hook. */
static void count_point(const sweep_hooks *h, sweep_stats *st, size_t ntodo,
                        size_t p, int code, const char *msg) {
  if (code == POINT_SKIPPED) {
    st->skipped++;
    return;
  }
  bool busy = code == POINT_BUSY;
  st->busy += busy;
  st->ran += !busy;
  st->failed += !busy && code != SIM_OK;
  if (h->done != NULL) {
    sweep_event ev = {p,
                      busy ? SIM_ESTATE : code,
                      code != SIM_OK ? msg : "",
                      st->ran + st->busy,
                      ntodo,
                      st->failed,
                      busy};
    h->done(h->user, &ev);
  }
}

/* ---- Serial ------------------------------------------------------------ */

/* Whether every point has a point file or an error file in dir. */
static bool all_points_tried(const sweep *s, const char *dir) {
  char path[SWEEP_PATH];
  for (size_t p = 0; p < sweep_npoints(s); p++) {
    sweep__point_path(s, dir, p, ".h5", path);
    if (access(path, F_OK) == 0)
      continue;
    sweep__point_path(s, dir, p, ".error", path);
    if (access(path, F_OK) != 0)
      return false;
  }
  return true;
}

/* A shard's last step: under the lock on summary.lock, the summary if
 * every point of the sweep was tried (this shard finished last). */
static int summary_if_last(const sweep *s, const sweep_run_opts *o,
                           sweep_stats *st, sim_error *err) {
  char lock[SWEEP_PATH];
  size_t failed, missing;
  struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
  snprintf(lock, sizeof lock, "%s/summary.lock", o->dir);
  int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  while (fd >= 0 && fcntl(fd, F_SETLKW, &fl) != 0 && errno == EINTR)
    continue;
  int e = SIM_OK;
  if (all_points_tried(s, o->dir)) {
    e = sweep__write_summary(s, o->dir, o->version, &failed, &missing, err);
    st->summary = e == SIM_OK;
  }
  if (fd >= 0)
    close(fd); /* drops the lock */
  return e;
}

/* After the points: the summary, unless cancelled or failed, and for a
 * shard only when it finished last. */
static int finish(const sweep *s, const sweep_run_opts *o, sweep_stats *st,
                  int e, sim_error *err) {
  size_t failed, missing;
  if (e != SIM_OK)
    return e;
  if (st->canceled)
    return sim_error_set(err, SIM_ECANCELED,
                         "interrupted after %zu of %zu points; run the same "
                         "command again to finish",
                         st->skipped + st->ran, st->mine);
  if (shard_of(o).count > 1)
    return summary_if_last(s, o, st, err);
  e = sweep__write_summary(s, o->dir, o->version, &failed, &missing, err);
  st->summary = e == SIM_OK;
  return e;
}

static int run_serial(const sweep *s, const sweep_run_opts *o,
                      const sweep_hooks *h, sweep_stats *st, sim_error *err) {
  size_t *todo = NULL, ntodo = 0;
  int e = prepare(s, o, h, &todo, &ntodo, st, err);
  for (size_t k = 0; e == SIM_OK && k < ntodo; k++) {
    sim_error pe = {0};
    int rc = run_point(s, o, h, todo[k], NULL, NULL, &pe);
    if (rc == SIM_ECANCELED) {
      st->canceled = true;
      break;
    }
    count_point(h, st, ntodo, todo[k], rc, pe.msg);
  }
  free(todo);
  return finish(s, o, st, e, err);
}

/* ---- MPI --------------------------------------------------------------- */

#ifdef AIFSIM_MPI

enum { TAG_RESULT = 1, TAG_WORK = 2 };

typedef struct mpi_result {
  int64_t point; /* -1: ready for a first point */
  int32_t code;
  char msg[sizeof(((sim_error *)NULL)->msg)];
} mpi_result;

/* Rank 0's state while it hands out points. */
typedef struct lead {
  const sweep *s;
  const sweep_run_opts *o;
  const sweep_hooks *h;
  const size_t *todo;
  size_t ntodo, next;
  int active; /* workers not yet told to stop */
  bool stopping;
  sweep_stats *st;
} lead;

/* A point's outcome, from rank 0 itself or a worker. */
static void lead_record(lead *l, int64_t p, int code, const char *msg) {
  if (code == SIM_ECANCELED) {
    l->stopping = l->st->canceled = true;
    return;
  }
  count_point(l->h, l->st, l->ntodo, (size_t)p, code, msg);
}

/* The next point for a worker, or -1 to stop it. */
static void lead_reply(lead *l, int rank) {
  int64_t p = -1;
  if (!l->stopping && l->next < l->ntodo)
    p = (int64_t)l->todo[l->next++];
  else
    l->active--;
  MPI_Send(&p, 1, MPI_INT64_T, rank, TAG_WORK, MPI_COMM_WORLD);
}

/* Answers one worker's message; with wait false only if one is there.
 * Waiting polls with a short sleep rather than spinning in MPI_Recv, so
 * an idle rank 0 leaves the cores to the workers. */
static void lead_serve(lead *l, bool wait) {
  MPI_Status status;
  int flag = 0;
  struct timespec nap = {0, 1000000};
  for (;;) {
    MPI_Iprobe(MPI_ANY_SOURCE, TAG_RESULT, MPI_COMM_WORLD, &flag, &status);
    if (flag || !wait)
      break;
    nanosleep(&nap, NULL);
  }
  if (!flag)
    return;
  mpi_result r;
  MPI_Recv(&r, (int)sizeof r, MPI_BYTE, status.MPI_SOURCE, TAG_RESULT,
           MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  r.msg[sizeof r.msg - 1] = '\0';
  if (r.point >= 0)
    lead_record(l, r.point, r.code, r.msg);
  lead_reply(l, status.MPI_SOURCE);
}

static void lead_tick(void *ctx) { lead_serve(ctx, false); }

/* Rank 0: runs points itself while there are any, serving workers from
 * its runs' ticks; then serves them until every one was told to stop. */
static void lead_run(lead *l) {
  while (!l->stopping && l->next < l->ntodo) {
    size_t p = l->todo[l->next++];
    sim_error pe = {0};
    int rc = run_point(l->s, l->o, l->h, p, lead_tick, l, &pe);
    lead_record(l, (int64_t)p, rc, pe.msg);
  }
  while (l->active > 0)
    lead_serve(l, true);
}

/* Other ranks: report, take the next point, until told to stop. */
static void follow(const sweep *s, const sweep_run_opts *o,
                   const sweep_hooks *h) {
  mpi_result r = {-1, 0, ""};
  for (;;) {
    int64_t p;
    MPI_Send(&r, (int)sizeof r, MPI_BYTE, 0, TAG_RESULT, MPI_COMM_WORLD);
    MPI_Recv(&p, 1, MPI_INT64_T, 0, TAG_WORK, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    if (p < 0)
      return;
    sim_error pe = {0};
    r.point = p;
    r.code = run_point(s, o, h, (size_t)p, NULL, NULL, &pe);
    memcpy(r.msg, pe.msg, sizeof r.msg);
  }
}

/* What every rank returns, as rank 0 decided it. */
typedef struct outcome {
  int32_t code;
  sweep_stats st;
} outcome;

static int run_mpi(const sweep *s, const sweep_run_opts *o,
                   const sweep_hooks *h, sweep_stats *st, sim_error *err) {
  int rank, size, go = SIM_OK;
  size_t *todo = NULL, ntodo = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0)
    go = prepare(s, o, h, &todo, &ntodo, st, err);
  MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
  outcome out = {go, {0}};
  if (go == SIM_OK && rank == 0) {
    lead l = {s, o, h, todo, ntodo, 0, size - 1, false, st};
    lead_run(&l);
    out.code = finish(s, o, st, SIM_OK, err);
  } else if (go == SIM_OK) {
    follow(s, o, h);
  }
  free(todo);
  out.st = *st;
  MPI_Bcast(&out, (int)sizeof out, MPI_BYTE, 0, MPI_COMM_WORLD);
  *st = out.st;
  if (rank != 0 && out.code != SIM_OK)
    sim_error_set(err, out.code, "the sweep failed (see rank 0)");
  return out.code;
}

bool sweep_mpi_built(void) { return true; }

int sweep_mpi_start(int *argc, char ***argv, int *rank, int *size,
                    sim_error *err) {
  int started = 0;
  (void)err;
  MPI_Initialized(&started);
  if (!started)
    MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
  return SIM_OK;
}

void sweep_mpi_stop(void) {
  int started = 0, stopped = 0;
  MPI_Initialized(&started);
  if (started)
    MPI_Finalized(&stopped);
  if (started && !stopped)
    MPI_Finalize();
}

#else /* !AIFSIM_MPI */

static int run_mpi(const sweep *s, const sweep_run_opts *o,
                   const sweep_hooks *h, sweep_stats *st, sim_error *err) {
  (void)s, (void)o, (void)h, (void)st;
  return sim_error_set(err, SIM_ENOTFOUND, "aifsim was built without MPI");
}

bool sweep_mpi_built(void) { return false; }

int sweep_mpi_start(int *argc, char ***argv, int *rank, int *size,
                    sim_error *err) {
  (void)argc, (void)argv;
  *rank = 0;
  *size = 1;
  return sim_error_set(err, SIM_ENOTFOUND,
                       "aifsim was built without MPI (AIFSIM_MPI off)");
}

void sweep_mpi_stop(void) {}

#endif

int sweep_run(const sweep *s, const sweep_run_opts *o, const sweep_hooks *h,
              sweep_stats *st, sim_error *err) {
  memset(st, 0, sizeof *st);
  st->points = sweep_npoints(s);
  sim_error_clear(err);
  return o->mpi ? run_mpi(s, o, h, st, err) : run_serial(s, o, h, st, err);
}
