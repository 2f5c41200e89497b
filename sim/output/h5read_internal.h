/* h5read_internal.h - what the HDF5 reader's files (h5read.h) share:
 * HDF5's innermost error message, and the one reader of an object's
 * scalar attributes, which a run's /summary (h5read.c) and an export's
 * attributes (h5read_groups.c) both go through. */
#ifndef SIM_H5READ_INTERNAL_H
#define SIM_H5READ_INTERNAL_H

#include <hdf5.h>

#include "h5read.h"

#define H5R_DETAIL 256 /* bytes of HDF5's error text kept in a message */

/* An H5Ewalk2 callback keeping the innermost error's description in data
 * (H5R_DETAIL bytes): it says what went wrong, the outer ones only
 * where. */
herr_t h5r__innermost(unsigned n, const H5E_error2_t *e, void *data);

/* The variable-length string attribute key of obj, copied ("" when it is
 * absent or not such a string); NULL when out of memory. */
char *h5r__str_attr(hid_t obj, const char *key);

/* Appends the scalar attributes of the object name of loc to *out, by
 * name, as h5r_attrs_read gives them; a negative HDF5 status on failure
 * (out then holds what was read; release it). */
herr_t h5r__attrs_of(hid_t loc, const char *name, h5r_attrs *out);

#endif
