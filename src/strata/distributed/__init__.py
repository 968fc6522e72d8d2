"""``strata.distributed``: importable, not built yet. Multi-process training is planned on mpi4py;
until then every entry point raises a clear error instead of pretending to work."""


def is_available() -> bool:
    return False


def is_initialized() -> bool:
    return False


def _not_built(name):
    def fn(*args, **kwargs):
        raise RuntimeError(f"strata.distributed.{name}: distributed training is not built in "
                           "strata yet (single-process only)")
    fn.__name__ = name
    return fn


init_process_group = _not_built("init_process_group")
destroy_process_group = _not_built("destroy_process_group")
all_reduce = _not_built("all_reduce")
broadcast = _not_built("broadcast")
barrier = _not_built("barrier")
get_rank = _not_built("get_rank")
get_world_size = _not_built("get_world_size")
