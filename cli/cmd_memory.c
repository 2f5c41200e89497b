/* cmd_memory.c - the estimate's peak memory (cmd_internal.h), and the
 * limit beyond which `run` refuses without --force.
 *
 * Most runs hold what they build (the fleet's arrays, the writer's
 * buffers) and no more. The exception is a service whose requests wait
 * without a timeout or a queue limit: every request its replicas cannot
 * keep up with stays, and a day of 1e4 requests a second against a
 * service that completes 1.2e3 grew by 370 MB/s until the kernel killed
 * it (issue 28). So the estimate adds, per service at request
 * granularity, the requests it holds at its peak: its full batches, and
 * the backlog (arrival rate - what it serves flat out, factory_capacity.c)
 * x duration, capped by what a timeout or max_queue lets wait. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arrivals.h"
#include "cmd_internal.h"
#include "factory.h"
#include "file.h"

/* The memory a run may take: this share of the machine's (its RAM, or
 * its cgroup's limit when lower). A run that swaps, or is killed by the
 * kernel after hours, is worse than one refused at once. */
#define MAX_MEMORY_SHARE 0.75

/* Memory of a run beyond what the factory allocates: the program, its
 * libraries and HDF5 (a quickstart day peaks at 24 MB resident, 5 MB of
 * it the factory), and per held request the request pool's 56-byte slots,
 * doubled as the pool grows (113 B a waiting request, measured on
 * oversubscription.yaml with 1e4 req/s and no timeout: 57 MB more over
 * 518,000 more requests). */
#define BASE_RSS_BYTES 18e6
#define BYTES_PER_REQUEST 112

/* The mean prompt and output tokens of service k's requests: its
 * lengths, or a trace's means (the file read once more). */
static int service_lengths(const factory_scenario *sc, size_t k, double *prompt,
                           double *output, double *requests, sim_error *err) {
  const arr_config *a = &sc->cfg.services[k].arrivals;
  *prompt = a->prompt.mean;
  *output = a->output.mean;
  *requests = arr_mean_rate(a) * sc->cfg.duration_s;
  if (a->kind != ARR_TRACE)
    return SIM_OK;
  char dir[4096];
  sim_path_dir(sc->path, dir, sizeof dir);
  arr_gen *g = arr_create(a, dir, 0, k, NULL, err);
  if (g == NULL)
    return err->code;
  arr_trace_stats st = arr_trace_info(g);
  arr_destroy(g);
  double n = (double)st.n, span = st.span_s * a->time_scale;
  *prompt = st.prompt_mean;
  *output = st.output_mean;
  *requests = n < 2 || !(span > 0) ? n
              : a->loop            ? sc->cfg.duration_s / span * (n - 1)
                                   : n * fmin(1, sc->cfg.duration_s / span);
  return SIM_OK;
}

/* The requests service k holds at its peak: full batches, and the backlog
 * a timeout or max_queue bounds. */
static int service_held(const factory_scenario *sc, size_t k, double *held,
                        sim_error *err) {
  const inf_config *c = &sc->cfg.services[k];
  double prompt, output, requests, t = sc->cfg.duration_s;
  factory_service_capacity cap;
  int rc = service_lengths(sc, k, &prompt, &output, &requests, err);
  if (rc == SIM_OK)
    rc = factory_service_capacity_of(sc, k, prompt, output, &cap, err);
  if (rc != SIM_OK)
    return rc;
  double rate = requests / t, waiting = fmax(0, rate - cap.rps) * t;
  if (c->timeout_s > 0) /* timed-out requests leave at the next sample */
    waiting = fmin(waiting, rate * (c->timeout_s + sc->cfg.sample_period_s));
  if (c->max_queue > 0)
    waiting = fmin(waiting, (double)c->replicas * (double)c->max_queue);
  *held = waiting + cap.in_flight;
  return SIM_OK;
}

int cmd__estimate_memory(const factory_scenario *sc, double built,
                         run_estimate *e, sim_error *err) {
  const factory_config *c = &sc->cfg;
  e->memory = BASE_RSS_BYTES + built;
  e->held = 0;
  e->memory_key[0] = '\0';
  for (size_t k = 0;
       c->inference.granularity == INF_REQUEST && k < c->nservices; k++) {
    double held;
    int rc = service_held(sc, k, &held, err);
    if (rc != SIM_OK)
      return rc;
    e->memory += held * BYTES_PER_REQUEST;
    if (held > e->held) {
      e->held = held;
      snprintf(e->memory_key, sizeof e->memory_key, "services.%zu", k);
    }
  }
  return SIM_OK;
}

/* The machine's memory: its RAM, or its cgroup's limit (v2) when lower.
 * A process limit (ulimit -v) counts address space, not memory, and is
 * left to fail the run as out of memory. */
static double machine_memory(void) {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  double m = pages > 0 && page > 0 ? (double)pages * (double)page : INFINITY;
  char text[64] = "";
  FILE *f = fopen("/sys/fs/cgroup/memory.max", "r");
  if (f != NULL && fgets(text, sizeof text, f) != NULL &&
      strncmp(text, "max", 3) != 0 && atof(text) > 0)
    m = fmin(m, atof(text));
  if (f != NULL)
    fclose(f);
  return m;
}

int cmd__refuse_memory(const run_estimate *e, const factory_config *cfg) {
  double limit = MAX_MEMORY_SHARE * machine_memory();
  if (!(e->memory > limit))
    return 0;
  fprintf(stderr,
          "aifsim: %s: the run would need about %.3g GB of memory at its "
          "peak (limit %.3g GB, %.0f%% of this machine's): ",
          cfg->name, e->memory / 1e9, limit / 1e9, 100 * MAX_MEMORY_SHARE);
  if (e->memory_key[0] != '\0' && e->held * BYTES_PER_REQUEST > e->memory / 2)
    fprintf(stderr,
            "%s holds about %.3g requests, arriving faster than its "
            "replicas serve them; set %s.timeout or %s.max_queue, add "
            "replicas or shorten duration (now %g s), or give --force\n",
            e->memory_key, e->held, e->memory_key, e->memory_key,
            cfg->duration_s);
  else
    fprintf(stderr, "a smaller fleet needs less, or give --force\n");
  return EXIT_BAD_INPUT;
}
