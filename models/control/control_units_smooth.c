/* control_units_smooth.c - the policy's loads smoothed over control
 * periods (power.activity_smoothing; control_units.h's control_smooth).
 *
 * The efficiency policy prices a unit by the load it had in the last
 * period. At bench-10k's request-level peak a replica serves about 0.7
 * requests a second, so one period's load is mostly Poisson noise, and
 * the water-filling follows it: a replica idle for a period gets its
 * floor, one that served a burst more than its mean. (It does not hold
 * the replicas' clocks: those follow each period's own load under the
 * cap; docs/performance-log.md, the twenty-fourth session.) An exponential mean
 * of the period means, with weight 1 - exp(-dt / tau) for a period of
 * dt, is a time mean like theirs (gpu.h: loads add as time means do)
 * over the last tau or so: the load a unit is priced and capped by.
 * Nothing else takes it: the GPUs draw, and are solved for their clocks,
 * at the period's own load. */
#include "control_units.h"

#include <math.h>

#include "alloc.h"
#include "bits.h"
#include "gpu.h"

void control__units_smooth_free(control_units *cu) {
  control_smooth *s = &cu->smooth;
  sim_free(cu->alloc, s->sm);
  sim_free(cu->alloc, s->mem);
  sim_free(cu->alloc, s->busy);
  sim_free(cu->alloc, s->at);
  *s = (control_smooth){0};
}

/* The per-GPU arrays, made once (for as many GPUs as the fleet has);
 * none kept where one could not be made. */
static int smooth_alloc(control_units *cu, const rack_fleet *fl) {
  control_smooth *s = &cu->smooth;
  if (s->at != NULL)
    return SIM_OK;
  size_t n = fl->n + 1;
  s->sm = sim_calloc(cu->alloc, n, sizeof *s->sm);
  s->mem = sim_calloc(cu->alloc, n, sizeof *s->mem);
  s->busy = sim_calloc(cu->alloc, n, sizeof *s->busy);
  double *at = sim_calloc(cu->alloc, n, sizeof *at);
  if (s->sm == NULL || s->mem == NULL || s->busy == NULL || at == NULL) {
    sim_free(cu->alloc, at);
    control__units_smooth_free(cu);
    return SIM_ENOMEM;
  }
  for (size_t i = 0; i < n; i++)
    at[i] = NAN; /* never folded in */
  s->at = at; /* the arrays made: at is set last */
  s->n = fl->n;
  return SIM_OK;
}

int control__units_smooth_begin(control_units *cu, const rack_fleet *fl,
                                double tau_s, double now_s) {
  control_smooth *s = &cu->smooth;
  if (!(tau_s > 0)) {
    s->tau_s = 0; /* off: the units read the period's loads */
    return SIM_OK;
  }
  if (smooth_alloc(cu, fl) != SIM_OK)
    return SIM_ENOMEM; /* tau_s 0 (freed): off */
  /* The first allocation on has no last: every GPU starts afresh. */
  s->last = s->tau_s > 0 ? s->now : NAN;
  s->now = now_s;
  s->tau_s = tau_s;
  /* a period's weight, 1 - exp(-dt / tau), for any period length: the
   * same for every GPU folded in at this allocation */
  s->k = -expm1(-(s->now - s->last) / s->tau_s);
  return SIM_OK;
}

/* GPU i's load x folded in (control__units_smoothed). */
static inline gpu_load fold(control_smooth *s, uint32_t i, gpu_load x) {
  if (s->at[i] == s->now) /* folded in already at this allocation */
    return (gpu_load){s->sm[i], s->mem[i], s->busy[i]};
  if (s->at[i] == s->last) { /* NaN (none) equals nothing */
    s->sm[i] += s->k * (x.sm - s->sm[i]);
    s->mem[i] += s->k * (x.mem - s->mem[i]);
    s->busy[i] += s->k * (x.busy - s->busy[i]);
  } else { /* new to the units, or left out a while: its load now */
    s->sm[i] = x.sm;
    s->mem[i] = x.mem;
    s->busy[i] = x.busy;
  }
  s->at[i] = s->now;
  return (gpu_load){s->sm[i], s->mem[i], s->busy[i]};
}

gpu_load control__units_smoothed(control_units *cu, uint32_t i, gpu_load x) {
  return fold(&cu->smooth, i, x);
}

void control__units_smooth_all(control_units *cu, const rack_fleet *fl) {
  for (size_t u = 0; u < cu->n; u++) {
    uint32_t i = cu->gpu[u];
    fold(&cu->smooth, i, rack_gpu_load_now(fl, i));
  }
}

void control__units_true_shares(control_units *cu, const rack_fleet *fl) {
  gpu_load last = {NAN, NAN, NAN};
  const gpu_spec *last_g = NULL;
  double share = NAN;
  for (size_t u = 0; u < cu->n; u++) {
    uint32_t i = cu->gpu[u];
    const gpu_spec *g = fl->types[fl->type[i]];
    gpu_load l = rack_gpu_load_now(fl, i);
    /* units one after another mostly share their load at the fluid
     * level (a service's replicas): its share once */
    if (g != last_g || !sim_same_bits(l.sm, last.sm) ||
        !sim_same_bits(l.mem, last.mem) || !sim_same_bits(l.busy, last.busy))
      share = gpu_load_share(g, l);
    last = l;
    last_g = g;
    cu->share[u] = share;
  }
}
