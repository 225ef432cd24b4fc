"""Saving and loading a :class:`~dpsynth.TableSynthesizer`: its mixin, which reads each part as
:meth:`dpsynth.Synthesizer.load` reads one synthesizer (:mod:`dpsynth.synthesizer_io`).
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from .synthesizer import Synthesizer
from .synthesizer_io import _public_columns, _public_frame
from .validation import DataError, check_bool

__all__ = ["TableSynthesizerIO"]


class TableSynthesizerIO:
    """Save and load of a :class:`~dpsynth.TableSynthesizer`; each part is read as one synthesizer is."""

    _KIND = "table"

    def _content(self) -> dict:
        from .synthesizer_files import jsonable

        if not self.fitted:
            raise DataError("fit the table synthesizer before saving it.")
        parts = {}
        for t in self.targets:
            c = self.parts[t]._content()  # noqa: SLF001 - the part's own contents
            c["public_covariates"] = {}  # the table holds the public rows once; earlier targets are confidential
            parts[t] = c
        return jsonable({
            "confidential": True,
            "kind": self._KIND,
            "worth": self.privacy.worth(self.keep_draws),
            "settings": {
                "targets": self.targets, "covariates": self.covariates, "columns": self.columns,
                "dtypes": self.dtypes, "relation": self.relation, "eps": self.eps, "eps_split": self.eps_split,
                "mechanisms": self.mechanisms, "n_release": self.n_release, "size_eps": self.size_eps,
                "keep_draws": self.keep_draws, "releases": self.releases, "progress": self.progress,
                "mode": self.mode, "calibrate": self.calibrate,
            },
            "budget": self.budget.to_dict(),
            "dataset": self.dataset,
            "linked": list(self.linked),
            "fit_id": self.fit_id,
            "size": None if self._size is None else dataclasses.asdict(self._size),
            "public_levels": self._public_design.levels,
            "public_scaling": {c: list(v) for c, v in self._public_design.scaling.items()},
            "public_covariates": _public_columns(self.public, self.covariates, self._public_design.levels),
            "parts": parts,
        })

    def save(self, path: str | os.PathLike, *, force: bool = False) -> Path:
        """Write the fitted table synthesizer to JSON (owner-readable only, authenticated); no confidential column."""
        from .synthesizer_files import check_output_path, write_saved

        out = check_output_path(path, force=check_bool(force, "force"), suffixes=(".json",))
        return write_saved(out, self._content())

    @classmethod
    def load(cls, path: str | os.PathLike):
        """Read a saved table synthesizer; each part is checked as :meth:`dpsynth.Synthesizer.load` checks one."""
        from .covariates import CovariateDesign
        from .release.budget import TableBudget
        from .release.size import ReleaseSize
        from .synthesizer_files import read_saved

        path = Path(path)
        content = read_saved(path)
        if content.get("kind") != cls._KIND:
            raise DataError(f"{path} is a one-column synthesizer; load it with dpsynth.Synthesizer.load.")
        st = content["settings"]
        self = cls.__new__(cls)
        self.targets, self.covariates = list(st["targets"]), list(st["covariates"])
        self.columns, self.dtypes, self.relation = list(st["columns"]), dict(st["dtypes"]), st["relation"]
        self.eps, self.eps_split, self.mechanisms = st["eps"], st["eps_split"], dict(st["mechanisms"])
        self.n_release, self.size_eps = st["n_release"], st["size_eps"]
        self.keep_draws, self.progress = int(st["keep_draws"]), bool(st["progress"])
        self.releases = int(st.get("releases", 1))
        self.mode = self._mode_setting = st["mode"]
        self.calibrate = dict(st.get("calibrate") or {t: None for t in self.targets})
        self.budget = TableBudget.from_dict(content["budget"])
        self.dataset, self.fit_id = str(content["dataset"]), str(content["fit_id"])
        self.linked = [str(d) for d in content.get("linked") or []]
        self._size = None if content["size"] is None else ReleaseSize(**content["size"])
        self._public_design = CovariateDesign(columns=tuple(self.covariates), levels=content["public_levels"],
                                              scaling={c: tuple(v) for c, v in content["public_scaling"].items()})
        self.public = _public_frame(content["public_covariates"], self.covariates, self._public_design.levels,
                                    self.dtypes)
        self._data, self.fit_log, self.path = None, [], path
        self.parts = {}
        for j, t in enumerate(self.targets):
            part = content["parts"][t]
            if part["dataset"] != self.dataset or part["settings"]["part_of"] != self.dataset:
                raise DataError(f"{path}: refusing to load: its part {t!r} books into another data set's ledger.")
            frame = self.public.iloc[:1].reset_index(drop=True).copy()
            for prev in self.targets[:j]:  # placeholders of the earlier (confidential) columns: the design's width
                enc = self.parts[prev].encoding
                frame[prev] = [str(enc.levels[0])] if enc.kind == "categorical" else [0.5]
            self.parts[t] = Synthesizer._from_content(part, path, public=frame)  # noqa: SLF001
        self.encodings = {t: self.parts[t].encoding for t in self.targets}
        return self

    @property
    def checksum(self) -> str:
        """Identifies the fitted table in a ledger: a SHA-256 of its fit's id, data set and parts' ids."""
        from .synthesizer_files import digest

        return digest({"fit_id": self.fit_id, "dataset": self.dataset,
                       "parts": [self.parts[t].checksum for t in self.targets]})
