"""``strata.jit``: the TorchScript helpers model code calls behave as in eager PyTorch, and
compiling to TorchScript raises a clear NotImplementedError (it raised AttributeError: no
``jit`` at all)."""

import typing

import pytest
import torch

import strata


def test_eager_answers_and_decorators_as_torch():
    for m in (strata, torch):
        assert m.jit.is_scripting() is False and m.jit.is_tracing() is False
        assert m.jit.Final is typing.Final

        @m.jit.ignore
        def plain(x):
            return x + 1

        @m.jit.ignore(drop=True)
        def dropped(x):
            return x + 2

        @m.jit.unused
        def unused(x):
            return x + 3

        class Model(m.nn.Module):
            @m.jit.export
            def extra(self):
                return 4

        assert (plain(0), dropped(0), unused(0), Model().extra()) == (1, 2, 3, 4)


@pytest.mark.parametrize("name", ["script", "trace", "save", "load", "freeze"])
def test_torchscript_compilation_is_refused_clearly(name):
    with pytest.raises(NotImplementedError, match=rf"strata\.jit\.{name}: TorchScript is not "
                                                  r"implemented in strata; compile with "
                                                  r"strata\.compile"):
        getattr(strata.jit, name)(strata.nn.Linear(2, 2))
