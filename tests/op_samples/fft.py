"""Sample inputs for ``ops/fft.py``: every ``torch.fft`` function over real and complex inputs,
each ``norm``, trimmed and zero-padded sizes (``n=``/``s=``), and chosen ``dim``s. Real float
inputs also go through the gradient tests."""

import numpy as np

from op_samples import Sample
from op_samples.complex import carr, rarr

NORMS = (None, "backward", "ortho", "forward")
S = Sample


def _one_dim(name, real, complex_ok=True):
    fn = {"fft": lambda m: m.fft.fft, "ifft": lambda m: m.fft.ifft, "rfft": lambda m: m.fft.rfft,
          "irfft": lambda m: m.fft.irfft, "hfft": lambda m: m.fft.hfft,
          "ihfft": lambda m: m.fft.ihfft}[name]
    out = [S(lambda m, x, norm=norm: fn(m)(x, norm=norm), (real,), name=f"norm-{norm}")
           for norm in NORMS]
    out += [S(lambda m, x: fn(m)(x, n=3, dim=0), (rarr("float64", (5, 2)),), name="trim-dim0"),
            S(lambda m, x: fn(m)(x, n=9), (rarr("float64", (2, 4)),), name="pad"),
            S(lambda m, x: fn(m)(x), (np.arange(6),), name="int")]
    if complex_ok:
        out += [S(lambda m, z: fn(m)(z), (carr(d, (2, 5)),), name=d)
                for d in ("complex64", "complex128")]
        out.append(S(lambda m, z: fn(m)(z, n=7, norm="ortho"), (carr("complex128", (3, 4)),),
                     name="complex-pad"))
    return out


def _n_dim(name, real, complex_ok=True):
    fn = {"fftn": lambda m: m.fft.fftn, "ifftn": lambda m: m.fft.ifftn,
          "rfftn": lambda m: m.fft.rfftn, "irfftn": lambda m: m.fft.irfftn,
          "fft2": lambda m: m.fft.fft2, "ifft2": lambda m: m.fft.ifft2,
          "rfft2": lambda m: m.fft.rfft2, "irfft2": lambda m: m.fft.irfft2}[name]
    out = [S(lambda m, x, norm=norm: fn(m)(x, norm=norm), (real,), name=f"norm-{norm}")
           for norm in NORMS]
    out += [S(lambda m, x: fn(m)(x, s=(3, 5)), (rarr("float64", (2, 4, 4)),), name="s"),
            S(lambda m, x: fn(m)(x, dim=(0, 2)), (rarr("float64", (3, 2, 4)),), name="dim")]
    if name.endswith("n"):
        out += [S(lambda m, x: fn(m)(x, s=(-1, 6), dim=(2, 0)), (rarr("float64", (3, 2, 4)),),
                  name="s-and-dim")]
    if complex_ok:
        out += [S(lambda m, z: fn(m)(z), (carr(d, (3, 4)),), name=d)
                for d in ("complex64", "complex128")]
    return out


_REAL = rarr("float32", (3, 6))
SAMPLES = {
    "aten::fft_fft": _one_dim("fft", _REAL),
    "aten::fft_ifft": _one_dim("ifft", _REAL),
    "aten::fft_rfft": _one_dim("rfft", _REAL, complex_ok=False),
    "aten::fft_ihfft": _one_dim("ihfft", _REAL, complex_ok=False),
    "aten::fft_irfft": _one_dim("irfft", carr("complex64", (2, 4))),
    "aten::fft_hfft": _one_dim("hfft", carr("complex64", (2, 4))),
    "aten::fft_fftn": _n_dim("fftn", _REAL),
    "aten::fft_ifftn": _n_dim("ifftn", _REAL),
    "aten::fft_fft2": _n_dim("fft2", _REAL),
    "aten::fft_ifft2": _n_dim("ifft2", _REAL),
    "aten::fft_rfftn": _n_dim("rfftn", _REAL, complex_ok=False),
    "aten::fft_rfft2": _n_dim("rfft2", _REAL, complex_ok=False),
    "aten::fft_irfftn": _n_dim("irfftn", carr("complex128", (3, 4))),
    "aten::fft_irfft2": _n_dim("irfft2", carr("complex128", (3, 4))),
    # factories: no input to put on the meta device
    "aten::fft_fftfreq": [S(lambda m, n=n, d=d: m.fft.fftfreq(n, d), name=f"n{n}-d{d}",
                            meta=False)
                          for n, d in ((1, 1.0), (4, 1.0), (5, 0.1), (8, 2.0))] + [
        S(lambda m: m.fft.fftfreq(5, dtype=m.float64), name="float64", meta=False)],
    "aten::fft_rfftfreq": [S(lambda m, n=n: m.fft.rfftfreq(n, 0.5), name=f"n{n}", meta=False)
                           for n in (1, 4, 7)] + [
        S(lambda m: m.fft.rfftfreq(6, dtype=m.float64), name="float64", meta=False)],
    "aten::fft_fftshift": [S(lambda m, x: m.fft.fftshift(x), (np.arange(12).reshape(3, 4),),
                             name="all"),
                           S(lambda m, x: m.fft.fftshift(x, dim=1), (rarr("float64", (3, 5)),),
                             name="dim"),
                           S(lambda m, z: m.fft.fftshift(z, dim=(0,)), (carr(),), name="complex")],
    "aten::fft_ifftshift": [S(lambda m, x: m.fft.ifftshift(x), (np.arange(15).reshape(3, 5),),
                              name="all"),
                            S(lambda m, x: m.fft.ifftshift(x, dim=-1), (rarr("float64", (2, 5)),),
                              name="dim")],
    # the primitives, as torch._fft_* (their gradients are the formulas of derivatives/fft.py)
    "aten::_fft_r2c": [S(lambda m, x: m._fft_r2c(x, [1], 1, True), (rarr("float64", (2, 5)),),
                         name="onesided"),
                       S(lambda m, x: m._fft_r2c(x, [0, 1], 2, False), (rarr("float64", (3, 4)),),
                         name="twosided")],
    "aten::_fft_c2r": [S(lambda m, z: m._fft_c2r(z, [1], 2, 6), (carr("complex128", (2, 4)),),
                         name="even"),
                       S(lambda m, z: m._fft_c2r(z, [0, 1], 1, 5), (carr("complex64", (3, 3)),),
                         name="odd"),
                       S(lambda m, x: m._fft_c2r(m.view_as_complex(x), [0], 0, 7),
                         (rarr("float64", (4, 2)),), name="from-real-pairs",
                         noncontiguous=False)],
    "aten::_fft_c2c": [S(lambda m, z: m._fft_c2c(z, [1], 0, True), (carr("complex128", (2, 4)),),
                         name="forward"),
                       S(lambda m, z: m._fft_c2c(z, [0], 2, False), (carr("complex64", (3, 2)),),
                         name="backward"),
                       S(lambda m, x: m._fft_c2c(m.view_as_complex(x), [0], 1, True),
                         (rarr("float64", (4, 2)),), name="from-real-pairs",
                         noncontiguous=False)],
}

_SIGNAL = rarr("float64", (40,))
_HANN = np.hanning(17)[:16]   # periodic Hann window of 16 points, as torch.hann_window(16)
SAMPLES["aten::stft.center"] = [
    S(lambda m, x, w: m.stft(x, 16, hop_length=4, window=w, return_complex=True),
      (_SIGNAL, _HANN), name="hann"),
    S(lambda m, x: m.stft(x, 8, return_complex=True, center=False, normalized=True),
      (_SIGNAL,), name="no-window-uncentered"),
    S(lambda m, x: m.stft(x, 12, hop_length=5, win_length=7, return_complex=True,
                          pad_mode="constant"), (rarr("float32", (2, 30)),), name="batched"),
    S(lambda m, x: m.stft(x, 8, return_complex=True, onesided=False), (_SIGNAL,),
      name="twosided"),
    S(lambda m, z: m.stft(z, 8, hop_length=3, return_complex=True), (carr("complex128", (24,)),),
      name="complex"),
]
# istft checks its window envelope's values (.item()), so it cannot run on the meta device
SAMPLES["aten::istft"] = [
    S(lambda m, x, w: m.istft(m.stft(x, 16, hop_length=4, window=w, return_complex=True), 16,
                              hop_length=4, window=w, length=40), (_SIGNAL, _HANN),
      name="round-trip"),
    S(lambda m, x: m.istft(m.stft(x, 8, return_complex=True, onesided=False), 8,
                           onesided=False, return_complex=True), (rarr("float64", (2, 20)),),
      name="complex-result"),
    S(lambda m, x: m.istft(m.stft(x, 12, hop_length=3, return_complex=True, center=False),
                           12, hop_length=3, center=False), (_SIGNAL,), name="uncentered"),
    S(lambda m, x: m.istft(m.stft(x, 8, return_complex=True, normalized=True), 8,
                           normalized=True, length=45), (_SIGNAL,), name="longer-length"),
]
for _sample in SAMPLES["aten::istft"]:
    _sample.meta = False
