"""``strata.fft``: PyTorch's ``torch.fft`` namespace (re-exports only).

    import strata as torch
    x = torch.tensor([1., 2., 3., 4.])
    torch.fft.irfft(torch.fft.rfft(x), n=4)   # tensor([1., 2., 3., 4.])

The ops live in ``ops/fft.py`` (primitives ``_fft_r2c``/``_fft_c2r``/``_fft_c2c`` and these
composites over them); the CPU kernels are NumPy's pocketfft.
"""

from .ops.fft import fft_fft as fft  # noqa: F401
from .ops.fft import fft_fft2 as fft2  # noqa: F401
from .ops.fft import fft_fftfreq as fftfreq  # noqa: F401
from .ops.fft import fft_fftn as fftn  # noqa: F401
from .ops.fft import fft_fftshift as fftshift  # noqa: F401
from .ops.fft import fft_hfft as hfft  # noqa: F401
from .ops.fft import fft_ifft as ifft  # noqa: F401
from .ops.fft import fft_ifft2 as ifft2  # noqa: F401
from .ops.fft import fft_ifftn as ifftn  # noqa: F401
from .ops.fft import fft_ifftshift as ifftshift  # noqa: F401
from .ops.fft import fft_ihfft as ihfft  # noqa: F401
from .ops.fft import fft_irfft as irfft  # noqa: F401
from .ops.fft import fft_irfft2 as irfft2  # noqa: F401
from .ops.fft import fft_irfftn as irfftn  # noqa: F401
from .ops.fft import fft_rfft as rfft  # noqa: F401
from .ops.fft import fft_rfft2 as rfft2  # noqa: F401
from .ops.fft import fft_rfftfreq as rfftfreq  # noqa: F401
from .ops.fft import fft_rfftn as rfftn  # noqa: F401
