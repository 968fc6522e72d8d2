"""Autograd's user-facing tools against PyTorch: custom ``autograd.Function`` (ctx, mark_dirty,
mark_non_differentiable, materialize grads, setup_context, once_differentiable), gradcheck and
gradgradcheck, anomaly mode, and saved-tensor hooks."""

import warnings

import pytest
import strata
from test_autograd import A, B, assert_close, both, check_error


# --- anomaly mode ---------------------------------------------------------------------------------

def test_anomaly_mode_nan_check():
    def fn(m, x):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with m.autograd.detect_anomaly():
                (x / m.zeros(3, dtype=m.float64) * 0).sum().backward()
    check_error(fn, B, match="Function 'DivBackward0' returned nan values in its 0th output.")


def test_anomaly_mode_reports_the_forward_stack():
    x = strata.ones(3, requires_grad=True)
    with pytest.warns(UserWarning) as caught:
        with strata.autograd.detect_anomaly():
            y = x.exp()
            y.add_(1)
            with pytest.raises(RuntimeError, match="The variable in question was changed"):
                y.sum().backward()
    messages = [str(w.message) for w in caught]
    assert any("Error detected in ExpBackward0" in m and "y = x.exp()" in m for m in messages)


def test_set_detect_anomaly():
    strata.autograd.set_detect_anomaly(True)
    try:
        assert strata.autograd.is_anomaly_enabled()
    finally:
        strata.autograd.set_detect_anomaly(False)
    assert not strata.autograd.is_anomaly_enabled()


# --- custom Functions ----------------------------------------------------------------------------

def _functions(m):
    class Cube(m.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_backward(x)
            ctx.k = k
            return x ** 3 * k

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * 3 * x ** 2 * ctx.k, None

    class MulAdd(m.autograd.Function):
        @staticmethod
        def forward(x, y):
            return x * y, x + y

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)
            ctx.mark_non_differentiable(output[1])

        @staticmethod
        def backward(ctx, g, _):
            x, y = ctx.saved_tensors
            return (g * y if ctx.needs_input_grad[0] else None,
                    g * x if ctx.needs_input_grad[1] else None)

    class Scale_(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            return x.mul_(2)

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class Once(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @m.autograd.function.once_differentiable
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 2 * x * g

    class NoMaterialize(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 1, x * 2

        @staticmethod
        def backward(ctx, g1, g2):
            return (g1 if g1 is not None else 0) + (g2 * 2 if g2 is not None else 0)

    return Cube, MulAdd, Scale_, Once, NoMaterialize


def test_function_forward_backward_and_ctx():
    def fn(m, x, y):
        Cube, MulAdd, Scale_, _, NoMat = _functions(m)
        c = Cube.apply(x, 2.0)
        p, s = MulAdd.apply(x, y.detach())
        h = x * 1
        d = Scale_.apply(h)
        a, _ = NoMat.apply(y)
        (c.sum() + p.sum() + d.sum() + a.sum()).backward()
        return (type(c.grad_fn).__name__, s.requires_grad, d is h, type(d.grad_fn).__name__,
                x.grad, y.grad)
    s, t = both(fn, B, B)
    assert_close(s, t)


def test_function_double_backward_and_once_differentiable():
    def fn(m, x):
        Cube, _, _, Once, _ = _functions(m)
        g, = m.autograd.grad(Cube.apply(x, 1.0).sum(), x, create_graph=True)
        gg, = m.autograd.grad(g.sum(), x)
        g1, = m.autograd.grad(Once.apply(x).sum(), x, create_graph=True)
        return gg, g1.requires_grad
    s, t = both(fn, B)
    assert_close(s, t)

    def twice(m, x):
        _, _, _, Once, _ = _functions(m)
        v = m.ones((), dtype=m.float64, requires_grad=True)   # the backward input needs grad
        g, = m.autograd.grad(Once.apply(x).sum(), x, v, create_graph=True)
        g.sum().backward()
    check_error(twice, B, match="trying to differentiate twice a function that was marked with "
                                "@once_differentiable")


def test_function_wrong_gradient_count():
    def fn(m, x):
        class Bad(m.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x * y

            @staticmethod
            def backward(ctx, g):
                return g
        Bad.apply(x, x).sum().backward()
    check_error(fn, B, match="returned an incorrect number of gradients")


def test_function_without_grad_returns_plain_outputs():
    Cube = _functions(strata)[0]
    x = strata.ones(3)
    assert not Cube.apply(x, 2.0).requires_grad


# --- gradcheck ------------------------------------------------------------------------------------

def test_gradcheck_and_gradgradcheck_pass():
    x = strata.tensor(A, requires_grad=True)
    y = strata.tensor(A.T.copy(), requires_grad=True)
    assert strata.autograd.gradcheck(lambda a, b: (a @ b).tanh(), (x, y))
    assert strata.autograd.gradcheck(lambda a: a.sin() * a, (x,), fast_mode=True)
    assert strata.autograd.gradgradcheck(lambda a, b: (a @ b).sin(), (x, y))


def test_gradcheck_detects_a_wrong_gradient():
    class Wrong(strata.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * x

        @staticmethod
        def backward(ctx, g):
            return g * 3

    x = strata.tensor(B, requires_grad=True)
    assert strata.autograd.gradcheck(Wrong.apply, (x,), raise_exception=False) is False
    with pytest.raises(RuntimeError, match="Jacobian mismatch for output 0 with respect to input "
                                           "0"):
        strata.autograd.gradcheck(Wrong.apply, (x,))
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        strata.autograd.gradcheck(lambda t: t * 2, (strata.tensor(B),))


# --- saved tensor hooks ---------------------------------------------------------------------------

def test_saved_tensors_hooks():
    packed = []

    def pack(t):
        packed.append(t.shape)
        return t.clone()

    x = strata.tensor(B, requires_grad=True)
    with strata.autograd.graph.saved_tensors_hooks(pack, lambda t: t * 0 + t):
        y = (x * x).sum()
    y.backward()
    assert packed and x.grad.tolist() == (2 * B).tolist()
