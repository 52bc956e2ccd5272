"""capsim.to_frame: pandas DataFrames of results (skipped without pandas)."""

import pytest

import capsim
from conftest import SCENARIOS

pandas = pytest.importorskip("pandas")


def test_estimate_frame_has_a_row_per_scenario():
    figures = capsim.estimate(SCENARIOS)
    frame = capsim.to_frame(figures)
    assert len(frame) == len(SCENARIOS)
    assert list(frame["iteration_time_s"]) == [f["iteration_time_s"] for f in figures]


def test_simulate_frame_has_a_row_per_stage():
    result = capsim.simulate(SCENARIOS[0], engine="analytic")
    frame = capsim.to_frame(result)
    assert len(frame) == len(result["memory"]["stages"])


def test_plan_frame_flattens_nested_keys():
    result = capsim.plan(engine="analytic", top=3)
    frame = capsim.to_frame(result)
    assert len(frame) == len(result["ranked"])
    assert any("." in column for column in frame.columns)


def test_other_objects_are_refused():
    with pytest.raises(TypeError):
        capsim.to_frame({"unrelated": 1})
