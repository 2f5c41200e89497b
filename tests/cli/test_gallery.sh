#!/usr/bin/env bash
# test_gallery.sh AIFSIM SOURCE_DIR - scenarios/README.md (the what-if
# gallery) says what the model gives (tools/gallery.py's header has the
# design):
#   a. every scenario the gallery names is a file in scenarios/ (so
#      tests/cli/test_scenarios.sh runs it), and every `## ` question has
#      at least one number from the script;
#   b. `tools/gallery.py --check`: the README's numbers equal
#      scenarios/gallery.json's, the scenario files have the recorded
#      hashes, and the fast runs, run again in full with this build, give
#      the same figures;
#   c. the check can fail: a README with one number changed (the
#      gallery's, or README.md's account of what `make run` made), and a
#      record with one figure changed, are all refused.
set -u
AIFSIM=$(realpath "$1")
SRC=$(realpath "$2")
NAME=gallery
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
README=$SRC/scenarios/README.md
RECORD=$SRC/scenarios/gallery.json
BUILD=$(dirname "$AIFSIM")

echo "# a. the gallery's scenarios and questions"
missing=""
for f in $(grep -o 'scenarios/[A-Za-z0-9_.-]*\.yaml' "$README" | sort -u); do
  [ -e "$SRC/$f" ] || missing="$missing $f"
done
if [ -z "$missing" ]; then
  ok "every scenario the README names exists"
else
  not_ok "every scenario the README names exists" "missing:$missing"
fi
n=$(grep -c '^## ' "$README")
if [ "$n" -ge 12 ]; then
  ok "$n questions (## sections), at least 12"
else
  not_ok "at least 12 questions" "found $n"
fi
bare=$(awk '/^## /{if (s != "" && !m) print s; s=$0; m=0; next}
            /<!-- gallery:/{m=1}
            END{if (s != "" && !m) print s}' "$README")
if [ -z "$bare" ]; then
  ok "every question has a generated number"
else
  not_ok "every question has a generated number" "$bare"
fi

echo "# b. the README is fresh"
if "$PY" "$SRC/tools/gallery.py" --check "$BUILD" --out "$TMP/runs" \
  >"$TMP/out" 2>&1; then
  ok "gallery.py --check: $(tail -n 1 "$TMP/out")"
else
  not_ok "gallery.py --check" "$(grep -E 'STALE|Error|error|failed' "$TMP/out" | head -n 20)"
fi

echo "# c. the check can fail"
# changed FROM TO: FROM's first marked value, changed, into TO.
changed() {
  "$PY" - "$1" "$2" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"(<!-- gallery:[^>]*-->)(.*?)(<!-- /gallery -->)", text)
open(sys.argv[2], "w").write(text[:m.start(2)] + m.group(2) + "1" +
                             text[m.end(2):])
EOF
}
changed "$README" "$TMP/README.md"
if "$PY" "$SRC/tools/gallery.py" --check --no-run --readme "$TMP/README.md" \
  --readme "$SRC/README.md" >"$TMP/out" 2>&1; then
  not_ok "a gallery number changed by hand is refused" "$(tail -n 3 "$TMP/out")"
else
  ok "a gallery number changed by hand is refused"
fi
changed "$SRC/README.md" "$TMP/FRONT.md"
if "$PY" "$SRC/tools/gallery.py" --check --no-run --readme "$README" \
  --readme "$TMP/FRONT.md" >"$TMP/out" 2>&1; then
  not_ok "a README.md number changed by hand is refused" "$(tail -n 3 "$TMP/out")"
elif grep -q "FRONT.md qs-" "$TMP/out"; then
  ok "a README.md number changed by hand is refused"
else
  not_ok "a README.md number changed by hand is refused, for that number" \
    "$(grep STALE "$TMP/out" | head -3)"
fi
"$PY" - "$RECORD" "$TMP/gallery.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
name = sorted(r["figures"])[0]
r["figures"][name] += "0"
json.dump(r, open(sys.argv[2], "w"))
EOF
if "$PY" "$SRC/tools/gallery.py" --check --no-run --record "$TMP/gallery.json" \
  >"$TMP/out" 2>&1; then
  not_ok "a record that its runs do not give is refused" "$(tail -n 3 "$TMP/out")"
else
  ok "a record that its runs do not give is refused"
fi
finish
