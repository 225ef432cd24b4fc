"""Whole-table release: several confidential columns synthesized one after another, one guarantee.

A :class:`TableSynthesizer` takes a DataFrame with several confidential columns (continuous, counts,
categorical) and public covariates. It synthesizes the confidential columns in a public order, each
from its own model conditional on the public covariates and the columns before it (the sequential,
chain-rule synthesis of synthpop; Nowok, Raab and Dibben 2016): ``p(y_1 | z) p(y_2 | z, y_1) ...``.
Each conditional is a :class:`dpsynth.Synthesizer` with its own family and mechanism from the
registry (by default the model from the column's type and the unit-free censored likelihood), and
a released table is generated column by column from **one posterior draw of each conditional**, the
later columns conditioned on the *synthetic* earlier ones.

Privacy. Each conditional's record term depends on that record's own values (its target, the
public covariates and its earlier confidential columns) and on public quantities only, so each
conditional is as private as it would be alone (the introduction's "window" proposition), and the
table is their sequential (adaptive) composition: the statement gives the **sum** of the strict-DP
parts under the synthesizer's neighbour relation, and the split. aDP parts are listed apart, never
summed (as in the ledger). An earlier confidential column enters the later models through public
encodings only: its public levels (categorical), or a public transform (``log``, ``logit``,
``log1p``) centred and scaled by that column's DP reference (released and charged by its own
conditional, ``censor_ref``), never by statistics of the data. ``eps`` is split equally across the
conditionals unless ``eps_split`` says otherwise; a DP reference and a DP released size add their
own small epsilons, charged and stated. The released size is handled as for one column: public
with one record replaced (the default with covariates), a DP count or a declared size with one
record removed. A release is booked once, with its total, in the data set's ledger.

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
>>> t.fit(seed=1).privacy.statement()  # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .covariates import CovariateDesign
from .privacy import check_neighbours
from .release_size import ReleaseSize, dp_count
from .seeds import SeedLike, generator, stream
from .synthesizer import (
    Synthesizer,
    SynthesizerPrivacy,
    UnconvergedError,
    UnusableReleaseError,
    _bar,
    _show_progress,
)
from .target import TargetEncoding
from .validation import DataError, check_bool, check_eps, positive_count

__all__ = ["TableSynthesizer", "TablePrivacy", "GUARANTEE_RANK"]

#: Guarantees from the weakest to the strongest; a table's is its weakest part's.
GUARANTEE_RANK = {"none": 0, "aDP": 1, "DP": 2}
_KIND = "table"


def _phrase(relation: str) -> str:
    return {"remove": "one record removed", "replace": "one record replaced"}[relation]


@dataclass(frozen=True)
class TablePrivacy:
    """What a fitted :class:`TableSynthesizer` reports: its parts' reports and their composition.

    Attributes
    ----------
    targets : tuple of str
        The confidential columns, in the order they are synthesized.
    parts : tuple of SynthesizerPrivacy
        Each conditional's report (its eps includes its DP reference's).
    relation : str
        The neighbour relation of the statement and the ledger.
    """

    targets: tuple
    parts: tuple
    relation: str

    @property
    def guarantee(self) -> str:
        """The weakest part's guarantee."""
        return min((p.guarantee for p in self.parts), key=GUARANTEE_RANK.__getitem__)

    def _sum(self, attr: str, guarantee: str) -> float:
        return float(sum(getattr(p, attr) for p in self.parts if p.guarantee == guarantee))

    @property
    def eps_remove(self) -> float:
        """Strict-DP total of one release's draws with one record removed (sequential composition)."""
        return self._sum("eps_remove", "DP")

    @property
    def eps_replace(self) -> float:
        """Strict-DP total with one record replaced."""
        return self._sum("eps_replace", "DP")

    @property
    def eps(self) -> float:
        """The strict-DP total under the table's relation."""
        return self.eps_remove if self.relation == "remove" else self.eps_replace

    def part_eps(self, p: SynthesizerPrivacy) -> float:
        """A part's epsilon under the table's relation."""
        return p.eps_remove if self.relation == "remove" else p.eps_replace

    @property
    def adp_eps(self) -> float:
        """The aDP parts' local epsilons under the table's relation (listed apart, not a guarantee)."""
        return float(sum(self.part_eps(p) for p in self.parts if p.guarantee == "aDP"))

    @property
    def converged(self) -> bool:
        """Whether every part's fit passed its convergence checks."""
        return all(p.converged for p in self.parts)

    def statement(self) -> str:
        """The public statement of one released table."""
        rel = _phrase(self.relation)
        split = "; ".join(
            f"{t}: {p.name} ({p.guarantee}) eps = {self.part_eps(p):.4g}"
            for t, p in zip(self.targets, self.parts, strict=True)
        )
        dp = [t for t, p in zip(self.targets, self.parts, strict=True) if p.guarantee == "DP"]
        s = (
            f"Whole-table release of {len(self.targets)} confidential column(s) ({', '.join(self.targets)}), each "
            f"from one posterior draw of its conditional model: "
        )
        if dp:
            s += (
                f"strict DP eps = {self.eps:.4g} with {rel} (the sum over {', '.join(dp)}"
                + (
                    f"; {self.eps_replace if self.relation == 'remove' else self.eps_remove:.4g} with "
                    f"{_phrase('replace' if self.relation == 'remove' else 'remove')}"
                )
                + ")"
            )
        else:
            s += "no strictly DP part"
        adp = [t for t, p in zip(self.targets, self.parts, strict=True) if p.guarantee == "aDP"]
        if adp:
            s += (
                f"; aDP parts ({', '.join(adp)}: eps = {self.adp_eps:.4g} for this data set only) are listed "
                f"apart, not summed"
            )
        none = [t for t, p in zip(self.targets, self.parts, strict=True) if p.guarantee == "none"]
        if none:
            s += f"; NOT PRIVATE: {', '.join(none)}"
        return s + f". Split: {split}."

    def diagnostics(self) -> str:
        """The parts' confidential figures, one line each."""
        return "\n".join(f"{t}: {p.diagnostics()}" for t, p in zip(self.targets, self.parts, strict=True))

    def worth(self, keep_draws: int) -> str:
        """What holding the saved synthesizer is worth: each kept draw of each part could be released."""
        return (
            f"it holds up to {keep_draws} posterior draw(s) of each of its {len(self.parts)} conditional(s): "
            f"whoever has it can release each of them, so sharing it is worth up to {keep_draws} x "
            f"{self.eps:.4g} = {keep_draws * self.eps:.4g} with {_phrase(self.relation)} (strict-DP parts; plus "
            f"a released size's eps). Keep it confidential."
        )


def _per_column(value, targets: Sequence[str], name: str, default=None) -> dict:
    """A per-column option: one value for every column, or a dict keyed by column."""
    if isinstance(value, Mapping):
        unknown = [k for k in value if k not in targets]
        if unknown:
            raise DataError(f"`{name}` names column(s) {unknown} that are not targets {list(targets)}.")
        return {t: value.get(t, default) for t in targets}
    return {t: default if value is None else value for t in targets}


class TableSynthesizer:
    """Differentially private synthesis of several confidential columns of a DataFrame, one after another.

    Parameters
    ----------
    data : pandas.DataFrame
        The confidential columns and the public covariates (and no other column).
    targets : sequence of str
        The confidential columns, in the (public) order they are synthesized: each is modelled on
        the covariates and the columns before it. Each may be continuous, a count or categorical
        (see :class:`dpsynth.Synthesizer`).
    covariates : sequence of str, optional
        Public columns, carried through to the synthetic table.
    eps : float, optional
        The mechanisms' epsilon with one record removed, summed over the columns: split equally
        unless ``eps_split`` is given. DP references and a DP size add their own, stated.
    eps_split : dict or sequence of float, optional
        Each column's mechanism epsilon (removal), instead of an equal split of ``eps``.
    models, mechanisms, model_params, mechanism_params, target_levels : optional
        Per column: one value for every column, or a dict keyed by column. Defaults as for
        :class:`dpsynth.Synthesizer` (the model from the column's type, ``censor_ref``).
    neighbours : {"remove", "replace"}, optional
        Default: ``"replace"`` with covariates (their rows and n are public), ``"remove"`` without.
    n_release, size_eps, sampler, keep_draws, retries, progress, standardize : optional
        As for :class:`dpsynth.Synthesizer` (``standardize`` applies to the public covariates).
    censor_warn_share, allow_unconverged, max_censored_share : optional
        As for :class:`dpsynth.Synthesizer`.
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
        size_eps: float = 0.1,
        sampler=None,
        keep_draws: int = 10,
        retries: int = 2,
        progress: bool = True,
        standardize: bool | None = None,
        censor_warn_share: float = 0.5,
        allow_unconverged: bool = False,
        max_censored_share: float = 0.9,
    ) -> None:
        from .ledger import dataset_id

        if not isinstance(data, pd.DataFrame):
            raise DataError(f"`data` must be a pandas DataFrame; got {type(data).__name__}.")
        if isinstance(targets, str) or not isinstance(targets, Sequence) or not targets:
            raise DataError(
                f"`targets` must be a list of column names (at least one); got {targets!r}. For one "
                f"column, dpsynth.Synthesizer does the same with fewer settings."
            )
        targets = [str(t) for t in targets]
        covs = [] if covariates is None else covariates
        if isinstance(covs, str):
            raise DataError(f"`covariates` must be a list of column names; got the string {covs!r}.")
        covs = [str(c) for c in covs]
        if len(set(targets)) != len(targets):
            raise DataError(f"`targets` lists a column twice: {targets}.")
        both = [c for c in covs if c in targets]
        if both:
            raise DataError(f"column(s) {both} are in both `targets` and `covariates`; a column is one or the other.")
        missing = [c for c in [*targets, *covs] if c not in data.columns]
        if missing:
            raise DataError(f"column(s) {missing} are not in `data`; its columns are {list(data.columns)}.")
        extra = [c for c in data.columns if c not in targets and c not in covs]
        if extra:
            raise DataError(
                f"`data` has column(s) {extra} that are neither targets nor covariates; drop them (they "
                f"would not be released) or list them."
            )
        if len(data) == 0:
            raise DataError("`data` has no rows.")
        self.targets, self.covariates = targets, covs
        self.columns = list(data.columns)
        self.dtypes = {c: str(data[c].dtype) for c in self.columns}
        self.relation = check_neighbours(neighbours if neighbours is not None else ("replace" if covs else "remove"))
        self.models = _per_column(models, targets, "models")
        self.mechanisms = _per_column(mechanisms, targets, "mechanisms", "censor_ref")
        self.model_params = _per_column(model_params, targets, "model_params")
        self.mechanism_params = _per_column(mechanism_params, targets, "mechanism_params")
        self.target_levels = (
            _per_column(target_levels, targets, "target_levels")
            if isinstance(target_levels, Mapping) or target_levels is None
            else None
        )
        if self.target_levels is None:
            raise DataError(
                "`target_levels` must be a dict keyed by target column (the public levels of each categorical one)."
            )
        self.encodings = {t: TargetEncoding.from_series(data[t], levels=self.target_levels[t]) for t in targets}
        self.eps_split = self._split(eps, eps_split)
        self.eps = (
            None
            if all(v is None for v in self.eps_split.values())
            else float(sum(v for v in self.eps_split.values() if v is not None))
        )
        self.n_release = None if n_release is None else positive_count(n_release, "n_release")
        if self.n_release is not None and self.relation == "replace":
            raise DataError(
                "`n_release` declares a public size under one record removed; with one record replaced the size is n."
            )
        self.size_eps = check_eps(size_eps, "size_eps")
        self.keep_draws = positive_count(keep_draws, "keep_draws")
        self.progress = check_bool(progress, "progress")
        self._common = dict(
            sampler=sampler,
            keep_draws=self.keep_draws,
            retries=retries,
            progress=self.progress,
            censor_warn_share=censor_warn_share,
            allow_unconverged=allow_unconverged,
            max_censored_share=max_censored_share,
        )
        self.allow_unconverged = check_bool(allow_unconverged, "allow_unconverged")
        self.public = data[covs].reset_index(drop=True).copy()
        if standardize is None:
            standardize = self.relation == "replace"
        elif check_bool(standardize, "standardize") and self.relation == "remove":
            raise DataError(
                "`standardize=True` with one record removed would centre the covariates at figures of the "
                "data; use neighbours='replace' (their rows are then public)."
            )
        self._public_design = CovariateDesign.from_frame(self.public, covs, standardize=standardize)
        self.dataset = dataset_id(data, [*targets, *covs], self.relation)
        self._data = data[self.columns].reset_index(drop=True).copy()
        self.parts: dict[str, Synthesizer] = {}
        self._size: ReleaseSize | None = None
        self.fit_log: list[str] = []
        self.path: Path | None = None
        self._check_mechanisms()

    # ------------------------------------------------------------------ settings
    def _split(self, eps, eps_split) -> dict:
        from .mechanisms import catalog

        takes = {
            t: catalog.get(self.mechanisms[t]).takes_eps if catalog.lookup_name(self.mechanisms[t]) else True
            for t in self.targets
        }
        if eps_split is not None:
            if isinstance(eps_split, Mapping):
                split = _per_column(eps_split, self.targets, "eps_split")
            else:
                vals = list(eps_split)
                if len(vals) != len(self.targets):
                    raise DataError(f"`eps_split` must give one eps per target ({len(self.targets)}); got {vals!r}.")
                split = dict(zip(self.targets, vals, strict=True))
            for t, v in split.items():
                if takes[t] and v is None:
                    raise DataError(f"`eps_split` lacks column {t!r}, whose mechanism {self.mechanisms[t]} takes eps.")
                if v is not None:
                    split[t] = check_eps(v, f"eps_split[{t!r}]")
            if eps is not None and not np.isclose(sum(v for v in split.values() if v is not None), eps):
                raise DataError(f"`eps` = {eps!r} is not the sum of `eps_split` {split}; give one of them.")
            return split
        n_takes = sum(takes.values())
        if eps is None:
            if n_takes:
                need = [t for t in self.targets if takes[t]]
                raise DataError(
                    f"`eps` is required: the mechanisms of {need} run at a target eps (split equally, or "
                    f"give eps_split)."
                )
            return {t: None for t in self.targets}
        e = check_eps(eps, "eps")
        return {t: (e / n_takes if takes[t] else None) for t in self.targets}

    def _check_mechanisms(self) -> None:
        from .mechanisms import catalog

        for t in self.targets:
            if not isinstance(self.mechanisms[t], str) or catalog.lookup_name(self.mechanisms[t]) is None:
                raise DataError(
                    f"`mechanisms`[{t!r}] must be a registry key {catalog.runnable_keys()}; got {self.mechanisms[t]!r}."
                )

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
            extra = part._privacy.extra  # noqa: SLF001 - the part's DP reference (public once released)
            if extra.get("reference_source") == "dp" and "reference_loc" in extra:
                scaling[t] = (float(extra["reference_loc"]), float(extra["reference_scale"]))
        return CovariateDesign(
            columns=(*self.covariates, *self.targets[:upto]), levels=levels, scaling=scaling, transforms=transforms
        )

    def _part(self, j: int) -> Synthesizer:
        t = self.targets[j]
        cols = [t, *self.covariates, *self.targets[:j]]
        s = Synthesizer(
            self._data[cols],
            t,
            covariates=cols[1:],
            model=self.models[t],
            mechanism=self.mechanisms[t],
            eps=self.eps_split[t],
            model_params=self.model_params[t],
            mechanism_params=self.mechanism_params[t],
            neighbours=self.relation,
            target_levels=self.target_levels[t],
            design=self._predictor_design(j),
            **self._common,
        )
        s._table_part = True  # noqa: SLF001 - the table sets the released size
        return s

    # ------------------------------------------------------------------ fit
    def fit(self, seed: SeedLike = None) -> TableSynthesizer:
        """Fit each conditional in order. Returns ``self``."""
        if self._data is None:
            raise DataError("this synthesizer was loaded without its confidential data; it can release, not fit.")
        self.parts, self.fit_log = {}, []
        with _bar(_show_progress(self.progress), "columns", total=len(self.targets), unit="column") as bar:
            for j, t in enumerate(self.targets):
                bar.set_postfix_str(t)
                part = self._part(j)
                self.parts[t] = part.fit(seed=stream(seed, "table", t))
                self.fit_log += [f"{t}: {line}" for line in part.fit_log]
                bar.update()
        self._size = self._released_size()
        return self

    def _released_size(self) -> ReleaseSize | None:
        n = len(self._data)
        if self.relation == "replace":
            return ReleaseSize(n=n, how="replace")
        if self.covariates:
            return None
        if self.n_release is not None:
            return ReleaseSize(n=self.n_release, how="public")
        return dp_count(np.zeros(n), self.size_eps)

    @property
    def fitted(self) -> bool:
        """Whether every conditional is fitted."""
        return len(self.parts) == len(self.targets) and all(p.fitted for p in self.parts.values())

    @property
    def privacy(self) -> TablePrivacy:
        """The composed report; raises :class:`UnconvergedError` when a part failed its checks (unless allowed)."""
        if not self.fitted:
            raise DataError("the table synthesizer is not fitted; call .fit(seed=...) first.")
        bad = [t for t, p in self.parts.items() if not p._privacy.converged]  # noqa: SLF001
        if bad and not self.allow_unconverged:
            raise UnconvergedError(
                f"the fit(s) of {bad} failed their convergence checks: no privacy figure is "
                f"reported. Increase draws/tune, or pass allow_unconverged=True to accept them."
            )
        return TablePrivacy(
            targets=tuple(self.targets),
            parts=tuple(self.parts[t]._privacy for t in self.targets),  # noqa: SLF001
            relation=self.relation,
        )

    # ------------------------------------------------------------------ synthetic tables
    def _public_frame(self, data) -> pd.DataFrame:
        if not isinstance(data, pd.DataFrame):
            raise DataError(f"`data` must be a DataFrame of the public covariates; got {type(data).__name__}.")
        missing = [c for c in self.covariates if c not in data.columns]
        if missing:
            raise DataError(f"`data` lacks the covariate column(s) {missing}; its columns are {list(data.columns)}.")
        if len(data) == 0:
            raise DataError("`data` has no rows: a release has one synthetic record per row of public covariates.")
        frame = (
            data[self.covariates].reset_index(drop=True) if self.covariates else pd.DataFrame(index=range(len(data)))
        )
        self._public_design.matrix(frame)  # an unseen level fails here, before the ledger is touched
        return frame

    def _release_frame(self, data) -> tuple[pd.DataFrame, ReleaseSize]:
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

    def _synthetic_table(
        self, frame: pd.DataFrame, seed: SeedLike, draws: Mapping[str, int]
    ) -> tuple[pd.DataFrame, dict]:
        """One synthetic table for the rows of ``frame``: each column from its part's draw, on the synthetic columns
        before it. Returns the table and each column's model values (for the checks)."""
        out = frame.reset_index(drop=True).copy()
        values = {}
        for t in self.targets:
            part = self.parts[t]
            df = part._synthetic_frame(out[part.covariates], stream(seed, t), draws[t])  # noqa: SLF001
            values[t] = np.asarray(df.attrs.pop("model_values"), dtype=float)
            out[t] = df[t].to_numpy() if not isinstance(df[t].dtype, pd.CategoricalDtype) else df[t]
        return out[self.columns], values

    def _pick_draws(self, seed: SeedLike, used: Mapping[str, set]) -> dict:
        draws = {}
        for t in self.targets:
            S = self.parts[t].n_draws
            free = [s for s in range(S) if s not in used.get(t, set())]
            rng = generator(stream(seed, "draw", t))
            draws[t] = int(rng.choice(free)) if free else int(rng.integers(S))
        return draws

    def sample_unaccounted(self, seed: SeedLike = None, *, data: pd.DataFrame | None = None) -> pd.DataFrame:
        """For research only: one synthetic table NOT booked in any ledger (a row per fitted record). Do not publish."""
        p = self.privacy
        frame = self.public if data is None else self._public_frame(data)
        if data is None and not self.covariates:
            frame = pd.DataFrame(index=range(len(self._data) if self._data is not None else self._size.n))
        base = stream(seed, "sample")
        df, _ = self._synthetic_table(frame, base, self._pick_draws(base, {}))
        df.attrs = {
            "privacy_statement": "NOT A RELEASE: drawn for research, not booked in any ledger. " + p.statement(),
            "accounted": False,
        }
        return df

    def sample(
        self,
        seed: SeedLike = None,
        *,
        data: pd.DataFrame | None = None,
        budget: float | None = None,
        allow_unusable: bool = False,
    ) -> pd.DataFrame:
        """One released synthetic table, booked once (its total) in the data set's ledger, returned in memory."""
        return self._release(None, seed=seed, data=data, budget=budget, force=False, allow_unusable=allow_unusable)

    def release(
        self,
        path_out: str | os.PathLike,
        *,
        seed: SeedLike = None,
        data: pd.DataFrame | None = None,
        budget: float | None = None,
        force: bool = False,
        allow_unusable: bool = False,
    ) -> pd.DataFrame:
        """Release one synthetic table: book it in the data set's ledger and write it (CSV or Parquet).

        As :meth:`dpsynth.Synthesizer.release`: one posterior draw of each conditional (one not
        released before while one is left), the later columns generated on the synthetic earlier
        ones; the statement gives the total and the split.
        """
        return self._release(path_out, seed=seed, data=data, budget=budget, force=force, allow_unusable=allow_unusable)

    @property
    def name(self) -> str:
        """A display name: the parts' mechanisms."""
        names = [
            self.parts[t]._privacy.name if t in self.parts else self.mechanisms[t]  # noqa: SLF001
            for t in self.targets
        ]
        return "Table(" + ", ".join(names) + ")"

    def _release(self, path_out, *, seed, data, budget, force, allow_unusable) -> pd.DataFrame:
        from .ledger import Ledger
        from .synthesizer_files import check_output_path, write_frame

        p = self.privacy
        out = None if path_out is None else check_output_path(path_out, force=check_bool(force, "force"))
        allow_unusable = check_bool(allow_unusable, "allow_unusable")
        frame, size = self._release_frame(data)
        overrides = [] if p.converged else ["unconverged fit(s) (allow_unconverged)"]
        ident = self.checksum
        with (
            _bar(_show_progress(self.progress), "release", total=3, unit="step") as bar,
            Ledger(self.dataset, self.relation).locked() as book,
        ):
            mine = [r for r in book.records() if r["kind"] == "release" and r["synthesizer"] == ident]
            used = {t: {int(r["draw"][t]) for r in mine} for t in self.targets}
            base = stream(seed, "release")
            draws = self._pick_draws(base, used)
            eps_dp = eps_adp = 0.0
            for t, part in zip(self.targets, p.parts, strict=True):
                if draws[t] in used[t]:
                    continue  # a draw released before costs nothing more
                if part.guarantee == "DP":
                    eps_dp += p.part_eps(part)
                elif part.guarantee == "aDP":
                    eps_adp += p.part_eps(part)
            eps_size = size.eps if size.how == "dp_count" and not any(r["eps_size"] > 0 for r in mine) else 0.0
            spend = eps_dp + eps_size
            book.check_budget(p.guarantee, spend, budget)
            df, values = self._synthetic_table(frame, stream(base, "sample"), draws)
            bar.update()
            reasons = [f"{t}: {r}" for t in self.targets for r in self.parts[t]._unusable(values[t])]  # noqa: SLF001
            if reasons and not allow_unusable:
                raise UnusableReleaseError(
                    "release refused: " + "; ".join(reasons) + ". Nothing was written or booked. Fix the fit(s), or "
                    "pass allow_unusable=True, which the statement and the ledger record."
                )
            overrides += [f"unusable values released: {r}" for r in reasons]
            statement = p.statement() + f" Released size: {size.phrase()}"
            if size.how == "dp_count":
                statement += " (charged in this release)" if eps_size > 0 else " (already charged)"
            statement += f". This release added eps = {spend:.4g} of strict DP to the data set's ledger."
            if overrides:
                statement += " Released with override(s): " + "; ".join(overrides) + "."
            df.attrs = {
                "privacy_statement": statement,
                "guarantee": p.guarantee,
                "relation": p.relation,
                "eps": p.eps,
                "eps_size": eps_size,
                "spend": spend,
                "rows": len(df),
                "size": size.how,
                "draws": draws,
                "overrides": overrides,
                "accounted": True,
            }
            if out is not None:
                write_frame(df, out)
            bar.update()
            try:
                book.append(
                    mechanism=_KIND + ":" + "+".join(self.mechanisms[t] for t in self.targets),
                    name=self.name,
                    guarantee=p.guarantee,
                    eps=eps_dp,
                    eps_size=eps_size,
                    spend=spend,
                    adp_eps=eps_adp,
                    draw=draws,
                    rows=len(df),
                    output=str(out) if out is not None else "<in memory>",
                    synthesizer=ident,
                    overrides=overrides,
                )
            except BaseException:
                if out is not None and out.exists():
                    out.unlink()
                raise
            bar.update()
        return df

    # ------------------------------------------------------------------ save / load
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

    def report(
        self,
        released: pd.DataFrame,
        out_dir: str | os.PathLike,
        *,
        original: pd.DataFrame | None = None,
        force: bool = False,
        title: str | None = None,
    ) -> Path:
        """Write a CONFIDENTIAL page that sets a released table against the confidential one.

        ``out_dir/report.html`` and its PNG figures show the privacy statement (total and split) and the
        diagnostics, each column's marginal, the pairwise relations (associations and contingency tables),
        the regression of each numeric confidential column on the others, and the pMSE.

        Parameters
        ----------
        released : pandas.DataFrame
            A table released by this synthesizer (:meth:`sample`, or the file :meth:`release` wrote).
        out_dir : path-like
            The report's folder (created if its parent exists); an existing report is refused unless ``force``.
        original : pandas.DataFrame, optional
            The confidential table; by default the data the synthesizer was fitted on. A loaded
            synthesizer holds no confidential data: pass it here.
        force : bool
            Replace an existing report.
        title : str, optional
            The page's title.

        Returns
        -------
        pathlib.Path
            The HTML file written.
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
        return write_table_report(
            original[self.columns],
            released[self.columns],
            targets=self.targets,
            kinds=self.kinds(),
            statement=p.statement(),
            diagnostics=p.diagnostics(),
            out_dir=out_dir,
            title=title,
            force=force,
        )

    def _content(self) -> dict:
        from .synthesizer_files import jsonable

        if not self.fitted:
            raise DataError("fit the table synthesizer before saving it.")
        parts = {}
        for t in self.targets:
            c = self.parts[t]._content()  # noqa: SLF001
            c["public_covariates"] = {}  # the table holds the public rows once; earlier targets are confidential
            parts[t] = c
        public = {
            c: (
                self.public[c].astype(str).tolist()
                if c in self._public_design.levels
                else self.public[c].to_numpy(dtype=float).tolist()
            )
            for c in self.covariates
        }
        return jsonable(
            {
                "confidential": True,
                "kind": _KIND,
                "worth": self.privacy.worth(self.keep_draws)
                if self.privacy.converged or self.allow_unconverged
                else "",
                "settings": {
                    "targets": self.targets,
                    "covariates": self.covariates,
                    "columns": self.columns,
                    "dtypes": self.dtypes,
                    "relation": self.relation,
                    "eps_split": self.eps_split,
                    "mechanisms": self.mechanisms,
                    "n_release": self.n_release,
                    "size_eps": self.size_eps,
                    "keep_draws": self.keep_draws,
                    "progress": self.progress,
                    "allow_unconverged": self.allow_unconverged,
                },
                "dataset": self.dataset,
                "size": None if self._size is None else dataclasses.asdict(self._size),
                "public_levels": self._public_design.levels,
                "public_scaling": {c: list(v) for c, v in self._public_design.scaling.items()},
                "public_covariates": public,
                "parts": parts,
            }
        )

    def save(self, path: str | os.PathLike, *, force: bool = False) -> Path:
        """Write the fitted table synthesizer to JSON (owner-readable only, with a SHA-256); no confidential column."""
        from .synthesizer_files import check_output_path, write_saved

        out = check_output_path(path, force=check_bool(force, "force"), suffixes=(".json",))
        return write_saved(out, self._content())

    @classmethod
    def load(cls, path: str | os.PathLike) -> TableSynthesizer:
        """Read a saved table synthesizer; each part is checked as :meth:`dpsynth.Synthesizer.load` checks one."""
        from .synthesizer_files import read_saved

        path = Path(path)
        content = read_saved(path)
        if content.get("kind") != _KIND:
            raise DataError(f"{path} is a one-column synthesizer; load it with dpsynth.Synthesizer.load.")
        st = content["settings"]
        self = cls.__new__(cls)
        self.targets, self.covariates = list(st["targets"]), list(st["covariates"])
        self.columns, self.dtypes, self.relation = list(st["columns"]), dict(st["dtypes"]), st["relation"]
        self.eps_split, self.mechanisms = dict(st["eps_split"]), dict(st["mechanisms"])
        self.eps = (
            None
            if all(v is None for v in self.eps_split.values())
            else float(sum(v for v in self.eps_split.values() if v is not None))
        )
        self.n_release, self.size_eps = st["n_release"], float(st["size_eps"])
        self.keep_draws, self.progress = int(st["keep_draws"]), bool(st["progress"])
        self.allow_unconverged = bool(st["allow_unconverged"])
        self.dataset = str(content["dataset"])
        self._size = None if content["size"] is None else ReleaseSize(**content["size"])
        self._public_design = CovariateDesign(
            columns=tuple(self.covariates),
            levels=content["public_levels"],
            scaling={c: tuple(v) for c, v in content["public_scaling"].items()},
        )
        public = pd.DataFrame({c: content["public_covariates"][c] for c in self.covariates}, columns=self.covariates)
        for c in self.covariates:
            if c not in self._public_design.levels:
                public[c] = public[c].astype(self.dtypes[c])
        self.public = public
        self._data, self.fit_log, self.path = None, [], path
        self.parts = {}
        for j, t in enumerate(self.targets):
            part = content["parts"][t]
            frame = public.iloc[:1].reset_index(drop=True).copy()
            for prev in self.targets[:j]:  # placeholders of the earlier (confidential) columns: the design's width
                enc = self.parts[prev].encoding
                frame[prev] = [str(enc.levels[0])] if enc.kind == "categorical" else [0.5]
            self.parts[t] = Synthesizer._from_content(part, path, public=frame)  # noqa: SLF001
            self.parts[t]._table_part = True  # noqa: SLF001
        self.encodings = {t: self.parts[t].encoding for t in self.targets}
        return self

    @property
    def checksum(self) -> str:
        """SHA-256 of the saved contents (identifies the synthesizer in a ledger)."""
        from .synthesizer_files import digest

        return digest(self._content())
