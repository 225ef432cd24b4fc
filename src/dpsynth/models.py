"""Model families (synthesizers), each written through :func:`dpsynth.weighted_loglik`.

A family says three things: how the data enter the model as ``pm.Data`` containers
(:meth:`ModelFamily.data_values`), the per-record log-likelihood and priors
(:meth:`ModelFamily.record_logp`), and how to draw synthetic records from posterior draws
(:meth:`ModelFamily.simulate`). Continuous families can also give their log CDF and log survival
function, which range restriction needs. Subclass :class:`ModelFamily` to bring your own model.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pymc as pm
import pytensor.tensor as pt
from scipy import special, stats

from .likelihood import weighted_loglik
from .privacy import log_interval_prob
from .validation import DataError, as_data, check_same_length, check_support

__all__ = [
    "ModelFamily",
    "BetaFamily",
    "PoissonRegression",
    "NegBinomialRegression",
    "LognormalFamily",
    "LognormalRegression",
    "BetaRegression",
    "intercept_design",
]

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

    #: Short name used in labels and cache keys.
    name: str = "model"
    #: Whether the family needs a covariate (design) matrix.
    needs_covariates: bool = False
    #: Whether every record log-likelihood has one sign whatever the data and parameters
    #: (True for discrete models: log probabilities are <= 0). Then one record replaced moves
    #: the log pseudo posterior by at most 2 Delta instead of 4 Delta (:mod:`dpsynth.privacy`).
    #: Continuous densities take both signs; keep the default False unless you can prove it.
    one_signed = False

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

    def build(self, x: np.ndarray, covariates: np.ndarray | None = None) -> pm.Model:
        """Build the PyMC model on (validated) data ``x``; weights 1 and no censoring."""
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


@dataclass(frozen=True)
class BetaFamily(ModelFamily):
    """Beta synthesizer for data in (0, 1): ``a = lambda phi``, ``b = lambda (1 - phi)``.

    Priors: ``phi ~ Beta(1, 1)``, ``lambda ~ Pareto(m=lambda_min, alpha=lambda_alpha)``.
    """

    lambda_min: float = 0.1
    lambda_alpha: float = 1.5
    name: str = "beta"

    def _check_support(self, x: np.ndarray) -> None:
        check_support(x, "x", lower=0.0, upper=1.0, lower_open=True, upper_open=True, model="the Beta model")

    def data_values(self, x: np.ndarray, covariates: np.ndarray | None) -> dict[str, np.ndarray]:
        return {"log_x": np.log(x), "log1m_x": np.log1p(-x)}

    def record_logp(self, data: Mapping[str, pt.TensorVariable]) -> pt.TensorVariable:
        phi = pm.Beta("phi", 1.0, 1.0)
        lam = pm.Pareto("lam", alpha=self.lambda_alpha, m=self.lambda_min)
        a = pm.Deterministic("a", lam * phi)
        b = pm.Deterministic("b", lam * (1.0 - phi))
        log_beta_fn = pt.gammaln(a) + pt.gammaln(b) - pt.gammaln(a + b)
        return (a - 1.0) * data["log_x"] + (b - 1.0) * data["log1m_x"] - log_beta_fn

    def simulate(self, draws: Draws, rng: np.random.Generator, covariates: np.ndarray | None = None) -> np.ndarray:
        """Beta draws via :func:`dpsynth.sampling.beta` (valid for any shapes, incl. under/overflowed)."""
        from . import sampling

        return sampling.beta(rng, draws["a"], draws["b"])

    def logcdf(self, q: np.ndarray, draws: Draws, covariates: np.ndarray | None = None) -> np.ndarray:
        return stats.beta.logcdf(q[None, :], draws["a"][:, None], draws["b"][:, None])

    def logsf(self, q: np.ndarray, draws: Draws, covariates: np.ndarray | None = None) -> np.ndarray:
        return stats.beta.logsf(q[None, :], draws["a"][:, None], draws["b"][:, None])


@dataclass(frozen=True)
class PoissonRegression(ModelFamily):
    """Poisson log-linear regression: ``log mu_i = X_i beta``.

    Priors: ``beta_j ~ Normal(0, sigma_beta)``, ``sigma_beta ~ HalfStudentT(nu=3, sigma=1)``.
    Without covariates the design is an intercept column.
    """

    n_coef: int = 1
    name: str = "poisson"
    one_signed = True  # log p(x | mu) <= 0 for a probability mass function

    def _check_support(self, x: np.ndarray) -> None:
        check_support(x, "x", lower=0.0, integer=True, model="the Poisson model")

    def check_data(self, x, covariates=None):
        arr, cov = super().check_data(x, covariates)
        _check_n_coef(cov, self.n_coef, self.name)
        return arr, cov

    def data_values(self, x: np.ndarray, covariates: np.ndarray | None) -> dict[str, np.ndarray]:
        return {"x": x, "X": _design(covariates, x.shape[0]), "lgamma_x1": special.gammaln(x + 1.0)}

    def _coefficients(self) -> pt.TensorVariable:
        sigma_beta = pm.HalfStudentT("sigma_beta", nu=3.0, sigma=1.0)
        return pm.Normal("beta", 0.0, sigma_beta, shape=self.n_coef)

    def record_logp(self, data: Mapping[str, pt.TensorVariable]) -> pt.TensorVariable:
        eta = pt.dot(data["X"], self._coefficients())
        return data["x"] * eta - pt.exp(eta) - data["lgamma_x1"]

    def simulate(self, draws: Draws, rng: np.random.Generator, covariates: np.ndarray | None = None) -> np.ndarray:
        """Poisson draws via :func:`dpsynth.sampling.poisson`; a mean that overflows (``X beta > 709``) gives inf."""
        from . import sampling

        n = draws["beta"].shape[0]
        with np.errstate(over="ignore"):
            mu = np.exp(_linear(draws["beta"], covariates, n, paired=True))
        return sampling.poisson(rng, mu)


def _check_n_coef(cov: np.ndarray | None, n_coef: int, name: str) -> None:
    p = 1 if cov is None else cov.shape[1]
    if p != n_coef:
        raise DataError(
            f"`covariates` has {p} column(s) but the {name} family was built with n_coef={n_coef}; "
            f"pass n_coef={p}."
        )


@dataclass(frozen=True)
class NegBinomialRegression(PoissonRegression):
    """Negative binomial (NB2) regression with log mean ``X beta`` and dispersion ``phi``.

    ``Var = mu + mu^2 / phi``. Priors as :class:`PoissonRegression` for ``beta`` and
    ``1/phi ~ HalfCauchy(5)``.
    """

    name: str = "negbin"
    inv_phi_scale: float = 5.0

    def _check_support(self, x: np.ndarray) -> None:
        check_support(x, "x", lower=0.0, integer=True, model="the negative binomial model")

    def record_logp(self, data: Mapping[str, pt.TensorVariable]) -> pt.TensorVariable:
        eta = pt.dot(data["X"], self._coefficients())
        inv_phi = pm.HalfCauchy("inv_phi", beta=self.inv_phi_scale)
        phi = pm.Deterministic("phi", 1.0 / inv_phi)
        x = data["x"]
        log_phi_mu = pt.logaddexp(pt.log(phi), eta)
        return (
            pt.gammaln(x + phi) - pt.gammaln(phi) - data["lgamma_x1"]
            + phi * (pt.log(phi) - log_phi_mu) + x * (eta - log_phi_mu)
        )

    def simulate(self, draws: Draws, rng: np.random.Generator, covariates: np.ndarray | None = None) -> np.ndarray:
        """NB2 draws via :func:`dpsynth.sampling.negative_binomial` (any ``phi`` in ``[0, inf]``).

        A mean that overflows (``X beta > 709``) gives inf.
        """
        from . import sampling

        n = draws["beta"].shape[0]
        with np.errstate(over="ignore"):
            mu = np.exp(_linear(draws["beta"], covariates, n, paired=True))
        return sampling.negative_binomial(rng, mu, draws["phi"])


@dataclass(frozen=True)
class LognormalFamily(ModelFamily):
    """Lognormal synthesizer: ``log x ~ Normal(mu, sigma)``.

    Priors: ``mu ~ Normal(mu_prior_mean, mu_prior_sd)``, ``sigma ~ HalfCauchy(sigma_prior_scale)``.
    """

    mu_prior_mean: float = 0.0
    mu_prior_sd: float = 10.0
    sigma_prior_scale: float = 5.0
    name: str = "lognormal"

    def _check_support(self, x: np.ndarray) -> None:
        check_support(x, "x", lower=0.0, lower_open=True, model="the lognormal model")

    def data_values(self, x: np.ndarray, covariates: np.ndarray | None) -> dict[str, np.ndarray]:
        return {"log_x": np.log(x)}

    def record_logp(self, data: Mapping[str, pt.TensorVariable]) -> pt.TensorVariable:
        mu = pm.Normal("mu", self.mu_prior_mean, self.mu_prior_sd)
        sigma = pm.HalfCauchy("sigma", beta=self.sigma_prior_scale)
        z = (data["log_x"] - mu) / sigma
        return -0.5 * np.log(2 * np.pi) - pt.log(sigma) - 0.5 * z**2 - data["log_x"]

    def simulate(self, draws: Draws, rng: np.random.Generator, covariates: np.ndarray | None = None) -> np.ndarray:
        """``exp(Normal(mu, sigma))``; never raises or gives NaN for finite ``mu`` and ``sigma >= 0``.

        A log value above about 709.8 overflows to inf and one below about -745 underflows to 0:
        these are the float64 roundings of values outside its range (data that large or small
        could not have been fitted), so they are returned as such rather than clipped.
        """
        with np.errstate(over="ignore", under="ignore"):
            return np.exp(rng.normal(draws["mu"], draws["sigma"]))

    def _z(self, q: np.ndarray, draws: Draws) -> np.ndarray:
        with np.errstate(divide="ignore"):
            lq = np.log(np.asarray(q, dtype=float))
        return (lq[None, :] - draws["mu"][:, None]) / draws["sigma"][:, None]

    def logcdf(self, q: np.ndarray, draws: Draws, covariates: np.ndarray | None = None) -> np.ndarray:
        return special.log_ndtr(self._z(q, draws))

    def logsf(self, q: np.ndarray, draws: Draws, covariates: np.ndarray | None = None) -> np.ndarray:
        return special.log_ndtr(-self._z(q, draws))

    def log_interval_prob(
        self, lower: np.ndarray, upper: np.ndarray, draws: Draws, covariates: np.ndarray | None = None
    ) -> np.ndarray:
        """Log probability of ``[lower_i, upper_i]``: ``log(Phi(z_hi) - Phi(z_lo))`` where that is exact.

        With ``z_lo <= z_hi`` the standardised ends, ``P = Phi(z_hi) - Phi(z_lo)``; where
        ``z_lo > 0`` the mirrored form ``Phi(-z_lo) - Phi(-z_hi)`` is used, so the subtraction
        always happens on the side of the median where the CDF is small and accurate to its last
        bits. Where ``P`` is below 1e-250 (far tails, where ``ndtr`` underflows) the log-space form
        ``log Phi(hi) + log1p(-exp(log Phi(lo) - log Phi(hi)))`` is used instead. The first form
        costs two ``ndtr`` and one ``log`` per entry, about half of the log-space form, and this
        function dominates the range-restriction study (``S x n`` entries per call).
        """
        z_lo, z_hi = self._z(lower, draws), self._z(upper, draws)
        flip = z_lo > 0
        hi = np.where(flip, -z_lo, z_hi)
        lo = np.where(flip, -z_hi, z_lo)
        del z_lo, z_hi, flip
        p = special.ndtr(hi)
        p -= special.ndtr(lo)
        tails = ~(p > 1e-250)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.log(p, out=p)
            if tails.any():
                h, lo_t = hi[tails], lo[tails]
                log_hi = special.log_ndtr(h)
                diff = special.log_ndtr(lo_t) - log_hi
                out[tails] = np.where(np.isneginf(log_hi), -np.inf, log_hi + np.log1p(-np.exp(diff)))
        return out


@dataclass(frozen=True)
class LognormalRegression(ModelFamily):
    """Lognormal regression: ``log x_i ~ Normal(X_i beta, sigma)``.

    Priors: ``beta_j ~ Normal(0, beta_sd)``, ``sigma ~ HalfCauchy(sigma_prior_scale)``. The first
    column of the design is the intercept; without covariates the model is :class:`LognormalFamily`
    with a Normal(0, ``beta_sd``) prior on ``mu``. Centre or scale wide numeric covariates (e.g.
    experience in decades) so that the coefficients are of order one.
    """

    n_coef: int = 1
    beta_sd: float = 10.0
    sigma_prior_scale: float = 5.0
    name: str = "lognormal_regression"

    def _check_support(self, x: np.ndarray) -> None:
        check_support(x, "x", lower=0.0, lower_open=True, model="the lognormal regression")

    def check_data(self, x, covariates=None):
        arr, cov = super().check_data(x, covariates)
        _check_n_coef(cov, self.n_coef, self.name)
        return arr, cov

    def data_values(self, x: np.ndarray, covariates: np.ndarray | None) -> dict[str, np.ndarray]:
        return {"log_x": np.log(x), "X": _design(covariates, x.shape[0])}

    def record_logp(self, data: Mapping[str, pt.TensorVariable]) -> pt.TensorVariable:
        beta = pm.Normal("beta", 0.0, self.beta_sd, shape=self.n_coef)
        sigma = pm.HalfCauchy("sigma", beta=self.sigma_prior_scale)
        z = (data["log_x"] - pt.dot(data["X"], beta)) / sigma
        return -0.5 * np.log(2 * np.pi) - pt.log(sigma) - 0.5 * z**2 - data["log_x"]

    def simulate(self, draws: Draws, rng: np.random.Generator, covariates: np.ndarray | None = None) -> np.ndarray:
        """``exp(Normal(X_i beta, sigma))``, row i of the draws for record i (overflow as :class:`LognormalFamily`)."""
        n = draws["beta"].shape[0]
        mu = _linear(draws["beta"], covariates, n, paired=True)
        with np.errstate(over="ignore", under="ignore"):
            return np.exp(rng.normal(mu, draws["sigma"]))

    def _z(self, q: np.ndarray, draws: Draws, covariates: np.ndarray | None) -> np.ndarray:
        with np.errstate(divide="ignore"):
            lq = np.log(np.asarray(q, dtype=float))
        mu = _linear(draws["beta"], covariates, lq.shape[0], paired=False)
        return (lq[None, :] - mu) / draws["sigma"][:, None]

    def logcdf(self, q: np.ndarray, draws: Draws, covariates: np.ndarray | None = None) -> np.ndarray:
        return special.log_ndtr(self._z(q, draws, covariates))

    def logsf(self, q: np.ndarray, draws: Draws, covariates: np.ndarray | None = None) -> np.ndarray:
        return special.log_ndtr(-self._z(q, draws, covariates))


@dataclass(frozen=True)
class BetaRegression(ModelFamily):
    """Beta regression for outcomes in (0, 1): ``logit mu_i = X_i beta``, precision ``kappa``.

    ``a_i = mu_i kappa``, ``b_i = (1 - mu_i) kappa``. Priors: ``beta_j ~ Normal(0, beta_sd)``,
    ``kappa ~ Gamma(kappa_alpha, kappa_beta)`` (mean ``kappa_alpha / kappa_beta``).
    """

    n_coef: int = 1
    beta_sd: float = 2.5
    kappa_alpha: float = 2.0
    kappa_beta: float = 0.1
    name: str = "beta_regression"
    needs_covariates: bool = True

    def _check_support(self, x: np.ndarray) -> None:
        check_support(x, "x", lower=0.0, upper=1.0, lower_open=True, upper_open=True, model="the beta regression")

    def check_data(self, x, covariates=None):
        arr, cov = super().check_data(x, covariates)
        _check_n_coef(cov, self.n_coef, self.name)
        return arr, cov

    def data_values(self, x: np.ndarray, covariates: np.ndarray | None) -> dict[str, np.ndarray]:
        return {"log_x": np.log(x), "log1m_x": np.log1p(-x), "X": covariates}

    def record_logp(self, data: Mapping[str, pt.TensorVariable]) -> pt.TensorVariable:
        beta = pm.Normal("beta", 0.0, self.beta_sd, shape=self.n_coef)
        kappa = pm.Gamma("kappa", alpha=self.kappa_alpha, beta=self.kappa_beta)
        mu = pm.math.invlogit(pt.dot(data["X"], beta))
        a = mu * kappa
        b = (1.0 - mu) * kappa
        log_beta_fn = pt.gammaln(a) + pt.gammaln(b) - pt.gammaln(kappa)
        return (a - 1.0) * data["log_x"] + (b - 1.0) * data["log1m_x"] - log_beta_fn

    def _shape_params(self, draws: Draws, covariates: np.ndarray, paired: bool) -> tuple[np.ndarray, np.ndarray]:
        n = covariates.shape[0]
        mu = special.expit(_linear(draws["beta"], covariates, n, paired))
        kappa = draws["kappa"] if paired else draws["kappa"][:, None]
        return mu * kappa, (1.0 - mu) * kappa

    def simulate(self, draws: Draws, rng: np.random.Generator, covariates: np.ndarray | None = None) -> np.ndarray:
        """Beta draws via :func:`dpsynth.sampling.beta`, shapes ``kappa expit(+-X beta)``.

        The shapes are formed with ``expit(-eta)`` rather than ``1 - expit(eta)``, so a mean
        that rounds to 1 still leaves a positive ``b``; a shape that underflows to 0 gives the
        limit 0 or 1. Where both shapes are 0 (``kappa`` underflowed) the draw is the
        ``kappa -> 0`` limit Bernoulli(mu); where ``kappa`` is inf it is the point mass at mu.
        """
        from . import sampling

        eta = _linear(draws["beta"], covariates, covariates.shape[0], paired=True)
        mu = special.expit(eta)
        kappa = np.asarray(draws["kappa"], dtype=float)
        with np.errstate(under="ignore", invalid="ignore"):
            a, b = kappa * mu, kappa * special.expit(-eta)
        zero = (a == 0) & (b == 0)
        inf = np.isposinf(kappa)  # the kappa -> inf limit (also avoids inf * 0 where mu is 0 or 1)
        x = sampling.beta(rng, np.where(zero | inf, 1.0, a), np.where(zero | inf, 1.0, b))
        if zero.any():
            x = np.where(zero, (rng.random(x.shape) < mu).astype(float), x)
        return np.where(inf, mu, x)

    def logcdf(self, q: np.ndarray, draws: Draws, covariates: np.ndarray | None = None) -> np.ndarray:
        a, b = self._shape_params(draws, covariates, paired=False)
        return stats.beta.logcdf(q[None, :], a, b)

    def logsf(self, q: np.ndarray, draws: Draws, covariates: np.ndarray | None = None) -> np.ndarray:
        a, b = self._shape_params(draws, covariates, paired=False)
        return stats.beta.logsf(q[None, :], a, b)
