"""pandas DataFrames of capsim's results; pandas is imported only when a frame is asked for."""


def _rows(result):
    """Returns the rows a result tabulates as: a list of flat dicts."""
    if isinstance(result, list):
        return result
    if isinstance(result, dict):
        if "ranked" in result:  # plan(): the ranked configurations
            return result["ranked"]
        if "policies" in result:  # whatif(): one row per policy
            return result["policies"]
        if "cases" in result:  # validate(): one row per case
            return result["cases"]
        if "memory" in result and "breakdown" in result:  # simulate(): one row per stage
            return result["memory"]["stages"]
    raise TypeError("to_frame: expected the result of estimate(), simulate(), plan(), "
                    "whatif() or validate()")


def to_frame(result):
    """Returns `result` as a pandas DataFrame, nested dicts flattened to dotted column names.

    estimate(): one row per scenario; simulate(): one row per pipeline stage's memory;
    plan(): one row per ranked configuration; whatif(): one row per policy; validate(): one
    row per case. Raises ImportError when pandas is not installed.
    """
    import pandas  # optional: only this helper needs it

    return pandas.json_normalize(_rows(result))
