"""What a fitted synthesizer reports: the public privacy statement and the confidential diagnostics.

:class:`SynthesizerPrivacy` (one column) and :class:`TablePrivacy` (a whole table) hold the
guarantee, the budget (:mod:`dpsynth.release.budget`: the total and its shares under one neighbour
relation) and the figures computed from the data. Only :meth:`statement` and :meth:`worth` are
public: they name no figure of the data, and they read the same whatever the data (whether the chains
converged, how many values were clamped): a statement that changed with the data would itself be a
release. :meth:`diagnostics` (Delta, records censored, n, values clamped, convergence) is marked
confidential: it is for the data holder, never for publication.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from ..privacy import neighbours_phrase
from .budget import Budget, TableBudget
from .mode import research_phrase

__all__ = ["SynthesizerPrivacy", "TablePrivacy", "GUARANTEE_RANK", "KINDS", "CONFIDENTIAL", "MCMC_CAVEAT"]

#: Guarantees from the weakest to the strongest; a table's is its weakest part's.
GUARANTEE_RANK = {"none": 0, "aDP": 1, "DP": 2}
#: The guarantee in words.
KINDS = {
    "none": "not private",
    "aDP": "asymptotic DP: a local bound computed from this data set, not a guarantee",
    "DP": "strict DP",
}
#: How every message computed from the data begins.
CONFIDENTIAL = "CONFIDENTIAL (computed from the data; do not publish)"
#: What every statement of a model-based release says of MCMC, whatever the fit did (the book's introduction).
MCMC_CAVEAT = ("the guarantee is stated for an exact posterior draw; the draw comes from MCMC chains, whose "
               "convergence checks are for the data holder and decide nothing")


def _f(v: float) -> str:
    return f"{v:.4g}"


@dataclass(frozen=True)
class SynthesizerPrivacy:
    """What a fitted :class:`~dpsynth.Synthesizer` reports.

    Attributes
    ----------
    mechanism, name : str
        Registry key and display name.
    guarantee : str
        ``"none"``, ``"aDP"`` or ``"DP"``, from the mechanism's spec.
    relation : str
        The neighbour relation of every eps here (``"remove"`` or ``"replace"``).
    budget : Budget
        The total of the first release and its shares (size, reference, draw) under ``relation``.
    delta : float
        Local Lipschitz bound (NaN for a model-free mechanism). Computed from the data: confidential.
    bound : float
        Censoring bound M (inf when not censored).
    n_censored, n : int
        Records censored at one or more draws, and records fitted. Confidential.
    censored_typical : float
        The share of records outside their window at a typical draw (the mean over draws). Confidential.
    rhat_max, ess_min : float
        Worst R-hat and bulk ESS over every fit the mechanism ran (NaN without MCMC). Confidential.
    divergences : int
        Divergent transitions over every fit. Confidential.
    converged : bool
        Whether every fit passed its checks. Confidential.
    released : str
        What one release is, in words.
    draws_kept : int
        Posterior draws the synthesizer keeps (1 for a model-free release).
    extra : dict
        Mechanism-specific numbers (confidential when computed from the data).
    mode : str
        ``"release"`` or ``"research"`` (:mod:`dpsynth.release.mode`).
    bounds : tuple or None
        The target's public bounds in the data's unit (every value was clamped to them), or None.
    clamped : int
        Values moved by the clamp. Confidential.
    condition : str
        The condition the guarantee holds under, when no check can establish it (a user's model function must
        read the confidential data only through its argument ``x``:
        :func:`dpsynth.models.user_function.guarantee_condition`); ``""`` for none. Part of the statement.
    """

    mechanism: str
    name: str
    guarantee: str
    relation: str
    budget: Budget
    delta: float
    bound: float
    n_censored: int
    n: int
    rhat_max: float
    ess_min: float
    divergences: int
    converged: bool
    released: str = "one posterior draw"
    draws_kept: int = 1
    extra: dict = field(default_factory=dict)
    mode: str = "release"
    censored_typical: float = 0.0
    bounds: tuple | None = None
    clamped: int = 0
    condition: str = ""

    @property
    def noisy(self) -> bool:
        """Whether the release rests on DP noise drawn with the fit (a size, a reference, a histogram)."""
        return bool(self.budget.size or self.budget.reference or self.budget.marginal or self.model_free)

    def mode_phrase(self) -> str:
        """Where the randomness came from: the system's entropy (release mode) or a seed (research mode)."""
        return research_phrase(self.mode)

    @property
    def eps(self) -> float:
        """The total eps under :attr:`relation` of the first ``budget.releases`` releases."""
        return float(self.budget.total)

    @property
    def eps_draw(self) -> float:
        """What each further release from another draw adds (0 for a model-free mechanism: its one release serves
        any number of files)."""
        return 0.0 if self.model_free else float(self.budget.draw)

    @property
    def censored_share(self) -> float:
        """Share of the records censored (confidential)."""
        return self.n_censored / self.n

    @property
    def model_free(self) -> bool:
        """Whether one release is a model-free mechanism's (one release, no draws)."""
        return not self.released.endswith("posterior draw")

    def kind(self) -> str:
        """The guarantee in words, with the condition it holds under (if any)."""
        if self.condition and self.guarantee != "none":
            return f"{KINDS[self.guarantee]} {self.condition}"
        return KINDS[self.guarantee]

    def statement(self) -> str:
        """The public statement of the first release: the guarantee (and the condition it holds under), the total eps
        under the relation, its split."""
        b = self.budget
        files = "one released file" if b.releases == 1 else f"{b.releases} released files"
        s = (f"{self.name} ({self.kind()}): eps = {_f(self.eps)} with {neighbours_phrase(self.relation)} "
             f"for {files} = {b.phrase(draw_what=self.released)}")
        if self.model_free:
            s += "; any number of files drawn from this one release cost nothing more"
        else:
            s += f"; each further file from another posterior draw adds {_f(b.draw)}"
        if self.bounds is not None:
            s += (f"; values outside the public bounds [{_f(self.bounds[0])}, {_f(self.bounds[1])}] are clamped to "
                  f"them")
        s += f"; {self.mode_phrase()}"
        return s + f"; {MCMC_CAVEAT}." if not self.model_free else s + "."

    def worth(self) -> str:
        """What holding the synthesizer (its kept draws) is worth under sequential composition."""
        b, k = self.budget, self.draws_kept
        rel = neighbours_phrase(self.relation)
        if self.model_free:
            return (f"it holds {self.released}: sharing it is worth its eps = {_f(self.eps)} with {rel}. Keep it "
                    f"confidential.")
        fixed = b.size + b.reference + b.marginal
        head = f"{_f(fixed)} + " if fixed else ""
        return (f"it holds {k} posterior draw(s): whoever has it can release each of them, so sharing it is worth up "
                f"to "
                f"{head}{k} x {_f(b.draw)} = {_f(b.cost(k))} with {rel}. Keep it confidential.")

    def diagnostics(self) -> str:
        """The figures computed from the data, for the data holder only (never for publication)."""
        s = f"{CONFIDENTIAL}: n = {self.n}"
        if np.isfinite(self.delta):
            s += f", Delta = {self.delta:.4g}"
        if np.isfinite(self.bound):
            s += (f", censoring bound M = {self.bound:.4g}, {self.censored_typical:.0%} of the records censored at a "
                  f"typical draw ({self.n_censored} of {self.n} at one draw or more)")
        if self.bounds is not None:
            s += f", {self.clamped} value(s) clamped to the public bounds"
        if np.isfinite(self.rhat_max):
            s += (f"; convergence: R-hat max {self.rhat_max:.3f}, bulk ESS min {self.ess_min:.0f}, "
                  f"{self.divergences} divergence(s)")
            if not self.converged:
                s += (" - THE CHAINS FAILED THEIR CHECKS: the draws may not be from the posterior, so the synthetic "
                      "data may be poor and the guarantee, stated for an exact posterior draw, rests on a sampler "
                      "that did not show it got there; more draws and tuning steps (sampler=) help")
        return s + "."

    def to_dict(self) -> dict:
        """Plain-JSON dict."""
        d = dataclasses.asdict(self)
        d["budget"] = self.budget.to_dict()
        return d

    @classmethod
    def from_dict(cls, d: dict) -> SynthesizerPrivacy:
        """Read :meth:`to_dict`."""
        b = d.get("bounds")
        return cls(**{**d, "budget": Budget(**d["budget"]), "bounds": None if b is None else tuple(b)})


@dataclass(frozen=True)
class TablePrivacy:
    """What a fitted :class:`~dpsynth.TableSynthesizer` reports: its parts' reports and their composition.

    Attributes
    ----------
    targets : tuple of str
        The confidential columns, in the order they are synthesized.
    parts : tuple of dpsynth.release.statement.SynthesizerPrivacy
        Each conditional's report (its budget: its reference and its draw).
    relation : str
        The neighbour relation of every eps.
    budget : TableBudget
        The table's total and the released size's share.
    """

    targets: tuple
    parts: tuple
    relation: str
    budget: TableBudget

    @property
    def guarantee(self) -> str:
        """The weakest part's guarantee."""
        return min((p.guarantee for p in self.parts), key=GUARANTEE_RANK.__getitem__)

    def _sum(self, guarantee: str, what: str = "eps") -> float:
        return float(sum(getattr(p, what) for p in self.parts if p.guarantee == guarantee))

    @property
    def eps(self) -> float:
        """Strict-DP total of the first ``budget.releases`` released tables: the size's share and every strict-DP
        part's."""
        return self.budget.size + self._sum("DP")

    @property
    def eps_draw(self) -> float:
        """What each further table from new draws of every strict-DP part adds."""
        return self._sum("DP", "eps_draw")

    @property
    def adp_eps(self) -> float:
        """The aDP parts' local eps (listed apart, not a guarantee)."""
        return self._sum("aDP")

    @property
    def converged(self) -> bool:
        """Whether every part's fit passed its convergence checks."""
        return all(p.converged for p in self.parts)

    def statement(self) -> str:
        """The public statement of the first released table."""
        rel = neighbours_phrase(self.relation)
        split = "; ".join(f"{t}: {p.name} ({p.guarantee}) {p.budget.phrase(draw_what=p.released)}"
                          for t, p in zip(self.targets, self.parts, strict=True))
        size = f"released size {_f(self.budget.size)} (a DP count, once); " if self.budget.size else ""
        dp = [t for t, p in zip(self.targets, self.parts, strict=True) if p.guarantee == "DP"]
        s = (f"Whole-table release of {len(self.targets)} confidential column(s) ({', '.join(self.targets)}), each "
             f"from the release of its conditional (one posterior draw of a model, or a model-free release): ")
        tables = "one released table" if self.budget.releases == 1 else f"{self.budget.releases} released tables"
        s += (f"strict DP eps = {_f(self.eps)} with {rel} for {tables} (the sum over {', '.join(dp)}"
              f"{' and the released size' if self.budget.size else ''}); each further table from new draws adds "
              f"{_f(self.eps_draw)}") if dp else "no strictly DP part"
        adp = [t for t, p in zip(self.targets, self.parts, strict=True) if p.guarantee == "aDP"]
        if adp:
            s += (f"; aDP parts ({', '.join(adp)}: eps = {_f(self.adp_eps)} for this data set only) listed apart, not "
                  f"summed")
        none = [t for t, p in zip(self.targets, self.parts, strict=True) if p.guarantee == "none"]
        if none:
            s += f"; NOT PRIVATE: {', '.join(none)}"
        conditions = [f"{t}: {p.condition}" for t, p in zip(self.targets, self.parts, strict=True)
                      if p.condition and p.guarantee != "none"]
        if conditions:
            s += f"; each guarantee holds only under its condition ({'; '.join(conditions)})"
        s += f". Split: {size}{split}"
        clamped = [t for t, p in zip(self.targets, self.parts, strict=True) if p.bounds is not None]
        if clamped:
            s += f"; values of {', '.join(clamped)} outside their public bounds are clamped to them"
        modes = {p.mode for p in self.parts}
        s += f"; {research_phrase('research' if 'research' in modes else 'release')}"
        return s + (f"; {MCMC_CAVEAT}." if any(not p.model_free for p in self.parts) else ".")

    def diagnostics(self) -> str:
        """The parts' confidential figures, one line each."""
        return "\n".join(f"{t}: {p.diagnostics()}" for t, p in zip(self.targets, self.parts, strict=True))

    def worth(self, keep_draws: int) -> str:
        """What holding the saved synthesizer is worth: each kept draw of each part could be released."""
        fixed = self.budget.size + sum(p.budget.reference + p.budget.marginal
                                       + (p.budget.draw or 0.0 if p.model_free else 0.0)
                                       for p in self.parts if p.guarantee == "DP")
        return (f"it holds up to {keep_draws} posterior draw(s) of each of its {len(self.parts)} conditional(s): "
                f"whoever has it can release each of them, so sharing it is worth up to {_f(fixed)} + {keep_draws} x "
                f"{_f(self.eps_draw)} = {_f(fixed + keep_draws * self.eps_draw)} with "
                f"{neighbours_phrase(self.relation)} "
                f"(strict-DP parts). Keep it confidential.")
