/* cooling_schema.c - the cooling loop's schema: every key, its default
 * and that default's source, the kind-dependent defaults the check hook
 * fills, and the loop a scenario without `loops:` gets. */
#include "cooling.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cooling_internal.h"

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
        "part-load ratio below which the chiller cycles on and off"),
    /* EnergyPlus's default minimum unloading ratio of Chiller:Electric:EIR
     * and :ReformulatedEIR (Input Output Reference; Energy+.idd), 0.2:
     * the compressor unloads no further, and between it and the minimum
     * part-load ratio the chiller is false-loaded (hot-gas bypass) at
     * constant power (Engineering Reference). The EnergyPlus chiller
     * library's (CoolTools) units range 0.09-0.41. Default: 20%, or the
     * chiller_min_plr given if that is higher (it must not be lower). */
    QTY("chiller_min_unloading", unload_min, UNITS_FRACTION, 0.01, 1, 0, NULL,
        "least part-load ratio the chiller unloads to; below it, hot-gas "
        "bypass holds its power there; default 20% (not below "
        "chiller_min_plr)"),
    /* Uptime Institute's Tier III and IV call for N+1 capacity components
     * in cooling: one unit beyond what the design load needs. Run with
     * all units on (as EC/VFD CRAH fans and CDU pumps often are: sharing
     * the flow costs less under the cube law), the installed flow is
     * (N+1)/N of the design's: 25% for N+1 on four units. The default, 0,
     * is the standby unit off (it draws nothing): no source here gives N
     * for an AI hall, and which units run is the operator's choice. */
    QTY("pump_fan_redundancy", redundancy, UNITS_FRACTION, 0, 4, 0, "0%",
        "pumps and fans installed beyond the design flow's (N+1 on N: "
        "1/N), all running at the speed their share of the flow needs"),
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
  fill(&c->unload_min, fmax(0.2, c->plr_min));
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
  if (c->unload_min < c->plr_min)
    return scn_fail(loc, "chiller_min_unloading", err,
                    "a chiller cycles only below the load it is false-loaded "
                    "down to",
                    "%s: chiller_min_unloading %g is below chiller_min_plr %g",
                    c->name, c->unload_min, c->plr_min);
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

