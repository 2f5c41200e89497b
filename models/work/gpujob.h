/* gpujob.h - generic GPU jobs (docs/MODELS.md, Generic GPU jobs): a job
 * of a log that is not an LLM of known shape, only GPUs, a length and how
 * hard it drives them. The scenario's `jobs` list.
 *
 * A job holds G GPUs (one gang, as a training job with dp = G, pp = tp =
 * 1) and runs a repeating cycle of phases: compute for a share s_c of it,
 * communication s_m and I/O s_i (s_c + s_m + s_i = 1), at activities
 * a_c (`activity`), a_m and a_i. Its length is either
 *
 *   - `work`: the run time at full clock. Under a cap its compute phase
 *     stretches as compute-bound work does on the GPU model, by
 *     1 / gpu_speed_compute(phi) (gpu.h: speed = phi for compute-bound
 *     kernels), and communication and I/O do not: at clock share phi the
 *     run takes work x (s_c / speed(phi) + s_m + s_i); or
 *   - `duration`: the wall time, whatever the clocks (a log's own run
 *     time, held in as-logged replay): a cap lowers its power, not its
 *     length.
 *
 * Reuse, not a copy: a job is run by the training model (training.h), to
 * which gjob_to_train maps it. One cycle is one iteration of T0 =
 * length / n (n = round(length / cycle), at least 1: the length is exact);
 * the compute phase is the pipeline part (one stage, one microbatch, so no
 * bubbles) and communication with I/O is the closing all-reduce share
 * c = s_m + s_i at the activity (s_m a_m + s_i a_i) / c, which draws the
 * same mean power over a cycle (the factory sets power from the mean
 * activity over each control period, gpu.h's power is linear in the
 * activity at a clock). The order of communication and I/O inside the
 * tail is the one thing lost: the power-quality waveform sees one tail
 * step, not two. No checkpoints, failures or grid-aware deferral: a log
 * already holds what happened to its jobs. So the scheduler, the power
 * policies, the books (/jobs, the energy attribution, job conservation,
 * /summary's jobs_* and training_energy rows, under which generic jobs
 * are booked as the batch jobs they are) treat it as a training job. */
#ifndef MODELS_GPUJOB_H
#define MODELS_GPUJOB_H

#include <stdbool.h>
#include <stdint.h>

#include "scenario.h"
#include "training.h"

/* The phases of a cycle as shares of it (sum 1). */
typedef struct gjob_phases {
  double compute, comm, io;
} gjob_phases;

/* One job as a scenario writes it; checked by gjob_schema's hook. */
typedef struct gjob_config {
  char *name;
  char *gpu; /* GPU type; NULL: any */
  int64_t gpus;
  double duration_s; /* wall time held whatever the clocks, or NaN */
  double work_s;     /* run time at full clock (stretches), or NaN */
  double activity;   /* in the compute phase; NaN: from a 40% MFU */
  gjob_phases phases;
  double act_comm, act_io;
  double cycle_s;   /* one cycle of the phases at full clock */
  double arrival_s; /* submitted */
  double start_s;   /* as logged: starts then, past the queue; NaN: queued */
  int64_t priority;
} gjob_config;

extern const scn_schema gjob_schema;
/* The `phases` map alone, for other files that map jobs to these. */
extern const scn_schema gjob_phase_schema;

/* The training job that runs c (gpujob.h's header comment): *out is a
 * train_config with c's strings borrowed. c must have passed the schema's
 * check (one of duration and work, shares summing to 1). */
void gjob_to_train(const gjob_config *c, train_config *out);

/* The run time at a clock share phi whose compute-bound speed is speed
 * (gpu_speed_compute), s: the header's formula, for the docs and tests. */
double gjob_run_s(const gjob_config *c, double speed);

#endif
