"""The 'Choosing a mechanism' chapter: the decision table, the odds table and privacy against utility.

The chapter runs no study of its own: it reads the other chapters' shipped paper-scale results
(:func:`~.tables.shipped_studies`). :mod:`.tables` holds its tables and computed text, and
:mod:`.figures` the privacy-utility figure and its caption; their public names are re-exported here.
"""

from __future__ import annotations

from .figures import tradeoff_caption, tradeoff_figure
from .tables import (
    TRADEOFF_COLUMNS,
    TRADEOFF_STUDIES,
    decision_table,
    odds_table,
    posterior_probability_bound,
    shipped_studies,
    tradeoff_markdown,
    tradeoff_table,
)

__all__ = ["decision_table", "odds_table", "posterior_probability_bound", "TRADEOFF_STUDIES",
           "TRADEOFF_COLUMNS", "shipped_studies", "tradeoff_table", "tradeoff_markdown", "tradeoff_figure",
           "tradeoff_caption"]
