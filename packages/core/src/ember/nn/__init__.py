"""``ember.nn``: modules, layers, losses, the functional API and initialization."""

from ember.nn import attention, functional, grad, init, utils
from ember.nn.modules import *  # noqa: F403
from ember.nn.modules import __all__ as _modules_all
from ember.nn.parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter

__all__ = ["Buffer", "Parameter", "UninitializedBuffer", "UninitializedParameter", "attention",
           "functional", "grad", "init", "utils", *_modules_all]
