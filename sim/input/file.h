/* file.h - reading input files whole, and paths relative to a file: what
 * the scenario loader and the models' data readers share. */
#ifndef SIM_FILE_H
#define SIM_FILE_H

#include <stddef.h>

#include "alloc.h"
#include "err.h"

/* Reads the regular file at path into a NUL-terminated buffer; *len gets
 * its size. Returns the buffer (the caller frees it), or NULL with err:
 * SIM_EIO when the file cannot be opened or read or is not a regular file,
 * SIM_ERANGE when it holds more than max bytes (*len then says how many),
 * SIM_ENOMEM when the buffer cannot be had (the run's failure, not the
 * input's). Memory is sized to the file, not to max. */
char *sim_file_read(const char *path, size_t max, size_t *len, sim_error *err);

/* sim_file_read with the buffer from allocator a (NULL: the C library's);
 * the caller gives it back with sim_free(a, buf). */
char *sim_file_read_with(const sim_allocator *a, const char *path, size_t max,
                         size_t *len, sim_error *err);

/* rel as seen from the folder of the file base ("scenarios/a.yaml" and
 * "data/x.csv" give "scenarios/data/x.csv"); absolute rel and base with
 * no folder give rel. */
void sim_path_beside(const char *base, const char *rel, char *out, size_t size);

/* The folder of path ("" for none, "/" for a file at the root). */
void sim_path_dir(const char *path, char *out, size_t size);

#endif
