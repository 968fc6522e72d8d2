"""Sample inputs for the ops of ``ops/activation.py`` and ``ops/dropout.py``."""

import numpy as np

from op_samples import Sample

_rng = np.random.default_rng(4321)
nan, inf = float("nan"), float("inf")


def _f(*shape, dtype=np.float32, scale=1.0):
    return (_rng.standard_normal(shape) * scale).astype(dtype)


def aten(m):
    return m.ops.aten


def f16(m, x):
    return x.to(m.float16)


def bf16(m, x):
    return x.to(m.bfloat16)


F = _f(3, 5)
F3 = _f(2, 3, 4)
F4 = _f(2, 3, 2, 2)
D64 = _f(4, 6, dtype=np.float64)
BIG = _f(130, 1024)                        # several row blocks, split over threads
WIDE = _f(3, 5, scale=100.0)               # exp overflows: the max-subtracting path
LOW = _f(2, 6) - 200.0                     # every exp underflows
S0 = np.array(0.7, dtype=np.float32)
NEG0D = np.array(-0.7, dtype=np.float32)
E = np.zeros((0, 4), dtype=np.float32)
E_ROW = np.zeros((3, 0), dtype=np.float32)
SPECIAL = np.array([[nan, 1.0, 2.0, 0.5], [-inf, 0.0, 1.0, -inf], [inf, 1.0, -2.0, 3.0],
                    [-inf, -inf, -inf, -inf], [-0.0, 0.5, -0.5, 25.0]], dtype=np.float32)
I = _rng.integers(-4, 5, (3, 4)).astype(np.int64)
EDGES = np.array([-3.5, -3.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 3.0, 6.0, 7.0, 25.0, nan, inf,
                  -inf], dtype=np.float32)
MASKED = np.array([[0.0, -inf, 1.0], [-inf, -inf, -inf], [2.0, 0.5, nan]], dtype=np.float32)
G_EDGES = _f(EDGES.size)                   # a gradient for the EDGES input of a backward op
G = _f(3, 5)
BIG_G = _f(130, 1024)


def _backward(name, *scalars):
    """``aten.<name>_backward(grad, self, *scalars)``."""
    return lambda m, g, x: getattr(aten(m), f"{name}_backward").default(g, x, *scalars)


def _gelu_backward(approximate):
    return lambda m, g, x: aten(m).gelu_backward.default(g, x, approximate=approximate)


def _backward_samples():
    """Each backward op at the edges (inf, NaN, the boundaries), in float64, in float16, with
    grad and self of different dtypes (the result has their common dtype), 0-dim and empty."""
    ops = {"hardtanh": [(-1.0, 1.0), (0, 6)], "hardsigmoid": [()], "hardswish": [()],
           "mish": [()], "leaky_relu": [(0.01, False), (0.2, True)], "threshold": [(0.5,)],
           "softplus": [(1, 20), (2.0, 5.0)], "softshrink": [(0.5,), (0.0,)],
           "hardshrink": [(0.5,), (1.5,)], "tanh": [()], "sigmoid": [()], "silu": [()]}
    out = {}
    for name, cases in ops.items():
        f = _backward(name, *cases[0])
        out[f"aten::{name}_backward"] = [
            Sample(_backward(name, *scalars), (G_EDGES, EDGES), name=f"edges{i}")
            for i, scalars in enumerate(cases)] + [
            Sample(f, (D64, D64 * 3), name="f64"),
            Sample(lambda m, g, x, f=f: f(m, f16(m, g), f16(m, x)), (G, F * 3), name="f16"),
            Sample(lambda m, g, x, f=f: f(m, bf16(m, g), bf16(m, x)), (G, F * 3), name="bf16"),
            Sample(f, (S0, NEG0D), name="0d"),
            Sample(f, (E, E), name="empty"),
        ]
        if name != "mish":   # mish_backward's result has self's dtype (see its own samples)
            out[f"aten::{name}_backward"].append(
                Sample(f, (G, (F * 3).astype(np.float64)), name="mixed_dtypes"))
    out["aten::mish_backward"].append(
        Sample(_backward("mish"), (G.astype(np.float64), F), name="f64_grad_f32_self"))
    for name in ("tanh", "sigmoid", "silu"):   # the generated C loop (contiguous, 1024+ elements)
        out[f"aten::{name}_backward"] += [
            Sample(_backward(name), (BIG_G, np.tanh(BIG)), name="generated"),
            Sample(_backward(name), (BIG_G.astype(np.float64), np.tanh(BIG).astype(np.float64)),
                   name="generated_f64"),
            Sample(_backward(name), (BIG_G[:1], np.tanh(BIG)), name="broadcast")]
    out["aten::softplus_backward"] += [   # the generated C loop, with its scalars
        Sample(_backward("softplus", 2.0, 5.0), (BIG_G, BIG * 5), name="generated"),
        Sample(_backward("softplus", 1, 20), (BIG_G.astype(np.float64), BIG.astype(np.float64)),
               name="generated_f64")]
    out["aten::gelu_backward"] = [
        Sample(_gelu_backward(approximate), inputs, name=f"{approximate}_{label}")
        for approximate in ("none", "tanh") for label, inputs in (
            ("edges", (G_EDGES, EDGES)), ("f64", (D64, D64 * 3)), ("0d", (S0, NEG0D)),
            ("empty", (E, E)), ("generated", (BIG_G, BIG * 3)),
            ("generated_f64", (BIG_G.astype(np.float64), BIG.astype(np.float64) * 3)))] + [
        Sample(lambda m, g, x: _gelu_backward("tanh")(m, f16(m, g), f16(m, x)), (G, F * 3),
               name="f16"),
        Sample(lambda m, g, x: _gelu_backward("none")(m, bf16(m, g), bf16(m, x)), (G, F * 3),
               name="bf16")]

    def elu(*args):
        return lambda m, g, x: aten(m).elu_backward.default(g, *args, x)

    def elu_result(alpha, scale, input_scale):
        return lambda m, g, x: aten(m).elu_backward.default(
            g, alpha, scale, input_scale, True, aten(m).elu.default(x, alpha, scale, input_scale))

    out["aten::elu_backward"] = [
        Sample(elu(1.0, 1.0, 1.0, False), (G_EDGES, EDGES), name="edges"),
        Sample(elu_result(1.0, 1.0, 1.0), (G_EDGES, EDGES), name="edges_result"),
        Sample(elu(0.5, 2.0, 1.5, False), (G, F), name="scales"),
        Sample(elu_result(0.5, 2.0, 1.5), (G, F), name="scales_result"),
        Sample(elu(-1.0, 1.0, 1.0, False), (D64, D64), name="negative_alpha"),
        Sample(lambda m, g, x: elu(1.0, 1.0, 1.0, False)(m, f16(m, g), f16(m, x)), (G, F),
               name="f16"),
        Sample(elu(1.0, 1.0, 1.0, False), (G, (F * 3).astype(np.float64)), name="mixed_dtypes"),
        Sample(elu(1.0, 1.0, 1.0, False), (S0, NEG0D), name="0d"),
        Sample(elu(1.0, 1.0, 1.0, False), (E, E), name="empty"),
    ]
    return out


def _softmax_samples(fn):
    """The same cases for softmax and log_softmax; ``fn(m, x, dim)`` calls the op."""
    return [
        Sample(lambda m, x: fn(m, x, 1), (F,), name="2d"),
        Sample(lambda m, x: fn(m, x, -1), (F3,), name="3d_last"),
        Sample(lambda m, x: fn(m, x, 0), (F3,), name="3d_first"),
        Sample(lambda m, x: fn(m, x, 1), (F4,), name="4d_inner"),
        Sample(lambda m, x: fn(m, x, 1), (D64,), name="f64"),
        Sample(lambda m, x: fn(m, x, 1), (BIG,), name="big"),
        Sample(lambda m, x: fn(m, x, 1), (WIDE,), name="wide_range"),
        Sample(lambda m, x: fn(m, x, 1), (LOW,), name="very_negative"),
        Sample(lambda m, x: fn(m, x, 0), (S0,), name="0d"),
        Sample(lambda m, x: fn(m, x, -1), (S0,), name="0d_neg"),
        Sample(lambda m, x: fn(m, x, 1), (E,), name="empty"),
        Sample(lambda m, x: fn(m, x, 1), (E_ROW,), name="empty_rows"),
        Sample(lambda m, x: fn(m, x, 1), (SPECIAL,), name="nan_inf"),
        Sample(lambda m, x: fn(m, x, 0), (SPECIAL,), name="nan_inf_dim0"),
        Sample(lambda m, x: fn(m, f16(m, x), 1), (F,), name="f16"),
        Sample(lambda m, x: fn(m, bf16(m, x), -1), (F3,), name="bf16"),
        Sample(lambda m, x: fn(m, x, 1), (E.astype(np.int64),), name="empty_int"),
    ]


SAMPLES = {
    "aten::_softmax": _softmax_samples(lambda m, x, d: m._softmax(x, d, False)),
    "aten::_log_softmax": _softmax_samples(lambda m, x, d: m._log_softmax(x, d, False)),
    "aten::softmax.int": [
        Sample(lambda m, x: x.softmax(1), (F,), name="method"),
        Sample(lambda m, x: m.softmax(x, dim=-1), (F3,), name="kw"),
        Sample(lambda m, x: m.softmax(input=x, dim=0, dtype=m.float64), (F,), name="dtype"),
        Sample(lambda m, x: x.softmax(1, m.float32), (I.astype(np.float64),), name="downcast"),
        Sample(lambda m, x: x.softmax(0, dtype=m.float32), (I,), name="int_with_dtype"),
        Sample(lambda m, x: m.softmax(f16(m, x), 1, dtype=m.float32), (F,), name="f16_to_f32"),
        Sample(lambda m, x: m.softmax(x, 1), (SPECIAL,), name="nan_inf"),
    ],
    "aten::log_softmax.int": [
        Sample(lambda m, x: x.log_softmax(1), (F,), name="method"),
        Sample(lambda m, x: m.log_softmax(x, dim=0, dtype=m.float64), (F3,), name="dtype"),
        Sample(lambda m, x: m.log_softmax(x, -1), (WIDE,), name="wide_range"),
    ],
    "aten::_safe_softmax": [
        Sample(lambda m, x: aten(m)._safe_softmax.default(x, -1), (MASKED,), name="masked_rows"),
        Sample(lambda m, x: aten(m)._safe_softmax.default(x, 0, m.float64), (F,), name="dtype"),
        Sample(lambda m, x: aten(m)._safe_softmax.default(x, 0), (MASKED.T.copy(),),
               name="masked_dim0"),
        Sample(lambda m, x: aten(m)._safe_softmax.default(f16(m, x), 1), (MASKED,),
               name="f16"),
        Sample(lambda m, x: aten(m)._safe_softmax.default(x, 1, m.float32), (I,), name="int"),
        Sample(lambda m, x: aten(m)._safe_softmax.default(x, -1), (F3,), name="3d"),
        Sample(lambda m, x: aten(m)._safe_softmax.default(x, 0), (np.array(-inf, np.float32),),
               name="0d_masked"),
        Sample(lambda m, x: aten(m)._safe_softmax.default(x, 1), (E,), name="empty"),
    ],
    "aten::_softmax_backward_data": [
        Sample(lambda m, g, x: aten(m)._softmax_backward_data.default(
            g, m.softmax(x, 1), 1, m.float32), (F, _f(3, 5)), name="2d"),
        Sample(lambda m, g, x: aten(m)._softmax_backward_data.default(
            g, m.softmax(x, 0), 0, m.float64), (F3.astype(np.float64), F3.astype(np.float64)),
            name="f64_dim0"),
        Sample(lambda m, g, x: aten(m)._softmax_backward_data.default(
            g, m.softmax(x, 1), 1, m.float32), (D64, D64), name="f64_grad_input_f32"),
        Sample(lambda m, g, x: aten(m)._softmax_backward_data.default(
            f16(m, g), m.softmax(f16(m, x), -1), -1, m.float16), (F, G), name="f16"),
        Sample(lambda m, g, x: aten(m)._softmax_backward_data.default(
            g, m.softmax(x, 1), 1, m.bfloat16), (F, G), name="f32_input_bf16"),
    ],
    "aten::_log_softmax_backward_data": [
        Sample(lambda m, g, x: aten(m)._log_softmax_backward_data.default(
            g, m.log_softmax(x, 1), 1, m.float32), (F, _f(3, 5)), name="2d"),
        Sample(lambda m, g, x: aten(m)._log_softmax_backward_data.default(
            g, m.log_softmax(x, -1), -1, m.float64), (D64, D64), name="f64"),
        Sample(lambda m, g, x: aten(m)._log_softmax_backward_data.default(
            g, m.log_softmax(x, 0), 0, m.float32), (D64, D64), name="f64_grad_input_f32"),
        Sample(lambda m, g, x: aten(m)._log_softmax_backward_data.default(
            bf16(m, g), m.log_softmax(bf16(m, x), 1), 1, m.bfloat16), (F, G), name="bf16"),
    ],
    # --- activations -----------------------------------------------------------------------------
    "aten::elu": [
        Sample(lambda m, x: aten(m).elu.default(x), (EDGES,), name="edges"),
        Sample(lambda m, x: aten(m).elu.default(x, 0.5, 2.0, 1.5), (F,), name="scales"),
        Sample(lambda m, x: aten(m).elu.default(x, -1.0), (F3,), name="neg_alpha"),
        Sample(lambda m, x: aten(m).elu.default(x), (D64,), name="f64"),
        Sample(lambda m, x: aten(m).elu.default(f16(m, x)), (F,), name="f16"),
        Sample(lambda m, x: aten(m).elu.default(bf16(m, x)), (F,), name="bf16"),
        Sample(lambda m, x: aten(m).elu.default(x), (S0,), name="0d"),
        Sample(lambda m, x: aten(m).elu.default(x), (E,), name="empty"),
    ],
    "aten::elu_": [
        Sample(lambda m, x: aten(m).elu_.default(x, 0.7), (F,)),
        Sample(lambda m, x: aten(m).elu_.default(x, 1.0, 2.0, 0.5), (EDGES,), name="edges"),
        Sample(lambda m, x: aten(m).elu_.default(f16(m, x)), (F,), name="f16"),
    ],
    "aten::selu": [
        Sample(lambda m, x: m.selu(x), (EDGES,), name="edges"),
        Sample(lambda m, x: m.selu(f16(m, x)), (F,), name="f16"),
    ],
    "aten::selu_": [Sample(lambda m, x: m.selu_(x), (F3,))],
    "aten::celu": [
        Sample(lambda m, x: m.celu(x), (EDGES,), name="edges"),
        Sample(lambda m, x: m.celu(x, 2.5), (D64,), name="alpha"),
    ],
    "aten::celu_": [Sample(lambda m, x: m.celu_(x, alpha=0.5), (F,))],
    "aten::leaky_relu": [
        Sample(lambda m, x: aten(m).leaky_relu.default(x), (EDGES,), name="edges"),
        Sample(lambda m, x: aten(m).leaky_relu.default(x, 0.2), (D64,), name="slope"),
        Sample(lambda m, x: aten(m).leaky_relu.default(bf16(m, x), 0.1), (F,), name="bf16"),
    ],
    "aten::leaky_relu_": [
        Sample(lambda m, x: aten(m).leaky_relu_.default(x, 0.3), (F3,)),
        Sample(lambda m, x: aten(m).leaky_relu_.default(x), (EDGES,), name="edges"),
    ],
    "aten::hardtanh": [
        Sample(lambda m, x: aten(m).hardtanh.default(x), (EDGES,), name="edges"),
        Sample(lambda m, x: aten(m).hardtanh.default(x, -0.5, 2.0), (F,), name="bounds"),
        Sample(lambda m, x: aten(m).hardtanh.default(x, -2, 2), (I,), name="int"),
        Sample(lambda m, x: aten(m).hardtanh.default(f16(m, x)), (F,), name="f16"),
        Sample(lambda m, x: aten(m).hardtanh.default(x, -0.5, 1.5), (I,), name="int_float_bounds"),
        Sample(lambda m, x: aten(m).hardtanh.default(x, -0.5, 1.5), (I.astype(np.uint8),),
               name="uint8"),
        Sample(lambda m, x: aten(m).hardtanh.default(x, 0.5, -0.5), (D64,), name="min_above_max"),
        Sample(lambda m, x: aten(m).hardtanh.default(x), (S0,), name="0d"),
        Sample(lambda m, x: aten(m).hardtanh.default(x), (E,), name="empty"),
    ],
    "aten::hardtanh_": [
        Sample(lambda m, x: aten(m).hardtanh_.default(x, -0.2, 0.2), (F,)),
        Sample(lambda m, x: aten(m).hardtanh_.default(x), (EDGES,), name="edges"),
        Sample(lambda m, x: aten(m).hardtanh_.default(x, -1.5, 2.7), (I,), name="int"),
    ],
    "aten::relu6": [
        Sample(lambda m, x: aten(m).relu6.default(x), (EDGES,), name="edges"),
        Sample(lambda m, x: aten(m).relu6.default(x * 4), (I,), name="int"),
    ],
    "aten::hardsigmoid": [
        Sample(lambda m, x: aten(m).hardsigmoid.default(x), (EDGES,), name="edges"),
        Sample(lambda m, x: aten(m).hardsigmoid.default(x), (D64,), name="f64"),
        Sample(lambda m, x: aten(m).hardsigmoid.default(f16(m, x)), (F,), name="f16"),
    ],
    "aten::hardsigmoid_": [
        Sample(lambda m, x: aten(m).hardsigmoid_.default(x), (F,)),
        Sample(lambda m, x: aten(m).hardsigmoid_.default(x), (EDGES,), name="edges"),
        Sample(lambda m, x: aten(m).hardsigmoid_.default(bf16(m, x)), (F,), name="bf16"),
    ],
    "aten::hardswish": [
        Sample(lambda m, x: aten(m).hardswish.default(x), (EDGES,), name="edges"),
        Sample(lambda m, x: aten(m).hardswish.default(x * 3), (D64,), name="f64"),
    ],
    "aten::hardswish_": [
        Sample(lambda m, x: aten(m).hardswish_.default(x), (F3,)),
        Sample(lambda m, x: aten(m).hardswish_.default(x), (EDGES,), name="edges"),
    ],
    "aten::mish": [
        Sample(lambda m, x: aten(m).mish.default(x), (EDGES,), name="edges"),
        Sample(lambda m, x: aten(m).mish.default(x), (D64,), name="f64"),
        Sample(lambda m, x: aten(m).mish.default(bf16(m, x)), (F,), name="bf16"),
    ],
    "aten::mish_": [
        Sample(lambda m, x: aten(m).mish_.default(x), (F,)),
        Sample(lambda m, x: aten(m).mish_.default(x), (EDGES,), name="edges"),
        Sample(lambda m, x: aten(m).mish_.default(f16(m, x)), (F,), name="f16"),
    ],
    "aten::softplus": [
        Sample(lambda m, x: aten(m).softplus.default(x), (EDGES,), name="edges"),
        Sample(lambda m, x: aten(m).softplus.default(x, 2.0, 5.0), (WIDE,), name="beta"),
        Sample(lambda m, x: aten(m).softplus.default(x, 2.0, 5.0), (BIG * 5,), name="generated"),
        Sample(lambda m, x: aten(m).softplus.default(x, 0.5), (D64,), name="f64"),
        Sample(lambda m, x: aten(m).softplus.default(f16(m, x)), (F,), name="f16"),
    ],
    "aten::softshrink": [
        Sample(lambda m, x: aten(m).softshrink.default(x), (EDGES,), name="edges"),
        Sample(lambda m, x: aten(m).softshrink.default(x, 1.0), (D64,), name="lambd"),
        Sample(lambda m, x: aten(m).softshrink.default(x, 0), (F,), name="zero"),
    ],
    "aten::hardshrink": [
        Sample(lambda m, x: m.hardshrink(x), (EDGES,), name="edges"),
        Sample(lambda m, x: x.hardshrink(1.0), (D64,), name="method"),
        Sample(lambda m, x: m.hardshrink(x, lambd=-1.0), (F,), name="negative_lambd"),
    ],
    "aten::log_sigmoid": [
        Sample(lambda m, x: aten(m).log_sigmoid.default(x), (EDGES,), name="edges"),
        Sample(lambda m, x: aten(m).log_sigmoid.default(x), (WIDE,), name="wide"),
        Sample(lambda m, x: aten(m).log_sigmoid.default(x), (D64,), name="f64"),
        Sample(lambda m, x: aten(m).log_sigmoid.default(bf16(m, x)), (F,), name="bf16"),
    ],
    "aten::threshold": [
        Sample(lambda m, x: m.threshold(x, 0.5, -9.0), (EDGES,), name="edges"),
        Sample(lambda m, x: m.threshold(x, 1, 5), (I,), name="int"),
        Sample(lambda m, x: m.threshold(x, 0.0, 0.0), (D64,), name="relu_like"),
        Sample(lambda m, x: m.threshold(x, -0.5, 2.7), (I,), name="int_float_scalars"),
        Sample(lambda m, x: m.threshold(x, 1, -1), (I.astype(np.uint8),), name="uint8_wraps"),
        Sample(lambda m, x: m.threshold(f16(m, x), 0.2, 9.1), (F,), name="f16"),
        Sample(lambda m, x: m.threshold(x, 0.5, 1.0), (S0,), name="0d"),
    ],
    "aten::threshold_": [
        Sample(lambda m, x: m.threshold_(x, 0.1, 2.0), (F,)),
        Sample(lambda m, x: m.threshold_(x, 0.5, -9.0), (EDGES,), name="edges"),
        Sample(lambda m, x: m.threshold_(x, 0.5, 2.7), (I,), name="int"),
    ],
    "aten::rrelu": [
        Sample(lambda m, x: m.rrelu(x), (EDGES,), name="eval"),
        Sample(lambda m, x: m.rrelu(x, 0.1, 0.3), (D64,), name="bounds"),
        Sample(lambda m, x: m.rrelu(x, 0.1, 0.3, True), (F,), name="training", random=True),
    ],
    "aten::rrelu_": [
        Sample(lambda m, x: m.rrelu_(x, 0.2, 0.4), (F,)),
        Sample(lambda m, x: m.rrelu_(x, 0.2, 0.4, True), (F,), name="training", random=True),
    ],
    "aten::glu": [
        Sample(lambda m, x: aten(m).glu.default(x), (_f(3, 4),), name="last"),
        Sample(lambda m, x: aten(m).glu.default(x, 1), (_f(2, 6, 3),), name="dim"),
        Sample(lambda m, x: aten(m).glu.default(x, -3), (_f(4, 2, 3),), name="neg_dim"),
        Sample(lambda m, x: aten(m).glu.default(f16(m, x)), (_f(3, 4),), name="f16"),
        Sample(lambda m, x: aten(m).glu.default(x), (_f(2, 8, dtype=np.float64),), name="f64"),
    ],
    "aten::prelu": [
        Sample(lambda m, x, w: m.prelu(x, w), (F, _f(5).clip(0, 1)), name="2d"),
        Sample(lambda m, x, w: x.prelu(w), (F4, _f(3)), name="4d_channels"),
        Sample(lambda m, x, w: m.prelu(x, w), (F3, np.array([0.25], np.float32)), name="shared"),
        Sample(lambda m, x, w: m.prelu(x, w), (EDGES, np.array([0.5], np.float32)), name="1d"),
        Sample(lambda m, x, w: m.prelu(x, w), (NEG0D, np.array([0.5], np.float32)), name="0d"),
        Sample(lambda m, x, w: m.prelu(x, w), (D64, np.full(6, 0.1)), name="f64"),
    ],
    "aten::_prelu_kernel": [
        Sample(lambda m, x, w: aten(m)._prelu_kernel.default(x, w),
               (F4, _f(3, 1, 1)), name="channels"),
        Sample(lambda m, x, w: aten(m)._prelu_kernel.default(x, w), (EDGES, _f(1)), name="edges"),
    ],
    "aten::_prelu_kernel_backward": [
        Sample(lambda m, g, x, w: aten(m)._prelu_kernel_backward.default(g, x, w),
               (_f(2, 3, 2, 2), F4, _f(3, 1, 1)), name="channels"),
        Sample(lambda m, g, x, w: aten(m)._prelu_kernel_backward.default(g, x, w),
               (_f(*EDGES.shape), EDGES, _f(1)), name="edges"),
    ],
    # --- backward ops --------------------------------------------------------------------------
    **_backward_samples(),
    "aten::one_hot": [
        Sample(lambda m, x: aten(m).one_hot.default(x), (np.array([0, 2, 1, 2]),),
               name="infer", meta=False),
        Sample(lambda m, x: aten(m).one_hot.default(x, 5), (np.array([[0, 3], [4, 1]]),),
               name="2d"),
        Sample(lambda m, x: aten(m).one_hot.default(x, 3), (np.array(2),), name="0d"),
        Sample(lambda m, x: aten(m).one_hot.default(x, 4), (np.zeros(0, np.int64),),
               name="empty"),
    ],
    # --- dropout ---------------------------------------------------------------------------------
    "aten::native_dropout": [
        Sample(lambda m, x: m.native_dropout(x, 0.3, True), (F,), name="train", random=True),
        Sample(lambda m, x: m.native_dropout(x, 0.3, False), (F3,), name="eval"),
        Sample(lambda m, x: m.native_dropout(x, 0.5, None), (F,), name="train_none",
               random=True),
        Sample(lambda m, x: m.native_dropout(x, 1.0, True), (F,), name="p1"),
        Sample(lambda m, x: m.native_dropout(x, 0.0, True), (D64,), name="p0"),
        Sample(lambda m, x: m.native_dropout(x, 0.5, True), (E,), name="empty"),
    ],
    "aten::dropout": [
        Sample(lambda m, x: m.dropout(x, 0.4, True), (F,), name="train", random=True),
        Sample(lambda m, x: m.dropout(x, 0.4, False), (F,), name="eval"),
        Sample(lambda m, x: m.dropout(x, 1.0, True), (EDGES,), name="p1"),
        Sample(lambda m, x: m.dropout(x, 0.0, True), (D64,), name="p0"),
    ],
    "aten::dropout_": [
        Sample(lambda m, x: m.dropout_(x, 0.4, True), (F,), name="train", random=True),
        Sample(lambda m, x: m.dropout_(x, 1.0, True), (F,), name="p1"),
    ],
    "aten::feature_dropout": [
        Sample(lambda m, x: m.feature_dropout(x, 0.5, True), (F4,), name="train", random=True),
        Sample(lambda m, x: m.feature_dropout(x, 0.5, False), (F4,), name="eval"),
    ],
    "aten::feature_dropout_": [
        Sample(lambda m, x: m.feature_dropout_(x, 0.5, True), (F3,), random=True),
    ],
    "aten::alpha_dropout": [
        Sample(lambda m, x: m.alpha_dropout(x, 0.2, True), (F,), name="train", random=True),
        Sample(lambda m, x: m.alpha_dropout(x, 0.2, False), (F,), name="eval"),
        Sample(lambda m, x: m.alpha_dropout(x, 1.0, True), (F,), name="p1"),
    ],
    "aten::alpha_dropout_": [
        Sample(lambda m, x: m.alpha_dropout_(x, 0.2, True), (F,), random=True),
    ],
    "aten::feature_alpha_dropout": [
        Sample(lambda m, x: m.feature_alpha_dropout(x, 0.5, True), (F4,), name="train",
               random=True),
        Sample(lambda m, x: m.feature_alpha_dropout(x, 0.5, False), (F4,), name="eval"),
    ],
    "aten::feature_alpha_dropout_": [
        Sample(lambda m, x: m.feature_alpha_dropout_(x, 0.5, True), (F3,), random=True),
    ],
}


# --- attention ------------------------------------------------------------------------------------

def _sdpa(**kwargs):
    return lambda m, q, k, v: m.nn.functional.scaled_dot_product_attention(q, k, v, **kwargs)


Q, K, V = _f(2, 3, 4, 8), _f(2, 3, 5, 8), _f(2, 3, 5, 6)
BOOL_MASK = _rng.random((4, 5)) < 0.7
BOOL_MASK[0] = False                        # a fully masked row: zeros, not nan
FLOAT_MASK = _f(2, 1, 4, 5)

SAMPLES["aten::scaled_dot_product_attention"] = [
    Sample(_sdpa(), (Q, K, V), name="plain"),
    Sample(_sdpa(is_causal=True), (Q, K, V), name="causal"),
    Sample(lambda m, q, k, v, mask: m.nn.functional.scaled_dot_product_attention(
        q, k, v, attn_mask=mask), (Q, K, V, BOOL_MASK), name="bool_mask"),
    Sample(lambda m, q, k, v, mask: m.nn.functional.scaled_dot_product_attention(
        q, k, v, mask), (Q, K, V, FLOAT_MASK), name="float_mask"),
    Sample(_sdpa(scale=0.3), (Q, K, V), name="scale"),
    Sample(_sdpa(scale=-0.5), (Q, K, V), name="negative_scale"),
    Sample(_sdpa(), (Q[0, 0], K[0, 0], V[0, 0]), name="2d"),
    Sample(_sdpa(is_causal=True), (Q.astype(np.float64),) * 3, name="f64_self"),
    Sample(_sdpa(enable_gqa=True), (_f(2, 6, 4, 8), K, V), name="gqa"),
    Sample(_sdpa(), (Q[:, :, :0], K, V), name="empty_queries"),
    Sample(_sdpa(dropout_p=0.5), (Q, K, V), name="dropout", random=True),
]
