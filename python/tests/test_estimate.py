"""capsim.estimate: many scenarios in one call, agreeing with simulate(engine="analytic")."""

import json

import pytest

import capsim
from conftest import SCENARIOS

BASE = "scenarios/llama3-70b-p5/scenario.json"


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def test_agrees_with_simulate_analytic():
    figures = capsim.estimate(SCENARIOS)
    assert len(figures) == len(SCENARIOS)
    for path, got in zip(SCENARIOS, figures):
        full = capsim.simulate(path, engine="analytic")
        assert got["scenario"] == full["scenario"], path
        assert got["num_gpus"] == full["num_gpus"], path
        assert got["iteration_time_s"] == full["iteration_time_s"], path
        assert got["tokens_per_s"] == full["tokens_per_s"], path
        assert got["mfu"] == full["mfu"], path
        assert got["peak_gib_per_gpu"] == full["memory"]["peak_gib_per_gpu"], path
        assert got["capacity_gib"] == full["memory"]["capacity_gib"], path
        assert got["fits"] == full["memory"]["fits"], path


def layouts():
    return [{"tensor": t, "pipeline": p, "data": 64 // (t * p), "context": 1,
             "virtual_pipeline_stages": 1, "schedule": "1f1b"}
            for t in (1, 2, 4, 8) for p in (1, 2, 4, 8)]


def without_file(figures):
    """The figures with each error's file left out: it names the input's form."""
    return [{"error": {k: v for k, v in f["error"].items() if k not in ("file", "text")}}
            if "error" in f else f for f in figures]


def whole_scenarios(sweep):
    """The base scenario with each layout of `sweep` laid over its parallelism."""
    scenarios = []
    for layout in sweep:
        scenario = load(BASE)
        scenario["parallelism"].update(layout)
        scenarios.append(scenario)
    return scenarios


def test_base_and_parallelism_equal_whole_scenarios():
    base = load(BASE)
    scenarios = whole_scenarios(layouts())
    by_layout = capsim.estimate(base, parallelism=layouts(), errors="record")
    assert without_file(by_layout) == without_file(capsim.estimate(scenarios, errors="record"))
    assert without_file(by_layout) == without_file(
        capsim.estimate(BASE, parallelism=layouts(), errors="record"))
    assert sum("error" not in f for f in by_layout) > 3
    assert any("error" in f for f in by_layout)


def test_layouts_after_the_first_are_checked_as_whole_scenarios_are():
    # After one layout reads cleanly, later ones are read by their parallelism alone: their
    # key problems and rule breaks must read as a whole scenario's do.
    sweep = [{"tensor": 2, "pipeline": 1, "data": 16, "schedule": "1f1b",
              "virtual_pipeline_stages": 1}, {"tensr": 2}, {"tensor": 3},
             {"zero_stage": 9}, {"colour": "red"}, {"tensor": 4, "pipeline": 2, "data": 4},
             {"pipeline": 2, "data": 4, "virtual_pipeline_stages": 7}]
    scenarios = whole_scenarios(sweep)
    by_layout = capsim.estimate(BASE, parallelism=sweep, errors="record")
    assert without_file(by_layout) == without_file(capsim.estimate(scenarios, errors="record"))
    assert [("error" in f) for f in by_layout] == [False, True, True, True, True, False, True]


def test_dualpipev_layouts_read_and_estimate_as_whole_scenarios():
    # DeepSeek's V-shaped schedule through a layout sweep: its two chunks per stage, and a
    # break of its rules (one chunk) reported as a whole scenario's would be.
    sweep = [{"schedule": "dualpipev", "virtual_pipeline_stages": 2},
             {"schedule": "dualpipev", "virtual_pipeline_stages": 1},
             {"schedule": "interleaved-1f1b", "virtual_pipeline_stages": 2}]
    scenarios = whole_scenarios(sweep)
    by_layout = capsim.estimate(BASE, parallelism=sweep, errors="record")
    assert without_file(by_layout) == without_file(capsim.estimate(scenarios, errors="record"))
    assert [("error" in f) for f in by_layout] == [False, True, False]
    assert by_layout[0]["iteration_time_s"] == capsim.simulate(
        scenarios[0], engine="analytic")["iteration_time_s"]


def test_each_layout_is_laid_over_the_base_alone():
    # A key one layout sets, present in the base or not, and one it sets before a later key
    # fails, do not carry into the next layout.
    sweep = [{"micro_batch_size": 2, "sequence_parallel": False}, {},
             {"micro_batch_size": 2, "zero_stage": "x"}, {},
             {"optimizer_state_precision": "bf16"}, {}, {1, 2}, {}]
    figures = capsim.estimate(BASE, parallelism=sweep, errors="record")
    alone = capsim.estimate([BASE])[0]
    assert [figures[i] for i in (1, 3, 5, 7)] == [alone] * 4
    assert figures[0] != alone and figures[4] != alone
    assert figures[2]["error"]["pointer"] == "/parallelism/zero_stage"
    assert figures[6]["error"]["pointer"] == "/6"


def test_a_named_stack_reaches_every_layout():
    # The base's stack sets the unsaid stack keys of every layout, the first and the later ones.
    base = load(BASE)
    base["stack"] = "megatron-core"
    sweep = layouts()[:6]
    scenarios = []
    for layout in sweep:
        scenario = load(BASE)
        scenario["stack"] = "megatron-core"
        scenario["parallelism"].update(layout)
        scenarios.append(scenario)
    assert without_file(capsim.estimate(base, parallelism=sweep, errors="record")) == \
        without_file(capsim.estimate(scenarios, errors="record"))


def test_a_broken_base_fails_every_layout():
    base = load(BASE)
    base["model"]["hidden_size"] = "big"
    figures = capsim.estimate(base, parallelism=layouts()[:3], errors="record")
    assert [f["error"]["pointer"] for f in figures] == ["/model/hidden_size"] * 3


def test_layouts_change_the_estimate():
    times = {f["iteration_time_s"] for f in capsim.estimate(BASE, parallelism=layouts(),
                                                             errors="record") if "error" not in f}
    assert len(times) > 3


def test_deterministic():
    assert capsim.estimate(SCENARIOS) == capsim.estimate(SCENARIOS)


def test_bad_layout_raises_with_its_pointer():
    with pytest.raises(capsim.InputError) as raised:
        capsim.estimate(BASE, parallelism=[{"tensor": 3}])
    assert raised.value.file == BASE
    assert raised.value.pointer.startswith("/parallelism")
    with pytest.raises(capsim.InputError) as raised:
        capsim.estimate(load(BASE), parallelism=[{}, {"tensor": 3}])
    assert raised.value.file == "<scenario with parallelism[1]>"


def test_bad_layout_recorded():
    figures = capsim.estimate(BASE, parallelism=[{"tensor": 3}, {}], errors="record")
    assert set(figures[0]) == {"error"}
    error = figures[0]["error"]
    assert error["pointer"].startswith("/parallelism") and error["message"] in error["text"]
    assert figures[1] == capsim.estimate([BASE])[0]


def test_layout_that_is_not_an_object():
    with pytest.raises(capsim.InputError) as raised:
        capsim.estimate(BASE, parallelism=[4])
    assert (raised.value.file, raised.value.pointer) == ("<parallelism>", "/0")


def test_bad_item_names_its_index():
    scenario = load(BASE)
    scenario["model"]["hidden_size"] = "big"
    with pytest.raises(capsim.InputError) as raised:
        capsim.estimate([BASE, scenario])
    assert (raised.value.file, raised.value.pointer) == ("<scenarios[1]>", "/model/hidden_size")


def test_one_scenario_without_layouts_is_an_error():
    with pytest.raises(capsim.InputError):
        capsim.estimate(BASE)


def test_bad_errors_argument():
    with pytest.raises(capsim.InputError):
        capsim.estimate([BASE], errors="ignore")
