"""capsim.validate against `capsim validate --json`."""

import json

import pytest

import capsim
from conftest import cli_json

CASES = "scenarios/validation/moe-hopper.json"


@pytest.mark.parametrize("engine", ["analytic", "event"])
def test_equals_cli(engine):
    assert capsim.validate(CASES, engine=engine) == cli_json("validate", CASES, "--engine", engine)


def test_dict_input_names_it():
    with open(CASES, encoding="utf-8") as f:
        cases = json.load(f)
    from_dict = capsim.validate(cases, engine="analytic")
    assert from_dict["summary"] == capsim.validate(CASES, engine="analytic")["summary"]


def test_rejected_case_is_reported_not_raised():
    with open(CASES, encoding="utf-8") as f:
        cases = json.load(f)
    cases["cases"][0]["scenario"]["parallelism"]["tensor"] = 3
    report = capsim.validate(cases, engine="analytic")
    assert len(report["not_predicted"]) == 1
    assert report["not_predicted"][0]["pointer"] == "/cases/0"
    assert len(report["cases"]) == len(cases["cases"]) - 1


def test_no_case_predicted_raises():
    with pytest.raises(capsim.InputError) as raised:
        capsim.validate({"schema": "capsim.validation/v1", "cases": [{"id": "x"}]},
                        engine="analytic")
    assert raised.value.file == "<cases>"
