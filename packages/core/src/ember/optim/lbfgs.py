"""L-BFGS, with an optional strong-Wolfe line search."""

from __future__ import annotations

from ember._backend import backend_of
from ember._C import _core
from ember._tensor import Tensor
from ember.autograd.grad_mode import enable_grad, no_grad
from ember.optim.optimizer import Optimizer, _check_lr, _to_scalar

__all__ = ["LBFGS"]

# NOTE [ L-BFGS on arrays ]
# The algorithm works on one flat vector holding every parameter (complex ones as their
# real view). It runs on the arrays of the parameters' backend, with their dtype: inner
# products are 0-d values of that dtype (NumPy scalars on the CPU) and mix with Python
# numbers as PyTorch's 0-d tensors do, so the iterates follow PyTorch's. Whatever the
# state keeps between steps is stored as tensors (or Python numbers), as in PyTorch, so
# that state dicts go back and forth.


def _as_tensor(x):
    """Array values kept in the state become tensors (0-d ones for scalars); Python
    numbers stay numbers."""
    if x is None or isinstance(x, (bool, int, float, Tensor)):
        return x
    return _core.make_tensor_from_array(x)


def _as_value(x):
    """The inverse of ``_as_tensor``: 0-d tensors become scalars of their dtype, other
    tensors their arrays."""
    if isinstance(x, Tensor):
        data = x._data
        return data[()] if data.ndim == 0 else data
    return x


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    # Minimum of the cubic interpolating two points with values and derivatives
    # (from torch/optim's polyinterp.lua, as PyTorch ports it).
    if bounds is not None:
        xmin_bound, xmax_bound = bounds
    else:
        xmin_bound, xmax_bound = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1**2 - g1 * g2
    if d2_square >= 0:
        d2 = d2_square**0.5
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9,
                  max_ls=25):
    # Line search for a step satisfying the strong Wolfe conditions (from
    # torch/optim's lswolfe.lua, as PyTorch ports it): bracket, then zoom.
    xp = backend_of(d).xp
    d_norm = xp.abs(d).max()
    g = g.copy()
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = g_new.dot(d)

    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket = [t_prev, t]
            bracket_f = [f_prev, f_new]
            bracket_g = [g_prev, g_new.copy()]
            bracket_gtd = [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket = [t]
            bracket_f = [f_new]
            bracket_g = [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket = [t_prev, t]
            bracket_f = [f_prev, f_new]
            bracket_g = [g_prev, g_new.copy()]
            bracket_gtd = [gtd_prev, gtd_new]
            break
        # interpolate
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                               bounds=(min_step, max_step))
        t_prev = tmp
        f_prev = f_new
        g_prev = g_new.copy()
        gtd_prev = gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1

    if ls_iter == max_ls:
        bracket = [0, t]
        bracket_f = [f, f_new]
        bracket_g = [g, g_new]

    # zoom: refine the bracket until a point satisfies the conditions
    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1],
                               bracket_f[1], bracket_gtd[1])
        # A trial too close to the bracket's ends (twice in a row, or outside) moves to
        # 0.1 of the bracket's length from the nearest end.
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                if abs(t - max(bracket)) < abs(t - min(bracket)):
                    t = max(bracket) - eps
                else:
                    t = min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False

        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1

        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            # Armijo condition not satisfied or not lower than the lowest point
            bracket[high_pos] = t
            bracket_f[high_pos] = f_new
            bracket_g[high_pos] = g_new.copy()
            bracket_gtd[high_pos] = gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True  # Wolfe conditions satisfied
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                # old high becomes new low
                bracket[high_pos] = bracket[low_pos]
                bracket_f[high_pos] = bracket_f[low_pos]
                bracket_g[high_pos] = bracket_g[low_pos]
                bracket_gtd[high_pos] = bracket_gtd[low_pos]
            # new point becomes new low
            bracket[low_pos] = t
            bracket_f[low_pos] = f_new
            bracket_g[low_pos] = g_new.copy()
            bracket_gtd[low_pos] = gtd_new

    t = bracket[low_pos]
    f_new = bracket_f[low_pos]
    g_new = bracket_g[low_pos]
    return f_new, g_new, t, ls_func_evals


class LBFGS(Optimizer):
    """Implements the L-BFGS algorithm (heavily inspired by minFunc, as PyTorch's).

    .. warning::
        This optimizer doesn't support per-parameter options and parameter groups
        (there can be only one), and ``step`` needs a closure that clears the
        gradients, computes the loss, calls ``backward`` and returns the loss.

    .. note::
        It keeps ``param_bytes * (history_size + 1)`` bytes of state: with a large
        model, lower the history size.

    Args:
        params (iterable): parameters to optimize
        lr (float, Tensor, optional): learning rate (default: 1)
        max_iter (int, optional): maximal number of iterations per optimization step
            (default: 20)
        max_eval (int, optional): maximal number of function evaluations per
            optimization step (default: max_iter * 1.25)
        tolerance_grad (float, optional): termination tolerance on first-order
            optimality (default: 1e-7)
        tolerance_change (float, optional): termination tolerance on function value or
            parameter changes (default: 1e-9)
        history_size (int, optional): update history size (default: 100)
        line_search_fn (str, optional): None or ``"strong_wolfe"`` (default: None)

    Example::

        >>> optimizer = ember.optim.LBFGS([x], line_search_fn="strong_wolfe")
        >>> def closure():
        ...     optimizer.zero_grad()
        ...     loss = f(x)
        ...     loss.backward()
        ...     return loss
        >>> optimizer.step(closure)
    """

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7,
                 tolerance_change=1e-9, history_size=100, line_search_fn=None) -> None:
        _check_lr(lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {
            "lr": lr, "max_iter": max_iter, "max_eval": max_eval,
            "tolerance_grad": tolerance_grad, "tolerance_change": tolerance_change,
            "history_size": history_size, "line_search_fn": line_search_fn,
        }
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options "
                             "(parameter groups)")
        self._params = self.param_groups[0]["params"]
        self._numel_cache = None

    def _numel(self) -> int:
        if self._numel_cache is None:
            self._numel_cache = sum(2 * p.numel() if p.is_complex() else p.numel()
                                    for p in self._params)
        return self._numel_cache

    @property
    def _xp(self):
        return backend_of(self._params[0]._data).xp

    def _gather_flat_grad(self):
        xp = self._xp
        views = []
        for p in self._params:
            if p.grad is None:
                view = xp.zeros(p.numel(), dtype=p._data.dtype)
            else:
                view = p.grad._data.reshape(-1)
            if view.dtype.kind == "c":
                view = xp.stack([view.real, view.imag], axis=-1).reshape(-1)
            views.append(view)
        return xp.concatenate(views, 0)

    def _add_grad(self, step_size, update) -> None:
        offset = 0
        for p in self._params:
            data = p._data
            if data.dtype.kind == "c":
                numel = 2 * data.size
                chunk = update[offset:offset + numel].reshape(data.shape + (2,))
                data.real[...] += step_size * chunk[..., 0]
                data.imag[...] += step_size * chunk[..., 1]
            else:
                numel = data.size
                data += step_size * update[offset:offset + numel].reshape(data.shape)
            p._bump_version()
            offset += numel
        if offset != self._numel():
            raise AssertionError(f"Expected offset {offset} to equal {self._numel()}")

    def _clone_param(self):
        return [p._data.copy() for p in self._params]

    def _set_param(self, params_data) -> None:
        for p, pdata in zip(self._params, params_data):
            p._data[...] = pdata
            p._bump_version()

    def _directional_evaluate(self, closure, x, t, d):
        self._add_grad(t, d)
        loss = float(closure())
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    def step(self, closure):
        """Perform a single optimization step (up to ``max_iter`` iterations).

        Args:
            closure (Callable): a closure that reevaluates the model and returns the
                loss.
        """
        with no_grad():
            return self._step(closure)

    def _step(self, closure):
        if len(self.param_groups) != 1:
            raise AssertionError(
                f"Expected exactly one param_group, but got {len(self.param_groups)}")
        closure = enable_grad()(closure)
        xp = self._xp

        group = self.param_groups[0]
        lr = _to_scalar(group["lr"])
        max_iter = group["max_iter"]
        max_eval = group["max_eval"]
        tolerance_grad = group["tolerance_grad"]
        tolerance_change = group["tolerance_change"]
        line_search_fn = group["line_search_fn"]
        history_size = group["history_size"]

        # L-BFGS has only global state, kept as the first parameter's (so that
        # load_state_dict casts it like per-parameter state).
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1

        flat_grad = self._gather_flat_grad()
        opt_cond = xp.abs(flat_grad).max() <= tolerance_grad
        if opt_cond:
            return orig_loss

        d = _as_value(state.get("d"))
        t = _as_value(state.get("t"))
        old_dirs = [_as_value(v) for v in state.get("old_dirs") or []]
        old_stps = [_as_value(v) for v in state.get("old_stps") or []]
        ro = [_as_value(v) for v in state.get("ro") or []]
        H_diag = _as_value(state.get("H_diag"))
        prev_flat_grad = _as_value(state.get("prev_flat_grad"))
        prev_loss = state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1

            # -- the descent direction ---------------------------------------------
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = y.dot(s)
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / y.dot(y)

                # the two-loop recursion: d = -H g with the approximate inverse Hessian
                num_old = len(old_dirs)
                if "al" not in state:
                    state["al"] = [None] * history_size
                al = [_as_value(v) for v in state["al"]]
                if len(al) < num_old:
                    al += [None] * (num_old - len(al))
                q = -flat_grad
                for i in range(num_old - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q += (-al[i]) * old_dirs[i]
                d = r = q * H_diag
                for i in range(num_old):
                    be_i = old_dirs[i].dot(r) * ro[i]
                    r += (al[i] - be_i) * old_stps[i]
                state["al"] = [_as_tensor(v) for v in al]

            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.copy()
            else:
                prev_flat_grad[...] = flat_grad
            prev_loss = loss

            # -- the step length --------------------------------------------------
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / xp.abs(flat_grad).sum()) * lr
            else:
                t = lr

            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:
                break  # the directional derivative is below tolerance

            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = self._clone_param()

                def obj_func(x, t, d):
                    return self._directional_evaluate(closure, x, t, d)

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    obj_func, x_init, t, d, loss, flat_grad, gtd,
                    max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = xp.abs(flat_grad).max() <= tolerance_grad
            else:
                # no line search: a fixed step
                self._add_grad(t, d)
                if n_iter != max_iter:
                    # re-evaluate the function only if not in the last iteration (in a
                    # stochastic setting there is no use in re-evaluating it here)
                    loss = float(closure())
                    flat_grad = self._gather_flat_grad()
                    opt_cond = xp.abs(flat_grad).max() <= tolerance_grad
                    ls_func_evals = 1

            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            # -- the stopping conditions -----------------------------------------
            if n_iter == max_iter:
                break
            if current_evals >= max_eval:
                break
            if opt_cond:
                break
            if xp.abs(d * t).max() <= tolerance_change:
                break  # lack of progress
            if abs(loss - prev_loss) < tolerance_change:
                break

        state["d"] = _as_tensor(d)
        state["t"] = _as_tensor(t)
        state["old_dirs"] = [_as_tensor(v) for v in old_dirs]
        state["old_stps"] = [_as_tensor(v) for v in old_stps]
        state["ro"] = [_as_tensor(v) for v in ro]
        state["H_diag"] = _as_tensor(H_diag)
        state["prev_flat_grad"] = _as_tensor(prev_flat_grad)
        state["prev_loss"] = prev_loss
        return orig_loss
