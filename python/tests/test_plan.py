"""capsim.plan against `capsim plan --json`."""

import json

import pytest

import capsim
from conftest import cli_json

PLAN = "scenarios/plans/deepseek-v3-h100.json"


def test_default_plan_equals_cli():
    assert capsim.plan(engine="analytic") == cli_json("plan", "--engine", "analytic")


@pytest.mark.parametrize("engine", ["analytic", "event"])
def test_plan_file_equals_cli(engine):
    assert capsim.plan(PLAN, engine=engine, top=5) == cli_json("plan", PLAN, "--engine", engine,
                                                               "--top", "5")


def test_sensitivity_equals_cli():
    result = capsim.plan(PLAN, engine="analytic", top=3, sensitivity=True)
    assert result == cli_json("plan", PLAN, "--engine", "analytic", "--top", "3", "--sensitivity")
    assert len(result["sensitivity"]["cases"]) == 20


def test_dict_input_equals_file_input():
    with open(PLAN, encoding="utf-8") as f:
        plan = json.load(f)
    assert capsim.plan(plan, engine="analytic") == capsim.plan(PLAN, engine="analytic")


def test_jobs_change_nothing():
    assert capsim.plan(engine="analytic", jobs=1) == capsim.plan(engine="analytic", jobs=2)


def test_bad_plan():
    with pytest.raises(capsim.InputError) as raised:
        capsim.plan({"schema": "capsim.plan/v1"}, engine="analytic")
    assert raised.value.file == "<plan>"


@pytest.mark.parametrize("kwargs, file", [({"top": -1}, "top"), ({"jobs": 0}, "jobs")])
def test_bad_options(kwargs, file):
    with pytest.raises(capsim.InputError) as raised:
        capsim.plan(engine="analytic", **kwargs)
    assert raised.value.file == file
