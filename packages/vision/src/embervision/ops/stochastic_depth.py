"""Stochastic depth (Huang et al., 2016): randomly drop residual branches while training."""

from __future__ import annotations

import ember
from ember import nn

__all__ = ["StochasticDepth", "stochastic_depth"]


def stochastic_depth(input: ember.Tensor, p: float, mode: str, training: bool = True):
    """Zeroes the whole input (``mode="batch"``) or each sample of it (``mode="row"``) with
    probability ``p``, scaling what survives by ``1 / (1 - p)``.

    Args:
        input (Tensor[N, ...]): the residual branch.
        p (float): the drop probability.
        mode (str): ``"batch"`` or ``"row"``.
        training (bool): only applied when True. Default: True.
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"drop probability has to be between 0 and 1, but got {p}")
    if mode not in ("batch", "row"):
        raise ValueError(f"mode has to be either 'batch' or 'row', but got {mode}")
    if not training or p == 0.0:
        return input
    survival = 1.0 - p
    size = [input.shape[0]] + [1] * (input.dim() - 1) if mode == "row" else [1] * input.dim()
    noise = (ember.rand(*size, dtype=input.dtype, device=input.device) < survival).to(input.dtype)
    if survival > 0.0:
        noise = noise / survival
    return input * noise


class StochasticDepth(nn.Module):
    """Module form of :func:`stochastic_depth`; active in training mode only."""

    def __init__(self, p: float, mode: str):
        super().__init__()
        self.p = p
        self.mode = mode

    def forward(self, input):
        return stochastic_depth(input, self.p, self.mode, self.training)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(p={self.p}, mode={self.mode})"
