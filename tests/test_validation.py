"""Bad input raises a clear error that names the offending argument.

One test per case. Most cases go through the public function a user would call; the checks
that need a compiled model are marked slow (they compile, but raise before any sampling).
"""

from __future__ import annotations

import numpy as np
import pytest
from fit_helpers import betareg_design, fit_from_draws

from dpsynth import mechanisms, metrics, models, privacy, synthetic_data, weights
from dpsynth.fitting import SamplerConfig, eps_to_bound
from dpsynth.mechanisms import histogram, range_restriction
from dpsynth.validation import (
    DataError,
    as_data,
    as_weights,
    check_eps,
    check_positive,
    check_probability,
    check_same_length,
    check_support,
)

# --------------------------------------------------------------------------------------------
# the helpers themselves
# --------------------------------------------------------------------------------------------


def test_as_data_returns_float_copy():
    src = [1, 2, 3]
    out = as_data(src, "x")
    assert out.dtype == float and out.tolist() == [1.0, 2.0, 3.0]
    arr = np.array([1.0, 2.0])
    out2 = as_data(arr)
    out2[0] = 99.0
    assert arr[0] == 1.0  # a copy, the caller's data are never modified


def test_as_data_nan_names_argument_and_position():
    with pytest.raises(DataError, match=r"`salary` has 1 non-finite value\(s\) \(NaN or infinite\), "
                       r"first at position 2"):
        as_data([1.0, 2.0, np.nan], "salary")


def test_as_data_infinite():
    with pytest.raises(DataError, match=r"`x` has 2 non-finite value\(s\).*first at position 0"):
        as_data([np.inf, 1.0, -np.inf], "x")


def test_as_data_empty():
    with pytest.raises(DataError, match=r"`x` is empty"):
        as_data([], "x")


def test_as_data_wrong_ndim():
    with pytest.raises(DataError, match=r"`x` must be 1-dimensional; got shape \(2, 2\)"):
        as_data([[1.0, 2.0], [3.0, 4.0]], "x")


def test_as_data_non_numeric():
    with pytest.raises(DataError, match=r"`x` must be numeric"):
        as_data(["a", "b"], "x")


def test_as_data_nan_in_matrix_reports_row():
    X = np.ones((4, 2))
    X[3, 1] = np.nan
    with pytest.raises(DataError, match=r"`covariates` has 1 non-finite.*position 3"):
        as_data(X, "covariates", ndim=2)


def test_as_weights_none_and_scalar():
    assert as_weights(None, 3).tolist() == [1.0, 1.0, 1.0]
    assert as_weights(0.25, 2).tolist() == [0.25, 0.25]


def test_as_weights_above_one():
    with pytest.raises(DataError, match=r"`weights` must lie in \[0, 1\]; position 1 is 1.5"):
        as_weights([0.5, 1.5], 2)


def test_as_weights_negative():
    with pytest.raises(DataError, match=r"`alpha` must lie in \[0, 1\]; position 0 is -0.1"):
        as_weights([-0.1, 0.5], 2, "alpha")


def test_as_weights_nan():
    with pytest.raises(DataError, match=r"`weights` has NaN or infinite entries"):
        as_weights([np.nan, 0.5], 2)


def test_as_weights_length_mismatch():
    with pytest.raises(DataError, match=r"`weights` has length 2 but the data have 3 records"):
        as_weights([0.5, 0.5], 3)


@pytest.mark.parametrize("eps", [0, -1.0, np.nan, np.inf])
def test_check_eps_rejects(eps):
    with pytest.raises(DataError, match=r"`eps` must be a finite privacy budget > 0"):
        check_eps(eps)


def test_check_eps_non_number():
    with pytest.raises(DataError, match=r"`eps` must be a positive number; got 'five'"):
        check_eps("five")


def test_check_positive_zero():
    with pytest.raises(DataError, match=r"`radius` must be finite and > 0"):
        check_positive(0.0, "radius")
    assert check_positive(0.0, "radius", allow_zero=True) == 0.0


@pytest.mark.parametrize("q", [0.0, -0.2, 1.5, np.nan])
def test_check_probability_rejects(q):
    with pytest.raises(DataError, match=r"`draw_quantile` must lie in \(0, 1\]"):
        check_probability(q, "draw_quantile")


def test_check_probability_non_number_names_argument():
    with pytest.raises(DataError, match=r"`draw_quantile`"):
        check_probability("high", "draw_quantile")


def test_check_same_length():
    assert check_same_length(x=[1, 2], covariates=np.ones((2, 3))) == 2
    with pytest.raises(DataError, match=r"mismatched lengths: `x` has 2, `covariates` has 3"):
        check_same_length(x=[1, 2], covariates=np.ones((3, 3)))


def test_check_support_messages():
    with pytest.raises(DataError, match=r"`y` has 1 values above the support of M \(first: position 1, value 3.0\)"):
        check_support(np.array([1.0, 3.0]), "y", upper=2.0, model="M")
    with pytest.raises(DataError, match=r"needs y > 0.0"):
        check_support(np.array([0.0, 3.0]), "y", lower=0.0, lower_open=True, model="M")
    check_support(np.array([0.0, 3.0]), "y", lower=0.0, upper=3.0)  # closed bounds are allowed


# --------------------------------------------------------------------------------------------
# data outside the model's support (families validate before building or fitting)
# --------------------------------------------------------------------------------------------


def test_nan_data_rejected_by_family():
    with pytest.raises(DataError, match=r"`x` has 1 non-finite value.*position 1"):
        models.BetaFamily().check_data([0.2, np.nan, 0.3])


def test_infinite_data_rejected_by_family():
    with pytest.raises(DataError, match=r"`x` has 1 non-finite value.*position 2"):
        models.LognormalFamily().check_data([1.0, 2.0, np.inf])


def test_empty_data_rejected_by_family():
    with pytest.raises(DataError, match=r"`x` is empty"):
        models.PoissonRegression().check_data([])


def test_beta_data_at_zero():
    with pytest.raises(DataError, match=r"`x` has 1 values below the support of the Beta model.*needs x > 0"):
        models.BetaFamily().check_data([0.0, 0.5])


def test_beta_data_at_one_point_two():
    with pytest.raises(DataError, match=r"`x` has 1 values above the support of the Beta model"
                       r".*value 1.2.*needs x < 1"):
        models.BetaFamily().check_data([0.5, 1.2])


def test_beta_data_at_one():
    with pytest.raises(DataError, match=r"above the support of the Beta model"):
        models.BetaFamily().check_data([0.5, 1.0])


def test_beta_regression_data_outside_unit_interval():
    X = betareg_design(2)
    with pytest.raises(DataError, match=r"`x`.*the beta regression"):
        models.BetaRegression(n_coef=2).check_data([0.5, 1.2], X)


def test_lognormal_data_zero():
    with pytest.raises(DataError, match=r"`x` has 1 values below the support of the lognormal model.*needs x > 0"):
        models.LognormalFamily().check_data([1.0, 0.0])


def test_lognormal_data_negative():
    with pytest.raises(DataError, match=r"`x` has 1 values below the support of the lognormal model.*-2.0"):
        models.LognormalFamily().check_data([-2.0, 1.0])


def test_negative_counts_poisson():
    with pytest.raises(DataError, match=r"`x` has 1 negative counts of the Poisson model \(first: position 2"):
        models.PoissonRegression().check_data([3, 4, -1])


def test_negative_counts_negbin():
    with pytest.raises(DataError, match=r"`x` has 2 negative counts of the negative binomial model"):
        models.NegBinomialRegression().check_data([-3, 4, -1])


def test_non_integer_counts_poisson():
    with pytest.raises(DataError, match=r"`x` must hold whole-number counts for the Poisson model; position 1 is 2.5"):
        models.PoissonRegression().check_data([3, 2.5])


def test_non_integer_counts_negbin():
    with pytest.raises(DataError, match=r"`x` must hold whole-number counts for the negative binomial model"):
        models.NegBinomialRegression().check_data([3, 0.1])


def test_covariates_length_mismatch():
    with pytest.raises(DataError, match=r"mismatched lengths: `x` has 3, `covariates` has 2"):
        models.BetaRegression(n_coef=2).check_data([0.2, 0.3, 0.4], betareg_design(2))


def test_covariates_missing_for_regression():
    with pytest.raises(DataError, match=r"needs `covariates`"):
        models.BetaRegression(n_coef=2).check_data([0.2, 0.3])


def test_covariates_wrong_number_of_columns():
    with pytest.raises(DataError, match=r"`covariates` has 2 column\(s\).*n_coef=1"):
        models.PoissonRegression(n_coef=1).check_data([1, 2], np.ones((2, 2)))


def test_covariates_with_nan():
    X = betareg_design(3)
    X[1, 1] = np.nan
    with pytest.raises(DataError, match=r"`covariates` has 1 non-finite"):
        models.BetaRegression(n_coef=2).check_data([0.2, 0.3, 0.4], X)


# --------------------------------------------------------------------------------------------
# privacy budget, weights, quantile rule, radii and ranges in the public functions
# --------------------------------------------------------------------------------------------


def test_eps_zero_in_weighted_e_truncation():
    with pytest.raises(DataError, match=r"`eps` must be a finite privacy budget > 0; got 0"):
        weights.truncate_weights([1.0], [1.0], eps=0)


def test_eps_negative_in_bound():
    with pytest.raises(DataError, match=r"`eps` must be a finite privacy budget > 0; got -2"):
        eps_to_bound(-2)


def test_eps_nan_in_perturbed_histogram():
    with pytest.raises(DataError, match=r"`eps` must be a finite privacy budget > 0; got nan"):
        histogram.perturbed_histogram([0.1, 0.2], np.nan, upper=1.0)


def test_eps_zero_in_perturbed_histogram():
    with pytest.raises(DataError, match=r"`eps`"):
        histogram.perturbed_histogram([0.1, 0.2], 0.0, upper=1.0)


def test_weights_outside_unit_interval_in_record_bounds():
    with pytest.raises(DataError, match=r"`weights` must lie in \[0, 1\]; position 1 is 2.0"):
        privacy.record_bounds(np.zeros((2, 2)), [0.5, 2.0])


def test_weights_length_mismatch_in_record_bounds():
    with pytest.raises(DataError, match=r"`weights` has length 3 but the data have 2 records"):
        privacy.record_bounds(np.zeros((2, 2)), [0.5, 0.5, 0.5])


def test_weights_outside_unit_interval_in_knowledge_weights():
    with pytest.raises(DataError, match=r"`weights` must lie in \[0, 1\]"):
        weights.knowledge_weights([1.1, 0.5], [0.2, 0.2])


def test_lambda_outside_unit_interval_in_knowledge_weights():
    with pytest.raises(DataError, match=r"`lam` must hold probabilities in \[0, 1\]"):
        weights.knowledge_weights([0.5, 0.5], [0.2, 1.2])


def test_weights_outside_unit_interval_in_reweight():
    with pytest.raises(DataError, match=r"`weights` must lie in \[0, 1\]"):
        weights.reweight([1.0, -0.5], [1.0, 2.0], delta=2.0, k=0.95)


def test_weights_length_mismatch_in_truncate():
    with pytest.raises(DataError, match=r"`weights` has length 3 but the data have 2 records"):
        weights.truncate_weights([1.0, 1.0, 1.0], [1.0, 2.0], eps=2.0)


def test_weights_too_large_in_scale_weights():
    with pytest.raises(DataError, match=r"`weights` must lie in \[0, 1\]"):
        weights.scale_weights([0.5, 3.0], 0.5)


@pytest.mark.parametrize("q", [0.0, 1.01, -1.0, np.nan])
def test_bad_draw_quantile_in_record_bounds(q):
    with pytest.raises(DataError, match=r"`draw_quantile` must lie in \(0, 1\]"):
        privacy.record_bounds(np.zeros((3, 2)), draw_quantile=q)


@pytest.mark.parametrize("q", [0.0, 2.0])
def test_bad_draw_quantile_in_sampler_config(q):
    with pytest.raises(DataError, match=r"`draw_quantile` must lie in \(0, 1\]"):
        SamplerConfig(draw_quantile=q)


@pytest.mark.parametrize("field", ["draws", "chains"])
def test_bad_sampler_sizes(field):
    with pytest.raises(DataError, match=rf"`{field}` must be a positive integer"):
        SamplerConfig(**{field: 0})


def test_bad_sampler_tune_negative():
    with pytest.raises(DataError, match=r"`tune` must be a positive integer"):
        SamplerConfig(tune=-1)


def test_bad_kind_for_count_weights():
    with pytest.raises(DataError, match=r"`kind` must be 'absolute' or 'relative'; got 'euclidean'"):
        weights.count_weights([1.0, 2.0], radius=1.0, kind="euclidean")


def test_negative_radius_for_count_weights():
    with pytest.raises(DataError, match=r"`radius` must be finite and >= 0"):
        weights.isolation_rate([1.0, 2.0], radius=-1.0)


@pytest.mark.parametrize("c, g", [(np.nan, 0.0), (1.0, np.inf)])
def test_non_finite_scale_or_shift(c, g):
    with pytest.raises(DataError, match=r"scale `c` and shift `g` must be finite"):
        weights.lipschitz_weights([1.0, 2.0], c=c, g=g)


def test_lipschitz_weights_rejects_negative_abs_loglik():
    with pytest.raises(DataError, match=r"`abs_loglik` must be absolute values"):
        weights.lipschitz_weights([1.0, -2.0])


def test_lipschitz_weights_rejects_nan():
    with pytest.raises(DataError, match=r"`abs_loglik` has NaN"):
        weights.lipschitz_weights([1.0, np.nan])


def test_downscale_factor_above_one():
    with pytest.raises(DataError, match=r"downscaling factor `c` must be in \(0, 1\]"):
        weights.scale_weights([0.5], 1.5)


def test_reweight_negative_delta_i():
    with pytest.raises(DataError, match=r"`delta_i` must be >= 0"):
        weights.reweight([1.0], [-1.0], delta=1.0, k=0.9)


def test_scalar_weight_zero_target():
    with pytest.raises(DataError, match=r"`delta_target` must be finite and > 0"):
        weights.scalar_weight(0.0, 3.0)


def test_record_bounds_nan_loglik():
    with pytest.raises(DataError, match=r"`loglik` has NaN"):
        privacy.record_bounds(np.array([[np.nan, 1.0]]))


def test_record_bounds_bad_shape():
    with pytest.raises(DataError, match=r"`loglik` must be a non-empty \(draws x records\) matrix"):
        privacy.record_bounds(np.zeros(3))


def test_record_bounds_bad_bound():
    with pytest.raises(DataError, match=r"`bound` must be finite and > 0"):
        privacy.record_bounds(np.zeros((2, 2)), bound=-1.0)


def test_record_bounds_range_shape_mismatch():
    with pytest.raises(DataError, match=r"`log_range_prob` has shape \(2, 3\)"):
        privacy.record_bounds(np.zeros((2, 2)), log_range_prob=np.zeros((2, 3)))


# --------------------------------------------------------------------------------------------
# perturbed histogram: public bounds
# --------------------------------------------------------------------------------------------


def test_ph_accepts_top_coded_data_at_the_public_upper_bound():
    # survey salaries are top-coded AT the public bound: a value equal to `upper` is inside
    x = np.array([0.1, 0.4, 1.0, 1.0])
    r = histogram.perturbed_histogram(x, 1.0, upper=1.0, seed=1)
    assert r.synthetic.size == 4 and ((r.synthetic >= 0) & (r.synthetic <= 1)).all()


def test_ph_accepts_data_at_the_public_lower_bound():
    x = np.array([2.5, 3.0, 4.0])
    r = histogram.perturbed_histogram(x, 1.0, lower=2.5, upper=10.0, seed=1)
    assert ((r.synthetic >= 2.5) & (r.synthetic <= 10.0)).all()


def test_ph_data_outside_the_public_bounds_are_clamped():
    a = histogram.perturbed_histogram([0.1, 0.5, 1.5, -0.2], 1.0, upper=1.0, seed=1, bins=4)
    b = histogram.perturbed_histogram([0.1, 0.5, 1.0, 0.0], 1.0, upper=1.0, seed=1, bins=4)
    np.testing.assert_array_equal(a.noisy_counts, b.noisy_counts)


def test_ph_bounds_inverted():
    with pytest.raises(DataError, match=r"public bounds must be finite with upper > lower"):
        histogram.perturbed_histogram([0.1, 0.5], 1.0, lower=2.0, upper=1.0)


def test_ph_bad_bins():
    with pytest.raises(DataError, match=r"`bins` must be >= 1"):
        histogram.perturbed_histogram([0.1, 0.5], 1.0, upper=1.0, bins=0)
    with pytest.raises(DataError, match=r"`bins` must be 'sqrt', 'log' or a positive int; got 'many'"):
        histogram.bin_count(10, "many")


def test_ph_bad_mode():
    with pytest.raises(DataError, match=r"`mode` must be one of"):
        histogram.perturbed_histogram([0.1, 0.5], 1.0, upper=1.0, mode="fast")


# --------------------------------------------------------------------------------------------
# metrics, synthesis
# --------------------------------------------------------------------------------------------


def test_ecdf_distances_nan_synthetic():
    with pytest.raises(DataError, match=r"`x_syn` has 1 non-finite"):
        metrics.ecdf_distances([1.0, 2.0], [1.0, np.nan])


def test_bootstrap_interval_bad_stat():
    with pytest.raises(DataError, match=r"`stat` must be one of"):
        metrics.bootstrap_interval([1.0, 2.0], "mode")


def test_bootstrap_interval_bad_level():
    with pytest.raises(DataError, match=r"`level` must be in \(0, 1\)"):
        metrics.bootstrap_interval([1.0, 2.0], level=95)


def test_interval_over_sets_bad_level():
    with pytest.raises(DataError, match=r"`level`"):
        metrics.interval_over_sets([1.0, 2.0, 3.0], level=95)


def test_composed_eps_bad_m():
    with pytest.raises(ValueError, match=r"`m` must be (an integer )?>= 1"):
        synthetic_data.composed_eps(1.0, 0)


# --------------------------------------------------------------------------------------------
# through the fitting and mechanism entry points (need a compiled model; no sampling happens)
# --------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_fit_rejects_nan_data(poisson_cm):
    with pytest.raises(DataError, match=r"`x` has 1 non-finite value.*position 1"):
        poisson_cm.fit([1.0, np.nan, 3.0])


@pytest.mark.slow
def test_fit_rejects_infinite_data(lognormal_cm):
    with pytest.raises(DataError, match=r"`x` has 1 non-finite value"):
        lognormal_cm.fit([1.0, np.inf])


@pytest.mark.slow
def test_fit_rejects_empty_data(beta_cm):
    with pytest.raises(DataError, match=r"`x` is empty"):
        beta_cm.fit([])


@pytest.mark.slow
def test_fit_rejects_beta_data_outside_support(beta_cm):
    with pytest.raises(DataError, match=r"`x` has 1 values above the support of the Beta model"):
        beta_cm.fit([0.3, 1.2])


@pytest.mark.slow
def test_fit_rejects_negative_counts(negbin_cm):
    with pytest.raises(DataError, match=r"`x` has 1 negative counts of the negative binomial model"):
        negbin_cm.fit([3.0, -2.0])


@pytest.mark.slow
def test_fit_rejects_weights_outside_unit_interval(poisson_cm):
    with pytest.raises(DataError, match=r"`weights` must lie in \[0, 1\]; position 2 is 1.5"):
        poisson_cm.fit([1.0, 2.0, 3.0], weights=[1.0, 0.5, 1.5])


@pytest.mark.slow
def test_fit_rejects_weights_length_mismatch(poisson_cm):
    with pytest.raises(DataError, match=r"`weights` has length 2 but the data have 3 records"):
        poisson_cm.fit([1.0, 2.0, 3.0], weights=[1.0, 0.5])


@pytest.mark.slow
def test_fit_rejects_privacy_weights_outside_unit_interval(poisson_cm):
    with pytest.raises(DataError, match=r"`privacy_weights` must lie in \[0, 1\]"):
        poisson_cm.fit([1.0, 2.0], privacy_weights=[1.0, 7.0])


@pytest.mark.slow
def test_fit_rejects_covariates_length_mismatch(betareg_cm):
    with pytest.raises(DataError, match=r"mismatched lengths: `x` has 3, `covariates` has 4"):
        betareg_cm.fit([0.2, 0.3, 0.4], covariates=betareg_design(4))


@pytest.mark.slow
def test_fit_rejects_bad_bound(poisson_cm):
    with pytest.raises(DataError, match=r"`bound` must be finite and > 0"):
        poisson_cm.fit([1.0, 2.0], bound=0.0)


@pytest.mark.slow
def test_censored_rejects_eps_zero(poisson_cm):
    with pytest.raises(DataError, match=r"`eps` must be a finite privacy budget > 0; got 0"):
        mechanisms.censored(poisson_cm, [1.0, 2.0], eps=0)


@pytest.mark.slow
def test_censored_rejects_eps_nan(poisson_cm):
    with pytest.raises(DataError, match=r"`eps` must be a finite privacy budget > 0; got nan"):
        mechanisms.censored(poisson_cm, [1.0, 2.0], eps=float("nan"))


@pytest.mark.slow
def test_count_weighted_rejects_bad_kind(poisson_cm):
    with pytest.raises(DataError, match=r"`kind` must be 'absolute' or 'relative'"):
        mechanisms.count_weighted(poisson_cm, [1.0, 2.0], radius=1.0, kind="ball")


@pytest.mark.slow
def test_reweighted_rejects_bad_k0(poisson_cm):
    with pytest.raises(DataError, match=r"`k0` must be in \(0, 1\]"):
        mechanisms.reweighted(poisson_cm, None, k0=1.5)


@pytest.mark.slow
@pytest.mark.parametrize(
    "a, b",
    [(1.8, 0.4), (1.0, 1.0), (-0.5, 1.2), (np.nan, 1.2), (0.4, np.nan), (-np.inf, 1.8), (0.4, -np.inf)],
)
def test_bad_range_multipliers(lognormal_cm, a, b):
    fit = fit_from_draws(lognormal_cm, [1.0, 2.0], {"mu": [0.0, 0.1], "sigma": [1.0, 1.1]})
    with pytest.raises(DataError, match=r"range multipliers must satisfy 0 <= a < b"):
        range_restriction.range_log_prob(fit, a, b)


@pytest.mark.slow
def test_bad_range_multipliers_in_range_averaged(lognormal_cm):
    fit = fit_from_draws(lognormal_cm, [1.0, 2.0], {"mu": [0.0, 0.1], "sigma": [1.0, 1.1]})
    with pytest.raises(DataError, match=r"range multipliers must satisfy 0 <= a < b.*a=1.2, b=0.6"):
        range_restriction.range_averaged(lognormal_cm, fit, None, 1.2, 0.6)


# --------------------------------------------------------------------------------------------
# no silent coercion: strings, bools and object arrays are refused, never read as numbers
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("eps", ["3", True, False, np.True_, None, [1.0]])
def test_check_eps_refuses_str_and_bool(eps):
    with pytest.raises(DataError, match=r"`eps` must be a positive number"):
        check_eps(eps)


def test_check_eps_accepts_numpy_numbers():
    assert check_eps(np.float32(0.5)) == 0.5 and check_eps(np.int64(2)) == 2.0 and check_eps(3) == 3.0


@pytest.mark.parametrize("value", ["0.1", True])
def test_check_positive_refuses_str_and_bool(value):
    with pytest.raises(DataError, match=r"`radius` must be a number"):
        check_positive(value, "radius", allow_zero=True)


@pytest.mark.parametrize("value", ["0.5", True])
def test_check_probability_refuses_str_and_bool(value):
    with pytest.raises(DataError, match=r"`draw_quantile` must be a probability"):
        check_probability(value, "draw_quantile")


def test_ph_eps_string_refused():
    with pytest.raises(DataError, match=r"`eps` must be a positive number; got '3'"):
        histogram.perturbed_histogram([0.1, 0.5], "3", upper=1.0, seed=1)


def test_ph_eps_bool_refused():
    with pytest.raises(DataError, match=r"`eps` must be a positive number; got True"):
        histogram.perturbed_histogram([0.1, 0.5], True, upper=1.0, seed=1)


def test_count_weights_radius_string_refused():
    with pytest.raises(DataError, match=r"`radius` must be a number; got '0.1'"):
        weights.count_weights([1.0, 2.0], "0.1")


def test_eps_to_bound_string_refused():
    with pytest.raises(DataError, match=r"`eps` must be a positive number"):
        eps_to_bound("1")


@pytest.mark.parametrize("w", [["1", "0.5"], [True, False], np.array([1, 0.5], dtype=object), "0.5", True])
def test_as_weights_refuses_str_bool_object(w):
    with pytest.raises(DataError, match=r"`weights` must be numeric"):
        as_weights(w, 2)


def test_as_weights_accepts_int_list():
    assert as_weights([1, 0], 2).tolist() == [1.0, 0.0]


@pytest.mark.parametrize("x", [["1.0", "2.0"], [True, False, True], np.array([1.0, None]), "12"])
def test_as_data_refuses_str_bool_object(x):
    with pytest.raises(DataError, match=r"`x` must be numeric"):
        as_data(x, "x")


def test_ph_string_data_refused():
    with pytest.raises(DataError, match=r"`x` must be numeric"):
        histogram.perturbed_histogram(["0.1", "0.5"], 1.0, upper=1.0, seed=1)


def test_truncate_weights_bool_weights_refused():
    with pytest.raises(DataError, match=r"`weights` must be numeric"):
        weights.truncate_weights([True, True], [0.1, 0.2], 1.0)


def test_as_weights_two_dimensional():
    with pytest.raises(DataError, match=r"`weights` must be one-dimensional, one weight per record; "
                       r"got shape \(2, 2\)"):
        as_weights(np.full((2, 2), 0.5), 2)
    with pytest.raises(DataError, match=r"`privacy_weights` must be one-dimensional"):
        as_weights([[0.5, 0.5]], 2, "privacy_weights")


# --------------------------------------------------------------------------------------------
# sampler settings
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("rhat", [np.nan, np.inf, 0.99, 0.0, -1.0, "1.01", True])
def test_sampler_config_bad_rhat_max(rhat):
    with pytest.raises(DataError, match=r"`rhat_max` must be a finite number >= 1"):
        SamplerConfig(rhat_max=rhat)


@pytest.mark.parametrize("ess", [-1.0, np.nan, np.inf, "400", False])
def test_sampler_config_bad_ess_min(ess):
    with pytest.raises(DataError, match=r"`ess_min` must be a finite number >= 0"):
        SamplerConfig(ess_min=ess)


@pytest.mark.parametrize("cores", [0, -2, 1.5, "2", True])
def test_sampler_config_bad_cores(cores):
    with pytest.raises(DataError, match=r"`cores` must be a positive integer"):
        SamplerConfig(cores=cores)


@pytest.mark.parametrize("draws", [True, 2.5, "300"])
def test_sampler_config_draws_not_coerced(draws):
    with pytest.raises(DataError, match=r"`draws` must be a positive integer"):
        SamplerConfig(draws=draws)
    with pytest.raises(DataError, match=r"`draws` must be a positive integer"):
        SamplerConfig.from_params({"draws": draws, "tune": 100})


def test_sampler_config_valid_edge_values():
    cfg = SamplerConfig(rhat_max=1.0, ess_min=0, cores=1)
    assert cfg.ess_threshold == 0.0
    assert SamplerConfig.from_params({"draws": 300.0, "tune": 200}).draws == 300


@pytest.mark.slow
@pytest.mark.parametrize("sampler", [{"draws": 100, "tune": 100}, 100, "small"])
def test_fit_sampler_must_be_a_sampler_config(poisson_cm, sampler):
    with pytest.raises(TypeError, match=r"`sampler` must be a SamplerConfig.*SamplerConfig.from_params"):
        poisson_cm.fit([1.0, 2.0], sampler=sampler)


@pytest.mark.slow
def test_fit_rejects_nan_bound(poisson_cm):
    with pytest.raises(DataError, match=r"`bound` must be finite and > 0; got nan"):
        poisson_cm.fit([1.0, 2.0], bound=float("nan"))


# --------------------------------------------------------------------------------------------
# checks of a confidential column, shared by the API and the command line
# --------------------------------------------------------------------------------------------


def test_fewer_than_two_records_are_refused_naming_data():
    import pandas as pd

    from dpsynth.validation import check_table_columns

    for n in (0, 1):
        with pytest.raises(DataError, match=rf"`data` has {n} record\(s\); synthesis needs at least 2") as err:
            check_table_columns(pd.DataFrame({"y": [1.5] * n}), "y", None)
        assert "\n" not in str(err.value)
    assert check_table_columns(pd.DataFrame({"y": [1.5, 2.5]}), "y", None) == []


def test_a_number_beyond_float32_is_refused_naming_the_column_and_row():
    import pandas as pd

    from dpsynth.validation import MAX_MAGNITUDE, check_magnitude

    s = pd.Series([1.0, 2.0, 1e300, -1e300], name="wage")
    with pytest.raises(DataError, match=r"target column 'wage' has the value 1e\+300 at row 2, beyond what dpsynth "
                                        r"holds .*Rescale the column"):
        check_magnitude(s, "wage", "target column")
    with pytest.raises(DataError, match=r"at row 'c'"):  # the row is the frame's own label
        check_magnitude(pd.Series([1.0, 2.0, -1e39], index=["a", "b", "c"]), "x")
    check_magnitude(pd.Series([MAX_MAGNITUDE, -MAX_MAGNITUDE, np.nan, np.inf]), "x")  # the rest is for other checks
    check_magnitude(pd.Series(["1e300", "a"]), "x")  # text is for the text checks


def test_numbers_with_some_text_are_refused_naming_the_first_offending_row():
    import pandas as pd

    from dpsynth.validation import check_numeric_text

    mixed = pd.Series([1.5, 2.0, "n/a", 4.0, "7.5", None], dtype=object)
    with pytest.raises(DataError, match=r"target column 'wage' holds numbers and text: 1 of 5 value\(s\) are not "
                                        r"numbers \(first at row 2: 'n/a'\)\. Clean or convert the column") as err:
        check_numeric_text(mixed, "wage")
    assert "\n" not in str(err.value)
    with pytest.raises(DataError, match=r"first at row 1: 'oops'"):  # as a CSV reads it: text throughout
        check_numeric_text(pd.Series(["3", "oops", "5", "6.5"]), "visits")
    check_numeric_text(pd.Series(["a", "b", "3"]), "y")  # mostly text: a categorical column, left to its checks
    check_numeric_text(pd.Series(["1", "2"]), "y")  # numbers written as text: left to their own message
    check_numeric_text(pd.Series([True, False]), "y")
    check_numeric_text(pd.Series(pd.Categorical(["1", "x", "2"])), "y")


@pytest.mark.parametrize("model", ["lognormal", "lognormal_regression", "lognormal_mixture", "beta",
                                   "beta_regression", "negbin", "poisson"])
def test_a_constant_column_is_refused_for_a_family_that_cannot_fit_it(model):
    from dpsynth.validation import check_not_constant

    with pytest.raises(DataError, match=rf"target column 'y' holds the same value in every record: the {model} model "
                                        rf"cannot fit a constant column .*Drop the column, or give public bounds"):
        check_not_constant(np.full(10, 3.0), "y", model)
    check_not_constant(np.array([3.0, 3.0, 4.0]), "y", model)


def test_a_constant_column_is_fine_for_other_models():
    from dpsynth.validation import check_not_constant

    check_not_constant(np.zeros(5), "y", "multinomial")
    check_not_constant(np.zeros(5), "y", lambda x: x)
