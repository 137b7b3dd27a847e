"""PyTorch's top-level recurrent ops: the cells (``torch.lstm_cell``, ``gru_cell``,
``rnn_tanh_cell``, ``rnn_relu_cell``) and the multi-layer networks (``torch.lstm``, ``gru``,
``rnn_tanh``, ``rnn_relu``) with ATen's argument lists (NOTE [ Top-level functional forms ]
in ``_functional_forms``). They run the recurrent kernels of ``ember.nn``'s RNN modules.
"""

from __future__ import annotations

from ember.nn._functional._rnn import cell_forward, rnn_forward

__all__ = ["lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell", "lstm", "gru",
           "rnn_tanh", "rnn_relu"]


def _cell(mode, input, hx, cx, w_ih, w_hh, b_ih, b_hh):
    if input.dim() == 1:  # an unbatched step
        h, c = cell_forward(mode, input.unsqueeze(0), hx.unsqueeze(0),
                            None if cx is None else cx.unsqueeze(0), w_ih, w_hh, b_ih, b_hh)
        return h.squeeze(0), None if c is None else c.squeeze(0)
    return cell_forward(mode, input, hx, cx, w_ih, w_hh, b_ih, b_hh)


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None) -> (Tensor, Tensor)

    One LSTM step: ``hx`` is the pair ``(h, c)``; returns ``(h', c')``. The gates are
    ordered input, forget, cell, output in ``w_ih`` ``(4H, I)`` and ``w_hh`` ``(4H, H)``."""
    if len(hx) != 2:
        raise RuntimeError("lstm_cell: Expected hx to be a list of two tensors (h, c)")
    return _cell("LSTM", input, hx[0], hx[1], w_ih, w_hh, b_ih, b_hh)


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None) -> Tensor

    One GRU step (gates reset, update, new in ``w_ih`` ``(3H, I)``); returns ``h'``."""
    return _cell("GRU", input, hx, None, w_ih, w_hh, b_ih, b_hh)[0]


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None) -> Tensor

    ``tanh(input @ w_ih.T + b_ih + hx @ w_hh.T + b_hh)``."""
    return _cell("RNN_TANH", input, hx, None, w_ih, w_hh, b_ih, b_hh)[0]


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None) -> Tensor

    ``relu(input @ w_ih.T + b_ih + hx @ w_hh.T + b_hh)``."""
    return _cell("RNN_RELU", input, hx, None, w_ih, w_hh, b_ih, b_hh)[0]


def _network(mode, args, name):
    """Both of ATen's argument lists: ``(input, hx, params, has_biases, num_layers,
    dropout, train, bidirectional, batch_first)`` and, for packed sequences, ``(data,
    batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional)``."""
    if len(args) != 9:
        raise TypeError(f"{name}() takes 9 positional arguments but {len(args)} were given")
    if isinstance(args[3], (list, tuple)):  # the packed form: params come fourth
        data, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidir = args
        batch_first = False
        batch_sizes = tuple(int(b) for b in batch_sizes.tolist())
    else:
        data, hx, params, has_biases, num_layers, dropout, train, bidir, batch_first = args
        batch_sizes = None
    lstm = mode == "LSTM"
    h0, c0 = (hx[0], hx[1]) if lstm else (hx, None)
    nd = 2 if bidir else 1
    per = len(params) // (num_layers * nd)
    expect = (2 + (2 if has_biases else 0),) + ((3 + (2 if has_biases else 0),) if lstm else ())
    if per * num_layers * nd != len(params) or per not in expect:
        raise RuntimeError(f"{name}: got {len(params)} parameters for {num_layers} layers "
                           f"({'bi' if bidir else 'uni'}directional, "
                           f"{'with' if has_biases else 'without'} biases)")
    proj = int(h0.shape[-1]) if per in (3, 5) else 0
    x = data
    unbatched = batch_sizes is None and x.dim() == 2
    if unbatched:
        x = x.unsqueeze(1)
        h0 = h0.unsqueeze(1)
        c0 = None if c0 is None else c0.unsqueeze(1)
    elif batch_first and batch_sizes is None:
        x = x.transpose(0, 1)
    out, h, c = rnn_forward(mode, x, h0, c0, list(params), has_biases, proj, num_layers,
                            dropout, train, bidir, batch_sizes)
    if unbatched:
        out, h = out.squeeze(1), h.squeeze(1)
        c = None if c is None else c.squeeze(1)
    elif batch_first and batch_sizes is None:
        out = out.transpose(0, 1)
    return (out, h, c) if lstm else (out, h)


def lstm(*args):
    """lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
    batch_first) -> (Tensor, Tensor, Tensor)

    A multi-layer LSTM: ``hx`` is ``(h_0, c_0)``, ``params`` the flat list of weights
    (``w_ih, w_hh[, b_ih, b_hh][, w_hr]`` per layer and direction, as
    ``nn.LSTM._flat_weights`` holds them). Returns ``(output, h_n, c_n)``. The packed form
    ``lstm(data, batch_sizes, hx, params, has_biases, num_layers, dropout, train,
    bidirectional)`` runs on a packed sequence's data."""
    return _network("LSTM", args, "lstm")


def gru(*args):
    """gru(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
    batch_first) -> (Tensor, Tensor)

    A multi-layer GRU (see :func:`lstm` for the arguments and the packed form); returns
    ``(output, h_n)``."""
    return _network("GRU", args, "gru")


def rnn_tanh(*args):
    """rnn_tanh(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
    batch_first) -> (Tensor, Tensor)

    A multi-layer Elman RNN with tanh (see :func:`lstm` for the arguments); returns
    ``(output, h_n)``."""
    return _network("RNN_TANH", args, "rnn_tanh")


def rnn_relu(*args):
    """rnn_relu(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
    batch_first) -> (Tensor, Tensor)

    A multi-layer Elman RNN with ReLU (see :func:`lstm` for the arguments); returns
    ``(output, h_n)``."""
    return _network("RNN_RELU", args, "rnn_relu")
