"""Result files: the netCDF files of study results, with their provenance.

A study run in ``"write"`` mode (``make results``) is saved as ``results/<name>.nc`` (:func:`write`):
a compressed netCDF file whose attributes record how it was made (:func:`provenance`: package
version, git commit, parameters, sampler settings, date, wall time, machine and load). In
``"use"`` mode (``make book``) the study is read from that file (:func:`load`) and nothing is
recomputed; a file made with other parameters, or a missing file, is an error that says which
file to recompute. The mode is the ``results`` argument of :func:`dpsynth_book.studies.run_study`, or
the environment variable ``DPSYNTH_RESULTS`` (``use``, ``write`` or ``off``) that the Makefile sets
(:func:`results_mode`).

This module is the storage layer below :mod:`dpsynth_book.studies` (which reads and writes through it)
and :mod:`dpsynth_book.shipped` (the list of shipped studies and the check that they are current).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import re
import subprocess
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import xarray as xr

from dpsynth._version import __version__
from dpsynth.paths import atomic_write
from dpsynth.validation import DataError

from .paths import project_root

__all__ = ["MODES", "ENV", "ShippedResultsError", "results_mode", "results_dir", "shipped_path", "provenance",
           "write", "merge_parts", "replace_cells", "machine_description", "machine_text", "load"]

#: Modes of :func:`dpsynth_book.studies.run_study`'s ``results`` argument.
MODES = ("off", "use", "write")
#: Environment variable that sets the mode when the argument is not given.
ENV = "DPSYNTH_RESULTS"


class ShippedResultsError(DataError):
    """A shipped result is missing or was computed with other parameters."""


def results_mode(mode: str | None = None) -> str:
    """The mode in force: ``mode`` if given, else ``$DPSYNTH_RESULTS``, else ``"off"``."""
    m = mode if mode is not None else os.environ.get(ENV, "off") or "off"
    if m not in MODES:
        raise DataError(f"`results` (or ${ENV}) must be one of {MODES}; got {m!r}.")
    return m


def results_dir() -> Path:
    """``$DPSYNTH_RESULTS_DIR`` or ``<repository>/results``."""
    env = os.environ.get("DPSYNTH_RESULTS_DIR")
    return Path(env) if env else project_root() / "results"


def shipped_path(name: str, folder: str | os.PathLike | None = None) -> Path:
    """Path of the shipped file of study ``name``."""
    return (Path(folder) if folder is not None else results_dir()) / f"{name}.nc"


def _git_commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=project_root(), capture_output=True, text=True,
                             timeout=10, check=False)
        commit = out.stdout.strip() or "unknown"
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "src"], cwd=project_root(),
                               capture_output=True, text=True, timeout=10, check=False).stdout.strip()
        return commit + ("+uncommitted-src-changes" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def machine_description() -> str:
    """``"<system> <machine>, <cores> cores, Python <version>"`` of this process."""
    return f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def machine_text(description: str) -> str:
    """A machine's description (:func:`machine_description`) as prose writes it: an architecture such as ``x86_64``
    as x86-64."""
    return re.sub(r"(?<=[0-9A-Za-z])_(?=[0-9A-Za-z])", "-", str(description))


def provenance(params: Mapping, *, replicates: int, seed: int, elapsed_seconds: float, workers) -> dict:
    """Attributes recording how a shipped result was made."""
    sampler = {k: params[k] for k in ("draws", "tune", "chains", "mass_matrix") if k in params}
    try:
        load = os.getloadavg()
    except OSError:
        load = (float("nan"),) * 3
    return {
        "dpsynth_version": __version__,
        "git_commit": _git_commit(),
        "params": json.dumps(dict(params), sort_keys=True, default=str),
        "replicates": int(replicates),
        "seed": int(seed),
        "sampler": json.dumps(sampler, sort_keys=True),
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "elapsed_seconds": float(elapsed_seconds),
        "workers": str(workers),
        "machine": machine_description(),
        "load_average_at_end": ", ".join(f"{v:.2f}" for v in load),
    }


def _two_parts(first_attrs: Mapping, first: dict, later: dict, *, params: Mapping, replicates: int, seed: int,
               later_elapsed: float, workers, note: str) -> dict:
    """Provenance of a study made in two parts: this process's (the later part's code), the summed wall time, and
    ``parts`` (JSON: each part's ``runs`` or ``what``, commit, date, wall time, load) and ``parts_note``."""
    import json

    a = first_attrs
    attrs = provenance(params, replicates=replicates, seed=seed,
                       elapsed_seconds=float(a["elapsed_seconds"]) + float(later_elapsed), workers=workers)
    parts = [{**first, "git_commit": a["git_commit"], "created": a["created"],
              "elapsed_seconds": float(a["elapsed_seconds"]), "load_average_at_end": a["load_average_at_end"]},
             {**later, "git_commit": attrs["git_commit"], "created": attrs["created"],
              "elapsed_seconds": float(later_elapsed), "load_average_at_end": attrs["load_average_at_end"]}]
    attrs.update(parts=json.dumps(parts), parts_note=str(note))
    return attrs


def merge_parts(first: xr.Dataset, later: list[xr.Dataset], *, params: Mapping, seed: int, later_elapsed: float,
                workers, note: str) -> tuple[xr.Dataset, dict]:
    """A shipped study extended by further replicates computed later, and its provenance.

    ``first`` is a shipped file's Dataset (replicates ``0 .. R-1`` along ``replicate``, with its provenance);
    ``later`` are the replicates ``R, R+1, ...`` (each :func:`dpsynth_book.studies.run_study`'s replicate output, from
    the same seeded streams: replicate ``r`` depends on ``(seed, r)`` only). The provenance is this process's
    (:func:`provenance`, the later part's code) with ``elapsed_seconds`` the sum of both parts, and ``parts``
    (JSON: per part its runs, commit, date, wall time and load) and ``parts_note`` (``note``: what differs
    between the parts' code), which the book's provenance sentence states.
    """
    r0 = int(first.sizes["replicate"])
    more = [d.expand_dims(replicate=[r0 + k]) for k, d in enumerate(later)]
    ds = xr.concat([first, *more], dim="replicate")
    total = r0 + len(later)
    attrs = _two_parts(first.attrs, {"runs": f"1–{r0}"}, {"runs": f"{r0 + 1}–{total}"}, params=params,
                       replicates=total, seed=seed, later_elapsed=later_elapsed, workers=workers, note=note)
    return ds, attrs


def replace_cells(first: xr.Dataset, cells: list[tuple[dict, xr.Dataset]], *, params: Mapping, seed: int,
                  later_elapsed: float, workers, what: str, note: str) -> tuple[xr.Dataset, dict]:
    """A shipped study with some cells recomputed later, and its provenance.

    ``cells`` pairs a cell's coordinates (e.g. ``{"replicate": 0, "situation": "count", "eps": 1.0,
    "candidate": "OpenDP-Q"}``) with its recomputed variables (a Dataset without those dimensions, from the same
    seeded stream as the study's own run of that cell). Every variable of the cell is replaced. ``what``
    describes the recomputed cells for the book's provenance sentence; ``note`` why they were recomputed.
    """
    ds = first.copy(deep=True)
    for where, new in cells:
        for v in new.data_vars:
            if v not in ds:
                raise KeyError(f"the recomputed cell has a variable {v!r} that the study does not")
            ds[v].loc[where] = new[v].values
    replicates = int(first.sizes.get("replicate", 1))
    attrs = _two_parts(first.attrs, {"runs": f"1–{replicates}", "what": f"runs 1–{replicates}, every cell"},
                       {"runs": f"1–{replicates}", "what": what}, params=params, replicates=replicates, seed=seed,
                       later_elapsed=later_elapsed, workers=workers, note=note)
    return ds, attrs


def write(ds: xr.Dataset, path: Path, attrs: Mapping) -> Path:
    """Write ``ds`` compressed, with ``attrs``, atomically to ``path``."""
    out = ds.copy()
    out.attrs = {**{k: v for k, v in ds.attrs.items() if k not in ("from_cache",)}, **dict(attrs)}
    encoding = {v: {"zlib": True, "complevel": 6} for v in out.data_vars
                if np.issubdtype(out[v].dtype, np.number) or out[v].dtype == bool}
    return atomic_write(path, lambda tmp: out.to_netcdf(tmp, engine="h5netcdf", encoding=encoding))


def load(name: str, params: Mapping, *, replicates: int, seed: int, path: Path | None = None) -> xr.Dataset:
    """Read the shipped result of study ``name`` and check it was made with these settings.

    Raises
    ------
    ShippedResultsError
        If the file is missing or unreadable, or its parameters, replicates or seed differ.
    """
    p = path or shipped_path(name)
    if not p.exists():
        raise ShippedResultsError(
            f"no shipped result {p.name} in {p.parent.name}/: run `make results` to compute the paper-scale "
            f"studies, or build at quick scale with `make book SCALE=quick`."
        )
    try:
        ds = xr.load_dataset(p, engine="h5netcdf")
    except (OSError, ValueError) as err:
        raise ShippedResultsError(f"the shipped result {p.name} cannot be read ({err}); recompute it with "
                                  f"`make results`.") from err
    want = json.dumps(dict(params), sort_keys=True, default=str)
    diffs = []
    if ds.attrs.get("params") != want:
        have = json.loads(ds.attrs.get("params", "{}"))
        wanted = json.loads(want)
        keys = sorted(set(have) | set(wanted))
        diffs += [f"{k}: shipped {have.get(k)!r}, asked {wanted.get(k)!r}"
                  for k in keys if have.get(k) != wanted.get(k)]
    if int(ds.attrs.get("replicates", -1)) != int(replicates):
        diffs.append(f"replicates: shipped {ds.attrs.get('replicates')}, asked {replicates}")
    if int(ds.attrs.get("seed", -1)) != int(seed):
        diffs.append(f"seed: shipped {ds.attrs.get('seed')}, asked {seed}")
    if diffs:
        raise ShippedResultsError(
            f"the shipped result {p.name} was computed with other settings ({'; '.join(diffs)}); recompute it "
            f"with `make results`, or run this chapter with its paper preset unchanged."
        )
    ds.attrs["from_shipped"] = 1
    return ds
