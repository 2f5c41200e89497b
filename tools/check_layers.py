#!/usr/bin/python3
"""check_layers.py [ROOT] - the include rules of docs/ARCHITECTURE.md.

Reads every `#include "..."` under ROOT/sim and ROOT/models and fails
(exit 1, printing FILE:LINE for each offence) on:
- an upward include: a file of one layer including a header of a layer
  above it. The layers, lowest first: sim (the engine and the program
  around it), models/hardware, models/facility, models/work,
  models/control, models/factory. The command's own files (sim/main.c
  and sim/cmd_*.c) wire everything together and may include any layer.
- an include cycle between modules. A module is a file's name without its
  extension and without a trailing `_internal`, so factory.c, factory.h
  and factory_internal.h are one module.
With --self-test it copies ROOT, plants an upward include and a cycle in
the copy, and checks that both are caught.
"""
import os
import re
import shutil
import sys
import tempfile

LAYERS = ["sim", "models/hardware", "models/facility", "models/work",
          "models/control", "models/factory"]
PROGRAM = re.compile(r"^sim/(main|cmd_\w+)\.c$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def sources(root):
    """Every .c and .h under the layers, as paths relative to root."""
    for layer in LAYERS:
        top = os.path.join(root, layer)
        for name in sorted(os.listdir(top)):
            if name.endswith((".c", ".h")):
                yield layer + "/" + name


def layer_of(path):
    return max(i for i, l in enumerate(LAYERS) if path.startswith(l + "/"))


def module_of(path):
    stem = os.path.splitext(os.path.basename(path))[0]
    return stem[:-len("_internal")] if stem.endswith("_internal") else stem


def includes(root, path):
    """(line number, header name) of each quoted include in path."""
    with open(os.path.join(root, path), encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m:
                yield n, m.group(1)


def upward(root, files, headers):
    bad = []
    for path in files:
        if PROGRAM.match(path):
            continue
        for n, name in includes(root, path):
            target = headers.get(os.path.basename(name))
            if target and layer_of(target) > layer_of(path):
                bad.append("%s:%d: includes %s, a layer above (%s over %s)"
                           % (path, n, target, LAYERS[layer_of(target)],
                              LAYERS[layer_of(path)]))
    return bad


def module_graph(root, files, headers):
    """module -> {module: (path, line) of the first include making it}."""
    graph = {}
    for path in files:
        if PROGRAM.match(path):
            continue
        src = module_of(path)
        edges = graph.setdefault(src, {})
        for n, name in includes(root, path):
            target = headers.get(os.path.basename(name))
            if target and module_of(target) != src:
                edges.setdefault(module_of(target), (path, n))
    return graph


def cycles(graph):
    """One cycle per strongly connected part, as a list of modules."""
    found, state, stack = [], {}, []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for t in sorted(graph.get(m, {})):
            if state.get(t) == 1:
                found.append(stack[stack.index(t):] + [t])
            elif t not in state:
                visit(t)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)
    return found


def check(root):
    files = list(sources(root))
    headers = {os.path.basename(p): p for p in files if p.endswith(".h")}
    bad = upward(root, files, headers)
    graph = module_graph(root, files, headers)
    for cyc in cycles(graph):
        where = ", ".join("%s:%d" % graph[a][b] for a, b in zip(cyc, cyc[1:]))
        bad.append("cycle %s (%s)" % (" -> ".join(cyc), where))
    return bad


def self_test(root):
    """A planted upward include and a planted cycle must both be caught."""
    with tempfile.TemporaryDirectory() as tmp:
        for layer in LAYERS:
            shutil.copytree(os.path.join(root, layer),
                            os.path.join(tmp, layer))
        with open(os.path.join(tmp, "models/hardware/gpu.h"), "a") as f:
            f.write('#include "inference.h"\n')
        with open(os.path.join(tmp, "models/work/llm.h"), "a") as f:
            f.write('#include "roofline.h"\n')
        bad = check(tmp)
    caught_up = any(b.startswith("models/hardware/gpu.h:") for b in bad)
    caught_cycle = any(b.startswith("cycle ") and "llm" in b for b in bad)
    for b in bad:
        print("  planted: " + b)
    return caught_up and caught_cycle


def main(argv):
    root = os.path.abspath(next((a for a in argv if not a.startswith("-")),
                                os.path.join(os.path.dirname(__file__), "..")))
    if "--self-test" in argv:
        ok = self_test(root)
        print("self-test: planted include and cycle %s"
              % ("caught" if ok else "NOT caught"))
        return 0 if ok else 1
    bad = check(root)
    for b in bad:
        print(b)
    print("%d include offences under sim/ and models/" % len(bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
