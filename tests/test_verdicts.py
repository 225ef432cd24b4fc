"""Structured verdicts render as a numbered list."""

from dpsynth.verdicts import Verdict, verdicts_markdown


def test_verdict_markdown():
    v = [Verdict("a", "PH is the least useful", False, "worse in 2 of 12 cells", {"cells": 2}),
         Verdict("b", "Censored stay at eps/2", True, "in all 8 replicates")]
    md = verdicts_markdown(v)
    assert md.startswith("1. *PH is the least useful* — **does not hold**: worse in 2 of 12 cells")
    assert "2. *Censored stay at eps/2* — **holds**" in md
    assert Verdict("c", "x", None, "y").word == "undecided"
