#!/usr/bin/env bash
# same-output.sh BEFORE AFTER [SCENARIO...] - checks that two builds of
# aifsim write byte-identical HDF5 files for the same scenarios and seeds:
# the check behind a refactoring that must not change what the models say.
# BEFORE and AFTER are each an aifsim binary (it is run on every scenario)
# or a folder of outputs an earlier call kept (NAME.h5 per scenario). With
# no SCENARIO, every scenario in scenarios/ (sweep files aside) and the
# benchmark days in tests/bench/. KEEP=DIR keeps the outputs of a binary
# in DIR/before and DIR/after for reuse. Exit 0 when every file is the same.
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 BEFORE AFTER [SCENARIO...]" >&2
  exit 2
fi
src=$(cd "$(dirname "$0")/.." && pwd)
before=$1
after=$2
shift 2
if [ $# -eq 0 ]; then
  set -- $(grep -L '^base:' "$src"/scenarios/*.yaml) "$src"/tests/bench/*.yaml
fi
work=${KEEP:-$(mktemp -d)}
[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT

# outputs SIDE BIN_OR_DIR SCENARIO: the path of SIDE's output of SCENARIO,
# running BIN on it first when SIDE is a binary.
outputs() {
  local side=$1 what=$2 scn=$3 name
  name=$(basename "$scn" .yaml)
  if [ -d "$what" ]; then
    echo "$what/$name.h5"
    return
  fi
  mkdir -p "$work/$side"
  "$what" run "$scn" -o "$work/$side/$name.h5" --quiet >/dev/null
  echo "$work/$side/$name.h5"
}

differ=0
for scn in "$@"; do
  a=$(outputs before "$before" "$scn")
  b=$(outputs after "$after" "$scn")
  if cmp -s "$a" "$b"; then
    echo "same      $(basename "$scn") ($(stat -c %s "$b") bytes)"
  else
    echo "DIFFERENT $(basename "$scn")"
    differ=1
  fi
done
exit $differ
