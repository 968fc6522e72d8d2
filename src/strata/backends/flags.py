"""``torch.backends.*`` flags that programs read and set (``torch.backends.cudnn.allow_tf32``,
``torch.backends.cuda.matmul.allow_tf32``, ...). strata has no cuDNN or CUDA; the flags exist so
such programs run, and ``is_available()`` answers truthfully."""


class _Flags:
    def __init__(self, name, available=False, **flags):
        self._name = name
        self._available = available
        self.__dict__.update(flags)

    def is_available(self):
        return self._available

    def __repr__(self):
        return f"<strata.backends.{self._name} flags>"


cudnn = _Flags("cudnn", enabled=True, benchmark=False, deterministic=False, allow_tf32=True)
cudnn.version = lambda: None
cuda = _Flags("cuda", matmul=_Flags("cuda.matmul", allow_tf32=False,
                                    allow_fp16_reduced_precision_reduction=True,
                                    allow_bf16_reduced_precision_reduction=True))
cuda.is_built = lambda: False
mps = _Flags("mps")
mps.is_built = lambda: False
mkldnn = _Flags("mkldnn", enabled=False)
openmp = _Flags("openmp")
opt_einsum = _Flags("opt_einsum", enabled=True, strategy="auto")
