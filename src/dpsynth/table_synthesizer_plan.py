"""What is fixed before a whole table's fit: :class:`TablePlan`, from its configuration and public facts.

As a :class:`dpsynth.Synthesizer` goes from its configuration to its plan to its fitted state
(:mod:`dpsynth.synthesizer_plan`), a :class:`dpsynth.TableSynthesizer` does: its configuration
(:class:`~dpsynth.synthesizer_config.TableSynthesizerConfig`), this plan, then the fitted conditionals it
delegates to. The plan resolves ``mechanisms="auto"`` column by column from public facts
(:func:`dpsynth.choice.table_column_choice`: the column's kind and its public bounds), checks the
settings together, encodes the public covariates, and splits the table's total into its budget
(:class:`~dpsynth.release.budget.TableBudget`): a DP size's share once, the rest over the columns run at
a target eps, each carving its own reference and draw out of its part.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from .choice import AUTO, model_function_choice, table_column_choice
from .covariates import CovariateDesign
from .privacy import check_neighbours
from .release.budget import SIZE_SHARE, Budget, TableBudget, split_shares
from .release.mode import check_mode
from .synthesizer_config import TableSynthesizerConfig, dump_design, load_design, plain_params
from .target import TargetEncoding
from .validation import DataError, check_bool

__all__ = ["TablePlan"]


def _spec(key: str):
    from .mechanisms import catalog

    return catalog.get(key)


@dataclass(frozen=True)
class TablePlan:
    """What is fixed before a table's fit (the module docstring).

    Attributes
    ----------
    choices : dict of str to str
        Why each column got its mechanism, where ``auto`` chose it.
    mechanisms : dict of str to str
        Each column's registry key (``auto`` resolved).
    mechanism_params, calibrate : dict of str to dict or None
        Each column's mechanism parameters and calibration, with what ``auto`` filled in.
    relation : str
        The neighbour relation of every eps.
    eps_split : dict or None
        The public proportions of the total per column run at a target eps (None: equal).
    budget : TableBudget
        The table's total and its shares.
    design : CovariateDesign
        The public covariates' encoding.
    mode_setting, mode : str or None, str
        The mode asked for (None: the fit decides) and the run's mode.
    """

    choices: dict
    mechanisms: dict
    mechanism_params: dict
    calibrate: dict
    relation: str
    eps_split: dict | None
    budget: TableBudget
    design: CovariateDesign
    mode_setting: str | None = None
    mode: str = "release"
    models: dict = dataclasses.field(default_factory=dict)

    def model_of(self, config: TableSynthesizerConfig, t: str):
        """Column ``t``'s model: as configured, else the one ``auto`` needs (:attr:`models`), else None (its type's
        default family)."""
        return config.models[t] if config.models[t] is not None else self.models.get(t)

    @classmethod
    def make(cls, config: TableSynthesizerConfig, encodings: Mapping[str, TargetEncoding],
             public: pd.DataFrame) -> TablePlan:
        """The plan of ``config`` for targets with these encodings and these public covariate rows."""
        mechanisms, params, calibrate, choices = (dict(config.mechanisms), dict(config.mechanism_params),
                                                  dict(config.calibrate), {})
        models: dict = {}
        for t in config.targets:  # auto, column by column, from public facts only: the kind and the public bounds
            if mechanisms[t] != AUTO:
                continue
            c = table_column_choice(encodings[t].kind, config.bounds[t])
            if callable(config.models[t]):  # a model function: Censor_ref at its prior point
                from .models.user_function import qualname

                c = model_function_choice(c, qualname(config.models[t]))
            mechanisms[t] = c.mechanism
            if c.params:
                params[t] = {**c.params, **(params[t] or {})}
            if c.calibrate is not None and calibrate[t] is None:
                calibrate[t] = c.calibrate
            if c.model is not None and config.models[t] is None:
                models[t] = c.model
            choices[t] = f"{t}: {c.mechanism}{f' ({c.model} model)' if t in models else ''} ({c.reason})"
        from .mechanisms import catalog

        for t in config.targets:
            if not isinstance(mechanisms[t], str) or catalog.lookup_name(mechanisms[t]) is None:
                raise DataError(
                    f"`mechanisms`[{t!r}] must be a registry key {catalog.runnable_keys()}; got {mechanisms[t]!r}."
                )
        relation = check_neighbours(config.relation)
        if config.n_release is not None and relation == "replace":
            raise DataError(
                "`n_release` declares a public size under one record removed; with one record replaced the size is n."
            )
        if config.releases > config.keep_draws:
            raise DataError(f"`releases` ({config.releases}) exceeds `keep_draws` ({config.keep_draws}): each released "
                            f"table needs its own posterior draws; keep at least as many draws.")
        takes = [t for t in config.targets if _spec(mechanisms[t]).takes_eps]
        if config.eps is None and takes:
            raise DataError(f"`eps` is required: the mechanisms of {takes} run at a target eps (the table's total, "
                            f"split equally, or in the proportions eps_split).")
        split = config.eps_split
        if split is not None and not isinstance(split, Mapping):
            if len(split) != len(config.targets):
                raise DataError(f"`eps_split` must give one proportion per target ({len(config.targets)}); got "
                                f"{split!r}.")
            split = dict(zip(config.targets, split, strict=True))
        if split is not None:
            split = {t: float(v) for t, v in split.items() if t in takes or v is not None}
        standardize = config.standardize
        if standardize is None:
            standardize = relation == "replace"
        elif check_bool(standardize, "standardize") and relation == "remove":
            raise DataError(
                "`standardize=True` with one record removed would centre the covariates at figures of the "
                "data; use neighbours='replace' (their rows are then public)."
            )
        design = CovariateDesign.from_frame(public, list(config.covariates), standardize=standardize)
        design.matrix(public)  # the covariates' values checked (missing, infinite)
        plan = cls(choices=choices, mechanisms=mechanisms, mechanism_params=params, calibrate=calibrate,
                   relation=relation, eps_split=split, budget=TableBudget(relation, None), design=design,
                   mode_setting=check_mode(config.mode), mode=config.mode or "release", models=models)
        return dataclasses.replace(plan, budget=plan._budget(config, encodings))

    def dp_size(self, config: TableSynthesizerConfig) -> bool:
        """Whether a release over the fitted records needs a DP count of its size (one record removed, no public
        size)."""
        return self.relation == "remove" and not config.covariates and config.n_release is None

    def _dp_reference(self, config: TableSynthesizerConfig, encodings: Mapping[str, TargetEncoding], t: str) -> bool:
        from .models import FAMILIES, PyMCFunctionFamily

        spec = _spec(self.mechanisms[t])
        if spec.releases_reference is None or not spec.uses_model:
            return False
        model = self.model_of(config, t) or encodings[t].default_model(True)
        if callable(model):
            fam = PyMCFunctionFamily(fn=model)
        else:
            kw = dict(config.model_params[t] or {})
            if model == "ordinal" and not kw.get("bins"):  # its bins (cut at the fit) do not change the answer
                return bool(spec.releases_reference(self.mechanism_params[t] or {}, FAMILIES[model]))
            if FAMILIES[model].categorical:
                kw["n_levels"] = encodings[t].n_levels
            fam = FAMILIES[model](**kw)
        return bool(spec.releases_reference(self.mechanism_params[t] or {}, fam))

    def _budget(self, config: TableSynthesizerConfig, encodings: Mapping[str, TargetEncoding]) -> TableBudget:
        takes = [t for t in config.targets if _spec(self.mechanisms[t]).takes_eps]
        if config.eps is None or not takes:
            size = Budget.plan(None, self.relation, dp_size=self.dp_size(config), dp_reference=False,
                               size_eps=config.size_eps).size
            return TableBudget(self.relation, None, size, {})
        size = 0.0
        if self.dp_size(config):
            size = config.size_eps if config.size_eps is not None else SIZE_SHARE * config.eps
        if size >= config.eps:
            raise DataError(f"the released size's share ({size:.4g}) takes all of eps = {config.eps:.4g}.")
        shares = split_shares(config.eps - size, takes, self.eps_split)
        parts = {t: Budget.plan(shares[t], self.relation, dp_size=False,
                                dp_reference=self._dp_reference(config, encodings, t),
                                reference_eps=(self.mechanism_params[t] or {}).get("reference_eps"),
                                releases=config.releases, model_free=not _spec(self.mechanisms[t]).uses_model,
                                dp_marginal=self.calibrate[t] is not None,
                                marginal_eps=None if not (self.calibrate[t] or {}).get("share")
                                else float(self.calibrate[t]["share"]) * shares[t])
                 for t in takes}
        return TableBudget(self.relation, config.eps, size, parts, config.releases)

    def for_mode(self, mode: str) -> TablePlan:
        """This plan in the mode the fit decided."""
        return dataclasses.replace(self, mode=mode)

    def to_dict(self) -> dict:
        """Plain JSON (a saved table's ``"plan"``)."""
        from .synthesizer_files import jsonable

        return jsonable({
            "choices": self.choices, "mechanisms": self.mechanisms,
            "mechanism_params": {t: plain_params(v) for t, v in self.mechanism_params.items()},
            "calibrate": self.calibrate, "relation": self.relation, "eps_split": self.eps_split,
            "budget": self.budget.to_dict(), "design": dump_design(self.design), "mode_setting": self.mode_setting,
            "mode": self.mode, "models": self.models,
        })

    @classmethod
    def from_dict(cls, d: Mapping) -> TablePlan:
        """Read :meth:`to_dict`."""
        return cls(choices=dict(d["choices"]), mechanisms=dict(d["mechanisms"]),
                   mechanism_params=dict(d["mechanism_params"]), calibrate=dict(d["calibrate"]),
                   relation=check_neighbours(d["relation"]), eps_split=d["eps_split"],
                   budget=TableBudget.from_dict(d["budget"]), design=load_design(d["design"]),
                   mode_setting=d["mode_setting"], mode=str(d["mode"]), models=dict(d.get("models") or {}))
