"""The recurrent layers' compute: one graph node per layer and direction.

NOTE [ A recurrent layer as one node ]
``_RNNLayer`` runs a whole sequence of one layer in one direction (an Elman RNN with
tanh or ReLU, an LSTM with an optional projection, or a GRU) on arrays. Its forward
does the input-to-hidden product for every time step in one GEMM (``X @ W_ih.T``, the
biases folded in), then loops over time with one small GEMM (``h @ W_hh.T``) and a few
in-place NumPy passes per step for the gate nonlinearities and the cell update. The
sigmoid gates use ``sigmoid(x) = 0.5 * tanh(x / 2) + 0.5`` with the halving folded into
copies of the weights (an exact scaling by a power of two), so all gates of a step go
through one ``tanh`` pass and one multiply-add.

Its backward is backpropagation through time on arrays: the per-step factors that do
not depend on the incoming gradient (sigmoid/tanh derivatives times the other gate
values) are computed for all steps in a few batched passes first; the loop then does
two or three passes and one ``dgates @ W_hh`` per step, writing the gates' gradients
into one ``(N, gates * H)`` array, and the gradients of ``W_ih``, ``W_hh``, the biases
and the input come out of one GEMM (or sum) each at the end.

Sequences are laid out as ``PackedSequence`` lays them out: time-major rows, step ``t``
holding the first ``batch_sizes[t]`` sequences (a padded batch is the case where every
step holds the whole batch). For a packed batch the state is a ``(B, H)`` buffer of which
step ``t`` updates the first ``batch_sizes[t]`` rows, so sequences that ended (forward
direction) keep their last state and sequences that have not started yet (reverse
direction) keep the initial one; the final buffer is ``h_n``. A padded batch keeps its
states in one array of ``h0`` and every step's output, so each step reads its previous
state as a view and writes its output in place (NOTE [ State storage ] in forward); the
output therefore shares memory with what backward reads, and the node version-checks it.

With ``create_graph=True`` the backward is recorded instead: the layer is run again with
ember's differentiable ops (``_composite_layer``, a step-by-step loop) and differentiated
with ``autograd.grad(create_graph=True)``, so higher-order gradients are exact (and slow).

The per-step products are small (``B x H`` by ``H x gates*H``), so the node's forward and
backward run under ``serial_blas`` (see NOTE [ Serial BLAS ] in ember/_backend/_blas.py);
even the batched products were faster on one thread on a loaded machine (a 700x256x1024
GEMM: 24 ms on two threads, 3 ms on one, load average 4.7 on 2 cores).
"""

from __future__ import annotations

from ember._backend._blas import serial_blas
from ember._C._core import Node, is_grad_enabled
from ember._ops._util import wrap, xp_of

__all__: list = []


_MODES = ("RNN_TANH", "RNN_RELU", "LSTM", "GRU")
_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _steps(batch_sizes, T, B, reverse):
    """(row offset, active batch) of each time step, in processing order."""
    if batch_sizes is None:
        steps = [(t * B, B) for t in range(T)]
    else:
        steps = []
        off = 0
        for b in batch_sizes:
            steps.append((off, b))
            off += b
    if reverse:
        steps.reverse()
    return steps


def _scale(xp, dtype, pattern, H):
    """A ``(gates * H,)`` vector repeating each entry of ``pattern`` H times."""
    return xp.repeat(xp.asarray(pattern, dtype=dtype), H)


class _RNNLayer(Node):
    """One layer in one direction over a whole (padded or packed) sequence.

    forward(x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, mode, batch_sizes, reverse):
    ``x`` is ``(T, B, I)`` when ``batch_sizes`` is None, else packed data ``(N, I)``;
    ``h0`` ``(B, P)`` and ``c0`` ``(B, H)`` may be None (zeros). Returns
    ``(y, h_n, c_n)`` for an LSTM and ``(y, h_n)`` otherwise.
    """

    saves_inputs = (0, 1, 2, 3, 4, 5, 6, 7)  # version-checked; read back by backward
    saves_output = True  # y shares memory with what backward reads: version-check it

    def name(self):
        return {"LSTM": "LstmBackward0", "GRU": "GruBackward0"}.get(
            self.mode, "RnnBackward0")

    def forward(self, x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, mode, batch_sizes, reverse):
        with serial_blas(xp_of(x)):
            return self._forward(x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, mode, batch_sizes,
                                 reverse)

    def _forward(self, x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, mode, batch_sizes, reverse):
        xp = xp_of(x)
        self.mode = mode
        self.batch_sizes, self.reverse = batch_sizes, reverse
        self.x_shape = x.shape
        if batch_sizes is None:
            T, B = x.shape[0], x.shape[1]
            X = x.reshape(T * B, x.shape[2])
        else:
            X = x
            T, B = len(batch_sizes), batch_sizes[0]
        N = X.shape[0]
        ng = _GATES[mode]
        H = w_ih.shape[0] // ng
        P = w_hh.shape[1]
        dt = X.dtype
        steps = _steps(batch_sizes, T, B, reverse)
        self.steps, self.B, self.H, self.P, self.N = steps, B, H, P, N
        # NOTE [ State storage ]
        # A padded batch keeps its states in one (N + B, P) array Hs whose rows are h0 and
        # the output of every step in time order, so that the previous state of a step is a
        # view (``Hprev``) and the step writes its output in place (``Y``): no copies. A
        # packed batch keeps a (B, P) state buffer whose first batch_sizes[t] rows step t
        # updates, copying the rows it reads into Hprev for backward.
        dense = batch_sizes is None
        self.dense = dense
        if dense:
            oy, oh = (0, B) if reverse else (B, 0)
            self.oy_oh = (oy, oh)
            Hs = xp.empty((N + B, P), dt)
            init = Hs[N:] if reverse else Hs[:B]
            if h0 is None:
                init[...] = 0
            else:
                init[...] = h0
            Y, Hprev = Hs[oy:oy + N], Hs[oh:oh + N]
            h = None
        else:
            h = xp.zeros((B, P), dt) if h0 is None else xp.array(h0, dtype=dt, copy=True)
            Hprev = xp.empty((N, P), dt)
            Y = xp.empty((N, P), dt)
        if mode == "LSTM":
            c = self._lstm_forward(xp, X, h, c0, Hprev, Y, w_ih, w_hh, b_ih, b_hh, w_hr)
        elif mode == "GRU":
            self._gru_forward(xp, X, h, Hprev, Y, w_ih, w_hh, b_ih, b_hh)
        else:
            self._rnn_forward(xp, X, h, Hprev, Y, w_ih, w_hh, b_ih, b_hh)
        if dense:
            off, b = steps[-1]
            h = Y[off:off + b].copy()
        self.Hprev, self.X = Hprev, X
        y = Y.reshape(T, B, P) if dense else Y
        return (y, h, c) if mode == "LSTM" else (y, h)

    # -- forward of each cell type --------------------------------------------------------
    # ``h`` is the packed batch's state buffer, None for a padded batch (see forward).

    def _rnn_forward(self, xp, X, h, Hprev, Y, w_ih, w_hh, b_ih, b_hh):
        GX = X @ w_ih.T
        if b_ih is not None:
            GX += b_ih + b_hh
        whhT = xp.ascontiguousarray(w_hh.T)
        relu = self.mode == "RNN_RELU"
        for off, b in self.steps:
            sl = slice(off, off + b)
            hp = Hprev[sl]
            if h is not None:
                hp[...] = h[:b]
            y = Y[sl]
            xp.matmul(hp, whhT, out=y)
            y += GX[sl]
            if relu:
                xp.maximum(y, 0, out=y)
            else:
                xp.tanh(y, out=y)
            if h is not None:
                h[:b] = y
        self.Y = Y

    def _lstm_forward(self, xp, X, h, c0, Hprev, Y, w_ih, w_hh, b_ih, b_hh, w_hr):
        H, N, B, dt = self.H, self.N, self.B, X.dtype
        s = _scale(xp, dt, (0.5, 0.5, 1.0, 0.5), H)
        GX = X @ (w_ih * s[:, None]).T
        if b_ih is not None:
            GX += (b_ih + b_hh) * s
        whhT = xp.ascontiguousarray((w_hh * s[:, None]).T)
        A = xp.asarray([0.5, 0.5, 1.0, 0.5], dt).reshape(4, 1)
        Bv = xp.asarray([0.5, 0.5, 0.0, 0.5], dt).reshape(4, 1)
        if h is None:  # padded: the cell states in one array, as Hs (see forward)
            oy, oh = self.oy_oh
            Cs = xp.empty((N + B, H), dt)
            init = Cs[N:] if self.reverse else Cs[:B]
            if c0 is None:
                init[...] = 0
            else:
                init[...] = c0
            Cnew, Cprev = Cs[oy:oy + N], Cs[oh:oh + N]
            c = None
        else:
            c = xp.zeros((B, H), dt) if c0 is None else xp.array(c0, dtype=dt, copy=True)
            Cprev = xp.empty((N, H), dt)
        G = xp.empty((N, 4, H), dt)
        TC = xp.empty((N, H), dt)
        proj = w_hr is not None
        R = xp.empty((N, H), dt) if proj else Y
        whrT = xp.ascontiguousarray(w_hr.T) if proj else None
        tmp = xp.empty((B, H), dt)
        for off, b in self.steps:
            sl = slice(off, off + b)
            hp = Hprev[sl]
            cp = Cprev[sl]
            if c is None:
                cn = Cnew[sl]
            else:
                hp[...] = h[:b]
                cp[...] = c[:b]
                cn = c[:b]
            g = G[sl]
            g2 = g.reshape(b, 4 * H)
            xp.matmul(hp, whhT, out=g2)
            g2 += GX[sl]
            xp.tanh(g2, out=g2)
            g *= A
            g += Bv
            xp.multiply(g[:, 1], cp, out=cn)
            t = tmp[:b]
            xp.multiply(g[:, 0], g[:, 2], out=t)
            cn += t
            tc = TC[sl]
            xp.tanh(cn, out=tc)
            r = R[sl]
            xp.multiply(g[:, 3], tc, out=r)
            if proj:
                xp.matmul(r, whrT, out=Y[sl])
            if h is not None:
                h[:b] = Y[sl]
        self.G, self.Cprev, self.TC, self.R = G, Cprev, TC, R
        if c is None:
            off, b = self.steps[-1]
            c = Cnew[off:off + b].copy()
        return c

    def _gru_forward(self, xp, X, h, Hprev, Y, w_ih, w_hh, b_ih, b_hh):
        H, N, dt = self.H, self.N, X.dtype
        s = _scale(xp, dt, (0.5, 0.5, 1.0), H)
        GX = (X @ (w_ih * s[:, None]).T).reshape(N, 3, H)
        if b_ih is not None:
            GX += (b_ih * s).reshape(3, H)
            bhh = b_hh * s
        whhT = xp.ascontiguousarray((w_hh * s[:, None]).T)
        GH = xp.empty((N, 3, H), dt)   # h @ W_hh.T + b_hh (r, z halved)
        RZ = xp.empty((N, 2, H), dt)
        Nn = xp.empty((N, H), dt)
        for off, b in self.steps:
            sl = slice(off, off + b)
            hp = Hprev[sl]
            if h is not None:
                hp[...] = h[:b]
            gh = GH[sl]
            gh2 = gh.reshape(b, 3 * H)
            xp.matmul(hp, whhT, out=gh2)
            if b_ih is not None:
                gh2 += bhh
            gx = GX[sl]
            rz = RZ[sl]
            xp.add(gx[:, :2], gh[:, :2], out=rz)
            xp.tanh(rz, out=rz)
            rz *= 0.5
            rz += 0.5
            n = Nn[sl]
            xp.multiply(rz[:, 0], gh[:, 2], out=n)
            n += gx[:, 2]
            xp.tanh(n, out=n)
            y = Y[sl]
            xp.subtract(hp, n, out=y)
            y *= rz[:, 1]
            y += n
            if h is not None:
                h[:b] = y
        self.GHn, self.RZ, self.Nn = GH[:, 2], RZ, Nn

    # -- backward ---------------------------------------------------------------------------

    def backward(self, gy, ghn, gcn=None):
        saved = self.saved_tensors[:8]
        if is_grad_enabled():
            return self._recorded_backward(saved, (gy, ghn, gcn))
        with serial_blas(xp_of(saved[0]._data)):
            return self._backward(saved, gy, ghn, gcn)

    def _backward(self, saved, gy, ghn, gcn):
        X_t, _, _, w_ih_t, w_hh_t, _, _, w_hr_t = saved
        x = X_t._data
        w_ih, w_hh = w_ih_t._data, w_hh_t._data
        w_hr = w_hr_t._data if w_hr_t is not None else None
        xp = xp_of(x)
        N, B, P, H = self.N, self.B, self.P, self.H
        X = self.X
        dt = X.dtype
        dY = gy._data.reshape(N, P) if gy is not None else None
        dh = (xp.zeros((B, P), dt) if ghn is None else
              xp.array(ghn._data, dtype=dt, copy=True))
        if self.mode == "LSTM":
            dc = (xp.zeros((B, H), dt) if gcn is None else
                  xp.array(gcn._data, dtype=dt, copy=True))
            dGX, dGH, gw_hr = self._lstm_backward(xp, dY, dh, dc, w_hh, w_hr)
        elif self.mode == "GRU":
            dc = None
            dGX, dGH = self._gru_backward(xp, dY, dh, w_hh)
            gw_hr = None
        else:
            dc = None
            dGX = dGH = self._rnn_backward(xp, dY, dh, w_hh)
            gw_hr = None
        need = self.needs_input_grad
        gx = gh0 = gc0 = gw_ih = gw_hh = gb_ih = gb_hh = None
        if need[0]:
            gx = wrap((dGX @ w_ih).reshape(self.x_shape))
        if need[1]:
            gh0 = wrap(dh)
        if need[2] and dc is not None:
            gc0 = wrap(dc)
        if need[3]:
            gw_ih = wrap(dGX.T @ X)
        if need[4]:
            gw_hh = wrap(dGH.T @ self.Hprev)
        if need[5] or need[6]:
            sx = dGX.sum(0)
            sh = sx.copy() if dGH is dGX else dGH.sum(0)
            gb_ih, gb_hh = wrap(sx), wrap(sh)
        gw_hr = wrap(gw_hr) if gw_hr is not None and need[7] else None
        return gx, gh0, gc0, gw_ih, gw_hh, gb_ih, gb_hh, gw_hr

    def _recorded_backward(self, saved, grads):
        """The gradients as a recorded (differentiable) computation: the layer run again
        with ember ops, differentiated with ``create_graph=True``."""
        import ember

        need = self.needs_input_grad
        want = [i for i in range(8) if need[i] and saved[i] is not None]
        if not want:
            return (None,) * 8
        with ember.enable_grad():
            outs = _composite_layer(self.mode, *saved, self.batch_sizes, self.reverse)
            pairs = [(o, g) for o, g in zip(outs, grads, strict=False)
                     if g is not None and o is not None]
            res = ember.autograd.grad([o for o, _ in pairs], [saved[i] for i in want],
                                      [g for _, g in pairs], create_graph=True,
                                      allow_unused=True)
        out = [None] * 8
        for i, g in zip(want, res, strict=True):
            out[i] = g
        return tuple(out)

    def _rnn_backward(self, xp, dY, dh, w_hh):
        Y = self.Y
        if self.mode == "RNN_RELU":
            D = (Y > 0).astype(Y.dtype)
        else:
            D = 1 - Y * Y
        dP = xp.empty_like(Y)
        for off, b in reversed(self.steps):
            sl = slice(off, off + b)
            dhb = dh[:b]
            if dY is not None:
                dhb += dY[sl]
            p = dP[sl]
            xp.multiply(dhb, D[sl], out=p)
            xp.matmul(p, w_hh, out=dhb)
        return dP

    def _lstm_backward(self, xp, dY, dh, dc, w_hh, w_hr):
        G, Cprev, TC, R = self.G, self.Cprev, self.TC, self.R
        N, H, P, dt = self.N, self.H, self.P, G.dtype
        gi, gf, gg, go = G[:, 0], G[:, 1], G[:, 2], G[:, 3]
        # per-step factors: d pre_gate = dc * Q[:, k] (i, f, g); d pre_o = dr * TCo;
        # dc += dr * K
        Q = xp.empty((N, 3, H), dt)
        xp.multiply(gi, 1 - gi, out=Q[:, 0])
        Q[:, 0] *= gg
        xp.multiply(gf, 1 - gf, out=Q[:, 1])
        Q[:, 1] *= Cprev
        xp.multiply(gg, gg, out=Q[:, 2])
        xp.subtract(1, Q[:, 2], out=Q[:, 2])
        Q[:, 2] *= gi
        TCo = go * (1 - go)
        TCo *= TC
        K = TC * TC
        xp.subtract(1, K, out=K)
        K *= go
        dP = xp.empty((N, 4, H), dt)
        proj = w_hr is not None
        dHs = xp.empty((N, P), dt) if proj else None
        tmp = xp.empty((self.B, H), dt)
        for off, b in reversed(self.steps):
            sl = slice(off, off + b)
            dhb = dh[:b]
            if dY is not None:
                dhb += dY[sl]
            if proj:
                dHs[sl] = dhb
                dr = dhb @ w_hr
            else:
                dr = dhb
            dcb = dc[:b]
            t = tmp[:b]
            xp.multiply(dr, K[sl], out=t)
            dcb += t
            p = dP[sl]
            xp.multiply(dcb[:, None, :], Q[sl], out=p[:, :3])
            xp.multiply(dr, TCo[sl], out=p[:, 3])
            dcb *= gf[sl]
            xp.matmul(p.reshape(b, 4 * H), w_hh, out=dhb)
        dP2 = dP.reshape(N, 4 * H)
        gw_hr = dHs.T @ R if proj else None
        return dP2, dP2, gw_hr

    def _gru_backward(self, xp, dY, dh, w_hh):
        GHn, RZ, Nn, Hprev = self.GHn, self.RZ, self.Nn, self.Hprev
        N, H, dt = self.N, self.H, Nn.dtype
        r, z = RZ[:, 0], RZ[:, 1]
        A = Nn * Nn                 # (1 - z) (1 - n^2): d pre_n = dh * A
        xp.subtract(1, A, out=A)
        A *= 1 - z
        Bz = z * (1 - z)            # (h - n) z (1 - z): d pre_z = dh * Bz
        Bz *= Hprev - Nn
        Cr = r * (1 - r)            # ghn r (1 - r): d pre_r = d pre_n * Cr
        Cr *= GHn
        dGX = xp.empty((N, 3, H), dt)
        dGH = xp.empty((N, 3, H), dt)
        tmp = xp.empty((self.B, H), dt)
        for off, b in reversed(self.steps):
            sl = slice(off, off + b)
            dhb = dh[:b]
            if dY is not None:
                dhb += dY[sl]
            q = dGH[sl]
            dn = dGX[sl, 2]
            xp.multiply(dhb, A[sl], out=dn)
            xp.multiply(dhb, Bz[sl], out=q[:, 1])
            xp.multiply(dn, Cr[sl], out=q[:, 0])
            xp.multiply(dn, r[sl], out=q[:, 2])
            dhb *= z[sl]
            t = tmp[:b]
            xp.matmul(q.reshape(b, 3 * H), w_hh, out=t)
            dhb += t
        dGX[:, :2] = dGH[:, :2]
        return dGX.reshape(N, 3 * H), dGH.reshape(N, 3 * H)


def _composite_layer(mode, x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, batch_sizes, reverse):
    """``_RNNLayer``'s forward written with ember's differentiable ops, one step at a time
    (the recorded backward of ``create_graph=True``; also a reference for tests)."""
    import ember

    if batch_sizes is None:
        T, B = x.shape[0], x.shape[1]
        steps = _steps(None, T, B, reverse)
        xs = [x[t] for t in range(T)]
        if reverse:
            xs.reverse()
    else:
        B = batch_sizes[0]
        steps = _steps(batch_sizes, len(batch_sizes), B, reverse)
        xs = [x[off:off + b] for off, b in steps]
    ng = _GATES[mode]
    H = w_ih.shape[0] // ng
    P = w_hh.shape[1]
    h = h0 if h0 is not None else ember.zeros((B, P), dtype=x.dtype, device=x.device)
    c = None
    if mode == "LSTM":
        c = c0 if c0 is not None else ember.zeros((B, H), dtype=x.dtype, device=x.device)
    ys = []
    for (_off, b), xt in zip(steps, xs, strict=True):
        hp = h[:b] if b != h.shape[0] else h
        gi = xt.matmul(w_ih.t())
        gh = hp.matmul(w_hh.t())
        if b_ih is not None:
            gi = gi + b_ih
            gh = gh + b_hh
        if mode == "LSTM":
            cp = c[:b] if b != c.shape[0] else c
            g = gi + gh
            i_, f_ = g[:, :H].sigmoid(), g[:, H:2 * H].sigmoid()
            g_, o_ = g[:, 2 * H:3 * H].tanh(), g[:, 3 * H:].sigmoid()
            cn = f_ * cp + i_ * g_
            hn = o_ * cn.tanh()
            if w_hr is not None:
                hn = hn.matmul(w_hr.t())
            c = cn if b == c.shape[0] else ember.cat([cn, c[b:]], 0)
        elif mode == "GRU":
            r = (gi[:, :H] + gh[:, :H]).sigmoid()
            z = (gi[:, H:2 * H] + gh[:, H:2 * H]).sigmoid()
            n = (gi[:, 2 * H:] + r * gh[:, 2 * H:]).tanh()
            hn = n + z * (hp - n)
        else:
            pre = gi + gh
            hn = pre.relu() if mode == "RNN_RELU" else pre.tanh()
        ys.append(hn)
        h = hn if b == h.shape[0] else ember.cat([hn, h[b:]], 0)
    if reverse:
        ys.reverse()
    y = ember.stack(ys, 0) if batch_sizes is None else ember.cat(ys, 0)
    return (y, h, c) if mode == "LSTM" else (y, h)


def _layer(mode, x, h0, c0, weights, batch_sizes, reverse):
    """Run one layer-direction; ``weights`` = (w_ih, w_hh, b_ih, b_hh, w_hr)."""
    from ember._ops._util import apply

    w_ih, w_hh, b_ih, b_hh, w_hr = weights
    return apply(_RNNLayer, x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, mode, batch_sizes,
                 reverse)


def rnn_forward(mode, input, hx, cx, flat_weights, has_bias, proj_size, num_layers, dropout,
                training, bidirectional, batch_sizes=None):
    """A multi-layer recurrent network on a time-major ``(T, B, I)`` input, or on packed
    data ``(N, I)`` with ``batch_sizes`` (a tuple of ints).

    ``hx`` (and ``cx`` for an LSTM) is ``(num_layers * num_directions, B, *)`` or None.
    Returns ``(output, h_n, c_n)`` (``c_n`` None unless LSTM).
    """
    import ember
    from ember.nn._functional.dropout import dropout as _dropout

    nd = 2 if bidirectional else 1
    per = 2 + (2 if has_bias else 0) + (1 if proj_size > 0 else 0)
    lstm = mode == "LSTM"
    layer_input = input
    hs, cs = [], []
    for layer in range(num_layers):
        outs = []
        for d in range(nd):
            idx = layer * nd + d
            w = flat_weights[idx * per:(idx + 1) * per]
            w_ih, w_hh = w[0], w[1]
            b_ih = w[2] if has_bias else None
            b_hh = w[3] if has_bias else None
            w_hr = w[-1] if proj_size > 0 else None
            h0 = hx[idx] if hx is not None else None
            c0 = cx[idx] if (lstm and cx is not None) else None
            res = _layer(mode, layer_input, h0, c0, (w_ih, w_hh, b_ih, b_hh, w_hr),
                         batch_sizes, d == 1)
            outs.append(res[0])
            hs.append(res[1])
            if lstm:
                cs.append(res[2])
        layer_output = outs[0] if nd == 1 else ember.cat(outs, -1)
        if dropout > 0 and training and layer < num_layers - 1:
            layer_output = _dropout(layer_output, dropout, True)
        layer_input = layer_output
    h_n = ember.stack(hs, 0)
    c_n = ember.stack(cs, 0) if lstm else None
    return layer_input, h_n, c_n


def cell_forward(mode, input, hx, cx, w_ih, w_hh, b_ih, b_hh):
    """One step of a cell on a batched ``(B, I)`` input; returns ``(h', c')``."""
    res = _layer(mode, input.unsqueeze(0), hx, cx, (w_ih, w_hh, b_ih, b_hh, None), None,
                 False)
    h = res[1]
    c = res[2] if mode == "LSTM" else None
    return h, c
