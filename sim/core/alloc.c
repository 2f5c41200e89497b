/* alloc.c - the default allocator and the helpers around the hook. */
#include "alloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void *libc_realloc(void *ctx, void *ptr, size_t size) {
  (void)ctx;
  if (size == 0) {
    free(ptr);
    return NULL;
  }
  return realloc(ptr, size);
}

static const sim_allocator libc_allocator = {libc_realloc, NULL};

const sim_allocator *sim_allocator_default(void) { return &libc_allocator; }

static const sim_allocator *pick(const sim_allocator *a) {
  return a != NULL ? a : &libc_allocator;
}

void *sim_alloc(const sim_allocator *a, size_t size) {
  a = pick(a);
  return a->realloc(a->ctx, NULL, size == 0 ? 1 : size);
}

void *sim_calloc(const sim_allocator *a, size_t n, size_t size) {
  if (size != 0 && n > SIZE_MAX / size)
    return NULL;
  void *p = sim_alloc(a, n * size);
  if (p != NULL)
    memset(p, 0, n * size);
  return p;
}

void *sim_resize(const sim_allocator *a, void *ptr, size_t size) {
  a = pick(a);
  return a->realloc(a->ctx, ptr, size == 0 ? 1 : size);
}

void sim_free(const sim_allocator *a, void *ptr) {
  if (ptr == NULL)
    return;
  a = pick(a);
  a->realloc(a->ctx, ptr, 0);
}
