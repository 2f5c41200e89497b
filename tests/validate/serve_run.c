/* serve_run.c - a service run to its steady state; see serve_run.h. */
#include "serve_run.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "arrivals.h"
#include "engine.h"
#include "inference.h"

#define PERIOD_S 0.1

/* The replicas' decode rate at a full batch, requests per second: what
 * twice of keeps them saturated. */
static double capacity(const serve_spec *s) {
  const rl_replica *r = s->replica;
  double ctx = s->prompt + s->output / 2;
  double step = rl_decode_step_s(r, s->max_batch, ctx, 1);
  double pre = rl_prefill_s(r, s->prompt, 1);
  return s->replicas * s->max_batch / (s->output * step + s->max_batch * pre);
}

static int bind_service(const serve_spec *s, double rate, inf_config *c,
                        sim_error *err) {
  const rl_replica *r = s->replica;
  char yaml[1024];
  snprintf(yaml, sizeof yaml,
           "name: run\nmodel: %s\nprecision: %s\ntp: %d\nep: %d\n"
           "replicas: %d\nmax_batch: %d\nbeams: %.0f\ntimeout: 0 s\n"
           "prompt_pool: %d\n"
           "arrivals: {rate: %.17g, prompt: {dist: fixed, mean: %.17g}, "
           "output: {mean: %.17g, sigma: %.17g}}\n",
           r->model->name, r->weights->name, r->tp, r->ep > 1 ? r->ep : 1,
           s->replicas, s->max_batch, r->cfg.beams, s->prompt_pool, rate,
           s->prompt, s->output, s->output_sigma);
  memset(c, 0, sizeof *c);
  return scn_bind_string("serve_run", yaml, &inf_schema, c, NULL, err);
}

/* One period: the load of the period just run at the clock in force
 * gives its power; the clock for the next follows from that load. */
static double step_power(inf_service *svc, const serve_spec *s, double *phi) {
  const gpu_spec *g = s->replica->gpu;
  double cap = s->limit_w > 0 ? s->limit_w : g->tdp_w, p = 0;
  for (int k = 0; k < s->replicas; k++) {
    gpu_load l = inf_take_load(svc, (uint32_t)k);
    p += gpu_load_power(g, phi[k], l);
    phi[k] = gpu_load_clock_under_cap(g, cap, l);
    inf_set_clock(svc, (uint32_t)k, phi[k]);
  }
  return p / s->replicas;
}

typedef struct span {
  double t0, t1; /* the window */
  double energy_j, phi_s, tokens0;
} span;

static int run_periods(sim_engine *e, inf_service *svc, const serve_spec *s,
                       span *w, sim_error *err) {
  double phi[64];
  for (int k = 0; k < s->replicas; k++)
    phi[k] = 1;
  int steps = (int)ceil(w->t1 / PERIOD_S);
  double row[INF_NCOLS];
  for (int i = 1; i <= steps; i++) {
    double t = i * PERIOD_S;
    if (sim_engine_run(e, (sim_time)llround(t * 1e9)) != SIM_OK)
      return sim_error_set(err, SIM_EINPUT, "%s", sim_engine_errmsg(e));
    double p = step_power(svc, s, phi);
    if (fabs(t - w->t0) < PERIOD_S / 2) { /* the window opens */
      inf_sample(svc, w->t0, row);
      w->tokens0 = inf_totals_of(svc).tokens_generated;
    } else if (t > w->t0) {
      w->energy_j += p * PERIOD_S * s->replica->tp * s->replicas;
      w->phi_s += phi[0] * PERIOD_S;
    }
  }
  return SIM_OK;
}

/* The warm-up and the measured window: the batch fills at rate / 2 net
 * of departures, then one request's life more; the window is two lives,
 * at least 60 s. */
static span window_of(const serve_spec *s, double rate) {
  double life = s->output * rl_decode_step_s(s->replica, s->max_batch,
                                             s->prompt + s->output / 2, 1);
  double fill = s->replicas * s->max_batch / (rate / 2);
  span w = {.t0 = PERIOD_S * ceil((fill + 1.5 * life) / PERIOD_S)};
  w.t1 = w.t0 + PERIOD_S * ceil(fmax(60, 2 * life) / PERIOD_S);
  return w;
}

/* What the window measured. */
static serve_result result_of(inf_service *svc, const serve_spec *s,
                              const span *w) {
  double row[INF_NCOLS], span_s = w->t1 - w->t0;
  inf_sample(svc, span_s, row);
  double tokens = inf_totals_of(svc).tokens_generated - w->tokens0;
  return (serve_result){.tokens_per_s = tokens / span_s,
                        .batch = row[INF_BATCH],
                        .power_w = w->energy_j /
                                   (span_s * s->replica->tp * s->replicas),
                        .tokens_per_j = tokens / w->energy_j,
                        .phi = w->phi_s / span_s,
                        .window_s = span_s};
}

int serve_run(const serve_spec *s, serve_result *out, sim_error *err) {
  memset(out, 0, sizeof *out);
  if (s->replicas < 1 || s->replicas > 64)
    return sim_error_set(err, SIM_EINVAL, "1 to 64 replicas");
  double rate = 2 * capacity(s);
  span w = window_of(s, rate);
  inf_config c;
  int rc = bind_service(s, rate, &c, err);
  if (rc != SIM_OK)
    return rc;
  sim_engine *e = sim_engine_create(NULL);
  arr_gen *gen =
      e != NULL ? arr_create(&c.arrivals, NULL, s->seed, 0, NULL, err) : NULL;
  /* The service owns gen from here, also when it fails. */
  inf_service *svc =
      gen != NULL ? inf_create(e, &c, s->replica, gen, w.t1 + 1, err) : NULL;
  if (e == NULL)
    rc = sim_error_set(err, SIM_ENOMEM, "out of memory");
  else if (svc == NULL)
    rc = err->code != SIM_OK ? err->code : SIM_ENOMEM;
  else
    rc = run_periods(e, svc, s, &w, err);
  if (rc == SIM_OK)
    *out = result_of(svc, s, &w);
  inf_destroy(svc);
  sim_engine_destroy(e);
  scn_release(&inf_schema, &c);
  return rc;
}
