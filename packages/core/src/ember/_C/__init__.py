"""ember's compiled core: the Tensor type, the autograd engine, CPU kernels."""

from ember._C import _core, _kernels

__all__ = ["_core", "_kernels"]
