/* training_scn.c - the scenario side of training jobs: train_schema, its
 * field table, and the check hook that parses stage_work and dp_choices
 * and refuses what needs no catalog (training.h; the factory checks the
 * names against the catalogs, factory_scn_workloads.c). */
#include "training.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int check_train(void *obj, const scn_loc *loc, void *user,
                       sim_error *err);
static void release_train(void *obj);

#define INTEGER(k, field, lo, hi, def, fl, h)                                  \
  {                                                                            \
    .key = k, .type = SCN_INT, .offset = offsetof(train_config, field),        \
    .min = lo, .max = hi, .flags = fl, .dflt = def, .help = h                  \
  }

#define SHARE(k, field, def, fl, h)                                            \
  {                                                                            \
    .key = k, .type = SCN_QUANTITY, .offset = offsetof(train_config, field),   \
    .dim = UNITS_FRACTION, .min = 0, .max = 1, .flags = fl, .dflt = def,       \
    .help = h                                                                  \
  }

#define TIME(k, field, def, h)                                                 \
  {                                                                            \
    .key = k, .type = SCN_QUANTITY, .offset = offsetof(train_config, field),   \
    .dim = UNITS_TIME, .min = 0, .max = INFINITY, .dflt = def, .help = h       \
  }

#define NAME(k, field, def, fl, h)                                             \
  {                                                                            \
    .key = k, .type = SCN_STRING, .offset = offsetof(train_config, field),     \
    .flags = fl, .dflt = def, .help = h                                        \
  }

static const char *const deferral_names[] = {"none", "threshold", "window",
                                             NULL};
static const char *const signal_names[] = {"carbon", "price", NULL};

static const scn_field train_fields[] = {
    NAME("name", name, NULL, SCN_REQUIRED | SCN_NONEMPTY, "a name for the job"),
    NAME("model", model, NULL, SCN_REQUIRED | SCN_NONEMPTY,
         "an LLM of the catalog, e.g. Llama-3.1-70B"),
    NAME("precision", precision, "fp16", SCN_NONEMPTY,
         "a precision of the catalog; fp16 stands for BF16 math"),
    NAME("gpu", gpu, NULL, 0, "the GPU type to run on; absent: any"),
    INTEGER("dp", dp, 1, 1e6, "1", 0, "data-parallel degree"),
    INTEGER("pp", pp, 1, 4096, "1", 0, "pipeline-parallel degree (stages)"),
    INTEGER("tp", tp, 1, 1024, "1", 0, "tensor-parallel degree"),
    {.key = "tokens_per_iteration",
     .type = SCN_QUANTITY,
     .offset = offsetof(train_config, tokens_per_iteration),
     .dim = UNITS_NUMBER,
     .min = 0,
     .max = 1e12,
     .flags = SCN_REQUIRED | SCN_POSITIVE,
     .help = "global batch in tokens (Llama 3 405B: 16777216)"},
    INTEGER("iterations", iterations, 1, 1e15, NULL, SCN_REQUIRED,
            "the job's length in iterations"),
    /* 40%: Llama 3 405B trained at 38-43% BF16 MFU on 8,192-16,384 H100s
     * (Dubey et al. 2024, arXiv:2407.21783, Table 4); PaLM 46.2% on TPU
     * v4 (Chowdhery et al. 2022, Table 3). */
    SHARE("mfu", mfu, "40%", SCN_POSITIVE,
          "model-FLOPs utilisation over an iteration, (0, 100%]"),
    INTEGER("microbatches", microbatches, 1, 1e6, "8", 0,
            "microbatches per iteration and pipeline (m)"),
    {.key = "stage_work",
     .type = SCN_STRINGS,
     .offset = offsetof(train_config, stage_work_text),
     .count_offset = offsetof(train_config, nstage_work_text),
     .help = "relative work per stage, pp numbers, e.g. [1.2, 1, 1, 1.3]; "
             "absent: equal"},
    /* 10%: a starting point for the exposed data-parallel all-reduce and
     * optimizer step; frameworks overlap most of the all-reduce with the
     * backward pass, but every iteration of a large job ends in a visible
     * communication phase (Choukse et al. 2025, arXiv:2508.14318). */
    SHARE("comm_share", comm_share, "10%", 0,
          "share of the iteration in exposed communication, below 100%"),
    /* The phase activities. Compute: absent, from the MFU through the GPU
     * power model (training.h); tests/validate/test_training_power.c
     * holds the result to published node power (Latif et al., IEEE
     * Access 13 (2025) 61740, arXiv:2412.08602: an 8 x H100 node peaking
     * at about 8.4 kW; Newkirk et al., arXiv:2506.14551: compute-
     * intensive training at about 76% of the node's 10.2 kW), and a job
     * at 25% MFU below one at 55%, as measured power rises with the work
     * the GPUs do. A figure given here overrides it (the share of tdp -
     * idle while computing). Zeus (You et al., NSDI 2023;
     * data/gpu_power/summary_power_v100.csv): V100 training at its full
     * 250 W limit averages 222 W (ResNet-50, ImageNet) and 227 W (BERT,
     * SQuAD) over whole runs, so compute-bound kernels reach the limit.
     *  - Bubbles at 25%: a stage waiting for activations spins on one
     *    NCCL receive with its memory clocks up (an assumption, between
     *    idle and communication).
     *  - All-reduce at 50%: NCCL keeps HBM, NVLink and the NICs at full
     *    bandwidth on a few SMs; the GPUs draw well above idle (Choukse
     *    et al. 2025, arXiv:2508.14318, figure 1: the communication
     *    troughs of DGX-H100 production jobs sit well above idle; the
     *    50% is our reading, from memory).
     *  - Checkpoints at 10%: the GPUs wait on storage. */
    {.key = "act_compute",
     .type = SCN_QUANTITY,
     .offset = offsetof(train_config, act_compute),
     .dim = UNITS_FRACTION,
     .min = 0,
     .max = 1,
     .help = "activity while a stage computes, 0-100%; absent: from the "
             "MFU through the GPU power model"},
    SHARE("act_idle", act_idle, "25%", 0,
          "activity in pipeline bubbles"),
    SHARE("act_comm", act_comm, "50%", 0,
          "activity in the data-parallel all-reduce and optimizer step"),
    SHARE("act_checkpoint", act_checkpoint, "10%", 0,
          "activity while a checkpoint is written"),
    /* 30 min: Young's interval sqrt(2 x checkpoint_time x job MTBF)
     * (Young 1974) is 19 min for a 1-min checkpoint at Llama 3's job MTBF
     * (54 days / 419 = 3.1 h); 30 min is a common round figure. */
    TIME("checkpoint_every", checkpoint_every_s, "30 min",
         "wall time between checkpoints; 0 s: never"),
    /* 1 min: Llama 3's checkpoints hold 1 MB to 4 GB per GPU, written to
     * storage that sustains 2 TB/s (Dubey et al. 2024, section 3.3.1):
     * 16,384 x 4 GB takes about 33 s. */
    TIME("checkpoint_time", checkpoint_s, "1 min",
         "how long one checkpoint takes (progress paused)"),
    TIME("mtbf", mtbf_s, NULL,
         "mean time between failures of one GPU; absent or 0 s: none. "
         "Llama 3: 419 interruptions in 54 days on 16,384 GPUs, about "
         "50,700 h"),
    /* 10 min: a starting point for detecting the failure, replacing the
     * node, rescheduling and loading the checkpoint. */
    TIME("restart_time", restart_s, "10 min",
         "GPUs held idle after a failure before computing again"),
    /* Off: frameworks run every stage flat out unless told otherwise;
     * Perseus (Chung et al. 2024) is the opt-in. */
    {.key = "deferral",
     .type = SCN_ENUM,
     .offset = offsetof(train_config, deferral),
     .names = deferral_names,
     .dflt = "none",
     .help = "grid-aware timing: none, threshold (pause while the signal "
             "is above deferral_threshold) or window (start in the "
             "cleanest window that meets the deadline)"},
    {.key = "deferral_signal",
     .type = SCN_ENUM,
     .offset = offsetof(train_config, deferral_signal),
     .names = signal_names,
     .dflt = "carbon",
     .help = "what deferral follows: carbon or price"},
    {.key = "flexibility",
     .type = SCN_QUANTITY,
     .offset = offsetof(train_config, flexibility),
     .dim = UNITS_FRACTION,
     .min = 0,
     .max = 10,
     .dflt = "0%",
     .help = "the slowdown the job tolerates (tiers 0/10/25/50%): its "
             "deadline is arrival + run x (1 + flexibility)"},
    TIME("deadline", deadline_s, NULL,
         "when the job must be done, from the start of the run; absent: "
         "from flexibility"),
    {.key = "deferral_threshold",
     .type = SCN_QUANTITY,
     .offset = offsetof(train_config, deferral_threshold),
     .dim = UNITS_NUMBER,
     .min = 0,
     .max = INFINITY,
     .help = "threshold: the signal's level (gCO2/kWh or $/MWh) above "
             "which the job pauses; absent: the signal's mean until the "
             "deadline"},
    {.key = "speed_tuning",
     .type = SCN_BOOL,
     .offset = offsetof(train_config, speed_tuning),
     .dflt = "false",
     .help = "Perseus: run each non-critical stage's steady-state "
             "microbatches at the lowest clock that still fits the critical "
             "stage's time (less energy, same iteration time)"},
    {.key = "jitter",
     .type = SCN_QUANTITY,
     .offset = offsetof(train_config, jitter_s),
     .dim = UNITS_TIME,
     .min = 0,
     .max = 3600,
     .help = "replicas drift: the spread (standard deviation) of their "
             "offsets in an iteration, e.g. 20 ms; absent: lockstep"},
    {.key = "transition",
     .type = SCN_QUANTITY,
     .offset = offsetof(train_config, transition_s),
     .dim = UNITS_TIME,
     .min = 0,
     .max = 3600,
     .help = "how long a phase transition takes, e.g. 10 ms; absent: "
             "instant"},
    TIME("arrival", arrival_s, "0 s", "when the job is submitted"),
    INTEGER("priority", priority, -1e9, 1e9, "0", 0, "higher runs first"),
    INTEGER("count", count, 1, 100000, "1", 0,
            "jobs this entry submits: the first at arrival, the rest after "
            "exponential gaps (Poisson arrivals)"),
    {.key = "interarrival",
     .type = SCN_QUANTITY,
     .offset = offsetof(train_config, interarrival_s),
     .dim = UNITS_TIME,
     .min = 0,
     .max = INFINITY,
     .flags = SCN_POSITIVE,
     .dflt = "1 h",
     .help = "count > 1: the mean gap between the jobs' arrivals"},
    {.key = "dp_choices",
     .type = SCN_STRINGS,
     .offset = offsetof(train_config, dp_choices_text),
     .count_offset = offsetof(train_config, ndp_choices_text),
     .help = "count > 1: data-parallel degrees drawn with equal "
             "probability for each job, e.g. [1, 2, 4, 8]; absent: dp"},
};

const scn_schema train_schema =
    SCN_SCHEMA("training job", train_config, train_fields, .check = check_train,
               .release = release_train);

static void release_train(void *obj) {
  train_config *c = obj;
  sim_free(NULL, c->stage_work);
  c->stage_work = NULL;
  c->nstage_work = 0;
  sim_free(NULL, c->dp_choices);
  c->dp_choices = NULL;
  c->ndp_choices = 0;
}

/* Parses the written dp_choices into whole numbers >= 1. */
static int parse_dp_choices(train_config *c, const scn_loc *loc,
                            sim_error *err) {
  size_t n = c->ndp_choices_text;
  if (c->dp_choices_text == NULL || n == 0)
    return SIM_OK;
  if ((c->dp_choices = sim_alloc(NULL, n * sizeof *c->dp_choices)) == NULL)
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  c->ndp_choices = n;
  for (size_t k = 0; k < n; k++) {
    const char *text = c->dp_choices_text[k];
    char key[64], *end;
    snprintf(key, sizeof key, "dp_choices.%zu", k);
    long long v = strtoll(text, &end, 10);
    if (end == text || *end != '\0' || v < 1 || v > 1000000)
      return scn_fail(loc, key, err, NULL,
                      "'dp_choices' entry %zu must be a whole number from 1 "
                      "to 1000000 (got %s)",
                      k, text);
    c->dp_choices[k] = v;
  }
  return SIM_OK;
}

/* Parses the written stage_work into numbers, one per stage. An empty
 * list is an absent one (all equal): it is how the resolved scenario
 * writes the absent key, and must read back. */
static int parse_stage_work(train_config *c, const scn_loc *loc,
                            sim_error *err) {
  size_t n = c->nstage_work_text;
  if (c->stage_work_text == NULL || n == 0)
    return SIM_OK;
  if (n != (size_t)c->pp)
    return scn_fail(loc, "stage_work", err,
                    "one relative work per pipeline stage, e.g. "
                    "[1.2, 1, 1, 1.3] for pp: 4",
                    "'stage_work' has %zu entries; pp is %lld", n,
                    (long long)c->pp);
  if ((c->stage_work = sim_alloc(NULL, n * sizeof *c->stage_work)) == NULL)
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  c->nstage_work = n;
  for (size_t k = 0; k < n; k++) {
    units_problem prob = {0};
    const char *text = c->stage_work_text[k];
    char key[64];
    snprintf(key, sizeof key, "stage_work.%zu", k);
    if (units_parse(text, UNITS_NUMBER, &c->stage_work[k], &prob) != 0)
      return scn_fail(loc, key, err, NULL, "'stage_work' entry %zu: %s", k,
                      prob.msg);
    if (!(c->stage_work[k] > 0))
      return scn_fail(loc, key, err, NULL,
                      "'stage_work' entry %zu must be greater than zero "
                      "(got %s)",
                      k, text);
  }
  return SIM_OK;
}

static int check_train(void *obj, const scn_loc *loc, void *user,
                       sim_error *err) {
  (void)user;
  train_config *c = obj;
  const char *keys[] = {"dp", "pp", "tp"};
  const int64_t deg[] = {c->dp, c->pp, c->tp};
  for (int k = 0; k < 3; k++)
    if (deg[k] < 1)
      return scn_fail(loc, keys[k], err, "dp x pp x tp is the job's GPUs",
                      "'%s' is %lld: a job needs at least one GPU", keys[k],
                      (long long)deg[k]);
  if ((double)c->dp * (double)c->pp * (double)c->tp > UINT32_MAX)
    return scn_fail(loc, "dp", err, NULL,
                    "dp x pp x tp = %.0f GPUs is more than a run can hold",
                    (double)c->dp * (double)c->pp * (double)c->tp);
  if (!(c->comm_share < 1))
    return scn_fail(loc, "comm_share", err, NULL,
                    "'comm_share' must be below 100%%: the pipeline needs "
                    "some of the iteration");
  if (c->count > 1 && !isnan(c->deadline_s))
    return scn_fail(loc, "deadline", err,
                    "give a stream its slack with flexibility instead",
                    "one deadline for a stream of %lld jobs would make its "
                    "later arrivals late on arrival",
                    (long long)c->count);
  int rc = parse_stage_work(c, loc, err);
  return rc == SIM_OK ? parse_dp_choices(c, loc, err) : rc;
}
