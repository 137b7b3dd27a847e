"""The differentiation transforms of ``ember.func``: grad, grad_and_value, vjp, jvp, jacrev,
jacfwd, hessian, linearize.

NOTE [ Function transforms on a tape ]
PyTorch's torch.func wraps tensors in per-level wrappers; ember has one tape (the autograd
graph) and builds the transforms on it:

- A transform makes each differentiated input a fresh node of the graph: a detached leaf
  that requires grad, or, when the input is already part of a graph (an outer transform's
  input, a parameter that requires grad), a view of it (``view_as``), so that
  ``grad(lambda x: grad(lambda y: x * y)(x))`` tells the inner ``y`` from the outer ``x``.
- After the forward, a walk of its graph says whether the result depends on anything
  outside this transform (a leaf it did not make). Only then is the backward recorded
  (``create_graph=True``) and the results left attached, so that an outer transform or an
  outer ``backward()`` can differentiate them; otherwise they come back detached, as
  PyTorch returns them.
- Forward mode (``jvp``, ``jacfwd``, ``linearize``, ``hessian``) uses the double-vjp trick:
  ``g(u) = J^T u`` is recorded for a dummy cotangent ``u``, and ``J v`` is the gradient of
  ``<g(u), v>`` with respect to ``u``. It needs every op's backward to be differentiable
  in its incoming gradient, which ember's backward formulas are (they are written on
  Tensors). ``func`` runs once per call, whatever the number of tangents.
"""

from __future__ import annotations

import functools

from ember._C import _core
from ember._C._core import AccumulateGrad, TensorBase
from ember.autograd.grad_mode import enable_grad
from ember.func._pytree import tree_flatten, tree_map, tree_unflatten

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "linearize"]

_HOOKS_MESSAGE = ("torch.func transforms don't yet support saved tensor hooks. Please open an "
                  "issue with your use case.")


# ----------------------------------------------------------------------------
# helpers

def _validate_argnum(argnum, num_args):
    if not isinstance(argnum, int) or isinstance(argnum, bool):
        raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
    if 0 <= argnum < num_args:
        return argnum
    if -num_args <= argnum < 0:
        return argnum + num_args
    raise RuntimeError(f"Got argnum={argnum}, but only {num_args} positional inputs")


def _check_argnums(argnums, num_args):
    """``argnums`` validated and wrapped into range (an int or a tuple of ints)."""
    if isinstance(argnums, int) and not isinstance(argnums, bool):
        return _validate_argnum(argnums, num_args)
    if isinstance(argnums, tuple):
        if len(argnums) == 0:
            raise RuntimeError("argnums must be non-empty")
        wrapped = tuple(_validate_argnum(a, num_args) for a in argnums)
        if len(set(wrapped)) != len(wrapped):
            raise RuntimeError(f"argnums elements must be unique, got {argnums}")
        return wrapped
    raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")


def _slice_argnums(args, argnums):
    if isinstance(argnums, int):
        return args[argnums]
    return tuple(args[i] for i in argnums)


def _replace_argnums(args, argnums, new):
    args = list(args)
    if isinstance(argnums, int):
        args[argnums] = new
    else:
        for i, v in zip(argnums, new, strict=True):
            args[i] = v
    return tuple(args)


def _make_differentiable(x):
    """A fresh graph node standing for ``x`` (see NOTE [ Function transforms on a tape ])."""
    if not isinstance(x, TensorBase):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
    with enable_grad():
        if x.requires_grad:
            return x.view_as(x)
        return x.detach().requires_grad_()


def _own_leaves(flat):
    return {id(t) for t in flat if t.grad_fn is None}


def _reaches_outside(tensors, own) -> bool:
    """True if the graph of ``tensors`` reaches a leaf whose id is not in ``own``."""
    stack = []
    for t in tensors:
        if not isinstance(t, TensorBase) or not t.requires_grad:
            continue
        if t.grad_fn is None:
            if id(t) not in own:
                return True
            continue
        stack.append(t.grad_fn)
    seen = set()
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        if type(node) is AccumulateGrad:
            v = node.variable
            if v is None or id(v) not in own:
                return True
            continue
        for nxt in node._next or ():
            if nxt is not None and nxt not in seen:
                stack.append(nxt)
    return False


def _detach_if_local(tree, own):
    """``tree`` with each tensor detached unless its graph reaches outside the transform."""
    def fix(x):
        if isinstance(x, TensorBase) and x.requires_grad and not _reaches_outside((x,), own):
            return x.detach()
        return x
    return tree_map(fix, tree)


def _zeros_like(t):
    from ember._ops.creation import zeros_like

    return zeros_like(t)


def _grads(outputs, inputs, grad_outputs, create_graph, retain_graph=True):
    """``autograd.grad`` with zeros for inputs the outputs do not depend on."""
    from ember.autograd import grad as autograd_grad

    pairs = [(o, g) for o, g in zip(outputs, grad_outputs, strict=True)
             if isinstance(o, TensorBase) and o.requires_grad]
    if not pairs or not inputs:
        return tuple(_zeros_like(i) for i in inputs)
    res = autograd_grad([p[0] for p in pairs], inputs, [p[1] for p in pairs],
                        retain_graph=retain_graph, create_graph=create_graph, allow_unused=True)
    return tuple(_zeros_like(i) if r is None else r for i, r in zip(inputs, res, strict=True))


def _split_aux(output, has_aux, api):
    if not has_aux:
        return output, None
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) "
                           "if has_aux is True")
    return output


class _Call:
    """One call of ``func`` on differentiable copies of the inputs at ``argnums``."""

    def __init__(self, func, args, kwargs, argnums, api):
        argnums = _check_argnums(argnums, len(args))
        diff = _slice_argnums(args, argnums)
        self.flat_in, self.in_spec = tree_flatten(diff)
        self.outer_grad = _core.is_grad_enabled()
        with _no_saved_hooks(), enable_grad():
            self.flat_in = [_make_differentiable(x) for x in self.flat_in]
            new_args = _replace_argnums(args, argnums,
                                        tree_unflatten(self.flat_in, self.in_spec))
            self.output = func(*new_args, **kwargs)
        self.own = _own_leaves(self.flat_in)
        self.api = api

    def create_graph(self, tensors) -> bool:
        return self.outer_grad and _reaches_outside(tensors, self.own)


def _no_saved_hooks():
    from ember.autograd.graph import disable_saved_tensors_hooks

    return disable_saved_tensors_hooks(_HOOKS_MESSAGE)


def _wraps(func):
    def deco(wrapper):
        try:
            return functools.wraps(func)(wrapper)
        except (AttributeError, TypeError):
            return wrapper
    return deco


# ----------------------------------------------------------------------------
# grad and grad_and_value

def _grad_and_value(func, argnums, has_aux, args, kwargs):
    api = "grad_and_value(f)(*args)"
    call = _Call(func, args, kwargs, argnums, api)
    output, aux = _split_aux(call.output, has_aux, api)
    if not isinstance(output, TensorBase):
        raise RuntimeError(f"{api}: Expected f(*args) to return a Tensor, got {type(output)}")
    if output.dim() != 0:
        raise RuntimeError(
            f"{api}: Expected f(*args) to return a scalar Tensor, got tensor with "
            f"{output.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
    cg = call.create_graph((output,))
    with enable_grad():
        flat_grads = _grads((output,), call.flat_in, (None,), create_graph=cg,
                            retain_graph=cg)
    grads = tree_unflatten(list(flat_grads), call.in_spec)
    output = _detach_if_local(output, call.own)
    if has_aux:
        return grads, (output, _detach_if_local(aux, call.own))
    return grads, output


def grad_and_value(func, argnums=0, has_aux=False):
    r"""Return a function computing both the gradient of ``func`` and its value.

    Args:
        func (Callable): a function of one or more arguments returning a scalar tensor
            (and, with ``has_aux``, a second, auxiliary value).
        argnums (int or Tuple[int]): the positional argument(s) to differentiate with
            respect to. Each may be a tensor or a pytree (tuple, list, dict) of tensors.
            Default: 0.
        has_aux (bool): ``func`` returns ``(output, aux)``; ``aux`` is passed through.
            Default: False.

    Returns:
        A function with the signature of ``func`` returning ``(grad, value)`` (or
        ``(grad, (value, aux))``), ``grad`` shaped like the differentiated argument(s).

    Examples::

        >>> x = ember.tensor([1.0, 2.0])
        >>> g, v = ember.func.grad_and_value(lambda x: (x ** 2).sum())(x)
        >>> g, v
        (tensor([2., 4.]), tensor(5.))
    """
    @_wraps(func)
    def wrapper(*args, **kwargs):
        return _grad_and_value(func, argnums, has_aux, args, kwargs)
    return wrapper


def grad(func, argnums=0, has_aux=False):
    r"""Return a function computing the gradient of ``func`` with respect to its
    ``argnums`` argument(s).

    ``grad`` composes with the other transforms (``grad(grad(f))``, ``vmap(grad(f))``,
    ``jacrev(grad(f))``) and with ordinary autograd: where ``func`` uses tensors that
    require grad outside the transform, the gradient it returns is differentiable with
    respect to them. Grad mode outside the call does not matter; ``ember.no_grad`` inside
    ``func`` is respected.

    Args:
        func (Callable): a function returning a scalar tensor (with ``has_aux``, a
            tuple ``(scalar, aux)``).
        argnums (int or Tuple[int]): which positional arguments to differentiate with
            respect to; each may be a pytree of tensors. Default: 0.
        has_aux (bool): ``func`` returns ``(output, aux)`` and the transformed function
            returns ``(grad, aux)``. Default: False.

    Examples::

        >>> x = ember.tensor(0.5)
        >>> ember.func.grad(ember.sin)(x)                     # cos(0.5)
        tensor(0.8776)
        >>> ember.func.grad(ember.func.grad(ember.sin))(x)    # -sin(0.5)
        tensor(-0.4794)
    """
    @_wraps(func)
    def wrapper(*args, **kwargs):
        g, value = _grad_and_value(func, argnums, has_aux, args, kwargs)
        if has_aux:
            return g, value[1]
        return g
    return wrapper


# ----------------------------------------------------------------------------
# vjp

def vjp(func, *primals, has_aux=False):
    r"""The output of ``func(*primals)`` and a function computing vector-Jacobian products.

    Args:
        func (Callable): a function of tensors (or pytrees of tensors) returning a tensor or
            a pytree of tensors (with ``has_aux``, ``(output, aux)``).
        *primals: the arguments of ``func``; all are differentiated.
        has_aux (bool): ``func`` returns ``(output, aux)``. Default: False.

    Returns:
        ``(output, vjp_fn)`` (``(output, vjp_fn, aux)`` with ``has_aux``).
        ``vjp_fn(cotangents)``, with ``cotangents`` structured like ``output``, returns a
        tuple with one gradient per primal (each structured like that primal). It may be
        called any number of times.

    Examples::

        >>> x = ember.tensor([1.0, 2.0])
        >>> out, vjp_fn = ember.func.vjp(ember.sin, x)
        >>> vjp_fn(ember.ones(2))                     # (cos(x),)
        (tensor([ 0.5403, -0.4161]),)
    """
    api = "vjp(f, *primals)"
    argnums = tuple(range(len(primals)))
    if not primals:
        raise RuntimeError(f"{api}: Expected primals to be a non-empty tuple of Tensors.")
    call = _Call(func, primals, {}, argnums, api)
    output, aux = _split_aux(call.output, has_aux, "vjp(f, *primals)")
    flat_out, out_spec = tree_flatten(output)
    for o in flat_out:
        if not isinstance(o, TensorBase):
            raise RuntimeError(f"{api}: expected f(*primals) to return only tensors, got "
                               f"unsupported type {type(o)}")
        if o.dtype.is_floating_point or o.dtype.is_complex:
            continue
        raise RuntimeError("vjp(f, ...): All outputs of f must be floating-point or complex "
                           f"Tensors, got Tensor with dtype {o.dtype}")

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        flat_ct, ct_spec = tree_flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError(
                "Expected pytree structure of cotangents to be the same as pytree structure "
                f"of outputs to the function. cotangents: {ct_spec}, primal output: {out_spec}")
        for o, c in zip(flat_out, flat_ct, strict=True):
            if not isinstance(c, TensorBase):
                raise RuntimeError(f"vjp_fn: Expected cotangents to only contain Tensors, got "
                                   f"{type(c)}")
            if tuple(c.shape) != tuple(o.shape):
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[0] has a shape of {c.shape} and output[0] "
                    f"has a shape of {o.shape}.")
        if create_graph is None:
            create_graph = _core.is_grad_enabled() and (
                _reaches_outside(flat_out, call.own) or _reaches_outside(flat_ct, call.own))
        with enable_grad():
            flat_g = _grads(flat_out, call.flat_in, flat_ct, create_graph=create_graph,
                            retain_graph=retain_graph or create_graph)
        return tree_unflatten(list(flat_g), call.in_spec)

    output = _detach_if_local(output, call.own)
    if has_aux:
        return output, vjp_fn, _detach_if_local(aux, call.own)
    return output, vjp_fn


# ----------------------------------------------------------------------------
# forward mode by double vjp

class _Linearized:
    """``func`` run once at ``primals`` with ``g(u) = J^T u`` recorded, so that any number
    of Jacobian-vector products ``J v`` can be taken from it."""

    def __init__(self, func, args, argnums, api, has_aux=False, randomness=None):
        rng = _RandomnessCheck(randomness, api)
        call = _Call(func, args, {}, argnums, api)
        rng.check()
        output, aux = _split_aux(call.output, has_aux, api)
        flat_out, out_spec = tree_flatten(output)
        if not flat_out or (len(flat_out) == 1 and flat_out[0] is None):
            raise RuntimeError(f"{api}: Expected f to be a function that has non-empty output "
                               f"(got output = {flat_out})")
        for o in flat_out:
            if not isinstance(o, TensorBase):
                raise RuntimeError(f"{api}: expected f(*args) to return only tensors, got "
                                   f"unsupported type {type(o)}")
        self.call, self.flat_out, self.out_spec, self.aux = call, flat_out, out_spec, aux
        self.cg = call.create_graph(flat_out)
        self.dependent = [o.requires_grad for o in flat_out]
        with enable_grad():
            self.dummies = [_zeros_like(o).requires_grad_() if dep else None
                            for o, dep in zip(flat_out, self.dependent, strict=True)]
            pairs = [(o, u) for o, u in zip(flat_out, self.dummies, strict=True)
                     if u is not None]
            if pairs:
                from ember.autograd import grad as autograd_grad

                self.transposed = autograd_grad(
                    [p[0] for p in pairs], call.flat_in, [p[1] for p in pairs],
                    create_graph=True, allow_unused=True)
            else:
                self.transposed = (None,) * len(call.flat_in)

    def jvp(self, flat_tangents):
        """``J v`` for each output (flattened), for tangents ``v`` of the flat inputs."""
        from ember.autograd import grad as autograd_grad

        dummies = [u for u in self.dummies if u is not None]
        pairs = [(g, v) for g, v in zip(self.transposed, flat_tangents, strict=True)
                 if g is not None and g.requires_grad]
        res = [None] * len(self.flat_out)
        if pairs and dummies:
            cg = self.cg or any(isinstance(v, TensorBase) and v.requires_grad
                                for v in flat_tangents)
            with enable_grad():
                got = autograd_grad([p[0] for p in pairs], dummies, [p[1] for p in pairs],
                                    retain_graph=True, create_graph=cg, allow_unused=True)
            it = iter(got)
            for i, u in enumerate(self.dummies):
                if u is not None:
                    res[i] = next(it)
        return [_zeros_like(o) if r is None else r
                for o, r in zip(self.flat_out, res, strict=True)]

    def primal_out(self):
        return tree_unflatten([_detach_if_local(o, self.call.own) for o in self.flat_out],
                              self.out_spec)


def _check_tangents(api, flat_p, p_spec, tangents):
    flat_t, t_spec = tree_flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError(
            f"{api}: Expected primals and tangents to have the same python structure. For "
            "example, if primals is a tuple of 3 tensors, tangents also must be. Got primals "
            f"with structure {p_spec} and tangents with structure {t_spec}")
    for name, flat in (("primals", flat_p), ("tangents", flat_t)):
        if not flat:
            raise RuntimeError(f"{api}: Expected {name} to contain at least one Tensor.")
        for x in flat:
            if not isinstance(x, TensorBase):
                raise RuntimeError(f"{api}: Expected {name} to only contain Tensors, got "
                                   f"{type(x)}")
    for p, t in zip(flat_p, flat_t, strict=True):
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(
                f"{api}: Expected primals and tangents to have the same shapes, got a primal "
                f"of shape {tuple(p.shape)} and a tangent of shape {tuple(t.shape)}")
    return flat_t


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    r"""The output of ``func(*primals)`` and its Jacobian-vector product with ``tangents``.

    Forward-mode AD is computed here by the double-vjp trick (see NOTE [ Function
    transforms on a tape ] in ``ember/func/_transforms.py``): ``func`` runs once and two
    reverse passes give ``J v``. The numbers are those of forward mode.

    Args:
        func (Callable): a function of tensors returning a tensor or a pytree of tensors.
        primals (tuple): the arguments of ``func`` (a tuple; each a tensor or a pytree).
        tangents (tuple): one tangent per primal, of the same structure and shapes.
        strict (bool): raise if an output does not depend on the inputs. Default: False.
        has_aux (bool): ``func`` returns ``(output, aux)``. Default: False.

    Returns:
        ``(output, jvp_out)`` (``(output, jvp_out, aux)`` with ``has_aux``); ``jvp_out``
        is structured like ``output``.

    Examples::

        >>> x = ember.tensor([0.0, 1.0])
        >>> ember.func.jvp(ember.exp, (x,), (ember.ones(2),))
        (tensor([1.0000, 2.7183]), tensor([1.0000, 2.7183]))
    """
    api = "jvp(f, primals, tangents)"
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{api}: Expected primals to be a tuple. E.g. it should be valid to "
                           "call f(*primals).")
    flat_p, p_spec = tree_flatten(primals)
    flat_t = _check_tangents(api, flat_p, p_spec, tangents)
    lin = _Linearized(func, primals, tuple(range(len(primals))), api, has_aux)
    if strict and not all(lin.dependent):
        raise RuntimeError("jvp(f, primals, tangents, strict=True): The output of f is "
                           "independent of the inputs. This is not allowed with strict=True.")
    tangent_out = [_detach_if_local(t, lin.call.own) for t in lin.jvp(flat_t)]
    out = (lin.primal_out(), tree_unflatten(tangent_out, lin.out_spec))
    if has_aux:
        return out + (_detach_if_local(lin.aux, lin.call.own),)
    return out


def linearize(func, *primals):
    r"""The output of ``func(*primals)`` and a function computing Jacobian-vector products
    at ``primals`` without running ``func`` again.

    Args:
        func (Callable): a function of tensors returning a tensor or a pytree of tensors.
        *primals: the arguments of ``func``.

    Returns:
        ``(output, jvp_fn)``; ``jvp_fn(*tangents)`` returns ``J v`` structured like
        ``output``.

    Examples::

        >>> x = ember.tensor([0.0, 1.0])
        >>> out, jvp_fn = ember.func.linearize(ember.sin, x)
        >>> jvp_fn(ember.ones(2))
        tensor([1.0000, 0.5403])
    """
    api = "linearize(f, *primals)"
    flat_p, p_spec = tree_flatten(primals)
    lin = _Linearized(func, primals, tuple(range(len(primals))), api)

    def jvp_fn(*tangents):
        flat_t = _check_tangents("linearize", flat_p, p_spec, tangents)
        out = [_detach_if_local(t, lin.call.own) for t in lin.jvp(flat_t)]
        return tree_unflatten(out, lin.out_spec)

    return lin.primal_out(), jvp_fn


# ----------------------------------------------------------------------------
# Jacobians and the Hessian

def _error_if_complex(api, flat, is_input):
    for i, t in enumerate(flat):
        if isinstance(t, TensorBase) and t.dtype.is_complex:
            kind = "inputs" if is_input else "outputs"
            where = "input" if is_input else "output"
            raise RuntimeError(f"{api}: Expected all {kind} to be real but received complex "
                               f"tensor at flattened {where} idx: {i}")


def _one_hot_rows(t):
    """The rows of the identity, shaped like ``t``: one basis tensor per element."""
    from ember._ops.creation import eye

    n = t.numel()
    basis = eye(n, dtype=t.dtype, device=t.device)
    return [basis[i].reshape(t.shape) for i in range(n)]


def _stack_rows(rows, lead_shape, tail_shape, like):
    from ember._ops.creation import zeros
    from ember._ops.join import stack

    if not rows:
        return zeros(tuple(lead_shape) + tuple(tail_shape), dtype=like.dtype, device=like.device)
    return stack(rows).reshape(tuple(lead_shape) + tuple(tail_shape))


def _check_chunk_size(api, chunk_size):
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"{api}: `chunk_size` should be greater than 0.")


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    r"""Return a function computing the Jacobian of ``func`` by reverse-mode AD.

    ``func`` runs once; each row of the Jacobian is one vector-Jacobian product (one
    backward pass per output element, ``chunk_size`` rows at a time).

    Args:
        func (Callable): a function returning a tensor or a pytree of tensors.
        argnums (int or Tuple[int]): the argument(s) to differentiate with respect to.
            Default: 0.
        has_aux (bool): ``func`` returns ``(output, aux)``. Default: False.
        chunk_size (int, optional): how many rows to compute per pass; ember computes
            one row per backward pass whatever its value (it only bounds the memory
            PyTorch uses). Must be positive. Default: None.

    Returns:
        A function returning, for each output tensor of shape ``O`` and each
        differentiated input of shape ``I``, a Jacobian of shape ``O + I`` (a tuple over
        inputs when ``argnums`` is a tuple; structured like the outputs and inputs).

    Examples::

        >>> x = ember.tensor([1.0, 2.0])
        >>> ember.func.jacrev(ember.sin)(x)
        tensor([[ 0.5403,  0.0000],
                [ 0.0000, -0.4161]])
    """
    _check_chunk_size("jacrev", chunk_size)

    @_wraps(func)
    def wrapper(*args):
        flat_args, _ = tree_flatten(args)
        _error_if_complex("jacrev", flat_args, True)
        call = _Call(func, args, {}, argnums, "jacrev")
        output, aux = _split_aux(call.output, has_aux, "jacrev(f, ...)(*args)")
        flat_out, out_spec = tree_flatten(output)
        for o in flat_out:
            if not isinstance(o, TensorBase):
                raise RuntimeError(f"jacrev(f, ...)(*args): expected f(*args) to return only "
                                   f"tensors, got unsupported type {type(o)}")
        _error_if_complex("jacrev", flat_out, False)
        cg = call.create_graph(flat_out)
        per_output = []
        with enable_grad():
            for o in flat_out:
                rows = [[] for _ in call.flat_in]
                for e in _one_hot_rows(o):
                    gs = _grads((o,), call.flat_in, (e,), create_graph=cg)
                    for j, g in enumerate(gs):
                        rows[j].append(g)
                jacs = [_stack_rows(r, o.shape, x.shape, x)
                        for r, x in zip(rows, call.flat_in, strict=True)]
                jacs = [_detach_if_local(j, call.own) for j in jacs]
                per_output.append(tree_unflatten(jacs, call.in_spec))
        result = tree_unflatten(per_output, out_spec)
        if has_aux:
            return result, _detach_if_local(aux, call.own)
        return result

    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    r"""Return a function computing the Jacobian of ``func`` by forward-mode AD.

    Each column is a Jacobian-vector product with one basis tangent, computed by the
    double-vjp trick from one run of ``func`` (see :func:`jvp`).

    Args:
        func (Callable): a function returning a tensor or a pytree of tensors.
        argnums (int or Tuple[int]): the argument(s) to differentiate with respect to.
            Default: 0.
        has_aux (bool): ``func`` returns ``(output, aux)``. Default: False.
        randomness (str): ``"error"`` (default) raises if ``func`` draws random numbers
            from the default generator; ``"same"`` and ``"different"`` allow it (``func``
            runs once, so both give the values of that one run).

    Returns:
        A function returning Jacobians shaped and structured as :func:`jacrev`'s.

    Examples::

        >>> x = ember.tensor([1.0, 2.0])
        >>> ember.func.jacfwd(lambda x: x ** 2)(x)
        tensor([[2., 0.],
                [0., 4.]])
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError("Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")

    @_wraps(func)
    def wrapper(*args):
        flat_args, _ = tree_flatten(args)
        _error_if_complex("jacfwd", flat_args, True)
        lin = _Linearized(func, args, argnums, "jacfwd(f, ...)(*args)", has_aux, randomness)
        _error_if_complex("jacfwd", lin.flat_out, False)
        flat_in = lin.call.flat_in
        columns = [[[] for _ in flat_in] for _ in lin.flat_out]
        for j, x in enumerate(flat_in):
            for e in _one_hot_rows(x):
                tangents = [e if k == j else _zeros_like(y) for k, y in enumerate(flat_in)]
                for i, col in enumerate(lin.jvp(tangents)):
                    columns[i][j].append(col)
        per_output = []
        for o, cols in zip(lin.flat_out, columns, strict=True):
            jacs = []
            for x, c in zip(flat_in, cols, strict=True):
                jac = _stack_rows(c, x.shape, o.shape, o)     # input dims first
                nin = len(x.shape)
                jac = jac.permute(*range(nin, nin + len(o.shape)), *range(nin)) if nin else jac
                jacs.append(_detach_if_local(jac, lin.call.own))
            per_output.append(tree_unflatten(jacs, lin.call.in_spec))
        result = tree_unflatten(per_output, lin.out_spec)
        if has_aux:
            return result, _detach_if_local(lin.aux, lin.call.own)
        return result

    return wrapper


def hessian(func, argnums=0):
    r"""Return a function computing the Hessian of the scalar function ``func``:
    ``jacfwd(jacrev(func, argnums), argnums)``.

    Args:
        func (Callable): a function returning a scalar tensor.
        argnums (int or Tuple[int]): the argument(s) to differentiate with respect to.
            Default: 0.

    Examples::

        >>> x = ember.tensor([1.0, 2.0])
        >>> ember.func.hessian(lambda x: (x ** 3).sum())(x)
        tensor([[ 6.,  0.],
                [ 0., 12.]])
    """
    return jacfwd(jacrev(func, argnums), argnums)


# ----------------------------------------------------------------------------
# randomness

_RANDOM_ERROR = ("vmap: called random operation while in randomness error mode. Please either "
                 "use the 'same' or 'different' randomness flags on vmap or perform the "
                 "randomness operation out of vmap")


class _RandomnessCheck:
    """With ``randomness="error"``: raise if the CPU default generator moved while ``func``
    ran (ember's way to see that ``func`` drew random numbers)."""

    def __init__(self, randomness, api):
        self.active = randomness == "error"
        if self.active:
            from ember._ops.random import default_generator

            self.gen = default_generator
            self.state = default_generator._state_bytes()

    def check(self):
        if self.active and self.gen._state_bytes() != self.state:
            raise RuntimeError(_RANDOM_ERROR)
