"""``swap_in_optimizer_params_and_state``: run an optimizer on other parameters and state
for the length of a ``with`` block."""

from __future__ import annotations

import contextlib
from collections import defaultdict

from ember._C import _core

__all__ = ["swap_in_optimizer_params_and_state"]

_NAME = "swap_in_optimizer_params_and_state"


def _check_state(state) -> dict:
    if not isinstance(state, dict):
        raise RuntimeError(
            f"{_NAME} requires swapin_optim_state['state'] to be a dict mapping packed "
            f"parameter ids to per-param state dicts, got {type(state).__name__}.")
    if any(isinstance(k, _core.TensorBase) for k in state):
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style state keyed by "
                           "packed parameter ids.")
    if any(isinstance(k, int) and not isinstance(v, dict) for k, v in state.items()):
        raise RuntimeError(f"{_NAME} requires per-parameter optimizer state entries to be "
                           "dictionaries.")
    return state


def _group_ids(idx, group, swapin_group) -> list:
    if not isinstance(swapin_group, dict):
        raise RuntimeError(f"{_NAME} requires each optimizer param group to be a dictionary.")
    ids = swapin_group.get("params")
    if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style "
                           "param_groups[*]['params'] entries keyed by packed parameter ids.")
    if len(group["params"]) != len(ids):
        raise RuntimeError(f"swapin_optim_state param group {idx} has a different number of "
                           "params than the live optimizer param group.")
    swapin_only = [k for k in swapin_group if k not in group]
    live_only = [k for k in group if k not in swapin_group]
    if swapin_only or live_only:
        raise RuntimeError(
            f"{_NAME} requires optimizer.state_dict()-style param group keys to exactly match "
            f"the live optimizer group keys for group {idx}. Keys only in swap-in: "
            f"{swapin_only}. Keys only in live: {live_only}.")
    return ids


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(optimizer, swapin_parameters, swapin_optim_state):
    """Temporarily give ``optimizer`` other parameters and state, restoring its own on
    exit.

    Inside the block every optimizer API (``step``, hooks, ``state_dict``) sees the
    swapped-in values: ``optimizer.step()`` updates the given parameter tensors and the
    state tensors of ``swapin_optim_state`` in place. Unlike ``load_state_dict``, the
    parameters are swapped too.

    Args:
        optimizer (Optimizer): the live optimizer; its state must be initialized.
        swapin_parameters (dict of str to Tensor): the parameters to use, in the order of
            the optimizer's parameters (usually ``model.named_parameters()`` order).
        swapin_optim_state (dict): an ``optimizer.state_dict()``-shaped dict
            (``{"state": ..., "param_groups": ...}``) with the state to use; only in-place
            changes of its tensors are seen after the block.

    Examples::

        >>> with ember.optim.swap_in_optimizer_params_and_state(opt, params, osd):
        ...     opt.step()
    """
    if not optimizer.state:
        raise RuntimeError(f"{_NAME} requires initialized optimizer state.")
    if not isinstance(swapin_optim_state, dict):
        raise RuntimeError(f"{_NAME} requires a DCP-style optimizer state_dict.")
    state = _check_state(swapin_optim_state.get("state"))
    groups = swapin_optim_state.get("param_groups")
    if not isinstance(groups, list):
        raise RuntimeError(
            f"{_NAME} requires swapin_optim_state['param_groups'] to be a list of "
            f"param-group dicts, got {type(groups).__name__}.")
    if len(groups) != len(optimizer.param_groups):
        raise RuntimeError("swapin_optim_state has a different number of parameter groups "
                           "than the live optimizer.")
    flat = list(swapin_parameters.values())
    offset, seen, plan = 0, set(), []
    for idx, (group, swapin_group) in enumerate(zip(optimizer.param_groups, groups,
                                                    strict=True)):
        ids = _group_ids(idx, group, swapin_group)
        seen.update(ids)
        if offset + len(ids) > len(flat):
            raise RuntimeError(f"{_NAME} requires the explicit parameter state to match "
                               "optimizer.param_groups ordering.")
        plan.append((group, swapin_group, flat[offset:offset + len(ids)], ids))
        offset += len(ids)
    extra = [k for k in state if k not in seen]
    if extra:
        raise RuntimeError(
            f"{_NAME} requires swapin_optim_state['state'] to be keyed only by packed "
            f"parameter ids from param_groups[*]['params']; got extra keys {extra!r}.")
    original_state = optimizer.state
    snapshots = [dict(g) for g in optimizer.param_groups]
    try:
        swapped = defaultdict(dict)
        for group, swapin_group, params, ids in plan:
            group["params"] = params
            for key, value in swapin_group.items():
                if key != "params":
                    group[key] = value
            for p, pid in zip(params, ids, strict=True):
                # a shallow copy: in-place tensor updates reach the caller's dict, new
                # entries stay here
                swapped[p] = dict(state.get(pid, {}))
        optimizer.state = swapped
        yield
    finally:
        for group, snapshot in zip(optimizer.param_groups, snapshots, strict=True):
            group.clear()
            group.update(snapshot)
        optimizer.state = original_state
