"""Random-number state, as ``torch.random``: seeding and the default generator's state."""

from ember._ops.random import (
    fork_rng,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)

__all__ = ["fork_rng", "get_rng_state", "initial_seed", "manual_seed", "seed", "set_rng_state"]
