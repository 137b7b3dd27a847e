"""Parametrizations built on ``nn.utils.parametrize``: ``weight_norm`` and
``spectral_norm``, with PyTorch's module layout and ``state_dict`` keys."""

from __future__ import annotations

from ember.autograd.grad_mode import no_grad
from ember.nn.modules.module import Module
from ember.nn.utils import parametrize

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _norm_except_dim(v, dim: int):
    """The 2-norm of ``v`` over every dim but ``dim``, kept as size-1 dims (PyTorch's
    ``norm_except_dim``); ``dim=-1`` means the norm of the whole tensor (a 0-d tensor)."""
    from ember._ops.reduction import vector_norm

    if dim == -1:
        return vector_norm(v)
    dim = dim + v.ndim if dim < 0 else dim
    others = tuple(d for d in range(v.ndim) if d != dim)
    if not others:
        return v.abs()
    return vector_norm(v, 2, dim=others, keepdim=True)


def _normalize(x, eps: float):
    """``F.normalize(x, dim=0, eps=eps)`` for a vector."""
    return x / x.norm(2, 0, True).clamp_min(eps)


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        if dim is None:
            dim = -1
        self.dim = dim

    def forward(self, weight_g, weight_v):
        return weight_v * (weight_g / _norm_except_dim(weight_v, self.dim))

    def right_inverse(self, weight):
        weight_g = _norm_except_dim(weight, self.dim)
        weight_v = weight
        return weight_g, weight_v


def weight_norm(module: Module, name: str = "weight", dim: int = 0):
    r"""Apply weight normalization to a parameter of ``module``:
    :math:`\mathbf{w} = g \dfrac{\mathbf{v}}{\|\mathbf{v}\|}`.

    The magnitude ``g`` (``parametrizations.<name>.original0``) and the direction ``v``
    (``parametrizations.<name>.original1``) are the new parameters; the norm is taken over
    every dim but ``dim`` (``dim=None``: over the whole tensor). Checkpoints of the old
    ``<name>_g`` / ``<name>_v`` form load into it.

    Args:
        module (Module): containing module
        name (str, optional): name of weight parameter
        dim (int, optional): dimension over which to compute the norm

    Returns:
        The original module with the weight norm parametrization.

    Example::

        >>> m = weight_norm(nn.Linear(20, 40), name="weight")
        >>> m.parametrizations.weight.original0.size()
        ember.Size([40, 1])
    """
    _weight_norm = _WeightNorm(dim)
    parametrize.register_parametrization(module, name, _weight_norm, unsafe=True)

    def _weight_norm_compat_hook(module, state_dict, prefix, local_metadata, strict,
                                 missing_keys, unexpected_keys, error_msgs) -> None:
        g_key = f"{prefix}{name}_g"
        v_key = f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            original0 = state_dict.pop(g_key)
            original1 = state_dict.pop(v_key)
            state_dict[f"{prefix}parametrizations.{name}.original0"] = original0
            state_dict[f"{prefix}parametrizations.{name}.original1"] = original1

    module.register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            # u and v are buffers: they persist across calls (and in the state_dict), so
            # one power iteration per training step converges over time
            self.n_power_iterations = n_power_iterations
            with no_grad():
                weight_mat = self._reshape_weight_to_matrix(weight)
                h, w = weight_mat.size()
                u = weight_mat.new_empty(h).normal_(0, 1)
                v = weight_mat.new_empty(w).normal_(0, 1)
                self.register_buffer("_u", _normalize(u, self.eps))
                self.register_buffer("_v", _normalize(v, self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            # the dim whose size is the number of output rows goes first
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat, n_power_iterations: int) -> None:
        # u and v are updated in place (the forward pass uses clones of them)
        with no_grad():
            for _ in range(n_power_iterations):
                self._u.copy_(_normalize(weight_mat.mv(self._v), self.eps))
                self._v.copy_(_normalize(weight_mat.mH.mv(self._u), self.eps))

    def forward(self, weight):
        if weight.ndim == 1:
            return _normalize(weight, self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = u.vdot(weight_mat.mv(v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    r"""Apply spectral normalization to a parameter of ``module``:
    :math:`\mathbf{W}_{SN} = \dfrac{\mathbf{W}}{\sigma(\mathbf{W})}`.

    :math:`\sigma` is estimated by power iteration on the weight reshaped to a matrix
    (``dim`` first); the vectors ``u`` and ``v`` are buffers of the parametrization
    (``parametrizations.<name>.0._u`` / ``._v``). In training mode each access runs
    ``n_power_iterations`` steps; in eval mode the stored vectors are used as they are.

    Args:
        module (nn.Module): containing module
        name (str, optional): name of weight parameter. Default: ``"weight"``.
        n_power_iterations (int, optional): number of power iterations per access
        eps (float, optional): epsilon for numerical stability in calculating norms
        dim (int, optional): dimension corresponding to number of outputs. Default: ``0``,
            except for ConvTranspose modules, where it is ``1``

    Returns:
        The original module with a new parametrization registered to the specified weight

    Example::

        >>> snm = spectral_norm(nn.Linear(20, 40))
    """
    from ember._C import _core

    weight = getattr(module, name, None)
    if not isinstance(weight, _core.TensorBase):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        # ConvTranspose weights are (in, out, ...): the outputs are dim 1
        conv_transpose = ("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d")
        dim = 1 if any(c.__name__ in conv_transpose and c.__module__.startswith("ember.nn")
                       for c in type(module).__mro__) else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


from ember.nn.utils._orthogonal import orthogonal  # noqa: E402
