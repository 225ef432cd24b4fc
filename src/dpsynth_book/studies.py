"""Monte Carlo study driver: replicates x synthesizers x eps, cached as netCDF.

A study is a function ``replicate_fn(replicate, seed, params) -> xarray.Dataset`` applied to
``replicates`` independent replicates. Each replicate gets its own
:class:`numpy.random.SeedSequence` addressed from the master seed (see :mod:`dpsynth.seeds`),
so results do not depend on execution order or on where a replicate runs. Results are
concatenated along ``replicate``, written atomically to ``<cache_dir>/<name>-<hash>.nc`` where
the hash covers the parameters, and loaded from there when the study is run again with the same
parameters.

The cache directory is checked *before* any replicate runs (it is created and a probe file is
written and deleted), so an unwritable ``cache_dir`` fails at once with a
:class:`CacheDirError` instead of after hours of computation. A cached file that cannot be
read (truncated, corrupt) is reported with a :class:`DamagedCacheWarning` naming its path, and
the study is recomputed and the file replaced atomically.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import tempfile
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr
from tqdm import tqdm

from dpsynth._version import __version__
from dpsynth.paths import atomic_write
from dpsynth.seeds import stream
from dpsynth.validation import DataError

from . import result_files

__all__ = [
    "data_fingerprint",
    "fits_to_dataset",
    "select_fits",
    "fit_names",
    "fitted",
    "run_study",
    "study_key",
    "study_path",
    "code_fingerprint",
    "rows_to_dataset",
    "ReplicateFn",
    "CacheDirError",
    "DamagedCacheWarning",
]


class CacheDirError(DataError):
    """The study's ``cache_dir`` cannot be created or written to."""


class DamagedCacheWarning(UserWarning):
    """A cached study file could not be read; the study is recomputed and the file replaced."""

ReplicateFn = Callable[[int, np.random.SeedSequence, Mapping], xr.Dataset]


def _jsonable(obj):
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, (set, tuple)):
        return list(obj)
    if hasattr(obj, "__dataclass_fields__"):
        return {"__class__": type(obj).__name__, **{k: getattr(obj, k) for k in obj.__dataclass_fields__}}
    return str(obj)


def code_fingerprint(fn: Callable) -> str:
    """Hash of the code behind a study: ``fn``'s source file and every module of ``dpsynth`` and ``dpsynth_book``.

    Part of the cache key, so editing a chapter's replicate code, or any module it relies on (a
    mechanism, a model, a metric of the library; a study helper of the book), invalidates the cached
    results instead of reusing stale ones.
    """
    import dpsynth

    h = hashlib.sha256()
    packages = (Path(dpsynth.__file__).resolve().parent, Path(__file__).resolve().parent)
    files = sorted(f for package in packages for f in package.rglob("*.py"))
    try:
        files.append(Path(inspect.getsourcefile(fn)).resolve())
    except TypeError:
        pass
    for f in files:
        try:
            h.update(f.read_bytes())
        except OSError:
            continue
    return h.hexdigest()[:16]


def study_key(name: str, params: Mapping, replicates: int, seed: int, code: str = "") -> str:
    """Hash of everything that determines a study's results (``code``: see :func:`code_fingerprint`)."""
    blob = json.dumps(
        {"name": name, "params": params, "replicates": replicates, "seed": seed, "version": __version__,
         "code": code},
        sort_keys=True, default=_jsonable,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def study_path(
    name: str, params: Mapping, replicates: int, seed: int, cache_dir: str | os.PathLike, code: str = ""
) -> Path:
    """Cache file of a study."""
    return Path(cache_dir) / f"{name}-{study_key(name, params, replicates, seed, code)}.nc"


def data_fingerprint(*arrays) -> np.int64:
    """A 63-bit digest (SHA-256) of the values of ``arrays`` as float64.

    Stored with a replicate's results (``data_fingerprint``), it says whether a recomputation
    simulated exactly the same confidential data set, without storing the data
    (:func:`dpsynth_book.shipped.compare_replicates`).
    """
    h = hashlib.sha256()
    for a in arrays:
        v = np.ascontiguousarray(np.asarray(a, dtype=np.float64))
        h.update(str(v.shape).encode())
        h.update(v.tobytes())
    return np.int64(int.from_bytes(h.digest()[:8], "little") >> 1)


def rows_to_dataset(rows: Sequence[Mapping], index: Sequence[str]) -> xr.Dataset:
    """Tidy rows (one dict per synthesizer/eps/...) to an xarray Dataset indexed by ``index``."""
    if not rows:
        raise ValueError("`rows` is empty: a replicate produced no results.")
    return pd.DataFrame(list(rows)).set_index(list(index)).to_xarray()


def _write_atomic(ds: xr.Dataset, path: Path) -> None:
    atomic_write(path, lambda tmp: ds.to_netcdf(tmp, engine="h5netcdf"))


def _check_cache_dir(cache_dir: str | os.PathLike) -> None:
    """Create ``cache_dir`` and write and delete a probe file there, or raise :class:`CacheDirError`."""
    d = Path(cache_dir)
    try:
        d.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".write-probe-", suffix=".tmp", dir=d)
        try:
            os.write(fd, b"probe")
        finally:
            os.close(fd)
            os.unlink(probe)
    except OSError as err:
        raise CacheDirError(
            f"`cache_dir` {str(d)!r} cannot be used to store the study's results ({type(err).__name__}: "
            f"{err}); pass a `cache_dir` in a writable location (a directory you own, not a path under a "
            f"regular file). Nothing was computed."
        ) from err


def _load_cached(path: Path) -> xr.Dataset | None:
    """Load a cached result, or warn and return ``None`` if the file cannot be read."""
    try:
        return xr.load_dataset(path, engine="h5netcdf")
    except Exception as err:  # truncated or corrupt files fail in h5py/h5netcdf/xarray with various types
        warnings.warn(
            f"cached study file {str(path)!r} could not be read ({type(err).__name__}: {err}); it looks "
            f"truncated or corrupt. Recomputing the study and replacing the file.",
            DamagedCacheWarning,
            stacklevel=3,
        )
        return None


def _limit_sampler_threads(cores: int) -> None:
    """Worker-process initializer: sampler threads per fit (:func:`dpsynth.fitting.default_cores`)."""
    from dpsynth.mcmc_settings import CORES_ENV

    os.environ[CORES_ENV] = str(int(cores))


def _one(fn: ReplicateFn, r: int, seed: int, params: Mapping) -> xr.Dataset:
    """Run one replicate; count (and silence) the ConvergenceWarnings its fits raise.

    Non-convergence is recorded per fit by the replicate (``converged``, ``divergences``); the
    count of warnings is added as the variable ``convergence_warnings`` so the chapter can report
    it without printing raw warnings on the page.
    """
    from dpsynth.mcmc_settings import ConvergenceWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        ds = fn(r, stream(seed, r), params)
    n_warn = sum(issubclass(w.category, ConvergenceWarning) for w in caught)
    for w in caught:  # anything else is shown as usual
        if not issubclass(w.category, ConvergenceWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if isinstance(ds, xr.Dataset) and "convergence_warnings" not in ds:
        ds = ds.assign(convergence_warnings=np.int64(n_warn))
    return ds


def fits_to_dataset(rows: Sequence[Mapping]) -> xr.Dataset:
    """Tidy rows, one per fit, to a Dataset with one ``fit`` dimension.

    Each row holds ``synthesizer`` (a registry display name), ``eps`` (``None`` or NaN for a fit
    that does not depend on epsilon, which is then stored once) and the fit's values. The
    result has coordinates ``synthesizer`` and ``eps`` on the ``fit`` dimension; select with
    :func:`select_fits`.

    Raises
    ------
    ValueError
        For an empty list, a row without ``synthesizer``, an unregistered name or a repeated
        (synthesizer, eps) pair.
    """
    from dpsynth import registry

    if not rows:
        raise ValueError("`rows` is empty: a replicate produced no results.")
    frame = pd.DataFrame([dict(r) for r in rows])
    if "synthesizer" not in frame:
        raise ValueError("every row needs a `synthesizer` (a registry display name).")
    for name in frame["synthesizer"]:
        registry.spec(str(name))
    if "eps" not in frame:
        frame["eps"] = np.nan
    frame["eps"] = frame["eps"].astype(float)
    dup = frame.duplicated(["synthesizer", "eps"])
    if dup.any():
        raise ValueError(f"repeated (synthesizer, eps) rows: {frame.loc[dup, ['synthesizer', 'eps']].values.tolist()}")
    ds = xr.Dataset(
        {c: ("fit", frame[c].to_numpy()) for c in frame.columns if c not in ("synthesizer", "eps")},
        coords={"synthesizer": ("fit", frame["synthesizer"].astype(str).to_numpy()),
                "eps": ("fit", frame["eps"].to_numpy())},
    )
    return ds


def fit_names(ds: xr.Dataset) -> list[str]:
    """The ``synthesizer`` coordinate values of ``ds`` that are fits.

    A study whose ``synthesizer`` dimension also holds "Data" marks its real fits with the
    boolean variable ``is_fit``; a synthesizer counts as a fit if it is one in every slice of
    ``is_fit``'s other dimensions.
    """
    f = ds["is_fit"]
    other = [d for d in f.dims if d != "synthesizer"]
    keep = (f.all(other) if other else f).values
    return [str(nm) for nm, k in zip(ds.synthesizer.values, keep) if k]


def fitted(ds: xr.Dataset) -> xr.Dataset:
    """``ds`` restricted to the fits (drops the "Data" row of the ``synthesizer`` dimension)."""
    return ds.sel(synthesizer=fit_names(ds))


def select_fits(ds: xr.Dataset, synthesizer: str | Sequence[str] | None = None, eps: float | None = None) -> xr.Dataset:
    """The fits of ``ds`` (from :func:`fits_to_dataset`) with the given synthesizer(s) and eps.

    ``eps=None`` keeps every eps; for an epsilon-independent synthesizer any ``eps`` selects its
    single fit (it applies at every epsilon).
    """
    keep = np.ones(ds.sizes["fit"], dtype=bool)
    if synthesizer is not None:
        names = [synthesizer] if isinstance(synthesizer, str) else list(synthesizer)
        keep &= np.isin(ds["synthesizer"].values, names)
    if eps is not None:
        e = ds["eps"].values
        keep &= np.isnan(e) | np.isclose(e, float(eps))
    return ds.isel(fit=np.flatnonzero(keep))


def run_study(
    name: str,
    replicate_fn: ReplicateFn,
    params: Mapping,
    *,
    replicates: int,
    seed: int,
    cache_dir: str | os.PathLike = "data/cache",
    workers: int | None = 1,
    scheduler: str | None = None,
    progress: bool = True,
    force: bool = False,
    results: str | None = None,
) -> xr.Dataset:
    """Run (or load) a Monte Carlo study.

    Parameters
    ----------
    name : str
        Study name (file prefix).
    replicate_fn : callable
        ``replicate_fn(replicate, seed_sequence, params) -> xarray.Dataset``; must be importable
        (a module-level function) when run on other processes.
    params : mapping
        Parameters passed to every replicate; part of the cache key (must be JSON-able).
    replicates : int
        Number of replicates R.
    seed : int
        Master seed.
    cache_dir : path
        Where results are cached. It is created if needed and must be writable; this is checked
        before any replicate runs (:class:`CacheDirError` otherwise).
    workers : int or None
        Local worker processes; 1 runs in this process, ``None`` uses one per core.
    scheduler : str, optional
        Address of a Dask distributed scheduler (e.g. ``"tcp://10.0.0.5:8786"``); when given,
        replicates run on that cluster instead of local processes. Needs the optional packages
        dask and distributed (``pip install 'dpsynth[dask]'``).
    progress : bool
        Show a progress bar.
    force : bool
        Recompute even if a cached result exists.
    results : {"off", "use", "write"}, optional
        Shipped results (:mod:`dpsynth_book.result_files`): ``"use"`` reads ``results/<name>.nc`` and computes
        nothing (an error if it is missing or was made with other settings); ``"write"`` runs the
        study as usual and then saves it there with its provenance; ``"off"`` ignores shipped
        results. Default: ``$DPSYNTH_RESULTS`` or ``"off"``.

    Returns
    -------
    xarray.Dataset
        Results with a leading ``replicate`` dimension; attributes record the parameters, seed,
        cache key, the elapsed wall time of the computation (``elapsed_seconds``, kept when loaded
        from the cache) and whether this call loaded it from the cache (``from_cache``).
        Synthesizer names are those every page shows (:func:`dpsynth.registry.with_display_names`:
        the censoring paper's "Weighted" reads "LW"); the files keep the names they were written with.

    Raises
    ------
    CacheDirError
        If ``cache_dir`` cannot be created or written to (raised before computing anything).
    dpsynth_book.optional.MissingDependencyError
        If ``scheduler`` is given and ``distributed`` is not installed (the message says how to
        install it).

    Warns
    -----
    DamagedCacheWarning
        If the cached file exists but cannot be read; the study is then recomputed.
    """
    if not isinstance(replicates, (int, np.integer)) or replicates < 1:
        raise ValueError(f"`replicates` must be a positive integer; got {replicates!r}.")
    if not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"`seed` must be a non-negative integer; got {seed!r}.")
    from dpsynth import registry

    mode = result_files.results_mode(results)
    if mode == "use":
        return registry.with_display_names(result_files.load(name, params, replicates=replicates, seed=seed))
    ds = _run_or_load(name, replicate_fn, params, replicates=replicates, seed=seed, cache_dir=cache_dir,
                      workers=workers, scheduler=scheduler, progress=progress, force=force)
    if mode == "write":
        attrs = result_files.provenance(params, replicates=replicates, seed=seed,
                                        elapsed_seconds=float(ds.attrs.get("elapsed_seconds", float("nan"))),
                                        workers=scheduler if scheduler is not None
                                        else min(workers or os.cpu_count() or 1, replicates))
        result_files.write(ds, result_files.shipped_path(name), attrs)
    return registry.with_display_names(ds)


def _run_or_load(name, replicate_fn, params, *, replicates, seed, cache_dir, workers, scheduler, progress,
                 force) -> xr.Dataset:
    path = study_path(name, params, replicates, seed, cache_dir, code_fingerprint(replicate_fn))
    if path.exists() and not force:
        ds = _load_cached(path)
        if ds is not None:
            ds.attrs["from_cache"] = 1
            return ds
    _check_cache_dir(cache_dir)

    t0 = time.perf_counter()
    results: dict[int, xr.Dataset] = {}
    bar = tqdm(total=replicates, desc=name, disable=not progress, mininterval=2.0)
    try:
        if scheduler is not None:
            from .optional import require

            distributed = require("distributed", extra="dask",
                                  purpose=f"running study {name!r} on the Dask cluster at {scheduler}")
            with distributed.Client(scheduler) as client:
                futs = {client.submit(_one, replicate_fn, r, seed, dict(params), pure=False): r
                        for r in range(replicates)}
                for fut in distributed.as_completed(futs):
                    results[futs[fut]] = fut.result()
                    bar.update()
        elif workers == 1 or replicates == 1:
            for r in range(replicates):
                results[r] = _one(replicate_fn, r, seed, params)
                bar.update()
        else:
            import multiprocessing as mp

            n_workers = min(workers or os.cpu_count() or 1, replicates)
            # each process samples its chains on cores / processes threads, so the machine is not oversubscribed
            with ProcessPoolExecutor(max_workers=n_workers, mp_context=mp.get_context("spawn"),
                                     initializer=_limit_sampler_threads,
                                     initargs=(max(1, (os.cpu_count() or 1) // n_workers),)) as ex:
                futs = {ex.submit(_one, replicate_fn, r, seed, dict(params)): r for r in range(replicates)}
                for fut in as_completed(futs):
                    results[futs[fut]] = fut.result()
                    bar.update()
    finally:
        bar.close()

    ds = xr.concat([results[r] for r in range(replicates)], dim=pd.Index(range(replicates), name="replicate"))
    ds.attrs.update(
        study=name,
        params=json.dumps(params, sort_keys=True, default=_jsonable),
        seed=int(seed),
        replicates=int(replicates),
        key=path.stem,
        elapsed_seconds=float(time.perf_counter() - t0),
        dpsynth_version=__version__,
    )
    _write_atomic(ds, path)
    ds.attrs["from_cache"] = 0
    return ds
