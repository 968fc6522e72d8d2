"""Sample inputs for the ops of ``ops/complex.py``: complex64/complex128 inputs, real inputs
(which gradient tests differentiate), broadcasting, 0-dim and empty tensors."""

import numpy as np

from op_samples import Sample

COMPLEX = ("complex64", "complex128")


def carr(dtype="complex64", shape=(2, 3), seed=0):
    """Complex values with both parts in [-3, 3)."""
    rng = np.random.default_rng(seed)
    return np.asarray(rng.uniform(-3, 3, shape) + 1j * rng.uniform(-3, 3, shape), dtype)


def rarr(dtype="float32", shape=(2, 3), lo=-3.0, hi=3.0, seed=1):
    return np.random.default_rng(seed).uniform(lo, hi, shape).astype(dtype)


def _per_dtype(fn, name, shape=(2, 3)):
    return [Sample(fn, (carr(d, shape),), name=f"{name}-{d}") for d in COMPLEX]


def _values_and_magnitudes(values, vectors):
    return values, vectors.abs()


def _symmetric_functions(values):
    return values.sum(-1), values.prod(-1), values.abs().sum(-1)


S = Sample
SAMPLES = {
    "aten::view_as_real": _per_dtype(lambda m, z: m.view_as_real(z), "view") + [
        S(lambda m, z: m.view_as_real(z.t()), (carr(),), name="transposed"),
        S(lambda m, z: m.view_as_real(z), (carr(shape=()),), name="0d"),
        S(lambda m, z: m.view_as_real(z)[..., 0] * 2, (carr(),), name="through-view"),
        S(lambda m, x: m.view_as_real(m.view_as_complex(x).exp()), (rarr("float64", (3, 2)),),
          name="round-trip", noncontiguous=False)],
    "aten::view_as_complex": [
        S(lambda m, x: m.view_as_complex(x), (rarr(d, (3, 2)),), name=d, noncontiguous=False)
        for d in ("float32", "float64")] + [
        S(lambda m, x: m.view_as_complex(x.reshape(2, 2, 2)), (rarr("float64", (8,)),),
          name="3d", noncontiguous=False),
        S(lambda m, x: m.view_as_complex(x) * 2, (rarr("float64", (4, 2)),), name="through",
          noncontiguous=False)],
    "aten::real": _per_dtype(lambda m, z: m.real(z), "fn") + [
        S(lambda m, z: z.real, (carr(),), name="attr"),
        S(lambda m, x: x.real * 2, (rarr(),), name="of-real")],
    "aten::imag": _per_dtype(lambda m, z: m.imag(z), "fn") + [
        S(lambda m, z: z.imag * 2, (carr("complex128"),), name="attr")],
    "aten::conj_physical": _per_dtype(lambda m, z: m.conj_physical(z), "fn") + [
        S(lambda m, x: m.conj_physical(x), (rarr(),), name="real")],
    "aten::conj_physical_": [S(lambda m, z: z.conj_physical_(), (carr(),), name="inplace")],
    "aten::conj": _per_dtype(lambda m, z: z.conj().resolve_conj(), "method") + [
        S(lambda m, x: m.conj(x) * 1, (rarr("float64"),), name="real")],
    "aten::angle": _per_dtype(lambda m, z: m.angle(z), "complex") + [
        S(lambda m, x: m.angle(x), (np.array([-2.0, 0.0, 3.0, -0.5]),), name="real"),
        S(lambda m, x: m.angle(x), (np.array([-2, 0, 3]),), name="int")],
    "aten::sgn": _per_dtype(lambda m, z: m.sgn(z), "complex") + [
        S(lambda m, z: z.sgn(), (np.array([0j, 3 + 4j], np.complex64),), name="zero"),
        S(lambda m, x: m.sgn(x), (np.array([-2, 0, 5]),), name="real"),
        S(lambda m, x: m.sgn(m.view_as_complex(x)), (rarr("float64", (3, 2)),),
          name="from-real-pairs", noncontiguous=False)],
    "aten::complex": [
        S(lambda m, a, b: m.complex(a, b), (rarr(d), rarr(d, seed=2)), name=d)
        for d in ("float32", "float64")] + [
        S(lambda m, a, b: m.complex(a, b), (rarr("float64", (3, 1)), rarr("float64", (4,))),
          name="broadcast")],
    "aten::polar": [
        S(lambda m, a, b: m.polar(a, b), (rarr(d, lo=0.1), rarr(d, seed=2)), name=d)
        for d in ("float32", "float64")],
    "aten::isreal": [S(lambda m, z: m.isreal(z), (np.array([1 + 0j, 2j, -0j], np.complex64),),
                       name="complex"),
                     S(lambda m, x: x.isreal(), (rarr(),), name="real")],
    # eigenvectors are unique up to a phase each: samples compare phase-free quantities
    "aten::linalg_eig": [
        S(lambda m, a: (m.linalg.eig(a).eigenvalues, m.linalg.eig(a).eigenvectors.abs()),
          (rarr("float64", (3, 3), seed=5),), name="real"),
        S(lambda m, a: _values_and_magnitudes(*m.linalg.eig(a)),
          (rarr("float32", (2, 4, 4), seed=6),), name="batched", atol=1e-4, rtol=1e-4),
        S(lambda m, z: m.linalg.eig(z).eigenvectors.abs(), (carr("complex128", (3, 3), seed=7),),
          name="complex")],
    "aten::linalg_eigvals": [
        S(lambda m, a: m.linalg.eigvals(a), (rarr("float64", (4, 4), seed=8),), name="real"),
        # LAPACK builds may order complex eigenvalues differently: compare symmetric functions
        S(lambda m, z: _symmetric_functions(m.linalg.eigvals(z)),
          (carr("complex64", (2, 3, 3), seed=9),), name="complex", atol=1e-4, rtol=1e-4)],
}

# arithmetic, reductions and movement of complex tensors, run under the ops they call
_MORE = {
    "aten::add.Tensor": [S(lambda m, z, w: z + w, (carr(), carr(seed=3)), name="complex"),
                         S(lambda m, z, x: z + x, (carr(), rarr("float64")), name="c64+f64"),
                         S(lambda m, x: x + 1j, (rarr("float64"),), name="scalar-1j")],
    "aten::mul.Tensor": [S(lambda m, z, w: z * w, (carr("complex128"), carr("complex128", seed=3)),
                           name="complex")],
    "aten::div.Tensor": [S(lambda m, z, w: z / w, (carr(), carr(seed=3)), name="complex")],
    "aten::exp": [S(lambda m, z: m.exp(z), (carr(),), name="complex")],
    "aten::log": [S(lambda m, z: m.log(z), (carr("complex128"),), name="complex")],
    "aten::sqrt": [S(lambda m, z: m.sqrt(z), (carr(),), name="complex")],
    "aten::abs": [S(lambda m, z: m.abs(z), (carr(),), name="complex")],
    "aten::sum.dim_IntList": [S(lambda m, z: z.sum(0), (carr(),), name="complex")],
    "aten::mean.dim": [S(lambda m, z: z.mean(), (carr(),), name="complex")],
    "aten::prod": [S(lambda m, z: z.prod(), (carr(),), name="complex")],
    "aten::mm": [S(lambda m, a, b: a @ b, (carr(), carr(shape=(3, 2), seed=4)), name="complex")],
    "aten::cat": [S(lambda m, a, b: m.cat([a, b]), (carr(), carr(seed=4)), name="complex")],
    "aten::eq.Tensor": [S(lambda m, a: a == a.conj(), (carr(),), name="complex")],
}
for _q, _samples in _MORE.items():
    SAMPLES.setdefault(_q, []).extend(_samples)
