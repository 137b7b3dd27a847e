"""The modules of ``torchtext.nn``, at torchtext's path (``torchtext.nn.modules``)."""

from embertext.nn.modules.multiheadattention import (
    InProjContainer,
    MultiheadAttentionContainer,
    ScaledDotProduct,
    generate_square_subsequent_mask,
)

__all__ = ["InProjContainer", "MultiheadAttentionContainer", "ScaledDotProduct",
           "generate_square_subsequent_mask"]
