"""Exceptions of the capture stage (``torch._dynamo.exc``)."""

from ..compile.backends import InvalidBackend  # noqa: F401
from ..compile.capture.convert_frame import CaptureError as Unsupported  # noqa: F401
from ..compile.capture.convert_frame import TorchDynamoException  # noqa: F401
