#!/usr/bin/env bash
# test_work.sh AIFSIM SOURCE_DIR - workloads end to end: scenarios/mixed.yaml
# runs a day of two services and two training jobs; h5py finds the books
# closed (jobs conserved, requests conserved, the /jobs energies adding up
# to the IT energy to 1e-9) and the columns of docs/OUTPUT.md; replaying
# the Azure conversation trace once delivers its 19,366 requests; bad
# request traces are refused with FILE:LINE:COLUMN: and exit 2; the fluid
# inference mode's key is checked, and a fluid run says so.
set -u
AIFSIM=$1
SRC=$2
NAME=work
. "$(dirname "$0")/lib.sh"
MIXED=$SRC/scenarios/mixed.yaml

if "$AIFSIM" run "$MIXED" -o "$TMP/mixed.h5" >"$TMP/out" 2>"$TMP/err"; then
  ok "mixed.yaml runs a day ($(grep -o 'simulated in [0-9.]* s' "$TMP/out"))"
else
  not_ok "mixed.yaml runs a day" "$(head -c 600 "$TMP/err")"
fi

if /usr/bin/python3 - "$TMP/mixed.h5" >"$TMP/py" 2>&1 <<'PY'
import sys
import h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
s = f["summary"].attrs
# Jobs: arrived = done + running + queued + rejected, and both ran.
assert s["jobs_arrived"] == 2, s["jobs_arrived"]
assert s["jobs_arrived"] == s["jobs_done"] + s["jobs_running"] + \
    s["jobs_queued"] + s["jobs_rejected"]
# The /jobs table books the whole IT energy.
jobs = f["jobs"]
kinds = [k.decode() if isinstance(k, bytes) else k for k in jobs["kind"][:]]
assert kinds.count("inference") == 2 and kinds.count("training") == 2, kinds
it_j = s["it_energy_mwh"] * 3.6e9
assert abs(jobs["energy_j"][:].sum() - it_j) <= 1e-9 * it_j
assert jobs["energy_j"].attrs["units"] == "J"
# Each service: its attributes, requests conserved, columns with units.
for name in ("conversation", "chat"):
    g = f["services/" + name]
    a = g.attrs
    assert a["requests_arrived"] >= a["requests_completed"] > 0, name
    assert a["tokens_generated"] > a["requests_completed"], name
    for col, unit in [("tokens_per_s", "1/s"), ("ttft_p99", "s"),
                      ("tpot_p50", "s"), ("slo_attainment", "1")]:
        assert g[col].attrs["units"] == unit, (name, col)
assert s["requests_arrived"] == s["requests_completed"] + \
    s["requests_rejected"] + sum(
        f["services/" + n].attrs["requests_arrived"] -
        f["services/" + n].attrs["requests_completed"] -
        f["services/" + n].attrs["requests_rejected"]
        for n in ("conversation", "chat"))
# The facility's workload columns: tokens agree with the services'.
fac = f["facility"]
tok = fac["tokens_per_s"][:]
svc = f["services/conversation/tokens_per_s"][:] + \
    f["services/chat/tokens_per_s"][:]
assert np.allclose(tok, svc, rtol=1e-12), "facility tokens"
assert fac["gpus_busy"][:].max() == 8 + 8 + 256 + 64
assert fac["jobs_running"][:].max() == 2 and fac["jobs_queued"][:].max() == 0
# Tokens per joule over the services' energy, as the summary says.
tpj = s["tokens"] / (s["inference_energy_mwh"] * 3.6e9)
assert abs(tpj - s["tokens_per_joule"]) <= 1e-9 * tpj
assert 0 <= s["slo_attainment"] <= 1
print(f"{s['tokens']:.4g} tokens, {s['tokens_per_joule']:.3g} tokens/J, "
      f"SLO {100 * s['slo_attainment']:.1f}%, mean JCT {s['jct_mean_s']:.0f} s")
PY
then
  ok "mixed.yaml's books close ($(tail -n1 "$TMP/py"))"
else
  not_ok "mixed.yaml's books close" "$(cat "$TMP/py")"
fi

# The trace replayed once, without training: every one of its requests
# arrives, at its own times (19,366 in 3,500 s).
if "$AIFSIM" run "$MIXED" -o "$TMP/trace.h5" --set duration=2h \
  --set 'training=[]' --set services.0.arrivals.loop=false >"$TMP/out" \
  2>"$TMP/err" && /usr/bin/python3 - "$TMP/trace.h5" >"$TMP/py" 2>&1 <<'PY'
import sys
import h5py
a = h5py.File(sys.argv[1], "r")["services/conversation"].attrs
assert a["requests_arrived"] == 19366, a["requests_arrived"]
assert a["requests_completed"] == 19366, a["requests_completed"]
print(int(a["requests_arrived"]))
PY
then
  ok "the conversation trace replays its 19366 requests"
else
  not_ok "the conversation trace replays its 19366 requests" \
    "$(head -c 600 "$TMP/err")" "$(cat "$TMP/py" 2>/dev/null)"
fi

# bad_trace NAME CSV EXPECT: a service replaying CSV must fail with exit 2
# and stderr starting with the CSV's path and EXPECT (LINE:COLUMN: ...).
bad_trace() {
  printf '%b' "$2" >"$TMP/$1.csv"
  cat >"$TMP/$1.yaml" <<YAML
name: bad-trace
duration: 1 h
power: {cap: 200 kW}
racks: [{name: r, count: 1, gpu: H100-SXM, gpus_per_rack: 8}]
services:
  - {name: chat, model: Llama-3.1-8B, arrivals: {kind: trace, file: $1.csv}}
YAML
  "$AIFSIM" check "$TMP/$1.yaml" >/dev/null 2>"$TMP/err"
  local rc=$? first
  first=$(head -n 1 "$TMP/err")
  if [ "$rc" -eq 2 ] && [[ "$first" == "$TMP/$1.csv:$3"* ]]; then
    ok "bad trace ($1): exit 2, $3"
  else
    not_ok "bad trace ($1): exit 2, $3" "exit $rc: $first"
  fi
}

H='TIMESTAMP,ContextTokens,GeneratedTokens\n'
R='2023-11-16 18:15:46.6805900,374,44\n'
bad_trace negative-tokens "${H}${R}2023-11-16 18:15:50.9951690,-3,109\n" \
  "3:29: column 'ContextTokens': not a whole number of tokens"
bad_trace unsorted "${H}${R}2023-11-16 18:15:40.0000000,3,109\n" \
  "3:1: column 'TIMESTAMP': time 2023-11-16 18:15:40.0000000 is earlier"
bad_trace missing-column 'TIMESTAMP,ContextTokens\n2023-11-16 18:15:46,1\n' \
  "1:1: column 'GeneratedTokens': no such column"

# The fluid inference mode: an unknown granularity is refused at its
# position with exit 2; --set inference.granularity=fluid runs and says so
# in /summary and on each service.
cat >"$TMP/fluid.yaml" <<YAML
name: fluid
duration: 1 h
power: {cap: 200 kW}
racks: [{name: r, count: 1, gpu: H100-SXM, gpus_per_rack: 8}]
services:
  - {name: chat, model: Llama-3.1-8B, replicas: 2, arrivals: {rate: 5}}
inference: {granularity: coarse}
YAML
"$AIFSIM" check "$TMP/fluid.yaml" >/dev/null 2>"$TMP/err"
rc=$?
first=$(head -n 1 "$TMP/err")
want="$TMP/fluid.yaml:7:26: 'granularity' cannot be 'coarse'"
if [ "$rc" -eq 2 ] && [[ "$first" == "$want"* ]]; then
  ok "unknown granularity: exit 2 at its position"
else
  not_ok "unknown granularity: exit 2 at its position" "exit $rc: $first"
fi
sed -i 's/coarse/request/' "$TMP/fluid.yaml"
if "$AIFSIM" run "$TMP/fluid.yaml" --set inference.granularity=fluid \
    -o "$TMP/fluid.h5" --quiet >/dev/null 2>"$TMP/err" &&
  /usr/bin/python3 - "$TMP/fluid.h5" >"$TMP/py" 2>&1 <<'PY'
import sys
import h5py
f = h5py.File(sys.argv[1], "r")
g = f["summary"].attrs["inference_granularity"]
assert (g.decode() if isinstance(g, bytes) else g) == "fluid", g
assert f["services/chat"].attrs["fluid"] == 1
assert f["summary"].attrs["tokens"] > 0
PY
then
  ok "--set inference.granularity=fluid runs and says so"
else
  not_ok "--set inference.granularity=fluid runs and says so" \
    "$(head -c 600 "$TMP/err" "$TMP/py" 2>/dev/null)"
fi

finish
