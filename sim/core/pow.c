/* pow.c - pow(x, y) with pow's bits, cheaper where it can be: the GPU
 * power model's phi^gamma (gpu_power.c's cap solve and pow memo, the
 * efficiency policy's clocks). Engine layer; it sees only bits.h. */
#include "pow.h"

#include <math.h>

/* The build does not assume fma: sim_pow checks the CPU (pow without
 * it); the kernel and its proof are pow.h's sim_pow25_fma. */
#ifdef SIM_POW_FMA
__attribute__((target("fma"))) static double pow_fma(double x, double y) {
  return y == 2.5 ? sim_pow25_fma(x) : pow(x, y);
}
#endif

double sim_pow(double x, double y) {
#ifdef SIM_POW_FMA
  if (__builtin_cpu_supports("fma"))
    return pow_fma(x, y); /* about 40 instructions where pow costs 125 */
#endif
  return pow(x, y);
}
