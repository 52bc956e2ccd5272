"""capsim.calibrate_fit against the profile `capsim calibrate fit` writes."""

import json

import pytest

import capsim
from conftest import run_cli

LOGS = ["data/nccl/h100_p5_1node_allreduce_awsbatch.txt",
        "data/nccl/h100_1node_allreduce_nccltests290.txt",
        "data/nccl/h100_ibndr_8node64gpu_allreduce_sharp_coreweave.txt",
        "data/gemm/gemm_measurements.csv"]
OPTIONS = {"gpu": "H100-SXM5-80GB", "fabric": "infiniband", "node_nic_bandwidth": "3200Gbps",
           "name": "h100-ib"}


def test_profile_equals_cli(tmp_path):
    out = tmp_path / "profile.json"
    done = run_cli("calibrate", "fit", *LOGS, "--gpu", OPTIONS["gpu"], "--fabric",
                   OPTIONS["fabric"], "--node-nic-bandwidth", OPTIONS["node_nic_bandwidth"],
                   "--name", OPTIONS["name"], "-o", str(out))
    assert done.returncode == 0, done.stderr
    fitted = capsim.calibrate_fit(LOGS, **OPTIONS)
    assert fitted["profile"] == json.loads(out.read_text(encoding="utf-8"))
    assert fitted == capsim.calibrate_fit(LOGS, **OPTIONS)  # deterministic


def test_profile_runs_a_scenario():
    profile = capsim.calibrate_fit(LOGS, **OPTIONS)["profile"]
    assert profile["gpu"] == OPTIONS["gpu"] or profile["gpu"]["name"] == OPTIONS["gpu"]
    assert profile["fit_quality"]


def test_missing_options_named_together():
    with pytest.raises(capsim.InputError) as raised:
        capsim.calibrate_fit(LOGS[2:3], gpu=OPTIONS["gpu"])
    assert len(raised.value.problems) == 2  # the fabric and the NIC bandwidth


@pytest.mark.parametrize("kwargs, file", [
    ({"fabric": "myrinet"}, "fabric"),
    ({"node_nic_bandwidth": "400"}, "node_nic_bandwidth"),
    ({"max_regimes": 5}, "max_regimes"),
])
def test_bad_options(kwargs, file):
    with pytest.raises(capsim.InputError) as raised:
        capsim.calibrate_fit(LOGS, **dict(OPTIONS, **kwargs))
    assert raised.value.file == file


def test_no_logs():
    with pytest.raises(capsim.InputError):
        capsim.calibrate_fit([])
