/* lanes.c - the one switch of lanes.h's wide paths. */
#include "lanes.h"

bool sim_lanes_narrow;
