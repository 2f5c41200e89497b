/* test_seal.c - the checksum of a whole file in its first block: a file
 * sealed reads back whole; any one flipped byte, in the data or in the
 * seal itself, is damage; a file without the seal is not aifsim's, unless
 * it is laid out as aifsim's files are (then its seal was damaged). */
#include "test_util.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "seal.h"

static const unsigned char hdf5_signature[8] = {0x89, 'H',  'D',  'F',
                                                '\r', '\n', 0x1a, '\n'};

/* A file of SEAL_BLOCK zero bytes, then the HDF5 signature and n bytes of
 * a pattern: what HDF5 leaves before seal_write. */
static const char *fake_file(const char *name, size_t n) {
  const char *path = test_out_path(name);
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  for (int i = 0; i < SEAL_BLOCK; i++)
    fputc(0, f);
  fwrite(hdf5_signature, 1, sizeof hdf5_signature, f);
  for (size_t i = 0; i < n; i++)
    fputc((int)(i * 7 % 251), f);
  fclose(f);
  return path;
}

static void flip(const char *path, long at) {
  FILE *f = fopen(path, "r+b");
  fseek(f, at, SEEK_SET);
  int c = fgetc(f);
  fseek(f, at, SEEK_SET);
  fputc(c ^ 0x20, f);
  fclose(f);
}

typedef struct damage_case {
  const char *name;
  long at; /* the byte flipped */
  const char *msg;
} damage_case;

static const damage_case damages[] = {
    {"the magic", 3, "seal is unreadable"},
    {"the checksum", 22, "checksum does not match"},
    {"the size", 35, "damaged"},
    {"the padding", 300, "checksum does not match"},
    {"the signature", SEAL_BLOCK + 1, "checksum does not match"},
    {"the data", SEAL_BLOCK + 5000, "checksum does not match"},
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
  assert_int_equal(truncate(path, 8000), 0);
  assert_int_equal(seal_check(path, &err), SIM_EIO);
  assert_non_null(strstr(err.msg, "8000 bytes, but 10520"));
  path = fake_file("seal-none.h5", 100); /* never sealed: zeros first */
  assert_int_equal(seal_check(path, &err), SIM_EIO);
  assert_non_null(strstr(err.msg, "seal is unreadable"));
  path = test_out_path("seal-foreign.txt");
  FILE *f = fopen(path, "w");
  fputs("a file of another kind", f);
  fclose(f);
  assert_int_equal(seal_check(path, &err), SIM_ENOTFOUND);
  assert_non_null(strstr(err.msg, "no aifsim seal"));
  assert_int_equal(seal_check(test_out_path("seal-absent"), &err), SIM_EIO);
  assert_int_equal(seal_check("/tmp", &err), SIM_EIO);
  assert_int_equal(seal_write(test_out_path("seal-absent"), &err), SIM_EIO);
}

int main(void) {
  struct CMUnitTest tests[16];
  size_t n = 0;
  TEST_ROWS(tests, n, any_flipped_byte_is_damage, damages);
  TEST_ADD(tests, n, truncated_and_foreign_files);
  return _cmocka_run_group_tests("seal", tests, n, NULL, NULL);
}
