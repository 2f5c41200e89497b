/* test_err.c - the status codes, their names and messages, sim_error. */
#include "test_util.h"

#include <string.h>

#include "err.h"

static void names_and_messages_cover_every_code(void **state) {
  (void)state;
#define XX(name, code, text)                                                   \
  assert_string_equal(sim_err_name(SIM_##name), "SIM_" #name);                 \
  assert_string_equal(sim_strerror(SIM_##name), text);                         \
  assert_true(SIM_##name < 0);
  SIM_ERRNO_MAP(XX)
#undef XX
  assert_string_equal(sim_err_name(SIM_OK), "SIM_OK");
  assert_string_equal(sim_err_name(12345), "SIM_UNKNOWN");
  assert_string_equal(sim_strerror(12345), "unknown error");
}

static void error_set_keeps_code_and_message(void **state) {
  (void)state;
  sim_error e = {0};
  assert_int_equal(sim_error_set(&e, SIM_EIO, "file %s line %d", "a.h5", 3),
                   SIM_EIO);
  assert_int_equal(e.code, SIM_EIO);
  assert_string_equal(e.msg, "file a.h5 line 3");
  sim_error_clear(&e);
  assert_int_equal(e.code, SIM_OK);
  assert_string_equal(e.msg, "");
  /* A NULL error is allowed: the code still comes back. */
  assert_int_equal(sim_error_set(NULL, SIM_EINVAL, "x"), SIM_EINVAL);
}

static void long_messages_are_truncated_not_overrun(void **state) {
  (void)state;
  sim_error e;
  char big[4000];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  sim_error_set(&e, SIM_EINPUT, "%s", big);
  assert_int_equal(strlen(e.msg), sizeof e.msg - 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(names_and_messages_cover_every_code),
      cmocka_unit_test(error_set_keeps_code_and_message),
      cmocka_unit_test(long_messages_are_truncated_not_overrun),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
