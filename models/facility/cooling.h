/* cooling.h - cooling loops (docs/MODELS.md, Cooling): liquid direct-to-chip and air
 * (CRAH) loops, each a lumped thermal mass integrated with GSL odeiv2,
 * with chillers, free cooling and pumps/fans; GPU junction temperature
 * and thermal throttling; PUE. Config structs load through
 * cool_loop_schema, so a scenario can hold a `loops:` list.
 *
 * The loop. Its state is one temperature T (degC): the coolant (liquid)
 * or air leaving the racks, a well-mixed volume of heat capacity C fed
 * at the supply setpoint T_s. The plant removes heat in proportion to how
 * far T is above the setpoint, up to the loop's capacity:
 *
 *   C dT/dt = Q_in - R(T),   R(T) = min(UA max(T - T_s, 0), capacity)
 *
 * with UA = capacity / dT_design (the loop runs dT_design above its
 * supply at full capacity) and C = tau UA from the time constant tau.
 * Below capacity the response to a constant Q_in is first order:
 * T(t) = T_s + Q_in/UA + (T(0) - T_s - Q_in/UA) exp(-t/tau). Above it,
 * T rises without bound at (Q_in - capacity)/C, and the step says so.
 *
 * The plant. A heat exchanger (CDU for liquid, CRAH coil for air) with
 * approach a_hx separates the loop from the plant water, which leaves the
 * plant at T_ws = T_s - a_hx and comes back at T_wr = T - a_hx. A dry
 * cooler (economizer) in series on the return can bring the water down
 * to T_out + a_econ; a chiller takes the rest down to T_ws. So the share
 * of heat removed free is
 *
 *   f = clamp((T_wr - (T_out + a_econ)) / (T_wr - T_ws), 0, 1)
 *
 * (full free cooling when T_out + a_econ <= T_ws, none when it is at or
 * above T_wr, linear in between). The chiller's COP is a bounded Carnot
 * fraction, in kelvin, between the water it makes and the condenser:
 *
 *   COP = clamp(eta T_ws / (T_out + a_chiller - T_ws), cop_min, cop_max)
 *
 * Pumps and fans follow the affinity law in the flow the removal needs at
 * the design temperature rise (variable-speed drives hold dT_design):
 *
 *   P_aux = s_aux capacity k max(R / (k capacity), flow_min)^n,   n = 3
 *
 * where k = 1 + redundancy is the pumps and fans installed over those the
 * design flow needs (N+1 units on N), all running and sharing the flow,
 * so each turns slower but none below its minimum speed flow_min;
 * less the dry economizer's own fans (s_econ of s_aux) while it takes no
 * heat (f = 0: the dry cooler is valved off and its fans stop),
 * and their work ends up as heat the plant rejects too, so the chiller
 * carries L = (1 - f) (R + P_aux). COP above is its full-load COP; at
 * part-load ratio PLR = L / capacity the chiller draws, in DOE-2's form
 * (EnergyPlus Chiller:Electric:EIR; ASHRAE 90.1 Appendix G),
 *
 *   P_chiller = capacity / COP x EIRfPLR(max(PLR, PLR_unl)) / EIRfPLR(1)
 *               x min(PLR / PLR_min, 1),
 *
 *   EIRfPLR(x) = c0 + c1 x + c2 x^2:
 *
 * it unloads down to PLR_unl, is false-loaded (hot-gas bypass) at PLR_unl's
 * power from there down to PLR_min, and cycles on and off below that
 * (EnergyPlus Engineering Reference, Chiller:Electric:EIR).
 * Cooling power is P_aux + P_chiller. PUE is an output: facility power /
 * IT power.
 *
 * An evaporative plant (cool_rejection) puts the outdoor wet bulb T_wb
 * where a dry one has the dry bulb, in the economizer's reach (T_wb +
 * a_econ) and the condenser's (T_wb + a_chiller), and its tower makes up
 * the water it evaporates, blows down and loses as drift for all the heat
 * it rejects, R + P_aux + P_chiller (water.h). */
#ifndef MODELS_COOLING_H
#define MODELS_COOLING_H

#include <stdbool.h>
#include <stddef.h>

#include "alloc.h"
#include "err.h"
#include "scenario.h"

typedef enum cool_kind { COOL_LIQUID, COOL_AIR } cool_kind;

/* How the plant rejects its heat outdoors: dry (dry coolers and
 * air-cooled chillers, following the dry bulb, no water) or evaporative
 * (an open cooling tower serving the water-side economizer and the
 * water-cooled chiller's condenser, following the wet bulb; water by
 * water.h). */
typedef enum cool_rejection { COOL_DRY, COOL_EVAPORATIVE } cool_rejection;

/* One loop, as a scenario gives it. Plain data. Temperature differences
 * (the *_k fields) are in kelvin; a scenario writes them in degC ("10
 * degC"), since "10 K" reads as an absolute temperature. */
typedef struct cool_loop_config {
  char *name;
  int kind;                  /* cool_kind */
  char **racks;              /* rack groups served; the factory resolves them */
  size_t nracks;             /* 0: the factory decides */
  double heat_share;         /* share of those racks' heat this loop takes */
  double capacity_w;         /* the most heat the plant can remove */
  double supply_c;           /* coolant or air supply setpoint to the IT */
  double delta_t_k;          /* T - T_s at full capacity (UA = capacity / it) */
  double tau_s;              /* the loop's time constant C / UA */
  double hx_approach_k;      /* loop supply minus plant water supply */
  double econ_approach_k;    /* dry cooler outlet minus outdoor air */
  double chiller_approach_k; /* condensing minus outdoor temperature */
  double eta;                /* chiller's fraction of Carnot COP */
  double cop_min, cop_max;
  double aux_share; /* pumps and fans at design flow, per W of capacity */
  double econ_fan_share; /* ... of which the dry economizer's fans */
  double flow_min;  /* the lowest flow share pumps and fans turn down to */
  double affinity;  /* exponent of flow in pump/fan power (3) */
  int rejection;    /* cool_rejection */
  double eir_plr[3];  /* chiller EIR-fPLR: c0 + c1 PLR + c2 PLR^2 */
  double plr_min;     /* below this part-load ratio the chiller cycles */
  double unload_min;  /* below this it can unload no further: false load */
  double redundancy;  /* installed pumps and fans beyond the design flow's,
                         a share of it (N+1 on N: 1/N); all of them run */
  double cycles;      /* tower cycles of concentration */
  double drift_share; /* tower drift, a share of the circulation */
  double range_k;     /* tower water range (K) */
} cool_loop_config;

/* The schema of one loop. Fields whose default depends on the kind
 * (supply, delta_t, time_constant, hx_approach, aux_share, econ_fan_share,
 * flow_min) are
 * filled by its check hook. Free a bound config with scn_release. */
extern const scn_schema cool_loop_schema;

/* A loop as a scenario would write it: kind, capacity, and heat_share of
 * the one rack group `group`, every other key at its default (bound
 * through cool_loop_schema, so the result is what the YAML would give).
 * For the default plant of a scenario that lists no loops. SIM_OK, or an
 * error with nothing left to free; free a filled c with scn_release. */
int cool_loop_default(cool_loop_config *c, /* zeroed by the caller */
                      const char *name,    /* the loop's name */
                      cool_kind kind,      /* liquid or air */
                      const char *group,   /* the rack group it serves */
                      double capacity_w,   /* its plant's capacity */
                      double heat_share,   /* of the group's heat, (0, 1] */
                      sim_error *err);

/* ------------------------------------------------------------------ */
/* Pure functions of a config                                          */
/* ------------------------------------------------------------------ */

/* What a loop draws at loop temperature temp_c and outdoor temperature
 * outdoor_c. Powers in W. */
typedef struct cool_power {
  double removed_w;  /* heat the plant takes out of the loop, R(T) */
  double free_w;     /* ... of which through the economizer */
  double chiller_w;  /* chiller compressor power */
  double aux_w;      /* pumps and fans */
  double total_w;    /* chiller_w + aux_w: the loop's cooling power */
  double free_share; /* f: share of the heat removed without the chiller */
  double cop;        /* the chiller's full-load COP at this outdoor air */
  double plr;        /* the chiller's part-load ratio */
  double water_kg_s; /* make-up water of an evaporative plant (1 kg = 1 L) */
  double temp_c;     /* the loop temperature this is for */
  bool at_capacity;  /* R(T) is at the loop's capacity */
} cool_power;

/* UA in W/K and C in J/K. */
double cool_ua(const cool_loop_config *c);
double cool_heat_capacity(const cool_loop_config *c);

/* The chiller's COP at outdoor_c, bounded to [cop_min, cop_max]; cop_max
 * when the outdoor air is cold enough that there is no lift. outdoor_c is
 * the temperature the plant rejects to: the dry bulb, or for an
 * evaporative plant the wet bulb. */
double cool_cop(const cool_loop_config *c, double outdoor_c);

/* EIRfPLR(plr) / EIRfPLR(1): the chiller's power at part-load ratio plr
 * as a share of its full-load power at the same temperatures, before
 * cycling. Its input per unit of cooling is this over plr. */
double cool_eir_plr(const cool_loop_config *c, double plr);

/* The chiller's power carrying load_w at full-load COP cop: the part-load
 * curve and cycling of the header's formula. */
double cool_chiller_w(const cool_loop_config *c, double load_w, double cop);

/* f, the share of heat removed free, at loop temperature temp_c. At or
 * below the setpoint (nothing to remove) it is 1 when the economizer alone
 * could hold the supply, else 0. outdoor_c as for cool_cop. */
double cool_free_share(const cool_loop_config *c, double temp_c,
                       double outdoor_c);

/* The loop's heat removal and cooling power at temp_c. An evaporative
 * plant given only the dry bulb takes the air as saturated (wet bulb =
 * dry bulb): the worst case. */
cool_power cool_power_at(const cool_loop_config *c, double temp_c,
                         double outdoor_c);

/* The same, derated as cool_power_derated, with the outdoor wet bulb
 * wet_c (degC) an evaporative plant follows (a dry one ignores it). */
cool_power cool_power_wet(const cool_loop_config *c, double share,
                          double temp_c, double outdoor_c, double wet_c);

/* cool_steady_derated with the wet bulb. */
cool_power cool_steady_wet(const cool_loop_config *c, double share, double q_w,
                           double outdoor_c, double wet_c);

/* cool_steady_wet's total_w alone, to the bit, without the figures it
 * does not need (the part load, the free cooling's power, the water):
 * the facility's fit test asks for it about 56 times a split. */
double cool_steady_total_w(const cool_loop_config *c, double share, double q_w,
                           double outdoor_c, double wet_c);

/* The same for a loop whose plant has only share (in [0, 1]) of its
 * capacity left (a cooling fault): the removal is capped at share x
 * capacity, while UA, the heat capacity and the pumps' and fans' design
 * flow stay as built. share = 1 is cool_power_at exactly. */
cool_power cool_power_derated(const cool_loop_config *c, double share,
                              double temp_c, double outdoor_c);

/* The steady state for a constant heat load q_w: the loop settles at
 * T_s + q_w / UA and draws cool_power_at that temperature. Above capacity
 * there is no steady state: the result is at T_s + delta_t with
 * at_capacity set and removed_w = capacity < q_w. For annual figures and
 * for predicting the overhead of an IT load. */
cool_power cool_steady(const cool_loop_config *c, double q_w, double outdoor_c);

/* cool_steady with share of the capacity left (cool_power_derated): above
 * share x capacity there is no steady state, and the result is at that
 * removal with at_capacity set. */
cool_power cool_steady_derated(const cool_loop_config *c, double share,
                               double q_w, double outdoor_c);

/* ------------------------------------------------------------------ */
/* The loop in time                                                    */
/* ------------------------------------------------------------------ */

typedef struct cool_loop cool_loop;

/* What one step did. Energies in J over the step. */
typedef struct cool_step {
  double temp_c;    /* loop temperature at the end */
  double removed_j; /* heat removed */
  double free_j;    /* ... of which without the chiller */
  double chiller_j; /* chiller electricity */
  double aux_j;     /* pump and fan electricity */
  double energy_j;  /* chiller_j + aux_j */
  double water_kg;  /* make-up water of an evaporative plant */
  bool at_capacity; /* removal is at the capacity at the end: T rises */
} cool_step;

/* Integration tolerances of every loop's ODE driver: absolute (K for the
 * temperature, J for the energies) and relative. The step response holds
 * to 1e-6 K with these (tests/test_cooling.c). */
#define COOL_ODE_EPS_ABS 1e-9
#define COOL_ODE_EPS_REL 1e-11

/* A loop at its supply temperature (no load). c is copied (its setpoint
 * may then move: cool_loop_set_supply), its arrays and names borrowed:
 * they must outlive the loop; a (NULL: the C library) allocates the loop, GSL its
 * driver. Returns NULL with err set (SIM_ENOMEM, or SIM_EINVAL for a
 * config that did not come through the schema's checks). */
cool_loop *cool_loop_create(const cool_loop_config *c, const sim_allocator *a,
                            sim_error *err);

/* Frees the loop and its driver. NULL does nothing. */
void cool_loop_destroy(cool_loop *l);

const cool_loop_config *cool_loop_config_of(const cool_loop *l);

double cool_loop_temp_c(const cool_loop *l);

/* The supply setpoints the loop's plant allows, degC: the scenario's
 * bounds [5, 60] (an air loop's to 45: ASHRAE's A4), and above the heat
 * exchanger's approach (*lo is then the next double above it), so the
 * plant water stays above freezing. Both ends can be set. */
void cool_loop_supply_range(const cool_loop *l, double *lo, double *hi);

/* Moves the supply setpoint to supply_c from the next step on (a
 * client's, libaifsim): the plant then removes heat in proportion to how
 * far the loop is above it. SIM_OK, or SIM_ERANGE outside the range
 * (nothing changed). */
int cool_loop_set_supply(cool_loop *l, double supply_c);

/* Sets the state, e.g. to start a run hot. */
void cool_loop_set_temp(cool_loop *l, double temp_c);

/* A cooling fault: from the next step on, the plant removes at most share
 * (in [0, 1]) of the loop's capacity (cool_power_derated); 1 restores it.
 * SIM_OK, or SIM_EINVAL for a share outside [0, 1] (nothing changed). A
 * new loop has share 1. */
int cool_loop_set_derate(cool_loop *l, double share);
double cool_loop_derate(const cool_loop *l);

/* Advances the loop by dt_s under a constant heat input q_in_w and outdoor
 * temperature outdoor_c, integrating temperature and energies together
 * with the loop's gsl_odeiv2 driver (Runge-Kutta-Prince-Dormand 8(9)).
 * Fills *out. SIM_OK; SIM_EINVAL for a negative or non-finite input, the
 * state unchanged; SIM_ERANGE if GSL cannot meet the tolerance (message
 * in err). */
int cool_loop_step(cool_loop *l,     /* the loop */
                   double q_in_w,    /* heat from its racks, W */
                   double outdoor_c, /* outdoor dry-bulb, degC */
                   double dt_s,      /* step length, s */
                   cool_step *out,   /* what the step did */
                   sim_error *err);  /* why it failed; may be NULL */

/* cool_loop_step with the outdoor wet bulb wet_c (degC), which an
 * evaporative plant follows; cool_loop_step takes it as the dry bulb. */
int cool_loop_step_wet(cool_loop *l, double q_in_w, double outdoor_c,
                       double wet_c, double dt_s, cool_step *out,
                       sim_error *err);

/* ------------------------------------------------------------------ */
/* GPUs and the facility                                               */
/* ------------------------------------------------------------------ */

/* Junction temperature: loop temperature plus the GPU's power through
 * its thermal resistance from coolant to junction (K/W). */
double cool_junction_c(double loop_temp_c, double gpu_power_w,
                       double r_th_k_per_w);

/* The clock share thermal protection allows at junction_c: 1 up to the
 * slowdown temperature, falling linearly to 0 at the shutdown temperature
 * (nvidia-smi's "GPU Slowdown Temp" and "GPU Shutdown Temp"). NVML's HW
 * slowdown cuts clocks "by a factor of 2 or more" (nvml.h,
 * NVML_CLOCKS_THROTTLE_REASON_HW_SLOWDOWN); the linear law reaches half
 * clock half-way to shutdown and, being continuous, gives the loop of
 * clock -> power -> junction -> clock one fixed point instead of a step
 * it would chatter across from tick to tick. */
double cool_throttle_share(double junction_c, double slowdown_c,
                           double shutdown_c);

/* The GPU power that holds the junction at limit_c: (limit_c - loop) /
 * r_th; 0 if the loop is already at the limit. For the power controller. */
double cool_thermal_power_w(double loop_temp_c, double limit_c,
                            double r_th_k_per_w);

/* PUE = facility power / IT power; NaN unless it_w > 0. */
double cool_pue(double facility_w, double it_w);

#endif
