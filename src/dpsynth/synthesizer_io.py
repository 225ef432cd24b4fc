"""Saving and loading synthesizers: the ModelIO-style mixins of :class:`~dpsynth.Synthesizer` and
:class:`~dpsynth.TableSynthesizer` (the latter's in :mod:`dpsynth.table_synthesizer_io`), apart from the model.

As pymc-marketing's ``ModelIO`` writes a model's configuration beside its fit and rebuilds the model
from it, a saved synthesizer is its configuration (:meth:`SynthesizerConfig.to_dict
<dpsynth.synthesizer_config.SynthesizerConfig.to_dict>`), its plan
(:class:`~dpsynth.synthesizer_plan.SynthesizerPlan`) and its fitted state
(:class:`~dpsynth.synthesizer_fit.FittedState`), with the public facts releases need (the target's
encoding, the columns, the public covariates) and the data set's id (which ledger its releases are
booked in) and its ids under the home's other keys at fit time (whose ledgers count with it).
:meth:`SynthesizerIO.load` rebuilds the synthesizer from them through its classmethod constructor
(:meth:`dpsynth.Synthesizer.from_config`).

* :meth:`~SynthesizerIO.save` refuses, naming it, a setting of the synthesizer's ``__init__`` or a field of
  its configuration that would not be written (a setting added without its configuration field would
  otherwise be lost on load);
* :meth:`~SynthesizerIO.load` refuses, in one line naming it, a file whose configuration lacks a field
  or has an unknown one.

The file is one JSON document (no pickle) authenticated under the home's key
(:mod:`dpsynth.synthesizer_files`, :mod:`dpsynth.release.home`): any edit is refused on load; a file
written in another home is refused with the fix. On top of that, a loaded report is re-derived from
the settings where they determine it (the guarantee from the mechanism's spec, the clamp from the
budget and :func:`dpsynth.privacy.censoring_bound`), as a check of the file against the code that reads it.
Files saved by an earlier version of dpsynth (format version 4 and before, which held a flat list of
settings) are refused with the fix: fit the synthesizer again.

Holding a saved synthesizer is worth what its kept draws could release (:meth:`worth`); it is
written owner-only, and holds no confidential column unless asked (``include_confidential``).
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Mapping
from dataclasses import fields
from pathlib import Path

import pandas as pd

from .synthesizer_config import ConfigError
from .validation import DataError, check_bool

__all__ = ["SynthesizerIO", "check_written_settings"]


def _public_columns(frame: pd.DataFrame, columns, levels) -> dict:
    return {c: frame[c].astype(str).tolist() if c in levels else frame[c].to_numpy(dtype=float).tolist()
            for c in columns}


def _public_frame(saved: dict, columns, levels, dtypes) -> pd.DataFrame:
    frame = pd.DataFrame({c: saved[c] for c in columns}, columns=list(columns))
    for c in columns:
        if c not in levels:
            frame[c] = frame[c].astype(dtypes[c])
    return frame


def check_written_settings(cls: type, config_class: type, written: Mapping) -> None:
    """Refuse to save when a setting would not be written: a parameter of ``cls.__init__`` (but its data) or a field
    of ``config_class`` missing from ``written`` (the configuration's dict), named in the error.

    Raises
    ------
    ConfigError
        Naming the first setting missing.
    """
    init = [p for p in inspect.signature(cls.__init__).parameters if p not in ("self", "data")]
    settings = [*(f.name for f in fields(config_class)), *init]
    missing = [name for name in dict.fromkeys(settings) if name not in written]
    if missing:
        raise ConfigError(f"cannot save: the setting {missing[0]!r} of {cls.__name__} is not in what would be "
                          f"written (its configuration, {config_class.__name__}), so a loaded copy would lose it; "
                          f"add it to {config_class.__name__}.")


def refuse(path, why: str) -> DataError:
    """The one-line refusal of a saved file that does not match the code that reads it."""
    return DataError(f"{path}: refusing to load: {why}. The file does not match the code that reads it; use the file "
                     f"`save` wrote with this version.")


class SynthesizerIO:
    """Save and load of a :class:`~dpsynth.Synthesizer` (a mixin: the model class holds no file code)."""

    def saved_content(self) -> dict:
        """What :meth:`save` writes (authenticated by :func:`dpsynth.synthesizer_files.write_saved`): the configuration,
        the plan, the fitted state and the public facts; never the confidential column or the record weights."""
        from .synthesizer_config import SynthesizerConfig
        from .synthesizer_files import jsonable

        if self.state is None:
            raise DataError("fit the synthesizer before saving it.")
        config = self.config.to_dict()
        check_written_settings(type(self), SynthesizerConfig, config)
        return jsonable({
            "confidential": True,
            "kind": "column",
            "worth": self.privacy.worth(),
            "config": config,
            "plan": self.plan.to_dict(),
            "target": self.encoding.to_dict(),
            "columns": self.columns,
            "dtypes": self.dtypes,
            "public_covariates": _public_columns(self.public, self.covariates, self.levels),
            "dataset": self.dataset,
            "linked": list(self.linked),
            **self.state.to_dict(draws=self._saved_draws()),
        })

    def _saved_draws(self) -> dict | None:
        """The kept draws a file holds: a model function's free parameters only (never a deterministic: it may be
        any figure the function computed), checked again here against the compiled model when there is one."""
        if self.draws is None:
            return None
        draws = dict(self.draws)
        if callable(self.model) and self._cm is not None:
            params = set(self._cm.param_names)
            draws = {k: v for k, v in draws.items() if k in params}
        return draws

    def save(self, path: str | os.PathLike, *, force: bool = False, include_confidential: bool = False) -> Path:
        """Write the fitted synthesizer to JSON (no pickle), owner-readable only, authenticated under the home's key.

        The file holds what later releases need (the configuration, the plan with its budget, the kept draws,
        the public covariates, the data set's id, the report). It is marked confidential: whoever has it can
        release each kept draw (its ``worth``). It never holds the confidential column or the record weights;
        with ``include_confidential=True`` they go to ``<stem>.CONFIDENTIAL.json`` beside it.

        Returns
        -------
        pathlib.Path
            The path written.

        Raises
        ------
        ConfigError
            When a setting of the synthesizer would not be written (:func:`check_written_settings`).
        """
        from .synthesizer_files import check_output_path, write_confidential, write_saved

        out = check_output_path(path, force=check_bool(force, "force"), suffixes=(".json",))
        written = write_saved(out, self.saved_content())
        if include_confidential:
            write_confidential(written, self.target, self.encoding.from_model(self._x), self.state.weights)
        return written

    @classmethod
    def load(cls, path: str | os.PathLike):
        """Read a saved synthesizer: its MAC under this home's key is checked, and its report re-derived.

        The loaded synthesizer samples and releases without the confidential data; it cannot refit. A file saved
        by an earlier version of dpsynth is refused (fit the synthesizer again).
        """
        from .synthesizer_files import read_saved

        path = Path(path)
        content = read_saved(path)
        if content.get("kind") == "table":
            raise DataError(f"{path} is a whole-table synthesizer; load it with dpsynth.TableSynthesizer.load.")
        return cls.from_content(content, path)

    @classmethod
    def from_content(cls, content: Mapping, path, public: pd.DataFrame | None = None):
        """A synthesizer from saved contents (``public``: its covariate rows, when the contents do not hold them)."""
        from .synthesizer_config import SynthesizerConfig
        from .synthesizer_fit import FittedState
        from .synthesizer_plan import SynthesizerPlan
        from .target import TargetEncoding

        try:
            config = SynthesizerConfig.from_dict(content["config"])
        except ConfigError as e:
            raise refuse(path, str(e)) from None
        plan = SynthesizerPlan.from_dict(content["plan"])
        if public is None:
            public = _public_frame(content["public_covariates"], config.covariates, plan.design.levels,
                                   content["dtypes"])
        self = cls.from_config(config, plan, encoding=TargetEncoding.from_dict(content["target"]),
                               columns=content["columns"], dtypes=content["dtypes"], public=public,
                               state=FittedState.from_dict(content, plan.spec), dataset=str(content["dataset"]),
                               linked=[str(d) for d in content.get("linked") or []])
        self.path = path
        self._rederive(path)
        return self

    def _rederive(self, path) -> None:
        """Check a loaded report against what the mechanism's settings and the budget determine."""
        import numpy as np

        from .privacy import CENSOR_TOL, censoring_bound, is_one_signed

        p, spec, b, params = self.privacy, self.spec, self.privacy.budget, self.plan.params
        problems = []
        if p.mechanism != spec.key or p.guarantee != spec.guarantee:
            problems.append(f"its report says {p.mechanism!r} with guarantee {p.guarantee!r}, but the mechanism "
                            f"{spec.key!r} is {spec.guarantee!r}")
        if p.relation != self.relation or b.relation != self.relation or self.relation != self.config.relation:
            problems.append(f"its report is stated with {p.relation!r}, its settings with {self.relation!r}")
        if spec.takes_eps and spec.guarantee == "DP":
            if not np.isclose(b.total, self.eps):
                problems.append(f"its budget's total {b.total!r} is not its settings' eps {self.eps!r}")
            want = b.mechanism_eps(spec.eps_per_param)  # the draw's share, on the records the fit saw
            if not np.isclose(params.get("eps", np.nan), want):
                problems.append(f"its mechanism ran at eps {params.get('eps')!r}, not the {want!r} its budget gives")
        if spec.takes_eps and np.isfinite(p.bound):
            fam, source = self.family(), p.extra.get("reference_source")  # what was subtracted: censor_ref's reference
            one_signed = is_one_signed(fam, reference=source,
                                       reference_is_max=source == "record" and fam.reference_is_max,
                                       offset=self.offset)
            M = censoring_bound(params["eps"], one_signed)
            if not np.isclose(p.bound, M):
                problems.append(f"its censoring bound M = {p.bound:.6g} is not the {M:.6g} its eps gives")
            if not p.delta <= p.bound + CENSOR_TOL:
                problems.append(f"its Delta = {p.delta:.6g} exceeds its censoring bound M = {p.bound:.6g}")
        want_condition = self._condition()
        if p.condition != want_condition:
            problems.append(f"its statement holds under the condition {p.condition!r}, but its model says "
                            f"{want_condition!r} (a file written before a model function's guarantee was stated as "
                            f"conditional: refit it)")
        if problems:
            raise refuse(path, "; ".join(problems))

    @property
    def checksum(self) -> str:
        """Identifies the fitted synthesizer in a ledger: a SHA-256 of its fit's id, data set and report (copies of a
        saved synthesizer, which hold the same fit, share it)."""
        from .synthesizer_files import digest, jsonable

        if self.state is None:
            raise DataError("fit the synthesizer before releasing from it.")
        return digest(jsonable({"fit_id": self.fit_id, "dataset": self.dataset, "privacy": self.privacy.to_dict()}))
