"""The catalogue of model families: found in the package's modules, as mechanisms are; adding one is adding a module."""

from __future__ import annotations

import sys
import textwrap

import pytest

from dpsynth import models
from dpsynth.models import catalog

#: A family module as a contributor writes it: one frozen dataclass; ``declare`` adds the explicit declaration.
TOY = '''
from dataclasses import dataclass

from dpsynth.models.lognormal import LognormalFamily


@dataclass(frozen=True)
class {cls}(LognormalFamily):
    """A toy family (a lognormal under another name)."""

    name: str = "{name}"
{declare}'''


@pytest.fixture
def extra_modules(tmp_path, monkeypatch):
    """A folder added to the models package's path; its modules are forgotten afterwards."""
    monkeypatch.setattr(models, "__path__", [*models.__path__, str(tmp_path)])
    written = []

    def write(module: str, cls: str, name: str, declare: bool) -> None:
        text = TOY.format(cls=cls, name=name, declare=f"\n\nFAMILY = {cls}\n" if declare else "")
        (tmp_path / f"{module}.py").write_text(textwrap.dedent(text))
        written.append(module)

    yield write
    for module in written:
        sys.modules.pop(f"dpsynth.models.{module}", None)


def test_the_shipped_families_are_found_in_the_documented_order():
    assert list(models.FAMILIES) == list(catalog.LISTED)
    assert models.FAMILIES["poisson"] is models.PoissonRegression
    assert models.family_class("negbin") is models.NegBinomialRegression
    for name, cls in models.FAMILIES.items():
        assert cls.name == name and sys.modules[cls.__module__].FAMILY is cls  # each module declares its family


def test_a_new_family_module_is_found_after_the_shipped_ones(extra_modules):
    """Adding a family is adding a module: declared (``FAMILY = ...``) or only defined, it is found by its name."""
    extra_modules("zz_declared", "Declared", "aaa_declared", declare=True)
    extra_modules("ordinal_toy", "OrdinalToy", "ordinal_toy", declare=False)
    found = catalog.discover()
    assert list(found)[: len(catalog.LISTED)] == list(catalog.LISTED)
    assert list(found)[len(catalog.LISTED):] == ["aaa_declared", "ordinal_toy"]  # after them, by name
    assert found["ordinal_toy"].__name__ == "OrdinalToy"


def test_two_families_may_not_share_a_name(extra_modules):
    extra_modules("zz_clash", "Clash", "poisson", declare=True)
    with pytest.raises(ValueError, match="'poisson' is taken"):
        catalog.discover()


def test_an_unknown_family_name_lists_the_shipped_ones():
    from dpsynth.validation import DataError

    with pytest.raises(DataError, match="unknown `model` 'gamma'; shipped families: lognormal, lognormal_regression"):
        models.family_class("gamma")
