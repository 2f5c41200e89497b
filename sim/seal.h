/* seal.h - a checksum of a whole finished file, kept in the file itself
 * (seal). Part of sim_io: the HDF5 writers seal every file they finish,
 * and readers check the seal before they trust a file.
 *
 * HDF5 leaves the first SEAL_BLOCK bytes of the file to its user (the
 * "user block", reserved at creation with H5Pset_userblock; HDF5 then
 * finds its superblock right after it). Once HDF5 has closed the file,
 * seal_write puts a short text there: a magic line, the CRC-32 (IEEE, as
 * zlib and Python's zlib.crc32 compute it) of every byte after the block,
 * and the file's size. seal_check rebuilds the whole block from the bytes
 * after it and compares all SEAL_BLOCK bytes, so a change to any byte of
 * the file is found: in data, in HDF5's metadata (whose own checksums do
 * not cover its global heap, where variable-length strings live) or in
 * the seal itself. It needs no HDF5, so checking a damaged file cannot
 * crash the reader. */
#ifndef SIM_SEAL_H
#define SIM_SEAL_H

#include "err.h"

/* Bytes reserved at the start of every file aifsim writes. A power of
 * two of at least 512, as HDF5 requires. */
#define SEAL_BLOCK 512

/* Seals the closed HDF5 file at path (created with a SEAL_BLOCK user
 * block). SIM_OK, or SIM_EIO with a message. */
int seal_write(const char *path, sim_error *err);

/* Checks the seal of the file at path. SIM_OK when it is whole;
 * SIM_ENOTFOUND when it carries no seal (not written by this aifsim, or
 * by an aifsim older than seals), with a message; SIM_EIO when it cannot
 * be read or was changed after sealing, with a message that says so. */
int seal_check(const char *path, sim_error *err);

#endif
