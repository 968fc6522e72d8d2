import numpy as np
from helpers import check, check_error, check_meta


def test_add_matches_torch():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.ones(3, dtype=np.float32)
    check(lambda m, x, y: x + y, a, b)
    check_meta(lambda m, x, y: x + y, a, b)


def test_broadcast_error():
    a = np.zeros(3, np.float32)
    b = np.zeros(4, np.float32)
    check_error(lambda m, x, y: x + y, a, b, match="must match the size of tensor b")
