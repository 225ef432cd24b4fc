"""The introduction's privacy figures for Censor_ref against the code that makes them.

The introduction (``book/intro.md``) is a written page: it states the censoring bound ``M`` of the default
censored mechanism under each neighbour relation, the default reference rule and what it costs, and which
relation a release is stated under. Each statement is read from the page and compared here with the
library (:func:`dpsynth.privacy.censoring_bound`, :func:`dpsynth.privacy.is_one_signed`, the mechanism's
spec and the release budget), so that a change to either fails this test.
"""

from __future__ import annotations

import re
from fractions import Fraction
from types import SimpleNamespace

import pytest

from dpsynth.mechanisms import censored_reference as cr
from dpsynth.models.categorical import MultinomialLogit
from dpsynth.models.lognormal import LognormalFamily
from dpsynth.models.poisson import PoissonRegression
from dpsynth.privacy import censoring_bound, is_one_signed
from dpsynth.release import budget as B
from dpsynth.synthesizer_config import SynthesizerConfig
from dpsynth_book.paths import project_root

INTRO = project_root() / "book" / "intro.md"


@pytest.fixture(scope="module")
def intro() -> str:
    return INTRO.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def censor_ref_row(intro) -> str:
    rows = [ln for ln in intro.splitlines() if ln.startswith("| Censor_ref")]
    assert len(rows) == 1, rows
    return rows[0]


_BOUND = re.compile(r"\$M = \\epsilon(?:/(\d+))?\$ (?:with one record )?(removed|replaced)")


def _stated_bounds(text: str) -> dict[str, Fraction]:
    """``{relation: M / eps}`` as a piece of the row states them ("$M = \\epsilon/4$ with one record replaced")."""
    found = {("remove" if rel == "removed" else "replace"): Fraction(1, int(d or 1)) for d, rel in _BOUND.findall(text)}
    assert set(found) == {"remove", "replace"}, text
    return found


def _code_bound(relation: str, one_signed: bool) -> Fraction:
    """``M`` per unit of the draw's share of eps, as a Synthesizer computes it under ``relation``."""
    budget = B.Budget.plan(1.0, relation, dp_size=False, dp_reference=False)
    m = censoring_bound(budget.mechanism_eps(cr.MECHANISM.eps_per_param), one_signed)
    return Fraction(m / budget.draw).limit_denominator(100)


def test_censor_ref_bound_per_relation_is_the_code_s(censor_ref_row):
    two_signed, _, one_signed = censor_ref_row.partition("one-signed")
    assert one_signed, "the row names the bound of one-signed differences"
    for rel, m in _stated_bounds(two_signed).items():
        assert m == _code_bound(rel, one_signed=False), (rel, m)
    for rel, m in _stated_bounds(one_signed).items():
        assert m == _code_bound(rel, one_signed=True), (rel, m)


def test_one_signed_example_is_the_code_s(censor_ref_row, intro):
    # the row's and the text's example of one-signed differences: a Poisson's saturated reference
    assert "(a Poisson's)" in censor_ref_row and "as for the Poisson, every difference is at most 0" in intro
    poisson, lognormal = PoissonRegression(), LognormalFamily()
    assert poisson.reference_is_max and is_one_signed(poisson, reference=[0.0], reference_is_max=True)
    assert not is_one_signed(lognormal, reference=[0.0], reference_is_max=bool(lognormal.reference_is_max))


def test_default_reference_is_the_record_s_own_and_free(intro, censor_ref_row):
    # the page: each record its own reference by default, free; the other rules named
    assert 'each record its own reference (`reference="record"`, the\ndefault)' in intro
    assert "so it costs no $\\epsilon$" in intro
    assert "the record's own (saturated) reference, free" in censor_ref_row
    for rule in cr.REFERENCE_RULES:
        assert f'`reference="{rule}"`' in intro, rule
    # the code: no reference given is the record-wise one (no theta_0), released from nothing
    assert cr.REFERENCE_RULES[0] == "record" and cr.MECHANISM.params["reference"].default is None
    ctx = SimpleNamespace(family=LognormalFamily())
    theta0, spent, _ = cr.reference_parameters(ctx, {"reference": None, "historical": None})
    assert theta0 is None and spent == (0.0, 0.0)
    assert not cr.releases_reference({}, LognormalFamily())
    assert not cr.releases_reference({"reference": "prior"}, LognormalFamily())
    assert cr.releases_reference({"reference": "dp_median"}, LognormalFamily())


def test_a_categorical_reference_is_charged_its_stated_share(intro, censor_ref_row):
    assert "a categorical target's from DP level counts, charged" in censor_ref_row
    assert cr.releases_reference({}, MultinomialLogit(n_levels=3))
    share = re.search(r"the reference of `censor_ref` when it is released from the data \((\d+)%", intro)
    assert share and int(share.group(1)) / 100 == pytest.approx(B.REFERENCE_SHARE)
    size = re.search(r"the released size\s+under removal \((\d+)%\)", intro)
    assert size and int(size.group(1)) / 100 == pytest.approx(B.SIZE_SHARE)


def test_relation_rule_is_the_code_s(intro, censor_ref_row):
    # "one record replaced when public covariates are carried ..., one record removed otherwise"
    assert "one record replaced when public covariates are carried" in intro
    assert "(the relation when covariates are carried)" in censor_ref_row
    assert SynthesizerConfig(target="y", covariates=["a"]).relation == "replace"
    assert SynthesizerConfig(target="y").relation == "remove"
