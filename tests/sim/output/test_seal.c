/* test_seal.c - the checksum of a whole file in a trailer after it: a
 * file sealed reads back whole; any one flipped byte, in the data or in
 * the seal itself, is damage; a file without the seal is not aifsim's,
 * unless it is longer than its HDF5 superblock says (then its seal was
 * damaged); the CRC-32 is the IEEE one, by the bit, at every length and
 * alignment (the folded path's 64-byte steps and 16-byte tails). */
#include "test_util.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "seal.h"

/* What HDF5 leaves before seal_write: a version 3 superblock (the
 * signature, then at byte 28 the end of the file it records, n) and n
 * bytes in all. */
static const char *fake_file(const char *name, size_t n) {
  static const unsigned char sig[12] = {0x89, 'H',  'D', 'F', '\r', '\n',
                                        0x1a, '\n', 3,   8,   8,    0};
  const char *path = test_out_path(name);
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  for (size_t i = 0; i < n; i++) {
    int c = (int)(i * 7 % 251);
    if (i < sizeof sig)
      c = sig[i];
    else if (i >= 28 && i < 36) /* the end, little-endian */
      c = (int)((uint64_t)n >> (8 * (i - 28)) & 0xff);
    fputc(c, f);
  }
  fclose(f);
  return path;
}

static void flip(const char *path, long at) {
  FILE *f = fopen(path, "r+b");
  fseek(f, at, at < 0 ? SEEK_END : SEEK_SET);
  int c = fgetc(f);
  fseek(f, -1, SEEK_CUR);
  fputc(c ^ 0x20, f);
  fclose(f);
}

typedef struct damage_case {
  const char *name;
  long at; /* the byte flipped; negative: from the end */
  const char *msg;
} damage_case;

static const damage_case damages[] = {
    {"the magic", -SEAL_BYTES + 3, "seal is unreadable"},
    {"the checksum", -SEAL_BYTES + 22, "checksum does not match"},
    {"the size", -SEAL_BYTES + 35, "damaged"},
    {"the padding", -2, "checksum does not match"},
    {"the signature", 1, "checksum does not match"},
    {"the superblock's end", 29, "checksum does not match"},
    {"the data", 5000, "checksum does not match"},
    {"the last byte before the seal", -SEAL_BYTES - 1,
     "checksum does not match"},
};

static void any_flipped_byte_is_damage(void **state) {
  const damage_case *c = *state;
  sim_error err = {0};
  const char *path = fake_file("seal-damage.h5", 10000);
  assert_int_equal(seal_write(path, &err), SIM_OK);
  assert_int_equal(seal_check(path, &err), SIM_OK);
  flip(path, c->at);
  assert_int_equal(seal_check(path, &err), SIM_EIO);
  if (strstr(err.msg, c->msg) == NULL || strstr(err.msg, path) == NULL)
    fail_msg("got '%s', want '%s' naming the file", err.msg, c->msg);
}

static void truncated_and_foreign_files(void **state) {
  (void)state;
  sim_error err = {0};
  const char *path = fake_file("seal-size.h5", 10000);
  assert_int_equal(seal_write(path, &err), SIM_OK);
  assert_int_equal(truncate(path, 10000 + SEAL_BYTES / 2), 0);
  assert_int_equal(seal_check(path, &err), SIM_EIO); /* half a seal */
  assert_non_null(strstr(err.msg, "seal is unreadable"));
  assert_int_equal(truncate(path, 10000), 0);
  assert_int_equal(seal_check(path, &err), SIM_ENOTFOUND); /* as HDF5 left */
  assert_int_equal(seal_write(path, &err), SIM_OK);
  FILE *f = fopen(path, "ab");
  fputs("more", f);
  fclose(f);
  assert_int_equal(seal_check(path, &err), SIM_EIO);
  path = test_out_path("seal-foreign.txt");
  f = fopen(path, "w");
  fputs("a file of another kind", f);
  fclose(f);
  assert_int_equal(seal_check(path, &err), SIM_ENOTFOUND);
  assert_non_null(strstr(err.msg, "no aifsim seal"));
  assert_int_equal(seal_check(test_out_path("seal-absent"), &err), SIM_EIO);
  assert_int_equal(seal_check("/tmp", &err), SIM_EIO);
  assert_int_equal(seal_write(test_out_path("seal-absent"), &err), SIM_EIO);
}

/* The IEEE CRC-32 one bit at a time (reflected polynomial 0xedb88320),
 * continued from crc as zlib's crc32 is. */
static unsigned long crc_by_bit(unsigned long crc, const unsigned char *p,
                                size_t n) {
  uint32_t c = ~(uint32_t)crc;
  for (size_t i = 0; i < n; i++) {
    c ^= p[i];
    for (int b = 0; b < 8; b++)
      c = c >> 1 ^ (0xedb88320u & (0u - (c & 1)));
  }
  return ~c & 0xffffffffUL;
}

typedef struct crc_case {
  const char *name;
  size_t n, offset;
  unsigned long start; /* the CRC continued from */
} crc_case;

static const crc_case crcs[] = {
    {"empty", 0, 0, 0},
    {"below the fold", 63, 1, 0},
    {"one fold step", 64, 0, 0},
    {"a step and a 16", 80, 3, 0x1234567},
    {"a step, 16s and bytes", 64 + 48 + 15, 5, 0},
    {"many steps, unaligned", 4096 + 64 + 16 + 7, 9, 0xdeadbeef},
    {"a megabyte and a tail", (1u << 20) + 33, 15, 0xffffffff},
};

static void crc32_is_ieee(void **state) {
  const crc_case *c = *state;
  static unsigned char buf[(1u << 20) + 64];
  uint32_t x = 2463534242u; /* xorshift32: bytes with no pattern */
  for (size_t i = 0; i < sizeof buf; i++) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    buf[i] = (unsigned char)x;
  }
  const unsigned char *p = buf + c->offset;
  assert_int_equal(seal_crc32(c->start, p, c->n),
                   crc_by_bit(c->start, p, c->n));
  /* in two pieces, continued, as the seal reads a file */
  size_t half = c->n / 2;
  assert_int_equal(
      seal_crc32(seal_crc32(c->start, p, half), p + half, c->n - half),
      crc_by_bit(c->start, p, c->n));
}

static void crc32_of_check_string(void **state) {
  (void)state;
  const char *s = "123456789"; /* the CRC catalogue's check: 0xcbf43926 */
  assert_int_equal(seal_crc32(0, (const unsigned char *)s, 9), 0xcbf43926);
}

int main(void) {
  struct CMUnitTest tests[24];
  size_t n = 0;
  TEST_ROWS(tests, n, any_flipped_byte_is_damage, damages);
  TEST_ADD(tests, n, truncated_and_foreign_files);
  TEST_ROWS(tests, n, crc32_is_ieee, crcs);
  TEST_ADD(tests, n, crc32_of_check_string);
  return _cmocka_run_group_tests("seal", tests, n, NULL, NULL);
}
