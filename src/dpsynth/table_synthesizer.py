"""Whole-table release: several confidential columns synthesized one after another, one guarantee.

A :class:`TableSynthesizer` takes a DataFrame with several confidential columns (continuous, counts,
categorical) and public covariates. It synthesizes the confidential columns in a public order, each
from its own model conditional on the public covariates and the columns before it (the sequential,
chain-rule synthesis of synthpop; Nowok, Raab and Dibben 2016): ``p(y_1 | z) p(y_2 | z, y_1) ...``.
Each conditional is a :class:`dpsynth.Synthesizer` with its own family and mechanism from the
registry, and a released table is generated column by column, the later columns conditioned on the
*synthetic* earlier ones. By default (``mechanisms="auto"``, :func:`dpsynth.choice.table_column_choice`)
a categorical column, and a count with few values within public ``bounds``, are synthesized from
their DP counts in cells of the earlier columns by the noise-aware model
(:mod:`dpsynth.mechanisms.noise_aware`); a continuous column, or a wide count, by the unit-free
censored regression on every earlier column, calibrated to its DP marginal where public ``bounds``
are given. A table delegates to its conditionals
(as SDV's multi-table synthesizer delegates to its single-table ones); they book into the table's
ledger, through the same release protocol (:mod:`dpsynth.release.protocol`).

Privacy. Each conditional's record term depends on that record's own values (its target, the
public covariates and its earlier confidential columns) and on public quantities only, so each
conditional is as private as it would be alone (the introduction's "window" proposition), and the
table is their sequential (adaptive) composition. ``eps`` is the table's **total** under its
relation (:mod:`dpsynth.release.budget`): a DP released size's share once, the rest split over the
conditionals that are run at a target eps (equally, or in the public proportions ``eps_split``),
each carving its own reference and draw out of its part. aDP parts are listed apart, never summed.
An earlier confidential column enters the later models through public encodings only: its public
levels (categorical), or a public transform (``log``, ``logit``, ``log1p``) centred and scaled by
that column's DP reference (released and charged by its own conditional, ``censor_ref``), never by
statistics of the data. A release is booked once, with its new charges, in the data set's ledger.

The order of the columns is a public choice made before seeing the data; it changes which
relations each model has to carry (a column early in the order is modelled on the covariates
alone), not the guarantee.

Examples
--------
>>> import numpy as np, pandas as pd
>>> from dpsynth import TableSynthesizer
>>> rng = np.random.default_rng(1)
>>> z = rng.normal(size=500)
>>> df = pd.DataFrame({"income": np.exp(1 + 0.5 * z + rng.normal(0, 0.3, 500)),
...                    "visits": rng.poisson(np.exp(0.5 + 0.3 * z)), "z": z})
>>> t = TableSynthesizer(df, ["income", "visits"], covariates=["z"], eps=3.0)
>>> round(t.budget.total, 3), sorted(t.budget.parts)
(3.0, ['income', 'visits'])
"""

from __future__ import annotations

import dataclasses
import os
import secrets
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from .choice import AUTO, model_function_choice, table_column_choice
from .covariates import CovariateDesign, public_rows
from .privacy import check_neighbours
from .release.budget import Budget, DrawSlot, TableBudget, split_shares
from .release.mode import check_mode, resolve_mode
from .release.protocol import bar, release, show_progress
from .release.size import ReleaseSize, dp_count
from .release.statement import GUARANTEE_RANK, TablePrivacy
from .seeds import SeedLike, generator, stream
from .synthesizer import Synthesizer
from .table_synthesizer_io import TableSynthesizerIO
from .target import TargetEncoding
from .validation import DataError, check_bool, check_count, check_eps, positive_count

__all__ = ["TableSynthesizer", "TablePrivacy", "GUARANTEE_RANK", "NUMERIC_CELL_GROUPS"]

#: Groups a numeric column is cut into when it makes cells of a later conditional (its tertiles).
NUMERIC_CELL_GROUPS = 3


def _per_column(value, targets: Sequence[str], name: str, default=None) -> dict:
    """A per-column option: one value for every column, or a dict keyed by column."""
    if isinstance(value, Mapping):
        unknown = [k for k in value if k not in targets]
        if unknown:
            raise DataError(f"`{name}` names column(s) {unknown} that are not targets {list(targets)}.")
        return {t: value.get(t, default) for t in targets}
    return {t: default if value is None else value for t in targets}


class TableSynthesizer(TableSynthesizerIO):
    """Differentially private synthesis of several confidential columns of a DataFrame, one after another.

    Parameters
    ----------
    data : pandas.DataFrame
        The confidential columns and the public covariates (and no other column).
    targets : sequence of str
        The confidential columns, in the (public) order they are synthesized: each is modelled on
        the covariates and the columns before it. Each may be continuous, a count or categorical.
    covariates : sequence of str, optional
        Public columns, carried through to the synthetic table.
    eps : float, optional
        The table's **total** eps for its first release under its relation: a DP size's share, then
        the rest split over the columns whose mechanism is run at a target eps.
    eps_split : dict or sequence of float, optional
        Public proportions of that rest per column (normalised), instead of an equal split.
    models, mechanisms, model_params, mechanism_params, target_levels : optional
        Per column: one value for every column, or a dict keyed by column. Defaults: the model from
        the column's type, as for :class:`dpsynth.Synthesizer`; the mechanism ``"auto"``, resolved
        here by the whole-table rule (:func:`dpsynth.choice.table_column_choice`), so that each
        column's :class:`dpsynth.Synthesizer` is given a named mechanism.
    neighbours : {"remove", "replace"}, optional
        Default: ``"replace"`` with covariates (their rows and n are public), ``"remove"`` without.
    n_release, size_eps, sampler, keep_draws, releases, progress, standardize : optional
        As for :class:`dpsynth.Synthesizer` (``standardize`` applies to the public covariates).
    censor_warn_share, mode : optional
        As for :class:`dpsynth.Synthesizer` (``mode``: None, decided by whether ``fit`` is given a seed;
        ``"release"``, every random choice from the system's entropy; ``"research"``, seeded,
        reproducible, not a private release: :mod:`dpsynth.release.mode`).
    calibrate : dict, optional
        Column -> its ``calibrate`` setting (:class:`dpsynth.Synthesizer`): the column's synthetic values
        mapped by rank onto its DP marginal (public bounds required), the marginal's share taken out of
        the column's part.
    bounds : dict, optional
        Numeric column -> its public bounds ``(lower, upper)``, chosen without looking at the data.
        With ``mechanisms="auto"`` (the default) they let a narrow count be synthesized from its DP
        counts and a wide column be calibrated to its DP marginal (:func:`dpsynth.choice.table_column_choice`).
    """

    def __init__(
        self,
        data: pd.DataFrame,
        targets: Sequence[str],
        covariates: Sequence[str] | None = None,
        *,
        eps: float | None = None,
        eps_split: Mapping[str, float] | Sequence[float] | None = None,
        models=None,
        mechanisms=None,
        model_params=None,
        mechanism_params=None,
        target_levels=None,
        neighbours: str | None = None,
        n_release: int | None = None,
        size_eps: float | None = None,
        sampler=None,
        keep_draws: int = 10,
        releases: int = 1,
        progress: bool = True,
        standardize: bool | None = None,
        censor_warn_share: float = 0.5,
        mode: str | None = None,
        calibrate: Mapping[str, Mapping] | None = None,
        bounds: Mapping[str, Sequence | Mapping] | None = None,
    ) -> None:
        from .validation import check_table_columns

        if isinstance(targets, str) or not isinstance(targets, Sequence) or not targets:
            raise DataError(
                f"`targets` must be a list of column names (at least one); got {targets!r}. For one "
                f"column, dpsynth.Synthesizer does the same with fewer settings."
            )
        targets = [str(t) for t in targets]
        if len(set(targets)) != len(targets):
            raise DataError(f"`targets` lists a column twice: {targets}.")
        covs = check_table_columns(data, targets, covariates)
        self.targets, self.covariates = targets, covs
        self.columns = list(data.columns)
        self.dtypes = {c: str(data[c].dtype) for c in self.columns}
        self.relation = check_neighbours(neighbours if neighbours is not None else ("replace" if covs else "remove"))
        self.models = _per_column(models, targets, "models")
        self.mechanisms = _per_column(mechanisms, targets, "mechanisms", AUTO)
        self.model_params = _per_column(model_params, targets, "model_params")
        self.mechanism_params = _per_column(mechanism_params, targets, "mechanism_params")
        if not (isinstance(target_levels, Mapping) or target_levels is None):
            raise DataError(
                "`target_levels` must be a dict keyed by target column (the public levels of each categorical one)."
            )
        self.target_levels = _per_column(target_levels, targets, "target_levels")
        for name, value in (("calibrate", calibrate), ("bounds", bounds)):
            if value is not None and not isinstance(value, Mapping):
                raise DataError(f"`{name}` must be a dict keyed by target column, e.g. {{'price': (1000, 500000)}} "
                                f"(public bounds, chosen without looking at the data).")
        self.calibrate = _per_column(calibrate, targets, "calibrate")
        self.bounds = _per_column(bounds, targets, "bounds")
        self.encodings = {t: TargetEncoding.from_series(data[t], levels=self.target_levels[t],
                                                        declare=f"target_levels={{{t!r}: [...]}}") for t in targets}
        #: Why each column got its mechanism, where ``auto`` chose it (:func:`dpsynth.choice.table_column_choice`).
        self.choices = self._choose()
        self._check_mechanisms()
        self._check_values(data)
        self.n_release = None if n_release is None else positive_count(n_release, "n_release")
        if self.n_release is not None and self.relation == "replace":
            raise DataError(
                "`n_release` declares a public size under one record removed; with one record replaced the size is n."
            )
        self.size_eps = None if size_eps is None else check_eps(size_eps, "size_eps")
        self.eps = None if eps is None else check_eps(eps, "eps")
        self.eps_split = self._split_proportions(eps_split)
        self.keep_draws = positive_count(keep_draws, "keep_draws")
        self.releases = positive_count(releases, "releases")
        if self.releases > self.keep_draws:
            raise DataError(f"`releases` ({self.releases}) exceeds `keep_draws` ({self.keep_draws}): each released "
                            f"table needs its own posterior draws; keep at least as many draws.")
        self.progress = check_bool(progress, "progress")
        self._mode_setting = check_mode(mode)
        #: The run's mode (:mod:`dpsynth.release.mode`): decided by :meth:`fit` when ``mode`` is None.
        self.mode = self._mode_setting or "release"
        self._common = dict(sampler=sampler, keep_draws=self.keep_draws, releases=self.releases,
                            progress=self.progress, censor_warn_share=censor_warn_share)
        self.public = data[covs].reset_index(drop=True).copy()
        if standardize is None:
            standardize = self.relation == "replace"
        elif check_bool(standardize, "standardize") and self.relation == "remove":
            raise DataError(
                "`standardize=True` with one record removed would centre the covariates at figures of the "
                "data; use neighbours='replace' (their rows are then public)."
            )
        self._public_design = CovariateDesign.from_frame(self.public, covs, standardize=standardize)
        self._public_design.matrix(self.public)  # the covariates' values checked (missing, infinite)
        self._data = data[self.columns].reset_index(drop=True).copy()
        #: Values each bounded column moved to its public bounds (confidential: the parts' diagnostics show it).
        self._clamped = self._clamp()
        #: The table's total and its shares, under its relation, fixed before the fit (:mod:`dpsynth.release.budget`).
        self.budget = self._plan()
        self.parts: dict[str, Synthesizer] = {}
        self._size: ReleaseSize | None = None
        self.fit_log: list[str] = []
        self.fit_id = ""
        self.path: Path | None = None
        # last: every check of the input is done before the home (its key, its ledgers) is touched
        from .release.ledger import dataset_ids

        ids = list(dataset_ids(data, [*targets, *covs]).values())
        #: The data set's id (its ledger) and its ids under the home's other keys (their ledgers count with it).
        self.dataset, self.linked = ids[0], ids[1:]

    # ------------------------------------------------------------------ settings
    def _choose(self) -> dict[str, str]:
        """Resolve ``auto`` column by column (public facts only: the kind and the public bounds); return the
        reasons."""
        reasons = {}
        for t in self.targets:
            if self.mechanisms[t] != AUTO:
                continue
            c = table_column_choice(self.encodings[t].kind, self.bounds[t])
            if callable(self.models[t]):  # a model function: Censor_ref at its prior point
                from .models.user_function import qualname

                c = model_function_choice(c, qualname(self.models[t]))
            self.mechanisms[t] = c.mechanism
            if c.params:
                self.mechanism_params[t] = {**c.params, **(self.mechanism_params[t] or {})}
            if c.calibrate is not None and self.calibrate[t] is None:
                self.calibrate[t] = c.calibrate
            reasons[t] = f"{t}: {c.mechanism} ({c.reason})"
        return reasons

    def _check_values(self, data: pd.DataFrame) -> None:
        """Every target's values checked before the home is touched: as its model sees them (missing values, levels),
        their magnitude, a constant column a model cannot fit, and the public bounds given."""
        from .mechanisms import catalog
        from .synthesizer import check_bounds, check_magnitudes
        from .validation import check_not_constant

        check_magnitudes(data, self.targets, self.covariates)
        for j, t in enumerate(self.targets):
            enc = self.encodings[t]
            x = enc.to_model(data[t])
            if catalog.get(self.mechanisms[t]).uses_model:
                check_not_constant(x, t, self.models[t] or enc.default_model(bool(self.covariates) or j > 0))
            if enc.kind == "categorical":
                continue
            check_bounds(self.bounds[t], enc.kind)  # the bounds' form only: values outside them are clamped

    def public_bounds(self, t: str) -> tuple[float, float] | None:
        """Column ``t``'s public bounds in the data's unit (``bounds``, the mechanism's ``lower``/``upper`` or the
        calibration's), or None: the table clamps the column to them before any conditional is fitted."""
        from .synthesizer import check_bounds
        from .validation import _is_number

        if self.encodings[t].kind == "categorical":
            return None
        for b in (check_bounds(self.bounds[t], self.encodings[t].kind), self.mechanism_params[t], self.calibrate[t]):
            lo, hi = (b or {}).get("lower"), (b or {}).get("upper")
            if _is_number(lo) and _is_number(hi):
                return float(lo), float(hi)
        return None

    def _clamp(self) -> dict[str, int]:
        """Clamp every bounded target to its public bounds (as OpenDP's ``make_clamp``), before any fit: a transform
        of every record, so the later conditionals condition on the clamped columns too. Returns how many values each
        column moved (confidential)."""
        moved = {}
        for t in self.targets:
            b = self.public_bounds(t)
            if b is None:
                continue
            col = self._data[t].astype(float)
            clipped = col.clip(b[0], b[1])
            moved[t] = int((clipped != col).sum())
            if moved[t]:
                self._data[t] = clipped.astype(self._data[t].dtype) if self.encodings[t].kind == "count" else clipped
        return moved

    def _check_mechanisms(self) -> None:
        from .mechanisms import catalog

        for t in self.targets:
            if not isinstance(self.mechanisms[t], str) or catalog.lookup_name(self.mechanisms[t]) is None:
                raise DataError(
                    f"`mechanisms`[{t!r}] must be a registry key {catalog.runnable_keys()}; got {self.mechanisms[t]!r}."
                )

    def _takes_eps(self, t: str) -> bool:
        from .mechanisms import catalog

        return catalog.get(self.mechanisms[t]).takes_eps

    def _split_proportions(self, eps_split) -> dict | None:
        takes = [t for t in self.targets if self._takes_eps(t)]
        if self.eps is None and takes:
            raise DataError(f"`eps` is required: the mechanisms of {takes} run at a target eps (the table's total, "
                            f"split equally, or in the proportions eps_split).")
        if eps_split is None:
            return None
        if not isinstance(eps_split, Mapping):
            vals = list(eps_split)
            if len(vals) != len(self.targets):
                raise DataError(f"`eps_split` must give one proportion per target ({len(self.targets)}); got {vals!r}.")
            eps_split = dict(zip(self.targets, vals, strict=True))
        return {t: float(v) for t, v in eps_split.items() if t in takes or v is not None}

    def _dp_size(self) -> bool:
        return self.relation == "remove" and not self.covariates and self.n_release is None

    def _dp_reference(self, t: str) -> bool:
        from .mechanisms import catalog
        from .models import FAMILIES, PyMCFunctionFamily

        spec = catalog.get(self.mechanisms[t])
        if spec.releases_reference is None or not spec.uses_model:
            return False
        model = self.models[t] or self.encodings[t].default_model(True)
        if callable(model):
            fam = PyMCFunctionFamily(fn=model)
        else:
            kw = dict(self.model_params[t] or {})
            if FAMILIES[model].categorical:
                kw["n_levels"] = self.encodings[t].n_levels
            fam = FAMILIES[model](**kw)
        return bool(spec.releases_reference(self.mechanism_params[t] or {}, fam))

    def _plan(self) -> TableBudget:
        takes = [t for t in self.targets if self._takes_eps(t)]
        if self.eps is None or not takes:
            size = Budget.plan(None, self.relation, dp_size=self._dp_size(), dp_reference=False,
                               size_eps=self.size_eps).size
            return TableBudget(self.relation, None, size, {})
        from .release.budget import SIZE_SHARE

        size = 0.0
        if self._dp_size():
            size = self.size_eps if self.size_eps is not None else SIZE_SHARE * self.eps
        if size >= self.eps:
            raise DataError(f"the released size's share ({size:.4g}) takes all of eps = {self.eps:.4g}.")
        shares = split_shares(self.eps - size, takes, self.eps_split)
        parts = {t: Budget.plan(shares[t], self.relation, dp_size=False, dp_reference=self._dp_reference(t),
                                reference_eps=(self.mechanism_params[t] or {}).get("reference_eps"),
                                releases=self.releases, model_free=not self._uses_model(t),
                                dp_marginal=self.calibrate[t] is not None,
                                marginal_eps=None if not (self.calibrate[t] or {}).get("share")
                                else float(self.calibrate[t]["share"]) * shares[t])
                 for t in takes}
        return TableBudget(self.relation, self.eps, size, parts, self.releases)

    def _uses_model(self, t: str) -> bool:
        from .mechanisms import catalog

        return catalog.get(self.mechanisms[t]).uses_model

    def _predictor_design(self, upto: int) -> CovariateDesign:
        """The design of conditional ``upto``: the public covariates, then the earlier targets' public encodings."""
        pub = self._public_design
        levels, scaling, transforms = dict(pub.levels), dict(pub.scaling), dict(pub.transforms)
        for t in self.targets[:upto]:
            enc = self.encodings[t]
            if enc.kind == "categorical":
                levels[t] = [str(v) for v in enc.levels]
                continue
            part = self.parts[t]
            fam = part.family() if isinstance(part.model, str) else None
            kind = fam.reference_scale[0] if fam is not None and fam.reference_scale is not None else "identity"
            transforms[t] = kind
            extra = part.privacy.extra  # the part's DP reference (public once released)
            if extra.get("reference_source") == "dp" and "reference_loc" in extra:
                scaling[t] = (float(extra["reference_loc"]), float(extra["reference_scale"]))
        return CovariateDesign(
            columns=(*self.covariates, *self.targets[:upto]), levels=levels, scaling=scaling, transforms=transforms
        )

    def _part(self, j: int) -> Synthesizer:
        t = self.targets[j]
        cols = [t, *self.covariates, *self.targets[:j]]
        planned = self.budget.parts.get(t)
        frame = self._data[cols].copy()
        for c in self.targets[:j]:  # an earlier categorical column's levels are its PUBLIC ones, never those that occur
            enc = self.encodings[c]
            if enc.kind == "categorical":
                frame[c] = pd.Categorical(frame[c].astype(str), categories=[str(v) for v in enc.levels])
        params = {**self._automatic_cells(j), **(self.mechanism_params[t] or {})} or None
        return Synthesizer(
            frame, t, covariates=cols[1:], model=self.models[t], mechanism=self.mechanisms[t],
            eps=None if planned is None else planned.total, model_params=self.model_params[t],
            mechanism_params=params, neighbours=self.relation, target_levels=self.target_levels[t],
            design=self._predictor_design(j), part_of=self.dataset, confidential_covariates=self.targets[:j],
            calibrate=self.calibrate[t], mode=self.mode, **self._common,
        )

    def _automatic_cells(self, j: int) -> dict:
        """The cells of a conditional whose mechanism conditions through cells (:mod:`dpsynth.mechanisms.noise_aware`)
        and that was given none: the public covariates, then the earlier columns in the table's order, each taken
        while the cells number at most ``max_cells`` (a categorical column by its public levels, a numeric one cut
        into :data:`NUMERIC_CELL_GROUPS` groups: a public covariate at its own quantiles, whose rows are public; an
        earlier column at the quantiles of its conditional's DP release, post-processing). A numeric earlier column
        whose conditional released no distribution (a model-based one) is left out."""
        from .mechanisms import catalog

        t = self.targets[j]
        spec = catalog.get(self.mechanisms[t])
        given = self.mechanism_params[t] or {}
        if spec.covariate_use != "cells" or "cells" in given or "cell_edges" in given or "max_cells" not in spec.params:
            return {}
        limit = int(given.get("max_cells", spec.params["max_cells"].default))
        cells, edges, size = [], {}, 1
        for c in [*self.covariates, *self.targets[:j]]:
            k, cut = self._cell_factor(c)
            if k is not None and size * k <= limit:
                cells.append(c)
                size *= k
                if cut is not None:
                    edges[c] = cut
        return {"cells": cells, "cell_edges": edges or None}

    def _cell_factor(self, c: str) -> tuple[int | None, list | None]:
        """How many cells column ``c`` makes, and its cut points (None for a categorical one; ``(None, None)``: it
        cannot make cells from public facts or DP releases)."""
        probs = np.arange(1, NUMERIC_CELL_GROUPS) / NUMERIC_CELL_GROUPS
        if c in self.covariates:
            col = self.public[c]
            if not pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col):
                return (col.cat.categories.size if isinstance(col.dtype, pd.CategoricalDtype)
                        else col.astype(str).nunique()), None
            cut = sorted(set(np.quantile(col.to_numpy(dtype=float), probs).tolist()))
            return len(cut) + 1, cut
        enc = self.encodings[c]
        if enc.kind == "categorical":
            return len(enc.levels), None
        state = getattr(self.parts.get(c), "_release_state", None)
        population = getattr(state, "population", None)
        if population is None:
            return None, None
        p = np.asarray(population()).mean(axis=0)  # the released distribution's posterior mean over its bins
        edges = np.asarray(state.binning.edges, dtype=float)
        cdf = np.cumsum(p) / p.sum()
        cut = sorted({float(edges[1:][np.searchsorted(cdf, q)]) for q in probs} - {float(edges[-1])})
        if enc.kind == "count":
            cut = sorted({float(np.floor(v) + 0.5) if float(v).is_integer() else float(np.ceil(v)) for v in cut})
        return (len(cut) + 1, cut) if cut else (None, None)

    # ------------------------------------------------------------------ fit
    def fit(self, seed: SeedLike = None) -> TableSynthesizer:
        """Fit each conditional in order. Returns ``self``."""
        if self._data is None:
            raise DataError("this synthesizer was loaded without its confidential data; it can release, not fit.")
        from .release.home import check_open
        from .release.ledger import link_datasets

        check_open("fit")
        if self.linked:  # the data at hand: its ids under every key of the home are one data set from now on
            link_datasets([self.dataset, *self.linked])
        self.mode, seed = resolve_mode(self._mode_setting, seed)
        self.parts, self.fit_log = {}, []
        if self.choices and show_progress(self.progress):
            import sys

            print("mechanisms chosen (auto):\n  " + "\n  ".join(self.choices.values()), file=sys.stderr)
        self._size = self._released_size(seed)  # before the parts: settings chosen from n may read its DP count
        hint = None if self._size is None else self._size.n
        with bar(show_progress(self.progress), "columns", total=len(self.targets), unit="column") as progress:
            for j, t in enumerate(self.targets):
                progress.set_postfix_str(t)
                part = self._part(j)
                part.size_hint = hint
                planned = self.budget.parts.get(t)
                if planned is not None and part.budget != planned:
                    raise AssertionError(f"the conditional of {t!r} planned {part.budget}, the table {planned}")
                self.parts[t] = part.fit(seed=None if seed is None else stream(seed, "table", t))
                if t in self._clamped:  # the table clamped the column before the part saw it
                    part._privacy = dataclasses.replace(part._privacy, clamped=self._clamped[t])  # noqa: SLF001
                self.fit_log += [f"{t}: {line}" for line in part.fit_log]
                progress.update()
        self.fit_id = secrets.token_hex(8)
        return self

    def _released_size(self, seed: SeedLike = None) -> ReleaseSize | None:
        n = len(self._data)
        if self.relation == "replace":
            return ReleaseSize(n=n, how="replace")
        if self.covariates:
            return None
        if self.n_release is not None:
            return ReleaseSize(n=self.n_release, how="public")
        return dp_count(np.zeros(n), self.budget.size, mode=self.mode,
                        seed=stream(seed, "table", "size") if self.mode == "research" else None)

    @property
    def fitted(self) -> bool:
        """Whether every conditional is fitted."""
        return len(self.parts) == len(self.targets) and all(p.fitted for p in self.parts.values())

    @property
    def privacy(self) -> TablePrivacy:
        """The composed report (the same whether or not the parts' chains passed their checks: the diagnostics say)."""
        if not self.fitted:
            raise DataError("the table synthesizer is not fitted; call .fit() first.")
        reports = {t: p.privacy for t, p in self.parts.items()}
        return TablePrivacy(targets=tuple(self.targets), parts=tuple(reports[t] for t in self.targets),
                            relation=self.relation, budget=self.budget)

    # ------------------------------------------------------------------ synthetic tables
    def _public_frame(self, data) -> pd.DataFrame:
        frame = public_rows(data, self.covariates)
        self._public_design.matrix(frame)  # an unseen level fails here, before the ledger is touched
        return frame

    def release_frame(self, data: pd.DataFrame | None) -> tuple[pd.DataFrame, ReleaseSize]:
        """The public rows of a released table and how its size is set (the release protocol's interface)."""
        if data is not None:
            frame = self._public_frame(data)
            return frame, ReleaseSize(n=len(frame), how="public")
        if self._size is None:
            raise DataError(
                "with one record removed, releasing the confidential file's own covariate rows would "
                "reveal which records it holds. Give a public frame of covariates for the synthetic "
                "records (data=...), or fit with neighbours='replace'."
            )
        if self.covariates:
            return self.public, self._size
        return pd.DataFrame(index=range(self._size.n)), self._size

    def _synthetic_table(self, frame: pd.DataFrame, seed: SeedLike, draws: Mapping[str, int],
                         synthesis: str | None = None) -> tuple[pd.DataFrame, dict]:
        """One synthetic table for the rows of ``frame``: each column from its part's draw, on the synthetic columns
        before it. Returns the table and each column's reasons to refuse (read from its synthetic values)."""
        out = frame.reset_index(drop=True).copy()
        reasons = {}
        for t in self.targets:
            part = self.parts[t]
            if synthesis is None:
                df, why = part.synthesize(out[part.covariates], stream(seed, t), {t: draws[t]})
            else:
                df, why = part._synthetic_frame(out[part.covariates], stream(seed, t), draws[t], synthesis), []  # noqa: SLF001
            reasons[t] = why
            out[t] = df[t].to_numpy() if not isinstance(df[t].dtype, pd.CategoricalDtype) else df[t]
        return out[self.columns], reasons

    def sample_unaccounted(self, seed: SeedLike = None, *, data: pd.DataFrame | None = None,
                           draw: int | None = None, synthesis: str | None = None) -> pd.DataFrame:
        """For research only: one synthetic table NOT booked in any ledger (a row per fitted record). Do not publish.

        ``draw``: the kept posterior draw of every model-based conditional (modulo its draws; by default one at
        random per conditional), so that ``m`` tables from draws ``0 .. m-1`` each come from their own draws;
        ``synthesis`` overrides how noise-aware conditionals make their columns (``"draw"`` or ``"mean"``)."""
        p = self.privacy
        if self._data is None:
            raise DataError("a loaded synthesizer releases through the ledger only: use sample() or release().")
        frame = self.public if data is None else self._public_frame(data)
        if data is None and not self.covariates:
            frame = pd.DataFrame(index=range(len(self._data)))
        base = stream(seed, "sample")
        if draw is None:
            draws = {t: int(generator(stream(base, "draw", t)).integers(self.parts[t].n_draws)) for t in self.targets}
        else:
            k = check_count(draw, "draw", minimum=0)
            draws = {t: k % self.parts[t].n_draws for t in self.targets}
        df, _ = self._synthetic_table(frame, base, draws, synthesis)
        df.attrs = {"privacy_statement": "NOT A RELEASE: drawn for research, not booked in any ledger. "
                    + p.statement(), "accounted": False}
        return df

    def sample(self, seed: SeedLike = None, *, data: pd.DataFrame | None = None, budget: float | None = None,
               allow_unusable: bool = False, allow_research: bool = False) -> pd.DataFrame:
        """One released synthetic table, booked in the data set's ledger (its new charges), returned in memory."""
        return release(self, None, seed=seed, data=data, budget=budget, force=False, allow_unusable=allow_unusable,
                       allow_research=allow_research)

    def release(self, path_out: str | os.PathLike, *, seed: SeedLike = None, data: pd.DataFrame | None = None,
                budget: float | None = None, force: bool = False, allow_unusable: bool = False,
                allow_research: bool = False) -> pd.DataFrame:
        """Release one synthetic table: book it in the data set's ledger and write it (CSV or Parquet).

        The one release protocol (:func:`dpsynth.release.protocol.release`): one posterior draw of
        each conditional (one not released before while one is left), the later columns generated on
        the synthetic earlier ones; the statement gives the total and the split.
        """
        return release(self, path_out, seed=seed, data=data, budget=budget, force=force, allow_unusable=allow_unusable,
                       allow_research=allow_research)

    # ------------------------------------------------------------------ the release protocol's interface
    # (dpsynth.release.protocol.Releaser): called by the protocol under the ledger's lock; nothing here books.
    def draw_slots(self) -> dict[str, DrawSlot]:
        """Each conditional's fit, its kept draws and its report's budget (the table's size is its own budget's)."""
        return {t: self.parts[t].draw_slots()[t] for t in self.targets}

    def synthesize(self, frame: pd.DataFrame, seed: SeedLike, draws: Mapping[str, int]) -> tuple[pd.DataFrame, list]:
        """The synthetic table for the rows of ``frame`` from the draws picked, and why its values are unusable.

        For the release protocol: what it returns is not booked. Use :meth:`sample` or :meth:`release`."""
        df, reasons = self._synthetic_table(frame, seed, draws)
        return df, [f"{t}: {r}" for t in self.targets for r in reasons[t]]

    def ledger_labels(self) -> tuple[str, str]:
        """``(mechanism key, display name)`` of the ledger line."""
        return "table:" + "+".join(self.mechanisms[t] for t in self.targets), self.name

    @property
    def name(self) -> str:
        """A display name: the parts' mechanisms."""
        names = [self.parts[t].privacy.name if t in self.parts else self.mechanisms[t]
                 for t in self.targets]
        return "Table(" + ", ".join(names) + ")"

    # ------------------------------------------------------------------ report
    def kinds(self) -> dict[str, str]:
        """Each column's kind for the comparisons: the targets' own, ``"categorical"`` or ``"continuous"`` for a
        public covariate (:func:`dpsynth.covariates.is_categorical` on the data)."""
        from .covariates import is_categorical

        out = {}
        for c in self.covariates:
            cat = c in self._public_design.levels
            if not cat and self._data is not None:
                cat = is_categorical(self._data[c])
            out[c] = "categorical" if cat else "continuous"
        out.update({t: self.encodings[t].kind for t in self.targets})
        return {c: out[c] for c in self.columns}

    def report(self, released: pd.DataFrame, out_dir: str | os.PathLike, *, original: pd.DataFrame | None = None,
               force: bool = False, title: str | None = None) -> Path:
        """Write a CONFIDENTIAL page that sets a released table against the confidential one.

        ``out_dir/report.html`` and its PNG figures show the privacy statement (total and split) and the
        diagnostics, each column's marginal, the pairwise relations, the regression of each numeric
        confidential column on the others, and the pMSE. A loaded synthesizer holds no confidential
        data: pass it as ``original``.
        """
        from .table_report import write_table_report

        p = self.privacy
        if original is None:
            if self._data is None:
                raise DataError(
                    "this synthesizer was loaded without its confidential data; pass the confidential table "
                    "explicitly: report(released, out_dir, original=df) (on the command line --data FILE)."
                )
            original = self._data
        for name, f in (("original", original), ("released", released)):
            if not isinstance(f, pd.DataFrame):
                raise DataError(f"`{name}` must be a pandas DataFrame; got {type(f).__name__}.")
            missing = [c for c in self.columns if c not in f.columns]
            if missing:
                raise DataError(
                    f"`{name}` lacks the synthesizer's column(s) {missing}; its columns are {list(f.columns)}."
                )
        return write_table_report(original[self.columns], released[self.columns], targets=self.targets,
                                  kinds=self.kinds(), statement=p.statement(), diagnostics=p.diagnostics(),
                                  out_dir=out_dir, title=title, force=force)
