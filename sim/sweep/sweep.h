/* sweep.h - parameter sweeps: a sweep file names a base scenario and a grid
 * of overrides; this module reads it, numbers its points in a fixed order,
 * checks every point before anything runs, and runs them serially, as one
 * shard of a job array, or spread over MPI ranks, with one run file per
 * point and one summary table of them all (docs/SWEEPS.md).
 *
 * It knows nothing of the factory: main supplies the hooks that check a
 * point's scenario and run it (sweep_hooks), exactly as `aifsim run --set`
 * would. It reads the sweep file with scenario.h and point files back with
 * h5read.h. Nothing here prints, exits or reads a clock.
 *
 * The sweep file (YAML):
 *
 *   base: quickstart.yaml       # the scenario (relative to this file)
 *   set: [duration=6h]          # overrides of every point (optional)
 *   axes:                       # the grid: the cartesian product of these
 *     - key: power.cap          # any scenario key, written as for --set
 *       values: [500kW, 600kW]  # a list of values ...
 *     - key: racks.0.count
 *       range: {from: 2, to: 8, step: 2}  # ... or a range, both ends in,
 *                               # in any units (from: 500kW, step: 50kW)
 *     - zip:                    # keys that vary together count as one axis
 *         - {key: racks.0.load.high, values: [80%, 90%]}
 *         - {key: racks.1.load.high, values: [70%, 85%]}
 *   seeds: [1, 2, 3]            # replicate seeds, or
 *   replicates: 3               # seeds S, S+1, S+2 with S the base's seed
 *
 * Point order: the axes in file order with the last varying fastest, as
 * nested loops, and the seed innermost of all. Point p of axes with L0,
 * L1, ... values and R seeds has ((i0 * L1 + i1) * L2 + ...) * R + r = p.
 * Numbering depends on the sweep file alone, never on ranks or shards.
 * A point's overrides are the file's `set`, then the command line's, then
 * one "key=value" per axis key in axis order, then "seed=N". */
#ifndef SIM_SWEEP_H
#define SIM_SWEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* At most this many points in one sweep. Every point is checked before
 * anything runs, about a millisecond each for the quickstart here, so a
 * sweep this large spends some 15 minutes on checks alone. */
#define SWEEP_MAX_POINTS 1000000

typedef struct sweep sweep;

/* One point to run: the scenario, its overrides and the file to write. */
typedef struct sweep_job {
  size_t point;
  const char *base;        /* the base scenario's path */
  const char *const *sets; /* every override of the point, in order */
  size_t nsets;
  const char *out; /* the point file; write OUT.partial, rename at the end */
  /* Call now and then during a long run (every few milliseconds of wall
   * time is plenty): under MPI, rank 0 hands out work from inside it.
   * NULL when there is nothing to do. */
  void (*tick)(void *ctx);
  void *tick_ctx;
} sweep_job;

/* What happened to one point, for a progress display. */
typedef struct sweep_event {
  size_t point;
  int code;        /* SIM_OK, or why the point failed */
  const char *msg; /* the failure's message; "" when ok */
  size_t done;     /* points finished in this call, this one included */
  size_t todo;     /* points this call has to run */
  size_t failed;   /* of the done ones */
  bool busy;       /* not run: another process is running it (code
                      SIM_ESTATE, msg says so) */
} sweep_event;

/* What main plugs in. check and run must be set; done may be NULL. */
typedef struct sweep_hooks {
  /* Loads the scenario at base with the overrides and checks everything,
   * running nothing. On success sets *seed to the scenario's seed and
   * *resolved to the resolved scenario (malloc'd; the sweep frees it), the
   * text a point file stores as /scenario. On failure returns a SIM_E*
   * code with a message; an error in an override must be reported as the
   * scenario loader does, starting "--set KEY=VALUE:1:COLUMN: ", so the
   * sweep can point at the axis value it came from. */
  int (*check)(void *user, const char *base, const char *const *sets,
               size_t nsets, int64_t *seed, char **resolved, sim_error *err);
  /* Runs one point. SIM_OK once job->out is complete; SIM_ECANCELED when
   * interrupted (the sweep then stops); any other code fails the point
   * with err's message, and the sweep goes on with the others. */
  int (*run)(void *user, const sweep_job *job, sim_error *err);
  /* Called on rank 0 after every point run (not for skipped ones), and
   * for points left to another process that was running them (busy). */
  void (*done)(void *user, const sweep_event *ev);
  void *user;
  /* Called on rank 0 before anything runs for each point whose file is
   * there but not done (incomplete, unreadable or damaged), with why; the
   * point is computed again. May be NULL. */
  void (*redo)(void *user, size_t point, const char *why);
  /* Called by sweep_load before it checks each point (done of total), for
   * a progress display: a sweep of 1e6 points takes minutes to check.
   * Nonzero stops the checks: sweep_load fails with SIM_ECANCELED. May be
   * NULL. */
  int (*checking)(void *user, size_t done, size_t total);
  /* sweep_load checks the sweep file and the base, not every point: for
   * listing the points at once. sweep_point_hash is then 0, and such a
   * sweep must not be run or collected. */
  bool unchecked;
} sweep_hooks;

/* Reads the sweep file at path and checks it whole before anything runs:
 * its own keys, then the base scenario with the fixed overrides (the
 * file's `set` and sets[0..nsets), the command line's), then every point.
 * A problem in the sweep file is SIM_EINPUT with "FILE:LINE:COLUMN: ", the
 * position of the offending axis key or value in the sweep file when a
 * point's scenario rejects it; problems in the base scenario keep the
 * scenario loader's own position. Returns the sweep (sweep_destroy) or
 * NULL with err set. hooks->check is called once per point and for the
 * base; the others are not used here. */
sweep *sweep_load(const char *path, const char *const *sets, size_t nsets,
                  const sweep_hooks *hooks, sim_error *err);

void sweep_destroy(sweep *s); /* NULL does nothing */

/* The base scenario's path as the hooks receive it (relative to the
 * current directory). Valid while s lives. */
const char *sweep_base(const sweep *s);

/* The sweep file's path as given, and its base as written in it. Valid
 * while s lives. */
const char *sweep_path(const sweep *s);
const char *sweep_base_written(const sweep *s);

size_t sweep_npoints(const sweep *s);

/* The fixed overrides, the same for every point: the file's `set`, then
 * the command line's. Valid while s lives. */
const char *const *sweep_fixed_sets(const sweep *s, size_t *n);

/* The command line's overrides alone (sets[0..nsets) of sweep_load), the
 * ones a run stores beside its points. Valid while s lives. */
const char *const *sweep_given_sets(const sweep *s, size_t *n);

/* The overrides that make point p itself: one "key=value" per axis key,
 * then "seed=N". Writes at most max pointers (valid while s lives) to out
 * and returns how many there are; sweep_ncolumns(s) is always enough. */
size_t sweep_point_sets(const sweep *s, size_t p, const char **out, size_t max);

/* The columns of the summary that come from the grid: one per axis key,
 * then "seed" when the sweep has seeds. Key names are normalized
 * ("racks[0].count" is "racks.0.count"). */
size_t sweep_ncolumns(const sweep *s);
const char *sweep_column_key(const sweep *s, size_t c);

/* The value of column c at point p, as written in the sweep file. */
const char *sweep_point_value(const sweep *s, size_t p, size_t c);

/* A hash of point p's resolved scenario (FNV-1a, 64 bits), to tell a point
 * file of this sweep from one of another. */
uint64_t sweep_point_hash(const sweep *s, size_t p);

/* FNV-1a over a string: the hash sweep_point_hash keeps. */
uint64_t sweep_hash_text(const char *text);

/* "point-0042.h5" for p under dir into buf (digits: at least 4, more when
 * the sweep has more than 10,000 points). suffix is appended (".h5",
 * ".error"). Returns SIM_OK, or SIM_ERANGE if buf is too small. */
int sweep_point_path(const sweep *s, const char *dir, size_t p,
                     const char *suffix, char *buf, size_t size);

/* ---- Shards of a job array ------------------------------------------- */

/* Shard index of count runs the points p with p % count == index:
 * round robin, so points of one region of the grid (which often take
 * alike long) spread over the shards. {0, 1} is the whole sweep. */
typedef struct sweep_shard {
  size_t index, count;
} sweep_shard;

/* Parses "I/N" (0 <= I < N). SIM_OK or SIM_EINPUT with a message. */
int sweep_shard_parse(const char *text, sweep_shard *out, sim_error *err);

/* The shard of a Slurm array task from its environment values, any of
 * which may be NULL: task = (id - min) / step of count. *found is false
 * (and SIM_OK) when id or count is NULL: not an array task. SIM_EINPUT
 * with a message when the values do not make a shard (an array with gaps
 * such as --array=1,5,9 cannot be mapped). */
int sweep_shard_from_slurm(const char *id, const char *min, const char *step,
                           const char *count, sweep_shard *out, bool *found,
                           sim_error *err);

/* The shard of one task of a Slurm job step (`srun -n N`) from
 * SLURM_PROCID and the step's task count (SLURM_STEP_NUM_TASKS), either
 * of which may be NULL: task procid of ntasks. *found is false (and
 * SIM_OK) when either is NULL: not a task of a step (a batch script has
 * SLURM_PROCID=0 but is no step). SIM_EINPUT with a message when the
 * values do not make a shard. */
int sweep_shard_from_step(const char *procid, const char *ntasks,
                          sweep_shard *out, bool *found, sim_error *err);

/* Shard inner of shard outer: outer's points split again, round robin,
 * as an array task with several srun tasks splits its shard by task.
 * It is {outer.index + outer.count * inner.index, outer.count *
 * inner.count}: the points with p % outer.count == outer.index taken
 * every inner.count-th. Cannot fail; {0, 0} counts as {0, 1}. */
sweep_shard sweep_shard_split(sweep_shard outer, sweep_shard inner);

/* Whether point p belongs to shard sh. */
bool sweep_shard_has(const sweep_shard *sh, size_t p);

/* ---- Running ---------------------------------------------------------- */

/* Counts of one sweep_run or sweep_collect. */
typedef struct sweep_stats {
  size_t points;  /* in the sweep */
  size_t mine;    /* in this shard */
  size_t skipped; /* complete before this call */
  size_t ran;     /* run by this call (all ranks) */
  size_t failed;  /* of the ran ones; for collect, failed rows */
  size_t busy;    /* not run: another process was running them */
  size_t missing; /* collect: rows with no point file and no error */
  bool canceled;  /* stopped by SIGINT/SIGTERM (a run hook's ECANCELED) */
  bool summary;   /* summary.h5 and summary.csv were written */
} sweep_stats;

typedef struct sweep_run_opts {
  const char *dir;     /* the output directory; made if missing */
  sweep_shard shard;   /* {0, 0} is the same as {0, 1} */
  const char *version; /* the aifsim version, for the summary; may be NULL */
  bool mpi;            /* spread over the MPI world (sweep_mpi_start) */
} sweep_run_opts;

/* Runs the points of the shard that have no complete file in dir yet,
 * then writes dir/summary.h5 and dir/summary.csv (rank 0 under MPI):
 * always when not sharded, and for a shard when it finishes last, that
 * is when every point of the sweep then has a point file or an error
 * file (shards finishing together take turns on dir/summary.lock, so
 * one of them sees them all). Before any point runs it stores the
 * command line's overrides in dir/SWEEP_SETS_FILE; a directory that
 * holds other ones is SIM_EINPUT (use the same options, or another
 * directory). A point file counts as complete when point-NNNN.h5 exists
 * (files are renamed there only once complete), has complete=1 and holds
 * this point's resolved scenario; one holding another scenario is
 * SIM_EINPUT before anything runs (the sweep file changed: use another
 * directory). A failing point leaves point-NNNN.error with its message
 * and the sweep goes on; its summary row has status "failed". A point
 * another process is running (its point-NNNN.lock is held) is left to it
 * and counted busy. Returns
 * SIM_OK when the sweep went through (stats->failed counts the points that
 * failed), SIM_ECANCELED when interrupted (no summary), or another code
 * with a message. Under MPI every rank calls it and gets the same code
 * and stats; only rank 0's err has the message and only rank 0 calls
 * done. */
int sweep_run(const sweep *s, const sweep_run_opts *opts,
              const sweep_hooks *hooks, sweep_stats *stats, sim_error *err);

/* Writes dir/summary.h5 and dir/summary.csv from the point files in dir
 * (after the shards of a job array have run). Rows of points with neither
 * a file nor an error file have status "missing"; stats counts them and
 * the failed ones. SIM_OK once the summary is written, SIM_EINPUT if a
 * point file holds another scenario, or an I/O error. */
int sweep_collect(const sweep *s, const char *dir, const char *version,
                  sweep_stats *stats, sim_error *err);

/* ---- The run's options, kept beside its points ------------------------ */

/* The file in a sweep's directory that keeps the command line's --set of
 * the run, one override a line after a '#' comment line. sweep_run writes
 * it before any point runs, so --collect can read them back and the
 * summary cannot be built from other options by mistake. */
#define SWEEP_SETS_FILE "sweep-sets.txt"

/* Reads the overrides stored in dir/SWEEP_SETS_FILE into *sets (an array
 * of *n strings; free it with sweep_sets_destroy). SIM_ENOTFOUND (no
 * message) when dir has no such file: never run, or run by an aifsim
 * older than the file; SIM_EIO or SIM_ENOMEM with a message otherwise. */
int sweep_dir_sets(const char *dir, char ***sets, size_t *n, sim_error *err);

/* Frees what sweep_dir_sets gave. NULL does nothing. */
void sweep_sets_destroy(char **sets, size_t n);

/* ---- MPI -------------------------------------------------------------- */

/* Whether this build has MPI (AIFSIM_MPI). */
bool sweep_mpi_built(void);

/* Initializes MPI (once per process) and gives this process's rank and the
 * world's size. SIM_ENOTFOUND without MPI in the build; SIM_EIO with a
 * message if MPI fails. MPI errors are returned from then on, not fatal. */
int sweep_mpi_start(int *argc, char ***argv, int *rank, int *size,
                    sim_error *err);

/* Finalizes MPI if sweep_mpi_start started it. */
void sweep_mpi_stop(void);

#endif
