/* fault.c - faults (fault.h): the schema of an entry, its expansion into
 * intervals, and the plan of a run.
 *
 * The plan keeps, per entry, its intervals and a cursor: pos is the first
 * interval not yet over at the last step, counted the intervals already
 * booked as events (those before it began, or it). Time only moves
 * forward, so a step costs O(entries) plus the intervals it passes. What
 * is in force (dark racks, loop shares, the feed limit) is rebuilt from
 * the entries in force only when one of them turns on or off, which is
 * rare next to the control ticks that ask. */
#include "fault.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>

#include "vec.h"

/* ------------------------------------------------------------------ */
/* Schema                                                              */
/* ------------------------------------------------------------------ */

static const char *const kind_names[] = {"pdu", "cooling", "feed", NULL};

static int check_fault(void *obj, const scn_loc *loc, void *user,
                       sim_error *err);

/* A year and a bit is as far as a run goes (factory.c: at most 366 d);
 * an MTBF may be far longer (a rare fault over many runs). */
#define RUN_MAX_S (366 * 86400.0)
#define MTBF_MAX_S 1e12

#define TIME(k, field, hi, fl, h)                                              \
  {                                                                            \
    .key = k, .type = SCN_QUANTITY, .offset = offsetof(fault_config, field),   \
    .dim = UNITS_TIME, .min = 0, .max = hi, .flags = fl, .help = h             \
  }

static const scn_field fault_fields[] = {
    {.key = "kind",
     .type = SCN_ENUM,
     .offset = offsetof(fault_config, kind),
     .names = kind_names,
     .flags = SCN_REQUIRED,
     .help = "pdu (racks go dark), cooling (a loop loses capacity) or feed "
             "(the grid feed drops to a backup limit)"},
    {.key = "racks",
     .type = SCN_STRINGS,
     .offset = offsetof(fault_config, racks),
     .count_offset = offsetof(fault_config, nracks),
     .help = "pdu: the racks that go dark, by name (nvl72-3: rack 3 of group "
             "nvl72, from 0) or by group (all its racks)"},
    {.key = "loop",
     .type = SCN_STRING,
     .offset = offsetof(fault_config, loop),
     .flags = SCN_NONEMPTY,
     .help = "cooling: the loop that loses capacity"},
    {.key = "capacity",
     .type = SCN_QUANTITY,
     .offset = offsetof(fault_config, capacity),
     .dim = UNITS_FRACTION,
     .min = 0,
     .max = 1,
     .help = "cooling: the share of the loop's capacity left, e.g. 50%"},
    {.key = "limit",
     .type = SCN_QUANTITY,
     .offset = offsetof(fault_config, limit_w),
     .dim = UNITS_POWER,
     .min = 0,
     .max = HUGE_VAL,
     .help = "feed: the backup power limit, e.g. 600 kW"},
    TIME("at", at_s, RUN_MAX_S, 0, "listed: when the fault strikes, e.g. 6 h"),
    TIME("duration", duration_s, RUN_MAX_S, SCN_POSITIVE,
         "listed: how long it lasts, e.g. 30 min"),
    TIME("mtbf", mtbf_s, MTBF_MAX_S, SCN_POSITIVE,
         "random: mean time between faults (the up time), e.g. 30 d"),
    TIME("mttr", mttr_s, MTBF_MAX_S, SCN_POSITIVE,
         "random: mean time to repair (the down time), e.g. 4 h"),
};

const scn_schema fault_schema =
    SCN_SCHEMA("fault", fault_config, fault_fields, .check = check_fault);

/* The keys that say where a fault strikes and how hard, and the kind
 * each belongs to. */
typedef struct kind_key {
  const char *key;
  int kind;
  const char *example;
} kind_key;

static const kind_key kind_keys[] = {
    {"racks", FAULT_PDU, "racks: [nvl72-3]"},
    {"loop", FAULT_COOLING, "loop: liquid"},
    {"capacity", FAULT_COOLING, "capacity: 50%"},
    {"limit", FAULT_FEED, "limit: 600 kW"},
};

static bool key_given(const fault_config *c, const char *key) {
  if (strcmp(key, "racks") == 0)
    return c->nracks > 0;
  if (strcmp(key, "loop") == 0)
    return c->loop != NULL;
  if (strcmp(key, "capacity") == 0)
    return !isnan(c->capacity);
  return !isnan(c->limit_w);
}

/* Each kind has its keys and no other kind's. */
static int check_keys(const fault_config *c, const scn_loc *loc,
                      sim_error *err) {
  for (size_t k = 0; k < sizeof kind_keys / sizeof kind_keys[0]; k++) {
    const kind_key *kk = &kind_keys[k];
    bool given = key_given(c, kk->key);
    if (kk->kind == c->kind && !given)
      return scn_fail(loc, "kind", err, kk->example, "a %s fault needs '%s'",
                      kind_names[c->kind], kk->key);
    if (kk->kind != c->kind && given)
      return scn_fail(loc, kk->key, err, NULL,
                      "'%s' is for %s faults, not %s ones", kk->key,
                      kind_names[kk->kind], kind_names[c->kind]);
  }
  return SIM_OK;
}

/* One timing, whole: at and duration, or mtbf and mttr. */
static int check_timing(const fault_config *c, const scn_loc *loc,
                        sim_error *err) {
  bool listed = !isnan(c->at_s) || !isnan(c->duration_s);
  bool random = !isnan(c->mtbf_s) || !isnan(c->mttr_s);
  if (listed && random)
    return scn_fail(loc, !isnan(c->mtbf_s) ? "mtbf" : "mttr", err,
                    "keep at and duration, or mtbf and mttr",
                    "a fault is timed either by at and duration or by mtbf "
                    "and mttr, not both");
  if (!listed && !random)
    return scn_fail(loc, "kind", err,
                    "e.g. at: 6 h, duration: 30 min; or mtbf: 30 d, "
                    "mttr: 4 h",
                    "a fault needs a timing: at and duration, or mtbf and "
                    "mttr");
  if (listed && (isnan(c->at_s) || isnan(c->duration_s)))
    return scn_fail(loc, isnan(c->at_s) ? "duration" : "at", err,
                    "e.g. at: 6 h, duration: 30 min",
                    "a listed fault needs both at and duration");
  if (random && (isnan(c->mtbf_s) || isnan(c->mttr_s)))
    return scn_fail(loc, isnan(c->mtbf_s) ? "mttr" : "mtbf", err,
                    "e.g. mtbf: 30 d, mttr: 4 h",
                    "a random fault needs both mtbf and mttr");
  return SIM_OK;
}

static int check_fault(void *obj, const scn_loc *loc, void *user,
                       sim_error *err) {
  (void)user;
  const fault_config *c = obj;
  int rc = check_keys(c, loc, err);
  return rc == SIM_OK ? check_timing(c, loc, err) : rc;
}

/* ------------------------------------------------------------------ */
/* Expansion                                                           */
/* ------------------------------------------------------------------ */

bool fault_is_random(const fault_config *c) { return !isnan(c->mtbf_s); }

double fault_expected_events(const fault_config *c, double horizon_s) {
  return fault_is_random(c) ? horizon_s / (c->mtbf_s + c->mttr_s) : 1;
}

/* A growable array of intervals. */
typedef struct iv_list {
  fault_interval *v;
  size_t n, cap;
} iv_list;

static int push(const sim_allocator *a, iv_list *l, double start, double end) {
  if (sim_vec_reserve(a, &l->v, &l->cap, l->n + 1, sizeof *l->v) != SIM_OK)
    return SIM_ENOMEM;
  l->v[l->n++] = (fault_interval){start, end};
  return SIM_OK;
}

/* Up, down, up, ... from t = 0 (the run starts with everything up), each
 * exponential with its mean, all from one stream; the last down time is
 * clipped at the horizon. */
static int expand_random(const fault_config *c, gsl_rng *rng, double horizon,
                         const sim_allocator *a, iv_list *l) {
  double t = 0;
  for (;;) {
    t += gsl_ran_exponential(rng, c->mtbf_s);
    if (!(t < horizon))
      return SIM_OK;
    double end = t + gsl_ran_exponential(rng, c->mttr_s);
    int rc = push(a, l, t, fmin(end, horizon));
    if (rc != SIM_OK || !(end < horizon))
      return rc;
    t = end;
  }
}

int fault_expand(const fault_config *c, uint64_t seed, size_t index,
                 double horizon_s, const sim_allocator *a, fault_interval **out,
                 size_t *n) {
  iv_list l = {0};
  int rc = SIM_OK;
  if (fault_is_random(c)) {
    gsl_rng *rng = rng_stream_create(seed, FAULT_RNG_KIND, index, 1);
    rc = rng != NULL ? expand_random(c, rng, horizon_s, a, &l) : SIM_ENOMEM;
    rng_stream_destroy(rng);
  } else if (c->at_s < horizon_s && c->duration_s > 0) {
    rc = push(a, &l, c->at_s, fmin(c->at_s + c->duration_s, horizon_s));
  }
  if (rc == SIM_OK && l.v == NULL && (l.v = sim_alloc(a, sizeof *l.v)) == NULL)
    rc = SIM_ENOMEM; /* an empty result is still something to free */
  if (rc != SIM_OK) {
    sim_free(a, l.v);
    l = (iv_list){0};
  }
  *out = l.v;
  *n = l.n;
  return rc;
}

/* ------------------------------------------------------------------ */
/* Sites                                                               */
/* ------------------------------------------------------------------ */

/* K of "GROUP-K" when name is group g's rack K, else -1. */
static long rack_number(const fault_site *s, size_t g, const char *name) {
  size_t len = strlen(s->groups[g]);
  if (strncmp(name, s->groups[g], len) != 0 || name[len] != '-')
    return -1;
  const char *digits = name + len + 1;
  if (*digits < '0' || *digits > '9' || (digits[0] == '0' && digits[1]))
    return -1; /* as rack_fleet writes them: no sign, no leading zero */
  char *end;
  unsigned long k = strtoul(digits, &end, 10);
  return *end == '\0' && k < s->counts[g] ? (long)k : -1;
}

/* The index of group g's first rack. */
static uint32_t group_base(const fault_site *s, size_t g) {
  uint32_t base = 0;
  for (size_t h = 0; h < g; h++)
    base += s->counts[h];
  return base;
}

/* Group names first: a group called "a-1" is that group, not rack 1 of
 * a group "a". */
bool fault_rack_range(const fault_site *s, const char *name, uint32_t *first,
                      uint32_t *n) {
  for (size_t g = 0; g < s->ngroups; g++)
    if (strcmp(s->groups[g], name) == 0) {
      *first = group_base(s, g);
      *n = s->counts[g];
      return true;
    }
  for (size_t g = 0; g < s->ngroups; g++) {
    long k = rack_number(s, g, name);
    if (k >= 0) {
      *first = group_base(s, g) + (uint32_t)k;
      *n = 1;
      return true;
    }
  }
  return false;
}

long fault_loop_index(const fault_site *s, const char *name) {
  for (size_t l = 0; l < s->nloops; l++)
    if (strcmp(s->loops[l], name) == 0)
      return (long)l;
  return -1;
}

/* ------------------------------------------------------------------ */
/* The plan                                                            */
/* ------------------------------------------------------------------ */

typedef struct entry {
  int kind;
  fault_interval *iv;
  size_t n;
  size_t pos;     /* the first interval not over at the last step */
  size_t counted; /* intervals booked as events */
  bool on;
  uint32_t *first, *count; /* pdu: rack ranges, nranges of them */
  size_t nranges;
  long loop;      /* cooling */
  double share;   /* cooling */
  double limit_w; /* feed */
} entry;

struct fault_plan {
  const sim_allocator *alloc;
  entry *e;
  size_t n;
  bool *dark; /* per rack */
  uint32_t nracks;
  double *share; /* per loop */
  size_t nloops;
  double limit_w;
  size_t active;
  uint64_t events;
};

void fault_plan_destroy(fault_plan *p) {
  if (p == NULL)
    return;
  const sim_allocator *a = p->alloc;
  for (size_t k = 0; p->e != NULL && k < p->n; k++) {
    sim_free(a, p->e[k].iv);
    sim_free(a, p->e[k].first);
  }
  sim_free(a, p->e);
  sim_free(a, p->dark);
  sim_free(a, p->share);
  sim_free(a, p);
}

/* Entry e's racks, from the names of c. */
static int resolve_racks(entry *e, const fault_config *c,
                         const fault_site *site, const sim_allocator *a,
                         sim_error *err) {
  e->first = sim_calloc(a, 2 * c->nracks + 1, sizeof *e->first);
  if (e->first == NULL)
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  e->count = e->first + c->nracks;
  e->nranges = c->nracks;
  for (size_t i = 0; i < c->nracks; i++)
    if (!fault_rack_range(site, c->racks[i], &e->first[i], &e->count[i]))
      return sim_error_set(err, SIM_EINPUT,
                           "fault: no rack or rack group "
                           "is called '%s'",
                           c->racks[i]);
  return SIM_OK;
}

static int make_entry(entry *e, const fault_config *c, uint64_t seed, size_t k,
                      double horizon_s, const fault_site *site,
                      const sim_allocator *a, sim_error *err) {
  *e = (entry){
      .kind = c->kind, .loop = -1, .share = c->capacity, .limit_w = c->limit_w};
  if (fault_expand(c, seed, k, horizon_s, a, &e->iv, &e->n) != SIM_OK)
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  if (c->kind == FAULT_PDU)
    return resolve_racks(e, c, site, a, err);
  if (c->kind == FAULT_COOLING &&
      (e->loop = fault_loop_index(site, c->loop)) < 0)
    return sim_error_set(err, SIM_EINPUT,
                         "fault: no cooling loop is called '%s'", c->loop);
  return SIM_OK;
}

static void rebuild(fault_plan *p);

fault_plan *fault_plan_create(const fault_config *entries, size_t n,
                              uint64_t seed, double horizon_s,
                              const fault_site *site,
                              const sim_allocator *alloc, sim_error *err) {
  fault_plan *p = sim_calloc(alloc, 1, sizeof *p);
  if (p == NULL) {
    sim_error_set(err, SIM_ENOMEM, "out of memory");
    return NULL;
  }
  for (size_t g = 0; g < site->ngroups; g++)
    p->nracks += site->counts[g];
  p->alloc = alloc;
  p->nloops = site->nloops;
  p->limit_w = INFINITY;
  p->e = sim_calloc(alloc, n + 1, sizeof *p->e);
  p->dark = sim_calloc(alloc, p->nracks + 1, sizeof *p->dark);
  p->share = sim_calloc(alloc, p->nloops + 1, sizeof *p->share);
  int rc = p->e && p->dark && p->share
               ? SIM_OK
               : sim_error_set(err, SIM_ENOMEM, "out of memory");
  if (rc == SIM_OK)
    p->n = n; /* zeroed entries free nothing, so destroy is safe now */
  for (size_t k = 0; k < n && rc == SIM_OK; k++)
    rc =
        make_entry(&p->e[k], &entries[k], seed, k, horizon_s, site, alloc, err);
  if (rc != SIM_OK) {
    fault_plan_destroy(p);
    return NULL;
  }
  rebuild(p);
  return p;
}

/* Adds entry e, in force, to what is in force. */
static void impose(fault_plan *p, const entry *e) {
  switch (e->kind) {
  case FAULT_PDU:
    for (size_t i = 0; i < e->nranges; i++)
      for (uint32_t r = e->first[i]; r < e->first[i] + e->count[i]; r++)
        p->dark[r] = true;
    break;
  case FAULT_COOLING:
    p->share[e->loop] = fmin(p->share[e->loop], e->share);
    break;
  default:
    p->limit_w = fmin(p->limit_w, e->limit_w);
  }
}

/* What is in force, from the entries that are. */
static void rebuild(fault_plan *p) {
  memset(p->dark, 0, p->nracks * sizeof *p->dark);
  for (size_t l = 0; l < p->nloops; l++)
    p->share[l] = 1;
  p->limit_w = INFINITY;
  p->active = 0;
  for (size_t k = 0; k < p->n; k++)
    if (p->e[k].on) {
      impose(p, &p->e[k]);
      p->active++;
    }
}

bool fault_plan_step(fault_plan *p, double t_s) {
  bool changed = false;
  for (size_t k = 0; k < p->n; k++) {
    entry *e = &p->e[k];
    while (e->pos < e->n && e->iv[e->pos].end_s <= t_s)
      e->pos++;
    bool on = e->pos < e->n && e->iv[e->pos].start_s <= t_s;
    if (on && e->counted <= e->pos) {
      p->events++;
      e->counted = e->pos + 1;
    }
    changed |= on != e->on;
    e->on = on;
  }
  if (changed)
    rebuild(p);
  return changed;
}

size_t fault_plan_active(const fault_plan *p) { return p->active; }

uint64_t fault_plan_events(const fault_plan *p) { return p->events; }

bool fault_plan_dark(const fault_plan *p, uint32_t r) {
  return r < p->nracks && p->dark[r];
}

double fault_plan_loop_share(const fault_plan *p, size_t l) {
  return l < p->nloops ? p->share[l] : 1;
}

double fault_plan_feed_limit_w(const fault_plan *p) { return p->limit_w; }

const fault_interval *fault_plan_intervals(const fault_plan *p, size_t k,
                                           size_t *n) {
  *n = k < p->n ? p->e[k].n : 0;
  return k < p->n ? p->e[k].iv : NULL;
}
