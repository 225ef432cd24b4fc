"""Saving and loading synthesizers: the ModelIO-style mixins of :class:`~dpsynth.Synthesizer` and
:class:`~dpsynth.TableSynthesizer` (the latter's in :mod:`dpsynth.table_synthesizer_io`).

A saved synthesizer is one JSON document (no pickle) authenticated under the home's key
(:mod:`dpsynth.synthesizer_files`, :mod:`dpsynth.release.home`): its kept posterior draws (or a model-free
mechanism's release), the model (family name and parameters, or the model function's
``module:qualname``), the settings, the budget, the public covariates, the data set's id (which ledger
its releases are booked in) and its ids under the home's other keys at fit time (whose ledgers
count with it), and the privacy report. Any edit is refused on load; a file written in
another home is refused with the fix. On top of that, a loaded report is re-derived from the
settings where they determine it (the guarantee from the mechanism's spec, the clamp from the
budget), as a check of the file against the code that reads it.

Holding a saved synthesizer is worth what its kept draws could release (:meth:`worth`); it is
written owner-only, and holds no confidential column unless asked (``include_confidential``).
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import numpy as np
import pandas as pd

from .validation import DataError, check_bool

__all__ = ["SynthesizerIO"]


def _plain(v) -> bool:
    return v is None or isinstance(v, (bool, int, float, str, np.number))


def _public_columns(frame: pd.DataFrame, columns, levels) -> dict:
    return {c: frame[c].astype(str).tolist() if c in levels else frame[c].to_numpy(dtype=float).tolist()
            for c in columns}


def _public_frame(saved: dict, columns, levels, dtypes) -> pd.DataFrame:
    frame = pd.DataFrame({c: saved[c] for c in columns}, columns=list(columns))
    for c in columns:
        if c not in levels:
            frame[c] = frame[c].astype(dtypes[c])
    return frame


class SynthesizerIO:
    """Save and load of a :class:`~dpsynth.Synthesizer` (a mixin: the model class holds no file code)."""

    def _content(self) -> dict:
        from .models.user_function import import_function, qualname
        from .synthesizer_files import jsonable

        if self._privacy is None:
            raise DataError("fit the synthesizer before saving it.")
        if callable(self.model):
            spec = {"kind": "function", "function": qualname(self.model)}
            import_function(spec["function"])  # fails now, not at load time, for a lambda or local function
        else:
            spec = {"kind": "family", "family": self.model, "params": jsonable(self.model_params)}
        return jsonable({
            "confidential": True,
            "worth": self._privacy.worth(),
            "model": spec,
            "settings": {
                "target": self.target, "covariates": self.covariates, "columns": self.columns,
                "dtypes": self.dtypes, "mechanism": self.mechanism, "eps": self.eps,
                "mechanism_params": {k: v for k, v in self.mechanism_params.items() if _plain(v)},
                "unit": self.unit, "offset": self.offset, "sampler": dataclasses.asdict(self.sampler),
                "censor_warn_share": self.censor_warn_share,
                "relation": self.relation, "n_release": self.n_release, "size_eps": self.size_eps,
                "keep_draws": self.keep_draws, "releases": self.releases,
                "progress": self.progress, "part_of": self.part_of, "mode": self.mode, "subsample": self.subsample,
                "calibrate": self.calibrate, "confidential_covariates": self.confidential_covariates,
                "mechanism_requested": getattr(self, "mechanism_requested", self.mechanism),
                "choice": None if getattr(self, "choice", None) is None else dataclasses.asdict(self.choice),
            },
            "run_params": {k: v for k, v in self._run_params.items() if _plain(v)},
            "dataset": self.dataset,
            "linked": list(getattr(self, "linked", [])),
            "fit_id": self.fit_id,
            "size": None if self._size is None else dataclasses.asdict(self._size),
            "target": self.encoding.to_dict(),
            "levels": self.levels,
            "scaling": {c: list(v) for c, v in self._design.scaling.items()},
            "transforms": dict(self._design.transforms),
            "public_covariates": _public_columns(self.public, self.covariates, self.levels),
            "privacy": self._privacy.to_dict(),
            "draws": None if self.draws is None else self._saved_draws(),
            "release": None if self._release_state is None else self._release_state.to_dict(),
            "calibration": None if self._calibration is None else self._calibration.to_dict(),
        })

    def _saved_draws(self) -> dict:
        """The kept draws a file holds: a model function's free parameters only (never a deterministic: it may be
        any figure the function computed), checked again here against the compiled model when there is one."""
        draws = dict(self.draws)
        if callable(self.model) and self._cm is not None:
            params = set(self._cm.param_names)
            draws = {k: v for k, v in draws.items() if k in params}
        return draws

    def save(self, path: str | os.PathLike, *, force: bool = False, include_confidential: bool = False) -> Path:
        """Write the fitted synthesizer to JSON (no pickle), owner-readable only, authenticated under the home's key.

        The file holds what later releases need (the kept draws, the model, the settings, the
        budget, the public covariates, the data set's id, the report). It is marked confidential:
        whoever has it can release each kept draw (its ``worth``). It never holds the confidential
        column or the record weights; with ``include_confidential=True`` they go to
        ``<stem>.CONFIDENTIAL.json`` beside it.

        Returns
        -------
        pathlib.Path
            The path written.
        """
        from .synthesizer_files import check_output_path, write_confidential, write_saved

        out = check_output_path(path, force=check_bool(force, "force"), suffixes=(".json",))
        written = write_saved(out, self._content())
        if include_confidential:
            write_confidential(written, self.target, self.encoding.from_model(self._x), self._weights)
        return written

    @classmethod
    def load(cls, path: str | os.PathLike):
        """Read a saved synthesizer: its MAC under this home's key is checked, and its report re-derived.

        The loaded synthesizer samples and releases without the confidential data; it cannot refit.
        """
        from .synthesizer_files import read_saved

        path = Path(path)
        content = read_saved(path)
        if content.get("kind") == "table":
            raise DataError(f"{path} is a whole-table synthesizer; load it with dpsynth.TableSynthesizer.load.")
        return cls._from_content(content, path)

    @classmethod
    def _from_content(cls, content: dict, path, public: pd.DataFrame | None = None):
        """A synthesizer from saved contents (``public``: its covariate rows, when the contents do not hold them)."""
        from . import mechanisms
        from .choice import Choice
        from .covariates import CovariateDesign
        from .models.user_function import import_function
        from .privacy import check_neighbours
        from .release.size import ReleaseSize
        from .release.statement import SynthesizerPrivacy
        from .target import TargetEncoding

        st, spec = content["settings"], content["model"]
        model = spec["family"] if spec["kind"] == "family" else import_function(spec["function"])
        self = cls.__new__(cls)
        self.encoding = TargetEncoding.from_dict(content["target"])
        self._settings(st["target"], st["covariates"], model, st["mechanism"], st["eps"], spec.get("params"),
                       st["unit"], st["offset"], st["sampler"], st["censor_warn_share"])
        self.relation = check_neighbours(st["relation"])
        self.n_release, self.size_eps = st["n_release"], st["size_eps"]
        self.keep_draws = int(st["keep_draws"])
        self.releases = int(st.get("releases", 1))
        self.progress, self.part_of, self.mode = bool(st["progress"]), st["part_of"], st["mode"]
        self._mode_setting = self.mode
        self.subsample = st["subsample"]
        self.fit_log, self.dataset, self.fit_id = [], str(content["dataset"]), str(content["fit_id"])
        self.linked = [str(d) for d in content.get("linked") or []]  # the data set's ids under the home's other keys
        self._size = None if content["size"] is None else ReleaseSize(**content["size"])
        self.columns, self.dtypes = st["columns"], st["dtypes"]
        self.mechanism_params = dict(st["mechanism_params"])
        self._design = CovariateDesign(columns=tuple(self.covariates), levels=content["levels"],
                                       scaling={c: tuple(v) for c, v in content["scaling"].items()},
                                       transforms=dict(content.get("transforms") or {}))
        if public is None:
            public = _public_frame(content["public_covariates"], self.covariates, self.levels, self.dtypes)
        self.public = public[self.covariates].reset_index(drop=True)
        self._x = None
        self._X = self.design(self.public)
        self._run_params = dict(content["run_params"])
        self._privacy = SynthesizerPrivacy.from_dict(content["privacy"])
        self.budget = self._privacy.budget
        self.draws = None if content["draws"] is None else {k: np.asarray(v, dtype=float)
                                                           for k, v in content["draws"].items()}
        rel = content.get("release")
        self._release_state = None if rel is None else self.spec.release_type.from_dict(rel)
        self.calibrate = st.get("calibrate")
        # what mechanism="auto" chose (files written before it was recorded hold neither)
        self.mechanism_requested = st.get("mechanism_requested", self.mechanism)
        choice = st.get("choice")
        self.choice = None if choice is None else Choice(str(choice["mechanism"]), dict(choice.get("params") or {}),
                                                         choice.get("calibrate"), str(choice.get("reason", "")))
        self.confidential_covariates = list(st.get("confidential_covariates") or [])
        cal = content.get("calibration")
        if cal is not None:
            from .mechanisms.noise_aware import NoiseAwareRelease

            cal = NoiseAwareRelease.from_dict(cal)
        self._calibration = cal
        self.size_hint = None
        self._weights, self._cm, self._simulator = None, None, None
        self.path = path
        self._rederive(path, mechanisms)
        return self

    def _rederive(self, path, mechanisms) -> None:
        """Check a loaded report against what the mechanism's settings and the budget determine."""
        from .privacy import CENSOR_TOL, censoring_bound, is_one_signed

        p, spec, b = self._privacy, self.spec, self._privacy.budget
        problems = []
        if p.mechanism != spec.key or p.guarantee != spec.guarantee:
            problems.append(f"its report says {p.mechanism!r} with guarantee {p.guarantee!r}, but the mechanism "
                            f"{spec.key!r} is {spec.guarantee!r}")
        if p.relation != self.relation or b.relation != self.relation:
            problems.append(f"its report is stated with {p.relation!r}, its settings with {self.relation!r}")
        if spec.takes_eps and spec.guarantee == "DP":
            if not np.isclose(b.total, self.eps):
                problems.append(f"its budget's total {b.total!r} is not its settings' eps {self.eps!r}")
            want = b.mechanism_eps(spec.eps_per_param)  # the draw's share, on the records the fit saw
            if not np.isclose(self._run_params.get("eps", np.nan), want):
                problems.append(f"its mechanism ran at eps {self._run_params.get('eps')!r}, not the {want!r} its "
                                f"budget "
                                f"gives")
        if spec.takes_eps and np.isfinite(p.bound):
            fam, source = self.family(), p.extra.get("reference_source")  # what was subtracted: censor_ref's reference
            one_signed = is_one_signed(fam, reference=source,
                                       reference_is_max=source == "record" and fam.reference_is_max)
            M = censoring_bound(self._run_params["eps"], one_signed)
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
            raise DataError(f"{path}: refusing to load: " + "; ".join(problems) + ". The file does not match the code "
                            "that reads it; use the file `save` wrote with this version.")

    @property
    def checksum(self) -> str:
        """Identifies the fitted synthesizer in a ledger: a SHA-256 of its fit's id, data set and report (copies of a
        saved synthesizer, which hold the same fit, share it)."""
        from .synthesizer_files import digest, jsonable

        if self._privacy is None:
            raise DataError("fit the synthesizer before releasing from it.")
        return digest(jsonable({"fit_id": self.fit_id, "dataset": self.dataset, "privacy": self._privacy.to_dict()}))
