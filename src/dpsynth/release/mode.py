"""Release mode and research mode: where every random choice of a fit and of its releases comes from.

A released file is a random function of the confidential data. Its privacy guarantee holds only if
the randomness is secret: a seed that the user can publish (and seeds are published with papers and
notebooks as a habit) turns the release into a *deterministic* function of the data, and an
adversary who knows the seed re-runs the pipeline on a candidate data set and compares files
byte for byte, which no epsilon covers. So a run is in one of two modes:

* **release mode** (a private release): every random choice that reaches a released file (the
  subsample, the chains' starting points and moves, the DP noise of a size, a reference or a
  histogram, the posterior draw picked, the synthetic values) comes from the operating system's
  entropy, whatever ``seed`` says; a seed given to it is ignored, with a :class:`SeedIgnoredWarning`;
* **research mode** (reproducible): every random choice comes from streams addressed under the
  user's seed (:mod:`dpsynth.seeds`), so the same data, seed and settings give the same file. The
  book's studies and the tests run in it. A research-mode fit says so in its statement, its saved
  file, its report and its ledger lines, and releasing from it needs an explicit, recorded option
  (``allow_research=True``, ``--allow-research``): without it the release is refused
  (:class:`ResearchModeError`).

A synthesizer's ``mode`` is ``None`` by default: the fit decides, from whether a seed was given
(:func:`resolve_mode`). This is the stance of diffprivlib, whose ``random_state`` is "for testing".
"""

from __future__ import annotations

import warnings

from ..validation import DataError

__all__ = ["RUN_MODES", "ResearchModeError", "SeedIgnoredWarning", "check_mode", "resolve_mode", "release_seed",
           "RESEARCH_OVERRIDE", "research_phrase"]

#: The two modes.
RUN_MODES = ("release", "research")

#: How a release from a research-mode fit is recorded (statement and ledger).
RESEARCH_OVERRIDE = ("research mode (allow_research): its random choices came from a seed, so whoever knows the "
                     "seed can recompute this file from the data; the stated eps does not cover it")


class ResearchModeError(DataError):
    """A release was asked of a research-mode (seeded) fit without ``allow_research``: nothing was written or booked."""


class SeedIgnoredWarning(UserWarning):
    """A seed was given to a release-mode fit or release: it was ignored (its randomness comes from the system)."""


def check_mode(mode, name: str = "mode") -> str | None:
    """``mode`` as given: ``None`` (decided by the fit's seed), ``"release"`` or ``"research"``."""
    if mode is None or mode in RUN_MODES:
        return mode
    raise DataError(f"`{name}` must be None (decided by the fit: research with a seed, release without), 'release' "
                    f"(every random choice from the system's entropy) or 'research' (seeded, reproducible, not a "
                    f"private release); got {mode!r}.")


def resolve_mode(setting: str | None, seed, *, stacklevel: int = 3) -> tuple[str, object]:
    """The mode of a fit and the seed it may use: ``(mode, seed)``.

    Parameters
    ----------
    setting : {None, "release", "research"}
        The synthesizer's ``mode``.
    seed : int, SeedSequence or None
        The seed given to ``fit``.

    Returns
    -------
    tuple
        ``("research", seed)`` for a research setting, or a seed given with no setting;
        ``("release", None)`` otherwise (a seed given to a release-mode fit is ignored, with a
        :class:`SeedIgnoredWarning`).
    """
    setting = check_mode(setting)
    if setting == "research" or (setting is None and seed is not None):
        return "research", seed
    if seed is not None:
        warnings.warn("mode='release': the seed was ignored; every random choice of a private release comes from the "
                      "system's entropy (a published seed would make the file a function of the data). Use "
                      "mode='research' for a reproducible run that is not a private release.", SeedIgnoredWarning,
                      stacklevel=stacklevel)
    return "release", None


def release_seed(mode: str, seed, *, allow_research: bool, stacklevel: int = 4):
    """The seed a release may use: the given one from a research-mode fit released with ``allow_research``,
    ``None`` (the system's entropy) from a release-mode fit (a seed given is ignored, with a warning).

    Raises
    ------
    ResearchModeError
        For a research-mode fit without ``allow_research``.
    """
    if mode == "research":
        if not allow_research:
            raise ResearchModeError(
                "this synthesizer was fitted in research mode (with a seed): a file released from it is a "
                "deterministic function of the data for whoever knows the seed, which no eps covers. Refit without a "
                "seed (release mode) for a private release, or pass allow_research=True (--allow-research) to "
                "release it anyway; the statement and the ledger record it.")
        return seed
    if seed is not None:
        warnings.warn("release mode: the seed of this release was ignored; the draw and the synthetic values come from "
                      "the system's entropy.", SeedIgnoredWarning, stacklevel=stacklevel)
    return None


def research_phrase(mode: str) -> str:
    """The statement's words for the mode."""
    if mode == "research":
        return ("RESEARCH MODE: every random choice came from a seed, so whoever knows the seed can recompute a "
                "released file from the data; not a private release")
    return "release mode: every random choice came from the system's entropy"
