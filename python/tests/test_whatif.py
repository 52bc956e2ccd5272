"""capsim.whatif against `capsim whatif --json`."""

import json

import pytest

import capsim
from conftest import cli_json

WHATIF = "scenarios/whatif/default.json"


def test_default_equals_cli():
    assert capsim.whatif() == cli_json("whatif")


def test_seed_equals_cli():
    assert capsim.whatif(WHATIF, seed=7, seeds=2) == cli_json("whatif", WHATIF, "--seed", "7",
                                                              "--seeds", "2")


def test_deterministic_and_seeded():
    first = capsim.whatif(WHATIF, seed=3)
    assert first == capsim.whatif(WHATIF, seed=3, jobs=1)
    assert first != capsim.whatif(WHATIF, seed=4)


def test_dict_input_resolves_paths_against_base_dir():
    with open(WHATIF, encoding="utf-8") as f:
        whatif = json.load(f)
    assert capsim.whatif(whatif, base_dir="scenarios/whatif") == capsim.whatif(WHATIF)
    with pytest.raises(capsim.InputError) as raised:
        capsim.whatif(whatif)  # the job trace is not in the working folder
    assert raised.value.file.endswith("philly_day.csv") or raised.value.pointer == "/jobs/path"


@pytest.mark.parametrize("kwargs, file", [({"seed": -1}, "seed"), ({"seeds": 0}, "seeds"),
                                          ({"jobs": 0}, "jobs")])
def test_bad_options(kwargs, file):
    with pytest.raises(capsim.InputError) as raised:
        capsim.whatif(WHATIF, **kwargs)
    assert raised.value.file == file


def test_unmodelled_configuration_keys_raise_unless_allowed():
    # A Karpenter NodePool with a CPU limit: capsim cannot model it, as `--allow-unmodelled`.
    path = "tests/data/autoscaler/bad/whatif_unmodelled.json"
    with pytest.raises(capsim.InputError) as raised:
        capsim.whatif(path)
    assert "/spec/limits/cpu" in str(raised.value)
    allowed = capsim.whatif(path, allow_unmodelled=True)
    assert allowed == cli_json("whatif", path, "--allow-unmodelled")
    assert any(n["pointer"] == "/spec/limits/cpu" for n in allowed["notes"])
