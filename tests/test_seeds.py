"""Addressed random streams: independent of call order, process and hash salt."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from dpsynth.seeds import as_seed_sequence, generator, int_seed, stream


def _state(ss):
    return ss.generate_state(4).tolist()


def test_same_keys_same_stream_regardless_of_order():
    a1 = _state(stream(7, 3, "Censor_w", 1))
    _ = [_state(stream(7, r, name)) for r in range(5) for name in ("LW", "CW")]
    a2 = _state(stream(7, 3, "Censor_w", 1))
    b = [_state(stream(7, r, "Censor_w", 1)) for r in reversed(range(5))]
    assert a1 == a2 == b[1]


def test_different_keys_differ():
    states = {
        tuple(_state(stream(7, *keys)))
        for keys in [(), (0,), (1,), (0, "LW"), (0, "CW"), (1, "LW"), (0, "LW", 0), (0, "LW", 1)]
    }
    assert len(states) == 8


def test_different_master_seeds_differ():
    assert _state(stream(1, 0, "x")) != _state(stream(2, 0, "x"))


def test_stream_of_a_seed_sequence_extends_its_path():
    base = stream(5, 2)
    assert _state(stream(base, "data")) == _state(stream(5, 2, "data"))


def test_string_keys_stable_across_processes():
    import dpsynth.seeds

    # load seeds.py on its own (numpy only), so the child processes start fast
    code = (
        "import importlib.util as u, sys;"
        f"spec = u.spec_from_file_location('s', {dpsynth.seeds.__file__!r});"
        "m = u.module_from_spec(spec); spec.loader.exec_module(m);"
        "print(m.stream(11, 4, 'Censor_w').generate_state(2).tolist())"
    )
    outs = set()
    for salt in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=salt)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        outs.add(out.stdout.strip())
    assert outs == {str(stream(11, 4, "Censor_w").generate_state(2).tolist())}


def test_int_seed_and_generator_deterministic():
    assert int_seed(3) == int_seed(3)
    assert int_seed(3) != int_seed(4)
    assert 0 <= int_seed(stream(3, 1)) < 2**32
    np.testing.assert_array_equal(generator(9).random(5), generator(9).random(5))
    np.testing.assert_array_equal(generator(stream(9, 1)).random(3), generator(stream(9, 1)).random(3))


def test_as_seed_sequence():
    ss = np.random.SeedSequence(4)
    assert as_seed_sequence(ss) is ss
    assert as_seed_sequence(4).entropy == 4
    assert as_seed_sequence(None).entropy is not None  # fresh entropy


@pytest.mark.parametrize("bad", [-1, 1.5, "seven"])
def test_bad_seed(bad):
    with pytest.raises(ValueError, match=r"`seed` must be a non-negative integer or a SeedSequence"):
        as_seed_sequence(bad)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::dpsynth.fitting.ConvergenceWarning")
def test_fit_with_same_stream_gives_identical_draws(poisson_cm):
    import simulated
    from fit_helpers import TINY

    x = simulated.poisson_data(100, stream(1, 0, "data"))
    np.testing.assert_array_equal(x, simulated.poisson_data(100, stream(1, 0, "data")))
    a = poisson_cm.fit(x, sampler=TINY, seed=stream(1, 0, "fit"))
    b = poisson_cm.fit(x, sampler=TINY, seed=stream(1, 0, "fit"))
    c = poisson_cm.fit(x, sampler=TINY, seed=stream(1, 1, "fit"))
    np.testing.assert_array_equal(a.draws["beta"], b.draws["beta"])
    np.testing.assert_array_equal(a.draws["sigma_beta"], b.draws["sigma_beta"])
    assert not np.array_equal(a.draws["beta"], c.draws["beta"])
