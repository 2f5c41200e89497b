/* cmd_estimate.c - what a run will come to, before it starts: engine
 * events, telemetry samples and the size of the HDF5 file, for `check`
 * and `run` to print, and the limits beyond which `run` refuses without
 * --force.
 *
 * The output's width comes from the factory itself: it is built once on
 * a sink that only counts the columns declared, so a new column is
 * counted without a change here. The rest is a model fitted to the
 * scenarios in scenarios/ (see estimate_bytes and estimate_events); it
 * aims at a factor of 2, which is what a limit of 10 GB needs.
 *
 * The wall-time guess runs that same factory (its own engine, the
 * counting sink: nothing is written) tick by tick for TRIAL_S of wall
 * time, and divides the estimated events by the events per second it
 * saw. It reads the wall clock, so it is printed and never stored:
 * outputs cannot depend on it. The trial's first ticks stand for the
 * whole run, and the machine's load moves it as it moves the run: a
 * guess, within a factor of about 2 on scenarios/. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arrivals.h"
#include "cmd_internal.h"
#include "engine.h"
#include "factory.h"
#include "file.h"
#include "tel.h"

/* Runs refused without --force: a file larger than this many bytes, or
 * more events than this (about a day of work at 1e6 events/s), or more
 * memory than the machine can give (cmd_memory.c). */
#define MAX_OUTPUT_BYTES 10e9
#define MAX_EVENTS 1e11

/* Wall seconds the trial run may take (it stops at the first control
 * tick past this, or at the run's end). A trial of 0.1 s saw only the
 * first minutes of scenarios/mixed.yaml, while its services were still
 * filling their batches, and guessed 25 s for a 10 s run; 0.25 s saw
 * the first hour and guessed 12 s (powercap-policies: 9.8 s for 13 s,
 * grid-dr 9.4 s for 9.5 s). */
#define TRIAL_S 0.25

/* ------------------------------------------------------------------ */
/* A sink that counts                                                  */
/* ------------------------------------------------------------------ */

/* Bytes live on an allocator and their peak. */
typedef struct byte_count {
  double live, peak;
} byte_count;

typedef struct count_sink {
  tel_sink base;
  size_t groups;
  double values;   /* numbers per sample over all groups, times included */
  double datasets; /* series, time and axis datasets */
  double buffers;  /* bytes the HDF5 writer buffers for them */
  byte_count bytes;    /* on alloc, which the estimate's engine uses */
  sim_allocator alloc; /* counting into bytes */
  double built;        /* bytes the factory allocated as built */
} count_sink;

/* The rows the writer buffers per group (record.c: a chunk's rows, chunks
 * of about 1 MiB and at most 4096 rows) times a row's bytes. */
static double writer_buffer(const tel_group *g) {
  size_t per_chunk = ((size_t)1 << 20) / sizeof(double);
  size_t width = g->width < per_chunk ? g->width : per_chunk;
  size_t rows = per_chunk / (width > 0 ? width : 1);
  double block = rows < 4096 ? (double)rows : 4096;
  return block * 8 * (double)(1 + g->ncolumns * g->width);
}

static int count_group(tel_sink *s, const tel_group *g, size_t *id) {
  count_sink *c = (count_sink *)s;
  c->values += (double)(g->ncolumns * g->width + 1);
  c->datasets += (double)g->ncolumns + 1 + (g->axis_name != NULL);
  c->buffers += writer_buffer(g);
  *id = c->groups++;
  return SIM_OK;
}

static int count_append(tel_sink *s, size_t id, double t, const double *v) {
  (void)s, (void)id, (void)t, (void)v;
  return SIM_OK;
}

static int count_summary(tel_sink *s, const char *key, double value) {
  (void)s, (void)key, (void)value;
  return SIM_OK;
}

static int count_str(tel_sink *s, const char *key, const char *value) {
  (void)s, (void)key, (void)value;
  return SIM_OK;
}

static int count_int(tel_sink *s, const char *key, int64_t value) {
  (void)s, (void)key, (void)value;
  return SIM_OK;
}

static int count_attr(tel_sink *s, const char *group, const char *key,
                      double value) {
  (void)s, (void)group, (void)key, (void)value;
  return SIM_OK;
}

static int count_table(tel_sink *s, const tel_table *t) {
  (void)s, (void)t;
  return SIM_OK;
}

static int count_commit(tel_sink *s) {
  (void)s;
  return SIM_OK;
}

static void count_destroy(tel_sink *s) { (void)s; } /* on the stack */

static const tel_sink_ops count_ops = {
    count_group, count_append, count_summary, count_str,
    count_str,   count_int,    count_str,     count_attr,
    count_table, count_commit, count_destroy};

/* An allocator that counts the bytes live and their peak: a 16-byte
 * header before each block keeps its size (and max_align_t's alignment). */
static void *counting_realloc(void *ctx, void *ptr, size_t size) {
  byte_count *b = ctx;
  size_t *head = ptr != NULL ? (size_t *)ptr - 2 : NULL;
  double old = head != NULL ? (double)head[0] : 0;
  if (size == 0) {
    free(head);
    b->live -= old;
    return NULL;
  }
  size_t *grown = size < SIZE_MAX - 16 ? realloc(head, size + 16) : NULL;
  if (grown == NULL)
    return NULL;
  grown[0] = size;
  b->live += (double)size - old;
  b->peak = fmax(b->peak, b->live);
  return grown + 2;
}

/* The trial: runs engine e (its factory built) one control tick at a
 * time until TRIAL_S of wall time or the run's end. A failing tick ends
 * the trial quietly: the run itself will report it. */
static void trial_run(sim_engine *e, const factory_scenario *sc,
                      run_estimate *est) {
  sim_time end = factory_duration(&sc->cfg);
  sim_time tick = (sim_time)llround(sc->cfg.control_period_s * 1e9);
  double t0 = cmd__wall_seconds(), wall = 0;
  for (sim_time t = 0; t < end && wall < TRIAL_S;) {
    t = end - t > tick ? t + tick : end;
    if (sim_engine_run(e, t) != SIM_OK)
      return;
    wall = cmd__wall_seconds() - t0;
  }
  double events = (double)sim_engine_events_run(e);
  if (!(wall > 0) || events < 1)
    return;
  est->trial_wall_s = wall;
  est->trial_rate = events / wall;
  est->wall_s = sim_engine_now(e) >= end ? wall : est->events / est->trial_rate;
}

/* Builds the factory of sc on a counting sink, which learns the output's
 * width as the factory declares its columns, and on a counting allocator,
 * which learns the memory it takes as built (c->built). The caller
 * destroys *f and *e (NULL on failure), then c. */
static int build_counting(const factory_scenario *sc, count_sink *c,
                          sim_engine **e, factory **f, sim_error *err) {
  *c = (count_sink){.base = {.ops = &count_ops}};
  c->alloc = (sim_allocator){counting_realloc, &c->bytes};
  *f = NULL;
  *e = sim_engine_create(&c->alloc);
  if (*e == NULL)
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  *f = factory_create(sc, *e, &c->base, err);
  c->built = c->bytes.peak;
  return *f != NULL ? SIM_OK : err->code;
}

/* ------------------------------------------------------------------ */
/* Requests and events                                                 */
/* ------------------------------------------------------------------ */

/* Requests a trace replays in duration_s: its rows over the run, looped
 * or not. The file is read here once more (a generator of its own). */
static double trace_requests(const arr_config *a, const char *dir,
                             double duration_s, sim_error *err) {
  arr_gen *g = arr_create(a, dir, 0, 0, NULL, err);
  if (g == NULL)
    return NAN;
  arr_trace_stats st = arr_trace_info(g);
  arr_destroy(g);
  double n = (double)st.n, span = st.span_s * a->time_scale;
  if (n < 2 || !(span > 0))
    return n;
  if (a->loop)
    return duration_s / (span * n / (n - 1)) * n;
  return n * fmin(1, duration_s / span);
}

/* The requests of service s over the run. */
static double service_requests(const factory_scenario *sc, size_t s,
                               sim_error *err) {
  const arr_config *a = &sc->cfg.services[s].arrivals;
  if (a->kind != ARR_TRACE)
    return arr_mean_rate(a) * sc->cfg.duration_s;
  char dir[4096];
  sim_path_dir(sc->path, dir, sizeof dir);
  return trace_requests(a, dir, sc->cfg.duration_s, err);
}

/* Engine events: one control tick per control_period, about 3 per
 * request (its arrival, and its replica's scheduling and completion;
 * measured 3.0 on the scenarios with services) at request granularity,
 * none at the fluid one, a few per training job. *key names what drives
 * them, for a refusal's advice. */
static int estimate_events(const factory_scenario *sc, run_estimate *e,
                           sim_error *err) {
  const factory_config *c = &sc->cfg;
  double ticks = c->duration_s / c->control_period_s, most = 0;
  e->events = ticks + 10 * (double)(c->ntraining + c->ngjobs);
  snprintf(e->events_key, sizeof e->events_key, "control_period");
  for (size_t s = 0; c->inference.granularity == INF_REQUEST &&
                     s < c->nservices;
       s++) {
    double requests = service_requests(sc, s, err);
    if (isnan(requests))
      return err->code;
    e->events += 3 * requests;
    if (3 * requests > ticks && requests > most) {
      most = requests;
      snprintf(e->events_key, sizeof e->events_key, "services.%zu.arrivals", s);
    }
  }
  return SIM_OK;
}

/* ------------------------------------------------------------------ */
/* The estimate                                                        */
/* ------------------------------------------------------------------ */

/* The HDF5 file: each dataset costs about 1.1 kB of headers, attributes
 * and chunk index in HDF5 1.10's format (2.5 kB in the older format the
 * files had before their seal: 90 to 110 kB more for the 65 datasets of
 * a quickstart), and the samples compress (shuffle and deflate) to about
 * 0.2 of their 8 bytes each; the resolved scenario is stored as text.
 * Fitted on scenarios/ (quickstart, carbon-aware, speed-tuning,
 * oversubscription, mixed, liquid-vs-air): compression 0.075-0.3
 * (constant columns squeeze most), every one then within 2x. */
#define EST_DATASET_BYTES 1100
#define EST_COMPRESSION 0.2

/* The power-quality window's samples, which the run writes at its end
 * (/power_quality: time and power, 16 bytes a sample before deflate). */
static double pq_bytes(const factory_config *cfg) {
  const pq_config *q = &cfg->power_quality;
  double len = fmin(q->length_s, fmax(0, cfg->duration_s - q->start_s));
  double n = floor(len * q->rate_hz);
  return n > 0 ? 2 * EST_DATASET_BYTES + EST_COMPRESSION * 16 * n : 0;
}

static double estimate_bytes(const factory_scenario *sc, const count_sink *c,
                             double samples) {
  return EST_DATASET_BYTES * c->datasets +
         EST_COMPRESSION * 8 * c->values * samples +
         (double)strlen(sc->resolved) + pq_bytes(&sc->cfg);
}

int cmd__estimate(const factory_scenario *sc, run_estimate *e, bool trial,
                  sim_error *err) {
  count_sink c;
  sim_engine *engine;
  factory *f;
  *e = (run_estimate){.wall_s = NAN, .trial_rate = NAN, .trial_wall_s = NAN};
  int rc = build_counting(sc, &c, &engine, &f, err);
  if (rc == SIM_OK)
    rc = estimate_events(sc, e, err);
  if (rc == SIM_OK && trial)
    trial_run(engine, sc, e);
  factory_destroy(f);
  sim_engine_destroy(engine);
  if (rc != SIM_OK)
    return rc;
  e->samples = floor(sc->cfg.duration_s / sc->cfg.sample_period_s);
  e->bytes = estimate_bytes(sc, &c, e->samples);
  return cmd__estimate_memory(sc, c.built + c.buffers, e, err);
}

/* n bytes as "730 kB", "1.2 GB". */
static const char *size_text(double n, char *buf, size_t size) {
  static const char *const units[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  int u = 0;
  while (n >= 1000 && u < 5) {
    n /= 1000;
    u++;
  }
  snprintf(buf, size, n < 10 && u > 0 ? "%.1f %s" : "%.0f %s", n, units[u]);
  return buf;
}

/* s seconds as "0.4 s", "38 s", "12 min", "3.5 h", "2.1 d". */
static const char *wall_text(double s, char *buf, size_t size) {
  if (s < 10)
    snprintf(buf, size, "%.1f s", s);
  else if (s < 120)
    snprintf(buf, size, "%.0f s", s);
  else if (s < 7200)
    snprintf(buf, size, "%.0f min", s / 60);
  else if (s < 172800)
    snprintf(buf, size, "%.1f h", s / 3600);
  else
    snprintf(buf, size, "%.1f d", s / 86400);
  return buf;
}

void cmd__print_estimate(FILE *out, const run_estimate *e) {
  char size[32], memory[32], wall[32];
  fprintf(out,
          "estimate: %.3g events, %.0f samples, about %s of output, %s of "
          "memory\n",
          e->events, e->samples, size_text(e->bytes, size, sizeof size),
          size_text(e->memory, memory, sizeof memory));
  if (!isnan(e->wall_s))
    fprintf(out, "estimate: about %s of wall time on this machine (%.3g "
            "events/s in a %.2f s trial of this scenario)\n",
            wall_text(e->wall_s, wall, sizeof wall), e->trial_rate,
            e->trial_wall_s);
}

int cmd__refuse_estimate(const run_estimate *e, const factory_config *cfg,
                         bool force) {
  char size[32], limit[32];
  if (force)
    return 0;
  if (e->bytes > MAX_OUTPUT_BYTES) {
    fprintf(stderr,
            "aifsim: %s: the run would write about %s of output (limit "
            "%s): raise sample_period (now %g s) or shorten duration (now "
            "%g s), or give --force\n",
            cfg->name, size_text(e->bytes, size, sizeof size),
            size_text(MAX_OUTPUT_BYTES, limit, sizeof limit),
            cfg->sample_period_s, cfg->duration_s);
    return EXIT_BAD_INPUT;
  }
  if (e->events > MAX_EVENTS) {
    fprintf(stderr,
            "aifsim: %s: the run would take about %.3g events (limit "
            "%.0e): change %s or shorten duration (now %g s), or give "
            "--force\n",
            cfg->name, e->events, MAX_EVENTS, e->events_key, cfg->duration_s);
    return EXIT_BAD_INPUT;
  }
  return cmd__refuse_memory(e, cfg);
}
