"""Record-weight formulas: LW, CW (isolation rates), SW, Weighted-e, re-weighting, knowledge
weights and downscaling, on hand-checked inputs, and weights in [0, 1] for arbitrary inputs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from dpsynth.weights import (
    UninformativeWeightsWarning,
    count_weights,
    isolation_rate,
    knowledge_weights,
    lipschitz_weights,
    reweight,
    scalar_weight,
    scale_weights,
    truncate_weights,
)

inf = np.inf

# --------------------------------------------------------------------------------------------
# LW
# --------------------------------------------------------------------------------------------


def test_lipschitz_weights_by_hand():
    # f = (1, 3, 5): min 1, max 5, r = (0, 0.5, 1), alpha = 1 - r
    np.testing.assert_allclose(lipschitz_weights([1.0, 3.0, 5.0]), [1.0, 0.5, 0.0])


def test_lipschitz_weights_order_does_not_matter():
    np.testing.assert_allclose(lipschitz_weights([5.0, 1.0, 2.0]), [0.0, 1.0, 0.75])


def test_lipschitz_weights_scale_and_shift_by_hand():
    # c = 2, g = -0.5: 2 (1 - r) - 0.5 = (1.5, 0.5, -0.5), clipped to (1, 0.5, 0)
    np.testing.assert_allclose(lipschitz_weights([1.0, 3.0, 5.0], c=2.0, g=-0.5), [1.0, 0.5, 0.0])
    # c = 0.5, g = 0.2: 0.5 (1 - r) + 0.2 = (0.7, 0.45, 0.2)
    np.testing.assert_allclose(lipschitz_weights([1.0, 3.0, 5.0], c=0.5, g=0.2), [0.7, 0.45, 0.2])


def test_lipschitz_weights_non_finite_gets_zero_and_is_left_out_of_min_max():
    # the inf record gets 0; min/max are taken over (2, 4) only: r = (0, 1, 0.5)
    np.testing.assert_allclose(lipschitz_weights([2.0, 4.0, inf, 3.0]), [1.0, 0.0, 0.0, 0.5])


def test_lipschitz_weights_all_non_finite():
    np.testing.assert_array_equal(lipschitz_weights([inf, inf]), [0.0, 0.0])


def test_lipschitz_weights_all_equal():
    # max f = min f: r = 0 for everyone, alpha = clip(c + g), with a warning each time
    with pytest.warns(UninformativeWeightsWarning, match=r"`abs_loglik` is the same"):
        np.testing.assert_allclose(lipschitz_weights([2.0, 2.0, 2.0]), [1.0, 1.0, 1.0])
    with pytest.warns(UninformativeWeightsWarning):
        np.testing.assert_allclose(lipschitz_weights([2.0, 2.0], c=0.6, g=0.1), [0.7, 0.7])
    with pytest.warns(UninformativeWeightsWarning):
        np.testing.assert_allclose(lipschitz_weights([7.0]), [1.0])


def test_lipschitz_weights_all_equal_warns_no_protection():
    with pytest.warns(UserWarning, match=r"same weight 1: they offer no protection"):
        lipschitz_weights([3.5, 3.5, 3.5, 3.5])


def test_lipschitz_weights_distinct_values_do_not_warn():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lipschitz_weights([1.0, 2.0, inf])


def test_lipschitz_weights_all_equal_with_an_infinite_record():
    with pytest.warns(UninformativeWeightsWarning):
        np.testing.assert_allclose(lipschitz_weights([2.0, inf, 2.0], c=0.5), [0.5, 0.0, 0.5])


# --------------------------------------------------------------------------------------------
# CW: isolation rates
# --------------------------------------------------------------------------------------------


def test_isolation_rate_absolute_by_hand():
    # x = (0, 1, 2, 10), r = 1: balls {0,1}, {0,1,2}, {1,2}, {10}; records outside: 2, 1, 2, 3
    np.testing.assert_allclose(isolation_rate([0.0, 1.0, 2.0, 10.0], 1.0), [0.5, 0.25, 0.5, 0.75])


def test_isolation_rate_relative_by_hand():
    # r = 0.5 relative: B(0) = {0}, B(1) = [0.5, 1.5] -> {1}, B(2) = [1, 3] -> {1, 2}, B(10) = [5, 15] -> {10}
    got = isolation_rate([0.0, 1.0, 2.0, 10.0], 0.5, kind="relative")
    np.testing.assert_allclose(got, [0.75, 0.75, 0.5, 0.75])


def test_isolation_rate_ball_is_closed_and_counts_duplicates():
    # |x_j - x_i| <= r includes the boundary; ties count each record
    np.testing.assert_allclose(isolation_rate([1.0, 1.0, 2.0, 4.0], 1.0), [0.25, 0.25, 0.25, 0.75])


def test_isolation_rate_radius_zero():
    np.testing.assert_allclose(isolation_rate([3.0, 3.0, 5.0], 0.0), [1 / 3, 1 / 3, 2 / 3])


def test_isolation_rate_relative_with_negative_values():
    # B(-2) = [-3, -1] -> {-2, -1}; B(-1) = [-1.5, -0.5] -> {-1}; B(4) = [2, 6] -> {4}
    np.testing.assert_allclose(isolation_rate([-2.0, -1.0, 4.0], 0.5, kind="relative"), [1 / 3, 2 / 3, 2 / 3])


def brute_isolation(x, r, kind):
    n = len(x)
    out = []
    for i in range(n):
        half = r if kind == "absolute" else r * abs(x[i])
        outside = sum(1 for j in range(n) if not abs(x[j] - x[i]) <= half)
        out.append(outside / n)
    return np.array(out)


# integer-valued data and radii that are multiples of 1/2 keep every comparison exact, so ties on
# the ball's boundary are tested, not blurred by rounding
@settings(max_examples=300, deadline=None)
@given(
    x=st.lists(st.integers(-30, 30), min_size=1, max_size=40).map(lambda v: np.array(v, dtype=float)),
    r2=st.integers(0, 20),
    kind=st.sampled_from(["absolute", "relative"]),
)
def test_isolation_rate_matches_brute_force(x, r2, kind):
    r = r2 / 2
    np.testing.assert_array_equal(isolation_rate(x, r, kind=kind), brute_isolation(x, r, kind))


def test_isolation_rate_symmetric_at_floating_point_ties():
    # 0.30000000000000004 - 0.2 == 0.10000000000000003 > 0.1, and 0.2 - 0.30000000000000004 is its
    # negation: neither record is in the other's ball, so both get the same rate
    np.testing.assert_array_equal(isolation_rate([0.2, 0.1 + 0.2], 0.1), [0.5, 0.5])
    # and where the computed distance is exactly r, both are inside
    x = [0.5, 0.75]
    np.testing.assert_array_equal(isolation_rate(x, 0.25), [0.0, 0.0])


ties = st.sampled_from([0.0, 0.1, 0.2, 0.3, 0.1 + 0.2, 0.7, 0.6 + 0.1, 1.0, 1.1, 0.9 + 0.2, -0.1, -0.3])


@settings(max_examples=400, deadline=None)
@given(
    x=st.lists(st.one_of(ties, st.floats(-2, 2)), min_size=1, max_size=25).map(lambda v: np.array(v, dtype=float)),
    r=st.sampled_from([0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.1 + 0.2, 1.0]) | st.floats(0, 3),
    kind=st.sampled_from(["absolute", "relative"]),
)
@example(x=np.array([0.2, 0.1 + 0.2]), r=0.1, kind="absolute")
def test_isolation_rate_is_the_computed_distance_definition(x, r, kind):
    """IR from fl(|x_j - x_i|) <= r (or <= r|x_i|) exactly, as the O(n^2) definition computes it."""
    np.testing.assert_array_equal(isolation_rate(x, r, kind=kind), brute_isolation(x, r, kind))
    if kind == "absolute":
        d = np.abs(x[:, None] - x[None, :])
        member = d <= r
        assert (member == member.T).all()  # membership symmetric


@pytest.mark.parametrize("kind", ["absolute", "relative"])
def test_isolation_rate_brute_force_continuous(kind):
    x = np.random.default_rng(1).lognormal(3.0, 1.0, size=300)
    r = 5.0 if kind == "absolute" else 0.2
    np.testing.assert_array_equal(isolation_rate(x, r, kind=kind), brute_isolation(x, r, kind))


def test_count_weights_by_hand():
    # IR = (0.5, 0.25, 0.5, 0.75) -> 1 - IR = (0.5, 0.75, 0.5, 0.25)
    x = [0.0, 1.0, 2.0, 10.0]
    np.testing.assert_allclose(count_weights(x, 1.0), [0.5, 0.75, 0.5, 0.25])
    # c = 2, g = -0.6: (0.4, 0.9, 0.4, -0.1) -> clip
    np.testing.assert_allclose(count_weights(x, 1.0, c=2.0, g=-0.6), [0.4, 0.9, 0.4, 0.0])
    np.testing.assert_allclose(count_weights(x, 0.5, kind="relative"), [0.25, 0.25, 0.5, 0.25])


# --------------------------------------------------------------------------------------------
# SW, Weighted-e, re-weighting, knowledge weights, downscaling
# --------------------------------------------------------------------------------------------


def test_scalar_weight_by_hand():
    assert scalar_weight(2.0, 8.0) == 0.25
    assert scalar_weight(3.0, 3.0) == 1.0
    assert scalar_weight(10.0, 5.0) == 1.0  # capped


def test_truncate_weights_by_hand():
    w = [1.0, 0.5, 0.0, 0.8, 0.3]
    d = [3.0, 0.5, 9.0, 2.6, 2.5]
    # eps = 5: M = 2.5; records 0 (3 > 2.5) and 3 (2.6) are set to 0; record 2 was 0 already
    # (not counted); record 4 sits exactly at M (not above)
    out, n = truncate_weights(w, d, 5.0)
    np.testing.assert_array_equal(out, [0.0, 0.5, 0.0, 0.0, 0.3])
    assert n == 2


def test_truncate_weights_does_not_modify_input():
    w = np.array([1.0, 1.0])
    truncate_weights(w, [5.0, 0.1], 1.0)
    np.testing.assert_array_equal(w, [1.0, 1.0])


def test_truncate_weights_nothing_to_do():
    out, n = truncate_weights([0.2, 0.4], [0.1, 0.2], 10.0)
    np.testing.assert_array_equal(out, [0.2, 0.4])
    assert n == 0


def test_reweight_by_hand():
    w = [1.0, 0.5, 0.2, 0.0, 0.8]
    d = [4.0, 2.0, 1.0, 0.0, 1.0]
    # k alpha Delta / Delta_i with Delta = 4, k = 0.9:
    # 0.9*1*4/4 = 0.9; 0.9*0.5*4/2 = 0.9; 0.9*0.2*4/1 = 0.72; weight-0 record with Delta_i = 0 keeps 0;
    # 0.9*0.8*4/1 = 2.88 -> clipped to 1
    np.testing.assert_allclose(reweight(w, d, 4.0, 0.9), [0.9, 0.9, 0.72, 0.0, 1.0])


def test_reweight_delta_i_zero_keeps_alpha():
    # a record with Delta_i = 0 has no ratio Delta / Delta_i: it keeps alpha_i, not k * alpha_i
    out = reweight([0.6, 0.3, 1.0], [0.0, 0.0, 2.0], 4.0, 0.5)
    np.testing.assert_allclose(out, [0.6, 0.3, 1.0])  # last: 0.5 * 1 * 4 / 2 = 1.0
    out2 = reweight([0.6, 0.5], [0.0, 1.0], 1.0, 1.5)
    np.testing.assert_allclose(out2, [0.6, 0.75])


def test_reweight_weight_zero_with_tiny_delta_i_stays_zero():
    # Delta / Delta_i overflows to inf; a weight-0 record must stay at 0 (0 * inf is NaN), and a
    # positive weight is clipped to 1
    with np.errstate(all="ignore"):
        out = reweight([0.0, 0.5], [1e-320, 1e-320], 1.0, 0.95)
    np.testing.assert_array_equal(out, [0.0, 1.0])


def test_knowledge_weights_by_hand():
    # alpha* = lambda + (1 - lambda) alpha
    np.testing.assert_allclose(knowledge_weights([0.2, 0.2, 0.2, 1.0], [0.0, 0.5, 1.0, 0.3]), [0.2, 0.6, 1.0, 1.0])
    np.testing.assert_allclose(knowledge_weights([0.0, 0.4], [0.25, 0.25]), [0.25, 0.55])


def test_scale_weights_by_hand():
    np.testing.assert_allclose(scale_weights([1.0, 0.5, 0.0], 0.4), [0.4, 0.2, 0.0])


# --------------------------------------------------------------------------------------------
# weights stay in [0, 1] for arbitrary inputs
# --------------------------------------------------------------------------------------------

unit = st.floats(0.0, 1.0)
any_c = st.floats(-1e6, 1e6)
vec = st.integers(1, 30)


def in_unit(w):
    w = np.asarray(w)
    return bool(np.all(np.isfinite(w)) and np.all(w >= 0) and np.all(w <= 1))


@settings(max_examples=300, deadline=None)
@given(
    f=hnp.arrays(float, vec, elements=st.one_of(st.floats(0.0, 1e300), st.just(inf))),
    c=any_c,
    g=any_c,
)
@pytest.mark.filterwarnings("ignore::dpsynth.weights.UninformativeWeightsWarning")
def test_lipschitz_weights_in_unit_interval(f, c, g):
    w = lipschitz_weights(f, c=c, g=g)
    assert w.shape == f.shape and in_unit(w)
    assert (w[~np.isfinite(f)] == 0).all()


@settings(max_examples=200, deadline=None)
@given(
    x=hnp.arrays(float, vec, elements=st.floats(-1e6, 1e6)),
    r=st.floats(0.0, 1e6),
    kind=st.sampled_from(["absolute", "relative"]),
    c=any_c,
    g=any_c,
)
def test_count_weights_in_unit_interval(x, r, kind, c, g):
    ir = isolation_rate(x, r, kind)
    assert ((ir >= 0) & (ir <= 1 - 1 / x.size + 1e-12)).all()  # a record is always in its own ball
    assert in_unit(count_weights(x, r, kind, c=c, g=g))


@st.composite
def weights_and_deltas(draw):
    n = draw(vec)
    w = draw(hnp.arrays(float, n, elements=unit))
    d = draw(hnp.arrays(float, n, elements=st.floats(0.0, 1e6)))
    return w, d


@settings(max_examples=300, deadline=None)
@given(wd=weights_and_deltas(), D=st.floats(1e-6, 1e6), k=st.floats(1e-6, 10.0))
@example(wd=(np.array([0.0, 0.5]), np.array([5e-324, 5e-324])), D=1.0, k=1.0)
def test_reweight_in_unit_interval(wd, D, k):
    w, d = wd
    out = reweight(w, d, D, k)
    assert in_unit(out)
    assert (out[w == 0] == 0).all()
    np.testing.assert_array_equal(out[d == 0], w[d == 0])


@settings(max_examples=300, deadline=None)
@given(wd=weights_and_deltas())
def test_knowledge_weights_in_unit_interval_and_not_below_alpha(wd):
    w, lam = wd[0], np.clip(wd[1] / 1e6, 0, 1)
    out = knowledge_weights(w, lam)
    assert in_unit(out)
    assert (out >= w - 1e-15).all() and (out >= lam - 1e-15).all()


@settings(max_examples=300, deadline=None)
@given(wd=weights_and_deltas(), eps=st.floats(1e-6, 1e6))
def test_truncate_weights_in_unit_interval(wd, eps):
    w, d = wd
    out, n = truncate_weights(w, d, eps)
    assert in_unit(out)
    assert n == int(((d > eps / 2) & (w > 0)).sum())
    assert (out[d > eps / 2] == 0).all()
    np.testing.assert_array_equal(out[d <= eps / 2], w[d <= eps / 2])


@settings(max_examples=200, deadline=None)
@given(t=st.floats(1e-9, 1e9), u=st.floats(1e-9, 1e9))
def test_scalar_weight_in_unit_interval(t, u):
    assert 0 < scalar_weight(t, u) <= 1


# --------------------------------------------------------------------------------------------
# no silent coercion of strings or bools
# --------------------------------------------------------------------------------------------


def test_weight_formulas_refuse_strings_and_bools():
    from dpsynth.validation import DataError

    with pytest.raises(DataError, match=r"`abs_loglik` must be numeric"):
        lipschitz_weights(["1.0", "2.0"])
    with pytest.raises(DataError, match=r"`weights` must be numeric"):
        scale_weights(["1.0", "0.5"], 0.5)
    with pytest.raises(DataError, match=r"scale `c` and shift `g` must be finite"):
        lipschitz_weights([1.0, 2.0], c="1")
    with pytest.raises(DataError, match=r"`radius` must be a number"):
        count_weights([1.0, 2.0], True)
    with pytest.raises(DataError, match=r"`x` must be numeric"):
        isolation_rate(["1", "2"], 0.5)
