/* training.h - large training jobs (docs/MODELS.md): a pipeline-parallel
 * iteration from a 1F1B schedule, power that swings with its phases,
 * progress under changing clocks, periodic checkpoints, GPU failures that
 * send the job back to its last checkpoint, and the work and energy lost.
 *
 * A job runs on G = DP x PP x TP GPUs. Its GPU k (0 .. G-1, in the order
 * the placement gave them) belongs to pipeline stage k / (DP x TP): each
 * stage is a contiguous block, which the scheduler packs into as few
 * racks as it can.
 *
 * Iteration time. MFU is the model-FLOPs utilisation over a whole
 * iteration (Chowdhery et al. 2022, PaLM, arXiv:2204.02311, appendix B):
 * at full clock an iteration takes
 *
 *   T0 = 6 N_active tokens_per_iteration / (G F_peak(precision) MFU)
 *
 * (6N: forward 2N plus backward 4N FLOPs per token, Kaplan et al. 2020).
 * A share c (comm_share) of T0 is the data-parallel gradient all-reduce and
 * optimizer step that compute does not hide; the rest is the pipeline.
 * With per-stage relative work w_s (imbalance: embedding and LM-head stages
 * differ) and m microbatches, 1F1B gives the pipeline time
 *
 *   T_pipe = sum_s t_s + (m - 1) max_s t_s,   t_s = tau w_s
 *
 * (Narayanan et al. 2021, Megatron-LM SC'21, section 2.2: each stage runs
 * m forward and m backward passes; the first microbatch crosses every
 * stage once, the slowest stage paces the rest), and tau is set so that
 * T_pipe = (1 - c) T0. With equal stages the bubble share of a stage is
 * (p - 1) / (m + p - 1), the paper's figure.
 *
 * Clocks. Stage s at clock share phi_s computes at gpu_speed_compute(phi_s):
 * t_s becomes t_s / speed_s, the communication does not change. The job's
 * progress is fluid (sim_fluid) in iterations at rate 1 / T(phi).
 *
 * Activity (what sets power) within an iteration, per stage: a warm-up
 * bubble (the stages before it fill the pipeline: sum_{j<s} t_j / 2, the
 * forward halves), m t_s of compute, a cool-down bubble to the end of the
 * pipeline, then the all-reduce. Compute runs at act_compute, bubbles at
 * act_idle and the all-reduce at act_comm (NVLink, the NICs and the NCCL
 * kernels keep the GPUs well above idle), so the job's power swings every
 * iteration. training_scn.c gives the calibration and its sources.
 *
 * Compute activity from the MFU (act_compute absent). The iteration's
 * FLOPs run inside the compute blocks, so there the tensor pipes deliver
 * MFU x T / B of peak (T the iteration, B the block at full clock). When
 * they run they reach e_t of peak (TRAIN_TENSOR_EFF, the roofline's
 * eff_flops), so they are busy sm = min(1, MFU T / (B e_t)) of the block;
 * the rest of it runs memory-bound kernels (norms, activations, the
 * optimizer) at the roofline's eff_bw of the bandwidth. The block's load
 * {sm, (1 - sm) eff_bw, 1} gives its power through gpu.h, and act_compute
 * is that power's share of tdp - idle (train_compute_activity): a job at
 * higher MFU draws more, up to the GPU's power limit.
 *
 * The waveform (train_wave_w). The factory sets power once per control
 * period from the mean activity over it, which keeps every energy book
 * exact; the phases inside the period are the job's waveform. All
 * data-parallel replicas and tensor-parallel ranks of a stage are taken
 * to be in step (synchronous training: Llama 3 reports power swings of
 * the whole job in step with its phases, Dubey et al. 2024, section
 * 3.3.4), and stages are offset only by the pipeline schedule above. So
 * the power-quality window can see swings shorter than the period.
 *
 * Speed tuning (speed_tuning: true; Perseus, Chung et al., SOSP 2024,
 * "Perseus: Removing Energy Bloat from Large Model Training",
 * arXiv:2312.06902, ML.ENERGY's Zeus). Without it every stage computes as
 * fast as its clock phi_s allows (phi_s is what train_set_clocks gives:
 * the clock its GPUs' caps allow) and a stage faster than the slowest
 * waits in bubbles at full power draw for compute. With it, the critical
 * stage c (the largest t_s; a straggler whose throttled GPU caps phi_s
 * low becomes it) paces the steady state, and every other stage s
 *
 *   - runs the one microbatch of its fill and drain that lies on the
 *     critical path at phi_s: its forward half in the fill, its backward
 *     half in the drain (the t_s / 2 halves of the warm-up above), so
 *     sum_s t_s does not grow;
 *   - runs its other m - 1 microbatches at phi*_s, the lowest clock in
 *     [phi_min, phi_s] with u_s = tau_s / speed(phi*_s) <= t_c: each fits
 *     the slot the critical stage gives it. speed is inverted by
 *     bisection (monotone), so a measured speed curve works too; for
 *     compute-bound work speed(phi) = phi and phi*_s = max(phi_min,
 *     tau_s / t_c).
 *
 * The iteration time is unchanged, T_pipe = sum_s t_s + (m - 1) t_c, and
 * so are progress, checkpoints and completion. Stage s's compute block
 * becomes t_s + (m - 1) u_s (it starts at the same warm-up; its bubbles
 * shrink by as much), phi*_s = phi_s for the critical stage and for any
 * stage already at phi_min. Bubbles and communication stay at phi_s.
 *
 * Power under tuning. The factory sets a GPU's power from the clock its
 * cap allows and its activity as a level, P = P_idle + a D(phi) with
 * D(phi) = P_busy + P_sm d(phi) (gpu.h), linear in a at a given clock.
 * So that it needs nothing new, the clock it keeps for the stage's GPUs
 * stays phi_s, and train_activity returns the activity that gives, at
 * phi_s, the exact mean power of the phases: over the window,
 * sum_k(duration_k a_k D(phi_k)) / (window x D(phi_s)), the slowed
 * microbatches counting as (act_compute, phi*_s) and everything else as
 * before at phi_s. The energy is exact; only the
 * reported clock (telemetry) is phi_s rather than phi*_s in the slowed
 * phases: train_stage_clock gives phi*_s. The slowed phases may come out
 * below act_idle (a GPU computing at a low clock can draw less than one
 * waiting at a high clock).
 *
 * Checkpoints every checkpoint_every of wall time while computing, each
 * taking checkpoint_time at act_checkpoint with progress paused; the
 * progress at a checkpoint's start is what a failure returns to.
 * Failures: each GPU fails at rate 1 / mtbf (exponential), so the job is
 * interrupted at rate G / mtbf whenever it holds its GPUs (Llama 3: 419
 * interruptions in 54 days on 16,384 GPUs, Dubey et al. 2024,
 * arXiv:2407.21783, section 3.3.4, a per-GPU MTBF of about 50,700 h).
 * An interruption loses the progress since the last checkpoint and holds
 * the GPUs idle for restart_time; lost GPU-hours count every GPU-hour
 * from the start of the last completed checkpoint (or the job's start, or
 * the end of the last restart, whichever is latest: no span counts twice)
 * to the restart's end, lost energy the energy the job drew over the same
 * span. A failure while restarting restarts the wait and loses only the
 * extension. */
#ifndef MODELS_TRAINING_H
#define MODELS_TRAINING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "err.h"
#include "gpu.h"
#include "llm.h"
#include "rng.h"
#include "scenario.h"

/* One job as a scenario writes it. Checked by train_schema's hook
 * (everything that needs no catalog); the factory checks the names. */
typedef struct train_config {
  char *name;
  char *model;     /* LLM catalog name */
  char *precision; /* LLM precision name; default "fp16" (BF16 math) */
  char *gpu;       /* GPU type to run on; NULL: any */
  int64_t dp, pp, tp;
  double tokens_per_iteration; /* global batch in tokens */
  int64_t iterations;          /* the job's length */
  double mfu;                  /* model-FLOPs utilisation, (0, 1] */
  int64_t microbatches;        /* m, >= 1 */
  double *stage_work;          /* relative work per stage (pp entries) or */
  size_t nstage_work;          /* none: all equal; parsed by the check */
  char **stage_work_text;      /* stage_work as written: the scenario */
  size_t nstage_work_text;     /* layer has no list of numbers */
  double comm_share;           /* c, [0, 1) */
  /* Activity by phase: computing, waiting in a pipeline bubble, in the
   * closing data-parallel all-reduce, writing a checkpoint. */
  double act_compute, act_idle, act_comm, act_checkpoint;
  double checkpoint_every_s; /* wall time between checkpoints; 0: never */
  double checkpoint_s;       /* how long one takes */
  double mtbf_s;             /* per GPU; NaN (absent), INFINITY, 0: none */
  double restart_s;          /* idle time after a failure */
  bool speed_tuning;         /* Perseus: slow non-critical stages */
  /* Drift of the data-parallel replicas (train_wave_w): the standard
   * deviation of their offsets within an iteration, and the length of a
   * phase transition. NaN (absent): lockstep, instant transitions. */
  double jitter_s, transition_s;
  /* Grid-aware timing (deferral.h): the policy (defer_policy), the signal
   * it follows (train_signal), the slowdown the job tolerates (its
   * deadline is arrival + its run at full speed x (1 + flexibility),
   * unless deadline_s is given), and the threshold policy's level (NaN:
   * the signal's mean up to the deadline). */
  int deferral;
  int deferral_signal;
  double flexibility;
  double deadline_s;
  double deferral_threshold;
  double arrival_s; /* when it is submitted */
  int64_t priority; /* higher first */
  /* An entry may stand for a stream of jobs like it: count of them, the
   * first at arrival_s and the rest after exponential gaps of mean
   * interarrival_s (Poisson arrivals), each with a data-parallel degree
   * drawn uniformly from dp_choices (none: dp). The factory expands
   * them (work.c). */
  int64_t count;
  double interarrival_s;
  int64_t *dp_choices; /* parsed by the check */
  size_t ndp_choices;
  char **dp_choices_text;
  size_t ndp_choices_text;
  /* Not scenario keys: how a generic GPU job (gpujob.h) runs through
   * this model. iteration_s > 0 is T0 itself (no LLM: model may be NULL,
   * tokens_per_iteration 0); fixed_time keeps clocks from stretching the
   * iteration (a job whose log fixes its run time); fixed_start starts
   * the job at start_s on free GPUs, past the queue (as logged). */
  double iteration_s;
  bool fixed_time, fixed_start;
  double start_s;
} train_config;

extern const scn_schema train_schema;

/* What a flexible job's timing follows. */
typedef enum train_signal {
  TRAIN_SIGNAL_CARBON,
  TRAIN_SIGNAL_PRICE
} train_signal;

/* What a job is doing. */
typedef enum train_state {
  TRAIN_WAITING,       /* not started */
  TRAIN_COMPUTING,     /* iterating */
  TRAIN_CHECKPOINTING, /* writing a checkpoint, progress paused */
  TRAIN_RESTARTING,    /* after a failure, GPUs idle */
  TRAIN_PAUSED,        /* held at a checkpoint (grid-aware), GPUs idle */
  TRAIN_DONE,
} train_state;

/* A job's account, for the /jobs table and the summary. */
typedef struct train_stats {
  double iterations_done; /* progress now, in iterations */
  uint64_t checkpoints;   /* completed */
  uint64_t failures;      /* interruptions */
  double lost_iterations; /* progress thrown away by failures */
  double lost_gpu_s;      /* GPU-seconds lost (see the header comment) */
  double lost_energy_j;   /* energy drawn over those spans */
  double energy_j;        /* everything the job drew (train_add_energy) */
  double start_s, end_s;  /* NaN until started / done */
  uint64_t pauses;        /* grid-aware pauses */
  /* Of failures and lost_gpu_s, what train_interrupt (a fault) caused. */
  uint64_t fault_interruptions;
  double fault_lost_gpu_s;
} train_stats;

/* The jobs of one run. Registers its handlers on the engine. */
typedef struct train_pool train_pool;

/* Called from the engine whenever a job changes state (checkpoint start
 * and end, failure, restart end) and when it finishes: read
 * train_state_of to tell which; only TRAIN_DONE frees its GPUs. */
typedef void (*train_done_fn)(void *ctx, size_t job);

/* An empty pool on e; failures draw from (seed, TRAIN_RNG_KIND, job).
 * on_done (may be NULL) is called as train_done_fn says.
 * NULL when out of memory. */
enum { TRAIN_RNG_KIND = RNG_KIND_MODEL + 0x51 };
train_pool *train_pool_create(sim_engine *e, uint64_t seed,
                              train_done_fn on_done, void *ctx);

/* Frees the pool; NULL does nothing. It leaves the engine alone (it may
 * be destroyed first), so the engine must not run the pool's events
 * afterwards. */
void train_pool_destroy(train_pool *p);

/* Adds a job of config c (borrowed: it must outlive the pool) running
 * model m at precision w on GPUs of type g. Checks that g has w's compute
 * precision. *job receives its index (0, 1, ... in order of adding).
 * SIM_OK, SIM_EINPUT (message without position) or SIM_ENOMEM. */
int train_add(train_pool *p, const train_config *c, const gpu_spec *g,
              const llm_model *m, const llm_precision *w, size_t *job,
              sim_error *err);

size_t train_count(const train_pool *p);
uint32_t train_gpus(const train_pool *p, size_t job); /* dp pp tp */
train_state train_state_of(const train_pool *p, size_t job);
const train_stats *train_stats_of(const train_pool *p, size_t job);

/* The iteration time at full clock (T0), the pipeline part, and the
 * bubble share of stage s at full clock without speed tuning (1 - m t_s /
 * T_pipe). */
double train_iteration_s(const train_pool *p, size_t job);
double train_bubble_share(const train_pool *p, size_t job, uint32_t stage);

/* Starts job at the engine's now on its GPUs: computing from iteration
 * 0, first checkpoint and first failure scheduled. SIM_OK, SIM_ESTATE
 * (already started) or an engine error. */
int train_start(train_pool *p, size_t job);

/* Sets the clock share of every stage (phi[s], pp entries, in
 * [phi_min, 1]) from now on: the fluid rate follows. Allowed in any
 * state. SIM_OK, SIM_EINVAL (a share out of range, message on the
 * engine: sim_engine_errmsg) or an engine error. */
int train_set_clocks(train_pool *p, size_t job, const double *phi);

/* Grid-aware pauses: a computing job stops at a checkpoint (written at
 * once: nothing is lost by pausing) and holds its GPUs idle, with no
 * failures drawn, until resumed. Either call does nothing in any other
 * state (the caller retries at its next tick). SIM_OK or an engine
 * error. */
int train_pause(train_pool *p, size_t job);
int train_resume(train_pool *p, size_t job);

/* A fault took the job's GPUs (its racks went dark): an interruption
 * exactly as a GPU failure makes one (back to the last checkpoint, idle
 * for restart_time; the lost work, GPU-hours and energy booked as the
 * header says), counted in failures and lost_gpu_s and also in
 * fault_interruptions and fault_lost_gpu_s. Does nothing unless the job
 * is computing, checkpointing or restarting (a paused job is at its
 * checkpoint and loses nothing). SIM_OK or an engine error. */
int train_interrupt(train_pool *p, size_t job);

/* Holds a job (hold true) until released (false): while held it does not
 * compute. A computing job stops at once as train_pause stops it (nothing
 * lost, but no pause counted); a restart that ends while held leaves the
 * job paused at its checkpoint; train_resume does nothing while held.
 * Releasing does not resume: the caller calls train_resume when it wants
 * the job to run. Failures are not drawn while paused. SIM_OK. */
int train_hold(train_pool *p, size_t job, bool hold);
bool train_held(const train_pool *p, size_t job);

/* The current iteration time at the clocks last set, s (speed tuning
 * leaves it as it is). */
double train_current_iteration_s(const train_pool *p, size_t job);

/* The clock share stage s computes its steady-state microbatches at:
 * phi*_s with speed tuning (see the header comment), phi_s without (and
 * for the critical stage). For telemetry and tests. */
double train_stage_clock(const train_pool *p, size_t job, uint32_t stage);

/* The mean activity of stage s's GPUs over [now, now + dt] if nothing
 * changes meanwhile: the phase profile integrated from the job's
 * position in its iteration (computing), act_checkpoint, 0 (restarting,
 * waiting, done). With speed tuning it is the activity that gives the
 * phases' exact mean power at the stage's clock phi_s (header comment);
 * dt = 0: the value at now. */
/* The activity of job's compute blocks: act_compute as given, or from the
 * MFU on its GPU (the header comment). */
double train_compute_activity(const train_pool *p, size_t job);

/* The same for a config on GPU g before a job exists, with pp stages of
 * equal work. */
double train_config_compute_activity(const train_config *c, const gpu_spec *g);

double train_activity(const train_pool *p, size_t job, uint32_t stage,
                      double dt);

/* The jobs' waveform: the GPU power of every computing job at
 * now + offset_s (offset_s in [0, period_s)) less its mean over [now, now
 * + period_s), in W, summed over jobs and stages, each stage's GPUs at
 * its clock phi_s and the activity of its phase at that instant (the
 * profile continued periodically from the job's position now, as if
 * nothing changed). Its mean over the period is zero (to the profile's
 * rounding), so adding it to the period's mean power leaves the energy as
 * it is. Power caps are taken at their period means (a capped GPU's
 * swing is not clipped inside the period). Cannot fail. The pool keeps
 * each period's means from sample to sample (so it is not const: the
 * same bits as computing them anew). */
double train_wave_w(train_pool *p, double period_s, double offset_s);

/* The power the job's hosts add per GPU and unit of activity, W (a rack's
 * other power follows its GPUs' mean activity, rack.h): train_wave_w
 * counts it with the GPUs' (0 until set). */
void train_set_host_slope(train_pool *p, size_t job, double w_per_gpu);

/* Adds energy the job's GPUs drew (the factory's attribution); it goes
 * to lost_energy_j if a failure then throws the span away. */
void train_add_energy(train_pool *p, size_t job, double joules);

/* The job's estimated time to finish from now, s, at the current clocks
 * and with no failures (for backfill reservations); 0 when done, the
 * whole length at full clock when waiting. */
double train_remaining_s(const train_pool *p, size_t job);

#endif
