"""The recurrent layers: ``RNN``, ``LSTM``, ``GRU`` and their cells.

Parameter names, shapes, defaults, default initialization (``U(-1/sqrt(hidden_size),
1/sqrt(hidden_size))`` for every parameter), ``extra_repr`` and ``state_dict`` keys are
PyTorch's. The compute is in :mod:`ember.nn._functional._rnn` (one graph node per layer
and direction).
"""

from __future__ import annotations

import math
import numbers
import warnings
import weakref

import ember
from ember.nn._functional import _rnn
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter
from ember.nn.utils.rnn import PackedSequence

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


def _apply_permutation(tensor, permutation, dim=1):
    return tensor.index_select(dim, permutation)


def _uniform_(tensor, a, b):
    from ember.nn import init

    return init.uniform_(tensor, a, b)


def _dtype_error(a, b):
    from ember._ops._util import type_name

    return RuntimeError(f"mat1 and mat2 must have the same dtype, but got "
                        f"{type_name(a._data.dtype)} and {type_name(b._data.dtype)}")


def _batch_sizes_tuple(batch_sizes):
    return tuple(int(b) for b in batch_sizes.tolist())


class RNNBase(Module):
    """Base class of :class:`RNN`, :class:`LSTM` and :class:`GRU`: the parameters
    (``weight_ih_l{k}{_reverse}``, ``weight_hh_l{k}{_reverse}``, ``bias_ih_l{k}{_reverse}``,
    ``bias_hh_l{k}{_reverse}``, ``weight_hr_l{k}{_reverse}``) and their checks."""

    __constants__ = ["mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first",
                     "dropout", "bidirectional", "proj_size"]

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device=None,
                 dtype=None) -> None:
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        self._flat_weight_refs = []
        num_directions = 2 if bidirectional else 1

        if (not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1
                or isinstance(dropout, bool)):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=2)
        if not isinstance(bias, bool):
            raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, bool):
            raise TypeError(
                f"batch_first should be of type bool, got: {type(batch_first).__name__}")
        if not isinstance(input_size, int):
            raise TypeError(f"input_size should be of type int, got: {type(input_size).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise TypeError(
                f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError(
                "proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")

        if mode == "LSTM":
            gate_size = 4 * hidden_size
        elif mode == "GRU":
            gate_size = 3 * hidden_size
        elif mode in ("RNN_TANH", "RNN_RELU"):
            gate_size = hidden_size
        else:
            raise ValueError("Unrecognized RNN mode: " + mode)

        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                real_hidden_size = proj_size if proj_size > 0 else hidden_size
                layer_input_size = (input_size if layer == 0
                                    else real_hidden_size * num_directions)
                w_ih = Parameter(ember.empty((gate_size, layer_input_size), **factory_kwargs))
                w_hh = Parameter(ember.empty((gate_size, real_hidden_size), **factory_kwargs))
                b_ih = Parameter(ember.empty(gate_size, **factory_kwargs))
                b_hh = Parameter(ember.empty(gate_size, **factory_kwargs))
                if self.proj_size == 0:
                    layer_params = (w_ih, w_hh, b_ih, b_hh) if bias else (w_ih, w_hh)
                else:
                    w_hr = Parameter(ember.empty((proj_size, hidden_size), **factory_kwargs))
                    layer_params = ((w_ih, w_hh, b_ih, b_hh, w_hr) if bias
                                    else (w_ih, w_hh, w_hr))
                suffix = "_reverse" if direction == 1 else ""
                param_names = ["weight_ih_l{}{}", "weight_hh_l{}{}"]
                if bias:
                    param_names += ["bias_ih_l{}{}", "bias_hh_l{}{}"]
                if self.proj_size > 0:
                    param_names += ["weight_hr_l{}{}"]
                param_names = [x.format(layer, suffix) for x in param_names]
                for name, param in zip(param_names, layer_params, strict=True):
                    setattr(self, name, param)
                self._flat_weights_names.extend(param_names)
                self._all_weights.append(param_names)

        self._init_flat_weights()
        self.reset_parameters()

    def _init_flat_weights(self) -> None:
        self._flat_weights = [getattr(self, wn) if hasattr(self, wn) else None
                              for wn in self._flat_weights_names]
        self._flat_weight_refs = [weakref.ref(w) if w is not None else None
                                  for w in self._flat_weights]
        self.flatten_parameters()

    def __setattr__(self, attr, value) -> None:
        if "_flat_weights_names" in self.__dict__ and attr in self._flat_weights_names:
            # keep self._flat_weights up to date if you do self.weight = ...
            idx = self._flat_weights_names.index(attr)
            self._flat_weights[idx] = value
        super().__setattr__(attr, value)

    def flatten_parameters(self) -> None:
        """A no-op kept for PyTorch compatibility (cuDNN's weight layout)."""

    def _apply(self, fn, *args, **kwargs):
        self._flat_weight_refs = []
        ret = super()._apply(fn, *args, **kwargs)
        self._init_flat_weights()
        return ret

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            _uniform_(weight, -stdv, stdv)

    def check_input(self, input, batch_sizes) -> None:
        w0 = self._flat_weights[0]
        if input.dtype != w0.dtype:
            raise ValueError(
                f"RNN input dtype ({input.dtype}) does not match weight dtype ({w0.dtype}). "
                f"Convert input: input.to({w0.dtype}), or convert model: "
                f"model.to({input.dtype})")
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(
                f"input must have {expected_input_dim} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.size(-1)}")

    def get_expected_hidden_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        if self.proj_size > 0:
            return (self.num_layers * num_directions, mini_batch, self.proj_size)
        return (self.num_layers * num_directions, mini_batch, self.hidden_size)

    def check_hidden_size(self, hx, expected_hidden_size,
                          msg: str = "Expected hidden size {}, got {}") -> None:
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def _weights_have_changed(self):
        for ref, name in zip(self._flat_weight_refs, self._flat_weights_names, strict=False):
            weight = getattr(self, name) if hasattr(self, name) else None
            if weight is not None and ref is not None and ref() is not weight:
                return True
        return False

    def check_forward_args(self, input, hidden, batch_sizes) -> None:
        self.check_input(input, batch_sizes)
        expected_hidden_size = self.get_expected_hidden_size(input, batch_sizes)
        self.check_hidden_size(hidden, expected_hidden_size)

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return _apply_permutation(hx, permutation)

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    def _update_flat_weights(self) -> None:
        if self._weights_have_changed():
            self._init_flat_weights()

    def __getstate__(self):
        self._update_flat_weights()
        state = super().__getstate__()
        state.pop("_flat_weight_refs", None)
        return state

    def __setstate__(self, d):
        super().__setstate__(d)
        if "proj_size" not in d:
            self.proj_size = 0
        self._flat_weights = [getattr(self, wn) if hasattr(self, wn) else None
                              for wn in self._flat_weights_names]
        self._flat_weight_refs = [weakref.ref(w) if w is not None else None
                                  for w in self._flat_weights]

    @property
    def all_weights(self):
        return [[getattr(self, weight) for weight in weights] for weights in self._all_weights]

    # -- the shared forward -------------------------------------------------------------------

    def _forward_impl(self, input, hx):
        lstm = self.mode == "LSTM"
        name = {"LSTM": "LSTM", "GRU": "GRU"}.get(self.mode, "RNN")
        self._update_flat_weights()
        orig_input = input
        batch_sizes = None
        is_batched = True
        batch_dim = 0 if self.batch_first else 1
        if isinstance(orig_input, PackedSequence):
            input, batch_sizes, sorted_indices, unsorted_indices = input
            if hx is not None:
                hx = (self.permute_hidden(hx[0], sorted_indices),
                      self.permute_hidden(hx[1], sorted_indices)) if lstm else \
                    self.permute_hidden(hx, sorted_indices)
        else:
            if input.dim() not in (2, 3):
                extra = " tensor" if name == "RNN" else ""
                raise ValueError(f"{name}: Expected input to be 2D or 3D, got "
                                 f"{input.dim()}D{extra} instead")
            is_batched = input.dim() == 3
            if not is_batched:
                input = input.unsqueeze(batch_dim)
            sorted_indices = unsorted_indices = None
            if hx is not None:
                if lstm:
                    if is_batched:
                        if hx[0].dim() != 3 or hx[1].dim() != 3:
                            raise RuntimeError(
                                "For batched 3-D input, hx and cx should also be 3-D but got "
                                f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
                    else:
                        if hx[0].dim() != 2 or hx[1].dim() != 2:
                            raise RuntimeError(
                                "For unbatched 2-D input, hx and cx should also be 2-D but "
                                f"got ({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
                        hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
                else:
                    if is_batched:
                        if hx.dim() != 3:
                            raise RuntimeError("For batched 3-D input, hx should also be 3-D "
                                               f"but got {hx.dim()}-D tensor")
                    else:
                        if hx.dim() != 2:
                            raise RuntimeError("For unbatched 2-D input, hx should also be "
                                               f"2-D but got {hx.dim()}-D tensor")
                        hx = hx.unsqueeze(1)

        bs_tuple = _batch_sizes_tuple(batch_sizes) if batch_sizes is not None else None
        self.check_input(input, batch_sizes)
        h0 = c0 = None
        if hx is not None:
            expected = self.get_expected_hidden_size(input, batch_sizes)
            if lstm:
                self.check_hidden_size(hx[0], expected, "Expected hidden[0] size {}, got {}")
                expected_c = (expected[0], expected[1], self.hidden_size)
                self.check_hidden_size(hx[1], expected_c, "Expected hidden[1] size {}, got {}")
                h0, c0 = hx
            else:
                self.check_hidden_size(hx, expected)
                h0 = hx
            for h in (h0, c0):
                if h is not None and h.dtype != input.dtype:
                    raise _dtype_error(h, input)

        x = input
        if batch_sizes is None and self.batch_first:
            x = x.transpose(0, 1)
        if batch_sizes is None and x.size(0) == 0:
            raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
        output, h_n, c_n = _rnn.rnn_forward(
            self.mode, x, h0, c0, self._flat_weights, self.bias, self.proj_size,
            self.num_layers, self.dropout, self.training, self.bidirectional, bs_tuple)
        if batch_sizes is None and self.batch_first:
            output = output.transpose(0, 1)
        if isinstance(orig_input, PackedSequence):
            output = PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices)
            if lstm:
                return output, (self.permute_hidden(h_n, unsorted_indices),
                                self.permute_hidden(c_n, unsorted_indices))
            return output, self.permute_hidden(h_n, unsorted_indices)
        if not is_batched:
            output = output.squeeze(batch_dim)
            h_n = h_n.squeeze(1)
            if lstm:
                c_n = c_n.squeeze(1)
        if lstm:
            return output, (h_n, c_n)
        return output, h_n


class RNN(RNNBase):
    """A multi-layer Elman RNN with tanh or ReLU nonlinearity:
    :math:`h_t = \\tanh(x_t W_{ih}^T + b_{ih} + h_{t-1} W_{hh}^T + b_{hh})`.

    Args:
        input_size, hidden_size: feature sizes of the input and the hidden state.
        num_layers: stacked layers. Default: 1.
        nonlinearity: ``'tanh'`` or ``'relu'``. Default: ``'tanh'``.
        bias: use ``b_ih`` and ``b_hh``. Default: True.
        batch_first: input and output are ``(B, T, *)``. Default: False.
        dropout: dropout on the outputs of every layer but the last. Default: 0.
        bidirectional: a bidirectional RNN. Default: False.

    Inputs: ``input`` ``(T, B, H_in)``, ``(T, H_in)`` or a :class:`PackedSequence`;
    ``hx`` ``(D * num_layers, B, H_out)`` or None (zeros).
    Outputs: ``(output, h_n)``.
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' "
                             "or 'relu'.")
        super().__init__(mode, *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward_impl(input, hx)


class LSTM(RNNBase):
    """A multi-layer long short-term memory RNN (gates i, f, g, o as in PyTorch), with an
    optional projection of the hidden state (``proj_size``).

    Args:
        input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional: as
            for :class:`RNN`.
        proj_size: if > 0, ``h_t = W_{hr} (o_t * tanh(c_t))`` of that size. Default: 0.

    Inputs: ``input``, ``(h_0, c_0)`` or None. Outputs: ``(output, (h_n, c_n))``.
    """

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, mini_batch, self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        if isinstance(hx, tuple):
            return (_apply_permutation(hx[0], permutation),
                    _apply_permutation(hx[1], permutation))
        return _apply_permutation(hx, permutation)

    def forward(self, input, hx=None):
        return self._forward_impl(input, hx)


class GRU(RNNBase):
    """A multi-layer gated recurrent unit RNN (gates r, z, n as in PyTorch).

    Args: as for :class:`RNN` (no ``nonlinearity``).
    Inputs: ``input``, ``hx`` or None. Outputs: ``(output, h_n)``.
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward_impl(input, hx)


# ---------------------------------------------------------------------------
# cells

class RNNCellBase(Module):
    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device=None, dtype=None) -> None:
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(
            ember.empty((num_chunks * hidden_size, input_size), **factory_kwargs))
        self.weight_hh = Parameter(
            ember.empty((num_chunks * hidden_size, hidden_size), **factory_kwargs))
        if bias:
            self.bias_ih = Parameter(ember.empty(num_chunks * hidden_size, **factory_kwargs))
            self.bias_hh = Parameter(ember.empty(num_chunks * hidden_size, **factory_kwargs))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            _uniform_(weight, -stdv, stdv)

    def _batched(self, name, input, hx):
        """Check the ranks of ``input`` and ``hx`` (None or a tensor), and give both a batch
        dim if the input has none; returns (input, hx, is_batched)."""
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D "
                             "instead")
        if hx is not None and hx.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected hidden to be 1D or 2D, got {hx.dim()}D "
                             "instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
            hx = hx.unsqueeze(0) if hx is not None else None
        self._check(input, () if hx is None else (hx,), name)
        return input, hx, is_batched

    def _check(self, input, hx, name):
        if input.size(1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} "
                               f"expected {self.input_size}")
        if input.dtype != self.weight_ih.dtype:
            raise _dtype_error(input, self.weight_ih)
        for i, h in enumerate(hx):
            if h.size(0) != input.size(0):
                raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{i} "
                                   f"batch size {h.size(0)}")
            if h.size(1) != self.hidden_size:
                raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {h.size(1)}, "
                                   f"expected {self.hidden_size}")
            if h.dtype != input.dtype:
                raise _dtype_error(h, input)


class RNNCell(RNNCellBase):
    """An Elman RNN cell: :math:`h' = \\tanh(W_{ih} x + b_{ih} + W_{hh} h + b_{hh})` (or
    ReLU).

    Args: input_size, hidden_size, bias (default True), nonlinearity (``'tanh'``).
    Inputs: ``input`` ``(B, H_in)`` or ``(H_in)``, ``hx`` or None. Output: ``h'``.
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device,
                         dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        input, hx, is_batched = self._batched("RNNCell", input, hx)
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        ret, _ = _rnn.cell_forward(mode, input, hx, None, self.weight_ih, self.weight_hh,
                                   self.bias_ih, self.bias_hh)
        if not is_batched:
            ret = ret.squeeze(0)
        return ret


class LSTMCell(RNNCellBase):
    """A long short-term memory cell.

    Args: input_size, hidden_size, bias (default True).
    Inputs: ``input``, ``(h_0, c_0)`` or None. Output: ``(h_1, c_1)``.
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device,
                         dtype=dtype)

    def forward(self, input, hx=None):
        if input.dim() not in (1, 2):
            raise ValueError(f"LSTMCell: Expected input to be 1D or 2D, got {input.dim()}D "
                             "instead")
        if hx is not None:
            for idx, value in enumerate(hx):
                if value.dim() not in (1, 2):
                    raise ValueError(f"LSTMCell: Expected hx[{idx}] to be 1D or 2D, got "
                                     f"{value.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is not None and not is_batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        self._check(input, () if hx is None else tuple(hx), "LSTMCell")
        h0, c0 = (None, None) if hx is None else hx
        h, c = _rnn.cell_forward("LSTM", input, h0, c0, self.weight_ih, self.weight_hh,
                                 self.bias_ih, self.bias_hh)
        if not is_batched:
            return h.squeeze(0), c.squeeze(0)
        return h, c


class GRUCell(RNNCellBase):
    """A gated recurrent unit cell.

    Args: input_size, hidden_size, bias (default True).
    Inputs: ``input``, ``hx`` or None. Output: ``h'``.
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device,
                         dtype=dtype)

    def forward(self, input, hx=None):
        input, hx, is_batched = self._batched("GRUCell", input, hx)
        ret, _ = _rnn.cell_forward("GRU", input, hx, None, self.weight_ih, self.weight_hh,
                                   self.bias_ih, self.bias_hh)
        if not is_batched:
            ret = ret.squeeze(0)
        return ret
