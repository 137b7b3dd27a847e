"""``ember.onnx``: ONNX export, as ``torch.onnx``.

Not available yet: exporting needs the graph capture that the graph-capture issue (23)
builds. Until then :func:`export` raises :class:`OnnxExporterError` saying so, never
silently does nothing; :func:`is_in_onnx_export` is False.
"""

from __future__ import annotations

__all__ = ["export", "is_in_onnx_export", "OnnxExporterError", "ONNXProgram", "errors"]

_NOT_YET = ("ember.onnx.export is not available yet: ONNX export needs ember's graph capture "
            "(issue 23). Export the model from PyTorch, or save its state_dict with ember.save "
            "and load it into the PyTorch model")


class OnnxExporterError(RuntimeError):
    """An error of the ONNX exporter."""


class errors:  # noqa: N801 - PyTorch's module of exporter errors, as a namespace
    OnnxExporterError = OnnxExporterError


class ONNXProgram:
    """An exported ONNX program (see the module's note: export is not available yet)."""

    def __init__(self, *args, **kwargs):
        raise OnnxExporterError(_NOT_YET)


def export(model, args=(), f=None, *, kwargs=None, verbose=None, input_names=None,
           output_names=None, opset_version=None, dynamo=True, external_data=True,
           dynamic_shapes=None, **options):
    """Export ``model`` to ONNX (not available yet: raises :class:`OnnxExporterError`)."""
    raise OnnxExporterError(_NOT_YET)


def is_in_onnx_export() -> bool:
    """False: ember is never inside an ONNX export."""
    return False
