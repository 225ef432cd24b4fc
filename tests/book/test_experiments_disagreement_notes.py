"""The marked notes on the four disagreements with the papers listed in issue 21: each chapter page
has an admonition titled "Open: …" or "Explained: …", rendered by the package functions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dpsynth_book.notes import MARKERS, disagreement_note, note_title
from dpsynth_book.verdicts import Verdict

NB = Path(__file__).resolve().parents[2] / "notebooks"

#: page -> text that must be in the code cell that renders its marked note
PAGES = {
    "own_data.ipynb": "censor_uw_hump_note(res)",
    "sdr_application.ipynb": "censor_w_utility_note(res)",
    "reweighting.ipynb": "contraction_note(res)",
    "censoring.ipynb": "\"Censor_w's counts in the paper's Table 1\"",
}


@pytest.mark.parametrize("holds,marker,cls", [(True, "Explained", "note"), (False, "Open", "warning"),
                                               (None, "Open", "warning")])
def test_note_is_marked_by_the_verdict(holds, marker, cls):
    v = Verdict("k", "An explanation.", holds, "The numbers 1.5 and 2.")
    text = disagreement_note(v, "a thing")
    assert text.startswith(f":::{{admonition}} {marker}: a thing\n:class: {cls}\n") and text.endswith(":::\n")
    assert "The numbers 1.5 and 2." in text and note_title(v, "x") == f"{marker}: x"


@pytest.mark.parametrize("page,call", list(PAGES.items()))
def test_each_disagreement_has_a_marked_note_on_its_page(page, call):
    cells = json.loads((NB / page).read_text())["cells"]
    code = [i for i, c in enumerate(cells) if c["cell_type"] == "code" and call in "".join(c["source"])]
    assert len(code) == 1, f"{page}: no cell rendering the disagreement note ({call})"
    src = "".join(cells[code[0]]["source"])
    assert "display(Markdown(" in src
    assert cells[code[0] - 1]["cell_type"] == "markdown" and "disagreement" in "".join(cells[code[0] - 1]["source"])
    assert MARKERS == ("Explained", "Open")
