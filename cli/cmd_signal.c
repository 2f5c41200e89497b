/* cmd_signal.c - SIGINT, SIGTERM, SIGHUP and SIGXCPU, taken as Unix tools
 * take them: stop, clean up, then die of the same signal, so a shell or a
 * batch system sees 128+N (130 for Ctrl-C, 143 for SIGTERM) and a shell
 * loop stops instead of going on to its next run.
 *
 * Two paths, so that a signal is acted on within a second whatever the
 * process is doing:
 * - the orderly one: the handler only records the signal; the engine reads
 *   that flag after every event (sim_engine_watch) and stops the run, the
 *   run's cleanup removes its partial file and lock (or keeps the partial
 *   with --keep-partial), and main re-raises the signal (cmd__exit);
 * - the deadline: the handler also arms a one-shot timer. If the orderly
 *   path has not ended the process when it fires (a scenario being checked,
 *   a factory of millions of GPUs being built, a file being closed), the
 *   timer's handler removes the output's partial file and lock itself
 *   (unlink is async-signal-safe) and re-raises at once. A second signal
 *   does the same without waiting.
 * A signal ignored when aifsim starts (nohup, a background job of a
 * non-interactive shell) stays ignored, as the POSIX shell's rules for
 * such jobs expect.
 *
 * The state is this file's statics: a signal handler can reach nothing
 * else. The command's layer only (main.c's, not the engine's). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <unistd.h>

#include "cmd_internal.h"

/* Seconds from the first signal to the deadline: the orderly stop of the
 * largest runs measured takes under 0.2 s. With --keep-partial the file
 * is flushed and sealed first, which takes longer for large outputs;
 * Slurm's KillWait (SIGKILL after SIGTERM) is 30 s by default. */
#define DEADLINE_S 0.5
#define KEEP_DEADLINE_S 20.0

static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGXCPU};

static volatile sig_atomic_t stop_signal; /* the first one received */
static volatile sig_atomic_t guarded;     /* the paths below are set */
static volatile sig_atomic_t keep;        /* keep the partial file */
static char guard_partial[4200], guard_lock[4200];

static void say(const char *text) {
  ssize_t n = write(STDERR_FILENO, text, strlen(text));
  (void)n;
}

/* Dies of sig now (from a handler, or at the end of main). A core file of
 * SIGXCPU's default action would be of no use. */
static void die_of(int sig) {
  struct rlimit none = {0, 0};
  if (sig == SIGXCPU)
    setrlimit(RLIMIT_CORE, &none);
  signal(sig, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  sigprocmask(SIG_UNBLOCK, &set, NULL);
  raise(sig);
  _exit(128 + sig); /* not reached: the default action ends the process */
}

/* The deadline: what the orderly path would have removed, then the end. */
static void on_deadline(int unused) {
  (void)unused;
  int sig = stop_signal != 0 ? stop_signal : SIGTERM;
  if (guarded && !keep)
    unlink(guard_partial);
  if (guarded)
    unlink(guard_lock);
  say(guarded && keep ? "aifsim: stopped before the output could be closed; "
                        "its .partial file may be unreadable\n"
                      : "aifsim: stopped; no output was kept\n");
  die_of(sig);
}

static void on_stop(int sig) {
  if (stop_signal != 0) {
    on_deadline(sig); /* a second signal: no waiting */
    return;
  }
  stop_signal = sig;
  double s = keep ? KEEP_DEADLINE_S : DEADLINE_S;
  struct itimerval t = {{0, 0},
                        {(time_t)s, (suseconds_t)((s - (time_t)s) * 1e6)}};
  setitimer(ITIMER_REAL, &t, NULL);
}

void cmd__catch_signals(void) {
  struct sigaction sa, old;
  memset(&sa, 0, sizeof sa);
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < sizeof stop_signals / sizeof *stop_signals; i++)
    sigaddset(&sa.sa_mask, stop_signals[i]);
  sigaddset(&sa.sa_mask, SIGALRM);
  sa.sa_flags = SA_RESTART; /* I/O in progress goes on */
  sa.sa_handler = on_deadline;
  sigaction(SIGALRM, &sa, NULL);
  sa.sa_handler = on_stop;
  for (size_t i = 0; i < sizeof stop_signals / sizeof *stop_signals; i++)
    if (sigaction(stop_signals[i], NULL, &old) == 0 &&
        old.sa_handler != SIG_IGN)
      sigaction(stop_signals[i], &sa, NULL);
}

int cmd__stop_signal(void) { return stop_signal; }

const volatile sig_atomic_t *cmd__stop_flag(void) { return &stop_signal; }

/* The paths are written before guarded is set, and guarded is cleared
 * before they change, so the handler never reads half a path. */
void cmd__guard_output(const char *out, bool keep_partial) {
  guarded = 0;
  snprintf(guard_partial, sizeof guard_partial, "%s.partial", out);
  snprintf(guard_lock, sizeof guard_lock, "%s.lock", out);
  keep = keep_partial;
  guarded = 1;
}

void cmd__guard_clear(void) { guarded = 0; }

int cmd__exit(int status) {
  if (stop_signal != 0) {
    fflush(stdout);
    fflush(stderr);
    die_of(stop_signal);
  }
  return status;
}
