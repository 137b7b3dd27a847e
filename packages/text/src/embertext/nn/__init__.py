"""Attention building blocks (``torchtext.nn``)."""

from embertext.nn import modules
from embertext.nn.modules.multiheadattention import (
    InProjContainer,
    MultiheadAttentionContainer,
    ScaledDotProduct,
    generate_square_subsequent_mask,
)

__all__ = ["InProjContainer", "MultiheadAttentionContainer", "ScaledDotProduct",
           "generate_square_subsequent_mask", "modules"]
