"""The one release protocol: how every synthetic data set is handed out, booked and written.

:class:`dpsynth.Synthesizer`, :class:`dpsynth.TableSynthesizer` and a table's parts release only
through :func:`release`. In one step under the ledger's lock it

1. checks the synthesizer's neighbour relation against its data set's ledger (one data set, one
   relation, :mod:`dpsynth.release.ledger`; the ledgers of its ids under every key of the home count
   together);
2. picks one posterior draw of each part, one not released before while one is left;
3. takes the release's charges from the budget (:meth:`dpsynth.release.budget.Budget.charges`, or a
   table's :meth:`~dpsynth.release.budget.TableBudget.charges`: the released size, the reference, the
   calibration marginal, the draw, each keyed by the fit it belongs to) and keeps those not booked
   before: a reference, a marginal or a size is paid once per fit, a draw once;
4. checks the budget against the ledger's strict-DP total plus this release's new charges;
5. draws the synthetic values and checks them: non-finite values or values outside the model's
   support refuse the release unless ``allow_unusable``;
6. writes the file atomically, then books the release; if booking fails the file is removed
   (not booked: not released).

**The one rule of refusals.** A fit or a release is refused only for a reason computed from (a)
public settings and the declared form of the input (types, declared levels, the model's support,
the budget and the ledger), checked before anything is computed from the values, or (b) the released
values themselves (their post-processing). Nothing computed from the confidential values decides
whether a fit runs or a file is released: values outside public bounds are clamped, and convergence
diagnostics and censoring counts are confidential warnings for the data holder. A research-mode
(seeded) fit is refused unless ``allow_research`` (:mod:`dpsynth.release.mode`): a public setting.

A synthesizer hands the protocol what it knows through the public interface :class:`Releaser`
(its release frame, its draw slots, its synthetic values, its ledger labels); the protocol knows no
mechanism and no model, and lists no charge itself. A sealed home (moved into another one) releases nothing
(:func:`dpsynth.release.home.check_open`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

import numpy as np
import pandas as pd

from ..seeds import SeedLike, generator, stream
from ..validation import DataError, check_bool
from .ledger import Ledger
from .mode import RESEARCH_OVERRIDE, release_seed
from .size import ReleaseSize

if TYPE_CHECKING:  # pragma: no cover
    from .budget import Budget, DrawSlot, TableBudget

__all__ = ["release", "Releaser", "UnusableReleaseError", "pick_draws", "show_progress", "bar"]


class UnusableReleaseError(DataError):
    """A release was refused: its values are unusable (non-finite, outside the support or the public bounds);
    nothing was written or booked."""


def show_progress(progress: bool) -> bool:
    """Progress bars only on a terminal (not in a pipe, a log file or a notebook's captured output)."""
    import sys

    return bool(progress) and sys.stderr.isatty()


def bar(show: bool, desc: str, **kw):
    """A tqdm bar on standard error (disabled when not shown)."""
    from tqdm import tqdm

    return tqdm(desc=desc, disable=not show, leave=False, **kw)


class Releaser(Protocol):
    """What a synthesizer tells the release protocol: its public interface (:class:`dpsynth.Synthesizer`,
    :class:`dpsynth.TableSynthesizer`).

    Nothing returned here is booked by itself: :func:`release` calls these under the ledger's lock and books what
    it hands out. Use the synthesizer's ``sample`` and ``release``.
    """

    dataset: str
    #: The same data set's ids under the other keys of the home (recorded at fit time; may be empty).
    linked: list[str]
    relation: str
    progress: bool
    mode: str
    #: The fit's id: the key of the charges paid once per fit (the released size).
    fit_id: str

    @property
    def budget(self) -> Budget | TableBudget:
        """The budget planned before the fit: its :meth:`~dpsynth.release.budget.Budget.charges` list a release's."""

    @property
    def privacy(self):
        """The report (raises for an unfitted synthesizer)."""

    @property
    def checksum(self) -> str:
        """Identifies the releasing synthesizer in the ledger."""

    def release_frame(self, data: pd.DataFrame | None) -> tuple[pd.DataFrame, ReleaseSize]:
        """The public rows of a release and how its size is set (checked before the ledger is touched)."""

    def draw_slots(self) -> dict[str, DrawSlot]:
        """Each part's fit, its kept draws and its report's budget (:class:`~dpsynth.release.budget.DrawSlot`)."""

    def synthesize(self, frame: pd.DataFrame, seed: SeedLike, draws: Mapping[str, int]) -> tuple[pd.DataFrame, list]:
        """The synthetic data set for the rows of ``frame`` from the draws picked, and the reasons its values are
        unusable (empty: usable). Not booked: the protocol books it."""

    def ledger_labels(self) -> tuple[str, str]:
        """``(mechanism key, display name)`` of the ledger line."""


def pick_draws(slots: Mapping[str, DrawSlot], charged: Mapping, seed: SeedLike) -> dict[str, int]:
    """One draw per part: one not charged before while one is left (seeded), else any (it costs nothing more)."""
    out = {}
    for part, slot in slots.items():
        free = [d for d in range(slot.draws) if f"{slot.fit}:draw:{d}" not in charged]
        rng = generator(stream(seed, "draw", part))
        out[part] = int(rng.choice(free)) if free else int(rng.integers(slot.draws))
    return out


def release(owner: Releaser, path_out: str | os.PathLike | None, *, seed: SeedLike, data: pd.DataFrame | None,
            budget: float | None, force: bool, allow_unusable: bool, allow_research: bool = False) -> pd.DataFrame:
    """Release one synthetic data set from ``owner``: book it in its data set's ledger and (with a path) write it.

    Parameters
    ----------
    owner : Releaser
        The synthesizer.
    path_out : path-like or None
        ``.csv`` or ``.parquet`` (its folder must exist; an existing file is refused unless ``force``);
        ``None``: returned in memory only (booked all the same).
    seed : int or SeedSequence, optional
        Chooses the draw(s) and the records of a research-mode fit (with ``allow_research``); ignored in release
        mode, where they come from the system's entropy (:func:`dpsynth.release.mode.release_seed`).
    data : pandas.DataFrame, optional
        A public frame of covariates for the synthetic records (its rows set the size, declared public).
    budget : float, optional
        Refuse a strict-DP release that would bring the ledger's total above it.
    force, allow_unusable, allow_research : bool
        Replace an existing file; release values that fail the usability checks (recorded); release from a
        research-mode fit (recorded).

    Returns
    -------
    pandas.DataFrame
        The released data; ``attrs["privacy_statement"]`` says what it covers.
    """
    from ..synthesizer_files import check_output_path, write_frame
    from .home import check_open

    check_open("release")
    p = owner.privacy  # raises for an unfitted synthesizer
    out = None if path_out is None else check_output_path(path_out, force=check_bool(force, "force"))
    allow_unusable = check_bool(allow_unusable, "allow_unusable")
    seed = release_seed(owner.mode, seed, allow_research=check_bool(allow_research, "allow_research"))
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, (int, float))
                               or not (budget >= 0 and math.isfinite(budget))):
        raise DataError(f"`budget` must be a finite number >= 0 (total strict-DP eps); got {budget!r}.")
    frame, size = owner.release_frame(data)
    overrides = [RESEARCH_OVERRIDE] if owner.mode == "research" else []
    ident = owner.checksum
    mechanism, name = owner.ledger_labels()
    with bar(show_progress(owner.progress), "release", total=3, unit="step") as progress, \
            Ledger(owner.dataset, linked=getattr(owner, "linked", ())).locked() as book:
        book.check_relation(owner.relation)
        charged = book.charged()
        base = stream(seed, "release")
        slots = owner.draw_slots()
        draws = pick_draws(slots, charged, base)
        listed = owner.budget.charges(owner.fit_id, slots, draws, dp_size=size.how == "dp_count")
        new = [c for c in listed if c.key not in charged]
        spend = float(sum(c.eps for c in new if c.guarantee == "DP"))
        adp = float(sum(c.eps for c in new if c.guarantee == "aDP"))
        book.check_budget(p.guarantee, spend, budget)
        df, reasons = owner.synthesize(frame, stream(base, "sample"), draws)
        progress.update()
        if reasons and not allow_unusable:
            raise UnusableReleaseError(
                "release refused: " + "; ".join(reasons) + ". Nothing was written or booked. These checks read the "
                "synthetic values only. Fix the model (its support), or pass allow_unusable=True "
                "(--allow-unusable), which the statement and the ledger record.")
        overrides += [f"unusable values released: {r}" for r in reasons]
        statement = _statement(p, size, new, spend, book.total(), overrides)
        draw = draws if len(draws) > 1 else next(iter(draws.values()))
        df.attrs = {"privacy_statement": statement, "mechanism": mechanism, "guarantee": p.guarantee,
                    "relation": owner.relation, "eps": p.eps, "spend": spend, "charges": [list(c) for c in new],
                    "rows": len(df), "size": size.how, "draw": draw, "overrides": overrides, "accounted": True}
        if out is not None:
            write_frame(df, out)
        progress.update()
        try:
            book.append(relation=owner.relation, mechanism=mechanism, name=name, guarantee=p.guarantee, eps=p.eps,
                        charges=[[k, w, e, g] for k, w, e, g in new], spend=spend, adp_eps=adp, draw=draw,
                        rows=len(df), output=str(out) if out is not None else "<in memory>", synthesizer=ident,
                        overrides=overrides)
        except BaseException:
            if out is not None and out.exists():
                out.unlink()  # not booked: not released
            raise
        progress.update()
    return df


def _statement(p, size: ReleaseSize, new: list, spend: float, before: float, overrides: list) -> str:
    s = p.statement() + f" Released size: {size.phrase()}"
    if size.how == "dp_count":
        s += " (charged in this release)" if any(k.endswith(":size") for k, *_ in new) else \
            " (charged by an earlier release)"
    paid = [w for k, w, e, g in new if g == "DP"]
    free = ("nothing new: a model-free release serves any number of files, and this one was paid for before"
            if getattr(p, "model_free", False) else "nothing new: its draw was released before")
    s += (f". This release added eps = {spend:.4g} of strict DP to the data set's ledger"
          f" ({', '.join(paid) if paid else free}); the ledger's strict-DP "
          f"total is now {before + spend:.4g}")
    if p.guarantee != "DP":
        s += f" (its {p.guarantee} draw is listed apart, not summed)"
    s += "."
    if overrides:
        s += " Released with override(s): " + "; ".join(overrides) + "."
    return s


def unusable_values(values: np.ndarray, *, support_check=None) -> list[str]:
    """Why a release's values (on the model's scale) are unusable; empty when they are fine.

    Only the synthetic values are read (never a figure of the confidential data). Values outside public
    bounds are not a reason: the synthesizer clamps them to the bounds (post-processing).
    """
    reasons = []
    finite = np.isfinite(values)
    if not finite.all():
        reasons.append(f"{int((~finite).sum())} synthetic value(s) are not finite (a draw far in the tails overflowed)")
    v = values[finite]
    if v.size and support_check is not None:
        why = support_check(v)
        if why:
            reasons.append(why)
    return reasons
