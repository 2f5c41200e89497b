/* control_units_window.c - the lazy refresh's window (control_units.h's
 * lazy): each chunk of units filled and refreshed in a window of
 * CONTROL_UNITS_CHUNK units that stays in the first-level cache, and
 * only the units the marks leave unmarked put back in the units. Every
 * allocation of bench-10k's fluid mode wrote all its 2,245 units (233 KB,
 * 3.6 k cache lines, past the first level and back: a third of the
 * refresh's and the fill's time, perf) for some 70 runs. */
#include "control_units.h"

#include <assert.h>

#include "power.h"
#include "vec.h"

/* The header says what (control_units.h). */
int control__units_marks_begin(control_units *cu, const rack_fleet *fl) {
  control_unit_memo *m = &cu->base;
  cu->marks_ok = false;
  m->nmade = 0;
  if (m->made_at != NULL)
    return SIM_OK;
  cu->alike = sim_calloc(cu->alloc, fl->n + 1, sizeof *cu->alike);
  cu->n_alike = sim_calloc(cu->alloc, fl->n + 1, sizeof *cu->n_alike);
  m->made_at = sim_calloc(cu->alloc, fl->n + 1, sizeof *m->made_at);
  if (cu->alike != NULL && cu->n_alike != NULL && m->made_at != NULL) {
    m->made_cap = fl->n + 1;
    return SIM_OK;
  }
  sim_free(cu->alloc, cu->alike);
  sim_free(cu->alloc, cu->n_alike);
  sim_free(cu->alloc, m->made_at);
  cu->alike = cu->n_alike = NULL;
  m->made_at = NULL;
  return SIM_ENOMEM;
}

int control__units_list_free(control_units *cu) {
  cu->nfree = 0;
  for (size_t u = 0; u < cu->n; u++) {
    if (cu->key[u] != CONTROL_UNITS_FREE)
      continue;
    if (sim_vec_reserve(cu->alloc, &cu->free_at, &cu->free_cap, cu->nfree + 1,
                        sizeof *cu->free_at) != SIM_OK)
      return SIM_ENOMEM;
    cu->free_at[cu->nfree++] = (uint32_t)u;
  }
  return SIM_OK;
}

/* The window 32 bytes aligned (one unit more than it holds, the
 * allocator's 16-byte alignment rounded up within it): each unit's
 * worth, its first 32 bytes (power.h), is then one line's, which the
 * fill's store of it (worth_puts_avx2) and the refresh's loads of it
 * (alike_eights_avx2) touch: 16 KB of lines of the window's 25 KB,
 * where the 104-byte units' touched 22 KB of 27 KB. */
bool control__units_window_ready(control_units *cu) {
  if (cu->win_mem == NULL)
    cu->win_mem =
        sim_calloc(cu->alloc, CONTROL_UNITS_CHUNK + 2, sizeof *cu->win_mem);
  if (cu->win_mem == NULL)
    return false;
  cu->win = sim_align_up(cu->win_mem, 32);
  return true;
}

/* What a refresh writes of a unit (refresh_rack: its range's top, demand
 * and activity; the fill: its worth). */
static inline void put_unit(power_unit *to, const power_unit *from) {
  to->hi = from->hi;
  to->demand = from->demand;
  to->activity = from->activity;
  to->cls = from->cls;
  to->priority = from->priority;
  to->weight = from->weight;
  to->c = from->c;
}

void control__units_put_back(control_units *cu, size_t at, size_t e) {
  const power_unit *w = cu->win + 1; /* w[j - at]: unit j's */
  for (size_t j = at; j < e; j++) {
    put_unit(&cu->u[j], &w[j - at]);
    cu->nput += cu->alike[j] == 0;
  }
}

void control__units_window_move(control_units *cu, size_t at, size_t j,
                                size_t e, size_t *free_k) {
  power_unit *w = cu->win;
  if (j > 0) {
    if (!control__units_put_inline())
      control__units_put_back(cu, at, j);
    w[0] = w[j - at]; /* the chunk's last unit, the next one's before */
  } else
    w[0] = (power_unit){0}; /* as u[-1] */
  /* A free unit's worth as unit_base made it (control_units.c). */
  size_t k = *free_k;
  for (; k < cu->nfree && cu->free_at[k] < e; k++) {
    assert(cu->free_at[k] >= j);
    power_unit *p = &w[1 + cu->free_at[k] - j];
    p->cls = POWER_OTHER;
    p->priority = 0;
    p->weight = 0;
    p->c = 0;
  }
  *free_k = k;
}
