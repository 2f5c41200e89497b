/* cooling.c - cooling loops: schema and defaults with their sources, the
 * plant (free cooling, chillers, pumps and fans), the loop's ODE under
 * gsl_odeiv2, and the GPU-side helpers (junction, throttling, PUE). */
#include "cooling.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_odeiv2.h>

#include "water.h"

#define KELVIN 273.15

/* ------------------------------------------------------------------ */
/* Defaults that depend on the kind                                    */
/* ------------------------------------------------------------------ */

/* What the check hook fills in when a scenario leaves these out. The
 * liquid column is a warm-water direct-to-chip loop, the air column a
 * chilled-water CRAH room of the kind the surveys describe. */
typedef struct kind_defaults {
  double supply_c, delta_t_k, tau_s, hx_approach_k, aux_share, econ_fan_share;
  double flow_min;
} kind_defaults;

static const kind_defaults defaults[] = {
    [COOL_LIQUID] =
        {
            /* 35 degC to the cold plates is facility water at 32 degC
             * behind a 3 K CDU: the top of ASHRAE TC 9.9's class W32
             * (Liquid Cooling Guidelines for Datacom Equipment Centers,
             * 2nd ed.: W17, W27, W32, W40, W45, W+). */
            .supply_c = 35,
            /* Assumption: a 10 K rise across the cold plates at full
             * load, the middle of the 8-12 K DLC loops are designed for. */
            .delta_t_k = 10,
            /* Assumption: 1 MW at 10 K is 24 kg/s of water; some 1.5 m3
             * in CDU, manifolds and pipes turns over in about a minute. */
            .tau_s = 60,
            /* Assumption: CDU plate heat exchangers are selected for a
             * 2-5 K approach; 3 K. */
            .hx_approach_k = 3,
            /* Engineering estimate at design flow, per W of heat: CDU
             * pumps 24 g/s/kW at 200 kPa, 60% efficient, 0.8%; facility
             * pumps at 250 kPa, 0.9%; dry-cooler fans moving ~0.1 m3/s/kW
             * at 125 Pa, 50% efficient, 2.5%: 4% in all. NREL's ESIF,
             * warm-water and chiller-less, runs a whole-site PUE of 1.04
             * (NREL/PR-2C00-70433, 2018), so its pumps and fans are
             * below 4%. */
            .aux_share = 0.04,
            /* The dry-cooler fans of that estimate. */
            .econ_fan_share = 0.025,
            /* Assumption: variable-speed pumps turn down to 20% flow. */
            .flow_min = 0.2,
        },
    [COOL_AIR] =
        {
            /* Uptime Institute's 2013 survey (over 1,000 sites): nearly
             * half supply 71-75 F (21.7-23.9 degC), 37% 65-70 F. */
            .supply_c = 22,
            /* Assumption: 11 K air rise across the servers at design. */
            .delta_t_k = 11,
            /* Assumption: room air turns over in well under a minute,
             * but coils and chilled-water pipes hold the temperature; a
             * lost plant heats the room at dT_design / tau = 5.5 K/min. */
            .tau_s = 120,
            /* Chilled water at 7 degC under 22 degC air: "typical legacy
             * data centers have chilled water set points between 42-45 F
             * (6-7 degC)"; optimised ones run 10 degC or more
             * (DatacenterDynamics, "Hot water, cold water"). */
            .hx_approach_k = 15,
            /* Engineering estimate at design flow, per W of heat: 75 L/s
             * of air per kW at 11 K, through ~450 Pa of coil, filters and
             * floor at 55% fan efficiency, 6.2%; chilled-water pumps at
             * 6 K and 300 kPa, 1.8%; economizer fans ~2%: 10%. (Air-cooled
             * chillers' condenser fans are in their COP.) */
            .aux_share = 0.10,
            /* The economizer fans of that estimate. */
            .econ_fan_share = 0.02,
            /* Assumption: EC/VFD CRAH fans turn down to 30% speed; the
             * power falls with the cube of it (Vertiv/Emerson, "Using EC
             * plug fans to improve energy efficiency of chilled water
             * cooling systems in large data centers"). */
            .flow_min = 0.3,
        },
};

/* Air above ASHRAE's widest allowable envelope (class A4, 5-45 degC) is
 * no supply a server is built for. */
#define AIR_SUPPLY_MAX_C 45.0
/* The schema's bounds on any loop's supply (its row "supply" below). */
#define SUPPLY_MIN_C 5.0
#define SUPPLY_MAX_C 60.0

/* ------------------------------------------------------------------ */
/* Schema                                                              */
/* ------------------------------------------------------------------ */

static const char *const kind_names[] = {"liquid", "air", NULL};
static const char *const rejection_names[] = {"dry", "evaporative", NULL};

#define QTY(k, field, d, lo, hi, fl, def, h)                                   \
  {                                                                            \
    .key = k, .type = SCN_QUANTITY,                                            \
    .offset = offsetof(cool_loop_config, field), .dim = d, .min = lo,          \
    .max = hi, .flags = fl, .dflt = def, .help = h                             \
  }
#define DIFF(k, field, hi, def, h)                                             \
  QTY(k, field, UNITS_TEMPERATURE, 0, hi, 0, def,                              \
      h " (a difference: write degC, e.g. 5 degC)")

static int check_loop(void *obj, const scn_loc *loc, void *user,
                      sim_error *err);

static const scn_field loop_fields[] = {
    {.key = "name",
     .type = SCN_STRING,
     .offset = offsetof(cool_loop_config, name),
     .flags = SCN_REQUIRED | SCN_NONEMPTY,
     .help = "the loop's name, e.g. dlc-hall-1"},
    {.key = "kind",
     .type = SCN_ENUM,
     .offset = offsetof(cool_loop_config, kind),
     .names = kind_names,
     .flags = SCN_REQUIRED,
     .help = "liquid (direct-to-chip) or air (CRAH)"},
    {.key = "racks",
     .type = SCN_STRINGS,
     .offset = offsetof(cool_loop_config, racks),
     .count_offset = offsetof(cool_loop_config, nracks),
     .help = "the rack groups this loop serves"},
    QTY("heat_share", heat_share, UNITS_FRACTION, 0, 1, SCN_POSITIVE, "100%",
        "share of its racks' heat this loop takes (liquid cold plates take "
        "most, the rest goes to air)"),
    QTY("capacity", capacity_w, UNITS_POWER, 0, HUGE_VAL,
        SCN_REQUIRED | SCN_POSITIVE, NULL,
        "the most heat the plant removes, e.g. 2 MW"),
    QTY("supply", supply_c, UNITS_TEMPERATURE, 5, 60, 0, NULL,
        "supply setpoint to the IT; default 35 degC liquid, 22 degC air"),
    QTY("delta_t", delta_t_k, UNITS_TEMPERATURE, 0, 30, SCN_POSITIVE, NULL,
        "rise above supply at full capacity; default 10 degC liquid, 11 "
        "degC air (a difference: write degC)"),
    QTY("time_constant", tau_s, UNITS_TIME, 0, 86400, SCN_POSITIVE, NULL,
        "the loop's first-order time constant; default 60 s liquid, 120 s "
        "air"),
    DIFF("hx_approach", hx_approach_k, 30, NULL,
         "loop supply minus plant water supply (CDU or coil approach); "
         "default 3 degC liquid, 15 degC air"),
    {.key = "heat_rejection",
     .type = SCN_ENUM,
     .offset = offsetof(cool_loop_config, rejection),
     .names = rejection_names,
     .dflt = "dry",
     .help = "dry (dry coolers, air-cooled chiller, no water) or evaporative "
             "(cooling tower: follows the wet bulb, uses water)"},
    /* Dry: University of Stuttgart's survey of 6,730 cooling towers from
     * 27 manufacturers: dry coolers have a median approach of 10 K to the
     * ambient dry bulb (Energies 16(9) 3661, 2023). Evaporative: see
     * fill_defaults. */
    DIFF("economizer_approach", econ_approach_k, 30, NULL,
         "economizer outlet above the outdoor dry bulb (dry) or wet bulb "
         "(evaporative); default 10 degC dry, 5 degC evaporative"),
    /* Dry: AHRI 550/590 rates air-cooled chillers at 35 degC (95 F)
     * ambient with 51.7 degC (125 F) saturated discharge: 16.7 K.
     * Evaporative: see fill_defaults. */
    DIFF("chiller_approach", chiller_approach_k, 40, NULL,
         "chiller condensing temperature above the outdoor dry bulb (dry) "
         "or wet bulb (evaporative); default 16.7 degC dry, 12 degC "
         "evaporative"),
    /* 45% of Carnot between the leaving water and the condenser gives
     * COP 0.45 x 279.85 K / 45 K = 2.80 at AHRI conditions (6.7 degC
     * leaving water): ASHRAE 90.1's minimum for air-cooled chillers,
     * 9.562 EER (CEC/AHRI, Table 110.2-D). Real chillers reach 40-70% of
     * Carnot (pe-calc.com, Carnot efficiency & refrigeration COP). */
    QTY("carnot_fraction", eta, UNITS_FRACTION, 0.05, 1, 0, "45%",
        "the chiller's share of the Carnot COP"),
    /* Assumptions: 1.5 keeps the model finite in heat no chiller is rated
     * for; 10 (0.35 kW/ton) is about the best oil-free centrifugal
     * chillers reach at low lift. */
    QTY("cop_min", cop_min, UNITS_NUMBER, 0.5, 50, 0, "1.5",
        "lowest chiller COP"),
    QTY("cop_max", cop_max, UNITS_NUMBER, 0.5, 50, 0, "10",
        "highest chiller COP (low lift)"),
    QTY("pump_fan_power", aux_share, UNITS_FRACTION, 0, 1, 0, NULL,
        "pumps and fans at design flow per W of capacity; default 4% liquid, "
        "10% air"),
    /* A dry cooler that can take no heat (the outdoor air too warm to
     * bring the return water down) is valved off and its fans stopped:
     * a fan moving air over a coil that removes nothing is waste no
     * economizer control allows. A tower serves the chiller's condenser
     * too, so an evaporative plant's fans run while it rejects heat. */
    QTY("economizer_fan_power", econ_fan_share, UNITS_FRACTION, 0, 1, 0, NULL,
        "the part of pump_fan_power that is the dry economizer's fans, "
        "staged with the share of the heat it takes (off while it takes "
        "none); default 2.5% liquid, 2% air"),
    QTY("min_flow", flow_min, UNITS_FRACTION, 0, 1, 0, NULL,
        "lowest flow share of pumps and fans; default 20% liquid, 30% air"),
    /* The fan and pump affinity laws: power goes with the cube of speed
     * (and flow). */
    QTY("affinity_exponent", affinity, UNITS_NUMBER, 1, 4, 0, "3",
        "exponent of flow in pump and fan power"),
    /* ASHRAE 90.1's part-load curve for air-cooled chillers of every
     * capacity, AirCooled_Chiller_AllCapacities_2004_2010_EIRFPLR:
     * 0.141 + 0.655 PLR + 0.203 PLR^2 (from Dick Lord's study of 2010, as
     * openstudio-standards ships it in ashrae_90_1.curves.json for its
     * Appendix G baselines). */
    QTY("chiller_eir_plr_c0", eir_plr[0], UNITS_NUMBER, -1, 2, 0, "0.141",
        "chiller EIR-fPLR constant term"),
    QTY("chiller_eir_plr_c1", eir_plr[1], UNITS_NUMBER, -2, 3, 0, "0.655",
        "chiller EIR-fPLR linear term"),
    QTY("chiller_eir_plr_c2", eir_plr[2], UNITS_NUMBER, -2, 3, 0, "0.203",
        "chiller EIR-fPLR square term"),
    /* EnergyPlus's default minimum part-load ratio of Chiller:Electric:EIR
     * (Input Output Reference): below it the chiller cycles on and off. */
    QTY("chiller_min_plr", plr_min, UNITS_FRACTION, 0.01, 1, 0, "10%",
        "least part-load ratio the chiller unloads to; below it, it "
        "cycles"),
    /* Assumption: 4 cycles of concentration, a middle value for towers
     * on municipal make-up water (water treatment sets it from the
     * make-up's chemistry; Vertiv's "Optimizing water usage effectiveness
     * for data centers" names it as the lever on make-up water). */
    QTY("cycles_of_concentration", cycles, UNITS_NUMBER, 1.1, 100, 0, "4",
        "evaporative: dissolved solids in the tower over make-up"),
    /* Assumption: 0.001% of the circulation, as high-efficiency drift
     * eliminators are commonly specified (older towers 0.005% or more). */
    QTY("drift", drift_share, UNITS_FRACTION, 0, 0.01, 0, "0.001%",
        "evaporative: drift, a share of the circulating water"),
    /* AHRI 550/590's condenser water: 29.4 to 35 degC (85-95 F), 5.6 K. */
    DIFF("tower_range", range_k, 20, "5.6 degC",
         "evaporative: tower water range (inlet minus outlet)"),
};

const scn_schema cool_loop_schema = SCN_SCHEMA(
    "cooling loop", cool_loop_config, loop_fields, .check = check_loop);

/* ------------------------------------------------------------------ */
/* Checks                                                              */
/* ------------------------------------------------------------------ */

static void fill(double *field, double value) {
  if (isnan(*field))
    *field = value;
}

/* An evaporative plant's approaches, to the wet bulb. Economizer: CTI's
 * design approach for towers is 7 F (3.9 K; AHRI 550/590's 29.4 degC
 * condenser water at 25.6 degC wet bulb), and a plate heat exchanger
 * between tower and plant water adds 1-2 K: 5 K (assumption built on
 * them). Chiller: AHRI 550/590's water-cooled rating has 29.4 degC
 * entering and 35 degC leaving condenser water over a 25.6 degC wet bulb,
 * condensing about 2.5 K above the leaving water: 37.5 - 25.6 = 12 K. */
#define EVAP_ECON_APPROACH_K 5.0
#define EVAP_CHILLER_APPROACH_K 12.0
#define DRY_ECON_APPROACH_K 10.0
#define DRY_CHILLER_APPROACH_K 16.7

static void fill_defaults(cool_loop_config *c) {
  const kind_defaults *d = &defaults[c->kind];
  bool evap = c->rejection == COOL_EVAPORATIVE;
  fill(&c->econ_approach_k, evap ? EVAP_ECON_APPROACH_K : DRY_ECON_APPROACH_K);
  fill(&c->chiller_approach_k,
       evap ? EVAP_CHILLER_APPROACH_K : DRY_CHILLER_APPROACH_K);
  fill(&c->supply_c, d->supply_c);
  fill(&c->delta_t_k, d->delta_t_k);
  fill(&c->tau_s, d->tau_s);
  fill(&c->hx_approach_k, d->hx_approach_k);
  fill(&c->aux_share, d->aux_share);
  fill(&c->econ_fan_share, d->econ_fan_share);
  fill(&c->flow_min, d->flow_min);
}

static int check_loop(void *obj, const scn_loc *loc, void *user,
                      sim_error *err) {
  (void)user;
  cool_loop_config *c = obj;
  fill_defaults(c);
  if (c->kind == COOL_AIR && c->supply_c > AIR_SUPPLY_MAX_C)
    return scn_fail(loc, "supply", err,
                    "ASHRAE's widest air class, A4, allows 5-45 degC",
                    "%s: air supply %g degC is above %g degC", c->name,
                    c->supply_c, AIR_SUPPLY_MAX_C);
  if (c->econ_fan_share > c->aux_share)
    return scn_fail(loc,
                    scn_given(loc, "economizer_fan_power")
                        ? "economizer_fan_power"
                        : "pump_fan_power",
                    err, "the economizer's fans are part of the pumps and fans",
                    "%s: economizer fans %g above pumps and fans %g", c->name,
                    c->econ_fan_share, c->aux_share);
  if (c->cop_min > c->cop_max)
    return scn_fail(loc, "cop_min", err, NULL,
                    "%s: cop_min %g is above cop_max %g", c->name, c->cop_min,
                    c->cop_max);
  if (!(c->supply_c - c->hx_approach_k > 0))
    return scn_fail(loc,
                    scn_given(loc, "hx_approach") ? "hx_approach" : "supply",
                    err, "the plant water must stay above freezing",
                    "%s: supply %g degC less approach %g K is at or below "
                    "0 degC",
                    c->name, c->supply_c, c->hx_approach_k);
  return SIM_OK;
}

int cool_loop_default(cool_loop_config *c, const char *name, cool_kind kind,
                      const char *group, double capacity_w, double heat_share,
                      sim_error *err) {
  char text[2048], qname[700], qgroup[700];
  /* %.17g reads back to the same double; the names are the scenario's
   * own, escaped as YAML double-quoted scalars (a name may hold a quote,
   * a backslash or a line break). */
  int n =
      scn_yaml_quote(name, qname, sizeof qname) < 0 ||
              scn_yaml_quote(group, qgroup, sizeof qgroup) < 0
          ? -1
          : snprintf(text, sizeof text,
                     "name: %s\nkind: %s\nracks: [%s]\n"
                     "capacity: %.17g W\nheat_share: %.17g\n",
                     qname, kind_names[kind], qgroup, capacity_w, heat_share);
  if (n < 0 || (size_t)n >= sizeof text)
    return sim_error_set(err, SIM_EINVAL, "default loop '%s': name too long",
                         name);
  memset(c, 0, sizeof *c);
  return scn_bind_string("default loop", text, &cool_loop_schema, c, NULL,
                         err);
}

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

double cool_chiller_w(const cool_loop_config *c, double load_w, double cop) {
  if (!(load_w > 0))
    return 0;
  double plr = load_w / c->capacity_w;
  double run = plr > c->plr_min ? plr : c->plr_min;
  double cycling = plr < c->plr_min ? plr / c->plr_min : 1;
  /* EIRfPLR is the share of the full-load power drawn at that part load
   * (at the same temperatures); cycling is the share of time it runs. */
  return c->capacity_w / cop * cool_eir_plr(c, run) * cycling;
}

/* Why the flow follows the removal: variable-speed drives hold the design
 * temperature rise, so flow goes with heat. A fixed-speed plant would be
 * flow_min = 1. */
static double aux_power(const cool_loop_config *c, double removed_w,
                        double free_share) {
  double flow = removed_w / c->capacity_w;
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
  return share * c->capacity_w * pow(flow, c->affinity);
}

/* A derated loop keeps its heat exchangers and pipes (UA and C) and its
 * pumps' and fans' design flow; what it loses is how much heat its plant
 * can take out: the removal is capped at share x capacity. */
static double removal(const cool_loop_config *c, double share, double temp_c) {
  double r = cool_ua(c) * (temp_c - c->supply_c);
  return clamp(r, 0, share * c->capacity_w);
}

/* Make-up water per joule of heat rejected: 0 for a dry plant. */
static double water_per_j(const cool_loop_config *c) {
  if (c->rejection != COOL_EVAPORATIVE)
    return 0;
  return water_tower_rates(c->cycles, c->drift_share, c->range_k).total;
}

cool_power cool_power_wet(const cool_loop_config *c, double share,
                          double temp_c, double outdoor_c, double wet_c) {
  /* What the plant rejects to: the wet bulb for a tower. */
  double sink = c->rejection == COOL_EVAPORATIVE ? wet_c : outdoor_c;
  cool_power p = {.temp_c = temp_c};
  p.removed_w = removal(c, share, temp_c);
  p.at_capacity = p.removed_w >= share * c->capacity_w;
  p.free_share = cool_free_share(c, temp_c, sink);
  p.cop = cool_cop(c, sink);
  p.aux_w = aux_power(c, p.removed_w, p.free_share);
  p.free_w = p.free_share * p.removed_w;
  /* The pumps' and fans' work is heat in the coolant too. */
  double load = (1 - p.free_share) * (p.removed_w + p.aux_w);
  p.plr = load / c->capacity_w;
  p.chiller_w = cool_chiller_w(c, load, p.cop);
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

cool_power cool_steady_wet(const cool_loop_config *c, double share, double q_w,
                           double outdoor_c, double wet_c) {
  double top = share * c->capacity_w;
  double q = clamp(q_w, 0, top);
  cool_power p = cool_power_wet(c, share, c->supply_c + q / cool_ua(c),
                                outdoor_c, wet_c);
  if (q_w > top)
    p.at_capacity = true;
  return p;
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
  double share;          /* of the capacity the plant has now (1: all) */
  gsl_odeiv2_system sys; /* the driver keeps a pointer to it */
  gsl_odeiv2_driver *driver;
};

static int loop_rhs(double t, const double y[], double dydt[], void *params) {
  (void)t;
  const cool_loop *l = params;
  cool_power p =
      cool_power_wet(l->c, l->share, y[Y_TEMP], l->outdoor_c, l->wet_c);
  dydt[Y_TEMP] = (l->q_in_w - p.removed_w) / l->heat_capacity;
  dydt[Y_REMOVED] = p.removed_w;
  dydt[Y_FREE] = p.free_w;
  dydt[Y_CHILLER] = p.chiller_w;
  dydt[Y_AUX] = p.aux_w;
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

/* Integrates y over [0, dt_s]. Why reset each step: the inputs jump
 * between steps, so the last step size says nothing about the next. */
static int integrate(cool_loop *l, double dt_s, double y[], sim_error *err) {
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
