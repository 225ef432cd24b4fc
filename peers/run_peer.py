"""Run one SmartNoise synthesizer (MST or AIM) on a CSV table, as a JSON job file describes.

Usage (with the peers' own interpreter, built by ``make peers``)::

    .venv-peers/bin/python peers/run_peer.py job.json

The job file::

    {"synthesizer": "mst" | "aim", "epsilon": 3.0, "delta": 1e-6,
     "input": "table.csv", "output": "synthetic.csv",
     "categorical_columns": ["sex", "region"],
     "continuous_columns": {"income": {"lower": 0, "upper": 200000, "bins": 20}},
     "n_rows": null, "seed": null, "preprocessor_eps": null, "mbi_sampling_fix": true}

``input`` and ``output`` are relative to the job file's folder (or absolute). ``result`` (optional,
default: ``output`` with the suffix ``.result.json``) names the JSON result written beside the
synthetic CSV: wall times, the epsilon the peer reports as spent (preprocessing and training), its
zCDP rho, the binning used, the versions, and what the peer printed. ``n_rows`` null: as many rows
as the input. Every column of the input must be listed, as categorical or as continuous.

The peer is run as smartnoise-synth's documentation says: ``Synthesizer.create(name, epsilon=...,
delta=...)``, then ``fit(data, transformer=..., categorical_columns=..., preprocessor_eps=...)`` and
``sample(n_rows)``. ``transformer`` is the per-column constraints dictionary that ``fit`` documents
("The inferred preprocessor can be constrained for certain columns by providing a dictionary"):

* a continuous column with public bounds gets ``BinTransformer(bins=k, lower=L, upper=U)``:
  ``bins`` equal-width bins on [L, U], values outside clamped to the nearest bound, and the
  synthetic values are the bins' midpoints. No privacy budget is spent on it (the bounds are
  public: they come from the job, never from the data);
* a continuous column without bounds (``{"bins": k}`` only) gets ``BinTransformer(bins=k)``, whose
  bounds snsynth estimates from the data with ``preprocessor_eps`` (required then, > 0); snsynth
  subtracts that epsilon from the synthesizer's, so the total stays ``epsilon``;
* categorical columns are left to the synthesizer's own choice for its "cube" style (a
  ``LabelTransformer`` without a missing-value level): the levels are those found in the data, as
  in snsynth's documented use (MST and AIM take the domain as public).

**Drawing the rows: mbi 1.1.0's ``synthetic_data``, corrected.** MST and AIM draw the synthetic
rows with Private-PGM's ``MarkovRandomField.synthetic_data`` (package ``mbi``; smartnoise-synth
1.0.8 requires ``mbi>=1.1.0,<2``, and 1.1.0 is the only such release). In mbi 1.1.0 that function
has two faults, fixed upstream by mbi's commit a987d84 ("Fix two regressions in
MarkovRandomField.synthetic_data()", in mbi 1.3.0, which is not on PyPI):

1. within each group of rows that share the values of a column's parents, the column's values are
   handed out in the order of the rows (rank by row position, not shuffled), so two columns drawn
   given the same parents (or one after the other) come out comonotone: a strong correlation the
   model does not have. In one run on NMES, AIM at epsilon 10 gave log(age) and log(1 + visits)
   a correlation of 0.89 (the data: 0.05), and the analyst's age coefficient 9.8 (the data: -0.07);
2. a column is conditioned on the measured cliques that contain it, not on the junction tree's
   cliques, so some columns are drawn with fewer parents than the model has.

With ``mbi_sampling_fix`` true (the default) and an mbi older than 1.3.0, ``synthetic_data`` is
replaced for the run by :func:`_synthetic_data_fixed`, mbi 1.1.0's function with exactly the
upstream fix. It only draws rows from the fitted model (post-processing): the privacy guarantee,
the measurements and the model are unchanged. ``false`` keeps mbi's function as installed (the
study's results before the fix). The result records which was used (``sampling``).

Categorical columns are read as strings, continuous ones as floats; missing values are an error
(MST and AIM take complete tables here). ``seed`` seeds NumPy's global generator, which MST and
AIM use for their selection steps and mbi for sampling rows; the Gaussian noise comes from
OpenDP's own generator, which cannot be seeded, so two runs with one seed still differ.

Any error: one line on stderr (``run_peer: error: ...``) and exit status 1 (2 for a bad command
line or job file). Set ``DPSYNTH_PEER_TRACEBACK=1`` to print the traceback as well.

This script runs in the peers' environment only (Python standard library, pandas, numpy and
snsynth); dpsynth never imports it (``dpsynth_book.peers.run_peer`` runs it in a subprocess).
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import platform
import random
import sys
import time
import traceback
import warnings
from importlib import metadata
from pathlib import Path

SYNTHESIZERS = ("mst", "aim")
REQUIRED = ("synthesizer", "epsilon", "delta", "input", "output", "categorical_columns", "continuous_columns")
OPTIONAL = ("n_rows", "seed", "preprocessor_eps", "result", "mbi_sampling_fix")
#: snsynth's BinTransformer default, used when a continuous column gives no ``bins``
DEFAULT_BINS = 10
#: the distributions whose versions go into the result
#: the first mbi release whose ``MarkovRandomField.synthetic_data`` has the upstream fix (commit a987d84)
MBI_FIXED = (1, 3, 0)
#: what the result says of the fix
MBI_FIX = ("mbi commit a987d84 (mbi 1.3.0): rows shuffled within each parent group before they are ranked; "
           "columns conditioned on the junction tree's cliques")
VERSIONED = ("smartnoise-synth", "smartnoise-sql", "mbi", "opendp", "jax", "jaxlib", "numpy", "pandas", "scipy",
             "networkx")


class JobError(ValueError):
    """The job file is not a valid job (exit status 2)."""


def _number(job: dict, key: str, *, positive: bool = True, below_one: bool = False) -> float:
    value = job[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise JobError(f"{key!r} must be a finite number, got {value!r}")
    if positive and value <= 0:
        raise JobError(f"{key!r} must be > 0, got {value!r}")
    if below_one and value >= 1:
        raise JobError(f"{key!r} must be < 1, got {value!r}")
    return float(value)


def _optional_int(job: dict, key: str, *, minimum: int) -> int | None:
    value = job.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise JobError(f"{key!r} must be null or an integer >= {minimum}, got {value!r}")
    return value


def read_job(path: Path) -> dict:
    """Read and check a job file; paths are resolved against its folder.

    Returns the job with ``input``, ``output`` and ``result`` as absolute paths and every optional
    key present (``None`` when not given), and for each continuous column a dict with ``lower``,
    ``upper`` (both numbers, or both ``None``) and ``bins``.
    """
    try:
        job = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise JobError(f"cannot read the job file {str(path)!r}: {exc.strerror or exc}") from exc
    except json.JSONDecodeError as exc:
        raise JobError(f"the job file {str(path)!r} is not JSON: {exc}") from exc
    if not isinstance(job, dict):
        raise JobError("the job file must hold a JSON object")
    missing = [k for k in REQUIRED if k not in job]
    if missing:
        raise JobError(f"the job file lacks {', '.join(repr(k) for k in missing)}")
    unknown = sorted(set(job) - set(REQUIRED) - set(OPTIONAL))
    if unknown:
        raise JobError(f"unknown keys in the job file: {', '.join(repr(k) for k in unknown)}")

    name = job["synthesizer"]
    if name not in SYNTHESIZERS:
        raise JobError(f"'synthesizer' must be one of {', '.join(SYNTHESIZERS)}, got {name!r}")
    out = {"synthesizer": name, "epsilon": _number(job, "epsilon"),
           "delta": _number(job, "delta", below_one=True)}
    pre = job.get("preprocessor_eps")
    out["preprocessor_eps"] = None if pre is None else _number(job, "preprocessor_eps")
    if out["preprocessor_eps"] is not None and out["preprocessor_eps"] >= out["epsilon"]:
        raise JobError(f"'preprocessor_eps' ({out['preprocessor_eps']}) must be smaller than 'epsilon' "
                       f"({out['epsilon']}): snsynth takes it out of the synthesizer's epsilon")
    fix = job.get("mbi_sampling_fix", True)
    if not isinstance(fix, bool):
        raise JobError(f"'mbi_sampling_fix' must be true or false, got {fix!r}")
    out["mbi_sampling_fix"] = fix
    out["n_rows"] = _optional_int(job, "n_rows", minimum=1)
    out["seed"] = _optional_int(job, "seed", minimum=0)

    cats = job["categorical_columns"]
    if not isinstance(cats, list) or not all(isinstance(c, str) for c in cats):
        raise JobError("'categorical_columns' must be a list of column names")
    conts = job["continuous_columns"]
    if not isinstance(conts, dict):
        raise JobError("'continuous_columns' must be an object {column: {lower, upper, bins}}")
    both = sorted(set(cats) & set(conts))
    if both or len(set(cats)) != len(cats):
        raise JobError(f"a column is listed twice: {', '.join(both) or 'in categorical_columns'}")
    continuous = {}
    for col, spec in conts.items():
        if not isinstance(spec, dict) or set(spec) - {"lower", "upper", "bins"}:
            raise JobError(f"continuous column {col!r}: give an object with 'lower', 'upper' and 'bins'")
        lower, upper = spec.get("lower"), spec.get("upper")
        bins = spec.get("bins", DEFAULT_BINS)
        if isinstance(bins, bool) or not isinstance(bins, int) or bins < 2:
            raise JobError(f"continuous column {col!r}: 'bins' must be an integer >= 2, got {bins!r}")
        if (lower is None) != (upper is None):
            raise JobError(f"continuous column {col!r}: give both 'lower' and 'upper' (public bounds), or neither "
                           f"(bounds estimated with 'preprocessor_eps')")
        if lower is not None:
            for b in (lower, upper):
                if isinstance(b, bool) or not isinstance(b, (int, float)) or not math.isfinite(b):
                    raise JobError(f"continuous column {col!r}: bounds must be finite numbers, got {b!r}")
            if not lower < upper:
                raise JobError(f"continuous column {col!r}: 'lower' ({lower}) must be below 'upper' ({upper})")
            lower, upper = float(lower), float(upper)
        elif out["preprocessor_eps"] is None:
            raise JobError(f"continuous column {col!r} has no bounds: give public 'lower' and 'upper', or "
                           f"'preprocessor_eps' > 0 for snsynth to estimate them")
        continuous[col] = {"lower": lower, "upper": upper, "bins": bins}
    if not cats and not continuous:
        raise JobError("no columns: list them in 'categorical_columns' and 'continuous_columns'")
    out["categorical_columns"] = list(cats)
    out["continuous_columns"] = continuous

    base = path.resolve().parent
    for key in ("input", "output"):
        if not isinstance(job[key], str) or not job[key]:
            raise JobError(f"{key!r} must be a file name")
        out[key] = base / job[key]
    result = job.get("result")
    if result is not None and (not isinstance(result, str) or not result):
        raise JobError("'result' must be a file name")
    out["result"] = base / result if result else out["output"].with_suffix(".result.json")
    if len({out["input"], out["output"], out["result"]}) < 3:
        raise JobError("'input', 'output' and 'result' must be three different files")
    return out


def read_table(job: dict):
    """The input table: categorical columns as strings, continuous ones as floats, in the file's order."""
    import pandas as pd

    cats, conts = job["categorical_columns"], job["continuous_columns"]
    try:
        frame = pd.read_csv(job["input"], dtype={**{c: str for c in cats}, **{c: float for c in conts}},
                            keep_default_na=False, na_values={c: ["", "NA", "NaN", "nan"] for c in conts})
    except FileNotFoundError as exc:
        raise JobError(f"the input table {str(job['input'])!r} does not exist") from exc
    except ValueError as exc:
        raise JobError(f"cannot read the input table: {exc}") from exc
    columns = list(frame.columns)
    absent = [c for c in [*cats, *conts] if c not in columns]
    if absent:
        raise JobError(f"columns missing from the input table: {', '.join(absent)}")
    unlisted = [c for c in columns if c not in cats and c not in conts]
    if unlisted:
        raise JobError(f"columns of the input table listed neither as categorical nor continuous: "
                       f"{', '.join(unlisted)}")
    if len(frame) == 0:
        raise JobError("the input table has no rows")
    empty = [c for c in cats if (frame[c] == "").any()] + [c for c in conts if frame[c].isna().any()]
    if empty:
        raise JobError(f"missing values in {', '.join(empty)}: MST and AIM take complete tables here")
    return frame


def versions() -> dict:
    """Versions of Python and of the packages that make up the peer."""
    out = {"python": platform.python_version()}
    for dist in VERSIONED:
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    return out


def _version_tuple(text: str) -> tuple[int, ...]:
    """``"1.1.0"`` -> ``(1, 1, 0)``; a piece's leading digits only (``"1.3.0rc1"`` -> ``(1, 3, 0)``)."""
    parts = []
    for piece in text.split(".")[:3]:
        digits = piece[:len(piece) - len(piece.lstrip("0123456789"))]
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts)


def _synthetic_data_fixed(self, rows=None, method="round"):
    """``mbi.MarkovRandomField.synthetic_data`` of mbi 1.1.0 with the fix of mbi's commit a987d84.

    A modified copy of Private-PGM's function (package ``mbi`` by Ryan McKenna, licensed under the
    Apache License, Version 2.0). Modifications: laid out more compactly, and changed in behaviour only
    as that upstream commit changes it: each column is conditioned on the junction tree's maximal
    cliques (``jtree.nodes``) instead of the measured cliques, and the rows of each parent group are
    shuffled before they are ranked, so that the "round" method's stratified draws are not assigned
    in the order of the rows. Installed on ``MarkovRandomField`` by :func:`run` when the installed
    mbi is older than :data:`MBI_FIXED`.
    """
    import numpy as np
    from mbi import Dataset, junction_tree, marginal_oracles

    total = max(1, int(rows or self.total))
    domain = self.domain
    jtree, elimination_order = junction_tree.make_junction_tree(domain, [set(cl) for cl in self.cliques])
    cliques = [set(cl) for cl in jtree.nodes]  # fix 2: the junction tree's cliques decide the parents
    potentials = self.potentials.expand(list(jtree.nodes))
    marginals = marginal_oracles.message_passing_stable(potentials, self.total)

    def synthetic_col(counts, total):
        counts = np.asarray(counts, dtype=np.float64).copy()  # writable (a JAX array converts read-only)
        options = np.arange(counts.size, dtype=np.min_scalar_type(counts.size))
        if total == 0:
            return np.array([], dtype=int)
        if method == "sample":
            return np.random.choice(options, total, True, counts / counts.sum())
        counts *= total / counts.sum()
        frac, integ = np.modf(counts)
        integ = integ.astype(int)
        extra = total - integ.sum()
        if extra > 0:
            integ[np.random.choice(options, extra, False, frac / frac.sum())] += 1
        vals = np.repeat(options, integ)
        np.random.shuffle(vals)
        return vals

    data = {}
    order = elimination_order[::-1]
    col = order[0]
    data[col] = synthetic_col(marginals.project((col,)).datavector(flatten=False), total)
    used = {col}
    for col in order[1:]:
        relevant = [cl for cl in cliques if col in cl]
        proj = tuple(used.intersection(set().union(*relevant)))
        used.add(col)
        if not proj:
            data[col] = synthetic_col(marginals.project((col,)).datavector(flatten=False), total)
            continue
        current = np.stack(tuple(data[c] for c in proj), -1)
        marg = np.asarray(marginals.project(proj + (col,)).datavector(flatten=False))
        parents = marg.sum(axis=-1, keepdims=True)
        cond_cdfs = np.divide(marg, parents, out=np.zeros_like(marg), where=parents != 0).cumsum(axis=-1)
        uniques, inverse, counts = np.unique(current, axis=0, return_inverse=True, return_counts=True)
        inverse = np.asarray(inverse).reshape(-1)
        perm = np.argsort(inverse, kind="stable")
        if method == "sample":
            u = np.random.rand(total)
        else:
            starts = np.zeros(len(counts), dtype=int)
            np.cumsum(counts[:-1], out=starts[1:])
            for gi in range(len(counts)):  # fix 1: shuffle within each parent group before ranking
                np.random.shuffle(perm[starts[gi]:starts[gi] + counts[gi]])
            ranks = np.empty(total, dtype=int)
            ranks[perm] = np.arange(total) - starts[inverse[perm]]
            u = (ranks + np.random.rand(total)) / counts[inverse]
        unique_cdfs = cond_cdfs[tuple(uniques.T)]
        size = self.domain[col]
        choices = np.empty(total, dtype=np.min_scalar_type(size))
        u_sorted = u[perm]
        start = 0
        for i, count in enumerate(counts):
            end = start + count
            chunk = np.searchsorted(unique_cdfs[i], u_sorted[start:end], side="right")
            if len(chunk):
                np.minimum(chunk, size - 1, out=chunk)
                choices[perm[start:end]] = chunk
            start = end
        data[col] = choices
    return Dataset(data, domain)


def _install_sampling_fix(wanted: bool) -> dict:
    """Put :func:`_synthetic_data_fixed` on mbi's ``MarkovRandomField`` when wanted and needed; say what was done."""
    from mbi import MarkovRandomField

    version = metadata.version("mbi")
    has_fix = _version_tuple(version) >= MBI_FIXED
    if wanted and not has_fix:
        MarkovRandomField.synthetic_data = _synthetic_data_fixed
        used = f"mbi {version} with {MBI_FIX} (peers/run_peer.py)"
    elif has_fix:
        used = f"mbi {version} as installed (it has the fix)"
    else:
        used = f"mbi {version} as installed, without the fix (mbi_sampling_fix false)"
    return {"mbi": version, "fix_requested": wanted, "fix_applied": bool(wanted and not has_fix),
            "synthetic_data": used}


def run(job: dict) -> dict:
    """Fit the peer on the input table, write the synthetic CSV and return the result record."""
    start = time.perf_counter()
    os.environ.setdefault("JAX_PLATFORMS", "cpu")  # no accelerator probing (and no message about it)
    frame = read_table(job)
    try:
        from snsynth import Synthesizer
        from snsynth.transform import BinTransformer
        from snsynth.utils import cdp_rho
    except ImportError as exc:
        raise RuntimeError(f"cannot import snsynth ({exc}); run this script with .venv-peers/bin/python "
                           f"(`make peers` builds it)") from exc
    if job["seed"] is not None:
        random.seed(job["seed"])
        import numpy as np

        np.random.seed(job["seed"])

    # Public bounds: BinTransformer(lower, upper) spends nothing. Without bounds snsynth estimates
    # them with preprocessor_eps (see the module docstring).
    sampling = _install_sampling_fix(job["mbi_sampling_fix"])
    constraints = {col: BinTransformer(bins=spec["bins"], lower=spec["lower"], upper=spec["upper"])
                   for col, spec in job["continuous_columns"].items()}
    n_rows = job["n_rows"] or len(frame)
    printed = io.StringIO()
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(printed):
        warnings.simplefilter("always")
        synth = Synthesizer.create(job["synthesizer"], epsilon=job["epsilon"], delta=job["delta"])
        t0 = time.perf_counter()
        synth.fit(frame, transformer=constraints, categorical_columns=list(job["categorical_columns"]),
                  preprocessor_eps=job["preprocessor_eps"] or 0.0)
        t1 = time.perf_counter()
        synthetic = synth.sample(n_rows)
        t2 = time.perf_counter()
    if list(synthetic.columns) != list(frame.columns) or len(synthetic) != n_rows:
        raise RuntimeError(f"the peer returned {len(synthetic)} rows of columns {list(synthetic.columns)}, "
                           f"expected {n_rows} of {list(frame.columns)}")

    out = job["output"]
    tmp = out.with_name(f".{out.name}.tmp")
    synthetic.to_csv(tmp, index=False)
    os.replace(tmp, out)

    eps_pre, delta_pre = synth._transformer.odometer.spent
    eps_train = float(synth.epsilon)  # snsynth lowers it by what preprocessing spent
    binning = {}
    for col, spec in job["continuous_columns"].items():
        t = constraints[col]
        binning[col] = {"bins": spec["bins"], "lower": float(t.fit_lower), "upper": float(t.fit_upper),
                        "bounds": "public" if spec["lower"] is not None else "estimated with preprocessor_eps"}
    total = time.perf_counter() - start
    return {
        "synthesizer": job["synthesizer"],
        "peer": f"smartnoise-synth {metadata.version('smartnoise-synth')}",
        "epsilon": job["epsilon"],
        "delta": job["delta"],
        "epsilon_spent": {"preprocessor": float(eps_pre), "synthesizer": eps_train,
                          "total": float(eps_pre) + eps_train},
        "delta_spent": {"preprocessor": float(delta_pre), "synthesizer": job["delta"]},
        "rho_synthesizer": float(cdp_rho(eps_train, job["delta"])),
        "preprocessor_eps": job["preprocessor_eps"],
        "binning": binning,
        "categorical_levels": {c: int(frame[c].nunique()) for c in job["categorical_columns"]},
        "n_rows_input": len(frame),
        "n_rows_output": len(synthetic),
        "seed": job["seed"],
        "sampling": sampling,
        "wall_time_s": {"fit": t1 - t0, "sample": t2 - t1, "total": total},
        "versions": versions(),
        "printed": printed.getvalue().splitlines(),
        "warnings": sorted({f"{w.category.__name__}: {w.message}" for w in caught}),
        "output": str(out),
    }


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1 or argv[0] in ("-h", "--help"):
        print("usage: run_peer.py JOB.json   (see the docstring of peers/run_peer.py)", file=sys.stderr)
        return 2
    try:
        job = read_job(Path(argv[0]))
        result = run(job)
        tmp = job["result"].with_name(f".{job['result'].name}.tmp")
        tmp.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, job["result"])
    except Exception as exc:  # one line, whatever went wrong
        if os.environ.get("DPSYNTH_PEER_TRACEBACK"):
            traceback.print_exc()
        what = str(exc) if isinstance(exc, JobError) else f"{type(exc).__name__}: {exc}"
        print(f"run_peer: error: {' '.join(what.split())}", file=sys.stderr)
        return 2 if isinstance(exc, JobError) else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
