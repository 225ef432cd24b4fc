"""Parameters of the "Releasing a whole table" chapter: the tables, the epsilons, the methods, the peers' delta."""

from __future__ import annotations

from dataclasses import dataclass

from dpsynth.validation import DataError

from ..base_params import StudyParams

__all__ = ["WholeTableParams", "TABLE_KEYS", "METHOD_KEYS", "METHOD_NAMES", "EPS_GRID"]

#: The real tables the chapter can use (see :data:`.replicate.TABLES`).
TABLE_KEYS = ("house_prices", "nmes1988", "islr_wage")
#: The methods compared: the package's whole-table default (``mechanisms="auto"``), the chain of censored
#: regressions alone (the default before it), SmartNoise's MST and AIM.
METHOD_KEYS = ("auto", "censor_chain", "mst", "aim")
#: Display names of the methods.
METHOD_NAMES = {"auto": "Ours (auto)", "censor_chain": "Censored chain", "mst": "MST", "aim": "AIM"}
#: The epsilons of the book's head-to-head grid (the choosing chapter reads the whole-table row from here).
EPS_GRID = (0.5, 1.0, 2.0, 3.0, 5.0, 10.0)


@dataclass(frozen=True)
class WholeTableParams(StudyParams):
    """The whole-table benchmark.

    The data are fixed (real files), so a replicate is a new run of every method on them: new MCMC
    chains, new noise, new synthetic tables.

    Attributes
    ----------
    tables : tuple of str
        Real tables (:data:`TABLE_KEYS`).
    eps : tuple of float
        The total epsilon of a released table, one record removed (added or removed for the peers):
        every column of every table is confidential.
    methods : tuple of str
        Methods compared (:data:`METHOD_KEYS`).
    delta : float
        The peers' delta (MST and AIM are (eps, delta)-DP); ours is strict DP (delta 0).
    implicates : int
        Synthetic tables an analyst combines for an interval (``m``); ours pays for them in its total
        (``releases=m``: free for its noise-aware columns), the peers' one table is used as if it were real.
    nmes_n : int
        Rows of the fixed public subsample of NMES 1988 (:func:`dpsynth_book.public_data.nmes1988_table`).
    n : int
        0: every row of each table (NMES: ``nmes_n``); a smaller n takes the first n rows of a fixed
        permutation of each (smoke tests only).
    """

    replicates: int = 1
    draws: int = 300
    tune: int = 300
    seed: int = 20261126
    tables: tuple[str, ...] = ("house_prices",)
    eps: tuple[float, ...] = (3.0,)
    methods: tuple[str, ...] = METHOD_KEYS
    delta: float = 1e-6
    implicates: int = 5
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
        if not 2 <= self.implicates <= 20:
            raise DataError(f"`implicates` must be between 2 and 20 (m synthetic tables combined); got "
                            f"{self.implicates!r}.")
        if not 50 <= self.nmes_n <= 4406:
            raise DataError(f"`nmes_n` must be between 50 and 4406; got {self.nmes_n!r}.")
        if self.n < 0 or 0 < self.n < 50:
            raise DataError(f"`n` must be 0 (all rows) or at least 50; got {self.n!r}.")

    @classmethod
    def quick(cls) -> WholeTableParams:
        """Minutes: one run of ours and MST on the house prices at eps 3, 200 draws after 200 tuning steps."""
        return cls(scale="quick", draws=200, tune=200, methods=("auto", "mst"))

    @classmethod
    def paper(cls) -> WholeTableParams:
        """Two runs of every method on the three tables at every eps of the book's grid, with the release sampler
        (1000 draws after 1000 tuning steps per chain, as a TableSynthesizer fits by default)."""
        return cls(scale="paper", replicates=5, tables=TABLE_KEYS, eps=EPS_GRID, draws=1000, tune=1000)

    @classmethod
    def smoke(cls) -> WholeTableParams:
        """About a minute: 150 rows of NMES 1988, eps 3, 100 draws, ours only.

        The peers are left out so that the notebook's smoke test runs without ``.venv-peers``; the
        replicate's tests drive them (and are skipped, with the reason, where they are missing).
        """
        return cls(scale="smoke", replicates=1, draws=100, tune=100, tables=("nmes1988",), n=150,
                   methods=("auto",), implicates=2)
