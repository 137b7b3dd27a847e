"""``ember.onnx``: export of ember models to ONNX, as ``torch.onnx``.

:func:`export` traces the model with :mod:`ember.fx`, runs the traced graph on the
example inputs to learn every value's dtype and shape, writes each node as ONNX operators
through the ``onnx`` package (the optional extra ``ember[onnx]``), checks the model with
``onnx.checker`` and only then writes the file. docs/onnx.md lists what is mapped, how
dynamic axes work and what raises.
"""

from __future__ import annotations

import contextlib
import enum
import os

from ember.onnx import errors
from ember.onnx._export import export_model, in_export, write_model
from ember.onnx.errors import OnnxExporterError

__all__ = ["errors", "ops", "export", "is_in_onnx_export", "OnnxExporterError", "ONNXProgram",
           "ExportableModule", "InputObserver", "TrainingMode", "OperatorExportTypes",
           "select_model_mode_for_export", "register_custom_op_symbolic",
           "unregister_custom_op_symbolic"]


class TrainingMode(enum.Enum):
    """The mode a model is exported in (as ``torch.onnx.TrainingMode``)."""

    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


class OperatorExportTypes(enum.Enum):
    """How operators are exported (as ``torch.onnx.OperatorExportTypes``); ember writes
    standard ONNX operators only (``ONNX``)."""

    ONNX = 0
    ONNX_ATEN = 1
    ONNX_ATEN_FALLBACK = 2
    ONNX_FALLTHROUGH = 3


@contextlib.contextmanager
def select_model_mode_for_export(model, mode: TrainingMode):
    """A context manager that sets ``model``'s training mode to ``mode`` and restores it.

    Args:
        model: the module.
        mode: a :class:`TrainingMode` (PRESERVE leaves the mode as it is).
    """
    if not isinstance(mode, TrainingMode):
        raise TypeError(f"'mode' should be a torch.onnx.TrainingMode enum, but got "
                        f"'{type(mode)}'.")
    originally_training = getattr(model, "training", False)
    if hasattr(model, "train"):
        if mode == TrainingMode.TRAINING:
            model.train(True)
        elif mode == TrainingMode.EVAL:
            model.train(False)
    try:
        yield
    finally:
        if hasattr(model, "train") and mode != TrainingMode.PRESERVE:
            model.train(originally_training)


def register_custom_op_symbolic(symbolic_name: str, symbolic_fn, opset_version: int) -> None:
    """Export op ``symbolic_name`` (``"aten::name"`` or ``"name"``: an ember function or
    Tensor method of that name) with ``symbolic_fn(g, *args)``; ``g.op("Relu", x)`` adds an
    ONNX node (``"domain::Op"`` for a custom domain; attributes as ``alpha_f=...``)."""
    from ember.onnx._context import register_custom

    ns, sep, name = symbolic_name.rpartition("::")
    if not sep or not name:
        raise ValueError(f"Failed to register operator {symbolic_name}. The symbolic name "
                         f"must match the format domain::name")
    register_custom(name, symbolic_fn, opset_version)


def unregister_custom_op_symbolic(symbolic_name: str, opset_version: int) -> None:
    """Forget the symbolic function registered for ``symbolic_name``."""
    from ember.onnx._context import unregister_custom

    unregister_custom(symbolic_name.rpartition("::")[2])


def is_in_onnx_export() -> bool:
    """Whether an :func:`export` is running (True inside the model's trace and runs)."""
    return in_export()


class ONNXProgram:
    """An exported model: its ``model_proto``, :meth:`save`, and ``__call__`` running it in
    onnxruntime (as ``torch.onnx.ONNXProgram``).

    Args:
        model: the ``onnx.ModelProto``.
        exported_program: kept for PyTorch's signature (None).
    """

    def __init__(self, model, exported_program) -> None:
        self.model_proto = model
        self.exported_program = exported_program
        self._session = None

    @property
    def model(self):
        return self.model_proto

    def save(self, destination, *, include_initializers: bool = True,
             keep_initializers_as_inputs: bool = False, external_data=None) -> None:
        """Write the model to ``destination`` (a path or a binary file object)."""
        proto = self.model_proto
        if not include_initializers:
            import onnx

            proto = onnx.ModelProto()
            proto.CopyFrom(self.model_proto)
            del proto.graph.initializer[:]
        write_model(proto, destination)

    def initialize_inference_session(self, initializer=None) -> None:
        """Make the onnxruntime session ``__call__`` uses (``initializer(model_bytes)``
        makes it when given)."""
        if initializer is not None:
            self._session = initializer(self.model_proto.SerializeToString())
            return
        import onnxruntime

        self._session = onnxruntime.InferenceSession(self.model_proto.SerializeToString(),
                                                     providers=["CPUExecutionProvider"])

    def release(self) -> None:
        """Drop the inference session."""
        self._session = None

    def __call__(self, *args, **kwargs):
        """Run the model in onnxruntime on ember tensors; returns ember tensors."""
        import ember

        if self._session is None:
            self.initialize_inference_session()
        flat: list = []
        for a in list(args) + list(kwargs.values()):
            if isinstance(a, tuple | list):
                flat.extend(a)
            elif a is not None:
                flat.append(a)
        names = [i.name for i in self._session.get_inputs()]
        feeds = {n: (a.detach().cpu().numpy() if isinstance(a, ember.Tensor) else a)
                 for n, a in zip(names, flat)}
        return [ember.tensor(o) for o in self._session.run(None, feeds)]

    def __repr__(self) -> str:
        import onnx

        return f"ONNXProgram(\n{onnx.helper.printable_graph(self.model_proto.graph)}\n)"


def export(model, args=(), f=None, *, kwargs=None, verbose=None, input_names=None,
           output_names=None, opset_version=None, dynamo=True, external_data=True,
           dynamic_shapes=None, custom_translation_table=None, report=False, optimize=True,
           verify=False, profile=False, dump_exported_program=False, artifacts_dir=".",
           export_params=True, keep_initializers_as_inputs=False, dynamic_axes=None,
           training=TrainingMode.EVAL, operator_export_type=OperatorExportTypes.ONNX,
           do_constant_folding=True, custom_opsets=None, export_modules_as_functions=False,
           autograd_inlining=True):
    r"""Export ``model`` to ONNX (as ``torch.onnx.export``).

    The model is traced with :mod:`ember.fx` (its standard layers stay whole and map to
    ONNX operators; other modules are traced through), run on ``args`` to learn the
    shapes, and written as ONNX; the result passes ``onnx.checker`` before anything is
    written. Needs the ``onnx`` package (``pip install 'ember[onnx]'``).

    Args:
        model: the ``ember.nn.Module`` (or an :class:`ExportableModule`).
        args: example positional arguments (a tensor or a tuple; a trailing dict holds
            keyword arguments). Tensors (also in tuples and lists) become graph inputs;
            other values are fixed in the graph.
        f: a path or binary file object to write the model to, or None.
        kwargs: example keyword arguments.
        verbose: print the graph.
        input_names, output_names: names of the graph inputs and outputs, in order
            (default: forward's parameter names, and ``output`` / ``output_<i>``).
        opset_version: the ONNX opset (default 18; 14 up to the installed onnx's newest).
        dynamo: accepted for PyTorch's signature: the result is the same; with False,
            ``f`` is required and None is returned (as torch's TorchScript exporter).
        dynamic_shapes: per forward argument, ``{axis: name}`` (torch.export's form).
        export_params: store the parameters in the file (else they are graph inputs).
        keep_initializers_as_inputs: also list the initializers as graph inputs.
        dynamic_axes: ``{input/output name: {axis: dim name}}`` or ``{name: [axes]}``: the
            axes whose size is left free (NOTE [ Which sizes are dynamic ]).
        training: :class:`TrainingMode`: the mode the model is exported in (EVAL).
        do_constant_folding: compute the parts of the graph that depend on parameters
            and constants only once, at export.
        custom_translation_table, report, optimize, verify, profile,
        dump_exported_program, artifacts_dir, external_data, operator_export_type,
        custom_opsets, export_modules_as_functions, autograd_inlining: accepted for
            PyTorch's signature; ``verify=True`` runs the model in onnxruntime on ``args``
            and compares with ember's outputs.

    Returns:
        an :class:`ONNXProgram` (None with ``dynamo=False``).

    Raises:
        errors.UnsupportedOperatorError: an op or module has no ONNX mapping (the message
            names it and the module path); no file is written.

    Examples::

        >>> model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
        >>> ember.onnx.export(model, (ember.randn(3, 4),), "mlp.onnx",
        ...                   input_names=["x"], dynamic_axes={"x": {0: "batch"}})
    """
    if isinstance(model, ExportableModule) and args == ():
        args, example_kwargs = model.example_arguments()
        kwargs = kwargs if kwargs is not None else example_kwargs
        input_names = input_names or model.input_names()
        output_names = output_names or model.output_names()
        dynamic_shapes = dynamic_shapes if dynamic_shapes is not None else \
            model.dynamic_shapes()
    if not dynamo and f is None:
        raise ValueError("ember.onnx.export: f is required when dynamo=False")
    if operator_export_type not in (OperatorExportTypes.ONNX, 0):
        raise OnnxExporterError("ember.onnx.export writes standard ONNX operators only "
                                "(operator_export_type=OperatorExportTypes.ONNX)")
    proto = export_model(model, args, kwargs=kwargs, export_params=export_params,
                         verbose=bool(verbose), input_names=input_names,
                         output_names=output_names, opset_version=opset_version,
                         dynamic_axes=dynamic_axes, dynamic_shapes=dynamic_shapes,
                         keep_initializers_as_inputs=keep_initializers_as_inputs,
                         do_constant_folding=do_constant_folding, training=training)
    program = ONNXProgram(proto, None)
    if verify:
        _verify(program, model, args, kwargs)
    if f is not None:
        if isinstance(f, str | os.PathLike) and not os.path.isdir(
                os.path.dirname(os.path.abspath(os.fspath(f)))):
            raise FileNotFoundError(f"ember.onnx.export: the folder of {os.fspath(f)!r} "
                                    f"does not exist")
        write_model(proto, f)
    return program if dynamo else None


def _verify(program, model, args, kwargs) -> None:
    import numpy as np

    import ember

    args = args if isinstance(args, tuple) else (args,)
    with ember.no_grad():
        expected = model(*args, **(kwargs or {}))
    flat: list = []
    _export_flatten(expected, flat)
    got = program(*args, **(kwargs or {}))
    for e, g in zip(flat, got):
        np.testing.assert_allclose(g.numpy(), e.detach().cpu().numpy(), rtol=1e-4, atol=1e-5)


def _export_flatten(value, out):
    import ember

    if isinstance(value, ember.Tensor):
        out.append(value)
    elif isinstance(value, tuple | list):
        for v in value:
            _export_flatten(v, out)


def _exportable_module_base():
    from ember.nn import Module

    return Module


class ExportableModule(_exportable_module_base()):
    """A module that knows its own example arguments, dynamic shapes and input/output
    names (as ``torch.onnx.ExportableModule``): ``export(module)`` or
    ``module.to_onnx()`` uses them."""

    def example_arguments(self):
        """``(args, kwargs)`` to trace ``forward`` with; subclasses must override it."""
        raise OnnxExporterError(f"{type(self).__name__} must define example_arguments()")

    def dynamic_shapes(self):
        """Per argument ``{axis: name}`` for the dynamic axes, or None (all fixed)."""
        return None

    def input_names(self):
        """Names of the graph inputs, or None."""
        return None

    def output_names(self):
        """Names of the graph outputs, or None."""
        return None

    def to_onnx(self, **kwargs) -> ONNXProgram:
        """``export(self, **kwargs)``."""
        return export(self, **kwargs)


class InputObserver:
    """Records the inputs a model is called with, to infer export arguments and dynamic
    shapes (as ``torch.onnx.InputObserver``).

    Examples::

        >>> observer = InputObserver()
        >>> with observer(model):
        ...     model(x1)
        ...     model(x2)
        >>> ember.onnx.export(model, observer.infer_arguments(),
        ...                   dynamic_shapes=observer.infer_dynamic_shapes())
    """

    def __init__(self, value_if_missing=None) -> None:
        self.value_if_missing = dict(value_if_missing or {})
        self.inputs: list = []
        self.outputs: list = []

    @contextlib.contextmanager
    def __call__(self, model):
        original = model.forward

        def forward(*args, **kwargs):
            self.inputs.append((args, kwargs))
            out = original(*args, **kwargs)
            self.outputs.append(out)
            return out

        model.forward = forward
        try:
            yield self
        finally:
            del model.forward

    def infer_arguments(self, index_or_args_or_kwargs=None, flat: bool = False,
                        as_args_kwargs: bool = False):
        """The arguments of a recorded call (the first by default, or the
        ``index_or_args_or_kwargs``-th): the positional ones as a tuple, a flat list of
        them and the keyword values with ``flat``, or ``(args, kwargs)`` with
        ``as_args_kwargs``."""
        if not self.inputs:
            raise RuntimeError("InputObserver: no call was recorded")
        index = 0 if index_or_args_or_kwargs is None else index_or_args_or_kwargs
        args, kwargs = self.inputs[index]
        if as_args_kwargs:
            return tuple(args), dict(kwargs)
        if flat:
            return list(args) + list(kwargs.values())
        return tuple(args)

    def infer_dynamic_shapes(self, set_batch_dimension_for=None):
        """Per positional tensor argument ``{axis: name}`` for the axes whose size differed
        between the recorded calls; axis 0 also for the argument indices in
        ``set_batch_dimension_for`` (or all of them with True)."""
        import ember

        if not self.inputs:
            raise RuntimeError("InputObserver: no call was recorded")
        first = self.inputs[0][0]
        shapes = []
        for i, a in enumerate(first):
            if not isinstance(a, ember.Tensor):
                shapes.append(None)
                continue
            dyn = {}
            if set_batch_dimension_for is True or (
                    set_batch_dimension_for and i in set_batch_dimension_for):
                dyn[0] = "batch"
            for args, _ in self.inputs[1:]:
                other = args[i]
                for ax, (x, y) in enumerate(zip(a.shape, other.shape)):
                    if x != y:
                        dyn[ax] = f"arg{i}_dim{ax}"
            shapes.append(dyn or None)
        return tuple(shapes)


class _Ops:
    """``torch.onnx.ops``: symbolic ops for custom exporters; ember exports standard ONNX
    only, so the namespace is empty but importable."""

    __all__: list = []


ops = _Ops()
