"""Layer 4: autograd — the Autograd dispatch key, the backward graph, the engine, derivatives.

    >>> x = strata.ones(3, requires_grad=True)
    >>> y = (x * x).sum()
    >>> y.backward()                 # x.grad == 2 * x
    >>> strata.autograd.grad((x ** 3).sum(), x)

The pieces: ``kernel`` (the boxed kernel at every ``Autograd<Backend>`` key that records nodes),
``derivatives`` (one formula per primitive op), ``graph`` (Node, AccumulateGrad, saved tensors),
``engine`` (runs a graph backward), ``grad_mode``, ``function`` (custom ``Function``),
``gradcheck``, ``anomaly_mode``. ``Tensor.backward`` and friends reach this layer through
``_tensor.install_autograd`` (the tensor layer sits above and cannot import it).
"""

from .. import _tensor
from ..core import dtype as D
from ..dispatch.dispatcher import register_fallback, register_kernel
from ..dispatch.keys import BACKENDS, DispatchKey
from ..ops import factory as F
from . import (  # noqa: F401
    anomaly_mode,
    derivatives,
    engine,
    functional,
    graph,
    inplace_or_view,
    kernel,
    record,
)
from .anomaly_mode import (  # noqa: F401
    detect_anomaly,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_detect_anomaly,
)
from .engine import is_checkpoint_valid as _is_checkpoint_valid  # noqa: F401
from .function import Function, FunctionCtx, once_differentiable  # noqa: F401
from .variable import Variable  # noqa: F401
from .grad_mode import (  # noqa: F401
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .gradcheck import gradcheck, gradgradcheck
from .graph import gradient_edge, requires_grad

__all__ = ["Function", "backward", "detect_anomaly", "enable_grad", "grad", "gradcheck",
           "gradgradcheck", "inference_mode", "no_grad", "set_detect_anomaly",
           "set_grad_enabled"]


def _as_tuple(x):
    if x is None:
        return ()
    if isinstance(x, (tuple, list)):
        return tuple(x)
    return (x,)


def _make_grads(outputs, grad_outputs, is_grads_batched=False):
    """The gradient to start from for each output: ones for a scalar, else the caller's
    (``_make_grads`` in ``torch/autograd/__init__.py``)."""
    grads = []
    for out, g in zip(outputs, grad_outputs):
        if g is None:
            if requires_grad(out):
                if out.numel() != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if out.dtype.category != D.FLOATING:
                    raise RuntimeError(f"grad can be implicitly created only for real scalar "
                                       f"outputs but got {out.dtype}")
                g = F.full(out._shape, 1, dtype=out.dtype, device=out.device)
        elif hasattr(g, "_ag"):
            if tuple(g.shape) != tuple(out.shape):
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{len(grads)}] has a shape of "
                    f"{_size(g.shape)} and output[{len(grads)}] has a shape of "
                    f"{_size(out.shape)}.")
            if g.dtype.category != out.dtype.category:
                raise RuntimeError(
                    f"For complex Tensors, both grad_output and output are required to have the "
                    f"same dtype. Mismatch in dtype: grad_output[{len(grads)}] has a dtype of "
                    f"{g.dtype} and output[{len(grads)}] has a dtype of {out.dtype}.")
        else:
            raise TypeError(f"gradients can be either Tensors or None, but got "
                            f"{type(g).__name__}")
        grads.append(g)
    return grads


def _size(shape):
    return f"torch.Size([{', '.join(map(str, shape))}])"


def _root_edges(outputs):
    edges = []
    for i, out in enumerate(outputs):
        edge = gradient_edge(out)
        if edge[0] is None:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have "
                               f"a grad_fn")
        edges.append(edge)
    return edges


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    """Accumulate into ``.grad`` of the leaves the gradients of ``tensors``."""
    tensors = _as_tuple(tensors)
    if grad_tensors is None:
        grad_tensors = grad_variables
    grads = _as_tuple(grad_tensors) or (None,) * len(tensors)
    if len(grads) != len(tensors):
        raise RuntimeError(f"got {len(grads)} tensors and {len(tensors)} gradients")
    if retain_graph is None:
        retain_graph = create_graph
    inputs = _as_tuple(inputs)
    if inputs and any(not hasattr(t, "_ag") for t in inputs):
        raise TypeError("inputs must be Tensors")
    grads = _make_grads(tensors, grads)
    roots = _root_edges(tensors)
    input_edges = None
    if inputs:
        input_edges = []
        for t in inputs:
            if not requires_grad(t):
                raise RuntimeError("One of the differentiated Tensors does not require grad")
            if t._ag.grad_fn is not None:
                t.retain_grad()
            input_edges.append(gradient_edge(t))
    engine.execute(roots, grads, retain_graph, create_graph, input_edges, accumulate_grad=True)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """The gradients of ``outputs`` with respect to ``inputs``, returned (``.grad`` untouched).

        >>> dx, = strata.autograd.grad((x * x).sum(), x)
    """
    if is_grads_batched:
        raise NotImplementedError("strata.autograd.grad: is_grads_batched=True is not supported")
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads="
                         "True, but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    outputs = _as_tuple(outputs)
    inputs_t = _as_tuple(inputs)
    grads = _as_tuple(grad_outputs) or (None,) * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(f"grad requires one grad_output per output: got {len(grads)} "
                           f"grad_outputs and {len(outputs)} outputs")
    if retain_graph is None:
        retain_graph = create_graph
    for t in inputs_t:
        if not requires_grad(t):
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    grads = _make_grads(outputs, grads)
    roots = _root_edges(outputs)
    input_edges = [gradient_edge(t) for t in inputs_t]
    result = engine.execute(roots, grads, retain_graph, create_graph, input_edges,
                            accumulate_grad=False)
    out = []
    for t, g in zip(inputs_t, result):
        if g is None:
            if materialize_grads:
                g = F.full(t._shape, 0, dtype=t.dtype, device=t.device)
            elif not allow_unused:
                raise RuntimeError("One of the differentiated Tensors appears to not have been "
                                   "used in the graph. Set allow_unused=True if this is the "
                                   "desired behavior.")
        out.append(g)
    return tuple(out)


def register():
    """Install the autograd kernel at every Autograd<Backend> key and the tensor hooks."""
    inplace_or_view.register()
    for backend in BACKENDS:
        register_fallback(getattr(DispatchKey, "Autograd" + backend), kernel.autograd_kernel,
                          skips_plain_calls=True, specialize=record.specialize)
    for op, fn in kernel.MANUAL_KERNELS.items():
        register_kernel(op, "Autograd", fn, boxed=True)
    from . import tensor_methods
    _tensor.install_autograd(tensor_methods)
    from .inplace_views import METHODS
    for name, method in METHODS.items():
        setattr(_tensor.Tensor, name, method)
