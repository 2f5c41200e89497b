/* scheduler_fit.c - NVLink domains in buckets by their free GPUs
 * (scheduler_fit.h).
 *
 * A class's domains are kept in number order, so the lowest set bit of a
 * bucket is the lowest-numbered domain with that count, and buckets taken
 * in rising count give the scan's answer: the fewest free that holds n,
 * then the lowest number. All classes' arrays share three allocations. */
#include "scheduler_fit.h"

#include <assert.h>

typedef struct fit_class {
  uint32_t n;      /* domains */
  uint32_t nf;     /* buckets, free counts 0 .. nf - 1 */
  uint32_t nw, ns; /* words of a bucket's bits, of its summary */
  uint32_t *dom;   /* the class's domains in number order */
  uint64_t *bits;  /* nf buckets of nw words */
  uint64_t *sum;   /* nf summaries of ns words: bit k when word k is not 0 */
} fit_class;

struct sched_fit {
  const sim_allocator *alloc;
  size_t nclass;
  fit_class *cls;
  uint32_t *of; /* domain -> its class */
  uint32_t *at; /* domain -> its place in its class */
  uint32_t *doms;
  uint64_t *bits, *sums;
};

static void *alloc_n(const sim_allocator *a, size_t n, size_t size) {
  return sim_calloc(a, n > 0 ? n : 1, size);
}

void sched__fit_destroy(sched_fit *f) {
  if (f == NULL)
    return;
  const sim_allocator *a = f->alloc;
  sim_free(a, f->cls);
  sim_free(a, f->of);
  sim_free(a, f->at);
  sim_free(a, f->doms);
  sim_free(a, f->bits);
  sim_free(a, f->sums);
  sim_free(a, f);
}

/* Each class's domain count and bucket count, and the words they need. */
static void size_classes(sched_fit *f, const uint32_t *cls,
                         const uint32_t *size, size_t ndom, size_t *words,
                         size_t *sums) {
  for (size_t d = 0; d < ndom; d++) {
    fit_class *c = &f->cls[cls[d]];
    f->at[d] = c->n++;
    f->of[d] = cls[d];
    c->nf = size[d] + 1 > c->nf ? size[d] + 1 : c->nf;
  }
  *words = *sums = 0;
  for (size_t k = 0; k < f->nclass; k++) {
    fit_class *c = &f->cls[k];
    c->nw = (c->n + 63) / 64;
    c->ns = (c->nw + 63) / 64;
    *words += (size_t)c->nf * c->nw;
    *sums += (size_t)c->nf * c->ns;
  }
}

/* Points each class into the shared arrays. */
static void lay_out(sched_fit *f) {
  size_t dom = 0, word = 0, sum = 0;
  for (size_t k = 0; k < f->nclass; k++) {
    fit_class *c = &f->cls[k];
    c->dom = f->doms + dom;
    c->bits = f->bits + word;
    c->sum = f->sums + sum;
    dom += c->n;
    word += (size_t)c->nf * c->nw;
    sum += (size_t)c->nf * c->ns;
  }
}

static void set_bit(fit_class *c, uint32_t free, uint32_t i) {
  uint32_t k = i / 64;
  c->bits[(size_t)free * c->nw + k] |= UINT64_C(1) << (i % 64);
  c->sum[(size_t)free * c->ns + k / 64] |= UINT64_C(1) << (k % 64);
}

static void clear_bit(fit_class *c, uint32_t free, uint32_t i) {
  uint32_t k = i / 64;
  uint64_t *w = &c->bits[(size_t)free * c->nw + k];
  *w &= ~(UINT64_C(1) << (i % 64));
  if (*w == 0)
    c->sum[(size_t)free * c->ns + k / 64] &= ~(UINT64_C(1) << (k % 64));
}

sched_fit *sched__fit_create(const uint32_t *cls, const uint32_t *size,
                             const uint32_t *free, size_t ndom, size_t nclass,
                             const sim_allocator *alloc) {
  sched_fit *f = sim_calloc(alloc, 1, sizeof *f);
  if (f == NULL)
    return NULL;
  *f = (sched_fit){.alloc = alloc, .nclass = nclass};
  f->cls = alloc_n(alloc, nclass, sizeof *f->cls);
  f->of = alloc_n(alloc, ndom, sizeof *f->of);
  f->at = alloc_n(alloc, ndom, sizeof *f->at);
  f->doms = alloc_n(alloc, ndom, sizeof *f->doms);
  if (f->cls == NULL || f->of == NULL || f->at == NULL || f->doms == NULL) {
    sched__fit_destroy(f);
    return NULL;
  }
  size_t words, sums;
  size_classes(f, cls, size, ndom, &words, &sums);
  f->bits = alloc_n(alloc, words, sizeof *f->bits);
  f->sums = alloc_n(alloc, sums, sizeof *f->sums);
  if (f->bits == NULL || f->sums == NULL) {
    sched__fit_destroy(f);
    return NULL;
  }
  lay_out(f);
  for (uint32_t d = 0; d < ndom; d++) {
    fit_class *c = &f->cls[f->of[d]];
    assert(free[d] < c->nf);
    c->dom[f->at[d]] = d;
    set_bit(c, free[d], f->at[d]);
  }
  return f;
}

void sched__fit_move(sched_fit *f, uint32_t d, uint32_t from, uint32_t to) {
  fit_class *c = &f->cls[f->of[d]];
  assert(from < c->nf && to < c->nf);
  clear_bit(c, from, f->at[d]);
  set_bit(c, to, f->at[d]);
}

/* The lowest place in bucket free of class c, or UINT32_MAX if empty. */
static uint32_t lowest(const fit_class *c, uint32_t free) {
  const uint64_t *sum = &c->sum[(size_t)free * c->ns];
  for (uint32_t j = 0; j < c->ns; j++)
    if (sum[j] != 0) {
      uint32_t k = j * 64 + (uint32_t)__builtin_ctzll(sum[j]);
      uint64_t w = c->bits[(size_t)free * c->nw + k];
      return k * 64 + (uint32_t)__builtin_ctzll(w);
    }
  return UINT32_MAX;
}

/* Class c's best fit for n with fewer than below free: true with its
 * count and number, or false. */
static bool best_in(const fit_class *c, uint32_t n, uint32_t below,
                    uint32_t *free, uint32_t *dom) {
  uint32_t end = c->nf < below ? c->nf : below;
  for (uint32_t k = n; k < end; k++) {
    uint32_t i = lowest(c, k);
    if (i != UINT32_MAX) {
      *free = k;
      *dom = c->dom[i];
      return true;
    }
  }
  return false;
}

bool sched__fit_best(const sched_fit *f, uint32_t n, uint32_t cls,
                     uint32_t *dom) {
  assert(n >= 1);
  if (cls != SCHED_FIT_ALL) {
    uint32_t free;
    return cls < f->nclass && best_in(&f->cls[cls], n, UINT32_MAX, &free, dom);
  }
  /* Across classes: the fewest free, then the lowest number. A class can
   * only win on the count of the best so far with a lower number. */
  uint32_t best = UINT32_MAX, best_dom = UINT32_MAX, free, d;
  for (size_t k = 0; k < f->nclass; k++) {
    uint32_t below = best == UINT32_MAX ? UINT32_MAX : best + 1;
    if (best_in(&f->cls[k], n, below, &free, &d) &&
        (free < best || d < best_dom)) {
      best = free;
      best_dom = d;
    }
  }
  if (best == UINT32_MAX)
    return false;
  *dom = best_dom;
  return true;
}
