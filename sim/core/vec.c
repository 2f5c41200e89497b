/* vec.c - growing an array by doubling. */
#include "vec.h"

#include <stdint.h>
#include <string.h>

#include "err.h"

size_t sim_vec_grown_cap(size_t cap, size_t need, size_t item_size) {
  if (need <= cap)
    return cap;
  if (item_size == 0)
    return 0;
  size_t max = SIZE_MAX / item_size;
  if (need > max)
    return 0;
  size_t n = cap != 0 ? cap : SIM_VEC_MIN_CAP;
  while (n < need)
    n = n > max / 2 ? max : 2 * n;
  return n;
}

int sim_vec_reserve(const sim_allocator *a, void *items, size_t *cap,
                    size_t need, size_t item_size) {
  if (need <= *cap)
    return SIM_OK;
  size_t n = sim_vec_grown_cap(*cap, need, item_size);
  if (n == 0)
    return SIM_ENOMEM;
  /* items points at a T *: read and write it through memcpy, which is
   * defined for any object pointer type. */
  void *old;
  memcpy(&old, items, sizeof old);
  void *p = sim_resize(a, old, n * item_size);
  if (p == NULL)
    return SIM_ENOMEM;
  memcpy(items, &p, sizeof p);
  *cap = n;
  return SIM_OK;
}
