"""The ``Distribution`` base: batch/event shapes and argument validation."""

from ..core.shape import Size


class Distribution:
    has_rsample = False
    _validate_args_default = True

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape = Size(batch_shape)
        self._event_shape = Size(event_shape)
        self._validate_args = self._validate_args_default if validate_args is None \
            else validate_args

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    def _extended_shape(self, sample_shape=()):
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def sample(self, sample_shape=()):
        from ..autograd.grad_mode import no_grad
        with no_grad():
            return self.rsample(sample_shape) if self.has_rsample else self._sample(sample_shape)

    def __repr__(self):
        parts = []
        for name in self.arg_names:
            value = getattr(self, name)
            parts.append(f"{name}: {value.size() if hasattr(value, 'size') else value}")
        return f"{type(self).__name__}({', '.join(parts)})"
