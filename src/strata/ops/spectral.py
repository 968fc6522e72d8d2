"""Short-time Fourier transforms: ``stft`` and ``istft``, composites over the FFT primitives
(``stft``/``istft`` in ``aten/src/ATen/native/SpectralOps.cpp``), so autograd needs no formula
of its own.

``stft`` pads the signal (``center``), cuts it into overlapping frames (``unfold``: a view),
multiplies each by the window (zero-padded to ``n_fft`` in the middle) and transforms each frame.
``istft`` inverts each frame, windows it again, overlap-adds the frames and divides by the
overlap-added squared window (the "window envelope"), which must not vanish anywhere.

    import strata as torch
    x = torch.randn(64)
    w = torch.hann_window(16)
    X = torch.stft(x, 16, hop_length=4, window=w, return_complex=True)   # (9, 17)
    torch.istft(X, 16, hop_length=4, window=w, length=64)                # ~ x
"""

import warnings

from ..core import dtype as D
from . import factory as F
from . import nn as N
from . import nn_composites as NC
from . import pointwise as P
from . import reductions as RD
from . import scatter as SC
from . import shape as S
from .fft import NORM_BY_N, NORM_BY_ROOT_N, NORM_NONE, fft_c2c, fft_c2r, fft_r2c
from .op import defop, register_decomposition
from .pointwise import _user_stacklevel

_NO_WINDOW = ("A window was not provided. A rectangular window will be applied,which is known to "
              "cause spectral leakage. Other windows such as torch.hann_window or "
              "torch.hamming_window are recommended to reduce spectral leakage.To suppress this "
              "warning and use a rectangular window, explicitly set `window=torch.ones(n_fft, "
              "device=<device>)`.")
_NO_WINDOW_INVERSE = ("A window was not provided. A rectangular window will be applied.Please "
                      "provide the same window used by stft to make the inversion lossless.To "
                      "suppress this warning and use a rectangular window, explicitly set "
                      "`window=torch.ones(n_fft, device=<device>)`.")
_REAL_RESULT_DEPRECATED = (
    "stft with return_complex=False is deprecated. In a future pytorch release, stft will return "
    "complex tensors for all inputs, and return_complex=False will raise an error.\nNote: you "
    "can still call torch.view_as_real on the complex output to recover the old return format.")

stft = defop("stft.center(Tensor self, int n_fft, int? hop_length=None, int? win_length=None, "
             "Tensor? window=None, bool center=True, str pad_mode=\"reflect\", "
             "bool normalized=False, bool? onesided=None, bool? return_complex=None, "
             "bool? align_to_window=None) -> Tensor", method=True, function=True)
istft = defop("istft(Tensor self, int n_fft, int? hop_length=None, int? win_length=None, "
              "Tensor? window=None, bool center=True, bool normalized=False, "
              "bool? onesided=None, int? length=None, bool return_complex=False) -> Tensor",
              method=True, function=True)


def _full_window(name, window, win_length, n_fft, like):
    """The window as ``n_fft`` points: ``win_length`` of it centred between zeros (ones when no
    window is given)."""
    if window is None:
        window = F.full((win_length,), 1, dtype=like.dtype.to_real(), device=like.device)
    elif window.ndim != 1 or window.shape[0] != win_length:
        raise RuntimeError(f"{name}: expected a 1D window tensor of size equal to "
                           f"win_length={win_length}, but got window with size "
                           f"{list(window.shape)}")
    if win_length == n_fft:
        return window
    left = (n_fft - win_length) // 2
    return N.constant_pad_nd(window, [left, n_fft - win_length - left], 0)


@register_decomposition(stft)
def _stft(self, n_fft, hop_length=None, win_length=None, window=None, center=True,
          pad_mode="reflect", normalized=False, onesided=None, return_complex=None,
          align_to_window=None):
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    if window is None:
        warnings.warn(_NO_WINDOW, UserWarning, stacklevel=_user_stacklevel())
    complex_input = self.dtype.is_complex or (window is not None and window.dtype.is_complex)
    if return_complex is None:
        if not complex_input:
            raise RuntimeError("stft requires the return_complex parameter be given for real "
                               "inputs, and will further require that return_complex=True in a "
                               "future PyTorch release.")
        return_complex = True
    if not return_complex:
        warnings.warn(_REAL_RESULT_DEPRECATED, UserWarning, stacklevel=_user_stacklevel())
    x = self
    if center:   # as torch.functional.stft: pad a (1, 1, length)-like view, then view it back
        signal_dim = x.ndim
        extended = S.reshape(x, (1,) * max(0, 3 - signal_dim) + tuple(x.shape))
        padded = NC.pad(extended, [n_fft // 2, n_fft // 2], pad_mode)
        x = S.reshape(padded, tuple(padded.shape[-signal_dim:]))
    if x.ndim not in (1, 2):
        raise RuntimeError("stft: expected a 1D or 2D tensor")
    frames_of = x if x.ndim == 2 else S.unsqueeze(x, 0)
    length = frames_of.shape[1]
    if n_fft <= 0 or n_fft > length:
        raise RuntimeError(f"stft: expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop_length <= 0:
        raise RuntimeError(f"stft: expected hop_length > 0, but got hop_length={hop_length}")
    if win_length <= 0 or win_length > n_fft:
        raise RuntimeError(f"stft: expected 0 < win_length <= n_fft, but got "
                           f"win_length={win_length}")
    if window is not None or win_length < n_fft:
        full_window = _full_window("stft", window, win_length, n_fft, x)
    onesided = not complex_input if onesided is None else onesided
    if complex_input and onesided:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    frames = S.unfold(frames_of, 1, n_fft, hop_length)        # (batch, n_frames, n_fft)
    if window is not None or win_length < n_fft:
        frames = P.mul(frames, full_window)
    mode = NORM_BY_ROOT_N if normalized else NORM_NONE
    if frames.dtype.is_complex:
        out = fft_c2c(frames, [2], mode, True)
    else:
        frames = frames if frames.dtype.category == D.FLOATING else frames.to(D.get_default_dtype())
        out = fft_r2c(frames, [2], mode, onesided)
    out = S.transpose(out, 1, 2)                              # (batch, freq, n_frames)
    if x.ndim == 1:
        out = S.squeeze(out, [0])
    if not return_complex:
        from .complex import view_as_real
        return view_as_real(out)
    return out


def _overlap_add(frames, hop_length, total):
    """Sum (channel, n_frames, n_fft) frames placed ``hop_length`` apart into (channel, total):
    ``unfold_backward``, as an ``index_add`` over the flattened frames."""
    channels, n_frames, n_fft = frames.shape
    starts = P.mul(F.arange(0, n_frames, 1, dtype=D.int64, device=frames.device), hop_length)
    offsets = F.arange(0, n_fft, 1, dtype=D.int64, device=frames.device)
    index = S.reshape(P.add(S.unsqueeze(starts, 1), S.unsqueeze(offsets, 0)), (-1,))
    out = F.full((channels, total), 0, dtype=frames.dtype, device=frames.device)
    return SC.index_add(out, 1, index, S.reshape(frames, (channels, n_frames * n_fft)))


@register_decomposition(istft)
def _istft(self, n_fft, hop_length=None, win_length=None, window=None, center=True,
           normalized=False, onesided=None, length=None, return_complex=False):
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    if window is None:
        warnings.warn(_NO_WINDOW_INVERSE, UserWarning, stacklevel=_user_stacklevel())
    if not self.dtype.is_complex:
        raise RuntimeError("istft requires a complex-valued input tensor matching the output "
                           "from stft with return_complex=True.")
    if self.numel() == 0:
        raise RuntimeError("istft: Input tensor must be non-empty")
    if self.ndim not in (2, 3):
        raise RuntimeError(f"istft: Expected a tensor with 2 or 3 dimensions of complex dtype, "
                           f"but got {self.ndim}D complex tensor")
    fft_size, n_frames = self.shape[-2], self.shape[-1]
    onesided = fft_size != n_fft if onesided is None else onesided
    if onesided and n_fft // 2 + 1 != fft_size:
        raise RuntimeError(f"istft: expected the frequency dimension (3rd to the last) of the "
                           f"input tensor to match n_fft / 2 + 1 when onesided=True, but got "
                           f"{fft_size}")
    if not onesided and n_fft != fft_size:
        raise RuntimeError(f"istft: expected the frequency dimension (3rd to the last) of the "
                           f"input tensor to match n_fft when onesided=False, but got "
                           f"{fft_size}")
    if not 0 < win_length <= n_fft:
        raise RuntimeError(f"istft: expected 0 < win_length <= n_fft, but got "
                           f"win_length={win_length}")
    if not 0 < hop_length <= win_length:
        raise RuntimeError("istft: expected 0 < hop_length <= win_length")
    full_window = _full_window("istft", window, win_length, n_fft, self)
    x = self if self.ndim == 3 else S.unsqueeze(self, 0)
    x = S.transpose(x, 1, 2)                                  # (channel, n_frames, fft_size)
    mode = NORM_BY_ROOT_N if normalized else NORM_BY_N
    if return_complex:
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        frames = fft_c2c(x.contiguous(), [2], mode, False)
    else:
        if window is not None and window.dtype.is_complex:
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not onesided:
            x = S.slice(x, 2, 0, n_fft // 2 + 1)
        frames = fft_c2r(x.contiguous(), [2], mode, n_fft)   # (channel, n_frames, n_fft)
    total = n_fft + hop_length * (n_frames - 1)
    y = _overlap_add(P.mul(frames, full_window), hop_length, total)
    squared = S.expand(S.reshape(P.mul(full_window, full_window), (1, 1, n_fft)),
                       (1, n_frames, n_fft))
    envelope = _overlap_add(squared, hop_length, total)
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else (total - n_fft // 2 if center else total)
    y = S.slice(y, 1, start, min(end, total))
    envelope = S.slice(envelope, 1, start, min(end, total))
    if RD.amin(P.abs(envelope)).item() < 1e-11:
        raise RuntimeError("istft: window overlap add min: 1")
    y = P.div(y, envelope)
    if self.ndim == 2:
        y = S.squeeze(y, 0)
    if end > total:
        y = N.constant_pad_nd(y, [0, end - total], 0)
    return y
