"""Figure and table helpers of the book: numbered directives, legibility, environment."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from dpsynth_book import book  # noqa: E402


def test_figure_and_table_directives():
    md = book.figure_markdown("fig-x", "A caption with $\\varepsilon$.")
    assert md.startswith("```{glue:figure} fig-x\n:name: fig-x\n")
    df = pd.DataFrame({"a": [1.23456, np.nan], "ok": [True, False]}, index=pd.Index(["r1", "r|2"], name="row"))
    t = book.table_markdown(df, "tbl-x", "Caption")
    assert t.startswith("~~~{table} Caption\n:name: tbl-x")
    assert "| row | a | ok |" in t and "| r1 | 1.23 | yes |" in t and "r\\|2 | – | no" in t
    with pytest.raises(ValueError, match="`label`"):
        book.figure_markdown("Fig X", "c")


def test_a_table_directive_survives_any_caption_and_cell():
    """Backticks and newlines in a caption, pipes, newlines and fences in cells: one directive, one table.

    A backtick fence whose first line holds a backtick is no fence in CommonMark: the directive was
    printed as text ("```{table} ... :name: tbl-wt-compare-1") above the table, with an empty row below.
    """
    from markdown_it import MarkdownIt

    df = pd.DataFrame({"method": ["a | b", "two\nlines", "~~~ fence", "```"], "value": [1.0, 2.0, 3.0, 4.0]})
    caption = "Every measure. `*`: a run with a failed check;\nsecond line with ``code`` and ~~~."
    md = book.table_markdown(df, "tbl-x-1", caption)
    first, *_, last = md.splitlines()
    assert first.startswith("~~~~{table} Every measure. `*`: a run") and "\n" not in first and last == "~~~~"
    tokens = MarkdownIt("commonmark").enable("table").parse(md)
    fences = [t for t in tokens if t.type == "fence"]
    assert len(fences) == 1 and fences[0].info.startswith("{table} ")  # one directive, holding the whole table
    body = MarkdownIt("commonmark").enable("table").parse(fences[0].content)
    rows = [t for t in body if t.type == "tr_open"]
    assert len(rows) == 1 + len(df)  # the header and every row, none empty, none split
    fig = book.figure_markdown("fig-x", "A caption with ``` inside\nand a newline")
    assert fig.startswith("````{glue:figure} fig-x") and fig.endswith("\n````")
    assert len([t for t in MarkdownIt("commonmark").parse(fig) if t.type == "fence"]) == 1


def test_an_unnamed_index_has_no_internal_header():
    t = book.table_markdown(pd.DataFrame({"a": [1]}, index=pd.Index(["r"])), "tbl-x", "Cap.")
    assert "| index |" not in t and "|  | a |" in t
    with pytest.raises(ValueError, match="caption"):
        book.table_markdown(pd.DataFrame({"a": [1]}), "tbl-x", "  ")


def test_smallest_text_px_scales_wide_figures():
    fig, ax = plt.subplots(figsize=(6, 3), dpi=100)
    ax.set_xlabel("x", fontsize=12)
    ax.tick_params(labelsize=10)
    assert book.smallest_text_px(fig) == pytest.approx(10 * 100 / 72)  # 600 px: not scaled
    fig.set_size_inches(13.2, 3)  # 1320 px shown at 660: half size
    assert book.smallest_text_px(fig) == pytest.approx(10 * 100 / 72 / 2)
    plt.close(fig)


def test_environment_lists_versions():
    env = book.environment(("numpy", "not-a-package-xyz"))
    assert env.loc["numpy", "version"] == np.__version__
    assert env.loc["not-a-package-xyz", "version"] == "not installed"
    assert "python" in env.index


def test_provenance_table_says_where_each_result_comes_from():
    import xarray as xr

    from dpsynth_book import result_files

    shipped_ds = xr.Dataset({"d": ("replicate", [1.0, 2.0, 3.0])})
    shipped_ds.attrs.update(result_files.provenance({"scale": "paper"}, replicates=3, seed=1, elapsed_seconds=600.0,
                                                    workers=2), from_shipped=1)
    computed = xr.Dataset({"d": ("replicate", [1.0])}, attrs={"elapsed_seconds": 12.0, "from_cache": 0})
    cached = xr.Dataset({"d": ("replicate", [1.0])}, attrs={"elapsed_seconds": 5.0, "from_cache": 1})
    t = book.provenance_table({"a": shipped_ds, "b": computed, "c": cached})
    assert list(t.index) == ["`a`", "`b`", "`c`"]  # study names are shown as code: names a reader types
    assert t.loc["`a`", "source"] == "shipped: results/a.nc" and t.loc["`a`", "wall time"] == "10.0 min"
    assert t.loc["`a`", "replicates"] == 3 and t.loc["`a`", "workers"] == "2"
    assert t.loc["`b`", "source"] == "computed in this build" and t.loc["`b`", "wall time"] == "12 s"
    assert t.loc["`c`", "source"].startswith("result cache")
    assert "shipped files" in book.provenance_markdown({"a": shipped_ds})
    assert "10.0 min" in book.provenance_markdown({"a": shipped_ds})
    assert "2 cores" in book.provenance_markdown({"a": shipped_ds}) and "machine" not in t.columns
    assert "computed for this build" in book.provenance_markdown({"a": shipped_ds, "b": computed})


def test_code_spans_hold_any_name():
    import pandas as pd

    assert book.code_span("own_data-units") == "`own_data-units`"
    assert book.code_span("a`b") == "``a`b``" and book.code_span("`x") == "`` `x ``"
    flat = book.code_index(pd.DataFrame({"v": [1]}, index=pd.Index(["house_prices"], name="table")))
    assert list(flat.index) == ["`house_prices`"] and flat.index.name == "table"
    multi = book.code_index(pd.DataFrame({"v": [1, 2]}, index=pd.MultiIndex.from_tuples(
        [("islr_wage", 1.0), ("islr_wage", 2.0)], names=["table", "ε"])))
    assert list(multi.index) == [("`islr_wage`", 1.0), ("`islr_wage`", 2.0)]
    markdown = book.table_markdown(flat, "tbl-x", "A caption.")
    assert "| `house_prices` | 1 |" in markdown


def test_machine_text_writes_the_architecture_as_prose_does():
    assert book.machine_text("Linux x86_64, 2 cores, Python 3.11.7") == "Linux x86-64, 2 cores, Python 3.11.7"
    assert book.machine_text("Darwin arm64, 8 cores") == "Darwin arm64, 8 cores"


def test_large_values_in_a_general_format_keep_their_digits():
    from dpsynth_book.book import _fmt

    assert _fmt(28155.0, ".3g") == "28,155"
    assert _fmt(7365.3, ",.3g") == "7,365"
    assert _fmt(0.0123, ".3g") == "0.0123"
    assert _fmt(1234.567, ".2f") == "1234.57"
    assert _fmt(float("nan"), ".3g") == "–"


def test_glue_values_flattens_named_numbers_into_glue_keys():
    v = book.glue_values("censoring-release", {"c": np.float64(0.7), "months": np.int64(3), "ok": np.bool_(True),
                                               "by_eps": {4.0: 0.25, "3": None},
                                               "Censor_w (aDP)": {"avg_ecdf": 0.01}, "list": "a at $\\varepsilon$ = 4"})
    assert v == {"censoring-release-c": 0.7, "censoring-release-months": 3, "censoring-release-ok": True,
                 "censoring-release-by-eps-4": 0.25, "censoring-release-by-eps-3": pytest.approx(np.nan, nan_ok=True),
                 "censoring-release-censor-w-adp-avg-ecdf": 0.01, "censoring-release-list": "a at $\\varepsilon$ = 4"}
    assert type(v["censoring-release-c"]) is float and type(v["censoring-release-months"]) is int
    assert type(v["censoring-release-ok"]) is bool
    # strings are glued for both roles: plain text and MyST Markdown
    assert isinstance(v["censoring-release-list"], book.GluedText)
    assert v["censoring-release-list"]._repr_markdown_() == "a at $\\varepsilon$ = 4"
    with pytest.raises(ValueError, match="`prefix`"):
        book.glue_values("Censoring", {"a": 1})
    with pytest.raises(ValueError, match="two names"):
        book.glue_values("x", {"a_b": 1, "a-b": 2})
    with pytest.raises(TypeError, match="'x-names'"):
        book.glue_values("x", {"names": ["a", "b"]})


def test_glue_numbers_glues_each_value_undisplayed(monkeypatch):
    import myst_nb

    calls = []
    monkeypatch.setattr(myst_nb, "glue", lambda name, value, display=True: calls.append((name, value, display)))
    keys = book.glue_numbers("own-data", {"fit_time": {"median": 1.5}, "n": 10})
    assert keys == ["own-data-fit-time-median", "own-data-n"]
    assert calls == [("own-data-fit-time-median", 1.5, False), ("own-data-n", 10, False)]


# --------------------------------------------------------------------------------------------------
# JupyterLab (make lab sets DPSYNTH_LAB=1): figures and tables shown with their book numbers
# --------------------------------------------------------------------------------------------------


@pytest.fixture
def in_lab(monkeypatch, tmp_path):
    """A kernel of `make lab` running notebooks/tutorial.ipynb (chapter 1 of its part)."""
    monkeypatch.setenv(book.LAB_ENV, "1")
    monkeypatch.setenv("JPY_SESSION_NAME", str(tmp_path / "tutorial.ipynb"))
    monkeypatch.setattr(book, "_LAB_NUMBERS", {"fig": {}, "tbl": {}})
    shown = []
    import IPython.display
    import myst_nb

    monkeypatch.setattr(myst_nb, "glue", lambda *a, **k: None)
    monkeypatch.setattr(IPython.display, "display", lambda obj, **kw: shown.append(obj))
    return shown


def test_chapter_numbers_follow_the_parts_of_the_toc():
    from dpsynth_book.paths import project_root

    toc = (project_root() / "_toc.yml").read_text(encoding="utf-8")
    assert book.chapter_number(toc, "tutorial") == 1
    assert [book.chapter_number(toc, n) for n in ("censoring", "reweighting", "range_restriction")] == [1, 2, 3]
    assert book.chapter_number(toc, "choosing") == 4
    assert book.chapter_number(toc, "teaching") is None and book.chapter_number(toc, "intro") is None


def test_lab_mode_is_the_environment_variable(monkeypatch):
    monkeypatch.delenv(book.LAB_ENV, raising=False)
    assert not book.lab_mode()
    monkeypatch.setenv(book.LAB_ENV, "0")
    assert not book.lab_mode()
    monkeypatch.setenv(book.LAB_ENV, "1")
    assert book.lab_mode()


def test_in_the_lab_a_figure_is_shown_as_an_image_with_its_number(in_lab):
    for label in ("fig-t-a", "fig-t-b", "fig-t-a"):
        fig, ax = plt.subplots(figsize=(4, 2))
        ax.plot([1, 2, 3])
        book.show_figure(fig, label, "A caption with $\\varepsilon$.")
    md = [m.data for m in in_lab]
    assert md[0].startswith("![fig-t-a](data:image/png;base64,iVBOR")  # a PNG, embedded
    assert md[0].endswith("**Fig. 1.1.** A caption with $\\varepsilon$.")
    assert md[1].endswith("**Fig. 1.2.** A caption with $\\varepsilon$.")
    assert "**Fig. 1.1.**" in md[2]  # shown again: the same number
    assert "{glue:figure}" not in "".join(md)
    assert book.lab_ref("fig-t-b") == "Fig. 1.2" and book.lab_ref("Figure %s <fig-t-b>") == "Figure 1.2"
    assert "not shown yet" in book.lab_ref("fig-t-z")


def test_in_the_lab_a_table_is_a_markdown_table_under_its_number(in_lab):
    book.show_table(pd.DataFrame({"a": [1.5]}, index=pd.Index(["r"], name="row")), "tbl-t-x", "Cap.")
    md = in_lab[0].data
    assert md.startswith("**Table 1.1.** Cap.\n\n| row | a |") and "```" not in md


def test_outside_the_lab_the_book_directives_are_shown(monkeypatch):
    monkeypatch.delenv(book.LAB_ENV, raising=False)
    shown = []
    import IPython.display
    import myst_nb

    monkeypatch.setattr(myst_nb, "glue", lambda *a, **k: None)
    monkeypatch.setattr(IPython.display, "display", lambda obj, **kw: shown.append(obj))
    fig, _ = plt.subplots()
    book.show_figure(fig, "fig-t-a", "Cap.")
    book.show_table(pd.DataFrame({"a": [1]}), "tbl-t-x", "Cap.")
    assert shown[0].data.startswith("```{glue:figure} fig-t-a") and shown[1].data.startswith("~~~{table} Cap.")


def test_glued_formats_a_value_as_the_glue_text_role(monkeypatch):
    monkeypatch.setattr(book, "_GLUED", {})
    import myst_nb

    monkeypatch.setattr(myst_nb, "glue", lambda *a, **k: None)
    book.glue_numbers("t", {"x": np.float64(3.14159), "n": 28155, "share": 0.158, "list": "* a $\\varepsilon$"})
    assert book.glued("t-x:.2f") == "3.14" and book.glued("t-n") == "28155" and book.glued("t-n:,") == "28,155"
    assert book.glued("t-share:.0%") == "16%"
    md = book.glued("t-list:myst")
    assert isinstance(md, book.GluedText) and md._repr_markdown_() == "* a $\\varepsilon$"
    assert "run the cells above" in book.glued("t-missing:.2f")
    with pytest.raises(ValueError, match="`spec`"):
        book.glued("")
