"""Helpers of the v2 transforms: flattening nested inputs, finding images and boxes in them,
and parsing arguments."""

from __future__ import annotations

import collections
import numbers
from collections.abc import Sequence

import PIL.Image

import ember
from embervision import tv_tensors
from embervision.transforms.v2.functional import get_dimensions, get_size, is_pure_tensor

__all__ = [
    "check_type",
    "get_bounding_boxes",
    "get_keypoints",
    "has_all",
    "has_any",
    "query_chw",
    "query_size",
]


# -- nested inputs --------------------------------------------------------------------------
# A small pytree: tuples, lists, dicts (and namedtuples, OrderedDicts) are nodes, everything
# else is a leaf, in depth-first order as torch.utils._pytree flattens them.

def _is_namedtuple(obj) -> bool:
    return isinstance(obj, tuple) and hasattr(type(obj), "_fields")


def tree_flatten(tree):
    """``(leaves, spec)`` of a nested structure of tuples, lists and dicts."""
    leaves = []

    def visit(node):
        if isinstance(node, (list, tuple)) and type(node) in (list, tuple) or _is_namedtuple(node):
            return (type(node), [visit(child) for child in node])
        if isinstance(node, dict):
            keys = list(node.keys())
            return (type(node), keys, [visit(node[k]) for k in keys],
                    getattr(node, "default_factory", None))
        leaves.append(node)
        return None

    return leaves, visit(tree)


def tree_unflatten(leaves, spec):
    """Rebuilds the structure of ``spec`` (from :func:`tree_flatten`) with ``leaves``."""
    it = iter(leaves)

    def build(node):
        if node is None:
            return next(it)
        kind = node[0]
        if issubclass(kind, dict):
            _, keys, children, factory = node
            values = [build(c) for c in children]
            if kind is collections.defaultdict:
                out = collections.defaultdict(factory)
                out.update(zip(keys, values))
                return out
            return kind(zip(keys, values))
        children = [build(c) for c in node[1]]
        if _is_namedtuple_type(kind):
            return kind(*children)
        return kind(children)

    return build(spec)


def _is_namedtuple_type(kind) -> bool:
    return issubclass(kind, tuple) and hasattr(kind, "_fields")


# -- queries --------------------------------------------------------------------------------

def check_type(obj, types_or_checks) -> bool:
    """Whether ``obj`` is of one of the types, or passes one of the callables."""
    for type_or_check in types_or_checks:
        if isinstance(type_or_check, type):
            if isinstance(obj, type_or_check):
                return True
        elif type_or_check(obj):
            return True
    return False


def has_any(flat_inputs, *types_or_checks) -> bool:
    """Whether any input is of one of the types (or passes one of the checks)."""
    return any(check_type(inpt, types_or_checks) for inpt in flat_inputs)


def has_all(flat_inputs, *types_or_checks) -> bool:
    """Whether every type (or check) matches at least one input."""
    return all(any(check_type(inpt, (t,)) for inpt in flat_inputs) for t in types_or_checks)


def _is_image_like(inpt) -> bool:
    return check_type(inpt, (is_pure_tensor, tv_tensors.Image, PIL.Image.Image, tv_tensors.Video))


def query_chw(flat_inputs) -> tuple:
    """``(C, H, W)`` of the images and videos among the inputs (they must agree)."""
    chws = {tuple(get_dimensions(inpt)) for inpt in flat_inputs if _is_image_like(inpt)}
    if not chws:
        raise TypeError("No image or video was found in the sample")
    if len(chws) > 1:
        raise ValueError(f"Found multiple CxHxW dimensions in the sample: {sorted(chws)}")
    return chws.pop()


def query_size(flat_inputs) -> tuple:
    """``(H, W)`` of the images, videos, masks, boxes and points among the inputs (they must
    agree)."""
    sizes = {
        tuple(get_size(inpt)) for inpt in flat_inputs
        if _is_image_like(inpt) or isinstance(inpt, (tv_tensors.Mask, tv_tensors.BoundingBoxes,
                                                     tv_tensors.KeyPoints))
    }
    if not sizes:
        raise TypeError("No image, video, mask, bounding box of keypoint was found in the sample")
    if len(sizes) > 1:
        raise ValueError(f"Found multiple HxW dimensions in the sample: {sorted(sizes)}")
    return sizes.pop()


def get_bounding_boxes(flat_inputs) -> tv_tensors.BoundingBoxes:
    """The (first) BoundingBoxes among the inputs."""
    for inpt in flat_inputs:
        if isinstance(inpt, tv_tensors.BoundingBoxes):
            return inpt
    raise ValueError("No bounding boxes were found in the sample")


def get_keypoints(flat_inputs) -> tv_tensors.KeyPoints:
    """The (first) KeyPoints among the inputs."""
    for inpt in flat_inputs:
        if isinstance(inpt, tv_tensors.KeyPoints):
            return inpt
    raise ValueError("No keypoints were found in the sample")


# -- argument parsing -----------------------------------------------------------------------

def _setup_number_or_seq(arg, name):
    if not isinstance(arg, (int, float, Sequence)):
        raise TypeError(f"{name} should be a number or a sequence of numbers. Got {type(arg)}")
    if isinstance(arg, Sequence) and len(arg) not in (1, 2):
        raise ValueError(f"If {name} is a sequence its length should be 1 or 2. Got {len(arg)}")
    if isinstance(arg, Sequence):
        for element in arg:
            if not isinstance(element, (int, float)):
                raise ValueError(f"{name} should be a sequence of numbers")
    if isinstance(arg, (int, float)):
        return [float(arg), float(arg)]
    if len(arg) == 1:
        return [float(arg[0]), float(arg[0])]
    return [float(arg[0]), float(arg[1])]


def _setup_size(size, error_msg):
    if isinstance(size, numbers.Number):
        return int(size), int(size)
    if isinstance(size, Sequence) and len(size) == 1:
        return int(size[0]), int(size[0])
    if not isinstance(size, Sequence) or len(size) != 2:
        raise ValueError(error_msg)
    return int(size[0]), int(size[1])


def _check_sequence_input(x, name, req_sizes):
    msg = req_sizes[0] if len(req_sizes) < 2 else " or ".join(str(s) for s in req_sizes)
    if not isinstance(x, Sequence):
        raise TypeError(f"{name} should be a sequence of length {msg}.")
    if len(x) not in req_sizes:
        raise ValueError(f"{name} should be a sequence of length {msg}.")


def _setup_angle(x, name, req_sizes=(2,)):
    if isinstance(x, numbers.Number):
        if x < 0:
            raise ValueError(f"If {name} is a single number, it must be positive.")
        x = [-x, x]
    else:
        _check_sequence_input(x, name, req_sizes)
    return [float(d) for d in x]


def _check_fill_arg(fill):
    if isinstance(fill, dict):
        for value in fill.values():
            _check_fill_arg(value)
    elif fill is not None and not isinstance(fill, (numbers.Number, tuple, list)):
        raise TypeError("Got inappropriate fill arg, only Numbers, tuples, lists and dicts are "
                        "allowed.")


def _convert_fill_arg(fill):
    if fill is None or isinstance(fill, numbers.Number):
        return fill
    return [float(v) for v in fill]


def _setup_fill_arg(fill):
    _check_fill_arg(fill)
    if isinstance(fill, dict):
        return {k: _convert_fill_arg(v) for k, v in fill.items()}
    return collections.defaultdict(lambda: _convert_fill_arg(fill))


def _get_fill(fill_args, inpt_type):
    if inpt_type in fill_args:
        return fill_args[inpt_type]
    for cls in inpt_type.__mro__:
        if cls in fill_args:
            return fill_args[cls]
    if isinstance(fill_args, collections.defaultdict):
        return fill_args[inpt_type]
    if "others" in fill_args:
        return fill_args["others"]
    raise ValueError(f"Could not infer the fill value for {inpt_type}.")


def _find_labels_default_heuristic(inputs):
    # The second item of a tuple/list when it is a tensor (batched classification: MixUp,
    # CutMix); else the "labels" key (any case), or a key containing "label", of a dict input
    # or of the dict second item (detection).
    if isinstance(inputs, (tuple, list)):
        inputs = inputs[1] if len(inputs) > 1 else None
    if is_pure_tensor(inputs):
        return inputs
    if not isinstance(inputs, dict):
        raise ValueError("When using the default labels_getter, the input passed to forward "
                         "must be a dictionary or a two-tuple whose second item is a dictionary "
                         f"or a tensor, but got {inputs} instead.")
    keys = [k for k in inputs if isinstance(k, str)]
    candidate = next((k for k in keys if k.lower() == "labels"), None)
    if candidate is None:
        candidate = next((k for k in keys if "label" in k.lower()), None)
    if candidate is None:
        raise ValueError("Could not infer where the labels are in the sample. Try passing a "
                         "callable as the labels_getter parameter?If there are no labels in the "
                         "sample by design, pass labels_getter=None.")
    return inputs[candidate]


def _parse_labels_getter(labels_getter):
    if labels_getter == "default":
        return _find_labels_default_heuristic
    if callable(labels_getter):
        return labels_getter
    if labels_getter is None:
        return lambda _: None
    raise ValueError(f"labels_getter should either be 'default', a callable, or None, but got "
                     f"{labels_getter}.")


def _uniform(lo: float, hi: float) -> float:
    return float(ember.empty(1).uniform_(lo, hi).item())


def _randint(lo: int, hi: int) -> int:
    return int(ember.randint(lo, hi, (1,)).item())


def _rand() -> float:
    return float(ember.rand(1).item())
