"""Parameters of the "Releasing a whole table" chapter: the tables, the epsilons, the methods, the peers' delta."""

from __future__ import annotations

from dataclasses import dataclass

from ...validation import DataError
from ..base_params import StudyParams

__all__ = ["WholeTableParams", "TABLE_KEYS", "METHOD_KEYS", "METHOD_NAMES"]

#: The real tables the chapter can use (see :data:`.replicate.TABLES`).
TABLE_KEYS = ("house_prices", "nmes1988")
#: The methods compared: this project's chain-rule table synthesizer, independent columns, SmartNoise's MST and AIM.
METHOD_KEYS = ("table", "independent", "mst", "aim")
#: Display names of the methods.
METHOD_NAMES = {"table": "Chain rule (ours)", "independent": "Independent", "mst": "MST", "aim": "AIM"}


@dataclass(frozen=True)
class WholeTableParams(StudyParams):
    """The whole-table benchmark.

    The data are fixed (real files), so a replicate is a new run of every method on them: new MCMC
    chains, new noise, and one synthetic table per method from one posterior draw of each model.

    Attributes
    ----------
    tables : tuple of str
        Real tables (:data:`TABLE_KEYS`).
    eps : tuple of float
        Target epsilons of a whole table, one record removed (ours: summed over the columns'
        mechanisms, split equally; the peers: their (eps, delta)).
    methods : tuple of str
        Methods compared (:data:`METHOD_KEYS`).
    delta : float
        The peers' delta (MST and AIM are (eps, delta)-DP); ours is strict DP (delta 0).
    nmes_n : int
        Rows of the fixed public subsample of NMES 1988 (:func:`dpsynth.public_data.nmes1988_table`).
    n : int
        0: every row of each table (NMES: ``nmes_n``); a smaller n takes the first n rows of a fixed
        permutation of each (smoke tests only).
    """

    replicates: int = 1
    draws: int = 300
    tune: int = 300
    seed: int = 20261125
    tables: tuple[str, ...] = ("house_prices",)
    eps: tuple[float, ...] = (3.0,)
    methods: tuple[str, ...] = METHOD_KEYS
    delta: float = 1e-6
    nmes_n: int = 1000
    n: int = 0

    def validate(self) -> None:
        """Shared checks, then the chapter's (each error names the field)."""
        super().validate()
        if not self.eps or any(e <= 0 for e in self.eps) or len(set(self.eps)) != len(self.eps):
            raise DataError(f"`eps` must hold distinct positive epsilons; got {self.eps!r}.")
        for name, keys in (("tables", TABLE_KEYS), ("methods", METHOD_KEYS)):
            vals = getattr(self, name)
            bad = [v for v in vals if v not in keys]
            if bad or not vals or len(set(vals)) != len(vals):
                raise DataError(f"`{name}` must be distinct keys among {keys}; got {vals!r}.")
        if not 0 < self.delta < 1e-3:
            raise DataError(f"`delta` must be in (0, 0.001) (the peers' delta, well below 1/n); got {self.delta!r}.")
        if not 50 <= self.nmes_n <= 4406:
            raise DataError(f"`nmes_n` must be between 50 and 4406; got {self.nmes_n!r}.")
        if self.n < 0 or 0 < self.n < 50:
            raise DataError(f"`n` must be 0 (all rows) or at least 50; got {self.n!r}.")

    @classmethod
    def quick(cls) -> WholeTableParams:
        """Minutes: one run of every method on the house prices at eps 3, 200 draws after 200 tuning steps per chain."""
        return cls(scale="quick", draws=200, tune=200)

    @classmethod
    def paper(cls) -> WholeTableParams:
        """Three runs of every method on both tables at eps 1, 3 and 5, 300 draws per chain."""
        return cls(scale="paper", replicates=3, tables=TABLE_KEYS, eps=(1.0, 3.0, 5.0))

    @classmethod
    def smoke(cls) -> WholeTableParams:
        """About a minute: 150 rows of NMES 1988, eps 3, 100 draws, ours and Independent only.

        The peers are left out so that the notebook's smoke test runs without ``.venv-peers``; the
        replicate's tests drive them (and are skipped, with the reason, where they are missing).
        """
        return cls(scale="smoke", replicates=1, draws=100, tune=100, tables=("nmes1988",), n=150,
                   methods=("table", "independent"))
