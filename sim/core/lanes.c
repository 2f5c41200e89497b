/* lanes.c - the switches of lanes.h's wide paths. */
#include "lanes.h"

bool sim_lanes_narrow;
bool sim_lanes_no512;
