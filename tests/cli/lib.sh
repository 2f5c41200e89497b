# lib.sh - what the end-to-end test scripts share: a scratch folder removed
# on exit (and a background job killed, if BG_PID names one), TAP-like
# result lines counted for the closing "N passed, M failed", and running
# the command under a watchdog (run, last_run, expect).
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

# run COMMAND...: the command with its stdout and stderr to $TMP/out and
# $TMP/err and no stdin; sets RC. A watchdog kills it after RUN_LIMIT
# seconds (the script's release-build limit, 60 unless it sets one) times
# SLOW; RC is then 137 and counts as a crash.
run() {
  timeout -s KILL $((${RUN_LIMIT:-60} * SLOW)) "$@" >"$TMP/out" 2>"$TMP/err" \
    </dev/null
  RC=$?
}

# A short description of the last run for failure details.
last_run() {
  printf 'exit %s; stderr: %s' "$RC" "$(head -c 600 "$TMP/err")"
}

# expect LABEL STATUS [GREP-PATTERN]: the last run exited STATUS and, when
# given, its stderr matches the (extended) pattern.
expect() {
  local label=$1 status=$2 pattern=${3:-}
  if [ "$RC" -eq "$status" ] &&
    { [ -z "$pattern" ] || grep -Eq -- "$pattern" "$TMP/err"; }; then
    ok "$label"
  else
    not_ok "$label (expected exit $status${pattern:+, /$pattern/})" \
      "$(last_run)"
  fi
}
