"""The READMEs run as written: every command and Python snippet in
README.md, analysis/README.md and the pages of docs/ (docs/*.md) that a
user would run is run here.

The convention (every one of those files follows it):

- A fenced block whose info string is empty, ``sh``, ``shell``, ``bash``,
  ``console``, ``python`` or ``py`` is a block a user might run. It must be
  preceded (blank lines allowed) by one of two HTML comments, which
  Markdown does not render:

      <!-- run -->                  the test runs it and fails on any error
      <!-- not run: REASON -->      it cannot run in a test; REASON says why
                                    (submits Slurm jobs, installs packages)

- Blocks that are not commands say so by their info string: ``text``
  (a synopsis, a program's output, a file tree), ``yaml``, ``csv``, ...
  They carry no marker.

Each file runs in a sandbox of its own, a fresh temporary directory laid
out like the repository: ``scenarios``, ``data``, ``analysis``, ``tools``
and ``docs`` are links into the source tree, ``build/aifsim`` and
``aifsim`` on the PATH are this build's binary ($AIFSIM_BIN, else
build/aifsim). ``out/`` starts with what ``make run`` leaves there (the
Makefile's SCENARIO run to its OUT, ``out/quickstart.h5``), since every
page is read after the two commands. The blocks run in file order, so a
block may use what an earlier one wrote. Shell blocks run under
``bash -e -o pipefail``; Python blocks under /usr/bin/python3 with
``PYTHONPATH=analysis`` and matplotlib's Agg backend. The PATH is otherwise
the caller's: a README command that says ``python3`` where it needs
Debian's interpreter fails here when the first python3 lacks h5py.

To keep runs small, ``build/aifsim run`` and ``build/aifsim sweep`` get
``--set duration=2h`` in front of the README's own options (a duration the
README sets wins: the later --set replaces it). ``--list``, ``--collect``
and ``check`` get nothing added.
"""

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2]
# The front doors, which must each have shell and Python to run, and the
# reference pages, held to the same marking rule.
FRONT = ["README.md", "analysis/README.md"]
READMES = FRONT + sorted("docs/" + p.name
                         for p in (SRC / "docs").glob("*.md"))
COMMAND_LANGS = {"", "sh", "shell", "bash", "console", "python", "py"}
PYTHON_LANGS = {"python", "py"}
SHORT = "duration=2h"
LINKS = ["scenarios", "data", "analysis", "tools", "docs"]
TIMEOUT = 600

_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^`\s]*)\s*(.*)$")
_MARK = re.compile(r"^<!--\s*(run|not run:\s*(.*?))\s*-->\s*$")


class Block:
    def __init__(self, readme, line, lang, text, mark, reason):
        self.readme, self.line, self.lang = readme, line, lang
        self.text, self.mark, self.reason = text, mark, reason

    @property
    def where(self):
        return "%s:%d" % (self.readme, self.line)

    @property
    def is_command(self):
        return self.lang in COMMAND_LANGS


def blocks(readme):
    """The fenced blocks of a README, each with its marker."""
    lines = (SRC / readme).read_text(encoding="utf-8").splitlines()
    out, i = [], 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, lang = m.group(2), m.group(3).lower()
        start = i
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            j += 1
        text = "\n".join(lines[start + 1:j]) + "\n"
        # the marker: the nearest non-blank line above the fence
        k = start - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        mark, reason = None, None
        mm = _MARK.match(lines[k].strip()) if k >= 0 else None
        if mm:
            mark = "run" if mm.group(1) == "run" else "not run"
            reason = mm.group(2)
        out.append(Block(readme, start + 1, lang, text, mark, reason))
        i = j + 1
    return out


def _all_blocks():
    return [b for r in READMES for b in blocks(r)]


def test_every_block_is_classified():
    """A command block is marked run or not run (with a reason); a marker
    sits only on a command block."""
    problems = []
    for b in _all_blocks():
        if b.is_command and b.mark is None:
            problems.append("%s: a ```%s block with no <!-- run --> or "
                            "<!-- not run: REASON --> above it (or give it "
                            "an info string such as text or yaml)"
                            % (b.where, b.lang))
        if b.mark == "not run" and not (b.reason or "").strip():
            problems.append("%s: <!-- not run: --> without a reason"
                            % b.where)
        if b.mark and not b.is_command:
            problems.append("%s: a marker on a ```%s block, which is not "
                            "a command" % (b.where, b.lang))
    assert not problems, "\n".join(problems)


def test_docs_are_covered():
    """The reference pages README.md links to are held to the rule."""
    for page in ("SCENARIOS", "MODELS", "OUTPUT", "SWEEPS", "ANALYSIS"):
        assert "docs/%s.md" % page in READMES, page
    runs = {b.readme for b in _all_blocks() if b.mark == "run"}
    for page in ("SCENARIOS", "OUTPUT", "SWEEPS", "ANALYSIS"):
        assert "docs/%s.md" % page in runs, "docs/%s.md runs nothing" % page


def test_there_is_something_to_run():
    for r in FRONT:
        run = [b for b in blocks(r) if b.mark == "run"]
        assert len(run) >= 2, "%s: only %d runnable blocks" % (r, len(run))
        assert any(b.lang in PYTHON_LANGS for b in run), r
        assert any(b.lang not in PYTHON_LANGS for b in run), r


def _binary():
    env = os.environ.get("AIFSIM_BIN")
    if env:
        return Path(env)
    return SRC / "build" / "aifsim"


WRAPPER = """#!/bin/sh
# The README test's aifsim: this build's binary, with --set {short} added
# to `run` and `sweep` (not to --list, --collect or other commands).
bin={bin}
case "$1" in
  run|sweep)
    for a in "$@"; do
      case "$a" in --list|--collect) exec "$bin" "$@";; esac
    done
    cmd=$1; shift
    exec "$bin" "$cmd" --set {short} "$@";;
esac
exec "$bin" "$@"
"""


def _make_run_defaults():
    """SCENARIO and OUT of the Makefile: what `make run` runs and writes."""
    found = {}
    text = (SRC / "Makefile").read_text(encoding="utf-8")
    for name in ("SCENARIO", "OUT"):
        m = re.search(r"^%s\s*\?=\s*(\S+)\s*$" % name, text, re.M)
        assert m, "Makefile: no '%s ?=' line" % name
        found[name] = m.group(1)
    return found["SCENARIO"], found["OUT"]


def _as_make_run(root, env):
    """Leaves in the sandbox what `make run` leaves (on a short run)."""
    scenario, out = _make_run_defaults()
    proc = subprocess.run([str(root / "build" / "aifsim"), "run", scenario,
                           "-o", out, "--quiet"], cwd=root, env=env,
                          capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 0, "make run's run failed:\n" + proc.stderr


def _sandbox(root):
    binary = _binary()
    if not binary.is_file():
        pytest.fail("no aifsim binary at %s (set AIFSIM_BIN or build it)"
                    % binary)
    root.mkdir(parents=True, exist_ok=True)
    for name in LINKS:
        (root / name).symlink_to(SRC / name)
    (root / "out").mkdir()
    for d in ("build", "bin"):
        (root / d).mkdir()
        w = root / d / "aifsim"
        w.write_text(WRAPPER.format(bin=shlex.quote(str(binary)),
                                    short=SHORT))
        w.chmod(0o755)
    env = dict(os.environ)
    env["PATH"] = "%s%s%s" % (root / "bin", os.pathsep, env.get("PATH", ""))
    env["AIFSIM_BIN"] = str(root / "build" / "aifsim")
    env["MPLBACKEND"] = "Agg"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.pop("PYTHONPATH", None)  # the READMEs say what to set
    _as_make_run(root, env)
    return env


@pytest.fixture(scope="module")
def sandboxes(tmp_path_factory):
    base = tmp_path_factory.mktemp("readme")
    out = {}
    for r in sorted({b.readme for b in _runnable()}):
        root = base / r.replace("/", "_").replace(".md", "")
        out[r] = (root, _sandbox(root))
    return out


def _runnable():
    return [b for b in _all_blocks() if b.mark == "run"]


@pytest.mark.parametrize("block", [pytest.param(b, id=b.where)
                                   for b in _runnable()])
def test_block_runs(block, sandboxes):
    root, env = sandboxes[block.readme]
    if block.lang in PYTHON_LANGS:
        env = dict(env, PYTHONPATH=str(root / "analysis"))
        cmd = ["/usr/bin/python3", "-"]
    else:
        cmd = ["bash", "-e", "-o", "pipefail", "-s"]
    proc = subprocess.run(cmd, input=block.text, cwd=root, env=env,
                          capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 0, (
        "%s (```%s) failed with exit %d\n--- block\n%s--- stdout\n%s\n"
        "--- stderr\n%s" % (block.where, block.lang, proc.returncode,
                            block.text, proc.stdout[-3000:],
                            proc.stderr[-3000:]))
