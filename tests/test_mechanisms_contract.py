"""The run context's retry rule (dpsynth.mechanisms.contract.RunContext.fit)."""

from types import SimpleNamespace

import numpy as np
import pytest

from dpsynth.mechanisms.contract import NO_RETRY_CENSORED, RunContext


class _FailingModel:
    """A compiled model whose every fit fails its checks, censoring given shares of its records."""

    def __init__(self, n_censored: int, typical: float):
        self.n_censored, self.typical, self.calls = n_censored, typical, []

    def fit(self, x, *, sampler, **kw):
        self.calls.append(sampler.draws)
        diag = SimpleNamespace(ok=False, divergences=0, problems=lambda: "R-hat 1.02")
        bounds = SimpleNamespace(n_censored=self.n_censored, censored_draw_share=self.typical)
        return SimpleNamespace(censored=True, bounds=bounds, diagnostics=diag, x=np.asarray(x))


@pytest.mark.parametrize(("typical", "runs"), [(0.2, 3), (NO_RETRY_CENSORED + 0.05, 1)])
def test_a_failed_fit_is_refitted_unless_a_typical_draw_censors_most_records(typical, runs):
    """Every record censored at *some* draw (a small file's wide posterior) is no reason to skip the retries;
    most records censored at a typical draw is."""
    x = np.arange(50.0)
    model = _FailingModel(n_censored=50, typical=typical)
    ctx = RunContext(x, compiled=model, retries=2)
    ctx.fit("fit")
    assert len(model.calls) == runs
    if runs > 1:
        assert model.calls[1] == 2 * model.calls[0]
    else:
        assert "not refitted" in ctx.log[0] and f"{typical:.0%}" in ctx.log[0]
