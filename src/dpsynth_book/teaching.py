"""The "Teaching with this book" page and the tutorial's teaching pictures.

How long each chapter takes at quick scale, from its measurement, and each step of the 90-minute
route (:func:`route_times`); the tutorial's reading of epsilon as an odds bound (:func:`odds_table`)
and its picture of the clamp (:func:`clamp_demo`, :func:`clamp_figure`); how far one release's ECDF
distance varies from draw to draw (:func:`ecdf_spread`) and what the page may say about the cost of
censoring from it (:func:`censoring_cost`); where the window lies against the data's record terms
(:func:`window_reach`); and the tutorial's files (:func:`class_files`: a temporary dpsynth home,
removed when the kernel ends, and a folder the lab's file browser can open for the release and report).

:func:`quick_scale_times` reads the record that ``benchmarks/bench_quick_scale.py`` writes
(``benchmarks/results/bench_quick_scale.json``: each chapter notebook executed by papermill at quick
scale with its studies computed) and returns one row per chapter with the seconds, and the machine,
date and load of the measurement, so that the page's times are measured, never typed.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .paths import project_root

__all__ = ["QUICK_SCALE_RECORD", "ROUTE_RECORD", "ENV_RECORD", "quick_scale_record", "quick_scale_times", "odds_table",
           "clamp_demo", "clamp_figure", "route_times", "env_build_times", "ecdf_spread", "censoring_cost",
           "window_reach", "ClassFiles", "class_files", "remove_class_files"]

#: The benchmark record, relative to the repository root.
QUICK_SCALE_RECORD = Path("benchmarks") / "results" / "bench_quick_scale.json"


def quick_scale_record(path: str | os.PathLike | None = None) -> dict:
    """The benchmark record (``path`` or :data:`QUICK_SCALE_RECORD` in the repository).

    Raises
    ------
    FileNotFoundError
        If there is none, with the command that makes it.
    """
    p = Path(path) if path is not None else project_root() / QUICK_SCALE_RECORD
    if not p.exists():
        raise FileNotFoundError(f"no quick-scale record {p}: run `benchmarks/bench_quick_scale.py` (or `make bench`).")
    return json.loads(p.read_text(encoding="utf-8"))


def quick_scale_times(path: str | os.PathLike | None = None) -> tuple[pd.DataFrame, str]:
    """Per chapter, its quick-scale run time, and a sentence saying where and when it was measured.

    Returns
    -------
    (pandas.DataFrame, str)
        Index ``chapter`` (the book's order), columns ``seconds`` and ``minutes``; and e.g.
        "Measured on 25 November 2026 on Intel(R) Xeon(R) Processor, 2 cores (loaded: load average
        2.1 before the run)".
    """
    rec = quick_scale_record(path)
    rows = [(f["group"], float(f["value"])) for f in rec.get("figures", []) if f.get("group")]
    if not rows:
        raise ValueError(f"the quick-scale record has no chapter times: {sorted(rec)}")
    df = pd.DataFrame(rows, columns=["chapter", "seconds"]).set_index("chapter")
    df["minutes"] = df["seconds"] / 60.0
    m = rec.get("machine", {})
    when = str(rec.get("started", ""))[:10]
    try:
        when = pd.Timestamp(when).strftime("%-d %B %Y")
    except ValueError:
        pass
    load = rec.get("load_average_before") or [float("nan")]
    state = "idle" if rec.get("idle") else "loaded"
    where = f"{m.get('cpu', 'an unknown machine')}, {m.get('cores', '?')} cores"
    return df, f"Measured on {when} on {where} ({state}: load average {float(load[0]):.1f} before the run)"


# --------------------------------------------------------------------------------------------------
# The tutorial's pictures of the guarantee: epsilon as an odds bound, and the clamp
# --------------------------------------------------------------------------------------------------


def odds_table(eps_values=(0.5, 1.0, 2.0, 6.0), prior: float = 0.5) -> pd.DataFrame:
    """What ``eps`` allows an observer to learn about one person, as odds and as a probability.

    ``eps``-DP bounds how much one release can move anyone's odds that a given record is in the data
    (or, under replacement, that it has a given value): the posterior odds are at most ``e^eps``
    times the prior odds. With prior probability ``prior`` the posterior probability is at most
    ``e^eps p / (1 - p + e^eps p)``.

    Parameters
    ----------
    eps_values : sequence of float
        Positive epsilons.
    prior : float
        The observer's prior probability, in (0, 1).

    Returns
    -------
    pandas.DataFrame
        Index ``ε``; columns ``odds multiplied by at most`` (``e^eps``) and
        ``from <prior> to at most`` (the posterior probability).
    """
    eps = np.asarray(list(eps_values), dtype=float)
    if eps.size == 0 or not np.all(np.isfinite(eps)) or np.any(eps <= 0):
        raise ValueError(f"`eps_values` must be positive numbers; got {list(eps_values)!r}.")
    if not 0 < float(prior) < 1:
        raise ValueError(f"`prior` must be a probability strictly between 0 and 1; got {prior!r}.")
    factor = np.exp(eps)
    post = factor * prior / (1 - prior + factor * prior)
    return pd.DataFrame({"odds multiplied by at most": factor, f"from {prior:.0%} to at most": post},
                        index=pd.Index(eps, name="ε"))


def clamp_demo(x, eps: float, shape: float, *, prior_scale: float = 10.0, points: int = 400) -> dict:
    """One record's term and the posterior's log ratio under its removal, with and without the clamp.

    The model is the tutorial's Gamma synthesizer with its shape fixed at ``shape``, so that the
    posterior of the rate ``rho`` (prior half-normal with scale ``prior_scale``) can be computed
    exactly on a grid. The record removed is the one whose log density varies most over the grid
    (the largest value). ``M = eps / 2``: with every term clamped to ``[-M, M]`` the log ratio of the
    two posteriors stays within ``[-eps, eps]`` at every ``rho`` (the window argument); without the
    clamp it is not bounded.

    Parameters
    ----------
    x : array-like
        Positive values (the confidential data).
    eps : float
        The window's width ``2M``, with one record removed.
    shape : float
        The Gamma shape, held fixed.

    Returns
    -------
    dict
        ``rho`` (the grid), ``term`` and ``typical`` (the log density of the removed record and of
        the median record over the grid), ``M``, ``eps``, ``removed`` (its value), ``log_ratio`` and
        ``log_ratio_clamped`` (log posterior with all records minus log posterior without the removed
        one, each normalised on the grid), ``n``.
    """
    from scipy import stats

    x = np.asarray(x, dtype=float)
    if x.ndim != 1 or x.size < 3 or not np.all(np.isfinite(x)) or np.any(x <= 0):
        raise ValueError("`x` must be a 1-d array of at least 3 positive, finite values.")
    if not (np.isfinite(eps) and eps > 0):
        raise ValueError(f"`eps` must be a positive number; got {eps!r}.")
    if not (np.isfinite(shape) and shape > 0):
        raise ValueError(f"`shape` must be a positive number; got {shape!r}.")
    M = eps / 2.0
    rate_hat = shape / x.mean()
    rho = np.linspace(rate_hat / 5.0, rate_hat * 3.0, int(points))
    logpdf = stats.gamma.logpdf(x[None, :], a=shape, scale=1.0 / rho[:, None])  # grid x records
    j = int(np.argmax(np.ptp(logpdf, axis=0)))
    prior = stats.halfnorm.logpdf(rho, scale=prior_scale)  # an evenly spaced grid

    def log_post(terms):
        lp = prior + terms.sum(axis=1)
        return lp - np.logaddexp.reduce(lp)

    keep = np.ones(x.size, dtype=bool)
    keep[j] = False
    clamped = np.clip(logpdf, -M, M)
    typical = int(np.argsort(x)[x.size // 2])
    return {
        "rho": rho, "term": logpdf[:, j], "typical": logpdf[:, typical], "M": M, "eps": float(eps),
        "removed": float(x[j]), "n": int(x.size),
        "log_ratio": log_post(logpdf) - log_post(logpdf[:, keep]),
        "log_ratio_clamped": log_post(clamped) - log_post(clamped[:, keep]),
    }


def clamp_figure(demo: dict, axes=None):
    """Two panels of :func:`clamp_demo`: (a) one record's term, clamped; (b) the log ratio under its removal.

    Returns
    -------
    numpy.ndarray of Axes
    """
    import matplotlib.pyplot as plt

    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(6.6, 3.0), constrained_layout=True)
    a, b = axes
    rho, M, eps = demo["rho"], demo["M"], demo["eps"]
    a.axhspan(-M, M, color="0.9", zorder=0, label=f"window [−M, M], M = {M:g}")
    a.plot(rho, demo["term"], color="#D55E00", lw=1, ls="--", label=f"record x = {demo['removed']:.3g}")
    a.plot(rho, np.clip(demo["term"], -M, M), color="#D55E00", lw=2, label="the same, clamped")
    a.plot(rho, demo["typical"], color="#0072B2", lw=1.5, label="a typical record")
    low = min(-2.5 * M, float(np.min(demo["typical"])) - 1)
    a.set_ylim(low, max(1.5 * M, float(np.max(demo["term"])) + 0.5))
    a.set_xlabel("rate ρ")
    a.set_ylabel("log density of one record")
    a.set_title("(a) one record's term")
    a.legend(loc="lower left", fontsize=7.5)
    b.axhspan(-eps, eps, color="0.9", zorder=0, label=f"[−ε, ε], ε = 2M = {eps:g}")
    b.plot(rho, demo["log_ratio"], color="#D55E00", lw=1, ls="--", label="not clamped")
    b.plot(rho, demo["log_ratio_clamped"], color="#D55E00", lw=2, label="clamped")
    span = max(2 * eps, float(np.nanmax(np.abs(demo["log_ratio_clamped"]))) * 1.2)
    b.set_ylim(-span, span)
    b.set_xlabel("rate ρ")
    b.set_ylabel("log p(ρ | x) − log p(ρ | x′)")
    b.set_title("(b) removing that record")
    b.legend(loc="lower left", fontsize=7.5)
    return axes


# --------------------------------------------------------------------------------------------------
# The tutorial's reading of its table: one draw is noisy, the window against the record terms
# --------------------------------------------------------------------------------------------------


def ecdf_spread(results, x, seed, releases: int = 20, quantiles=(0.1, 0.9)) -> pd.DataFrame:
    """How far one release's max-ECDF distance varies from posterior draw to posterior draw.

    A release is one synthetic data set from *one* posterior draw, so its distance to the data is one
    draw's luck as much as the mechanism's: each mechanism releases ``releases`` data sets, each from a
    draw of its own (streams ``stream(seed, name, "synthetic", k)``), and the table gives their median and
    spread. Releasing them costs nothing here: they are only measured, never published.

    Parameters
    ----------
    results : sequence of MechanismResult
        The mechanisms' results (:mod:`dpsynth.mechanisms`).
    x : array-like
        The confidential data they were fitted on.
    seed : int
        The page's master seed.
    releases : int
        Releases per mechanism (at least 2).
    quantiles : (float, float)
        The spread's lower and upper quantiles.

    Returns
    -------
    pandas.DataFrame
        Index ``synthesizer`` (each result's ``label``), columns ``median``, ``low`` and ``high`` of the max-ECDF
        distance over the releases.
    """
    from dpsynth.metrics import ecdf_distances
    from dpsynth.seeds import stream
    from dpsynth.synthetic_data import release

    releases = int(releases)
    if releases < 2:
        raise ValueError(f"`releases` must be at least 2; got {releases}.")
    lo, hi = (float(q) for q in quantiles)
    if not 0 <= lo < hi <= 1:
        raise ValueError(f"`quantiles` must be two increasing probabilities; got {quantiles!r}.")
    rows = {}
    for r in results:
        d = np.array([ecdf_distances(x, release(r, stream(seed, r.name, "synthetic", k)).values).max_ecdf
                      for k in range(releases)])
        rows[r.label] = {"median": float(np.median(d)), "low": float(np.quantile(d, lo)),
                         "high": float(np.quantile(d, hi))}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("synthesizer")


def _against(a: pd.Series, b: pd.Series) -> str:
    """``"further"``, ``"closer"`` or ``"overlap"``: ``a``'s spread of distances against ``b``'s."""
    if a["low"] > b["high"]:
        return "further"
    if a["high"] < b["low"]:
        return "closer"
    return "overlap"


def censoring_cost(spread: pd.DataFrame, counts, *, censored: str, unweighted: str, public: str) -> dict:
    """What the tutorial may say about the cost of censoring, from :func:`ecdf_spread` and the censoring counts.

    Censor_uw is set against the unweighted posterior, and Censor_w-pub against Censor_uw: a mechanism is
    "further" from (or "closer" to) the data than another only when its spread of max-ECDF distances over
    draws lies wholly above (below) the other's; otherwise one release cannot tell them apart.

    Parameters
    ----------
    spread : pandas.DataFrame
        :func:`ecdf_spread`'s table.
    counts : mapping
        Label -> records censored at one posterior draw or more.
    censored, unweighted, public : str
        The labels of Censor_uw, of the unweighted posterior and of Censor_w-pub.

    Returns
    -------
    dict
        ``uw-vs-u`` and ``pub-vs-uw`` (``"further"``, ``"closer"`` or ``"overlap"``), and ``verdict``: the
        sentences the page glues (MyST).
    """
    uw, u, pub = spread.loc[censored], spread.loc[unweighted], spread.loc[public]
    first, second = _against(uw, u), _against(pub, uw)
    said = {
        "further": "Censor_uw's synthetic data are further from the confidential data than the unweighted "
                   "posterior's at nearly every draw: here the clamp costs utility.",
        "closer": "Censor_uw's synthetic data are closer to the confidential data than the unweighted posterior's "
                  "at nearly every draw: on this data set the clamp did not cost utility.",
        "overlap": "Censor_uw's and the unweighted posterior's ranges over draws overlap: at this ε the clamp costs "
                   "less than one draw's luck, and a single release can rank them either way.",
    }[first]
    n_pub, n_uw = int(counts[public]), int(counts[censored])
    fewer = ("censors fewer records than" if n_pub < n_uw else "censors as many records as" if n_pub == n_uw
             else "censors more records than")
    then = {
        "further": "and its releases are further from the data than Censor_uw's at nearly every draw",
        "closer": "and its releases are closer to the data than Censor_uw's at nearly every draw",
        "overlap": "and its releases are within one draw's luck of Censor_uw's",
    }[second]
    return {"uw-vs-u": first, "pub-vs-uw": second,
            "verdict": f"{said} Censor_w-pub, whose weights shrink every term towards zero before the clamp, "
                       f"{fewer} Censor_uw ({n_pub} against {n_uw}) {then}."}


def window_reach(fit) -> dict:
    """Where a window ``[-eps/2, eps/2]`` lies against the record terms of an (unweighted) fit.

    Parameters
    ----------
    fit : dpsynth.fitting.Fit
        A fit with its compiled model (every mechanism's ``result.fit``).

    Returns
    -------
    dict
        ``top``: the largest record term ``f_theta_s(x_i)`` over every draw and record (a log density can be
        positive); ``eps_all``: below this eps the window lies above every term at every draw, so that
        every record is censored wherever the fit's draws are (0 when ``top`` is not negative).
    """
    ll = np.asarray(fit.loglik(), dtype=float)
    top = float(np.max(ll[np.isfinite(ll)]))
    return {"top": top, "eps_all": max(0.0, -2.0 * top)}


# --------------------------------------------------------------------------------------------------
# The tutorial's files: a temporary home (its secret key, its ledgers), and the release and report
# --------------------------------------------------------------------------------------------------

#: Marks a folder that :func:`class_files` made (it empties only such a folder).
FILES_MARK = ".dpsynth-class-files"
_MADE: list[Path] = []


@dataclass(frozen=True)
class ClassFiles:
    """The folders of a page that releases: ``work`` for its files, ``home`` for dpsynth's (``$DPSYNTH_HOME``).

    Attributes
    ----------
    work : pathlib.Path
        Where the page writes its release and report: in the lab, ``<name>-files`` relative to the notebook's
        folder (so a printed path is the one the lab's file browser shows, and its server serves); elsewhere
        an absolute temporary folder.
    home : pathlib.Path
        A new, temporary dpsynth home (a new secret key, empty ledgers): ``$DPSYNTH_HOME`` of the kernel.
    in_lab : bool
        Whether ``work`` is the lab's folder (kept after the kernel ends) or temporary (removed with ``home``).
    """

    work: Path
    home: Path
    in_lab: bool

    def shown(self, path: str | os.PathLike) -> str:
        """``path`` as a page prints it: in the lab, as the file browser shows it (relative to the notebook's
        folder); elsewhere its name and the temporary folder it sits in, never the folder's path."""
        path = Path(path)
        if self.in_lab:
            return str(path)
        try:
            return f"{path.relative_to(self.work)} (in a temporary folder, removed when the kernel ends)"
        except ValueError:
            return f"{path.name} (in a temporary folder, removed when the kernel ends)"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_stale(prefix: str) -> None:
    """Remove this user's temporary folders ``<prefix><pid>-*`` whose kernel process is gone (a killed kernel)."""
    tmp = Path(tempfile.gettempdir())
    pattern = re.compile(re.escape(prefix) + r"(\d+)-")
    for p in tmp.glob(prefix + "*"):
        m = pattern.match(p.name)
        try:
            mine = p.is_dir() and p.stat().st_uid == os.getuid()
        except (OSError, AttributeError):
            mine = False
        if m and mine and int(m.group(1)) != os.getpid() and not _pid_alive(int(m.group(1))):
            shutil.rmtree(p, ignore_errors=True)


def remove_class_files() -> None:
    """Remove the temporary folders :func:`class_files` made in this process (the kernel calls it when it ends)."""
    while _MADE:
        shutil.rmtree(_MADE.pop(), ignore_errors=True)


atexit.register(remove_class_files)


def class_files(name: str, *, in_lab: bool | None = None) -> ClassFiles:
    """A new temporary dpsynth home for a page's release, and the folder for its files; the last run's are removed.

    The home holds a secret key and the release ledgers, so it must not outlive the class: it is a
    temporary folder ``dpsynth-<name>-home-<pid>-*``, removed when the kernel ends (and by the next run of any
    kernel if that kernel was killed), and a new one is made on every call, so a re-run starts with empty
    ledgers. Its key is made here, quietly (a page that makes a new home on purpose needs no
    :class:`dpsynth.release.home.NewHomeWarning`). In the lab (``DPSYNTH_LAB=1``) the release and the report go
    to ``<name>-files/`` in the notebook's folder, emptied on each run, where the file browser opens them;
    elsewhere (papermill, the book) to a temporary folder removed with the home.

    Parameters
    ----------
    name : str
        The page, lower-case letters, digits and dashes (``"tutorial"``).
    in_lab : bool, optional
        Default: :func:`dpsynth_book.book.lab_mode`.

    Returns
    -------
    ClassFiles
    """
    from dpsynth.release import home as dp_home

    from .book import lab_mode

    if not isinstance(name, str) or not re.fullmatch(r"[a-z][a-z0-9-]*", name):
        raise ValueError(f"`name` must be lower-case letters, digits and dashes; got {name!r}.")
    in_lab = lab_mode() if in_lab is None else bool(in_lab)
    remove_class_files()
    prefix = f"dpsynth-{name}-"
    _remove_stale(prefix + "home-")
    _remove_stale(prefix + "files-")
    home = Path(tempfile.mkdtemp(prefix=f"{prefix}home-{os.getpid()}-"))
    _MADE.append(home)
    os.environ[dp_home.HOME_ENV] = str(home)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dp_home.NewHomeWarning)
        dp_home.secret_key()
    if in_lab:
        work = Path(f"{name}-files")
        if work.exists():
            if not (work / FILES_MARK).exists():
                raise FileExistsError(f"{work} exists and was not made by this page: rename it, then run again.")
            shutil.rmtree(work)
        work.mkdir()
        (work / FILES_MARK).write_text("made by dpsynth_book.teaching.class_files; emptied on each run\n",
                                       encoding="utf-8")
    else:
        work = Path(tempfile.mkdtemp(prefix=f"{prefix}files-{os.getpid()}-"))
        _MADE.append(work)
    return ClassFiles(work=work, home=home, in_lab=in_lab)


# --------------------------------------------------------------------------------------------------
# The 90-minute route: each step's compute time, measured by lab/measure_route.py
# --------------------------------------------------------------------------------------------------

#: The route's record, relative to the repository root (written by ``lab/measure_route.py``).
ROUTE_RECORD = Path("lab") / "route-times.json"


def _when(rec: dict) -> str:
    when = str(rec.get("started", ""))[:10]
    try:
        return pd.Timestamp(when).strftime("%-d %B %Y")
    except ValueError:
        return when


def _load(rec: dict) -> str:
    """The machine's load as a record gives it: before the run, and the mean and largest during it."""
    before = float((rec.get("load_average_before") or [float("nan")])[0])
    during = rec.get("load_during") or {}
    if during.get("samples"):
        return (f"load average {before:.1f} before the run, {float(during['mean']):.1f} on average during it "
                f"(at most {float(during['max']):.1f})")
    return f"load average {before:.1f} before the run"


def route_times(path: str | os.PathLike | None = None) -> tuple[pd.DataFrame, str]:
    """Per section of the tutorial, its time in the lab run cell by cell, and where, when and under what load.

    ``lab/measure_route.py`` runs the tutorial in ``make lab`` as a class does: headless Chromium presses
    Shift+Enter once per cell and each cell is timed from the key press until it has run; first in a new
    kernel with an empty home ("Start" is the kernel's start), then the re-run of exercise 1 (from "Your
    settings" to the end). The record keeps every measurement of the same tutorial; a machine shared with
    other work gives other times under another load, so the table is the median of each section over the
    measurements and ``attrs["totals"]`` has each measurement's totals.

    Returns
    -------
    (pandas.DataFrame, str)
        Index ``section`` (the tutorial's order), columns ``first run (s)`` and ``re-run (s)`` (NaN for the
        sections a re-run does not reach); ``attrs["totals"]``: ``{"first": [...], "re-run": [...]}``; and a
        sentence with the dates, the machine, the number of measurements and the load.

    Raises
    ------
    FileNotFoundError
        If there is no record, with the command that writes it.
    """
    p = Path(path) if path is not None else project_root() / ROUTE_RECORD
    if not p.exists():
        raise FileNotFoundError(f"no route record {p}: run `.venv/bin/python lab/measure_route.py`.")
    rec = json.loads(p.read_text(encoding="utf-8"))
    measurements = rec.get("measurements", [])
    firsts, agains, totals = [], [], {"first": [], "re-run": []}
    for m in measurements:
        runs = {r.get("run"): r for r in m.get("runs", [])}
        if "first" not in runs or not runs["first"].get("sections"):
            continue
        firsts.append(pd.Series({s["section"]: float(s["seconds"]) for s in runs["first"]["sections"]}))
        again = runs.get("exercise", {}).get("sections", [])
        agains.append(pd.Series({s["section"]: float(s["seconds"]) for s in again}, dtype=float))
        totals["first"].append(float(firsts[-1].sum()))
        totals["re-run"].append(float(agains[-1].sum()))
    if not firsts:
        raise ValueError(f"the route record {p} has no first run: {sorted(rec)}")
    order = list(firsts[0].index)
    first = pd.concat(firsts, axis=1).reindex(order).median(axis=1).rename("first run (s)")
    again = pd.concat(agains, axis=1).reindex(order).median(axis=1).rename("re-run (s)")
    df = pd.concat([first, again], axis=1).rename_axis("section")
    df.attrs["totals"] = totals
    m = measurements[-1].get("machine", {})
    where = f"{m.get('cpu', 'an unknown machine')}, {m.get('cores', '?')} cores"
    dates = sorted({_when(x) for x in measurements})
    means = [float(x.get("load_during", {}).get("mean", float("nan"))) for x in measurements]
    k = len(firsts)
    load = (_load(measurements[-1]) if k == 1 else
            f"{k} measurements (the median of each section), load average during them from {min(means):.1f} to "
            f"{max(means):.1f}")
    return df, (f"Measured on {' and '.join(dates)} in `make lab` on {where}, at quick scale "
                f"(n = {rec.get('n', '?')} records), {load}")


#: What a fresh clone's ``make lab`` costs (written by ``lab/measure_env.py``).
ENV_RECORD = Path("lab") / "env-build.json"


def env_build_times(path: str | os.PathLike | None = None) -> tuple[pd.DataFrame, str]:
    """The steps of ``make lab`` from a fresh clone with their seconds, and where and when it was measured.

    Returns
    -------
    (pandas.DataFrame, str)
        Index ``task`` (``venv``, ``lab-env``, ``lab``), columns ``what`` and ``seconds``, and the attribute
        ``attrs["disk_gib"]`` (each environment's size); and a sentence with the date, the Python, the
        caches, the machine and its load.

    Raises
    ------
    FileNotFoundError
        If there is no record, with the command that writes it.
    """
    p = Path(path) if path is not None else project_root() / ENV_RECORD
    if not p.exists():
        raise FileNotFoundError(f"no environment record {p}: run `.venv/bin/python lab/measure_env.py`.")
    rec = json.loads(p.read_text(encoding="utf-8"))
    steps = rec.get("steps", [])
    if not steps:
        raise ValueError(f"the environment record {p} has no steps: {sorted(rec)}")
    df = pd.DataFrame(steps).set_index("task")[["what", "seconds"]]
    df.attrs["disk_gib"] = dict(rec.get("disk_gib", {}))
    m = rec.get("machine", {})
    return df, (f"Measured on {_when(rec)} from {rec.get('from', 'a checkout')} with Python {rec.get('python', '?')} "
                f"on {m.get('cpu', 'an unknown machine')}, {m.get('cores', '?')} cores, "
                f"{rec.get('caches', 'caches unknown')}; {_load(rec)}")
