"""The peers (SmartNoise's MST and AIM) run in their own environment: ``dpsynth_book.peers``, ``peers/run_peer.py``.

The fast tests always run: the job file written for the runner and read back, the error paths,
with fake interpreters (small scripts standing in for ``.venv-peers/bin/python``), and the
runner's checks of a job file with this interpreter (it reads the job before it imports snsynth).
The slow tests drive the real MST and AIM in ``.venv-peers`` and are skipped when it is missing
(``make peers`` builds it; ``DPSYNTH_PEERS_PYTHON=/missing`` turns them off).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpsynth.validation import DataError
from dpsynth_book import peers
from dpsynth_book.paths import project_root

RUNNER = project_root() / "peers" / "run_peer.py"
SKIP_REASON = "peers environment .venv-peers missing: run `make peers`"


def small_table(n: int = 300, seed: int = 0) -> pd.DataFrame:
    """Two categorical columns (strings; integer counts) and two continuous ones (a float; an integer)."""
    rng = np.random.default_rng(seed)
    region = rng.choice(["north", "south", "east"], n, p=[0.5, 0.3, 0.2])
    children = np.where(region == "north", rng.choice([0, 1, 2], n, p=[0.2, 0.5, 0.3]),
                        rng.choice([0, 1, 2], n, p=[0.6, 0.3, 0.1]))
    income = np.clip(rng.normal(40_000, 12_000, n) + 8_000 * children, 0, 120_000)
    return pd.DataFrame({"region": region, "children": children.astype(np.int64), "income": income.astype(float)})


def fake_interpreter(tmp_path: Path, body: str, name: str = "fake-python") -> Path:
    """An executable standing in for the peers' interpreter: called as ``fake SCRIPT JOB``."""
    path = tmp_path / name
    path.write_text(f"#!{sys.executable}\nimport json, sys, os, pathlib\n" + textwrap.dedent(body))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


# --------------------------------------------------------------------------------------------
# finding the environment
# --------------------------------------------------------------------------------------------


def test_environment_from_the_variable(tmp_path, monkeypatch):
    exe = fake_interpreter(tmp_path, "")
    monkeypatch.setenv(peers.PEERS_PYTHON_ENV, str(exe))
    assert peers.peer_environment() == exe
    monkeypatch.setenv(peers.PEERS_PYTHON_ENV, str(tmp_path / "missing" / "python"))
    assert peers.peer_environment() is None


def test_environment_defaults_to_venv_peers(monkeypatch):
    monkeypatch.delenv(peers.PEERS_PYTHON_ENV, raising=False)
    found = peers.peer_environment()
    expected = project_root() / ".venv-peers" / "bin" / "python"
    assert found == (expected if expected.is_file() else None)


def test_missing_environment_names_make_peers(tmp_path, monkeypatch):
    monkeypatch.setenv(peers.PEERS_PYTHON_ENV, str(tmp_path / "nowhere" / "python"))
    with pytest.raises(peers.PeerUnavailable, match=r"run `make peers`") as info:
        peers.run_peer("mst", small_table(20), epsilon=1.0, delta=1e-6, categorical=["region", "children"],
                       continuous_bounds={"income": (0, 120_000)})
    assert "DPSYNTH_PEERS_PYTHON" in str(info.value) and "nowhere" in str(info.value)
    assert isinstance(info.value, DataError)  # one line on the command line, like a missing extra
    with pytest.raises(peers.PeerUnavailable, match=r"make peers"):
        peers.run_peer("mst", small_table(20), epsilon=1.0, delta=1e-6, categorical=["region", "children"],
                       continuous_bounds={"income": (0, 120_000)}, python=tmp_path / "nope")


# --------------------------------------------------------------------------------------------
# the job file and reading the synthetic table back (fake interpreter)
# --------------------------------------------------------------------------------------------

ECHO = """
script, job_path = sys.argv[1], pathlib.Path(sys.argv[2])
job = json.loads(job_path.read_text())
folder = job_path.parent
# keep what the package sent, for the test to read
keep = pathlib.Path(os.environ["FAKE_PEER_KEEP"])
keep.joinpath("job.json").write_text(job_path.read_text())
keep.joinpath("table.csv").write_text(folder.joinpath(job["input"]).read_text())
keep.joinpath("argv.json").write_text(json.dumps(sys.argv))
keep.joinpath("env.json").write_text(json.dumps({k: os.environ.get(k) for k in ("PYTHONPATH", "PYTHONNOUSERSITE")}))
folder.joinpath(job["output"]).write_text(
    "region,children,income\\nsouth,2,55000.0\\nnorth,0,5000.0\\nnorth,1,119999.4\\n")
folder.joinpath(job["result"]).write_text(json.dumps(
    {"synthesizer": job["synthesizer"], "epsilon_spent": {"total": job["epsilon"]}, "output": "x"}))
print("chatter on stdout")
"""


def test_job_round_trip_with_a_fake_interpreter(tmp_path, monkeypatch):
    keep = tmp_path / "keep"
    keep.mkdir()
    monkeypatch.setenv("FAKE_PEER_KEEP", str(keep))
    monkeypatch.setenv("PYTHONPATH", "/somewhere/else")
    exe = fake_interpreter(tmp_path, ECHO)
    monkeypatch.setenv(peers.PEERS_PYTHON_ENV, str(exe))
    frame = small_table(40)
    frame["children"] = frame["children"].astype(np.int64)
    syn, info = peers.run_peer("aim", frame, epsilon=2.5, delta=1e-7, categorical=["region", "children"],
                               continuous_bounds={"income": {"lower": 0, "upper": 120_000, "bins": 24}},
                               n_rows=3, seed=11, timeout=60)

    job = json.loads((keep / "job.json").read_text())
    assert job == {"synthesizer": "aim", "epsilon": 2.5, "delta": 1e-7, "input": "table.csv",
                   "output": "synthetic.csv", "result": "result.json", "categorical_columns": ["region", "children"],
                   "continuous_columns": {"income": {"lower": 0.0, "upper": 120000.0, "bins": 24}},
                   "n_rows": 3, "seed": 11, "preprocessor_eps": None, "mbi_sampling_fix": True}
    argv = json.loads((keep / "argv.json").read_text())
    assert Path(argv[1]) == RUNNER and Path(argv[2]).name == "job.json"
    assert not Path(argv[2]).exists()  # the private temporary folder is gone
    env = json.loads((keep / "env.json").read_text())
    assert env == {"PYTHONPATH": None, "PYTHONNOUSERSITE": "1"}
    sent = pd.read_csv(keep / "table.csv", dtype={"region": str, "children": str})
    assert list(sent.columns) == ["region", "children", "income"] and len(sent) == 40
    assert set(sent["children"]) <= {"0", "1", "2"}
    np.testing.assert_allclose(sent["income"], frame["income"])

    # types of the original: strings stay strings, integer levels come back as integers
    assert list(syn.columns) == list(frame.columns)
    assert syn["region"].tolist() == ["south", "north", "north"]
    assert syn["children"].dtype == np.int64 and syn["children"].tolist() == [2, 0, 1]
    assert syn["income"].dtype == np.float64 and syn["income"].tolist() == [55000.0, 5000.0, 119999.4]
    assert info["epsilon_spent"] == {"total": 2.5} and "output" not in info
    assert info["python"] == str(exe) and info["subprocess_wall_time_s"] > 0


def test_categories_and_integer_continuous_columns_come_back_typed(tmp_path, monkeypatch):
    keep = tmp_path / "keep"
    keep.mkdir()
    monkeypatch.setenv("FAKE_PEER_KEEP", str(keep))
    monkeypatch.setenv(peers.PEERS_PYTHON_ENV, str(fake_interpreter(tmp_path, ECHO)))
    frame = small_table(30)
    frame["region"] = pd.Categorical(frame["region"], categories=["north", "south", "east", "west"])
    frame["income"] = frame["income"].round().astype(np.int32)  # a count, continuous with public bounds
    syn, _ = peers.run_peer("mst", frame, epsilon=1.0, delta=1e-6, categorical=["region", "children"],
                            continuous_bounds={"income": (0.5, 119_999.5, 8)})
    assert isinstance(syn["region"].dtype, pd.CategoricalDtype)
    assert list(syn["region"].cat.categories) == ["north", "south", "east", "west"]
    assert syn["income"].dtype == np.int32
    # rounded, and kept within the public bounds (ceil(0.5) = 1 ... floor(119999.5) = 119999)
    assert syn["income"].tolist() == [55000, 5000, 119999]


def test_levels_the_data_never_had_are_an_error(tmp_path, monkeypatch):
    keep = tmp_path / "keep"
    keep.mkdir()
    monkeypatch.setenv("FAKE_PEER_KEEP", str(keep))
    monkeypatch.setenv(peers.PEERS_PYTHON_ENV, str(fake_interpreter(tmp_path, ECHO)))
    frame = small_table(30)
    frame = frame[frame["region"] != "south"]
    with pytest.raises(peers.PeerError, match=r"levels of 'region' that are not in the data: \['south'\]"):
        peers.run_peer("mst", frame, epsilon=1.0, delta=1e-6, categorical=["region", "children"],
                       continuous_bounds={"income": (0, 120_000)})


def test_a_failing_peer_gives_its_one_line(tmp_path, monkeypatch):
    exe = fake_interpreter(tmp_path, """
        print("Initial Sigma 12.0")
        print("some warning\\nmore noise", file=sys.stderr)
        print("run_peer: error: ValueError: the peer could not do it", file=sys.stderr)
        sys.exit(1)
        """)
    monkeypatch.setenv(peers.PEERS_PYTHON_ENV, str(exe))
    with pytest.raises(peers.PeerError) as info:
        peers.run_peer("mst", small_table(20), epsilon=1.0, delta=1e-6, categorical=["region", "children"],
                       continuous_bounds={"income": (0, 120_000)})
    assert str(info.value) == ("peer mst failed (exit status 1): run_peer: error: ValueError: the peer could "
                               "not do it")


def test_a_crash_without_the_runner_line_gives_the_last_line(tmp_path, monkeypatch):
    exe = fake_interpreter(tmp_path, "print('Segmentation fault', file=sys.stderr); sys.exit(139)")
    monkeypatch.setenv(peers.PEERS_PYTHON_ENV, str(exe))
    with pytest.raises(peers.PeerError, match=r"peer aim failed \(exit status 139\): Segmentation fault$"):
        peers.run_peer("aim", small_table(20), epsilon=1.0, delta=1e-6, categorical=["region", "children"],
                       continuous_bounds={"income": (0, 120_000)})


def test_a_peer_that_writes_nothing_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setenv(peers.PEERS_PYTHON_ENV, str(fake_interpreter(tmp_path, "pass")))
    with pytest.raises(peers.PeerError, match=r"no readable result file"):
        peers.run_peer("aim", small_table(20), epsilon=1.0, delta=1e-6, categorical=["region", "children"],
                       continuous_bounds={"income": (0, 120_000)})


def test_a_peer_that_hangs_is_stopped(tmp_path, monkeypatch):
    monkeypatch.setenv(peers.PEERS_PYTHON_ENV, str(fake_interpreter(tmp_path, "import time; time.sleep(60)")))
    with pytest.raises(peers.PeerError, match=r"did not finish within 1 s"):
        peers.run_peer("mst", small_table(20), epsilon=1.0, delta=1e-6, categorical=["region", "children"],
                       continuous_bounds={"income": (0, 120_000)}, timeout=1)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"name": "mwem"}, r"unknown peer 'mwem'"),
    ({"epsilon": 0.0}, r"epsilon must be a finite number > 0"),
    ({"delta": 0.0}, r"delta must be a finite number in \(0, 1\)"),
    ({"delta": 1.0}, r"delta must be a finite number in \(0, 1\)"),
    ({"categorical": ["region"]}, r"neither as categorical nor in continuous_bounds: children"),
    ({"categorical": ["region", "children", "income"]}, r"listed twice: income"),
    ({"categorical": ["region", "children", "age"]}, r"not in the frame: age"),
    ({"continuous_bounds": {"income": (10, 5)}}, r"lower \(10\) must be below upper \(5\)"),
    ({"continuous_bounds": {"income": (0, float("inf"))}}, r"finite numbers"),
    ({"continuous_bounds": {"income": (0, 1, 1)}}, r"bins must be an integer >= 2"),
    ({"continuous_bounds": {"income": {"lower": 0}}}, r"both public bounds or neither"),
    ({"continuous_bounds": {"income": {"bins": 10}}}, r"no public bounds: give them, or preprocessor_eps"),
    ({"continuous_bounds": {"income": 5}}, r"give \(lower, upper\)"),
    ({"n_rows": 0}, r"n_rows must be None or a positive integer"),
    ({"seed": -1}, r"seed must be None or a non-negative integer"),
])
def test_bad_arguments_are_refused_before_anything_runs(tmp_path, monkeypatch, kwargs, message):
    monkeypatch.setenv(peers.PEERS_PYTHON_ENV, str(fake_interpreter(tmp_path, "raise SystemExit('must not run')")))
    args = {"name": "mst", "epsilon": 1.0, "delta": 1e-6, "categorical": ["region", "children"],
            "continuous_bounds": {"income": (0, 120_000)}}
    args.update(kwargs)
    name = args.pop("name")
    with pytest.raises(DataError, match=message):
        peers.run_peer(name, small_table(20), **args)


def test_missing_values_and_ambiguous_levels_are_refused(tmp_path, monkeypatch):
    monkeypatch.setenv(peers.PEERS_PYTHON_ENV, str(fake_interpreter(tmp_path, "raise SystemExit('must not run')")))
    frame = small_table(20)
    frame.loc[3, "income"] = np.nan
    with pytest.raises(DataError, match=r"missing values in income"):
        peers.run_peer("mst", frame, epsilon=1.0, delta=1e-6, categorical=["region", "children"],
                       continuous_bounds={"income": (0, 120_000)})
    frame = small_table(20).astype({"children": object})
    frame.loc[0, "children"] = "1"  # the string "1" beside the integer 1
    with pytest.raises(DataError, match=r"levels .* print alike"):
        peers.run_peer("mst", frame, epsilon=1.0, delta=1e-6, categorical=["region", "children"],
                       continuous_bounds={"income": (0, 120_000)})
    with pytest.raises(DataError, match=r"continuous column 'region' is not numeric"):
        peers.run_peer("mst", small_table(20), epsilon=1.0, delta=1e-6, categorical=["children", "income"],
                       continuous_bounds={"region": (0, 1)})


# --------------------------------------------------------------------------------------------
# the runner's own checks (with this interpreter: it reads the job before importing snsynth)
# --------------------------------------------------------------------------------------------


def run_runner(job: dict | str, folder: Path, python: str = sys.executable) -> subprocess.CompletedProcess:
    path = folder / "job.json"
    path.write_text(job if isinstance(job, str) else json.dumps(job))
    return subprocess.run([python, str(RUNNER), str(path)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONNOUSERSITE": "1"})


GOOD_JOB = {"synthesizer": "mst", "epsilon": 3.0, "delta": 1e-6, "input": "table.csv", "output": "synthetic.csv",
            "categorical_columns": ["region", "children"],
            "continuous_columns": {"income": {"lower": 0, "upper": 120000, "bins": 12}},
            "n_rows": None, "seed": 1, "preprocessor_eps": None}


@pytest.mark.parametrize(("change", "message"), [
    ({"synthesizer": "ctgan"}, r"'synthesizer' must be one of mst, aim, got 'ctgan'"),
    ({"epsilon": -1}, r"'epsilon' must be > 0"),
    ({"delta": 0}, r"'delta' must be > 0"),
    ({"extra": 1}, r"unknown keys in the job file: 'extra'"),
    ({"continuous_columns": {"income": {"lower": 0}}}, r"give both 'lower' and 'upper'"),
    ({"continuous_columns": {"income": {"bins": 12}}}, r"has no bounds: give public 'lower' and 'upper'"),
    ({"preprocessor_eps": 3.0}, r"must be smaller than 'epsilon'"),
    ({"categorical_columns": ["region", "income"]}, r"a column is listed twice: income"),
    ({"output": "table.csv"}, r"must be three different files"),
    ({"input": "absent.csv"}, r"the input table .*absent.csv' does not exist"),
    ({"categorical_columns": ["region"]}, r"listed neither as categorical nor continuous: children"),
    ({"mbi_sampling_fix": "yes"}, r"'mbi_sampling_fix' must be true or false, got 'yes'"),
])
def test_runner_refuses_a_bad_job_in_one_line(tmp_path, change, message):
    small_table(10).to_csv(tmp_path / "table.csv", index=False)
    done = run_runner({**GOOD_JOB, **change}, tmp_path)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("run_peer: error: "), done.stderr
    assert __import__("re").search(message, lines[0]), lines[0]
    assert not (tmp_path / "synthetic.csv").exists()


def test_runner_reads_mbi_versions():
    # the runner imports only the standard library at the top: it loads in this interpreter
    import importlib.util

    spec = importlib.util.spec_from_file_location("run_peer_module", RUNNER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module._version_tuple("1.1.0") == (1, 1, 0) < module.MBI_FIXED
    assert module._version_tuple("1.3.0rc1") == (1, 3, 0) >= module.MBI_FIXED
    assert module._version_tuple("2.0") == (2, 0) >= module.MBI_FIXED


def test_run_peer_refuses_a_sampling_fix_that_is_not_a_bool(tmp_path, monkeypatch):
    monkeypatch.setenv(peers.PEERS_PYTHON_ENV, str(fake_interpreter(tmp_path, "")))
    with pytest.raises(DataError, match=r"mbi_sampling_fix must be True or False"):
        peers.run_peer("mst", small_table(20), epsilon=1.0, delta=1e-6, categorical=["region", "children"],
                       continuous_bounds={"income": (0, 120_000)}, mbi_sampling_fix="yes")


def test_runner_refuses_a_missing_key_and_not_json(tmp_path):
    job = dict(GOOD_JOB)
    del job["delta"]
    done = run_runner(job, tmp_path)
    assert done.returncode == 2 and done.stderr.strip() == "run_peer: error: the job file lacks 'delta'"
    done = run_runner("{not json", tmp_path)
    assert done.returncode == 2 and done.stderr.startswith("run_peer: error: the job file") and \
        len(done.stderr.splitlines()) == 1
    done = subprocess.run([sys.executable, str(RUNNER)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "usage: run_peer.py JOB.json" in done.stderr


def test_runner_without_snsynth_says_make_peers(tmp_path):
    # this interpreter (.venv) has no snsynth: the job is valid, the import fails, in one line
    pytest.importorskip("pandas")
    if subprocess.run([sys.executable, "-c", "import snsynth"], capture_output=True).returncode == 0:
        pytest.skip("snsynth is importable here")
    small_table(10).to_csv(tmp_path / "table.csv", index=False)
    done = run_runner(GOOD_JOB, tmp_path)
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("run_peer: error: RuntimeError: cannot import snsynth")
    assert "make peers" in lines[0]


# --------------------------------------------------------------------------------------------
# the real peers (slow; skipped without .venv-peers)
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def peers_python() -> Path:
    exe = peers.peer_environment()
    if exe is None:
        pytest.skip(SKIP_REASON)
    return exe


@pytest.mark.slow
@pytest.mark.parametrize("name", peers.PEERS)
def test_real_peer_synthesizes_a_small_table(peers_python, name):
    frame = small_table(300, seed=1)
    bounds = {"income": {"lower": 0.0, "upper": 120_000.0, "bins": 12}}
    syn, info = peers.run_peer(name, frame, epsilon=3.0, delta=1e-6, categorical=["region", "children"],
                               continuous_bounds=bounds, seed=5, timeout=900)
    assert list(syn.columns) == ["region", "children", "income"] and len(syn) == 300
    assert syn["region"].dtype == frame["region"].dtype and set(syn["region"]) <= set(frame["region"])
    assert syn["children"].dtype == np.int64 and set(syn["children"]) <= set(frame["children"])
    assert syn["income"].dtype == np.float64
    assert syn["income"].between(0.0, 120_000.0).all()
    # the values are the midpoints of the 12 bins of width 10,000
    assert set(syn["income"]) <= {5_000.0 + 10_000.0 * k for k in range(12)}
    assert info["synthesizer"] == name and info["versions"]["smartnoise-synth"] == "1.0.8"
    assert info["epsilon_spent"] == {"preprocessor": 0.0, "synthesizer": 3.0, "total": 3.0}
    assert info["binning"] == {"income": {"bins": 12, "lower": 0.0, "upper": 120000.0, "bounds": "public"}}
    assert info["rho_synthesizer"] > 0 and info["wall_time_s"]["fit"] > 0
    assert info["python"] == str(peers_python)


@pytest.mark.slow
def test_real_peer_draws_rows_without_the_row_order_of_mbi_1_1(peers_python):
    # mbi 1.1.0 hands out each column's values in the order of the rows within its parents' groups: the
    # columns drawn given a parent rise with the row position. With the fix (the default) they do not.
    from dpsynth_book.experiments.whole_table.peers_notes import row_order

    frame = small_table(1000, seed=3)
    kinds = {"region": "categorical", "children": "categorical", "income": "continuous"}
    common = dict(epsilon=10.0, delta=1e-6, categorical=["region", "children"],
                  continuous_bounds={"income": {"lower": 0.0, "upper": 120_000.0, "bins": 12}}, seed=7, timeout=900)
    fixed, info = peers.run_peer("mst", frame, **common)
    shipped, info_shipped = peers.run_peer("mst", frame, mbi_sampling_fix=False, **common)
    assert info["sampling"]["fix_applied"] is True and "a987d84" in info["sampling"]["synthetic_data"]
    assert info_shipped["sampling"]["fix_applied"] is False and info_shipped["sampling"]["fix_requested"] is False
    assert info["sampling"]["mbi"] == info["versions"]["mbi"] == "1.1.0"
    assert row_order(frame, kinds).abs().max() < 0.1
    assert row_order(fixed, kinds).abs().max() < 0.1
    assert row_order(shipped, kinds).abs().max() > 0.3


@pytest.mark.slow
def test_real_peer_estimates_bounds_out_of_epsilon(peers_python):
    frame = small_table(300, seed=2)
    syn, info = peers.run_peer("mst", frame, epsilon=3.0, delta=1e-6, categorical=["region", "children"],
                               continuous_bounds={"income": {"bins": 8}}, preprocessor_eps=0.5, n_rows=120,
                               timeout=900)
    assert len(syn) == 120
    assert info["epsilon_spent"]["preprocessor"] == pytest.approx(0.5)
    assert info["epsilon_spent"]["synthesizer"] == pytest.approx(2.5)
    assert info["epsilon_spent"]["total"] == pytest.approx(3.0)
    assert info["binning"]["income"]["bounds"] == "estimated with preprocessor_eps"


@pytest.mark.slow
def test_torch_is_not_in_the_peers_environment(peers_python):
    done = subprocess.run([str(peers_python), "-c", "import torch"], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "No module named 'torch'" in done.stderr
    done = subprocess.run([str(peers_python), "-c", "import snsynth.mst, snsynth.aim"], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
