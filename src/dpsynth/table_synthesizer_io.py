"""Saving and loading a :class:`~dpsynth.TableSynthesizer`: its ModelIO-style mixin, which writes the table's
configuration and plan beside its conditionals and reads each part as :meth:`dpsynth.Synthesizer.load` reads one
(:mod:`dpsynth.synthesizer_io`). A file whose configuration lacks a field or has an unknown one is refused,
naming it; files saved by an earlier version of dpsynth are refused (fit the table again).
"""

from __future__ import annotations

import os
from pathlib import Path

from .synthesizer import Synthesizer
from .synthesizer_config import ConfigError
from .synthesizer_io import _public_columns, _public_frame, check_written_settings, refuse
from .validation import DataError, check_bool

__all__ = ["TableSynthesizerIO"]


class TableSynthesizerIO:
    """Save and load of a :class:`~dpsynth.TableSynthesizer`; each part is read as one synthesizer is."""

    _KIND = "table"

    def saved_content(self) -> dict:
        """What :meth:`save` writes: the table's configuration, plan and state, its public facts, and each part's own
        saved contents (without public rows: the table holds them once; earlier targets are confidential)."""
        from .synthesizer_config import TableSynthesizerConfig
        from .synthesizer_files import jsonable

        if not self.fitted:
            raise DataError("fit the table synthesizer before saving it.")
        parts = {}
        for t in self.targets:
            c = self.parts[t].saved_content()
            c["public_covariates"] = {}
            parts[t] = c
        config = self.config.to_dict()
        check_written_settings(type(self), TableSynthesizerConfig, config)
        return jsonable({
            "confidential": True,
            "kind": self._KIND,
            "worth": self.privacy.worth(self.keep_draws),
            "config": config,
            "plan": self.plan.to_dict(),
            "state": self.state.to_dict(),
            "columns": self.columns,
            "dtypes": self.dtypes,
            "dataset": self.dataset,
            "linked": list(self.linked),
            "public_covariates": _public_columns(self.public, self.covariates, self.plan.design.levels),
            "parts": parts,
        })

    def save(self, path: str | os.PathLike, *, force: bool = False) -> Path:
        """Write the fitted table synthesizer to JSON (owner-readable only, authenticated); no confidential column."""
        from .synthesizer_files import check_output_path, write_saved

        out = check_output_path(path, force=check_bool(force, "force"), suffixes=(".json",))
        return write_saved(out, self.saved_content())

    @classmethod
    def load(cls, path: str | os.PathLike):
        """Read a saved table synthesizer; each part is checked as :meth:`dpsynth.Synthesizer.load` checks one."""
        from .synthesizer_config import TableSynthesizerConfig
        from .synthesizer_files import read_saved
        from .synthesizer_fit import TableState
        from .table_synthesizer_plan import TablePlan

        path = Path(path)
        content = read_saved(path)
        if content.get("kind") != cls._KIND:
            raise DataError(f"{path} is a one-column synthesizer; load it with dpsynth.Synthesizer.load.")
        try:
            config = TableSynthesizerConfig.from_dict(content["config"])
        except ConfigError as e:
            raise refuse(path, str(e)) from None
        plan = TablePlan.from_dict(content["plan"])
        dataset = str(content["dataset"])
        public = _public_frame(content["public_covariates"], config.covariates, plan.design.levels, content["dtypes"])
        parts: dict[str, Synthesizer] = {}
        for j, t in enumerate(config.targets):
            part = content["parts"][t]
            if part["dataset"] != dataset or part["config"]["part_of"] != dataset:
                raise DataError(f"{path}: refusing to load: its part {t!r} books into another data set's ledger.")
            frame = public.iloc[:1].reset_index(drop=True).copy()
            for prev in config.targets[:j]:  # placeholders of the earlier (confidential) columns: the design's width
                enc = parts[prev].encoding
                frame[prev] = [str(enc.levels[0])] if enc.kind == "categorical" else [0.5]
            parts[t] = Synthesizer.from_content(part, path, public=frame)
        self = cls.from_config(config, plan, parts=parts, state=TableState.from_dict(content["state"]),
                               columns=content["columns"], dtypes=content["dtypes"], public=public, dataset=dataset,
                               linked=[str(d) for d in content.get("linked") or []])
        self.path = path
        return self

    @property
    def checksum(self) -> str:
        """Identifies the fitted table in a ledger: a SHA-256 of its fit's id, data set and parts' ids."""
        from .synthesizer_files import digest

        return digest({"fit_id": self.fit_id, "dataset": self.dataset,
                       "parts": [self.parts[t].checksum for t in self.targets]})
