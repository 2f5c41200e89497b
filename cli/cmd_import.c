/* cmd_import.c - `aifsim import FORMAT LOG [--map MAP.yaml] [--mode M]
 * [-o OUT.yaml]` (docs/IMPORT.md): a job log as a scenario of generic GPU
 * jobs (gpujob.h). import_logs.c reads the log; this file reads the
 * mapping file, maps each job by the first rule that matches it, sizes
 * the fleet for the log's peak and writes the scenario. As logged, each
 * job starts when the log started it and runs its logged time (`start`
 * and `duration`); re-scheduled, only its submission is kept and aifsim's
 * scheduler places it (`work`, which a cap stretches, unless a rule says
 * duration). The scenario's clock starts at the log's first submission. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_internal.h"
#include "gpujob.h"
#include "import.h"
#include "scenario.h"

/* One mapping rule: which jobs (partition, GPU count) and what they run. */
typedef struct imp_rule {
  char *partition; /* NULL: any */
  int64_t min_gpus, max_gpus; /* max 0: any */
  char *gpu;                  /* GPU type; NULL: the racks' */
  double activity;            /* NaN: gpujob.h's default */
  gjob_phases phases;
  double act_comm, act_io;
  int length; /* IMP_LEN_*, re-scheduled only */
  int64_t priority;
} imp_rule;

enum { IMP_LEN_WORK, IMP_LEN_DURATION };

/* The mapping file. */
typedef struct imp_map {
  char *name, *system;
  int64_t gpus_per_rack, racks; /* racks 0: the log's peak */
  double control_period_s, sample_period_s, extend_s, cap_w;
  char *policy;
  double procs_per_gpu; /* SWF */
  int64_t seed;
  char **states; /* kept; none: all that ran */
  size_t nstates;
  imp_rule *rules;
  size_t nrules;
} imp_map;

static const char *const length_names[] = {"work", "duration", NULL};

#define FRACTION(k, field, def, h)                                             \
  {                                                                            \
    .key = k, .type = SCN_QUANTITY, .offset = offsetof(imp_rule, field),       \
    .dim = UNITS_FRACTION, .min = 0, .max = 1, .dflt = def, .help = h          \
  }

static const scn_field rule_fields[] = {
    {.key = "partition", .type = SCN_STRING,
     .offset = offsetof(imp_rule, partition),
     .help = "match: the job's partition (sacct), queue number (SWF) or "
             "virtual cluster (Helios); absent: any"},
    {.key = "min_gpus", .type = SCN_INT, .offset = offsetof(imp_rule, min_gpus),
     .min = 0, .max = 1e6, .dflt = "0", .help = "match: at least this many GPUs"},
    {.key = "max_gpus", .type = SCN_INT, .offset = offsetof(imp_rule, max_gpus),
     .min = 0, .max = 1e6, .dflt = "0",
     .help = "match: at most this many GPUs; 0: any"},
    {.key = "gpu", .type = SCN_STRING, .offset = offsetof(imp_rule, gpu),
     .help = "the GPU type the jobs run on; absent: the racks'"},
    {.key = "activity", .type = SCN_QUANTITY,
     .offset = offsetof(imp_rule, activity), .dim = UNITS_FRACTION, .min = 0,
     .max = 1, .help = "activity while computing; absent: as a training "
                       "job's at 40% MFU"},
    {.key = "phases", .type = SCN_MAP, .offset = offsetof(imp_rule, phases),
     .sub = &gjob_phase_schema,
     .help = "shares of a cycle: {compute, comm, io}"},
    FRACTION("act_comm", act_comm, "50%", "activity while communicating"),
    FRACTION("act_io", act_io, "10%", "activity in I/O"),
    {.key = "length", .type = SCN_ENUM, .offset = offsetof(imp_rule, length),
     .names = length_names, .dflt = "work",
     .help = "re-scheduled: work (a cap stretches it) or duration (the "
             "logged run time, whatever the clocks)"},
    {.key = "priority", .type = SCN_INT, .offset = offsetof(imp_rule, priority),
     .min = -1e9, .max = 1e9, .dflt = "0", .help = "higher runs first"},
};

/* The phases add to one cycle, as a job's must (gpujob.c). */
static int check_rule(void *obj, const scn_loc *loc, void *user,
                      sim_error *err) {
  (void)user;
  const imp_rule *r = obj;
  double sum = r->phases.compute + r->phases.comm + r->phases.io;
  if (fabs(sum - 1) > 1e-9 || !(r->phases.compute > 0))
    return scn_fail(loc, "phases", err, "the shares of one cycle add to 100%",
                    "the phases add to %g%% with %g%% compute", 100 * sum,
                    100 * r->phases.compute);
  return SIM_OK;
}

static const scn_schema rule_schema =
    SCN_SCHEMA("mapping rule", imp_rule, rule_fields, .check = check_rule);

#define MAP_TIME(k, field, def, h)                                             \
  {                                                                            \
    .key = k, .type = SCN_QUANTITY, .offset = offsetof(imp_map, field),        \
    .dim = UNITS_TIME, .min = 0, .max = INFINITY, .dflt = def, .help = h       \
  }

static const scn_field map_fields[] = {
    {.key = "name", .type = SCN_STRING, .offset = offsetof(imp_map, name),
     .dflt = "replay", .flags = SCN_NONEMPTY, .help = "the scenario's name"},
    {.key = "system", .type = SCN_STRING, .offset = offsetof(imp_map, system),
     .dflt = "DGX-H100", .flags = SCN_NONEMPTY,
     .help = "the racks' server, a system of the catalog"},
    {.key = "gpus_per_rack", .type = SCN_INT,
     .offset = offsetof(imp_map, gpus_per_rack), .min = 1, .max = 1e6,
     .dflt = "8", .help = "GPUs per rack"},
    {.key = "racks", .type = SCN_INT, .offset = offsetof(imp_map, racks),
     .min = 0, .max = 1e6, .dflt = "0",
     .help = "racks; 0: enough for the log's peak"},
    MAP_TIME("control_period", control_period_s, "10 s", "the run's control period"),
    MAP_TIME("sample_period", sample_period_s, "1 min", "the run's sample period"),
    MAP_TIME("extend", extend_s, "0 s",
             "added to the run beyond the log's last end"),
    {.key = "cap", .type = SCN_QUANTITY, .offset = offsetof(imp_map, cap_w),
     .dim = UNITS_POWER, .min = 0, .max = HUGE_VAL, .flags = SCN_POSITIVE,
     .dflt = "1 GW", .help = "the facility cap; 1 GW never binds"},
    {.key = "policy", .type = SCN_STRING, .offset = offsetof(imp_map, policy),
     .dflt = "static", .flags = SCN_NONEMPTY, .help = "the power policy"},
    {.key = "procs_per_gpu", .type = SCN_QUANTITY,
     .offset = offsetof(imp_map, procs_per_gpu), .dim = UNITS_NUMBER,
     .min = 0, .max = 1e6, .flags = SCN_POSITIVE, .dflt = "1",
     .help = "SWF: processors per GPU (a job holds ceil(procs / this))"},
    {.key = "seed", .type = SCN_INT, .offset = offsetof(imp_map, seed),
     .min = 0, .max = 9e15, .dflt = "1", .help = "the run's seed"},
    {.key = "states", .type = SCN_STRINGS, .offset = offsetof(imp_map, states),
     .count_offset = offsetof(imp_map, nstates),
     .help = "the end states kept, e.g. [COMPLETED, FAILED]; absent: all"},
    {.key = "rules", .type = SCN_LIST, .offset = offsetof(imp_map, rules),
     .sub = &rule_schema, .count_offset = offsetof(imp_map, nrules),
     .help = "the first rule a job matches maps it; none: the defaults"},
};

static const scn_schema map_schema =
    SCN_SCHEMA("mapping file", imp_map, map_fields, .check = NULL);

/* ---- The command line ---------------------------------------------------- */

typedef struct imp_args {
  imp_format format;
  const char *log, *map, *out;
  bool as_logged;
} imp_args;

static int parse_format(const char *s, imp_format *f) {
  static const char *const names[] = {"sacct", "swf", "helios"};
  for (int k = 0; k < 3; k++)
    if (strcmp(s, names[k]) == 0) {
      *f = (imp_format)k;
      return 0;
    }
  return cmd__usage_error("import reads sacct, swf or helios, not '%s'", s);
}

static int parse_import(int argc, char **argv, imp_args *a) {
  *a = (imp_args){.as_logged = true};
  if (argc < 4)
    return cmd__usage_error("%s", "import needs a FORMAT and a LOG");
  int rc = parse_format(argv[2], &a->format);
  a->log = argv[3];
  for (int i = 4; i < argc && rc == 0; i++) {
    const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (v == NULL)
      return cmd__usage_error("import: %s needs a value", o);
    i++;
    if (strcmp(o, "--map") == 0)
      a->map = v;
    else if (strcmp(o, "-o") == 0 || strcmp(o, "--output") == 0)
      a->out = v;
    else if (strcmp(o, "--mode") == 0 && (strcmp(v, "as-logged") == 0 ||
                                          strcmp(v, "rescheduled") == 0))
      a->as_logged = v[0] == 'a';
    else if (strcmp(o, "--mode") == 0)
      return cmd__usage_error("--mode is as-logged or rescheduled, not '%s'", v);
    else
      return cmd__usage_error("import: unknown option '%s'", o);
  }
  return rc;
}

static int read_map(const char *path, imp_map *m, sim_error *err) {
  memset(m, 0, sizeof *m);
  if (path == NULL)
    return scn_bind_string("(default mapping)", "{}", &map_schema, m, NULL, err);
  scn_doc *doc = scn_doc_read_file(path, err);
  if (doc == NULL)
    return err->code;
  int rc = scn_bind(doc, &map_schema, m, NULL, err);
  scn_doc_destroy(doc);
  return rc;
}

/* ---- The jobs ------------------------------------------------------------ */

static bool state_kept(const imp_map *m, const char *state) {
  for (size_t k = 0; k < m->nstates; k++)
    if (strcmp(m->states[k], state) == 0)
      return true;
  return m->nstates == 0;
}

/* The first rule job j matches, or NULL: the defaults. */
static const imp_rule *rule_of(const imp_map *m, const imp_job *j) {
  for (size_t k = 0; k < m->nrules; k++) {
    const imp_rule *r = &m->rules[k];
    if ((r->partition == NULL || strcmp(r->partition, j->partition) == 0) &&
        j->gpus >= r->min_gpus && (r->max_gpus == 0 || j->gpus <= r->max_gpus))
      return r;
  }
  return NULL;
}

/* The log's figures over the jobs kept: the first submission, GPU-hours,
 * the last end, and the peak of GPUs held at once, a job that ends as
 * another starts counted as overlapping (the run may see the start
 * first). */
typedef struct imp_stats {
  size_t jobs;
  double t0, gpu_hours, last_end, peak;
} imp_stats;

typedef struct edge {
  double t, d;
} edge;

static int edge_cmp(const void *a, const void *b) {
  const edge *x = a, *y = b;
  if (x->t != y->t)
    return x->t < y->t ? -1 : 1;
  return (x->d < y->d) - (x->d > y->d); /* starts first */
}

static int log_stats(const imp_log *log, imp_stats *s) {
  *s = (imp_stats){.jobs = log->n, .t0 = INFINITY, .last_end = -INFINITY};
  edge *e = malloc((2 * log->n + 1) * sizeof *e);
  if (e == NULL)
    return SIM_ENOMEM;
  for (size_t i = 0; i < log->n; i++) {
    const imp_job *j = &log->jobs[i];
    s->t0 = fmin(s->t0, j->submit_s);
    s->last_end = fmax(s->last_end, j->end_s);
    s->gpu_hours += (double)j->gpus * (j->end_s - j->start_s) / 3600;
    e[2 * i] = (edge){j->start_s, (double)j->gpus};
    e[2 * i + 1] = (edge){j->end_s, -(double)j->gpus};
  }
  qsort(e, 2 * log->n, sizeof *e, edge_cmp);
  double held = 0;
  for (size_t k = 0; k < 2 * log->n; k++)
    s->peak = fmax(s->peak, held += e[k].d);
  free(e);
  return SIM_OK;
}

/* Keeps the jobs whose end state the map keeps; returns how many left. */
static size_t filter_states(imp_log *log, const imp_map *m) {
  size_t kept = 0, n = log->n;
  for (size_t i = 0; i < n; i++)
    if (state_kept(m, log->jobs[i].state))
      log->jobs[kept++] = log->jobs[i];
  log->n = kept;
  return n - kept;
}

/* ---- The scenario -------------------------------------------------------- */

static void put_quoted(FILE *f, const char *text) {
  char buf[512];
  scn_yaml_quote(text, buf, sizeof buf);
  fputs(buf, f);
}

/* The run: the log's span, a control period for the last end to be
 * seen, the map's extension, in whole sample periods (the scenario's
 * rule), which must be whole control periods. */
static double run_length(const imp_map *m, const imp_stats *s) {
  double want = s->last_end - s->t0 + m->control_period_s + m->extend_s;
  return ceil(want / m->sample_period_s) * m->sample_period_s;
}

static void put_header(FILE *f, const imp_args *a, const imp_map *m,
                       const imp_stats *s, int64_t racks) {
  fprintf(f, "# Made by aifsim import %s %s (%s): the log's %zu jobs, "
             "%.17g GPU-h, makespan %.17g s\n# from the first submission, "
             "peak %.0f GPUs held at once. docs/IMPORT.md.\nname: ",
          a->format == IMP_SACCT ? "sacct" : a->format == IMP_SWF ? "swf"
                                                                  : "helios",
          a->log, a->as_logged ? "as logged" : "re-scheduled", s->jobs,
          s->gpu_hours, s->last_end - s->t0, s->peak);
  put_quoted(f, m->name);
  fprintf(f, "\nseed: %lld\nduration: %.17g s\ncontrol_period: %.17g s\n"
             "sample_period: %.17g s\npower: {cap: %.17g W, policy: ",
          (long long)m->seed, run_length(m, s),
          m->control_period_s, m->sample_period_s, m->cap_w);
  put_quoted(f, m->policy);
  fprintf(f, "}\nracks:\n  - name: gpus\n    count: %lld\n    system: ",
          (long long)racks);
  put_quoted(f, m->system);
  fprintf(f, "\n    gpus_per_rack: %lld\n    load: {pattern: constant, "
             "level: 0%%, noise: 0%%}\njobs:\n",
          (long long)m->gpus_per_rack);
}

/* Job j's entry: its name, size, times and what its rule maps. */
static void put_job(FILE *f, const imp_args *a, const imp_job *j,
                    const imp_rule *r, double t0) {
  char name[64];
  snprintf(name, sizeof name, "%s", j->id);
  for (char *p = name; *p != '\0'; p++)
    if (*p == '/')
      *p = '_';
  fputs("  - {name: ", f);
  put_quoted(f, name);
  fprintf(f, ", gpus: %lld, arrival: %.17g s", (long long)j->gpus,
          j->submit_s - t0);
  bool fixed = a->as_logged || (r != NULL && r->length == IMP_LEN_DURATION);
  if (a->as_logged)
    fprintf(f, ", start: %.17g s", j->start_s - t0);
  fprintf(f, ", %s: %.17g s", fixed ? "duration" : "work", j->end_s - j->start_s);
  if (r != NULL) {
    if (r->gpu != NULL) {
      fputs(", gpu: ", f);
      put_quoted(f, r->gpu);
    }
    if (!isnan(r->activity))
      fprintf(f, ", activity: %.17g", r->activity);
    fprintf(f, ", phases: {compute: %.17g, comm: %.17g, io: %.17g}, "
               "act_comm: %.17g, act_io: %.17g, priority: %lld",
            r->phases.compute, r->phases.comm, r->phases.io, r->act_comm,
            r->act_io, (long long)r->priority);
  }
  fputs("}\n", f);
}

/* Writes the scenario to path (stdout when NULL) through a temporary file
 * renamed at the end, so a failure leaves nothing that looks complete. */
static int write_scenario(const imp_args *a, const imp_map *m,
                          const imp_log *log, const imp_stats *s,
                          int64_t racks, sim_error *err) {
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.partial", a->out != NULL ? a->out : "");
  FILE *f = a->out != NULL ? fopen(tmp, "w") : stdout;
  if (f == NULL)
    return sim_error_set(err, SIM_EIO, "%s: %s", tmp, strerror(errno));
  put_header(f, a, m, s, racks);
  for (size_t i = 0; i < log->n; i++)
    put_job(f, a, &log->jobs[i], rule_of(m, &log->jobs[i]), s->t0);
  bool bad = ferror(f) != 0 || fflush(f) != 0;
  if (a->out != NULL) {
    bad = fclose(f) != 0 || bad;
    if (!bad && rename(tmp, a->out) != 0)
      bad = true;
    if (bad)
      remove(tmp);
  }
  return bad ? sim_error_set(err, SIM_EIO, "%s: cannot write the scenario",
                             a->out != NULL ? a->out : "stdout")
             : SIM_OK;
}

static void print_report(const imp_log *log, size_t dropped,
                         const imp_stats *s, int64_t racks, const imp_map *m) {
  fprintf(stderr,
          "import: %zu jobs, %.6g GPU-h, makespan %.17g s, peak %.0f GPUs "
          "(%lld racks of %lld); left out: %zu job steps, %zu that never "
          "ran, %zu without GPUs, %zu by state\n",
          s->jobs, s->gpu_hours, s->last_end - s->t0, s->peak, (long long)racks,
          (long long)m->gpus_per_rack, log->steps, log->unstarted,
          log->no_gpus, dropped);
}

static int import_log(const imp_args *a, const imp_map *m, sim_error *err) {
  imp_log log = {0};
  int rc = imp_log_read(&log, a->format, a->log, m->procs_per_gpu, err);
  size_t dropped = rc == SIM_OK ? filter_states(&log, m) : 0;
  imp_stats s;
  if (rc == SIM_OK && log.n == 0)
    rc = sim_error_set(err, SIM_EINPUT,
                       "%s: no job of the log held a GPU, ran and ended in a "
                       "state the mapping keeps",
                       a->log);
  if (rc == SIM_OK && log_stats(&log, &s) != SIM_OK)
    rc = sim_error_set(err, SIM_ENOMEM, "out of memory");
  if (rc == SIM_OK) {
    int64_t racks = m->racks > 0 ? m->racks
                                 : (int64_t)ceil(s.peak / (double)m->gpus_per_rack);
    rc = write_scenario(a, m, &log, &s, racks, err);
    if (rc == SIM_OK)
      print_report(&log, dropped, &s, racks, m);
  }
  imp_log_fini(&log);
  return rc;
}

int cmd__import(int argc, char **argv) {
  imp_args a;
  int rc = parse_import(argc, argv, &a);
  if (rc != 0)
    return rc;
  imp_map m;
  sim_error err = {0};
  if (read_map(a.map, &m, &err) != SIM_OK)
    return cmd__report(&err);
  if (import_log(&a, &m, &err) != SIM_OK)
    rc = cmd__report(&err);
  scn_release(&map_schema, &m);
  return rc;
}
