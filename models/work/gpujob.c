/* gpujob.c - generic GPU jobs (gpujob.h): the `jobs` entries of a
 * scenario, their check, and the training job each one runs as. */
#include "gpujob.h"

#include <math.h>
#include <stddef.h>

static int check_gjob(void *obj, const scn_loc *loc, void *user,
                      sim_error *err);

#define SHARE(k, st, field, def, h)                                            \
  {                                                                            \
    .key = k, .type = SCN_QUANTITY, .offset = offsetof(st, field),             \
    .dim = UNITS_FRACTION, .min = 0, .max = 1, .dflt = def, .help = h          \
  }

#define TIME(k, field, def, fl, h)                                             \
  {                                                                            \
    .key = k, .type = SCN_QUANTITY, .offset = offsetof(gjob_config, field),    \
    .dim = UNITS_TIME, .min = 0, .max = INFINITY, .flags = fl, .dflt = def,    \
    .help = h                                                                  \
  }

static const scn_field phase_fields[] = {
    SHARE("compute", gjob_phases, compute, "100%",
          "share of a cycle computing (stretches under a cap)"),
    SHARE("comm", gjob_phases, comm, "0%",
          "share of a cycle communicating (clocks do not change it)"),
    SHARE("io", gjob_phases, io, "0%",
          "share of a cycle in I/O (clocks do not change it)"),
};

const scn_schema gjob_phase_schema =
    SCN_SCHEMA("job phases", gjob_phases, phase_fields, .check = NULL);

static const scn_field gjob_fields[] = {
    {.key = "name",
     .type = SCN_STRING,
     .offset = offsetof(gjob_config, name),
     .flags = SCN_REQUIRED | SCN_NONEMPTY,
     .help = "a name for the job"},
    {.key = "gpu",
     .type = SCN_STRING,
     .offset = offsetof(gjob_config, gpu),
     .help = "the GPU type to run on; absent: any"},
    {.key = "gpus",
     .type = SCN_INT,
     .offset = offsetof(gjob_config, gpus),
     .min = 1,
     .max = 1e6,
     .flags = SCN_REQUIRED,
     .help = "GPUs the job holds, one gang"},
    TIME("duration", duration_s, NULL, SCN_POSITIVE,
         "wall time, whatever the clocks (a log's run time); or work"),
    TIME("work", work_s, NULL, SCN_POSITIVE,
         "run time at full clock; a cap stretches its compute phase"),
    /* Absent: the compute activity of a training stage at 40% MFU (the
     * training model's default, training_scn.c, held to published node
     * power by tests/validate/test_training_power.c) with the job's
     * communication and I/O share as its exposed share. */
    {.key = "activity",
     .type = SCN_QUANTITY,
     .offset = offsetof(gjob_config, activity),
     .dim = UNITS_FRACTION,
     .min = 0,
     .max = 1,
     .help = "activity while computing, 0-100%; absent: as a training "
             "job's at 40% MFU"},
    {.key = "phases",
     .type = SCN_MAP,
     .offset = offsetof(gjob_config, phases),
     .sub = &gjob_phase_schema,
     .help = "shares of a cycle: {compute: 80%, comm: 15%, io: 5%}; "
             "absent: all compute (a constant activity)"},
    /* The training model's all-reduce and checkpoint activities
     * (training_scn.c gives their sources). */
    SHARE("act_comm", gjob_config, act_comm, "50%",
          "activity while communicating"),
    SHARE("act_io", gjob_config, act_io, "10%", "activity in I/O"),
    TIME("cycle", cycle_s, "1 min", SCN_POSITIVE,
         "one cycle of the phases at full clock"),
    TIME("arrival", arrival_s, "0 s", 0, "when the job is submitted"),
    TIME("start", start_s, NULL, 0,
         "as logged: it starts then on free GPUs, past the queue; absent: "
         "the scheduler places it"),
    {.key = "priority",
     .type = SCN_INT,
     .offset = offsetof(gjob_config, priority),
     .min = -1e9,
     .max = 1e9,
     .dflt = "0",
     .help = "higher runs first"},
};

const scn_schema gjob_schema =
    SCN_SCHEMA("GPU job", gjob_config, gjob_fields, .check = check_gjob);

static int check_gjob(void *obj, const scn_loc *loc, void *user,
                      sim_error *err) {
  (void)user;
  gjob_config *c = obj;
  if (isnan(c->duration_s) == isnan(c->work_s))
    return scn_fail(loc, isnan(c->work_s) ? "name" : "work", err,
                    "duration: the wall time, whatever the clocks; work: "
                    "the run time at full clock",
                    "a GPU job needs one of 'duration' and 'work'");
  double sum = c->phases.compute + c->phases.comm + c->phases.io;
  if (fabs(sum - 1) > 1e-9)
    return scn_fail(loc, "phases", err, "the shares of one cycle add to 100%",
                    "the phases add to %g%%", 100 * sum);
  if (!(c->phases.comm + c->phases.io < 1))
    return scn_fail(loc, "phases.compute", err, NULL,
                    "a job needs some compute in its cycle");
  if (!isnan(c->start_s) && c->start_s < c->arrival_s)
    return scn_fail(loc, "start", err, NULL,
                    "the job starts at %g s, before its arrival at %g s",
                    c->start_s, c->arrival_s);
  return SIM_OK;
}

/* The training model's MFU default (training_scn.c), for the compute
 * activity when none is given. */
#define GJOB_MFU 0.4

void gjob_to_train(const gjob_config *c, train_config *out) {
  double len = isnan(c->work_s) ? c->duration_s : c->work_s;
  double n = fmax(1, nearbyint(len / c->cycle_s));
  double tail = c->phases.comm + c->phases.io;
  double act_tail =
      tail > 0 ? (c->phases.comm * c->act_comm + c->phases.io * c->act_io) /
                     tail
               : c->act_comm;
  *out = (train_config){
      .name = c->name,
      .gpu = c->gpu,
      .dp = c->gpus,
      .pp = 1,
      .tp = 1,
      .iterations = (int64_t)n,
      .mfu = GJOB_MFU,
      .microbatches = 1,
      .comm_share = tail,
      .act_compute = c->activity,
      .act_idle = act_tail, /* one stage, one microbatch: no bubbles */
      .act_comm = act_tail,
      .act_checkpoint = c->act_io,
      .mtbf_s = NAN,
      .deadline_s = NAN,
      .deferral_threshold = NAN,
      .arrival_s = c->arrival_s,
      .priority = c->priority,
      .count = 1,
      .interarrival_s = 3600,
      .iteration_s = len / n,
      .fixed_time = isnan(c->work_s),
      .fixed_start = !isnan(c->start_s),
      .start_s = c->start_s,
  };
}

double gjob_run_s(const gjob_config *c, double speed) {
  if (isnan(c->work_s))
    return c->duration_s;
  double tail = c->phases.comm + c->phases.io;
  return c->work_s * ((1 - tail) / speed + tail);
}
