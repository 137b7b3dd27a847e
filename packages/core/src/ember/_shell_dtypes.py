"""PyTorch's shell dtypes: the sub-byte integers ``int1`` ... ``int7``, ``uint1`` ...
``uint7`` (``bit`` is ``uint1``), the opaque ``bits8``, ``bits16``, ``bits1x8``, ``bits2x4``,
``bits4x2`` and the packed ``float4_e2m1fn_x2``.

NOTE [ Shell dtypes ]
In PyTorch these types name the elements of tensor subclasses of quantization libraries:
a plain tensor of one can be made (``empty``, ``zeros``) and viewed as or from ``uint8``,
and nothing else (no arithmetic, no printing, no conversion). ember backs each with a
one-field NumPy structured type of one (two for ``bits16``) byte, distinct from every other
NumPy type, so a tensor keeps its shell dtype and supports the same few things.
"""

from __future__ import annotations

import numpy as np

from ember import _dtype

_SPECS = ([(f"int{i}", "i1", "i") for i in range(1, 8)]
          + [(f"uint{i}", "u1", "u") for i in range(1, 8)]
          + [("bits8", "u1", "u"), ("bits16", "u2", "u"), ("bits1x8", "u1", "u"),
             ("bits2x4", "u1", "u"), ("bits4x2", "u1", "u"), ("float4_e2m1fn_x2", "u1", "f")])

__all__ = [name for name, _, _ in _SPECS] + ["bit"]

SHELL_DTYPES = {}
for _name, _base, _kind in _SPECS:
    _d = _dtype.dtype(_name, np.dtype([(_name, _base)]), kind=_kind)
    SHELL_DTYPES[_name] = _d
    _dtype._BY_NAME[_name] = _d
    _dtype._BY_NUMPY[_d.numpy] = _d
    globals()[_name] = _d
bit = SHELL_DTYPES["uint1"]
