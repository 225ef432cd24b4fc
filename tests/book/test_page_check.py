"""Each page agrees with itself and with the others.

* the numbers a page's verdicts quote are in a table of that page (:mod:`dpsynth_book.page_check`);
* no page shows the censoring paper's "Weighted" as a mechanism name (the book's name is LW),
  except the one sentence that says the censoring paper calls it so;
* no page states the opposite of a verdict of another page (:data:`RESTATED`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dpsynth_book import page_check
from dpsynth_book.book import table_markdown
from dpsynth_book.verdicts import Verdict, verdicts_markdown

REPO = Path(__file__).resolve().parents[2]


def _page(verdicts: list[Verdict], tables: list, params: dict | None = None) -> dict:
    """A constructed executed notebook: tables as MyST table directives, verdicts as the chapters render them."""
    outputs = [{"output_type": "display_data", "metadata": {},
                "data": {"text/markdown": table_markdown(t, f"tbl-x{i}", "A table.")}} for i, t in enumerate(tables)]
    outputs.append({"output_type": "display_data", "metadata": {},
                    "data": {"text/markdown": verdicts_markdown(verdicts)}})
    return {"cells": [{"cell_type": "code", "source": "", "metadata": {}, "outputs": outputs}],
            "metadata": {"papermill": {"parameters": params or {}}}}


def _table():
    import pandas as pd

    return pd.DataFrame({"local 2Δ": [5.0234, 4.9171], "censored": ["0", "202"], "share": ["12%", "–"]},
                        index=pd.Index(["LW (aDP)", "Censor_uw (DP)"], name="synthesizer"))


def test_a_page_whose_verdicts_quote_its_tables_passes():
    v = [Verdict("a", "LW exceeds the target.", True, "local 2Δ 5.02 (LW), 4.9 (Censor_uw); 202 of 1000 censored; "
                 "0.12 of records (Figures 14–17 of the paper; A[0.4,1.8] aside); 3 of 4 replicates.")]
    page = _page(v, [_table()])
    assert page_check.unheld_numbers(page, declared=[1000]) == []


def test_a_verdict_quoting_a_number_no_table_holds_fails():
    v = [Verdict("a", "LW exceeds the target.", True, "local 2Δ 4.83 (replicate 0); Censor_w censors 1.3 on average.")]
    unheld = page_check.unheld_numbers(_page(v, [_table()]))
    assert [u[0] for u in unheld] == ["4.83", "1.3"]
    # a more precise quote than the table holds is not held either
    more = [Verdict("b", "x", True, "local 2Δ 5.0234.")]  # the table shows 5.02
    assert [u[0] for u in page_check.unheld_numbers(_page(more, [_table()]))] == ["5.0234"]
    coarser = [Verdict("b", "x", True, "local 2Δ 5.0.")]
    assert page_check.unheld_numbers(_page(coarser, [_table()])) == []


def test_declared_parameters_and_small_integers_are_exempt_and_nothing_else():
    v = [Verdict("a", "c", True, "at eps 0.5 and n = 2000, in 7 replicates; 11 records.")]
    assert [u[0] for u in page_check.unheld_numbers(_page(v, [_table()]), declared=[0.5, 2000])] == ["11"]
    assert page_check.declared_numbers({"eps_grid": [0.5, 3.0], "n": 2000, "flag": True, "name": "x"}) == {
        0.5, 3.0, 2000.0}


def test_numbers_are_read_as_written():
    got = [(q.text, q.value, q.decimals, q.percent) for q in page_check.numbers_in("28,155 records, 4.83, 12%, 1e-06")]
    assert got == [("28,155", 28155.0, 0, False), ("4.83", 4.83, 2, False), ("12%", 12.0, 0, True),
                   ("1e-06", 1e-06, 6, False)]


#: chapters whose pages render verdicts
VERDICT_CHAPTERS = ("censoring", "reweighting", "range_restriction", "sdr_application", "own_data", "whole_table")
#: Pages with quoted numbers no table holds yet, each with what the check found at paper scale; the test
#: expects them to fail (strict), so fixing one makes it fail until it is taken off this list.
OPEN: dict[str, str] = {}


@pytest.mark.slow
@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(reason=OPEN[n], strict=True))
                                  if n in OPEN else n for n in VERDICT_CHAPTERS])
def test_every_number_a_verdict_quotes_is_in_a_table_of_its_page(name, smoke_notebooks):
    _, path = smoke_notebooks.get(name)
    nb = page_check.read_notebook(path)
    assert page_check.verdict_evidence(nb), f"{name}: no verdicts found on the page"
    unheld = page_check.unheld_numbers(nb, page_check.page_declared(nb, name))
    assert not unheld, f"{name}: numbers quoted by verdicts that no table on the page holds: {unheld}"


# --------------------------------------------------------------------------------------------
# one name per mechanism
# --------------------------------------------------------------------------------------------

#: "Weighted" as a mechanism name: not Unweighted, not Weighted-e (a mechanism of its own), not a key.
_WEIGHTED = re.compile(r"(?<![A-Za-z_])Weighted(?![-\w])")
#: The one sentence a page may use to name the censoring paper's term.
_PAPER_TERM = re.compile(r'censoring paper calls[^.]*"Weighted"')


def weighted_as_a_name(text: str) -> list[str]:
    """Lines of ``text`` that show "Weighted" as a mechanism name, the paper-term sentence aside (once)."""
    text = _PAPER_TERM.sub("", text, count=1)
    return [ln.strip()[:120] for ln in text.splitlines() if _WEIGHTED.search(ln)]


def _page_text(path: Path) -> str:
    nb = json.loads(path.read_text(encoding="utf-8"))
    parts = []
    for c in nb["cells"]:
        if c["cell_type"] == "markdown":
            parts.append("".join(c["source"]))
        for o in c.get("outputs", []):
            for mime, v in o.get("data", {}).items():
                if mime.startswith("text/"):
                    parts.append("".join(v) if isinstance(v, list) else v)
            if "text" in o:
                parts.append("".join(o["text"]))
    return "\n".join(parts)


def test_the_weighted_name_check_catches_the_name_and_spares_the_rest():
    assert weighted_as_a_name('| Weighted (aDP) | 5.02 |') == ["| Weighted (aDP) | 5.02 |"]
    assert weighted_as_a_name("Unweighted, Weighted-e and LW; `--mechanism weighted`") == []
    assert weighted_as_a_name('The censoring paper calls it "Weighted"; the book says LW.') == []
    twice = 'The censoring paper calls it "Weighted". The censoring paper calls it "Weighted".'
    assert len(weighted_as_a_name(twice)) == 1


def test_the_book_s_text_pages_show_one_name():
    for page in sorted((REPO / "book").glob("*.md")):
        assert not weighted_as_a_name(page.read_text(encoding="utf-8")), page.name


@pytest.mark.slow
@pytest.mark.parametrize("name", ["censoring", "sdr_application", "own_data", "choosing", "reweighting",
                                  "range_restriction", "whole_table", "tutorial"])
def test_executed_pages_show_one_name_per_mechanism(name, smoke_notebooks):
    _, path = smoke_notebooks.get(name)
    assert not weighted_as_a_name(_page_text(path)), name


# --------------------------------------------------------------------------------------------
# no page states the opposite of another page's verdict
# --------------------------------------------------------------------------------------------

#: Sentences of the book's pages that restate a chapter's verdict: (pattern, chapter, verdict key,
#: whether the sentence says the claim holds). A page must not restate a verdict with the opposite sign.
RESTATED = [
    (re.compile(r"(?i)\b(?:LW|Weighted)\b[^.]{0,40}\b(?:best|most useful)\b[^.]{0,40}utility"),
     "censoring", "weighted_most_useful", True),
    (re.compile(r"(?i)(?<!if the )local bound[^.]{0,60}\bcontracts\b(?![^.]{0,40}\bnot\b)"),
     "reweighting", "local_bound_contracts", True),
]


#: A sentence that attributes the claim to the papers ("the papers argue that ...") reports, not restates.
_ATTRIBUTED = re.compile(r"(?i)\bpapers?\b|\bpaper's\b|\bargu")


def restated_contradictions(texts: dict[str, str], verdicts: dict[tuple[str, str], bool | None]) -> list[str]:
    """``page: sentence`` for each sentence of ``texts`` that restates a verdict with the opposite sign.

    ``verdicts`` maps (chapter, key) to ``holds``; an undecided verdict (None) is not contradicted.
    """
    out = []
    for page, text in texts.items():
        for sentence in re.split(r"(?<=[.!?])\s+", text):
            for pattern, chapter, key, says in RESTATED:
                holds = verdicts.get((chapter, key))
                if (holds is not None and holds != says and pattern.search(sentence)
                        and not _ATTRIBUTED.search(sentence)):
                    out.append(f"{page}: {sentence.strip()[:160]}")
    return out


def test_a_sentence_stating_the_opposite_of_a_verdict_is_caught():
    texts = {"intro.md": "Under aDP the local bound contracts onto a global one as n grows. Other text."}
    assert restated_contradictions(texts, {("reweighting", "local_bound_contracts"): False}) == [
        "intro.md: Under aDP the local bound contracts onto a global one as n grows."]
    assert restated_contradictions(texts, {("reweighting", "local_bound_contracts"): True}) == []
    best = {"choosing.md": "LW has the best utility of the model-based mechanisms."}
    assert restated_contradictions(best, {("censoring", "weighted_most_useful"): False})


def _source_texts() -> dict[str, str]:
    texts = {p.name: p.read_text(encoding="utf-8") for p in (REPO / "book").glob("*.md")}
    for nb in (REPO / "notebooks").glob("*.ipynb"):
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        texts[nb.name] = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    return texts


@pytest.mark.slow
def test_no_page_states_the_opposite_of_a_verdict_of_the_shipped_results(monkeypatch):
    import importlib

    monkeypatch.setenv("DPSYNTH_RESULTS", "use")
    verdicts = {}
    for chapter in sorted({c for _, c, _, _ in RESTATED}):
        module = importlib.import_module(f"dpsynth_book.experiments.{chapter}")
        results = module.run(module.Params.paper(), progress=False)
        verdicts.update({(chapter, v.key): v.holds for v in module.verdicts(results)})
    for _, chapter, key, _ in RESTATED:
        assert (chapter, key) in verdicts, f"{chapter} has no verdict {key!r}"
    assert restated_contradictions(_source_texts(), verdicts) == []


# ---------------------------------------------------------------------------------------------- page form


def test_raw_myst_in_the_rendered_text_is_found_by_kind():
    raw = "Table 6.1 ```{table} Every measure :name: tbl-wt-compare-1 and {glue:text}`x` and $$a$$"
    kinds = {d.split(":")[0] for d in page_check.raw_myst_defects(raw)}
    assert {"directive fence", "code fence", "directive option", "role", "display maths"} <= kinds
    clean = "Table 6.1: every measure; price ~ lotsize + stories, $10,000 to $200,000."
    assert page_check.raw_myst_defects(clean) == []


def test_captions_with_internal_names_are_found_and_names_a_reader_knows_pass():
    bad = page_check.caption_defects("Fits converged: Unweighted True. Tuned by match_max_iter.")
    assert any("True" in d for d in bad) and any("match_max_iter" in d for d in bad)
    assert page_check.caption_defects("None of the fits failed; Censor_uw and LW censor records.") == []


def test_plumbing_cells_are_found_and_the_study_api_is_not_plumbing():
    def nb(*cells):
        return {"cells": [{"cell_type": "code", "metadata": {"tags": t}, "source": s} for s, t in cells]}

    shown = nb(("from IPython.display import Markdown, display", []),
               ("from dpsynth_book.experiments.own_data import Params, run, demo", ["remove-input"]),
               ("params = Params.preset('quick')\nres = run(params)", []),
               ("api = demo.api_demo(params)", []),
               ("from dpsynth import Synthesizer\ns = Synthesizer(df, 'wage', eps=1.0)", []))
    found = {i: r for i, _, r in page_check.plumbing_cells(shown)}
    assert set(found) == {0, 3}, found
    assert "imports IPython.display" in found[0][0] and "uses demo" in found[3][0]


@pytest.mark.parametrize("path", sorted((REPO / "notebooks").glob("*.ipynb")), ids=lambda p: p.stem)
def test_no_chapter_shows_a_plumbing_cell(path):
    assert page_check.plumbing_cells(path) == []
