"""Replicate functions of the SDR application chapter (Section 5 of both papers).

The confidential data are one fixed sample (the user's SDR file or the seeded stand-in, see
:mod:`dpsynth_book.sdr.loader` and :mod:`dpsynth_book.sdr.standin`); a *replicate* repeats everything random
that follows the data (MCMC, weights computed from the draws, synthetic data, the PH noise) with
its own stream, so the spread over replicates shows how much the single-run numbers of the papers
can move.

* :func:`censoring_replicate` (censoring paper, Section 5): beta regression of scaled salary on
  gender, age group and weeks worked; Unweighted (none), Weighted (aDP), Weighted-e (aDP),
  Censor_w (aDP: Lipschitz weights from the same data, censored at ``eps/2``), Censor_uw (DP) and
  the perturbed histogram both ways, PH (DP, ``eps`` with one record removed) and PH-paper (DP,
  the papers' Laplace(2/eps), ``eps/2`` with one record removed); one synthetic data set per
  synthesizer, generated from one posterior draw; privacy under both neighbour relations and
  utility summaries in dollars (the censoring paper's Table 2 and Figure 9).
* :func:`reweighting_replicate` (re-weighting paper, Section 5): negative binomial synthesizer
  of salary in dollars on an ``n = 1000`` sample; Unweighted, LW, CW, SW, LW_final and CW_final
  (the re-weighting paper's Figures 8-11 and appendix Figure 13); ``n_syn`` synthetic data sets
  per synthesizer, each from its own distinct posterior draw (releasing all of them would cost
  ``n_syn * eps``).

Both results have ONE dimension for the synthesizer, ``synthesizer``, and both start with "Data":
Part 1's coordinate is :data:`PART1_ROWS` (the data row holds the confidential salaries), Part 2's
is :data:`PART2_ROWS`, "Data" (bootstrap resamples of the confidential records for the utility
statistics) and the six fits in the book's order. In Part 2 "Data" is not a fit: the boolean
``is_fit`` is false there, and every per-fit variable holds NaN (floats), 0 (counts) or False
(booleans) on that row.

Privacy figures name their neighbour relation: ``eps`` is one record removed, ``eps_replace``
one record replaced (twice ``eps`` for the beta regression, whose log densities take both signs;
equal to ``eps`` for the NB, whose log probabilities are <= 0). Every fit records its
convergence diagnostics (``converged``, a boolean that includes divergences, ``divergences``,
``rhat_max``, ``ess_min``); a fit with divergences is not converged.

Both are module-level so :func:`dpsynth_book.studies.run_study` can run them on other processes;
both (re)load the data from ``params`` themselves, so the cache key covers the data source.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import xarray as xr

from dpsynth import metrics, models, registry
from dpsynth.fitting import SamplerConfig, compiled_model
from dpsynth.mechanisms import RunContext
from dpsynth.mechanisms import run as run_mechanism
from dpsynth.seeds import generator, stream
from dpsynth.synthetic_data import composed_eps, release, release_sets, synthesize

from ... import presentation, sdr
from ...studies import data_fingerprint
from .. import require

__all__ = [
    "PART1_SYNTHESIZERS",
    "PART1_NAMES",
    "PART1_ROWS",
    "PART2_SYNTHESIZERS",
    "PART2_ROWS",
    "PART1_HISTOGRAMS",
    "DIAGNOSTICS",
    "data_part1",
    "data_part2",
    "censoring_replicate",
    "reweighting_replicate",
]

#: Fits of Part 1 (censoring paper), in fitting order; the two histograms are added without a fit.
PART1_SYNTHESIZERS = ("Unweighted", "Weighted", "Weighted-e", "Censor_w", "Censor_uw")
#: :data:`PART1_SYNTHESIZERS` as the loaded results name them (the files store the censoring paper's
#: "Weighted"; :func:`dpsynth.registry.display_name` shows it as LW).
PART1_NAMES = tuple(registry.display_name(n) for n in PART1_SYNTHESIZERS)
#: Perturbed histograms of Part 1 (name -> registry key): PH at ``eps`` with one record removed
#: (Laplace(1/eps)); PH-paper, the papers' Laplace(2/eps), which is ``eps`` with one record replaced
#: and ``eps/2`` with one record removed.
PART1_HISTOGRAMS = {"PH": "ph", "PH-paper": "ph_paper"}
#: Rows of Part 1's results: the data, the fits and the histograms.
PART1_ROWS = ("Data",) + PART1_SYNTHESIZERS + tuple(PART1_HISTOGRAMS)
#: Fits of Part 2 (re-weighting paper), in fitting order.
PART2_SYNTHESIZERS = ("Unweighted", "LW", "CW", "SW", "LW_final", "CW_final")
#: The ``synthesizer`` coordinate of Part 2's results: "Data" and the fits, in the book's order.
PART2_ROWS = tuple(presentation.order(["Data", *PART2_SYNTHESIZERS]))

STATS = metrics.STAT_NAMES  # ("mean", "median", "q15", "q90")
#: Convergence diagnostics recorded per fit.
DIAGNOSTICS = ("converged", "divergences", "rhat_max", "ess_min")
#: Part 2's per-fit scalars.
_PART2_SCALARS = ("delta", "eps", "eps_replace", "eps_all_sets", *DIAGNOSTICS, "k", "n_fits", "search_converged",
                  "mean_weight", "min_weight", "mu_mean")
#: Booleans among them (kept as bool).
_PART2_BOOLS = ("converged", "search_converged")
#: Values of Part 2's per-fit scalars on the "Data" row (not a fit): False, 0, else NaN.
_NOT_A_FIT = {"converged": False, "search_converged": False, "divergences": 0.0, "n_fits": 0.0}


def _diagnostics(fit) -> dict:
    d = fit.diagnostics
    return {"converged": bool(d.ok), "divergences": float(d.divergences), "rhat_max": float(d.rhat_max),
            "ess_min": float(d.ess_min)}


def _columns(params: Mapping) -> sdr.SDRColumns:
    return sdr.SDRColumns(**dict(params.get("columns") or {}))


def data_part1(params: Mapping) -> sdr.SDRData:
    """The censoring-paper sample: the user's file (``sdr_path``) or the stand-in.

    Parameters used: ``sdr_path`` ("" = stand-in), ``n1`` (stand-in size; for a file, a simple
    random sample of that size if ``n1`` > 0 and smaller than the filtered file), ``data_seed``,
    ``columns``, ``filters1``, ``salary_bound``, ``age_levels``.
    """
    path = str(params.get("sdr_path") or "")
    n1 = int(params.get("n1", 0))
    seed = int(params.get("data_seed", 2017))
    if not path:
        return sdr.standin_censoring(n1 or 1000, seed)
    data = sdr.load_sdr(path, columns=_columns(params), filters=params.get("filters1") or None,
                        salary_bound=float(params.get("salary_bound", sdr.PUBLIC_SALARY_BOUND)),
                        age_levels=tuple(params.get("age_levels") or sdr.AGE_LEVELS))
    return sdr.subsample(data, n1, seed) if n1 > 0 else data


def data_part2(params: Mapping) -> sdr.SDRData:
    """The re-weighting-paper salary sample of ``n2`` records (file or stand-in)."""
    path = str(params.get("sdr_path") or "")
    n2 = int(params.get("n2", 1000))
    seed = int(params.get("data_seed", 2017))
    if not path:
        return sdr.standin_reweighting(n2, seed)
    data = sdr.load_sdr(path, columns=_columns(params), variables=("salary",),
                        filters=params.get("filters2") or None,
                        salary_bound=float(params.get("salary_bound", sdr.PUBLIC_SALARY_BOUND)))
    return sdr.subsample(data, n2, seed)


def censoring_replicate(replicate: int, seed: np.random.SeedSequence, params: Mapping) -> xr.Dataset:
    """Part 1: the synthesizers of the censoring paper's Section 5 on the SDR sample.

    Parameters
    ----------
    replicate : int
        Replicate index.
    seed : numpy.random.SeedSequence
        This replicate's stream.
    params : mapping
        ``eps``, ``draws``, ``tune``, ``chains``, ``salary_bound`` (public bound U, dollars),
        ``ph_mode`` ("research" or "release"), ``keep_records`` (replicates that keep their
        synthetic salaries for the density figure) and the data parameters of :func:`data_part1`.

    Returns
    -------
    xarray.Dataset
        Per row ("Data", the five fits, "PH", "PH-paper"): ``delta`` (local Lipschitz bound),
        ``eps`` (one record removed: ``2M = eps`` for a censored fit, ``2 Delta`` otherwise, the
        histogram's ``1/b``), ``eps_replace`` (one record replaced: ``4M`` / ``4 Delta``, the
        histogram's ``2/b``), ``eps_local`` (``2 Delta`` of this data set), ``noise_scale``
        (histograms), ``n_censored``, ``n_truncated``, ``mcmc`` (whether the row is an MCMC
        fit), the diagnostics ``converged`` (boolean; True where no fit), ``divergences``,
        ``rhat_max``, ``ess_min`` (NaN where no fit), ``max_ecdf``,
        ``avg_ecdf``, ``mean``, ``median``, ``q15``, ``q90`` (dollars), and for comparison
        ``avg_ecdf_mixed`` and ``eps_mixed`` of a set whose records each come from their own
        random draw (record-wise mixing, as the papers' code did; ``eps_mixed`` is the
        removal figure composed over the distinct draws it used); per row and record:
        ``salary`` (the data row and one synthetic data set per synthesizer, each generated from
        one posterior draw; NaN for replicates not kept); per coefficient: ``coef_unweighted``
        (posterior mean of the Unweighted fit).
    """
    require(params, ("eps", "draws", "tune", "salary_bound"))
    eps = float(params["eps"])
    U = float(params["salary_bound"])
    cfg = SamplerConfig.from_params(params)
    data = data_part1(params)
    s = data.salary
    n = s.size
    y = sdr.scale_salary(s, U)
    levels = tuple(params.get("age_levels") or sdr.AGE_LEVELS)
    X = sdr.design_matrix(data.frame, levels)
    fam = models.BetaRegression(n_coef=X.shape[1])
    # every mechanism by its registry key on one context: the unweighted and LW fits are shared
    ctx = RunContext(y, family=fam, covariates=X, sampler=cfg, seed_fn=lambda *parts: stream(seed, *parts),
                     compiled=compiled_model(fam, y, X))
    res = {"Unweighted": run_mechanism("unweighted", ctx), "Weighted": run_mechanism("weighted", ctx),
           "Weighted-e": run_mechanism("weighted_e", ctx, eps=eps), "Censor_w": run_mechanism("censor_w", ctx, eps=eps),
           "Censor_uw": run_mechanism("censor_uw", ctx, eps=eps)}

    # the histograms release the salary itself (dollars), on the public range [0, U]
    mode = str(params.get("ph_mode", "research"))
    ctx_s = RunContext(s, seed_fn=lambda *parts: stream(seed, *parts))
    # the sample's size is a design constant of the study, public: the papers' sqrt(n) bin rule may use it
    ph = {nm: run_mechanism(key, ctx_s, eps=eps, lower=0.0, upper=U, bins="sqrt", n_public=n, mode=mode)
          for nm, key in PART1_HISTOGRAMS.items()}

    keep = replicate < int(params.get("keep_records", 1))
    rows = list(PART1_ROWS)
    nan = float("nan")
    out = {k: np.full(len(rows), nan) for k in ("delta", "eps", "eps_replace", "eps_local", "noise_scale",
                                                 "n_censored", "n_truncated", *DIAGNOSTICS,
                                                 "max_ecdf", "avg_ecdf", *STATS, "avg_ecdf_mixed", "eps_mixed")}
    out["converged"] = np.ones(len(rows), dtype=bool)  # rows without MCMC (data, histograms) have nothing to fail
    mcmc = np.array([row in res for row in rows])
    salary = np.full((len(rows), n), nan, dtype=float)
    for i, row in enumerate(rows):
        if row == "Data":
            syn = s
        elif row in ph:
            h = ph[row]
            syn = h.release.sample(n, generator(stream(seed, "synthetic", row)))
            out["eps"][i], out["eps_replace"][i] = h.privacy.eps, h.privacy.eps_replace
            out["noise_scale"][i] = h.privacy.extra["noise_scale"]
        else:
            r = res[row]
            # one released data set = every record from ONE posterior draw (the eps covers one draw)
            syn = sdr.unscale_salary(synthesize(r.fit, stream(seed, "synthetic", row)), U)
            out["delta"][i] = r.privacy.delta
            out["eps"][i] = r.privacy.eps
            out["eps_replace"][i] = r.privacy.eps_replace
            out["eps_local"][i] = r.privacy.eps_local
            out["n_censored"][i] = r.privacy.n_censored
            out["n_truncated"][i] = float(r.extra.get("n_truncated", 0))
            for k, v in _diagnostics(r.fit).items():
                out[k][i] = v
            # for comparison only: record-wise mixing, whose eps composes over the draws used
            mixed = release(r, stream(seed, "mixed", row), mix_draws=True)
            out["avg_ecdf_mixed"][i] = metrics.ecdf_distances(s, sdr.unscale_salary(mixed.values, U)).avg_ecdf
            out["eps_mixed"][i] = mixed.eps
        if row != "Data":
            d = metrics.ecdf_distances(s, syn)
            out["max_ecdf"][i], out["avg_ecdf"][i] = d.max_ecdf, d.avg_ecdf
        for k, v in metrics.summary_stats(syn).items():
            out[k][i] = v
        if keep:
            salary[i] = syn
    coef = res["Unweighted"].fit.draws["beta"].mean(axis=0)
    names = sdr.design_names(levels)
    ds = xr.Dataset(
        {**{k: ("synthesizer", v) for k, v in out.items()},
         "mcmc": ("synthesizer", mcmc),
         "salary": (("synthesizer", "record"), salary),
         "coef_unweighted": ("coef", coef),
         "kappa_unweighted": float(res["Unweighted"].fit.draws["kappa"].mean()),
         "data_fingerprint": data_fingerprint(s, X)},
        coords={"synthesizer": rows, "record": np.arange(n), "coef": names},
    )
    ds.attrs.update(source=data.source, ph_mode=mode, n=n, n_at_bound=int(np.sum(s == U)))
    return ds


def reweighting_replicate(replicate: int, seed: np.random.SeedSequence, params: Mapping) -> xr.Dataset:
    """Part 2: LW, CW, SW, LW_final and CW_final with the NB salary synthesizer.

    Parameters
    ----------
    params : mapping
        ``draws``, ``tune``, ``chains``, ``cw_radius``, ``cw_kind``, ``cw_match``, ``cw_max_iter``, ``k0``, ``tol``,
        ``n_syn`` (synthetic data sets per synthesizer), ``keep_records`` and the data parameters
        of :func:`data_part2`.

    Returns
    -------
    xarray.Dataset
        The ``synthesizer`` coordinate is :data:`PART2_ROWS`: "Data" and the six fits in registry
        order; ``is_fit`` (bool) is false for "Data", whose per-fit values are NaN (floats), 0
        (``divergences``, ``n_fits``) or False (``converged``, ``search_converged``).
        Per synthesizer: ``delta``, ``eps`` (one record removed: ``Delta``, the NB's log
        probabilities being <= 0, a window of width ``Delta``), ``eps_replace`` (one record
        replaced: ``2 Delta``),
        ``eps_all_sets`` (``n_syn * eps``: the cost of releasing all ``n_syn`` sets), the
        diagnostics ``converged``, ``divergences``, ``rhat_max``, ``ess_min``, ``k``, ``n_fits``,
        ``search_converged``, ``mean_weight``, ``min_weight``, ``mu_mean``; per synthesizer and
        record: ``delta_i``, ``weight``, ``synthetic`` (one synthetic data set; NaN for
        replicates not kept); per synthesizer and draw: ``mu_draw`` (200 thinned draws of the NB
        mean ``exp(beta)``, dollars); per synthesizer (with "Data") and set: ``mean``,
        ``median``, ``q15``, ``q90``, ``max_ecdf``, ``avg_ecdf`` (bootstrap resamples for
        "Data"; for a synthesizer, set ``j`` is generated from one posterior draw, distinct
        draws for distinct sets). Scalars: ``cw_radius`` (the radius used) and ``cw_radius_matched``
        (whether the radius search put CW's Delta within ``tol`` below LW's).
    """
    require(params, ("draws", "tune", "cw_radius", "cw_kind", "k0", "tol", "n_syn"))
    cfg = SamplerConfig.from_params(params)
    x = data_part2(params).salary
    n = x.size
    n_syn = int(params["n_syn"])
    fam = models.NegBinomialRegression()
    # every mechanism by its registry key on one context: the unweighted, LW and CW fits are shared
    ctx = RunContext(x, family=fam, sampler=cfg, seed_fn=lambda *parts: stream(seed, *parts),
                     compiled=compiled_model(fam, x))
    cw = {"radius": float(params["cw_radius"]), "kind": str(params["cw_kind"]),
          "match_delta": bool(params.get("cw_match", True)), "match_tol": float(params["tol"]),
          "match_max_iter": int(params.get("cw_max_iter", 20))}
    k = {"k0": float(params["k0"]), "k_tol": float(params["tol"])}
    res = {"Unweighted": run_mechanism("unweighted", ctx), "LW": run_mechanism("lw", ctx),
           "CW": run_mechanism("cw", ctx, **cw), "SW": run_mechanism("sw", ctx),
           "LW_final": run_mechanism("lw_final", ctx, **k), "CW_final": run_mechanism("cw_final", ctx, **cw, **k)}
    cw_radius, cw_fits = float(res["CW"].extra["radius"]), int(res["CW"].extra["n_fits"])

    # Every per-synthesizer array runs over PART2_ROWS ("Data" first); the per-fit rows of "Data" stay
    # NaN (floats), 0 (counts) or False (booleans).
    names = list(PART2_SYNTHESIZERS)
    rows = list(PART2_ROWS)
    at = {nm: i for i, nm in enumerate(rows)}
    nan = float("nan")
    scal = {k: [] for k in _PART2_SCALARS}
    for nm in rows:
        if nm not in res:
            for k in _PART2_SCALARS:
                scal[k].append(_NOT_A_FIT.get(k, nan))
            continue
        r = res[nm]
        scal["delta"].append(r.privacy.delta)
        scal["eps"].append(r.privacy.eps)
        scal["eps_replace"].append(r.privacy.eps_replace)
        scal["eps_all_sets"].append(composed_eps(r.privacy.eps, n_syn))
        for k, v in _diagnostics(r.fit).items():
            scal[k].append(v)
        scal["k"].append(float(r.extra.get("k", nan)))
        scal["n_fits"].append(float(r.extra.get("n_fits", cw_fits if nm == "CW" else 1)))
        # the k search of the re-weighting, the radius search of CW (when matched); True where there is no search
        matched = r.extra.get("radius_matched", True) or not bool(params.get("cw_match", True))
        scal["search_converged"].append(bool(r.extra.get("converged", matched)))
        w = np.broadcast_to(r.weights, (n,))
        scal["mean_weight"].append(float(w.mean()))
        scal["min_weight"].append(float(w.min()))
        scal["mu_mean"].append(float(np.exp(r.fit.draws["beta"][:, 0]).mean()))

    keep = replicate < int(params.get("keep_records", 1))
    stats = {k: np.empty((len(rows), n_syn)) for k in (*STATS, "max_ecdf", "avg_ecdf")}
    one_syn = np.full((len(rows), n), nan)
    rng_boot = generator(stream(seed, "bootstrap"))
    d0 = at["Data"]
    for j in range(n_syn):
        xb = x[rng_boot.integers(n, size=n)]
        for k, v in metrics.summary_stats(xb).items():
            stats[k][d0, j] = v
        d = metrics.ecdf_distances(x, xb)
        stats["max_ecdf"][d0, j], stats["avg_ecdf"][d0, j] = d.max_ecdf, d.avg_ecdf
    for nm in names:
        a = at[nm]
        # n_syn sets, each generated from its own posterior draw (distinct draws): n_syn * eps in all
        sets = release_sets(res[nm], n_syn, stream(seed, "synthetic", nm))
        for j, rel in enumerate(sets):
            xs = rel.values
            if j == 0 and keep:
                one_syn[a] = xs
            for k, v in metrics.summary_stats(xs).items():
                stats[k][a, j] = v
            d = metrics.ecdf_distances(x, xs)
            stats["max_ecdf"][a, j], stats["avg_ecdf"][a, j] = d.max_ecdf, d.avg_ecdf

    n_keep = 200
    mu = np.full((len(rows), n_keep), nan)
    for nm in names:
        draws = np.exp(res[nm].fit.draws["beta"][:, 0])
        idx = np.linspace(0, draws.size - 1, n_keep).round().astype(int)
        mu[at[nm]] = draws[idx]

    def rec(f):
        out = np.full((len(rows), n), nan)
        if keep:
            for nm in names:
                out[at[nm]] = np.broadcast_to(f(res[nm]), (n,))
        return out

    ds = xr.Dataset(
        {"is_fit": ("synthesizer", np.array([nm != "Data" for nm in rows], dtype=bool)),
         **{k: ("synthesizer", np.asarray(v, dtype=bool if k in _PART2_BOOLS else float)) for k, v in scal.items()},
         "delta_i": (("synthesizer", "record"), rec(lambda r: r.bounds.delta_i)),
         "weight": (("synthesizer", "record"), rec(lambda r: r.weights)),
         "synthetic": (("synthesizer", "record"), one_syn),
         "mu_draw": (("synthesizer", "draw"), mu),
         **{k: (("synthesizer", "syn_set"), v) for k, v in stats.items()},
         "cw_radius": float(cw_radius),
         "cw_radius_matched": bool(res["CW"].extra.get("radius_matched", False)),
         "data_fingerprint": data_fingerprint(x)},
        coords={"synthesizer": rows, "record": np.arange(n), "draw": np.arange(n_keep), "syn_set": np.arange(n_syn)},
    )
    return ds
