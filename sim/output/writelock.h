/* writelock.h - one writer per output path (wlock): PATH.lock, created
 * exclusively before the writer creates or truncates anything, removed
 * when it is done. Part of sim_core; the HDF5 writers (record.c,
 * h5read.c) take it for every file they write.
 *
 * Why a file of its own: HDF5's own lock (flock) is taken only after
 * H5Fcreate has truncated the file, and it is often switched off
 * (HDF5_USE_FILE_LOCKING=FALSE) on Lustre and NFS, where flock fails.
 * Creating a file exclusively is atomic on those file systems too. The
 * lock is written whole under a unique name and hard-linked into place
 * (link(2) fails if the name exists), so a reader never sees half a lock.
 *
 * The lock names its holder: process id, host name, boot id and the
 * process's start time. A lock whose holder is on this host and no longer
 * runs (a run killed with SIGKILL, or a reboot since) is stale and is
 * taken over; a lock held from another host is never broken, since its
 * holder cannot be checked from here: the message says how to remove it.
 * Taking over renames the stale lock away and checks that the file moved
 * is the one found stale, so two processes breaking the same stale lock
 * do not both win. */
#ifndef SIM_WRITELOCK_H
#define SIM_WRITELOCK_H

#include <stdbool.h>

#include "err.h"

/* A lock held (path set) or not (path[0] == '\0'). Embedded. */
typedef struct wlock {
  char path[4200]; /* PATH.lock */
} wlock;

/* Takes the lock of output path: creates PATH.lock exclusively. SIM_OK
 * with *lk holding it; SIM_EBUSY with a message naming the lock file and
 * its holder when another process holds it; SIM_EIO (the directory
 * cannot take the file) or SIM_EINVAL (path too long) otherwise. */
int wlock_take(wlock *lk, const char *path, sim_error *err);

/* Removes the lock file if *lk holds one; *lk then holds none. Safe to
 * call twice. Async-signal-safe (unlink only). */
void wlock_release(wlock *lk);

/* Whether *lk holds a lock. */
bool wlock_held(const wlock *lk);

#endif
