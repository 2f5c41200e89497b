/* record.h - the HDF5 writer (h5w), a telemetry sink (tel.h).
 * Layout (docs/OUTPUT.md): one group per telemetry group; each column a
 * dataset, 1-D [time] or 2-D [time, width], float64, chunked, shuffled and
 * deflated, extendible along time; attributes units and long_name; the
 * group's "time" dataset (seconds) is an HDF5 dimension scale attached to
 * dimension 0, with CF units and a calendar when the run's start date is
 * known (h5w_options), and for 2-D groups a string dataset named by the
 * axis (e.g. "rack") is the scale of dimension 1. A table with a row axis
 * gets the row numbers under that name as its columns' scale. Texts are scalar
 * string datasets at the root, summary metrics attributes of /summary, metadata
 * attributes of the root. Object time tracking is off, so the same run
 * gives the same bytes.
 *
 * The file is written as PATH.partial and renamed to PATH by commit, after
 * the root attribute complete=1 is set; a sink destroyed without commit
 * removes its partial file (or keeps it readable with complete=0 when made
 * with keep_partial). One writer per PATH: create takes PATH.lock
 * (writelock.h) before it creates anything, and destroy drops it. Files
 * use HDF5 1.10's format (checksummed metadata), a Fletcher32 checksum on
 * every chunk of data, and a seal over the whole file after its last
 * byte (seal.h). Only this module links HDF5. */
#ifndef SIM_RECORD_H
#define SIM_RECORD_H

#include <stddef.h>

#include "err.h"
#include "tel.h"

/* Zero-filled options are the defaults, as NULL is. */
typedef struct h5w_options {
  size_t chunk_rows; /* rows per chunk and per flush; 0 = 4096 */
  int deflate_level; /* 1-9; 0 = the default, 4; -1 = no compression */
  /* The UTC time of t = 0 as ISO 8601, "2023-07-01T00:00:00Z", or NULL
   * when the run has no date. With it every time dataset's units are
   * "seconds since ORIGIN" with a calendar, as CF conventions write a
   * time coordinate (so xarray and ncdump -t show dates); without it
   * they stay "s" and a comment says there is no date. At most 63
   * bytes; copied. */
  const char *time_origin;
  int keep_partial; /* destroyed before commit: keep PATH.partial, whole
                       and marked complete=0, unless a write had failed */
} h5w_options;

/* Takes PATH.lock, creates PATH.partial (replacing an old partial file,
 * never PATH itself) and returns a sink writing to it, or NULL with the
 * reason in err: SIM_EBUSY when another process holds the lock (nothing
 * is touched then).
 * opts may be NULL. The caller owns the sink (tel_destroy). */
tel_sink *h5w_create(const char *path, const h5w_options *opts, sim_error *err);

#endif
