"""The older spectral normalization: ``spectral_norm`` and ``remove_spectral_norm`` (a
forward pre-hook dividing ``weight_orig`` by its largest singular value, estimated by
power iteration with the buffers ``weight_u`` and ``weight_v``).

:func:`ember.nn.utils.parametrizations.spectral_norm` is the newer form; this one is
kept, as in PyTorch, for models and checkpoints written with it (``state_dict`` keys
``<name>_orig``, ``<name>_u``, ``<name>_v``, and the metadata version PyTorch writes).
"""

from __future__ import annotations

from ember._ops.linalg import dot, mv
from ember.autograd.grad_mode import no_grad
from ember.nn import functional as F
from ember.nn.modules.module import RemovableHandle
from ember.nn.parameter import Parameter, UninitializedParameter

__all__ = ["SpectralNorm", "SpectralNormLoadStateDictPreHook", "SpectralNormStateDictHook",
           "spectral_norm", "remove_spectral_norm"]


class SpectralNorm:
    """The forward pre-hook of :func:`spectral_norm`.

    Invariant between calls: ``u = normalize(W @ v)``, and ``sigma = u @ W @ v`` is the
    estimate of the largest singular value of ``W`` (``weight_orig`` as a matrix).
    ``_version`` 1 is the ``state_dict`` layout with ``<name>_v`` stored (PyTorch 1.1+).
    """

    _version: int = 1

    def __init__(self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight):
        """``weight`` as a matrix with ``dim`` first and the other dims flattened."""
        mat = weight
        if self.dim != 0:
            mat = mat.permute(self.dim, *[d for d in range(mat.dim()) if d != self.dim])
        return mat.reshape(mat.size(0), -1)

    def compute_weight(self, module, do_power_iteration: bool):
        """``weight_orig / sigma``; with ``do_power_iteration`` the buffers ``u`` and ``v``
        are first refined (in place) by ``n_power_iterations`` steps."""
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    v.copy_(F.normalize(mv(mat.t(), u), dim=0, eps=self.eps))
                    u.copy_(F.normalize(mv(mat, v), dim=0, eps=self.eps))
                # clones: the graph of this forward keeps these values even when the
                # buffers change in the next one
                u = u.clone()
                v = v.clone()
        sigma = dot(u, mv(mat, v))
        return weight / sigma

    def remove(self, module) -> None:
        """Put back ``<name>`` as one parameter holding the normalized weight."""
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs) -> None:
        setattr(module, self.name,
                self.compute_weight(module, do_power_iteration=module.training))

    def _solve_v_and_rescale(self, weight_mat, u, target_sigma):
        # a v with u = normalize(W @ v) and u @ W @ v = sigma (pinverse: W^T W may be
        # singular)
        v = (weight_mat.t().mm(weight_mat).pinverse() @ weight_mat.t() @ u.unsqueeze(1))
        v = v.squeeze(1)
        return v * (target_sigma / dot(u, mv(weight_mat, v)))

    @staticmethod
    def apply(module, name: str, n_power_iterations: int, dim: int,
              eps: float) -> SpectralNorm:
        """Register the normalization of ``module.<name>``: the parameter becomes
        ``<name>_orig``, random unit ``u`` and ``v`` become buffers, and the hooks are
        added."""
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two spectral_norm hooks on the same parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        if isinstance(weight, UninitializedParameter):
            raise ValueError(
                "The module passed to `SpectralNorm` can't have uninitialized parameters. "
                "Make sure to run the dummy forward before applying spectral normalization")
        with no_grad():
            h, w = fn.reshape_weight_to_matrix(weight).shape
            u = F.normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=fn.eps)
            v = F.normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        # a plain attribute until the first forward (code may read module.weight)
        setattr(module, fn.name, weight.detach())
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        module.register_state_dict_post_hook(SpectralNormStateDictHook(fn))
        handle = RemovableHandle(module._load_state_dict_pre_hooks)
        module._load_state_dict_pre_hooks[handle.id] = SpectralNormLoadStateDictPreHook(fn)
        return fn


class SpectralNormLoadStateDictPreHook:
    """Loads a ``state_dict`` of the layout before version 1 (``<name>`` stored,
    ``<name>_v`` not): ``v`` is solved from ``W_orig @ v = u`` and rescaled."""

    def __init__(self, fn) -> None:
        self.fn = fn

    def __call__(self, state_dict, prefix, local_metadata, strict, missing_keys,
                 unexpected_keys, error_msgs) -> None:
        fn = self.fn
        version = local_metadata.get("spectral_norm", {}).get(fn.name + ".version", None)
        if version is not None and version >= 1:
            return
        key = prefix + fn.name
        if version is None and key not in state_dict and all(
                key + s in state_dict for s in ("_orig", "_u", "_v")):
            return  # the current layout without its metadata
        missing = [key + s for s in ("_orig", "", "_u") if key + s not in state_dict]
        if missing:
            if strict:
                missing_keys.extend(missing)
            return
        from ember._ops.creation import tensor as _tensor

        def as_tensor(value):
            return value if hasattr(value, "_data") else _tensor(value.detach().cpu().numpy())

        with no_grad():
            weight_orig = as_tensor(state_dict[key + "_orig"])
            weight = as_tensor(state_dict.pop(key))
            sigma = (weight_orig / weight).mean()
            mat = fn.reshape_weight_to_matrix(weight_orig)
            u = as_tensor(state_dict[key + "_u"])
            state_dict[key + "_v"] = fn._solve_v_and_rescale(mat, u, sigma)


class SpectralNormStateDictHook:
    """Writes ``spectral_norm.<name>.version`` into the module's ``state_dict`` metadata."""

    def __init__(self, fn) -> None:
        self.fn = fn

    def __call__(self, module, state_dict, prefix, local_metadata) -> None:
        meta = local_metadata.setdefault("spectral_norm", {})
        key = self.fn.name + ".version"
        if key in meta:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        meta[key] = self.fn._version


def spectral_norm(module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None):
    r"""Spectral normalization of a parameter: ``W_SN = W / sigma(W)``.

    ``sigma`` is the largest singular value of the parameter (reshaped to a matrix with
    ``dim`` first), estimated by power iteration: every training forward runs
    ``n_power_iterations`` steps, whose vectors are kept in the buffers ``<name>_u`` and
    ``<name>_v``; the parameter itself becomes ``<name>_orig``.

    Args:
        module (nn.Module): the module holding the parameter.
        name (str, optional): the parameter's name. Default: ``"weight"``.
        n_power_iterations (int, optional): power iterations per training forward.
            Default: 1.
        eps (float, optional): for numerical stability of the norms. Default: 1e-12.
        dim (int, optional): the dim of the output channels; ``None`` is 1 for the
            ``ConvTranspose*d`` layers and 0 otherwise.

    Returns:
        The module, with the hooks.

    Examples::

        >>> m = nn.utils.spectral_norm(nn.Linear(20, 40))
        >>> m.weight_u.size()
        ember.Size([40])
    """
    if dim is None:
        from ember.nn.modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d

        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d,
                                       ConvTranspose3d)) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module, name: str = "weight"):
    """Remove the spectral normalization of :func:`spectral_norm` from ``module``.

    Args:
        module (Module): the module.
        name (str, optional): the name of the normalized parameter. Default: ``"weight"``.
    """
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            break
    else:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    for hooks, kind in ((module._state_dict_hooks, SpectralNormStateDictHook),
                        (module._load_state_dict_pre_hooks, SpectralNormLoadStateDictPreHook)):
        for k, hook in hooks.items():
            if isinstance(hook, kind) and hook.fn.name == name:
                del hooks[k]
                break
    return module
