"""Sigmoid focal loss (Lin et al., RetinaNet)."""

from __future__ import annotations

import ember
import ember.nn.functional as F

__all__ = ["sigmoid_focal_loss"]


def sigmoid_focal_loss(inputs: ember.Tensor, targets: ember.Tensor, alpha: float = 0.25,
                       gamma: float = 2, reduction: str = "none") -> ember.Tensor:
    """Binary cross-entropy down-weighted on easy examples by ``(1 - p_t) ** gamma``.

    Args:
        inputs (Tensor): logits of any shape.
        targets (Tensor): 0/1 labels of the same shape.
        alpha (float): weight of the positives in ``(0, 1)``, or negative for none.
            Default: 0.25.
        gamma (float): focusing exponent. Default: 2.
        reduction (str): ``"none"``, ``"mean"`` or ``"sum"``. Default: ``"none"``.
    """
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(
            f"Invalid Value for arg 'reduction': '{reduction} \n Supported reduction modes: "
            "'none', 'mean', 'sum'"
        )
    p = ember.sigmoid(inputs)
    ce = F.binary_cross_entropy_with_logits(inputs, targets, reduction="none")
    p_t = p * targets + (1 - p) * (1 - targets)
    loss = ce * ((1 - p_t) ** gamma)
    if alpha >= 0:
        loss = (alpha * targets + (1 - alpha) * (1 - targets)) * loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss
