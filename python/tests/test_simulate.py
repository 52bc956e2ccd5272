"""capsim.simulate against `capsim simulate --json`, on both engines and both kinds of input."""

import json

import pytest

import capsim
from conftest import SCENARIOS, cli_json


@pytest.mark.parametrize("engine", ["analytic", "event"])
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_simulate_equals_cli(scenario, engine):
    assert capsim.simulate(scenario, engine=engine) == cli_json("simulate", scenario, "--engine",
                                                                engine)


def test_dict_input_equals_file_input():
    path = "scenarios/llama3-70b-p5/scenario.json"
    with open(path, encoding="utf-8") as f:
        scenario = json.load(f)
    assert "profile" not in scenario  # a dict's relative paths resolve against the working folder
    assert capsim.simulate(scenario, engine="analytic") == capsim.simulate(path, engine="analytic")


def test_path_like_input():
    from pathlib import Path
    path = "scenarios/gpt-30b-p4d/scenario.json"
    assert capsim.simulate(Path(path), engine="analytic") == capsim.simulate(path,
                                                                           engine="analytic")


def test_kernels_equal_cli():
    path = "scenarios/gpt-30b-p4d/scenario.json"
    result = capsim.simulate(path, engine="analytic", kernels=True)
    assert result["kernels"]
    assert result == cli_json("simulate", path, "--engine", "analytic", "--kernels")


def pipeline_depth(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)["parallelism"].get("pipeline", 1)


def test_stage_balance_only_when_pipelined():
    balanced = 0
    for path in SCENARIOS:
        result = capsim.simulate(path, engine="analytic")
        if pipeline_depth(path) == 1:
            assert "stage_balance" not in result, path
        balanced += "stage_balance" in result
    assert balanced > 0


@pytest.mark.parametrize("engine", ["analytic", "event"])
def test_deterministic(engine):
    path = "scenarios/mixtral-8x7b-h100/scenario.json"
    assert capsim.simulate(path, engine=engine) == capsim.simulate(path, engine=engine)


def test_event_runs_repeat_in_one_process():
    # SimGrid allows one simulation per process: a second in-process run would keep the old clock.
    first = capsim.simulate("scenarios/gpt-30b-p4d/scenario.json", engine="event")
    other = capsim.simulate("scenarios/llama3-70b-p5/scenario.json", engine="event")
    again = capsim.simulate("scenarios/gpt-30b-p4d/scenario.json", engine="event")
    assert first == again
    assert other["iteration_time_s"] != first["iteration_time_s"]
