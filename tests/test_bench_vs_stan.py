"""benchmarks/bench_vs_stan.py and its Stan side (benchmarks/stan/): the program, the driver's protocol.

Everything but the last test runs without the Stan environment: the driver's protocol is read from
fake output and a fake driver process. The last one runs the real driver in ``.venv-stan``
(``make stan``) on one tiny data set, and is skipped where that environment is missing.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"
STAN_DIR = BENCH / "stan"
STAN_PYTHON = ROOT / ".venv-stan" / "bin" / "python"


def _load():
    spec = importlib.util.spec_from_file_location("bench_vs_stan_under_test", BENCH / "bench_vs_stan.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench = _load()

FAKE_OUTPUT = """\
{"event": "build", "seconds": 41.2, "cached": false, "model": "models/abc", "pystan": "3.10.0", \
"httpstan": "4.13.0", "stan": "2.35.0", "python": "3.11.7", "program": "censored_beta.stan"}
{"event": "fit", "index": 0, "data": "/tmp/d0.json", "seed": 0, "seconds": 1.8, "prepare_seconds": 0.02, \
"sample_seconds": 1.78, "phi_mean": 0.142, "phi_sd": 0.004, "lam_mean": 3.5, "divergences": 0, \
"draws_file": "/tmp/d0.draws.npy"}

{"event": "fit", "index": 1, "data": "/tmp/d1.json", "seed": 1, "seconds": 1.5, "prepare_seconds": 0.01, \
"sample_seconds": 1.49, "phi_mean": 0.139, "phi_sd": 0.004, "lam_mean": 3.4, "divergences": 0, \
"draws_file": "/tmp/d1.draws.npy"}
{"event": "done", "fits": 2}
"""


def test_stan_program_is_the_censored_beta_synthesizer():
    program = (STAN_DIR / "censored_beta.stan").read_text()
    for piece in ("int<lower=1> n;", "vector<lower=0, upper=1>[n] x;", "real<lower=0> M;",
                  "real<lower=0, upper=1> phi;", "real<lower=0.1> lam;", "phi ~ beta(1, 1);",
                  "lam ~ pareto(0.1, 1.5);", "a = lam * phi;", "b = lam * (1 - phi);", "lbeta(a, b)",
                  "target += sum(fmax(fmin(record_lp, M), -M));"):
        assert piece in program, piece
    # it says which model it re-expresses
    assert "supplement" in program and "S2" in program


def test_paper_program_is_the_supplements_script_unchanged():
    """The headline comparison runs the censoring paper's own script (supplement, section S2), with its
    weighted, clamped likelihood and its generated quantities (the record log-likelihood matrices)."""
    program = (STAN_DIR / "censoring_paper_beta.stan").read_text()
    for piece in ("real betawt_lpdf(vector outcome, real beta1, real beta2, vector alpha, int n, real M)",
                  "update_term = alpha[i] * beta_lpdf(outcome[i] | beta1, beta2);",
                  "check_term = check_term + fmax(fmin(update_term, M), -M);",
                  "real<lower=0.1> lambda;", "real<lower=0> beta1 = lambda * phi;",
                  "real<lower=0> beta2 = lambda * (1 - phi);", "lambda ~ pareto(0.1, 1.5);",
                  "target += betawt_lpdf(outcome | beta1, beta2, alpha, n, M);",
                  "vector[n] log_lik;", "vector[n] log_lik_noM;",
                  "log_lik_noM[i] = betawt_i_noM_lpdf(outcome[i] | beta1, beta2, alpha[i]);"):
        assert piece in program, piece
    assert "S2" in program
    # the benchmark sends it the data it declares, every weight 1
    data = bench.PROGRAMS["paper"]["data"]([0.1, 0.2], 2.0)
    assert data == {"n": 2, "outcome": [0.1, 0.2], "alpha": [1.0, 1.0], "M": 2.0}
    assert bench.PROGRAMS["paper"]["params"] == "phi,lambda"


def test_summarize_reports_the_tuned_program_beside_the_papers():
    rows = [{"dpsynth_s": 0.1, "stan_s": 15.0, "stan_sample_s": 14.9, "z_phi": 0.5, "stan_tuned_s": 1.5,
             "z_phi_tuned": -5.0}]
    s = bench.summarize(rows)
    assert s["ratio"] == pytest.approx(150.0) and s["ratio_tuned"] == pytest.approx(15.0)
    assert s["posteriors_agree"] is False, "a disagreement with the tuned program counts too"


def test_stan_environment_is_locked_apart():
    lock = (STAN_DIR / "requirements-stan.lock").read_text()
    pins = [line.split(";")[0].strip() for line in lock.splitlines() if line and not line.startswith((" ", "#"))]
    names = {p.split("==")[0] for p in pins}
    assert {"pystan", "httpstan", "numpy"} <= names
    assert all("==" in p for p in pins), "every package of the Stan lock has an exact version"
    assert "dpsynth" not in names


def test_parse_events_reads_the_protocol():
    events = bench.parse_events(FAKE_OUTPUT.splitlines())
    assert [e["event"] for e in events] == ["build", "fit", "fit", "done"]
    assert events[0]["seconds"] == 41.2 and events[0]["cached"] is False
    assert [e["seconds"] for e in events if e["event"] == "fit"] == [1.8, 1.5]
    assert events[2]["phi_mean"] == 0.139 and events[2]["draws_file"] == "/tmp/d1.draws.npy"


@pytest.mark.parametrize("line, message", [
    ("Building... done.", "not JSON"),
    ('{"event": "progress"}', "unknown message"),
    ('[1, 2]', "unknown message"),
    ('{"event": "fit", "seconds": 1.0, "phi_mean": 0.1, "draws_file": "d.npy"}', "sample_seconds"),
    ('{"event": "error", "data": "/tmp/d3.json", "message": "RuntimeError: Initialization failed."}',
     "Initialization failed"),
])
def test_parse_event_refuses_what_is_not_the_protocol(line, message):
    with pytest.raises(bench.ProtocolError, match=message):
        bench.parse_event(line)


def _fake_driver(tmp_path: Path, die_after: int | None = None) -> list[str]:
    """A stand-in for run_stan.py: answers each request line of stdin as the protocol says."""
    script = tmp_path / "fake_run_stan.py"
    script.write_text(textwrap.dedent(f"""
        import json, sys
        print("Building... (PyStan talks on stderr)", file=sys.stderr, flush=True)
        count = 0
        for index, line in enumerate(sys.stdin):
            req = json.loads(line)
            if index == 0:
                print(json.dumps({{"event": "build", "seconds": 30.5, "cached": False, "pystan": "3.10.0"}}),
                      flush=True)
            if {die_after!r} is not None and index >= {die_after!r}:
                print("Segmentation fault (pretend)", file=sys.stderr, flush=True)
                sys.exit(3)
            print(json.dumps({{"event": "fit", "index": index, "data": req["data"], "seed": req["seed"],
                              "seconds": 1.0 + index, "sample_seconds": 0.9 + index, "phi_mean": 0.14,
                              "draws_file": req["data"] + ".npy"}}), flush=True)
            count += 1
        print(json.dumps({{"event": "done", "fits": count}}), flush=True)
    """))
    return [sys.executable, str(script)]


def test_stan_driver_alternates_request_and_answer(tmp_path):
    driver = bench.StanDriver(Path("unused"), tmp_path, command=_fake_driver(tmp_path))
    first = driver.fit(tmp_path / "d0.json", 0)
    assert driver.build == {"event": "build", "seconds": 30.5, "cached": False, "pystan": "3.10.0"}
    assert first["seconds"] == 1.0 and first["seed"] == 0
    second = driver.fit(tmp_path / "d1.json", 7)
    assert second["seconds"] == 2.0 and second["seed"] == 7 and second["data"].endswith("d1.json")
    assert driver.close() == {"event": "done", "fits": 2}
    assert driver.proc.returncode == 0
    assert "PyStan talks on stderr" in (tmp_path / "run_stan-tuned.log").read_text()


def test_stan_driver_that_dies_is_reported_with_its_messages(tmp_path):
    driver = bench.StanDriver(Path("unused"), tmp_path, command=_fake_driver(tmp_path, die_after=1))
    driver.fit(tmp_path / "d0.json", 0)
    with pytest.raises(bench.ProtocolError, match="exit status 3") as info:
        driver.fit(tmp_path / "d1.json", 1)
    assert "Segmentation fault (pretend)" in str(info.value)
    driver.kill()


def test_summarize_gives_medians_ratio_and_agreement():
    rows = [{"dpsynth_s": d, "stan_s": s, "stan_sample_s": s - 0.1, "z_phi": z}
            for d, s, z in [(0.2, 10.0, 0.5), (0.1, 12.0, -1.5), (0.4, 30.0, 0.1)]]
    s = bench.summarize(rows)
    assert s["dpsynth_median_s"] == 0.2 and s["stan_median_s"] == 12.0
    assert s["ratio"] == pytest.approx(60.0)
    assert s["ratio_sample_only"] == pytest.approx(59.5)
    assert s["ratio_paired_median"] == pytest.approx(75.0)
    assert s["max_abs_z_phi"] == 1.5 and s["posteriors_agree"] is True
    rows[0]["z_phi"] = -bench.AGREE_Z - 0.1
    assert bench.summarize(rows)["posteriors_agree"] is False


def test_agreement_is_in_standard_errors_of_the_difference():
    assert bench.agreement(0.15, 0.0003, 0.1495, 0.0004) == pytest.approx(1.0)
    assert bench.agreement(0.2, 0.0, 0.2, 0.0) == 0.0


@pytest.mark.slow
@pytest.mark.skipif(not STAN_PYTHON.is_file(), reason=".venv-stan is missing (build it with `make stan`)")
def test_real_driver_samples_a_tiny_data_set(tmp_path):
    from simulated import beta_data

    x = beta_data(50, 3)
    data = tmp_path / "tiny.json"
    data.write_text(json.dumps({"n": 50, "x": x.tolist(), "M": 2.0}))
    out = subprocess.run(
        [str(STAN_PYTHON), str(STAN_DIR / "run_stan.py"), "--chains", "2", "--tune", "50", "--draws", "50",
         "--seed", "3", str(data)],
        capture_output=True, text=True, timeout=900,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    events = bench.parse_events(out.stdout.splitlines())
    assert [e["event"] for e in events] == ["build", "fit", "done"], out.stdout
    build, fit = events[0], events[1]
    assert build["pystan"].startswith("3.") and build["stan"]
    assert fit["seed"] == 3 and 0 < fit["sample_seconds"] <= fit["seconds"]
    draws = np.load(fit["draws_file"])
    assert draws.shape == (2, 2, 50)
    assert 0 < fit["phi_mean"] < 1 and fit["phi_mean"] == pytest.approx(draws[0].mean())
    assert np.all(draws[1] >= 0.1), "lam lives on the Pareto prior's support"

    # the censoring paper's own script, with its names (outcome, alpha; lambda)
    paper = tmp_path / "tiny_paper.json"
    paper.write_text(json.dumps(bench.PROGRAMS["paper"]["data"](x.tolist(), 2.0)))
    out = subprocess.run(
        [str(STAN_PYTHON), str(STAN_DIR / "run_stan.py"), "--program", str(STAN_DIR / "censoring_paper_beta.stan"),
         "--params", "phi,lambda", "--chains", "2", "--tune", "50", "--draws", "50", "--seed", "3", str(paper)],
        capture_output=True, text=True, timeout=900,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    fit = bench.parse_events(out.stdout.splitlines())[1]
    draws = np.load(fit["draws_file"])
    assert draws.shape == (2, 2, 50) and np.all(draws[1] >= 0.1)
