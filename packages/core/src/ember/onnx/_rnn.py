"""Converters of ``RNN``, ``LSTM`` and ``GRU``: one ONNX ``RNN``/``LSTM``/``GRU`` node per
layer, with the gates reordered from PyTorch's order to ONNX's (LSTM: i, f, g, o -> i, o,
f, c; GRU: r, z, n -> z, r, h with ``linear_before_reset``), both directions in one node,
``batch_first`` and unbatched inputs by transposes, and the initial states sliced per
layer."""

from __future__ import annotations

from ember.onnx._context import converts_module

__all__: list = []

# PyTorch's gate blocks in ONNX's order
_ORDER = {"LSTM": [0, 3, 1, 2], "GRU": [1, 0, 2], "RNN": [0]}


def _reordered(ctx, w, mode, hidden):
    """``w`` with its gate blocks (rows of ``hidden``) in ONNX's order, made 3-D."""
    order = _ORDER[mode]
    if len(order) > 1:
        parts = ctx.b.split(w, [hidden] * len(order), 0)
        w = ctx.b.op("Concat", [parts[i] for i in order], axis=0)
    return ctx.b.unsqueeze(w, [0])


def _layer_weights(ctx, m, layer, x_dtype):
    mode = _mode(m)
    dirs = ["", "_reverse"] if m.bidirectional else [""]
    h = m.hidden_size
    ws, rs, bs = [], [], []
    for sfx in dirs:
        w = ctx.tensor(getattr(m, f"weight_ih_l{layer}{sfx}"), x_dtype)
        r = ctx.tensor(getattr(m, f"weight_hh_l{layer}{sfx}"), x_dtype)
        ws.append(_reordered(ctx, w, mode, h))
        rs.append(_reordered(ctx, r, mode, h))
        if m.bias:
            bi = ctx.tensor(getattr(m, f"bias_ih_l{layer}{sfx}"), x_dtype)
            bh = ctx.tensor(getattr(m, f"bias_hh_l{layer}{sfx}"), x_dtype)
            bi = ctx.b.squeeze(_reordered(ctx, bi, mode, h), [0])
            bh = ctx.b.squeeze(_reordered(ctx, bh, mode, h), [0])
            bs.append(ctx.b.unsqueeze(ctx.b.op("Concat", [bi, bh], axis=0), [0]))

    def cat(v):
        return v[0] if len(v) == 1 else ctx.b.op("Concat", v, axis=0)

    return cat(ws), cat(rs), (cat(bs) if bs else None)


def _mode(m):
    from ember.nn import GRU, LSTM

    if isinstance(m, LSTM):
        return "LSTM"
    if isinstance(m, GRU):
        return "GRU"
    return "RNN"


def _rnn(ctx, m, input, hx=None):
    mode = _mode(m)
    if getattr(m, "proj_size", 0):
        raise ctx.unsupported("LSTM with proj_size (ONNX's LSTM has no projection)")
    x = ctx.tensor(input)
    unbatched = x.rank == 2
    if unbatched:
        x = ctx.b.unsqueeze(x, [1])
    elif m.batch_first:
        x = ctx.b.op("Transpose", [x], perm=[1, 0, 2])
    nd = 2 if m.bidirectional else 1
    h = m.hidden_size
    h0 = c0 = None
    if hx is not None:
        if mode == "LSTM":
            h0, c0 = (ctx.tensor(v, x.dtype) for v in hx)
        else:
            h0 = ctx.tensor(hx, x.dtype)
        if unbatched:
            h0 = ctx.b.unsqueeze(h0, [1])
            c0 = ctx.b.unsqueeze(c0, [1]) if c0 is not None else None
    direction = "bidirectional" if m.bidirectional else "forward"
    hs, cs = [], []
    for layer in range(m.num_layers):
        w, r, b = _layer_weights(ctx, m, layer, x.dtype)
        init = []
        for state in (h0, c0):
            if state is None:
                init.append(None)
            else:
                init.append(ctx.b.op("Slice", [state, ctx.b.ints([layer * nd]),
                                               ctx.b.ints([(layer + 1) * nd]),
                                               ctx.b.ints([0])]))
        attrs = {"hidden_size": h, "direction": direction}
        if mode == "LSTM":
            ins = [x, w, r, b, None, init[0], init[1]]
            y, yh, yc = ctx.op("LSTM", ins, outputs=3, dtype=x.dtype, **attrs)
            cs.append(yc)
        elif mode == "GRU":
            y, yh = ctx.op("GRU", [x, w, r, b, None, init[0]], outputs=2, dtype=x.dtype,
                           linear_before_reset=1, **attrs)
        else:
            act = "Tanh" if m.nonlinearity == "tanh" else "Relu"
            y, yh = ctx.op("RNN", [x, w, r, b, None, init[0]], outputs=2, dtype=x.dtype,
                           activations=[act] * nd, **attrs)
        hs.append(yh)
        # Y is (seq, num_directions, batch, hidden): the next layer's input is
        # (seq, batch, num_directions * hidden)
        y = ctx.b.op("Transpose", [y], perm=[0, 2, 1, 3])
        x = ctx.b.op("Reshape", [y, ctx.b.ints([0, 0, -1])])
    out = x
    h_n = hs[0] if len(hs) == 1 else ctx.b.op("Concat", hs, axis=0)
    c_n = (cs[0] if len(cs) == 1 else ctx.b.op("Concat", cs, axis=0)) if cs else None
    if unbatched:
        out = ctx.b.squeeze(out, [1])
        h_n = ctx.b.squeeze(h_n, [1])
        c_n = ctx.b.squeeze(c_n, [1]) if c_n is not None else None
    elif m.batch_first:
        out = ctx.b.op("Transpose", [out], perm=[1, 0, 2])
    for v in (out, h_n, c_n):
        if v is not None:
            v.shape = None
    if mode == "LSTM":
        return out, (h_n, c_n)
    return out, h_n


converts_module("ember.nn.LSTM", "ember.nn.GRU", "ember.nn.RNN")(_rnn)
