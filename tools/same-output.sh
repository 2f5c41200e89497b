#!/usr/bin/env bash
# same-output.sh [--values] BEFORE AFTER [SCENARIO...] - checks that two builds of
# aifsim write byte-identical HDF5 files for the same scenarios and seeds:
# the check behind a refactoring that must not change what the models say.
# BEFORE and AFTER are each an aifsim binary (it is run on every scenario)
# or a folder of outputs an earlier call kept (NAME.h5 per scenario). With
# no SCENARIO, every scenario in scenarios/ (sweep files aside) and the
# benchmark days in tests/bench/ but bench-1m (hours a day). KEEP=DIR keeps the outputs of a binary
# in DIR/before and DIR/after for reuse. Exit 0 when every file is the same.
#
# Same means byte-identical, with one exception: when the two files are of
# different file formats (one sealed, with HDF5 1.10's checksummed format,
# and one from before seals: docs/OUTPUT.md), their bytes cannot agree,
# and they are the same when every group, dataset and attribute is, value
# for value, the root attribute `format` (which sealed files add) aside.
# Such files are reported "same data" with the reason.
#
# --values: same means value for value, for any two files, whatever their
# bytes: every group, dataset and attribute by name, with /summary's
# declarations (its units, long_names and groups JSON attributes) compared
# as mappings of metric to text and its absent list as a set of entries,
# so that a change of the order /summary lists its metrics in (and only
# that) passes. Such files are reported "same values", with what was in
# another order. SET="KEY=VALUE ..." passes each KEY=VALUE to `aifsim run`
# as --set (SET=duration=1h: the first hour of each scenario).
set -euo pipefail
values=0
if [ "${1:-}" = "--values" ]; then
  values=1
  shift
fi
if [ $# -lt 2 ]; then
  echo "usage: $0 [--values] BEFORE AFTER [SCENARIO...]" >&2
  exit 2
fi
sets=()
for kv in ${SET:-}; do
  sets+=(--set "$kv")
done
src=$(cd "$(dirname "$0")/.." && pwd)
before=$1
after=$2
shift 2
if [ $# -eq 0 ]; then
  set -- $(grep -L '^base:' "$src"/scenarios/*.yaml) \
    $(ls "$src"/tests/bench/*.yaml | grep -v '/bench-1m\.yaml$')
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
  "$what" run "$scn" -o "$work/$side/$name.h5" --quiet ${sets[@]+"${sets[@]}"} \
    >/dev/null
  echo "$work/$side/$name.h5"
}

# sealed FILE: whether FILE carries the seal of sealed-format files.
sealed() { [ "$(tail -c 64 "$1" | head -c 13 | tr -d '\000')" = "aifsim-seal 1" ]; }

# same_content A B [values]: every object and attribute of A and B equal,
# value for value (dimension-scale references by the names they point at),
# the root attribute format aside; with values, /summary's declarations
# and absent list in any order (--values), what was in another order said
# on stdout.
same_content() {
  /usr/bin/python3 - "$1" "$2" "${3:-}" <<'PY'
import json
import sys
import h5py
import numpy as np

VALUES = sys.argv[3] == "values"
# /summary's attributes that list the metrics in the summary's order.
DECLARATIONS = ("units", "long_names", "groups")
reordered = []

def value(f, v):
    if isinstance(v, np.ndarray) and v.dtype.kind == "O":
        return [value(f, x) for x in v.tolist()]
    if isinstance(v, (list, tuple)):
        return [value(f, x) for x in v]
    if isinstance(v, h5py.Reference):
        return f[v].name if v else None
    if isinstance(v, np.void):
        return [value(f, x) for x in v.tolist()]
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    return v

def equal(a, b):
    a, b = np.asarray(a, dtype=object), np.asarray(b, dtype=object)
    if a.shape != b.shape:
        return False
    for x, y in zip(a.reshape(-1), b.reshape(-1)):
        if isinstance(x, float) and isinstance(y, float) and \
                np.isnan(x) and np.isnan(y):
            continue
        if isinstance(x, (list, np.ndarray)) or isinstance(y, (list, np.ndarray)):
            if not equal(x, y):
                return False
        elif x != y:
            return False
    return True

def unordered(name, k, v):
    """The value of attribute k of name, in the summary's order or not."""
    if not VALUES or name != "/summary" or not isinstance(v, str):
        return v
    if k in DECLARATIONS:
        return repr(sorted(json.loads(v).items()))
    if k == "absent":
        return repr(sorted(v.split("; "))) if v else v
    return v

def attrs(f, obj, root):
    out = {k: unordered(obj.name, k, value(f, obj.attrs[k])) for k in obj.attrs}
    if root:
        out.pop("format", None)
    return out

def note_order(fa, fb):
    """What of /summary lists the same entries in another order."""
    if "summary" not in fa or "summary" not in fb:
        return
    a, b = fa["summary"].attrs, fb["summary"].attrs
    for k in DECLARATIONS + ("absent",):
        if k in a and k in b and value(fa, a[k]) != value(fb, b[k]):
            reordered.append(k)

def same(fa, fb, name):
    a, b = fa[name], fb[name]
    if type(a) is not type(b):
        return "%s: a group in one file, a dataset in the other" % name
    if not equal([repr(sorted(attrs(fa, a, name == "/").items()))],
                 [repr(sorted(attrs(fb, b, name == "/").items()))]):
        return "%s: attributes differ" % name
    if isinstance(a, h5py.Dataset):
        va, vb = value(fa, a[()]), value(fb, b[()])
        return None if equal(va, vb) else "%s: values differ" % name
    if sorted(a.keys()) != sorted(b.keys()):
        return "%s: members differ" % name
    for k in sorted(a.keys()):
        why = same(fa, fb, (name.rstrip("/") + "/" + k))
        if why:
            return why
    return None

with h5py.File(sys.argv[1], "r") as fa, h5py.File(sys.argv[2], "r") as fb:
    why = same(fa, fb, "/")
    if not why and VALUES:
        note_order(fa, fb)
if why:
    print(why, file=sys.stderr)
    sys.exit(1)
if reordered:
    print("/summary's %s in another order" % ", ".join(reordered))
PY
}

differ=0
for scn in "$@"; do
  a=$(outputs before "$before" "$scn")
  b=$(outputs after "$after" "$scn")
  if cmp -s "$a" "$b"; then
    echo "same      $(basename "$scn") ($(stat -c %s "$b") bytes)"
  elif [ $values = 1 ]; then
    if why=$(same_content "$a" "$b" values); then
      echo "same values $(basename "$scn") (every group, dataset and attribute; ${why:-bytes differ})"
    else
      echo "DIFFERENT $(basename "$scn") (values)"
      differ=1
    fi
  elif { sealed "$a" && ! sealed "$b"; } || { sealed "$b" && ! sealed "$a"; }; then
    if same_content "$a" "$b"; then
      echo "same data $(basename "$scn") (file formats differ: one sealed; $(stat -c %s "$a") and $(stat -c %s "$b") bytes)"
    else
      echo "DIFFERENT $(basename "$scn") (and file formats differ)"
      differ=1
    fi
  else
    echo "DIFFERENT $(basename "$scn")"
    differ=1
  fi
done
exit $differ
