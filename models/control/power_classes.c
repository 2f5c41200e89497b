/* power_classes.c - the efficiency policy's units in runs and classes
 * (power_level.h's power__level_init), and the memo that keeps their
 * arrays from split to split (power_memo_ready, power_memo_clear): what
 * power_efficiency.c's level is searched over. The classes are found
 * through a hash on their clock inputs and range, in few slots where a
 * group has few classes (power_work.few). */
#include "power.h"
#include "power_level.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "alloc.h"
#include "bits.h"
#include "lanes.h"

/* The slots of the hash of a group of few classes (power_work.few_slot):
 * eight cache lines, where the hash of 2n slots for n units (bench-10k's
 * fluid groups: 4,096 and 512) put each class's first probe on a line
 * of its own, which the tick's other work had pushed out of the cache
 * since the split before (perf: 18% of power_split_efficiency_from's
 * samples on that load). */
#define FEW_SLOTS 64
/* Classes at most in the split before for which a split probes the few
 * slots: twice as many fit before their load passes a half. */
#define FEW_CLASSES (FEW_SLOTS / 4)

/* What a memo keeps from call to call (power_memo.work): the level's
 * arrays, grown when a group has more units than before and never zeroed
 * again. A slot of the class hash holds the call's generation in its
 * high half and a class + 1 in its low: a slot of an earlier call reads
 * as empty, so the hash needs no clearing either. Both tables (slot,
 * few_slot) share the generation. */
struct power_work {
  double *d;
  size_t *z;
  bool *b;
  uint64_t *slot;
  size_t n, size; /* the units the arrays hold; the hash's slots */
  uint64_t gen;
  /* Whether the last split's runs were more than twice its classes:
   * then this one's try the run before's class first (class_of; the
   * fluid mode's group of 66 runs has some 12 classes, while the
   * request level's runs are mostly of other classes than their
   * neighbours', where a try would cost a failed compare a run). */
  bool runs_share;
  /* Whether this split probes few_slot first: the split before had at
   * most FEW_CLASSES classes (the fluid mode's groups: 3 and some 12).
   * Past half of them, the split goes on in slot (class_of). */
  bool few;
  size_t classes; /* the last split's */
  uint64_t few_slot[FEW_SLOTS];
};

bool power_memo_ready(const power_memo *memo, size_t n) {
  const struct power_work *w = memo->work;
  size_t size = 2; /* level_init's */
  while (size < 2 * n)
    size *= 2;
  /* work_grow then makes nothing, so level_alloc cannot fail */
  return n < UINT32_MAX && w != NULL && w->d != NULL && w->n >= n &&
         w->slot != NULL && w->size >= size;
}

void power_memo_clear(power_memo *memo) {
  struct power_work *w = memo->work;
  if (w == NULL)
    return;
  sim_free(NULL, w->d);
  sim_free(NULL, w->z);
  sim_free(NULL, w->b);
  sim_free(NULL, w->slot);
  sim_free(NULL, w);
  memo->work = NULL;
}


/* same_clock's fields, seven doubles side by side in power_unit. */
#define CLOCK_FIELDS_AT offsetof(power_unit, weight)
_Static_assert(offsetof(power_unit, c) == CLOCK_FIELDS_AT + 8 &&
                   offsetof(power_unit, idle) == CLOCK_FIELDS_AT + 16 &&
                   offsetof(power_unit, span) == CLOCK_FIELDS_AT + 24 &&
                   offsetof(power_unit, activity) == CLOCK_FIELDS_AT + 32 &&
                   offsetof(power_unit, gamma) == CLOCK_FIELDS_AT + 40 &&
                   offsetof(power_unit, phi_min) == CLOCK_FIELDS_AT + 48,
               "same_clock reads the clock's fields as pairs");

/* Whether two units' clocks are the same function of the level: their
 * seven clock fields equal (==), two a compare (a lane's == is the
 * scalar's), the last pair overlapping so no read passes the unit. */
static inline bool same_clock(const power_unit *a, const power_unit *b) {
  const char *x = (const char *)a + CLOCK_FIELDS_AT;
  const char *y = (const char *)b + CLOCK_FIELDS_AT;
  sim_i2 eq = (sim_d2_at(x) == sim_d2_at(y)) &
              (sim_d2_at(x + 16) == sim_d2_at(y + 16)) &
              (sim_d2_at(x + 32) == sim_d2_at(y + 32)) &
              (sim_d2_at(x + 40) == sim_d2_at(y + 40));
  return (eq[0] & eq[1]) != 0;
}

/* The memo's arrays, grown for n units (the hash's slots zeroed when
 * new); false when out of memory. */
static bool work_grow(struct power_work *w, size_t n, size_t size) {
  if (n > w->n || w->d == NULL) {
    sim_free(NULL, w->d);
    sim_free(NULL, w->z);
    sim_free(NULL, w->b);
    w->d = sim_alloc(NULL, (19 * n + 19) * sizeof *w->d);
    w->z = sim_alloc(NULL, (6 * n + 6) * sizeof *w->z);
    w->b = sim_alloc(NULL, (n + 1) * sizeof *w->b);
    w->n = w->d != NULL && w->z != NULL && w->b != NULL ? n : 0;
    if (w->n != n)
      return false;
  }
  if (size > w->size || w->slot == NULL) {
    sim_free(NULL, w->slot);
    w->slot = sim_calloc(NULL, size, sizeof *w->slot);
    w->size = w->slot != NULL ? size : 0;
    w->gen = 0; /* the few slots' generations start again too */
    memset(w->few_slot, 0, sizeof w->few_slot);
    if (w->slot == NULL)
      return false;
  }
  if (++w->gen >> 32 != 0) { /* the generations wrapped: clear */
    memset(w->slot, 0, w->size * sizeof *w->slot);
    memset(w->few_slot, 0, sizeof w->few_slot);
    w->gen = 1;
  }
  return true;
}

/* Points the level's arrays into the memo's (made when it has none);
 * false when out of memory. */
static bool level_alloc(level *l, power_memo *memo, size_t size) {
  if (memo->work == NULL)
    memo->work = sim_calloc(NULL, 1, sizeof *memo->work);
  struct power_work *w = memo->work;
  if (w == NULL || !work_grow(w, l->n, size))
    return false;
  size_t n = l->n;
  double *d = w->d;
  l->cap = d, l->ds = d + n + 1, l->gpus = d + 2 * n + 2;
  l->klo = d + 3 * n + 3, l->kwant = d + 4 * n + 4, l->rcap = d + 5 * n + 5;
  l->spare = d + 6 * n + 6, l->rgpus = d + 9 * n + 9;
  l->mu_one = d + 10 * n + 10, l->cap_one = d + 11 * n + 11;
  l->mu_low = d + 12 * n + 12, l->cap_low = d + 13 * n + 13;
  l->good_cap = d + 14 * n + 14;
  l->kraw = d + 15 * n + 15, l->kdyn = d + 16 * n + 16;
  l->ke = d + 17 * n + 17, l->kmu = d + 18 * n + 18;
  l->rep = w->z, l->rcls = w->z + n + 1;
  l->runs.first = w->z + 2 * n + 2, l->runs.len = w->z + 3 * n + 3;
  l->live = w->z + 4 * n + 4, l->good_live = w->z + 5 * n + 5;
  l->valued = w->b;
  return true;
}

/* Whether unit u belongs to class k: valued or not as it is, its range
 * the same bits, and if valued its clock the same function. */
static inline bool in_class(const level *l, size_t k, size_t u, bool val, double lo,
                     double want) {
  return l->valued[k] == val && sim_same_bits(l->klo[k], lo) &&
         sim_same_bits(l->kwant[k], want) &&
         (!val || same_clock(&l->units[l->rep[k]], &l->units[u]));
}

/* Whether unit p belongs to class k when k is valued: in_class without
 * valued(p), which a unit of the same clock function as k's first has
 * (its inputs are same_clock's fields, equal), nor its want worked out
 * unless the rest holds. */
static inline bool in_valued_class(const level *l, size_t k, const power_unit *p) {
  return l->valued[k] && sim_same_bits(l->klo[k], p->lo) &&
         same_clock(&l->units[l->rep[k]], p) &&
         sim_same_bits(l->kwant[k], wanted(p));
}

/* The hash of a class's key, its clock inputs and range (a unit's
 * valued or not, lo, and want when valued): its first slot in a table
 * of a power of two slots is the low bits. */
static inline size_t class_hash(const power_unit *p, bool val, double lo,
                                double want) {
  uint64_t h;
  double key = val ? p->activity + 7 * p->weight + 13 * p->c + want : lo;
  memcpy(&h, &key, sizeof h);
  h *= 0x9e3779b97f4a7c15ULL;
  return (size_t)(h >> 32);
}

/* The table a split probes: its slots, mask + 1 of them (a power of
 * two, under half of them taken), and the generation marking this
 * split's. */
typedef struct slots {
  uint64_t *slot, gen;
  size_t mask;
} slots;

/* The classes made so far put in the memo's slots at their hashes (a
 * split whose classes outgrow the few slots), returned: each class is
 * its own, so none is compared. */
static __attribute__((noinline)) slots classes_to_slots(const level *l,
                                                        struct power_work *w) {
  size_t mask = w->size - 1;
  for (size_t k = 0; k < l->nclass; k++) {
    const power_unit *p = &l->units[l->rep[k]];
    size_t i = class_hash(p, l->valued[k], l->klo[k], l->kwant[k]) & mask;
    while (w->slot[i] >> 32 == w->gen)
      i = (i + 1) & mask;
    w->slot[i] = w->gen << 32 | (uint64_t)(k + 1);
  }
  return (slots){w->slot, w->gen, mask};
}

/* The last class without measured work a split found (k SIZE_MAX:
 * none yet) and its lo's bits, its key: such a class is its units' lo
 * alone (their want is lo), so a unit without work of that lo is of it,
 * the class the hash would find (one class a key). At the request level
 * the idle replicas (some 340 of the large group's 1,139 runs at its
 * peak) are one class among the busy ones' own, in no order: their
 * probes, the hash's slot found taken a time in three, mispredicted its
 * branch after the hash's whole chain of adds, product and load (perf:
 * a quarter to a half of power__level_init's samples on that load);
 * valued(), from the unit's fields alone, resolves sooner. class_of
 * asks it after the run before's class (the fluid mode's groups: their
 * runs mostly of their neighbour's class, and no idle run). */
typedef struct idle_class {
  size_t k;
  uint64_t lo;
} idle_class;

/* Class k, found or made by the hash, noted where it has no work. */
static inline size_t idle_note(const level *l, idle_class *idle, size_t k) {
  if (!l->valued[k])
    *idle = (idle_class){k, sim_bits(l->klo[k])};
  return k;
}

/* The class of unit u through a hash on its clock inputs and range (open
 * addressing in t), made if new; with few (t the few slots until they
 * hold half their number of classes), a new class past that half first
 * moves the classes to the memo's slots (so a probe always ends).
 * The run before's class, prev (SIZE_MAX: none, or not tried: see
 * power_work.runs_share), is tried first where valued: in the fluid mode
 * most runs are of their neighbour's class (a service's replicas apart
 * by their GPUs alone: bench-10k's group of 66 runs, some 12 classes),
 * and a class is in_class's equivalence class
 * (same bits, or == on values that are neither NaN nor zero: a unit of
 * it hashes to its slot), so no other class holds u: the hash's answer,
 * in whichever table it probes. So is the last idle class (idle; NULL:
 * not tried) for a unit without work of its lo. */
static inline __attribute__((always_inline)) size_t
class_of(level *l, struct power_work *w, slots *t, size_t u, size_t prev,
         bool few, const idle_class *idle) {
  const power_unit *p = &l->units[u];
  if (prev != SIZE_MAX && in_valued_class(l, prev, p))
    return prev;
  bool val = valued(p);
  if (!val && idle != NULL && idle->k != SIZE_MAX &&
      sim_bits(p->lo) == idle->lo) /* the last idle class's */
    return idle->k;
  double lo = p->lo, want = val ? wanted(p) : lo;
  size_t h = class_hash(p, val, lo, want), i = h & t->mask;
  for (; t->slot[i] >> 32 == t->gen; i = (i + 1) & t->mask) {
    size_t k = (size_t)(t->slot[i] & 0xffffffffu) - 1;
    if (in_class(l, k, u, val, lo, want))
      return k;
  }
  if (few && 2 * (l->nclass + 1) > FEW_SLOTS && t->slot == w->few_slot) {
    *t = classes_to_slots(l, w); /* u's class is none of them */
    for (i = h & t->mask; t->slot[i] >> 32 == t->gen; i = (i + 1) & t->mask)
      ;
  }
  size_t k = l->nclass++;
  l->rep[k] = u;
  l->valued[k] = val;
  l->gpus[k] = 0;
  l->klo[k] = lo;
  l->kwant[k] = want;
  l->cap[k] = lo; /* what it stays at unless valued */
  l->ds[k] = 0;
  l->mu_one[k] = 0;
  l->mu_low[k] = INFINITY;
  l->kmu[k] = NAN; /* no clock worked out in this split yet */
  t->slot[i] = t->gen << 32 | (uint64_t)(k + 1);
  return k;
}

/* How many units from u on (0 < u <= n) the caller marks alike the one
 * before (split_from's alike): the first 0 byte, found as memchr finds
 * it, many a step; the units themselves are not read. The first byte is
 * tested first: at request level most runs are one unit, whose memchr
 * call cost some twenty instructions to find the byte at once. */
static size_t marked_from(const uint8_t *alike, size_t u, size_t n) {
  if (u >= n || alike[u] == 0)
    return 0;
  const uint8_t *end = memchr(alike + u + 1, 0, n - u - 1);
  return end != NULL ? (size_t)(end - (alike + u)) : n - u;
}

/* The runs and their classes, through the few slots (few) or all the
 * memo's. Each table's loop is its own copy (always inline): the
 * request level's groups of many classes probe the memo's slots with no
 * test of the few slots' room. Returns the runs made. */
static inline __attribute__((always_inline)) size_t
runs_made(level *l, struct power_work *w, const uint8_t *alike, bool few) {
  /* In locals: the stores to the runs' arrays (size_t) might otherwise
   * be to l->n, read again every run. */
  size_t *first = (size_t *)l->runs.first, *len = (size_t *)l->runs.len;
  size_t *rcls = l->rcls, k = SIZE_MAX, nrun = 0;
  const size_t n = l->n;
  double *rgpus = l->rgpus, *gpus = l->gpus;
  const bool try_prev = w->runs_share; /* the last split's */
  slots t = few ? (slots){w->few_slot, w->gen, FEW_SLOTS - 1}
                : (slots){w->slot, w->gen, w->size - 1};
  idle_class idle = {SIZE_MAX, 0};
  const bool idle_off = power__plain & POWER_PLAIN_IDLE_CLASS;
  for (size_t u = 0, m; u < n; u += m, nrun++) {
    m = 1 + (alike != NULL ? marked_from(alike, u + 1, n)
                           : power_alike_from(l->units, u + 1, n));
    first[nrun] = u;
    len[nrun] = m;
    k = class_of(l, w, &t, u, try_prev ? k : SIZE_MAX, few,
                 idle_off ? NULL : &idle);
    k = rcls[nrun] = idle_note(l, &idle, k);
    rgpus[nrun] = l->units[u].n;
    gpus[k] += rgpus[nrun] * (double)m; /* whole numbers: exact */
  }
  return nrun;
}

/* The memo's hash asked for whole, line by line: a split probes it at
 * random (a run's class at its hash), once a period, and the tick's
 * other work has pushed it out of the caches since (the request level's
 * group of 2,039 units: 4,096 slots, 32 KB), so each probe waited on
 * memory (perf: over half of power__level_init's samples on the first
 * probe's load). Asked for in a row, the lines come in together; the
 * control asks while it builds the units (power_memo_ask). A split of
 * few classes probes the few slots, in the memo itself, alone. */
void power_memo_ask(const power_memo *memo) {
  const struct power_work *w = memo->work;
  if (w == NULL || w->slot == NULL || w->few)
    return;
  const char *p = (const char *)w->slot;
  size_t bytes = w->size * sizeof *w->slot;
  for (size_t b = 0; b < bytes; b += 64)
    __builtin_prefetch(p + b, 1, 3);
  __builtin_prefetch(p + bytes - 1, 1, 3); /* the last line, unaligned */
}

void power__level_init(level *l, power_memo *memo, double *cap,
                       const uint8_t *alike) {
  size_t size = 2;
  while (size < 2 * l->n)
    size *= 2;
  if (l->n >= UINT32_MAX || !level_alloc(l, memo, size)) {
    l->runs = (power_runs){l->n, NULL, NULL};
    l->rcls = NULL;
    l->rcap = cap;
    return;
  }
  struct power_work *w = memo->work;
  l->nclass = 0;
  size_t nrun =
      w->few ? runs_made(l, w, alike, true) : runs_made(l, w, alike, false);
  l->runs.n = nrun;
  w->runs_share = 2 * l->nclass < nrun;
  w->classes = l->nclass;
  w->few = l->nclass <= FEW_CLASSES;
}

size_t power__memo_classes(const power_memo *memo) {
  return memo->work != NULL ? memo->work->classes : 0;
}
