/* pow.h - pow(x, y) with the bits of the C library's pow (glibc's), at
 * a third of its cost for y = 2.5 (the default gamma of the GPU power
 * model, docs/MODELS.md), on x86-64 with fma; elsewhere pow itself. */
#ifndef SIM_POW_H
#define SIM_POW_H

/* pow(x, y), the same bits. */
double sim_pow(double x, double y);

#endif
