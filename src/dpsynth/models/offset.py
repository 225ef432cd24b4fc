"""A shipped family with a public constant subtracted from each record's log-likelihood before the clamp.

The censored likelihood's guarantee needs each record's term to lie in a window of width ``eps``
that depends on that record and public quantities alone; a public constant moves the window's
place, not its width, so it costs no privacy. Choose it without looking at the data.
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import ModelFamily

__all__ = ["OffsetFamily"]


@dataclass(frozen=True)
class OffsetFamily(ModelFamily):
    """``base`` with the public constant ``offset`` subtracted from each record log-likelihood."""

    base: ModelFamily = None
    offset: float = 0.0

    @property
    def name(self) -> str:  # type: ignore[override]
        return f"{self.base.name}-offset"

    @property
    def needs_covariates(self) -> bool:  # type: ignore[override]
        return self.base.needs_covariates

    @property
    def takes_covariates(self) -> bool:  # type: ignore[override]
        return self.base.takes_covariates

    @property
    def continuous(self) -> bool:  # type: ignore[override]
        return self.base.continuous

    @property
    def one_signed(self) -> bool:  # type: ignore[override]
        from ..privacy import is_one_signed

        return is_one_signed(self.base, offset=self.offset)  # log p - offset may take both signs

    @property
    def placeholder(self) -> float:  # type: ignore[override]
        return self.base.placeholder

    @property
    def has_cdf(self) -> bool:
        return self.base.has_cdf

    def check_data(self, x, covariates=None):
        return self.base.check_data(x, covariates)

    def data_values(self, x, covariates):
        return self.base.data_values(x, covariates)

    def record_logp(self, data):
        return self.base.record_logp(data) - self.offset

    def simulate(self, draws, rng, covariates=None):
        return self.base.simulate(draws, rng, covariates)

    def logcdf(self, q, draws, covariates=None):
        return self.base.logcdf(q, draws, covariates)

    def logsf(self, q, draws, covariates=None):
        return self.base.logsf(q, draws, covariates)

    def reference_loglik(self, x, covariates=None):
        ref = self.base.reference_loglik(x, covariates)
        return None if ref is None else ref - self.offset  # the offset moves the term and its reference alike

    def public_start(self):
        return self.base.public_start()

    @property
    def reference_is_max(self) -> bool:  # type: ignore[override]
        return self.base.reference_is_max
