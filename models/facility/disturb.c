/* disturb.c - disturbances and the facility's answer (disturb.h). */
#include "disturb.h"

#include <math.h>
#include <stdio.h>

/* ---- Schemas --------------------------------------------------------------
 */

static const char *const kind_names[] = {"sag", "frequency", NULL};

static int check_event(void *obj, const scn_loc *loc, void *user,
                       sim_error *err);
static int check_config(void *obj, const scn_loc *loc, void *user,
                        sim_error *err);

#define RUN_MAX_S (366 * 86400.0)

static const scn_field event_fields[] = {
    {.key = "kind",
     .type = SCN_ENUM,
     .offset = offsetof(dist_event, kind),
     .names = kind_names,
     .flags = SCN_REQUIRED,
     .help = "sag (the voltage drops) or frequency (an excursion)"},
    {.key = "start",
     .type = SCN_QUANTITY,
     .offset = offsetof(dist_event, start_s),
     .dim = UNITS_TIME,
     .min = 0,
     .max = RUN_MAX_S,
     .flags = SCN_REQUIRED,
     .help = "when it begins, e.g. 10 min"},
    {.key = "duration",
     .type = SCN_QUANTITY,
     .offset = offsetof(dist_event, duration_s),
     .dim = UNITS_TIME,
     .min = 0,
     .max = RUN_MAX_S,
     .flags = SCN_REQUIRED | SCN_POSITIVE,
     .help = "how long it lasts, e.g. 100 ms"},
    {.key = "voltage",
     .type = SCN_QUANTITY,
     .offset = offsetof(dist_event, voltage),
     .dim = UNITS_FRACTION,
     .min = 0,
     .max = 0.9999,
     .help = "sag: the share of nominal voltage retained, e.g. 70%"},
    {.key = "frequency",
     .type = SCN_QUANTITY,
     .offset = offsetof(dist_event, frequency_hz),
     .dim = UNITS_FREQUENCY,
     .min = 40,
     .max = 70,
     .help = "frequency: the frequency held, e.g. 59.3 Hz"},
};

const scn_schema dist_event_schema =
    SCN_SCHEMA("disturbance", dist_event, event_fields, .check = check_event);

static const scn_field point_fields[] = {
    {.key = "voltage",
     .type = SCN_QUANTITY,
     .offset = offsetof(dist_point, voltage),
     .dim = UNITS_FRACTION,
     .min = 0,
     .max = 1,
     .flags = SCN_REQUIRED,
     .help = "the share of nominal voltage retained, e.g. 70%"},
    {.key = "duration",
     .type = SCN_QUANTITY,
     .offset = offsetof(dist_point, duration_s),
     .dim = UNITS_TIME,
     .min = 0,
     .max = RUN_MAX_S,
     .flags = SCN_REQUIRED,
     .help = "how long a sag to that voltage or above is tolerated"},
};

static const scn_schema point_schema =
    SCN_SCHEMA("curve point", dist_point, point_fields, .check = NULL);

#define TIME(k, field, def, h)                                                 \
  {                                                                            \
    .key = k, .type = SCN_QUANTITY, .offset = offsetof(dist_config, field),    \
    .dim = UNITS_TIME, .min = 0, .max = RUN_MAX_S, .dflt = def, .help = h      \
  }
#define HZ(k, field, def, h)                                                   \
  {                                                                            \
    .key = k, .type = SCN_QUANTITY, .offset = offsetof(dist_config, field),    \
    .dim = UNITS_FREQUENCY, .min = 40, .max = 70, .dflt = def, .help = h       \
  }

/* Defaults: the frequency band is the input range of server power
 * supplies (47-63 Hz on AC-input PSU data sheets); a Type 10 generator
 * takes the load within 10 s (NFPA 110, Level 1, Type 10); reconnection
 * 300 s after the grid is back and a 300 s return ramp follow IEEE
 * 1547-2018's defaults for resources re-entering service (section 4.10),
 * for want of a standard for loads; 5 min of UPS autonomy is a common
 * design figure, an assumption here. */
static const scn_field config_fields[] = {
    {.key = "curve",
     .type = SCN_LIST,
     .offset = offsetof(dist_config, curve),
     .sub = &point_schema,
     .count_offset = offsetof(dist_config, ncurve),
     .flags = SCN_OMIT_EMPTY,
     .help = "must ride through: [{voltage, duration}], ascending; "
             "absent: ITIC's"},
    {.key = "trip",
     .type = SCN_LIST,
     .offset = offsetof(dist_config, trip),
     .sub = &point_schema,
     .count_offset = offsetof(dist_config, ntrip),
     .flags = SCN_OMIT_EMPTY,
     .help = "the facility's protection: [{voltage, duration}], ascending; "
             "absent: the curve"},
    HZ("frequency_low", frequency_low_hz, "47 Hz",
       "trips off the grid below this frequency"),
    HZ("frequency_high", frequency_high_hz, "63 Hz",
       "trips off the grid above this frequency"),
    HZ("ride_low", ride_low_hz, NULL,
       "must ride through frequencies from this ... (none by default)"),
    HZ("ride_high", ride_high_hz, NULL, "... to this"),
    TIME("ups_autonomy", ups_autonomy_s, "5 min",
         "how long the UPS carries the IT alone"),
    {.key = "generator",
     .type = SCN_BOOL,
     .offset = offsetof(dist_config, generator),
     .dflt = "true",
     .help = "a standby generator takes over from the UPS"},
    TIME("generator_start", generator_start_s, "10 s",
         "how long the generator takes to carry the load"),
    TIME("reconnect_delay", reconnect_delay_s, "5 min",
         "off the grid this long after the last disturbance ends"),
    TIME("return_ramp", return_ramp_s, "5 min",
         "the draw returns to the grid linearly over this"),
};

const scn_schema dist_schema =
    SCN_SCHEMA("ride_through", dist_config, config_fields,
               .check = check_config);

static int check_event(void *obj, const scn_loc *loc, void *user,
                       sim_error *err) {
  (void)user;
  const dist_event *e = obj;
  bool sag = e->kind == DIST_SAG;
  if (sag && (isnan(e->voltage) || !isnan(e->frequency_hz)))
    return scn_fail(loc, "voltage", err, "e.g. {kind: sag, voltage: 70%}",
                    "a sag needs voltage (the share of nominal retained) "
                    "and no frequency");
  if (!sag && (isnan(e->frequency_hz) || !isnan(e->voltage)))
    return scn_fail(loc, "frequency", err,
                    "e.g. {kind: frequency, frequency: 59.3 Hz}",
                    "a frequency excursion needs frequency and no voltage");
  return SIM_OK;
}

static int check_points(const scn_loc *loc, const char *key,
                        const dist_point *p, size_t n, sim_error *err) {
  for (size_t i = 1; i < n; i++)
    if (!(p[i].voltage > p[i - 1].voltage)) {
      char where[48];
      snprintf(where, sizeof where, "%s.%zu.voltage", key, i);
      return scn_fail(loc, where, err, "ascending voltages",
                      "the %s's points must rise in voltage", key);
    }
  return SIM_OK;
}

static int check_config(void *obj, const scn_loc *loc, void *user,
                        sim_error *err) {
  (void)user;
  const dist_config *c = obj;
  int rc = check_points(loc, "curve", c->curve, c->ncurve, err);
  if (rc == SIM_OK)
    rc = check_points(loc, "trip", c->trip, c->ntrip, err);
  if (rc == SIM_OK && !(c->frequency_low_hz < c->frequency_high_hz))
    return scn_fail(loc, "frequency_low", err, "e.g. 47 Hz and 63 Hz",
                    "frequency_low must be below frequency_high");
  if (rc == SIM_OK && isnan(c->ride_low_hz) != isnan(c->ride_high_hz))
    return scn_fail(loc, "ride_low", err, "e.g. ride_low: 58.4 Hz, "
                    "ride_high: 61.6 Hz", "give ride_low and ride_high both");
  if (rc == SIM_OK && c->ride_low_hz > c->ride_high_hz)
    return scn_fail(loc, "ride_low", err, NULL,
                    "ride_low must be below ride_high");
  return rc;
}

/* ---- The curves -----------------------------------------------------------
 */

/* ITI (CBEMA) Curve, Information Technology Industry Council, 2000
 * (Application Note): equipment keeps working through a loss of voltage
 * for 20 ms, a sag to 70% for 0.5 s, to 80% for 10 s, and 90% or more
 * for good. */
const dist_point dist_itic[] = {
    {0.0, 0.02}, {0.70, 0.5}, {0.80, 10.0}, {0.90, INFINITY}};
const size_t dist_nitic = sizeof dist_itic / sizeof dist_itic[0];

double dist_tolerated_s(const dist_point *p, size_t n, double v) {
  double d = 0;
  for (size_t i = 0; i < n && p[i].voltage <= v; i++)
    d = p[i].duration_s;
  return d;
}

/* ---- The answer -----------------------------------------------------------
 */

static void curve_of(const dist_config *c, bool trip, const dist_point **p,
                     size_t *n) {
  if (trip && c->ntrip > 0) {
    *p = c->trip, *n = c->ntrip;
  } else if (c->ncurve > 0) {
    *p = c->curve, *n = c->ncurve;
  } else {
    *p = dist_itic, *n = dist_nitic;
  }
}

/* Inside the must-ride-through region. */
static bool must_ride(const dist_config *c, const dist_event *e) {
  if (e->kind == DIST_FREQUENCY)
    return !isnan(c->ride_low_hz) && e->frequency_hz >= c->ride_low_hz &&
           e->frequency_hz <= c->ride_high_hz;
  const dist_point *p;
  size_t n;
  curve_of(c, false, &p, &n);
  return e->duration_s <= dist_tolerated_s(p, n, e->voltage);
}

/* When the protection takes the facility off; NaN: it rides through. */
static double trip_time(const dist_config *c, const dist_event *e) {
  if (e->kind == DIST_FREQUENCY)
    return e->frequency_hz < c->frequency_low_hz ||
                   e->frequency_hz > c->frequency_high_hz
               ? e->start_s
               : NAN;
  const dist_point *p;
  size_t n;
  curve_of(c, true, &p, &n);
  double held = dist_tolerated_s(p, n, e->voltage);
  return e->duration_s > held ? e->start_s + held : NAN;
}

/* The IT goes dark when the outage outlasts what the backup carries. */
static void set_dark(const dist_config *c, dist_response *r) {
  bool gen = c->generator && c->generator_start_s <= c->ups_autonomy_s;
  double carried = gen ? INFINITY : c->ups_autonomy_s;
  bool dark = r->reconnect_s - r->trip_s > carried;
  r->dark_start_s = dark ? r->trip_s + carried : NAN;
  r->dark_end_s = dark ? r->reconnect_s : NAN;
}

static void no_trip(dist_response *r) {
  r->tripped = false;
  r->trip_s = r->reconnect_s = r->back_s = r->ramp_s = NAN;
  r->dark_start_s = r->dark_end_s = NAN;
}

void dist_respond(const dist_config *c, const dist_event *ev, size_t n,
                  dist_response *out) {
  dist_response *cur = NULL; /* the last outage */
  for (size_t i = 0; i < n; i++) {
    const dist_event *e = &ev[i];
    dist_response *r = &out[i];
    double end = e->start_s + e->duration_s;
    r->must = must_ride(c, e);
    no_trip(r);
    r->connected = cur == NULL || e->start_s >= cur->reconnect_s;
    if (!r->connected) { /* off the grid: it only waits longer */
      cur->reconnect_s = fmax(cur->reconnect_s, end + c->reconnect_delay_s);
      cur->back_s = cur->reconnect_s + c->return_ramp_s;
      set_dark(c, cur);
      r->met = false;
      continue;
    }
    double t = trip_time(c, e);
    r->met = r->must && isnan(t);
    if (isnan(t))
      continue;
    if (cur != NULL && t < cur->back_s) /* cuts the last return short */
      cur->back_s = t;
    r->tripped = true;
    r->trip_s = t;
    r->reconnect_s = end + c->reconnect_delay_s;
    r->ramp_s = c->return_ramp_s;
    r->back_s = r->reconnect_s + r->ramp_s;
    set_dark(c, r);
    cur = r;
  }
}

/* The share of outage r's load the grid does not carry, integrated over
 * [a, b]: 1 while off, falling linearly to 0 over the ramp. */
static double deficit_integral(const dist_response *r, double a, double b) {
  double off = fmax(0, fmin(b, r->reconnect_s) - fmax(a, r->trip_s));
  double lo = fmax(a, r->reconnect_s), hi = fmin(b, r->back_s);
  double ramp = 0;
  if (hi > lo) {
    /* deficit 1 - (t - reconnect) / ramp_s, its mean at the midpoint */
    double mid = 0.5 * (lo + hi) - r->reconnect_s;
    ramp = (hi - lo) * (r->ramp_s > 0 ? 1 - mid / r->ramp_s : 0);
  }
  return off + ramp;
}

double dist_share(const dist_response *r, size_t n, double t) {
  for (size_t i = 0; i < n; i++) {
    if (!r[i].tripped || t < r[i].trip_s || t >= r[i].back_s)
      continue;
    if (t < r[i].reconnect_s)
      return 0;
    return r[i].ramp_s > 0 ? (t - r[i].reconnect_s) / r[i].ramp_s : 1;
  }
  return 1;
}

double dist_share_mean(const dist_response *r, size_t n, double t0,
                       double t1) {
  double deficit = 0;
  for (size_t i = 0; i < n; i++)
    if (r[i].tripped && r[i].trip_s < t1 && r[i].back_s > t0)
      deficit += deficit_integral(&r[i], t0, t1);
  return deficit == 0 ? 1 : 1 - deficit / (t1 - t0);
}
