"""The base class of every model family, with the traits the rest of the package reads.

A family says three things: how the data enter the model as ``pm.Data`` containers
(:meth:`ModelFamily.data_values`), the per-record log-likelihood and priors
(:meth:`ModelFamily.record_logp`), and how to draw synthetic records from posterior draws
(:meth:`ModelFamily.simulate`). Continuous families can also give their log CDF and log survival
function, which range restriction needs.

Its *traits* are class attributes that the :class:`~dpsynth.Synthesizer`, the mechanisms and the
CLI read instead of keeping lists of family names:

* ``name``: the family's key in :data:`dpsynth.models.FAMILIES`;
* ``continuous``: a density (True) or a probability mass function (False); a public ``unit`` or
  ``offset`` applies to densities only;
* ``takes_covariates`` / ``needs_covariates``: whether a design matrix of public covariates
  enters the model (a regression), and whether it must;
* ``one_signed``: every record log-likelihood has one sign whatever the data (probability mass
  functions), which halves epsilon with one record replaced;
* ``placeholder``: a value inside the support, used to compile the model when a saved
  synthesizer is loaded without its confidential data;
* :attr:`ModelFamily.has_cdf`: whether :meth:`ModelFamily.logcdf` is implemented;
* ``reference_is_max``: the family's saturated reference (:meth:`ModelFamily.reference_loglik`) is each
  record's largest possible term, so the differences from it keep one sign.

Two public rules serve the unit-free censored likelihood (:mod:`dpsynth.mechanisms.censored_reference`):
:meth:`ModelFamily.reference_loglik`, each record's term at a *saturated* reference (the record's own
location, a public scale or dispersion), and :meth:`ModelFamily.public_start`, a wide public point the
chains start from, from which data in any unit between about 1e-9 and 1e9 lie inside the windows.

PyMC and PyTensor are imported when a model is built, not when this module is imported.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from ..privacy import log_interval_prob
from ..validation import DataError, as_data, check_same_length

if TYPE_CHECKING:  # pragma: no cover
    import pymc as pm
    import pytensor.tensor as pt

__all__ = ["ModelFamily", "Draws", "intercept_design"]

Draws = Mapping[str, np.ndarray]


def intercept_design(n: int) -> np.ndarray:
    """Return the ``(n, 1)`` design matrix of an intercept-only regression."""
    return np.ones((n, 1))


class ModelFamily(ABC):
    """A Bayesian synthesizer whose likelihood is written through the weighted helper.

    Subclasses implement :meth:`data_values`, :meth:`record_logp` and :meth:`simulate`; they
    may override :meth:`check_data`, :meth:`logcdf` and :meth:`logsf`. Instances must be
    hashable (use frozen dataclasses), because compiled models are cached by family.
    """

    #: Short name used in labels, cache keys and :data:`dpsynth.models.FAMILIES`.
    name: str = "model"
    #: Whether public covariates enter the model as a design matrix (a regression).
    takes_covariates: bool = False
    #: Whether the family needs a covariate (design) matrix.
    needs_covariates: bool = False
    #: Whether the family is a density (continuous data) rather than a probability mass function.
    continuous: bool = True
    #: A value inside the support, used to compile the model without the confidential data.
    placeholder: float = 1.0
    #: Whether the variable is categorical (level codes ``0, ..., K - 1`` of public levels).
    categorical: bool = False
    #: The dataclass field holding the number of design columns (intercept included), if any.
    design_field: str | None = None
    #: The scale on which a location and a scale of the data set a public reference parameter
    #: (:meth:`reference`), and its public range for a DP release of them: ``(transform, lower, upper)``
    #: with transform ``"log"``, ``"logit"`` or ``"log1p"``; ``None`` if the family has no reference.
    reference_scale: tuple | None = None
    #: Whether every record log-likelihood has one sign whatever the data and parameters
    #: (True for discrete models: log probabilities are <= 0). Then one record replaced moves
    #: the log pseudo posterior by at most 2 Delta instead of 4 Delta (:mod:`dpsynth.privacy`).
    #: Continuous densities take both signs; keep the default False unless you can prove it.
    one_signed = False
    #: Whether :meth:`reference_loglik` is each record's largest possible term (a saturated model), so that
    #: the differences from it are <= 0 whatever the parameter.
    reference_is_max: bool = False

    def check_data(self, x: np.ndarray, covariates: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
        """Validate the data and covariates; return them as float arrays.

        Raises
        ------
        DataError
            On empty data, NaN or infinite values, values outside the support, or a covariate
            matrix whose rows do not match the records.
        """
        arr = as_data(x, "x")
        if self.needs_covariates and covariates is None:
            raise DataError(f"the {self.name} model needs `covariates` (an n x p design matrix).")
        cov = None
        if covariates is not None:
            cov = as_data(covariates, "covariates", ndim=2)
            check_same_length(x=arr, covariates=cov)
        self._check_support(arr)
        return arr, cov

    def _check_support(self, x: np.ndarray) -> None:  # noqa: B027  # pragma: no cover - optional hook
        """Raise if ``x`` lies outside the support (subclasses; the default accepts everything)."""

    @abstractmethod
    def data_values(self, x: np.ndarray, covariates: np.ndarray | None) -> dict[str, np.ndarray]:
        """Values of the model's ``pm.Data`` containers for data ``x`` (already validated)."""

    @abstractmethod
    def record_logp(self, data: Mapping[str, pt.TensorVariable]) -> pt.TensorVariable:
        """Define priors (inside the model context) and return the per-record log-likelihood."""

    @abstractmethod
    def simulate(self, draws: Draws, rng: np.random.Generator, covariates: np.ndarray | None = None) -> np.ndarray:
        """Draw one synthetic record per row of the draws.

        Parameters
        ----------
        draws : mapping of str to numpy.ndarray
            Posterior draws, each with leading dimension n: row i is the draw used for record i.
        rng : numpy.random.Generator
            Random stream.
        covariates : numpy.ndarray, optional
            The (public) covariates of the n records.
        """

    def logcdf(self, q: np.ndarray, draws: Draws, covariates: np.ndarray | None = None) -> np.ndarray:
        """Log CDF ``log F(q_i | theta_s)``, shape ``(S, n)`` (continuous families only)."""
        raise NotImplementedError(f"the {self.name} family has no CDF; range restriction needs one.")

    def logsf(self, q: np.ndarray, draws: Draws, covariates: np.ndarray | None = None) -> np.ndarray:
        """Log survival function ``log (1 - F(q_i | theta_s))``, shape ``(S, n)``."""
        raise NotImplementedError(f"the {self.name} family has no CDF; range restriction needs one.")

    def log_interval_prob(
        self, lower: np.ndarray, upper: np.ndarray, draws: Draws, covariates: np.ndarray | None = None
    ) -> np.ndarray:
        """``log P_theta(lower_i <= X_i <= upper_i)`` for every draw and record, shape ``(S, n)``.

        Computed on the log scale from :meth:`logcdf` and :meth:`logsf` so that ranges deep in
        a tail do not underflow (see :func:`dpsynth.privacy.log_interval_prob`); families with a
        faster exact form may override it.
        """
        return log_interval_prob(
            self.logcdf(lower, draws, covariates), self.logcdf(upper, draws, covariates),
            self.logsf(lower, draws, covariates), self.logsf(upper, draws, covariates),
        )

    @property
    def has_cdf(self) -> bool:
        """Whether the family implements :meth:`logcdf` (range restriction needs it)."""
        return type(self).logcdf is not ModelFamily.logcdf

    def reference_transform(self, x: np.ndarray) -> np.ndarray:
        """The data on the family's reference scale (``reference_scale``)."""
        if self.reference_scale is None:
            raise DataError(f"the {self.name} model has no reference scale; give a reference parameter explicitly.")
        x = np.asarray(x, dtype=float)
        kind = self.reference_scale[0]
        with np.errstate(divide="ignore"):
            if kind == "log":
                return np.log(x)
            if kind == "logit":
                return np.log(x) - np.log1p(-x)
            if kind == "log1p":
                return np.log1p(x)
        raise ValueError(f"unknown reference transform {kind!r}")

    def reference(self, loc: float, scale: float) -> dict[str, np.ndarray]:
        """A public reference parameter ``theta_0`` from a location and a scale on the reference scale.

        Returns one draw of every free parameter (leading dimension 1), for
        :meth:`dpsynth.fitting.CompiledModel.record_loglik`. Regression coefficients other than
        the intercept are 0: the reference describes the variable's marginal.
        """
        raise DataError(f"the {self.name} model has no reference parameter rule; give a reference parameter "
                        f"explicitly (a dict of its parameters).")

    def reference_loglik(self, x: np.ndarray, covariates: np.ndarray | None = None) -> np.ndarray | None:
        """Each record's term at the family's saturated reference: its own location and a public scale.

        A function of the record and public constants alone, so it may be subtracted before the clamp
        (:mod:`dpsynth.privacy`, "the window, not its place"). ``None``: the family has no such rule.
        """
        return None

    def checked_names(self, param_names: list[str]) -> list[str]:
        """The quantities whose R-hat and bulk ESS a fit checks: by default every free parameter. A family whose free
        parameters include directions the likelihood does not identify (set by the prior alone) may name the
        identified quantities its synthetic data are drawn from instead (deterministics kept with the draws)."""
        return list(param_names)

    def reference_tolerance(self) -> float | None:
        """A public default of Censor_ref's tolerance ``K = M / alpha`` for this family, or None (the mechanism's
        :data:`~dpsynth.mechanisms.censored_reference.TOLERANCE`, meant for two-signed windows)."""
        return None

    def public_start(self) -> dict[str, np.ndarray] | None:
        """A public parameter value the chains start around (every free parameter, leading dimension 1), or None."""
        return None

    def public_reference(self) -> dict[str, np.ndarray] | None:
        """A reference parameter that needs nothing of the data (e.g. equal probabilities), or None."""
        return None

    def with_design(self, n_columns: int) -> ModelFamily:
        """This family for a design of ``n_columns`` columns (intercept included).

        A regression returns a copy with its ``design_field`` set; a family that takes no
        covariates accepts only the intercept (``n_columns == 1``).
        """
        if self.design_field is None:
            if n_columns != 1:
                raise DataError(f"the {self.name} model takes no covariates; got a design of {n_columns} columns.")
            return self
        return dataclasses.replace(self, **{self.design_field: int(n_columns)})

    def build(self, x: np.ndarray, covariates: np.ndarray | None = None) -> pm.Model:
        """Build the PyMC model on (validated) data ``x``; weights 1 and no censoring."""
        import pymc as pm

        from ..likelihood import weighted_loglik

        values = self.data_values(x, covariates)
        with pm.Model() as model:
            data = {k: pm.Data(k, v) for k, v in values.items()}
            logp = self.record_logp(data)
            weighted_loglik(logp)
        return model


def _design(covariates: np.ndarray | None, n: int) -> np.ndarray:
    return intercept_design(n) if covariates is None else covariates


def _linear(beta: np.ndarray, covariates: np.ndarray | None, n: int, paired: bool) -> np.ndarray:
    """Linear predictor: paired (row i uses draw i) gives (n,), else (S, n)."""
    X = _design(covariates, n)
    beta = np.asarray(beta).reshape(beta.shape[0], -1)
    if paired:
        return np.einsum("ij,ij->i", X, beta)
    return beta @ X.T


def _check_n_coef(cov: np.ndarray | None, n_coef: int, name: str) -> None:
    p = 1 if cov is None else cov.shape[1]
    if p != n_coef:
        raise DataError(
            f"`covariates` has {p} column(s) but the {name} family was built with n_coef={n_coef}; "
            f"pass n_coef={p}."
        )


def _coefficients(n_coef: int, intercept: float) -> np.ndarray:
    beta = np.zeros((1, int(n_coef)))
    beta[0, 0] = intercept
    return beta


def _beta_precision(mean: float, sd_logit: float) -> float:
    """The precision ``a + b`` of a Beta with mean ``mean`` whose logit has standard deviation ``sd_logit``.

    ``Var(logit X) = trigamma(a) + trigamma(b)`` decreases in ``a + b``; solved by bisection on the log scale.
    """
    from scipy.special import polygamma

    target = float(sd_logit) ** 2
    lo, hi = np.log(1e-3), np.log(1e7)
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        k = np.exp(mid)
        v = float(polygamma(1, k * mean) + polygamma(1, k * (1.0 - mean)))
        lo, hi = (mid, hi) if v > target else (lo, mid)
    return float(np.exp(0.5 * (lo + hi)))


#: The public precision ``a + b`` of a Beta variable's saturated reference (:meth:`ModelFamily.reference_loglik`).
REFERENCE_PRECISION = 4.0


def beta_saturated(x: np.ndarray) -> np.ndarray:
    """``log Beta(x | mean x, precision REFERENCE_PRECISION)``: the record at its own mean."""
    from scipy import stats

    x = np.asarray(x, dtype=float)
    return stats.beta.logpdf(x, REFERENCE_PRECISION * x, REFERENCE_PRECISION * (1.0 - x))
