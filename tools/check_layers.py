#!/usr/bin/python3
"""check_layers.py [ROOT] - the include rules of docs/ARCHITECTURE.md.

Reads every .c and .h file under ROOT/sim, ROOT/models, ROOT/lib and
ROOT/cli and
fails (exit 1, printing FILE:LINE for each offence) on:
- a file outside the layer folders (LAYERS below), such as one left in
  sim/ itself: every file belongs to exactly one layer;
- a header name in two folders: headers are included by bare name, so
  one name must mean one file;
- an include a layer may not see: a quoted include of a header in a folder
  that is neither the file's own nor one its folder builds on, directly
  or through others. An arrow from a lower folder to a higher one is one
  such include; a model including the HDF5 writer, beside the layers it
  builds on, is another. The lowest folders come first in LAYERS; lib/
  (libaifsim) and cli/ are on top, the folders that wire the others;
- an include cycle between modules. A module is a file's name without its
  extension and without a trailing `_internal`, so factory.c, factory.h
  and factory_internal.h are one module;
- a circle of calls between files, even inside one folder: a .c file
  calling a function that another .c file defines, which calls back,
  directly or through others, into the first. Calls run one way, from the
  file that uses a helper to the file that defines it. (A call through a
  function pointer, a declared hook, is no call by name and not counted.)
With --self-test it copies ROOT, plants each kind of offence in the copy,
and checks that every one is caught.
"""
import os
import re
import shutil
import sys
import tempfile

# Each layer folder, lowest first, with the folders it builds on directly.
# The CMake targets link the same way (docs/ARCHITECTURE.md): a model
# sees the engine core and the input layer (scenario, units, files) but
# not the output layer (HDF5) nor the sweeps.
LAYERS = [
    ("sim/core", []),
    ("sim/input", ["sim/core"]),
    ("sim/output", ["sim/core"]),
    ("sim/sweep", ["sim/input", "sim/output"]),
    ("models/hardware", ["sim/input"]),
    ("models/facility", ["models/hardware"]),
    ("models/work", ["models/facility"]),
    ("models/control", ["models/work"]),
    ("models/factory", ["models/control"]),
    ("lib", ["models/factory", "sim/output"]),
    ("cli", ["lib", "models/factory", "sim/sweep"]),
]
TOPS = ["sim", "models", "lib", "cli"]  # where every .c and .h must be in a layer

# Folders whose circles of calls are known and left to a stated change:
# they are listed, not failed, and the check fails once they are gone so
# that the exemption goes with them.
PENDING_CIRCLES = {}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
# Comments, string and character literals: no names in them count.
NOISE = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"'
                   r"|'(?:\\.|[^'\\\n])*'", re.S)
# A function at file scope with external linkage: a type, the name, "(".
DEFINITION = re.compile(r"^(?!static\b|typedef\b|extern\b|return\b)"
                        r"[A-Za-z_][\w \t*]*?\b([A-Za-z_]\w*)[ \t]*\(", re.M)
NAME = re.compile(r"\b[A-Za-z_]\w*\b")


def sees():
    """folder -> the folders it may include from (itself included)."""
    below = dict(LAYERS)
    out = {}
    for folder, _ in LAYERS:
        seen, todo = {folder}, list(below[folder])
        while todo:
            f = todo.pop()
            if f not in seen:
                seen.add(f)
                todo.extend(below[f])
        out[folder] = seen
    return out


def walk(root):
    """Every .c and .h under the top folders, as paths relative to root."""
    for top in TOPS:
        for d, dirs, names in os.walk(os.path.join(root, top)):
            dirs.sort()
            for name in sorted(names):
                if name.endswith((".c", ".h")):
                    yield os.path.relpath(os.path.join(d, name), root)


def folder_of(path):
    return os.path.dirname(path)


def module_of(path):
    stem = os.path.splitext(os.path.basename(path))[0]
    if stem.endswith("_internal"):
        stem = stem[:-len("_internal")]
    return folder_of(path) + "/" + stem


def includes(root, path):
    """(line number, header name) of each quoted include in path."""
    with open(os.path.join(root, path), encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m:
                yield n, m.group(1)


def misplaced(files, headers):
    folders = dict(LAYERS)
    bad = ["%s: not in a layer folder (%s)" % (p, ", ".join(folders))
           for p in files if folder_of(p) not in folders]
    for name, paths in sorted(headers.items()):
        if len(paths) > 1:
            bad.append("%s: one header name in %d folders (%s)"
                       % (paths[0], len(paths), ", ".join(paths)))
    return bad


def unseen(root, files, headers):
    """Includes of a header in a folder the including file may not see."""
    visible, order = sees(), [f for f, _ in LAYERS]
    bad = []
    for path in files:
        here = folder_of(path)
        for n, name in includes(root, path):
            target = headers.get(os.path.basename(name), [None])[0]
            there = target and folder_of(target)
            if not there or there in visible[here]:
                continue
            how = ("a layer above" if here in visible[there]
                   or order.index(there) > order.index(here)
                   else "a layer it does not build on")
            bad.append("%s:%d: includes %s, %s (%s over %s)"
                       % (path, n, target, how, there, here))
    return bad


def module_graph(root, files, headers):
    """module -> {module: (path, line) of the first include making it}."""
    graph = {}
    for path in files:
        src = module_of(path)
        edges = graph.setdefault(src, {})
        for n, name in includes(root, path):
            target = headers.get(os.path.basename(name), [None])[0]
            if target and module_of(target) != src:
                edges.setdefault(module_of(target), (path, n))
    return graph


def call_graph(root, files):
    """.c file -> {.c file: (line, name) of its first call into it}."""
    text, defined = {}, {}
    for path in files:
        if not path.endswith(".c"):
            continue
        with open(os.path.join(root, path), encoding="utf-8") as f:
            # Blank out the noise but keep the line breaks, for line numbers.
            text[path] = NOISE.sub(lambda m: re.sub(r"[^\n]", " ", m.group()),
                                   f.read())
        for m in DEFINITION.finditer(text[path]):
            if is_body_next(text[path], m.end() - 1):
                defined.setdefault(m.group(1), set()).add(path)
    graph = {}
    for path, body in text.items():
        edges = graph.setdefault(path, {})
        for m in NAME.finditer(body):
            for other in sorted(defined.get(m.group(), ())):
                if other != path and path not in defined[m.group()]:
                    line = body.count("\n", 0, m.start()) + 1
                    edges.setdefault(other, (line, m.group()))
    return graph


def is_body_next(text, paren):
    """Whether the parenthesis at paren closes a list followed by "{"."""
    depth = 0
    for i in range(paren, len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            return text[i + 1:].lstrip().startswith("{")
    return False


def cycles(graph):
    """One cycle per strongly connected part, as a list of nodes."""
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


def circles(root, files):
    """Offences for circles of calls, and notes for the pending ones."""
    graph = call_graph(root, files)
    bad, notes, pending = [], [], set()
    for cyc in cycles(graph):
        where = ", ".join("%s:%d calls %s" % ((a,) + graph[a][b])
                          for a, b in zip(cyc, cyc[1:]))
        line = "circle of calls %s (%s)" % (" -> ".join(cyc), where)
        folder = folder_of(cyc[0])
        if folder in PENDING_CIRCLES and all(folder_of(f) == folder
                                             for f in cyc):
            pending.add(folder)
            notes.append("pending: %s; %s" % (line, PENDING_CIRCLES[folder]))
        else:
            bad.append(line)
    for folder in sorted(set(PENDING_CIRCLES) - pending):
        bad.append("%s: no circle of calls left: remove it from "
                   "PENDING_CIRCLES in tools/check_layers.py" % folder)
    return bad, notes


def check(root):
    """(offences, notes) for the tree at root."""
    files = list(walk(root))
    headers = {}
    for p in files:
        if p.endswith(".h"):
            headers.setdefault(os.path.basename(p), []).append(p)
    bad = misplaced(files, headers)
    files = [p for p in files if folder_of(p) in dict(LAYERS)]
    bad += unseen(root, files, headers)
    graph = module_graph(root, files, headers)
    for cyc in cycles(graph):
        where = ", ".join("%s:%d" % graph[a][b] for a, b in zip(cyc, cyc[1:]))
        bad.append("cycle %s (%s)" % (" -> ".join(cyc), where))
    more, notes = circles(root, files)
    return bad + more, notes


PLANTS = [
    # (file, text appended, what must then be reported)
    ("models/hardware/gpu.h", '#include "inference.h"\n',
     lambda b: b.startswith("models/hardware/gpu.h:")
     and "a layer above" in b),
    ("models/facility/battery.c", '#include "record.h"\n',
     lambda b: b.startswith("models/facility/battery.c:")
     and "does not build on" in b),
    ("models/work/llm.h", '#include "roofline.h"\n',
     lambda b: b.startswith("cycle ") and "models/work/llm ->" in b
     and "models/work/roofline ->" in b),
    ("sim/core/vec.c",
     "void sim__planted(void);\n"
     "void sim__planted(void) { sim_engine_destroy(NULL); }\n",
     lambda b: b.startswith("circle of calls ") and "vec.c" in b
     and "engine.c" in b),
    ("sim/stray.c", "/* a file left outside the layer folders */\n",
     lambda b: b.startswith("sim/stray.c: not in a layer folder")),
]


def self_test(root):
    """Each offence, planted alone in a copy of the tree, must be caught."""
    ok = True
    for path, text, caught in PLANTS:
        with tempfile.TemporaryDirectory() as tmp:
            for top in TOPS:
                shutil.copytree(os.path.join(root, top),
                                os.path.join(tmp, top))
            with open(os.path.join(tmp, path), "a") as f:
                f.write(text)
            bad, _ = check(tmp)
        hit = [b for b in bad if caught(b)]
        ok &= bool(hit)
        print("  %s in %s: %s" % ("caught" if hit else "NOT caught", path,
                                  hit[0] if hit else "-"))
    return ok


def main(argv):
    root = os.path.abspath(next((a for a in argv if not a.startswith("-")),
                                os.path.join(os.path.dirname(__file__), "..")))
    if "--self-test" in argv:
        ok = self_test(root)
        print("self-test: planted offences %s"
              % ("all caught" if ok else "NOT all caught"))
        return 0 if ok else 1
    bad, notes = check(root)
    for line in notes + bad:
        print(line)
    print("%d layer offences under %s" % (len(bad), ", ".join(
        t + "/" for t in TOPS)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
