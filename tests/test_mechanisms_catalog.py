"""The mechanism catalogue: one spec per mechanism, found by discovery, read by everything else."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpsynth
from dpsynth import mechanisms, registry
from dpsynth.mechanisms import catalog
from dpsynth.mechanisms.contract import MechanismSpec, Param
from dpsynth.validation import DataError, positive_number

SRC = Path(dpsynth.__file__).resolve().parent

#: The 17 mechanisms of the papers and the baselines, in the registry's order.
PAPER_KEYS = ["unweighted", "weighted", "lw", "cw", "sw", "lw_final", "cw_final", "weighted_e", "censor_w",
              "censor_w_public", "censor_uw", "ph", "ph_paper", "opendp_quantiles", "range_averaged",
              "range_truncated", "range_truncated_whole"]


def test_every_paper_mechanism_is_registered_in_order():
    keys = catalog.keys()
    assert [k for k in keys if k in PAPER_KEYS] == PAPER_KEYS
    assert [s.key for s in registry.entries() if s.key in ("data", *PAPER_KEYS)] == ["data", *PAPER_KEYS]


def test_each_spec_comes_from_one_module_of_the_package():
    for s in catalog.specs():
        module = s.run.__module__
        assert module.startswith("dpsynth.mechanisms."), (s.key, module)
        assert s.key in [x.key for x in sys.modules[module].MECHANISMS]


def test_every_mechanism_runs_through_the_synthesizer_or_says_why():
    for s in catalog.specs():
        assert s.runnable or s.not_runnable, s.key
    assert catalog.runnable_keys() == [s.key for s in catalog.specs() if s.runnable]


def test_cli_parameters_agree_across_mechanisms():
    params = catalog.cli_params()
    assert {"radius", "lower", "upper", "historical", "a", "b", "c", "g"} <= set(params)
    assert set(params["lower"][1]) == {"ph", "ph_paper", "opendp_quantiles", "noise_aware"}
    assert params["historical"][0].table and params["lower"][0].in_data_unit


def test_get_and_lookup():
    assert catalog.get("censor_uw").name == "Censor_uw"
    assert catalog.get("Censor_w-pub").key == "censor_w_public"
    assert catalog.lookup_name("A[0.4,1.8]").key == "range_averaged"
    assert catalog.lookup_name("Nope") is None
    with pytest.raises(DataError, match="unknown mechanism 'nope'; registered keys: unweighted"):
        catalog.get("nope")


def test_resolve_checks_every_parameter():
    cw = catalog.get("cw")
    with pytest.raises(DataError, match="needs `radius`"):
        cw.resolve({})
    with pytest.raises(DataError, match="no parameter\\(s\\) 'radious'.*radius, kind"):
        cw.resolve({"radius": 1.0, "radious": 2})
    with pytest.raises(DataError, match="`radius` must be finite and > 0"):
        cw.resolve({"radius": -1.0})
    with pytest.raises(DataError, match="`kind` must be one of 'absolute', 'relative'"):
        cw.resolve({"radius": 1.0, "kind": "rel"})
    assert cw.resolve({"radius": 2})["kind"] == "absolute"
    with pytest.raises(DataError, match="does not take `eps`"):
        cw.resolve({"radius": 1.0}, eps=1.0)
    with pytest.raises(DataError, match="run at a target `eps`"):
        catalog.get("censor_uw").resolve({})
    assert catalog.get("censor_uw").resolve({}, eps=2) == {"eps": 2.0}


def test_specs_refuse_malformed_entries():
    def run(ctx, params):  # pragma: no cover - never run
        return None

    with pytest.raises(ValueError, match="key"):
        MechanismSpec(key="Bad Key", name="X", guarantee="DP", description="", run=run)
    with pytest.raises(ValueError, match="guarantee"):
        MechanismSpec(key="x", name="X", guarantee="strict", description="", run=run)
    with pytest.raises(ValueError, match="no `run`"):
        MechanismSpec(key="x", name="X", guarantee="DP", description="")
    with pytest.raises(ValueError, match="eps"):
        MechanismSpec(key="x", name="X", guarantee="DP", description="", run=run,
                      params={"eps": Param(1.0, positive_number, "")})
    spec = MechanismSpec(key="x_blocked", name="X", guarantee="DP", description="",
                         not_runnable="needs the replicate's own simulator")
    with pytest.raises(DataError, match="needs the replicate's own simulator"):
        catalog.register(spec)
        try:
            mechanisms.run("x_blocked", mechanisms.RunContext(np.ones(3)))
        finally:
            catalog.unregister("x_blocked")


def test_a_key_or_name_taken_twice_is_an_error():
    twin = MechanismSpec(key="censor_uw", name="Other", guarantee="DP", description="twin",
                         run=lambda ctx, p: None)
    with pytest.raises(ValueError, match="defined twice"):
        catalog.register(twin)
    clash = MechanismSpec(key="censor_uw2", name="Censor_uw", guarantee="DP", description="",
                          run=lambda ctx, p: None)
    with pytest.raises(ValueError, match="taken by 'censor_uw'"):
        catalog.register(clash)


def test_no_dispatch_on_mechanism_names_in_the_package():
    """Everything reads the specs: no if/elif on a mechanism's key or name anywhere in src/ (the library, and the
    book's compendium beside it, whose source is read here, not imported)."""
    import re

    pattern = re.compile(r"elif mechanism|== \"ph\"|mechanism == |key == \"(censor|ph|cw|lw|sw)|name == \"(PH|Censor)")
    files = [p for p in SRC.parent.glob("*/**/*.py") if p.parts[len(SRC.parent.parts)] in ("dpsynth", "dpsynth_book")]
    assert len(files) > 100
    hits = [f"{p.relative_to(SRC.parent)}:{i}: {line.strip()}" for p in files
            for i, line in enumerate(p.read_text().splitlines(), 1) if pattern.search(line)]
    assert not hits, hits


# --------------------------------------------------------------------------------------------
# a toy mechanism in a temporary module: one spec, nothing else edited
# --------------------------------------------------------------------------------------------

TOY = textwrap.dedent('''
    """Toy: every record weighted by a public constant, censored at eps/2 (strict DP)."""

    import numpy as np

    from dpsynth.mechanisms.censored import censored_fit
    from dpsynth.mechanisms.contract import MechanismSpec, Param
    from dpsynth.validation import unit_interval


    def _run(ctx, params):
        w = np.full(ctx.n, params["weight"])
        return censored_fit(ctx, MECHANISM, params["eps"], "toy_half", params["eps"], weights=w)


    MECHANISM = MechanismSpec(
        key="toy_half", name="Toy-half", guarantee="DP", description="a public constant weight",
        run=_run, takes_eps=True, params={"toy_weight_x": Param(0.5, unit_interval, "the public weight")},
        fits_per_release="1", needs="a target eps", use_when="never: a test's toy",
    )
    MECHANISMS = (MECHANISM,)
''').replace('params["weight"]', 'params["toy_weight_x"]')


@pytest.fixture
def toy(tmp_path, monkeypatch):
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "toy_half.py").write_text(TOY)
    monkeypatch.setenv(catalog.PATH_ENV, str(folder))
    package = sys.modules["dpsynth.mechanisms"]
    before = list(package.__path__)
    catalog.discover()
    yield folder
    catalog.unregister("toy_half")
    package.__path__[:] = before


def test_toy_mechanism_is_found_everywhere(toy):
    # the registry, and the catalogue's order: after the package's mechanisms
    assert registry.spec("Toy-half").key == "toy_half"
    assert registry.label("toy_half") == "Toy-half (DP)"
    assert mechanisms.list_mechanisms()[-1] == "toy_half" and registry.names()[-1] == "Toy-half"
    # the command line's help, in a new process that finds the module through the environment
    env = {**os.environ, catalog.PATH_ENV: str(toy)}
    out = subprocess.run([sys.executable, "-m", "dpsynth", "fit", "--help"], capture_output=True, text=True,
                         env=env, check=True).stdout
    assert "toy_half" in out and "--toy-weight-x" in out


@pytest.mark.slow
def test_toy_mechanism_fits_through_the_synthesizer(toy):
    from dpsynth import Synthesizer

    rng = np.random.default_rng(3)
    df = pd.DataFrame({"wage": rng.lognormal(0.0, 0.3, 80)})
    s = Synthesizer(df, "wage", model="lognormal", mechanism="toy_half", eps=2.0,
                    mechanism_params={"toy_weight_x": 0.25}, sampler={"draws": 300, "tune": 300},
                    model_params={"mu_prior_sd": 2.0, "sigma_prior_scale": 1.0}, n_release=80)
    s.fit(seed=1)
    p = s.privacy
    assert (p.mechanism, p.name, p.guarantee, p.eps, p.relation) == ("toy_half", "Toy-half", "DP", 2.0, "remove")
    assert p.delta <= 1.0 + 1e-9
    assert len(s.sample(allow_research=True, seed=2)) == 80
