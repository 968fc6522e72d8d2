"""Sample inputs for the ops of ``ops/factory.py``: factories (through strata's creation functions,
which call them), copies and conversions across every dtype pair, fills, and random ops (shape,
dtype and strides only). Errors and edge cases live in tests/test_factory_ops.py."""

import numpy as np

from . import Sample

DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64")
VALUES = np.array([[0.0, -1.75, 2.5, 300.25], [-0.0, 1e-3, 65504.0, -7.0]])


def S(fn, *inputs, name="", **kw):
    return Sample(fn, inputs, name=name, **({"check_stride": True} | kw))


def R(fn, *inputs, name="", **kw):
    """A sample whose values are random (or uninitialised): shape, dtype and strides only."""
    return Sample(fn, inputs, name=name, random=True, **kw)


def dt(m, name):
    return getattr(m, name)


LIKE = np.zeros(())  # a 0-dim input whose device the factories use (meta in the meta run)


def F(fn, name, *, random=False, **kw):
    """A factory sample: ``fn(m, device)``; the meta run passes the meta device."""
    return Sample(lambda m, like: fn(m, like.device), (LIKE,), name=name, random=random,
                  **({"check_stride": not random} | kw))


FACTORIES = {
    "aten::empty.memory_format": [
        F(lambda m, dev: m.empty(2, 3, device=dev), "float", random=True),
        F(lambda m, dev: m.empty((0, 4), dtype=m.int64, device=dev), "empty-int", random=True),
        F(lambda m, dev: m.empty(2, 3, 4, 5, memory_format=m.channels_last, device=dev),
          "channels_last", random=True),
        F(lambda m, dev: m.empty((), dtype=m.bool, device=dev), "0dim", random=True),
    ],
    "aten::empty_strided": [
        F(lambda m, dev: m.empty_strided((2, 3), (1, 2), device=dev).stride(), "permuted",
          meta=False),
        F(lambda m, dev: m.empty_strided((2, 3), (10, 2), dtype=m.int8, device=dev).stride(),
          "gaps", meta=False),
        F(lambda m, dev: m.empty_strided((2, 3), (0, 1), device=dev), "stride-0", random=True),
        F(lambda m, dev: m.empty_strided((2, 3), (1, 2), device=dev), "permuted-meta",
          random=True),
        F(lambda m, dev: m.empty_strided((0, 3), (1, 1), device=dev), "empty", random=True),
    ],
    "aten::full": [
        F(lambda m, dev, v=v: m.full((2, 3), v, device=dev), f"infer-{v!r}")
        for v in (7, 1.5, True, -0.0)] + [
        F(lambda m, dev, d=d: m.full((2,), -1.75, dtype=dt(m, d), device=dev), d)
        for d in DTYPES if d != "uint8"] + [
        F(lambda m, dev: m.full((3,), -1, dtype=m.uint8, device=dev), "uint8-wraps"),
        F(lambda m, dev: m.full((2, 2), float("nan"), device=dev), "nan"),
        F(lambda m, dev: m.full((0,), 3, device=dev), "empty"),
        F(lambda m, dev: m.zeros(2, 3, dtype=m.int16, device=dev), "zeros"),
        F(lambda m, dev: m.ones((3,), dtype=m.bfloat16, device=dev), "ones"),
        F(lambda m, dev: m.full((), 2.0 ** 24 + 1, dtype=m.float32, device=dev), "rounds"),
    ],
    "aten::arange.start_step": [
        F(lambda m, dev: m.arange(5, device=dev), "int"),
        F(lambda m, dev: m.arange(0, 1, 0.1, device=dev), "float"),
        F(lambda m, dev: m.arange(5, 0, -1.5, device=dev), "negative-step"),
        F(lambda m, dev: m.arange(-3, 3, dtype=m.float64, device=dev), "float64"),
        F(lambda m, dev: m.arange(0, 10000, 0.7, device=dev), "long-float"),
        F(lambda m, dev: m.arange(0.5, 5.2, 1.3, dtype=m.int64, device=dev), "int64-truncates"),
        F(lambda m, dev: m.arange(-5.7, 5.5, 2.2, dtype=m.int32, device=dev),
          "int32-counts-floats"),
        F(lambda m, dev: m.arange(0, 300, 3, dtype=m.int8, device=dev), "int8-wraps"),
        F(lambda m, dev: m.arange(0, 8, 0.5, dtype=m.float16, device=dev), "float16"),
        F(lambda m, dev: m.arange(-4, 4, 0.25, dtype=m.bfloat16, device=dev), "bfloat16"),
        F(lambda m, dev: m.arange(0, 2 ** 24 + 5, 2 ** 23, dtype=m.float32, device=dev),
          "rounding"),
        F(lambda m, dev: m.arange(3, 3, device=dev), "empty"),
    ],
    "aten::linspace": [
        F(lambda m, dev: m.linspace(0, 1, 7, device=dev), "float"),
        F(lambda m, dev: m.linspace(-1.3, 7.9, 13, dtype=m.float64, device=dev), "float64"),
        F(lambda m, dev: m.linspace(-100, 100, 1001, device=dev), "long"),
        F(lambda m, dev: m.linspace(0, 10, 4, dtype=m.int64, device=dev), "int64"),
        F(lambda m, dev: m.linspace(1.5, -3.7, 5, dtype=m.int32, device=dev),
          "int32-truncates"),
        F(lambda m, dev: m.linspace(3, 5, 1, device=dev), "one"),
        F(lambda m, dev: m.linspace(3, 5, 0, device=dev), "zero"),
        F(lambda m, dev: m.linspace(-2, 2, 9, dtype=m.float16, device=dev), "float16"),
    ],
    "aten::eye.m": [
        F(lambda m, dev: m.eye(3, device=dev), "square"),
        F(lambda m, dev: m.eye(2, 4, dtype=m.int64, device=dev), "wide"),
        F(lambda m, dev: m.eye(4, 2, dtype=m.bool, device=dev), "tall-bool"),
        F(lambda m, dev: m.eye(0, device=dev), "empty"),
        F(lambda m, dev: m.eye(3, dtype=m.bfloat16, device=dev), "bfloat16"),
    ],
    "aten::scalar_tensor": [
        F(lambda m, dev: m.scalar_tensor(3, device=dev), "int"),
        F(lambda m, dev: m.scalar_tensor(True, device=dev), "bool"),
        F(lambda m, dev: m.scalar_tensor(3.5, dtype=m.int32, device=dev), "cast"),
        F(lambda m, dev: m.scalar_tensor(-1.25, dtype=m.float16, device=dev), "half"),
    ],
}


def _conversions():
    """``x.to(dtype)`` for every pair of dtypes, contiguous and transposed (layout preserved)."""
    out = []
    for src in DTYPES:
        for dst in DTYPES:
            fn = (lambda m, x, s=src, d=dst: x.to(dt(m, s)).to(dt(m, d)))
            out.append(S(fn, VALUES, name=f"{src}-to-{dst}"))
    out += [
        S(lambda m, x: x.t().to(m.float16), VALUES, name="transposed-keeps-layout"),
        S(lambda m, x: x.to(m.int64, copy=True), VALUES, name="copy"),
        S(lambda m, x: x.double(), np.float32([[1.1, -2.2]]), name="double"),
        S(lambda m, x: (x / 7).to(m.bfloat16), np.arange(24.0), name="f64-bf16-rounding"),
        S(lambda m, x: x.to(m.float16), np.array(1.0 + 2 ** -11 + 2 ** -40), name="f64-f16-tie"),
        S(lambda m, x: m.ops.aten._to_copy.default(x, dtype=m.int32), VALUES, name="op"),
    ]
    return out


COPIES = {
    "aten::_to_copy": _conversions(),
    "aten::clone": [
        S(lambda m, x: x.clone(), VALUES, name="contiguous"),
        S(lambda m, x: x.t().clone(), VALUES, name="transposed-kept"),
        S(lambda m, x: m.clone(x.t(), memory_format=m.contiguous_format), VALUES,
          name="contiguous-format"),
        S(lambda m, x: x.reshape(2, 2, 2, 1).clone(memory_format=m.channels_last), VALUES,
          name="channels_last"),
        S(lambda m, x: x.reshape(2, 4, 1).transpose(0, 1).clone(memory_format=m.preserve_format),
          VALUES, name="preserve"),
        S(lambda m, x: x.expand(3, 2, 4).clone(), VALUES, name="expanded"),
        S(lambda m, x: x.clone(), np.array(2.5), name="0dim"),
    ],
    "aten::copy_": [
        S(lambda m, x, s=s, d=d: m.zeros(2, 4, dtype=dt(m, d)).copy_(x.to(dt(m, s))), VALUES,
          name=f"{s}-into-{d}", meta=False)
        for s, d in [("float64", "bfloat16"), ("float64", "float16"), ("float32", "int32"),
                     ("float32", "uint8"), ("int64", "float16"), ("bool", "float32"),
                     ("float64", "bool"), ("bfloat16", "float16"), ("int32", "int8")]] + [
        S(lambda m, x: m.zeros(3, 2, 4).copy_(x), VALUES, name="broadcast", meta=False),
        S(lambda m, x: x.clone().copy_(x.flip(0)), VALUES, name="from-copy"),
        S(lambda m, x: (lambda t: t.copy_(t))(x.clone()), VALUES, name="self"),
        S(lambda m, x: x.clone().t().copy_(m.ones(2)), VALUES, name="into-transposed",
          meta=False),
    ],
    "aten::fill_.Scalar": [
        S(lambda m, v=v, d=d: m.zeros(2, 3, dtype=dt(m, d)).fill_(v), name=f"{d}-{v!r}",
          meta=False)
        for d in DTYPES for v in (2.7, -1, True)
        if not (d == "uint8" and v == -1)] + [
        S(lambda m: m.zeros(3, dtype=m.uint8).fill_(-1), name="uint8-wraps", meta=False),
        S(lambda m: m.zeros(3).fill_(float("inf")), name="inf", meta=False),
        S(lambda m, x: x.t().fill_(5), VALUES, name="transposed"),
        S(lambda m, x: m.zeros(2).fill_(x), np.array(2.5), name="0dim-tensor-value", meta=False),
        S(lambda m: m.zeros(1).expand(3).fill_(1), name="expanded", meta=False),
        S(lambda m, x: m.fill_(x, -2), VALUES, name="function"),
    ],
    "aten::fill_.Tensor": [
        S(lambda m, x, v: x.clone().fill_(v), VALUES, np.array(2.5), name="grad-value",
          meta=False),
        S(lambda m, x, v: x.t().fill_(v), VALUES, np.array(-1.0), name="transposed",
          meta=False),
    ],
    "aten::resize_": [
        S(lambda m, x: x.clone().resize_(2, 2), VALUES, name="shrink"),
        S(lambda m, x: x.clone().resize_((4, 2)), VALUES, name="same-numel"),
        S(lambda m, x: x.clone().resize_(3, 4)[:2], VALUES, name="grow-keeps-data"),
        S(lambda m, x: x.clone().resize_(2, 2, 1, 2, memory_format=m.channels_last), VALUES,
          name="channels_last"),
        S(lambda m, x: x.clone().resize_as_(x.t()), VALUES, name="resize_as_"),
        S(lambda m, x: x.clone().resize_(0), VALUES, name="empty"),
    ],
    "aten::zero_": [
        S(lambda m, x: x.zero_(), VALUES, name="method"),
        S(lambda m, x: m.zero_(x.t()), VALUES, name="function-transposed"),
    ],
    "aten::contiguous": [
        S(lambda m, x: x.t().contiguous(), VALUES, name="copies"),
        S(lambda m, x: x.contiguous(), VALUES, name="already"),
        S(lambda m, x: x.reshape(1, 2, 2, 2).contiguous(memory_format=m.channels_last), VALUES,
          name="channels_last"),
        S(lambda m, x: x.reshape(2, 4, 1, 1).contiguous(memory_format=m.channels_last), VALUES,
          name="channels_last-already-both"),
    ],
    "aten::view.dtype": [
        S(lambda m, x, d=d: x.to(m.float32).view(dt(m, d)), VALUES, name=f"float32-as-{d}")
        for d in ("int32", "int16", "uint8", "int64", "float64", "bfloat16")] + [
        S(lambda m, x: x.to(m.int64).view(m.float32), VALUES, name="int64-as-float32"),
        S(lambda m, x: x.to(m.int16).view(m.float16), VALUES, name="same-size"),
        S(lambda m, x: x.to(m.uint8).view(m.int32), VALUES, name="bytes-up"),
    ],
}

RANDOM = {
    "aten::rand": [F(lambda m, dev: m.rand(2, 3, device=dev), "float", random=True),
                   F(lambda m, dev: m.rand(4, dtype=m.float64, device=dev), "float64",
                     random=True),
                   F(lambda m, dev: m.rand((0,), dtype=m.bfloat16, device=dev), "empty",
                     random=True)],
    "aten::randn": [F(lambda m, dev: m.randn(2, 3, device=dev), "float", random=True),
                    F(lambda m, dev: m.randn((), dtype=m.float16, device=dev), "0dim",
                      random=True)],
    "aten::randint.low": [
        F(lambda m, dev: m.randint(0, 5, (2, 3), device=dev), "int64", random=True),
        F(lambda m, dev: m.randint(-3, 3, (4,), dtype=m.int8, device=dev), "int8", random=True),
        F(lambda m, dev: m.randint(10, (3,), dtype=m.float32, device=dev), "float",
          random=True)],
    "aten::randperm": [
        F(lambda m, dev: m.randperm(5, device=dev), "int64", random=True),
        F(lambda m, dev: m.randperm(4, dtype=m.float32, device=dev), "float", random=True),
        F(lambda m, dev: m.randperm(0, device=dev), "empty", random=True)],
    "aten::normal_": [
        R(lambda m, x: x.normal_(1.0, 2.0), VALUES, name="method"),
        R(lambda m, x: x.to(m.float16).normal_(), VALUES, name="half")],
    "aten::uniform_": [R(lambda m, x: x.uniform_(-1, 1), VALUES, name="method"),
                       R(lambda m, x: x.t().uniform_(), VALUES, name="transposed")],
    "aten::bernoulli.p": [R(lambda m, x: m.bernoulli(x, 0.3), VALUES, name="float"),
                          R(lambda m, x: m.bernoulli(x.to(m.int64), 0.5), VALUES, name="int"),
                          R(lambda m, x: m.bernoulli(x.t(), 0.5), VALUES, name="transposed")],
    "aten::bernoulli": [R(lambda m, x: m.bernoulli(x), np.full((2, 3), 0.5), name="float"),
                        R(lambda m, x: m.bernoulli(x), np.array([0.0, 1.0]), name="0-1")],
    "aten::multinomial": [
        R(lambda m, x: m.multinomial(x, 2), np.array([0.2, 0.3, 0.5]), name="1d"),
        R(lambda m, x: x.multinomial(4, replacement=True), np.array([[0.2, 0.8], [1.0, 0.0]]),
          name="2d-replacement"),
    ],
}



def _window_samples():
    """Each window: lengths 0, 1 and more, periodic and symmetric, every float dtype."""
    out = {}
    calls = {
        "aten::hann_window.periodic": lambda m, n, *a, **k: m.hann_window(n, *a, **k),
        "aten::hamming_window.periodic_alpha_beta":
            lambda m, n, *a, **k: m.hamming_window(n, *a, **k),
        "aten::blackman_window.periodic": lambda m, n, *a, **k: m.blackman_window(n, *a, **k),
        "aten::bartlett_window.periodic": lambda m, n, *a, **k: m.bartlett_window(n, *a, **k),
        "aten::kaiser_window.beta": lambda m, n, *a, **k: m.kaiser_window(n, *a, **k),
    }
    for qualname, call in calls.items():
        out[qualname] = [
            F(lambda m, dev, call=call, n=n, p=p: call(m, n, p, device=dev), f"{n}-{p}",
              atol=1e-6) for n in (0, 1, 2, 7, 10) for p in (True, False)] + [
            F(lambda m, dev, call=call, d=d: call(m, 9, dtype=dt(m, d), device=dev), d,
              atol=2e-3 if d == "float16" else 2e-2 if d == "bfloat16" else 1e-12)
            for d in ("float16", "bfloat16", "float64")]
    out["aten::hamming_window.periodic_alpha_beta"].append(
        F(lambda m, dev: m.hamming_window(8, False, 0.5, 0.3, device=dev), "alpha-beta",
          atol=1e-6))
    out["aten::kaiser_window.beta"].append(
        F(lambda m, dev: m.kaiser_window(8, True, 4.5, dtype=m.float64, device=dev), "beta"))
    return out


def _triangle_samples(name):
    return {f"aten::{name}": [
        F(lambda m, dev, r=r, c=c, k=k: getattr(m, name)(r, c, k, device=dev), f"{r}x{c}{k:+d}")
        for r, c, k in ((3, 3, 0), (3, 5, 1), (5, 3, -2), (4, 4, 10), (4, 4, -10), (0, 3, 0),
                        (1, 1, 0))] + [
        F(lambda m, dev: getattr(m, name)(3, 4, dtype=m.int32, device=dev), "int32")]}


SAMPLES = FACTORIES | COPIES | RANDOM | _window_samples() | _triangle_samples("tril_indices") | \
    _triangle_samples("triu_indices")
