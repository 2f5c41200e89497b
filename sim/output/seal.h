/* seal.h - a checksum of a whole finished file, kept in the file itself
 * (seal). Part of sim_io: the HDF5 writers seal every file they finish,
 * and readers check the seal before they trust a file.
 *
 * Once HDF5 has closed the file, seal_write appends SEAL_BYTES after the
 * last byte HDF5 wrote: a magic line, the CRC-32 (IEEE, as zlib and
 * Python's zlib.crc32 compute it) of every byte before them, and that
 * count. HDF5 reads such a file as any other (a file longer than the end
 * its superblock records is fine), and the HDF5 signature stays at byte 0,
 * where tools that guess a file's format look (xarray's open_dataset
 * does). seal_check rebuilds the whole trailer from the bytes before it
 * and compares all SEAL_BYTES, so a change to any byte of the file is
 * found: in data, in HDF5's metadata (whose own checksums do not cover its
 * global heap, where variable-length strings live) or in the seal itself.
 * It needs no HDF5, so checking a damaged file cannot crash the reader. A
 * file a program opens for writing after aifsim (h5py's "a" mode) loses
 * its seal's match: it is no longer what the run wrote. */
#ifndef SIM_SEAL_H
#define SIM_SEAL_H

#include <stddef.h>

#include "err.h"

/* Bytes the seal adds at the end of every file aifsim writes. */
#define SEAL_BYTES 64

/* zlib's crc32(crc, p, n) (crc 0 to start), by carry-less multiplication
 * where the CPU has it: the seal's checksum of a whole file. */
unsigned long seal_crc32(unsigned long crc, const unsigned char *p, size_t n);

/* Seals the closed HDF5 file at path. SIM_OK, or SIM_EIO with a message
 * (the file is then as HDF5 left it, or cut back to that). */
int seal_write(const char *path, sim_error *err);

/* Checks the seal of the file at path. SIM_OK when it is whole;
 * SIM_ENOTFOUND when it carries no seal (not written by this aifsim, or
 * by an aifsim older than seals), with a message; SIM_EIO when it cannot
 * be read or was changed after sealing, with a message that says so. */
int seal_check(const char *path, sim_error *err);

#endif
