"""The join context manager for uneven inputs (``torch.distributed.algorithms.join``).

# NOTE [ Shadowing the collectives of the ranks still training ]
# A rank whose data ran out leaves its training loop and waits in Join.__exit__. Every
# iteration of the ranks still training begins with an all_reduce of ones (notify_join_context);
# the joined rank answers it with an all_reduce of zeros, so the sum counts the ranks still
# training. While that count is not zero the joined rank runs each joinable's main_hook, which
# issues the same collectives, in the same order, as one training iteration of that joinable
# (for DDP: the buffer broadcast, the bucket all-reduces with zero gradients), so the others
# never wait for a partner that is gone. When the count reaches zero every rank runs the
# post_hooks (DDP: broadcast the final model from one of the last ranks to join).
"""

from __future__ import annotations

import warnings
from abc import ABC, abstractmethod
from typing import Any, NamedTuple

__all__ = ["JoinHook", "Joinable", "Join"]


class JoinHook:
    r"""The two entry points a :class:`Joinable` gives the join context manager: a main
    hook, called repeatedly while some rank has not joined, and a post hook, called once
    when all have joined. Subclass it and override the ones you need."""

    def main_hook(self) -> None:
        """Shadow the collectives of one training iteration of the ranks still training."""

    def post_hook(self, is_last_joiner: bool) -> None:
        """Run once all ranks have joined.

        Args:
            is_last_joiner (bool): True if this rank is one of the last to join.
        """


class _JoinConfig(NamedTuple):
    enable: bool
    throw_on_early_termination: bool
    is_first_joinable: bool

    @staticmethod
    def construct_disabled_join_config():
        return _JoinConfig(enable=False, throw_on_early_termination=False,
                           is_first_joinable=False)


class Joinable(ABC):
    r"""Base class of the objects a :class:`Join` context manager can drive (DDP, ...):
    they implement :meth:`join_hook`, :attr:`join_device` and :attr:`join_process_group`,
    and call :meth:`Join.notify_join_context` before each iteration's collectives."""

    @abstractmethod
    def __init__(self) -> None:
        super().__init__()
        self._join_config = _JoinConfig.construct_disabled_join_config()

    @abstractmethod
    def join_hook(self, **kwargs) -> JoinHook:
        """The :class:`JoinHook` of this joinable (``kwargs``: those given to Join)."""

    @property
    @abstractmethod
    def join_device(self):
        """The device of the join context manager's collectives."""

    @property
    @abstractmethod
    def join_process_group(self) -> Any:
        """The process group of the join context manager's collectives."""


class Join:
    r"""Context manager for training on uneven inputs: a rank whose inputs run out first
    keeps shadowing the collectives of the others until every rank is done, so that none
    hangs.

    Args:
        joinables (list of Joinable): the participating objects (e.g. a
            :class:`~ember.nn.parallel.DistributedDataParallel` model); their hooks run in
            this order.
        enable (bool): False turns the manager off (inputs known to be even).
            Default: True.
        throw_on_early_termination (bool): raise on every rank as soon as one rank runs out
            of inputs, instead of shadowing. Default: False.
        **kwargs: handed to each joinable's ``join_hook``.

    Example::

        >>> model = DDP(nn.Linear(1, 1))
        >>> inputs = [ember.ones(1)] * (10 + dist.get_rank())   # rank 1 has one more
        >>> with Join([model]):
        ...     for x in inputs:
        ...         model(x).sum().backward()
    """

    def __init__(self, joinables: list, enable: bool = True,
                 throw_on_early_termination: bool = False, **kwargs) -> None:
        if len(joinables) == 0:
            raise ValueError("The join context manager requires at least one joinable")
        self._joinables = list(joinables)
        self._join_hooks = [j.join_hook(**kwargs) for j in self._joinables]
        self._enable = enable
        self._throw_on_early_termination = throw_on_early_termination
        first = True
        for j in self._joinables:
            j._join_config = _JoinConfig(enable=enable,
                                         throw_on_early_termination=throw_on_early_termination,
                                         is_first_joinable=first)
            first = False
        group = None
        device = None
        for j in self._joinables:
            if group is None:
                group = j.join_process_group
            elif group is not j.join_process_group:
                raise ValueError("Using join context manager with multiple process groups")
            if device is None:
                device = j.join_device
        from ember import distributed as dist

        self._process_group = group
        self._rank = dist.get_rank(group)
        self._device = device

    def __enter__(self):
        return self

    def __exit__(self, type, value, traceback):
        try:
            if not self._enable or type is not None:
                return  # an exception propagates as it is
            all_joined = False
            is_last_joiner = True
            i = 0
            while not all_joined:
                if i > 1000:
                    warnings.warn(
                        "Detected uneven input skew of greater than 1000. This means that "
                        f"rank {self._rank} has at least 1000 fewer inputs than other "
                        "currently-active ranks. This level of skew could lead to "
                        "performance degradation during training.", stacklevel=2)
                if self._num_nonjoined() == 0:
                    all_joined = True
                else:
                    if self._throw_on_early_termination:
                        self._notify_procs_to_terminate()
                    for hook in self._join_hooks:
                        hook.main_hook()
                    is_last_joiner = False
                    i += 1
            for hook in self._join_hooks:
                hook.post_hook(is_last_joiner)
        finally:
            for j in self._joinables:
                j._join_config = _JoinConfig.construct_disabled_join_config()

    def _num_nonjoined(self) -> float:
        from ember import distributed as dist
        from ember._ops.creation import zeros

        t = zeros(1, device=self._device)
        dist.all_reduce(t, group=self._process_group)
        return t.item()

    def _notify_procs_to_terminate(self):
        from ember import distributed as dist
        from ember._ops.creation import ones

        dist.all_reduce(ones(1, device=self._device), group=self._process_group)
        raise RuntimeError(f"Rank {self._rank} exhausted all inputs.")

    @staticmethod
    def notify_join_context(joinable: Joinable):
        """Tell the join context manager that this rank has not joined yet; call it from a
        joinable before its collectives of each iteration. Only the first joinable of the
        manager communicates.

        Returns:
            the Work of the notifying all_reduce (its tensor sums to the number of ranks
            still training) for the first joinable, else None.
        """
        if not hasattr(joinable, "_join_config"):
            raise AssertionError(f"Check that the {type(joinable)} constructor calls the "
                                 "``Joinable`` constructor")
        config = joinable._join_config
        if not config.is_first_joinable or not config.enable:
            return None
        from ember import distributed as dist
        from ember._ops.creation import ones, zeros

        device = joinable.join_device
        group = joinable.join_process_group
        work = dist.all_reduce(ones(1, device=device), group=group, async_op=True)
        if config.throw_on_early_termination:
            z = zeros(1, device=device)
            dist.all_reduce(z, group=group)
            if z.item():
                raise RuntimeError("Detected at least one rank that exhausted inputs. "
                                   "Throwing across all ranks.")
        return work
