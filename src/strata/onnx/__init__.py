"""``strata.onnx``: importable; ``export`` is not built yet and says so."""


def export(*args, **kwargs):
    raise RuntimeError("strata.onnx.export: ONNX export is not built in strata yet")


def is_in_onnx_export() -> bool:
    return False
