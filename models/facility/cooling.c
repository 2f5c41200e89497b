/* cooling.c - cooling loops: the plant (free cooling, chillers, pumps and
 * fans), the loop's ODE under gsl_odeiv2, and the GPU-side helpers
 * (junction, throttling, PUE). The schema and its defaults are in
 * cooling_schema.c. */
#include "cooling.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_odeiv2.h>

#include "cooling_internal.h"
#include "cooling_rk8pd.h"
#include "pow.h"
#include "water.h"

#define KELVIN 273.15

/* ------------------------------------------------------------------ */
/* The plant                                                           */
/* ------------------------------------------------------------------ */

static double clamp(double x, double lo, double hi) {
  return x < lo ? lo : x > hi ? hi : x;
}

double cool_ua(const cool_loop_config *c) {
  return c->capacity_w / c->delta_t_k;
}

double cool_heat_capacity(const cool_loop_config *c) {
  return c->tau_s * cool_ua(c);
}

double cool_cop(const cool_loop_config *c, double outdoor_c) {
  double cold_k = c->supply_c - c->hx_approach_k + KELVIN;
  double lift = outdoor_c + c->chiller_approach_k + KELVIN - cold_k;
  if (!(lift > 0))
    return c->cop_max;
  return clamp(c->eta * cold_k / lift, c->cop_min, c->cop_max);
}

double cool_free_share(const cool_loop_config *c, double temp_c,
                       double outdoor_c) {
  double water_supply = c->supply_c - c->hx_approach_k;
  double water_return = temp_c - c->hx_approach_k;
  double reach = outdoor_c + c->econ_approach_k; /* the dry cooler's best */
  if (reach <= water_supply)
    return 1;
  if (reach >= water_return)
    return 0;
  return (water_return - reach) / (water_return - water_supply);
}

double cool_eir_plr(const cool_loop_config *c, double plr) {
  const double *k = c->eir_plr;
  double full = k[0] + k[1] + k[2];
  return (k[0] + k[1] * plr + k[2] * plr * plr) / full;
}

/* cool_chiller_w with its capacity over COP given (cap_per_cop): the
 * loop's ODE divides once a step, where its COP is fixed. */
static double chiller_at(const cool_loop_config *c, double load_w,
                         double cap_per_cop) {
  if (!(load_w > 0))
    return 0;
  double plr = load_w / c->capacity_w;
  /* Below the least load it unloads to, hot gas is bypassed to hold that
   * load: the power stays at the unloading limit's. */
  double run = plr > c->unload_min ? plr : c->unload_min;
  double cycling = plr < c->plr_min ? plr / c->plr_min : 1;
  /* EIRfPLR is the share of the full-load power drawn at that part load
   * (at the same temperatures); cycling is the share of time it runs.
   * Both factors are continuous in the load, so the plant's power is
   * continuous in the loop's temperature, as its ODE needs. */
  return cap_per_cop * cool_eir_plr(c, run) * cycling;
}

double cool_chiller_w(const cool_loop_config *c, double load_w, double cop) {
  return chiller_at(c, load_w, c->capacity_w / cop);
}

/* pow(x, 3) with pow's bits, for code built for fma on a CPU that has
 * it: x^3 as a double-double h + t (x^2 exact through fma, its product
 * by x exact through fma, what is left within 2^-104 of x^3), rounded
 * once where pow would return it (sim_pow_rounded, pow.h); elsewhere
 * (about one in ten), and outside [2^-200, 2^200] (every term normal and
 * finite), pow itself. */
#if defined(__GNUC__) && defined(__x86_64__)
#define COOL_CUBE_FMA 1
__attribute__((target("fma"))) static double cube_fma(double x) {
  if (!(x >= 0x1p-200 && x <= 0x1p200))
    return pow(x, 3);
  double p = x * x, p_err = __builtin_fma(x, x, -p);
  double h = p * x, h_err = __builtin_fma(p, x, -h);
  double t = h_err + p_err * x, r;
  return sim_pow_rounded(h, t, &r) ? r : pow(x, 3);
}
#endif

/* pow(flow, affinity), the same bits: the affinity law's cube (the
 * schema's default) at about a third of pow's 125 instructions; the loop's
 * ODE asks for it at every evaluation of its right-hand side. */
static double affinity_pow(double flow, double affinity) {
#ifdef COOL_CUBE_FMA
  if (affinity == 3 && __builtin_cpu_supports("fma"))
    return cube_fma(flow);
#endif
  return pow(flow, affinity);
}

/* Why the flow follows the removal: variable-speed drives hold the design
 * temperature rise, so flow goes with heat. A fixed-speed plant would be
 * flow_min = 1. */
static double aux_power(const cool_loop_config *c, double removed_w,
                        double free_share) {
  /* All k units run, sharing the flow (N+1 fans or pumps on N turn
   * slower than N would: the cube law makes that the cheaper way to run
   * them), each no slower than its minimum speed. */
  double k = 1 + c->redundancy;
  double flow = removed_w / (k * c->capacity_w);
  if (flow < c->flow_min)
    flow = c->flow_min;
  /* The dry cooler's fans are staged with the share of the heat it takes,
   * so they stop with it (the schema says why) without a step: the plant's
   * power stays continuous in the loop's temperature, which the ODE
   * integrates, and a step there stalls its solver (demand-charge.yaml's
   * Dallas summer did). */
  double share = c->aux_share;
  if (c->rejection == COOL_DRY)
    share -= c->econ_fan_share * (1 - (free_share > 0 ? free_share : 0));
  return share * k * c->capacity_w * affinity_pow(flow, c->affinity);
}

/* A derated loop keeps its heat exchangers and pipes (UA and C) and its
 * pumps' and fans' design flow; what it loses is how much heat its plant
 * can take out: the removal is capped at share x capacity. */
static double removal_ua(const cool_loop_config *c, double ua, double share,
                         double temp_c) {
  double r = ua * (temp_c - c->supply_c);
  return clamp(r, 0, share * c->capacity_w);
}

static double removal(const cool_loop_config *c, double share, double temp_c) {
  return removal_ua(c, cool_ua(c), share, temp_c);
}

/* Make-up water per joule of heat rejected: 0 for a dry plant. */
static double water_per_j(const cool_loop_config *c) {
  if (c->rejection != COOL_EVAPORATIVE)
    return 0;
  return water_tower_rates(c->cycles, c->drift_share, c->range_k).total;
}

/* The plant's powers at the loop's temperature: what cool_power_wet
 * reports and cool_steady_total_w adds, the same operations for both. */
typedef struct plant_draw {
  double removed, free_share, cop, aux, load, chiller;
} plant_draw;

static inline plant_draw draw_at(const cool_loop_config *c, double share,
                                 double temp_c, double sink_c) {
  plant_draw d;
  d.removed = removal(c, share, temp_c);
  d.free_share = cool_free_share(c, temp_c, sink_c);
  d.cop = cool_cop(c, sink_c);
  d.aux = aux_power(c, d.removed, d.free_share);
  /* The pumps' and fans' work is heat in the coolant too. */
  d.load = (1 - d.free_share) * (d.removed + d.aux);
  d.chiller = cool_chiller_w(c, d.load, d.cop);
  return d;
}

/* What the plant rejects to: the wet bulb for a tower. */
static double sink_of(const cool_loop_config *c, double outdoor_c,
                      double wet_c) {
  return c->rejection == COOL_EVAPORATIVE ? wet_c : outdoor_c;
}

cool_power cool_power_wet(const cool_loop_config *c, double share,
                          double temp_c, double outdoor_c, double wet_c) {
  plant_draw d = draw_at(c, share, temp_c, sink_of(c, outdoor_c, wet_c));
  cool_power p = {.temp_c = temp_c};
  p.removed_w = d.removed;
  p.at_capacity = p.removed_w >= share * c->capacity_w;
  p.free_share = d.free_share;
  p.cop = d.cop;
  p.aux_w = d.aux;
  p.free_w = p.free_share * p.removed_w;
  p.plr = d.load / c->capacity_w;
  p.chiller_w = d.chiller;
  p.total_w = p.chiller_w + p.aux_w;
  p.water_kg_s = water_per_j(c) * (p.removed_w + p.total_w);
  return p;
}

cool_power cool_power_derated(const cool_loop_config *c, double share,
                              double temp_c, double outdoor_c) {
  return cool_power_wet(c, share, temp_c, outdoor_c, outdoor_c);
}

cool_power cool_power_at(const cool_loop_config *c, double temp_c,
                         double outdoor_c) {
  return cool_power_derated(c, 1, temp_c, outdoor_c);
}

/* The loop's steady temperature for heat q_w, with the plant's top. */
static double steady_temp_c(const cool_loop_config *c, double share,
                            double q_w) {
  double top = share * c->capacity_w;
  double q = clamp(q_w, 0, top);
  return c->supply_c + q / cool_ua(c);
}

cool_power cool_steady_wet(const cool_loop_config *c, double share, double q_w,
                           double outdoor_c, double wet_c) {
  cool_power p =
      cool_power_wet(c, share, steady_temp_c(c, share, q_w), outdoor_c, wet_c);
  if (q_w > share * c->capacity_w)
    p.at_capacity = true;
  return p;
}

double cool_steady_total_w(const cool_loop_config *c, double share, double q_w,
                           double outdoor_c, double wet_c) {
  plant_draw d = draw_at(c, share, steady_temp_c(c, share, q_w),
                         sink_of(c, outdoor_c, wet_c));
  return d.chiller + d.aux;
}

cool_power cool_steady_derated(const cool_loop_config *c, double share,
                               double q_w, double outdoor_c) {
  return cool_steady_wet(c, share, q_w, outdoor_c, outdoor_c);
}

cool_power cool_steady(const cool_loop_config *c, double q_w,
                       double outdoor_c) {
  return cool_steady_derated(c, 1, q_w, outdoor_c);
}

/* ------------------------------------------------------------------ */
/* The loop in time                                                    */
/* ------------------------------------------------------------------ */

/* The ODE's state: the temperature and the energies of the step, so one
 * integration gives both and the energies are the integrals of the powers
 * along the same trajectory (not a rectangle rule over the step). */
enum { Y_TEMP, Y_REMOVED, Y_FREE, Y_CHILLER, Y_AUX, NSTATE };

/* The driver's step limit per cool_loop_step: far above what a step
 * needs (tens), so hitting it means the tolerance cannot be met. */
#define ODE_NMAX 1000000

struct cool_loop {
  const cool_loop_config *c; /* &own: a copy, so its setpoint can move */
  cool_loop_config own;
  const sim_allocator *a;
  double temp_c;
  double heat_capacity; /* C, J/K */
  double q_in_w;        /* inputs of the step under way */
  double outdoor_c;
  double wet_c;
  double sink_c; /* the step's: wet_c for a tower, else outdoor_c */
  double cop;    /* cool_cop at sink_c, for the step */
  double cap_per_cop; /* the capacity over it (cool_chiller_w's) */
  double ua;          /* cool_ua, fixed with the capacity and the rise */
  double share;  /* of the capacity the plant has now (1: all) */
  bool plain;    /* GSL's driver every step (cool__loop_set_plain) */
  gsl_odeiv2_system sys; /* the driver keeps a pointer to it */
  gsl_odeiv2_driver *driver;
};

/* The ODE's right-hand side: cool_power_wet's removal, free cooling,
 * aux and chiller powers at y's temperature, its expressions in its
 * order, with the step's COP (l->cop: cool_cop at the step's sink, which
 * does not move within it) and without what the ODE does not take (the
 * totals, the water). The solver asks for it about 20 times a step, so
 * the quotients that do not move within a step are the loop's: UA
 * (l->ua) and the capacity over the COP (l->cap_per_cop), the same
 * divisions of the same operands, two of its seven a call. */
static int loop_rhs(double t, const double y[], double dydt[], void *params) {
  (void)t;
  const cool_loop *l = params;
  const cool_loop_config *c = l->c;
  double removed = removal_ua(c, l->ua, l->share, y[Y_TEMP]);
  double free_share = cool_free_share(c, y[Y_TEMP], l->sink_c);
  double aux = aux_power(c, removed, free_share);
  double load = (1 - free_share) * (removed + aux);
  dydt[Y_TEMP] = (l->q_in_w - removed) / l->heat_capacity;
  dydt[Y_REMOVED] = removed;
  dydt[Y_FREE] = free_share * removed;
  dydt[Y_CHILLER] = chiller_at(c, load, l->cap_per_cop);
  dydt[Y_AUX] = aux;
  return GSL_SUCCESS;
}

/* A config that did not come through the checks could divide by zero or
 * run the ODE backwards; refuse it. */
static bool config_usable(const cool_loop_config *c) {
  return c->capacity_w > 0 && c->delta_t_k > 0 && c->tau_s > 0 &&
         isfinite(c->supply_c) && c->cop_min > 0 && c->cop_min <= c->cop_max &&
         c->eta > 0 && c->aux_share >= 0 &&
         c->econ_fan_share >= 0 && c->econ_fan_share <= c->aux_share &&
         c->flow_min >= 0 &&
         isfinite(c->affinity) && c->plr_min > 0 &&
         c->unload_min >= c->plr_min && c->redundancy >= 0 &&
         c->eir_plr[0] + c->eir_plr[1] + c->eir_plr[2] > 0 &&
         (c->rejection != COOL_EVAPORATIVE ||
          (c->cycles > 1 && c->range_k > 0 && c->drift_share >= 0)) &&
         isfinite(c->hx_approach_k + c->econ_approach_k +
                  c->chiller_approach_k);
}

cool_loop *cool_loop_create(const cool_loop_config *c, const sim_allocator *a,
                            sim_error *err) {
  if (!config_usable(c)) {
    sim_error_set(err, SIM_EINVAL, "cooling loop '%s': unusable config",
                  c->name != NULL ? c->name : "?");
    return NULL;
  }
  cool_loop *l = sim_calloc(a, 1, sizeof *l);
  if (l == NULL)
    goto fail;
  *l = (cool_loop){.own = *c, .a = a, .temp_c = c->supply_c, .share = 1};
  l->c = &l->own;
  l->heat_capacity = cool_heat_capacity(c);
  l->ua = cool_ua(c);
  l->sys = (gsl_odeiv2_system){loop_rhs, NULL, NSTATE, l};
  /* Prince-Dormand 8(9): explicit (no Jacobian), and high order, so the
   * smooth stretches between the plant's kinks take few steps. */
  l->driver = gsl_odeiv2_driver_alloc_y_new(&l->sys, gsl_odeiv2_step_rk8pd,
                                            c->tau_s / 8, COOL_ODE_EPS_ABS,
                                            COOL_ODE_EPS_REL);
  if (l->driver == NULL ||
      gsl_odeiv2_driver_set_nmax(l->driver, ODE_NMAX) != GSL_SUCCESS)
    goto fail;
  return l;
fail:
  cool_loop_destroy(l);
  sim_error_set(err, SIM_ENOMEM, "out of memory");
  return NULL;
}

void cool_loop_destroy(cool_loop *l) {
  if (l == NULL)
    return;
  if (l->driver != NULL)
    gsl_odeiv2_driver_free(l->driver);
  sim_free(l->a, l);
}

/* The facility water must stay above 0 degC (as the scenario check
 * says), so a supply at the approach itself is out: the range's low end
 * is then the next double above it, and both ends can be set. */
void cool_loop_supply_range(const cool_loop *l, double *lo, double *hi) {
  *lo = fmax(SUPPLY_MIN_C, nextafter(l->own.hx_approach_k, INFINITY));
  *hi = l->own.kind == COOL_AIR ? AIR_SUPPLY_MAX_C : SUPPLY_MAX_C;
}

int cool_loop_set_supply(cool_loop *l, double supply_c) {
  double lo, hi;
  cool_loop_supply_range(l, &lo, &hi);
  if (!(supply_c >= lo && supply_c <= hi))
    return SIM_ERANGE;
  l->own.supply_c = supply_c;
  return SIM_OK;
}

const cool_loop_config *cool_loop_config_of(const cool_loop *l) { return l->c; }

double cool_loop_temp_c(const cool_loop *l) { return l->temp_c; }

void cool_loop_set_temp(cool_loop *l, double temp_c) { l->temp_c = temp_c; }

int cool_loop_set_derate(cool_loop *l, double share) {
  if (!(share >= 0 && share <= 1))
    return SIM_EINVAL;
  l->share = share;
  return SIM_OK;
}

double cool_loop_derate(const cool_loop *l) { return l->share; }

void cool__loop_set_plain(cool_loop *l, bool plain) { l->plain = plain; }

static void fill_step(const cool_loop *l, const double y[], cool_step *out) {
  *out = (cool_step){
      .temp_c = y[Y_TEMP],
      .removed_j = y[Y_REMOVED],
      .free_j = y[Y_FREE],
      .chiller_j = y[Y_CHILLER],
      .aux_j = y[Y_AUX],
      .energy_j = y[Y_CHILLER] + y[Y_AUX],
      .water_kg = water_per_j(l->c) * (y[Y_REMOVED] + y[Y_CHILLER] + y[Y_AUX]),
      .at_capacity =
          removal(l->c, l->share, y[Y_TEMP]) >= l->share * l->c->capacity_w,
  };
}

/* Whether GSL's y-only standard control keeps a step whose solution is
 * y and error yerr: it shrinks the step where some |yerr| / D > 1.1,
 * D = eps_rel (1 |y| + 0 |h y'|) + eps_abs (its a_y 1, a_dydt 0; the y'
 * term +0 for a finite y'). Here each ratio must be at most 1, below
 * GSL's 1.1, and a NaN fails: kept only where GSL surely keeps it. */
static bool step_kept(const double y[], const double yerr[]) {
  for (size_t i = 0; i < NSTATE; i++) {
    double d = COOL_ODE_EPS_REL * fabs(y[i]) + COOL_ODE_EPS_ABS;
    if (!(fabs(yerr[i]) / d <= 1.0))
      return false;
  }
  return true;
}

/* The tick as one step of the loop's own RK8PD (cooling_rk8pd.h), where
 * GSL's driver would take the same one: its first step is the whole
 * interval (dt_s <= tau / 8) and its control keeps it (step_kept). Then
 * the driver's y is this step's, the same bits; else y is untouched and
 * false (the driver runs). */
static bool one_step(cool_loop *l, double dt_s, double y[]) {
  if (!(dt_s <= l->c->tau_s / 8))
    return false;
  double y1[NSTATE], yerr[NSTATE];
  memcpy(y1, y, sizeof y1);
  if (rk8pd_step(loop_rhs, l, 0, dt_s, y1, yerr) != GSL_SUCCESS ||
      !step_kept(y1, yerr))
    return false;
  memcpy(y, y1, sizeof y1);
  return true;
}

/* Integrates y over [0, dt_s]. Why reset each step: the inputs jump
 * between steps, so the last step size says nothing about the next. */
static int integrate(cool_loop *l, double dt_s, double y[], sim_error *err) {
  if (!l->plain && one_step(l, dt_s, y))
    return SIM_OK;
  double t = 0;
  double h = fmin(dt_s, l->c->tau_s / 8);
  int rc = gsl_odeiv2_driver_reset_hstart(l->driver, h);
  if (rc == GSL_SUCCESS)
    rc = gsl_odeiv2_driver_apply(l->driver, &t, dt_s, y);
  if (rc != GSL_SUCCESS)
    return sim_error_set(err, SIM_ERANGE,
                         "cooling loop '%s': the ODE solver stopped at "
                         "%.6g of %.6g s: %s",
                         l->c->name, t, dt_s, gsl_strerror(rc));
  return SIM_OK;
}

int cool_loop_step(cool_loop *l, double q_in_w, double outdoor_c, double dt_s,
                   cool_step *out, sim_error *err) {
  return cool_loop_step_wet(l, q_in_w, outdoor_c, outdoor_c, dt_s, out, err);
}

int cool_loop_step_wet(cool_loop *l, double q_in_w, double outdoor_c,
                       double wet_c, double dt_s, cool_step *out,
                       sim_error *err) {
  if (!(q_in_w >= 0 && isfinite(q_in_w) && isfinite(outdoor_c) &&
        isfinite(wet_c) && dt_s >= 0 && isfinite(dt_s)))
    return sim_error_set(err, SIM_EINVAL,
                         "cooling loop '%s': bad step (heat %g W, outdoor "
                         "%g degC, dt %g s)",
                         l->c->name, q_in_w, outdoor_c, dt_s);
  double y[NSTATE] = {[Y_TEMP] = l->temp_c};
  l->q_in_w = q_in_w;
  l->outdoor_c = outdoor_c;
  l->wet_c = wet_c;
  l->sink_c = l->c->rejection == COOL_EVAPORATIVE ? wet_c : outdoor_c;
  l->cop = cool_cop(l->c, l->sink_c);
  l->cap_per_cop = l->c->capacity_w / l->cop;
  if (dt_s > 0) {
    int rc = integrate(l, dt_s, y, err);
    if (rc != SIM_OK)
      return rc;
  }
  l->temp_c = y[Y_TEMP];
  fill_step(l, y, out);
  return SIM_OK;
}

/* ------------------------------------------------------------------ */
/* GPUs and the facility                                               */
/* ------------------------------------------------------------------ */

double cool_junction_c(double loop_temp_c, double gpu_power_w,
                       double r_th_k_per_w) {
  return loop_temp_c + r_th_k_per_w * gpu_power_w;
}

double cool_throttle_share(double junction_c, double slowdown_c,
                           double shutdown_c) {
  if (junction_c <= slowdown_c)
    return 1;
  if (junction_c >= shutdown_c)
    return 0;
  return (shutdown_c - junction_c) / (shutdown_c - slowdown_c);
}

double cool_thermal_power_w(double loop_temp_c, double limit_c,
                            double r_th_k_per_w) {
  double p = (limit_c - loop_temp_c) / r_th_k_per_w;
  return p > 0 ? p : 0;
}

double cool_pue(double facility_w, double it_w) {
  return it_w > 0 ? facility_w / it_w : NAN;
}
