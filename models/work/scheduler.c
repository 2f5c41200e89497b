/* scheduler.c - the training-job queue and gang placement (docs/MODELS.md, Scheduler).
 *
 * Free GPUs. Bit g of free_bits is set when GPU g lies in a rack and is
 * not taken; rack_free[r] and dom_free[d] count the set bits of rack r and
 * of NVLink domain d (a rack's domains are numbered from dom_first[r]).
 * Every place and release changes the three together. GPUs in no rack are
 * never free, so they are never placed. The counts let placement decide
 * from racks and domains alone, without looking at a GPU; the bits let it
 * write a domain's part a 64-GPU word at a time, O(n + domain / 64).
 * The racks' distinct types are classes: type_free[c] counts class c's
 * free GPUs, and the domains sit in buckets by free count per class
 * (scheduler_fit.h), so a placement that fits a domain finds it without
 * a scan of the racks (O(replicas x racks) for a whole fleet before).
 *
 * The queue is an array kept sorted by (priority desc, arrival asc,
 * submission asc): a submit inserts in O(queue), a pass compacts it once.
 * The scratch arrays are sized at creation, so a pass never allocates and
 * cannot fail on its own. */
#include "scheduler.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler_fit.h"
#include "vec.h"

#define NO_RACK UINT32_MAX

/* A rack, or a domain within its rack, as placement weighs it. */
typedef struct slot {
  uint32_t index;
  uint32_t free;
  uint32_t take;
} slot;

typedef struct entry {
  sched_job job;
  uint64_t seq; /* submission order, the last tie-break */
} entry;

struct sched {
  const sim_allocator *alloc; /* what the arrays live on */
  sched_rack *racks;
  size_t nracks;
  uint32_t ngpus;
  sched_policy policy;
  sched_admission admission;
  uint64_t *free_bits; /* bit g: GPU g is in a rack and free */
  uint32_t *rack_of;   /* GPU -> rack, NO_RACK outside every rack */
  uint32_t *rack_free; /* free GPUs per rack */
  uint32_t *dom_first; /* rack r's domains are dom_first[r] ... */
  uint32_t *dom_free;  /* free GPUs per NVLink domain */
  uint32_t *dom_rack;  /* NVLink domain -> its rack */
  uint32_t *types;     /* the racks' distinct types, in order of first rack */
  uint32_t *type_free; /* free GPUs of each of types */
  uint32_t *rack_cls;  /* rack -> its type's place in types */
  size_t ntypes;
  sched_fit *fit;      /* the domains by free GPUs, a class per type */
  slot *rack_slots;    /* placement scratch, one per rack */
  slot *dom_slots;     /* placement scratch, one per domain of a rack */
  uint32_t *gang;      /* a pass's placement, up to ngpus */
  sched_running *run;  /* a pass's running jobs, up to run_cap */
  size_t run_cap;
  entry *queue; /* sorted; len used of cap */
  size_t len, cap;
  uint64_t next_seq;
};

/* ---- Creation ------------------------------------------------------- */

static int check_rack(const sched_rack *r, size_t i, uint32_t ngpus,
                      sim_error *err) {
  uint64_t end = (uint64_t)r->first + r->count;
  if (r->count == 0)
    return sim_error_set(err, SIM_EINPUT, "rack %zu has no GPUs", i);
  if (r->domain == 0 || r->count % r->domain != 0)
    return sim_error_set(err, SIM_EINPUT,
                         "rack %zu: an NVLink domain of %u GPUs does not "
                         "divide its %u GPUs",
                         i, r->domain, r->count);
  if (end > ngpus)
    return sim_error_set(err, SIM_EINPUT,
                         "rack %zu: GPUs %u..%llu lie past the %u GPUs", i,
                         r->first, (unsigned long long)end - 1, ngpus);
  if (r->type == SCHED_ANY_TYPE)
    return sim_error_set(err, SIM_EINPUT,
                         "rack %zu: type %u is reserved for any type", i,
                         r->type);
  return SIM_OK;
}

/* calloc on the scheduler's allocator that does not return NULL for an
 * empty array. */
static void *alloc_n(const sched *s, size_t n, size_t size) {
  return sim_calloc(s->alloc, n > 0 ? n : 1, size);
}

/* Copies the racks and allocates the counts and scratch arrays. */
static int alloc_arrays(sched *s, const sched_rack *racks) {
  s->racks = alloc_n(s, s->nracks, sizeof *s->racks);
  if (s->racks == NULL)
    return SIM_ENOMEM;
  if (s->nracks > 0)
    memcpy(s->racks, racks, s->nracks * sizeof *racks);
  size_t ndom = 0, most = 0;
  for (size_t r = 0; r < s->nracks; r++) {
    size_t d = s->racks[r].count / s->racks[r].domain;
    ndom += d;
    most = d > most ? d : most;
  }
  s->free_bits = alloc_n(s, (s->ngpus + 63) / 64, sizeof *s->free_bits);
  s->rack_of = alloc_n(s, s->ngpus, sizeof *s->rack_of);
  s->rack_free = alloc_n(s, s->nracks, sizeof *s->rack_free);
  s->dom_first = alloc_n(s, s->nracks, sizeof *s->dom_first);
  s->dom_free = alloc_n(s, ndom, sizeof *s->dom_free);
  s->dom_rack = alloc_n(s, ndom, sizeof *s->dom_rack);
  s->types = alloc_n(s, s->nracks, sizeof *s->types);
  s->type_free = alloc_n(s, s->nracks, sizeof *s->type_free);
  s->rack_cls = alloc_n(s, s->nracks, sizeof *s->rack_cls);
  s->rack_slots = alloc_n(s, s->nracks, sizeof *s->rack_slots);
  s->dom_slots = alloc_n(s, most, sizeof *s->dom_slots);
  s->gang = alloc_n(s, s->ngpus, sizeof *s->gang);
  /* Each running job holds a GPU at least, so ngpus of them is enough. */
  s->run_cap = s->ngpus;
  s->run = alloc_n(s, s->run_cap, sizeof *s->run);
  bool ok = s->free_bits && s->rack_of && s->rack_free && s->dom_first &&
            s->dom_free && s->rack_slots && s->dom_slots && s->gang &&
            s->run && s->dom_rack && s->types && s->type_free && s->rack_cls;
  return ok ? SIM_OK : SIM_ENOMEM;
}

/* Claims rack r's GPUs in rack_of (refusing a GPU already claimed) and
 * marks them free. */
static int map_rack(sched *s, uint32_t r, uint32_t dom, sim_error *err) {
  const sched_rack *k = &s->racks[r];
  for (uint32_t g = k->first; g < k->first + k->count; g++) {
    if (s->rack_of[g] != NO_RACK)
      return sim_error_set(err, SIM_EINPUT, "racks %u and %u overlap at GPU %u",
                           s->rack_of[g], r, g);
    s->rack_of[g] = r;
    s->free_bits[g / 64] |= UINT64_C(1) << (g % 64);
  }
  s->rack_free[r] = k->count;
  s->dom_first[r] = dom;
  for (uint32_t d = 0; d < k->count / k->domain; d++) {
    s->dom_free[dom + d] = k->domain;
    s->dom_rack[dom + d] = r;
  }
  size_t c = 0;
  while (c < s->ntypes && s->types[c] != k->type)
    c++;
  if (c == s->ntypes)
    s->types[s->ntypes++] = k->type;
  s->rack_cls[r] = (uint32_t)c;
  s->type_free[c] += k->count;
  return SIM_OK;
}

/* The buckets of domains, once map_racks has counted them. */
static int make_fit(sched *s, uint32_t ndom) {
  uint32_t *cls = alloc_n(s, ndom, sizeof *cls);
  uint32_t *size = alloc_n(s, ndom, sizeof *size);
  if (cls != NULL && size != NULL)
    for (uint32_t d = 0; d < ndom; d++) {
      cls[d] = s->rack_cls[s->dom_rack[d]];
      size[d] = s->racks[s->dom_rack[d]].domain;
    }
  if (cls != NULL && size != NULL)
    s->fit = sched__fit_create(cls, size, s->dom_free, ndom, s->ntypes,
                               s->alloc);
  sim_free(s->alloc, cls);
  sim_free(s->alloc, size);
  return s->fit != NULL ? SIM_OK : SIM_ENOMEM;
}

static int map_racks(sched *s, sim_error *err) {
  for (uint32_t g = 0; g < s->ngpus; g++)
    s->rack_of[g] = NO_RACK;
  uint32_t dom = 0;
  for (uint32_t r = 0; r < s->nracks; r++) {
    int rc = map_rack(s, r, dom, err);
    if (rc != SIM_OK)
      return rc;
    dom += s->racks[r].count / s->racks[r].domain;
  }
  if (make_fit(s, dom) != SIM_OK)
    return sim_error_set(err, SIM_ENOMEM,
                         "out of memory for a scheduler of %u GPUs", s->ngpus);
  return SIM_OK;
}

sched *sched_create(const sched_rack *racks, size_t nracks, uint32_t ngpus,
                    sched_policy policy, sched_admission admission,
                    const sim_allocator *alloc, sim_error *err) {
  for (size_t i = 0; i < nracks; i++)
    if (check_rack(&racks[i], i, ngpus, err) != SIM_OK)
      return NULL;
  sched *s = sim_calloc(alloc, 1, sizeof *s);
  int rc = s != NULL ? SIM_OK : SIM_ENOMEM;
  if (rc == SIM_OK) {
    *s = (sched){.alloc = alloc,
                 .nracks = nracks,
                 .ngpus = ngpus,
                 .policy = policy,
                 .admission = admission};
    rc = alloc_arrays(s, racks);
  }
  if (rc != SIM_OK)
    sim_error_set(err, rc, "out of memory for a scheduler of %u GPUs", ngpus);
  else
    rc = map_racks(s, err);
  if (rc == SIM_OK)
    return s;
  sched_destroy(s);
  return NULL;
}

void sched_destroy(sched *s) {
  if (s == NULL)
    return;
  const sim_allocator *a = s->alloc;
  sim_free(a, s->racks);
  sim_free(a, s->free_bits);
  sim_free(a, s->rack_of);
  sim_free(a, s->rack_free);
  sim_free(a, s->dom_first);
  sim_free(a, s->dom_free);
  sim_free(a, s->dom_rack);
  sim_free(a, s->types);
  sim_free(a, s->type_free);
  sim_free(a, s->rack_cls);
  sched__fit_destroy(s->fit);
  sim_free(a, s->rack_slots);
  sim_free(a, s->dom_slots);
  sim_free(a, s->gang);
  sim_free(a, s->run);
  sim_free(a, s->queue);
  sim_free(a, s);
}

/* ---- Counts --------------------------------------------------------- */

/* Whether a job or rack of type a may hold GPUs of type b. */
static bool types_overlap(uint32_t a, uint32_t b) {
  return a == SCHED_ANY_TYPE || b == SCHED_ANY_TYPE || a == b;
}

/* The class of type (its place in types), SCHED_FIT_ALL for any type,
 * or ntypes when no rack is of that type. */
static uint32_t class_of(const sched *s, uint32_t type) {
  if (type == SCHED_ANY_TYPE)
    return SCHED_FIT_ALL;
  size_t c = 0;
  while (c < s->ntypes && s->types[c] != type)
    c++;
  return (uint32_t)c;
}

uint32_t sched_free_gpus(const sched *s, uint32_t type) {
  uint32_t c = class_of(s, type), n = 0;
  if (c != SCHED_FIT_ALL)
    return c < s->ntypes ? s->type_free[c] : 0;
  for (size_t k = 0; k < s->ntypes; k++)
    n += s->type_free[k];
  return n;
}

uint32_t sched_capacity(const sched *s, uint32_t type) {
  uint32_t n = 0;
  for (size_t r = 0; r < s->nracks; r++)
    if (types_overlap(type, s->racks[r].type))
      n += s->racks[r].count;
  return n;
}

size_t sched_queued(const sched *s) { return s->len; }

bool sched_withdraw(sched *s, size_t id) {
  for (size_t i = 0; i < s->len; i++)
    if (s->queue[i].job.id == id) {
      memmove(&s->queue[i], &s->queue[i + 1],
              (s->len - i - 1) * sizeof *s->queue);
      s->len--;
      return true;
    }
  return false;
}

/* ---- Placement ------------------------------------------------------ */

/* The bits of word w that hold GPUs lo .. hi - 1. */
static uint64_t word_mask(uint32_t w, uint32_t lo, uint32_t hi) {
  uint64_t base = (uint64_t)w * 64;
  assert(base < hi);
  uint64_t from = lo > base ? lo - base : 0;
  uint64_t to = hi - base < 64 ? hi - base : 64;
  uint64_t below_to = to == 64 ? ~UINT64_C(0) : (UINT64_C(1) << to) - 1;
  return below_to & ~((UINT64_C(1) << from) - 1);
}

/* Takes the m lowest free GPUs of lo .. hi - 1 (there are that many) and
 * writes them to out in index order. */
static void take_lowest(sched *s, uint32_t lo, uint32_t hi, uint32_t m,
                        uint32_t *out) {
  uint32_t got = 0;
  for (uint32_t w = lo / 64; got < m; w++) {
    uint64_t bits = s->free_bits[w] & word_mask(w, lo, hi);
    for (; bits != 0 && got < m; bits &= bits - 1) {
      uint32_t g = w * 64 + (uint32_t)__builtin_ctzll(bits);
      s->free_bits[w] &= ~(UINT64_C(1) << (g % 64));
      out[got++] = g;
    }
  }
}

/* Takes m GPUs from domain d (numbered within rack r). */
static void take_in_domain(sched *s, uint32_t r, uint32_t d, uint32_t m,
                           uint32_t *out) {
  const sched_rack *k = &s->racks[r];
  uint32_t lo = k->first + d * k->domain;
  take_lowest(s, lo, lo + k->domain, m, out);
  uint32_t dom = s->dom_first[r] + d;
  sched__fit_move(s->fit, dom, s->dom_free[dom], s->dom_free[dom] - m);
  s->dom_free[dom] -= m;
  s->rack_free[r] -= m;
  s->type_free[s->rack_cls[r]] -= m;
}

/* Fullest first; equal ones by index, so the order is deterministic. */
static int by_free_desc(const void *a, const void *b) {
  const slot *x = a, *y = b;
  if (x->free != y->free)
    return x->free > y->free ? -1 : 1;
  return (x->index > y->index) - (x->index < y->index);
}

static int by_index(const void *a, const void *b) {
  const slot *x = a, *y = b;
  return (x->index > y->index) - (x->index < y->index);
}

/* Chooses the fewest of v[0..nv), whose free GPUs add up to m or more,
 * to hold m: the fullest whole, then the last part best-fit, which keeps
 * the larger holes for later gangs. Fewest, since no k slots hold more
 * than the k fullest. Moves the chosen to v[0..k) in index order, with
 * their take set, and returns k. */
static size_t pick_fewest(slot *v, size_t nv, uint32_t m) {
  qsort(v, nv, sizeof *v, by_free_desc);
  size_t i = 0;
  for (; i < nv && m > v[i].free; i++) {
    v[i].take = v[i].free;
    m -= v[i].free;
  }
  assert(i < nv);
  size_t best = i; /* v is sorted: the first of the smallest that holds m */
  for (size_t j = i + 1; j < nv && v[j].free >= m; j++)
    if (v[j].free < v[best].free)
      best = j;
  slot chosen = v[best];
  v[best] = v[i];
  v[i] = chosen;
  v[i].take = m;
  qsort(v, i + 1, sizeof *v, by_index);
  return i + 1;
}

/* Takes m GPUs from rack r, over its fewest domains; returns m. */
static uint32_t take_in_rack(sched *s, uint32_t r, uint32_t m, uint32_t *out) {
  const sched_rack *k = &s->racks[r];
  size_t nv = 0;
  for (uint32_t d = 0; d < k->count / k->domain; d++) {
    uint32_t f = s->dom_free[s->dom_first[r] + d];
    if (f > 0)
      s->dom_slots[nv++] = (slot){d, f, 0};
  }
  size_t chosen = pick_fewest(s->dom_slots, nv, m);
  uint32_t written = 0;
  for (size_t i = 0; i < chosen; i++) {
    const slot *d = &s->dom_slots[i];
    take_in_domain(s, r, d->index, d->take, out + written);
    written += d->take;
  }
  return written;
}

uint32_t sched_take_rack(sched *s, uint32_t r, uint32_t *out) {
  if (r >= s->nracks || s->rack_free[r] == 0)
    return 0;
  return take_in_rack(s, r, s->rack_free[r], out);
}

/* The domain with the fewest free GPUs that still holds n, ties to the
 * first in rack and domain order, as rack and domain within it; false if
 * none does. The buckets find what a scan of every rack's domains would
 * (tests/work/test_scheduler_fit.c holds them to it). */
static bool best_fit_domain(const sched *s, uint32_t n, uint32_t type,
                            uint32_t *rack, uint32_t *dom) {
  uint32_t c = class_of(s, type), d;
  if (c != SCHED_FIT_ALL && c >= s->ntypes)
    return false;
  if (!sched__fit_best(s->fit, n, c, &d))
    return false;
  *rack = s->dom_rack[d];
  *dom = d - s->dom_first[*rack];
  return true;
}

/* Places n GPUs (free ones of type number at least n) over the fewest
 * racks, writing them in rack order. */
static void place_across_racks(sched *s, uint32_t n, uint32_t type,
                               uint32_t *out) {
  size_t nv = 0;
  for (uint32_t r = 0; r < s->nracks; r++)
    if (types_overlap(type, s->racks[r].type) && s->rack_free[r] > 0)
      s->rack_slots[nv++] = (slot){r, s->rack_free[r], 0};
  size_t chosen = pick_fewest(s->rack_slots, nv, n);
  uint32_t written = 0;
  for (size_t i = 0; i < chosen; i++) {
    const slot *r = &s->rack_slots[i];
    written += take_in_rack(s, r->index, r->take, out + written);
  }
}

bool sched_place(sched *s, uint32_t n, uint32_t type, uint32_t *out) {
  if (n == 0)
    return true;
  if (sched_free_gpus(s, type) < n)
    return false;
  uint32_t r, d;
  if (best_fit_domain(s, n, type, &r, &d))
    take_in_domain(s, r, d, n, out);
  else
    place_across_racks(s, n, type, out);
  return true;
}

void sched_release(sched *s, const uint32_t *gpus, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    uint32_t g = gpus[i];
    bool known = g < s->ngpus && s->rack_of[g] != NO_RACK;
    uint64_t bit = UINT64_C(1) << (g % 64);
    bool taken = known && (s->free_bits[g / 64] & bit) == 0;
    assert(taken);
    if (!taken)
      continue;
    uint32_t r = s->rack_of[g];
    const sched_rack *k = &s->racks[r];
    s->free_bits[g / 64] |= bit;
    s->rack_free[r]++;
    s->type_free[s->rack_cls[r]]++;
    uint32_t dom = s->dom_first[r] + (g - k->first) / k->domain;
    sched__fit_move(s->fit, dom, s->dom_free[dom], s->dom_free[dom] + 1);
    s->dom_free[dom]++;
  }
}

uint32_t sched_racks_spanned(const sched *s, const uint32_t *gpus, uint32_t n) {
  uint32_t spanned = 0, last = NO_RACK;
  for (uint32_t i = 0; i < n; i++) {
    assert(gpus[i] < s->ngpus);
    uint32_t r = gpus[i] < s->ngpus ? s->rack_of[gpus[i]] : NO_RACK;
    spanned += r != last;
    last = r;
  }
  return spanned;
}

/* ---- Queue ---------------------------------------------------------- */

static bool precedes(const entry *a, const entry *b) {
  if (a->job.priority != b->job.priority)
    return a->job.priority > b->job.priority;
  if (a->job.arrival_s != b->job.arrival_s)
    return a->job.arrival_s < b->job.arrival_s;
  return a->seq < b->seq;
}

int sched_submit(sched *s, const sched_job *job) {
  if (sim_vec_reserve(s->alloc, &s->queue, &s->cap, s->len + 1,
                      sizeof *s->queue) != SIM_OK)
    return SIM_ENOMEM;
  entry e = {*job, s->next_seq++};
  /* After every entry that precedes it: its seq is the largest yet. */
  size_t lo = 0, hi = s->len;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (precedes(&s->queue[mid], &e))
      lo = mid + 1;
    else
      hi = mid;
  }
  memmove(&s->queue[lo + 1], &s->queue[lo], (s->len - lo) * sizeof e);
  s->queue[lo] = e;
  s->len++;
  return SIM_OK;
}

/* ---- Passes --------------------------------------------------------- */

/* One pass's state. Once the head blocks, later jobs may only backfill:
 * under EASY within the head's reservation (shadow_s, extra), under FCFS
 * not at all (stopped). */
typedef struct pass {
  sched *s;
  double now_s, headroom_w;
  sched_start_fn start;
  void *ctx;
  size_t nrun; /* s->run[0..nrun): the running, and this pass's starts */
  bool blocked, stopped;
  uint32_t head_type;
  double shadow_s;
  uint32_t extra; /* GPUs of the head's type free at shadow_s, beyond it */
} pass;

static void note_running(pass *p, double end_s, uint32_t gpus, uint32_t type) {
  assert(gpus == 0 || p->nrun < p->s->run_cap);
  if (gpus > 0 && p->nrun < p->s->run_cap)
    p->s->run[p->nrun++] = (sched_running){end_s, gpus, type};
}

static int by_end(const void *a, const void *b) {
  double x = ((const sched_running *)a)->end_s;
  double y = ((const sched_running *)b)->end_s;
  return (x > y) - (x < y);
}

/* GPUs of type that running job k frees when it ends. */
static uint32_t frees(const pass *p, size_t k, uint32_t type) {
  const sched_running *r = &p->s->run[k];
  return types_overlap(r->type, type) ? r->gpus : 0;
}

/* EASY's reservation for the head: the shadow time, when running jobs
 * ending at their estimates have freed enough GPUs of its type (now, if
 * they are free but power held it back), and the extra GPUs free then
 * beyond its need, counting every job that ends at the shadow time. If
 * they never free enough the shadow is at infinity: no backfill can delay
 * a start that the estimates say will not come. */
static void reserve(pass *p, const sched_job *head) {
  sched *s = p->s;
  uint64_t avail = sched_free_gpus(s, head->type);
  p->head_type = head->type;
  p->shadow_s = p->now_s;
  p->extra = 0;
  if (avail < head->gpus) {
    qsort(s->run, p->nrun, sizeof *s->run, by_end);
    size_t k = 0;
    for (; k < p->nrun && avail < head->gpus; k++)
      avail += frees(p, k, head->type);
    if (avail < head->gpus) {
      p->shadow_s = INFINITY;
      return;
    }
    p->shadow_s = s->run[k - 1].end_s;
    for (; k < p->nrun && s->run[k].end_s <= p->shadow_s; k++)
      avail += frees(p, k, head->type);
  }
  p->extra = (uint32_t)(avail - head->gpus);
}

static bool ends_by_shadow(const pass *p, const sched_job *job) {
  return p->now_s + job->runtime_s <= p->shadow_s;
}

/* A backfilled job that would still hold GPUs the head may need at the
 * shadow time. Counted whole against extra even when of SCHED_ANY_TYPE
 * and placed partly elsewhere: conservative, never late for the head. */
static bool uses_extra(const pass *p, const sched_job *job) {
  return types_overlap(job->type, p->head_type) && !ends_by_shadow(p, job);
}

static bool may_backfill(const pass *p, const sched_job *job) {
  return !uses_extra(p, job) || job->gpus <= p->extra;
}

static bool power_fits(const pass *p, const sched_job *job) {
  return p->s->admission != SCHED_POWER_AWARE || job->power_w <= p->headroom_w;
}

/* Starts job if it fits now: 1 started, 0 not, or start's error (the job
 * then holds nothing). */
static int try_start(pass *p, const sched_job *job) {
  sched *s = p->s;
  if (!power_fits(p, job) || !sched_place(s, job->gpus, job->type, s->gang))
    return 0;
  int rc = p->start(p->ctx, job, s->gang);
  if (rc != SIM_OK) {
    sched_release(s, s->gang, job->gpus);
    return rc;
  }
  p->headroom_w -= job->power_w;
  note_running(p, p->now_s + job->runtime_s, job->gpus, job->type);
  return 1;
}

static void block(pass *p, const sched_job *head) {
  p->blocked = true;
  if (p->s->policy == SCHED_EASY)
    reserve(p, head);
  else
    p->stopped = true;
}

/* The pass's decision for the next job in queue order: 1 started, 0 left
 * queued, or start's error. */
static int consider(pass *p, const sched_job *job) {
  if (p->stopped || (p->blocked && !may_backfill(p, job)))
    return 0;
  int rc = try_start(p, job);
  if (rc < 0)
    p->stopped = true;
  else if (rc == 0 && !p->blocked)
    block(p, job);
  else if (rc == 1 && p->blocked && uses_extra(p, job))
    p->extra -= job->gpus;
  return rc;
}

int sched_pass(sched *s, double now_s, double headroom_w,
               const sched_running *running, size_t nrunning,
               sched_start_fn start, void *ctx) {
  pass p = {.s = s,
            .now_s = now_s,
            .headroom_w = headroom_w,
            .start = start,
            .ctx = ctx};
  for (size_t k = 0; k < nrunning; k++)
    note_running(&p, running[k].end_s, running[k].gpus, running[k].type);
  /* Compacts the queue as it goes: started jobs drop out. The job is
   * copied first, so start sees it whole. */
  size_t kept = 0;
  int rc = SIM_OK;
  for (size_t i = 0; i < s->len; i++) {
    entry e = s->queue[i];
    int started = consider(&p, &e.job);
    if (started < 0)
      rc = started;
    if (started != 1)
      s->queue[kept++] = e;
  }
  s->len = kept;
  return rc;
}
