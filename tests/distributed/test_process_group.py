"""In one process (an MPI job of one rank): the process-group API and its errors against
PyTorch's, argument checks that fire before anything is sent, and collectives on the profiler's
comm track and in strata.explain."""

import datetime
import json

import numpy as np
import pytest
import torch
import torch.distributed as tdist

import strata
import strata.distributed as dist

pytest.importorskip("mpi4py")


def error_of(fn):
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value), str(info.value)


@pytest.fixture
def world():
    dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=30))
    yield dist.group.WORLD
    dist.destroy_process_group()


def test_default_group_errors_match_torch():
    assert not dist.is_initialized() and not tdist.is_initialized()
    for name in ("get_rank", "get_world_size"):
        assert error_of(getattr(dist, name)) == error_of(getattr(tdist, name))
    assert error_of(lambda: dist.all_reduce(strata.ones(2))) == \
        error_of(lambda: tdist.all_reduce(torch.ones(2)))
    assert error_of(lambda: dist.init_process_group("mpi", timeout=5)) == (
        TypeError, "Expected timeout argument to be of type datetime.timedelta, got "
                   "<class 'int'>")
    assert error_of(lambda: dist.init_process_group(init_method="env://", store=object()))[0] \
        is AssertionError
    assert error_of(lambda: strata.nn.parallel.DistributedDataParallel(strata.nn.Linear(1, 1))) \
        == error_of(lambda: torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(1, 1)))
    assert error_of(lambda: dist.init_process_group("nccl"))[0] is RuntimeError
    assert error_of(lambda: strata.nn.parallel.DistributedDataParallel(
        strata.nn.Linear(1, 1), mixed_precision=object()))[0] is NotImplementedError
    assert not dist.is_initialized()


def test_init_destroy_and_world_of_one(world):
    assert dist.is_initialized() and dist.is_available()
    assert (dist.get_rank(), dist.get_world_size(), dist.get_backend()) == (0, 1, "mpi")
    assert error_of(lambda: dist.init_process_group("mpi")) == \
        (ValueError, "trying to initialize the default process group twice!")
    assert error_of(lambda: dist.destroy_process_group("x")) == \
        (ValueError, "Invalid process group specified")
    assert error_of(lambda: dist.new_group([0, 3]))[0] is ValueError
    t = strata.tensor([1.0, 2.0])
    work = dist.all_reduce(t, op=dist.ReduceOp.AVG, async_op=True)
    assert work.wait() is True and work.is_completed()
    assert work.get_future().value()[0] is t
    np.testing.assert_array_equal(t.numpy(), [1.0, 2.0])
    assert dist.barrier() is None
    ddp = strata.nn.parallel.DistributedDataParallel(strata.nn.Linear(2, 2))
    for unsupported in (lambda: ddp.register_comm_hook(None, None), ddp.join):
        with pytest.raises(NotImplementedError, match="strata DistributedDataParallel"):
            unsupported()


def test_bad_arguments_raise_before_sending_and_leave_tensors_alone(world):
    t = strata.ones(3)
    cases = [
        (lambda: dist.all_gather([strata.ones(3)] * 2, t), RuntimeError,
         "allgather: invalid output tensor list at index 0 (expected length 1, got 2)"),
        (lambda: dist.all_gather([strata.ones(2)], t), RuntimeError,
         "allgather: invalid tensor size at index 0 (expected (3), got (2))"),
        (lambda: dist.all_gather([strata.ones(3, dtype=strata.int64)], t), ValueError,
         "Invalid usage of tensors with different dtypes"),
        (lambda: dist.broadcast(t, 1), RuntimeError, "broadcast: invalid root rank: 1"),
        (lambda: dist.all_reduce(t, op=dist.ReduceOp.BAND), RuntimeError,
         "Cannot use ReduceOp.BAND with non-integral dtype"),
        (lambda: dist.all_reduce(strata.ones(2, dtype=strata.int64), op=dist.ReduceOp.AVG),
         RuntimeError, "result type Float can't be cast to the desired output type Long"),
        (lambda: dist.all_reduce([t]), TypeError, "Expected parameter `tensor`"),
        (lambda: dist.reduce_scatter(t, [t, t]), RuntimeError,
         "invalid input tensor list size, must be world size"),
        (lambda: dist.scatter(t, None, src=0), ValueError,
         "Argument ``scatter_list`` must be specified on source rank."),
        (lambda: dist.gather(t, [t, t], dst=0), RuntimeError, "Incorrect output list size 2"),
        (lambda: dist.send(t, 0), ValueError, "Invalid destination rank: destination rank "
                                              "should not be the same as the rank of the "
                                              "current process."),
    ]
    for fn, kind, words in cases:
        got_kind, message = error_of(fn)
        assert got_kind is kind and words in message, (got_kind, message)
    np.testing.assert_array_equal(t.numpy(), np.ones(3))
    seq = dist.group.WORLD.seq
    dist.all_reduce(t)   # the failed calls sent nothing: the group is still usable
    assert dist.group.WORLD.seq == seq + 1


def test_same_errors_in_torch():
    """The wording above, checked against torch's own (gloo, one rank, in this process)."""
    store = tdist.HashStore()
    tdist.init_process_group("gloo", store=store, rank=0, world_size=1)
    try:
        t = torch.ones(3)
        assert "invalid root rank: 1" in error_of(lambda: tdist.broadcast(t, 1))[1]
        assert error_of(lambda: tdist.all_reduce(t, op=tdist.ReduceOp.BAND)) == \
            error_of(lambda: _strata_world(lambda: dist.all_reduce(strata.ones(3),
                                                                   op=dist.ReduceOp.BAND)))
        assert error_of(lambda: tdist.send(t, 0)) == \
            error_of(lambda: _strata_world(lambda: dist.send(strata.ones(3), 0)))
        assert error_of(lambda: tdist.scatter(t, None, src=0)) == \
            error_of(lambda: _strata_world(lambda: dist.scatter(strata.ones(3), None, src=0)))
    finally:
        tdist.destroy_process_group()


def _strata_world(fn):
    dist.init_process_group("mpi")
    try:
        fn()
    finally:
        dist.destroy_process_group()


class Custom:
    """Not allowlisted: a peer's bytes may not build it unless weights_only=False."""


def test_object_collectives_use_the_restricted_unpickler(world):
    objects = [None]
    dist.all_gather_object(objects, {"a": [1, 2], "t": strata.ones(2)})
    assert objects[0]["a"] == [1, 2]
    with pytest.raises(Exception, match="Unsupported global"):
        dist.all_gather_object([None], Custom())
    dist.all_gather_object(objects, Custom(), weights_only=False)
    assert isinstance(objects[0], Custom)


def test_collectives_on_the_comm_track_and_in_explain(world, tmp_path):
    with strata.profiler.profile() as prof:
        dist.all_reduce(strata.ones(256))
        dist.broadcast(strata.ones(4), 0, async_op=True).wait()
    assert {"mpi:all_reduce", "mpi:broadcast"} <= {e.key for e in prof.key_averages()}
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())["traceEvents"]
    comm_tids = {e["args"]["name"].split(" (")[0]: e["tid"] for e in trace
                 if e.get("name") == "thread_name"}
    run = [e for e in trace if e.get("name") == "mpi:all_reduce"]
    assert run and run[0]["tid"] == comm_tids["strata-comm default_pg"]
    assert run[0]["args"]["bytes"] == 1024
    assert any(e.get("cat") == "comm" and e.get("ph") == "s" for e in trace)   # post -> run
    text = strata.explain(lambda t: dist.all_reduce(t), strata.ones(4)).text
    assert "post all_reduce: queued to the comm worker of group default_pg" in text
    assert "mpi:all_reduce ran on the comm worker thread" in text
    assert text.rstrip().splitlines()[-1].endswith("comm")


def test_ddp_bucket_requests_on_the_comm_track_and_in_explain(world, tmp_path):
    model = strata.nn.parallel.DistributedDataParallel(strata.nn.Linear(3, 2))
    x = strata.ones(4, 3)
    with strata.profiler.profile() as prof:
        model(x).sum().backward()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())["traceEvents"]
    tids = {e["args"]["name"].split(" (")[0]: e["tid"] for e in trace
            if e.get("name") == "thread_name"}
    run = [e for e in trace if e.get("name") == "mpi:all_reduce"]
    assert len(run) == 1 and run[0]["tid"] == tids["strata-comm default_pg"]
    assert run[0]["args"]["bucket"] == 0 and run[0]["args"]["bytes"] == 32
    assert run[0]["dur"] > 0
    assert np.allclose(model.module.weight.grad.numpy(), 4.0)   # a world of one: sum == mean
    text = strata.explain(lambda t: model(t).sum().backward(), x).text
    assert "post all_reduce: started as a nonblocking MPI request of group default_pg" in text
    assert "mpi:all_reduce: in flight as an MPI request of group default_pg" in text
