"""How a total epsilon is spent: the public rule that carves a release's shares out of ``eps``.

The ``eps`` a user passes is the total that the privacy statement publishes, under the
synthesizer's neighbour relation, for its **first** release. A release publishes up to three
things computed from the confidential data, and each gets a share of ``eps``:

* the **released size** (one record removed, with no public size: a DP count of the records),
  charged once per fit;
* the **reference** ``theta_0`` of the unit-free censored likelihood when it is released from the
  data (``censor_ref``), charged once per fit;
* the target's **DP marginal** when the synthetic values are calibrated to it (``calibrate=``: a
  noise-aware histogram on public bins, onto which each synthetic set's values are mapped by rank,
  keeping the model's relations and the data's marginal), charged once per fit;
* **one posterior draw** (or a model-free mechanism's release), charged once per distinct draw.

So ``m`` releases from ``m`` different draws of one fit cost ``size + reference + m x draw``, and a
saved synthesizer keeping ``k`` draws is worth ``size + reference + k x draw`` to whoever holds it.
An analyst who wants ``m`` synthetic data sets for valid intervals (:mod:`dpsynth.combining`) says so
before the fit (``releases=m``): ``eps`` is then the total of the first ``m`` releases, each draw
getting ``(eps - size - reference) / m``. A model-free mechanism's release (a histogram, the
noise-aware model's posterior) is paid once, and any number of synthetic data sets from it cost
nothing more.

The rule is public and fixed before the data are seen (as SmartNoise's ``preprocessor_eps`` is
taken out of its ``epsilon``): the size gets :data:`SIZE_SHARE` of ``eps`` when it is a DP count,
the reference :data:`REFERENCE_SHARE` when it is released from the data, the calibration's marginal
:data:`MARGINAL_SHARE` when there is one, the draw the rest. An
explicit ``size_eps=`` or ``reference_eps=`` takes that amount out of ``eps`` instead. The draw's
share is stated under the relation; a mechanism's own ``eps`` parameter is the removal figure, so
under one record replaced it gets the share divided by the mechanism's replacement factor (2 for
every mechanism run at a target eps: a censored window's width doubles, a histogram's L1
sensitivity is 2, a quantile's symmetric distance is 2): :meth:`Budget.mechanism_eps`, the one
place where ``eps`` becomes a clamp.

On a large file the fit may see a public share ``q`` of the records only (a random subsample,
:data:`SUBSAMPLE_ABOVE`): a mechanism that is ``e``-DP on the records it sees is
``log(1 + q (e^e - 1))``-DP on the file (amplification by subsampling: without replacement at a
fixed size under one record replaced, Poisson sampling under one record removed; Balle, Barthe and
Gaboardi 2018). So the shares are stated for the file, and the mechanism runs at the larger
:func:`deamplify` of them. Two draws of the same subsample are charged ``2 x draw``, more than their
exact amplified composition: the statement is an upper bound.

A whole table (:class:`TableBudget`) has one total: the size's share once, the rest split over its
columns' conditionals (equally, or in the public proportions ``eps_split``), each conditional
carving its own reference and draw out of its part.

What a release charges is listed here and nowhere else: :meth:`Budget.charges` (one column) and
:meth:`TableBudget.charges` (a table) name each :class:`Charge` by the fit it belongs to (the released
size by the fit that drew the DP count, a reference and a calibration marginal by the column's fit, a
draw by its fit and its number), so that the ledger books each once
(:mod:`dpsynth.release.protocol`). A release draws from one or more :class:`DrawSlot`: a fitted
column's kept draws and the budget of its report.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import NamedTuple

import numpy as np

from ..privacy import check_neighbours, neighbours_phrase
from ..validation import DataError, check_eps

__all__ = ["Budget", "TableBudget", "Charge", "DrawSlot", "SIZE_SHARE", "REFERENCE_SHARE", "MARGINAL_SHARE",
           "DEFAULT_SIZE_EPS", "split_shares", "amplify", "deamplify", "SUBSAMPLE_ABOVE", "SUBSAMPLE_SIZE",
           "subsample_rate"]

#: Share of ``eps`` for a DP count of the released size (one record removed, no public size).
SIZE_SHARE = 0.05
#: Share of ``eps`` (of a column's part, in a table) for a reference released from the data.
REFERENCE_SHARE = 0.10
#: Share of ``eps`` (of a column's part, in a table) for the DP marginal a calibrated synthesizer maps its values onto.
MARGINAL_SHARE = 0.25
#: Epsilon of the DP size when the mechanism takes no target eps (aDP mechanisms report theirs after the fit).
DEFAULT_SIZE_EPS = 0.1


#: Files with more records than this (public ``n``) are fitted on a random subsample of :data:`SUBSAMPLE_SIZE` records.
SUBSAMPLE_ABOVE = 200_000
#: The records a subsampled fit sees.
SUBSAMPLE_SIZE = 100_000


def amplify(eps: float, q: float) -> float:
    """The eps on the file of a mechanism that is ``eps``-DP on a random share ``q`` of it:
    ``log(1 + q (e^eps - 1))``."""
    return float(np.log1p(q * np.expm1(eps)))


def deamplify(eps: float, q: float) -> float:
    """The eps a mechanism may spend on a random share ``q`` of the file for ``eps`` on the file (inverse of
    :func:`amplify`)."""
    return float(np.log1p(np.expm1(eps) / q))


def subsample_rate(n: int | None, subsample: int | bool | None = None) -> float:
    """The public share of records a fit sees: 1, or ``SUBSAMPLE_SIZE / n`` when a public ``n`` exceeds
    :data:`SUBSAMPLE_ABOVE` (``subsample``: ``False`` never, an integer the records to keep, None the rule)."""
    if subsample is False or n is None:
        return 1.0
    m = SUBSAMPLE_SIZE if subsample in (None, True) else int(subsample)
    if subsample is None and n <= SUBSAMPLE_ABOVE:
        return 1.0
    return min(1.0, m / float(n))


def _fmt(v: float) -> str:
    return f"{v:.4g}"


class Charge(NamedTuple):
    """One charge of a release: its key in the ledger (a key booked before costs nothing again), what it pays for,
    its eps under the release's relation, and the guarantee it is stated under (``"DP"``, ``"aDP"``, ``"none"``)."""

    key: str
    what: str
    eps: float
    guarantee: str


@dataclass(frozen=True)
class DrawSlot:
    """A fit a release draws from: its key in the ledger, its kept draws and what a release from one of them charges.

    Attributes
    ----------
    fit : str
        The fit's key in the ledger (``"<fit id>:<column>"``).
    draws : int
        The kept draws (1 for a model-free release).
    budget : Budget
        The budget of the fit's report (:meth:`Budget.fit_charges`).
    guarantee : str
        The guarantee of the fit's report.
    released : str or None
        What a model-free release is, in words; None for a posterior draw.
    """

    fit: str
    draws: int
    budget: Budget
    guarantee: str
    released: str | None = None

    def charges(self, draw: int, part: str) -> list[Charge]:
        """What a release of draw ``draw`` of this fit charges (:meth:`Budget.fit_charges`)."""
        return self.budget.fit_charges(self.fit, draw, part=part, guarantee=self.guarantee, released=self.released)


def _release_charges(size: float, fit: str, slots: Mapping[str, DrawSlot], draws: Mapping[str, int],
                     dp_size: bool) -> list[Charge]:
    out = [Charge(f"{fit}:size", "released size", float(size), "DP")] if dp_size else []
    for part, slot in slots.items():
        out += slot.charges(int(draws[part]), part)
    return out


@dataclass(frozen=True)
class Budget:
    """A release's total epsilon and its shares, under one neighbour relation.

    Attributes
    ----------
    relation : str
        ``"remove"`` or ``"replace"``: every figure here is stated under it.
    total : float or None
        The eps of the first :attr:`releases` releases (size + reference + releases x draw); ``None`` for a
        mechanism that is
        not run at a target eps (its draw's eps is reported after the fit, :meth:`with_draw`).
    size, reference : float
        The shares of the DP released size and of the DP reference (0 when public or absent).
    draw : float or None
        The share of one posterior draw (or of a model-free release).
    releases : int
        How many releases from as many draws ``total`` covers (``size + reference + marginal + releases x draw``).
    marginal : float
        The share of the DP marginal the synthetic values are calibrated to (0 without calibration).
    model_free : bool
        Whether :attr:`draw` pays for a model-free release (a histogram, a noise-aware posterior), which
        serves any number of synthetic data sets: further sets cost nothing.
    """

    relation: str
    total: float | None
    size: float = 0.0
    reference: float = 0.0
    draw: float | None = None
    sample_rate: float = 1.0
    releases: int = 1
    marginal: float = 0.0
    model_free: bool = False

    def __post_init__(self) -> None:
        check_neighbours(self.relation)
        if isinstance(self.releases, bool) or not isinstance(self.releases, (int, np.integer)) or self.releases < 1:
            raise DataError(f"`releases` must be a positive whole number; got {self.releases!r}.")

    @classmethod
    def plan(cls, eps: float | None, relation: str, *, dp_size: bool, dp_reference: bool,
             size_eps: float | None = None, reference_eps: float | None = None, sample_rate: float = 1.0,
             releases: int = 1, dp_marginal: bool = False, marginal_eps: float | None = None,
             model_free: bool = False) -> Budget:
        """The shares of ``eps`` by the public rule (module docstring).

        Parameters
        ----------
        eps : float or None
            The total; ``None`` for a mechanism not run at a target eps.
        relation : {"remove", "replace"}
            The relation every share is stated under.
        dp_size, dp_reference : bool
            Whether the released size is a DP count, and whether a reference is released from the data.
        size_eps, reference_eps : float, optional
            Explicit shares instead of the rule's.
        sample_rate : float
            The public share of records the fit sees (:func:`subsample_rate`).
        releases : int
            How many releases from as many posterior draws ``eps`` pays for (1 for a model-free mechanism,
            whose one release serves any number of synthetic data sets).
        dp_marginal, marginal_eps : bool, float
            Whether a DP marginal of the target is released to calibrate the synthetic values, and an
            explicit share for it instead of :data:`MARGINAL_SHARE` of ``eps``.
        model_free : bool
            The draw's share pays for a model-free release (planned as one release, ``releases`` ignored).
        """
        check_neighbours(relation)
        if isinstance(releases, bool) or not isinstance(releases, (int, np.integer)) or releases < 1:
            raise DataError(f"`releases` must be a positive whole number (the synthetic data sets eps pays for); got "
                            f"{releases!r}.")
        releases = 1 if model_free else int(releases)
        if size_eps is not None:
            size_eps = check_eps(size_eps, "size_eps")
        if reference_eps is not None:
            reference_eps = check_eps(reference_eps, "reference_eps")
        if marginal_eps is not None:
            marginal_eps = check_eps(marginal_eps, "marginal_eps")
        if eps is None:
            if dp_reference:
                raise DataError("a reference released from the data needs a total `eps` to take its share from.")
            if dp_marginal:
                raise DataError("a calibration marginal needs a total `eps` to take its share from (`calibrate` with "
                                "a mechanism run at a target eps).")
            return cls(relation, None, size=(size_eps or DEFAULT_SIZE_EPS) if dp_size else 0.0, sample_rate=sample_rate,
                       model_free=model_free)
        total = check_eps(eps, "eps")
        size = (size_eps if size_eps is not None else SIZE_SHARE * total) if dp_size else 0.0
        ref = (reference_eps if reference_eps is not None else REFERENCE_SHARE * total) if dp_reference else 0.0
        marg = (marginal_eps if marginal_eps is not None else MARGINAL_SHARE * total) if dp_marginal else 0.0
        if size + ref + marg >= total:
            raise DataError(
                f"the released size ({_fmt(size)}), the reference ({_fmt(ref)}) and the calibration marginal "
                f"({_fmt(marg)}) take all of eps = {_fmt(total)}: nothing is left for the draw. Raise `eps`, or give "
                f"smaller `size_eps` / `reference_eps` / a calibration `share`.")
        return cls(relation, total, size=size, reference=ref, draw=(total - size - ref - marg) / releases,
                   sample_rate=sample_rate, releases=releases, marginal=marg, model_free=model_free)

    def with_draw(self, draw: float) -> Budget:
        """The budget of a mechanism whose draw's eps is known only after the fit (aDP): its total follows."""
        return Budget(self.relation, self.size + self.reference + self.marginal + self.releases * float(draw),
                      self.size, self.reference, float(draw), self.sample_rate, self.releases, self.marginal,
                      self.model_free)

    def mechanism_eps(self, per_param: tuple[float, float]) -> float | None:
        """The mechanism's own ``eps`` parameter whose draw costs :attr:`draw` under the relation.

        ``per_param`` is the mechanism's ``(removed, replaced)`` eps per unit of its parameter
        (:attr:`dpsynth.mechanisms.MechanismSpec.eps_per_param`).
        """
        if self.draw is None or self.total is None:
            return None
        return self.on_sample(self.draw) / per_param[0 if self.relation == "remove" else 1]

    def on_sample(self, share: float) -> float:
        """What a share of the file's eps lets the fit spend on the records it sees (:func:`deamplify`)."""
        return share if self.sample_rate >= 1.0 else deamplify(share, self.sample_rate)

    def cost(self, releases: int = 1) -> float:
        """What ``releases`` releases from as many different draws cost: size + reference + marginal + releases x
        draw (a model-free release's draw once, however many sets)."""
        k = 1 if self.model_free else int(releases)
        return self.size + self.reference + self.marginal + k * (self.draw or 0.0)

    @property
    def further(self) -> float:
        """What each further release adds: a draw's share, or nothing for a model-free release."""
        return 0.0 if self.model_free else float(self.draw or 0.0)

    def fit_charges(self, fit: str, draw: int, *, part: str, guarantee: str,
                    released: str | None = None) -> list[Charge]:
        """What a release from draw ``draw`` of one column's fit charges, before the ledger drops those paid already.

        Parameters
        ----------
        fit : str
            The fit's key in the ledger (``"<fit id>:<column>"``).
        draw : int
            The kept draw released.
        part : str
            The column, in the charges' words.
        guarantee : str
            The guarantee of the column's report: every charge of the fit is stated under it.
        released : str, optional
            What a model-free release is, in words (its one release is charged as draw 0); None for a
            posterior draw.

        Returns
        -------
        list of Charge
            The reference and the calibration marginal (each once per fit, when released from the data) and the
            draw (once per draw; its eps is 0 when the mechanism reports none).
        """
        out = []
        if self.reference:
            out.append(Charge(f"{fit}:reference", f"reference of {part}", self.reference, guarantee))
        if self.marginal:
            out.append(Charge(f"{fit}:marginal", f"DP marginal of {part} (calibration)", self.marginal, guarantee))
        d = int(draw)
        eps = float(self.draw) if self.draw is not None and np.isfinite(self.draw) else 0.0
        out.append(Charge(f"{fit}:draw:{d}", released or f"posterior draw {d} of {part}", eps, guarantee))
        return out

    def charges(self, fit: str, slots: Mapping[str, DrawSlot], draws: Mapping[str, int], *,
                dp_size: bool) -> list[Charge]:
        """The ledger charges of one release: the released size, then each slot's :meth:`fit_charges`.

        Parameters
        ----------
        fit : str
            The id of the fit that drew the released size (its key: ``"<fit>:size"``).
        slots : dict of str to DrawSlot
            The fits the release draws from (one for a column), each with its report's budget.
        draws : dict of str to int
            The draw picked from each slot.
        dp_size : bool
            Whether the release's size is the DP count (its share, :attr:`size`, is charged once per fit).

        Examples
        --------
        >>> b = Budget.plan(1.0, "remove", dp_size=True, dp_reference=True)
        >>> [c.key for c in b.charges("f1", {"wage": DrawSlot("f1:wage", 10, b, "DP")}, {"wage": 3}, dp_size=True)]
        ['f1:size', 'f1:wage:reference', 'f1:wage:draw:3']
        """
        return _release_charges(self.size, fit, slots, draws, dp_size)

    def phrase(self, *, draw_what: str | None = None) -> str:
        """The split in words, e.g. ``"0.1 for the reference (once per fit) + 0.9 for one posterior draw"``."""
        parts = []
        if self.size:
            parts.append(f"{_fmt(self.size)} for the released size (a DP count, once per fit)")
        if self.reference:
            parts.append(f"{_fmt(self.reference)} for the reference theta_0 (once per fit)")
        if self.marginal:
            parts.append(f"{_fmt(self.marginal)} for the target's DP marginal (once per fit; the synthetic values are "
                         f"mapped onto it by rank)")
        if draw_what is None:
            draw_what = "its model-free release (any number of sets)" if self.model_free else "one posterior draw"
        if self.releases > 1:
            parts.append(f"{self.releases} x {_fmt(self.draw or 0.0)} for {draw_what} each")
        else:
            parts.append(f"{_fmt(self.draw or 0.0)} for {draw_what}")
        out = " + ".join(parts)
        if self.sample_rate < 1.0:
            out += (f" (fitted on a random {self.sample_rate:.3g} of the records: by amplification by subsampling the "
                    f"fit spends more on the records it sees)")
        return out

    def plan_line(self, name: str) -> str:
        """One line printed before a fit: what will be published, and how it is split."""
        if self.total is None:
            s = f"{name}: its draw's eps is computed from the data after the fit (not a target)"
            return s + (f"; the released size costs {_fmt(self.size)}" if self.size else "")
        first = "the first release" if self.releases == 1 else f"the first {self.releases} releases"
        further = ("any number of further releases from it cost nothing more" if self.model_free else
                   f"each further release from another draw adds {_fmt(self.draw)}")
        return (f"{name}: eps = {_fmt(self.total)} with {neighbours_phrase(self.relation)} for {first} = "
                f"{self.phrase()}; {further}")

    def to_dict(self) -> dict:
        """Plain-JSON dict."""
        return asdict(self)


def split_shares(total: float, columns: list[str], split: Mapping[str, float] | None) -> dict[str, float]:
    """``total`` split over ``columns``: equally, or in the public proportions ``split`` (normalised)."""
    if split is None:
        return {c: total / len(columns) for c in columns}
    unknown = [k for k in split if k not in columns]
    if unknown:
        raise DataError(f"`eps_split` names column(s) {unknown} that are not targets {columns}.")
    missing = [c for c in columns if c not in split]
    if missing:
        raise DataError(f"`eps_split` lacks column(s) {missing}: give every target a share.")
    w = {c: check_eps(split[c], f"eps_split[{c!r}]") for c in columns}
    s = sum(w.values())
    return {c: total * w[c] / s for c in columns}


@dataclass(frozen=True)
class TableBudget:
    """A whole table's total and its shares: the size once, each column's part (its own :class:`Budget`).

    Attributes
    ----------
    relation : str
        The relation of every figure.
    total : float or None
        The eps of the first released table.
    size : float
        The DP released size's share (0 when public).
    parts : dict of str to Budget
        Each column's part (reference and draw).
    releases : int
        How many released tables ``total`` covers.
    """

    relation: str
    total: float | None
    size: float = 0.0
    parts: dict = field(default_factory=dict)
    releases: int = 1

    @property
    def draw(self) -> float:
        """What a further table from new draws of every column adds (model-free parts: nothing)."""
        return float(sum(b.further for b in self.parts.values()))

    def charges(self, fit: str, slots: Mapping[str, DrawSlot], draws: Mapping[str, int], *,
                dp_size: bool) -> list[Charge]:
        """The ledger charges of one released table: the size's share once (keyed by the table's ``fit``), then each
        column's :meth:`Budget.fit_charges` (from its report's budget, which an aDP column sets after its fit); as
        :meth:`Budget.charges`."""
        return _release_charges(self.size, fit, slots, draws, dp_size)

    def phrase(self) -> str:
        """The split in words."""
        s = [f"{_fmt(self.size)} for the released size (a DP count, once per fit)"] if self.size else []
        for c, b in self.parts.items():
            s.append(f"{c}: {b.phrase()}")
        return "; ".join(s)

    def plan_line(self, name: str) -> str:
        """One line printed before a fit."""
        if self.total is None:
            return f"{name}: the columns' eps are computed after the fit"
        first = "the first released table" if self.releases == 1 else f"the first {self.releases} released tables"
        return (f"{name}: eps = {_fmt(self.total)} with {neighbours_phrase(self.relation)} for {first} "
                f"= {self.phrase()}; each further table from new draws adds {_fmt(self.draw)}")

    def to_dict(self) -> dict:
        """Plain-JSON dict."""
        return {"relation": self.relation, "total": self.total, "size": self.size,
                "parts": {c: b.to_dict() for c, b in self.parts.items()}, "releases": self.releases}

    @classmethod
    def from_dict(cls, d: Mapping) -> TableBudget:
        """Read :meth:`to_dict`."""
        return cls(d["relation"], d["total"], d["size"], {c: Budget(**b) for c, b in d["parts"].items()},
                   int(d.get("releases", 1)))
