"""Small constructed Datasets of the "Releasing a whole table" chapter (no MCMC, no peers).

:func:`fake_study` builds a Dataset with the structure of
:func:`dpsynth_book.experiments.whole_table.replicate.replicate`'s output as :func:`dpsynth_book.studies.run_study`
returns it (replicates along ``replicate``), with chosen values, so that every table entry can be checked against
its source and every verdict made to hold or fail.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from dpsynth_book.experiments.whole_table import Params, WholeTableResults
from dpsynth_book.experiments.whole_table.params import METHOD_NAMES
from dpsynth_book.experiments.whole_table.replicate import METRICS

TABLES = ("house_prices", "nmes1988")
EPS = (1.0, 3.0, 5.0)
METHODS = tuple(METHOD_NAMES.values())
OURS, CHAIN, MST, AIM = METHODS
INDEP = CHAIN  # the second method of the figure and table tests
#: Base value of each utility per method (means over runs; the runs are base -/+ a spread).
BASE = {
    "marginal": {OURS: 0.05, CHAIN: 0.12, MST: 0.06, AIM: 0.07},
    "marginal_numeric": {OURS: 0.05, CHAIN: 0.14, MST: 0.07, AIM: 0.06},
    "marginal_categorical": {OURS: 0.01, CHAIN: 0.06, MST: 0.006, AIM: 0.008},
    "pairwise": {OURS: 0.04, CHAIN: 0.05, MST: 0.08, AIM: 0.06},
    "contingency": {OURS: 0.10, CHAIN: 0.15, MST: 0.15, AIM: 0.12},
    "coef_rmse": {OURS: 0.10, CHAIN: 0.12, MST: 0.30, AIM: 0.25},
    "coef_overlap": {OURS: 0.6, CHAIN: 0.5, MST: 0.3, AIM: 0.4},
    "pmse_ratio": {OURS: 2.0, CHAIN: 20.0, MST: 3.0, AIM: 2.5},
    "pmse_int_ratio": {OURS: 4.0, CHAIN: 30.0, MST: 20.0, AIM: 25.0},
    "regression_degenerate": {OURS: 0.0, CHAIN: 0.0, MST: 0.0, AIM: 0.0},
    "coverage": {OURS: 0.95, CHAIN: np.nan, MST: 0.3, AIM: 0.4},
    "width_ratio": {OURS: 3.0, CHAIN: np.nan, MST: 1.2, AIM: 1.1},
    "seconds": {OURS: 30.0, CHAIN: 10.0, MST: 20.0, AIM: 60.0},
}
R = 3


def fake_study(*, base=None, unconverged: int = 0, tables=TABLES, eps=EPS, methods=METHODS) -> xr.Dataset:
    """The study over ``(replicate, table, eps, method)``; the utilities shrink as eps grows (divided by eps ** 0.5).

    ``unconverged`` runs of ours (replicate 0, 1, ... at the first table and eps) fail their check.
    """
    base = {**BASE, **(base or {})}
    shape = (R, len(tables), len(eps), len(methods))
    coords = {"replicate": np.arange(R), "table": list(tables), "eps": list(eps), "method": list(methods)}
    dims = ("replicate", "table", "eps", "method")
    spread = np.array([-0.1, 0.0, 0.1])[:, None, None, None]
    scale = (1.0 / np.sqrt(np.asarray(eps)))[None, None, :, None]
    data = {}
    for var in METRICS:
        b = np.array([base[var][m] for m in methods])[None, None, None, :]
        if var in ("seconds", "regression_degenerate", "coef_overlap", "coverage", "width_ratio"):
            v = np.broadcast_to(b * (1 + spread), shape).copy()
        else:
            v = b * scale * (1 + spread) * np.ones(shape)
        data[var] = (dims, v)
    peer = np.array([m in (MST, AIM) for m in methods])[None, None, None, :]
    e = np.asarray(eps)[None, None, :, None]
    data["eps_total"] = (dims, np.broadcast_to(e, shape).copy())
    ours = np.array([m == OURS for m in methods])[None, None, None, :]
    data["eps_implicates"] = (dims, np.broadcast_to(np.where(ours, e, np.nan), shape).copy())
    data["delta"] = (dims, np.broadcast_to(np.where(peer, 1e-6, 0.0), shape).copy())
    conv = np.ones(shape, dtype=bool)
    for r in range(unconverged):
        conv[r, 0, 0, 0] = False
    data["converged"] = (dims, conv)
    data["n_unconverged"] = (dims, (~conv).astype(float))
    data["rhat_max"] = (dims, np.broadcast_to(np.where(peer, np.nan, 1.004), shape).copy())
    data["divergences"] = (dims, np.broadcast_to(np.where(peer, np.nan, 0.0), shape).copy())
    data["n"] = (("replicate", "table"), np.tile([546, 1000][: len(tables)], (R, 1)).astype(np.int64))
    data["data_fingerprint"] = (("replicate", "table"), np.tile(np.arange(len(tables)), (R, 1)).astype(np.int64))
    return xr.Dataset(data, coords=coords, attrs={"params": '{"implicates": 5}'})


def fake_results(**kw) -> WholeTableResults:
    """:func:`fake_study` wrapped as the chapter's results."""
    return WholeTableResults(params=Params.paper(), study=fake_study(**kw))
