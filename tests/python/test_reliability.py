"""The analysis package against the second red team (issue #28): it never
prints a traceback on a file aifsim wrote, whatever its shape (0 samples,
a sweep whose only axis is a name, an axis of mappings), it refuses a file
aifsim did not write, naming it, and a damaged one names the file and the
dataset. Exit codes: 2 for bad input, 1 for a failure."""

import signal
import subprocess
import time
from pathlib import Path

import h5py
import pytest

import aifsim
from aifsim.errors import DamagedRunError, NotARunError

from conftest import SRC, cli, run_aifsim
import synth

QUICK = SRC / "scenarios" / "quickstart.yaml"


def no_traceback(p):
    assert "Traceback" not in p.stderr, p.stderr
    assert "Traceback" not in p.stdout, p.stdout


@pytest.fixture(scope="module")
def kept_empty(aifsim_bin, tmp_path_factory):
    """A run stopped by SIGTERM before its first sample, kept with
    --keep-partial: 0 samples, complete=0 (samples every 10 days of 30, so
    the signal as soon as its file exists comes long before the first)."""
    d = tmp_path_factory.mktemp("kept")
    out = d / "empty.h5"
    proc = subprocess.Popen(
        [str(aifsim_bin), "run", str(QUICK), "-o", str(out), "--quiet",
         "--keep-partial", "--set", "duration=30d", "--set",
         "sample_period=10d"], stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True)
    partial = Path(str(out) + ".partial")
    for _ in range(2000):
        if partial.exists() or proc.poll() is not None:
            break
        time.sleep(0.01)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGTERM, err
    assert partial.exists(), err
    return out


def test_a_kept_partial_opens_with_allow_incomplete(kept_empty):
    with pytest.raises(aifsim.IncompleteRunError):
        aifsim.open_run(kept_empty)
    run = aifsim.open_run(kept_empty, allow_incomplete=True)
    assert not run.complete and len(run.facility) == 0


@pytest.mark.parametrize("how", ["kept", "synthetic"])
def test_zero_samples_report_and_compare(how, kept_empty, quick_h5, tmp_path):
    """report and compare on a run with 0 samples gave a traceback
    (ValueError: zero-size array)."""
    if how == "kept":
        empty, flag = kept_empty, ["--allow-incomplete"]
        runs = [quick_h5, empty]
    else:
        empty, flag = synth.write_run(tmp_path / "zero.h5", n=0), []
        runs = [empty, empty]
    p = cli("report", empty, "--png", tmp_path / "r.png", "--html",
            tmp_path / "r.html", *flag)
    no_traceback(p)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "r.png").stat().st_size > 0
    p = cli("compare", *runs, "--png", tmp_path / "c.png", "--html",
            tmp_path / "c.html", "--csv", tmp_path / "c.csv", *flag)
    no_traceback(p)
    assert p.returncode == 0, p.stderr


def small_sweep(aifsim_bin, d, axis):
    """A 2-point sweep of the quickstart for 10 min along axis."""
    d.mkdir()
    (d / "sweep.yaml").write_text(
        "base: %s\nset: [duration=10min]\naxes:\n  - %s\n" % (QUICK, axis))
    p = subprocess.run([str(aifsim_bin), "sweep", str(d / "sweep.yaml"),
                        "-o", str(d / "out"), "--quiet"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return d / "out"


@pytest.mark.parametrize("name,axis", [
    ("a single name axis",
     "{key: power.policy, values: [static, proportional]}"),
    ("an axis of mappings",
     "{key: grid.outdoor, values: ['{value: 20 degC}', "
     "'{value: 30 degC}']}"),
])
def test_sweeps_of_every_shape(name, axis, aifsim_bin, tmp_path):
    """sweep DIR on a sweep whose only axis is power.policy, or whose axis
    takes mappings, gave a traceback."""
    out = small_sweep(aifsim_bin, tmp_path / "s", axis)
    p = cli("sweep", out, "--png", tmp_path / "f.png", "--html",
            tmp_path / "f.html")
    no_traceback(p)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "f.png").stat().st_size > 0


def test_a_foreign_file_is_refused(tmp_path):
    """A foreign HDF5 file with /facility and complete=1 was accepted, and
    report exited 0 with an empty table."""
    path = tmp_path / "foreign.h5"
    with h5py.File(path, "w") as f:
        f.attrs["complete"] = 1
        f.create_group("facility")
        f["facility/power_w"] = [1.0, 2.0]
    with pytest.raises(NotARunError, match="not written by aifsim"):
        aifsim.open_run(path)
    p = cli("report", path, "--png", tmp_path / "r.png")
    no_traceback(p)
    assert p.returncode == 2 and "foreign.h5" in p.stderr
    assert "not written by aifsim" in p.stderr
    assert not (tmp_path / "r.png").exists()


def test_a_damaged_file_names_file_and_dataset(quick_h5, tmp_path):
    """report on a checksum-damaged file exited 1 and named neither the
    file nor the dataset."""
    path = tmp_path / "damaged.h5"
    path.write_bytes(quick_h5.read_bytes())
    with h5py.File(path, "r") as f:
        info = f["facility/power_w"].id.get_chunk_info(0)
        at = info.byte_offset + info.size // 2
    data = bytearray(path.read_bytes())
    data[at] ^= 0x10
    path.write_bytes(bytes(data))
    with pytest.raises(DamagedRunError, match="facility/power_w"):
        aifsim.open_run(path)
    p = cli("report", path, "--png", tmp_path / "r.png")
    no_traceback(p)
    assert p.returncode == 2, p.stderr
    assert "damaged.h5" in p.stderr and "/facility/power_w" in p.stderr
    assert "checksum" in p.stderr


def test_names_are_text_in_figures(aifsim_bin, tmp_path):
    """A scenario name is written into the report's titles as it is: its
    '$' signs are not mathtext (an unbalanced or odd one broke the PNG)."""
    out = run_aifsim(aifsim_bin, tmp_path / "d.h5", "--set", "duration=1h",
                     "--set", r"name=cost $5 per $\frac",
                     "--set", r"racks.0.name=a$b$", "--set", "loops=[]")
    p = cli("report", out, "--png", tmp_path / "r.png")
    no_traceback(p)
    assert p.returncode == 0, p.stderr
