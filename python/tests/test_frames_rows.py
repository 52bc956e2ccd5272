"""Which rows to_frame tabulates, checked without pandas."""

import pytest

from capsim.frames import _rows


def test_rows_of_each_result():
    assert _rows([{"a": 1}]) == [{"a": 1}]
    assert _rows({"ranked": [1], "pareto": []}) == [1]
    assert _rows({"policies": [2]}) == [2]
    assert _rows({"cases": [3], "summary": {}}) == [3]
    assert _rows({"memory": {"stages": [4]}, "breakdown": {}}) == [4]
    with pytest.raises(TypeError):
        _rows("scenario.json")
