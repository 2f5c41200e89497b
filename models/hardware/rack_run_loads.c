/* rack_run_loads.c - many runs' loads written at once (rack.h
 * rack_set_run_loads_seq): the services' replicas, one run each and in
 * order, hand the fleet their loads as one list every period. */
#include "lanes.h"
#include "rack.h"

_Static_assert(sizeof(gpu_load) == 3 * sizeof(double),
               "two loads are three pairs of doubles");

/* Two loads' six words a turn, as three pairs (sm mem, busy sm, mem
 * busy) to three (sm sm, mem mem, busy busy): the same words to the same
 * places as rack_set_run_load one by one, about 5 instructions a run, not
 * 7. The flag once, not once a run. */
void rack_set_run_loads_seq(rack_fleet *f, uint32_t q0, const gpu_load *l,
                            size_t n) {
  if (n == 0)
    return;
  double *sm = f->run_sm + q0, *mem = f->run_mem + q0, *busy = f->run_busy + q0;
  size_t k = 0;
#pragma GCC unroll 2
  for (; k + 2 <= n; k += 2) {
    const char *x = (const char *)(l + k);
    sim_d2 a = sim_d2_at(x), b = sim_d2_at(x + 16), c = sim_d2_at(x + 32);
    sim_d2_put(sm + k, SIM_D2_PICK(a, 0, b, 1));
    sim_d2_put(mem + k, SIM_D2_PICK(a, 1, c, 0));
    sim_d2_put(busy + k, SIM_D2_PICK(b, 0, c, 1));
  }
  if (k < n)
    rack__set_run_arrays(f, q0 + (uint32_t)k, l[k]);
  f->loads_unfilled = true;
}
