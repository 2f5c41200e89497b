"""Name suggestions of the analysis package: as the simulator's own
(sim/core/suggest.c, issue 27), case is ignored and a name that starts another
counts as close."""

import pytest

from aifsim.errors import did_you_mean

COLUMNS = ["point", "power.cap", "power.policy", "tokens_per_joule",
           "tokens_per_joule_facility", "training_tokens", "seed"]


@pytest.mark.parametrize("name,want", [
    ("Power.Cap", "power.cap"),            # case only
    ("SEED", "seed"),
    ("tokens", "tokens_per_joule"),        # a start: the first of two
    ("power.policy_x", "power.policy"),    # one starts the name
    ("tokens_per_jule", "tokens_per_joule"),  # a spelling
    ("trainingtokens", "training_tokens"),
    ("zzz", None),                         # nothing close
    ("p", None),                           # one letter is no start
])
def test_did_you_mean(name, want):
    assert did_you_mean(name, COLUMNS) == want
