/* names.c - the index of names of names.h. */
#include "names.h"

#include <stdint.h>
#include <string.h>

typedef struct slot {
  const char *name; /* NULL: empty */
  size_t value;
} slot;

struct sim_names {
  sim_allocator alloc;
  slot *slots;
  size_t mask; /* table size - 1 */
  size_t n, max;
};

static uint64_t hash(const char *s) {
  uint64_t h = 14695981039346656037ull;
  for (; *s != '\0'; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

sim_names *sim_names_create(size_t n, const sim_allocator *a) {
  if (a == NULL)
    a = sim_allocator_default();
  size_t size = 16;
  while (size < 2 * n && size < SIZE_MAX / 4)
    size *= 2;
  sim_names *ix = sim_calloc(a, 1, sizeof *ix);
  if (ix == NULL)
    return NULL;
  ix->alloc = *a;
  ix->slots = sim_calloc(a, size, sizeof *ix->slots);
  if (ix->slots == NULL) {
    sim_free(a, ix);
    return NULL;
  }
  ix->mask = size - 1;
  ix->max = n;
  return ix;
}

void sim_names_destroy(sim_names *ix) {
  if (ix == NULL)
    return;
  sim_allocator a = ix->alloc;
  sim_free(&a, ix->slots);
  sim_free(&a, ix);
}

/* The slot of name, or the empty one where it would go. */
static slot *probe(const sim_names *ix, const char *name) {
  size_t i = (size_t)hash(name) & ix->mask;
  while (ix->slots[i].name != NULL && strcmp(ix->slots[i].name, name) != 0)
    i = (i + 1) & ix->mask;
  return &ix->slots[i];
}

int sim_names_add(sim_names *ix, const char *name, size_t value,
                  size_t *earlier) {
  slot *s = probe(ix, name);
  if (s->name != NULL) {
    if (earlier != NULL)
      *earlier = s->value;
    return SIM_EINVAL;
  }
  if (ix->n >= ix->max)
    return SIM_ERANGE;
  *s = (slot){name, value};
  ix->n++;
  return SIM_OK;
}

long sim_names_find(const sim_names *ix, const char *name) {
  const slot *s = probe(ix, name);
  return s->name != NULL ? (long)s->value : -1;
}
