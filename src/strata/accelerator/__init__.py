"""``strata.accelerator``: the current accelerator, if any (``torch.accelerator``, 2.6+)."""


def is_available() -> bool:
    return False


def current_accelerator(check_available=False):
    return None


def device_count() -> int:
    return 0
