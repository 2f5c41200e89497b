/* seal.c - the checksum of a whole file in a trailer after it (seal.h). */
#include "seal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#if defined(__GNUC__) && defined(__x86_64__)
#define SEAL_CLMUL 1
#include <immintrin.h>
#endif

#define SEAL_MAGIC "aifsim-seal 1\n"
#define SEAL_READ ((size_t)1 << 20) /* bytes per read */

static const unsigned char hdf5_signature[8] = {0x89, 'H',  'D',  'F',
                                                '\r', '\n', 0x1a, '\n'};

/* ---- The CRC-32 by carry-less multiplication ----------------------------
 * Why: zlib's table-driven CRC-32 reads about 2.5 GB/s here, and the seal
 * reads the whole file back as the run ends: 6 ms of bench-10k's fluid
 * day (17.6 MB), on the main thread. Folding 64 bytes a step by PCLMULQDQ
 * (Gopal, Ozturk et al., "Fast CRC Computation for Generic Polynomials
 * Using PCLMULQDQ Instruction", Intel, 2009: its constants for the
 * reflected IEEE polynomial 0x1db710641) reads about 15 GB/s and gives
 * the same CRC, so the same trailer. */

#ifdef SEAL_CLMUL
/* r folded by k (128 bits on, for k1k2 512), plus next. */
__attribute__((target("pclmul"))) static inline __m128i
fold(__m128i r, __m128i k, __m128i next) {
  return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(r, k, 0x00),
                                     _mm_clmulepi64_si128(r, k, 0x11)),
                       next);
}

/* The CRC of len bytes at buf (len >= 64, a multiple of 16) continued
 * from crc, both inverted as the paper's registers hold them. */
__attribute__((target("pclmul"))) static uint32_t
fold_crc(const unsigned char *buf, size_t len, uint32_t crc) {
  const __m128i k1k2 = _mm_set_epi64x(0x01c6e41596, 0x0154442bd4);
  const __m128i k3k4 = _mm_set_epi64x(0x00ccaa009e, 0x01751997d0);
  const __m128i k5 = _mm_set_epi64x(0, 0x0163cd6124);
  const __m128i poly = _mm_set_epi64x(0x01f7011641, 0x01db710641);
  const __m128i low32 = _mm_setr_epi32(-1, 0, -1, 0);
  __m128i x[4];
  for (int i = 0; i < 4; i++)
    x[i] = _mm_loadu_si128((const __m128i *)(buf + 16 * i));
  x[0] = _mm_xor_si128(x[0], _mm_cvtsi32_si128((int)crc));
  /* Four lanes of 16 bytes, each folded 64 bytes on and the next added;
   * then the lanes into one, and that one over the 16s left. */
  for (buf += 64, len -= 64; len >= 64; buf += 64, len -= 64)
    for (int i = 0; i < 4; i++)
      x[i] = fold(x[i], k1k2, _mm_loadu_si128((const __m128i *)(buf + 16 * i)));
  __m128i r = x[0];
  for (int i = 1; i < 4; i++)
    r = fold(r, k3k4, x[i]);
  for (; len >= 16; buf += 16, len -= 16)
    r = fold(r, k3k4, _mm_loadu_si128((const __m128i *)buf));
  /* 128 bits to 64, to 32 (Barrett's reduction by the polynomial) */
  r = _mm_xor_si128(_mm_srli_si128(r, 8), _mm_clmulepi64_si128(r, k3k4, 0x10));
  r = _mm_xor_si128(_mm_srli_si128(r, 4),
                    _mm_clmulepi64_si128(_mm_and_si128(r, low32), k5, 0x00));
  __m128i t = _mm_and_si128(
      _mm_clmulepi64_si128(_mm_and_si128(r, low32), poly, 0x10), low32);
  r = _mm_xor_si128(r, _mm_clmulepi64_si128(t, poly, 0x00));
  return (uint32_t)_mm_cvtsi128_si32(_mm_srli_si128(r, 4));
}

#endif

unsigned long seal_crc32(unsigned long crc, const unsigned char *p, size_t n) {
#ifdef SEAL_CLMUL
  if (n >= 64 && __builtin_cpu_supports("pclmul")) {
    size_t m = n & ~(size_t)15;
    crc = ~fold_crc(p, m, ~(uint32_t)crc) & 0xffffffffUL;
    p += m;
    n -= m;
  }
#endif
  return crc32(crc, p, (uInt)n);
}

/* The CRC-32 of fd's first n bytes. 0, or -1 with errno. */
static int crc_of(int fd, off_t n, unsigned long *crc) {
  unsigned char *buf = malloc(SEAL_READ);
  *crc = crc32(0L, Z_NULL, 0);
  if (buf == NULL) {
    errno = ENOMEM;
    return -1;
  }
  for (off_t at = 0; at < n;) {
    size_t want = (size_t)(n - at) < SEAL_READ ? (size_t)(n - at) : SEAL_READ;
    ssize_t got = pread(fd, buf, want, at);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0) {
      free(buf);
      errno = got < 0 ? errno : EIO;
      return -1;
    }
    *crc = seal_crc32(*crc, buf, (size_t)got);
    at += got;
  }
  free(buf);
  return 0;
}

/* The trailer of a file whose first n bytes have this CRC: the text,
 * then NULs to SEAL_BYTES. */
static void make_trailer(unsigned char *t, unsigned long crc,
                         unsigned long long n) {
  memset(t, 0, SEAL_BYTES);
  snprintf((char *)t, SEAL_BYTES, SEAL_MAGIC "crc32 %08lx\nsize %llu\n", crc,
           n);
}

static int io_error(sim_error *err, const char *path, const char *what) {
  return sim_error_set(err, SIM_EIO, "%s: cannot %s: %s", path, what,
                       strerror(errno));
}

/* Appends the trailer to the open file of size n; on a short write the
 * file is cut back to n. 0, or -1 with errno. */
static int append_trailer(int fd, off_t n) {
  unsigned char t[SEAL_BYTES];
  unsigned long crc;
  if (crc_of(fd, n, &crc) != 0)
    return -1;
  make_trailer(t, crc, (unsigned long long)n);
  if (pwrite(fd, t, SEAL_BYTES, n) == SEAL_BYTES)
    return 0;
  int e = errno; /* the write's error is the one to report */
  if (ftruncate(fd, n) != 0 && e == 0)
    e = errno;
  errno = e != 0 ? e : EIO;
  return -1;
}

int seal_write(const char *path, sim_error *err) {
  struct stat st;
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0)
    return io_error(err, path, "open to seal it");
  int rc = SIM_OK;
  if (fstat(fd, &st) != 0 || append_trailer(fd, st.st_size) != 0)
    rc = io_error(err, path, "seal it");
  if (close(fd) != 0 && rc == SIM_OK)
    rc = io_error(err, path, "close it after sealing");
  return rc;
}

/* The size a trailer states (0 if none). */
static unsigned long long sealed_size(const unsigned char *t) {
  const char *s = strstr((const char *)t, "\nsize ");
  return s != NULL ? strtoull(s + 6, NULL, 10) : 0;
}

/* The end of the file as HDF5's superblock (version 2 or 3, at byte 0)
 * records it, or 0 when there is no such superblock. */
static uint64_t hdf5_end(int fd) {
  unsigned char sb[36];
  if (pread(fd, sb, sizeof sb, 0) != (ssize_t)sizeof sb ||
      memcmp(sb, hdf5_signature, sizeof hdf5_signature) != 0 ||
      (sb[8] != 2 && sb[8] != 3) || sb[9] != 8)
    return 0;
  uint64_t end = 0;
  for (int i = 7; i >= 0; i--) /* little-endian at byte 28 */
    end = end << 8 | sb[28 + i];
  return end;
}

/* No seal where one should be: an HDF5 file longer than its superblock
 * says had something after it, a seal that is now damaged; a file of
 * exactly that length (or no such superblock) never had one. */
static int no_seal(const char *path, int fd, off_t size, sim_error *err) {
  uint64_t end = hdf5_end(fd);
  if (end > 0 && end < (uint64_t)size)
    return sim_error_set(err, SIM_EIO, "%s: damaged: its seal is unreadable",
                         path);
  return sim_error_set(err, SIM_ENOTFOUND,
                       "%s: carries no aifsim seal (not written by this "
                       "aifsim)",
                       path);
}

/* Rebuilds the trailer of the file (size bytes, the found trailer last)
 * and compares. */
static int compare(const char *path, int fd, off_t size,
                   const unsigned char *found, sim_error *err) {
  unsigned char want[SEAL_BYTES];
  unsigned long crc;
  off_t n = size - SEAL_BYTES;
  if (crc_of(fd, n, &crc) != 0)
    return io_error(err, path, "read it");
  make_trailer(want, crc, (unsigned long long)n);
  if (memcmp(want, found, SEAL_BYTES) == 0)
    return SIM_OK;
  unsigned long long sealed = sealed_size(found);
  if (sealed != 0 && sealed != (unsigned long long)n)
    return sim_error_set(err, SIM_EIO,
                         "%s: damaged: %llu bytes, but %llu when aifsim "
                         "wrote it (truncated or extended since)",
                         path, (unsigned long long)size, sealed + SEAL_BYTES);
  return sim_error_set(err, SIM_EIO,
                       "%s: damaged: its checksum does not match (changed "
                       "after aifsim wrote it)",
                       path);
}

int seal_check(const char *path, sim_error *err) {
  unsigned char found[SEAL_BYTES];
  struct stat st;
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return io_error(err, path, "open");
  int rc;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    rc = sim_error_set(err, SIM_EIO, "%s: cannot read: not a regular file",
                       path);
  else if (st.st_size < SEAL_BYTES ||
           pread(fd, found, SEAL_BYTES, st.st_size - SEAL_BYTES) !=
               SEAL_BYTES ||
           memcmp(found, SEAL_MAGIC, sizeof SEAL_MAGIC - 1) != 0)
    rc = no_seal(path, fd, st.st_size, err);
  else
    rc = compare(path, fd, st.st_size, found, err);
  close(fd);
  return rc;
}
