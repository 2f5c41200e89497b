/* import.h - what the files of `aifsim import` share (docs/IMPORT.md):
 * the jobs a log holds, as its reader found them. import_logs.c reads the
 * three formats (Slurm sacct --parsable2, the Parallel Workloads Archive's
 * Standard Workload Format, the SenseTime Helios cluster log) into an
 * imp_log; cmd_import.c maps the jobs to the scenario's generic GPU jobs
 * (gpujob.h) by the user's mapping file and writes the scenario. */
#ifndef AIFSIM_IMPORT_H
#define AIFSIM_IMPORT_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* One job of a log: times in seconds on the log's own clock (UTC seconds
 * since 1970 for sacct and Helios, the log's seconds for SWF). */
typedef struct imp_job {
  char id[32];
  char partition[48]; /* partition, queue number or virtual cluster */
  char state[24];     /* COMPLETED, FAILED, ...; SWF: its status code */
  double submit_s, start_s, end_s;
  int64_t gpus;
  long line; /* in the log, for messages */
} imp_job;

/* What was read, and what was left out and why. */
typedef struct imp_log {
  imp_job *jobs;
  size_t n, cap;
  size_t steps;     /* sacct: job steps (JobID with a '.'), not jobs */
  size_t unstarted; /* never started or never ended: no run to replay */
  size_t no_gpus;   /* held no GPU */
} imp_log;

typedef enum imp_format { IMP_SACCT, IMP_SWF, IMP_HELIOS } imp_format;

/* Reads the log at path in format f into log (zeroed by the caller; free
 * with imp_log_fini). SWF has processors, not GPUs: a job holds
 * ceil(processors / procs_per_gpu) GPUs. SIM_OK, SIM_EIO when the file
 * cannot be read, SIM_EINPUT with "PATH:LINE:COLUMN: ..." on bad input,
 * SIM_ENOMEM. (import_logs.c) */
int imp_log_read(imp_log *log, imp_format f, const char *path,
                 double procs_per_gpu, sim_error *err);
void imp_log_fini(imp_log *log);

#endif
