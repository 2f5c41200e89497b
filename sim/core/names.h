/* names.h - an index of names (sim_names): name to the number it was added
 * with, for the checks and lookups a scenario of tens of thousands of
 * named things (rack groups, loops, workloads) needs, in time linear in
 * their count where a scan of every pair was quadratic (issue 28: 22,000
 * rack groups took 32 s and 7.7 GB to check).
 *
 * Design: open addressing with linear probing over a power-of-two table of
 * at least twice the names, FNV-1a hashes. The names are borrowed, not
 * copied: they must stay put while the index lives. Part of sim_core. */
#ifndef SIM_NAMES_H
#define SIM_NAMES_H

#include <stddef.h>

#include "alloc.h"
#include "err.h"

typedef struct sim_names sim_names;

/* An empty index with room for n names (it does not grow), on allocator a
 * (NULL: the C library). NULL when out of memory. */
sim_names *sim_names_create(size_t n, const sim_allocator *a);

void sim_names_destroy(sim_names *ix); /* NULL does nothing */

/* Adds name with number value. SIM_OK; SIM_EINVAL when the name is there
 * already (*earlier, if not NULL, gets its number; the index keeps it);
 * SIM_ERANGE when the index holds the n names it was made for. */
int sim_names_add(sim_names *ix, const char *name, size_t value,
                  size_t *earlier);

/* The number of name, or -1 when it was never added. */
long sim_names_find(const sim_names *ix, const char *name);

#endif
