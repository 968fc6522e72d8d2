"""Views: every view op shares storage with its input and writes through both ways, with PyTorch's
sizes, strides, storage offsets, ``_base`` and ``_is_view``; reshape/flatten/contiguous copy
exactly when PyTorch copies; view errors match. Hypothesis drives chains of view ops."""

import numpy as np
import pytest
import strata
import torch
from helpers import check, check_error, check_meta
from hypothesis import given
from hypothesis import strategies as st

BASE = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


def layout(t, base):
    """What must agree with PyTorch: shape, strides, offset (elements) and aliasing facts."""
    return (tuple(t.shape), t.stride(), t.storage_offset(),
            (t.data_ptr() - base.data_ptr()) // t.element_size() if t.numel() else None,
            t._is_view(), t._base is base, t.is_contiguous())


VIEWS = {  # name -> fn(m, x): a view of x
    "view": lambda m, x: x.view(6, 4),
    "view-infer": lambda m, x: x.view(-1, 2),
    "view_as": lambda m, x: x.view_as(m.empty(4, 6)),
    "as_strided": lambda m, x: x.as_strided((2, 2), (1, 2), 3),
    "permute": lambda m, x: x.permute(2, 0, 1),
    "transpose": lambda m, x: x.transpose(-1, 0),
    "t": lambda m, x: x[0].t(),
    "T-2d": lambda m, x: x[0].T,
    "mT": lambda m, x: x.mT,
    "expand": lambda m, x: x[:, :1].expand(2, 5, 4),
    "expand-new-dims": lambda m, x: x.expand(3, 2, 3, 4),
    "broadcast_to": lambda m, x: x[0, 0].broadcast_to(2, 4),
    "squeeze": lambda m, x: x[:, :1, None].squeeze(),
    "squeeze-dims": lambda m, x: x[:1, :, :1].squeeze((0, 2)),
    "unsqueeze": lambda m, x: x.unsqueeze(2),
    "narrow": lambda m, x: x.narrow(2, 1, 2),
    "narrow-negative": lambda m, x: x.narrow(-1, -3, 2),
    "select": lambda m, x: x.select(1, -1),
    "slice-step": lambda m, x: x[:, ::2, 1:],
    "diagonal": lambda m, x: x.diagonal(1, 1, 2),
    "diagonal-negative": lambda m, x: x.diagonal(-1, -1, -2),
    "unfold": lambda m, x: x.unfold(2, 2, 1),
    "unfold-step": lambda m, x: x.unfold(1, 2, 2),
    "flatten-view": lambda m, x: x.flatten(1),
    "unflatten": lambda m, x: x.unflatten(2, (2, 2)),
    "reshape-view": lambda m, x: x.reshape(4, 6),
    "movedim": lambda m, x: x.movedim(0, -1),
    "split": lambda m, x: x.split(3, -1)[1],
    "split-sizes": lambda m, x: x.split([1, 3], -1)[1],
    "chunk": lambda m, x: x.chunk(2, 2)[1],
    "unbind": lambda m, x: x.unbind(1)[2],
    "tensor_split": lambda m, x: x.tensor_split(3, 2)[2],
    "alias": lambda m, x: x.view(x.shape),
    "view-of-view": lambda m, x: x.view(6, 4)[1:].view(-1),
    "view-dtype": lambda m, x: x.view(m.int32),
}


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_view_layout_and_aliasing_match_torch(name):
    fn = VIEWS[name]
    s_base, t_base = strata.tensor(BASE), torch.tensor(BASE)
    s_view, t_view = fn(strata, s_base), fn(torch, t_base)
    assert layout(s_view, s_base) == layout(t_view, t_base)
    assert s_view.untyped_storage() is s_base.untyped_storage()
    assert s_view._version_counter() is s_base._version_counter()
    check_meta(fn, BASE)


# (writing in place through views whose elements share memory is undefined in PyTorch)
@pytest.mark.parametrize("name", sorted(set(VIEWS) - {"view-dtype", "expand", "expand-new-dims",
                                                      "broadcast_to", "as_strided", "unfold"}))
def test_views_write_through_both_ways(name):
    fn = VIEWS[name]

    def run(m, x):
        base = x.clone()
        view = fn(m, base)
        view.mul_(-1)                  # through the view into the base
        after_view_write = base.clone()
        base.add_(100)                 # through the base into the view
        return after_view_write, view, base._version, view._version
    check(run, BASE)


def test_writes_through_expanded_and_overlapping_views():
    def run(m, x):
        base = x.clone()
        e = base[:, :1].expand(2, 5, 4)
        base[:, 0] += 1
        s = base.as_strided((2, 2), (1, 2), 3)
        base.view(-1)[3] = -7
        return e, s
    check(run, BASE)


def test_base_is_the_root_and_detach_and_dtype_views_are_untracked():
    for m in (strata, torch):
        x = m.tensor(BASE)
        v = x.view(6, 4)[1:].t().unsqueeze(0)
        assert v._base is x and v._is_view() and not x._is_view() and x._base is None
        d = x.detach()
        assert not d._is_view() and d._base is None
        assert d.data_ptr() == x.data_ptr() and d._version == x._version
        assert not x.view(m.int32)._is_view()


def test_reshape_copies_exactly_when_torch_does():
    cases = [
        lambda x: x.reshape(4, 6), lambda x: x.transpose(0, 1).reshape(-1),
        lambda x: x.transpose(0, 1).reshape(3, 2, 4), lambda x: x[:, :, ::2].reshape(12),
        lambda x: x[:, :, ::2].reshape(2, 3, 2), lambda x: x[:, 1].reshape(8),
        lambda x: x.flatten(), lambda x: x.transpose(1, 2).flatten(), lambda x: x.flatten(1, 1),
        lambda x: x[0, 0, 0].flatten(), lambda x: x.transpose(0, 2).contiguous(),
        lambda x: x.contiguous(), lambda x: x[:1].expand(4, 3, 4).reshape(-1, 4),
        lambda x: x[:, :1].expand(2, 3, 4).reshape(2, 12), lambda x: x.reshape(x.shape),
        lambda x: x.t().reshape(4, 6) if x.ndim == 2 else x.mT.reshape(2, 12),
    ]
    for fn in cases:
        s_base, t_base = strata.tensor(BASE), torch.tensor(BASE)
        s, t = fn(s_base), fn(t_base)
        assert (s.data_ptr() == s_base.data_ptr()) == (t.data_ptr() == t_base.data_ptr())
        assert s._is_view() == t._is_view() and (s._base is s_base) == (t._base is t_base)
        assert s.stride() == t.stride() and s.tolist() == t.tolist()


def test_contiguous_returns_self_only_when_contiguous():
    for m in (strata, torch):
        x = m.tensor(BASE)
        assert x.contiguous() is x
        assert x[:, :1, None].contiguous() is not x
        y = x.transpose(0, 1)
        c = y.contiguous()
        assert c is not y and c.is_contiguous() and not c._is_view()
        assert x.unsqueeze(0).contiguous(memory_format=m.channels_last).stride() == \
            (24, 1, 8, 2)
        cl = x.unsqueeze(0).contiguous(memory_format=m.channels_last)
        assert cl.contiguous(memory_format=m.channels_last) is cl


def test_expand_gives_stride_zero_and_copies_nothing():
    for m in (strata, torch):
        x = m.tensor([[1.0], [2.0]])
        e = x.expand(2, 1000)
        assert e.stride() == (1, 0) and e.data_ptr() == x.data_ptr()
        assert e.expand(3, 2, 1000).stride() == (0, 1, 0)


def test_as_strided_bounds():
    check_error(lambda m, x: x.as_strided((3, 3), (3, 1)), np.zeros((2, 3)),
                match=r"setStorage: sizes \[3, 3\], strides \[3, 1\], storage offset 0, and "
                      r"itemsize 8 requiring a storage size of 72 are out of bounds for storage "
                      r"of size 48")
    check_error(lambda m, x: x.as_strided((2,), (1,), 5), np.zeros((2, 3)),
                match="out of bounds for storage")
    check_error(lambda m, x: x.as_strided((2, 2), (1,)), np.zeros((2, 3)),
                match="mismatch in length of strides and shape")
    check(lambda m, x: x[1:].as_strided((2,), (2,)), np.arange(6.0))  # offset of the view


@pytest.mark.parametrize("size,step", [(1, 1), (2, 1), (3, 2), (4, 4), (0, 3)])
def test_unfold(size, step):
    check(lambda m, x: (x.unfold(1, size, step), x.unfold(-1, size, step).stride()),
          np.arange(20.0).reshape(2, 10))


@pytest.mark.parametrize("offset", range(-4, 6))
def test_diagonal_offsets(offset):
    check(lambda m, x: (x.diagonal(offset), m.diagonal(x.t(), offset)),
          np.arange(12.0).reshape(3, 4))
    check(lambda m, x: (x.diagonal(offset, 2, 0), x.diagonal(offset, 0, 2).stride()),
          np.arange(24.0).reshape(3, 4, 2))
    check(lambda m, x: x.diagonal(offset, -2, -1), BASE)


def test_split_chunk_unbind_edge_cases():
    x = np.arange(10.0).reshape(2, 5)
    check(lambda m, t: (t.split(2, 1), t.split(5, 1), t.split(7, 1), t.split([0, 5], 1),
                        t.chunk(3, 1), t.chunk(6, 1), t.chunk(1, 0), t.unbind(0), t.unbind(-1)),
          x)
    check(lambda m, t: (m.zeros(0, 3).split(2), m.zeros(0, 3).chunk(4), m.zeros(3, 0).unbind(1),
                        m.zeros(0, 3).unbind()), x)
    check(lambda m, t: [p.stride() for p in t.t().chunk(2, 0)], x)


def test_movedim_squeeze_flatten_unflatten():
    x = np.arange(24.0).reshape(1, 2, 1, 3, 4)
    check(lambda m, t: (t.movedim(0, -1), t.movedim((1, 3), (0, 1)), t.moveaxis(-1, 0),
                        m.movedim(t, [0, 1, 2], [2, 1, 0]), t.squeeze((0, 2)),
                        t.squeeze(-3), t.squeeze(1), t.squeeze(), t.flatten(1, 3),
                        t.flatten(-2), t.unflatten(3, (3, 1)), t.unflatten(-1, (2, -1))), x)


def test_t_T_mT_narrow():
    check(lambda m, x: (x.t(), x[0].t(), x[0, 0].t(), x.T, x[0].T, x.mT, x.narrow(0, 1, 1),
                        x.narrow(1, -1, 1), m.narrow(x, 0, 0, 0)), np.arange(6.0).reshape(2, 3))
    check(lambda m, x: x.mT, BASE)


@pytest.mark.parametrize("fn,x,match", [
    (lambda m, x: x.view(2, 5), np.zeros(6), r"shape '\[2, 5\]' is invalid for input of size 6"),
    (lambda m, x: x.t().view(6), np.zeros((2, 3)), "view size is not compatible with input "
                                                   "tensor's size and stride"),
    (lambda m, x: x.view(-1, -1), np.zeros(6), "only one dimension can be inferred"),
    (lambda m, x: x.view(-2, 3), np.zeros(6), "invalid shape dimension -2"),
    (lambda m, x: x.view(0, -1), np.zeros(0), "can be any value and is ambiguous"),
    (lambda m, x: x.reshape(4, -1), np.zeros(6), "is invalid for input of size 6"),
    (lambda m, x: x.expand(2, 4), np.zeros(3), r"The expanded size of the tensor \(4\) must "
                                               r"match the existing size \(3\) at non-singleton "
                                               r"dimension 1.  Target sizes: \[2, 4\].  Tensor "
                                               r"sizes: \[3\]"),
    (lambda m, x: x.expand(3), np.zeros((2, 3)), r"the number of sizes provided \(1\) must be "
                                                 r"greater or equal to the number of dimensions"),
    (lambda m, x: x.expand(-1, 3), np.zeros(3), r"The expanded size of the tensor \(-1\) isn't "
                                                r"allowed in a leading, non-existing dimension 0"),
    (lambda m, x: x.permute(0), np.zeros((2, 3)), "number of dimensions in the tensor input does "
                                                  "not match"),
    (lambda m, x: x.permute(0, 0), np.zeros((2, 3)), r"permute\(\): duplicate dims are not "
                                                     r"allowed."),
    (lambda m, x: x.transpose(0, 2), np.zeros((2, 3)), r"Dimension out of range \(expected to "
                                                       r"be in range of \[-2, 1\], but got 2\)"),
    (lambda m, x: x.squeeze(2), np.zeros((2, 3)), "Dimension out of range"),
    (lambda m, x: x.unsqueeze(3), np.zeros((2, 3)), "Dimension out of range"),
    (lambda m, x: x.select(0, 2), np.zeros((2, 3)), r"select\(\): index 2 out of range for "
                                                    r"tensor of size \[2, 3\] at dimension 0"),
    (lambda m, x: x.select(0, 0), np.zeros(()), r"select\(\) cannot be applied to a 0-dim"),
    (lambda m, x: x.narrow(1, 2, 2), np.zeros((2, 3)), r"start \(2\) \+ length \(2\) exceeds "
                                                       r"dimension size \(3\)."),
    (lambda m, x: x.narrow(1, 4, 0), np.zeros((2, 3)), "start out of range"),
    (lambda m, x: x.narrow(0, 0, -1), np.zeros(3), "length must be non-negative"),
    (lambda m, x: x.diagonal(0, 1, 1), np.zeros((2, 3)), "diagonal dimensions cannot be "
                                                         "identical 1, 1"),
    (lambda m, x: x.unfold(1, 4, 1), np.zeros((2, 3)), "maximum size for tensor at dimension 1 "
                                                       "is 3 but size is 4"),
    (lambda m, x: x.unfold(1, 2, 0), np.zeros((2, 3)), "step is 0 but must be > 0"),
    (lambda m, x: x.unfold(1, -1, 1), np.zeros((2, 3)), "size is -1 but must be >= 0"),
    (lambda m, x: x.split(-1), np.zeros(3), "split expects split_size be non-negative"),
    (lambda m, x: x.split(0), np.zeros(3), "split_size can only be 0 if dimension size is 0"),
    (lambda m, x: x.split([4, -1]), np.zeros(3), "split_with_sizes expects split_sizes have "
                                                 "only non-negative entries"),
    (lambda m, x: x.split([1, 1]), np.zeros(3), "split_with_sizes expects split_sizes to sum "
                                                "exactly to 3"),
    (lambda m, x: x.chunk(0), np.zeros(3), "chunk expects `chunks` to be greater than 0"),
    (lambda m, x: x.unbind(), np.zeros(()), "Dimension specified as 0 but tensor has no "
                                            "dimensions"),
    (lambda m, x: x.movedim((0, 0), (0, 1)), np.zeros((2, 3)), r"movedim: repeated dim in "
                                                               r"`source` \(\[0, 0\]\)"),
    (lambda m, x: x.movedim((0, 1), (0,)), np.zeros((2, 3)), "movedim: Invalid source or "
                                                             "destination dims"),
    (lambda m, x: x.flatten(1, 0), np.zeros((2, 3)), "start_dim cannot come after end_dim"),
    (lambda m, x: x.unflatten(1, (2, 2)), np.zeros((2, 3)), r"unflatten: Provided sizes "
                                                            r"\[2, 2\] don't multiply up"),
    (lambda m, x: x.unsqueeze(0).t(), np.zeros((2, 3)), r"t\(\) expects a tensor with <= 2 "
                                                        r"dimensions, but self is 3D"),
    (lambda m, x: x.mT, np.zeros(3), "tensor.mT is only supported on matrices"),
    (lambda m, x: x.view(m.int64), np.zeros(3, np.float32), r"self.size\(-1\) must be divisible "
                                                            r"by 2 to view Float as Long"),
    (lambda m, x: x.t().view(m.int16), np.zeros((2, 2), np.float32),
     r"self.stride\(-1\) must be 1 to view Float as Short"),
    (lambda m, x: x.view(m.int16), np.zeros((), np.float32), r"self.dim\(\) cannot be 0"),
])
def test_view_errors(fn, x, match):
    check_error(fn, x, match=match)


def test_dim_out_of_range_is_an_index_error():
    for fn in (lambda x: x.transpose(0, 5), lambda x: x.select(-4, 0), lambda x: x.narrow(3, 0, 1),
               lambda x: x.unflatten(4, (1,)), lambda x: x.movedim(0, 3)):
        for m in (strata, torch):
            with pytest.raises(IndexError, match="Dimension out of range"):
                fn(m.tensor(BASE))


@st.composite
def view_chain(draw):
    """A random shape and a chain of view ops; steps that do not apply to the tensor they meet
    are skipped (the same way in both libraries)."""
    shape = draw(st.lists(st.integers(1, 4), min_size=1, max_size=4))
    steps = []
    for _ in range(draw(st.integers(1, 5))):
        kind = draw(st.sampled_from(["permute", "transpose", "reshape", "view", "unsqueeze",
                                     "slice", "expand"]))
        if kind == "permute":
            steps.append(("permute", tuple(draw(st.permutations(range(len(shape)))))))
        elif kind == "transpose":
            steps.append(("transpose", draw(st.integers(-4, 3)), draw(st.integers(-4, 3))))
        elif kind in ("reshape", "view"):
            steps.append((kind, draw(st.sampled_from(["flat", "split", "merge"]))))
        elif kind == "unsqueeze":
            steps.append(("unsqueeze", draw(st.integers(-5, 4))))
        elif kind == "slice":
            steps.append(("slice", draw(st.integers(0, 4)), draw(st.integers(1, 2))))
        else:
            steps.append(("expand", draw(st.integers(1, 3))))
    return shape, steps


def apply_chain(m, x, steps):
    for step in steps:
        kind = step[0]
        if kind == "permute":
            if len(step[1]) != x.ndim:
                continue
            x = x.permute(step[1])
        elif kind == "transpose":
            if x.ndim == 0 or not (-x.ndim <= step[1] < x.ndim and -x.ndim <= step[2] < x.ndim):
                continue
            x = x.transpose(step[1], step[2])
        elif kind in ("reshape", "view"):
            n = x.numel()
            target = {"flat": (-1,), "split": (-1, 1) if n % 2 else (2, -1),
                      "merge": tuple(x.shape[:-2]) + (-1,) if x.ndim >= 2 else (-1,)}[step[1]]
            if kind == "view":
                try:
                    torch.empty_strided(tuple(x.shape), x.stride()).view(target)
                except RuntimeError:
                    continue  # PyTorch can't view this layout: not a valid chain step
            x = x.reshape(target) if kind == "reshape" else x.view(target)
        elif kind == "unsqueeze":
            if not -x.ndim - 1 <= step[1] <= x.ndim:
                continue
            x = x.unsqueeze(step[1])
        elif kind == "slice":
            if step[1] >= x.ndim:
                continue
            x = m.ops.aten.slice.Tensor(x, step[1], 0, None, step[2])
        elif kind == "expand":
            x = x.expand((step[1],) + tuple(x.shape))
    return x


@given(view_chain())
def test_random_view_chains_match_torch(chain):
    shape, steps = chain
    data = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    s_base, t_base = strata.tensor(data), torch.tensor(data)
    s, t = apply_chain(strata, s_base, steps), apply_chain(torch, t_base, steps)
    assert tuple(s.shape) == tuple(t.shape) and s.stride() == t.stride()
    assert s.storage_offset() == t.storage_offset()
    assert s._is_view() == t._is_view()
    assert (s.data_ptr() == s_base.data_ptr()) == (t.data_ptr() == t_base.data_ptr())
    np.testing.assert_array_equal(s.numpy(), t.numpy())
    check_meta(lambda m, x: apply_chain(m, x, steps), data)
