/* power_classes.c - the efficiency policy's memo (power_level.h's
 * struct power_work): the level's arrays, kept from call to call, and
 * the slots of its class hash, which power_efficiency.c's class_of
 * probes. Moved out of power_efficiency.c with the hash's growth. */
#include "power.h"
#include "power_level.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "alloc.h"

/* The slots a split starts with: sixteen at least (two cache lines),
 * else room for the classes of the split before at a load of a half. */
#define SLOTS_FIRST 16
/* Below this many classes in the split before, a split starts with few
 * slots; from it on, with all of them (2n for n units, as before). */
#define SLOTS_FEW_CLASSES 32

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

/* A new generation: every slot reads as empty. */
static void next_generation(struct power_work *w) {
  if (++w->gen >> 32 != 0) { /* the generations wrapped: clear */
    memset(w->slot, 0, w->size * sizeof *w->slot);
    w->gen = 1;
  }
}

bool power__work_grow(struct power_work *w, size_t n, size_t size) {
  if (n > w->n || w->d == NULL) {
    sim_free(NULL, w->d);
    sim_free(NULL, w->z);
    sim_free(NULL, w->b);
    w->d = sim_alloc(NULL, (19 * n + 19) * sizeof *w->d);
    w->z = sim_alloc(NULL, (5 * n + 5) * sizeof *w->z);
    w->b = sim_alloc(NULL, (n + 1) * sizeof *w->b);
    w->n = w->d != NULL && w->z != NULL && w->b != NULL ? n : 0;
    if (w->n != n)
      return false;
  }
  if (size > w->size || w->slot == NULL) {
    sim_free(NULL, w->slot);
    w->slot = sim_calloc(NULL, size, sizeof *w->slot);
    w->size = w->slot != NULL ? size : 0;
    w->gen = 0;
    if (w->slot == NULL)
      return false;
  }
  next_generation(w);
  size_t live = SLOTS_FIRST;
  while (live < 2 * (w->classes_before + 1) && live < w->size)
    live *= 2;
  /* Few slots only for a few classes (the fluid mode's groups): the
   * request level's groups of many classes probed longer at the higher
   * load (its peak period +16.8 k instructions), so they keep them all. */
  w->live =
      w->classes_before < SLOTS_FEW_CLASSES && live < w->size ? live : w->size;
  return true;
}

size_t power__slot_free(const struct power_work *w, size_t h) {
  size_t i = h & (w->live - 1);
  while (w->slot[i] >> 32 == w->gen)
    i = (i + 1) & (w->live - 1);
  return i;
}

void power__slots_double(struct power_work *w) {
  w->live *= 2;
  next_generation(w);
}
