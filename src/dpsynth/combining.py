"""Valid intervals from several synthetic data sets: the combining rules of multiple imputation for synthetic data.

An analyst who fits the same model to each of ``m`` released synthetic data sets gets estimates
``q_l`` with estimated variances ``u_l``. One synthetic data set used as if it were the confidential
one understates the uncertainty: it ignores that the synthesizer's parameters were themselves drawn.
The combining rules turn the ``m`` results into one estimate ``q_bar = mean(q_l)`` and a variance:

* **partially synthetic** data (Reiter 2003): only the confidential values were synthesized, the
  records' public covariates are the real ones (a :class:`dpsynth.Synthesizer` release):
  ``T_p = u_bar + b_m / m`` with ``b_m`` the between-set variance, and a t reference distribution
  with ``nu_p = (m - 1) (1 + u_bar / (b_m / m))^2`` degrees of freedom;
* **fully synthetic** data (Raghunathan, Reiter and Rubin 2003): every column was synthesized (a
  whole table, or a peer's output): ``T_f = (1 + 1/m) b_m - u_bar`` with
  ``nu_f = (m - 1) (1 - u_bar / ((1 + 1/m) b_m))^2``; where ``T_f <= 0`` the rule's usual
  adjustment ``T_f = (n_syn / n) u_bar`` (Reiter 2002) is used, and the table says so.

Which rule fits how the sets were made, not only which columns were synthesized: sets of ``n`` records,
each drawn from its own posterior draw of the parameters (every synthesizer of this package, a whole table
included), have ``Var(q_bar) = u + b/m`` about the population value, the partially synthetic rule's
variance (Raab, Nowok and Dibben 2016, "Practical data synthesis for large samples", J. Privacy and
Confidentiality 7(3)); the fully synthetic rule is for sets drawn from a synthetic *population*, and at
small ``m`` its degrees of freedom fall towards 0 and its intervals become very wide.

Each synthetic data set must come from its own posterior draw (or, for a noise-aware mechanism, its
own draw of the posterior predictive): that between-set variation is what ``b_m`` measures. With a
tempered (pseudo) posterior the draws vary more than the posterior's, ``b_m`` is larger and the
interval wider: conservative, not invalid. ``m`` releases of a pseudo-posterior synthesizer cost
``m`` draws; of a noise-aware one, nothing more than the first.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .validation import DataError

__all__ = ["combine", "RULES"]

#: The combining rules :func:`combine` knows.
RULES = ("partial", "full")


def combine(estimates, variances, *, rule: str = "partial", level: float = 0.95, names: Sequence[str] | None = None,
            n_ratio: float = 1.0) -> pd.DataFrame:
    """Combine ``m`` synthetic data sets' estimates into one estimate and interval per quantity.

    Parameters
    ----------
    estimates, variances : array_like
        ``(m, k)``: each synthetic data set's estimates of ``k`` quantities and their estimated
        variances (squared standard errors), ``m >= 2``.
    rule : {"partial", "full"}
        Partially synthetic (real public covariates, synthetic confidential values) or fully
        synthetic (every column synthesized) data.
    level : float
        Coverage of the interval.
    names : sequence of str, optional
        The quantities' names (the index of the result).
    n_ratio : float
        ``n_syn / n``, for the fully synthetic rule's adjustment where its variance is not positive.

    Returns
    -------
    pandas.DataFrame
        Per quantity: ``estimate``, ``se`` (the square root of the combined variance), ``df``, ``lower``,
        ``upper``, ``between`` (``b_m``), ``within`` (``u_bar``) and ``adjusted`` (the fully synthetic
        rule's variance was not positive and was replaced).
    """
    from scipy import stats

    if rule not in RULES:
        raise DataError(f"`rule` must be one of {RULES} (partially or fully synthetic data); got {rule!r}.")
    q = np.atleast_2d(np.asarray(estimates, dtype=float))
    u = np.atleast_2d(np.asarray(variances, dtype=float))
    if q.ndim != 2 or q.shape != u.shape:
        raise DataError(f"`estimates` and `variances` must have the same shape (m, k); got {q.shape} and {u.shape}.")
    m = q.shape[0]
    if m < 2:
        raise DataError(f"combining needs at least 2 synthetic data sets (m >= 2), each from its own draw; got {m}.")
    if not (np.isfinite(q).all() and np.isfinite(u).all() and (u >= 0).all()):
        raise DataError("`estimates` must be finite and `variances` finite and >= 0.")
    if not 0 < level < 1:
        raise DataError(f"`level` must lie in (0, 1); got {level!r}.")
    qbar, ubar, b = q.mean(axis=0), u.mean(axis=0), q.var(axis=0, ddof=1)
    adjusted = np.zeros(q.shape[1], dtype=bool)
    with np.errstate(divide="ignore", invalid="ignore"):
        if rule == "partial":
            T = ubar + b / m
            df = (m - 1) * (1 + ubar / (b / m)) ** 2
        else:
            T = (1 + 1 / m) * b - ubar
            df = (m - 1) * (1 - ubar / ((1 + 1 / m) * b)) ** 2
            adjusted = ~(T > 0)
            T = np.where(adjusted, float(n_ratio) * ubar, T)
            df = np.where(adjusted, (m - 1) * 1.0, df)
    df = np.where(np.isfinite(df), df, 1e6)  # b = 0: no between-set variation, the normal limit
    se = np.sqrt(T)
    half = stats.t.ppf(0.5 + level / 2, df) * se
    index = pd.Index(list(names) if names is not None else range(q.shape[1]), name="quantity")
    return pd.DataFrame({"estimate": qbar, "se": se, "df": df, "lower": qbar - half, "upper": qbar + half,
                         "between": b, "within": ubar, "adjusted": adjusted}, index=index)
