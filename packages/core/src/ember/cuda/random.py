"""The GPUs' default random generators: seeding and state, as ``torch.cuda.random``.

Each GPU's backend holds its default :class:`ember.Generator` (made on first use, from the
CPU generator's initial seed). Without a GPU there is nothing to seed, and the seeding calls
do nothing, as PyTorch's do. CuPy's cuRAND states cannot be saved, so
:func:`get_rng_state` raises on a GPU (reseed with :func:`manual_seed` instead).
"""

from __future__ import annotations

from collections.abc import Iterable

from ember._backend import backend_for_device
from ember._ops.random import _check_seed, _random_seed
from ember.cuda._utils import device_count, get_device_index, is_available, lazy_init

__all__ = ["get_rng_state", "get_rng_state_all", "set_rng_state", "set_rng_state_all",
           "manual_seed", "manual_seed_all", "seed", "seed_all", "initial_seed"]


def _generator(device="cuda"):
    index = get_device_index(device)
    if index < 0:
        index = get_device_index(None)
    return backend_for_device(f"cuda:{index}").default_generator


def get_rng_state(device: int | str = "cuda"):
    """The state of a GPU's default generator (raises: cuRAND states cannot be saved)."""
    lazy_init()
    return _generator(device).get_state()


def get_rng_state_all() -> list:
    """The states of every GPU's default generator ([] without a GPU)."""
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state(new_state, device: int | str = "cuda") -> None:
    """Restore a GPU default generator's state (nothing to restore without a GPU)."""
    if is_available():
        _generator(device).set_state(new_state)


def set_rng_state_all(new_states: Iterable) -> None:
    """Restore every GPU's default generator, one state per GPU."""
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


def manual_seed(seed: int) -> None:
    """Seed the current GPU's default generator (nothing without a GPU).

    Example::

        >>> ember.cuda.manual_seed(0)
    """
    seed = _check_seed(seed)
    if is_available():
        _generator().manual_seed(seed)


def manual_seed_all(seed: int) -> None:
    """Seed every GPU's default generator (nothing without a GPU)."""
    seed = _check_seed(seed)
    for i in range(device_count()):
        _generator(i).manual_seed(seed)


def seed() -> None:
    """Seed the current GPU's default generator from the operating system's entropy."""
    if is_available():
        _generator().manual_seed(_random_seed())


def seed_all() -> None:
    """Seed every GPU's default generator with one seed from the operating system."""
    s = _random_seed()
    for i in range(device_count()):
        _generator(i).manual_seed(s)


def initial_seed() -> int:
    """The seed of the current GPU's default generator."""
    lazy_init()
    return _generator().initial_seed()
