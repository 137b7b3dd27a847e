"""The errors of ``ember.onnx`` (as ``torch.onnx.errors``)."""

from __future__ import annotations

__all__ = ["OnnxExporterError", "OnnxExporterWarning", "CheckerError",
           "UnsupportedOperatorError", "SymbolicValueError"]


class OnnxExporterWarning(UserWarning):
    """A warning of the ONNX exporter."""


class OnnxExporterError(RuntimeError):
    """An error of the ONNX exporter."""


class CheckerError(OnnxExporterError):
    """The exported model did not pass ``onnx.checker`` (no file is written then)."""


class UnsupportedOperatorError(OnnxExporterError):
    """An operator, function or module of the model has no ONNX mapping.

    Args:
        name: the op (``"ember.linalg.svd"``, ``"Tensor.unfold"``, a module class).
        version: the opset version asked for.
        supported_version: an opset version that has the op, or None.
        module_path: the dotted path of the module whose forward used it (optional).
    """

    def __init__(self, name: str, version: int | None = None,
                 supported_version: int | None = None, module_path: str | None = None):
        where = f" (in module '{module_path}')" if module_path else " (in the root module)"
        if supported_version is not None:
            msg = (f"ember.onnx.export: exporting '{name}' needs opset version "
                   f"{supported_version} or newer, not {version}{where}")
        else:
            msg = f"ember.onnx.export: no ONNX mapping for '{name}'{where}"
        super().__init__(msg)
        self.name = name
        self.module_path = module_path


class SymbolicValueError(OnnxExporterError):
    """A value the exporter needed to know while writing the graph could not be used
    (a data-dependent size, an argument of the wrong kind)."""
