"""Fitting with model reuse: compile once, refit with new data, weights and bound.

A :class:`CompiledModel` compiles a family's PyMC model with nutpie once. Every later fit
passes new ``pm.Data`` values (data, record weights, censoring bound) through nutpie's
``with_data``, so refits do not compile again. After each fit the record log-likelihoods are
computed for the pooled draws a block of records at a time and reduced to by-record bounds (the
``S x n`` matrix is never held); R-hat and bulk
ESS are checked and a :class:`ConvergenceWarning` names any parameter that fails.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field

import arviz as az
import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt
from pytensor.graph.replace import vectorize_graph

from .likelihood import BOUND, REFERENCE, WEIGHTS, likelihood_term
from .mcmc_settings import CORES_ENV, ConvergenceWarning, Diagnostics, SamplerConfig, default_cores  # noqa: F401
from .models.base import ModelFamily
from .privacy import (
    PrivacyReport,
    RecordBounds,
    censoring_bound,
    chunked_record_bounds,
    is_one_signed,
    privacy_report,
    record_bounds,
)
from .seeds import SeedLike, int_seed
from .validation import DataError, as_weights, check_eps, check_positive

# SamplerConfig, Diagnostics, ConvergenceWarning, CORES_ENV and default_cores live in
# ``dpsynth.mcmc_settings`` (imported here for older callers, documented there).
__all__ = [
    "CompiledModel",
    "Fit",
    "compile_count",
    "compiled_model",
    "data_fingerprint",
]

_COMPILES = {"count": 0}
_CACHE: dict[tuple, CompiledModel] = {}


def compile_count() -> int:
    """Number of nutpie compilations done in this process (for checking reuse)."""
    return _COMPILES["count"]


def _diagnostics(posterior: Mapping[str, np.ndarray], diverging: np.ndarray, names: list[str],
                 cfg: SamplerConfig) -> Diagnostics:
    """R-hat, bulk ESS and divergences of draws shaped ``(chain, draw, *shape)`` (ArviZ's estimators).

    Each component of a vector parameter is checked on its own (ArviZ's array functions take one
    ``(chain, draw)`` array); the parameter's worst R-hat and smallest ESS are kept, as ArviZ
    computes them on an InferenceData.
    """
    rh, es = {}, {}
    for k in names:
        arr = np.asarray(posterior[k], dtype=float)
        comps = arr.reshape(arr.shape[0], arr.shape[1], -1)
        r = [float(az.rhat(comps[:, :, j])) for j in range(comps.shape[2])]
        e = [float(az.ess(comps[:, :, j], method="bulk")) for j in range(comps.shape[2])]
        rh[k] = float(np.nanmax(r))
        es[k] = float(np.nanmin(e))
    failed = tuple(k for k in names if not (rh[k] <= cfg.rhat_max and es[k] >= cfg.ess_threshold))
    return Diagnostics(rhat=rh, ess_bulk=es, failed=failed, divergences=int(np.asarray(diverging).sum()))


def _arrow_column(col) -> np.ndarray:
    """One column of nutpie's Arrow trace (one chain) as ``(rows, *shape)`` (list columns by their ``shape``)."""
    import pyarrow

    meta = col.field.metadata or {}
    shape = tuple(int(v) for v in meta[b"shape"].decode().split(",")) if meta.get(b"shape") else ()
    arr = pyarrow.array(col)
    rows = len(arr)
    if hasattr(arr, "flatten"):
        arr = arr.flatten()
    return np.asarray(arr.to_numpy(zero_copy_only=False)).reshape(rows, *shape)


class _ArrowTrace:
    """A raw nutpie trace whose Arrow batches were taken (nutpie hands them out once), for its ``_extract``."""

    def __init__(self, draw_batches, stat_batches):
        self.batches = (draw_batches, stat_batches)

    def is_zarr(self) -> bool:
        return False

    def is_arrow(self) -> bool:
        return True

    def get_arrow_trace(self):
        return self.batches


def _raw_posterior(trace: _ArrowTrace) -> tuple[dict, np.ndarray]:
    """Every variable's retained draws, ``(chain, draw, *shape)``, and the divergences, from a raw trace.

    Read straight from nutpie's Arrow trace (``return_raw_trace=True``): the rows a chain flags as
    tuning are dropped and every column of the draws is kept, as nutpie does when it builds an
    InferenceData's posterior, without building one.
    """
    draw_batches, stat_batches = trace.get_arrow_trace()
    post: dict[str, list] = {}
    div = []
    for d, st in zip(draw_batches, stat_batches):
        keep = ~np.asarray(_arrow_column(st.column("tuning")), dtype=bool)
        for k in d.column_names:
            post.setdefault(k, []).append(_arrow_column(d.column(k))[keep])
        if "diverging" in st.column_names:
            div.append(np.asarray(_arrow_column(st.column("diverging")), dtype=bool)[keep])
    lengths = {len(c) for chains in post.values() for c in chains}
    if len(lengths) != 1:
        raise RuntimeError(f"nutpie's chains kept different numbers of draws ({sorted(lengths)}); cannot pool them.")
    return {k: np.stack(v) for k, v in post.items()}, np.concatenate(div) if div else np.zeros(0, bool)


@dataclass
class Fit:
    """One fitted (pseudo) posterior with its privacy reductions.

    Attributes
    ----------
    family : ModelFamily
        The synthesizer.
    x, covariates : numpy.ndarray
        The data the fit used.
    weights : numpy.ndarray
        Record weights the likelihood used.
    bound : float
        Censoring bound M (``inf`` = none).
    draws : dict
        Pooled posterior draws (all chains), leading dimension S.
    bounds : RecordBounds
        By-record Lipschitz reductions (computed with ``privacy_weights``).
    diagnostics : Diagnostics
        R-hat and ESS.

    The sampler output, as an ArviZ InferenceData, is :attr:`idata` (built when first read).
    """

    family: ModelFamily
    x: np.ndarray
    covariates: np.ndarray | None
    weights: np.ndarray
    bound: float
    draws: dict
    bounds: RecordBounds
    diagnostics: Diagnostics
    compiled: CompiledModel | None = field(default=None, repr=False)
    reference: np.ndarray | None = field(default=None, repr=False)
    #: Whether the reference is each record's largest term (a saturated reference of a one-signed family).
    reference_is_max: bool = False
    #: nutpie's sampler and raw trace, turned into an InferenceData on the first read of ``idata``.
    _trace: tuple | None = field(default=None, repr=False)
    _idata: object = field(default=None, repr=False)

    @property
    def idata(self):
        """The sampler output as an ArviZ InferenceData (built on first read; ``None`` if not kept).

        A fit keeps nutpie's raw trace and builds the InferenceData only when asked: the
        conversion costs more than a refit's sampling on small data, and a release does not need it.
        """
        if self._idata is None and self._trace is not None:
            sampler, raw = self._trace
            sampler._return_raw_trace = False
            self._idata = sampler._extract(raw)
            self._trace = None
        return self._idata

    @property
    def censored(self) -> bool:
        """Whether the likelihood was censored."""
        return bool(np.isfinite(self.bound))

    @property
    def privacy(self) -> PrivacyReport:
        """The fit's :class:`PrivacyReport` (Delta, eps under both neighbour relations, censoring count).

        A bare fit does not know where its weights came from, so its guarantee is ``None``; the
        mechanisms (:mod:`dpsynth.mechanisms`) state it from the registry.
        """
        return privacy_report(self.bounds, self.bound if self.censored else None, guarantee=None,
                              one_signed=self.one_signed)

    @property
    def one_signed(self) -> bool:
        """Whether every record term has one sign (:func:`dpsynth.privacy.is_one_signed`: a one-signed family with no
        reference subtracted, or with each record's largest term subtracted)."""
        return is_one_signed(self.family, reference=self.reference, reference_is_max=self.reference_is_max)

    @property
    def n_draws(self) -> int:
        """Number of pooled draws S."""
        return next(iter(self.draws.values())).shape[0]

    def loglik(self) -> np.ndarray:
        """Recompute the ``S x n`` record log-likelihood matrix (reduce it right away)."""
        return self.compiled.record_loglik(self.draws, self.x, self.covariates)

    def log_range_prob(self, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
        """``log P_{theta_s}(R_i)`` for ranges ``R_i = [lower_i, upper_i]``, shape ``(S, n)``."""
        return self.family.log_interval_prob(lower, upper, self.draws, self.covariates)


class CompiledModel:
    """A family's PyMC model compiled once with nutpie and refitted with new data.

    Parameters
    ----------
    family : ModelFamily
        The synthesizer.
    x : array_like
        Data used to build the model (its size fixes nothing: refits may use other data).
    covariates : array_like, optional
        Design matrix for regression families.
    """

    def __init__(self, family: ModelFamily, x, covariates=None) -> None:
        import nutpie

        xv, cov = family.check_data(x, covariates)
        self.family = family
        self.model = family.build(xv, cov)
        self.term = likelihood_term(self.model)
        self._nutpie = nutpie.compile_pymc_model(self.model)
        _COMPILES["count"] += 1
        self.param_names = [rv.name for rv in self.model.free_RVs]
        self._loglik_fn = self._compile_loglik()

    def _compile_loglik(self):
        rvs = self.model.free_RVs
        inputs = [pt.tensor(name=f"{rv.name}_draws", shape=(None, *rv.type.shape), dtype=rv.dtype) for rv in rvs]
        batched = vectorize_graph(self.term.logp, replace=dict(zip(rvs, inputs)))
        return pytensor.function(inputs, batched, mode="NUMBA", on_unused_input="ignore")

    def _data_values(self, xv, cov, weights, bound, reference) -> dict:
        values = dict(self.family.data_values(xv, cov))
        values[WEIGHTS] = weights
        values[BOUND] = np.asarray(bound, dtype=float)
        values[REFERENCE] = reference
        return values

    def unconstrained(self, values: Mapping[str, np.ndarray]) -> np.ndarray:
        """A parameter value ``{name: value}`` (every free parameter) as nutpie's unconstrained vector.

        Each value is mapped by its PyMC transform (``log`` of a positive parameter, ...) and placed at
        its slice of the sampler's vector.
        """
        names, slices, _ = self._nutpie.shape_info
        out = np.zeros(self._nutpie.n_dim)
        for rv in self.model.free_RVs:
            if rv.name not in values:
                raise DataError(f"the starting point lacks {rv.name!r}; give every parameter ({self.param_names}).")
            value = np.asarray(values[rv.name], dtype=float)
            if None not in rv.type.shape:  # a shape that follows the data (shape=X.shape[1]) is the value's own
                value = value.reshape(tuple(int(d) for d in rv.type.shape))
            tr = self.model.rvs_to_transforms.get(rv)
            vv = self.model.rvs_to_values[rv]
            if tr is not None:
                value = np.asarray(tr.forward(pt.as_tensor_variable(value), *rv.owner.inputs).eval(), dtype=float)
            sl = slices[names.index(vv.name)]
            out[sl] = value.ravel()
        if not np.isfinite(out).all():
            raise DataError("the starting point is not finite on the sampler's scale (a parameter outside its "
                            "support).")
        return out

    def record_loglik(self, draws: Mapping[str, np.ndarray], x, covariates=None) -> np.ndarray:
        """Record log-likelihoods ``f_{theta_s}(x_i)`` for the given draws, shape ``(S, n)``."""
        xv, cov = self.family.check_data(x, covariates)
        pm.set_data(self.family.data_values(xv, cov), model=self.model)
        args = [np.asarray(draws[name], dtype=float) for name in self.param_names]
        return np.asarray(self._loglik_fn(*args))

    def fit(
        self,
        x,
        *,
        covariates=None,
        weights=None,
        bound: float | None = None,
        sampler: SamplerConfig | None = None,
        seed: SeedLike = None,
        privacy_weights=None,
        keep_idata: bool = True,
        reference=None,
        init: Mapping[str, np.ndarray] | None = None,
        reference_is_max: bool = False,
        data: Mapping[str, np.ndarray] | None = None,
    ) -> Fit:
        """Sample the (weighted, possibly censored) pseudo posterior on data ``x``.

        Parameters
        ----------
        x : array_like
            Confidential data.
        covariates : array_like, optional
            Public covariates (regression families).
        weights : array_like, optional
            Record weights in [0, 1] (default all ones).
        bound : float, optional
            Censoring bound M > 0 (use ``eps / 2``); ``None`` for no censoring.
        sampler : SamplerConfig, optional
            MCMC settings (a :class:`SamplerConfig`; build one from a dict with
            ``SamplerConfig.from_params(d)`` or ``SamplerConfig(**d)``).
        seed : int or SeedSequence, optional
            Seed of the sampler.
        privacy_weights : array_like, optional
            Weights used for the Lipschitz bound if they differ from the likelihood weights (range
            restriction (A)); default: ``weights``.
        keep_idata : bool
            Keep the ArviZ InferenceData on the result.
        reference : array_like, optional
            Per-record reference ``r_i`` subtracted from each weighted term before the clamp
            (``clamp(alpha_i f - r_i, -M, M)``), e.g. ``alpha_i f_{theta_0}(x_i)`` at a public
            ``theta_0``; default 0.
        reference_is_max : bool
            Whether ``reference`` is each record's largest term (``alpha_i`` times its saturated term), so
            that a one-signed family's differences keep their sign (:attr:`Fit.one_signed`).
        data : mapping, optional
            Values of other ``pm.Data`` containers of the family for this fit (public or DP quantities,
            e.g. a categorical model's prior mean of its intercepts).
        init : mapping, optional
            A public parameter value ``{name: value}`` (every free parameter, on its own scale) around
            which the chains start, e.g. the reference ``theta_0`` of a censored fit: a chain started
            where every record is censored sees a flat likelihood and may never leave the prior.
            Where the chains start is public and changes how the posterior is explored, not the
            posterior. Default: nutpie's own start.

        Returns
        -------
        Fit
        """
        import nutpie

        if sampler is not None and not isinstance(sampler, SamplerConfig):
            raise TypeError(
                f"`sampler` must be a SamplerConfig or None; got {type(sampler).__name__}. Use "
                f"sampler=SamplerConfig(draws=..., tune=...) or SamplerConfig.from_params(params_dict)."
            )
        cfg = sampler or SamplerConfig()
        xv, cov = self.family.check_data(x, covariates)
        n = xv.shape[0]
        w = as_weights(weights, n, "weights")
        pw = w if privacy_weights is None else as_weights(privacy_weights, n, "privacy_weights")
        M = np.inf if bound is None else check_positive(bound, "bound")
        ref = np.zeros(n) if reference is None else np.asarray(reference, dtype=float)
        if ref.shape != (n,) or not np.isfinite(ref).all():
            raise DataError(f"`reference` must be {n} finite numbers, one per record; got shape {ref.shape}.")
        values = {**self._data_values(xv, cov, w, M, ref), **dict(data or {})}
        # a container the model does not use (a user model that ignores the design X) is not nutpie's to update
        compiled = self._nutpie.with_data(**{k: v for k, v in values.items() if k in self._nutpie.shared_data})
        cores = cfg.cores or min(cfg.chains, default_cores())
        extra = {} if init is None else {"init_mean": self.unconstrained(init)}
        # one BLAS thread per chain: chains sampled in parallel each call BLAS (the design's dot product), and
        # OpenBLAS's own threads on top of them fight for the cores (measured: 3x slower on two cores)
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=1, user_api="blas"):
            sampler = nutpie.sample(
                compiled, draws=cfg.draws, tune=cfg.tune, chains=cfg.chains, cores=cores,
                seed=int_seed(seed), progress_bar=bool(cfg.progress), target_accept=float(cfg.target_accept),
                low_rank_modified_mass_matrix=cfg.mass_matrix == "low_rank", return_raw_trace=True, blocking=False,
                **extra,
            )
            try:
                raw = sampler.wait()
            except BaseException:
                sampler.cancel()
                raise
        raw = _ArrowTrace(*raw.get_arrow_trace())
        posterior, diverging = _raw_posterior(raw)
        draws = {k: v.reshape(-1, *v.shape[2:]) for k, v in posterior.items()}
        diag = _diagnostics(posterior, diverging, self.family.checked_names(self.param_names), cfg)
        if not diag.ok:
            warnings.warn(
                f"CONFIDENTIAL (computed from the data; do not publish): {self.family.name} fit did not converge: "
                f"{diag.problems()}; thresholds R-hat <= "
                f"{cfg.rhat_max}, ESS >= {cfg.ess_threshold:.0f}, no divergences. Increase `draws`/`tune` "
                f"(or reparametrise) before trusting its privacy numbers.",
                ConvergenceWarning,
                stacklevel=2,
            )
        M_or_none = None if not np.isfinite(M) else M
        if cfg.draw_quantile == 1.0:  # a block of records at a time: the S x n matrix is never held
            n_draws = next(iter(draws.values())).shape[0]
            bounds = chunked_record_bounds(
                lambda a, b: self.record_loglik(draws, xv[a:b], None if cov is None else cov[a:b]), n, n_draws, pw,
                M_or_none, shift=None if reference is None else ref)
        else:  # the draw-quantile rule compares draws over every record
            bounds = record_bounds(self.record_loglik(draws, xv, cov), pw, M_or_none, draw_quantile=cfg.draw_quantile,
                                   shift=None if reference is None else ref)
        return Fit(
            family=self.family, x=xv, covariates=cov, weights=w, bound=float(M), draws=draws,
            bounds=bounds, diagnostics=diag, compiled=self, reference=None if reference is None else ref,
            reference_is_max=bool(reference_is_max and reference is not None),
            _trace=(sampler, raw) if keep_idata else None,
        )


#: Compiled models of user functions kept at once (each is keyed by the data it was built for).
USER_CACHE_SIZE = 4


def data_fingerprint(x, covariates=None) -> str:
    """A SHA-256 of the values and shapes of ``x`` and ``covariates``: which data set a model was built for."""
    import hashlib

    h = hashlib.sha256()
    for a in (x, covariates):
        if a is None:
            h.update(b"none;")
            continue
        arr = np.ascontiguousarray(np.asarray(a, dtype=float))
        h.update(repr(arr.shape).encode() + b";")
        h.update(arr.tobytes())
    return h.hexdigest()


def compiled_model(family: ModelFamily, x, covariates=None) -> CompiledModel:
    """Return this process's compiled model for ``family`` (compiling it on first use).

    A shipped family's model is cached by family and by the shape of the covariates, so every
    replicate, synthesizer and epsilon of a study reuses one compilation: its data enter as
    ``pm.Data`` only, replaced at every fit. A user's model function
    (:class:`~dpsynth.models.user_function.PyMCFunctionFamily`) is cached by the function **and the
    data** it was built for (:func:`data_fingerprint`): the package builds it with placeholders,
    but a function that reads the data another way (a closure, a global) would build another
    data set's figures into the model, so a model is never served for data other than its own
    (the last :data:`USER_CACHE_SIZE` are kept).
    """
    from .models.user_function import PyMCFunctionFamily

    p = None if covariates is None else np.shape(covariates)[1]
    user = isinstance(family, PyMCFunctionFamily)
    key = (family, p, data_fingerprint(x, covariates)) if user else (family, p)
    cm = _CACHE.get(key)
    if cm is None:
        cm = CompiledModel(family, x, covariates)
        if user:
            users = [k for k in _CACHE if isinstance(k[0], PyMCFunctionFamily)]
            for old in users[: max(len(users) - USER_CACHE_SIZE + 1, 0)]:
                del _CACHE[old]
        _CACHE[key] = cm
    return cm


def eps_to_bound(eps: float) -> float:
    """Censoring bound ``M = eps / 2`` of a target ``eps`` (:func:`dpsynth.privacy.censoring_bound`, two-signed)."""
    return censoring_bound(check_eps(eps))
