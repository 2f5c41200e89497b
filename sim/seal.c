/* seal.c - the checksum of a whole file in its user block (seal.h). */
#include "seal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#define SEAL_MAGIC "aifsim-seal 1\n"
#define SEAL_READ ((size_t)1 << 20) /* bytes per read */

/* The CRC-32 of fd's bytes from SEAL_BLOCK to the end, and how many
 * there were. 0, or -1 with errno. */
static int crc_after_block(int fd, unsigned long *crc,
                           unsigned long long *bytes) {
  unsigned char *buf = malloc(SEAL_READ);
  off_t at = SEAL_BLOCK;
  *crc = crc32(0L, Z_NULL, 0);
  *bytes = 0;
  if (buf == NULL) {
    errno = ENOMEM;
    return -1;
  }
  for (;;) {
    ssize_t n = pread(fd, buf, SEAL_READ, at);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      free(buf);
      return n < 0 ? -1 : 0;
    }
    *crc = crc32(*crc, buf, (uInt)n);
    *bytes += (unsigned long long)n;
    at += n;
  }
}

/* The block a file with this CRC and size carries: the text, then NULs. */
static void make_block(unsigned char *block, unsigned long crc,
                       unsigned long long bytes) {
  memset(block, 0, SEAL_BLOCK);
  snprintf((char *)block, SEAL_BLOCK, SEAL_MAGIC "crc32 %08lx\nsize %llu\n",
           crc, bytes + SEAL_BLOCK);
}

static int io_error(sim_error *err, const char *path, const char *what) {
  return sim_error_set(err, SIM_EIO, "%s: cannot %s: %s", path, what,
                       strerror(errno));
}

int seal_write(const char *path, sim_error *err) {
  unsigned char block[SEAL_BLOCK];
  unsigned long crc;
  unsigned long long bytes;
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0)
    return io_error(err, path, "open to seal it");
  int rc = SIM_OK;
  if (crc_after_block(fd, &crc, &bytes) != 0)
    rc = io_error(err, path, "read it back to seal it");
  make_block(block, crc, bytes);
  if (rc == SIM_OK && pwrite(fd, block, SEAL_BLOCK, 0) != SEAL_BLOCK)
    rc = io_error(err, path, "write its seal");
  if (close(fd) != 0 && rc == SIM_OK)
    rc = io_error(err, path, "close it after sealing");
  return rc;
}

/* The sealed size the block states (0 if it states none). */
static unsigned long long sealed_size(const unsigned char *block) {
  const char *s = strstr((const char *)block, "\nsize ");
  return s != NULL ? strtoull(s + 6, NULL, 10) : 0;
}

static int compare(const char *path, const unsigned char *found, int fd,
                   sim_error *err) {
  unsigned char want[SEAL_BLOCK];
  unsigned long crc;
  unsigned long long bytes;
  if (crc_after_block(fd, &crc, &bytes) != 0)
    return io_error(err, path, "read it");
  make_block(want, crc, bytes);
  if (memcmp(want, found, SEAL_BLOCK) == 0)
    return SIM_OK;
  unsigned long long sealed = sealed_size(found);
  if (sealed != 0 && sealed != bytes + SEAL_BLOCK)
    return sim_error_set(err, SIM_EIO,
                         "%s: damaged: %llu bytes, but %llu when aifsim "
                         "wrote it (truncated or extended since)",
                         path, bytes + SEAL_BLOCK, sealed);
  return sim_error_set(err, SIM_EIO,
                       "%s: damaged: its checksum does not match (changed "
                       "after aifsim wrote it)",
                       path);
}

/* No seal where one should be: a file laid out as aifsim writes them
 * (HDF5's signature right after the block) had its seal damaged; any
 * other file never had one. */
static int no_seal(const char *path, int fd, sim_error *err) {
  static const unsigned char hdf5[8] = {0x89, 'H',  'D',  'F',
                                        '\r', '\n', 0x1a, '\n'};
  unsigned char sig[sizeof hdf5];
  if (pread(fd, sig, sizeof sig, SEAL_BLOCK) == (ssize_t)sizeof sig &&
      memcmp(sig, hdf5, sizeof sig) == 0)
    return sim_error_set(err, SIM_EIO, "%s: damaged: its seal is unreadable",
                         path);
  return sim_error_set(err, SIM_ENOTFOUND,
                       "%s: carries no aifsim seal (not written by this "
                       "aifsim)",
                       path);
}

int seal_check(const char *path, sim_error *err) {
  unsigned char found[SEAL_BLOCK];
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return io_error(err, path, "open");
  struct stat st;
  ssize_t n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode)
                  ? pread(fd, found, SEAL_BLOCK, 0)
                  : -1;
  int rc;
  if (n < 0)
    rc = sim_error_set(err, SIM_EIO, "%s: cannot read: not a regular file",
                       path);
  else if (n < (ssize_t)sizeof SEAL_MAGIC - 1 ||
           memcmp(found, SEAL_MAGIC, sizeof SEAL_MAGIC - 1) != 0)
    rc = no_seal(path, fd, err);
  else
    rc = n < SEAL_BLOCK ? sim_error_set(err, SIM_EIO,
                                        "%s: damaged: "
                                        "truncated",
                                        path)
                        : compare(path, found, fd, err);
  close(fd);
  return rc;
}
