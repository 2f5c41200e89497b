"""tools/seed_spread.py: the verdicts of its comparison on figures made
with known spreads, and a whole check on small runs: a binary against
itself passes, outputs whose figure was moved far past its spread fail."""

import math
import os
import shutil
import sys

import h5py
import pytest

TOOLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                     "tools")
sys.path.insert(0, os.path.abspath(TOOLS))

import seed_spread  # noqa: E402

NOISY = [10.0, 12.0, 11.0, 9.0, 13.0]  # mean 11, sd 1.58, se 0.71


@pytest.mark.parametrize("after, verdict", [
    (NOISY, "same"),
    ([x + 1.0 for x in NOISY], "within"),   # 1.0 / 1.0 se
    ([x + 5.0 for x in NOISY], "OUTSIDE"),  # 5.0 / 1.0 se
])
def test_verdict_follows_the_standard_error(after, verdict):
    (row,) = seed_spread.compare({"x": NOISY}, {"x": after})
    assert row[4] == verdict


def test_a_figure_the_seed_does_not_move_must_stay():
    (row,) = seed_spread.compare({"gpus": [8.0] * 3}, {"gpus": [9.0] * 3})
    assert row[3] == math.inf and row[4] == "OUTSIDE"


def test_figures_a_run_cannot_give_are_left_out():
    assert seed_spread.compare({"jct": [math.nan] * 2},
                               {"jct": [math.nan] * 2}) == []


def test_spread_is_the_sample_one():
    mean, sd, lo, hi = seed_spread.spread([1.0, 3.0])
    assert (mean, lo, hi) == (2.0, 1.0, 3.0)
    assert sd == pytest.approx(math.sqrt(2.0))


def test_a_binary_is_within_its_own_spread_and_a_moved_figure_is_not(
        aifsim_bin, tmp_path, capsys):
    args = ["--seeds", "2", "--set", "duration=10min",
            "--keep", str(tmp_path)]
    scenario = os.path.join(TOOLS, "..", "scenarios", "quickstart.yaml")
    assert seed_spread.main(args + [scenario, str(aifsim_bin),
                                    str(aifsim_bin)]) == 0
    assert "0 outside" in capsys.readouterr().out
    moved = tmp_path / "moved"
    shutil.copytree(tmp_path / "after", moved)
    for k in (1, 2):
        with h5py.File(moved / ("seed%d.h5" % k), "r+") as f:
            f["summary"].attrs["energy_mwh"] *= 1.5
    assert seed_spread.main(["--seeds", "2", scenario,
                             str(tmp_path / "before"), str(moved)]) == 1
    assert "OUTSIDE  energy_mwh" in capsys.readouterr().out
