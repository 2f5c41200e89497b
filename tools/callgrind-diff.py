#!/usr/bin/python3
"""callgrind-diff.py DIR s|i f|r N [THREAD]: per tick (f: the fluid runs
f5 and f15, /600) or per period (r: r2 and r6, /240) of
tools/callgrind-periods.sh's runs in DIR, the larger run's instructions
less the smaller's, function by function: self (s) or inclusive (i), the
N largest, of the simulation thread (THREAD 01, the default; 02 is the
output's worker). The first line is the whole thread's."""
import re
import subprocess
import sys

PAIRS = {"f": ("f5", "f15", 600, "tick"), "r": ("r2", "r6", 240, "period")}
TOTAL = re.compile(r"\s*([\d,]+)\s+(?:\([^)]*\)\s+)?(?:\*\s+)?PROGRAM TOTALS")
FUNC = re.compile(r"\s*([\d,]+)\s+(?:\([^)]*\)\s+)?(?:\*\s+)?(\S.*?:\S.*)$")


def counts(path, inclusive):
    """The thread's total and its functions' counts, from callgrind_annotate."""
    args = ["callgrind_annotate", "--threshold=100", "--auto=no"]
    if inclusive:
        args.append("--inclusive=yes")
    out = subprocess.run(args + [path], capture_output=True, text=True,
                         check=True).stdout
    total, fn = None, {}
    for line in out.splitlines():
        m = TOTAL.match(line)
        if m:
            total = int(m.group(1).replace(",", ""))
            continue
        m = FUNC.match(line)
        if m:
            name = m.group(2).split(":", 1)[1].split(" [")[0].strip()
            v = int(m.group(1).replace(",", ""))
            # a function listed under several files: its inclusive count
            # once (the largest), its self counts summed
            fn[name] = max(fn.get(name, 0), v) if inclusive else fn.get(name, 0) + v
    return total, fn


def main(argv):
    if len(argv) not in (5, 6) or argv[2] not in "si" or argv[3] not in PAIRS:
        sys.exit(__doc__)
    d, inclusive, (a, b, per, unit) = argv[1], argv[2] == "i", PAIRS[argv[3]]
    n, thread = int(argv[4]), argv[5] if len(argv) == 6 else "01"
    ta, fa = counts(f"{d}/{a}.out-{thread}", inclusive)
    tb, fb = counts(f"{d}/{b}.out-{thread}", inclusive)
    print(f"total/{unit}: {(tb - ta) / per:,.0f}")
    diff = {k: (fb.get(k, 0) - fa.get(k, 0)) / per for k in set(fa) | set(fb)}
    for k, v in sorted(diff.items(), key=lambda kv: -kv[1])[:n]:
        print(f"{v:12,.0f}  {k}")


if __name__ == "__main__":
    main(sys.argv)
