"""Bad input raises capsim.InputError with the CLI's text; nothing aborts the interpreter."""

import json
import math

import pytest

import capsim
from conftest import REPO, run_cli

SCENARIO = "scenarios/llama3-70b-p5/scenario.json"


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def test_input_error_is_a_value_error():
    assert issubclass(capsim.InputError, ValueError)


def test_fields_of_a_bad_value_in_a_dict():
    scenario = load(SCENARIO)
    scenario["parallelism"]["tensor"] = 3
    with pytest.raises(capsim.InputError) as raised:
        capsim.simulate(scenario, engine="analytic")
    error = raised.value
    assert error.file == "<scenario>"
    assert error.pointer.startswith("/parallelism")
    assert error.message
    assert str(error).startswith(f"{error.file}:{error.pointer}: {error.message}")
    assert error.problems[0] == (error.file, error.pointer, error.message)


def test_text_equals_the_cli_message(tmp_path):
    scenario = load(SCENARIO)
    scenario["cluster"]["num_nodes"] = "eight"
    scenario["model"]["num_layerz"] = 80
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(scenario), encoding="utf-8")
    with pytest.raises(capsim.InputError) as raised:
        capsim.simulate(str(path), engine="analytic")
    error = raised.value
    assert error.file == str(path)
    cli = run_cli("simulate", str(path), "--engine", "analytic")
    assert cli.returncode == 2
    expected = [f"capsim simulate: error: {line}" for line in str(error).splitlines()]
    assert cli.stderr.splitlines() == expected
    assert len(error.problems) >= 2  # both problems, as the CLI lists them


def test_missing_file():
    with pytest.raises(capsim.InputError) as raised:
        capsim.simulate("no/such/scenario.json")
    assert raised.value.file == "no/such/scenario.json"


@pytest.mark.parametrize("call", [
    lambda: capsim.simulate(SCENARIO, engine="fast"),
    lambda: capsim.validate("scenarios/validation/moe-hopper.json", engine="fast"),
    lambda: capsim.plan(None, engine="fast"),
])
def test_bad_engine(call):
    with pytest.raises(capsim.InputError) as raised:
        call()
    assert raised.value.file == "engine"
    assert raised.value.message == 'must be event or analytic, got "fast"'


@pytest.mark.parametrize("value, words", [
    ({1, 2}, "got set"),
    (object(), "got object"),
    (math.nan, "not a finite number"),
    (math.inf, "not a finite number"),
])
def test_values_outside_json(value, words):
    scenario = load(SCENARIO)
    scenario["model"]["name"] = value
    with pytest.raises(capsim.InputError) as raised:
        capsim.simulate(scenario, engine="analytic")
    assert raised.value.pointer == "/model/name"
    assert words in raised.value.message


def test_key_that_is_not_a_string():
    scenario = load(SCENARIO)
    scenario["model"][3] = "x"
    with pytest.raises(capsim.InputError) as raised:
        capsim.simulate(scenario, engine="analytic")
    assert raised.value.pointer == "/model"


def test_list_containing_itself():
    scenario = load(SCENARIO)
    loop = []
    loop.append(loop)
    scenario["model"]["name"] = loop
    with pytest.raises(capsim.InputError) as raised:
        capsim.simulate(scenario, engine="analytic")
    assert "nested deeper" in raised.value.message


def test_not_an_object():
    with pytest.raises(capsim.InputError):
        capsim.simulate([1, 2, 3], engine="analytic")


def corpus():
    return sorted((REPO / "tests" / "fuzz" / "corpus" / "scenario").iterdir())


def test_fuzz_corpus_returns_or_raises_input_error():
    # Every file as a path (the reader's own checks) and, when Python parses it to a dict, as
    # that dict (the conversion too); any other exception fails the test, and an abort the run.
    outcomes = {"returned": 0, "input_error": 0}
    for path in corpus():
        inputs = [str(path)]
        try:
            inputs.append(json.loads(path.read_bytes()))
        except (ValueError, RecursionError):
            pass  # not JSON to Python either
        for scenario in inputs:
            try:
                capsim.estimate([scenario])
                outcomes["returned"] += 1
            except capsim.InputError:
                outcomes["input_error"] += 1
    assert outcomes["returned"] > 0 and outcomes["input_error"] > 0, outcomes


def test_fuzz_corpus_through_simulate():
    # simulate() adds the stage balance search and the result's JSON; a sample keeps it quick.
    for path in corpus()[::25]:
        try:
            capsim.simulate(str(path), engine="analytic")
        except capsim.InputError:
            pass
