"""One parametrised smoke test for every chapter notebook (papermill, ``scale="smoke"``).

Each chapter runs end to end through papermill with its ``smoke()`` preset; then its package
``run`` loads the same cached studies and its ``verdicts`` are checked as structured objects
(never as printed sentences). The executed notebooks are shared with the book test.
"""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import pytest

from dpsynth_book.verdicts import Verdict

REPO = Path(__file__).resolve().parents[2]

#: chapter -> verdict keys that must hold at smoke scale (the guarantees, not the utility rankings)
CHAPTERS: dict[str, tuple[str, ...]] = {
    "tutorial": (),
    "censoring": ("censored_within_bound", "counts_rise_as_eps_falls", "mixing_multiplies_eps",
                  "censoring_flattens_posterior", "ref_within_bound"),
    "reweighting": ("reweighting_never_raises_delta", "weights_in_unit_interval", "one_signed_window",
                    "lw_lowers_delta"),
    "range_restriction": ("accounting_consistent", "lw_below_unweighted", "averaged_within_lw",
                          "whole_term_within_lw", "literal_b_exceeds_by_range_term"),
    "sdr_application": ("censored_within_bound", "privacy_relations", "mixed_sets_compose_eps",
                        "reweighting_keeps_delta"),
    "own_data": ("censored_within_bound", "privacy_relations", "unit_changes_censoring", "offset_is_a_unit",
                 "statement_is_the_total", "censor_uw_moves_with_unit"),
    "whole_table": (),
    "choosing": (),
    "teaching": (),
    "reproduce": (),
}
#: pages with no study of their own (no Params, run and verdicts; choosing has tables and figures only)
NO_STUDY = ("tutorial", "choosing", "teaching", "reproduce")


#: a glue role of a Markdown cell: {glue:text}`key:format` or {glue:md}`key:myst`
GLUE_ROLE = re.compile(r"\{glue:(text|md)\}`([^`:]+)(?::[^`]*)?`")


def glue_references(name: str) -> set[tuple[str, str]]:
    """(role, key) of every glue role in the Markdown cells of a source notebook."""
    nb = json.loads((REPO / "notebooks" / f"{name}.ipynb").read_text(encoding="utf-8"))
    return {(m.group(1), m.group(2)) for c in nb["cells"] if c["cell_type"] == "markdown"
            for m in GLUE_ROLE.finditer("".join(c["source"]))}


def code_lines(name: str) -> tuple[int, int]:
    """(code lines, number of `def`/`class` statements) of a source notebook."""
    nb = json.loads((REPO / "notebooks" / f"{name}.ipynb").read_text(encoding="utf-8"))
    lines = [ln for c in nb["cells"] if c["cell_type"] == "code" for ln in "".join(c["source"]).splitlines()]
    defs = sum(ln.lstrip().startswith(("def ", "class ")) for ln in lines)
    return len(lines), defs


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CHAPTERS))
def test_chapter_runs_at_smoke_scale(name, smoke_notebooks):
    nb, path = smoke_notebooks.get(name)
    assert path.exists()
    if name in NO_STUDY:
        assert nb.markdown
        return
    module = importlib.import_module(f"dpsynth_book.experiments.{name}")
    params = module.Params.smoke()
    results = module.run(params, cache_dir=smoke_notebooks.cache_dir, progress=False)
    verdicts = module.verdicts(results)
    assert verdicts and all(isinstance(v, Verdict) for v in verdicts)
    keys = [v.key for v in verdicts]
    assert len(set(keys)) == len(keys), keys
    assert all(v.holds in (True, False, None) for v in verdicts)
    by_key = {v.key: v for v in verdicts}
    for key in CHAPTERS[name]:
        assert by_key[key].holds is True, f"{name}: {key}: {by_key[key].evidence}"


@pytest.mark.parametrize("name", [n for n in CHAPTERS if n != "tutorial"])  # the tutorial may define its model
def test_chapter_notebook_is_narrative_plus_calls(name):
    lines, defs = code_lines(name)
    assert lines <= 150, f"{name} has {lines} code lines (at most 150)"
    assert defs == 0, f"{name} defines {defs} function(s) or class(es); move them to the package"


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in CHAPTERS if glue_references(n)])
def test_every_number_the_markdown_quotes_is_glued(name, smoke_notebooks):
    """Each {glue:text} key of the Markdown is glued by a code cell, each {glue:md} key as Markdown."""
    _, path = smoke_notebooks.get(name)
    nb = json.loads(path.read_text(encoding="utf-8"))
    glued = {o["metadata"]["scrapbook"]["name"]: o["data"] for c in nb["cells"] if c["cell_type"] == "code"
             for o in c.get("outputs", []) if "scrapbook" in o.get("metadata", {})}
    refs = glue_references(name)
    missing = sorted(key for _, key in refs if key not in glued)
    assert not missing, f"{name}: glue keys quoted by the Markdown but not glued: {missing}"
    not_md = sorted(key for role, key in refs if role == "md" and not any(k.endswith("text/markdown")
                                                                         for k in glued[key]))
    assert not not_md, f"{name}: {{glue:md}} keys glued without Markdown: {not_md}"


#: Pages a class runs cell by cell in the lab (Shift+Enter): a number of the text must be computed above it.
CELL_BY_CELL = ("tutorial", "teaching")


@pytest.mark.slow
@pytest.mark.parametrize("name", CELL_BY_CELL)
def test_every_number_is_glued_above_the_text_that_quotes_it(name, smoke_notebooks):
    """Run from the top with Shift+Enter, a Markdown cell shows its numbers only if a cell above glued them."""
    _, path = smoke_notebooks.get(name)
    nb = json.loads(path.read_text(encoding="utf-8"))
    glued, late = set(), []
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code":
            glued |= {o["metadata"]["scrapbook"]["name"] for o in cell.get("outputs", [])
                      if "scrapbook" in o.get("metadata", {})}
        elif cell["cell_type"] == "markdown":
            keys = {m.group(2) for m in GLUE_ROLE.finditer("".join(cell["source"]))}
            late += [f"cell {i}: {k}" for k in sorted(keys - glued)]
    assert not late, f"{name}: numbers quoted before the cell that glues them: {late}"
