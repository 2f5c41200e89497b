# lib.sh - what the end-to-end test scripts share: a scratch folder removed
# on exit (and a background job killed, if BG_PID names one), and TAP-like
# result lines counted for the closing "N passed, M failed".
# Source it after setting NAME: . "$(dirname "$0")/lib.sh"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/aifsim-${NAME:-test}.XXXXXX")
BG_PID=
cleanup() {
  if [ -n "$BG_PID" ]; then
    kill -KILL "$BG_PID" 2>/dev/null
    wait "$BG_PID" 2>/dev/null
  fi
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

PASS=0
FAIL=0

# A command's hang limit (timeout -s KILL) is its release-build limit times
# SLOW: under ASan and UBSan (`make asan` sets ASAN_OPTIONS) a run is
# several times slower, more on a loaded machine, and a limit is there to
# catch a hang, not to time the run.
SLOW=1
[ -n "${ASAN_OPTIONS:-}" ] && SLOW=5

ok() {
  echo "ok - $1"
  PASS=$((PASS + 1))
}

# not_ok NAME [DETAIL...]: details go on "#" lines under the result.
not_ok() {
  echo "not ok - $1"
  shift
  local line
  for line in "$@"; do
    printf '%s\n' "$line" | sed 's/^/#   /'
  done
  FAIL=$((FAIL + 1))
}

# The closing line the CI reads, and the exit status.
finish() {
  echo "$PASS passed, $FAIL failed"
  [ "$FAIL" -eq 0 ]
}
