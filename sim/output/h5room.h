/* h5room.h - whether HDF5 can create a file without running out of
 * address space inside its own create path, where it cannot fail cleanly.
 * Internal to sim/output. */
#ifndef AIFSIM_SIM_OUTPUT_H5ROOM_H
#define AIFSIM_SIM_OUTPUT_H5ROOM_H

#include <stdbool.h>
#include <sys/mman.h>

/* Address space H5Fcreate must find free: HDF5 1.10.8 (Debian 12) does
 * not survive a failed allocation in its create path (H5Fcreate ->
 * H5F_open -> H5F__new -> H5AC_create segfaults when the metadata cache's
 * allocation fails), so every writer (the run file, record.c; the sweep
 * summary, h5read.c) makes sure first that it will not.
 * Measured on the release build running quickstart.yaml under gdb with no
 * limit, VmSize from /proc/PID/status at H5Fcreate's entry and return:
 * 32,536 -> 33,052 KB, 516 KB (the cache's 64 Ki-slot hash table, one
 * mapping); under `ulimit -v` it crashed for every limit from 32,970 to
 * 33,050 KB, between VmPeak before the call (32,968) and VmSize after.
 * Four times that covers other builds' layouts; a run so close to its
 * limit would run out a few MB later anyway (quickstart needs ~43 MB). */
enum { H5_CREATE_ROOM = 2 << 20 };

/* Whether H5_CREATE_ROOM bytes of address space can be mapped now: a
 * mapping made and dropped at once, never touched (no memory is used),
 * which fails exactly where `ulimit -v` or strict overcommit would make
 * HDF5's allocations fail. */
static inline bool h5_room_to_create(void) {
  void *p = mmap(NULL, H5_CREATE_ROOM, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    return false;
  munmap(p, H5_CREATE_ROOM);
  return true;
}

#endif
