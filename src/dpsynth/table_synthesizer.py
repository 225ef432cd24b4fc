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
ledger, through the same release protocol (:mod:`dpsynth.release.protocol`). It goes in the same
steps as one column: its configuration (:class:`~dpsynth.synthesizer_config.TableSynthesizerConfig`),
its plan (:class:`~dpsynth.table_synthesizer_plan.TablePlan`: each column's mechanism, the budget),
its fitted conditionals.

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

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from .covariates import CovariateDesign, public_rows
from .release.budget import DrawSlot
from .release.mode import resolve_mode
from .release.protocol import bar, release, show_progress
from .release.size import ReleaseSize, dp_count
from .release.statement import GUARANTEE_RANK, TablePrivacy
from .seeds import SeedLike, generator, stream
from .synthesizer import Synthesizer
from .synthesizer_config import TableSynthesizerConfig, check_bounds
from .synthesizer_fit import TableState
from .table_synthesizer_io import TableSynthesizerIO
from .table_synthesizer_plan import TablePlan
from .target import TargetEncoding
from .validation import DataError, check_count

__all__ = ["TableSynthesizer", "TablePrivacy", "GUARANTEE_RANK", "NUMERIC_CELL_GROUPS", "TableState"]

#: Groups a numeric column is cut into when it makes cells of a later conditional (its tertiles).
NUMERIC_CELL_GROUPS = 3


def _setting(name: str, doc: str, convert=None) -> property:
    return property(lambda self: getattr(self.config, name) if convert is None else convert(getattr(self.config, name)),
                    doc=doc)


def _planned(name: str, doc: str) -> property:
    return property(lambda self: getattr(self.plan, name), doc=doc)


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

    Attributes
    ----------
    config : TableSynthesizerConfig
        The settings, each checked (:mod:`dpsynth.synthesizer_config`).
    plan : TablePlan
        What is fixed before the fit (:mod:`dpsynth.table_synthesizer_plan`).
    parts : dict of str to Synthesizer
        The fitted conditionals, by target.
    state : TableState or None
        What the fit left besides them.
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

        config = TableSynthesizerConfig.from_arguments(locals())  # every setting checked alone, by its validator
        targets = list(config.targets)
        covs = check_table_columns(data, targets, list(config.covariates))
        encodings = {t: TargetEncoding.from_series(data[t], levels=config.target_levels[t],
                                                   declare=f"target_levels={{{t!r}: [...]}}") for t in targets}
        public = data[covs].reset_index(drop=True).copy()
        plan = TablePlan.make(config, encodings, public)
        self._assemble(config, plan, encodings=encodings, columns=list(data.columns),
                       dtypes={c: str(data[c].dtype) for c in data.columns}, public=public)
        self._check_values(data)
        self._data = data[self.columns].reset_index(drop=True).copy()
        #: Values each bounded column moved to its public bounds (confidential: the parts' diagnostics show it).
        self._clamped = self._clamp()
        self._check_support()  # every column against its family, before any fit
        # last: every check of the input is done before the home (its key, its ledgers) is touched
        from .release.ledger import dataset_ids

        ids = list(dataset_ids(data, [*targets, *covs]).values())
        #: The data set's id (its ledger) and its ids under the home's other keys (their ledgers count with it).
        self.dataset, self.linked = ids[0], ids[1:]

    def _assemble(self, config: TableSynthesizerConfig, plan: TablePlan, *, encodings: Mapping[str, TargetEncoding],
                  columns: list[str], dtypes: dict, public: pd.DataFrame,
                  parts: Mapping[str, Synthesizer] | None = None, state: TableState | None = None, dataset: str = "",
                  linked: Sequence[str] = ()) -> None:
        """The table's parts: its configuration, plan, fitted conditionals and state, and its data's public facts."""
        #: The settings (:class:`~dpsynth.synthesizer_config.TableSynthesizerConfig`).
        self.config = config
        #: What is fixed before the fit (:class:`~dpsynth.table_synthesizer_plan.TablePlan`).
        self.plan = plan
        #: The fitted conditionals, by target (empty before the fit).
        self.parts: dict[str, Synthesizer] = dict(parts or {})
        #: What the fit left besides them (None before it).
        self.state = state
        self.encodings = dict(encodings)
        self.columns, self.dtypes = list(columns), dict(dtypes)
        self.public = public[list(config.covariates)].reset_index(drop=True)
        #: Progress bars (shown on a terminal only); a loaded table's may be switched off.
        self.progress = config.progress
        self._data, self._clamped, self.path = None, {}, None
        self.dataset, self.linked = dataset, list(linked)

    @classmethod
    def from_config(cls, config: TableSynthesizerConfig, plan: TablePlan, *, parts: Mapping[str, Synthesizer],
                    state: TableState, columns: list[str], dtypes: dict, public: pd.DataFrame, dataset: str,
                    linked: Sequence[str] = ()) -> TableSynthesizer:
        """A fitted table from its configuration, plan, fitted conditionals and state, without the confidential data
        (as :meth:`load` reads one): it releases, and cannot refit."""
        self = cls.__new__(cls)
        self._assemble(config, plan, encodings={t: parts[t].encoding for t in config.targets}, columns=columns,
                       dtypes=dtypes, public=public, parts=parts, state=state, dataset=dataset, linked=linked)
        return self

    # ------------------------------------------------------------------ settings and plan
    targets = _setting("targets", "The confidential columns, in the (public) order they are synthesized.", list)
    covariates = _setting("covariates", "The public covariates.", list)
    eps = _setting("eps", "The table's total eps of its first release(s).")
    n_release = _setting("n_release", "A released size declared public, or None.")
    size_eps = _setting("size_eps", "The DP count's share of ``eps`` as given, or None (the rule's).")
    keep_draws = _setting("keep_draws", "Posterior draws each conditional keeps.")
    releases = _setting("releases", "How many released tables ``eps`` pays for.")
    models = _setting("models", "Each column's model (None: from its type).")
    model_params = _setting("model_params", "Each column's family settings.")
    target_levels = _setting("target_levels", "Each categorical column's public levels.")
    bounds = _setting("bounds", "Each numeric column's public bounds, or None.")
    choices = _planned("choices", "Why each column got its mechanism, where ``auto`` chose it.")
    mechanisms = _planned("mechanisms", "Each column's registry key.")
    mechanism_params = _planned("mechanism_params", "Each column's mechanism parameters.")
    calibrate = _planned("calibrate", "Each column's calibration to its DP marginal, or None.")
    relation = _planned("relation", "The neighbour relation of every eps.")
    eps_split = _planned("eps_split", "The public proportions of the total per column, or None (equal).")
    budget = _planned("budget", "The table's total and its shares, fixed before the fit.")
    mode = _planned("mode", "The run's mode: decided by :meth:`fit` when ``mode`` is None.")

    @property
    def fit_id(self) -> str:
        """Names the table's fit in the ledger (``""`` before the fit)."""
        return "" if self.state is None else self.state.fit_id

    @property
    def fit_log(self) -> list[str]:
        """What the parts' fits did besides fitting once. Confidential."""
        return [] if self.state is None else list(self.state.log)

    def _check_values(self, data: pd.DataFrame) -> None:
        """Every target's values checked before the home is touched: as its model sees them (missing values, levels),
        their magnitude, a constant column a model cannot fit, and the public bounds given."""
        from .mechanisms import catalog
        from .synthesizer_checks import check_magnitudes
        from .validation import check_not_constant

        check_magnitudes(data, self.targets, self.covariates)
        for j, t in enumerate(self.targets):
            enc = self.encodings[t]
            x = enc.to_model(data[t])
            if catalog.get(self.mechanisms[t]).uses_model:
                check_not_constant(x, t, self.model_of(t) or enc.default_model(bool(self.covariates) or j > 0))
            if enc.kind == "categorical":
                continue
            check_bounds(self.bounds[t], enc.kind)  # the bounds' form only: values outside them are clamped

    def model_of(self, t: str):
        """Column ``t``'s model: as given in ``models``, else the one ``auto`` chose (the ordinal regression where the
        public bounds take values the default family cannot), else None (the default family of its type)."""
        return self.plan.model_of(self.config, t)

    def _check_support(self) -> None:
        """Every model-based column's (clamped) values against the support of its family, before any conditional is
        fitted: a column no family of the plan can take is refused in seconds, naming the column and the family
        that takes it, instead of at its turn in the chain."""
        from .mechanisms import catalog
        from .models import FAMILIES

        for j, t in enumerate(self.targets):
            enc = self.encodings[t]
            if enc.kind == "categorical" or not catalog.get(self.mechanisms[t]).uses_model:
                continue
            model = self.model_of(t) or enc.default_model(bool(self.covariates) or j > 0)
            if not isinstance(model, str) or model == "ordinal":
                continue
            try:
                family = FAMILIES[model]()
            except TypeError:  # a family that needs settings to be built checks its data at the fit
                continue
            try:
                family._check_support(enc.to_model(self._data[t]))  # noqa: SLF001 - the family's own rule
            except DataError as err:
                bounds = self.public_bounds(t)
                fix = (f"models={{{t!r}: 'ordinal'}} (the ordinal regression over public bins between its bounds "
                       f"{bounds[0]:g} and {bounds[1]:g}, which takes zeros, negatives and heaps)" if bounds is not None
                       else f"bounds={{{t!r}: (lower, upper)}}, public bounds chosen without looking at the data: "
                            "with a lower bound at or below 0 the table fits it with the ordinal regression over "
                            "public bins, which takes zeros, negatives and heaps")
                raise DataError(f"column {t!r} (column {j + 1} of {len(self.targets)}) does not fit the {model} "
                                f"family: {err} Nothing was fitted. Give {fix}.") from None

    def public_bounds(self, t: str) -> tuple[float, float] | None:
        """Column ``t``'s public bounds in the data's unit (``bounds``, the mechanism's ``lower``/``upper`` or the
        calibration's), or None: the table clamps the column to them before any conditional is fitted."""
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

    def _predictor_design(self, upto: int) -> CovariateDesign:
        """The design of conditional ``upto``: the public covariates, then the earlier targets' public encodings."""
        pub = self.plan.design
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
        c = self.config
        model, model_params = self.model_of(t), self.model_params[t]
        if model == "ordinal" and not (model_params or {}).get("bins"):  # its public bins cut between its bounds
            from .bins import default_bins

            b = self.public_bounds(t)
            if b is None:
                raise DataError(f"column {t!r}: the ordinal model cuts public bins between public bounds; give "
                                f"bounds={{{t!r}: (lower, upper)}}.")
            model_params = {**(model_params or {}), "bins": default_bins(self.encodings[t].kind, *b).to_dict()}
        return Synthesizer(
            frame, t, covariates=cols[1:], model=model, mechanism=self.mechanisms[t],
            eps=None if planned is None else planned.total, model_params=model_params,
            mechanism_params=params, neighbours=self.relation, target_levels=self.target_levels[t],
            design=self._predictor_design(j), part_of=self.dataset, confidential_covariates=self.targets[:j],
            calibrate=self.calibrate[t], mode=self.mode, sampler=c.sampler, keep_draws=c.keep_draws,
            releases=c.releases, progress=self.progress, censor_warn_share=c.censor_warn_share,
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
        part = self.parts.get(c)
        state = None if part is None or part.state is None else part.state.release
        population = getattr(state, "population", None)
        if population is None:
            return None, None
        p = np.asarray(population()).mean(axis=0)  # the released distribution's posterior mean over its bins
        ends = state.binning.upper_values()  # each bin's largest value: a cut there separates whole bins
        cdf = np.cumsum(p) / p.sum()
        cut = sorted({float(ends[np.searchsorted(cdf, q)]) for q in probs} - {float(ends[-1])})
        if enc.kind == "count":
            cut = sorted({float(np.floor(v) + 0.5) if float(v).is_integer() else float(np.ceil(v)) for v in cut})
        else:  # a cell holds values below its cut point: the bin's largest value stays with its bin
            cut = sorted({float(np.nextafter(v, np.inf)) for v in cut})
        return (len(cut) + 1, cut) if cut else (None, None)

    # ------------------------------------------------------------------ fit
    def fit(self, seed: SeedLike = None) -> TableSynthesizer:
        """Fit each conditional in order. Returns ``self``."""
        if self._data is None:
            raise DataError("this synthesizer was loaded without its confidential data; it can release, not fit.")
        from .release.home import check_open
        from .release.ledger import link_datasets
        from .synthesizer_fit import new_fit_id

        check_open("fit")
        if self.linked:  # the data at hand: its ids under every key of the home are one data set from now on
            link_datasets([self.dataset, *self.linked])
        mode, seed = resolve_mode(self.plan.mode_setting, seed)
        self.plan = self.plan.for_mode(mode)
        self.parts, self.state, log = {}, None, []
        if self.choices and show_progress(self.progress):
            import sys

            print("mechanisms chosen (auto):\n  " + "\n  ".join(self.choices.values()), file=sys.stderr)
        size = self._released_size(seed)  # before the parts: settings chosen from n may read its DP count
        hint = None if size is None else size.n
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
                    part.state = part.state.clamped_by(self._clamped[t])
                log += [f"{t}: {line}" for line in part.fit_log]
                progress.update()
        self.state = TableState(fit_id=new_fit_id(), size=size, log=log)
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
        self.plan.design.matrix(frame)  # an unseen level fails here, before the ledger is touched
        return frame

    def release_frame(self, data: pd.DataFrame | None) -> tuple[pd.DataFrame, ReleaseSize]:
        """The public rows of a released table and how its size is set (the release protocol's interface)."""
        if data is not None:
            frame = self._public_frame(data)
            return frame, ReleaseSize(n=len(frame), how="public")
        size = None if self.state is None else self.state.size
        if size is None:
            raise DataError(
                "with one record removed, releasing the confidential file's own covariate rows would "
                "reveal which records it holds. Give a public frame of covariates for the synthetic "
                "records (data=...), or fit with neighbours='replace'."
            )
        if self.covariates:
            return self.public, size
        return pd.DataFrame(index=range(size.n)), size

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
            cat = c in self.plan.design.levels
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
