"""The confidential report: write_report's page and figures, its refusals, Synthesizer.report and `dpsynth report`."""

from __future__ import annotations

import re
import stat
import warnings

import matplotlib as mpl
import numpy as np
import pandas as pd
import pytest

from dpsynth import Synthesizer
from dpsynth.cli import main
from dpsynth.report import BANNER, FILES, analysis_scale, write_report
from dpsynth.validation import DataError

STATEMENT = "Censor_uw (strict DP): eps = 4 with one record replaced (2 with one record removed), for one draw."
DIAGNOSTICS = "confidential (computed from the data; do not publish): n = 300, Delta = 1.9."
PNG = b"\x89PNG\r\n\x1a\n"


def wages(n: int = 300, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    region = rng.choice(["north", "south", "west"], n)
    log_w = 0.2 + 0.4 * (region == "south") + rng.normal(0.0, 0.3, n)
    return pd.DataFrame({"wage": np.exp(log_w), "region": region, "age": rng.integers(20, 60, n)})


def synthetic(df: pd.DataFrame, seed: int = 1, shift: float = 0.1) -> pd.DataFrame:
    out = df.copy()
    out["wage"] = df["wage"].to_numpy() * np.exp(shift + np.random.default_rng(seed).normal(0, 0.2, len(df)))
    return out


def write(df, syn, out_dir, **kw):
    args = dict(target="wage", covariates=["region", "age"], statement=STATEMENT, diagnostics=DIAGNOSTICS,
                out_dir=out_dir)
    return write_report(df, syn, **{**args, **kw})


def table(page: str, number: int) -> str:
    m = re.search(rf"<table><caption><b>Table {number}\.</b>.*?</table>", page, flags=re.S)
    assert m, f"Table {number} is missing"
    return m.group(0)


# ----------------------------------------------------------------------------------- the page


def test_report_has_the_banner_statement_figures_and_tables(tmp_path):
    df = wages()
    path = write(df, synthetic(df), tmp_path / "rep")
    assert path == tmp_path / "rep" / "report.html"
    assert sorted(p.name for p in path.parent.iterdir()) == sorted(FILES)
    page = path.read_text(encoding="utf-8")
    assert BANNER in page and "CONFIDENTIAL" in page and "never for publication" in page
    assert page.index(BANNER) < page.index("<h1>")  # at the top
    assert STATEMENT in page and DIAGNOSTICS in page
    for f in FILES[1:]:
        assert (tmp_path / "rep" / f).read_bytes()[:8] == PNG
        assert f'<img src="{f}"' in page  # beside the page, referenced relatively
    assert "<b>Figure 1.</b>" in page and "<b>Figure 2.</b>" in page
    # no script, no external asset
    assert "<script" not in page and not re.search(r'(src|href)="(https?:)?//', page)
    # the marginal: quantiles, mean and sd, ECDF distances
    t1 = table(page, 1)
    for q in ("1%", "10%", "25%", "50%", "75%", "90%", "99%"):
        assert f"<td>{q} quantile</td>" in t1
    assert "<td>mean</td>" in t1 and "<td>standard deviation</td>" in t1
    assert "max |F − F*|" in page and "mean (F − F*)²" in page
    # the regression of log wage, original and synthetic side by side
    t2 = table(page, 2)
    assert "log wage" in t2 and ">original</th>" in t2 and ">synthetic</th>" in t2
    for term in ("intercept", "region=south", "region=west", "age"):
        assert f"<code>{term}</code>" in t2
    assert "region=north" not in t2  # the reference level
    assert t2.count("<tr>") == 1 + 4  # header and one row per term
    # pMSE with its null and ratio
    t3 = table(page, 3)
    assert "pMSE ratio" in t3 and "(k − 1)(1 − c)² c / N" in t3 and "<td>parameters k (intercept included)</td>" in t3


def test_report_numbers_are_the_metrics(tmp_path):
    from dpsynth.covariates import CovariateDesign
    from dpsynth.metrics import ecdf_distances, ols, pmse

    df = wages()
    syn = synthetic(df)
    page = write(df, syn, tmp_path / "rep").read_text(encoding="utf-8")
    d = ecdf_distances(df["wage"], syn["wage"])
    assert f"max |F − F*| = <b>{d.max_ecdf:.4g}</b>" in page
    X = CovariateDesign.from_frame(df, ["region", "age"]).matrix(df)
    f = ols(np.log(df["wage"]), X)
    # the age slope, to two significant digits of its standard error
    decimals = int(1 - np.floor(np.log10(min(f.se[3], ols(np.log(syn["wage"]), X).se[3]))))
    assert f"<td class=\"n\">{f.coef[3]:.{decimals}f}</td>" in table(page, 2)
    p = pmse(np.column_stack([np.log(df["wage"]), X[:, 1:]]), np.column_stack([np.log(syn["wage"]), X[:, 1:]]))
    assert f"<b>{p.ratio:.4g}</b>" in table(page, 3)


def test_figures_are_readable_and_the_style_is_restored(tmp_path):
    before = dict(mpl.rcParams)
    df = wages()
    page = write(df, synthetic(df), tmp_path / "rep").read_text(encoding="utf-8")
    assert dict(mpl.rcParams) == before  # the package's style is applied inside, not left behind
    imgs = re.findall(r'<img src="([^"]+)" width="(\d+)" height="(\d+)" alt="[^"]+" data-min-text-px="([\d.]+)"',
                      page)
    assert len(imgs) == 2
    for src, width, _, text_px in imgs:
        natural = int.from_bytes((tmp_path / "rep" / src).read_bytes()[16:20], "big")
        shown = float(text_px) * int(width) / natural
        assert shown >= 9.0, f"{src}: smallest text {shown:.1f} px at its shown width"
        assert int(width) <= 700


def test_report_files_are_owner_only(tmp_path):
    df = wages(60)
    path = write(df, synthetic(df), tmp_path / "rep")
    assert stat.S_IMODE((tmp_path / "rep").stat().st_mode) == 0o700
    for f in FILES:
        assert stat.S_IMODE((path.parent / f).stat().st_mode) == 0o600


@pytest.mark.parametrize(("values", "kind", "label"), [
    (np.array([1, 0, 3, 2, 7]), "log1p", "log(1 + y)"),
    (np.array([0.5, 1.2, 3.0, 2.2, 9.0]), "log", "log y"),
    (np.array([-0.5, 1.2, 3.0, 2.2, 9.0]), "identity", "y"),
    (np.array([1.0, 0.0, 3.0, 2.0, 7.0]), "identity", "y"),  # zeros, but not an integer column
])
def test_analysis_scale(values, kind, label):
    s = pd.Series(values, name="y")
    assert analysis_scale(s) == (kind, label)


def test_a_count_target_is_compared_on_log1p_and_no_covariates_work(tmp_path):
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"visits": rng.poisson(2.0, 200)})
    syn = pd.DataFrame({"visits": rng.poisson(2.4, 200)})
    page = write_report(df, syn, target="visits", statement=STATEMENT, diagnostics=DIAGNOSTICS,
                        out_dir=tmp_path / "rep", title="Visits <2024>").read_text(encoding="utf-8")
    assert "log(1 + visits)" in table(page, 2) and "<code>intercept</code>" in table(page, 2)
    assert "<h1>Visits &lt;2024&gt;</h1>" in page  # escaped
    assert "covariates none" in page


def test_non_finite_synthetic_values_are_left_out_and_said(tmp_path):
    df = wages(100)
    syn = synthetic(df)
    syn.loc[[3, 7], "wage"] = np.inf
    page = write(df, syn, tmp_path / "rep").read_text(encoding="utf-8")
    assert "2 synthetic value(s) are not finite" in page
    assert "100 original and 100 synthetic records" in page


def test_synthetic_values_off_the_log_scale_are_left_out_of_the_regression(tmp_path):
    df = wages(100)
    syn = synthetic(df)
    syn.loc[[1, 2, 5], "wage"] = 0.0  # underflowed draws of a fit that censored every record
    page = write(df, syn, tmp_path / "rep").read_text(encoding="utf-8")
    assert "3 synthetic value(s) have no log wage</b> (they are ≤ 0)" in page
    assert "log wage" in table(page, 2) and "(100 and 97 records" in table(page, 2)
    assert "(logarithmic axis)" not in page  # zeros cannot be drawn on a log axis
    assert "<td>records N</td><td class=\"n\">197</td>" in table(page, 3)
    syn["wage"] = 0.0
    page = write(df, syn, tmp_path / "rep", force=True).read_text(encoding="utf-8")
    assert "<b>Not shown:</b> no synthetic value has a log wage." in page
    assert "<b>Not computed:</b> no synthetic value has a log wage." in page
    assert "Table 2." not in page and not (tmp_path / "rep" / FILES[2]).exists()


def test_degenerate_releases_still_give_a_page(tmp_path):
    df = wages(100)
    exact = synthetic(df).assign(wage=1.0)  # log wage exactly 0: every interval has width 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # e.g. matplotlib's "identical low and high xlims"
        page = write(df, exact, tmp_path / "a").read_text(encoding="utf-8")
    assert '<td class="n">–</td></tr>' in table(page, 2)  # no overlap of an interval of width 0
    one = synthetic(df).iloc[:3]  # fewer records than coefficients
    page = write(df, one, tmp_path / "b").read_text(encoding="utf-8")
    assert "<b>Not shown:</b> the regression on the synthetic data cannot be fitted" in page
    assert "Table 3." in page


def test_a_level_constant_in_the_release_is_left_out_of_the_regression(tmp_path):
    df = wages(200)
    syn = synthetic(df)
    syn["region"] = np.where(syn["region"] == "west", "south", syn["region"])  # no 'west' in the release
    page = write(df, syn, tmp_path / "rep").read_text(encoding="utf-8")
    assert "Left out (constant in one of the tables): <code>region=west</code>" in page
    assert "<code>region=west</code>" not in table(page, 2)


# ----------------------------------------------------------------------------------- refusals


def test_an_existing_report_is_refused_unless_force(tmp_path):
    df = wages(60)
    out = tmp_path / "rep"
    write(df, synthetic(df), out)
    first = (out / "report.html").read_bytes()
    with pytest.raises(DataError, match=r"^`out_dir` .* holds a report already \(report\.html, figure-1.*force=True"):
        write(df, synthetic(df, seed=2), out)
    assert (out / "report.html").read_bytes() == first
    write(df, synthetic(df, seed=2), out, force=True)
    assert (out / "report.html").read_bytes() != first


def test_a_missing_parent_folder_is_refused_and_nothing_is_created(tmp_path):
    df = wages(60)
    with pytest.raises(DataError, match=r"parent folder .* does not exist; create it first"):
        write(df, synthetic(df), tmp_path / "missing" / "rep")
    assert not (tmp_path / "missing").exists()
    (tmp_path / "afile").write_text("x")
    with pytest.raises(DataError, match="is a file, not a folder"):
        write(df, synthetic(df), tmp_path / "afile")


@pytest.mark.parametrize(("change", "match"), [
    (lambda s: s.drop(columns="age"), r"`released` has columns \['wage', 'region'\] but `original` has"),
    (lambda s: s.assign(extra=1), r"only in released: \['extra'\]"),
    (lambda s: s.rename(columns={"wage": "pay"}), r"`target` 'wage' is not a column of `released`"),
    (lambda s: s.assign(region=np.where(s["region"] == "west", "east", s["region"])),
     r"`released` column 'region' has level\(s\) \['east'\] that `original` does not have"),
    (lambda s: s.assign(age=s["age"].astype(str)), r"covariate 'age' is numeric in `original` but categorical"),
    (lambda s: s.assign(wage=s["wage"].astype(str)), r"`released` column 'wage' \(the target\) must be numeric"),
    (lambda s: s.assign(wage=np.nan), r"`released` column 'wage' has no finite value"),
    (lambda s: s.iloc[:0], r"`released` has no rows"),
    (lambda s: s.to_numpy(), r"`released` must be a pandas DataFrame"),
])
def test_bad_released_frames_are_refused(tmp_path, change, match):
    df = wages(60)
    with pytest.raises(DataError, match=match):
        write(df, change(synthetic(df)), tmp_path / "rep")
    assert not (tmp_path / "rep").exists()  # nothing is created before the inputs are checked


def test_bad_arguments_are_refused(tmp_path):
    df = wages(60)
    syn = synthetic(df)
    with pytest.raises(DataError, match=r"`target` 'pay' is not a column of `original`"):
        write(df, syn, tmp_path / "r", target="pay")
    with pytest.raises(DataError, match=r"`covariates` must be a list .* covariates=\['region'\]"):
        write(df, syn, tmp_path / "r", covariates="region")
    with pytest.raises(DataError, match=r"`statement` must be"):
        write(df, syn, tmp_path / "r", statement="")
    with pytest.raises(DataError, match=r"`original` column 'wage' \(the target\) has missing"):
        write(df.assign(wage=df["wage"].where(df.index != 4)), syn, tmp_path / "r")
    assert not (tmp_path / "r").exists()


# ----------------------------------------------------------------------------------- Synthesizer.report (no MCMC)


@pytest.fixture(scope="module")
def ph():
    """A fitted model-free synthesizer (perturbed histogram: no MCMC) and one release of it."""
    df = wages(300)
    s = Synthesizer(df, "wage", covariates=["region", "age"], model="lognormal", mechanism="ph", eps=1.0,
                    mechanism_params={"lower": 0, "upper": 20}).fit(seed=1)
    return df, s, s.sample(allow_research=True, seed=2)


def test_synthesizer_report_uses_its_data_statement_and_diagnostics(ph, tmp_path):
    df, s, released = ph
    page = s.report(released, tmp_path / "rep").read_text(encoding="utf-8")
    assert s.privacy.statement() in page or s.privacy.statement().replace("'", "&#x27;") in page
    assert "n = 300" in s.privacy.diagnostics() and s.privacy.diagnostics() in page
    # the fitted data are the original: the same page as with original= given
    again = s.report(released, tmp_path / "rep2", original=df).read_text(encoding="utf-8")
    strip = lambda p: re.sub(r"on \d{4}-\d\d-\d\d \d\d:\d\d UTC", "", p)  # noqa: E731
    assert strip(page) == strip(again)


def test_a_loaded_synthesizer_needs_the_original(ph, tmp_path):
    df, s, released = ph
    s.save(tmp_path / "s.json")
    loaded = Synthesizer.load(tmp_path / "s.json")
    with pytest.raises(DataError, match=r"loaded without its confidential data; pass the confidential data "
                                        r"explicitly: report\(released, out_dir, original=df\)"):
        loaded.report(released, tmp_path / "rep")
    assert not (tmp_path / "rep").exists()
    assert loaded.report(released, tmp_path / "rep", original=df).exists()


def test_an_unfitted_synthesizer_has_no_report(tmp_path):
    df = wages(60)
    s = Synthesizer(df, "wage", covariates=["region", "age"], model="lognormal", mechanism="ph", eps=1.0,
                    mechanism_params={"lower": 0, "upper": 20})
    with pytest.raises(DataError, match="not fitted"):
        s.report(df, tmp_path / "rep")


# ----------------------------------------------------------------------------------- dpsynth report


def error_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert err and err[-1].startswith("dpsynth: error: "), err
    assert not any("Traceback" in line for line in err)
    return err[-1]


@pytest.fixture
def saved(ph, tmp_path):
    df, s, released = ph
    s.save(tmp_path / "s.json")
    df.assign(other=1).to_csv(tmp_path / "data.csv", index=False)  # an extra column is not read
    released.to_csv(tmp_path / "released.csv", index=False)
    return tmp_path / "s.json", tmp_path / "data.csv", tmp_path / "released.csv"


def test_cli_report_writes_the_page_and_prints_its_path(saved, tmp_path, capsys):
    syn, data, rel = saved
    out = tmp_path / "rep"
    assert main(["report", str(syn), "--data", str(data), "--released", str(rel), "--out", str(out)]) == 0
    got = capsys.readouterr()
    assert got.out.strip() == str(out / "report.html")
    assert "CONFIDENTIAL" in got.err
    assert BANNER in (out / "report.html").read_text(encoding="utf-8")
    # again: refused without --force, replaced with it
    assert main(["report", str(syn), "--data", str(data), "--released", str(rel), "--out", str(out)]) == 2
    line = error_line(capsys)
    assert "--out" in line and "holds a report already" in line and "--force" in line
    assert main(["report", str(syn), "--data", str(data), "--released", str(rel), "--out", str(out), "--force"]) == 0


def test_cli_report_reads_a_semicolon_csv_with_sep(saved, tmp_path, capsys):
    syn, data, rel = saved
    pd.read_csv(data).to_csv(tmp_path / "d2.csv", sep=";", index=False)
    pd.read_csv(rel).to_csv(tmp_path / "r2.csv", sep=";", index=False)
    args = ["report", str(syn), "--data", str(tmp_path / "d2.csv"), "--released", str(tmp_path / "r2.csv")]
    assert main([*args, "--out", str(tmp_path / "rep")]) == 2
    assert "--sep ';'" in error_line(capsys)
    assert main([*args, "--out", str(tmp_path / "rep"), "--sep", ";"]) == 0


def test_cli_report_errors_are_one_line(saved, tmp_path, capsys):
    syn, data, rel = saved
    base = ["report", str(syn), "--data", str(data), "--released", str(rel)]
    assert main([*base, "--out", str(tmp_path / "missing" / "rep")]) == 2
    assert "--out" in error_line(capsys) and not (tmp_path / "missing").exists()
    assert main(["report", str(syn), "--data", str(tmp_path / "nope.csv"), "--released", str(rel),
                 "--out", str(tmp_path / "rep")]) == 2
    assert "--data file" in error_line(capsys)
    pd.read_csv(rel).drop(columns="age").to_csv(tmp_path / "bad.csv", index=False)
    assert main(["report", str(syn), "--data", str(data), "--released", str(tmp_path / "bad.csv"),
                 "--out", str(tmp_path / "rep")]) == 2
    line = error_line(capsys)
    assert "--released" in line and "['wage', 'region', 'age']" in line
    pd.read_csv(data).drop(columns="region").to_csv(tmp_path / "bad.csv", index=False)
    assert main(["report", str(syn), "--data", str(tmp_path / "bad.csv"), "--released", str(rel),
                 "--out", str(tmp_path / "rep")]) == 2
    assert "column 'region' (a covariate of the synthesizer) is not in --data" in error_line(capsys)
    r = pd.read_csv(rel)
    r.loc[0, "region"] = "east"
    r.to_csv(tmp_path / "bad.csv", index=False)
    assert main(["report", str(syn), "--data", str(data), "--released", str(tmp_path / "bad.csv"),
                 "--out", str(tmp_path / "rep")]) == 2
    assert "--released column 'region' has level(s) ['east']" in error_line(capsys)
    assert not (tmp_path / "rep").exists()


# ----------------------------------------------------------------------------------- a real fit (MCMC)


@pytest.mark.slow
def test_report_of_a_fitted_lognormal_regression_by_method_and_cli(tmp_path, capsys):
    df = wages(150)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = Synthesizer(df, "wage", covariates=["region", "age"], model="lognormal_regression", mechanism="censor_uw",
                        eps=4, sampler={"draws": 300, "tune": 300}).fit(seed=1)
        released = s.sample(allow_research=True, seed=2, allow_unusable=True)
    path = s.report(released, tmp_path / "method")
    page = path.read_text(encoding="utf-8")
    assert BANNER in page and "Censor_uw" in page and "n = 150" in page
    assert "<code>region=south</code>" in table(page, 2) and "log wage" in table(page, 2)
    for f in FILES[1:]:
        assert (path.parent / f).read_bytes()[:8] == PNG

    s.save(tmp_path / "s.json")
    df.to_csv(tmp_path / "data.csv", index=False)
    released.to_csv(tmp_path / "released.csv", index=False)
    assert main(["report", str(tmp_path / "s.json"), "--data", str(tmp_path / "data.csv"), "--released",
                 str(tmp_path / "released.csv"), "--out", str(tmp_path / "cli")]) == 0
    assert capsys.readouterr().out.strip() == str(tmp_path / "cli" / "report.html")
    cli_page = (tmp_path / "cli" / "report.html").read_text(encoding="utf-8")
    assert table(cli_page, 2) == table(page, 2) and table(cli_page, 3) == table(page, 3)


# ----------------------------------------------------------------------------------- categorical target


def test_a_categorical_target_gets_level_shares_and_linear_probability_models(tmp_path):
    from dpsynth.report import CATEGORICAL_FILES

    rng = np.random.default_rng(4)
    n = 400
    z = rng.normal(size=n)
    levels = ["walk", "bus", "car"]
    mode = np.where(z > 0.5, "bus", np.where(z < -0.5, "car", "walk"))
    df = pd.DataFrame({"mode": mode, "z": z})
    syn = df.assign(mode=rng.choice(levels, n))  # the relation with z lost
    page = write_report(df, syn, target="mode", covariates=["z"], statement=STATEMENT, diagnostics=DIAGNOSTICS,
                        out_dir=tmp_path / "r", levels=levels).read_text()
    assert sorted(p.name for p in (tmp_path / "r").iterdir()) == sorted(CATEGORICAL_FILES)
    t1 = table(page, 1)
    p = (df["mode"] == "bus").mean()
    assert f"{p:.3f}" in t1 and "<code>walk</code>" in t1
    tvd = 0.5 * sum(abs((df["mode"] == v).mean() - (syn["mode"] == v).mean()) for v in levels)
    assert f"<b>{tvd:.4g}</b>" in page
    t2 = table(page, 2)
    assert "bus: z" in t2 and "car: intercept" in t2 and "walk:" not in t2  # the first level is the reference
    assert "pMSE ratio" in page
    # the synthetic z-slope of bus is about 0 against a clearly positive original one: overlap 0
    row = re.search(r"<code>bus: z</code>.*?</tr>", t2, flags=re.S).group(0)
    assert row.endswith("<td class=\"n\">0.00</td></tr>")


def test_a_categorical_report_refuses_values_outside_the_levels(tmp_path):
    df = pd.DataFrame({"mode": ["a", "b"] * 20, "z": np.arange(40.0)})
    with pytest.raises(DataError, match=r"`released` column 'mode' has value\(s\) \['c'\] outside"):
        write_report(df, df.assign(mode=["a", "c"] * 20), target="mode", covariates=["z"], statement=STATEMENT,
                     diagnostics=DIAGNOSTICS, out_dir=tmp_path / "r", levels=["a", "b"])
    with pytest.raises(DataError, match="must be numeric.*levels=\\[\\.\\.\\.\\]"):
        write_report(df, df, target="mode", covariates=["z"], statement=STATEMENT, diagnostics=DIAGNOSTICS,
                     out_dir=tmp_path / "r")


@pytest.mark.slow
def test_the_report_combines_the_regression_over_several_releases(tmp_path):
    """Issue 29: given m released data sets the report shows the combined (Reiter 2003) estimate and interval beside
    the confidential one."""
    import warnings

    from dpsynth import Synthesizer

    rng = np.random.default_rng(2)
    n = 300
    z = rng.normal(size=n)
    df = pd.DataFrame({"wage": np.exp(1.0 + 0.5 * z + rng.normal(0, 0.4, n)), "z": z})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = Synthesizer(df, "wage", covariates=["z"], mechanism="censor_ref", eps=8.0, progress=False,
                        sampler={"draws": 300, "tune": 300}).fit(seed=1)
    sets = [s.sample(allow_research=True, seed=k) for k in range(5)]
    page = s.report(sets, tmp_path / "rep").read_text()
    assert "Intervals combined over the 5 released data sets" in page and "Table 2b." in page
    assert "combined intervals cover the confidential estimate" in page
