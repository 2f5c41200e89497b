/* plant.h - the factory's cooling plant: its loops, which share of each
 * rack group's heat each loop takes, and the loops' power over every
 * control period, integrated exactly by the loops' ODEs.
 *
 * Each control period the IT heat is constant, so each loop is stepped
 * over the coming period at its start and its cooling energy over it is
 * known at once: the plant's power in force is that energy's mean, and
 * facility energy stays an exact sum of piecewise-constant terms. */
#ifndef MODELS_PLANT_H
#define MODELS_PLANT_H

#include <stddef.h>

#include "cooling.h"
#include "err.h"
#include "tel.h"

enum { PLANT_TEMP, PLANT_POWER, PLANT_HEAT, PLANT_FREE, PLANT_NCOLS };

/* The /loops columns, one value per loop. */
extern const tel_column plant_columns[PLANT_NCOLS];

/* One entry of the plant's share matrix: loop takes share of the heat of
 * rack group group. The matrix is sparse: a group's heat goes to one loop
 * or two (liquid and air), and a dense nloops x ngroups matrix grew with
 * the square of the scenario (issue 28). */
typedef struct plant_link {
  size_t loop, group;
  double share;
} plant_link;

typedef struct plant {
  const sim_allocator *alloc; /* what the arrays and loops live on */
  size_t nloops, ngroups;
  cool_loop **loops;
  const char **names;
  /* The share matrix by loop: loop l's links are col[k], share[k] for k in
   * [row[l], row[l + 1]), groups ascending (so a loop's heat is summed in
   * the order a dense row was). */
  size_t *row;
  size_t *col;
  double *share;
  long *main_loop; /* per group: the loop taking most of its heat (the
                      first of equals), -1 when none */
  double *power_w; /* per loop: mean cooling power over the period */
  double *heat_w;  /* per loop: mean heat removed over the period */
  double *free_w;  /* per loop: ... of it without the chiller */
  double *reject_w; /* per loop: heat its tower rejects (0 when dry) */
  double total_w;  /* sum of power_w */
  double *reject_run_j; /* per loop: what its tower rejected over the run */
  double *cool_j, *heat_j, *free_j; /* per loop, over the sample interval */
} plant;

/* The share of the heat of the rack group called group that loop takes:
 * its heat_share if it serves the group (a loop naming no racks serves
 * them all), else 0. */
double plant_loop_share(const cool_loop_config *loop, const char *group);

/* The share matrix of the loops over the rack groups named names[0..
 * ngroups): loop l takes its heat_share of each group it names (of every
 * group when it names none), as plant_loop_share says, in time linear in
 * the links. *links (malloc'd: free it) and *nlinks come back; a rack name
 * no group has is skipped (loaders refuse it first). SIM_OK or
 * SIM_ENOMEM. */
int plant_links(const cool_loop_config *loops, size_t nloops,
                const char *const *names, size_t ngroups, plant_link **links,
                size_t *nlinks, sim_error *err);

/* Builds the loops over ngroups rack groups with the share matrix given as
 * links (copied; any order; a loop and group given twice count once, the
 * first). With no loops the plant draws nothing. The plant and its loops
 * allocate on alloc (NULL means the C library), which must outlive them.
 * SIM_OK or an error (nothing left to free). */
int plant_init(plant *p, const cool_loop_config *loops, size_t nloops,
               const plant_link *links, size_t nlinks, size_t ngroups,
               const sim_allocator *alloc, sim_error *err);

void plant_fini(plant *p);

/* The heat (W) loop l takes from the groups' heat group_heat_w (W, per
 * group): its shares of the groups it serves, summed in group order. */
double plant_loop_heat_w(const plant *p, size_t l, const double *group_heat_w);

/* Steps every loop over dt_s with the groups' heat (W, per group), the
 * outdoor dry bulb and wet bulb (degC; evaporative loops follow the wet
 * bulb), and sets the power in force for that period. */
int plant_step(plant *p, const double *group_heat_w, double outdoor_c,
               double wet_c, double dt_s, sim_error *err);

/* Site water over the run so far by source, in kg (= L): what the
 * evaporative loops' towers evaporated, blew down and lost as drift
 * (water.h). All 0 for a dry plant. */
typedef struct plant_water {
  double evaporation_kg, blowdown_kg, drift_kg, total_kg;
} plant_water;

plant_water plant_water_used(const plant *p);

/* Adds dt_s of the power in force to the interval's integrals. */
void plant_accumulate(plant *p, double dt_s);

/* The cooling power the plant would draw in steady state for the groups'
 * heat at outdoor_c (wet bulb wet_c), each loop at the capacity it has now (a derated
 * loop removes no more than its share): a ceiling for any period with no
 * more heat (the loops' temperatures only approach their steady state). */
double plant_steady_w(const plant *p, const double *group_heat_w,
                      double outdoor_c, double wet_c);

/* A cooling fault on loop l: only share (in [0, 1]) of its capacity is
 * left from the next step on; 1 restores it. SIM_OK or SIM_EINVAL (a bad
 * loop or share). */
int plant_set_derate(plant *p, size_t l, double share);

/* Writes the interval's /loops row (PLANT_NCOLS x nloops, means over
 * dt_s; temperatures now) and starts a new interval. */
void plant_sample(plant *p, double dt_s, double *row);

#endif
