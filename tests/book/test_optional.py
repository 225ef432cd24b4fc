"""Optional dependencies (extras ``dask`` and ``sas``): clear messages when they are missing.

A missing package is simulated with ``sys.modules[name] = None``, which makes ``import name``
raise :class:`ModuleNotFoundError` as if it were not installed.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
import study_replicates

from dpsynth.validation import DataError
from dpsynth_book import sdr, studies
from dpsynth_book.optional import EXTRAS, MissingDependencyError, require


def _hide(monkeypatch, *names: str) -> None:
    """Make ``import name`` fail as if the packages were not installed."""
    for name in names:
        monkeypatch.setitem(sys.modules, name, None)


def test_require_returns_the_module():
    import json

    assert require("json", purpose="reading JSON") is json
    assert require("os.path", purpose="joining paths") is sys.modules["os.path"]


def test_missing_package_names_the_extra_and_the_purpose(monkeypatch):
    _hide(monkeypatch, "distributed")
    with pytest.raises(MissingDependencyError) as info:
        require("distributed", extra="dask", purpose="running a study on a Dask cluster")
    err = info.value
    msg = str(err)
    assert msg.startswith("Running a study on a Dask cluster needs the optional package `distributed`")
    assert "not installed" in msg
    assert "pip install 'dpsynth[dask]'" in msg
    assert "pip install distributed" in msg
    # one error for the command line (DataError) and for `except ImportError` alike
    assert isinstance(err, DataError) and isinstance(err, ImportError) and isinstance(err, ValueError)
    assert isinstance(err.__cause__, ModuleNotFoundError)


@pytest.mark.parametrize("name", sorted(EXTRAS))
def test_default_extra_comes_from_the_table(monkeypatch, name):
    _hide(monkeypatch, name)
    with pytest.raises(MissingDependencyError, match=rf"pip install 'dpsynth\[{EXTRAS[name]}\]'"):
        require(name, purpose="this feature")


def test_submodule_of_a_missing_package(monkeypatch):
    for loaded in [m for m in sys.modules if m.startswith("dask.")]:  # imported by an earlier test
        monkeypatch.delitem(sys.modules, loaded)
    _hide(monkeypatch, "dask")
    with pytest.raises(MissingDependencyError, match=r"`dask`, which is not installed.*dpsynth\[dask\]"):
        require("dask.array", purpose="chunked arrays")


def test_package_without_extra_gets_a_plain_pip_command():
    with pytest.raises(MissingDependencyError) as info:
        require("dpsynth_no_such_package", purpose="a test")
    msg = str(info.value)
    assert "pip install dpsynth_no_such_package" in msg and "dpsynth[" not in msg


def test_installed_but_broken_package_is_not_called_missing(tmp_path, monkeypatch):
    pkg = tmp_path / "dpsynth_broken_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from numpy import no_such_name  # an incompatible version, say\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(MissingDependencyError) as info:
        require("dpsynth_broken_pkg", extra="sas", purpose="a test")
    msg = str(info.value)
    assert "installed but fails to import" in msg and "no_such_name" in msg
    assert "Reinstall it with: pip install 'dpsynth[sas]'" in msg


def test_error_class_of_the_caller(monkeypatch):
    _hide(monkeypatch, "pyreadstat")
    with pytest.raises(sdr.SDRFileError, match=r"dpsynth\[sas\]"):
        require("pyreadstat", purpose="reading SAS", error=sdr.SDRFileError)


# --------------------------------------------------------------------------------------------
# the real call sites
# --------------------------------------------------------------------------------------------


def test_study_on_a_dask_cluster_without_distributed(tmp_path, monkeypatch):
    _hide(monkeypatch, "dask", "distributed")
    study_replicates.CALLS.clear()
    with pytest.raises(MissingDependencyError) as info:
        studies.run_study("nodask", study_replicates.counting_replicate, {"loc": 1.5}, replicates=2, seed=1,
                          cache_dir=tmp_path, scheduler="tcp://127.0.0.1:8786", progress=False, results="off")
    msg = str(info.value)
    assert "Running study 'nodask' on the Dask cluster at tcp://127.0.0.1:8786" in msg
    assert "`distributed`, which is not installed" in msg and "pip install 'dpsynth[dask]'" in msg
    assert study_replicates.CALLS == []  # no replicate ran
    assert not any(p.suffix == ".nc" for p in tmp_path.iterdir())  # nothing cached


def test_sas_file_without_pyreadstat(tmp_path, monkeypatch):
    _hide(monkeypatch, "pyreadstat")
    sas = tmp_path / "puf.sas7bdat"
    sas.write_bytes(b"not read: the package check comes first")
    with pytest.raises(sdr.SDRFileError) as info:
        sdr.load_sdr(sas)
    msg = str(info.value)
    assert msg.startswith("Reading the SAS data set puf.sas7bdat needs the optional package `pyreadstat`")
    assert "pip install 'dpsynth[sas]'" in msg
    assert isinstance(info.value.__cause__, ModuleNotFoundError)


def test_csv_file_does_not_need_pyreadstat(tmp_path, monkeypatch):
    _hide(monkeypatch, "pyreadstat")
    f = tmp_path / "puf.csv"
    f.write_text("SALARY\n50000\n72000\n")
    data = sdr.load_sdr(f, variables=("salary",))
    assert len(data.frame) == 2


def test_without_the_optional_packages_everything_imports_and_a_local_study_runs(tmp_path):
    """No module of dpsynth or dpsynth_book imports dask, distributed or pyreadstat when it is imported, and a study
    on local processes runs without them (in a fresh interpreter, so no library has seen them)."""
    code = textwrap.dedent(
        f"""
        import importlib, pkgutil, sys
        for name in ("dask", "distributed", "pyreadstat"):
            sys.modules[name] = None
        import dpsynth, dpsynth_book
        for package in (dpsynth, dpsynth_book):
            for mod in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
                if mod.name != "dpsynth.__main__":
                    importlib.import_module(mod.name)
        from dpsynth import seeds
        from dpsynth_book import studies

        def replicate(r, ss, params):
            v = seeds.generator(ss).normal(params["loc"], 1.0, size=2)
            return studies.rows_to_dataset([{{"stat": s, "value": float(x)}} for s, x in zip("ab", v)], ["stat"])

        ds = studies.run_study("local", replicate, {{"loc": 1.5}}, replicates=2, seed=1, cache_dir={str(tmp_path)!r},
                               workers=1, progress=False, results="off")
        print("replicates", ds.sizes["replicate"])
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split() == ["replicates", "2"]
