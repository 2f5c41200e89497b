/* power_fixture.h - what the power policies' tests share (test_power.c,
 * test_power_runs.c): H100-like units, fleets drawn from a small LCG (the
 * same on every machine), and the efficiency policy's level by plain
 * bisection on a power sum written apart from the policy, unit by unit. */
#ifndef TESTS_POWER_FIXTURE_H
#define TESTS_POWER_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "power.h"

/* The most units a drawn fleet has. */
#define POWER_FIXTURE_MAXU 64
#define MAXU POWER_FIXTURE_MAXU

/* An H100-like unit: idle 70 W, TDP 700 W, caps 200-700 W. */
power_unit unit(uint32_t n, double activity, int cls, double c);

/* A uniform draw in [0, 1) from the LCG state *s. */
double uniform(uint64_t *s);

/* 1 to MAXU random units into u, and a budget between their floor and
 * 1.2 times their top; returns how many. */
size_t random_fleet(uint64_t *seed, power_unit *u, double *budget);

/* The efficiency policy's power sum at level exp(x), unit by unit in
 * their order (power_efficiency.c's model: the same expressions). */
double efficiency_total(const power_unit *u, size_t n, double x);

/* The level by plain bisection on log mu over [-300, 300], to the bit. */
double efficiency_bisect(const power_unit *u, size_t n, double budget);

/* A budget drawn between the units' floor and 1.2 times their top. */
double drawn_budget(uint64_t *seed, const power_unit *u, size_t n);

/* random_fleet's units, about 60% of them copies of an earlier one
 * (replicas of a service: classes alike), with a budget drawn for them. */
size_t classed_fleet(uint64_t *seed, power_unit *u, double *budget);

/* The fill's lambda by plain bisection over the doubles of [0, hi], unit
 * by unit: the largest whose sum fits the budget (0 if none does, hi if
 * hi does). */
double plain_fill_lambda(const power_unit *u, size_t n, const double *w,
                         const double *top, double budget);

/* Each of the n runs' caps is lambda w clamped to [lo, top], to the bit
 * (a cmocka failure naming tag, x and the run otherwise). */
void assert_fill_caps(const char *tag, double x, const power_unit *u, size_t n,
                      const double *w, const double *top, const double *cap,
                      double lambda);

#endif
