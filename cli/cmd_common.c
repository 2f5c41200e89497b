/* cmd_common.c - what every command of aifsim shares, below them all
 * (cmd_internal.h): the usage text, the message and exit status of an
 * error, the wall clock, the warning for rack groups without host power.
 * main.c and the cmd_*.c files call it; it calls none of them. */
#include <stdio.h>
#include <time.h>

#include "cmd_internal.h"
#include "factory.h"

const char cmd__usage_text[] =
    "usage: aifsim COMMAND [ARGS]\n"
    "\n"
    "  run SCENARIO [-o OUT.h5] [--quick] [--seed N] [--set KEY=VALUE]...\n"
    "      [--quiet] [--force] [--keep-partial] [--metrics] [--threads N]\n"
    "        simulate; write OUT.h5 (default out/NAME.h5); an existing\n"
    "        OUT.h5 is replaced only if it is a complete aifsim output,\n"
    "        or with --force a regular file that is not the scenario;\n"
    "        one run at a time writes OUT.h5 (OUT.h5.lock); prints an\n"
    "        estimate first, and refuses a run estimated above 10 GB of\n"
    "        output, 1e11 events or its share of memory unless --force;\n"
    "        a run stopped by a signal or a failure removes its output,\n"
    "        or with --keep-partial keeps OUT.h5.partial (complete=0);\n"
    "        --metrics prints every /summary metric with its units;\n"
    "        --threads N runs the services' requests on N threads\n"
    "        (default: the CPUs it may use, at most one a service,\n"
    "        one below 500 requests a control period; the output is\n"
    "        the same for any N)\n"
    "  run SCENARIO --policy MODULE:FUNCTION [-o OUT.h5] [--seed N]\n"
    "      [--threads N] ...\n"
    "        the run under a power policy fn(units, budget_w) or a\n"
    "        controller fn(observation) written in Python (python3 -m\n"
    "        aifsim.hook; $AIFSIM_PYTHON, default /usr/bin/python3)\n"
    "  check SCENARIO [--resolved] [--quick] [--seed N] [--set KEY=VALUE]...\n"
    "      [--force]\n"
    "        validate only, and estimate the run's events, samples and\n"
    "        output size; --resolved prints the scenario with every\n"
    "        default filled in\n"
    "  catalog [--catalog FILE]\n"
    "        the GPU types with their figures and TFLOPS per watt\n"
    "  sweep SWEEP [-o DIR] [--quick] [--shard I/N] [--set KEY=VALUE]...\n"
    "      [--quiet] [--threads N]\n"
    "        run every point of a sweep file into DIR (default\n"
    "        out/NAME/): point-NNNN.h5, summary.h5, summary.csv; points\n"
    "        already complete are skipped; under mpirun the ranks share\n"
    "        the points; a Slurm array task or srun task runs its\n"
    "        shard; each point on one thread unless --threads N\n"
    "  sweep SWEEP --list | --collect DIR\n"
    "        print the points; or rebuild DIR's summary from its files\n"
    "        (with the --set options its run stored there)\n"
    "  export RUN.h5 --csv DIR\n"
    "        the run as tidy CSV in DIR: one file per group (facility.csv,\n"
    "        racks.csv, jobs.csv, ...) with units in the header,\n"
    "        summary.csv, run.csv and scenario.yaml\n"
    "  calibrate SCENARIO MEASURED.csv --fit KEY[=START]... [-o OVERLAY]\n"
    "      [--holdout 25%] [--column COL] [--start TIME] [--set KEY=VALUE]...\n"
    "        fit scenario keys to a measured power series by nonlinear\n"
    "        least squares, the last --holdout of its rows held out and\n"
    "        scored (ASHRAE Guideline 14's CV(RMSE) and NMBE); write the\n"
    "        values, their standard errors and both spans' errors to\n"
    "        OVERLAY (default MEASURED.overlay.yaml)\n"
    "  import sacct|swf|helios LOG [--map MAP.yaml] [-o OUT.yaml]\n"
    "      [--mode as-logged|rescheduled]\n"
    "        a job log as a scenario of generic GPU jobs (docs/IMPORT.md)\n"
    "  metrics\n"
    "        the /summary metrics a run writes: key, units, group and\n"
    "        long name (the file states them too: /summary's units,\n"
    "        long_names and groups)\n"
    "  version\n"
    "  help\n"
    "\n"
    "Keys in --set are paths into the scenario: power.cap=18MW,\n"
    "racks.0.count=4. --quick applies the file's '# quick:' line (the\n"
    "--set options that shorten it) before your own --set options.\n"
    "--set-file OVERLAY (run, check, sweep, calibrate) applies the keys of\n"
    "a calibration overlay and marks them calibrated in /scenario.\n"
    "Exit status: 0 ok, 1 the run failed, 2 bad input, 128+N stopped by\n"
    "signal N (SIGINT, SIGTERM, SIGHUP, SIGXCPU).\n";

int cmd__usage_error(const char *fmt, const char *arg) {
  fprintf(stderr, "aifsim: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\n\n%s", cmd__usage_text);
  return EXIT_BAD_INPUT;
}

double cmd__wall_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int cmd__report(const sim_error *err) {
  fprintf(stderr, "%s\n", err->msg);
  return err->code == SIM_EINPUT || err->code == SIM_EIO ? EXIT_BAD_INPUT
                                                         : EXIT_RUN_FAILED;
}

void cmd__warn_host(const struct factory_scenario *sc) {
  char note[1024];
  if (*factory_host_note(&sc->cfg, note, sizeof note) != '\0')
    fprintf(stderr, "aifsim: warning: %s: %s\n", sc->path, note);
}
