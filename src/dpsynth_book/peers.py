"""Peer synthesizers: SmartNoise's MST and AIM, run in their own environment for comparisons.

The project compares its whole-table synthesizer with SmartNoise's MST and AIM (the package
``smartnoise-synth``) at equal epsilon. They are not dependencies of dpsynth: smartnoise-synth
wants ``pandas<3`` and ``opendp<0.15``, and its declared dependencies pull in torch, which MST and
AIM never use. ``make peers`` builds them an environment of their own, ``.venv-peers`` (from
``peers/requirements-peers.lock``: what MST and AIM import and nothing else), and
:func:`run_peer` runs them there through the script ``peers/run_peer.py`` in a subprocess,
exchanging files: the table and a JSON job file go in, a synthetic CSV and a JSON result come out.
Nothing here imports snsynth.

How the peers are configured (``peers/README.md`` has the details): ``Synthesizer.create(name,
epsilon=..., delta=...)``, ``fit`` then ``sample``, as smartnoise-synth documents; each continuous
column is cut into ``bins`` equal-width bins on its **public** bounds [lower, upper] (snsynth's
``BinTransformer``; values outside are clamped, synthetic values are bin midpoints; no budget is
spent on the bounds); categorical levels are those of the data, as snsynth does. The rows are
drawn from the fitted model with mbi's ``synthetic_data`` as fixed upstream (mbi 1.1.0, the only
release smartnoise-synth 1.0.8 accepts, hands out each column's values in the order of the rows
within its parents' groups: ``mbi_sampling_fix`` of :func:`run_peer`).

This is a research tool: the table is written to a private temporary folder that is removed
afterwards, and nothing is booked in dpsynth's release ledger.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dpsynth.validation import DataError

from .paths import project_root

__all__ = ["PEERS", "PEERS_PYTHON_ENV", "PeerUnavailable", "PeerError", "peer_environment", "runner_script",
           "run_peer", "write_job"]

#: The peer synthesizers :func:`run_peer` knows.
PEERS: tuple[str, ...] = ("mst", "aim")
#: Environment variable naming the peers' interpreter (default: ``<project root>/.venv-peers/bin/python``).
PEERS_PYTHON_ENV = "DPSYNTH_PEERS_PYTHON"
#: snsynth's default number of bins for a continuous column (``BinTransformer(bins=10)``).
DEFAULT_BINS = 10
#: Default time limit of one peer run, in seconds.
DEFAULT_TIMEOUT = 1800.0


class PeerUnavailable(DataError, RuntimeError):
    """Raised when the peers' environment (or the runner script) is not there.

    The message says how to get it: ``make peers`` in the checkout, or ``$DPSYNTH_PEERS_PYTHON``.
    """


class PeerError(RuntimeError):
    """Raised when a peer run fails: the runner's one-line message, its exit status, or a time-out."""


def peer_environment() -> Path | None:
    """The interpreter of the peers' environment, or ``None`` when there is none.

    ``$DPSYNTH_PEERS_PYTHON`` if it is set (``None`` when that file does not exist, so pointing it
    at a missing path turns the peers off), else ``<project root>/.venv-peers/bin/python`` (built
    by ``make peers``) if it exists. The project root is :func:`dpsynth_book.paths.project_root`.

    Returns
    -------
    pathlib.Path or None
        The interpreter to run ``peers/run_peer.py`` with.
    """
    env = os.environ.get(PEERS_PYTHON_ENV)
    if env:
        path = Path(env)
        return path if path.is_file() else None
    root = project_root() / ".venv-peers"
    for candidate in (root / "bin" / "python", root / "Scripts" / "python.exe"):
        if candidate.is_file():
            return candidate
    return None


def runner_script() -> Path:
    """The runner ``peers/run_peer.py`` of the checkout.

    Raises
    ------
    PeerUnavailable
        If dpsynth is installed outside a checkout, where ``peers/`` does not exist.
    """
    script = project_root() / "peers" / "run_peer.py"
    if not script.is_file():
        raise PeerUnavailable(f"the peers' runner {str(script)!r} does not exist: the peers run from a checkout of "
                              f"the dpsynth repository (`make peers` there builds their environment .venv-peers)")
    return script


def _require_environment(python: str | os.PathLike | None) -> Path:
    if python is not None:
        path = Path(python)
        if not path.is_file():
            raise PeerUnavailable(f"the peers' interpreter {str(path)!r} does not exist; run `make peers` to build "
                                  f".venv-peers")
        return path
    found = peer_environment()
    if found is None:
        env = os.environ.get(PEERS_PYTHON_ENV)
        where = (f"${PEERS_PYTHON_ENV} names {env!r}, which does not exist" if env else
                 f"{str(project_root() / '.venv-peers')!r} does not exist")
        raise PeerUnavailable(f"the peers' environment is missing ({where}): run `make peers` in the dpsynth "
                              f"checkout to build .venv-peers (SmartNoise's MST and AIM), or set "
                              f"${PEERS_PYTHON_ENV} to its interpreter")
    return found


def _bounds(continuous_bounds: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Normalise ``{col: (lower, upper[, bins]) | {"lower", "upper", "bins"}}`` to the job's form."""
    out = {}
    for col, spec in continuous_bounds.items():
        if isinstance(spec, Mapping):
            extra = set(spec) - {"lower", "upper", "bins"}
            if extra:
                raise DataError(f"continuous column {col!r}: unknown keys {sorted(extra)} (lower, upper, bins)")
            lower, upper, bins = spec.get("lower"), spec.get("upper"), spec.get("bins", DEFAULT_BINS)
        elif isinstance(spec, Sequence) and not isinstance(spec, str) and len(spec) in (2, 3):
            lower, upper = spec[0], spec[1]
            bins = spec[2] if len(spec) == 3 else DEFAULT_BINS
        else:
            raise DataError(f"continuous column {col!r}: give (lower, upper), (lower, upper, bins) or a dict with "
                            f"'lower', 'upper' and 'bins', got {spec!r}")
        if isinstance(bins, (bool, np.bool_)) or not isinstance(bins, (int, np.integer)) or bins < 2:
            raise DataError(f"continuous column {col!r}: bins must be an integer >= 2, got {bins!r}")
        if (lower is None) != (upper is None):
            raise DataError(f"continuous column {col!r}: give both public bounds or neither")
        if lower is not None:
            for b in (lower, upper):
                if isinstance(b, (bool, np.bool_)) or not isinstance(b, (int, float, np.integer, np.floating)) \
                        or not math.isfinite(b):
                    raise DataError(f"continuous column {col!r}: bounds must be finite numbers, got {b!r}")
            if not lower < upper:
                raise DataError(f"continuous column {col!r}: lower ({lower}) must be below upper ({upper})")
            lower, upper = float(lower), float(upper)
        out[str(col)] = {"lower": lower, "upper": upper, "bins": int(bins)}
    return out


def _check_number(name: str, value: float, *, below_one: bool = False) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not math.isfinite(value) or value <= 0 or (below_one and value >= 1):
        limit = "in (0, 1)" if below_one else "> 0"
        raise DataError(f"{name} must be a finite number {limit}, got {value!r}")
    return float(value)


def write_job(folder: str | os.PathLike, name: str, frame: pd.DataFrame, *, epsilon: float, delta: float,
              categorical: Sequence[str], continuous_bounds: Mapping[str, Any], n_rows: int | None = None,
              seed: int | None = None, preprocessor_eps: float | None = None,
              mbi_sampling_fix: bool = True) -> tuple[Path, dict[str, dict]]:
    """Write ``frame`` as ``table.csv`` and the job file ``job.json`` for ``peers/run_peer.py`` into ``folder``.

    Parameters
    ----------
    folder : path-like
        An existing folder (private: the table is written there).
    name, frame, epsilon, delta, categorical, continuous_bounds, n_rows, seed, preprocessor_eps, mbi_sampling_fix
        As for :func:`run_peer`.

    Returns
    -------
    (pathlib.Path, dict)
        The job file, and for each categorical column the map from the string written to the CSV
        back to the original value (used to read the synthetic table back).

    Raises
    ------
    DataError
        If an argument cannot make a valid job (unknown peer, a column listed twice or not at all,
        missing values, bounds that are not numbers, ...).
    """
    if name not in PEERS:
        raise DataError(f"unknown peer {name!r}: the peers are {', '.join(PEERS)}")
    if not isinstance(frame, pd.DataFrame):
        raise DataError(f"frame must be a pandas DataFrame, got {type(frame).__name__}")
    epsilon = _check_number("epsilon", epsilon)
    delta = _check_number("delta", delta, below_one=True)
    if preprocessor_eps is not None:
        preprocessor_eps = _check_number("preprocessor_eps", preprocessor_eps)
    if n_rows is not None and (isinstance(n_rows, bool) or not isinstance(n_rows, (int, np.integer)) or n_rows < 1):
        raise DataError(f"n_rows must be None or a positive integer, got {n_rows!r}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
        raise DataError(f"seed must be None or a non-negative integer, got {seed!r}")
    if not isinstance(mbi_sampling_fix, (bool, np.bool_)):
        raise DataError(f"mbi_sampling_fix must be True or False, got {mbi_sampling_fix!r}")
    columns = list(frame.columns)
    if not all(isinstance(c, str) for c in columns) or len(set(columns)) != len(columns):
        raise DataError("the frame's column names must be distinct strings")
    if len(frame) == 0:
        raise DataError("the frame has no rows")
    categorical = [str(c) for c in categorical]
    bounds = _bounds(continuous_bounds)
    twice = sorted(set(categorical) & set(bounds)) or sorted({c for c in categorical if categorical.count(c) > 1})
    if twice:
        raise DataError(f"columns listed twice: {', '.join(twice)}")
    unknown = [c for c in [*categorical, *bounds] if c not in columns]
    if unknown:
        raise DataError(f"columns not in the frame: {', '.join(unknown)}")
    unlisted = [c for c in columns if c not in categorical and c not in bounds]
    if unlisted:
        raise DataError(f"columns listed neither as categorical nor in continuous_bounds: {', '.join(unlisted)}")
    missing = [c for c in columns if frame[c].isna().any()]
    if missing:
        raise DataError(f"missing values in {', '.join(missing)}: the peers take complete tables")
    for col, spec in bounds.items():
        if not pd.api.types.is_numeric_dtype(frame[col]) or pd.api.types.is_bool_dtype(frame[col]):
            raise DataError(f"continuous column {col!r} is not numeric (dtype {frame[col].dtype})")
        if spec["lower"] is None and preprocessor_eps is None:
            raise DataError(f"continuous column {col!r} has no public bounds: give them, or preprocessor_eps > 0 for "
                            f"the peer to estimate them (out of epsilon)")

    written = frame.copy()
    levels: dict[str, dict] = {}
    for col in categorical:
        values = frame[col].unique()
        as_text = {}
        for v in values:
            key = str(v)
            if key in as_text and as_text[key] != v:
                raise DataError(f"categorical column {col!r}: levels {as_text[key]!r} and {v!r} print alike")
            if key == "":
                raise DataError(f"categorical column {col!r}: the empty string is read as a missing value; "
                                f"recode that level")
            as_text[key] = v
        levels[col] = as_text
        written[col] = frame[col].astype(object).map(str)
    folder = Path(folder)
    written.to_csv(folder / "table.csv", index=False)
    job = {"synthesizer": name, "epsilon": epsilon, "delta": delta, "input": "table.csv",
           "output": "synthetic.csv", "result": "result.json", "categorical_columns": categorical,
           "continuous_columns": bounds, "n_rows": None if n_rows is None else int(n_rows),
           "seed": None if seed is None else int(seed), "preprocessor_eps": preprocessor_eps,
           "mbi_sampling_fix": bool(mbi_sampling_fix)}
    path = folder / "job.json"
    path.write_text(json.dumps(job, indent=2) + "\n", encoding="utf-8")
    return path, levels


def _read_back(path: Path, frame: pd.DataFrame, levels: Mapping[str, Mapping[str, Any]],
               bounds: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """The synthetic CSV with the original column types (see :func:`run_peer`)."""
    raw = pd.read_csv(path, dtype={c: str for c in levels}, keep_default_na=False,
                      na_values={c: ["", "NA", "NaN", "nan"] for c in bounds})
    if list(raw.columns) != list(frame.columns):
        raise PeerError(f"the peer wrote columns {list(raw.columns)}, expected {list(frame.columns)}")
    out = {}
    for col in frame.columns:
        orig = frame[col]
        if col in levels:
            strange = sorted(set(raw[col]) - set(levels[col]))
            if strange:
                raise PeerError(f"the peer wrote levels of {col!r} that are not in the data: {strange[:5]}")
            values = raw[col].map(levels[col])
            if isinstance(orig.dtype, pd.CategoricalDtype):
                out[col] = pd.Categorical(values, categories=orig.cat.categories, ordered=orig.cat.ordered)
            else:
                out[col] = values.astype(orig.dtype)
        else:
            x = pd.to_numeric(raw[col], errors="raise").astype(float)
            if x.isna().any():
                raise PeerError(f"the peer wrote missing values in {col!r}")
            if pd.api.types.is_integer_dtype(orig.dtype):
                # counts stay whole numbers: the bin midpoint rounded, kept within the public bounds
                x = np.rint(x)
                spec = bounds[col]
                if spec["lower"] is not None:
                    x = x.clip(math.ceil(spec["lower"]), math.floor(spec["upper"]))
                out[col] = x.astype(orig.dtype)
            else:
                out[col] = x
    return pd.DataFrame(out, columns=list(frame.columns))


def run_peer(name: str, frame: pd.DataFrame, *, epsilon: float, delta: float, categorical: Sequence[str],
             continuous_bounds: Mapping[str, Any], n_rows: int | None = None, seed: int | None = None,
             preprocessor_eps: float | None = None, mbi_sampling_fix: bool = True, timeout: float = DEFAULT_TIMEOUT,
             python: str | os.PathLike | None = None) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Synthesize ``frame`` with a SmartNoise peer (MST or AIM) in the peers' environment.

    The frame and a job file are written to a private temporary folder, ``peers/run_peer.py`` runs
    in the peers' interpreter as a subprocess (``make peers`` builds it), and the synthetic CSV is
    read back with the original column types.

    Parameters
    ----------
    name : {"mst", "aim"}
        The peer.
    frame : pandas.DataFrame
        The confidential table; column names distinct strings, no missing values. Every column is
        either in ``categorical`` or in ``continuous_bounds``.
    epsilon, delta : float
        The peer's whole budget: (epsilon, delta)-DP, delta in (0, 1). With ``preprocessor_eps``
        snsynth takes that part out of ``epsilon`` (the total stays ``epsilon``).
    categorical : sequence of str
        Categorical columns. Their levels are written as strings (two levels that print alike are
        an error) and mapped back to the original values.
    continuous_bounds : mapping
        For each continuous column its **public** bounds and number of bins: ``(lower, upper)``,
        ``(lower, upper, bins)`` or ``{"lower": L, "upper": U, "bins": k}`` (bins default 10,
        snsynth's default). The peer bins on [L, U] (values outside are clamped) and returns bin
        midpoints. ``{"bins": k}`` without bounds lets snsynth estimate them from the data, which
        needs ``preprocessor_eps``.
    n_rows : int, optional
        Synthetic rows (default: as many as ``frame``).
    seed : int, optional
        Seeds NumPy's global generator in the peer (its selection steps and row sampling). OpenDP's
        noise cannot be seeded, so runs are not reproducible.
    preprocessor_eps : float, optional
        Epsilon for snsynth to estimate the bounds of continuous columns given without them.
    mbi_sampling_fix : bool
        Draw the synthetic rows with mbi's ``synthetic_data`` as fixed upstream (mbi commit a987d84,
        mbi 1.3.0; ``peers/run_peer.py``), default, or as mbi 1.1.0 ships it (``False``: the
        study's results before the fix). mbi 1.1.0 hands out each column's values in the order of
        the rows within its parents' groups, which makes columns drawn given the same parents
        comonotone (a correlation the fitted model does not have). Post-processing of the fitted
        model either way: the privacy guarantee is the same.
    timeout : float
        Seconds before the run is stopped (:class:`PeerError`).
    python : path-like, optional
        The peers' interpreter (default: :func:`peer_environment`).

    Returns
    -------
    (pandas.DataFrame, dict)
        The synthetic table, columns in the order and with the dtypes of ``frame``: categorical
        columns hold the original levels (a pandas Categorical keeps its categories); continuous
        columns are floats, or integers (bin midpoints rounded, within the bounds) where ``frame``'s
        column is of an integer dtype. And the runner's result: wall times, the epsilon the peer
        spent (``epsilon_spent``), its zCDP ``rho_synthesizer``, the binning, how the rows were drawn
        (``sampling``), the versions, what the peer printed; plus ``python`` (the interpreter) and
        ``subprocess_wall_time_s``.

    Raises
    ------
    PeerUnavailable
        If the peers' environment or the runner is missing (the message names ``make peers``).
    DataError
        If the arguments cannot make a valid job.
    PeerError
        If the peer fails (with the runner's one-line message), exceeds ``timeout``, or writes
        something unexpected.
    """
    interpreter = _require_environment(python)
    script = runner_script()
    bounds = _bounds(continuous_bounds)
    with tempfile.TemporaryDirectory(prefix="dpsynth-peer-") as tmp:
        job, levels = write_job(tmp, name, frame, epsilon=epsilon, delta=delta, categorical=categorical,
                                continuous_bounds=continuous_bounds, n_rows=n_rows, seed=seed,
                                preprocessor_eps=preprocessor_eps, mbi_sampling_fix=mbi_sampling_fix)
        # the peers' interpreter with its own site-packages only
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
        env["PYTHONNOUSERSITE"] = "1"
        start = time.perf_counter()
        try:
            done = subprocess.run([str(interpreter), str(script), str(job)], capture_output=True, text=True,
                                  timeout=timeout, cwd=tmp, env=env, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as exc:
            raise PeerError(f"peer {name} did not finish within {timeout:g} s (stopped)") from exc
        except OSError as exc:
            raise PeerUnavailable(f"cannot run the peers' interpreter {str(interpreter)!r} ({exc}); run `make peers` "
                                  f"to rebuild .venv-peers") from exc
        elapsed = time.perf_counter() - start
        if done.returncode != 0:
            lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
            said = next((ln for ln in reversed(lines) if ln.startswith("run_peer:")), lines[-1] if lines else "")
            raise PeerError(f"peer {name} failed (exit status {done.returncode}): {said or 'no message'}")
        try:
            info = json.loads((Path(tmp) / "result.json").read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise PeerError(f"peer {name} wrote no readable result file ({exc})") from exc
        synthetic = _read_back(Path(tmp) / "synthetic.csv", frame, levels, bounds)
    info.pop("output", None)
    info["python"] = str(interpreter)
    info["subprocess_wall_time_s"] = elapsed
    return synthetic, info
