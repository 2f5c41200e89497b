/* vec.h - growing an array by doubling, on the allocator hook.
 * The one place where an array of the engine or of a model grows: the
 * caller keeps the pointer, the count and the capacity in its own struct
 * and asks for room before it appends. */
#ifndef SIM_VEC_H
#define SIM_VEC_H

#include <stddef.h>

#include "alloc.h"

/* The capacity an empty array grows to first (or more, if more is needed). */
#define SIM_VEC_MIN_CAP ((size_t)8)

/* Makes the array at *items (of *cap items of item_size bytes) hold at
 * least need items. items is the address of the caller's array pointer
 * (a T **, passed as void *); the array lives on allocator a (NULL means
 * the C library) and may be NULL with *cap 0.
 * When need <= *cap nothing happens. Otherwise the capacity doubles (from
 * SIM_VEC_MIN_CAP when 0) until it holds need, the array is resized (the
 * first need items keep their values, the rest are undefined) and *items
 * and *cap are updated.
 * Returns SIM_OK, or SIM_ENOMEM (out of memory, or the size would not fit
 * a size_t); then *items and *cap are as they were.
 * Parallel arrays grow one call each, every call on its own copy of the
 * shared capacity; the copies come out equal, and after a failure the
 * arrays that grew are merely roomier than the capacity kept. */
int sim_vec_reserve(const sim_allocator *a, void *items, size_t *cap,
                    size_t need, size_t item_size);

/* The capacity sim_vec_reserve grows cap to for need items of item_size
 * bytes: cap itself when it holds need, 0 when the size would overflow. */
size_t sim_vec_grown_cap(size_t cap, size_t need, size_t item_size);

#endif
