/* steer.c - power groups and the load target (steer.h): the groups'
 * budgets at each allocation, and the target in force.
 *
 * What a cap holds back of a group's share goes to the other groups'
 * own budgets, in proportion to their shares (water-filling: none above
 * its cap), so it is theirs to use or to lend. The pool a borrower draws
 * on is the unused own budgets of lending groups of its priority or
 * lower. Borrowers are served a priority level at a time, highest first,
 * each level's in proportion to what they ask when the pool is short, so
 * the order groups are listed in never matters. Lenders give from the
 * lowest priority up (within a level, in proportion to what each
 * leaves): a higher-priority lender keeps its headroom longest. */
#include "steer.h"

#include <math.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* The shares (pure)                                                   */
/* ------------------------------------------------------------------ */

/* A group's cap as the water-filling sees it: never below its floor. */
static double cap_of(const steer_need *g) {
  return isnan(g->cap) ? INFINITY : fmax(g->cap, g->floor);
}

/* The level l >= 1 at which the uncapped groups' shares, scaled by l,
 * take up what the caps hold back: sum min(cap, l share) = sum share.
 * Groups fixed at their caps are found in rounds, at most n. INFINITY
 * when every group with a share is at its cap (the rest is then left). */
static double fill_level(const steer_need *need, size_t n) {
  double total = 0, l = 1;
  for (size_t p = 0; p < n; p++)
    total += need[p].share;
  for (size_t round = 0; round <= n; round++) {
    double fixed = 0, free_share = 0;
    for (size_t p = 0; p < n; p++)
      if (cap_of(&need[p]) < l * need[p].share)
        fixed += cap_of(&need[p]);
      else
        free_share += need[p].share;
    if (!(free_share > 0))
      return INFINITY;
    double next = fmax(1, (total - fixed) / free_share);
    if (next == l)
      break;
    l = next;
  }
  return l;
}

/* Each group's own budget (its share, at most its cap, with what caps
 * hold back spread over the others in proportion to their shares), what
 * it leaves to lend and what it asks. */
static void own_budgets(const steer_need *need, size_t n, double *own,
                        double *spare, double *ask) {
  double l = fill_level(need, n);
  for (size_t p = 0; p < n; p++) {
    const steer_need *g = &need[p];
    double scaled = isinf(l) ? INFINITY : l * g->share;
    own[p] = g->share > 0 ? fmin(cap_of(g), scaled) : 0;
    spare[p] = g->lend ? fmax(0, own[p] - g->want) : 0;
    ask[p] = g->borrow ? fmax(0, g->want - own[p]) : 0;
  }
}

/* The highest priority below *level among groups that ask; false when
 * none is left. */
static bool next_level(const steer_need *need, const double *ask, size_t n,
                       int64_t *level) {
  bool found = false;
  int64_t best = INT64_MIN;
  for (size_t p = 0; p < n; p++)
    if (ask[p] > 0 && need[p].priority < *level &&
        (!found || need[p].priority > best))
      found = true, best = need[p].priority;
  *level = best;
  return found;
}

/* The lenders' spare at priority m exactly, and below or at level. */
static double spare_at(const steer_need *need, const double *spare, size_t n,
                       int64_t m, bool at_most) {
  double sum = 0;
  for (size_t q = 0; q < n; q++)
    if (at_most ? need[q].priority <= m : need[q].priority == m)
      sum += spare[q];
  return sum;
}

/* Takes rest from the lenders at priority level or lower, lowest first. */
static void take_from_lenders(const steer_need *need, size_t n, int64_t level,
                              double rest, double *spare, double *budget) {
  int64_t m = INT64_MIN;
  while (rest > 0) {
    bool found = false; /* the lowest lending priority above m */
    int64_t low = INT64_MAX;
    for (size_t q = 0; q < n; q++)
      if (spare[q] > 0 && need[q].priority > m && need[q].priority <= level &&
          need[q].priority < low)
        found = true, low = need[q].priority;
    if (!found)
      return;
    double at = spare_at(need, spare, n, low, false), t = fmin(rest, at);
    for (size_t q = 0; q < n; q++)
      if (need[q].priority == low && spare[q] > 0) {
        double part = t * (spare[q] / at);
        budget[q] -= part;
        spare[q] = fmax(0, spare[q] - part); /* never below by rounding */
      }
    rest -= t;
    m = low;
  }
}

void steer_share(const steer_need *need, size_t n, double *budget,
                 double *own) {
  double own_v[STEER_MAX_GROUPS], spare[STEER_MAX_GROUPS],
      ask[STEER_MAX_GROUPS];
  own_budgets(need, n, own_v, spare, ask);
  memcpy(budget, own_v, n * sizeof *budget);
  if (own != NULL)
    memcpy(own, own_v, n * sizeof *own);
  int64_t level = INT64_MAX;
  while (next_level(need, ask, n, &level)) {
    double avail = spare_at(need, spare, n, level, true), total = 0;
    for (size_t p = 0; p < n; p++)
      total += need[p].priority == level ? ask[p] : 0;
    double give = fmax(0, fmin(avail, total));
    for (size_t p = 0; p < n; p++)
      if (need[p].priority == level && ask[p] > 0)
        budget[p] += give * (ask[p] / total);
    take_from_lenders(need, n, level, give, spare, budget);
  }
}

void steer_spread(double budget, const double *f, const double *w,
                  const double *h, const double *s, size_t k, double *out) {
  double F = 0, W = 0, H = 0, S = 0;
  for (size_t i = 0; i < k; i++)
    F += f[i], W += w[i], H += h[i], S += s[i];
  for (size_t i = 0; i < k; i++) {
    if (budget < W) /* W > F here: budget >= F */
      out[i] = f[i] + (budget - F) * ((w[i] - f[i]) / (W - F));
    else if (H > W)
      out[i] = w[i] + (budget - W) * ((h[i] - w[i]) / (H - W));
    else
      out[i] = w[i] + (budget - W) * (S > 0 ? s[i] / S : 1.0 / (double)k);
  }
}

/* ------------------------------------------------------------------ */
/* The state of a run                                                  */
/* ------------------------------------------------------------------ */

struct steer {
  const power_group_config *cfg;
  size_t n; /* power groups */
  const power_target_step *target;
  size_t ntarget;
  double target_set; /* a client's; NaN: the scenario's */
  const sim_allocator *a;
  size_t nrg;           /* rack groups */
  int *group_of;        /* per rack group: its power group, -1: none */
  size_t *member;       /* rack groups by power group ... */
  size_t *member_first; /* ... those of p: [first[p], first[p + 1]) */
  double *cap_set;      /* per group: a client's cap; NaN: the scenario's */
  bool *borrow, *lend;
  steer_need *need;
  double *budget, *own;
  double *f, *w, *h, *s, *out; /* per rack group, in member order */
  const char **names;
};

void steer_destroy(steer *s) {
  if (s == NULL)
    return;
  const sim_allocator *a = s->a;
  void *arrays[] = {
      s->group_of, s->member, s->member_first, s->cap_set, s->borrow, s->lend,
      s->need,     s->budget, s->own,          s->f,       s->w,      s->h,
      s->s,        s->out,    s->names};
  for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
    sim_free(a, arrays[i]);
  sim_free(a, s);
}

static bool alloc_arrays(steer *s) {
  const sim_allocator *a = s->a;
  size_t n = s->n + 1, g = s->nrg + 1;
  s->group_of = sim_calloc(a, g, sizeof *s->group_of);
  s->member = sim_calloc(a, g, sizeof *s->member);
  s->member_first = sim_calloc(a, n + 1, sizeof *s->member_first);
  s->cap_set = sim_calloc(a, n, sizeof *s->cap_set);
  s->borrow = sim_calloc(a, n, sizeof *s->borrow);
  s->lend = sim_calloc(a, n, sizeof *s->lend);
  s->need = sim_calloc(a, n, sizeof *s->need);
  s->budget = sim_calloc(a, n, sizeof *s->budget);
  s->own = sim_calloc(a, n, sizeof *s->own);
  s->names = sim_calloc(a, n, sizeof *s->names);
  double **per_rg[] = {&s->f, &s->w, &s->h, &s->s, &s->out};
  bool ok = true;
  for (size_t i = 0; i < 5; i++)
    ok = (*per_rg[i] = sim_calloc(a, g, sizeof(double))) != NULL && ok;
  return ok && s->group_of && s->member && s->member_first && s->cap_set &&
         s->borrow && s->lend && s->need && s->budget && s->own && s->names;
}

/* Rack group g's power group by name (the scenario check made sure each
 * name is a rack group and in one power group at most). */
static int group_by_name(const steer *s, const char *rack_group) {
  for (size_t p = 0; p < s->n; p++)
    for (size_t r = 0; r < s->cfg[p].nracks; r++)
      if (strcmp(s->cfg[p].racks[r], rack_group) == 0)
        return (int)p;
  return -1;
}

static void index_members(steer *s, const rack_fleet *fl) {
  size_t k = 0;
  for (size_t g = 0; g < s->nrg; g++)
    s->group_of[g] = group_by_name(s, fl->groups[g].name);
  for (size_t p = 0; p < s->n; p++) {
    s->member_first[p] = k;
    for (size_t g = 0; g < s->nrg; g++)
      if (s->group_of[g] == (int)p)
        s->member[k++] = g;
    s->cap_set[p] = NAN;
    s->borrow[p] = s->cfg[p].borrow;
    s->lend[p] = s->cfg[p].lend;
    s->names[p] = s->cfg[p].name;
    s->budget[p] = s->own[p] = NAN;
  }
  s->member_first[s->n] = k;
}

steer *steer_create(const power_group_config *groups, size_t ngroups,
                    const power_target_step *target, size_t ntarget,
                    const rack_fleet *fl, const sim_allocator *a,
                    sim_error *err) {
  steer *s = sim_calloc(a, 1, sizeof *s);
  if (s == NULL) {
    sim_error_set(err, SIM_ENOMEM, "out of memory");
    return NULL;
  }
  *s = (steer){.cfg = groups,
               .n = ngroups,
               .target = target,
               .ntarget = ntarget,
               .target_set = NAN,
               .a = a,
               .nrg = fl->ngroups};
  if (!alloc_arrays(s)) {
    steer_destroy(s);
    sim_error_set(err, SIM_ENOMEM, "out of memory");
    return NULL;
  }
  index_members(s, fl);
  return s;
}

bool steer_active(const steer *s) { return s->n > 0; }

/* Rack group g's floor, want and top from its units. */
static void rack_group_need(const power_unit *u, size_t n, double *f, double *w,
                            double *h) {
  *f = *w = *h = 0;
  for (size_t k = 0; k < n; k++) {
    double want = fmin(u[k].hi, fmax(u[k].lo, u[k].demand));
    *f += u[k].n * u[k].lo;
    *w += u[k].n * want;
    *h += u[k].n * u[k].hi;
  }
}

/* Group p's need: its members' sums, its cap and flags in force. */
static steer_need group_need(steer *s, size_t p, const power_unit *units,
                             const size_t *first, const double *alloc) {
  const power_group_config *c = &s->cfg[p];
  double cap = isnan(s->cap_set[p]) ? c->cap_w : s->cap_set[p];
  steer_need need = {.cap = isinf(cap) ? NAN : cap,
                     .priority = c->priority,
                     .borrow = s->borrow[p],
                     .lend = s->lend[p]};
  for (size_t k = s->member_first[p]; k < s->member_first[p + 1]; k++) {
    size_t g = s->member[k];
    rack_group_need(units + first[g], first[g + 1] - first[g], &s->f[k],
                    &s->w[k], &s->h[k]);
    s->s[k] = alloc[g];
    need.share += s->s[k];
    need.floor += s->f[k];
    need.want += s->w[k];
  }
  return need;
}

void steer_budgets(steer *s, const power_unit *units, const size_t *first,
                   double *alloc_budget) {
  for (size_t p = 0; p < s->n; p++)
    s->need[p] = group_need(s, p, units, first, alloc_budget);
  steer_share(s->need, s->n, s->budget, s->own);
  for (size_t p = 0; p < s->n; p++) {
    size_t k0 = s->member_first[p], k = s->member_first[p + 1] - k0;
    steer_spread(s->budget[p], s->f + k0, s->w + k0, s->h + k0, s->s + k0, k,
                 s->out + k0);
    for (size_t i = 0; i < k; i++)
      alloc_budget[s->member[k0 + i]] = s->out[k0 + i];
  }
}

size_t steer_ngroups(const steer *s) { return s->n; }

const char *steer_group_name(const steer *s, size_t p) {
  return p < s->n ? s->cfg[p].name : NULL;
}

const char *const *steer_group_names(const steer *s) { return s->names; }

int steer_group_of(const steer *s, size_t g) {
  return g < s->nrg ? s->group_of[g] : -1;
}

void steer_group_state(const steer *s, size_t p, steer_group_now *out) {
  double cap = isnan(s->cap_set[p]) ? s->cfg[p].cap_w : s->cap_set[p];
  *out = (steer_group_now){.cap_w = isinf(cap) ? NAN : cap,
                           .own_w = s->own[p],
                           .budget_w = s->budget[p],
                           .want_w = s->need[p].want};
}

void steer_set_cap(steer *s, size_t p, double cap_w) { s->cap_set[p] = cap_w; }

void steer_set_lending(steer *s, size_t p, bool borrow, bool lend) {
  s->borrow[p] = borrow;
  s->lend[p] = lend;
}

double steer_target(const steer *s, double t) {
  if (!isnan(s->target_set))
    return isinf(s->target_set) ? NAN : s->target_set;
  double w = NAN;
  for (size_t k = 0; k < s->ntarget && s->target[k].from_s <= t; k++)
    w = s->target[k].target_w;
  return w;
}

bool steer_has_target(const steer *s) { return s->ntarget > 0; }

void steer_set_target(steer *s, double target_w) { s->target_set = target_w; }
