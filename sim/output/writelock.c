/* writelock.c - PATH.lock, one writer per output path (writelock.h). */
#include "writelock.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define WLOCK_MAGIC "aifsim-lock 1"
#define WLOCK_TEXT 640 /* bytes of a lock file's text, at most */

/* Who holds a lock, as its file says. */
typedef struct holder {
  long pid;
  char host[256];
  char boot[64];
  unsigned long long start; /* clock ticks after boot; 0: unknown */
} holder;

/* ---- Who we are -------------------------------------------------------- */

/* Up to size - 1 bytes of the start of a small file, NUL-terminated; ""
 * when it cannot be read. */
static void read_small(const char *path, char *buf, size_t size) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  ssize_t n = fd >= 0 ? read(fd, buf, size - 1) : -1;
  buf[n > 0 ? n : 0] = '\0';
  if (fd >= 0)
    close(fd);
}

/* The kernel's boot id, which a reboot changes ("" without /proc). */
static void boot_id(char *out, size_t size) {
  read_small("/proc/sys/kernel/random/boot_id", out, size);
  out[strcspn(out, "\n")] = '\0';
}

/* When process pid started (field 22 of /proc/PID/stat), so a pid reused
 * by another process is told apart; 0 when unknown. */
static unsigned long long start_time(long pid) {
  char path[64], text[1024];
  snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  read_small(path, text, sizeof text);
  const char *p = strrchr(text, ')'); /* the name may hold spaces */
  for (int field = 2; p != NULL && field < 22; field++)
    p = strchr(p + 1, ' ');
  return p != NULL ? strtoull(p + 1, NULL, 10) : 0;
}

static void me(holder *h) {
  memset(h, 0, sizeof *h);
  h->pid = (long)getpid();
  if (gethostname(h->host, sizeof h->host - 1) != 0)
    snprintf(h->host, sizeof h->host, "?");
  boot_id(h->boot, sizeof h->boot);
  h->start = start_time(h->pid);
}

static void format_holder(const holder *h, char *buf, size_t size) {
  snprintf(buf, size, "%s\npid %ld\nhost %s\nboot %s\nstart %llu\n",
           WLOCK_MAGIC, h->pid, h->host, h->boot, h->start);
}

/* The value of line "KEY VALUE" of a lock's text into out ("" if none);
 * false when the line is missing. */
static bool field(const char *text, const char *key, char *out, size_t size) {
  char head[32];
  snprintf(head, sizeof head, "\n%s ", key);
  const char *p = strstr(text, head);
  out[0] = '\0';
  if (p == NULL)
    return false;
  p += strlen(head);
  size_t n = strcspn(p, "\n");
  snprintf(out, size, "%.*s", (int)(n < size ? n : size - 1), p);
  return true;
}

/* Reads a lock's text back; false when it is not one of ours, whole. */
static bool parse_holder(const char *text, holder *h) {
  char pid[32], start[32];
  memset(h, 0, sizeof *h);
  if (strncmp(text, WLOCK_MAGIC "\n", sizeof WLOCK_MAGIC) != 0 ||
      !field(text, "pid", pid, sizeof pid) ||
      !field(text, "host", h->host, sizeof h->host) ||
      !field(text, "boot", h->boot, sizeof h->boot) ||
      !field(text, "start", start, sizeof start))
    return false;
  h->pid = strtol(pid, NULL, 10);
  h->start = strtoull(start, NULL, 10);
  return h->pid > 0;
}

/* Whether the holder may still run: always when it is on another host
 * (it cannot be checked from here); on this one, when its process exists
 * and is the same process (not a reboot or a reused pid). */
static bool holder_alive(const holder *h, const holder *self) {
  if (strcmp(h->host, self->host) != 0)
    return true;
  if (h->boot[0] != '\0' && self->boot[0] != '\0' &&
      strcmp(h->boot, self->boot) != 0)
    return false;
  if (h->pid <= 0 || (kill((pid_t)h->pid, 0) != 0 && errno == ESRCH))
    return false;
  unsigned long long now = h->start != 0 ? start_time(h->pid) : 0;
  return now == 0 || now == h->start;
}

/* ---- Taking ------------------------------------------------------------ */

/* Creates path exclusively with text: 0, or -1 with errno. */
static int write_new(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    return -1;
  size_t len = strlen(text);
  ssize_t n = write(fd, text, len);
  int e = errno;
  if (close(fd) != 0 || n != (ssize_t)len) {
    unlink(path);
    errno = n == (ssize_t)len ? EIO : e;
    return -1;
  }
  return 0;
}

/* Puts the lock in place: a hard link of the whole text written under
 * tmp, or where the file system has no hard links, an exclusive create
 * (a reader may then see it empty for a moment: it counts as held). */
static int place(const char *tmp, const char *lock, const char *text) {
  if (link(tmp, lock) == 0)
    return 0;
  if (errno == EEXIST)
    return -1;
  return write_new(lock, text);
}

enum { LOCK_GONE, LOCK_HELD, LOCK_STALE };

/* Reads the lock file: held (*h says by whom, *known whether it said),
 * stale, or gone since; *ino is the inode read. */
static int inspect(const char *lock, const holder *self, holder *h, bool *known,
                   ino_t *ino) {
  char text[WLOCK_TEXT];
  struct stat st;
  int fd = open(lock, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return errno == ENOENT ? LOCK_GONE : LOCK_HELD;
  ssize_t n = fstat(fd, &st) == 0 ? read(fd, text, sizeof text - 1) : -1;
  close(fd);
  text[n > 0 ? n : 0] = '\0';
  *ino = st.st_ino;
  *known = n > 0 && parse_holder(text, h);
  if (!*known)
    return LOCK_HELD;
  return holder_alive(h, self) ? LOCK_HELD : LOCK_STALE;
}

/* Moves a stale lock out of the way, if the file at lock is still the one
 * found stale (inode ino); a fresh lock taken meanwhile is put back. */
static void break_stale(const char *lock, ino_t ino, long pid) {
  char aside[sizeof((wlock *)0)->path + 32];
  struct stat st;
  snprintf(aside, sizeof aside, "%s.stale.%ld", lock, pid);
  if (rename(lock, aside) != 0)
    return; /* gone: another process broke it */
  if (stat(aside, &st) != 0 || st.st_ino != ino)
    (void)link(aside, lock);
  unlink(aside);
}

static int busy(sim_error *err, const char *path, const char *lock,
                const holder *h, bool known, const holder *self) {
  if (!known)
    return sim_error_set(err, SIM_EBUSY,
                         "%s: locked by %s, which does not say who holds it; "
                         "if no aifsim process is writing %s, remove %s",
                         path, lock, path, lock);
  if (strcmp(h->host, self->host) != 0)
    return sim_error_set(err, SIM_EBUSY,
                         "%s: another aifsim process is writing it (lock %s: "
                         "pid %ld on host %s); wait for it, or write "
                         "elsewhere; if no aifsim runs there any more, "
                         "remove %s",
                         path, lock, h->pid, h->host, lock);
  return sim_error_set(err, SIM_EBUSY,
                       "%s: another aifsim process is writing it (lock %s: "
                       "pid %ld); wait for it to finish, or write elsewhere",
                       path, lock, h->pid);
}

/* The temporary file holding the lock's text, before it is linked. */
static int make_tmp(const char *tmp, const char *text, sim_error *err) {
  if (write_new(tmp, text) == 0)
    return SIM_OK;
  if (errno == EEXIST && unlink(tmp) == 0 && write_new(tmp, text) == 0)
    return SIM_OK; /* left by a process of this pid that was killed */
  return sim_error_set(err, SIM_EIO, "%s: cannot create: %s", tmp,
                       strerror(errno));
}

/* Tries to place the lock a few times, breaking stale ones. */
static int place_or_report(const char *path, const char *lock, const char *tmp,
                           const char *text, const holder *self,
                           sim_error *err) {
  holder h;
  bool known = false;
  for (int tries = 0; tries < 8; tries++) {
    ino_t ino = 0;
    if (place(tmp, lock, text) == 0)
      return SIM_OK;
    if (errno != EEXIST)
      return sim_error_set(err, SIM_EIO, "%s: cannot create: %s", lock,
                           strerror(errno));
    int state = inspect(lock, self, &h, &known, &ino);
    if (state == LOCK_HELD)
      return busy(err, path, lock, &h, known, self);
    if (state == LOCK_STALE)
      break_stale(lock, ino, self->pid);
  }
  return busy(err, path, lock, &h, known, self);
}

int wlock_take(wlock *lk, const char *path, sim_error *err) {
  char lock[sizeof lk->path], tmp[sizeof lk->path + 48], text[WLOCK_TEXT];
  holder self;
  lk->path[0] = '\0';
  if (snprintf(lock, sizeof lock, "%s.lock", path) >= (int)sizeof lock)
    return sim_error_set(err, SIM_EINVAL, "%s: path too long", path);
  me(&self);
  format_holder(&self, text, sizeof text);
  snprintf(tmp, sizeof tmp, "%s.%ld.tmp", lock, self.pid);
  int rc = make_tmp(tmp, text, err);
  if (rc != SIM_OK)
    return rc;
  rc = place_or_report(path, lock, tmp, text, &self, err);
  unlink(tmp);
  if (rc == SIM_OK)
    memcpy(lk->path, lock, sizeof lock);
  return rc;
}

void wlock_release(wlock *lk) {
  if (lk->path[0] == '\0')
    return;
  unlink(lk->path);
  lk->path[0] = '\0';
}

bool wlock_held(const wlock *lk) { return lk->path[0] != '\0'; }
