/* alloc.h - the allocator hook of the engine layer.
 * Every object of sim/ that allocates takes one (NULL means the C library),
 * so tests can make the k-th allocation fail and check the clean-up. */
#ifndef SIM_ALLOC_H
#define SIM_ALLOC_H

#include <stddef.h>
#include <stdint.h>

/* realloc semantics: (NULL, n) allocates, (p, 0) frees and returns NULL,
 * otherwise resizes. Returns NULL on failure for n > 0. */
typedef void *(*sim_realloc_fn)(void *ctx, void *ptr, size_t size);

typedef struct sim_allocator {
  sim_realloc_fn realloc;
  void *ctx;
} sim_allocator;

/* The C library's allocator; never NULL. */
const sim_allocator *sim_allocator_default(void);

/* Helpers on an allocator (NULL means the default). */
void *sim_alloc(const sim_allocator *a, size_t size);
void *sim_calloc(const sim_allocator *a, size_t n, size_t size);
void *sim_resize(const sim_allocator *a, void *ptr, size_t size);
void sim_free(const sim_allocator *a, void *ptr);

/* p rounded up to the next multiple of align (a power of two): the start
 * of an array over-allocated by one element, aligned to cache lines. */
static inline void *sim_align_up(void *p, uintptr_t align) {
  return (void *)(((uintptr_t)p + align - 1) & ~(align - 1));
}

#endif
