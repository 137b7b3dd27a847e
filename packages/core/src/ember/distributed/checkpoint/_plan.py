"""The parts of a checkpoint: the flattened state dict, and which rank writes what."""

from __future__ import annotations

import zlib

__all__: list[str] = []


def flatten_state_dict(state_dict: dict) -> list:
    """``[(fqn, parent container, key, value)]`` for every leaf of the nested dicts of
    ``state_dict``; ``fqn`` joins the keys with dots (PyTorch's flattened names)."""
    out = []

    def walk(d, prefix):
        for k, v in d.items():
            fqn = f"{prefix}{k}"
            if isinstance(v, dict):
                walk(v, fqn + ".")
            else:
                out.append((fqn, d, k, v))

    walk(state_dict, "")
    seen = set()
    for fqn, *_ in out:
        if fqn in seen:
            raise ValueError(f"the flattened state dict has the key {fqn!r} twice")
        seen.add(fqn)
    return out


def is_tensor(v) -> bool:
    from ember._C._core import TensorBase

    return isinstance(v, TensorBase)


def describe(leaves: list) -> int:
    """A checksum of the keys, shapes and dtypes (the ranks' state dicts must agree)."""
    parts = []
    for fqn, _, _, v in leaves:
        parts.append(f"{fqn}:{tuple(v.shape)}:{v.dtype}" if is_tensor(v) else f"{fqn}:obj")
    return zlib.crc32("|".join(parts).encode()) & 0x7FFFFFFF


def plan_writes(leaves: list, world_size: int, row_shard_bytes: int) -> list:
    """``[(fqn, rank, offsets, sizes)]`` for each tensor piece and ``(fqn, 0, None, None)``
    for each plain value: large tensors in row shards over the ranks, small ones whole,
    each to the rank with the fewest bytes so far (largest first). The same on every rank."""
    loads = [0] * world_size
    plan = []
    tensors = [(fqn, v) for fqn, _, _, v in leaves if is_tensor(v)]
    tensors.sort(key=lambda fv: (-fv[1].numel() * fv[1].element_size(), fv[0]))
    for fqn, t in tensors:
        nbytes = t.numel() * t.element_size()
        shape = tuple(t.shape)
        if world_size > 1 and t.dim() >= 1 and shape[0] >= world_size \
                and nbytes >= row_shard_bytes:
            base, extra = divmod(shape[0], world_size)
            start = 0
            row_bytes = nbytes // shape[0]
            for r in range(world_size):
                n = base + (1 if r < extra else 0)
                plan.append((fqn, r, (start,) + (0,) * (len(shape) - 1),
                             (n,) + shape[1:]))
                loads[r] += n * row_bytes
                start += n
        else:
            r = min(range(world_size), key=lambda i: loads[i])
            plan.append((fqn, r, (0,) * len(shape), shape))
            loads[r] += nbytes
    plan.extend((fqn, 0, None, None) for fqn, _, _, v in leaves if not is_tensor(v))
    return plan


def storage_key(fqn: str, offsets) -> str:
    return fqn if offsets is None else f"{fqn}@{','.join(map(str, offsets))}"
