"""``torch.layout`` and ``torch.memory_format`` values. Each is its name as a string subclass:
strata's code compares and formats the plain names (``"sparse_coo"``, ``"channels_last"``),
while a program sees PyTorch's types (``isinstance(x.layout, torch.layout)``) and reprs
(``torch.strided``)."""


class _Named(str):
    __slots__ = ()

    def __repr__(self):
        return f"strata.{str.__str__(self)}"

    def __reduce__(self):
        return type(self), (str(self),)


class layout(_Named):
    """How a tensor's elements are stored: ``strided`` or ``sparse_coo``."""


class memory_format(_Named):
    """A dense tensor's dimension order in memory."""


strided, sparse_coo = layout("strided"), layout("sparse_coo")
contiguous_format, preserve_format = memory_format("contiguous_format"), \
    memory_format("preserve_format")
channels_last, channels_last_3d = memory_format("channels_last"), \
    memory_format("channels_last_3d")
