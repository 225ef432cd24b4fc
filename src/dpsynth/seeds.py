"""Random streams: one master seed, independent streams per replicate and synthesizer.

Streams are addressed, not drawn in sequence: the stream of (replicate 3, "Censor_w") is the same
whatever ran before it and on whichever process it runs, so results do not depend on execution
order or parallelism.
"""

from __future__ import annotations

import hashlib

import numpy as np

__all__ = ["SeedLike", "stream", "as_seed_sequence", "int_seed", "generator"]

SeedLike = int | np.random.SeedSequence | None


def _name_key(name: str) -> int:
    """A stable 32-bit key for a stream name (Python's ``hash`` is salted per process)."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "little")


def as_seed_sequence(seed: SeedLike) -> np.random.SeedSequence:
    """Return ``seed`` as a :class:`numpy.random.SeedSequence` (``None`` = fresh entropy)."""
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if seed is not None and (not isinstance(seed, (int, np.integer)) or seed < 0):
        raise ValueError(f"`seed` must be a non-negative integer or a SeedSequence; got {seed!r}.")
    return np.random.SeedSequence(seed)


def stream(seed: SeedLike, *keys: int | str) -> np.random.SeedSequence:
    """The stream addressed by ``keys`` under master ``seed``.

    Parameters
    ----------
    seed : int or SeedSequence
        Master seed.
    *keys : int or str
        Path of the stream, e.g. ``(replicate, "Censor_w", eps_index)``; strings are hashed
        stably.
    """
    base = as_seed_sequence(seed)
    path = tuple(k if isinstance(k, (int, np.integer)) else _name_key(str(k)) for k in keys)
    return np.random.SeedSequence(base.entropy, spawn_key=tuple(base.spawn_key) + tuple(int(k) for k in path))


def int_seed(seed: SeedLike) -> int:
    """A 32-bit integer drawn from ``seed``, for samplers that take an integer seed."""
    return int(as_seed_sequence(seed).generate_state(1, dtype=np.uint32)[0])


def generator(seed: SeedLike) -> np.random.Generator:
    """A :class:`numpy.random.Generator` on ``seed``'s stream."""
    return np.random.default_rng(as_seed_sequence(seed))
