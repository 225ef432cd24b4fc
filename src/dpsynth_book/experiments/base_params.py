"""Parameters of a chapter's study: one vocabulary, three presets, validated in one place.

Every chapter's parameters subclass :class:`StudyParams`, which holds the fields every study
shares — ``scale``, ``replicates``, ``draws``, ``tune``, ``chains``, ``seed`` — and validates every
field against its type annotation. A chapter defines its presets :meth:`StudyParams.quick`
(minutes, the default for classrooms and CI), :meth:`StudyParams.paper` (the sizes of the
original studies) and :meth:`StudyParams.smoke` (seconds, for the tests), and a notebook builds its
parameters with ``Params.preset(scale, **overrides)``.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dpsynth.mcmc_settings import LEGACY_MASS_MATRIX, MASS_MATRICES, RELEASE_MASS_MATRIX, SamplerConfig
from dpsynth.validation import DataError

__all__ = ["SCALES", "StudyParams"]

#: The presets every chapter offers.
SCALES = ("smoke", "quick", "paper")

_SHARED = ("scale", "replicates", "draws", "tune", "chains", "mass_matrix", "seed")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _check_value(name: str, value: Any, tp: Any) -> None:
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Union or (origin is not None and str(origin) == "<class 'types.UnionType'>"):
        if value is None and type(None) in args:
            return
        errors = []
        for a in args:
            if a is type(None):
                continue
            try:
                _check_value(name, value, a)
                return
            except DataError as err:
                errors.append(str(err))
        raise DataError(errors[0] if errors else f"`{name}` has an invalid value {value!r}.")
    if tp is int:
        if not _is_int(value):
            raise DataError(f"`{name}` must be an integer; got {value!r}.")
    elif tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise DataError(f"`{name}` must be a finite number; got {value!r}.")
    elif tp is str:
        if not isinstance(value, str):
            raise DataError(f"`{name}` must be a string; got {value!r}.")
    elif tp is bool:
        if not isinstance(value, bool):
            raise DataError(f"`{name}` must be True or False; got {value!r}.")
    elif origin in (tuple, list) or tp in (tuple, list):
        if not isinstance(value, (tuple, list)):
            raise DataError(f"`{name}` must be a list; got {value!r}.")
        if args and args[-1] is not Ellipsis and origin is tuple and len(args) != len(value):
            raise DataError(f"`{name}` must have {len(args)} entries; got {value!r}.")
        inner = args[0] if args else None
        if inner is not None and (origin is list or (len(args) == 2 and args[1] is Ellipsis)):
            for i, v in enumerate(value):
                _check_value(f"{name}[{i}]", v, inner)


@dataclass(frozen=True)
class StudyParams:
    """Shared parameters of a Monte Carlo study.

    Attributes
    ----------
    scale : str
        The preset the parameters started from: ``"smoke"``, ``"quick"`` or ``"paper"``.
    replicates : int
        Monte Carlo replicates.
    draws, tune, chains : int
        Retained draws and tuning steps per chain, and chains (pooled).
    mass_matrix : {"low_rank", "diag"}
        The sampler's mass-matrix adaptation (:class:`~dpsynth.mcmc_settings.SamplerConfig`): the
        release sampler's ``"low_rank"`` by default, so that a study samples as a release does. It
        changes how the posterior is explored, not the posterior.
    seed : int
        Master seed; every stream of the study is addressed from it.
    """

    scale: str = "quick"
    replicates: int = 8
    draws: int = 1000
    tune: int = 1000
    chains: int = 2
    mass_matrix: str = RELEASE_MASS_MATRIX
    seed: int = 20260101

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Check every field against its annotation and the shared fields' ranges.

        Raises
        ------
        DataError
            Naming the field and the fix. Subclasses extend this with their own range checks
            (call ``super().validate()`` first).
        """
        hints = typing.get_type_hints(type(self))
        for f in dataclasses.fields(self):
            _check_value(f.name, getattr(self, f.name), hints.get(f.name, Any))
        if self.scale not in SCALES:
            raise DataError(f"`scale` must be one of {SCALES}; got {self.scale!r}.")
        for name in ("replicates", "draws", "tune", "chains"):
            if getattr(self, name) < 1:
                raise DataError(f"`{name}` must be >= 1; got {getattr(self, name)!r}.")
        if self.mass_matrix not in MASS_MATRICES:
            raise DataError(f"`mass_matrix` must be one of {MASS_MATRICES} (the sampler's mass-matrix adaptation); "
                            f"got {self.mass_matrix!r}.")
        if self.seed < 0:
            raise DataError(f"`seed` must be a non-negative integer; got {self.seed!r}.")

    # presets -----------------------------------------------------------------------------------

    @classmethod
    def quick(cls) -> StudyParams:
        """Minutes on a laptop: the default scale of the book, classrooms and CI."""
        return cls(scale="quick")

    @classmethod
    def paper(cls) -> StudyParams:
        """The sizes of the original study."""
        raise NotImplementedError(f"{cls.__name__} has no paper preset")

    @classmethod
    def smoke(cls) -> StudyParams:
        """Seconds: the smallest run that exercises every code path (tests)."""
        return cls(scale="smoke", replicates=1, draws=100, tune=100)

    @classmethod
    def preset(cls, scale: str, **overrides: Any) -> StudyParams:
        """The preset ``scale`` with some fields overridden, e.g. ``preset("quick", replicates=4)``.

        ``None`` values in ``overrides`` are ignored, so a notebook can pass its optional
        papermill parameters straight through.

        Raises
        ------
        DataError
            For an unknown scale, an unknown field or an invalid value.
        """
        makers = {"smoke": cls.smoke, "quick": cls.quick, "paper": cls.paper}
        if scale not in makers:
            raise DataError(f"`scale` must be one of {SCALES}; got {scale!r}.")
        base = makers[scale]()
        given = {k: v for k, v in overrides.items() if v is not None}
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(given) - known)
        if unknown:
            raise DataError(f"unknown parameter(s) {unknown} for {cls.__name__}; known: {sorted(known)}.")
        if "scale" in given:
            raise DataError("pass the scale as the first argument of `preset`, not as an override.")
        return dataclasses.replace(base, **given)

    # views -------------------------------------------------------------------------------------

    @property
    def sampler(self) -> SamplerConfig:
        """The :class:`~dpsynth.fitting.SamplerConfig` of the study."""
        return SamplerConfig(draws=self.draws, tune=self.tune, chains=self.chains, mass_matrix=self.mass_matrix)

    def to_dict(self) -> dict:
        """All fields as a JSON-able dict (tuples become lists)."""
        def plain(v):
            if isinstance(v, (tuple, list)):
                return [plain(x) for x in v]
            return v
        return {f.name: plain(getattr(self, f.name)) for f in dataclasses.fields(self)}

    def study_dict(self) -> dict:
        """What a replicate needs: every field but ``scale``, ``replicates`` and ``seed``.

        Those three are arguments of :func:`dpsynth_book.studies.run_study` itself, so the cache key
        does not depend on the preset's name, only on the values that change the results.
        """
        d = self.to_dict()
        for k in ("scale", "replicates", "seed"):
            d.pop(k)
        return d

    @classmethod
    def from_mapping(cls, params: Mapping) -> StudyParams:
        """Rebuild from :meth:`study_dict` output inside a replicate (scale, replicates, seed filled in)."""
        known = {f.name for f in dataclasses.fields(cls)}
        given = {k: v for k, v in dict(params).items() if k in known}
        given.setdefault("scale", "quick")
        # parameters written before studies chose their mass matrix were sampled with the diagonal one
        given.setdefault("mass_matrix", LEGACY_MASS_MATRIX)
        return cls(**given)
