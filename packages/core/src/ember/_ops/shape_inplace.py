"""In-place view changes: ``squeeze_``, ``unsqueeze_``, ``t_``, ``transpose_``,
``swapaxes_`` and ``swapdims_``.

NOTE [ In-place view changes ]
A tensor's shape and strides are those of its array (``_data``), which may be swapped for
another array over the same memory: the tensor object stays the same (``x.t_() is x``),
its storage is shared with everything it was shared with, and only its metadata changes.
The new array is the one the out-of-place view op makes (``x.t()``); under autograd the
tensor also takes that view's history (as PyTorch's in-place view ops record a
``TBackward``), and a view keeps being a view of its base, with the view op appended to
the function that re-creates it from the base. Views taken *of* the tensor before the
change keep their own arrays and stay correct; their replay functions, which start from
the tensor's old shape, are only used by autograd after an in-place op on them, and
PyTorch's rules there (views of a tensor whose metadata changed) are not reproduced.
"""

from __future__ import annotations

from ember._C._core import check_inplace, is_grad_enabled

__all__: list = []  # Tensor methods only


def _take_view(self, v):
    """Make ``self`` the view ``v`` of its own (old) self, keeping the tensor object."""
    if is_grad_enabled() and self.requires_grad:
        check_inplace(self)
    self._data = v._data
    if self._base is not None:
        # a view stays a view of its base, re-created by the composed view function
        self._view_fn = v._view_fn
        self._view_version = v._view_version
    if v._grad_fn is not None:
        self._grad_fn = v._grad_fn
        self._output_nr = v._output_nr
    self._bump_version()
    return self


def _squeeze_(self, dim=None):
    """In-place version of :meth:`Tensor.squeeze`."""
    return _take_view(self, self.squeeze() if dim is None else self.squeeze(dim))


def _unsqueeze_(self, dim):
    """In-place version of :meth:`Tensor.unsqueeze`."""
    return _take_view(self, self.unsqueeze(dim))


def _t_(self):
    """In-place version of :meth:`Tensor.t`."""
    if self._data.ndim > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is "
                           f"{self._data.ndim}D")
    return _take_view(self, self.t())


def _transpose_(self, dim0, dim1):
    """In-place version of :meth:`Tensor.transpose`."""
    return _take_view(self, self.transpose(dim0, dim1))


METHODS = {"squeeze_": _squeeze_, "unsqueeze_": _unsqueeze_, "t_": _t_,
           "transpose_": _transpose_, "swapaxes_": _transpose_, "swapdims_": _transpose_}
