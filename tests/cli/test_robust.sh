#!/usr/bin/env bash
# test_robust.sh - the command against an operator who tries hard to break
# it (issue #15): one section per failure, each written before its fix.
#
#   bash tests/cli/test_robust.sh AIFSIM_BINARY SOURCE_DIR
#
#   1. a full disk (a 1 MiB tmpfs, when this machine lets root mount one)
#      and a file-size limit (ulimit -f): exit 1, one line naming the file
#      and the cause, no crash, no .partial left;
#   4. a FIFO, a device or a directory as an input file is refused at once;
#   5. the output path: an unrelated file, the scenario itself and a
#      non-regular file are never replaced (exit 2; --force replaces an
#      unrelated regular file only); a complete aifsim output is; a second
#      run killed midway leaves the first run's file intact;
#   3. a sweep point file corrupted (truncated, zeroed in the middle, one
#      bit flipped) is recomputed, and the sweep says which and why.
# One line per check ("ok - ..." / "not ok - ..."), then "N passed, M failed".
set -u

if [ $# -ne 2 ]; then
  echo "usage: bash $0 AIFSIM_BINARY SOURCE_DIR" >&2
  exit 2
fi
AIFSIM=$(realpath "$1")
SRC=$(realpath "$2")
QUICK=$SRC/scenarios/quickstart.yaml
SWEEP=$SRC/scenarios/sweep-powercap.yaml
PY=/usr/bin/python3

NAME=robust
. "$(dirname "$0")/lib.sh"
MNT=
cleanup_mount() {
  [ -n "$MNT" ] && umount "$MNT" 2>/dev/null
  cleanup
}
trap cleanup_mount EXIT

# Runs the command with stdout/stderr to $TMP/out, $TMP/err; sets RC.
run() {
  timeout -s KILL 60 "$@" >"$TMP/out" 2>"$TMP/err" </dev/null
  RC=$?
}
last_run() {
  printf 'exit %s; stderr: %s' "$RC" "$(head -c 600 "$TMP/err")"
}

# expect LABEL STATUS [GREP-PATTERN]: the last run exited STATUS and, when
# given, its stderr matches the pattern.
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

# ------------------------------------------------------------------------
echo "# 1. full disk and file-size limit"
# ------------------------------------------------------------------------

# disk_full LABEL DIR CAUSE [PREFIX...]: a 30-day quickstart into DIR.
disk_full() {
  local label=$1 dir=$2 cause=$3 lines
  shift 3
  rm -f "$dir"/x.h5*
  timeout -s KILL 120 "$@" "$AIFSIM" run "$QUICK" -o "$dir/x.h5" --quiet \
    --set duration=30d >"$TMP/out" 2>"$TMP/err" </dev/null
  RC=$?
  lines=$(wc -l <"$TMP/err")
  if [ "$RC" -eq 1 ] && [ "$lines" -eq 1 ] &&
    grep -Eq "x\.h5: $cause after [0-9.]+ [kMG]?B" "$TMP/err" &&
    [ -z "$(ls -A "$dir")" ]; then
    ok "$label: exit 1, one line, nothing left"
  else
    not_ok "$label: exit 1, one line ($cause after N B), nothing left" \
      "exit $RC, $lines lines; stderr: $(head -c 400 "$TMP/err")" \
      "left: $(ls -A "$dir" | tr '\n' ' ')"
  fi
}

mkdir -p "$TMP/full" "$TMP/limit"
if mount -t tmpfs -o size=1m tmpfs "$TMP/full" 2>/dev/null; then
  MNT=$TMP/full
  disk_full "full tmpfs" "$TMP/full" "no space left on device"
  umount "$MNT" && MNT=
else
  ok "# SKIP full tmpfs: cannot mount a tmpfs here"
fi
# The limit is 300 KiB of file: bash applies it to the run only.
disk_full "ulimit -f 300" "$TMP/limit" "file too large" \
  bash -c 'ulimit -f 300 && exec "$@"' limit

# ------------------------------------------------------------------------
echo "# 4. special files as inputs"
# ------------------------------------------------------------------------
mkfifo "$TMP/fifo.yaml"
for cmd in check run; do
  run "$AIFSIM" "$cmd" "$TMP/fifo.yaml" -o "$TMP/fifo-out.h5"
  expect "a FIFO as the scenario ($cmd): refused at once" 2 \
    "fifo.yaml: .*not a regular file"
done
run "$AIFSIM" check "$QUICK" --set "catalog=$TMP/fifo.yaml"
expect "a FIFO as the catalog: refused at once" 2 "not a regular file"
run "$AIFSIM" check /dev/zero
expect "a device as the scenario: refused" 2 "not a regular file"
run "$AIFSIM" check "$TMP"
expect "a directory as the scenario: refused" 2 "not a regular file"
run "$AIFSIM" catalog --catalog "$TMP/fifo.yaml"
expect "a FIFO as catalog --catalog: refused" 2 "not a regular file"

# ------------------------------------------------------------------------
echo "# 5. the output path"
# ------------------------------------------------------------------------
O=$TMP/o
mkdir -p "$O"
cp "$QUICK" "$O/q.yaml"
echo "my notes" >"$O/notes.txt"

run "$AIFSIM" run "$O/q.yaml" -o "$O/notes.txt" --quiet --set duration=1h
expect "an unrelated file as the output: refused (exit 2)" 2 "notes.txt"
if [ "$(cat "$O/notes.txt")" = "my notes" ] && [ ! -e "$O/notes.txt.partial" ]
then
  ok "the unrelated file is unchanged, no .partial"
else
  not_ok "the unrelated file is unchanged" "$(head -c 40 "$O/notes.txt" | od -c | head -2)"
fi

run "$AIFSIM" run "$O/q.yaml" -o "$O/q.yaml" --quiet --set duration=1h
expect "the scenario as its own output: refused" 2 "q.yaml"
run "$AIFSIM" run "$O/q.yaml" -o "$O/q.yaml" --quiet --set duration=1h --force
expect "the scenario as its own output, --force: still refused" 2 "q.yaml"
if cmp -s "$QUICK" "$O/q.yaml"; then
  ok "the scenario is unchanged"
else
  not_ok "the scenario is unchanged"
  cp "$QUICK" "$O/q.yaml"
fi

mknod "$O/dev" c 1 3 2>/dev/null || mkfifo "$O/dev"
run "$AIFSIM" run "$O/q.yaml" -o "$O/dev" --quiet --set duration=1h --force
expect "a special file as the output, --force: refused" 2 "dev"
[ -f "$O/dev" ] && not_ok "the special file is still one" || ok "the special file is still one"
mkdir "$O/dir.h5"
run "$AIFSIM" run "$O/q.yaml" -o "$O/dir.h5" --quiet --set duration=1h
expect "a directory as the output: refused" 2 "dir.h5"

run "$AIFSIM" run "$O/q.yaml" -o "$O/notes.txt" --quiet --set duration=1h \
  --force
expect "an unrelated regular file with --force: replaced" 0
run "$AIFSIM" run "$O/q.yaml" -o "$O/a.h5" --quiet --set duration=1h
expect "a new output: written" 0
cp "$O/a.h5" "$O/a.copy"
run "$AIFSIM" run "$O/q.yaml" -o "$O/a.h5" --quiet --set duration=2h
expect "a complete aifsim output: replaced without --force" 0
cmp -s "$O/a.h5" "$O/a.copy" && not_ok "the rerun wrote the new run" ||
  ok "the rerun wrote the new run"

# A second run killed midway leaves the first run's complete file intact.
cp "$O/a.h5" "$O/a.before"
"$AIFSIM" run "$O/q.yaml" -o "$O/a.h5" --quiet --set duration=366d \
  >/dev/null 2>&1 </dev/null &
BG_PID=$!
for _ in $(seq 100); do
  [ -e "$O/a.h5.partial" ] && break
  sleep 0.05
done
sleep 0.2
kill -KILL "$BG_PID" 2>/dev/null
wait "$BG_PID" 2>/dev/null
BG_PID=
if cmp -s "$O/a.h5" "$O/a.before"; then
  ok "a second run killed midway leaves the first run's file intact"
else
  not_ok "a second run killed midway leaves the first run's file intact"
fi
rm -f "$O/a.h5.partial"

# An output that looks like HDF5 but is not complete is not ours to replace.
run "$AIFSIM" run "$O/q.yaml" -o "$O/b.h5" --quiet --set duration=1h
$PY -c 'import h5py,sys; f=h5py.File(sys.argv[1],"a"); f.attrs["complete"]=0' \
  "$O/b.h5"
run "$AIFSIM" run "$O/q.yaml" -o "$O/b.h5" --quiet --set duration=1h
expect "an incomplete .h5 as the output: refused" 2 "b.h5"

# Messages never echo a file that is not text of the expected kind.
printf 'root:$6$secretsalt$hashhashhash:19000:0:99999:7:::\n' >"$O/shadow"
run "$AIFSIM" check "$QUICK" --set "catalog=$O/shadow"
if [ "$RC" -eq 2 ] && ! grep -q 'secretsalt' "$TMP/err"; then
  ok "a non-YAML catalog: refused without quoting it"
else
  not_ok "a non-YAML catalog: refused without quoting it" "$(last_run)"
fi

# ------------------------------------------------------------------------
echo "# 3. sweep point integrity"
# ------------------------------------------------------------------------
S=$TMP/sweep
RED=(--set duration=2h --quiet)
run "$AIFSIM" sweep "$SWEEP" -o "$S" "${RED[@]}"
expect "the sweep runs" 0
cp "$S/summary.csv" "$TMP/summary.good"

# corrupt LABEL HOW: damages point-0005.h5, reruns, expects it recomputed.
corrupt() {
  local label=$1 how=$2 p=$S/point-0005.h5 size
  size=$(stat -c %s "$p")
  case $how in
  truncate) truncate -s $((size / 2)) "$p" ;;
  zero) dd if=/dev/zero of="$p" bs=4096 count=1 seek=$((size / 8192)) \
    conv=notrunc status=none ;;
  flip) $PY - "$p" <<'EOF'
import sys, h5py
p = sys.argv[1]
with h5py.File(p, "r") as f:
    d = f["facility/power_w"]
    off = d.id.get_chunk_info(0).byte_offset
    n = d.id.get_chunk_info(0).size
with open(p, "r+b") as f:
    f.seek(off + n // 2)
    b = f.read(1)
    f.seek(off + n // 2)
    f.write(bytes([b[0] ^ 0x10]))
EOF
    ;;
  esac
  run "$AIFSIM" sweep "$SWEEP" -o "$S" "${RED[@]}"
  if [ "$RC" -eq 0 ] && grep -q 'point 5' "$TMP/err" &&
    grep -Eq 'point-0005.h5.*(recomput|again)' "$TMP/err" &&
    cmp -s "$S/summary.csv" "$TMP/summary.good" &&
    $PY -c 'import h5py,sys; f=h5py.File(sys.argv[1]); f["facility/power_w"][:]' \
      "$S/point-0005.h5" 2>/dev/null; then
    ok "$label point file: recomputed, said why, same summary"
  else
    not_ok "$label point file: recomputed, said why, same summary" \
      "$(last_run)" "$(diff "$S/summary.csv" "$TMP/summary.good" | head -5)"
  fi
}
corrupt "a truncated" truncate
corrupt "a zeroed-middle" zero
corrupt "a bit-flipped" flip

finish
