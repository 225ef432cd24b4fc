"""A page for the data holder that sets a release against the confidential data: :func:`write_report`.

``write_report(original, released, target=..., covariates=..., statement=..., diagnostics=...,
out_dir=...)`` writes ``out_dir/report.html`` and its figures (PNG files beside it, referenced
relatively; no script, no external asset). The page is CONFIDENTIAL: every figure on it is computed
from the confidential data. It shows

* the privacy statement of the release (public) and the synthesizer's confidential diagnostics;
* the marginal of the target: ECDFs (Figure 1), quantiles, mean and sd, and the ECDF distances
  (:func:`dpsynth.metrics.ecdf_distances`); for a categorical target (``levels=``) the share of
  each level (Figure 1) and the total variation distance;
* the regression of the target on the covariates with the Synthesizer's design (intercept, numeric
  covariates, indicators of every categorical level but the first; :class:`dpsynth.covariates.CovariateDesign`),
  on the log scale for a positive target, ``log(1 + y)`` for a count: OLS coefficients with 95%
  intervals from both tables (:func:`dpsynth.metrics.ols`), their overlap (Karr et al. 2006) and Figure 2;
  for a categorical target, the linear probability model of each level but the first;
* the propensity-score mean-squared error (:func:`dpsynth.metrics.pmse`; Woo et al. 2009, Snoke et al. 2018).

:meth:`dpsynth.Synthesizer.report` and ``dpsynth report`` call it with the synthesizer's statement
and diagnostics.
"""

from __future__ import annotations

import datetime as _dt
import html
import os
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .covariates import CovariateDesign, is_categorical
from .figure_style import PALETTE
from .metrics import PMSE, OLSFit, ecdf_distances, interval_overlap, ols, pmse
from .validation import DataError

__all__ = ["write_report", "check_out_dir", "BANNER", "QUANTILES", "FILES", "CATEGORICAL_FILES", "analysis_scale"]

#: The banner at the top of every report.
BANNER = ("CONFIDENTIAL: this report shows figures computed from the confidential data, for the data holder only, "
          "never for publication.")
#: Quantiles of the target shown in the marginal table.
QUANTILES = (0.01, 0.10, 0.25, 0.50, 0.75, 0.90, 0.99)
#: The files a report writes into its folder.
FILES = ("report.html", "figure-1-ecdf.png", "figure-2-coefficients.png")
#: The files the report of a categorical target writes (its Figure 1 shows the share of each level).
CATEGORICAL_FILES = ("report.html", "figure-1-shares.png", "figure-2-coefficients.png")
_ALL_FILES = tuple(dict.fromkeys(FILES + CATEGORICAL_FILES))
#: Colours: the confidential data in dark grey (as everywhere in the book), the release in vermillion.
ORIGINAL_COLOUR = PALETTE["dark grey"]
SYNTHETIC_COLOUR = PALETTE["vermillion"]
#: Pixels per inch at which a figure is shown (the style's ``figure.dpi``: a 6-inch figure is 660 px wide).
SHOWN_DPI = 110


# ------------------------------------------------------------------------------------------- checks


def check_out_dir(out_dir: str | os.PathLike, *, force: bool = False) -> Path:
    """The report's folder: it may exist; if not, its parent must (only the folder itself is created).

    A folder that holds a report already (any of :data:`FILES`) is refused unless ``force``. Nothing
    is created here.
    """
    if not isinstance(out_dir, (str, os.PathLike)):
        raise DataError(f"`out_dir` must be a folder path; got {out_dir!r}.")
    if not isinstance(force, (bool, np.bool_)):
        raise DataError(f"`force` must be True or False; got {force!r}.")
    path = Path(out_dir)
    if path.exists() and not path.is_dir():
        raise DataError(f"`out_dir` {str(path)!r} is a file, not a folder; name a folder for the report.")
    if not path.exists() and not path.parent.is_dir():
        raise DataError(f"`out_dir` {str(path)!r}: its parent folder {str(path.parent)!r} does not exist; create it "
                        f"first (only the report's own folder is created).")
    there = [f for f in _ALL_FILES if (path / f).exists()]
    if there and not force:
        raise DataError(f"`out_dir` {str(path)!r} holds a report already ({', '.join(there)}); choose another folder, "
                        f"or pass force=True (on the command line --force) to replace it.")
    return path


def _check_frames(original, released, target, covariates, levels=None) -> list[str]:
    for name, f in (("original", original), ("released", released)):
        if not isinstance(f, pd.DataFrame):
            raise DataError(f"`{name}` must be a pandas DataFrame; got {type(f).__name__}.")
        if len(f) == 0:
            raise DataError(f"`{name}` has no rows.")
    if not isinstance(target, str):
        raise DataError(f"`target` must be a column name (a string); got {target!r}.")
    for name, f in (("original", original), ("released", released)):
        if target not in f.columns:
            raise DataError(f"`target` {target!r} is not a column of `{name}`; its columns are {list(f.columns)}. "
                            f"Name the synthesised column.")
    if set(map(str, original.columns)) != set(map(str, released.columns)) or len(original.columns) != len(
            released.columns):
        only_o = [c for c in original.columns if c not in released.columns]
        only_r = [c for c in released.columns if c not in original.columns]
        raise DataError(f"`released` has columns {list(released.columns)} but `original` has {list(original.columns)} "
                        f"(only in original: {only_o}; only in released: {only_r}); pass the release of the "
                        f"synthesizer fitted on `original`, and `original` with the synthesizer's columns only.")
    if isinstance(covariates, str):
        raise DataError(f"`covariates` must be a list of column names; got the string {covariates!r} (write "
                        f"covariates=[{covariates!r}]).")
    covs = [] if covariates is None else list(covariates)
    for c in covs:
        if c not in original.columns:
            raise DataError(f"covariate {c!r} is not a column of `original`; its columns are {list(original.columns)}.")
        if c == target:
            raise DataError(f"`target` {target!r} is also listed in `covariates`; a column is one or the other.")
    if levels is not None:
        known = {str(v) for v in levels}
        for name, f in (("original", original), ("released", released)):
            s = f[target]
            if s.isna().any():
                raise DataError(f"`{name}` column {target!r} (the target) has missing values.")
            unseen = sorted({str(v) for v in s} - known)
            if unseen:
                raise DataError(f"`{name}` column {target!r} has value(s) {unseen[:10]} outside the target's levels "
                                f"{list(levels)}.")
    for name, f in (("original", original), ("released", released)):
        s = f[target]
        if levels is None and (not pd.api.types.is_numeric_dtype(s) or pd.api.types.is_bool_dtype(s)):
            raise DataError(f"`{name}` column {target!r} (the target) must be numeric; it has dtype {s.dtype} (a "
                            f"categorical target needs its levels: levels=[...]).")
    if levels is None and not np.isfinite(original[target].to_numpy(dtype=float)).all():
        raise DataError(f"`original` column {target!r} (the target) has missing or infinite values; pass the "
                        f"confidential data the synthesizer was fitted on.")
    for c in covs:
        o, r = is_categorical(original[c]), is_categorical(released[c])
        if o != r:
            raise DataError(f"covariate {c!r} is {'categorical' if o else 'numeric'} in `original` but "
                            f"{'categorical' if r else 'numeric'} in `released`; read both tables the same way.")
        if o:
            unseen = sorted({str(v) for v in released[c].dropna()} - {str(v) for v in original[c].dropna()})
            if unseen:
                raise DataError(f"`released` column {c!r} has level(s) {unseen[:10]} that `original` does not have; "
                                f"the regression has no term for them.")
    return covs


# ------------------------------------------------------------------------------------------- analysis


def analysis_scale(original: pd.Series) -> tuple[str, str]:
    """The scale of the regression and the pMSE, from the original target ``y``: ``("log1p", "log(1 + y)")``
    for a count (an integer column with no negative value), ``("log", "log y")`` for a positive target,
    else ``("identity", "y")``. Synthetic values off that scale are left out of those comparisons."""
    y = original.to_numpy(dtype=float)
    name = str(original.name)
    if pd.api.types.is_integer_dtype(original) and y.min() >= 0:
        return "log1p", f"log(1 + {name})"
    if y.min() > 0:
        return "log", f"log {name}"
    return "identity", name


def _transform(kind: str, y: np.ndarray) -> np.ndarray:
    return {"log": np.log, "log1p": np.log1p, "identity": np.asarray}[kind](np.asarray(y, dtype=float))


def _term_names(design: CovariateDesign) -> list[str]:
    names = ["intercept"]
    for c in design.columns:
        names += [f"{c}={lev}" for lev in design.levels[c][1:]] if c in design.levels else [str(c)]
    return names


@dataclass
class _Regression:
    terms: list[str]
    original: OLSFit | None
    synthetic: OLSFit | None
    overlap: np.ndarray | None
    dropped: list[str]
    problem: str | None


def _regression(y, X, ys, Xs, terms) -> _Regression:
    constant = [j for j in range(1, X.shape[1]) if np.ptp(X[:, j]) == 0 or np.ptp(Xs[:, j]) == 0]
    keep = [j for j in range(X.shape[1]) if j not in constant]
    dropped = [terms[j] for j in constant]
    kept = [terms[j] for j in keep]
    try:
        fo = ols(y, X[:, keep])
    except DataError as e:
        return _Regression(kept, None, None, None, dropped,
                           f"the regression on the original data cannot be fitted: {e}")
    try:
        fs = ols(ys, Xs[:, keep])
    except DataError as e:
        return _Regression(kept, fo, None, None, dropped, f"the regression on the synthetic data cannot be fitted: {e}")
    overlap = np.full(len(kept), np.nan)  # undefined for an interval of width 0 (a perfect fit)
    ok = (fo.upper > fo.lower) & (fs.upper > fs.lower)
    overlap[ok] = interval_overlap(fo.lower[ok], fo.upper[ok], fs.lower[ok], fs.upper[ok])
    return _Regression(kept, fo, fs, overlap, dropped, None)


# ------------------------------------------------------------------------------------------- figures


def _png_size(path: Path) -> tuple[int, int]:
    with open(path, "rb") as fh:
        head = fh.read(24)
    return struct.unpack(">II", head[16:24])


@dataclass(frozen=True)
class _Figure:
    file: str
    width: int  # CSS pixels shown
    height: int
    min_text_px: float  # smallest text of the PNG, in its own pixels


def _save(fig, out_dir: Path, name: str) -> _Figure:
    import matplotlib as mpl
    from matplotlib.text import Text

    sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    dpi = float(mpl.rcParams["savefig.dpi"])
    fig.savefig(out_dir / name, dpi=dpi)
    os.chmod(out_dir / name, 0o600)
    w, h = _png_size(out_dir / name)
    scale = SHOWN_DPI / dpi
    return _Figure(name, round(w * scale), round(h * scale), min(sizes) * dpi / 72.0)


def _ecdf_figure(y, ys, log_axis, target, out_dir) -> _Figure:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.0, 3.6))
    ax = fig.add_subplot()
    a, b = np.sort(y), np.sort(ys)
    ax.step(a, np.arange(1, a.size + 1) / a.size, where="post", color=ORIGINAL_COLOUR, lw=1.8,
            label=f"original (n = {a.size:,})")
    ax.step(b, np.arange(1, b.size + 1) / b.size, where="post", color=SYNTHETIC_COLOUR, lw=1.8, ls="--",
            label=f"synthetic (n = {b.size:,})")
    pooled = np.concatenate([a, b])
    d = np.searchsorted(a, pooled, side="right") / a.size - np.searchsorted(b, pooled, side="right") / b.size
    i = int(np.argmax(np.abs(d)))
    at = pooled[i]
    fa, fb = np.searchsorted(a, at, side="right") / a.size, np.searchsorted(b, at, side="right") / b.size
    ax.plot([at, at], [fa, fb], color="black", lw=1.2, marker="_", ms=8,
            label=f"largest gap, {abs(fa - fb):.3f}")
    if log_axis:  # ticks at 1, 2, 5 times powers of ten, written as plain numbers (0.2, not 2 x 10^-1)
        from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

        ax.set_xscale("log")
        ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.10g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(f"{target}" + (" (log axis)" if log_axis else ""))
    ax.set_ylabel("share of records ≤ value")
    ax.set_ylim(0, 1.02)
    ax.grid(True, axis="both")
    ax.legend(loc="lower right")
    return _save(fig, out_dir, FILES[1])


def _shares_figure(levels, p, q, target, out_dir) -> _Figure:
    from matplotlib.figure import Figure

    k = len(levels)
    fig = Figure(figsize=(6.0, 1.2 + 0.42 * k))
    ax = fig.add_subplot()
    pos = np.arange(k)[::-1]
    ax.barh(pos + 0.2, p, height=0.38, color=ORIGINAL_COLOUR, label="original")
    ax.barh(pos - 0.2, q, height=0.38, color=SYNTHETIC_COLOUR, hatch="//", edgecolor="white", label="synthetic")
    ax.set_yticks(pos, [str(v) for v in levels])
    ax.set_xlabel(f"share of records by level of {target}")
    ax.set_xlim(0, max(1e-9, float(max(p.max(), q.max()))) * 1.15)
    ax.grid(True, axis="x")
    ax.grid(False, axis="y")
    fig.legend(loc="outside upper center", ncols=2)
    return _save(fig, out_dir, CATEGORICAL_FILES[1])


def _categorical_regression(yc, X, ysc, Xs, terms, levels) -> _Regression:
    """Linear probability models of each level but the first, stacked into one table of terms."""
    out_terms, fo_parts, fs_parts, ov, dropped = [], [], [], [], []
    for k in range(1, len(levels)):
        r = _regression((yc == k).astype(float), X, (ysc == k).astype(float), Xs, terms)
        if r.problem is not None:
            return _Regression([], None, None, None, [], f"level {levels[k]!r}: {r.problem}")
        out_terms += [f"{levels[k]}: {term}" for term in r.terms]
        dropped += [f"{levels[k]}: {d}" for d in r.dropped]
        fo_parts.append(r.original)
        fs_parts.append(r.synthetic)
        ov.append(r.overlap)

    def stack(parts):
        return OLSFit(coef=np.concatenate([f.coef for f in parts]), se=np.concatenate([f.se for f in parts]),
                      lower=np.concatenate([f.lower for f in parts]), upper=np.concatenate([f.upper for f in parts]),
                      df=parts[0].df, sigma=float("nan"), level=parts[0].level)
    return _Regression(out_terms, stack(fo_parts), stack(fs_parts), np.concatenate(ov), dropped, None)


def _coefficient_figure(reg: _Regression, ylabel: str, out_dir) -> _Figure:
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    n = len(reg.terms)
    fig = Figure(figsize=(6.0, 0.75 + 0.62 * n))
    axes = fig.subplots(n, 1, squeeze=False)[:, 0]
    fo, fs = reg.original, reg.synthetic
    for j, ax in enumerate(axes):
        for row, f, colour, marker, label in ((1, fo, ORIGINAL_COLOUR, "o", "original"),
                                              (0, fs, SYNTHETIC_COLOUR, "s", "synthetic")):
            ax.errorbar([f.coef[j]], [row], xerr=[[f.coef[j] - f.lower[j]], [f.upper[j] - f.coef[j]]], fmt=marker,
                        color=colour, ms=5, capsize=3, lw=1.6, label=label if j == 0 else None)
        lo, hi = min(fo.lower[j], fs.lower[j]), max(fo.upper[j], fs.upper[j])
        pad = 0.08 * (hi - lo) if hi > lo else max(0.1 * abs(lo), 1e-3)  # a zero-width row still has an axis
        ax.set_xlim(lo - pad, hi + pad)
        if lo - pad < 0 < hi + pad:
            ax.axvline(0.0, color=PALETTE["dark grey"], lw=1.0, ls="--", zorder=1)
        ax.set_ylim(-0.7, 1.7)
        ax.set_yticks([])
        ax.set_ylabel(reg.terms[j], rotation=0, ha="right", va="center")
        ax.grid(True, axis="x")
        ax.grid(False, axis="y")
        ax.xaxis.set_major_locator(MaxNLocator(4))
        ax.spines["left"].set_visible(False)
    axes[-1].set_xlabel(f"coefficient of the regression of {ylabel} (each row on its own axis)")
    fig.legend(loc="outside upper center", ncols=2)
    return _save(fig, out_dir, FILES[2])


# ------------------------------------------------------------------------------------------- HTML


def _num(v) -> str:
    v = float(v)
    if not np.isfinite(v):
        return "–"
    s = f"{v:,.0f}" if 1e4 <= abs(v) < 1e15 else f"{v:.4g}"
    return s.replace("-", "−")


def _e(s) -> str:
    return html.escape(str(s))


_CSS = """
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0; background: #fff; color: #1a1a1a;
       font: 16px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
.banner { position: sticky; top: 0; z-index: 1; margin: 0; padding: 0.7rem 1.25rem; background: #8c2500;
          color: #fff; font-weight: 700; font-size: 1rem; text-align: center; max-width: none; }
main { max-width: 60rem; margin: 0 auto; padding: 0.5rem 1.25rem 3rem; }
h1 { font-size: 1.7rem; line-height: 1.25; margin: 1.2rem 0 0.4rem; }
h2 { font-size: 1.3rem; margin: 2.2rem 0 0.6rem; padding-bottom: 0.2rem; border-bottom: 1px solid #ccc; }
p, li { max-width: 46rem; }
.meta { color: #4d4d4d; font-size: 0.9rem; margin-top: 0; }
.box { border-left: 5px solid; padding: 0.6rem 1rem; margin: 0.8rem 0; background: #f6f6f6; max-width: 46rem; }
.box .label { display: block; font-weight: 700; font-size: 0.85rem; text-transform: uppercase;
              letter-spacing: 0.04em; margin-bottom: 0.2rem; }
.public { border-color: #0072b2; }
.secret { border-color: #d55e00; }
.wrap { overflow-x: auto; margin: 0.8rem 0 1.2rem; }
table { border-collapse: collapse; font-size: 0.9375rem; font-variant-numeric: tabular-nums; }
caption { caption-side: top; text-align: left; font-size: 0.9375rem; padding-bottom: 0.4rem; max-width: 46rem; }
th, td { padding: 0.25rem 0.75rem; border-bottom: 1px solid #ddd; text-align: left; vertical-align: top; }
thead th { border-bottom: 2px solid #555; }
td.n, th.n { text-align: right; white-space: nowrap; }
tr.group th { border-bottom: none; text-align: center; padding-bottom: 0; }
tr.group th.span { border-bottom: 1px solid #999; }
figure { margin: 1rem 0 1.6rem; }
figure img { display: block; max-width: 100%; height: auto; }
figcaption { font-size: 0.9375rem; max-width: 46rem; margin-top: 0.4rem; }
.note { color: #4d4d4d; font-size: 0.9rem; }
code { font-size: 0.9em; }
footer { margin-top: 2.5rem; font-size: 0.875rem; color: #4d4d4d; }
"""


def _table(caption: str, head: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[bool],
           group: str = "") -> str:
    cls = lambda j: ' class="n"' if numeric[j] else ""  # noqa: E731
    h = "".join(f"<th{cls(j)} scope=\"col\">{c}</th>" for j, c in enumerate(head))
    body = "".join("<tr>" + "".join(f"<td{cls(j)}>{v}</td>" for j, v in enumerate(r)) + "</tr>" for r in rows)
    return (f'<div class="wrap"><table><caption>{caption}</caption><thead>{group}<tr>{h}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>")


def _figure_html(f: _Figure, number: int, alt: str, caption: str) -> str:
    return (f'<figure><img src="{f.file}" width="{f.width}" height="{f.height}" alt="{_e(alt)}" '
            f'data-min-text-px="{f.min_text_px:.2f}"><figcaption><b>Figure {number}.</b> {caption}</figcaption>'
            f"</figure>")


def _decimals(*se: float) -> int | None:
    """Decimals that show a standard error to two significant digits (the precision of the row's numbers);
    None (four significant digits) when that would take more than six."""
    ok = [v for v in se if np.isfinite(v) and v > 0]
    d = int(max(0, 1 - np.floor(np.log10(min(ok))))) if ok else 4
    return d if d <= 6 else None


def _fixed(v: float, d: int | None) -> str:
    if d is None or not np.isfinite(v):
        return _num(v)
    return f"{v:,.{d}f}".replace("-", "−")


def _ci(f: OLSFit, j: int, d: int | None) -> str:
    return f"[{_fixed(f.lower[j], d)}, {_fixed(f.upper[j], d)}]"


def _pmse_html(pm: PMSE, ylabel: str) -> str:
    text = (
        f"<p>The propensity-score mean-squared error (Woo et al. 2009; Snoke et al. 2018), as synthpop and SDMetrics "
        f"report it: the two tables are stacked, a logistic regression of which table a record comes from "
        f"(synthetic = 1) on <code>{_e(ylabel)}</code> and the covariates' design (main effects, each column "
        f"standardised) gives each record a propensity p̂, and pMSE = mean (p̂ − c)² with c the share of synthetic "
        f"records. For a correct synthesizer its expected value is (k − 1)(1 − c)² c / N for k parameters and N "
        f"records, so the <b>pMSE ratio</b> is about 1; that figure counts only the randomness of drawing the "
        f"synthetic records. Two independent samples of one distribution give (k − 1) c (1 − c) / N, a ratio of "
        f"1 / (1 − c) = {_num(1 / (1 - pm.c))} here, and so does a synthesizer that draws its parameters from the "
        f"posterior when its model is right. A larger ratio means the synthetic records are easier to tell "
        f"apart.</p>")
    rows = [["pMSE", _num(pm.pmse)], ["expected for a correct synthesizer, (k − 1)(1 − c)² c / N", _num(pm.null)],
            ["<b>pMSE ratio</b>", f"<b>{_num(pm.ratio)}</b>"],
            ["ratio of two independent samples of one distribution, 1 / (1 − c)", _num(1 / (1 - pm.c))],
            ["parameters k (intercept included)", str(pm.k)], ["share of synthetic records c", f"{pm.c:.3f}"],
            ["records N", f"{pm.n_original + pm.n_synthetic:,}"]]
    if not pm.converged:
        rows.append(["logistic fit", "did not converge: the tables are (nearly) separable"])
    return text + _table("<b>Table 3.</b> Propensity-score mean-squared error of the synthetic data.",
                         ["", "value"], rows, [False, True])


def _regression_parts(reg: _Regression, ylabel: str, fig2: _Figure | None, n_orig: int, n_syn: int) -> list[str]:
    parts = []
    if reg.dropped:
        parts.append(f'<p class="note">Left out (constant in one of the tables): '
                     f"{', '.join(f'<code>{_e(d)}</code>' for d in reg.dropped)}.</p>")
    if reg.problem is not None:
        parts.append(f"<p><b>Not shown:</b> {_e(reg.problem)}</p>")
    else:
        fo, fs = reg.original, reg.synthetic
        rows = []
        for j, term in enumerate(reg.terms):
            d = _decimals(fo.se[j], fs.se[j])
            rows.append([f"<code>{_e(term)}</code>", _fixed(fo.coef[j], d), _ci(fo, j, d), _fixed(fs.coef[j], d),
                         _ci(fs, j, d), f"{reg.overlap[j]:.2f}" if np.isfinite(reg.overlap[j]) else "–"])
        group = ('<tr class="group"><th></th><th colspan="2" class="span">original</th>'
                 '<th colspan="2" class="span">synthetic</th><th></th></tr>')
        parts.append(_table(
            f"<b>Table 2.</b> Coefficients of the regression of <code>{_e(ylabel)}</code>, original and synthetic "
            f"data ({n_orig:,} and {n_syn:,} records; each row to two "
            f"significant digits of its smaller standard error).",
            ["term", "estimate", "95% interval", "estimate", "95% interval", "interval overlap"], rows,
            [False, True, True, True, True, True], group))
        parts.append(_figure_html(
            fig2, 2, f"Coefficients of the regression of {ylabel}, original and synthetic",
            "The coefficients of Table 2 with their 95% intervals: original (grey circles) and synthetic "
            "(vermillion squares), one row per term, each row on its own horizontal axis (read the values on its "
            "ticks); a dashed line marks zero where it is in range."))

    return parts


def _head_parts(title: str, target: str, covs, n_orig: int, n_released: int) -> list[str]:
    from ._version import __version__

    parts = [f'<p class="banner" role="alert">{_e(BANNER)}</p>', "<main>", f"<h1>{_e(title)}</h1>"]
    when = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    parts.append(f'<p class="meta">Written by dpsynth {_e(__version__)} on {when}. Target <code>{_e(target)}</code>; '
                 f"covariates {', '.join(f'<code>{_e(c)}</code>' for c in covs) or 'none'}; "
                 f"{n_orig:,} original and {n_released:,} synthetic records.</p>")
    return parts


def _privacy_parts(statement: str, diagnostics: str) -> list[str]:
    parts = []
    parts.append("<h2>1. Privacy</h2>")
    parts.append(f'<div class="box public"><span class="label">Privacy statement (public: it goes with the '
                 f"release)</span>{_e(statement)}</div>")
    parts.append(f'<div class="box secret"><span class="label">Diagnostics (confidential: for the data holder only)'
                 f"</span>{_e(diagnostics)}</div>")
    return parts


def _pmse_parts(pm: PMSE | None, ylabel: str) -> list[str]:
    parts = []
    parts.append("<h2>4. Can the synthetic records be told apart? (pMSE)</h2>")
    if pm is None:
        parts.append(f"<p><b>Not computed:</b> no synthetic value has a {_e(ylabel)}.</p>")
    else:
        parts.append(_pmse_html(pm, ylabel))

    parts.append(
        "<footer><p>References: Karr, A. F., Kohnen, C. N., Oganian, A., Reiter, J. P. and Sanil, A. P. (2006), A "
        "framework for evaluating the utility of data altered to protect confidentiality, <i>The American "
        "Statistician</i> 60, 224–232. Snoke, J., Raab, G. M., Nowok, B., Dibben, C. and Slavkovic, A. (2018), General "
        "and specific utility measures for synthetic data, <i>Journal of the Royal Statistical Society A</i> 181, "
        "663–688. Woo, M.-J., Reiter, J. P., Oganian, A. and Karr, A. F. (2009), Global measures of data utility for "
        "microdata masked for disclosure limitation, <i>Journal of Privacy and Confidentiality</i> 1, 111–124.</p>"
        f"<p>{_e(BANNER)}</p></footer>")
    parts.append("</main>")
    return parts


def _page(title: str, parts: list[str]) -> str:
    return (f'<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f'<meta name="robots" content="noindex, nofollow">\n<title>CONFIDENTIAL – {_e(title)}</title>\n'
            f"<style>{_CSS}</style>\n</head>\n<body>\n" + "\n".join(parts) + "\n</body>\n</html>\n")


def _write_page(out: Path, page: str) -> Path:
    path = out / FILES[0]
    tmp = out / (FILES[0] + ".tmp")
    tmp.write_text(page, encoding="utf-8")
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)
    return path


# ------------------------------------------------------------------------------------------- the report


def _combined_parts(reg: _Regression, kind: str, ylabel: str, target: str, design: CovariateDesign,
                    sets: Sequence[pd.DataFrame]) -> list[str]:
    """Section 3b: the regression combined over the m released data sets (Reiter's partially synthetic rule)."""
    from .combining import combine

    idx = [_term_names(design).index(t) for t in reg.terms]
    q, u = [], []
    for rel in sets:
        ys = _transform(kind, rel[target].to_numpy(dtype=float))
        ok = np.isfinite(ys)
        try:
            f = ols(ys[ok], design.matrix(rel.loc[ok].reset_index(drop=True))[:, idx])
        except DataError as e:
            return [f"<p><b>Combined intervals not shown:</b> a released data set's regression cannot be fitted: "
                    f"{_e(str(e))}</p>"]
        q.append(f.coef)
        u.append(f.se**2)
    c = combine(np.array(q), np.array(u), rule="partial", names=reg.terms)
    fo = reg.original
    rows, covered = [], 0
    for j, term in enumerate(reg.terms):
        d = _decimals(fo.se[j], float(c["se"].iloc[j]))
        hit = bool(c["lower"].iloc[j] <= fo.coef[j] <= c["upper"].iloc[j])
        covered += hit
        rows.append([f"<code>{_e(term)}</code>", _fixed(fo.coef[j], d), _ci(fo, j, d),
                     _fixed(float(c["estimate"].iloc[j]), d),
                     f"[{_fixed(float(c['lower'].iloc[j]), d)}, {_fixed(float(c['upper'].iloc[j]), d)}]",
                     "yes" if hit else "no"])
    m = len(sets)
    text = (f"<h2>3b. Intervals combined over the {m} released data sets</h2>"
            f"<p>An analyst with several released data sets fits the regression to each and combines them with the "
            f"rule for partially synthetic data (Reiter 2003: the mean estimate, variance ū + b/m with b the "
            f"between-set variance, a t reference): an interval that accounts for the synthesis, unlike one data "
            f"set's interval used as if it were the confidential data. Each set must come from its own posterior "
            f"draw. {covered} of {len(reg.terms)} combined intervals cover the confidential estimate.</p>")
    group = ('<tr class="group"><th></th><th colspan="2" class="span">original</th>'
             f'<th colspan="2" class="span">combined over {m} synthetic sets</th><th></th></tr>')
    return [text, _table(f"<b>Table 2b.</b> The regression of <code>{_e(ylabel)}</code>: original against the "
                         f"combined estimate and 95% interval of {m} released data sets.",
                         ["term", "estimate", "95% interval", "estimate", "95% interval", "covers the original"],
                         rows, [False, True, True, True, True, False], group)]


def write_report(original: pd.DataFrame, released: pd.DataFrame, *, target: str,
                 covariates: Sequence[str] | None = None, statement: str, diagnostics: str,
                 out_dir: str | os.PathLike, title: str | None = None, force: bool = False,
                 levels: Sequence | None = None, implicates: Sequence[pd.DataFrame] = ()) -> Path:
    """Write ``out_dir/report.html`` and its PNG figures: a release set against the confidential data.

    Parameters
    ----------
    original : pandas.DataFrame
        The confidential data (the target and the covariates).
    released : pandas.DataFrame
        A synthetic data set released from it (the same columns). Non-finite synthetic values are
        left out of the comparison, and the page says how many.
    target : str
        The synthesised column.
    covariates : sequence of str, optional
        The public covariates of the synthesizer (the regression's design).
    statement : str
        The public privacy statement (:meth:`dpsynth.release.statement.SynthesizerPrivacy.statement`).
    diagnostics : str
        The confidential figures (:meth:`dpsynth.release.statement.SynthesizerPrivacy.diagnostics`).
    out_dir : path-like
        The report's folder: created (owner-only) if missing when its parent exists; one that holds
        a report already is refused unless ``force``. The files are written owner-readable only
        (0o600), like a saved synthesizer: they show figures computed from the confidential data.
    title : str, optional
        The page's title (default: ``"Release report: <target>"``).
    force : bool
        Replace an existing report in ``out_dir``.
    levels : sequence, optional
        The public levels of a categorical target: the page then shows the share of each level
        and linear probability models of each level but the first.
    implicates : sequence of pandas.DataFrame
        Further released data sets (each from its own draw): with them the page adds the regression
        combined over all ``m`` sets with its interval (:mod:`dpsynth.combining`, numeric targets).

    Returns
    -------
    pathlib.Path
        The HTML file written.
    """
    import matplotlib as mpl

    from .figure_style import use_style

    out = check_out_dir(out_dir, force=force)
    covs = _check_frames(original, released, target, covariates, levels)
    for name, v in (("statement", statement), ("diagnostics", diagnostics)):
        if not isinstance(v, str) or not v.strip():
            raise DataError(f"`{name}` must be the synthesizer's {name} (a non-empty string); got {v!r}.")
    if title is not None and not isinstance(title, str):
        raise DataError(f"`title` must be a string; got {title!r}.")
    title = title or f"Release report: {target}"
    if levels is not None:
        return _write_categorical(original, released, target=target, covs=covs, statement=statement,
                                  diagnostics=diagnostics, out=out, title=title, levels=list(levels))

    # ---- the numbers
    ys_all = released[target].to_numpy(dtype=float)
    finite = np.isfinite(ys_all)
    if not finite.any():
        raise DataError(f"`released` column {target!r} has no finite value; there is nothing to compare.")
    rel = released.loc[finite].reset_index(drop=True)
    orig = original.reset_index(drop=True)
    y, ys = orig[target].to_numpy(dtype=float), rel[target].to_numpy(dtype=float)
    kind, ylabel = analysis_scale(orig[target])
    design = CovariateDesign.from_frame(orig, covs)
    X = design.matrix(orig)
    terms = _term_names(design)
    ty = _transform(kind, y)
    with np.errstate(divide="ignore", invalid="ignore"):
        tys = _transform(kind, ys)
    on_scale = np.isfinite(tys)  # e.g. a synthetic wage of 0 has no log
    tys, Xs = tys[on_scale], design.matrix(rel.loc[on_scale].reset_index(drop=True))
    dist = ecdf_distances(y, ys)
    if on_scale.any():
        reg = _regression(ty, X, tys, Xs, terms)
        pm = pmse(np.column_stack([ty, X[:, 1:]]), np.column_stack([tys, Xs[:, 1:]]))
    else:
        reg = _Regression(terms, None, None, None, [], f"no synthetic value has a {ylabel}.")
        pm = None
    # a log axis when every value is within three decades of the original's range (else the axis would be unreadable)
    log_axis = kind == "log" and ys.min() >= y.min() / 1e3 and ys.max() <= y.max() * 1e3

    # ---- the figures (the package's style, restored afterwards)
    with mpl.rc_context():
        use_style()
        out.mkdir(mode=0o700, exist_ok=True)
        fig1 = _ecdf_figure(y, ys, log_axis, target, out)
        fig2 = _coefficient_figure(reg, ylabel, out) if reg.problem is None else None
    for stale in (CATEGORICAL_FILES[1],) + (() if fig2 is not None else (FILES[2],)):
        if (out / stale).exists():
            (out / stale).unlink()  # a figure of an earlier report (force=True) must not be shown as this one's

    # ---- the page
    t = _e(target)
    parts = _head_parts(title, target, covs, len(orig), len(released))
    if not finite.all():
        parts.append(f'<p class="note"><b>{int((~finite).sum()):,} synthetic value(s) are not finite</b> (a release '
                     f"with unusable values): they are left out of every comparison below.</p>")
    if not on_scale.all():
        parts.append(f'<p class="note"><b>{int((~on_scale).sum()):,} synthetic value(s) have no '
                     f"{_e(ylabel)}</b> (they are {'≤ 0' if kind == 'log' else 'below 0'}): they are left out of "
                     f"the regression and the pMSE (Sections 3 and 4).</p>")

    parts += _privacy_parts(statement, diagnostics)

    parts.append(f"<h2>2. The distribution of <code>{t}</code></h2>")
    parts.append(_figure_html(
        fig1, 1, f"ECDFs of {target}, original and synthetic",
        f"Empirical distribution functions of <code>{t}</code>: the original (confidential) data, solid grey, and "
        f"the synthetic (released) data, dashed vermillion" + (" (logarithmic axis)" if log_axis else "") +
        ". The black bar marks the largest vertical gap between them."))
    rows = []
    stats = [(f"{round(q * 100)}% quantile", np.quantile(y, q), np.quantile(ys, q)) for q in QUANTILES]
    sd = [v.std(ddof=1) if v.size > 1 else np.nan for v in (y, ys)]
    stats += [("mean", y.mean(), ys.mean()), ("standard deviation", *sd)]
    for name, a, b in stats:
        rows.append([name, _num(a), _num(b), _num(b - a)])
    parts.append(_table(f"<b>Table 1.</b> Quantiles, mean and standard deviation of <code>{t}</code>.",
                        ["statistic", "original", "synthetic", "synthetic − original"], rows,
                        [False, True, True, True]))
    parts.append(f"<p>ECDF distances over the pooled sample: largest gap max |F − F*| = <b>{_num(dist.max_ecdf)}</b>; "
                 f"mean squared gap mean (F − F*)² = <b>{_num(dist.avg_ecdf)}</b> (both 0 for identical "
                 f"distributions, at most 1).</p>")

    parts.append(f"<h2>3. The regression of {_e(ylabel)} on the covariates</h2>")
    parts.append(f"<p>Ordinary least squares of <code>{_e(ylabel)}</code> on the synthesizer's design: an intercept, "
                 f"the numeric covariates as they are and an indicator of every level of a categorical covariate but "
                 f"the first (the reference level). Intervals are 95% t intervals from the OLS standard errors; the "
                 f"overlap of the two intervals is 1 when they coincide and 0 when they are disjoint "
                 f"(Karr et al. 2006).</p>")
    parts += _regression_parts(reg, ylabel, fig2, len(orig), int(on_scale.sum()))
    if implicates and reg.problem is None:
        for k, other in enumerate(implicates):
            _check_frames(original, other, target, covariates, levels)
            if not isinstance(other, pd.DataFrame):  # pragma: no cover - _check_frames raises first
                raise DataError(f"`implicates`[{k}] must be a DataFrame.")
        parts += _combined_parts(reg, kind, ylabel, target, design, [rel, *implicates])
    parts += _pmse_parts(pm, ylabel)
    return _write_page(out, _page(title, parts))


def _write_categorical(original: pd.DataFrame, released: pd.DataFrame, *, target: str, covs: list[str],
                       statement: str, diagnostics: str, out: Path, title: str, levels: list) -> Path:
    """The report of a categorical target: level shares, linear probability models, pMSE."""
    import matplotlib as mpl

    from .figure_style import use_style

    code = {str(v): i for i, v in enumerate(levels)}
    orig, rel = original.reset_index(drop=True), released.reset_index(drop=True)
    yc = orig[target].astype(str).map(code).to_numpy(dtype=int)
    ysc = rel[target].astype(str).map(code).to_numpy(dtype=int)
    k = len(levels)
    p = np.bincount(yc, minlength=k) / yc.size
    q = np.bincount(ysc, minlength=k) / ysc.size
    tvd = 0.5 * float(np.abs(p - q).sum())
    design = CovariateDesign.from_frame(orig, covs)
    X, Xs = design.matrix(orig), design.matrix(rel)
    reg = _categorical_regression(yc, X, ysc, Xs, _term_names(design), levels)
    onehot = lambda c: (c[:, None] == np.arange(1, k)[None, :]).astype(float)  # noqa: E731
    pm = pmse(np.column_stack([onehot(yc), X[:, 1:]]), np.column_stack([onehot(ysc), Xs[:, 1:]]))
    with mpl.rc_context():
        use_style()
        out.mkdir(mode=0o700, exist_ok=True)
        fig1 = _shares_figure(levels, p, q, target, out)
        fig2 = _coefficient_figure(reg, f"1{{{target} = level}}", out) if reg.problem is None else None
    for stale in (FILES[1],) + (() if fig2 is not None else (FILES[2],)):
        if (out / stale).exists():
            (out / stale).unlink()  # a figure of an earlier report (force=True) must not be shown as this one's

    t = _e(target)
    parts = _head_parts(title, target, covs, len(orig), len(rel))
    parts += _privacy_parts(statement, diagnostics)
    parts.append(f"<h2>2. The distribution of <code>{t}</code></h2>")
    parts.append(_figure_html(
        fig1, 1, f"Share of each level of {target}, original and synthetic",
        f"Share of records at each level of <code>{t}</code>: the original (confidential) data, solid grey, and the "
        f"synthetic (released) data, hatched vermillion."))
    rows = [[f"<code>{_e(lev)}</code>", f"{int(round(p[i] * yc.size)):,}", f"{p[i]:.3f}", f"{q[i]:.3f}",
             _num(q[i] - p[i])] for i, lev in enumerate(levels)]
    parts.append(_table(f"<b>Table 1.</b> Records and shares by level of <code>{t}</code>.",
                        ["level", "original records", "original share", "synthetic share", "synthetic − original"],
                        rows, [False, True, True, True, True]))
    parts.append(f"<p>Total variation distance between the two distributions of levels, ½ Σ |p − p*| = "
                 f"<b>{_num(tvd)}</b> (0 for identical shares, at most 1).</p>")
    parts.append(f"<h2>3. The regression of each level of <code>{t}</code> on the covariates</h2>")
    parts.append(f"<p>Linear probability models: for each level but the first (<code>{_e(levels[0])}</code>, the "
                 f"reference), ordinary least squares of the indicator 1{{<code>{t}</code> = level}} on the "
                 f"synthesizer's design (an intercept, the numeric covariates as they are and an indicator of every "
                 f"level of a categorical covariate but the first). A coefficient is the change in the level's "
                 f"probability per unit of the covariate. Intervals are 95% t intervals from the OLS standard errors; "
                 f"the overlap of the two intervals is 1 when they coincide and 0 when they are disjoint (Karr et al. "
                 f"2006).</p>")
    parts += _regression_parts(reg, f"1{{{target} = level}}", fig2, len(orig), len(rel))
    parts += _pmse_parts(pm, f"the level indicators of {target}")
    return _write_page(out, _page(title, parts))
