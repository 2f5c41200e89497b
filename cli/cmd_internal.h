/* cmd_internal.h - what the files of the aifsim command share: the parsed
 * options, the exit statuses, the messages, and one run of a scenario,
 * which both `run` and `sweep` use. main.c parses the command line and
 * runs check and catalog; cmd_run.c runs a scenario; cmd_sweep.c runs a
 * sweep; cmd_common.c holds what they all call, and calls none of them. */
#ifndef AIFSIM_CMD_INTERNAL_H
#define AIFSIM_CMD_INTERNAL_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "err.h"

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
  bool force;        /* run: replace an output that is not aifsim's; run and
                        check: lift the estimate's limits */
  bool keep_partial; /* run: a run that does not finish keeps OUT.partial */
  const char *shard, *collect; /* sweep only */
  bool list;                   /* sweep only */
  bool quick_asked;            /* --quick: apply the file's # quick: line */
  char quick[1024];            /* that line, split in place into sets[] */
  const char *csv;             /* export only: the directory */
  bool metrics;                /* run only: print every /summary metric */
  const char *policy; /* run only: module:function, run by the Python hook */
  unsigned threads;   /* run and sweep: --threads N; 0: not given */
} options;

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
  bool keep_partial;  /* a run that does not finish keeps OUT.partial, whole
                         and marked complete=0 */
  bool print_metrics; /* and every /summary metric, by group (--metrics) */
  unsigned threads;   /* aifsim_options.threads: 0 the default */
} run_request;

/* With --quick, puts the --set options of o->scenario's `# quick:` line
 * in front of o->sets (the command line's own come after, so they win).
 * 0, or EXIT_BAD_INPUT with the message printed: the file cannot be read,
 * has no such line, or the line holds anything but `--set KEY=VALUE`.
 * (cmd_quick.c) */
int cmd__apply_quick(options *o);

/* --set-file OVERLAY: appends the overlay's key=value pairs to
 * sets[0..*nsets) (room for MAX_SETS), then calibrated_keys and
 * calibration_overlay, which mark them in the resolved scenario. Once per
 * process. 0, or EXIT_BAD_INPUT with the message printed. (cmd_overlay.c) */
int cmd__set_file(const char **sets, size_t *nsets, const char *path);

/* `aifsim calibrate SCENARIO MEASURED.csv --fit KEY...`, which parses its
 * own arguments: returns the exit status. (cmd_calibrate.c) */
int cmd__calibrate(int argc, char **argv);

/* The usage text, for help. (cmd_common.c) */
extern const char cmd__usage_text[];

/* Prints "aifsim: " and fmt with arg to stderr, then the usage text;
 * returns EXIT_BAD_INPUT. (cmd_common.c) */
int cmd__usage_error(const char *fmt, const char *arg);

/* Prints err's message to stderr; returns the exit status for its code:
 * EXIT_BAD_INPUT for bad input or a file, EXIT_RUN_FAILED otherwise.
 * (cmd_common.c) */
int cmd__report(const sim_error *err);

/* Warns on stderr, naming them, of rack groups with neither a system nor
 * host power: their IT excludes the host. Not fatal; nothing when every
 * group has host power. (cmd_common.c) */
struct factory_scenario;
void cmd__warn_host(const struct factory_scenario *sc);

/* Seconds on the monotonic wall clock, for progress and summaries.
 * (cmd_common.c) */
double cmd__wall_seconds(void);

/* Makes SIGINT, SIGTERM, SIGHUP and SIGXCPU (unless ignored from the
 * start) stop the command: a run at its next event, and whatever runs
 * within DEADLINE_S of wall time, with its output's partial file and lock
 * removed; main then re-raises the signal (cmd__exit). (cmd_signal.c) */
void cmd__catch_signals(void);

/* The first stop signal received, or 0. (cmd_signal.c) */
int cmd__stop_signal(void);

/* The flag the engine watches (sim_engine_watch): nonzero once a stop
 * signal came. (cmd_signal.c) */
const volatile sig_atomic_t *cmd__stop_flag(void);

/* What the deadline removes if the run has not cleaned up by then: OUT's
 * partial file (unless keep_partial) and its lock, which this process
 * holds from now on; cmd__guard_clear once they are gone or committed.
 * (cmd_signal.c) */
void cmd__guard_output(const char *out, bool keep_partial);
void cmd__guard_clear(void);

/* status, or, after a stop signal, does not return: the process dies of
 * that signal (exit status 128+N to a shell). main returns through it.
 * (cmd_signal.c) */
int cmd__exit(int status);

/* Runs one scenario to rq->out. Returns the exit status: 0, or 1 or 2
 * with the message to print in *err (err->code says why: SIM_ECANCELED
 * when interrupted). (cmd_run.c) */
int cmd__run_scenario(const run_request *rq, sim_error *err);

/* What a run will come to, estimated before it starts (cmd_estimate.c). */
typedef struct run_estimate {
  double events;       /* engine events */
  double samples;      /* telemetry rows (the groups sample together) */
  double bytes;        /* the HDF5 file, within about a factor of 2 */
  char events_key[48]; /* the key that drives the events */
  double memory;       /* peak resident bytes, within about a factor of 2 */
  double held;         /* requests held at the peak by the worst service */
  char memory_key[48]; /* that service ("services.0"), or "" */
  /* The wall-time guess from a trial run on this machine (NaN when not
   * probed): events / the trial's events per second. Printed only; it
   * never reaches an output. */
  double wall_s;
  double trial_rate;   /* the trial's events per wall second */
  double trial_wall_s; /* how long the trial ran */
} run_estimate;

struct factory_scenario;
struct factory_config;

/* Estimates a run of sc: builds its factory once on a sink that counts
 * the columns (so an error the run would meet building it comes here),
 * and reads trace files for their rows. With trial, that factory also
 * runs for about a tenth of a second of wall time to measure this
 * machine's events per second, for the wall-time guess. SIM_OK, or the
 * code with err set. (cmd_estimate.c) */
int cmd__estimate(const struct factory_scenario *sc, run_estimate *e,
                  bool trial, sim_error *err);

/* "estimate: N events, N samples, about N MB of output, N MB of memory"
 * on out, then the wall-time guess on a line of its own when there was a
 * trial. (cmd_estimate.c) */
void cmd__print_estimate(FILE *out, const run_estimate *e);

/* Adds the run's peak memory to *e: the program, the factory as built
 * (built bytes, the writer's buffers included) and the requests its
 * services hold at their peak. SIM_OK, or the code with err set.
 * (cmd_memory.c) */
int cmd__estimate_memory(const struct factory_scenario *sc, double built,
                         run_estimate *e, sim_error *err);

/* 0 if e's memory fits the machine's share; else prints why not (the
 * figure, the limit and the key to change) and returns EXIT_BAD_INPUT.
 * (cmd_memory.c) */
int cmd__refuse_memory(const run_estimate *e, const struct factory_config *cfg);

/* 0 if a run of this estimate may start; else prints why not (the figure,
 * the limit and the key to change) and returns EXIT_BAD_INPUT. force
 * lifts the limits. (cmd_estimate.c) */
int cmd__refuse_estimate(const run_estimate *e,
                         const struct factory_config *cfg, bool force);

/* `aifsim export RUN.h5 --csv DIR`: returns the exit status.
 * (cmd_export.c) */
int cmd__export(const options *o);

/* `aifsim run`: returns the exit status. (cmd_run.c) */
int cmd__run(const options *o);

/* `aifsim sweep`, which may start MPI from argc and argv: returns the exit
 * status. (cmd_sweep.c) */
int cmd__sweep(const options *o, int *argc, char ***argv);

/* aifsim import FORMAT LOG [--map MAP] [--mode M] [-o OUT]. (cmd_import.c) */
int cmd__import(int argc, char **argv);

#endif
